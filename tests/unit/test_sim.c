/* test_sim — the simulated provider driven like the engine drives it, and the lookup tool. */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "plan.h"
#include "provider.h"
#include "provider_sim.h"
#include "result.h"
#include "sandbox.h"
#include "sim_embedded.h"
#include "strbuf.h"
#include "tool.h"
#include "testdir.h"
#include "xalloc.h"

extern const struct tool_def tool_lookup;

/* ---- helpers ------------------------------------------------------------------------ */

struct ws {
	char dir[64];
	int fd;
};

static void ws_open(struct ws *w)
{
	char *err = NULL;

	strcpy(w->dir, "/tmp/test_sim.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	w->fd = sandbox_open_root(w->dir, &err);
	assert_true(w->fd >= 0);
	free(err);
}

static void ws_close(struct ws *w)
{
	close(w->fd);
	assert_true(testdir_remove(w->dir));
}

static void seed_write(void *ctx, const char *rel, const char *content)
{
	struct ws *w = ctx;
	char *path = xasprintf("%s/%s", w->dir, rel);
	char *slash = strrchr(path, '/');
	FILE *f;

	/* Seeds are at most one folder deep in the built-in scenarios. */
	*slash = '\0';
	mkdir(path, 0755);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
	free(path);
}

static long file_size(const struct ws *w, const char *rel)
{
	char *path = xasprintf("%s/%s", w->dir, rel);
	struct stat st;
	long n = stat(path, &st) == 0 ? (long)st.st_size : -1;

	free(path);
	return n;
}

static const struct tool_def *find_tool(const char *name)
{
	const struct tool_def *t = tool_find(name);

	if (!t && !strcmp(name, "lookup"))
		t = &tool_lookup; /* the registry may not list it yet */
	return t;
}

static char *write_temp_script(const char *text)
{
	char *path = xstrdup("/tmp/test_sim_script.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static cJSON *embedded_script(const char *name)
{
	for (size_t i = 0; sim_embedded[i].name; i++)
		if (!strcmp(sim_embedded[i].name, name))
			return cJSON_Parse(sim_embedded[i].json);
	return NULL;
}

/* A call without streaming hooks. */
static int call(struct provider *p, struct llm_request *req, struct llm_response *out)
{
	char *err = NULL;
	int rc = provider_complete(p, req, NULL, out, &err);

	if (rc != PROVIDER_OK)
		fprintf(stderr, "provider error: %s\n", err ? err : "(none)");
	free(err);
	return rc;
}

static struct plan *ask_plan(struct provider *p, const char *task, enum llm_purpose purpose)
{
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"Make a plan."};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = purpose, .task = task,
				  .model = "sim-planner", .msgs = &user, .n_msgs = 1};
	struct llm_response out;
	struct strvec errs = STRVEC_INIT;
	struct plan *pl;

	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	pl = plan_parse(out.text, &errs);
	if (!pl)
		fprintf(stderr, "plan_parse: %s\n", errs.n ? errs.v[0] : "?");
	assert_non_null(pl);
	assert_true(plan_validate(pl, &errs));
	assert_int_equal(errs.n, 0);
	strvec_clear(&errs);
	llm_response_release(&out);
	return pl;
}

struct attempt_out {
	struct exec_result *res;
	int n_rounds;
	int n_tool_errors;
	struct strvec tools_failed;
};

static void attempt_out_free(struct attempt_out *a)
{
	exec_result_free(a->res);
	strvec_clear(&a->tools_failed);
	memset(a, 0, sizeof(*a));
}

/* Runs one executor attempt like the engine: tool rounds with the real tools in `w`, then
 * the final result, which must parse. */
static void run_attempt(struct provider *p, struct ws *w, const char *task,
			const struct plan_step *st, int attempt, struct attempt_out *ao)
{
	struct llm_msg *msgs = xcalloc(64, sizeof(*msgs));
	size_t n = 0;
	char *step_json = plan_step_to_string(st, false);
	struct tool_env env = {.ws_fd = w->fd, .ws_path = w->dir, .demo = true};
	char *err = NULL;

	memset(ao, 0, sizeof(*ao));
	msgs[n].kind = LLM_MSG_USER;
	msgs[n++].text = xstrdup("Execute the step.");
	for (;;) {
		struct llm_request req = {.role = ROLE_EXECUTOR, .purpose = PURPOSE_EXECUTE,
					  .step_id = st->id, .attempt = attempt, .task = task,
					  .step_json = step_json, .model = "sim-executor",
					  .msgs = msgs, .n_msgs = n};
		struct llm_response out;
		struct llm_msg *res;

		assert_int_equal(call(p, &req, &out), PROVIDER_OK);
		if (!out.n_calls) {
			assert_string_equal(out.stop_reason, "end_turn");
			ao->res = exec_result_parse(out.text, &err);
			if (!ao->res)
				fprintf(stderr, "%s attempt %d: %s\n%s\n", st->id, attempt, err,
					out.text);
			assert_non_null(ao->res);
			llm_response_release(&out);
			break;
		}
		assert_string_equal(out.stop_reason, "tool_use");
		assert_true(n + 2 < 64);
		ao->n_rounds++;
		res = &msgs[n + 1];
		res->kind = LLM_MSG_TOOL_RESULTS;
		res->results = xcalloc(out.n_calls, sizeof(*res->results));
		res->n_results = out.n_calls;
		for (size_t i = 0; i < out.n_calls; i++) {
			const struct tool_def *t = find_tool(out.calls[i].name);
			cJSON *in = cJSON_Parse(out.calls[i].input_json);
			struct strbuf sb = STRBUF_INIT;
			bool ok;

			assert_non_null(t);
			assert_true(cJSON_IsObject(in));
			assert_non_null(strstr(out.calls[i].id, "toolu_sim_"));
			strbuf_init(&sb);
			ok = t->run(&env, in, &sb);
			if (!ok) {
				fprintf(stderr, "note: %s attempt %d: %s failed: %s\n", st->id,
					attempt, t->name, sb.buf);
				ao->n_tool_errors++;
				strvec_push(&ao->tools_failed, t->name);
			}
			res->results[i].call_id = xstrdup(out.calls[i].id);
			res->results[i].content = strbuf_detach(&sb);
			res->results[i].is_error = !ok;
			cJSON_Delete(in);
		}
		msgs[n].kind = LLM_MSG_ASSISTANT;
		msgs[n].text = out.text;
		msgs[n].calls = out.calls;
		msgs[n].n_calls = out.n_calls;
		out.text = NULL;
		out.calls = NULL;
		out.n_calls = 0;
		llm_response_release(&out);
		n += 2;
	}
	free(err);
	for (size_t i = 0; i < n; i++)
		llm_msg_release(&msgs[i]);
	free(msgs);
	free(step_json);
}

static struct verdict *ask_verdict(struct provider *p, const struct plan_step *st, int attempt)
{
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"Verify."};
	char *step_json = st ? plan_step_to_string(st, false) : NULL;
	struct llm_request req = {.role = ROLE_VERIFIER,
				  .purpose = st ? PURPOSE_VERIFY : PURPOSE_FINAL_CHECK,
				  .step_id = st ? st->id : NULL, .attempt = st ? attempt : 0,
				  .step_json = step_json, .model = "sim-verifier", .msgs = &user,
				  .n_msgs = 1};
	struct llm_response out;
	char *err = NULL;
	struct verdict *v;

	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	v = verdict_parse(out.text, &err);
	if (!v)
		fprintf(stderr, "verdict_parse: %s\n%s\n", err, out.text);
	assert_non_null(v);
	free(err);
	free(step_json);
	llm_response_release(&out);
	return v;
}

static char *ask_synthesis(struct provider *p, const char *task)
{
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"Synthesize."};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_SYNTHESIZE,
				  .task = task, .model = "sim-planner", .msgs = &user,
				  .n_msgs = 1};
	struct llm_response out;
	char *text;

	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	text = out.text;
	out.text = NULL;
	llm_response_release(&out);
	return text;
}

/* The action the script gives for a step's attempt ("pass" when it scripts none). */
static const char *scripted_action(const cJSON *script, const char *step_id, int attempt)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(script, "verifier"), step_id);
	int n = cJSON_GetArraySize(list);
	const cJSON *v, *a;

	if (n == 0)
		return "pass";
	v = cJSON_GetArrayItem(list, attempt > n ? n - 1 : attempt - 1);
	a = cJSON_GetObjectItemCaseSensitive(v, "action");
	return cJSON_IsString(a) ? a->valuestring : "?";
}

