/* Unit tests for layout: pane rectangles at many sizes stay inside the screen, never overlap. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "layout.h"

static bool overlap(struct rect a, struct rect b)
{
	if (a.h == 0 || a.w == 0 || b.h == 0 || b.w == 0)
		return false;
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static bool inside(struct rect r, int rows, int cols)
{
	return r.y >= 0 && r.x >= 0 && r.h >= 0 && r.w >= 0 && r.y + r.h <= rows &&
	       r.x + r.w <= cols;
}

/* Every rectangle inside the screen and disjoint, for every size, focus and zoom. */
static void test_all_sizes_sane(void **state)
{
	struct layout l;

	for (int rows = 0; rows <= 70; rows++) {
		for (int cols = 0; cols <= 220; cols += (cols < 100 ? 1 : 7)) {
			for (int f = 0; f < PANE__COUNT; f++) {
				for (int z = 0; z < 2; z++) {
					struct rect all[PANE__COUNT + 2];
					int n = 0;

					layout_compute(&l, rows, cols, (enum pane_id)f, z);
					for (int p = 0; p < PANE__COUNT; p++)
						if (l.visible[p])
							all[n++] = l.pane[p];
					all[n++] = l.tabs;
					all[n++] = l.status;
					for (int i = 0; i < n; i++) {
						assert_true(inside(all[i], rows, cols));
						for (int j = i + 1; j < n; j++)
							assert_false(overlap(all[i], all[j]));
					}
				}
			}
		}
	}
}

static void test_four_panes_at_80x24(void **state)
{
	struct layout l;
	int area = 0;

	layout_compute(&l, 24, 80, PANE_PLAN, false);
	assert_false(l.tabbar);
	for (int p = 0; p < PANE__COUNT; p++) {
		assert_true(l.visible[p]);
		assert_true(l.pane[p].h >= 3);
		assert_true(l.pane[p].w >= 10);
		area += l.pane[p].h * l.pane[p].w;
	}
	/* The panes tile everything above the status line. */
	assert_int_equal(area, 23 * 80);
	assert_int_equal(l.status.y, 23);
	assert_int_equal(l.status.w, 80);
	/* The cost pane has room for its three roles, total, bar and step line. */
	assert_true(l.pane[PANE_COST].h >= 8);
}

static void test_small_screen_one_pane_with_tabs(void **state)
{
	struct layout l;

	layout_compute(&l, 20, 60, PANE_VERDICTS, false);
	assert_true(l.tabbar);
	assert_int_equal(l.tabs.y, 18);
	for (int p = 0; p < PANE__COUNT; p++)
		assert_int_equal(l.visible[p], p == PANE_VERDICTS);
	assert_int_equal(l.pane[PANE_VERDICTS].h, 18);
	assert_int_equal(l.pane[PANE_VERDICTS].w, 60);
	/* 79 columns is already too narrow for four panes. */
	layout_compute(&l, 40, 79, PANE_PLAN, false);
	assert_true(l.tabbar);
}

static void test_zoom_takes_all(void **state)
{
	struct layout l;

	layout_compute(&l, 30, 100, PANE_LOG, true);
	assert_true(l.visible[PANE_LOG]);
	assert_false(l.visible[PANE_PLAN]);
	assert_int_equal(l.pane[PANE_LOG].h, 29);
	assert_int_equal(l.pane[PANE_LOG].w, 100);
}

static void test_titles(void **state)
{
	assert_string_equal(layout_pane_title(PANE_PLAN), "Plan");
	assert_string_equal(layout_pane_title(PANE_LOG), "Step log");
	assert_string_equal(layout_pane_title(PANE_VERDICTS), "Verdicts");
	assert_string_equal(layout_pane_title(PANE_COST), "Cost");
}

static void test_tiny_screens(void **state)
{
	struct layout l;

	layout_compute(&l, 1, 20, PANE_PLAN, false);
	assert_int_equal(l.status.h, 1);
	for (int p = 0; p < PANE__COUNT; p++)
		assert_false(l.visible[p]);
	layout_compute(&l, 0, 0, PANE_PLAN, true);
	assert_int_equal(l.status.h, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_sizes_sane),
		cmocka_unit_test(test_four_panes_at_80x24),
		cmocka_unit_test(test_small_screen_one_pane_with_tabs),
		cmocka_unit_test(test_zoom_takes_all),
		cmocka_unit_test(test_titles),
		cmocka_unit_test(test_tiny_screens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
