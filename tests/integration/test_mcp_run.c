/* test_mcp_run — MCP servers through the real binary: a run whose executor (the simulated
 * provider, --script) calls tools of tests/mcp/mcp_test_server; what the journal, the run
 * folder and the workspace hold afterwards; the mcp gate with and without an operator;
 * no server outlives the run. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "mcp_config.h"
#include "mcp_errlog.h"
#include "mcp_trust.h"
#include "jsonx.h"
#include "requests.h"
#include "testdir.h"
#include "xalloc.h"

/* One step whose executor calls `calls` (a JSON array of {name, input}), one a round. */
static char *script_calling(const char *dir, const char *const *calls)
{
	struct strbuf_like {
		char *s;
	} rounds = {xstrdup("")};
	char *text, *path;

	for (size_t i = 0; calls[i]; i++) {
		char *more = xasprintf("%s%s{\"text\": \"Calling.\", \"tool_calls\": [%s]}",
		                       rounds.s, i ? ",\n" : "", calls[i]);
		free(rounds.s);
		rounds.s = more;
	}
	text = xasprintf(
	    "{\"task\": \"Use the test server\",\n"
	    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"use\",\n"
	    "   \"name\": \"Use\", \"description\": \"Use its tools.\",\n"
	    "   \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
	    "   \"estimated_complexity\": \"low\"}]}],\n"
	    " \"executor\": {\"use\": [{\"rounds\": [%s],\n"
	    "   \"final\": {\"reasoning\": \"used\", \"actions_taken\": [\"mcp\"],\n"
	    "     \"step_output\": {\"findings\": \"{{tool_result}}\", \"artifacts\": [],\n"
	    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]}\n"
	    "}\n",
	    rounds.s);
	path = cli_put(dir, "script.json", text);
	free(text);
	free(rounds.s);
	return path;
}

static char *config_with(const char *dir, const char *extra)
{
	char *text = xasprintf(
	    "[mcp.t]\ncommand = %s\nallow = [\"read_*\", \"echo\", \"pid\"]\ntimeout = 5\n%s",
	    MCP_TEST_SERVER, extra ? extra : "");
	char *path = cli_put(dir, "config", text);

	free(text);
	return path;
}

/* The events of `type` (and, when kind is given, whose "kind" or "tool" is it). */
static const cJSON *nth(const cJSON *events, const char *type, const char *tool, int n)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, events)
	{
		if (strcmp(jsonx_str(ev, "type") ? jsonx_str(ev, "type") : "", type))
			continue;
		if (tool && (!jsonx_str(ev, "tool") || strcmp(jsonx_str(ev, "tool"), tool)) &&
		    (!jsonx_str(ev, "kind") || strcmp(jsonx_str(ev, "kind"), tool)))
			continue;
		if (n-- == 0)
			return ev;
	}
	return NULL;
}

/* run.end is the journal's last event: the servers' stop notices come before it. */
static void assert_ends_with_run_end(const cJSON *events)
{
	const cJSON *last = cJSON_GetArrayItem(events, cJSON_GetArraySize(events) - 1);
	const char *type = last ? jsonx_str(last, "type") : NULL;

	if (!type || strcmp(type, "run.end"))
		fail_msg("the journal ends with %s, not run.end", type ? type : "nothing");
}