static int scripted_attempts(const cJSON *script, const char *step_id)
{
	int e = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(script, "executor"), step_id));
	int v = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(script, "verifier"), step_id));

	return (e > v ? e : v) + 1; /* one more to see the last entry repeat */
}

/* ---- every built-in scenario, driven like the engine -------------------------------- */

struct drive {
	struct plan *plans[8];
	int n_plans;
	char *synthesis;
	struct verdict *final_check;
};

static void drive_free(struct drive *d)
{
	for (int i = 0; i < d->n_plans; i++)
		plan_free(d->plans[i]);
	free(d->synthesis);
	verdict_free(d->final_check);
}

/* Checks one step over its scripted attempts: results parse, artifacts are where the
 * result claims (except the empty one legal-review scripts on purpose), and each verdict
 * carries the scripted action. True when the last attempt passed. */
static bool drive_step(const char *name, struct provider *p, struct ws *w, const cJSON *script,
		       const char *task, const struct plan_step *st)
{
	int attempts = scripted_attempts(script, st->id);
	bool passed = false;

	for (int a = 1; a <= attempts; a++) {
		struct attempt_out ao;
		struct verdict *v;
		const char *want = scripted_action(script, st->id, a);

		run_attempt(p, w, task, st, a, &ao);
		assert_true(ao.res->confidence >= 0.5);
		for (size_t i = 0; i < ao.res->artifacts.n; i++) {
			long sz = file_size(w, ao.res->artifacts.v[i]);
			bool empty_on_purpose = !strcmp(name, "legal-review") &&
						!strcmp(st->id, "brightline") && a == 1;

			assert_true(sz >= 0);
			if (empty_on_purpose)
				assert_int_equal(sz, 0);
			else
				assert_true(sz > 0);
		}
		/* Stage 1 of the engine: every failed tool is mentioned in notes. */
		for (size_t i = 0; i < ao.tools_failed.n; i++)
			assert_non_null(strstr(ao.res->notes, ao.tools_failed.v[i]));
		if (!strcmp(name, "flaky-search") && !strcmp(st->id, "history")) {
			if (a == 1) {
				assert_int_equal(ao.n_tool_errors, 1);
				assert_non_null(strstr(ao.res->findings, "HTTP 504"));
			} else {
				assert_int_equal(ao.n_tool_errors, 0);
				assert_non_null(strstr(ao.res->findings, "48,200"));
			}
		} else {
			assert_int_equal(ao.n_tool_errors, 0);
		}
		v = ask_verdict(p, st, a);
		assert_string_equal(verdict_action_name(v->action), want);
		assert_int_equal(v->overall_pass, v->action == VERDICT_PASS);
		if (v->action != VERDICT_PASS)
			assert_true(v->feedback && strlen(v->feedback) > 40);
		for (size_t i = 0; i < v->n_criteria; i++)
			assert_true(v->criteria[i].evidence && *v->criteria[i].evidence);
		assert_int_equal(v->n_criteria, st->criteria.n);
		passed = v->action == VERDICT_PASS;
		verdict_free(v);
		attempt_out_free(&ao);
	}
	return passed;
}

static bool deps_passed(const struct plan_step *st, const struct strvec *passed)
{
	for (size_t i = 0; i < st->deps.n; i++) {
		bool found = false;

		for (size_t k = 0; k < passed->n && !found; k++)
			found = !strcmp(passed->v[k], st->deps.v[i]);
		if (!found)
			return false;
	}
	return true;
}

static void drive_scenario(const char *name, const char *task, struct drive *d)
{
	char *err = NULL;
	struct provider *p = provider_sim_new(name, NULL, 0, &err);
	cJSON *script = embedded_script(name);
	int n_planner = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(script, "planner"));
	struct ws w;

	assert_non_null(p);
	assert_null(err);
	assert_true(p->simulated);
	assert_true(n_planner >= 1 && n_planner <= 7);
	ws_open(&w);
	sim_scenario_seed(name, seed_write, &w);
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < n_planner; i++)
		d->plans[d->n_plans++] =
			ask_plan(p, task, i ? PURPOSE_REPLAN : PURPOSE_PLAN);
	/* Every step of every plan revision whose dependencies passed, in dependency order,
	 * as the engine would run them. */
	for (int i = 0; i < d->n_plans; i++) {
		size_t *order = plan_topo_order(d->plans[i]);
		struct strvec passed = STRVEC_INIT;

		for (size_t k = 0; k < d->plans[i]->n_steps; k++) {
			const struct plan_step *st = &d->plans[i]->steps[order[k]];

			if (!deps_passed(st, &passed))
				continue;
			if (drive_step(name, p, &w, script, task, st))
				strvec_push(&passed, st->id);
		}
		strvec_clear(&passed);
		free(order);
	}
	d->final_check = ask_verdict(p, NULL, 0);
	d->synthesis = ask_synthesis(p, task);
	assert_true(strlen(d->synthesis) > 40);
	ws_close(&w);
	cJSON_Delete(script);
	provider_free(p);
}

static void test_every_scenario_drives(void **state)
{
	const char *const *names = sim_scenario_names();
	int n = 0;

	(void)state;
	for (; names[n]; n++) {
		struct drive d;

		/* mcp calls an MCP server's tools: tests/integration/test_mcp_run drives it. */
		if (!strcmp(names[n], "mcp"))
			continue;
		drive_scenario(names[n], sim_scenario_task(names[n]), &d);
		drive_free(&d);
	}
	assert_int_equal(n, 9); /* the seven of old, checkpoints and mcp */
}

static void test_generic_uses_the_task(void **state)
{
	/* Quotes and a backslash must survive into valid plan JSON. */
	const char *task = "Plan a \"tiny\" launch party for C:\\team";
	struct drive d;

	(void)state;
	drive_scenario("generic", task, &d);
	assert_string_equal(d.plans[0]->goal, task);
	assert_true(d.plans[0]->n_steps >= 3 && d.plans[0]->n_steps <= 4);
	assert_non_null(strstr(d.synthesis, task));
	assert_true(d.final_check->overall_pass);
	drive_free(&d);
}

static void test_density_story(void **state)
{
	struct drive d;
	int s0, s1;

	(void)state;
	drive_scenario("density", sim_scenario_task("density"), &d);
	assert_true(d.n_plans >= 3); /* first plan + two replans */
	for (int i = 1; i < d.n_plans; i++) {
		const char *kept[] = {"population", "area"};

		for (int k = 0; k < 2; k++) {
			s0 = plan_find(d.plans[0], kept[k]);
			s1 = plan_find(d.plans[i], kept[k]);
			assert_true(s0 >= 0 && s1 >= 0);
			assert_true(
				plan_step_equal(&d.plans[0]->steps[s0], &d.plans[i]->steps[s1]));
		}
		assert_true(plan_find(d.plans[i], "density") >= 0);
	}
	assert_int_equal(strncmp(d.synthesis, "PARTIAL:", 8), 0);
	assert_false(d.final_check->overall_pass);
	drive_free(&d);
}

static void test_density_fails_at_every_attempt(void **state)
{
	/* 3 attempts x 3 plan revisions: the step must never pass, so it is fail-accepted. */
	char *err = NULL;
	struct provider *p = provider_sim_new("density", NULL, 0, &err);
	struct plan *pl = ask_plan(p, NULL, PURPOSE_PLAN);
	int i = plan_find(pl, "density");

	(void)state;
	assert_true(i >= 0);
	/* A resumed run starts with a fresh provider: its first replan is still a revision. */
	{
		struct provider *fresh = provider_sim_new("density", NULL, 0, &err);
		struct plan *rev = ask_plan(fresh, NULL, PURPOSE_REPLAN);
		int k = plan_find(rev, "density");

		assert_true(k >= 0);
		assert_false(plan_step_equal(&pl->steps[i], &rev->steps[k]));
		plan_free(rev);
		provider_free(fresh);
	}
	for (int a = 1; a <= 9; a++) {
		struct verdict *v = ask_verdict(p, &pl->steps[i], a);

		assert_int_equal(v->action, VERDICT_RETRY);
		verdict_free(v);
	}
	plan_free(pl);
	provider_free(p);
}

static void test_replan_story(void **state)
{
	struct drive d;
	int a, b;

	(void)state;
	drive_scenario("replan", sim_scenario_task("replan"), &d);
	assert_int_equal(d.n_plans, 2);
	a = plan_find(d.plans[0], "network");
	b = plan_find(d.plans[1], "network");
	assert_true(a >= 0 && b >= 0);
	assert_true(plan_step_equal(&d.plans[0]->steps[a], &d.plans[1]->steps[b]));
	assert_true(plan_find(d.plans[0], "boardings") >= 0);
	assert_int_equal(plan_find(d.plans[1], "boardings"), -1);
	assert_true(plan_find(d.plans[1], "boardings-official") >= 0);
	drive_free(&d);
}

