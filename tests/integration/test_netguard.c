/* test_netguard — the real binary, a scripted hostile model and a canary server: http_get
 * asked for the local machine in every spelling, directly and through a redirect from an
 * allowed host, never reaches it; the journal tells the model it was refused. */
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

#include "cli.h"
#include "jsonx.h"
#include "mock_llm.h"
#include "strbuf.h"
#include "xalloc.h"

/* A one-step plan whose executor calls http_get once per URL, all in one round; its notes
 * name http_get, so the refusals count as addressed and the run passes. */
static char *write_script(const char *dir, const char *const *urls, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xasprintf("%s/script.json", dir);
	FILE *f;

	strbuf_init(&sb);
	strbuf_adds(&sb,
		    "{\"task\": \"Fetch the pages\",\n"
		    " \"planner\": [{\"goal\": \"{{task}}\", \"context\": \"netguard test\",\n"
		    "   \"steps\": [{\"step_id\": \"fetch\", \"name\": \"Fetch\",\n"
		    "     \"description\": \"Fetch the pages.\",\n"
		    "     \"acceptance_criteria\": [\"the pages were asked for\"],\n"
		    "     \"dependencies\": [], \"estimated_complexity\": \"low\"}],\n"
		    "   \"success_criteria\": [\"done\"], \"rollback_strategy\": \"none\"}],\n"
		    " \"executor\": {\"fetch\": [{\"rounds\": [{\"text\": \"Fetching.\",\n"
		    "   \"tool_calls\": [");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s\n    {\"name\": \"http_get\", \"input\": {\"url\": \"%s\"}}",
			    i ? "," : "", urls[i]);
	strbuf_adds(&sb, "]}],\n"
			 "   \"final\": {\"reasoning\": \"asked\", \"actions_taken\": [\"http_get\"],\n"
			 "     \"step_output\": {\"findings\": \"asked\", \"artifacts\": [],\n"
			 "       \"meets_criteria\": true}, \"confidence\": 0.9,\n"
			 "     \"notes\": \"http_get refused what it refused\"}}]}\n"
			 "}\n");
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(sb.buf, f) >= 0);
	assert_int_equal(fclose(f), 0);
	strbuf_release(&sb);
	return path;
}

/* Runs the script headless; `config` may be NULL. Returns the journal. */
static cJSON *run(const char *tmp, const char *script, const char *config)
{
	char *runs = xasprintf("%s/runs", tmp), *run_dir;
	struct cli_proc p;
	cJSON *events;

	if (config)
		p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
			    "--sim-delay", "0", "--config", config, "--runs-dir", runs, NULL);
	else
		p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
			    "--sim-delay", "0", "--runs-dir", runs, NULL);
	if (p.status != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	run_dir = cli_only_run(runs);
	events = cli_load_journal(run_dir);
	cli_proc_free(&p);
	free(run_dir);
	free(runs);
	return events;
}

/* The http_get results in journal order. */
static size_t http_results(const cJSON *events, const cJSON **out, size_t max)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, events)
	{
		if (strcmp(jsonx_str(ev, "type"), "tool.result") ||
		    strcmp(jsonx_str(ev, "tool"), "http_get"))
			continue;
		if (n < max)
			out[n] = ev;
		n++;
	}
	return n;
}

static void assert_refused(const cJSON *result)
{
	const char *summary = jsonx_str(result, "summary");

	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(result, "ok")));
	if (!summary || strncmp(summary, "refused: ", 9) ||
	    !strstr(summary, "does not reach local or private network addresses"))
		fail_msg("not a refusal: %s", summary ? summary : "(none)");
}

