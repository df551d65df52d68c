/* test_report — report.md rendered from a journal, for finished and interrupted runs. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "journal.h"
#include "report.h"
#include "report_audit.h"
#include "strbuf.h"
#include "testdir.h"
#include "textsan.h"
#include "xalloc.h"

struct fixture {
	char dir[64];
	struct bus *bus;
	struct journal *journal;
	char *report; /* text of report.md once rendered */
};

static int setup(void **state)
{
	struct fixture *fx = xcalloc(1, sizeof(*fx));
	char *err = NULL;

	strcpy(fx->dir, "/tmp/pevtui-test-report-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->journal = journal_open(fx->dir, &err);
	if (!fx->journal)
		return -1;
	fx->bus = bus_new();
	bus_subscribe(fx->bus, journal_on_event, fx->journal);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	bus_free(fx->bus);
	journal_close(fx->journal);
	assert_true(testdir_remove(fx->dir));
	free(fx->report);
	free(fx);
	return 0;
}

static void pub(struct fixture *fx, enum event_type t, const char *json)
{
	cJSON *f = cJSON_Parse(json);

	if (!f)
		fail_msg("bad test JSON: %s", json);
	bus_publish(fx->bus, t, f);
}

/* Renders the report and reads it back; checks no temporary file is left. */
static void render(struct fixture *fx)
{
	char *err = NULL;
	char *path = xasprintf("%s/report.md", fx->dir);
	char *tmp = xasprintf("%s/report.md.tmp", fx->dir);
	struct stat st;

	if (!report_write(fx->dir, &err))
		fail_msg("report_write: %s", err);
	free(fx->report);
	fx->report = testdir_slurp(path);
	assert_non_null(fx->report);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(path);
	free(tmp);
}

/* The report holds this exact line. */
static void has_line(const struct fixture *fx, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = fx->report; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
			return;
	}
	fail_msg("report lacks the line \"%s\":\n%s", line, fx->report);
}

/* The line starting with `start` (first one), copied. */
static char *line_starting(const struct fixture *fx, const char *start)
{
	for (const char *p = fx->report; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, start, strlen(start))) {
			const char *e = strchr(p, '\n');

			return e ? xstrndup(p, (size_t)(e - p)) : xstrdup(p);
		}
	}
	fail_msg("no line starts with \"%s\":\n%s", start, fx->report);
	return NULL;
}

