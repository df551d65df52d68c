/* test_scenarios — the real pevtui binary, headless, on every built-in scenario: exit
 * codes, the journal against DESIGN.md, metrics, and the command-line contract. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "journal.h"
#include "jsonx.h"
#include "strbuf.h"
#include "xalloc.h"

/* Every event has the fields DESIGN.md's table names for its type. */
static void assert_design_fields(const cJSON *ev)
{
	static const struct {
		const char *type;
		const char *fields[10];
	} table[] = {
		{"run.start", {"run_id", "task", "provider", "models", "policy"}},
		{"plan.proposed", {"plan", "revision", "estimate_usd"}},
		{"gate.open", {"gate", "step_id"}},
		{"gate.decision", {"gate", "step_id", "decision", "by"}},
		{"step.start", {"step_id", "attempt"}},
		{"llm.call", {"role", "model", "input_tokens", "output_tokens", "cached_tokens",
			      "cost_usd", "latency_ms", "status", "http_status"}},
		{"tool.call", {"step_id", "tool", "params"}},
		{"tool.result", {"step_id", "tool", "ok", "summary"}},
		{"step.output", {"step_id", "attempt", "result"}},
		{"verify.verdict", {"step_id", "attempt", "stage", "action", "severity", "criteria",
				    "feedback"}},
		{"step.end", {"step_id", "status", "attempts"}},
		{"step.edit", {"step_id", "before", "after"}},
		{"run.final", {"answer", "partial", "metrics"}},
		{"run.end", {"status", "exit_code"}},
	};
	const char *type = jsonx_str(ev, "type");

	assert_non_null(type);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(table[i].type, type))
			continue;
		for (int f = 0; f < 10 && table[i].fields[f]; f++)
			if (!cJSON_HasObjectItem(ev, table[i].fields[f]))
				fail_msg("%s event lacks \"%s\"", type, table[i].fields[f]);
	}
}

static void assert_journal_contract(const cJSON *events)
{
	const cJSON *ev;
	double seq, expect = 1;
	int n = cJSON_GetArraySize(events);

	assert_true(n >= 4);
	cJSON_ArrayForEach(ev, events)
	{
		const char *ts = jsonx_str(ev, "ts");
		assert_true(jsonx_num(ev, "seq", &seq));
		assert_true(seq == expect);
		expect++;
		/* RFC 3339 UTC: 2026-11-22T23:44:29.123Z */
		assert_non_null(ts);
		assert_true(strlen(ts) >= 20 && ts[4] == '-' && ts[10] == 'T' &&
			    ts[strlen(ts) - 1] == 'Z');
		assert_design_fields(ev);
	}
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(events, 0), "type"), "run.start");
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(events, n - 1), "type"), "run.end");
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(events, n - 2), "type"), "run.final");
}

static int count(const cJSON *events, const char *type, const char *key, const char *value)
{
	const cJSON *ev;
	int n = 0;

	cJSON_ArrayForEach(ev, events)
	{
		if (strcmp(jsonx_str(ev, "type"), type))
			continue;
		if (key) {
			const cJSON *v = cJSON_GetObjectItem(ev, key);
			if (cJSON_IsString(v) ? strcmp(v->valuestring, value) != 0
					      : (cJSON_IsBool(v) ? strcmp(cJSON_IsTrue(v) ? "true" : "false", value) != 0 : 1))
				continue;
		}
		n++;
	}
	return n;
}

static const cJSON *find(const cJSON *events, const char *type)
{
	const cJSON *ev, *found = NULL;

	cJSON_ArrayForEach(ev, events)
		if (!strcmp(jsonx_str(ev, "type"), type))
			found = ev;
	return found;
}

static int metric(const cJSON *events, const char *key)
{
	double d = -1;

	jsonx_num(cJSON_GetObjectItem(find(events, "run.final"), "metrics"), key, &d);
	return (int)d;
}

