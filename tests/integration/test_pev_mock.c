/* test_pev_mock — whole PEV runs through a real provider, libcurl and the mock server, for
 * both APIs: the run passes, a provider retry reaches the operator as llm.retry, the
 * journal's costs are the price table's for the mock's usage figures, and no file of the
 * run holds the API key. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "bus.h"
#include "cost.h"
#include "events.h"
#include "gate.h"
#include "http.h"
#include "journal.h"
#include "jsonx.h"
#include "mock_llm.h"
#include "pev.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "settings.h"
#include "testdir.h"
#include "xalloc.h"

#define KEY "sk-secret-0123456789-ABCDEFGHIJKLMNOP"

static const char plan_text[] =
	"Here is the plan.\n```json\n"
	"{\"goal\":\"answer\",\"context\":\"mock\",\"steps\":[{\"step_id\":\"s1\",\"name\":"
	"\"Find it\",\"description\":\"Work out the answer.\",\"actions\":[],"
	"\"acceptance_criteria\":[\"the answer is given\"],\"expected_outputs\":[],"
	"\"dependencies\":[],\"estimated_complexity\":\"low\"}],\"success_criteria\":"
	"[\"answered\"],\"rollback_strategy\":\"none\"}\n```\n";
static const char result_text[] =
	"{\"reasoning\":\"thought\",\"actions_taken\":[\"thought about it\"],\"step_output\":"
	"{\"findings\":\"The answer is 42.\",\"artifacts\":[],\"meets_criteria\":true},"
	"\"confidence\":0.9,\"notes\":\"\"}";
static const char verdict_text[] =
	"{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"the answer is given\","
	"\"passed\":true,\"evidence\":\"42\",\"confidence\":0.9,\"feedback\":\"\"}],"
	"\"action\":\"pass\",\"severity\":\"minor\"}";

/* Usage the mock reports per role, and the price of each call by the table. */
struct role_script {
	const char *model;
	long in, out;
	double cost; /* USD, worked out by hand from data/prices.tsv */
};

struct seen {
	pthread_mutex_t lock;
	int retries;
	char *retry_json;
};

static void on_event(void *ctx, const struct event *ev)
{
	struct seen *s = ctx;

	if (ev->type != EV_LLM_RETRY)
		return;
	pthread_mutex_lock(&s->lock);
	s->retries++;
	free(s->retry_json);
	s->retry_json = xstrdup(ev->json);
	pthread_mutex_unlock(&s->lock);
}

static bool collect(void *ctx, const struct event *ev)
{
	cJSON_AddItemToArray(ctx, cJSON_Parse(ev->json));
	return true;
}

static char *needle(const char *model)
{
	return xasprintf("\"model\":\"%s\"", model);
}

static void push_text(struct mock *m, bool anthropic, const struct role_script *r,
		      const char *text)
{
	char *body = anthropic ? mock_anthropic_text_sse(r->model, text, r->in, r->out)
			       : mock_openai_text_sse(r->model, text, r->in, r->out);
	char *n = needle(r->model);
	struct mock_reply reply = {.body = body, .chunk = 40};

	mock_push_for(m, n, &reply);
	free(body);
	free(n);
}

static void assert_file_has_no_key(const char *path)
{
	char *text = mock_read_file(path);

	for (size_t i = 0; i + 8 <= strlen(KEY); i++) {
		char frag[9];

		memcpy(frag, KEY + i, 8);
		frag[8] = '\0';
		if (strstr(text, frag))
			fail_msg("%s holds part of the API key", path);
	}
	free(text);
}

static void assert_dir_has_no_key(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char *path;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			assert_dir_has_no_key(path);
		else if (S_ISREG(st.st_mode))
			assert_file_has_no_key(path);
		free(path);
	}
	closedir(d);
}

