/* Unit tests for the curses-free parts of widgets: themes, line store, wrapping, log view
 * scrolling and search. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "linestore.h"
#include "logview.h"
#include "textsan.h"
#include "textview.h"
#include "theme.h"
#include "xalloc.h"

static void test_shipped_themes_parse(void **state)
{
	static const char *const names[] = {"default", "light", "high-contrast", "mono"};

	for (size_t i = 0; i < 4; i++) {
		char *err = NULL;
		struct theme *t = theme_load(names[i], TOP_SRCDIR "/themes", &err);

		if (!t)
			fail_msg("%s: %s", names[i], err);
		assert_string_equal(t->name, names[i]);
		theme_free(t);
	}
}

static void test_theme_values(void **state)
{
	char *err = NULL;
	struct theme *t = theme_parse("# c\nname x\n\ngood 114/green default bold mono=underline\n"
				      "bad bright-red default\n",
				      "t", &err);

	assert_non_null(t);
	assert_int_equal(t->style[THEME_GOOD].fg, 114);
	assert_int_equal(t->style[THEME_GOOD].fg8, 2);
	assert_int_equal(t->style[THEME_GOOD].bg, -1);
	assert_int_equal(t->style[THEME_GOOD].attrs, THEME_BOLD);
	assert_int_equal(t->style[THEME_GOOD].mono, THEME_UNDERLINE);
	assert_int_equal(t->style[THEME_BAD].fg, 9);
	assert_int_equal(t->style[THEME_BAD].fg8, 1);
	theme_free(t);
}

static void test_theme_errors_name_the_line(void **state)
{
	static const char *const bad[] = {
		"good green\n",                   /* no background */
		"\n\nnosuchrole red default\n",  /* unknown role */
		"good 300 default\n",             /* out of range */
		"good red default sparkly\n",     /* unknown attribute */
		"good 12/bright-red default\n",   /* 8-colour half must be 0-7 */
	};
	static const int lines[] = {1, 3, 1, 1, 1};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *err = NULL, *want = xasprintf("f.theme, line %d:", lines[i]);

		assert_null(theme_parse(bad[i], "f.theme", &err));
		assert_non_null(err);
		assert_non_null(strstr(err, want));
		free(err);
		free(want);
	}
}

static void test_theme_missing(void **state)
{
	char *err = NULL;

	assert_null(theme_load("no-such-theme", TOP_SRCDIR "/themes", &err));
	assert_non_null(strstr(err, "no-such-theme"));
	free(err);
}

static void test_linestore_streaming(void **state)
{
	struct linestore ls;

	linestore_init(&ls);
	linestore_stream(&ls, 0, "hel");
	linestore_stream(&ls, 0, "lo\nwor");
	linestore_stream(&ls, 0, "ld\n\nnext");
	linestore_add(&ls, 1, "tool line");
	linestore_stream(&ls, 0, "after");
	assert_int_equal(ls.n, 6);
	assert_string_equal(ls.v[0].text, "hello");
	assert_string_equal(ls.v[1].text, "world");
	assert_string_equal(ls.v[2].text, "");
	assert_string_equal(ls.v[3].text, "next");
	assert_string_equal(ls.v[4].text, "tool line");
	assert_int_equal(ls.v[4].kind, 1);
	assert_string_equal(ls.v[5].text, "after");
	linestore_release(&ls);
}

static void test_linestore_breaks_long_lines_on_char_boundary(void **state)
{
	struct linestore ls;
	size_t n = LINESTORE_MAX_LINE * 2 + 100;
	char *big = xmalloc(n + 1);

	/* three-byte characters, so a byte cut would split one */
	for (size_t i = 0; i + 3 <= n; i += 3)
		memcpy(big + i, "\xe4\xb8\xad", 3);
	big[n - n % 3] = '\0';
	linestore_init(&ls);
	linestore_stream(&ls, 0, big);
	assert_true(ls.n >= 3);
	for (size_t i = 0; i < ls.n; i++) {
		char *clean = textsan_clean(ls.v[i].text, strlen(ls.v[i].text), 0);

		assert_true(strlen(ls.v[i].text) <= LINESTORE_MAX_LINE);
		assert_string_equal(clean, ls.v[i].text); /* still valid UTF-8 */
		free(clean);
	}
	linestore_release(&ls);
	free(big);
}

static void test_wrap_rows(void **state)
{
	size_t next, len;

	len = textview_row("hello world again", 11, &next);
	assert_int_equal(len, 11); /* "hello world" fits exactly */
	len = textview_row("hello world again", 8, &next);
	assert_int_equal(len, 5);
	assert_int_equal(next, 6);
	assert_int_equal(textview_rows("hello world again", 8), 3);
	assert_int_equal(textview_rows("", 8), 1);
	/* a word longer than the row is cut; a wide char never split */
	assert_int_equal(textview_rows("abcdefghij", 4), 3);
	assert_int_equal(textview_rows("\xe4\xb8\xad\xe4\xb8\xad\xe4\xb8\xad", 3), 3);
	/* a width of 1 with wide characters still makes progress */
	assert_int_equal(textview_rows("\xe4\xb8\xad\xe4\xb8\xad", 1), 2);
}

static void fill(struct linestore *ls, size_t n)
{
	linestore_init(ls);
	for (size_t i = 0; i < n; i++) {
		char *s = xasprintf("line %zu%s", i, i == 700 ? " needle" : "");

		linestore_add(ls, 0, s);
		free(s);
	}
}

static void test_logview_scroll_and_follow(void **state)
{
	struct linestore ls;
	struct logview lv;

	fill(&ls, 1000);
	logview_init(&lv);
	assert_true(lv.follow);
	/* pretend a 10-row draw showed the tail */
	lv.first_shown = 990;
	lv.last_shown = 999;
	logview_scroll(&lv, &ls, -5);
	assert_false(lv.follow);
	assert_int_equal(lv.top, 985);
	logview_home(&lv);
	assert_int_equal(lv.top, 0);
	lv.first_shown = 0;
	lv.last_shown = 9;
	logview_scroll(&lv, &ls, 3);
	assert_false(lv.follow);
	assert_int_equal(lv.top, 3);
	logview_scroll(&lv, &ls, 5000);
	assert_true(lv.follow);
	linestore_release(&ls);
}

static void test_logview_search(void **state)
{
	struct linestore ls;
	struct logview lv;

	fill(&ls, 1000);
	logview_init(&lv);
	assert_true(logview_search(&lv, &ls, "NEEDLE", true));
	assert_int_equal(lv.hit, 700);
	assert_int_equal(lv.top, 700);
	assert_false(lv.follow);
	/* the next search wraps around to the same single hit */
	assert_true(logview_search(&lv, &ls, "needle", true));
	assert_int_equal(lv.hit, 700);
	assert_true(logview_search(&lv, &ls, "line 3", false));
	assert_true(lv.hit < 700);
	assert_false(logview_search(&lv, &ls, "absent", true));
	linestore_release(&ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_themes_parse),
		cmocka_unit_test(test_theme_values),
		cmocka_unit_test(test_theme_errors_name_the_line),
		cmocka_unit_test(test_theme_missing),
		cmocka_unit_test(test_linestore_streaming),
		cmocka_unit_test(test_linestore_breaks_long_lines_on_char_boundary),
		cmocka_unit_test(test_wrap_rows),
		cmocka_unit_test(test_logview_scroll_and_follow),
		cmocka_unit_test(test_logview_search),
	};

	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
