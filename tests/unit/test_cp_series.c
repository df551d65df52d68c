/* test_cp_series — a step's checkpoint series beyond a retry: it outlives a pass, a step a
 * replan removed is restored before the next attempt, and --resume rebuilds the series
 * from the journal's events (series_rebuild). */
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

#include "checkpoint.h"
#include "cpfix.h"
#include "events.h"
#include "series_rebuild.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

/* A restore empties the series: restoring again does nothing, and a path someone changed
 * after the restore is theirs, not the step's. */
static void test_restore_empties_the_series(void **state)
{
	struct cpfix *fx = *state;
	char b[CP_ID_LEN + 1], a[CP_ID_LEN + 1];
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL, *s;

	cpfix_put(fx, "notes.txt", "start\n");
	cpfix_attempt(fx, "s1", "notes.txt", "start\nline\n", b, a);
	assert_true(checkpoint_series_has(fx->cp, "s1"));
	assert_true(checkpoint_series_restore(fx->cp, "s1", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 1);
	assert_false(checkpoint_series_has(fx->cp, "s1"));
	cpfix_put(fx, "notes.txt", "the operator's\n");
	assert_false(checkpoint_series_restore(fx->cp, "s1", NULL, NULL, &err));
	s = cpfix_get(fx, "notes.txt");
	assert_string_equal(s, "the operator's\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* A step that left the plan: restored by the next restore of orphans, once. */
static void test_orphan(void **state)
{
	struct cpfix *fx = *state;
	char b[CP_ID_LEN + 1], a[CP_ID_LEN + 1];
	struct cp_restored *r = NULL;
	char *err = NULL;
	size_t n;

	cpfix_attempt(fx, "old", "made.txt", "by a step the replan removed\n", b, a);
	cpfix_attempt(fx, "kept", "kept.txt", "by a step that stays\n", b, a);
	assert_int_equal(checkpoint_series_restore_orphans(fx->cp, &r, &err), 0);
	checkpoint_series_orphan(fx->cp, "old");
	n = checkpoint_series_restore_orphans(fx->cp, &r, &err);
	assert_null(err);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].step_id, "old");
	assert_int_equal(r[0].restored.n, 1);
	assert_string_equal(r[0].restored.v[0], "made.txt");
	assert_int_equal(r[0].conflicts.n, 0);
	cp_restored_free(r, n);
	assert_null(cpfix_get(fx, "made.txt"));
	char *s = cpfix_get(fx, "kept.txt");
	assert_string_equal(s, "by a step that stays\n");
	free(s);
	assert_int_equal(checkpoint_series_restore_orphans(fx->cp, &r, &err), 0);
}


/* From the journal alone: what each attempt changed, which series were restored before an
 * attempt, which attempts overlapped another step's, and which steps left the plan. */
static void test_rebuild(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1], b2[CP_ID_LEN + 1], a2[CP_ID_LEN + 1];
	char b3[CP_ID_LEN + 1], a3[CP_ID_LEN + 1];
	struct series_rebuild *sr = series_rebuild_new(fx->cp);
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	struct cp_restored *r = NULL;
	const char *why;
	char *err = NULL, *s;
	size_t n;

	/* What the first process did; its memory is then lost (checkpoint_series_end). */
	cpfix_attempt(fx, "A", "a.txt", "A's work\n", b1, a1);
	cpfix_attempt(fx, "B", "b.txt", "B's work\n", b2, a2);
	cpfix_attempt(fx, "gone", "gone.txt", "left behind\n", b3, a3);
	checkpoint_series_end(fx->cp, "A");
	checkpoint_series_end(fx->cp, "B");
	checkpoint_series_end(fx->cp, "gone");

	cpfix_feed(sr, CPFIX_EV("plan.adopted") ",\"plan\":{\"steps\":[{\"step_id\":\"A\"},{\"step_id\":"
	                            "\"B\"},{\"step_id\":\"gone\"}]}}");
	/* A alone; then B and gone overlap each other. */
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"A\",\"attempt\":1}");
	cpfix_feed(sr, CPFIX_EV("step.changes") ",\"step_id\":\"A\",\"before\":\"%s\",\"after\":\"%s\"}", b1,
	     a1);
	cpfix_feed(sr, CPFIX_EV("step.end") ",\"step_id\":\"A\",\"status\":\"passed\"}");
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"B\",\"attempt\":1}");
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"gone\",\"attempt\":1}");
	cpfix_feed(sr, CPFIX_EV("step.changes") ",\"step_id\":\"B\",\"before\":\"%s\",\"after\":\"%s\"}", b2,
	     a2);
	cpfix_feed(sr, CPFIX_EV("step.changes") ",\"step_id\":\"gone\",\"before\":\"%s\",\"after\":\"%s\"}", b3,
	     a3);
	/* A replan drops gone (not passed) and A (passed: its work stays). */
	cpfix_feed(sr, CPFIX_EV("plan.adopted") ",\"plan\":{\"steps\":[{\"step_id\":\"B\"}]}}");
	/* A checkpoint the store does not have. */
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"B\",\"attempt\":2}");
	cpfix_feed(sr, CPFIX_EV("step.changes") ",\"step_id\":\"B\",\"before\":\"%040d\",\"after\":\"%s\"}", 0,
	     a2);
	assert_int_equal(series_rebuild_missing(sr, &why), 1);
	assert_non_null(strstr(why, "no checkpoint"));
	series_rebuild_free(sr);

	/* A passed and stays passed: its series is there if it runs again. */
	assert_true(checkpoint_series_has(fx->cp, "A"));
	/* gone left the plan before it passed; its overlap with B makes gone.txt not its
	 * alone: shared, left as it is (not a conflict to ask about). */
	n = checkpoint_series_restore_orphans(fx->cp, &r, &err);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].step_id, "gone");
	assert_int_equal(r[0].restored.n, 0);
	assert_int_equal(r[0].conflicts.n, 0);
	assert_int_equal(r[0].shared.n, 1);
	assert_string_equal(r[0].shared.v[0], "gone.txt");
	cp_restored_free(r, n);
	s = cpfix_get(fx, "gone.txt");
	assert_non_null(s);
	free(s);
	/* A restores its file (it ran alone). */
	assert_true(checkpoint_series_restore(fx->cp, "A", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 1);
	assert_null(cpfix_get(fx, "a.txt"));
	strvec_clear(&restored);
	strvec_clear(&conflicts);
	/* B's attempt overlapped gone's: b.txt is not B's alone. */
	assert_true(checkpoint_series_restore(fx->cp, "B", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 0);
	assert_int_equal(conflicts.n, 1);
	assert_string_equal(conflicts.v[0], "b.txt");
	strvec_clear(&restored);
	strvec_clear(&conflicts);
	assert_null(err);
}

/* restored_series: the series were restored before that attempt; the rebuilt series holds
 * only what came after. */
static void test_rebuild_restored_series(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1], b2[CP_ID_LEN + 1], a2[CP_ID_LEN + 1];
	struct series_rebuild *sr = series_rebuild_new(fx->cp);
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL, *s;

	cpfix_attempt(fx, "s", "first.txt", "attempt 1\n", b1, a1);
	assert_true(checkpoint_series_restore(fx->cp, "s", NULL, NULL, &err));
	cpfix_attempt(fx, "s", "second.txt", "attempt 2\n", b2, a2);
	checkpoint_series_end(fx->cp, "s");
	cpfix_put(fx, "first.txt", "the operator's, after the restore\n");

	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"s\",\"attempt\":1}");
	cpfix_feed(sr, CPFIX_EV("step.changes") ",\"step_id\":\"s\",\"before\":\"%s\",\"after\":\"%s\"}", b1,
	     a1);
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"s\",\"attempt\":2}");
	cpfix_feed(sr,
	     CPFIX_EV("step.changes") ",\"step_id\":\"s\",\"before\":\"%s\",\"after\":\"%s\","
	                        "\"restored_series\":[\"s\"]}",
	     b2, a2);
	series_rebuild_free(sr);

	assert_true(checkpoint_series_restore(fx->cp, "s", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 1);
	assert_string_equal(restored.v[0], "second.txt");
	assert_int_equal(conflicts.n, 0);
	s = cpfix_get(fx, "first.txt");
	assert_string_equal(s, "the operator's, after the restore\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* The rewind gate's side: a conflict comes with the checkpoint it would go back to, the
 * diff says what a restore would write, and a restore over it does so. */
static void test_conflict_diff_and_restore_over(void **state)
{
	struct cpfix *fx = *state;
	char b[CP_ID_LEN + 1], a[CP_ID_LEN + 1], full[CP_ID_LEN + 1];
	struct cp_restored r;
	struct strbuf diff = STRBUF_INIT;
	struct strvec restored = STRVEC_INIT;
	char *err = NULL, *s;
	bool cut = false;

	cpfix_put(fx, "notes.txt", "start\n");
	cpfix_attempt(fx, "s1", "notes.txt", "start\nline\n", b, a);
	cpfix_put(fx, "notes.txt", "start\ntheirs\n");
	assert_true(checkpoint_series_restore_step(fx->cp, "s1", &r, &err));
	assert_int_equal(r.restored.n, 0);
	assert_int_equal(r.conflicts.n, 1);
	assert_string_equal(r.conflicts.v[0], "notes.txt");
	assert_string_equal(r.bases.v[0], b);
	strbuf_init(&diff);
	assert_true(checkpoint_conflict_diff(fx->cp, b, "notes.txt", 4096, &diff, &cut, &err));
	assert_non_null(strstr(diff.buf, "-theirs"));
	assert_false(cut);
	assert_false(checkpoint_conflict_diff(fx->cp, b, "../escape", 4096, &diff, &cut, &err));
	assert_non_null(err);
	free(err);
	err = NULL;
	assert_true(checkpoint_restore_over(fx->cp, "s1", b, "notes.txt", &restored, &err));
	assert_int_equal(restored.n, 1);
	s = cpfix_get(fx, "notes.txt");
	assert_string_equal(s, "start\n");
	free(s);
	cp_restored_release(&r);
	strbuf_release(&diff);
	strvec_clear(&restored);

	/* A checkpoint by the start of its id, as --rewind RUN:ID takes it. */
	assert_true(checkpoint_resolve(
	    fx->cp, (char[8]){b[0], b[1], b[2], b[3], b[4], b[5], b[6], 0}, full, &err));
	assert_string_equal(full, b);
	assert_false(checkpoint_resolve(fx->cp, "zz", full, &err));
	assert_non_null(strstr(err, "not a checkpoint id"));
	free(err);
	err = NULL;
	assert_false(checkpoint_resolve(fx->cp, "0000000", full, &err));
	assert_non_null(strstr(err, "no checkpoint 0000000"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    CPFIX_TEST(test_restore_empties_the_series),
	    CPFIX_TEST(test_orphan),
	    CPFIX_TEST(test_rebuild),
	    CPFIX_TEST(test_rebuild_restored_series),
	    CPFIX_TEST(test_conflict_diff_and_restore_over),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
