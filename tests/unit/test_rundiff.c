/* test_rundiff — a run's and a step's changes from the checkpoints a journal names: the
 * run's span when parallel attempts overlap, a step's attempts in order, the one-line
 * summary, the drill-down page (sanitized), and a store opened to read only. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "drill_changes.h"
#include "events.h"
#include "fold.h"
#include "rundiff.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

struct fx {
	char *top, *run, *ws;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1], c[CP_ID_LEN + 1];
	struct run_state rs;
};

static void put(const struct fx *fx, const char *rel, const char *text, size_t len)
{
	char *p = xasprintf("%s/%s", fx->ws, rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(p);
}

static void apply(struct run_state *rs, const char *line)
{
	char *err = NULL;
	struct event *ev = event_from_line(line, &err);

	if (!ev)
		fail_msg("bad test event: %s: %s", err, line);
	fold_apply(rs, ev);
	event_free(ev);
}

static void changes(struct run_state *rs, int seq, const char *step, int attempt,
                    const char *before, const char *after, const char *files)
{
	char *line = xasprintf("{\"seq\":%d,\"ts\":\"2026-01-01T10:00:00.000Z\",\"type\":"
	                       "\"step.changes\",\"step_id\":\"%s\",\"attempt\":%d,\"before\":"
	                       "\"%s\",\"after\":\"%s\",\"files\":%s,\"stat\":\"s\"}",
	                       seq, step, attempt, before, after, files);

	apply(rs, line);
	free(line);
}

/* Three checkpoints: a (empty), b (notes.txt and a file with a hostile name), c (notes.txt
 * one line longer). Journal order names b..c (step s2) before a..b (step s1), as two
 * parallel attempts finishing out of order would. */
static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	struct checkpoints *cp;
	char *err = NULL;

	fx->top = testdir_new("rundiff");
	assert_non_null(fx->top);
	fx->run = xasprintf("%s/run", fx->top);
	fx->ws = xasprintf("%s/ws", fx->top);
	assert_int_equal(mkdir(fx->run, 0700), 0);
	assert_int_equal(mkdir(fx->ws, 0700), 0);
	{
		char *data = xasprintf("%s/data", fx->top);
		setenv("XDG_DATA_HOME", data, 1); /* the store below the test's folder */
		free(data);
	}
	cp = checkpoint_open(fx->run, fx->ws, &err);
	assert_non_null(cp);
	assert_true(checkpoint_take(cp, fx->a, NULL, &err));
	put(fx, "notes.txt", "one\n", 4);
	{
		/* Long enough for its two controls not to make it binary (libgit2's guess). */
		struct strbuf t;

		strbuf_init(&t);
		strbuf_adds(&t, "\x1b]0;owned\x07");
		for (int i = 0; i < 40; i++)
			strbuf_adds(&t, "plain text");
		strbuf_adds(&t, "\n");
		put(fx, "evil\x1b[2J.txt", t.buf, t.len);
		strbuf_release(&t);
	}
	assert_true(checkpoint_take(cp, fx->b, NULL, &err));
	put(fx, "notes.txt", "one\ntwo\n", 8);
	assert_true(checkpoint_take(cp, fx->c, NULL, &err));
	checkpoint_close(cp);
	fold_init(&fx->rs);
	changes(&fx->rs, 10, "s2", 1, fx->b, fx->c,
	        "[{\"path\":\"notes.txt\",\"change\":\"modified\",\"plus\":1,\"minus\":0}]");
	changes(&fx->rs, 11, "s1", 1, fx->a, fx->b,
	        "[{\"path\":\"notes.txt\",\"change\":\"added\"},{\"path\":\"evil\\u001b[2J.txt\","
	        "\"change\":\"added\"}]");
	changes(&fx->rs, 12, "s1", 2, fx->a, fx->a, "[]");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	fold_release(&fx->rs);
	testdir_remove(fx->top);
	free(fx->top);
	free(fx->run);
	free(fx->ws);
	free(fx);
	return 0;
}

static void test_run_span(void **state)
{
	struct fx *fx = *state;
	struct checkpoints *cp;
	struct cp_changes ch;
	char *err = NULL;

	cp = checkpoint_open_read(fx->run, &err);
	assert_non_null(cp);
	/* First taken to last taken, whatever the journal's order (the three are often taken
	 * within one tick of the clock: then their parents tell): both files, three lines. */
	assert_true(rundiff_run(cp, &fx->rs, 1 << 20, &ch, &err));
	assert_int_equal(ch.n, 2);
	assert_int_equal(ch.plus, 3);
	assert_non_null(strstr(ch.diff, "+one\n+two\n"));
	cp_changes_release(&ch);
	checkpoint_close(cp);
}