static void test_a_run_calls_the_tools(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {
	    "{\"name\": \"t__echo\", \"input\": {\"text\": \"hello from mcp\"}}",
	    "{\"name\": \"t__pid\", \"input\": {}}",
	    "{\"name\": \"t__hostile\", \"input\": {}}",
	    "{\"name\": \"t__image\", \"input\": {}}",
	    "{\"name\": \"t__structured\", \"input\": {}}",
	    "{\"name\": \"t__env\", \"input\": {\"name\": \"ANTHROPIC_API_KEY\"}}",
	    "{\"name\": \"t__echo\", \"input\": {\"text\": \"last\"}}",
	    "{\"name\": \"t__echo\", \"input\": {\"ask\": {\"type\": \"object\", "
	    "\"properties\": {\"x\": {\"type\": \"string\"}}}}}",
	    NULL,
	};
	const char *const env[] = {"ANTHROPIC_API_KEY=sk-ant-not-for-servers", NULL};
	char *script, *cfg, *path, *text;
	const cJSON *events, *ev;
	struct stat st;
	long pid;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	cfg = config_with(fx.tmp, NULL);
	cli_fx_run(&fx, 0, env, "--headless", "--yes", "--provider", "sim", "--script", script,
	           "--sim-delay", "0", "--config", cfg, NULL);
	events = fx.events;

	ev = nth(events, "notice", "mcp_server", 0);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "state"), "started");
	assert_string_equal(jsonx_str(ev, "server"), "t");
	ev = nth(events, "notice", "mcp_server", 1);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "state"), "stopped");
	assert_ends_with_run_end(events);

	ev = nth(events, "tool.call", "t__echo", 0);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "server"), "t");
	assert_string_equal(jsonx_str(ev, "mcp_tool"), "echo");
	ev = nth(events, "tool.result", "t__echo", 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	assert_string_equal(jsonx_str(ev, "summary"), "hello from mcp");
	assert_string_equal(jsonx_str(ev, "approval"), "allow_list");
	assert_string_equal(jsonx_str(ev, "allowed_by"), "echo");

	/* The server's question: --yes declines it at the elicit gate, the step goes on. */
	ev = nth(events, "tool.result", "t__echo", 2);
	assert_non_null(ev);
	assert_non_null(strstr(jsonx_str(ev, "summary"), "decline"));
	{
		const cJSON *it;
		bool seen = false;
		cJSON_ArrayForEach(it, events)
		{
			const char *g = jsonx_str(it, "gate");
			if (g && !strcmp(g, "elicit") && jsonx_str(it, "decision")) {
				assert_string_equal(jsonx_str(it, "decision"), "skip");
				assert_string_equal(jsonx_str(it, "reason"),
				                    "--yes declines an MCP server's questions");
				seen = true;
			}
		}
		assert_true(seen);
	}

	/* Not on the allow list: the gate asked, --yes answered. */
	ev = nth(events, "gate.open", NULL, 1);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "gate"), "mcp");
	assert_string_equal(jsonx_str(ev, "tool"), "t__hostile");
	assert_string_equal(jsonx_str(ev, "server"), "t");
	ev = nth(events, "tool.result", "t__hostile", 0);
	assert_string_equal(jsonx_str(ev, "approval"), "policy");
	assert_null(strchr(jsonx_str(ev, "summary"), '\x1b'));
	assert_non_null(strstr(jsonx_str(ev, "summary"), "evil after"));

	ev = nth(events, "tool.result", "t__image", 0);
	assert_non_null(strstr(jsonx_str(ev, "summary"), "saved as mcp-files/t-image-1.png"));
	path = xasprintf("%s/workspace/mcp-files/t-image-1.png", fx.run);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 12);
	free(path);

	ev = nth(events, "tool.result", "t__structured", 0);
	assert_string_equal(jsonx_str(ev, "summary"), "{\"total\":42}");
	{
		/* the journal keeps the structured result whole, as JSON */
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(ev, "structured");
		const cJSON *total = cJSON_GetObjectItemCaseSensitive(sc, "total");
		assert_true(cJSON_IsNumber(total));
		assert_int_equal((int)total->valuedouble, 42);
	}
	/* pevtui's key never reaches a server. */
	ev = nth(events, "tool.result", "t__env", 0);
	assert_string_equal(jsonx_str(ev, "summary"), "(unset)");

	/* The planner was told which tools exist. */
	ev = nth(events, "llm.call", NULL, 0);
	{
		struct request_ref ref;
		char *err = NULL;
		size_t len;

		assert_true(requests_find(fx.run, jsonx_str(ev, "request"), &ref));
		text = requests_read(fx.run, &ref, REQUESTS_MAX_BYTES, &len, NULL, &err);
		requests_ref_release(&ref);
	}
	assert_non_null(text);
	assert_non_null(strstr(text, "t__read_note"));
	free(text);

	/* The server's stderr is kept; the server ended with the run. */
	text = cli_slurp_in(fx.run, "mcp/t.log");
	assert_non_null(text);
	assert_non_null(strstr(text, "got tools/call"));
	free(text);
	ev = nth(events, "tool.result", "t__pid", 0);
	pid = atol(jsonx_str(ev, "summary"));
	assert_true(pid > 1);
	assert_true(kill((pid_t)pid, 0) == -1 && errno == ESRCH);

	cli_fx_release(&fx);
	free(script);
	free(cfg);
}