static void test_legal_and_dag_shapes(void **state)
{
	struct drive d;
	int m, high = 0, joins = 0;

	(void)state;
	drive_scenario("legal-review", NULL, &d);
	for (size_t i = 0; i < d.plans[0]->n_steps; i++)
		high += d.plans[0]->steps[i].complexity == CX_HIGH;
	assert_int_equal(high, 1);
	drive_free(&d);

	drive_scenario("dag", NULL, &d);
	assert_int_equal(d.plans[0]->n_steps, 4);
	for (size_t i = 0; i < d.plans[0]->n_steps; i++) {
		if (d.plans[0]->steps[i].deps.n == 3)
			joins++;
		else
			assert_int_equal(d.plans[0]->steps[i].deps.n, 0);
	}
	assert_int_equal(joins, 1);
	m = plan_find(d.plans[0], "recommend");
	assert_true(m >= 0 && d.plans[0]->steps[m].deps.n == 3);
	drive_free(&d);
}

static void test_plans_show_fences(void **state)
{
	/* The demo shows the parser tolerating prose and a fenced block. */
	char *err = NULL;
	struct provider *p = provider_sim_new("legal-review", NULL, 0, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"plan"};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_PLAN, .msgs = &user,
				  .n_msgs = 1};
	struct llm_response out;

	(void)state;
	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	assert_non_null(strstr(out.text, "```json\n{"));
	assert_true(out.text[0] != '{' && out.text[0] != '`');
	llm_response_release(&out);
	provider_free(p);
}

/* ---- streaming, cancel, usage ------------------------------------------------------- */

struct collect {
	struct strbuf sb;
	int chunks;
	bool bad_boundary;
	size_t longest;
	atomic_bool *cancel_after_first;
};

static void on_delta(void *ctx, const char *text, size_t len)
{
	struct collect *c = ctx;

	if (len && ((unsigned char)text[0] & 0xC0) == 0x80)
		c->bad_boundary = true;
	if (len > c->longest)
		c->longest = len;
	strbuf_add(&c->sb, text, len);
	c->chunks++;
	if (c->cancel_after_first)
		atomic_store(c->cancel_after_first, true);
}

static const char utf8_script[] =
	"{\"task\": \"t\", \"synthesis\": \"Zürich — naïve café ✓ 日本語のテキスト, "
	"ünïcödé ✓✓✓ and plain ASCII to finish the line.\"}";

static void test_streaming_matches_text(void **state)
{
	char *path = write_temp_script(utf8_script);
	char *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);
	struct collect c = {STRBUF_INIT, 0, false, 0, NULL};
	struct llm_hooks hooks = {.ctx = &c, .on_delta = on_delta};
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"go"};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_SYNTHESIZE,
				  .model = "my-model", .system = "0123456789abcdef",
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;

	(void)state;
	assert_non_null(p);
	strbuf_init(&c.sb);
	assert_int_equal(provider_complete(p, &req, &hooks, &out, &err), PROVIDER_OK);
	assert_string_equal(c.sb.buf, out.text);
	assert_non_null(strstr(out.text, "日本語"));
	assert_true(c.chunks > 3);
	assert_true(c.longest <= 16);
	assert_false(c.bad_boundary);
	assert_string_equal(out.model, "my-model");
	assert_string_equal(out.stop_reason, "end_turn");
	assert_true(out.usage.reported);
	assert_int_equal(out.usage.input_tokens, (16 + 2) / 4);
	assert_int_equal(out.usage.output_tokens, (long)strlen(out.text) / 4);
	assert_int_equal(out.http_status, 0);
	llm_response_release(&out);
	strbuf_release(&c.sb);
	provider_free(p);
	unlink(path);
	free(path);
}

static void test_default_model_names(void **state)
{
	char *err = NULL;
	struct provider *p = provider_sim_new("generic", NULL, 0, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"x"};
	struct llm_request req = {.role = ROLE_VERIFIER, .purpose = PURPOSE_FINAL_CHECK,
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;

	(void)state;
	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	assert_string_equal(out.model, "sim-verifier");
	assert_true(out.usage.output_tokens >= 1);
	llm_response_release(&out);
	provider_free(p);
}

static void test_cancel(void **state)
{
	char *err = NULL;
	struct provider *p = provider_sim_new("generic", NULL, 1, &err);
	atomic_bool cancel = true;
	struct collect c = {STRBUF_INIT, 0, false, 0, NULL};
	struct llm_hooks hooks = {.ctx = &c, .on_delta = on_delta, .cancel = &cancel};
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"x"};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_SYNTHESIZE,
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;

	(void)state;
	strbuf_init(&c.sb);
	assert_int_equal(provider_complete(p, &req, &hooks, &out, &err), PROVIDER_CANCELLED);
	assert_int_equal(c.chunks, 0);
	/* Cancelled mid-stream: the flag is set by the first chunk. */
	atomic_store(&cancel, false);
	c.cancel_after_first = &cancel;
	assert_int_equal(provider_complete(p, &req, &hooks, &out, &err), PROVIDER_CANCELLED);
	assert_int_equal(c.chunks, 1);
	strbuf_release(&c.sb);
	provider_free(p);
}

static void test_delay_paces_the_stream(void **state)
{
	char *err = NULL;
	struct provider *p = provider_sim_new("generic", NULL, 5, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"x"};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_SYNTHESIZE,
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;
	size_t chunks;

	(void)state;
	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	chunks = (strlen(out.text) + 15) / 16;
	/* One pause between consecutive chunks. */
	assert_true(out.latency_ms >= (long)(chunks - 1) * 5);
	llm_response_release(&out);
	provider_free(p);
}

/* ---- threads -------------------------------------------------------------------------- */

