/* test_series_cut — series_rebuild and attempts a stop cut off: a step.checkpoint with no
 * step.changes after it is cut, whether the journal ends there or a run.resume follows;
 * the step.changes marked `cut` that a resume journals settles it, with the overlap the
 * journal showed; a later attempt or a run's end forgets an unsettled one. */
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
#include "xalloc.h"

static void start(struct series_rebuild *sr, const char *id, int attempt)
{
	cpfix_feed(sr, CPFIX_EV("step.start") ",\"step_id\":\"%s\",\"attempt\":%d}", id, attempt);
}

static void before(struct series_rebuild *sr, const char *id, int attempt, const char *b)
{
	cpfix_feed(sr, CPFIX_EV("step.checkpoint") ",\"step_id\":\"%s\",\"attempt\":%d,\"before\":\"%s\"}", id,
	     attempt, b);
}

/* The step.changes a resume journals for a cut attempt. */
static void settle(struct series_rebuild *sr, const char *id, int attempt, const char *b,
                   const char *a)
{
	cpfix_feed(sr,
	     CPFIX_EV("step.changes") ",\"step_id\":\"%s\",\"attempt\":%d,\"before\":\"%s\",\"after\":"
	                        "\"%s\",\"files\":[],\"cut\":true}",
	     id, attempt, b, a);
}

static const char B1[] = "1111111111111111111111111111111111111111";
static const char B2[] = "2222222222222222222222222222222222222222";

/* Which windows are cut: only those with a journaled "before", still open when the
 * process ended (the journal's end, or a run.resume). */
static void test_which_are_cut(void **state)
{
	struct cpfix *fx = *state;
	struct series_rebuild *sr = series_rebuild_new(fx->cp);
	const struct series_cut *v;

	start(sr, "done", 1);
	before(sr, "done", 1, B1);
	cpfix_feed(sr,
	     CPFIX_EV("step.changes") ",\"step_id\":\"done\",\"attempt\":1,\"before\":\"%s\","
	                        "\"after\":\"%s\"}",
	     B1, B2);
	start(sr, "early", 1); /* killed before its first checkpoint: nothing changed yet */
	start(sr, "cut", 3);
	before(sr, "cut", 3, B2);
	assert_int_equal(series_rebuild_cut(sr, &v), 1);
	assert_string_equal(v[0].step_id, "cut");
	assert_int_equal(v[0].attempt, 3);
	assert_string_equal(v[0].before, B2);
	assert_true(v[0].overlapped); /* "early" started while it ran */
	series_rebuild_free(sr);

	/* A run.resume ends the windows of the process before it the same way. */
	sr = series_rebuild_new(fx->cp);
	start(sr, "s", 1);
	before(sr, "s", 1, B1);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	start(sr, "other", 1);
	assert_int_equal(series_rebuild_cut(sr, &v), 1);
	assert_string_equal(v[0].step_id, "s");
	assert_false(v[0].overlapped);
	series_rebuild_free(sr);
}

/* What forgets a cut attempt: its settling step.changes, a later attempt of the step (the
 * resume went on without it: the store lacked its checkpoint), a run's end, a new plan.
 * A window a step.end closes had its second checkpoint fail in a live process: not cut. */
static void test_what_forgets_one(void **state)
{
	struct cpfix *fx = *state;
	struct series_rebuild *sr = series_rebuild_new(fx->cp);
	const struct series_cut *v;

	start(sr, "s", 1);
	before(sr, "s", 1, B1);
	cpfix_feed(sr, CPFIX_EV("step.end") ",\"step_id\":\"s\",\"status\":\"fail_accepted\"}");
	assert_int_equal(series_rebuild_cut(sr, &v), 0);

	start(sr, "s", 2);
	before(sr, "s", 2, B1);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	start(sr, "s", 3);
	assert_int_equal(series_rebuild_cut(sr, &v), 0);

	start(sr, "s", 3);
	before(sr, "s", 3, B1);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	cpfix_feed(sr, CPFIX_EV("run.end") ",\"status\":\"aborted\"}");
	assert_int_equal(series_rebuild_cut(sr, &v), 0);

	start(sr, "s", 4);
	before(sr, "s", 4, B1);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	cpfix_feed(sr, CPFIX_EV("plan.adopted") ",\"plan\":{\"steps\":[{\"step_id\":\"s\"}]}}");
	assert_int_equal(series_rebuild_cut(sr, &v), 0);
	series_rebuild_free(sr);
}

/*
 * The whole story in a real store: attempt 1 of s writes first.txt and is settled; attempt
 * 2 starts after its series was restored (step.checkpoint's restored_series), writes
 * second.txt and is killed. The first resume settles it (cut); a second resume rebuilds
 * the series from the journal alone and restores second.txt, not first.txt, which
 * attempt 2's restore had put back already (the operator has edited it since).
 */
