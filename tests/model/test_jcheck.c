/* test_jcheck — the journal checker catches each broken invariant in a hand-written journal,
 * and passes one that keeps them all. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jcheck.h"
#include "xalloc.h"

/* Three steps in a chain (s1 <- s2 <- s3); s2 has two criteria. */
#define STEP(id, desc, crit, deps)                                                         \
	"{\"step_id\":\"" id "\",\"description\":\"" desc "\",\"acceptance_criteria\":[" crit \
	"],\"dependencies\":[" deps "]}"
#define S1 STEP("s1", "one", "\"a\"", "")
#define S2 STEP("s2", "two", "\"b\",\"c\"", "\"s1\"")
#define S2X STEP("s2", "two, edited", "\"b\",\"c\"", "\"s1\"")
#define S3 STEP("s3", "three", "\"d\"", "\"s2\"")
#define PLAN "{\"steps\":[" S1 "," S2 "," S3 "]}"
/* Two independent steps. */
#define P1 STEP("p1", "x", "\"a\"", "")
#define P2 STEP("p2", "y", "\"a\"", "")

#define START(budget)                                                                      \
	"{\"type\":\"run.start\",\"policy\":{\"parallel\":1,\"budget_usd\":" budget "}}"
#define ADOPT(plan, kept)                                                                  \
	"{\"type\":\"plan.adopted\",\"revision\":0,\"plan\":" plan ",\"kept\":[" kept "]}"
#define ST(id) "{\"type\":\"step.start\",\"step_id\":\"" id "\",\"attempt\":1}"
#define DET(id)                                                                            \
	"{\"type\":\"verify.verdict\",\"step_id\":\"" id "\",\"stage\":\"deterministic\","   \
	"\"action\":\"pass\"}"
#define CRIT(n) "{\"criterion\":\"" n "\",\"passed\":true}"
#define PASSV(id, crit)                                                                    \
	"{\"type\":\"verify.verdict\",\"step_id\":\"" id "\",\"stage\":\"model\","           \
	"\"action\":\"pass\",\"overall_pass\":true,\"criteria\":[" crit "]}"
#define END(id)                                                                            \
	"{\"type\":\"step.end\",\"step_id\":\"" id "\",\"status\":\"passed\",\"attempts\":1}"
#define STATE(id, s, cause)                                                                \
	"{\"type\":\"step.state\",\"step_id\":\"" id "\",\"state\":\"" s "\","               \
	"\"cause\":\"" cause "\"}"
#define CMD(c, id) "{\"type\":\"operator.command\",\"command\":\"" c "\",\"step_id\":\"" id "\"}"
#define EDIT(id, after) "{\"type\":\"step.edit\",\"step_id\":\"" id "\",\"after\":" after "}"
#define CALL(cost)                                                                         \
	"{\"type\":\"llm.call\",\"role\":\"executor\",\"cost_usd\":" cost ",\"status\":\"ok\"}"
#define FINAL "{\"type\":\"run.final\",\"answer\":\"done\",\"partial\":false}"
#define RUNEND "{\"type\":\"run.end\",\"status\":\"passed\",\"exit_code\":0}"
/* A whole passing attempt. */
#define PASS_S1 ST("s1"), DET("s1"), CALL("0.01"), PASSV("s1", CRIT("a")), END("s1")
#define PASS_S2 ST("s2"), DET("s2"), CALL("0.01"), PASSV("s2", CRIT("b") "," CRIT("c")), END("s2")
#define PASS_S3 ST("s3"), DET("s3"), CALL("0.01"), PASSV("s3", CRIT("d")), END("s3")
/* Gate events. */
#define GATE_OPEN(id, kind, step)                                                          \
	"{\"type\":\"gate.open\",\"gate_id\":" id ",\"gate\":\"" kind "\",\"step_id\":" step "}"
#define GATE_DEC(id, kind, step, d)                                                        \
	"{\"type\":\"gate.decision\",\"gate_id\":" id ",\"gate\":\"" kind "\",\"step_id\":" step \
	",\"decision\":\"" d "\"}"

/* Feeds the lines (NULL-terminated) with seq 1, 2, … (unless a line has its own). */
static struct jcheck *check(const char *const *lines, bool finished)
{
	struct jcheck *c = jcheck_new();