/* Runs a scenario headless with --yes; returns the journal; checks the exit code. */
static cJSON *scenario(const char *name, int want_exit, const char *task, char **run_dir_out)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir;
	struct cli_proc p;
	cJSON *events;

	if (task)
		p = cli_run(NULL, "--headless", "--demo", "--yes", "--scenario", name,
			       "--sim-delay", "0", "--runs-dir", runs, task, NULL);
	else
		p = cli_run(NULL, "--headless", "--demo", "--yes", "--scenario", name,
			       "--sim-delay", "0", "--runs-dir", runs, NULL);
	if (p.status != want_exit)
		fail_msg("scenario %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, p.status,
			 want_exit, p.out, p.err);
	/* The readable output names the outcome. */
	assert_non_null(strstr(p.out, "answer:"));
	run_dir = cli_only_run(runs);
	events = cli_load_journal(run_dir);
	assert_journal_contract(events);
	{
		char *report = xasprintf("%s/report.md", run_dir);
		assert_int_equal(access(report, R_OK), 0);
		free(report);
	}
	cli_proc_free(&p);
	if (run_dir_out)
		*run_dir_out = xstrdup(tmp);
	else
		cli_rm_rf(tmp);
	free(run_dir);
	free(runs);
	free(tmp);
	return events;
}

static void test_generic_with_task(void **state)
{
	cJSON *ev = scenario("generic", 0, "compare two sorting algorithms", NULL);

	(void)state;
	assert_string_equal(jsonx_str(find(ev, "run.start"), "task"),
			    "compare two sorting algorithms");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(find(ev, "run.start"), "simulated")));
	assert_int_equal(metric(ev, "steps_passed"), metric(ev, "steps_total"));
	assert_int_equal(count(ev, "step.end", "status", "passed"), metric(ev, "steps_total"));
	cJSON_Delete(ev);
}

static void test_flaky_search(void **state)
{
	cJSON *ev = scenario("flaky-search", 0, NULL, NULL);

	(void)state;
	assert_true(count(ev, "tool.result", "ok", "false") >= 1);
	assert_true(count(ev, "verify.verdict", "action", "retry") >= 1);
	assert_int_equal(metric(ev, "steps_passed"), metric(ev, "steps_total"));
	assert_true(metric(ev, "total_attempts") > metric(ev, "steps_total"));
	cJSON_Delete(ev);
}

static void test_legal_review(void **state)
{
	cJSON *ev = scenario("legal-review", 0, NULL, NULL);
	const cJSON *e;
	bool det_retry = false;

	(void)state;
	assert_true(count(ev, "gate.open", "gate", "high") >= 1);
	cJSON_ArrayForEach(e, ev)
	{
		if (!strcmp(jsonx_str(e, "type"), "verify.verdict") &&
		    !strcmp(jsonx_str(e, "stage"), "deterministic") &&
		    !strcmp(jsonx_str(e, "action"), "retry"))
			det_retry = true;
	}
	assert_true(det_retry);
	assert_int_equal(metric(ev, "steps_passed"), metric(ev, "steps_total"));
	cJSON_Delete(ev);
}

static void test_density_partial(void **state)
{
	cJSON *ev = scenario("density", 2, NULL, NULL);
	const cJSON *fin = find(ev, "run.final");

	(void)state;
	assert_int_equal(count(ev, "step.end", "status", "fail_accepted"), 1);
	assert_memory_equal(jsonx_str(fin, "answer"), "PARTIAL:", 8);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fin, "partial")));
	assert_int_equal(metric(ev, "replans"), 2); /* the default --max-replans */
	assert_int_equal(metric(ev, "steps_fail_accepted"), 1);
	assert_string_equal(jsonx_str(find(ev, "run.end"), "status"), "partial");
	cJSON_Delete(ev);
}

static void test_replan(void **state)
{
	cJSON *ev = scenario("replan", 0, NULL, NULL);
	const cJSON *adopted = find(ev, "plan.adopted");

	(void)state;
	assert_true(count(ev, "verify.verdict", "action", "replan") >= 1);
	assert_true(count(ev, "plan.adopted", NULL, NULL) >= 2);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(adopted, "kept")) >= 1);
	assert_int_equal(metric(ev, "replans"), 1);
	cJSON_Delete(ev);
}

