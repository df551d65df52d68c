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
#include "mouse.h"
#include "strbuf.h"
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

/* Themes are looked for in each folder in turn; when none has it, the sentence names
 * every folder and the themes they hold. */
static void test_theme_find_and_where_it_looked(void **state)
{
	const char *dirs[] = {"/nonexistent/themes", TOP_SRCDIR "/themes"};
	char *err = NULL;
	struct theme *t;

	(void)state;
	t = theme_find("light", dirs, 2, &err);
	assert_non_null(t);
	theme_free(t);
	t = theme_find("default", dirs, 1, &err); /* the built-in one */
	assert_non_null(t);
	theme_free(t);
	assert_null(theme_find("nope", dirs, 2, &err));
	assert_non_null(strstr(err, "theme \"nope\" not found: looked for nope.theme in "
				    "/nonexistent/themes, " TOP_SRCDIR "/themes"));
	assert_non_null(strstr(err, "themes there: default, high-contrast, light, mono"));
	free(err);
	err = NULL;
	assert_null(theme_find("nope", dirs, 1, &err));
	assert_non_null(strstr(err, "no themes there (set PEVTUI_THEMES"));
	free(err);
	err = NULL;
	assert_null(theme_find("/nonexistent/x.theme", dirs, 2, &err));
	assert_non_null(strstr(err, "cannot read the theme file /nonexistent/x.theme"));
	free(err);
}

/* The source tree's themes count only for a program running from its build tree. */
static void test_theme_dirs_build_tree(void **state)
{
	struct strvec d = STRVEC_INIT;
	char *src = realpath(TOP_SRCDIR, NULL), *want = xasprintf("%s/themes", src);

	(void)state;
	unsetenv("PEVTUI_THEMES");
	theme_dirs("/opt/build/pevtui", "/opt/build", TOP_SRCDIR, "/usr/share/pevtui/themes", &d);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0], want);
	assert_string_equal(d.v[1], "/usr/share/pevtui/themes");
	strvec_clear(&d);
	theme_dirs("/usr/bin/pevtui", "/opt/build", TOP_SRCDIR, "/usr/share/pevtui/themes", &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0], "/usr/share/pevtui/themes");
	strvec_clear(&d);
	/* $PEVTUI_THEMES first; a folder named twice is looked in once */
	setenv("PEVTUI_THEMES", TOP_SRCDIR "/themes", 1);
	theme_dirs("/opt/build/pevtui", "/opt/build", TOP_SRCDIR, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0], want);
	strvec_clear(&d);
	unsetenv("PEVTUI_THEMES");
	free(want);
	free(src);
}