static void no_control_bytes(const struct fixture *fx)
{
	for (const unsigned char *p = (const unsigned char *)fx->report; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			fail_msg("control byte 0x%02x at offset %ld", *p,
			         (long)(p - (const unsigned char *)fx->report));
}

static const char plan_json[] =
    "{\"goal\":\"Review the contract\",\"steps\":["
    "{\"step_id\":\"read\",\"name\":\"Read the contract\",\"estimated_complexity\":\"low\","
    "\"dependencies\":[],\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]},"
    "{\"step_id\":\"risks\",\"name\":\"Find risks\",\"estimated_complexity\":\"high\","
    "\"dependencies\":[\"read\"],\"acceptance_criteria\":[\"cites clauses\"]}],"
    "\"success_criteria\":[\"every risk cites a clause\"]}";

static void start_run(struct fixture *fx, bool simulated)
{
	char *ev = xasprintf(
	    "{\"run_id\":\"20261122-abc\",\"task\":\"Review the \\u001b[31mcontract\\u0007\","
	    "\"provider\":\"sim\",\"simulated\":%s,\"models\":{\"planner\":\"sim-planner\","
	    "\"executor\":\"sim-executor\",\"verifier\":\"mystery-model\"},"
	    "\"workspace\":\"/tmp/ws\"}",
	    simulated ? "true" : "false");
	char *plan = xasprintf("{\"revision\":0,\"reason\":\"initial\",\"estimate_usd\":null,"
	                       "\"plan\":%s}",
	                       plan_json);
	char *adopt = xasprintf("{\"revision\":0,\"kept\":[],\"plan\":%s}", plan_json);

	pub(fx, EV_RUN_START, ev);
	pub(fx, EV_LLM_CALL,
	    "{\"role\":\"planner\",\"model\":\"claude-sonnet-4\","
	    "\"input_tokens\":1000,\"output_tokens\":200,\"cached_tokens\":0,"
	    "\"cost_usd\":0.006,\"status\":\"ok\"}");
	pub(fx, EV_PLAN_PROPOSED, plan);
	pub(fx, EV_GATE_OPEN, "{\"gate_id\":1,\"gate\":\"plan\",\"step_id\":null}");
	pub(fx, EV_GATE_DECISION,
	    "{\"gate_id\":1,\"gate\":\"plan\",\"step_id\":null,"
	    "\"decision\":\"approve\",\"by\":\"operator\"}");
	pub(fx, EV_PLAN_ADOPTED, adopt);
	pub(fx, EV_STEP_START,
	    "{\"step_id\":\"read\",\"attempt\":1,\"name\":\"Read the contract\"}");
	pub(fx, EV_LLM_DELTA, "{\"role\":\"executor\",\"text\":\"thinking\"}");
	pub(fx, EV_LLM_CALL,
	    "{\"role\":\"executor\",\"model\":\"claude-sonnet-4\","
	    "\"input_tokens\":500,\"output_tokens\":100,\"cached_tokens\":50,"
	    "\"cost_usd\":0.004,\"status\":\"ok\",\"step_id\":\"read\"}");
	pub(fx, EV_VERIFY_VERDICT,
	    "{\"step_id\":\"read\",\"attempt\":1,\"stage\":\"deterministic\",\"action\":\"retry\","
	    "\"severity\":\"major\",\"overall_pass\":false,\"criteria\":["
	    "{\"criterion\":\"notes.md exists\",\"passed\":false,\"feedback\":\"write notes.md\"},"
	    "{\"criterion\":\"lists parties\",\"passed\":true,\"feedback\":\"\"}],"
	    "\"feedback\":\"the declared artifact is missing\"}");
	free(ev);
	free(plan);
	free(adopt);
}

static void test_finished_run(void **state)
{
	struct fixture *fx = *state;
	char *line;

	start_run(fx, true);
	pub(fx, EV_STEP_START, "{\"step_id\":\"read\",\"attempt\":2}");
	pub(fx, EV_LLM_CALL,
	    "{\"role\":\"verifier\",\"model\":\"mystery-model\","
	    "\"input_tokens\":300,\"output_tokens\":40,\"cached_tokens\":0,"
	    "\"cost_usd\":null,\"status\":\"ok\"}");
	pub(fx, EV_VERIFY_VERDICT,
	    "{\"step_id\":\"read\",\"attempt\":2,\"stage\":\"model\",\"action\":\"pass\","
	    "\"severity\":\"minor\",\"overall_pass\":true,\"criteria\":[],\"feedback\":\"\"}");
	pub(fx, EV_STEP_END, "{\"step_id\":\"read\",\"status\":\"passed\",\"attempts\":2}");
	pub(fx, EV_GATE_DECISION,
	    "{\"gate_id\":2,\"gate\":\"high\",\"step_id\":\"risks\","
	    "\"decision\":\"approve\",\"by\":\"policy\"}");
	pub(fx, EV_STEP_START, "{\"step_id\":\"risks\",\"attempt\":1}");
	pub(fx, EV_TOOL_RESULT,
	    "{\"step_id\":\"risks\",\"attempt\":1,\"tool\":\"read_file\","
	    "\"ok\":false,\"summary\":\"no such file: x.md\"}");
	pub(fx, EV_VERIFY_VERDICT,
	    "{\"step_id\":\"risks\",\"attempt\":1,\"stage\":\"model\",\"action\":\"replan\","
	    "\"severity\":\"critical\",\"criteria\":[{\"criterion\":\"cites clauses\","
	    "\"passed\":false,\"feedback\":\"no clause\\u001b]0;pwned\\u0007 numbers\"}],"
	    "\"feedback\":\"start over\"}");
	pub(fx, EV_STEP_END, "{\"step_id\":\"risks\",\"status\":\"fail_accepted\",\"attempts\":1}");
	pub(fx, EV_NOTICE, "{\"level\":\"warn\",\"message\":\"step risks fail-accepted\"}");
	pub(fx, EV_RUN_FINAL,
	    "{\"answer\":\"PARTIAL: risks were not verified.\\n\\nParties: A and B.\","
	    "\"partial\":true,\"final_check\":{\"passed\":false,\"feedback\":\"risks missing\"},"
	    "\"metrics\":{\"steps_total\":2,\"steps_passed\":1,\"steps_fail_accepted\":1,"
	    "\"steps_skipped\":0,\"total_attempts\":3,\"replans\":0}}");
	pub(fx, EV_RUN_END,
	    "{\"status\":\"partial\",\"exit_code\":2,"
	    "\"reason\":\"1 step was fail-accepted\"}");
	render(fx);

	has_line(fx, "# pevtui run 20261122-abc (simulated)");
	/* The whole escape sequence goes, not only its ESC byte. */
	has_line(fx, "- Task: Review the contract");
	has_line(fx, "- Provider: sim (simulated)");
	has_line(fx, "- Verifier model: mystery-model");
	has_line(fx, "- Status: partial");
	/* plan */
	has_line(fx, "Revision 0, adopted.");
	has_line(fx, "Goal: Review the contract");
	has_line(fx, "1. **read** Read the contract");
	has_line(fx, "2. **risks** Find risks");
	has_line(fx, "   - Complexity: high");
	has_line(fx, "   - Depends on: read");
	has_line(fx, "   - Depends on: nothing");
	has_line(fx, "     - notes.md exists");
	has_line(fx, "  - every risk cites a clause");
	/* steps and verdicts */
	has_line(fx, "### read — Read the contract");
	has_line(fx, "- Attempt 1, deterministic verdict: retry (severity major)");
	has_line(fx, "  - Failed criterion: notes.md exists — write notes.md");
	has_line(fx, "  - Feedback: the declared artifact is missing");
	has_line(fx, "- Attempt 2, model verdict: pass (severity minor)");
	has_line(fx, "- Ended: passed after 2 attempts");
	has_line(fx, "- Attempt 1, model verdict: replan (severity critical)");
	has_line(fx, "  - Failed criterion: cites clauses — no clause numbers");
	has_line(fx, "- Attempt 1: tool read_file failed: no such file: x.md");
	has_line(fx, "- Ended: fail_accepted after 1 attempt");
	assert_null(strstr(fx->report, "Failed criterion: lists parties"));
	/* gates */
	has_line(fx, "- plan gate: approve by operator");
	has_line(fx, "- high gate for step risks: approve by policy");
	has_line(fx, "- warn: step risks fail-accepted");
	/* answer: quoted, blank line kept inside the quote */
	has_line(fx, "Partial answer: some steps were not verified.");
	has_line(fx, "> PARTIAL: risks were not verified.");
	has_line(fx, ">");
	has_line(fx, "> Parties: A and B.");
	has_line(fx, "Final check: failed — risks missing");
	/* metrics */
	has_line(fx, "- Steps: 2");
	has_line(fx, "- Fail-accepted: 1");
	has_line(fx, "- Attempts: 3");
	/* cost: the known roles in dollars, the unknown model never as $0 */
	has_line(fx, "| planner | 1 | 1000 | 200 | 0 | $0.0060 |");
	has_line(fx, "| executor | 1 | 500 | 100 | 50 | $0.0040 |");
	has_line(fx, "| verifier | 1 | 300 | 40 | 0 | unknown |");
	line = line_starting(fx, "| **total** |");
	assert_non_null(strstr(line, "unknown (at least $0.0100)"));
	free(line);
	has_line(fx, "No price is known for model `mystery-model` (verifier); its calls are not "
	             "counted in the sums above.");
	/* outcome */
	has_line(fx, "Status: partial, exit code 2.");
	has_line(fx, "Reason: 1 step was fail-accepted");
	assert_null(strstr(fx->report, "did not finish"));
	no_control_bytes(fx);
}

static void test_interrupted_run(void **state)
{
	struct fixture *fx = *state;
	char *jpath = xasprintf("%s/journal.jsonl", fx->dir);
	FILE *f;

	start_run(fx, false);
	/* The crash cut the next event in half. */
	f = fopen(jpath, "a");
	assert_non_null(f);
	fputs("{\"seq\":11,\"ts\":\"2026-11-22T00:00:00.000Z\",\"type\":\"step.st", f);
	fclose(f);
	render(fx);

	has_line(fx, "# pevtui run 20261122-abc");
	has_line(fx, "- Provider: sim");
	has_line(fx, "- Status: did not finish");
	has_line(fx, "- Attempt 1 started");
	has_line(fx, "- Attempt 1, deterministic verdict: retry (severity major)");
	has_line(fx, "No final answer: the run did not finish.");
	has_line(fx, "No metrics: the run did not finish.");
	has_line(fx, "The run did not finish: the journal ends at event 9 (verify.verdict) "
	             "without run.end.");
	has_line(fx, "The journal's last line was cut off and was left out.");
	assert_null(strstr(fx->report, "(simulated)"));
	assert_null(strstr(fx->report, "Ended:"));
	no_control_bytes(fx);
	free(jpath);
}

static void test_latest_plan_wins(void **state)
{
	struct fixture *fx = *state;
	char *plan2 = xasprintf("{\"revision\":1,\"kept\":[\"read\"],\"plan\":{\"goal\":\"g2\","
	                        "\"steps\":[{\"step_id\":\"read\",\"name\":\"Read\"},"
	                        "{\"step_id\":\"summarise\",\"name\":\"Summarise\","
	                        "\"dependencies\":[\"read\"]}]}}");

	start_run(fx, false);
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":2,\"plan\":{\"goal\":\"never adopted\","
	    "\"steps\":[]}}");
	pub(fx, EV_PLAN_ADOPTED, plan2);
	render(fx);
	has_line(fx, "Revision 1, adopted.");
	has_line(fx, "Goal: g2");
	has_line(fx, "2. **summarise** Summarise");
	assert_null(strstr(fx->report, "never adopted"));
	free(plan2);
}

