/* test_cli_mock — the real binary against the mock LLM server: provider selection from the
 * environment (keys, base URLs, --model), the wire each one speaks, costs, errors, and
 * that the key never reaches the run folder or the output. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonx.h"
#include "mock_llm.h"
#include "requests.h"
#include "testdir.h"
#include "xalloc.h"

#define KEY "sk-ant-cli-TESTKEY-4f8a2c9e1b7d"

static const char plan_text[] =
	"Here is the plan:\n```json\n"
	"{\"goal\":\"count words\",\"context\":\"test\",\"steps\":[{\"step_id\":\"s1\","
	"\"name\":\"count\",\"description\":\"count the words\",\"actions\":[],"
	"\"acceptance_criteria\":[\"a number is given\"],\"expected_outputs\":[],"
	"\"dependencies\":[],\"estimated_complexity\":\"low\"}],"
	"\"success_criteria\":[\"the count is right\"],\"rollback_strategy\":\"none\"}\n```";
static const char result_text[] =
	"{\"reasoning\":\"counted\",\"actions_taken\":[\"counted\"],\"step_output\":"
	"{\"findings\":\"42 words\",\"artifacts\":[],\"meets_criteria\":true},"
	"\"confidence\":0.9,\"notes\":\"\"}";
static const char verdict_text[] =
	"{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a number is given\","
	"\"passed\":true,\"evidence\":\"42\",\"confidence\":0.9,\"feedback\":\"\"}],"
	"\"action\":\"pass\",\"severity\":\"minor\"}";
static const char answer_text[] = "There are 42 words.";

/* The five calls of a one-step run, in order: plan, execute, verify, final check,
 * synthesis. `models` per call (the mock matches on the request's model). */
static void script_run(struct mock *m, bool anthropic, const char *const models[5])
{
	const char *texts[5] = {plan_text, result_text, verdict_text, verdict_text, answer_text};

	for (int i = 0; i < 5; i++) {
		char *body = anthropic ? mock_anthropic_text_sse(models[i], texts[i], 100, 50)
				       : mock_openai_text_sse(models[i], texts[i], 100, 50);
		char *needle = xasprintf("\"model\":\"%s\"", models[i]);
		struct mock_reply r = {.body = body, .chunk = 64};
		mock_push_for(m, needle, &r);
		free(body);
		free(needle);
	}
}

static const cJSON *first(const cJSON *events, const char *type)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, events)
		if (!strcmp(jsonx_str(ev, "type"), type))
			return ev;
	return NULL;
}

static void assert_no_key_in_dir(const char *dir)
{
	char *cmd = xasprintf("grep -r -e TESTKEY '%s' >/dev/null", dir);

	assert_int_not_equal(system(cmd), 0);
	free(cmd);
}

static void test_openai_compatible_without_key(void **state)
{
	static const char *const models[5] = {"llama3.1", "llama3.1", "llama3.1", "llama3.1",
					      "llama3.1"};
	struct mock *m = mock_start();
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *url = mock_url(m, "/v1");
	char *env_url = xasprintf("OPENAI_BASE_URL=%s", url), *run_dir;
	const char *env[] = {env_url, NULL};
	struct cli_proc p;
	cJSON *events;
	const cJSON *start, *call;
	struct mock_request *req;

	(void)state;
	script_run(m, false, models);
	p = cli_run(env, "--headless", "--yes", "--model", "llama3.1", "--runs-dir", runs,
		    "count the words", NULL);
	if (p.status != 0)
		fail_msg("exit %d\n%s\n%s", p.status, p.out, p.err);
	assert_non_null(strstr(p.out, "There are 42 words."));
	run_dir = cli_only_run(runs);
	events = cli_load_journal(run_dir);
	start = first(events, "run.start");
	assert_string_equal(jsonx_str(start, "provider"), "openai");
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(start, "simulated")));
	assert_string_equal(jsonx_str(cJSON_GetObjectItem(start, "models"), "verifier"), "llama3.1");
	/* A local model has no price: unknown, never zero. */
	call = first(events, "llm.call");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(call, "cost_usd")));
	assert_non_null(strstr(p.out, "unknown"));
	/* The OpenAI wire: /v1/chat/completions, no Authorization header without a key. */
	assert_int_equal(mock_request_count(m), 5);
	req = mock_request_get(m, 0);
	assert_string_equal(req->path, "/v1/chat/completions");
	assert_string_equal(req->authorization, "");
	assert_non_null(strstr(req->body, "\"stream\":true"));
	mock_request_free(req);
	cJSON_Delete(events);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(run_dir);
	free(env_url);
	free(url);
	free(runs);
	free(tmp);
}