/* With no operator and no --yes, the mcp gate ends the run (exit 3) and names itself. */
static void test_gate_without_operator(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {"{\"name\": \"t__fail\", \"input\": {}}", NULL};
	char *script, *cfg;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	cfg = config_with(fx.tmp, NULL);
	cli_fx_run(&fx, 3, NULL, "--headless", "--gate", "mcp", "--provider", "sim", "--script",
	           script, "--sim-delay", "0", "--config", cfg, NULL);
	if (!strstr(fx.p.out, "the mcp gate needs an operator") ||
	    !strstr(fx.p.err, "an MCP tool call of step use was rejected"))
		fail_msg("stdout:\n%s\nstderr:\n%s", fx.p.out, fx.p.err);
	cli_fx_release(&fx);
	free(script);
	free(cfg);
}

/* A tool that errors and one that crashes the server: the verifier's view of both, the
 * restart, and a gate left out of --gate. */
static void test_errors_and_crash(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {
	    "{\"name\": \"t__fail\", \"input\": {}}",
	    "{\"name\": \"t__crash\", \"input\": {}}",
	    "{\"name\": \"t__echo\", \"input\": {\"text\": \"after the restart\"}}",
	    "{\"name\": \"slow__slow\", \"input\": {\"ms\": 3000}}",
	    NULL,
	};
	char *extra = xasprintf("[mcp.slow]\ncommand = %s\ntimeout = 1\n", MCP_TEST_SERVER);
	char *script, *cfg, *text;
	const cJSON *events, *ev;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	cfg = config_with(fx.tmp, extra);
	cli_fx_run(&fx, CLI_ANY_STATUS, NULL, "--headless", "--gate", "none", "--max-retries", "0",
	           "--max-replans", "0", "--provider", "sim", "--script", script, "--sim-delay",
	           "0", "--config", cfg, NULL);
	events = fx.events;
	ev = nth(events, "tool.result", "t__fail", 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	assert_string_equal(jsonx_str(ev, "mcp_status"), "tool_error");
	assert_string_equal(jsonx_str(ev, "approval"), "gate_off");
	ev = nth(events, "tool.result", "t__crash", 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	assert_non_null(strstr(jsonx_str(ev, "summary"), "stopped (exit status 3)"));
	ev = nth(events, "tool.result", "t__echo", 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	/* A second server with a time limit of 1 s: the slow call is given up on. */
	ev = nth(events, "tool.result", "slow__slow", 0);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	assert_non_null(strstr(jsonx_str(ev, "summary"), "did not answer tools/call within 1 s"));
	assert_true(cJSON_GetObjectItem(ev, "duration_ms")->valuedouble < 2500);
	/* The report lists the servers and their calls. */
	text = cli_slurp_in(fx.run, "report.md");
	assert_non_null(text);
	if (!strstr(text, "## MCP servers") ||
	    !strstr(text, "- t: started (12 tools, protocol 2025-11-25); stopped; 3 calls, "
	                  "2 failed") ||
	    !strstr(text, "- slow: started (12 tools"))
		fail_msg("report.md:\n%s", text);
	free(text);
	/* The verifier saw the errors: the deterministic stage does not pass the step. */
	ev = nth(events, "verify.verdict", NULL, 0);
	assert_non_null(ev);
	assert_string_not_equal(jsonx_str(ev, "action"), "pass");
	assert_true(fx.p.status == 2 || fx.p.status == 0);
	cli_fx_release(&fx);
	free(script);
	free(extra);
	free(cfg);
}

/* A server that floods its stderr (3 MiB at each start) fills its log up to the cap and
 * no further, with one line saying it was cut, also after a restart; it is never held up
 * by a full pipe. */
static void test_stderr_log_is_capped(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {
	    "{\"name\": \"t__echo\", \"input\": {\"text\": \"heard\"}}",
	    "{\"name\": \"t__crash\", \"input\": {}}",
	    "{\"name\": \"t__echo\", \"input\": {\"text\": \"heard after the restart\"}}",
	    NULL,
	};
	char *script, *cfg, *path, *text, *cut;
	const cJSON *ev;
	struct stat st;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	cfg = config_with(fx.tmp, "args = [\"--flood\", \"3145728\"]\n");
	cli_fx_run(&fx, CLI_ANY_STATUS, NULL, "--headless", "--gate", "none", "--max-retries", "0",
	           "--max-replans", "0", "--provider", "sim", "--script", script, "--sim-delay",
	           "0", "--config", cfg, NULL);
	ev = nth(fx.events, "tool.result", "t__echo", 0);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "summary"), "heard");
	ev = nth(fx.events, "tool.result", "t__echo", 1);
	assert_non_null(ev);
	assert_string_equal(jsonx_str(ev, "summary"), "heard after the restart");

	path = xasprintf("%s/mcp/t.log", fx.run);
	assert_int_equal(stat(path, &st), 0);
	text = testdir_slurp(path);
	assert_non_null(text);
	cut = strstr(text, "[pevtui: this server's stderr went on; its log stops here");
	if (!cut || (size_t)(cut - text) != MCP_ERRLOG_CAP)
		fail_msg("the log is %lld bytes; the cut line is at %lld, want %zu",
		         (long long)st.st_size, cut ? (long long)(cut - text) : -1LL,
		         MCP_ERRLOG_CAP);
	assert_non_null(strstr(cut, "at its cap of 1 MiB for the run]\n"));
	assert_null(strstr(cut + 1, "[pevtui:")); /* once, whatever the restarts */
	assert_int_equal((size_t)st.st_size, MCP_ERRLOG_CAP + strlen(cut));
	assert_null(strstr(text, "got tools/call")); /* what came after the cap is not kept */
	free(text);
	free(path);
	cli_fx_release(&fx);
	free(script);
	free(cfg);
}

/* The same server over Streamable HTTP on 127.0.0.1, configured with url and headers. */
static void test_over_http(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {
	    "{\"name\": \"h__echo\", \"input\": {\"text\": \"hello over http\"}}",
	    "{\"name\": \"h__change\", \"input\": {}}",
	    NULL,
	};
	char *script, *cfg, *log, buf[32] = {0}, *text;
	int in[2], out[2], st;
	pid_t pid;
	const cJSON *ev;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	log = xasprintf("%s/server.log", fx.tmp);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(fd, 2);
		close(in[1]);
		close(out[0]);
		execl(MCP_TEST_SERVER, MCP_TEST_SERVER, "--http", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	assert_true(read(out[0], buf, sizeof(buf) - 1) > 0);
	close(out[0]);
	text = xasprintf("[mcp.h]\nurl = http://127.0.0.1:%d/mcp\nheaders = X-Team: tests\n"
	                 "allow = *\n",
	                 atoi(buf));
	cfg = cli_put(fx.tmp, "config", text);
	free(text);
	/* Only the mcp gate, which allow = * passes: no operator is needed. */
	cli_fx_run(&fx, 0, NULL, "--headless", "--gate", "mcp", "--provider", "sim", "--script",
	           script, "--sim-delay", "0", "--config", cfg, NULL);
	ev = nth(fx.events, "tool.result", "h__echo", 0);
	assert_string_equal(jsonx_str(ev, "summary"), "hello over http");
	assert_string_equal(jsonx_str(ev, "server"), "h");
	ev = nth(fx.events, "tool.result", "h__change", 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(ev, "ok")));
	ev = nth(fx.events, "notice", "mcp_server", 1);
	assert_string_equal(jsonx_str(ev, "state"), "stopped");
	assert_ends_with_run_end(fx.events);
	/* The session was ended when the run ended. */
	text = testdir_slurp(log);
	assert_non_null(strstr(text, "got tools/call"));
	assert_non_null(strstr(text, "got DELETE"));
	free(text);
	close(in[1]);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	cli_fx_release(&fx);
	free(script);
	free(cfg);
	free(log);
}

/* The slow call reached the server (its log, ctx, says so). */
static bool slow_started(void *ctx)
{
	char *text = testdir_slurp(ctx);
	bool yes = text && strstr(text, "got tools/call");

	free(text);
	return yes;
}

/* Stopping the run (SIGINT) while a call is in flight cancels it: the call ends at once,
 * as cancelled (that the server is sent notifications/cancelled is test_mcp's: here the
 * sleeping server is ended with the run before it reads it). */
static void test_stop_cancels_the_call(void **state)
{
	struct cli_fx fx;
	const char *const calls[] = {"{\"name\": \"t__slow\", \"input\": {\"ms\": 1500}}", NULL};
	char *script, *cfg, *log, *fixed;
	struct cli_bg b;
	const cJSON *ev;
	FILE *f;

	(void)state;
	cli_fx_init(&fx);
	script = script_calling(fx.tmp, calls);
	cfg = config_with(fx.tmp, NULL);
	log = xasprintf("%s/t.log", fx.tmp);
	/* The server's stderr where the test can read it from the start. */
	f = fopen(cfg, "a");
	fprintf(f, "args = [\"-c\", \"exec %s 2>>%s\"]\n", MCP_TEST_SERVER, log);
	fclose(f);
	fixed = xasprintf("sed -i 's|^command = .*|command = sh|' %s", cfg);
	assert_int_equal(system(fixed), 0);
	free(fixed);
	b = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	              "--sim-delay", "0", "--runs-dir", fx.runs, "--config", cfg, NULL);
	assert_true(b.pid > 0);
	assert_true(cli_wait_until(slow_started, log, 20));
	assert_int_equal(kill(b.pid, SIGINT), 0);
	cli_fx_wait(&fx, &b, 3);
	ev = nth(fx.events, "tool.result", "t__slow", 0);
	if (!ev || strcmp(jsonx_str(ev, "mcp_status"), "cancelled"))
		fail_msg("no cancelled t__slow result\nstdout:\n%s\nstderr:\n%s", fx.p.out,
		         fx.p.err);
	assert_true(cJSON_GetObjectItem(ev, "duration_ms")->valuedouble < 1500);
	cli_fx_release(&fx);
	free(script);
	free(cfg);
	free(log);
}