static void test_only_proposed_plan(void **state)
{
	struct fixture *fx = *state;
	char *plan = xasprintf("{\"revision\":0,\"plan\":%s}", plan_json);

	pub(fx, EV_RUN_START, "{\"run_id\":\"r1\",\"task\":\"t\",\"provider\":\"openai\"}");
	pub(fx, EV_PLAN_PROPOSED, plan);
	pub(fx, EV_GATE_DECISION,
	    "{\"gate\":\"plan\",\"decision\":\"reject\",\"by\":\"policy\","
	    "\"reason\":\"no operator\"}");
	pub(fx, EV_RUN_END, "{\"status\":\"aborted\",\"exit_code\":3,\"reason\":\"plan gate\"}");
	render(fx);
	has_line(fx, "Revision 0, proposed but never adopted.");
	has_line(fx, "- plan gate: reject by policy — no operator");
	has_line(fx, "No step was started.");
	has_line(fx, "No model was called.");
	has_line(fx, "Status: aborted, exit code 3.");
	has_line(fx, "No final answer: the run ended with status aborted before one was written.");
	has_line(fx, "No metrics were recorded.");
	assert_null(strstr(fx->report, "did not finish"));
	free(plan);
}

/* The plan's success criteria are those of the plan the report shows: the adopted one
 * (a later proposal, or a step edit, does not change them), else the last proposal the
 * fold took (one whose plan is not an object is ignored). */
static void test_success_criteria_of_the_plan_shown(void **state)
{
	struct fixture *fx = *state;

	pub(fx, EV_RUN_START, "{\"run_id\":\"r1\",\"task\":\"t\",\"provider\":\"sim\"}");
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":0,\"plan\":{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"}],"
	    "\"success_criteria\":[\"first proposal\"]}}");
	pub(fx, EV_PLAN_PROPOSED, "{\"revision\":1,\"plan\":[\"not a plan\"]}");
	render(fx);
	assert_non_null(strstr(fx->report, "\n\n- Success criteria:\n  - first proposal\n\n"));
	pub(fx, EV_PLAN_ADOPTED,
	    "{\"revision\":0,\"kept\":[],\"plan\":{\"goal\":\"g\",\"steps\":[{\"step_id\":"
	    "\"a\"}],\"success_criteria\":[\"adopted\",7,\"x\\u001b[31m\"],"
	    "\"success_criteria\":[\"a second of the name\"]}}");
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":1,\"reason\":\"replan\",\"plan\":{\"goal\":\"g\",\"steps\":[],"
	    "\"success_criteria\":[\"later proposal\"]}}");
	pub(fx, EV_STEP_EDIT,
	    "{\"step_id\":\"a\",\"by\":\"operator\",\"before\":{\"step_id\":\"a\"},"
	    "\"after\":{\"step_id\":\"a\",\"name\":\"A\"}}");
	render(fx);
	/* (the replan's own section names the later proposal's) */
	assert_non_null(strstr(fx->report, "\n\n- Success criteria:\n  - adopted\n"
					   "  - (not text)\n  - x\n\n"));
	assert_null(strstr(fx->report, "first proposal"));
	assert_null(strstr(fx->report, "a second of the name"));
	/* adopted again without criteria: none shown */
	pub(fx, EV_PLAN_ADOPTED,
	    "{\"revision\":1,\"kept\":[],\"plan\":{\"goal\":\"g\",\"steps\":[]}}");
	render(fx);
	assert_null(strstr(fx->report, "\n- Success criteria:\n"));
}