	for (unsigned long i = 0; lines[i]; i++) {
		cJSON *ev = cJSON_Parse(lines[i]);
		if (!ev)
			fail_msg("bad test line: %s", lines[i]);
		if (!cJSON_GetObjectItem(ev, "seq"))
			cJSON_AddNumberToObject(ev, "seq", (double)(i + 1));
		cJSON_AddStringToObject(ev, "ts", "2026-01-01T00:00:00.000Z");
		jcheck_feed(c, ev);
		cJSON_Delete(ev);
	}
	if (finished)
		jcheck_finish(c);
	return c;
}

/* The journal breaks `inv` (and the checker says so). */
static void expect(const char *const *lines, bool finished, enum jcheck_inv inv)
{
	struct jcheck *c = check(lines, finished);
	bool found = false;

	for (size_t i = 0; i < jcheck_n_violations(c); i++)
		found |= jcheck_violation(c, i)->inv == inv;
	if (getenv("JCHECK_VERBOSE")) /* to see that it is caught for the right reason */
		jcheck_print(c, stderr, 10);
	if (!found) {
		jcheck_print(c, stderr, 10);
		jcheck_free(c);
		fail_msg("expected a violation of %s", jcheck_inv_name(inv));
	}
	jcheck_free(c);
}

static void test_good_journal(void **state)
{
	static const char *const lines[] = {
		START("1.0"),
		"{\"type\":\"plan.proposed\",\"revision\":0,\"plan\":" PLAN "}",
		GATE_OPEN("1", "plan", "null"), GATE_DEC("1", "plan", "null", "approve"),
		ADOPT(PLAN, ""),
		PASS_S1,
		/* s2 waits at its gate while nothing else runs; then passes. */
		GATE_OPEN("2", "high", "\"s2\""), STATE("s2", "waiting", "s2"),
		GATE_DEC("2", "high", "\"s2\"", "approve"),
		PASS_S2, PASS_S3,
		/* Edit s2: it and s3 go stale at once, then run again in order. */
		CMD("edit", "s2"), EDIT("s2", S2X), STATE("s2", "stale", "s2"),
		STATE("s3", "stale", "s2"),
		PASS_S2, PASS_S3, FINAL, RUNEND,
		/* A re-run of s1 reopens the finished run. */
		CMD("rerun", "s1"), "{\"type\":\"run.reopen\",\"reason\":\"rerun\"}",
		STATE("s1", "stale", "s1"), STATE("s2", "stale", "s1"), STATE("s3", "stale", "s1"),
		PASS_S1,
		/* Quit here; the resumed run keeps s1 and goes on. */
		"{\"type\":\"run.resume\",\"policy\":{\"parallel\":1,\"budget_usd\":1.0}}",
		PASS_S2, PASS_S3, FINAL, RUNEND, CMD("quit", "s1"),
		NULL,
	};
	struct jcheck *c = check(lines, true);

	(void)state;
	if (jcheck_n_violations(c))
		jcheck_print(c, stderr, 20);
	assert_int_equal(jcheck_n_violations(c), 0);
	assert_false(jcheck_segment_open(c));
	assert_int_equal(jcheck_last_exit(c), 0);
	{
		char *s = jcheck_states(c);
		assert_string_equal(s, "s1=passed s2=passed s3=passed");
		free(s);
	}
	jcheck_free(c);
}

static void test_start_before_input_passed(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), ST("s1"), ST("s2"),
					    NULL};
	(void)state;
	expect(lines, false, JC_DEPS);
}

static void test_start_after_input_edited(void **state)
{
	/* s1 is edited after it passed; s2 starts before s1 passes again. */
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), PASS_S1,
					    EDIT("s1", S1), ST("s2"), NULL};
	(void)state;
	expect(lines, false, JC_DEPS);
}

static void test_dependent_keeps_pass_after_edit(void **state)
{
	/* s2 is edited and re-runs; s3 never goes stale and the run finishes. */
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1, PASS_S2, PASS_S3,
		EDIT("s2", S2X), STATE("s2", "stale", "s2"), PASS_S2, FINAL, RUNEND, NULL};
	(void)state;
	expect(lines, true, JC_STALE);
}

static void test_running_dependent_passes_after_rerun(void **state)
{
	/* s1 is re-run while s2 runs; s2's old attempt must not pass. */
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1, ST("s2"), DET("s2"),
		CMD("rerun", "s1"), STATE("s1", "stale", "s1"),
		PASSV("s2", CRIT("b") "," CRIT("c")), END("s2"), NULL};
	(void)state;
	expect(lines, false, JC_STALE);
}