/* --list-tools: built-in and MCP tools with their server and gate policy; --mcp adds a
 * server for the run; a server that cannot start is named and the status is 1. */
static void test_list_tools(void **state)
{
	char *tmp = cli_tmpdir(), *cfg = config_with(tmp, NULL);
	char *flag = xasprintf("x=%s --page 5", MCP_TEST_SERVER);
	struct cli_proc p;

	(void)state;
	p = cli_run(NULL, "--config", cfg, "--mcp", flag, "--list-tools", NULL);
	if (p.status != 0 || !strstr(p.out, "run_shell") || !strstr(p.out, "built-in") ||
	    !strstr(p.out, "t__read_note") || !strstr(p.out, "none (allow: read_*)") ||
	    !strstr(p.out, "x__crash") || !strstr(p.out, "Ends the server at once."))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);
	p = cli_run(NULL, "--config", cfg, "--gate", "plan", "--mcp", "bad=pevtui-no-such-server",
	            "--list-tools", NULL);
	if (p.status != 1 || !strstr(p.err, "MCP server bad: command \"pevtui-no-such-server\"") ||
	    !strstr(p.out, "none (the mcp gate is off)"))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(flag);
	free(cfg);
	free(tmp);
}

/* A server from a project's .mcp.json starts only once approved: without a terminal to
 * ask on and without --yes it is left out, with a line saying how to approve it; --yes
 * starts it for the run; an approval remembered (as the terminal's y writes it) lets it
 * start; a changed command asks again. */