static void whole_run(bool anthropic, const struct role_script roles[3],
		      const struct role_script *synth)
{
	char dir[] = "/tmp/pevtui-test-pev-mock-XXXXXX";
	struct mock *m = mock_start();
	struct settings s;
	struct provider *p, *per_role[ROLE__COUNT];
	struct bus *bus = bus_new();
	struct gatekeeper *gates;
	struct pev *e;
	struct seen seen = {.retries = 0};
	struct http_options fast = {.backoff_base_ms = 10, .backoff_cap_ms = 20,
				    .idle_timeout_ms = 5000};
	char *url, *err = NULL, *run_dir, *journal, *cmd;
	struct journal_load_info info = {0};
	cJSON *events = cJSON_CreateArray(), *ev;
	int calls = 0;
	double total = 0.0;

	assert_non_null(mkdtemp(dir));
	pthread_mutex_init(&seen.lock, NULL);
	cost_reset();
	url = mock_url(m, anthropic ? "" : "/v1");
	p = anthropic ? provider_anthropic_new(url, KEY, &err)
		      : provider_openai_new(url, KEY, &err);
	assert_non_null(p);
	if (anthropic)
		provider_anthropic_set_http(p, &fast);
	else
		provider_openai_set_http(p, &fast);

	/* Script: plan, execute (after one 429), verify, final check, synthesis. */
	push_text(m, anthropic, &roles[ROLE_PLANNER], plan_text);
	{
		char *n = needle(roles[ROLE_EXECUTOR].model);
		struct mock_reply limited = {
		    .status = 429,
		    .headers = "retry-after-ms: 30\n",
		    .body = anthropic
				? "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
				  "\"message\":\"slow down\"}}"
				: "{\"error\":{\"message\":\"slow down\",\"type\":\"requests\","
				  "\"code\":\"rate_limit_exceeded\"}}",
		};

		mock_push_for(m, n, &limited);
		free(n);
	}
	push_text(m, anthropic, &roles[ROLE_EXECUTOR], result_text);
	push_text(m, anthropic, &roles[ROLE_VERIFIER], verdict_text);
	push_text(m, anthropic, &roles[ROLE_VERIFIER], verdict_text);
	push_text(m, anthropic, synth, "The answer is 42.");

	settings_init(&s);
	s.task = xstrdup("What is the answer?");
	for (int r = 0; r < ROLE__COUNT; r++) {
		s.model[r] = xstrdup(roles[r].model);
		per_role[r] = p;
	}
	s.gates = 0;
	cmd = xasprintf("%s/runs", dir);
	mkdir(cmd, 0700);
	run_dir = xasprintf("%s/run1", cmd);
	free(cmd);
	gates = gatekeeper_new(bus, s.gates, GATE_MODE_YES);
	bus_subscribe(bus, on_event, &seen);
	e = pev_new(&s, per_role, bus, gates, run_dir, PEV_OPEN_NEW, &err);
	if (!e)
		fail_msg("pev_new: %s", err);
	pev_start(e);
	if (pev_join(e) != PEV_EXIT_OK) {
		char *j = xasprintf("%s/journal.jsonl", run_dir), *text = mock_read_file(j);

		/* The whole journal, to see where the run went astray. */
		fprintf(stderr, "%s\n", text);
		fail_msg("run failed: %s", pev_end_reason(e) ? pev_end_reason(e) : "?");
	}
	pev_free(e);

	/* The operator saw the retry, with the provider's words and the wait. */
	assert_int_equal(seen.retries, 1);
	assert_non_null(strstr(seen.retry_json, "429"));
	assert_non_null(strstr(seen.retry_json, "slow down"));
	assert_int_equal(mock_pending(m), 0);

	/* Every llm.call is priced exactly by the table for the mock's figures. */
	journal = xasprintf("%s/journal.jsonl", run_dir);
	assert_true(journal_load(journal, collect, events, &info, &err));
	cJSON_ArrayForEach(ev, events)
	{
		const char *type = jsonx_str(ev, "type"), *model;
		const struct role_script *want = NULL;
		double in = -1, out = -1, cost = -1;

		if (!type || strcmp(type, "llm.call"))
			continue;
		calls++;
		model = jsonx_str(ev, "model");
		assert_non_null(model);
		assert_string_equal(jsonx_str(ev, "status"), "ok");
		for (int r = 0; r < ROLE__COUNT; r++)
			if (!strcmp(model, roles[r].model))
				want = &roles[r];
		assert_non_null(want);
		assert_true(jsonx_num(ev, "input_tokens", &in));
		assert_true(jsonx_num(ev, "output_tokens", &out));
		assert_true(jsonx_num(ev, "cost_usd", &cost));
		if (want == &roles[ROLE_PLANNER] && in == synth->in)
			want = synth;
		assert_true(in == want->in && out == want->out);
		if (cost < want->cost - 1e-12 || cost > want->cost + 1e-12)
			fail_msg("%s: cost %.9f, table says %.9f", model, cost, want->cost);
		total += cost;
	}
	assert_int_equal(calls, 5);
	assert_true(total > 0);
	assert_dir_has_no_key(run_dir);

	assert_true(testdir_remove(dir));
	cJSON_Delete(events);
	free(journal);
	free(run_dir);
	free(url);
	free(seen.retry_json);
	pthread_mutex_destroy(&seen.lock);
	gatekeeper_free(gates);
	bus_free(bus);
	settings_release(&s);
	provider_free(p);
	mock_stop(m);
	http_thread_cleanup();
}

static void test_whole_run_anthropic(void **state)
{
	/* µ$: opus 1000*5 + 500*25; sonnet 2000*3 + 300*15; haiku 800*1 + 100*5;
	 * opus (synthesis) 600*5 + 200*25. Cached tokens: none in this script. */
	const struct role_script roles[3] = {
		{"claude-opus-4-5", 1000, 500, 0.0175},
		{"claude-sonnet-4-5", 2000, 300, 0.0105},
		{"claude-haiku-4-5", 800, 100, 0.0013},
	};
	const struct role_script synth = {"claude-opus-4-5", 600, 200, 0.008};

	whole_run(true, roles, &synth);
}

static void test_whole_run_openai(void **state)
{
	/* µ$: gpt-5 1000*1.25 + 500*10; gpt-5-mini 2000*0.25 + 300*2; gpt-5-nano 800*0.05 +
	 * 100*0.40; gpt-5 (synthesis) 600*1.25 + 200*10. */
	const struct role_script roles[3] = {
		{"gpt-5", 1000, 500, 0.00625},
		{"gpt-5-mini", 2000, 300, 0.0011},
		{"gpt-5-nano", 800, 100, 0.00008},
	};
	const struct role_script synth = {"gpt-5", 600, 200, 0.00275};

	whole_run(false, roles, &synth);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_run_anthropic),
		cmocka_unit_test(test_whole_run_openai),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	cost_reset();
	return rc;
}
