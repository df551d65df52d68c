/* test_plandiff — the diff of two plan revisions: steps added, removed, changed (word diff
 * of each field), nothing for the same plan, no terminal control in any line. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "plandiff.h"
#include "xalloc.h"

/* Single quotes stand for double quotes (no apostrophes in these plans). */
static char *json(const char *s)
{
	char *j = xstrdup(s);

	for (char *p = j; *p; p++)
		if (*p == '\'')
			*p = '"';
	return j;
}

static struct plandiff *diff(const char *old, const char *np)
{
	char *a = json(old), *b = json(np);
	struct plandiff *d = plandiff_from_json(a, b);

	free(a);
	free(b);
	assert_non_null(d);
	return d;
}

/* The line that is exactly `text`, with its kind; fails when there is none. */
static void has_line(const struct plandiff *d, enum plandiff_kind kind, const char *text)
{
	for (size_t i = 0; i < d->n_lines; i++)
		if (strcmp(d->lines[i].text, text) == 0) {
			if (d->lines[i].kind != kind)
				fail_msg("line \"%s\" has kind %d, not %d", text,
					 (int)d->lines[i].kind, (int)kind);
			return;
		}
	{
		char *t = plandiff_text(d);

		fail_msg("no line \"%s\" in:\n%s", text, t);
		free(t);
	}
}

static bool mentions(const struct plandiff *d, const char *needle)
{
	for (size_t i = 0; i < d->n_lines; i++)
		if (strstr(d->lines[i].text, needle))
			return true;
	return false;
}

#define STEP_A                                                                             \
	"{'step_id':'a','name':'Read the export','description':'Sum the validations "     \
	"for 2023.','acceptance_criteria':['a full-year figure','the method is stated'],"  \
	"'expected_outputs':['boardings.md'],'dependencies':[],"                          \
	"'estimated_complexity':'low','actions':[{'tool':'read_file','params':{'path':'x'}}]}"
#define STEP_B                                                                             \
	"{'step_id':'b','name':'Write the note','description':'Combine them.',"            \
	"'acceptance_criteria':['note.md exists'],'dependencies':['a'],"                   \
	"'estimated_complexity':'medium'}"
#define PLAN_AB "{'goal':'Count boardings','steps':[" STEP_A "," STEP_B "]}"

static void test_same_plan_no_diff(void **state)
{
	struct plandiff *d = diff(PLAN_AB, PLAN_AB);
	char *t = plandiff_text(d);

	(void)state;
	assert_true(plandiff_empty(d));
	assert_string_equal(t, "");
	assert_int_equal(d->same, 2);
	assert_int_equal(d->n_steps, 2);
	assert_int_equal(d->steps[0].change, PDC_SAME);
	free(t);
	plandiff_free(d);
	/* Neither is a plan: no diff at all, never a crash. */
	assert_null(plandiff_from_json("{\"goal\":", "{}"));
	assert_null(plandiff_from_json(NULL, NULL));
	plandiff_free(NULL);
}

static void test_added_and_removed_steps(void **state)
{
	struct plandiff *d =
	    diff(PLAN_AB, "{'goal':'Count boardings','steps':[" STEP_A ","
			  "{'step_id':'c','name':'Ask the authority','description':'Look up the "
			  "annual report.\\nSave it.','acceptance_criteria':['an official figure'],"
			  "'expected_outputs':['official.md'],'dependencies':['a'],"
			  "'estimated_complexity':'high','actions':[{'tool':'lookup',"
			  "'params':{'q':'x'}}]}]}");

	(void)state;
	assert_false(plandiff_empty(d));
	assert_int_equal(d->added, 1);
	assert_int_equal(d->removed, 1);
	assert_int_equal(d->same, 1);
	has_line(d, PDL_SAME_STEP, "= a  Read the export");
	/* An added step is shown whole. */
	has_line(d, PDL_ADDED_STEP, "+ c  Ask the authority");
	has_line(d, PDL_ADDED, "    description: Look up the annual report.");
	has_line(d, PDL_ADDED, "      Save it.");
	has_line(d, PDL_ADDED, "    criteria:");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 an official figure");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 official.md");
	has_line(d, PDL_ADDED, "    depends on: a");
	has_line(d, PDL_ADDED, "    complexity: high");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 lookup {\"q\":\"x\"}");
	has_line(d, PDL_REMOVED_STEP, "- b  Write the note");
	assert_int_equal(d->steps[1].change, PDC_ADDED);
	assert_string_equal(d->steps[1].id, "c");
	plandiff_free(d);
}