static void test_settled_cut_is_noted(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1], b2[CP_ID_LEN + 1], now[CP_ID_LEN + 1];
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	struct series_rebuild *sr;
	const struct series_cut *v;
	char *err = NULL, *s;

	assert_true(checkpoint_take_step(fx->cp, "s", true, b1, NULL, &err));
	cpfix_put(fx, "first.txt", "attempt 1\n");
	assert_true(checkpoint_take_step(fx->cp, "s", false, a1, NULL, &err));
	cpfix_put(fx, "first.txt", "the operator's\n");
	assert_true(checkpoint_take_step(fx->cp, "s", true, b2, NULL, &err));
	cpfix_put(fx, "second.txt", "attempt 2, cut off\n");
	cpfix_reopen(fx);

	/* The first resume: the journal up to the kill. */
	sr = series_rebuild_new(fx->cp);
	start(sr, "s", 1);
	before(sr, "s", 1, b1);
	cpfix_feed(sr,
	     CPFIX_EV("step.changes") ",\"step_id\":\"s\",\"attempt\":1,\"before\":\"%s\","
	                        "\"after\":\"%s\"}",
	     b1, a1);
	start(sr, "s", 2);
	cpfix_feed(sr,
	     CPFIX_EV("step.checkpoint") ",\"step_id\":\"s\",\"attempt\":2,\"before\":\"%s\","
	                           "\"restored_series\":[\"s\"]}",
	     b2);
	assert_int_equal(series_rebuild_cut(sr, &v), 1);
	assert_string_equal(v[0].before, b2);
	assert_false(v[0].overlapped);
	series_rebuild_free(sr);
	/* crash_cut.c's part: a checkpoint of the workspace as the stop left it, then the
	 * journaled step.changes; the process dies again before the step runs. */
	assert_true(checkpoint_take(fx->cp, now, NULL, &err));
	cpfix_reopen(fx);

	sr = series_rebuild_new(fx->cp);
	start(sr, "s", 1);
	before(sr, "s", 1, b1);
	cpfix_feed(sr,
	     CPFIX_EV("step.changes") ",\"step_id\":\"s\",\"attempt\":1,\"before\":\"%s\","
	                        "\"after\":\"%s\"}",
	     b1, a1);
	start(sr, "s", 2);
	cpfix_feed(sr,
	     CPFIX_EV("step.checkpoint") ",\"step_id\":\"s\",\"attempt\":2,\"before\":\"%s\","
	                           "\"restored_series\":[\"s\"]}",
	     b2);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	settle(sr, "s", 2, b2, now);
	assert_int_equal(series_rebuild_cut(sr, &v), 0);
	series_rebuild_free(sr);

	assert_true(checkpoint_series_restore(fx->cp, "s", &restored, &conflicts, &err));
	assert_null(err);
	assert_int_equal(restored.n, 1);
	assert_string_equal(restored.v[0], "second.txt");
	assert_int_equal(conflicts.n, 0);
	assert_null(cpfix_get(fx, "second.txt"));
	s = cpfix_get(fx, "first.txt");
	assert_string_equal(s, "the operator's\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* Two steps cut off while both ran: neither's file is its alone, so neither restores it
 * (a conflict, left as it is), on the first resume and on the next. */
static void test_overlapping_cuts_stay_shared(void **state)
{
	struct cpfix *fx = *state;
	char ba[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], now[CP_ID_LEN + 1];
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	struct series_rebuild *sr;
	const struct series_cut *v;
	char *err = NULL, *s;

	assert_true(checkpoint_take_step(fx->cp, "a", true, ba, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "b", true, bb, NULL, &err));
	cpfix_put(fx, "a.txt", "by a, or by b\n");
	cpfix_reopen(fx);
	assert_true(checkpoint_take(fx->cp, now, NULL, &err));

	sr = series_rebuild_new(fx->cp);
	start(sr, "a", 1);
	before(sr, "a", 1, ba);
	start(sr, "b", 1);
	before(sr, "b", 1, bb);
	assert_int_equal(series_rebuild_cut(sr, &v), 2);
	assert_true(v[0].overlapped);
	assert_true(v[1].overlapped);
	series_rebuild_free(sr);

	/* The next resume reads the settled step.changes: their overlap still stands. */
	sr = series_rebuild_new(fx->cp);
	start(sr, "a", 1);
	before(sr, "a", 1, ba);
	start(sr, "b", 1);
	before(sr, "b", 1, bb);
	cpfix_feed(sr, CPFIX_EV("run.resume") ",\"policy\":{}}");
	settle(sr, "a", 1, ba, now);
	settle(sr, "b", 1, bb, now);
	assert_int_equal(series_rebuild_cut(sr, &v), 0);
	series_rebuild_free(sr);

	assert_true(checkpoint_path_shared(fx->cp, "a", "a.txt"));
	assert_true(checkpoint_series_restore(fx->cp, "a", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 0);
	assert_int_equal(conflicts.n, 1);
	assert_string_equal(conflicts.v[0], "a.txt");
	s = cpfix_get(fx, "a.txt");
	assert_string_equal(s, "by a, or by b\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
	assert_null(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    CPFIX_TEST(test_which_are_cut),
	    CPFIX_TEST(test_what_forgets_one),
	    CPFIX_TEST(test_settled_cut_is_noted),
	    CPFIX_TEST(test_overlapping_cuts_stay_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