static void test_anthropic_from_environment(void **state)
{
	static const char *const models[5] = {"claude-opus-4-5", "claude-sonnet-4-5",
					      "claude-haiku-4-5", "claude-haiku-4-5",
					      "claude-opus-4-5"};
	struct mock *m = mock_start();
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *url = mock_url(m, "");
	char *env_url = xasprintf("ANTHROPIC_BASE_URL=%s", url), *run_dir;
	const char *env[] = {env_url, "ANTHROPIC_API_KEY=" KEY, NULL};
	struct cli_proc p;
	cJSON *events;
	const cJSON *start, *ev;
	struct mock_request *req;
	double total = 0;

	(void)state;
	script_run(m, true, models);
	p = cli_run(env, "--headless", "--yes", "--runs-dir", runs, "count the words", NULL);
	if (p.status != 0)
		fail_msg("exit %d\n%s\n%s", p.status, p.out, p.err);
	run_dir = cli_only_run(runs);
	events = cli_load_journal(run_dir);
	start = first(events, "run.start");
	assert_string_equal(jsonx_str(start, "provider"), "anthropic");
	/* Default models per role: strong to plan, balanced to execute, fast to verify. */
	assert_string_equal(jsonx_str(cJSON_GetObjectItem(start, "models"), "planner"),
			    "claude-opus-4-5");
	assert_string_equal(jsonx_str(cJSON_GetObjectItem(start, "models"), "executor"),
			    "claude-sonnet-4-5");
	assert_string_equal(jsonx_str(cJSON_GetObjectItem(start, "models"), "verifier"),
			    "claude-haiku-4-5");
	/* Every call is priced: 100 in / 50 out at the table's rates. */
	cJSON_ArrayForEach(ev, events)
	{
		double c;
		if (strcmp(jsonx_str(ev, "type"), "llm.call"))
			continue;
		assert_true(jsonx_num(ev, "cost_usd", &c));
		assert_true(c > 0);
		total += c;
	}
	/* opus 2×(100×5+50×25) + sonnet (100×3+50×15) + haiku 2×(100×1+50×5), per 1e6 */
	assert_true(fabs(total - 5250e-6) < 1e-12);
	req = mock_request_get(m, 0);
	assert_string_equal(req->path, "/v1/messages");
	assert_string_equal(req->api_key, KEY);
	assert_string_equal(req->version, "2023-06-01");
	mock_request_free(req);
	assert_no_key_in_dir(tmp);
	assert_null(strstr(p.out, "TESTKEY"));
	assert_null(strstr(p.err, "TESTKEY"));
	cJSON_Delete(events);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(run_dir);
	free(env_url);
	free(url);
	free(runs);
	free(tmp);
}