/* A removed step is told where it was: before the step that followed it. */
static void test_removed_step_keeps_its_place(void **state)
{
	struct plandiff *d = diff(
	    "{'goal':'g','steps':[{'step_id':'x','name':'X'},{'step_id':'y','name':'Y'},"
	    "{'step_id':'z','name':'Z'}]}",
	    "{'goal':'g','steps':[{'step_id':'x','name':'X'},{'step_id':'z','name':'Z'}]}");
	char *t = plandiff_text(d);

	(void)state;
	assert_string_equal(t, "= x  X\n- y  Y\n= z  Z\n");
	free(t);
	plandiff_free(d);
}

static void test_changed_fields_word_diff(void **state)
{
	struct plandiff *d = diff(
	    PLAN_AB,
	    "{'goal':'Count boardings','steps':["
	    "{'step_id':'a','name':'Read the official export','description':'Sum the "
	    "validations for 2024.','acceptance_criteria':['a full-year figure from an official "
	    "source','the method is stated','saved in boardings.md'],"
	    "'expected_outputs':['sources/boardings.md'],'dependencies':[],"
	    "'estimated_complexity':'high','actions':[{'tool':'read_file','params':{'path':'y'}}]},"
	    "{'step_id':'c','name':'C'}," STEP_B "]}");

	(void)state;
	assert_int_equal(d->changed, 1);
	assert_int_equal(d->steps[0].change, PDC_CHANGED);
	has_line(d, PDL_CHANGED_STEP, "~ a  Read the official export");
	has_line(d, PDL_CHANGED, "    name: Read the {+official+} export");
	has_line(d, PDL_CHANGED, "    description: Sum the validations for [-2023.-]{+2024.+}");
	/* Lists: kept items as they are, a rewritten item as its word diff, a new one whole. */
	has_line(d, PDL_CHANGED, "    criteria:");
	has_line(d, PDL_CHANGED,
		 "      \xe2\x80\xa2 a full-year figure {+from an official source+}");
	has_line(d, PDL_CONTEXT, "      \xe2\x80\xa2 the method is stated");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 {+saved in boardings.md+}");
	has_line(d, PDL_CHANGED, "    outputs:");
	has_line(d, PDL_REMOVED, "      \xe2\x80\xa2 [-boardings.md-]");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 {+sources/boardings.md+}");
	has_line(d, PDL_CHANGED, "    complexity: [-low-]{+high+}");
	has_line(d, PDL_CHANGED,
		 "      \xe2\x80\xa2 read_file [-{\"path\":\"x\"}-]{+{\"path\":\"y\"}+}");
	/* The unchanged fields are not repeated, b is the same step in a new place. */
	assert_false(mentions(d, "depends on"));
	has_line(d, PDL_SAME_STEP, "= b  Write the note");
	has_line(d, PDL_ADDED_STEP, "+ c  C");
	plandiff_free(d);
}

static void test_dependencies_and_plan_fields(void **state)
{
	struct plandiff *d = diff(
	    "{'goal':'g','context':'old','success_criteria':['one'],'steps':["
	    "{'step_id':'n','name':'N'},{'step_id':'b','name':'B'},"
	    "{'step_id':'w','name':'W','dependencies':['n','b']}]}",
	    "{'goal':'g2','context':'old','success_criteria':['one','two'],'steps':["
	    "{'step_id':'n','name':'N'},{'step_id':'bo','name':'BO'},"
	    "{'step_id':'w','name':'W','dependencies':['n','bo']}]}");

	(void)state;
	assert_true(d->plan_changed);
	has_line(d, PDL_CHANGED_STEP, "~ plan");
	has_line(d, PDL_CHANGED, "    goal: [-g-]{+g2+}");
	has_line(d, PDL_ADDED, "      \xe2\x80\xa2 {+two+}");
	assert_false(mentions(d, "context"));
	has_line(d, PDL_CHANGED, "    depends on: n, [-b-]{+bo+}");
	assert_string_equal(d->lines[0].text, "~ plan");
	plandiff_free(d);

	/* From none to some and back. */
	d = diff("{'goal':'g','steps':[{'step_id':'n','name':'N'},{'step_id':'w','name':'W'}]}",
		 "{'goal':'g','steps':[{'step_id':'n','name':'N'},"
		 "{'step_id':'w','name':'W','dependencies':['n']}]}");
	has_line(d, PDL_CHANGED, "    depends on: {+n+}");
	plandiff_free(d);
}