static void test_step_attempts(void **state)
{
	struct fx *fx = *state;
	struct checkpoints *cp;
	struct strbuf sb;
	char *err = NULL, *one, *two;

	cp = checkpoint_open_read(fx->run, &err);
	assert_non_null(cp);
	strbuf_init(&sb);
	assert_true(rundiff_step(cp, &fx->rs, "s1", 0, 1 << 20, &sb, &err));
	one = strstr(sb.buf, "# step s1, attempt 1: 2 files changed, +2 -0 (checkpoint ");
	two = strstr(sb.buf, "# step s1, attempt 2: no files changed");
	assert_non_null(one);
	assert_non_null(two);
	assert_true(one < two);
	assert_non_null(strstr(sb.buf, "+++ b/notes.txt\n@@ -0,0 +1 @@\n+one\n"));
	strbuf_release(&sb);

	/* One attempt only. */
	strbuf_init(&sb);
	assert_true(rundiff_step(cp, &fx->rs, "s1", 2, 1 << 20, &sb, &err));
	assert_null(strstr(sb.buf, "attempt 1"));
	strbuf_release(&sb);

	/* A step or attempt the journal has no changes for. */
	strbuf_init(&sb);
	assert_false(rundiff_step(cp, &fx->rs, "s9", 0, 1 << 20, &sb, &err));
	assert_non_null(strstr(err, "no changes for step s9"));
	free(err);
	err = NULL;
	assert_false(rundiff_step(cp, &fx->rs, "s1", 7, 1 << 20, &sb, &err));
	assert_non_null(strstr(err, "no changes for attempt 7 of step s1"));
	free(err);
	strbuf_release(&sb);
	checkpoint_close(cp);
}

static void test_summary(void **state)
{
	struct fx *fx = *state;
	char *s = rundiff_summary(fold_find_change(&fx->rs, "s1", 1), 1);

	assert_string_equal(s, "s: +notes.txt, and 1 more");
	free(s);
	s = rundiff_summary(fold_find_change(&fx->rs, "s1", 2), 3);
	assert_string_equal(s, "no files changed");
	free(s);
}

static bool page_has(const struct linestore *ls, const char *needle)
{
	for (size_t i = 0; i < ls->n; i++)
		if (strstr(ls->v[i].text, needle))
			return true;
	return false;
}

static void test_drill_page(void **state)
{
	struct fx *fx = *state;
	struct linestore page;
	char *msg = NULL;

	linestore_init(&page);
	assert_true(drill_changes(&page, &fx->rs, fx->run, "s1", 1, &msg));
	assert_true(page_has(&page, "Attempt 1: 2 files changed, +2 -0"));
	assert_true(page_has(&page, "  A notes.txt  +1 \xe2\x88\x92"
	                            "0"));
	assert_true(page_has(&page, "+one"));
	assert_false(page_has(&page, "Attempt 2"));
	/* A model's file name and content reach the screen without their escapes. */
	assert_true(page_has(&page, "+plain textplain text"));
	assert_true(page_has(&page, "  A evil.txt  +1 "));
	assert_false(page_has(&page, "owned")); /* an OSC sequence goes whole */
	for (size_t i = 0; i < page.n; i++) {
		assert_null(strchr(page.v[i].text, '\x1b'));
		assert_null(strchr(page.v[i].text, '\x07'));
	}
	linestore_release(&page);

	linestore_init(&page);
	assert_false(drill_changes(&page, &fx->rs, fx->run, "s3", 0, &msg));
	assert_non_null(strstr(msg, "step s3 recorded no workspace changes"));
	assert_int_equal(page.n, 0);
	free(msg);
	assert_false(drill_changes(&page, &fx->rs, NULL, "s1", 0, &msg));
	assert_non_null(strstr(msg, "no run folder"));
	free(msg);
	linestore_release(&page);
}

static void test_read_only_open(void **state)
{
	struct fx *fx = *state;
	char *err = NULL, *dir = xasprintf("%s/none", fx->top);
	struct checkpoints *cp;
	struct stat st;

	assert_int_equal(mkdir(dir, 0700), 0);
	cp = checkpoint_open_read(dir, &err);
	assert_null(cp);
	assert_non_null(strstr(err, "has no checkpoint store"));
	free(err);
	/* Nothing was created. */
	{
		char *store = xasprintf("%s/checkpoints.git", dir);

		assert_int_not_equal(stat(store, &st), 0);
		free(store);
	}
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_run_span, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_step_attempts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_drill_page, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_only_open, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