static void test_bad_key_fails_once_with_the_providers_message(void **state)
{
	struct mock *m = mock_start();
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *url = mock_url(m, "");
	char *env_url = xasprintf("ANTHROPIC_BASE_URL=%s", url);
	const char *env[] = {env_url, "ANTHROPIC_API_KEY=" KEY, NULL};
	struct mock_reply r = {
		.status = 401,
		.body = "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
			"\"message\":\"invalid x-api-key\"}}",
	};
	struct cli_proc p;

	(void)state;
	mock_set_default(m, &r);
	p = cli_run(env, "--headless", "--yes", "--runs-dir", runs, "count the words", NULL);
	assert_int_equal(p.status, 1);
	assert_int_equal(mock_request_count(m), 1); /* 401 is not retried */
	assert_non_null(strstr(p.out, "401"));
	assert_non_null(strstr(p.out, "invalid x-api-key"));
	assert_null(strstr(p.out, "TESTKEY"));
	assert_null(strstr(p.err, "TESTKEY"));
	assert_no_key_in_dir(tmp);
	{
		/* llm.call records the status the server sent (issue 25), not 0. */
		char *run = cli_only_run(runs);
		assert_true(cli_journal_has(run, "\"status\":\"error\",\"http_status\":401"));
		free(run);
	}
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(env_url);
	free(url);
	free(runs);
	free(tmp);
}

/* The key comes from the config file's api_key_cmd (never from the file itself). */
static void test_key_from_api_key_cmd(void **state)
{
	static const char *const models[5] = {"m", "m", "m", "m", "m"};
	struct mock *m = mock_start();
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *url = mock_url(m, "");
	char *config = xasprintf("%s/config", tmp);
	char *text = xasprintf("[provider]\nname = anthropic\nbase_url = %s\n"
			       "api_key_cmd = printf '%%s\\n' %s\n[models]\nall = m\n",
			       url, KEY);
	struct cli_proc p;
	struct mock_request *req;
	FILE *f = fopen(config, "w");

	(void)state;
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	script_run(m, true, models);
	p = cli_run(NULL, "--headless", "--yes", "--config", config, "--runs-dir", runs,
		    "count the words", NULL);
	if (p.status != 0)
		fail_msg("exit %d\n%s\n%s", p.status, p.out, p.err);
	req = mock_request_get(m, 0);
	assert_string_equal(req->api_key, KEY);
	mock_request_free(req);
	assert_null(strstr(p.out, "TESTKEY"));
	assert_null(strstr(p.err, "TESTKEY"));
	{
		/* Only the config (which names the command) holds the key's text. */
		char *cmd = xasprintf("grep -r -e TESTKEY '%s' >/dev/null", runs);
		assert_int_not_equal(system(cmd), 0);
		free(cmd);
	}
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(text);
	free(config);
	free(url);
	free(runs);
	free(tmp);
}

/* Runs the binary against an OpenAI-compatible mock at base URL `suffix`; the caller has
 * scripted the mock. Returns the process; *run_dir is the run folder (NULL when none). */
static struct cli_proc run_openai(struct mock *m, const char *suffix, char **tmp,
				  char **run_dir)
{
	char *url = mock_url(m, suffix), *env_url = xasprintf("OPENAI_BASE_URL=%s", url);
	char *runs;
	const char *env[] = {env_url, NULL};
	struct cli_proc p;

	*tmp = cli_tmpdir();
	runs = xasprintf("%s/runs", *tmp);
	p = cli_run(env, "--headless", "--yes", "--model", "m", "--runs-dir", runs,
		    "count the words", NULL);
	*run_dir = NULL;
	{
		char *cmd = xasprintf("test -d '%s' && [ \"$(ls '%s' | wc -l)\" = 1 ]", runs, runs);
		if (system(cmd) == 0)
			*run_dir = cli_only_run(runs);
		free(cmd);
	}
	free(runs);
	free(env_url);
	free(url);
	return p;
}

/* Every answer as a real server may frame it: a byte-order mark, OpenRouter's keep-alive
 * comments, api.openai.com's extra fields. The run succeeds, and the journal says why
 * each model stopped. */