struct thr {
	struct provider *p;
	struct strvec ids;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"x"};

	for (int i = 0; i < 40; i++) {
		struct llm_request req = {.role = ROLE_EXECUTOR, .purpose = PURPOSE_EXECUTE,
					  .step_id = "gather", .attempt = 1, .msgs = &user,
					  .n_msgs = 1};
		struct llm_response out;
		char *err = NULL;

		if (provider_complete(t->p, &req, NULL, &out, &err) != PROVIDER_OK) {
			free(err);
			continue;
		}
		for (size_t k = 0; k < out.n_calls; k++)
			strvec_push(&t->ids, out.calls[k].id);
		llm_response_release(&out);
	}
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_parallel_calls_get_unique_ids(void **state)
{
	char *err = NULL;
	struct provider *p = provider_sim_new("generic", NULL, 0, &err);
	struct thr t[4];
	pthread_t th[4];
	struct strvec all = STRVEC_INIT;

	(void)state;
	for (int i = 0; i < 4; i++) {
		t[i].p = p;
		memset(&t[i].ids, 0, sizeof(t[i].ids));
		assert_int_equal(pthread_create(&th[i], NULL, thread_main, &t[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		for (size_t k = 0; k < t[i].ids.n; k++)
			strvec_push(&all, t[i].ids.v[k]);
		strvec_clear(&t[i].ids);
	}
	assert_int_equal(all.n, 160);
	qsort(all.v, all.n, sizeof(*all.v), cmp_str);
	for (size_t k = 1; k < all.n; k++)
		assert_string_not_equal(all.v[k - 1], all.v[k]);
	strvec_clear(&all);
	provider_free(p);
}

/* ---- script mode ---------------------------------------------------------------------- */

static const char good_script[] =
	"{\"task\": \"count the {{task}} birds\",\n"
	" \"about\": \"a test\",\n"
	" \"seed\": {\"in/data.txt\": \"3 crows\"},\n"
	" \"planner\": [\"Plan for {{task}}:\\n```json\\n{\\\"goal\\\": \\\"{{task}}\\\", "
	"\\\"context\\\": \\\"\\\", \\\"steps\\\": [{\\\"step_id\\\": \\\"a\\\", \\\"name\\\": "
	"\\\"Count\\\", \\\"description\\\": \\\"Count them\\\", \\\"actions\\\": [], "
	"\\\"acceptance_criteria\\\": [\\\"c1\\\", \\\"c2\\\"], \\\"expected_outputs\\\": [], "
	"\\\"dependencies\\\": [], \\\"estimated_complexity\\\": \\\"low\\\"}], "
	"\\\"success_criteria\\\": [\\\"done\\\"], "
	"\\\"rollback_strategy\\\": \\\"none\\\"}\\n```\"],\n"
	" \"executor\": {\"a\": [{\"rounds\": [{\"text\": \"reading\", \"tool_calls\": "
	"[{\"name\": \"read_file\", \"input\": {\"path\": \"in/data.txt\"}}]}], "
	"\"final\": {\"reasoning\": \"saw {{tool_result}}\", \"actions_taken\": [], "
	"\"step_output\": {\"findings\": \"{{tool_result}} for {{task}}\", \"artifacts\": [], "
	"\"meets_criteria\": true}, \"confidence\": 0.7, \"notes\": \"step {{step_id}} try "
	"{{attempt}}\"}}]}\n"
	"}\n";

static void test_script_mode(void **state)
{
	char *path = write_temp_script(good_script);
	char *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);
	struct ws w;
	struct plan *pl;
	struct attempt_out ao;
	struct plan_step extra = {0};
	struct verdict *v;

	(void)state;
	assert_non_null(p);
	assert_string_equal(provider_sim_task(p), "count the {{task}} birds");
	ws_open(&w);
	provider_sim_seed(p, seed_write, &w);
	assert_int_equal(file_size(&w, "in/data.txt"), 7);
	pl = ask_plan(p, "owls", PURPOSE_PLAN);
	assert_string_equal(pl->goal, "owls");
	run_attempt(p, &w, "owls", &pl->steps[0], 1, &ao);
	assert_int_equal(ao.n_rounds, 1);
	assert_string_equal(ao.res->findings, "3 crows for owls");
	assert_string_equal(ao.res->notes, "step a try 1");
	attempt_out_free(&ao);

	/* A step the script does not know: the default attempt writes <id>.md and claims it,
	 * the default verdict passes each of its criteria. */
	extra.id = xstrdup("extra");
	extra.name = xstrdup("Extra step");
	extra.description = xstrdup("Describe the extra thing");
	strvec_push(&extra.criteria, "first criterion");
	strvec_push(&extra.criteria, "second criterion");
	strvec_push(&extra.criteria, "third criterion");
	run_attempt(p, &w, "owls", &extra, 1, &ao);
	assert_int_equal(ao.n_rounds, 1);
	assert_int_equal(ao.res->artifacts.n, 1);
	assert_string_equal(ao.res->artifacts.v[0], "extra.md");
	assert_true(ao.res->confidence >= 0.9 - 1e-9);
	{
		char *fp = xasprintf("%s/extra.md", w.dir);
		char *body = testdir_slurp(fp);

		assert_non_null(body);
		assert_non_null(strstr(body, "# Extra step"));
		assert_non_null(strstr(body, "Describe the extra thing"));
		assert_non_null(strstr(body, "- second criterion"));
		free(body);
		free(fp);
	}
	attempt_out_free(&ao);
	v = ask_verdict(p, &extra, 1);
	assert_true(v->overall_pass);
	assert_int_equal(v->n_criteria, 3);
	assert_string_equal(v->criteria[2].criterion, "third criterion");
	verdict_free(v);
	v = ask_verdict(p, NULL, 0); /* default final check: the plan's success criteria */
	assert_true(v->overall_pass);
	assert_int_equal(v->n_criteria, 1);
	assert_string_equal(v->criteria[0].criterion, "done");
	verdict_free(v);

	plan_step_free_fields(&extra);
	plan_free(pl);
	ws_close(&w);
	provider_free(p);
	unlink(path);
	free(path);
}

static void test_planner_order_and_repeat(void **state)
{
	/* The engine's re-ask after an invalid plan takes the next entry; the last repeats. */
	static const char text[] =
		"{\"planner\": [\"no plan here\", {\"before\": \"Fixed:\", \"after\": "
		"\"Done.\", \"json\": {\"goal\": \"{{task}}\", \"context\": \"\", \"steps\": "
		"[{\"step_id\": \"x\", \"name\": \"X\", \"description\": \"d\", "
		"\"actions\": [], \"acceptance_criteria\": [\"ok\"], \"expected_outputs\": [], "
		"\"dependencies\": [], \"estimated_complexity\": \"low\"}], "
		"\"success_criteria\": [], \"rollback_strategy\": \"\"}}]}";
	char *path = write_temp_script(text);
	char *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"plan"};
	struct llm_request req = {.role = ROLE_PLANNER, .purpose = PURPOSE_PLAN, .task = "T",
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;
	struct strvec errs = STRVEC_INIT;
	struct plan *pl;

	(void)state;
	assert_non_null(p);
	assert_int_equal(call(p, &req, &out), PROVIDER_OK);
	assert_string_equal(out.text, "no plan here");
	assert_null(plan_parse(out.text, &errs));
	llm_response_release(&out);
	strvec_clear(&errs);
	for (int i = 0; i < 2; i++) {
		req.purpose = i ? PURPOSE_REPLAN : PURPOSE_PLAN;
		assert_int_equal(call(p, &req, &out), PROVIDER_OK);
		assert_int_equal(strncmp(out.text, "Fixed:\n\n```json\n{", 17), 0);
		assert_non_null(strstr(out.text, "\n```\n\nDone."));
		pl = plan_parse(out.text, &errs);
		assert_non_null(pl);
		assert_string_equal(pl->goal, "T");
		plan_free(pl);
		llm_response_release(&out);
	}
	strvec_clear(&errs);
	provider_free(p);
	unlink(path);
	free(path);
}

static void expect_bad_script(const char *text, const char *needle1, const char *needle2)
{
	char *path = write_temp_script(text);
	char *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);

	assert_null(p);
	assert_non_null(err);
	if (!strstr(err, needle1) || (needle2 && !strstr(err, needle2)))
		fprintf(stderr, "unexpected error: %s\n", err);
	assert_non_null(strstr(err, needle1));
	if (needle2)
		assert_non_null(strstr(err, needle2));
	assert_non_null(strstr(err, path));
	free(err);
	unlink(path);
	free(path);
}

static void test_bad_scripts(void **state)
{
	char *err = NULL;

	(void)state;
	expect_bad_script("{\"task\": \"x\", \"planer\": []}", "unknown key \"planer\"", NULL);
	expect_bad_script("{\"task\": 3}", "\"task\"", "must be a string");
	expect_bad_script("{\"planner\": \"just text\"}", "\"planner\"", "list");
	expect_bad_script("{\"planner\": [5]}", "\"planner\"[0]", NULL);
	expect_bad_script("{\n  \"task\": \"x\",\n  oops\n}", "not valid JSON", "line 3");
	expect_bad_script("[1, 2]", "one JSON object", NULL);
	expect_bad_script("{\"seed\": {\"../escape.txt\": \"x\"}}", "../escape.txt",
			  "inside the workspace");
	expect_bad_script("{\"seed\": {\"a.txt\": 1}}", "a.txt", "string");
	expect_bad_script("{\"executor\": {\"s1\": [{\"rounds\": [{\"text\": \"x\"}]}]}}",
			  "\"executor\".\"s1\"[0].rounds[0]", "tool_calls");
	expect_bad_script("{\"executor\": {\"s1\": [{\"rounds\": [], \"finale\": \"x\"}]}}",
			  "unknown key \"finale\"", NULL);
	expect_bad_script("{\"executor\": {\"s1\": [{\"rounds\": [{\"tool_calls\": [{\"input\": "
			  "{}}]}]}]}}",
			  "tool_calls[0]", "name");
	expect_bad_script("{\"verifier\": {\"s1\": []}}", "\"verifier\".\"s1\"", "at least one");
	expect_bad_script("{\"synthesis\": 12}", "\"synthesis\"", NULL);

	assert_null(provider_sim_new(NULL, "/nonexistent/dir/script.json", 0, &err));
	assert_non_null(strstr(err, "cannot open script"));
	assert_non_null(strstr(err, "/nonexistent/dir/script.json"));
	free(err);
}

static void test_unknown_scenario(void **state)
{
	char *err = NULL;

	(void)state;
	assert_null(provider_sim_new("nope", NULL, 0, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "unknown scenario \"nope\": choose one of "));
	for (const char *const *n = sim_scenario_names(); *n; n++)
		assert_non_null(strstr(err, *n));
	free(err);
	assert_null(sim_scenario_task("nope"));
	assert_null(sim_scenario_about("nope"));
}

static void count_seed(void *ctx, const char *rel, const char *content)
{
	int *n = ctx;

	assert_true(rel[0] != '/' && !strstr(rel, ".."));
	assert_true(strlen(content) > 0);
	(*n)++;
}

static void test_scenario_table(void **state)
{
	static const char *const want[] = {"generic", "flaky-search", "legal-review",
					   "density", "replan", "dag"};
	int seeds = 0;

	(void)state;
	for (size_t i = 0; i < 6; i++) {
		const char *t = sim_scenario_task(want[i]);
		const char *a = sim_scenario_about(want[i]);

		assert_non_null(t);
		assert_non_null(a);
		assert_true(strlen(t) > 20 && strlen(a) > 20);
		assert_null(strchr(a, '\n'));
	}
	sim_scenario_seed("legal-review", count_seed, &seeds);
	assert_int_equal(seeds, 3);
	seeds = 0;
	sim_scenario_seed("nope", count_seed, &seeds);
	assert_int_equal(seeds, 0);
}

static void test_step_calls_need_step_id(void **state)
{
	char *err = NULL;
	struct provider *p = provider_sim_new("generic", NULL, 0, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"x"};
	struct llm_request req = {.role = ROLE_EXECUTOR, .purpose = PURPOSE_EXECUTE,
				  .msgs = &user, .n_msgs = 1};
	struct llm_response out;

	(void)state;
	assert_int_equal(provider_complete(p, &req, NULL, &out, &err), PROVIDER_ERROR);
	assert_non_null(strstr(err, "step_id"));
	free(err);
	provider_free(p);
}

/* ---- answers byte for byte ------------------------------------------------------------ */

/* A script that leaves executor, verifier, final check and synthesis to the defaults, and
 * one that scripts them with placeholders (and without): every answer the provider gives
 * for awkward steps (quotes, control bytes, placeholders in the step's own text, fields
 * missing or of another type, no step at all) is held byte for byte below, so a faster way
 * of writing them cannot change one. */
static const char bytes_default_script[] =
    "{\"task\":\"script task\",\"planner\":[{\"goal\":\"G \\\"g\\\" {{task}}\",\"context\":\"\","
    "\"steps\":[{\"step_id\":\"a\",\"name\":\"A \\\"n\\\"\"},{\"step_id\":\"b\"},"
    "{\"name\":\"no id\"}],\"success_criteria\":[\"all \\\"done\\\"\",3,\"\\u0002\"]}]}";
static const char bytes_scripted_script[] =
    "{\"executor\":{\"k1\":[{\"rounds\":[{\"text\":\"t {{step_id}}\",\"tool_calls\":[{\"name\":"
    "\"write_file\",\"input\":{\"path\":\"{{step_id}}.txt\",\"content\":\"r {{tool_result}}\","
    "\"n\":[1,2.5,{\"x\":\"{{attempt}}\"}]}},{\"name\":\"read_file\",\"input\":{\"path\":"
    "\"plain.txt\"}}]}],\"final\":{\"before\":\"Pre {{task}}\",\"json\":{\"a\":\"{{attempt}}\","
    "\"b\":[1,true,null]},\"after\":\"\"}},{\"final\":{\"reasoning\":\"r\",\"n\":0.9}}]},"
    "\"verifier\":{\"k1\":[\"plain {{task}}\",{\"overall_pass\":true,\"x\":\"none\",\"n\":0.9}]},"
    "\"final_check\":{\"before\":\"\",\"json\":{\"k\":\"{{task}}\"},\"after\":\"A {{step_id}}\"},"
    "\"synthesis\":\"Done: {{task}}\"}";

static const char *const bytes_steps[][3] = {
    /* step_id, task, step_json */
    {"s1", "Sum \"it\" {{step_id}}",
     "{\"step_id\":\"s1\",\"name\":\"Write \\\"notes\\\"\\t{{attempt}}\",\"description\":"
     "\"Line one\\nTask: {{task}} \\u00e9 {{step_id}} \\u0001 {{tool_result}} {{nope}}\","
     "\"actions\":[],\"acceptance_criteria\":[\"c1 \\\"q\\\" \\\\ back\",5,\"about "
     "{{step_id}}\",\"\"],\"expected_outputs\":[],\"dependencies\":[],"
     "\"estimated_complexity\":\"low\"}"},
    {"s2", "", "{\"step_id\":\"s2\"}"},
    /* s1 again, edited: nothing of its first definition may stick */
    {"s1", "Sum", "{\"step_id\":\"s1\",\"name\":\"Edited s1\",\"acceptance_criteria\":[\"new\"]}"},
    {"s3", NULL, NULL},
    {"s4", "t", "[1,2]"},
    {"x{{task}}y", "T", "{\"name\":\"\",\"description\":\"\",\"acceptance_criteria\":[]}"},
    {"s6", "t", "{\"name\":7,\"description\":{\"a\":1},\"acceptance_criteria\":\"c\"}"},
    {"k1", "KT", "{\"step_id\":\"k1\",\"name\":\"K\"}"},
};

static void bytes_add(struct strbuf *sb, const char *what, const struct llm_response *out)
{
	strbuf_addf(sb, "== %s [%s]\n%s\n", what, out->stop_reason, out->text);
	for (size_t i = 0; i < out->n_calls; i++)
		strbuf_addf(sb, "-- %s %s %s\n", out->calls[i].id, out->calls[i].name,
			    out->calls[i].input_json);
}

static void bytes_ask(struct provider *p, struct llm_request *req, struct strbuf *sb,
		      const char *what)
{
	struct llm_response out;

	assert_int_equal(call(p, req, &out), PROVIDER_OK);
	bytes_add(sb, what, &out);
	llm_response_release(&out);
}

static void bytes_transcript(const char *script_text, struct strbuf *sb)
{
	char *path = write_temp_script(script_text), *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);
	struct llm_msg msgs[3] = {{.kind = LLM_MSG_USER, .text = (char *)"Go."}};
	struct llm_tool_result res = {.call_id = (char *)"c", .content = (char *)"wrote {{it}}"};
	struct llm_request req = {.model = "m", .msgs = msgs, .n_msgs = 1};

	assert_non_null(p);
	msgs[1].kind = LLM_MSG_ASSISTANT;
	msgs[1].text = (char *)"calling";
	msgs[2].kind = LLM_MSG_TOOL_RESULTS;
	msgs[2].results = &res;
	msgs[2].n_results = 1;
	/* Before any plan, then the plan, then again. */
	req.role = ROLE_VERIFIER;
	req.purpose = PURPOSE_FINAL_CHECK;
	bytes_ask(p, &req, sb, "final check, no plan");
	req.role = ROLE_PLANNER;
	req.purpose = PURPOSE_SYNTHESIZE;
	bytes_ask(p, &req, sb, "synthesis, no plan");
	req.task = "the \"task\"";
	req.purpose = PURPOSE_PLAN;
	bytes_ask(p, &req, sb, "plan");
	for (size_t k = 0; k < sizeof(bytes_steps) / sizeof(*bytes_steps); k++) {
		for (int attempt = 1; attempt <= 2; attempt++) {
			req.step_id = bytes_steps[k][0];
			req.task = bytes_steps[k][1];
			req.step_json = bytes_steps[k][2];
			req.attempt = attempt;
			req.role = ROLE_EXECUTOR;
			req.purpose = PURPOSE_EXECUTE;
			req.n_msgs = 1;
			bytes_ask(p, &req, sb, req.step_id);
			req.n_msgs = 3;
			bytes_ask(p, &req, sb, req.step_id);
			req.role = ROLE_VERIFIER;
			req.purpose = PURPOSE_VERIFY;
			req.n_msgs = 1;
			bytes_ask(p, &req, sb, req.step_id);
		}
	}
	req.step_id = NULL;
	req.step_json = NULL;
	req.attempt = 0;
	req.task = "final \"task\"";
	req.role = ROLE_VERIFIER;
	req.purpose = PURPOSE_FINAL_CHECK;
	bytes_ask(p, &req, sb, "final check");
	req.role = ROLE_PLANNER;
	req.purpose = PURPOSE_SYNTHESIZE;
	bytes_ask(p, &req, sb, "synthesis");
	provider_free(p);
	unlink(path);
	free(path);
	free(err);
}