/* A link planted in the run folder where the report's temporary file goes (a symbolic
 * link, a hard link) is not written through: the file it names stays as it was. */
static void test_planted_link_at_the_temporary_file(void **state)
{
	struct fixture *fx = *state;
	char *victim = xasprintf("%s/victim.txt", fx->dir);
	char *tmp = xasprintf("%s/report.md.tmp", fx->dir);
	char *text;
	struct stat st;

	start_run(fx, false);
	for (int hard = 0; hard < 2; hard++) {
		FILE *f = fopen(victim, "w");

		assert_non_null(f);
		fputs("keep me\n", f);
		fclose(f);
		assert_int_equal(hard ? link(victim, tmp) : symlink(victim, tmp), 0);
		render(fx);
		text = testdir_slurp(victim);
		assert_non_null(text);
		assert_string_equal(text, "keep me\n");
		free(text);
		assert_int_equal(lstat(victim, &st), 0);
		assert_int_equal(st.st_nlink, 1);
	}
	free(victim);
	free(tmp);
}

static void test_missing_or_bad_journal(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	char *nodir = xasprintf("%s/none", fx->dir);
	char *jpath = xasprintf("%s/journal.jsonl", fx->dir);
	char *rpath = xasprintf("%s/report.md", fx->dir);
	FILE *f;
	struct stat st;

	assert_false(report_write(nodir, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "journal"));
	free(err);
	err = NULL;

	start_run(fx, false);
	f = fopen(jpath, "a");
	fputs("garbage in the middle\n", f);
	fputs("{\"seq\":11,\"ts\":\"x\",\"type\":\"notice\"}\n", f);
	fclose(f);
	assert_false(report_write(fx->dir, &err));
	assert_non_null(strstr(err, "journal.jsonl:10: not an event"));
	assert_int_equal(stat(rpath, &st), -1);
	free(err);
	free(nodir);
	free(jpath);
	free(rpath);
}

/* A criterion the verifier left out is reported as not judged, not as failed; an edit
 * shows in the plan; a replan's dropped step keeps the name it had. */
static void test_not_judged_edit_and_dropped_step(void **state)
{
	struct fixture *fx = *state;
	char *plan = xasprintf("{\"revision\":0,\"kept\":[],\"plan\":%s}", plan_json);

	pub(fx, EV_RUN_START, "{\"run_id\":\"r2\",\"task\":\"t\",\"provider\":\"sim\"}");
	pub(fx, EV_PLAN_ADOPTED, plan);
	pub(fx, EV_STEP_EDIT,
	    "{\"step_id\":\"read\",\"by\":\"operator\",\"after\":{\"step_id\":\"read\","
	    "\"name\":\"Read it twice\",\"estimated_complexity\":\"medium\"}}");
	pub(fx, EV_STEP_START, "{\"step_id\":\"risks\",\"attempt\":1}");
	pub(fx, EV_VERIFY_VERDICT,
	    "{\"step_id\":\"risks\",\"attempt\":1,\"stage\":\"model\",\"action\":\"retry\","
	    "\"criteria\":[{\"criterion\":\"cites clauses\",\"passed\":false,"
	    "\"not_judged\":true},{\"criterion\":\"lists risks\",\"passed\":false,"
	    "\"feedback\":\"none listed\"}],\"feedback\":\"judge every criterion\"}");
	pub(fx, EV_PLAN_ADOPTED,
	    "{\"revision\":1,\"kept\":[],\"plan\":{\"goal\":\"g\",\"steps\":["
	    "{\"step_id\":\"read\",\"name\":\"Read it twice\"}]}}");
	render(fx);
	has_line(fx, "  - Not judged: cites clauses");
	has_line(fx, "  - Failed criterion: lists risks — none listed");
	assert_null(strstr(fx->report, "Failed criterion: cites clauses"));
	has_line(fx, "1. **read** Read it twice");
	has_line(fx, "### risks — Find risks (not in the final plan)");
	free(plan);
}

/* Each replan is told with its word diff against the plan it revised, and how it was
 * answered: adopted after an edit at its gate, kept out (skip), or still waiting. */