static void test_dag(void **state)
{
	cJSON *ev = scenario("dag", 0, NULL, NULL);
	const cJSON *plan = cJSON_GetObjectItem(find(ev, "plan.adopted"), "plan");
	const cJSON *steps = cJSON_GetObjectItem(plan, "steps"), *s, *e;

	(void)state;
	assert_int_equal(metric(ev, "steps_passed"), cJSON_GetArraySize(steps));
	/* Every step starts after each of its dependencies ended as passed. */
	cJSON_ArrayForEach(s, steps)
	{
		const cJSON *deps = cJSON_GetObjectItem(s, "dependencies"), *d;
		double start = -1;
		cJSON_ArrayForEach(e, ev)
			if (!strcmp(jsonx_str(e, "type"), "step.start") &&
			    !strcmp(jsonx_str(e, "step_id"), jsonx_str(s, "step_id")) && start < 0)
				jsonx_num(e, "seq", &start);
		cJSON_ArrayForEach(d, deps)
		{
			double end = -1;
			cJSON_ArrayForEach(e, ev)
				if (!strcmp(jsonx_str(e, "type"), "step.end") &&
				    !strcmp(jsonx_str(e, "step_id"), d->valuestring))
					jsonx_num(e, "seq", &end);
			assert_true(end > 0 && start > end);
		}
	}
	cJSON_Delete(ev);
}

/*
 * Plans and results in the shapes real models write: an object where text was asked, numeric
 * step ids and dependencies, complexity in capitals, a per-criterion meets_criteria map and a
 * quoted confidence. The run must pass, and the journal keep the map as written.
 */
static const char *LIBERAL_SCRIPT =
	"{\"task\": \"Count the words\",\n"
	" \"planner\": [{\"goal\": \"{{task}}\",\n"
	"   \"context\": {\"audience\": \"ops\", \"files\": [\"a.txt\"]},\n"
	"   \"steps\": [\n"
	"    {\"step_id\": 1, \"name\": \"Count\", \"description\": \"Count the words.\",\n"
	"     \"acceptance_criteria\": [\"count.md holds the count\", {\"format\": \"markdown\"}],\n"
	"     \"dependencies\": [], \"estimated_complexity\": \"LOW\"},\n"
	"    {\"step_id\": 2, \"name\": \"Check\", \"description\": {\"verify\": \"count.md\"},\n"
	"     \"dependencies\": [1], \"estimated_complexity\": \" Medium \"}],\n"
	"   \"success_criteria\": [\"the count is right\"], \"rollback_strategy\": null}],\n"
	" \"executor\": {\"1\": [{\"rounds\": [{\"text\": \"Writing.\", \"tool_calls\": [\n"
	"    {\"name\": \"write_file\", \"input\": {\"path\": \"count.md\", \"content\": \"42\"}}]}],\n"
	"   \"final\": {\"reasoning\": {\"method\": \"wc -w\"}, \"actions_taken\": [\"write_file\"],\n"
	"     \"step_output\": {\"findings\": \"42 words\", \"artifacts\": [\"count.md\"],\n"
	"       \"meets_criteria\": {\"criterion_1\": true, \"criterion_2\": \"yes\"}},\n"
	"     \"confidence\": \"0.9\", \"notes\": null}}]}\n"
	"}\n";

/* The shell scenario reaches the shell gate (here --yes answers it) twice with the same
 * command; each tool.result carries the command that ran, its exit status and duration,
 * and the gate shows where it runs, its time limit and why the allow list did not pass it. */