/* On a mismatch, what to paste: the transcript as C string literals. */
static void bytes_print_literal(const char *s)
{
	fputs("    \"", stderr);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\n')
			fputs(c[1] ? "\\n\"\n    \"" : "\\n", stderr);
		else if (*c == '"' || *c == '\\')
			fprintf(stderr, "\\%c", *c);
		else if (*c == '\t')
			fputs("\\t", stderr);
		else if (*c < 32 || *c >= 127)
			fprintf(stderr, "\\%03o", *c);
		else
			fputc(*c, stderr);
	}
	fputs("\"\n", stderr);
}

static const char bytes_default_want[] =
    "== final check, no plan [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== synthesis, no plan [end_turn]\n"
    "Result\n"
    "\n"
    "Verified results:\n"
    "\n"
    "== plan [end_turn]\n"
    "{\"goal\":\"G \\\"g\\\" the \\\"task\\\"\",\"context\":\"\",\"steps\":[{\"step_id\":\"a\",\"name\":\"A \\\"n\\\"\"},{\"step_id\":\"b\"},{\"name\":\"no id\"}],\"success_criteria\":[\"all \\\"done\\\"\",3,\"\\u0002\"]}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Write \"notes\"\t1\" in s1.md.\n"
    "-- toolu_sim_1 write_file {\"path\":\"s1.md\",\"content\":\"# Write \\\"notes\\\"\\t1\\n\\nTask: Sum \\\"it\\\" s1\\n\\nLine one\\nTask: Sum \\\"it\\\" {{step_id}} \303\251 s1 \\u0001 (no tool result yet) {{nope}}\\n\\n## Acceptance criteria addressed\\n\\n- c1 \\\"q\\\" \\\\ back\\n- about s1\\n- \\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"c1 \\\"q\\\" \\\\ back\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"about {{step_id}}\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Write \"notes\"\t2\" in s1.md.\n"
    "-- toolu_sim_2 write_file {\"path\":\"s1.md\",\"content\":\"# Write \\\"notes\\\"\\t2\\n\\nTask: Sum \\\"it\\\" s1\\n\\nLine one\\nTask: Sum \\\"it\\\" {{step_id}} \303\251 s1 \\u0001 (no tool result yet) {{nope}}\\n\\n## Acceptance criteria addressed\\n\\n- c1 \\\"q\\\" \\\\ back\\n- about s1\\n- \\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"c1 \\\"q\\\" \\\\ back\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"about {{step_id}}\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s2 [tool_use]\n"
    "I will record the outcome of \"s2\" in s2.md.\n"
    "-- toolu_sim_3 write_file {\"path\":\"s2.md\",\"content\":\"# s2\\n\\n\"}\n"
    "== s2 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s2.md\"],\"step_output\":{\"findings\":\"Wrote s2.md.\",\"artifacts\":[\"s2.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s2 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s2 [tool_use]\n"
    "I will record the outcome of \"s2\" in s2.md.\n"
    "-- toolu_sim_4 write_file {\"path\":\"s2.md\",\"content\":\"# s2\\n\\n\"}\n"
    "== s2 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s2.md\"],\"step_output\":{\"findings\":\"Wrote s2.md.\",\"artifacts\":[\"s2.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s2 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Edited s1\" in s1.md.\n"
    "-- toolu_sim_5 write_file {\"path\":\"s1.md\",\"content\":\"# Edited s1\\n\\nTask: Sum\\n\\n## Acceptance criteria addressed\\n\\n- new\\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"new\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Edited s1\" in s1.md.\n"
    "-- toolu_sim_6 write_file {\"path\":\"s1.md\",\"content\":\"# Edited s1\\n\\nTask: Sum\\n\\n## Acceptance criteria addressed\\n\\n- new\\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"new\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s3 [tool_use]\n"
    "I will record the outcome of \"s3\" in s3.md.\n"
    "-- toolu_sim_7 write_file {\"path\":\"s3.md\",\"content\":\"# s3\\n\\n\"}\n"
    "== s3 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s3.md\"],\"step_output\":{\"findings\":\"Wrote s3.md.\",\"artifacts\":[\"s3.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s3 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s3 [tool_use]\n"
    "I will record the outcome of \"s3\" in s3.md.\n"
    "-- toolu_sim_8 write_file {\"path\":\"s3.md\",\"content\":\"# s3\\n\\n\"}\n"
    "== s3 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s3.md\"],\"step_output\":{\"findings\":\"Wrote s3.md.\",\"artifacts\":[\"s3.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s3 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s4 [tool_use]\n"
    "I will record the outcome of \"s4\" in s4.md.\n"
    "-- toolu_sim_9 write_file {\"path\":\"s4.md\",\"content\":\"# s4\\n\\nTask: t\\n\\n\"}\n"
    "== s4 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s4.md\"],\"step_output\":{\"findings\":\"Wrote s4.md.\",\"artifacts\":[\"s4.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s4 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s4 [tool_use]\n"
    "I will record the outcome of \"s4\" in s4.md.\n"
    "-- toolu_sim_10 write_file {\"path\":\"s4.md\",\"content\":\"# s4\\n\\nTask: t\\n\\n\"}\n"
    "== s4 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s4.md\"],\"step_output\":{\"findings\":\"Wrote s4.md.\",\"artifacts\":[\"s4.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s4 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== x{{task}}y [tool_use]\n"
    "I will record the outcome of \"xTy\" in xTy.md.\n"
    "-- toolu_sim_11 write_file {\"path\":\"xTy.md\",\"content\":\"# xTy\\n\\nTask: T\\n\\n\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file x{{task}}y.md\"],\"step_output\":{\"findings\":\"Wrote x{{task}}y.md.\",\"artifacts\":[\"x{{task}}y.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== x{{task}}y [tool_use]\n"
    "I will record the outcome of \"xTy\" in xTy.md.\n"
    "-- toolu_sim_12 write_file {\"path\":\"xTy.md\",\"content\":\"# xTy\\n\\nTask: T\\n\\n\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file x{{task}}y.md\"],\"step_output\":{\"findings\":\"Wrote x{{task}}y.md.\",\"artifacts\":[\"x{{task}}y.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s6 [tool_use]\n"
    "I will record the outcome of \"s6\" in s6.md.\n"
    "-- toolu_sim_13 write_file {\"path\":\"s6.md\",\"content\":\"# s6\\n\\nTask: t\\n\\n\"}\n"
    "== s6 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s6.md\"],\"step_output\":{\"findings\":\"Wrote s6.md.\",\"artifacts\":[\"s6.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s6 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s6 [tool_use]\n"
    "I will record the outcome of \"s6\" in s6.md.\n"
    "-- toolu_sim_14 write_file {\"path\":\"s6.md\",\"content\":\"# s6\\n\\nTask: t\\n\\n\"}\n"
    "== s6 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s6.md\"],\"step_output\":{\"findings\":\"Wrote s6.md.\",\"artifacts\":[\"s6.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s6 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== k1 [tool_use]\n"
    "I will record the outcome of \"K\" in k1.md.\n"
    "-- toolu_sim_15 write_file {\"path\":\"k1.md\",\"content\":\"# K\\n\\nTask: KT\\n\\n\"}\n"
    "== k1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file k1.md\"],\"step_output\":{\"findings\":\"Wrote k1.md.\",\"artifacts\":[\"k1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== k1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== k1 [tool_use]\n"
    "I will record the outcome of \"K\" in k1.md.\n"
    "-- toolu_sim_16 write_file {\"path\":\"k1.md\",\"content\":\"# K\\n\\nTask: KT\\n\\n\"}\n"
    "== k1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file k1.md\"],\"step_output\":{\"findings\":\"Wrote k1.md.\",\"artifacts\":[\"k1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== k1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== final check [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"all \\\"done\\\"\",\"passed\":true,\"evidence\":\"Every step of the plan passed verification and its result contributes to this.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"\\u0002\",\"passed\":true,\"evidence\":\"Every step of the plan passed verification and its result contributes to this.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== synthesis [end_turn]\n"
    "G \"g\" the \"task\"\n"
    "\n"
    "Verified results:\n"
    "- A \"n\" (a): done; see a.md in the workspace.\n"
    "- step (b): done; see b.md in the workspace.\n"
    "- no id (?): done; see the step.md in the workspace.\n"
    "\n";