static void test_replan_diffs(void **state)
{
	struct fixture *fx = *state;
	const char *plan1 =
	    "{\"goal\":\"Review the contract\",\"steps\":["
	    "{\"step_id\":\"read\",\"name\":\"Read the contract\",\"estimated_complexity\":\"low\","
	    "\"dependencies\":[],\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]},"
	    "{\"step_id\":\"risks\",\"name\":\"Find the risks\",\"estimated_complexity\":\"high\","
	    "\"dependencies\":[\"read\"],\"acceptance_criteria\":[\"cites clause numbers\"]},"
	    "{\"step_id\":\"counsel\",\"name\":\"Ask counsel\\u001b]0;PWNED\\u0007\","
	    "\"description\":\"one ``` question\",\"dependencies\":[\"risks\"]}],"
	    "\"success_criteria\":[\"every risk cites a clause\"]}";
	char *ev;

	start_run(fx, false);
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":1,\"reason\":\"replan\",\"failed_step\":\"risks\","
	    "\"failure\":\"no clause\\u001b[2J numbers\",\"plan\":{\"goal\":\"Review the "
	    "contract\",\"steps\":[{\"step_id\":\"read\",\"name\":\"Read\"}]}}");
	pub(fx, EV_GATE_OPEN, "{\"gate_id\":3,\"gate\":\"replan\",\"step_id\":\"risks\"}");
	/* The operator rewrites the proposal at the gate, then approves: the diff is of the
	 * plan adopted. */
	ev = xasprintf("{\"revision\":1,\"reason\":\"edit\",\"failed_step\":\"risks\",\"plan\":%s}",
		       plan1);
	pub(fx, EV_PLAN_PROPOSED, ev);
	free(ev);
	pub(fx, EV_GATE_DECISION,
	    "{\"gate_id\":3,\"gate\":\"replan\",\"step_id\":\"risks\","
	    "\"decision\":\"approve\",\"by\":\"operator\"}");
	ev = xasprintf("{\"revision\":1,\"kept\":[\"read\"],\"plan\":%s}", plan1);
	pub(fx, EV_PLAN_ADOPTED, ev);
	free(ev);
	/* A second replan, which the operator keeps out. */
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":2,\"reason\":\"replan\",\"failed_step\":\"counsel\","
	    "\"failure\":\"no answer\",\"plan\":{\"goal\":\"Review the contract\",\"steps\":["
	    "{\"step_id\":\"read\",\"name\":\"Read the contract\",\"estimated_complexity\":\"low\","
	    "\"dependencies\":[],\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]}],"
	    "\"success_criteria\":[\"every risk cites a clause\"]}}");
	pub(fx, EV_GATE_DECISION,
	    "{\"gate_id\":4,\"gate\":\"replan\",\"step_id\":\"counsel\","
	    "\"decision\":\"skip\",\"by\":\"operator\"}");
	/* A third, still at its gate when the journal ends. */
	pub(fx, EV_PLAN_PROPOSED,
	    "{\"revision\":2,\"reason\":\"replan\",\"failed_step\":\"counsel\","
	    "\"plan\":{\"goal\":\"Review the contract, twice\",\"steps\":["
	    "{\"step_id\":\"read\",\"name\":\"Read the contract\",\"estimated_complexity\":\"low\","
	    "\"dependencies\":[],\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]}],"
	    "\"success_criteria\":[\"every risk cites a clause\"]}}");
	render(fx);

	has_line(fx, "## Replans");
	has_line(fx, "### Revision 1, after step risks failed");
	has_line(fx, "Why: no clause numbers");
	has_line(fx, "Adopted as revision 1, approved by operator at its gate. The operator edited "
		     "the proposal at its gate; the diff shows it as edited.");
	has_line(fx, "= read  Read the contract");
	has_line(fx, "~ risks  Find the risks");
	has_line(fx, "    name: Find {+the+} risks");
	has_line(fx, "      \xe2\x80\xa2 cites [-clauses-]{+clause numbers+}");
	has_line(fx, "+ counsel  Ask counsel");
	/* The description holds three backticks: the fence around the diff is longer. */
	has_line(fx, "    description: one ``` question");
	has_line(fx, "````");
	has_line(fx, "### Revision 2, after step counsel failed");
	has_line(fx, "Not adopted: the old plan was kept (skip by operator). The diff is of the "
		     "plan proposed.");
	has_line(fx, "- risks  Find the risks");
	has_line(fx, "Not answered: the journal ends with it waiting at its gate.");
	has_line(fx, "    goal: Review the [-contract-]{+contract, twice+}");
	assert_null(strstr(fx->report, "PWNED"));
	no_control_bytes(fx);
}

/* A journal line written by hand, so its time is known: `fields` is the JSON after
 * seq, ts and type (without braces). */
static void jline(struct fixture *fx, const char *clock, const char *type, const char *fields)
{
	char *path = xasprintf("%s/journal.jsonl", fx->dir);
	char *text = testdir_slurp(path);
	unsigned long seq = 1;
	FILE *f;

	/* the next seq: one more than the lines there are */
	for (const char *p = text; p && *p; p++)
		seq += *p == '\n';
	free(text);
	f = fopen(path, "a");
	assert_non_null(f);
	fprintf(f, "{\"seq\":%lu,\"ts\":\"2026-11-22T%s.000Z\",\"type\":\"%s\"%s%s}\n", seq,
		clock, type, *fields ? "," : "", fields);
	fclose(f);
	free(path);
}

#define CP_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CP_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const char plan_a[] =
    "{\"goal\":\"g\",\"steps\":["
    "{\"step_id\":\"read\",\"name\":\"Read the contract\",\"description\":\"Read it\","
    "\"estimated_complexity\":\"low\",\"dependencies\":[],"
    "\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]},"
    "{\"step_id\":\"risks\",\"name\":\"Find risks\",\"estimated_complexity\":\"high\","
    "\"dependencies\":[\"read\"],\"acceptance_criteria\":[\"cites clauses\"]}],"
    "\"success_criteria\":[\"every risk cites a clause\"]}";