static void test_shell(void **state)
{
	cJSON *ev = scenario("shell", 0, NULL, NULL);
	const cJSON *e;
	double exits[2] = {-1, -1}, ms, t;
	int n = 0;

	(void)state;
	assert_int_equal(metric(ev, "steps_passed"), 3);
	assert_int_equal(count(ev, "gate.open", "gate", "shell"), 2);
	cJSON_ArrayForEach(e, ev)
	{
		const char *type = jsonx_str(e, "type");
		if (!strcmp(type, "gate.open") && !strcmp(jsonx_str(e, "gate"), "shell")) {
			const cJSON *allow = cJSON_GetObjectItem(e, "allow");
			assert_string_equal(jsonx_str(e, "command"), "sh test.sh");
			assert_non_null(strstr(jsonx_str(e, "cwd"), "workspace"));
			assert_true(jsonx_num(e, "timeout_s", &t) && t == 60);
			assert_string_equal(jsonx_str(allow, "why"), "the allow list is empty");
		}
		if (strcmp(type, "tool.result") || strcmp(jsonx_str(e, "tool"), "run_shell"))
			continue;
		assert_true(n < 2);
		assert_string_equal(jsonx_str(e, "command"), "sh test.sh");
		assert_string_equal(jsonx_str(e, "approval"), "policy");
		assert_true(jsonx_num(e, "exit_status", &exits[n]));
		assert_true(jsonx_num(e, "duration_ms", &ms) && ms >= 0 && ms < 60000);
		assert_non_null(strstr(jsonx_str(e, "output"), "the invoice says: 1234.50\n"));
		n++;
	}
	assert_int_equal(n, 2);
	assert_true(exits[0] == 1); /* the test fails before the fix */
	assert_true(exits[1] == 0); /* and passes after it */
	cJSON_Delete(ev);
}

static void test_liberal_model_shapes(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	char *script = xasprintf("%s/script.json", tmp), *run_dir;
	FILE *f = fopen(script, "w");
	struct cli_proc p;
	cJSON *ev, *want;
	const cJSON *plan, *steps, *e, *meets = NULL;

	(void)state;
	assert_non_null(f);
	assert_true(fputs(LIBERAL_SCRIPT, f) >= 0);
	assert_int_equal(fclose(f), 0);
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
		    "--sim-delay", "0", "--runs-dir", runs, NULL);
	if (p.status != 0)
		fail_msg("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	run_dir = cli_only_run(runs);
	ev = cli_load_journal(run_dir);
	assert_journal_contract(ev);

	/* The plan was read, not re-asked: object text kept compact, ids as strings. */
	assert_null(strstr(p.out, "cannot be used"));
	plan = cJSON_GetObjectItem(find(ev, "plan.adopted"), "plan");
	steps = cJSON_GetObjectItem(plan, "steps");
	assert_string_equal(jsonx_str(plan, "context"), "{\"audience\":\"ops\",\"files\":[\"a.txt\"]}");
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(steps, 0), "step_id"), "1");
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(steps, 0), "estimated_complexity"), "low");
	assert_string_equal(
		cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 1), "dependencies"),
				   0)->valuestring,
		"1");

	/* Step 1 passed on its first attempt, its map journaled as the executor wrote it. */
	cJSON_ArrayForEach(e, ev)
	{
		if (!strcmp(jsonx_str(e, "type"), "step.output") && !strcmp(jsonx_str(e, "step_id"), "1"))
			meets = cJSON_GetObjectItem(
				cJSON_GetObjectItem(cJSON_GetObjectItem(e, "result"), "step_output"),
				"meets_criteria");
		if (!strcmp(jsonx_str(e, "type"), "verify.verdict") &&
		    strcmp(jsonx_str(e, "action"), "pass"))
			fail_msg("step %s was not passed: %s", jsonx_str(e, "step_id"),
				 jsonx_str(e, "feedback"));
	}
	want = cJSON_Parse("{\"criterion_1\":true,\"criterion_2\":\"yes\"}");
	assert_true(cJSON_Compare(meets, want, 1));
	cJSON_Delete(want);
	assert_int_equal(count(ev, "step.end", "status", "passed"), 2);
	assert_int_equal(metric(ev, "steps_passed"), 2);
	assert_int_equal(metric(ev, "total_attempts"), 2);
	assert_string_equal(jsonx_str(find(ev, "run.end"), "status"), "passed");

	cJSON_Delete(ev);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(run_dir);
	free(script);
	free(runs);
	free(tmp);
}