static void test_words(void **state)
{
	bool changed = true;
	char *w;

	(void)state;
	w = plandiff_words("the same text", "the same text", &changed);
	assert_string_equal(w, "the same text");
	assert_false(changed);
	free(w);
	w = plandiff_words("a b c", "a c", &changed);
	assert_string_equal(w, "a [-b-] c");
	assert_true(changed);
	free(w);
	w = plandiff_words("a b", "a", &changed);
	assert_string_equal(w, "a [-b-]");
	free(w);
	w = plandiff_words("", "new words", &changed);
	assert_string_equal(w, "{+new words+}");
	assert_true(changed);
	free(w);
	w = plandiff_words("one two three four", "one 2 3 four", NULL);
	assert_string_equal(w, "one [-two three-]{+2 3+} four");
	free(w);
	/* The new text's line breaks stay. */
	w = plandiff_words("first line\nsecond line", "first line\nthird line", NULL);
	assert_string_equal(w, "first line\n[-second-]{+third+} line");
	free(w);
}

/* Text too long to search word by word is replaced whole, in bounded time and memory. */
static void test_long_text_bounded(void **state)
{
	size_t n = 3000;
	char *a = xmalloc(n * 4 + 1), *b = xmalloc(n * 4 + 1), *w;
	bool changed = false;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		memcpy(a + 4 * i, i % 2 ? "aa " : "bb ", 3);
		a[4 * i + 3] = ' ';
		memcpy(b + 4 * i, i % 3 ? "aa " : "cc ", 3);
		b[4 * i + 3] = ' ';
	}
	a[n * 4] = b[n * 4] = '\0';
	a[0] = 'x'; /* no common start */
	b[n * 4 - 3] = 'y'; /* no common end */
	w = plandiff_words(a, b, &changed);
	assert_true(changed);
	assert_non_null(strstr(w, "[-x"));
	assert_non_null(strstr(w, "-]{+"));
	free(w);
	free(a);
	free(b);
}

/* Escape sequences and controls in any field never reach a line. */
static void test_hostile_text(void **state)
{
	struct plandiff *d = diff(
	    "{'goal':'g','steps':[{'step_id':'a','name':'Read','description':'plain'},"
	    "{'step_id':'gone\\u001b[2J','name':'Old\\u001b]0;PWNED\\u0007'}]}",
	    "{'goal':'g\\u009b31m','steps':[{'step_id':'a','name':'Read\\u001b[31m red',"
	    "'description':'plain\\u001b]52;c;Zm9v\\u0007 text\\r\\nnext',"
	    "'acceptance_criteria':['\\u001bPq#0;2;0;0;0\\u001b\\\\ok']},"
	    "{'step_id':'new\\u0007','name':'New\\u202e gnp.exe',"
	    "'description':'line\\u001b[1A\\u001b[2Kover'}]}");
	char *t = plandiff_text(d);

	(void)state;
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			fail_msg("control byte 0x%02x in:\n%s", *p, t);
	assert_null(strstr(t, "PWNED"));
	assert_null(strstr(t, "Zm9v"));
	assert_null(strstr(t, "\xe2\x80\xae")); /* U+202E */
	assert_null(strstr(t, "\xc2\x9b"));     /* C1 CSI */
	has_line(d, PDL_CHANGED, "    name: Read {+red+}");
	has_line(d, PDL_REMOVED_STEP, "- gone  Old");
	has_line(d, PDL_ADDED_STEP, "+ new  New gnp.exe");
	free(t);
	plandiff_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_plan_no_diff),
		cmocka_unit_test(test_added_and_removed_steps),
		cmocka_unit_test(test_removed_step_keeps_its_place),
		cmocka_unit_test(test_changed_fields_word_diff),
		cmocka_unit_test(test_dependencies_and_plan_fields),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_long_text_bounded),
		cmocka_unit_test(test_hostile_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