static const char plan_b[] =
    "{\"goal\":\"g\",\"steps\":["
    "{\"step_id\":\"read\",\"name\":\"Read the contracts\",\"description\":\"Read it\","
    "\"estimated_complexity\":\"low\",\"dependencies\":[],"
    "\"acceptance_criteria\":[\"notes.md exists\",\"lists parties\"]},"
    "{\"step_id\":\"extra\",\"name\":\"Extra check\",\"estimated_complexity\":\"low\","
    "\"dependencies\":[],\"acceptance_criteria\":[\"x holds\"]}],"
    "\"success_criteria\":[\"every risk cites a clause\"]}";

/* Every audit field: times of the run, steps, attempts and gates; every tool call with its
 * params in short (long ones cut, with a note); operator edits of a step and of a plan,
 * before and after; the budget, its changes and the estimates held; criteria not judged. */
static void test_audit_trail(void **state)
{
	struct fixture *fx = *state;
	char *t, *line, *big = xmalloc(301), *note;
	size_t params_len;

	memset(big, 'x', 300);
	big[300] = '\0';
	jline(fx, "10:00:00", "run.start",
	      "\"run_id\":\"r9\",\"task\":\"t\",\"provider\":\"sim\","
	      "\"policy\":{\"budget_usd\":0.5}");
	t = xasprintf("\"revision\":0,\"reason\":\"initial\",\"plan\":%s", plan_a);
	jline(fx, "10:00:00", "plan.proposed", t);
	free(t);
	jline(fx, "10:00:01", "gate.open", "\"gate_id\":1,\"gate\":\"plan\",\"step_id\":null");
	t = xasprintf("\"revision\":0,\"reason\":\"edit\",\"plan\":%s", plan_b);
	jline(fx, "10:00:05", "plan.proposed", t);
	free(t);
	jline(fx, "10:00:11", "gate.decision",
	      "\"gate_id\":1,\"gate\":\"plan\",\"step_id\":null,\"decision\":\"approve\","
	      "\"by\":\"operator\"");
	t = xasprintf("\"revision\":0,\"kept\":[],\"plan\":%s", plan_b);
	jline(fx, "10:00:11", "plan.adopted", t);
	free(t);
	jline(fx, "10:00:12", "step.start", "\"step_id\":\"read\",\"attempt\":1");
	jline(fx, "10:00:13", "tool.call",
	      "\"step_id\":\"read\",\"attempt\":1,\"call_id\":\"c1\",\"tool\":\"read_file\","
	      "\"params\":{\"path\":\"contract.md\"}");
	jline(fx, "10:00:13.5", "tool.result",
	      "\"step_id\":\"read\",\"attempt\":1,\"call_id\":\"c1\",\"tool\":\"read_file\","
	      "\"ok\":true,\"summary\":\"# Contract\\u001b[2J\",\"bytes\":1234");
	t = xasprintf("\"step_id\":\"read\",\"attempt\":1,\"call_id\":\"c2\","
		      "\"tool\":\"write_file\",\"params\":{\"path\":\"big.md\",\"content\":\"%s\"}",
		      big);
	jline(fx, "10:00:14", "tool.call", t);
	free(t);
	jline(fx, "10:00:14", "tool.result",
	      "\"step_id\":\"read\",\"attempt\":1,\"call_id\":\"c2\",\"tool\":\"write_file\","
	      "\"ok\":false,\"summary\":\"disk full\"");
	jline(fx, "10:00:15", "llm.call",
	      "\"role\":\"executor\",\"model\":\"m\",\"step_id\":\"read\",\"attempt\":1,"
	      "\"input_tokens\":10,\"output_tokens\":5,\"cost_usd\":0.004,\"reserved_usd\":0.006,"
	      "\"status\":\"ok\"");
	jline(fx, "10:00:20", "verify.verdict",
	      "\"step_id\":\"read\",\"attempt\":1,\"stage\":\"deterministic\",\"action\":\"retry\","
	      "\"criteria\":[],\"feedback\":\"write notes.md\"");
	jline(fx, "10:00:25", "step.edit",
	      "\"step_id\":\"read\",\"by\":\"operator\","
	      "\"before\":{\"step_id\":\"read\",\"name\":\"Read the contracts\","
	      "\"description\":\"Read it\",\"acceptance_criteria\":[\"notes.md exists\","
	      "\"lists parties\"]},"
	      "\"after\":{\"step_id\":\"read\",\"name\":\"Read the contracts\","
	      "\"description\":\"Read it twice\",\"acceptance_criteria\":[\"notes.md exists\","
	      "\"lists parties\",\"names the date\"]}");
	jline(fx, "10:00:30", "step.start", "\"step_id\":\"read\",\"attempt\":2");
	jline(fx, "10:00:40", "verify.verdict",
	      "\"step_id\":\"read\",\"attempt\":2,\"stage\":\"model\",\"action\":\"pass\","
	      "\"criteria\":[{\"criterion\":\"notes.md exists\",\"passed\":true},"
	      "{\"criterion\":\"lists parties\",\"passed\":true},"
	      "{\"criterion\":\"names the date\",\"passed\":false,\"not_judged\":true}],"
	      "\"feedback\":\"\"");
	jline(fx, "10:00:40", "step.end", "\"step_id\":\"read\",\"status\":\"passed\",\"attempts\":2");
	jline(fx, "10:00:41", "gate.open",
	      "\"gate_id\":2,\"gate\":\"budget\",\"step_id\":null,\"spent_usd\":0.49,"
	      "\"reserved_usd\":0.01,\"budget_usd\":0.5,\"needed_usd\":0.02");
	jline(fx, "10:01:41", "gate.decision",
	      "\"gate_id\":2,\"gate\":\"budget\",\"step_id\":null,\"decision\":\"approve\","
	      "\"by\":\"operator\",\"budget_usd\":1.0");
	jline(fx, "10:01:50", "step.end",
	      "\"step_id\":\"extra\",\"status\":\"skipped\",\"attempts\":0");
	jline(fx, "10:01:59", "run.final",
	      "\"answer\":\"a\",\"partial\":true,\"final_check\":{\"passed\":true}");
	jline(fx, "10:02:00", "run.end", "\"status\":\"partial\",\"exit_code\":2");
	render(fx);

	/* the run's times */
	has_line(fx, "- Started: 2026-11-22 10:00:00 UTC");
	has_line(fx, "- Finished: 2026-11-22 10:02:00 UTC (2 min 00 s)");
	/* a step's times and its attempts */
	has_line(fx, "First started 10:00:12, settled 10:00:40 (passed): 28.0 s in all, 18.0 s in "
	             "attempts.");
	has_line(fx, "| 1 | 10:00:12 | 10:00:20 | 8.0 s | retry (deterministic) | 2 (1 failed) | "
	             "$0.0040 |");
	has_line(fx, "| 2 | 10:00:30 | 10:00:40 | 10.0 s | pass (model) | 0 | — |");
	has_line(fx, "Settled 10:01:50 (skipped).");
	/* every tool call, its params in short, its result and time */
	has_line(fx, "- Attempt 1: tool read_file `{\"path\":\"contract.md\"}` ok (1234 bytes, "
	             "0.5 s): # Contract");
	line = line_starting(fx, "- Attempt 1: tool write_file `{\"path\":\"big.md\"");
	params_len = strlen("{\"path\":\"big.md\",\"content\":\"\"}") + 300;
	note = xasprintf("…` [cut: %zu more characters] failed (0.0 s): disk full",
	                 params_len - (AUDIT_PARAMS_COLS - 1));
	if (!strstr(line, note))
		fail_msg("\"%s\" lacks \"%s\"", line, note);
	free(note);
	free(line);
	/* a step edit, before and after */
	has_line(fx, "- Edited by operator");
	has_line(fx, "  - Description before: `Read it`");
	has_line(fx, "  - Description after: `Read it twice`");
	has_line(fx, "  - Criteria before: `notes.md exists`; `lists parties`");
	has_line(fx, "  - Criteria after: `notes.md exists`; `lists parties`; `names the date`");
	assert_null(strstr(fx->report, "Name before: `Read the contracts`"));
	/* a plan edit at its gate, before and after */
	has_line(fx, "## Plan edits");
	has_line(fx, "- 10:00:05 revision 0 edited by the operator at its gate:");
	has_line(fx, "  - Step `read` changed:");
	has_line(fx, "    - Name before: `Read the contract`");
	has_line(fx, "    - Name after: `Read the contracts`");
	has_line(fx, "  - Step `extra` added:");
	has_line(fx, "    - Criteria: `x holds`");
	has_line(fx, "  - Step `risks` removed (it was `Find risks`)");
	/* how long each gate waited */
	has_line(fx, "- plan gate: approve by operator");
	has_line(fx, "  - opened 10:00:01, answered 10:00:11 after 10.0 s");
	has_line(fx, "  - opened 10:00:41, answered 10:01:41 after 1 min 00 s");
	/* the budget */
	has_line(fx, "## Budget");
	has_line(fx, "- Cap: $1.0000 (at the start: $0.5000)");
	has_line(fx, "  - 10:01:41 set to $1.0000 at the budget gate (by operator)");
	has_line(fx, "- Spent: $0.0040, 0% of the cap");
	has_line(fx, "- Reserved at the end: $0.0000 (the run ended with no call in flight; a "
	             "call's estimate is held only while it runs)");
	has_line(fx, "- Estimates held before calls: $0.0060 over 1 call (largest $0.0060)");
	has_line(fx, "  - 10:00:41 the budget gate opened: $0.4900 spent and $0.0100 reserved of "
	             "$0.5000; the next call needed about $0.0200");
	/* criteria nobody judged */
	has_line(fx, "## Criteria not judged");
	has_line(fx, "- read (passed): `names the date` — left out by the verifier (attempt 2)");
	has_line(fx, "- extra (skipped): `x holds` — the step was skipped");
	has_line(fx, "The plan's success criteria were checked together by the final check "
	             "(passed), not one by one.");
	no_control_bytes(fx);
	free(big);
}