static void test_gate_without_yes_exits_3(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	struct cli_proc p = cli_run(NULL, "--headless", "--demo", "--gate", "plan", "--sim-delay",
				   "0", "--runs-dir", runs, "a task", NULL);

	(void)state;
	assert_int_equal(p.status, 3);
	assert_non_null(strstr(p.out, "plan gate"));
	assert_non_null(strstr(p.out, "--yes"));
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(runs);
	free(tmp);
}

static void test_json_lines(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	struct cli_proc p = cli_run(NULL, "--headless", "--json", "--demo", "--yes", "--scenario",
				   "dag", "--sim-delay", "0", "--runs-dir", runs, NULL);
	char *save = NULL;
	int lines = 0;

	(void)state;
	assert_int_equal(p.status, 0);
	for (char *l = strtok_r(p.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(l);
		double seq;
		assert_non_null(o);
		assert_true(jsonx_num(o, "seq", &seq));
		assert_int_equal((int)seq, lines + 1);
		cJSON_Delete(o);
		lines++;
	}
	assert_true(lines > 10);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(runs);
	free(tmp);
}

static void test_keys_never_journaled(void **state)
{
	static const char *const env[] = {"ANTHROPIC_API_KEY=sk-ant-TESTSECRET-0123456789",
					  "OPENAI_API_KEY=sk-TESTSECRET-9876543210", NULL};
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	struct cli_proc p = cli_run(env, "--headless", "--demo", "--yes", "--sim-delay", "0",
				   "--runs-dir", runs, NULL);
	char *cmd = xasprintf("grep -r TESTSECRET '%s' >/dev/null", tmp);

	(void)state;
	assert_int_equal(p.status, 0);
	assert_null(strstr(p.out, "TESTSECRET"));
	assert_null(strstr(p.err, "TESTSECRET"));
	assert_int_not_equal(system(cmd), 0); /* grep finds nothing */
	free(cmd);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(runs);
	free(tmp);
}

static void test_command_line_errors(void **state)
{
	struct cli_proc p;

	(void)state;
	p = cli_run(NULL, "--max-retries", "lots", NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "--max-retries"));
	assert_null(strchr(strchr(p.err, '\n') + 1, '\n')); /* one line */
	cli_proc_free(&p);

	p = cli_run(NULL, "--gate", "plan,lunch", NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "lunch"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--headless", "a task", NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "--demo"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--demo", "--scenario", "nope", "--headless", NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "nope"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--help", NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "--demo"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--version", NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, PACKAGE_VERSION));
	cli_proc_free(&p);
}

static void test_list_and_replay(void **state)
{
	char *tmp = NULL, *runs, *run_dir, *id;
	cJSON *ev = scenario("dag", 0, NULL, &tmp);
	struct cli_proc p;

	(void)state;
	runs = xasprintf("%s/runs", tmp);
	run_dir = cli_only_run(runs);
	id = strrchr(run_dir, '/') + 1;
	p = cli_run(NULL, "--list-runs", "--runs-dir", runs, NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, id));
	assert_non_null(strstr(p.out, "passed"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--headless", "--replay", id, "--runs-dir", runs, NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "answer:"));
	cli_proc_free(&p);

	p = cli_run(NULL, "--headless", "--resume", id, "--runs-dir", runs, NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "already finished"));
	cli_proc_free(&p);

	cJSON_Delete(ev);
	cli_rm_rf(tmp);
	free(run_dir);
	free(runs);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generic_with_task),
		cmocka_unit_test(test_flaky_search),
		cmocka_unit_test(test_legal_review),
		cmocka_unit_test(test_density_partial),
		cmocka_unit_test(test_replan),
		cmocka_unit_test(test_dag),
		cmocka_unit_test(test_shell),
		cmocka_unit_test(test_liberal_model_shapes),
		cmocka_unit_test(test_gate_without_yes_exits_3),
		cmocka_unit_test(test_json_lines),
		cmocka_unit_test(test_keys_never_journaled),
		cmocka_unit_test(test_command_line_errors),
		cmocka_unit_test(test_list_and_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
