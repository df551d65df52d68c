/* test_linediff — the line diff: shortest scripts, hunks as GNU diff -u writes them. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linediff.h"
#include "strbuf.h"
#include "xalloc.h"

static char *diff(const char *a, const char *b, int ctx, struct linediff_stats *st)
{
	return linediff_unified(a, strlen(a), b, strlen(b), "a", "b", ctx, 0, st);
}

static void expect(const char *a, const char *b, int ctx, const char *want)
{
	char *d = diff(a, b, ctx, NULL);

	if (strcmp(d, want))
		fail_msg("diff of\n%s\nagainst\n%s\ngave\n%s\nwanted\n%s", a, b, d, want);
	free(d);
}

static void test_same_is_empty(void **state)
{
	struct linediff_stats st;
	char *d;

	(void)state;
	d = diff("x\ny\n", "x\ny\n", 3, &st);
	assert_string_equal(d, "");
	assert_int_equal(st.hunks, 0);
	free(d);
	expect("", "", 3, "");
}

static void test_from_nothing(void **state)
{
	(void)state;
	expect("", "one\ntwo\n", 3, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+one\n+two\n");
	expect("one\n", "", 3, "--- a\n+++ b\n@@ -1 +0,0 @@\n-one\n");
}

static void test_change_in_the_middle(void **state)
{
	(void)state;
	expect("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n", 3,
	       "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n");
	/* no context */
	expect("1\n2\n3\n", "1\nX\n3\n", 0, "--- a\n+++ b\n@@ -2 +2 @@\n-2\n+X\n");
}

static void test_insert_and_delete(void **state)
{
	(void)state;
	expect("a\nb\nc\n", "a\nb\nnew\nc\n", 1, "--- a\n+++ b\n@@ -2,2 +2,3 @@\n b\n+new\n c\n");
	expect("a\nb\nc\n", "a\nc\n", 1, "--- a\n+++ b\n@@ -1,3 +1,2 @@\n a\n-b\n c\n");
}

/* Changes 2 * context lines apart share a hunk; one more and they do not (as GNU). */
static void test_hunks_join_and_split(void **state)
{
	struct linediff_stats st;
	char *d;

	(void)state;
	expect("x\n1\n2\n3\n4\n5\n6\ny\n", "X\n1\n2\n3\n4\n5\n6\nY\n", 3,
	       "--- a\n+++ b\n@@ -1,8 +1,8 @@\n-x\n+X\n 1\n 2\n 3\n 4\n 5\n 6\n-y\n+Y\n");
	d = diff("x\n1\n2\n3\n4\n5\n6\n7\ny\n", "X\n1\n2\n3\n4\n5\n6\n7\nY\n", 3, &st);
	assert_int_equal(st.hunks, 2);
	assert_non_null(strstr(d, "@@ -1,4 +1,4 @@\n-x\n+X\n 1\n 2\n 3\n"));
	assert_non_null(strstr(d, "@@ -6,4 +6,4 @@\n 5\n 6\n 7\n-y\n+Y\n"));
	assert_int_equal(st.added, 2);
	assert_int_equal(st.removed, 2);
	free(d);
}

static void test_no_newline_at_end(void **state)
{
	(void)state;
	expect("a\nb", "a\nb\n", 3,
	       "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
}

/* Removals come before additions in each run of changes. */
static void test_removals_first(void **state)
{
	(void)state;
	expect("a\nb\nc\nd\n", "a\nX\nY\nd\n", 0, "--- a\n+++ b\n@@ -2,2 +2,2 @@\n-b\n-c\n+X\n+Y\n");
}

/* Apply a unified diff to a (the test's own patcher): it must give b. */
static char *apply(const char *a, const char *d)
{
	struct strbuf out;
	const char *p = d, *ap = a;
	size_t aline = 0;

	strbuf_init(&out);
	p = strchr(p, '\n') + 1;
	p = strchr(p, '\n') + 1; /* the two headers */
	while (*p) {
		const char *nl = strchr(p, '\n');

		if (p[0] == '@') {
			char *q;
			unsigned long start = strtoul(p + 4, &q, 10), count = 1, upto;

			if (*q == ',')
				count = strtoul(q + 1, NULL, 10);
			/* an empty range names the line the hunk goes after */
			upto = count == 0 ? start : start - 1;
			while (aline < upto) {
				const char *e = strchr(ap, '\n');

				strbuf_add(&out, ap, (size_t)(e - ap + 1));
				ap = e + 1;
				aline++;
			}
		} else if (p[0] == ' ' || p[0] == '-') {
			const char *e = strchr(ap, '\n');

			if (p[0] == ' ')
				strbuf_add(&out, ap, (size_t)(e - ap + 1));
			ap = e + 1;
			aline++;
		} else if (p[0] == '+') {
			strbuf_add(&out, p + 1, (size_t)(nl - p));
		}
		p = nl + 1;
	}
	strbuf_adds(&out, ap);
	return strbuf_detach(&out);
}

static unsigned long rnd(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static char *random_text(unsigned long *s, int lines)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (int i = 0; i < lines; i++)
		strbuf_addf(&sb, "%c\n", (char)('a' + rnd(s) % 4));
	return strbuf_detach(&sb);
}

/* Random texts: the diff turns a into b, and it is never longer than a + b. */
static void test_random_diffs_apply(void **state)
{
	unsigned long s = 88172645463325252UL;

	(void)state;
	for (int k = 0; k < 500; k++) {
		char *a = random_text(&s, (int)(rnd(&s) % 25)), *b = random_text(&s, (int)(rnd(&s) % 25));
		struct linediff_stats st;
		char *d = diff(a, b, (int)(rnd(&s) % 4), &st), *r;

		if (!*d) {
			assert_string_equal(a, b);
		} else {
			r = apply(a, d);
			if (strcmp(r, b))
				fail_msg("case %d: the diff\n%s\ndoes not turn\n%s\ninto\n%s\n(got\n%s)", k, d,
					 a, b, r);
			free(r);
		}
		assert_true(st.exact);
		free(a);
		free(b);
		free(d);
	}
}

/* Past the edit bound the middle is replaced whole: still a correct diff. */
static void test_edit_bound(void **state)
{
	struct strbuf a, b;
	struct linediff_stats st;
	char *d, *r;

	(void)state;
	strbuf_init(&a);
	strbuf_init(&b);
	strbuf_adds(&a, "head\n");
	strbuf_adds(&b, "head\n");
	for (int i = 0; i < 300; i++) {
		strbuf_addf(&a, "a%d\n", i);
		strbuf_addf(&b, "b%d\n", i);
	}
	strbuf_adds(&a, "tail\n");
	strbuf_adds(&b, "tail\n");
	d = linediff_unified(a.buf, a.len, b.buf, b.len, "a", "b", 3, 50, &st);
	assert_false(st.exact);
	assert_int_equal(st.added, 300);
	assert_int_equal(st.removed, 300);
	r = apply(a.buf, d);
	assert_string_equal(r, b.buf);
	free(r);
	free(d);
	strbuf_release(&a);
	strbuf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_is_empty),
		cmocka_unit_test(test_from_nothing),
		cmocka_unit_test(test_change_in_the_middle),
		cmocka_unit_test(test_insert_and_delete),
		cmocka_unit_test(test_hunks_join_and_split),
		cmocka_unit_test(test_no_newline_at_end),
		cmocka_unit_test(test_removals_first),
		cmocka_unit_test(test_random_diffs_apply),
		cmocka_unit_test(test_edit_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