static void test_gate_of_dependent_not_withdrawn(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1, PASS_S2,
		GATE_OPEN("4", "step", "\"s3\""), EDIT("s1", S1),
		GATE_DEC("4", "step", "\"s3\"", "approve"),
		NULL};
	(void)state;
	expect(lines, false, JC_STALE);
}

static void test_replan_keeps_step_with_changed_input(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1, PASS_S2,
		/* Revision 1 changes s1 but claims to keep s2, which depends on it. */
		"{\"type\":\"plan.adopted\",\"revision\":1,\"plan\":{\"steps\":["
		STEP("s1", "other", "\"a\"", "") "," S2 "," S3 "]},\"kept\":[\"s2\"]}",
		NULL};
	(void)state;
	expect(lines, false, JC_STALE);
}

static void test_passed_step_runs_again_unasked(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), PASS_S1, ST("s1"),
					    NULL};
	(void)state;
	expect(lines, false, JC_STALE);
}

static void test_rerun_races_running_job(void **state)
{
	/* s1 is re-run while it runs; the new job starts before the old one is over. */
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""),
					    ST("s1"), CMD("rerun", "s1"),
					    STATE("s1", "stale", "s1"), ST("s1"),
					    NULL};
	(void)state;
	expect(lines, false, JC_STALE);
}

static void test_cap_set_below_spend(void **state)
{
	/* No cap, $0.10 spent, then a cap of $0.01: the spend cannot be undone, and the
	 * calls in flight (two at parallel 1) may still complete. */
	static const char *const lines[] = {
		START("null"), CALL("0.05"), CALL("0.05"),
		"{\"type\":\"operator.command\",\"command\":\"budget\",\"budget_usd\":0.01}",
		CALL("0.01"), CALL("0.01"), NULL};
	struct jcheck *c = check(lines, false);

	(void)state;
	if (jcheck_n_violations(c))
		jcheck_print(c, stderr, 10);
	assert_int_equal(jcheck_n_violations(c), 0);
	jcheck_free(c);
}

static void test_step_end_not_direct(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), ST("s1"), DET("s1"), PASSV("s1", CRIT("a")),
		"{\"type\":\"tool.call\",\"step_id\":\"s1\",\"tool\":\"read_file\"}",
		END("s1"), NULL};
	(void)state;
	expect(lines, false, JC_GATES);
}

static void test_pass_misses_criterion(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), PASS_S1, ST("s2"),
					    PASSV("s2", CRIT("b")), NULL};
	(void)state;
	expect(lines, false, JC_CRITERIA);
}

static void test_pass_with_unjudged_criterion(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1, ST("s2"),
		PASSV("s2", CRIT("b") ",{\"criterion\":\"c\",\"passed\":true,\"not_judged\":true}"),
		NULL};
	(void)state;
	expect(lines, false, JC_CRITERIA);
}

static void test_pass_against_edited_criteria(void **state)
{
	/* s1 gains criterion "z" at its gate; the verdict judges only "a". */
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""),
		EDIT("s1", STEP("s1", "one", "\"a\",\"z\"", "")),
		ST("s1"), PASSV("s1", CRIT("a")), NULL};
	(void)state;
	expect(lines, false, JC_CRITERIA);
}

static void test_passed_without_verdict(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), ST("s1"), END("s1"),
					    NULL};
	(void)state;
	expect(lines, false, JC_CRITERIA);
}

static void test_spend_runs_past_cap(void **state)
{
	/* Cap $0.05, parallel 1: at most 2 calls may complete once the cap is reached. */
	static const char *const lines[] = {START("0.05"), CALL("0.02"), CALL("0.02"), CALL("0.02"),
					    CALL("0.02"), CALL("0.02"), CALL("0.02"), NULL};
	(void)state;
	expect(lines, false, JC_BUDGET);
}

static void test_spend_ok_after_raise(void **state)
{
	/* The same spend is fine when the budget gate raised the cap in time. */
	static const char *const lines[] = {
		START("0.05"), CALL("0.02"), CALL("0.02"), CALL("0.02"),
		GATE_OPEN("1", "budget", "null"),
		"{\"type\":\"gate.decision\",\"gate_id\":1,\"gate\":\"budget\","
		"\"decision\":\"approve\",\"budget_usd\":1}",
		CALL("0.02"), CALL("0.02"), CALL("0.02"), NULL};
	struct jcheck *c = check(lines, false);

	(void)state;
	assert_int_equal(jcheck_n_violations(c), 0);
	jcheck_free(c);
}