static void test_project_file_needs_approval(void **state)
{
	char *tmp = cli_tmpdir(), *ws = xasprintf("%s/ws", tmp), *data = xasprintf("%s/data", tmp);
	char *json = xasprintf("%s/.mcp.json", ws), *env_data = xasprintf("XDG_DATA_HOME=%s", data);
	char *store = xasprintf("%s/pevtui/trusted-mcp.jsonl", data), *abs;
	const char *const env[] = {env_data, NULL};
	struct mcp_server_conf sv = {0};
	struct cli_proc p;
	FILE *f;
	char *err = NULL;

	(void)state;
	assert_int_equal(mkdir(ws, 0755), 0);
	f = fopen(json, "w");
	assert_non_null(f);
	fprintf(f, "{\"mcpServers\": {\"p\": {\"command\": \"%s\"}}}\n", MCP_TEST_SERVER);
	assert_int_equal(fclose(f), 0);

	p = cli_run(env, "--workspace", ws, "--list-tools", NULL);
	if (!strstr(p.err, "MCP server p from ") || !strstr(p.err, "was not started") ||
	    !strstr(p.err, "no terminal could ask") || strstr(p.out, "p__echo"))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);
	assert_int_equal(access(store, F_OK), -1); /* nothing remembered */

	p = cli_run(env, "--workspace", ws, "--yes", "--list-tools", NULL);
	if (p.status != 0 || !strstr(p.err, "for this run (--yes)") || !strstr(p.out, "p__echo"))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);
	assert_int_equal(access(store, F_OK), -1); /* --yes approves for the run only */

	/* What a y at the terminal records. */
	abs = realpath(json, NULL);
	assert_non_null(abs);
	sv.name = xstrdup("p");
	sv.command = xstrdup(MCP_TEST_SERVER);
	assert_true(mcp_trust_add(store, abs, &sv, &err));
	p = cli_run(env, "--workspace", ws, "--list-tools", NULL);
	if (p.status != 0 || strstr(p.err, "MCP server p") || !strstr(p.out, "p__echo"))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);

	/* The file changed under the approval: asked again (here: left out). */
	f = fopen(json, "w");
	assert_non_null(f);
	fprintf(f, "{\"mcpServers\": {\"p\": {\"command\": \"%s\", \"args\": [\"--page\", \"5\"]}}}\n",
	        MCP_TEST_SERVER);
	assert_int_equal(fclose(f), 0);
	p = cli_run(env, "--workspace", ws, "--list-tools", NULL);
	if (!strstr(p.err, "was not started") || strstr(p.out, "p__echo"))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);

	free(sv.name);
	free(sv.command);
	free(abs);
	cli_rm_rf(tmp);
	free(store);
	free(env_data);
	free(json);
	free(data);
	free(ws);
	free(tmp);
}