/* SGR mouse reports: press and release, the wheel, modifiers, columns past 223. */
static void test_mouse_sgr_parse(void **state)
{
	struct mouse_event ev;

	(void)state;
	assert_true(mouse_sgr_parse("0;230;10M", &ev));
	assert_int_equal(ev.what, MOUSE_CLICK);
	assert_int_equal(ev.x, 229);
	assert_int_equal(ev.y, 9);
	assert_true(mouse_sgr_parse("0;1;1m", &ev)); /* a release: nothing to do */
	assert_int_equal(ev.what, MOUSE_NONE);
	assert_true(mouse_sgr_parse("64;500;3M", &ev));
	assert_int_equal(ev.what, MOUSE_WHEEL_UP);
	assert_true(mouse_sgr_parse("65;5;3M", &ev));
	assert_int_equal(ev.what, MOUSE_WHEEL_DOWN);
	assert_true(mouse_sgr_parse("16;5;3M", &ev)); /* control-click is a click */
	assert_int_equal(ev.what, MOUSE_CLICK);
	assert_true(mouse_sgr_parse("2;5;3M", &ev)); /* the right button */
	assert_int_equal(ev.what, MOUSE_NONE);
	assert_true(mouse_sgr_parse("32;5;3M", &ev)); /* motion */
	assert_int_equal(ev.what, MOUSE_NONE);
	assert_false(mouse_sgr_parse("0;0;3M", &ev));
	assert_false(mouse_sgr_parse("0;5M", &ev));
	assert_false(mouse_sgr_parse("0;5;3", &ev));
	assert_false(mouse_sgr_parse("0;5;3Mx", &ev));
	assert_false(mouse_sgr_parse(";5;3M", &ev));
	assert_false(mouse_sgr_parse("0;99999999999999999999;3M", &ev));
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

/* Matches are counted per occurrence, without overlap; n and N walk them in order and
 * wrap; the counter says which one of how many. */
static void test_search_counts_matches(void **state)
{
	static const char *const lines[] = {"alpha Beta beta", "none here", "BETA", "aaaa"};
	struct linestore ls;
	struct linestore_pos at, seen[3];
	struct logview lv;
	size_t idx;

	(void)state;
	linestore_init(&ls);
	for (size_t i = 0; i < 4; i++)
		linestore_add(&ls, 0, lines[i]);
	assert_int_equal(linestore_count(&ls, "beta", NULL, NULL), 3);
	assert_int_equal(linestore_count(&ls, "aa", NULL, NULL), 2); /* "aaaa": 2, not 3 */
	assert_int_equal(linestore_count(&ls, "absent", NULL, NULL), 0);
	assert_int_equal(linestore_count(&ls, "", NULL, NULL), 0);
	at = (struct linestore_pos){0, 11};
	assert_int_equal(linestore_count(&ls, "beta", &at, &idx), 3);
	assert_int_equal(idx, 2);

	/* forward from the top: 0:6, 0:11, 2:0, then around to 0:6 */
	assert_true(linestore_find(&ls, "beta", 0, 0, true, &seen[0]));
	assert_true(linestore_find(&ls, "beta", seen[0].line, seen[0].off + 1, true, &seen[1]));
	assert_true(linestore_find(&ls, "beta", seen[1].line, seen[1].off + 1, true, &seen[2]));
	assert_int_equal(seen[0].line, 0);
	assert_int_equal(seen[0].off, 6);
	assert_int_equal(seen[1].line, 0);
	assert_int_equal(seen[1].off, 11);
	assert_int_equal(seen[2].line, 2);
	assert_int_equal(seen[2].off, 0);
	assert_true(linestore_find(&ls, "beta", 2, 1, true, &at));
	assert_int_equal(at.line, 0);
	assert_int_equal(at.off, 6);
	/* backward from 0:6 wraps to the last match, 2:0; from 0:11 it finds 0:6 */
	assert_true(linestore_find(&ls, "beta", 0, 6, false, &at));
	assert_int_equal(at.line, 2);
	assert_true(linestore_find(&ls, "beta", 0, 11, false, &at));
	assert_int_equal(at.off, 6);
	/* the only match, searched again from just after it, is found again */
	assert_true(linestore_find(&ls, "here", 1, 6, true, &at));
	assert_int_equal(at.line, 1);
	assert_int_equal(at.off, 5);
	assert_false(linestore_find(&ls, "absent", 0, 0, true, &at));

	/* the log view marks the matched bytes only and keeps the counter */
	logview_init(&lv);
	assert_true(logview_search(&lv, &ls, "BETA", true));
	assert_int_equal(lv.hit, 0);
	assert_int_equal(lv.hit_off, 6);
	assert_int_equal(lv.hit_len, 4);
	assert_int_equal(lv.match_no, 1);
	assert_int_equal(lv.matches, 3);
	assert_true(logview_search(&lv, &ls, "BETA", true));
	assert_int_equal(lv.match_no, 2);
	assert_true(logview_search(&lv, &ls, "BETA", true));
	assert_int_equal(lv.match_no, 3);
	assert_int_equal(lv.hit, 2);
	assert_true(logview_search(&lv, &ls, "BETA", true));
	assert_int_equal(lv.match_no, 1);
	assert_true(logview_search(&lv, &ls, "BETA", false));
	assert_int_equal(lv.match_no, 3);
	linestore_release(&ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_themes_parse),
		cmocka_unit_test(test_theme_values),
		cmocka_unit_test(test_theme_errors_name_the_line),
		cmocka_unit_test(test_theme_missing),
		cmocka_unit_test(test_theme_find_and_where_it_looked),
		cmocka_unit_test(test_theme_dirs_build_tree),
		cmocka_unit_test(test_mouse_sgr_parse),
		cmocka_unit_test(test_linestore_streaming),
		cmocka_unit_test(test_linestore_breaks_long_lines_on_char_boundary),
		cmocka_unit_test(test_wrap_rows),
		cmocka_unit_test(test_logview_scroll_and_follow),
		cmocka_unit_test(test_logview_search),
		cmocka_unit_test(test_search_counts_matches),
	};

	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