static const char bytes_scripted_want[] =
    "== final check, no plan [end_turn]\n"
    "```json\n"
    "{\n"
    "\t\"k\":\t\"\"\n"
    "}\n"
    "```\n"
    "\n"
    "A \n"
    "== synthesis, no plan [end_turn]\n"
    "Done: \n"
    "== plan [end_turn]\n"
    "Here is a plan for the task. I kept it to three steps so each result can be checked on its own before the next one builds on it.\n"
    "\n"
    "```json\n"
    "{\n"
    "\t\"goal\":\t\"the \\\"task\\\"\",\n"
    "\t\"context\":\t\"Offline demo: the simulated models work from the task text alone and keep every intermediate result as a Markdown file in the workspace, so each step can be checked on its own.\",\n"
    "\t\"steps\":\t[{\n"
    "\t\t\t\"step_id\":\t\"gather\",\n"
    "\t\t\t\"name\":\t\"Gather requirements and open questions\",\n"
    "\t\t\t\"description\":\t\"Work out what an answer to the task must cover: audience, scope, constraints and the questions that stay open. Write them to notes/requirements.md.\",\n"
    "\t\t\t\"actions\":\t[{\n"
    "\t\t\t\t\t\"tool\":\t\"write_file\",\n"
    "\t\t\t\t\t\"params\":\t{\n"
    "\t\t\t\t\t\t\"path\":\t\"notes/requirements.md\"\n"
    "\t\t\t\t\t}\n"
    "\t\t\t\t}],\n"
    "\t\t\t\"acceptance_criteria\":\t[\"notes/requirements.md lists at least three things the answer must cover\", \"open questions and assumptions are stated explicitly\"],\n"
    "\t\t\t\"expected_outputs\":\t[\"notes/requirements.md\"],\n"
    "\t\t\t\"dependencies\":\t[],\n"
    "\t\t\t\"estimated_complexity\":\t\"low\"\n"
    "\t\t}, {\n"
    "\t\t\t\"step_id\":\t\"draft\",\n"
    "\t\t\t\"name\":\t\"Draft the answer\",\n"
    "\t\t\t\"description\":\t\"Read notes/requirements.md and write a first complete answer to the task in draft.md, covering each requirement in turn.\",\n"
    "\t\t\t\"actions\":\t[{\n"
    "\t\t\t\t\t\"tool\":\t\"read_file\",\n"
    "\t\t\t\t\t\"params\":\t{\n"
    "\t\t\t\t\t\t\"path\":\t\"notes/requirements.md\"\n"
    "\t\t\t\t\t}\n"
    "\t\t\t\t}, {\n"
    "\t\t\t\t\t\"tool\":\t\"write_file\",\n"
    "\t\t\t\t\t\"params\":\t{\n"
    "\t\t\t\t\t\t\"path\":\t\"draft.md\"\n"
    "\t\t\t\t\t}\n"
    "\t\t\t\t}],\n"
    "\t\t\t\"acceptance_criteria\":\t[\"draft.md addresses every requirement listed in notes/requirements.md\", \"the draft says which assumptions it rests on\"],\n"
    "\t\t\t\"expected_outputs\":\t[\"draft.md\"],\n"
    "\t\t\t\"dependencies\":\t[\"gather\"],\n"
    "\t\t\t\"estimated_complexity\":\t\"medium\"\n"
    "\t\t}, {\n"
    "\t\t\t\"step_id\":\t\"review\",\n"
    "\t\t\t\"name\":\t\"Review and finalise\",\n"
    "\t\t\t\"description\":\t\"Check draft.md against the requirements, tighten it and write the reviewed version to final.md with a short review checklist.\",\n"
    "\t\t\t\"actions\":\t[{\n"
    "\t\t\t\t\t\"tool\":\t\"read_file\",\n"
    "\t\t\t\t\t\"params\":\t{\n"
    "\t\t\t\t\t\t\"path\":\t\"draft.md\"\n"
    "\t\t\t\t\t}\n"
    "\t\t\t\t}, {\n"
    "\t\t\t\t\t\"tool\":\t\"write_file\",\n"
    "\t\t\t\t\t\"params\":\t{\n"
    "\t\t\t\t\t\t\"path\":\t\"final.md\"\n"
    "\t\t\t\t\t}\n"
    "\t\t\t\t}],\n"
    "\t\t\t\"acceptance_criteria\":\t[\"final.md exists and is marked ready for the reader\", \"the review lists what was checked and what changed\"],\n"
    "\t\t\t\"expected_outputs\":\t[\"final.md\"],\n"
    "\t\t\t\"dependencies\":\t[\"draft\"],\n"
    "\t\t\t\"estimated_complexity\":\t\"low\"\n"
    "\t\t}],\n"
    "\t\"success_criteria\":\t[\"final.md answers the task for its intended reader\", \"every requirement gathered in the first step is covered in final.md\"],\n"
    "\t\"rollback_strategy\":\t\"Every step only writes inside the workspace; deleting notes/, draft.md and final.md undoes the run.\"\n"
    "}\n"
    "```\n"
    "\n"
    "Each step writes one file in the workspace, so the verifier can read exactly what was produced.\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Write \"notes\"\t1\" in s1.md.\n"
    "-- toolu_sim_1 write_file {\"path\":\"s1.md\",\"content\":\"# Write \\\"notes\\\"\\t1\\n\\nTask: Sum \\\"it\\\" s1\\n\\nLine one\\nTask: Sum \\\"it\\\" {{step_id}} \303\251 s1 \\u0001 (no tool result yet) {{nope}}\\n\\n## Acceptance criteria addressed\\n\\n- c1 \\\"q\\\" \\\\ back\\n- about s1\\n- \\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"c1 \\\"q\\\" \\\\ back\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"about {{step_id}}\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Write \"notes\"\t2\" in s1.md.\n"
    "-- toolu_sim_2 write_file {\"path\":\"s1.md\",\"content\":\"# Write \\\"notes\\\"\\t2\\n\\nTask: Sum \\\"it\\\" s1\\n\\nLine one\\nTask: Sum \\\"it\\\" {{step_id}} \303\251 s1 \\u0001 (no tool result yet) {{nope}}\\n\\n## Acceptance criteria addressed\\n\\n- c1 \\\"q\\\" \\\\ back\\n- about s1\\n- \\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"c1 \\\"q\\\" \\\\ back\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"about {{step_id}}\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"},{\"criterion\":\"\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s2 [tool_use]\n"
    "I will record the outcome of \"s2\" in s2.md.\n"
    "-- toolu_sim_3 write_file {\"path\":\"s2.md\",\"content\":\"# s2\\n\\n\"}\n"
    "== s2 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s2.md\"],\"step_output\":{\"findings\":\"Wrote s2.md.\",\"artifacts\":[\"s2.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s2 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s2 [tool_use]\n"
    "I will record the outcome of \"s2\" in s2.md.\n"
    "-- toolu_sim_4 write_file {\"path\":\"s2.md\",\"content\":\"# s2\\n\\n\"}\n"
    "== s2 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s2.md\"],\"step_output\":{\"findings\":\"Wrote s2.md.\",\"artifacts\":[\"s2.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s2 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Edited s1\" in s1.md.\n"
    "-- toolu_sim_5 write_file {\"path\":\"s1.md\",\"content\":\"# Edited s1\\n\\nTask: Sum\\n\\n## Acceptance criteria addressed\\n\\n- new\\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"new\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s1 [tool_use]\n"
    "I will record the outcome of \"Edited s1\" in s1.md.\n"
    "-- toolu_sim_6 write_file {\"path\":\"s1.md\",\"content\":\"# Edited s1\\n\\nTask: Sum\\n\\n## Acceptance criteria addressed\\n\\n- new\\n\"}\n"
    "== s1 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s1.md\"],\"step_output\":{\"findings\":\"Wrote s1.md.\",\"artifacts\":[\"s1.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s1 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"new\",\"passed\":true,\"evidence\":\"The result of step s1 addresses this directly and its declared artifacts are present in the workspace.\",\"confidence\":0.9,\"feedback\":\"\"}],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s3 [tool_use]\n"
    "I will record the outcome of \"s3\" in s3.md.\n"
    "-- toolu_sim_7 write_file {\"path\":\"s3.md\",\"content\":\"# s3\\n\\n\"}\n"
    "== s3 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s3.md\"],\"step_output\":{\"findings\":\"Wrote s3.md.\",\"artifacts\":[\"s3.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s3 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s3 [tool_use]\n"
    "I will record the outcome of \"s3\" in s3.md.\n"
    "-- toolu_sim_8 write_file {\"path\":\"s3.md\",\"content\":\"# s3\\n\\n\"}\n"
    "== s3 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s3.md\"],\"step_output\":{\"findings\":\"Wrote s3.md.\",\"artifacts\":[\"s3.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s3 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s4 [tool_use]\n"
    "I will record the outcome of \"s4\" in s4.md.\n"
    "-- toolu_sim_9 write_file {\"path\":\"s4.md\",\"content\":\"# s4\\n\\nTask: t\\n\\n\"}\n"
    "== s4 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s4.md\"],\"step_output\":{\"findings\":\"Wrote s4.md.\",\"artifacts\":[\"s4.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s4 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s4 [tool_use]\n"
    "I will record the outcome of \"s4\" in s4.md.\n"
    "-- toolu_sim_10 write_file {\"path\":\"s4.md\",\"content\":\"# s4\\n\\nTask: t\\n\\n\"}\n"
    "== s4 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s4.md\"],\"step_output\":{\"findings\":\"Wrote s4.md.\",\"artifacts\":[\"s4.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s4 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== x{{task}}y [tool_use]\n"
    "I will record the outcome of \"xTy\" in xTy.md.\n"
    "-- toolu_sim_11 write_file {\"path\":\"xTy.md\",\"content\":\"# xTy\\n\\nTask: T\\n\\n\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file x{{task}}y.md\"],\"step_output\":{\"findings\":\"Wrote x{{task}}y.md.\",\"artifacts\":[\"x{{task}}y.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== x{{task}}y [tool_use]\n"
    "I will record the outcome of \"xTy\" in xTy.md.\n"
    "-- toolu_sim_12 write_file {\"path\":\"xTy.md\",\"content\":\"# xTy\\n\\nTask: T\\n\\n\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file x{{task}}y.md\"],\"step_output\":{\"findings\":\"Wrote x{{task}}y.md.\",\"artifacts\":[\"x{{task}}y.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== x{{task}}y [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s6 [tool_use]\n"
    "I will record the outcome of \"s6\" in s6.md.\n"
    "-- toolu_sim_13 write_file {\"path\":\"s6.md\",\"content\":\"# s6\\n\\nTask: t\\n\\n\"}\n"
    "== s6 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s6.md\"],\"step_output\":{\"findings\":\"Wrote s6.md.\",\"artifacts\":[\"s6.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s6 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== s6 [tool_use]\n"
    "I will record the outcome of \"s6\" in s6.md.\n"
    "-- toolu_sim_14 write_file {\"path\":\"s6.md\",\"content\":\"# s6\\n\\nTask: t\\n\\n\"}\n"
    "== s6 [end_turn]\n"
    "{\"reasoning\":\"Followed the step description and recorded the outcome in the workspace so it can be checked.\",\"actions_taken\":[\"write_file s6.md\"],\"step_output\":{\"findings\":\"Wrote s6.md.\",\"artifacts\":[\"s6.md\"],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}\n"
    "== s6 [end_turn]\n"
    "{\"overall_pass\":true,\"criteria_results\":[],\"action\":\"pass\",\"feedback_for_executor\":\"\",\"severity\":\"minor\"}\n"
    "== k1 [tool_use]\n"
    "t k1\n"
    "-- toolu_sim_15 write_file {\"path\":\"k1.txt\",\"content\":\"r (no tool result yet)\",\"n\":[1,2.5,{\"x\":\"1\"}]}\n"
    "-- toolu_sim_16 read_file {\"path\":\"plain.txt\"}\n"
    "== k1 [end_turn]\n"
    "Pre KT\n"
    "\n"
    "```json\n"
    "{\n"
    "\t\"a\":\t\"1\",\n"
    "\t\"b\":\t[1, true, null]\n"
    "}\n"
    "```\n"
    "== k1 [end_turn]\n"
    "plain KT\n"
    "== k1 [end_turn]\n"
    "{\"reasoning\":\"r\",\"n\":0.9}\n"
    "== k1 [end_turn]\n"
    "{\"reasoning\":\"r\",\"n\":0.9}\n"
    "== k1 [end_turn]\n"
    "{\"overall_pass\":true,\"x\":\"none\",\"n\":0.9}\n"
    "== final check [end_turn]\n"
    "```json\n"
    "{\n"
    "\t\"k\":\t\"final \\\"task\\\"\"\n"
    "}\n"
    "```\n"
    "\n"
    "A \n"
    "== synthesis [end_turn]\n"
    "Done: final \"task\"\n";