static void test_two_run_ends(void **state)
{
	static const char *const lines[] = {START("null"), FINAL, RUNEND, RUNEND, NULL};
	(void)state;
	expect(lines, false, JC_SEGMENTS);
}

static void test_event_after_run_end(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), RUNEND, ST("s1"), NULL};
	(void)state;
	expect(lines, false, JC_SEGMENTS);
}

static void test_unfinished_journal(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), NULL};
	(void)state;
	expect(lines, true, JC_SEGMENTS);
}

static void test_resume_forgets_pass(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT(PLAN, ""), PASS_S1,
		"{\"type\":\"run.resume\",\"policy\":{\"parallel\":1}}",
		STATE("s1", "pending", "s1"), NULL};
	(void)state;
	expect(lines, false, JC_RESUME);
}

static void test_resume_runs_passed_step(void **state)
{
	static const char *const lines[] = {START("null"), ADOPT(PLAN, ""), PASS_S1,
					    "{\"type\":\"run.resume\",\"policy\":{\"parallel\":1}}",
					    ST("s1"), NULL};
	(void)state;
	expect(lines, false, JC_RESUME);
}

static void test_start_while_paused(void **state)
{
	/* parallel 1, nothing in progress at the pause: one step may already have been
	 * handed to the worker, a second one may not start. */
	static const char *const lines[] = {
		START("null"), ADOPT("{\"steps\":[" P1 "," P2 "]}", ""), CMD("pause", ""),
		ST("p1"), DET("p1"), PASSV("p1", CRIT("a")), END("p1"), ST("p2"), NULL};
	(void)state;
	expect(lines, false, JC_PAUSE);
}

static void test_retry_while_paused_is_fine(void **state)
{
	static const char *const lines[] = {
		START("null"), ADOPT("{\"steps\":[" P1 "," P2 "]}", ""), ST("p1"), CMD("pause", ""),
		"{\"type\":\"verify.verdict\",\"step_id\":\"p1\",\"stage\":\"model\","
		"\"action\":\"retry\",\"overall_pass\":false,\"criteria\":[]}",
		ST("p1"), DET("p1"), PASSV("p1", CRIT("a")), END("p1"), CMD("resume", ""), ST("p2"),
		NULL};
	struct jcheck *c = check(lines, false);

	(void)state;
	if (jcheck_n_violations(c))
		jcheck_print(c, stderr, 10);
	assert_int_equal(jcheck_n_violations(c), 0);
	jcheck_free(c);
}

static void test_seq_gap(void **state)
{
	static const char *const lines[] = {
		START("null"), "{\"seq\":5,\"type\":\"notice\",\"message\":\"x\"}", NULL};
	(void)state;
	expect(lines, false, JC_SHAPE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_journal),
		cmocka_unit_test(test_start_before_input_passed),
		cmocka_unit_test(test_start_after_input_edited),
		cmocka_unit_test(test_dependent_keeps_pass_after_edit),
		cmocka_unit_test(test_running_dependent_passes_after_rerun),
		cmocka_unit_test(test_gate_of_dependent_not_withdrawn),
		cmocka_unit_test(test_replan_keeps_step_with_changed_input),
		cmocka_unit_test(test_passed_step_runs_again_unasked),
		cmocka_unit_test(test_rerun_races_running_job),
		cmocka_unit_test(test_step_end_not_direct),
		cmocka_unit_test(test_pass_misses_criterion),
		cmocka_unit_test(test_pass_with_unjudged_criterion),
		cmocka_unit_test(test_pass_against_edited_criteria),
		cmocka_unit_test(test_passed_without_verdict),
		cmocka_unit_test(test_spend_runs_past_cap),
		cmocka_unit_test(test_spend_ok_after_raise),
		cmocka_unit_test(test_cap_set_below_spend),
		cmocka_unit_test(test_two_run_ends),
		cmocka_unit_test(test_event_after_run_end),
		cmocka_unit_test(test_unfinished_journal),
		cmocka_unit_test(test_resume_forgets_pass),
		cmocka_unit_test(test_resume_runs_passed_step),
		cmocka_unit_test(test_start_while_paused),
		cmocka_unit_test(test_retry_while_paused_is_fine),
		cmocka_unit_test(test_seq_gap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