/* An interrupted run: no end time, reservations unknown, nothing checked at the end; an
 * attempt cut off by the crash says so. */
static void test_audit_interrupted(void **state)
{
	struct fixture *fx = *state;

	jline(fx, "23:59:50", "run.start", "\"run_id\":\"r8\",\"task\":\"t\",\"provider\":\"sim\"");
	jline(fx, "23:59:58", "step.start", "\"step_id\":\"s\",\"attempt\":1");
	jline(fx, "23:59:59", "step.state", "\"step_id\":\"s\",\"state\":\"stale\"");
	render(fx);
	has_line(fx, "- Finished: no (the journal ends while the run was live)");
	has_line(fx, "- Cap: none");
	has_line(fx, "- Reserved at the end: not known: the journal ends while the run was live, "
	             "and a call is journaled only when it ends");
	has_line(fx, "- Estimates held before calls: none journaled");
	has_line(fx, "| 1 | 23:59:58 | 23:59:59 | 1.0 s | cancelled (stale) | 0 | — |");
	has_line(fx, "The plan's success criteria were not checked: the run ended before its final "
	             "check.");
}

/* Killed in an attempt, then resumed: the attempt the stop cut off ends when the journal
 * last heard of the process, and its changes (settled on --resume) are listed. */
static void test_audit_cut_by_a_stop(void **state)
{
	struct fixture *fx = *state;
	char *adopt = xasprintf("\"revision\":0,\"kept\":[],\"plan\":%s", plan_a);

	jline(fx, "23:59:50", "run.start", "\"run_id\":\"r9\",\"task\":\"t\",\"provider\":\"sim\"");
	jline(fx, "23:59:51", "plan.adopted", adopt);
	jline(fx, "23:59:52", "step.start", "\"step_id\":\"read\",\"attempt\":1");
	jline(fx, "23:59:53", "step.checkpoint",
	      "\"step_id\":\"read\",\"attempt\":1,\"before\":\"" CP_A "\"");
	jline(fx, "23:59:55", "run.resume", "\"policy\":{}");
	jline(fx, "23:59:56", "step.changes",
	      "\"step_id\":\"read\",\"attempt\":1,\"before\":\"" CP_A "\",\"after\":\"" CP_B
	      "\",\"files\":[{\"path\":\"notes.md\",\"change\":\"added\",\"plus\":1,"
	      "\"minus\":0}],\"plus\":1,\"minus\":0,\"stat\":\"1 file changed, +1 -0\","
	      "\"cut\":true");
	jline(fx, "23:59:57", "step.start", "\"step_id\":\"read\",\"attempt\":2");
	render(fx);
	has_line(fx, "| 1 | 23:59:52 | 23:59:53 | 1.0 s | cut off by a stop | 0 | — |");
	has_line(fx, "- Attempt 1 (cut off by a stop; found on --resume) changed the workspace: 1 "
	             "file changed, +1 -0");
	has_line(fx, "  - `notes.md` added (+1 −0)");
	free(adopt);
}