/* --demo --scenario mcp: the tests' server, installed as pevtui-mcp-demo, with no key. */
static void test_demo_scenario(void **state)
{
	struct cli_fx fx;
	const cJSON *events, *ev;
	char *path;
	struct stat st;

	(void)state;
	cli_fx_init(&fx);
	cli_fx_run(&fx, 0, NULL, "--headless", "--demo", "--yes", "--scenario", "mcp",
	           "--sim-delay", "0", NULL);
	events = fx.events;
	ev = nth(events, "tool.result", "demo__read_note", 0);
	assert_string_equal(jsonx_str(ev, "approval"), "allow_list");
	ev = nth(events, "tool.result", "demo__image", 0);
	assert_string_equal(jsonx_str(ev, "approval"), "policy");
	assert_non_null(nth(events, "gate.open", NULL, 2)); /* plan, then two mcp gates */
	assert_ends_with_run_end(events);
	path = xasprintf("%s/workspace/mcp-files/demo-image-1.png", fx.run);
	assert_int_equal(stat(path, &st), 0);
	free(path);
	cli_fx_release(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_a_run_calls_the_tools),
	    cmocka_unit_test(test_gate_without_operator),
	    cmocka_unit_test(test_errors_and_crash),
	    cmocka_unit_test(test_stderr_log_is_capped),
	    cmocka_unit_test(test_over_http),
	    cmocka_unit_test(test_demo_scenario),
	    cmocka_unit_test(test_list_tools),
	    cmocka_unit_test(test_project_file_needs_approval),
	    cmocka_unit_test(test_stop_cancels_the_call),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