static void test_local_addresses_refused(void **state)
{
	struct mock *canary = mock_start(), *redir = mock_start();
	const struct mock_reply hit = {.body = "canary"};
	char *location = xasprintf("Location: http://localhost:%d/\n", mock_port(canary));
	const struct mock_reply moved = {.status = 302, .headers = location, .body = ""};
	int cp = mock_port(canary);
	char *urls[8];
	const cJSON *res[8];
	char *tmp = cli_tmpdir(), *script;
	cJSON *events;

	(void)state;
	mock_set_default(canary, &hit);
	mock_set_default(redir, &moved);
	urls[0] = xasprintf("http://127.0.0.1:%d/", cp);
	urls[1] = xasprintf("http://2130706433:%d/", cp);
	urls[2] = xasprintf("http://0x7f000001:%d/", cp);
	urls[3] = xasprintf("http://127.1:%d/", cp);
	urls[4] = xasprintf("http://localhost:%d/", cp);
	urls[5] = xasprintf("http://0177.0.0.1:%d/", cp);
	urls[6] = xasprintf("http://[::ffff:127.0.0.1]:%d/", cp);
	urls[7] = xasprintf("http://127.0.0.1:%d/go", mock_port(redir)); /* not allowed either */
	script = write_script(tmp, (const char *const *)urls, 8);
	events = run(tmp, script, NULL);

	assert_int_equal(http_results(events, res, 8), 8);
	for (int i = 0; i < 8; i++)
		assert_refused(res[i]);
	assert_non_null(strstr(jsonx_str(res[4], "summary"), "for \"localhost\": loopback"));
	assert_int_equal(mock_connections(canary), 0);
	assert_int_equal(mock_request_count(canary), 0);
	assert_int_equal(mock_connections(redir), 0);

	cJSON_Delete(events);
	cli_rm_rf(tmp);
	for (int i = 0; i < 8; i++)
		free(urls[i]);
	free(script);
	free(tmp);
	free(location);
	mock_stop(canary);
	mock_stop(redir);
}

/* http_allow_hosts = 127.0.0.1: that host is reached, and its redirect to "localhost" (the
 * same machine under a name that is not allowed) is refused before it connects. */
static void test_redirect_from_allowed_host_refused(void **state)
{
	struct mock *canary = mock_start(), *redir = mock_start(), *ok = mock_start();
	const struct mock_reply hit = {.body = "canary"};
	const struct mock_reply page = {.content_type = "text/plain", .body = "allowed page"};
	char *location = xasprintf("Location: http://localhost:%d/\n", mock_port(canary));
	const struct mock_reply moved = {.status = 302, .headers = location, .body = ""};
	char *urls[2];
	const cJSON *res[2];
	char *tmp = cli_tmpdir(), *script, *config = xasprintf("%s/config", tmp);
	FILE *f = fopen(config, "w");
	cJSON *events;

	(void)state;
	assert_non_null(f);
	fputs("[tools]\nhttp_allow_hosts = 127.0.0.1\n", f);
	assert_int_equal(fclose(f), 0);
	mock_set_default(canary, &hit);
	mock_set_default(redir, &moved);
	mock_set_default(ok, &page);
	urls[0] = xasprintf("http://127.0.0.1:%d/page", mock_port(ok));
	urls[1] = xasprintf("http://127.0.0.1:%d/go", mock_port(redir));
	script = write_script(tmp, (const char *const *)urls, 2);
	events = run(tmp, script, config);

	assert_int_equal(http_results(events, res, 2), 2);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res[0], "ok")));
	assert_non_null(strstr(jsonx_str(res[0], "summary"), "allowed page"));
	assert_int_equal(mock_request_count(ok), 1);
	assert_refused(res[1]);
	assert_non_null(strstr(jsonx_str(res[1], "summary"), "redirected to"));
	assert_int_equal(mock_request_count(redir), 1);
	assert_int_equal(mock_connections(canary), 0);
	assert_int_equal(mock_request_count(canary), 0);

	cJSON_Delete(events);
	cli_rm_rf(tmp);
	free(urls[0]);
	free(urls[1]);
	free(script);
	free(config);
	free(tmp);
	free(location);
	mock_stop(canary);
	mock_stop(redir);
	mock_stop(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_addresses_refused),
		cmocka_unit_test(test_redirect_from_allowed_host_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