/* audit_add_code as it was written before plain ASCII took a short way: clean, measure,
 * fit, count the characters left out, fence. The reference for the test below. */
static void slow_add_code(struct strbuf *sb, const char *text, int cols)
{
	char *c = textsan_clean(text ? text : "", text ? strlen(text) : 0, 0);
	size_t cut = 0, run = 0, longest = 0;
	uint32_t cp;
	bool pad;

	if (textsan_width(c) > cols) {
		size_t keep = textsan_fit(c, cols - 1, NULL), total = 0, kept = 0;
		size_t len = strlen(c);

		for (size_t i = 0; i < len;) {
			size_t n = textsan_decode(c + i, len - i, &cp);

			total++;
			if (i < keep)
				kept++;
			i += n;
		}
		cut = total - kept;
		c[keep] = '\0';
	}
	for (const char *p = c; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = *c == '`' || (*c && c[strlen(c) - 1] == '`' && !cut);
	if (!*c) {
		strbuf_adds(sb, "(empty)");
		free(c);
		return;
	}
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	strbuf_addf(sb, "%s%s%s%s", pad ? " " : "", c, cut ? "…" : "", pad ? " " : "");
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	if (cut)
		strbuf_addf(sb, " [cut: %zu more character%s]", cut, cut == 1 ? "" : "s");
	free(c);
}

/* Inline code the short way (plain ASCII) and the general way give the same bytes, on
 * text of every length around the cut, backticks at either end, controls, tabs, DEL,
 * escape sequences, UTF-8 of one and two columns, and invalid bytes. */
static void test_audit_code_as_before(void **state)
{
	static const char *const pieces[] = {
	    "a", "`", "``", " ", "{\"path\":\"x\"}", "\t", "\n", "\x7f", "\x1b[31m", "é",
	    "漢", "\xff", "\x01", "~", "\\",
	};
	static const int cols[] = {-1, 0, 1, 2, 5, 80, 160, 500};
	unsigned long long seed = 0x9E3779B97F4A7C15ULL;

	(void)state;
	for (int i = 0; i < 6000; i++) {
		struct strbuf text = STRBUF_INIT, fast = STRBUF_INIT, slow = STRBUF_INIT;
		int col, len;
		bool ascii_only;

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		col = cols[seed % 8];
		len = (int)(seed >> 8) % (col > 0 ? 2 * col + 3 : 7);
		ascii_only = (seed >> 20) % 4 != 0;
		for (int k = 0; k < len; k++) {
			size_t p = (seed >> (k % 50)) % (ascii_only ? 5 : 15);

			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			strbuf_adds(&text, k % 11 == 3 ? "x" : pieces[p]);
		}
		audit_add_code(&fast, text.buf, col);
		slow_add_code(&slow, text.buf, col);
		if (strcmp(fast.buf, slow.buf))
			fail_msg("cols %d, text \"%s\": \"%s\" vs \"%s\"", col, text.buf, fast.buf,
				 slow.buf);
		strbuf_release(&text);
		strbuf_release(&fast);
		strbuf_release(&slow);
	}
	{
		struct strbuf fast = STRBUF_INIT, slow = STRBUF_INIT;

		audit_add_code(&fast, NULL, 10);
		slow_add_code(&slow, NULL, 10);
		assert_string_equal(fast.buf, slow.buf);
		strbuf_release(&fast);
		strbuf_release(&slow);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_finished_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_interrupted_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_latest_plan_wins, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_only_proposed_plan, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_success_criteria_of_the_plan_shown, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_missing_or_bad_journal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_planted_link_at_the_temporary_file, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_replan_diffs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_judged_edit_and_dropped_step, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_audit_trail, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_audit_interrupted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_audit_cut_by_a_stop, setup, teardown),
	    cmocka_unit_test(test_audit_code_as_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