static void test_answers_byte_for_byte(void **state)
{
	const char *const scripts[] = {bytes_default_script, bytes_scripted_script};
	const char *const want[] = {bytes_default_want, bytes_scripted_want};
	struct strbuf got[2];
	bool same = true;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		strbuf_init(&got[i]);
		bytes_transcript(scripts[i], &got[i]);
		if (strcmp(got[i].buf, want[i])) {
			fprintf(stderr, "transcript %zu differs; it is now:\n", i);
			bytes_print_literal(got[i].buf);
			same = false;
		}
	}
	for (size_t i = 0; i < 2; i++)
		strbuf_release(&got[i]);
	assert_true(same);
}

/* The provider remembers the last few step definitions it read: many steps in turn, in
 * both directions and one at a time, each answer names its own step. */
static void test_step_definitions_remembered(void **state)
{
	char *path = write_temp_script("{\"task\":\"t\"}"), *err = NULL;
	struct provider *p = provider_sim_new(NULL, path, 0, &err);
	struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"Go."};
	static const int order[] = {0, 1, 2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 0, 0, 11,
				    5, 9, 10, 19, 18, 17, 16, 15, 14, 13, 12, 1,  2, 3, 19};

	(void)state;
	assert_non_null(p);
	for (size_t k = 0; k < sizeof(order) / sizeof(*order); k++) {
		int i = order[k];
		char *id = xasprintf("c%d", i);
		char *json = xasprintf("{\"name\":\"N%d\",\"acceptance_criteria\":[\"k%d\"]}", i, i);
		char *want = xasprintf("I will record the outcome of \"N%d\" in c%d.md.", i, i);
		char *crit = xasprintf("\"criterion\":\"k%d\"", i);
		struct llm_request req = {.role = ROLE_EXECUTOR, .purpose = PURPOSE_EXECUTE,
					  .step_id = id, .attempt = 1, .step_json = json,
					  .msgs = &user, .n_msgs = 1};
		struct llm_response out;

		assert_int_equal(call(p, &req, &out), PROVIDER_OK);
		assert_string_equal(out.text, want);
		llm_response_release(&out);
		req.purpose = PURPOSE_VERIFY;
		req.role = ROLE_VERIFIER;
		assert_int_equal(call(p, &req, &out), PROVIDER_OK);
		assert_non_null(strstr(out.text, crit));
		llm_response_release(&out);
		free(id);
		free(json);
		free(want);
		free(crit);
	}
	provider_free(p);
	unlink(path);
	free(path);
	free(err);
}