static void test_openai_compatible_quirks_and_stop_reason_journaled(void **state)
{
	const char *texts[5] = {plan_text, result_text, verdict_text, verdict_text, answer_text};
	struct mock *m = mock_start();
	char *tmp, *run_dir;
	struct cli_proc p;
	cJSON *events;
	const cJSON *ev;
	int calls = 0;

	(void)state;
	for (int i = 0; i < 5; i++) {
		char *sse = mock_openai_text_sse("m", texts[i], 100, 50);
		char *body = xasprintf("\xEF\xBB\xBF: OPENROUTER PROCESSING\n\n%s", sse);
		struct mock_reply r = {.body = body, .chunk = 5};

		mock_push(m, &r);
		free(body);
		free(sse);
	}
	p = run_openai(m, "/v1", &tmp, &run_dir);
	if (p.status != 0)
		fail_msg("exit %d\n%s\n%s", p.status, p.out, p.err);
	assert_non_null(strstr(p.out, "There are 42 words."));
	assert_non_null(run_dir);
	events = cli_load_journal(run_dir);
	cJSON_ArrayForEach(ev, events)
	{
		if (strcmp(jsonx_str(ev, "type"), "llm.call"))
			continue;
		assert_string_equal(jsonx_str(ev, "status"), "ok");
		assert_string_equal(jsonx_str(ev, "stop_reason"), "stop");
		calls++;
	}
	assert_int_equal(calls, 5);
	cJSON_Delete(events);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(run_dir);
	free(tmp);
}

/* An older llama.cpp: `error: {…}` then [DONE] with HTTP 200. Once an ok call with an
 * empty answer; now a failed call with the server's sentence, and a 400 is not retried. */
static void test_llamacpp_old_error_reported_not_retried(void **state)
{
	struct mock *m = mock_start();
	char *body = mock_read_file(TOP_SRCDIR "/tests/mock/fixtures/llamacpp-old-error.sse");
	struct mock_reply r = {.body = body};
	char *tmp, *run_dir;
	struct cli_proc p;
	cJSON *events;
	const cJSON *call;

	(void)state;
	mock_set_default(m, &r);
	p = run_openai(m, "/v1", &tmp, &run_dir);
	assert_int_equal(p.status, 1);
	assert_int_equal(mock_request_count(m), 1);
	assert_non_null(strstr(p.out, "openai: HTTP 200 then error invalid_request_error: the "
				      "request exceeds the available context size. try "
				      "increasing the context size or enable context shift"));
	assert_non_null(run_dir);
	events = cli_load_journal(run_dir);
	call = first(events, "llm.call");
	assert_non_null(call);
	assert_string_equal(jsonx_str(call, "status"), "error");
	assert_non_null(strstr(jsonx_str(call, "error"), "exceeds the available context size"));
	cJSON_Delete(events);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(run_dir);
	free(tmp);
	free(body);
}

/* vLLM or LiteLLM on a base URL without /v1: FastAPI's {"detail":"Not Found"} becomes
 * "Not Found" and the URL tried, not "no error message". */
static void test_fastapi_not_found_names_the_url(void **state)
{
	struct mock *m = mock_start();
	struct mock_reply r = {.status = 404, .body = "{\"detail\":\"Not Found\"}"};
	char *tmp, *run_dir, *want, *url = mock_url(m, "/chat/completions");
	struct cli_proc p;

	(void)state;
	mock_set_default(m, &r);
	p = run_openai(m, "", &tmp, &run_dir);
	assert_int_equal(p.status, 1);
	assert_int_equal(mock_request_count(m), 1);
	want = xasprintf("openai: HTTP 404: Not Found (POST %s: is the base URL right? often a "
			 "missing /v1)",
			 url);
	if (!strstr(p.out, want))
		fail_msg("want %s in\n%s", want, p.out);
	assert_null(strstr(p.out, "no error message"));
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(run_dir);
	free(want);
	free(url);
	free(tmp);
}

/*
 * A planner answer cut at the output token limit (finish_reason "length") is not called
 * malformed: the operator reads that it was cut, and the model is asked for a shorter one.
 */
