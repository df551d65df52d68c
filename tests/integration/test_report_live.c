/* test_report_live — the real binary's report.md, written from the events as the engine
 * published them (no journal read at the end), is byte for byte what report_write renders
 * from the finished journal: scenario by scenario, in parallel, with MCP, checkpoints and
 * shell commands, and after a kill and --resume (the report covers the earlier part). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonx.h"
#include "report_check.h"
#include "xalloc.h"

/* The run ended (its report was written then) and report.md is the journal's render. */
static void assert_live_report(const struct cli_fx *fx)
{
	int n = cJSON_GetArraySize(fx->events);
	char *why;

	assert_true(n > 0);
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(fx->events, n - 1), "type"), "run.end");
	why = report_check_live(fx->run);
	if (why)
		fail_msg("%s", why);
}

static int count_type(const cJSON *events, const char *type)
{
	const cJSON *ev;
	int n = 0;

	cJSON_ArrayForEach(ev, events)
	{
		n += !strcmp(jsonx_str(ev, "type"), type);
	}
	return n;
}

/* A demo scenario headless with --yes, more options after it (NULL-terminated, up to 4). */
static void scenario(const char *name, int want, const char *a, const char *b, const char *c,
                     const char *d)
{
	struct cli_fx fx;

	cli_fx_init(&fx);
	cli_fx_run(&fx, want, NULL, "--headless", "--demo", "--yes", "--scenario", name,
	           "--sim-delay", "0", a, b, c, d, NULL);
	assert_live_report(&fx);
	cli_fx_release(&fx);
}

static void test_default_demo(void **state)
{
	struct cli_fx fx;

	(void)state;
	cli_fx_init(&fx);
	cli_fx_run(&fx, 0, NULL, "--headless", "--demo", "--yes", "--sim-delay", "0", NULL);
	assert_live_report(&fx);
	cli_fx_release(&fx);
}

/* A verifier asks for a replan; the new plan keeps the passed step. */
static void test_replan(void **state)
{
	(void)state;
	scenario("replan", 0, NULL, NULL, NULL, NULL);
}

/* Retries run out, two replans, a fail-accepted step: PARTIAL. */
static void test_retries_and_replans(void **state)
{
	(void)state;
	scenario("density", 2, NULL, NULL, NULL, NULL);
}

/* A failing tool, a rejected output, a retry. */
static void test_tool_failure_retry(void **state)
{
	(void)state;
	scenario("flaky-search", 0, NULL, NULL, NULL, NULL);
}

/* Shell commands and their gate answers. */
static void test_shell(void **state)
{
	(void)state;
	scenario("shell", 0, NULL, NULL, NULL, NULL);
}

/* Three steps at once: workers publish from their threads. */
static void test_parallel(void **state)
{
	(void)state;
	scenario("dag", 0, "--parallel", "3", NULL, NULL);
}

/* Tools failing at random, three workers: retries interleaved across threads. */
static void test_chaos_parallel(void **state)
{
	struct cli_fx fx;

	(void)state;
	cli_fx_init(&fx);
	cli_fx_run(&fx, CLI_ANY_STATUS, NULL, "--headless", "--demo", "--yes", "--scenario", "dag",
	           "--sim-delay", "0", "--parallel", "3", "--chaos", "0.4", "--chaos-seed", "7",
	           NULL);
	assert_live_report(&fx);
	cli_fx_release(&fx);
}

/* An MCP server started by pevtui, its tools, its gates, its stop. */
static void test_mcp(void **state)
{
	(void)state;
	scenario("mcp", 0, NULL, NULL, NULL, NULL);
}

/* Checkpoints: step.checkpoint and step.changes, Workspace changes read from the store. */
static void test_checkpoints(void **state)
{
	(void)state;
	scenario("checkpoints", 0, NULL, NULL, NULL, NULL);
}

/* Killed after its first step ended, then --resume: the resumed process's report covers
 * the killed segment too (fed from the journal it rebuilt from). */
static void test_resumed(void **state)
{
	struct cli_fx fx;
	struct cli_bg bg;
	struct cli_proc p;
	char *run, *id, *journal;

	(void)state;
	cli_fx_init(&fx);
	/* Streamed slowly (20 ms a chunk): the run is far from its end at its first step.end. */
	bg = cli_spawn(NULL, "--headless", "--demo", "--yes", "--sim-delay", "20", "--runs-dir",
	               fx.runs, NULL);
	run = cli_wait_run(fx.runs, 30);
	cli_wait_journal(run, "\"type\":\"step.end\"", 60);
	assert_int_equal(kill(bg.pid, SIGKILL), 0);
	p = cli_wait(&bg);
	assert_int_equal(p.status, -1);
	cli_proc_free(&p);
	journal = cli_slurp_in(run, "journal.jsonl");
	assert_non_null(journal);
	assert_null(strstr(journal, "\"type\":\"run.end\""));
	free(journal);

	id = strrchr(run, '/') + 1;
	cli_fx_run(&fx, 0, NULL, "--headless", "--resume", id, "--yes", "--sim-delay", "0", NULL);
	assert_int_equal(count_type(fx.events, "run.resume"), 1);
	assert_live_report(&fx);
	free(run);
	cli_fx_release(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_demo),
	    cmocka_unit_test(test_replan),
	    cmocka_unit_test(test_retries_and_replans),
	    cmocka_unit_test(test_tool_failure_retry),
	    cmocka_unit_test(test_shell),
	    cmocka_unit_test(test_parallel),
	    cmocka_unit_test(test_chaos_parallel),
	    cmocka_unit_test(test_mcp),
	    cmocka_unit_test(test_checkpoints),
	    cmocka_unit_test(test_resumed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