/* ---- the lookup tool ------------------------------------------------------------------ */

static bool lookup(const char *input_json, struct strbuf *out)
{
	cJSON *in = cJSON_Parse(input_json);
	struct tool_env env = {.ws_fd = -1, .ws_path = "/nowhere", .demo = true};
	bool ok;

	strbuf_init(out);
	ok = tool_lookup.run(&env, in, out);
	cJSON_Delete(in);
	return ok;
}

static void test_lookup_tool(void **state)
{
	struct strbuf out;

	(void)state;
	assert_string_equal(tool_lookup.name, "lookup");
	assert_true(tool_lookup.demo_only);
	{
		cJSON *schema = cJSON_Parse(tool_lookup.schema_json);

		assert_true(cJSON_IsObject(schema));
		cJSON_Delete(schema);
	}

	assert_true(lookup("{\"query\": \"ELDHAM Census Archive\"}", &out));
	assert_non_null(strstr(out.buf, "offline demo data"));
	assert_non_null(strstr(out.buf, "48,200"));
	strbuf_release(&out);

	assert_false(lookup("{\"query\": \"  Eldham population HISTORY 1900-2023 \"}", &out));
	assert_non_null(strstr(out.buf, "lookup failed: upstream source timed out (HTTP 504)"));
	assert_non_null(strstr(out.buf, "Eldham population HISTORY"));
	strbuf_release(&out);

	assert_false(lookup("{\"query\": \"weather in Paris\"}", &out));
	assert_non_null(strstr(out.buf, "no offline entry for \"weather in Paris\"; try: "));
	assert_non_null(strstr(out.buf, "eldham census archive"));
	strbuf_release(&out);

	assert_false(lookup("{\"q\": \"eldham area\"}", &out));
	assert_non_null(strstr(out.buf, "query"));
	strbuf_release(&out);
	assert_false(lookup("[1]", &out));
	strbuf_release(&out);
	assert_false(lookup("null", &out));
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_scenario_drives),
		cmocka_unit_test(test_generic_uses_the_task),
		cmocka_unit_test(test_density_story),
		cmocka_unit_test(test_density_fails_at_every_attempt),
		cmocka_unit_test(test_replan_story),
		cmocka_unit_test(test_legal_and_dag_shapes),
		cmocka_unit_test(test_plans_show_fences),
		cmocka_unit_test(test_streaming_matches_text),
		cmocka_unit_test(test_default_model_names),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_delay_paces_the_stream),
		cmocka_unit_test(test_parallel_calls_get_unique_ids),
		cmocka_unit_test(test_script_mode),
		cmocka_unit_test(test_planner_order_and_repeat),
		cmocka_unit_test(test_bad_scripts),
		cmocka_unit_test(test_unknown_scenario),
		cmocka_unit_test(test_scenario_table),
		cmocka_unit_test(test_step_calls_need_step_id),
		cmocka_unit_test(test_answers_byte_for_byte),
		cmocka_unit_test(test_step_definitions_remembered),
		cmocka_unit_test(test_lookup_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