static void test_cut_off_answer_said_so(void **state)
{
	static const char cut[] =
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
		"\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
		"\"{\\\"goal\\\": \\\"count words\\\", \\\"steps\\\": [{\\\"step_id\\\": \\\"s1\\\", "
		"\\\"name\\\": \\\"cou\"},\"finish_reason\":null}]}\n\n"
		"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
		"\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
		"data: [DONE]\n\n";
	struct mock *m = mock_start();
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *url = mock_url(m, "/v1");
	char *env_url = xasprintf("OPENAI_BASE_URL=%s", url);
	const char *env[] = {env_url, NULL};
	struct mock_reply r = {.body = cut};
	struct mock_request *req;
	struct cli_proc p;

	(void)state;
	mock_set_default(m, &r);
	p = cli_run(env, "--headless", "--yes", "--model", "m", "--runs-dir", runs,
		    "count the words", NULL);
	if (p.status != 1 || !strstr(p.err, "cut off at the output token limit") ||
	    !strstr(p.err, "\"length\""))
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	/* The second ask told the model why. */
	assert_int_equal(mock_request_count(m), 2);
	req = mock_request_get(m, 1);
	assert_non_null(strstr(req->body, "write a shorter answer"));
	mock_request_free(req);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	mock_stop(m);
	free(env_url);
	free(url);
	free(runs);
	free(tmp);
}

/*
 * The drill-down's request view: every call's body is kept in RUNDIR/requests.jsonl byte
 * for byte as the server received it, named by llm.call's `request`, while the key went in a
 * header (x-api-key, Authorization) and is nowhere in the run folder.
 */
static void test_requests_kept_as_sent_without_key(void **state)
{
	static const char *const models[5] = {"m", "m", "m", "m", "m"};

	(void)state;
	for (int anthropic = 0; anthropic < 2; anthropic++) {
		struct mock *m = mock_start();
		char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
		char *url = mock_url(m, anthropic ? "" : "/v1"), *run_dir;
		char *env_url = xasprintf("%s=%s", anthropic ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL",
					  url);
		char *env_key = xasprintf("%s=" KEY, anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
		const char *env[] = {env_url, env_key, NULL};
		struct cli_proc p;
		cJSON *events;
		const cJSON *ev;
		int i = 0;

		script_run(m, anthropic, models);
		p = cli_run(env, "--headless", "--yes", "--model", "m", "--runs-dir", runs,
			    "count the words", NULL);
		if (p.status != 0)
			fail_msg("exit %d\n%s\n%s", p.status, p.out, p.err);
		run_dir = cli_only_run(runs);
		events = cli_load_journal(run_dir);
		cJSON_ArrayForEach(ev, events)
		{
			struct mock_request *req;
			struct request_ref ref;
			char *kept, *err = NULL;
			size_t len;

			if (strcmp(jsonx_str(ev, "type"), "llm.call"))
				continue;
			assert_non_null(jsonx_str(ev, "request"));
			assert_true(requests_find(run_dir, jsonx_str(ev, "request"), &ref));
			kept = requests_read(run_dir, &ref, REQUESTS_MAX_BYTES, &len, NULL, &err);
			assert_non_null(kept);
			requests_ref_release(&ref);
			req = mock_request_get(m, i++);
			assert_string_equal(kept, req->body);
			/* the key went, in its header */
			if (anthropic)
				assert_string_equal(req->api_key, KEY);
			else
				assert_non_null(strstr(req->authorization, "TESTKEY"));
			mock_request_free(req);
			free(kept);
		}
		assert_int_equal(i, 5);
		assert_no_key_in_dir(tmp);
		cJSON_Delete(events);
		cli_proc_free(&p);
		cli_rm_rf(tmp);
		mock_stop(m);
		free(run_dir);
		free(env_url);
		free(env_key);
		free(url);
		free(runs);
		free(tmp);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_openai_compatible_without_key),
		cmocka_unit_test(test_anthropic_from_environment),
		cmocka_unit_test(test_bad_key_fails_once_with_the_providers_message),
		cmocka_unit_test(test_key_from_api_key_cmd),
		cmocka_unit_test(test_openai_compatible_quirks_and_stop_reason_journaled),
		cmocka_unit_test(test_llamacpp_old_error_reported_not_retried),
		cmocka_unit_test(test_fastapi_not_found_names_the_url),
		cmocka_unit_test(test_cut_off_answer_said_so),
		cmocka_unit_test(test_requests_kept_as_sent_without_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
