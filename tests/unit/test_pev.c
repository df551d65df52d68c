/* test_pev — every route of the PEV state machine, driven by a scripted simulated model. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "budget.h"
#include "bus.h"
#include "engine.h" /* e->mcp: a test waits for its servers' start (mcp_hub_wait) */
#include "gate.h"
#include "journal.h"
#include "jsonx.h"
#include "mcp_hub.h"
#include "pev.h"
#include "provider.h"
#include "provider_sim.h"
#include "report_check.h"
#include "requests.h"
#include "settings.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

/* ------------------------------------------------------------- script builders */

static cJSON *strings(const char *csv)
{
	cJSON *a = cJSON_CreateArray();
	char *copy = xstrdup(csv ? csv : ""), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		cJSON_AddItemToArray(a, cJSON_CreateString(t));
	free(copy);
	return a;
}

static cJSON *step(const char *id, const char *deps, const char *cx, const char *criteria)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "step_id", id);
	cJSON_AddStringToObject(s, "name", id);
	cJSON_AddStringToObject(s, "description", "do the thing");
	cJSON_AddItemToObject(s, "actions", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "acceptance_criteria", strings(criteria ? criteria : "done"));
	cJSON_AddItemToObject(s, "expected_outputs", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "dependencies", strings(deps));
	cJSON_AddStringToObject(s, "estimated_complexity", cx ? cx : "low");
	return s;
}

/* A plan of the given steps (taken). NULL-terminated. */
static cJSON *plan_of(cJSON *first, ...)
{
	cJSON *p = cJSON_CreateObject(), *steps = cJSON_CreateArray();
	va_list ap;

	cJSON_AddStringToObject(p, "goal", "test goal");
	cJSON_AddStringToObject(p, "context", "unit test");
	va_start(ap, first);
	for (cJSON *s = first; s; s = va_arg(ap, cJSON *))
		cJSON_AddItemToArray(steps, s);
	va_end(ap);
	cJSON_AddItemToObject(p, "steps", steps);
	cJSON_AddItemToObject(p, "success_criteria", strings("all done"));
	cJSON_AddStringToObject(p, "rollback_strategy", "none");
	return p;
}

static cJSON *verdict(const char *action, const char *feedback)
{
	cJSON *v = cJSON_CreateObject(), *crit = cJSON_CreateArray(), *c = cJSON_CreateObject();
	bool pass = !strcmp(action, "pass");

	cJSON_AddBoolToObject(v, "overall_pass", pass);
	cJSON_AddStringToObject(c, "criterion", "done");
	cJSON_AddBoolToObject(c, "passed", pass);
	cJSON_AddStringToObject(c, "evidence", pass ? "it is there" : "it is not");
	cJSON_AddNumberToObject(c, "confidence", 0.9);
	cJSON_AddStringToObject(c, "feedback", feedback ? feedback : "");
	cJSON_AddItemToArray(crit, c);
	cJSON_AddItemToObject(v, "criteria_results", crit);
	cJSON_AddStringToObject(v, "action", action);
	if (!pass)
		cJSON_AddStringToObject(v, "feedback_for_executor", feedback);
	cJSON_AddStringToObject(v, "severity", pass ? "minor" : "major");
	return v;
}

static cJSON *script_new(void)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "task", "scripted test task");
	cJSON_AddItemToObject(s, "planner", cJSON_CreateArray());
	cJSON_AddItemToObject(s, "executor", cJSON_CreateObject());
	cJSON_AddItemToObject(s, "verifier", cJSON_CreateObject());
	return s;
}

static void script_plan(cJSON *script, cJSON *plan)
{
	cJSON_AddItemToArray(cJSON_GetObjectItem(script, "planner"), plan);
}

/* Verdicts for a step, by attempt (taken). NULL-terminated. */
static void script_verdicts(cJSON *script, const char *step_id, cJSON *first, ...)
{
	cJSON *arr = cJSON_CreateArray();
	va_list ap;

	va_start(ap, first);
	for (cJSON *v = first; v; v = va_arg(ap, cJSON *))
		cJSON_AddItemToArray(arr, v);
	va_end(ap);
	cJSON_AddItemToObject(cJSON_GetObjectItem(script, "verifier"), step_id, arr);
}

/* ---------------------------------------------------- a provider that records */

struct recorder {
	struct provider base;
	struct provider *inner;
	pthread_mutex_t lock;
	struct strvec exec_prompts; /* first user message of each executor attempt */
	int calls[ROLE__COUNT];
	int fail_purpose;           /* calls for this purpose fail (a 400), or 0 */
	bool cut_first_answer;      /* the executor's first final answer comes back cut */
	bool rewrite_planner;       /* the planner's call sends a body, then a bigger one */
	int deep_input;             /* the executor's first tool call's input nests this deep */
};

static int rec_complete(struct provider *p, const struct llm_request *req,
			const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct recorder *r = p->impl;

	pthread_mutex_lock(&r->lock);
	r->calls[req->role]++;
	if (req->role == ROLE_EXECUTOR && req->n_msgs == 1)
		strvec_push(&r->exec_prompts, req->msgs[0].text);
	pthread_mutex_unlock(&r->lock);
	/* As a provider that retries with a rebuilt body (openai's fallback without
	 * response_format): the engine keeps both under the call's one number. */
	if (r->rewrite_planner && req->role == ROLE_PLANNER && hooks->on_request) {
		char big[2048];

		memset(big, ' ', sizeof(big));
		memcpy(big, "{\"second\":2}", 12);
		hooks->on_request(hooks->ctx, "{\"first\":1}", 11);
		hooks->on_request(hooks->ctx, big, sizeof(big));
	}
	if (r->fail_purpose && (int)req->purpose == r->fail_purpose) {
		*err = xstrdup("HTTP 400: scripted failure");
		return PROVIDER_ERROR;
	}
	{
		int rc = provider_complete(r->inner, req, hooks, out, err);

		/* As a model may answer: a tool call's input nested as deep as cJSON reads. */
		if (rc == PROVIDER_OK && r->deep_input && req->role == ROLE_EXECUTOR &&
		    out->n_calls) {
			struct strbuf in = STRBUF_INIT;

			strbuf_adds(&in, "{\"path\":\"deep.md\",\"content\":\"x\",\"deep\":");
			for (int i = 1; i < r->deep_input; i++)
				strbuf_addc(&in, '[');
			for (int i = 1; i < r->deep_input; i++)
				strbuf_addc(&in, ']');
			strbuf_addc(&in, '}');
			free(out->calls[0].input_json);
			out->calls[0].input_json = strbuf_detach(&in);
			r->deep_input = 0;
		}

		/* As a server does at its output token limit: the text stops, the reason says
		 * so. Once, on the executor's final answer. */
		if (rc == PROVIDER_OK && r->cut_first_answer && req->role == ROLE_EXECUTOR &&
		    !out->n_calls && out->text && strlen(out->text) > 10) {
			r->cut_first_answer = false;
			out->text[strlen(out->text) / 2] = '\0';
			free(out->stop_reason);
			out->stop_reason = xstrdup("max_tokens");
		}
		return rc;
	}
}

static void rec_destroy(struct provider *p)
{
	struct recorder *r = p->impl;

	provider_free(r->inner);
	strvec_clear(&r->exec_prompts);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static const struct provider_ops rec_ops = {"sim", rec_complete, rec_destroy};

/* ------------------------------------------------------------------ the harness */

struct answer {
	const char *gate;          /* answer gates of this kind */
	enum gate_decision decision;
	const char *edited;        /* for GATE_EDIT */
	enum pev_cmd post;         /* or post this command instead (when post_cmd) */
	bool post_cmd;
};

struct run {
	char dir[64];
	char *run_dir;
	cJSON *script;
	struct recorder *rec;
	struct bus *bus;
	struct gatekeeper *gates;
	struct pev *e;
	struct settings s;
	struct answer answers[4];
	int n_answers;
	int exit_code;
	int delay_ms;  /* the simulated model's pause per streamed chunk */
	cJSON *events; /* array of every journaled event */
	bool linger;   /* the engine stays after run.end (the cockpit's mode) */
	int fail_purpose; /* the model's calls for this purpose fail (0: none) */
	bool cut_first_answer; /* the executor's first final answer comes back cut */
	bool rewrite_planner;  /* the planner's call sends two bodies (recorder) */
	int deep_input;        /* the executor's first tool input nests this deep (recorder) */
	/* Sees every journaled event as it is published (bus lock held: it may only post
	 * commands and answers, which queue). */
	void (*hook)(struct run *r, const cJSON *ev);
	/* Called once the engine stopped, before the journal is read. */
	void (*joined)(struct run *r);
	/* Called right after pev_start (the engine thread runs). */
	void (*started)(struct run *r);
	/* With `watch`, the run lingers only while *watch (pev_linger_while). */
	atomic_bool *watch;
	int hook_state;
	unsigned long held_gate; /* a gate the hook holds open for a while */
};

static void answer_gates(void *ctx, const struct event *ev)
{
	struct run *r = ctx;
	cJSON *o;
	const char *gate;
	double id = 0;

	if (ev->type != EV_GATE_OPEN && !r->hook)
		return;
	o = cJSON_Parse(ev->json);
	if (r->hook)
		r->hook(r, o);
	if (ev->type != EV_GATE_OPEN) {
		cJSON_Delete(o);
		return;
	}
	gate = jsonx_str(o, "gate");
	jsonx_num(o, "gate_id", &id);
	for (int i = 0; i < r->n_answers; i++) {
		if (strcmp(r->answers[i].gate, gate))
			continue;
		if (r->answers[i].post_cmd) {
			pev_post(r->e, r->answers[i].post, NULL, NULL);
		} else if (r->answers[i].decision == GATE_EDIT && strcmp(gate, "shell")) {
			/* Edit, then approve the same gate: the edit is a command of its own. */
			const char *sid = jsonx_str(o, "step_id");
			if (sid)
				pev_post(r->e, PEV_CMD_EDIT, sid, r->answers[i].edited);
			else
				pev_post(r->e, PEV_CMD_EDIT_PLAN, NULL, r->answers[i].edited);
			gatekeeper_answer(r->gates, (unsigned long)id, GATE_APPROVE, NULL);
		} else
			gatekeeper_answer(r->gates, (unsigned long)id, r->answers[i].decision,
					  r->answers[i].edited);
		break;
	}
	cJSON_Delete(o);
}

static bool collect(void *ctx, const struct event *ev)
{
	cJSON_AddItemToArray(ctx, cJSON_Parse(ev->json));
	return true;
}

static void run_init(struct run *r, cJSON *script)
{
	memset(r, 0, sizeof(*r));
	strcpy(r->dir, "/tmp/pevtui-test-pev-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	r->script = script;
	settings_init(&r->s);
	r->s.sim_delay_ms = 0;
	r->s.gates = 0;
	r->exit_code = -1;
}

static void load_events(struct run *r)
{
	char *path = xasprintf("%s/journal.jsonl", r->run_dir);
	struct journal_load_info info = {0};
	char *err = NULL;

	cJSON_Delete(r->events);
	r->events = cJSON_CreateArray();
	assert_true(journal_load(path, collect, r->events, &info, &err));
	assert_false(info.torn_tail);
	free(path);
}

/*
 * A run that ended wrote report.md from the events as they were published (resumed runs
 * from the journal's past too): it is what report_write renders from the journal, byte
 * for byte. A run stopped short of run.end (a lingering cockpit quit mid-segment) has no
 * report of its last segment to compare.
 */
static void check_report(const struct run *r)
{
	int n = cJSON_GetArraySize(r->events);
	const char *type = n ? jsonx_str(cJSON_GetArrayItem(r->events, n - 1), "type") : NULL;
	char *path = xasprintf("%s/report.md", r->run_dir), *why;

	if (type && !strcmp(type, "run.end") && access(path, F_OK) == 0) {
		why = report_check_live(r->run_dir);
		if (why)
			fail_msg("%s", why);
	}
	free(path);
}

static bool watched_cb(void *ctx)
{
	return atomic_load((atomic_bool *)ctx);
}

/* Runs (or resumes: PEV_OPEN_RESUME or true, PEV_OPEN_FINISHED) the scripted run; mode is
 * how unanswered gates are handled. */
static int run_go(struct run *r, enum gate_mode mode, enum pev_open open)
{
	char *path = xasprintf("%s/script.json", r->dir), *err = NULL, *text;
	struct provider *roles[ROLE__COUNT];
	FILE *f;

	text = cJSON_Print(r->script);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	cJSON_free(text);

	r->rec = xcalloc(1, sizeof(*r->rec));
	r->rec->inner = provider_sim_new(NULL, path, r->delay_ms, &err);
	if (!r->rec->inner)
		fail_msg("script rejected: %s", err);
	pthread_mutex_init(&r->rec->lock, NULL);
	r->rec->base.ops = &rec_ops;
	r->rec->base.simulated = true;
	r->rec->base.impl = r->rec;
	r->rec->fail_purpose = r->fail_purpose;
	r->rec->cut_first_answer = r->cut_first_answer;
	r->rec->rewrite_planner = r->rewrite_planner;
	r->rec->deep_input = r->deep_input;
	free(path);

	if (!r->s.task)
		r->s.task = xstrdup("scripted test task");
	if (!r->run_dir) {
		char *runs = xasprintf("%s/runs", r->dir);
		mkdir(runs, 0700);
		r->run_dir = xasprintf("%s/run1", runs);
		free(runs);
	}
	r->bus = bus_new();
	r->gates = gatekeeper_new(r->bus, r->s.gates, mode);
	for (int i = 0; i < ROLE__COUNT; i++)
		roles[i] = &r->rec->base;
	r->e = pev_new(&r->s, roles, r->bus, r->gates, r->run_dir, open, &err);
	if (!r->e)
		fail_msg("pev_new: %s", err);
	bus_subscribe(r->bus, answer_gates, r);
	pev_set_linger(r->e, r->linger);
	if (r->watch)
		pev_linger_while(r->e, watched_cb, r->watch);
	pev_start(r->e);
	if (r->started)
		r->started(r);
	r->exit_code = pev_join(r->e);
	if (r->joined)
		r->joined(r);
	load_events(r);
	check_report(r);
	if (r->exit_code != 0 && pev_end_reason(r->e))
		print_message("(run ended %d: %s)\n", r->exit_code, pev_end_reason(r->e));
	return r->exit_code;
}

/* Frees what one go allocated, keeping the directory (for resume). */
static void run_end_go(struct run *r)
{
	pev_free(r->e);
	gatekeeper_free(r->gates);
	bus_free(r->bus);
	provider_free(&r->rec->base);
	r->e = NULL;
}

static void run_free(struct run *r)
{
	run_end_go(r);
	assert_true(testdir_remove(r->dir));
	free(r->run_dir);
	cJSON_Delete(r->script);
	cJSON_Delete(r->events);
	settings_release(&r->s);
}

/* ----------------------------------------------------------- journal queries */

static int count(const struct run *r, const char *type, const char *step_id)
{
	const cJSON *ev;
	int n = 0;

	cJSON_ArrayForEach(ev, r->events)
	{
		const char *sid = jsonx_str(ev, "step_id");
		if (strcmp(jsonx_str(ev, "type"), type))
			continue;
		if (step_id && (!sid || strcmp(sid, step_id)))
			continue;
		n++;
	}
	return n;
}

/* The n-th (0-based) event of a type (and step), or NULL. */
static const cJSON *nth(const struct run *r, const char *type, const char *step_id, int n)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
	{
		const char *sid = jsonx_str(ev, "step_id");
		if (strcmp(jsonx_str(ev, "type"), type))
			continue;
		if (step_id && (!sid || strcmp(sid, step_id)))
			continue;
		if (n-- == 0)
			return ev;
	}
	return NULL;
}

static const cJSON *last(const struct run *r, const char *type)
{
	int n = count(r, type, NULL);

	return n ? nth(r, type, NULL, n - 1) : NULL;
}

static const char *end_status(const struct run *r, const char *step_id)
{
	int n = count(r, "step.end", step_id);
	const cJSON *ev = n ? nth(r, "step.end", step_id, n - 1) : NULL;

	return ev ? jsonx_str(ev, "status") : "(none)";
}

static int metric(const struct run *r, const char *key)
{
	const cJSON *fin = last(r, "run.final");
	double d = -1;

	assert_non_null(fin);
	jsonx_num(cJSON_GetObjectItem(fin, "metrics"), key, &d);
	return (int)d;
}

/* seq is 1, 2, … with no gap, and run.end is last (when present). */
static void assert_journal_shape(const struct run *r, bool ended)
{
	const cJSON *ev;
	double expect = 1, seq;

	cJSON_ArrayForEach(ev, r->events)
	{
		assert_true(jsonx_num(ev, "seq", &seq));
		assert_true(seq == expect);
		assert_non_null(jsonx_str(ev, "ts"));
		expect++;
	}
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(r->events, 0), "type"), "run.start");
	if (ended)
		assert_string_equal(jsonx_str(last(r, "run.end"), "type"), "run.end");
	else
		assert_null(last(r, "run.end"));
}

/* ----------------------------------------------------------------- the tests */

static void test_all_pass(void **state)
{
	struct run r;
	const cJSON *fin;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_journal_shape(&r, true);
	assert_int_equal(count(&r, "plan.proposed", NULL), 1);
	assert_int_equal(count(&r, "plan.adopted", NULL), 1);
	assert_string_equal(end_status(&r, "s1"), "passed");
	assert_string_equal(end_status(&r, "s2"), "passed");
	/* s1 passes before s2 starts: dependencies first. */
	assert_true(jsonx_num(nth(&r, "step.end", "s1", 0), "seq", &(double){0}));
	{
		double a, b;
		jsonx_num(nth(&r, "step.end", "s1", 0), "seq", &a);
		jsonx_num(nth(&r, "step.start", "s2", 0), "seq", &b);
		assert_true(a < b);
	}
	/* Each attempt has a deterministic and a model verdict. */
	assert_int_equal(count(&r, "verify.verdict", "s1"), 2);
	assert_string_equal(jsonx_str(nth(&r, "verify.verdict", "s1", 0), "stage"), "deterministic");
	assert_string_equal(jsonx_str(nth(&r, "verify.verdict", "s1", 1), "stage"), "model");
	fin = last(&r, "run.final");
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(fin, "partial")));
	assert_int_equal(metric(&r, "steps_total"), 2);
	assert_int_equal(metric(&r, "steps_passed"), 2);
	assert_int_equal(metric(&r, "total_attempts"), 2);
	assert_int_equal(metric(&r, "replans"), 0);
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "passed");
	/* The executor of s2 saw s1's output, and s1's prompt had no dependency section. */
	assert_int_equal(r.rec->exec_prompts.n, 2);
	assert_null(strstr(r.rec->exec_prompts.v[0], "depends on"));
	assert_non_null(strstr(r.rec->exec_prompts.v[1], "- s1: "));
	{
		char *report = xasprintf("%s/report.md", r.run_dir), *plan = xasprintf("%s/plan.json", r.run_dir);
		assert_int_equal(access(report, R_OK), 0);
		assert_int_equal(access(plan, R_OK), 0);
		free(report);
		free(plan);
	}
	run_free(&r);
}

/* A final call that fails keeps what was verified: the run ends partial (exit 2) with
 * the verified results in its answer, not in an error that throws them away. */
static void final_call_fails(int purpose, const char *gap)
{
	struct run r;
	const cJSON *fin;
	const char *answer;

	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	r.fail_purpose = purpose;
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_PARTIAL);
	assert_string_equal(end_status(&r, "s1"), "passed");
	fin = last(&r, "run.final");
	assert_non_null(fin);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fin, "partial")));
	answer = jsonx_str(fin, "answer");
	assert_int_equal(strncmp(answer, "PARTIAL: ", 9), 0);
	assert_non_null(strstr(answer, gap));
	assert_non_null(strstr(answer, "HTTP 400: scripted failure"));
	if (purpose == PURPOSE_SYNTHESIZE)
		assert_non_null(strstr(answer, "[s1] s1: ")); /* the verified result itself */
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "partial");
	run_free(&r);
}

/* An executor answer cut at the token limit is not "malformed": the critique says it was
 * cut, and the retry passes. */
static void test_cut_off_answer_retried_as_such(void **state)
{
	struct run r;
	const cJSON *v;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	r.cut_first_answer = true;
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	v = nth(&r, "verify.verdict", "s1", 0);
	assert_string_equal(jsonx_str(v, "action"), "retry");
	assert_non_null(strstr(jsonx_str(v, "feedback"), "cut off at the output token limit"));
	assert_string_equal(end_status(&r, "s1"), "passed");
	run_free(&r);
}

static void test_synthesis_failure_keeps_verified_results(void **state)
{
	(void)state;
	final_call_fails(PURPOSE_SYNTHESIZE, "the synthesis call failed");
}

static void test_final_check_failure_is_a_gap(void **state)
{
	(void)state;
	final_call_fails(PURPOSE_FINAL_CHECK, "the whole-plan check failed");
}

static void test_retry_then_pass(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	script_verdicts(r.script, "s1", verdict("retry", "CRITIQUE-ONE: cite the source"),
			verdict("pass", NULL), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "step.start", "s1"), 2);
	assert_string_equal(jsonx_str(nth(&r, "verify.verdict", "s1", 1), "action"), "retry");
	assert_string_equal(jsonx_str(nth(&r, "verify.verdict", "s1", 3), "action"), "pass");
	/* The second attempt's prompt carries the critique; the first does not. */
	assert_int_equal(r.rec->exec_prompts.n, 2);
	assert_null(strstr(r.rec->exec_prompts.v[0], "CRITIQUE-ONE"));
	assert_non_null(strstr(r.rec->exec_prompts.v[1], "CRITIQUE-ONE"));
	assert_int_equal(metric(&r, "total_attempts"), 2);
	run_free(&r);
}

static void test_retries_exhausted_replan_keeps_passed(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.max_retries = 1;
	r.s.gates = GATE_MASK(GATE_REPLAN);
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	/* Revision 1 keeps s1 as it was and replaces s2 by s2b. */
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2b", "s1", NULL, NULL), NULL));
	script_verdicts(r.script, "s2", verdict("retry", "still wrong"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "step.start", "s2"), 2); /* 1 retry = 2 attempts */
	assert_int_equal(count(&r, "step.start", "s1"), 1); /* kept, never run again */
	assert_int_equal(count(&r, "plan.adopted", NULL), 2);
	{
		const cJSON *adopted = last(&r, "plan.adopted");
		const cJSON *kept = cJSON_GetObjectItem(adopted, "kept");
		assert_int_equal(cJSON_GetArraySize(kept), 1);
		assert_string_equal(cJSON_GetArrayItem(kept, 0)->valuestring, "s1");
	}
	{
		const cJSON *g = nth(&r, "gate.open", NULL, 0);
		const cJSON *diff = cJSON_GetObjectItem(g, "diff");
		assert_string_equal(jsonx_str(g, "gate"), "replan");
		assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(diff, "added"), 0)->valuestring, "s2b");
		assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(diff, "removed"), 0)->valuestring, "s2");
	}
	assert_string_equal(end_status(&r, "s2b"), "passed");
	assert_int_equal(metric(&r, "replans"), 1);
	run_free(&r);
}

static void test_replan_limit_fail_accepts(void **state)
{
	struct run r;
	const cJSON *fin;

	(void)state;
	run_init(&r, script_new());
	r.s.max_retries = 0;
	r.s.max_replans = 1;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	script_verdicts(r.script, "s2", verdict("retry", "never good enough"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_PARTIAL);
	/* One attempt per revision, two revisions (the planner repeats its plan). */
	assert_int_equal(count(&r, "step.start", "s2"), 2);
	assert_int_equal(count(&r, "step.start", "s1"), 1);
	assert_string_equal(end_status(&r, "s2"), "fail_accepted");
	fin = last(&r, "run.final");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fin, "partial")));
	assert_memory_equal(jsonx_str(fin, "answer"), "PARTIAL:", 8);
	assert_int_equal(metric(&r, "steps_fail_accepted"), 1);
	assert_int_equal(metric(&r, "replans"), 1);
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "partial");
	assert_int_equal((int)cJSON_GetObjectItem(last(&r, "run.end"), "exit_code")->valuedouble, 2);
	run_free(&r);
}

static void test_verifier_asks_replan(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	script_plan(r.script, plan_of(step("s1alt", NULL, NULL, NULL), NULL));
	script_verdicts(r.script, "s1", verdict("replan", "the source is unusable"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	/* No retry: a replan verdict goes straight to the planner. */
	assert_int_equal(count(&r, "step.start", "s1"), 1);
	assert_int_equal(count(&r, "plan.proposed", NULL), 2);
	assert_string_equal(jsonx_str(nth(&r, "plan.proposed", NULL, 1), "reason"), "replan");
	assert_string_equal(end_status(&r, "s1alt"), "passed");
	run_free(&r);
}

static void test_operator_rejects_plan(void **state)
{
	struct run r;
	const cJSON *dec;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_PLAN);
	r.answers[r.n_answers++] = (struct answer){"plan", GATE_REJECT, NULL, 0, false};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_ABORTED);
	assert_int_equal(count(&r, "step.start", NULL), 0);
	dec = last(&r, "gate.decision");
	assert_string_equal(jsonx_str(dec, "decision"), "reject");
	assert_string_equal(jsonx_str(dec, "by"), "operator");
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "aborted");
	assert_journal_shape(&r, true);
	run_free(&r);
}

static void test_operator_skips_high_step(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	r.answers[r.n_answers++] = (struct answer){"high", GATE_SKIP, NULL, 0, false};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", NULL, "high", NULL),
				      step("s3", "s2", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_PARTIAL);
	assert_string_equal(end_status(&r, "s2"), "skipped");
	assert_int_equal(count(&r, "step.start", "s2"), 0);
	/* A dependent of a skipped step still runs, told that the input is missing. */
	assert_string_equal(end_status(&r, "s3"), "passed");
	/* (s1 and s3 may run at the same time: look at both prompts.) */
	assert_int_equal(r.rec->exec_prompts.n, 2);
	assert_true(strstr(r.rec->exec_prompts.v[0], "skipped by the operator") ||
		    strstr(r.rec->exec_prompts.v[1], "skipped by the operator"));
	assert_int_equal(metric(&r, "steps_skipped"), 1);
	assert_memory_equal(jsonx_str(last(&r, "run.final"), "answer"), "PARTIAL:", 8);
	run_free(&r);
}

static void test_operator_edits_step_at_gate(void **state)
{
	struct run r;
	const cJSON *edit;
	char *edited;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	{
		cJSON *s = step("s1", NULL, "high", "EDITED-CRITERION");
		edited = jsonx_print(s);
		cJSON_Delete(s);
	}
	r.answers[r.n_answers++] = (struct answer){"high", GATE_EDIT, edited, 0, false};
	script_plan(r.script, plan_of(step("s1", NULL, "high", "original criterion"), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	edit = last(&r, "step.edit");
	assert_non_null(edit);
	assert_string_equal(jsonx_str(edit, "by"), "operator");
	assert_string_equal(
		cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(edit, "before"), "acceptance_criteria"), 0)->valuestring,
		"original criterion");
	/* The edit is not an answer: the same gate, approved after the edit. */
	assert_int_equal(count(&r, "gate.open", "s1"), 1);
	assert_string_equal(jsonx_str(last(&r, "gate.decision"), "decision"), "approve");
	assert_string_equal(jsonx_str(nth(&r, "operator.command", NULL, 0), "command"), "edit");
	assert_true(jsonx_num(nth(&r, "operator.command", NULL, 0), "seq", &(double){0}));
	/* The executor ran the edited step. */
	assert_non_null(strstr(r.rec->exec_prompts.v[0], "EDITED-CRITERION"));
	assert_null(strstr(r.rec->exec_prompts.v[0], "original criterion"));
	free(edited);
	run_free(&r);
}

static void test_invalid_plan_fixed_on_reask(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	/* A cycle first, then a valid plan. */
	script_plan(r.script, plan_of(step("a", "b", NULL, NULL), step("b", "a", NULL, NULL), NULL));
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", "a", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(r.rec->calls[ROLE_PLANNER], 3); /* plan, fix, synthesis */
	assert_non_null(strstr(jsonx_str(nth(&r, "notice", NULL, 0), "message"), "cycle"));
	assert_int_equal(count(&r, "plan.proposed", NULL), 1);
	run_free(&r);
}

static void test_invalid_plan_twice_is_error(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("a", "a", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_ERROR);
	assert_int_equal(count(&r, "plan.proposed", NULL), 0);
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "error");
	assert_non_null(strstr(jsonx_str(last(&r, "run.end"), "reason"), "invalid plan"));
	run_free(&r);
}

static void test_deterministic_catches_missing_artifact(void **state)
{
	struct run r;
	cJSON *attempts = cJSON_CreateArray(), *bad = cJSON_CreateObject(), *res, *out;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	/* Attempt 1 claims an artifact it never wrote; attempt 2 is the default (writes). */
	res = cJSON_CreateObject();
	cJSON_AddStringToObject(res, "reasoning", "r");
	cJSON_AddItemToObject(res, "actions_taken", cJSON_CreateArray());
	out = cJSON_AddObjectToObject(res, "step_output");
	cJSON_AddStringToObject(out, "findings", "f");
	cJSON_AddItemToObject(out, "artifacts", strings("ghost.md"));
	cJSON_AddBoolToObject(out, "meets_criteria", true);
	cJSON_AddNumberToObject(res, "confidence", 0.9);
	cJSON_AddStringToObject(res, "notes", "");
	cJSON_AddItemToObject(bad, "rounds", cJSON_CreateArray());
	cJSON_AddItemToObject(bad, "final", cJSON_Duplicate(res, 1));
	cJSON_AddItemToArray(attempts, bad);
	{
		/* Attempt 2 writes the file, then makes the same claim. */
		cJSON *good = cJSON_CreateObject(), *rounds = cJSON_AddArrayToObject(good, "rounds");
		cJSON *round = cJSON_CreateObject(), *calls = cJSON_AddArrayToObject(round, "tool_calls");
		cJSON *call = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(call, "input");
		cJSON_AddStringToObject(round, "text", "writing it this time");
		cJSON_AddStringToObject(call, "name", "write_file");
		cJSON_AddStringToObject(in, "path", "ghost.md");
		cJSON_AddStringToObject(in, "content", "now it exists");
		cJSON_AddItemToArray(calls, call);
		cJSON_AddItemToArray(rounds, round);
		cJSON_AddItemToObject(good, "final", res);
		cJSON_AddItemToArray(attempts, good);
	}
	cJSON_AddItemToObject(cJSON_GetObjectItem(r.script, "executor"), "s1", attempts);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	{
		const cJSON *v = nth(&r, "verify.verdict", "s1", 0);
		assert_string_equal(jsonx_str(v, "stage"), "deterministic");
		assert_string_equal(jsonx_str(v, "action"), "retry");
		assert_non_null(strstr(jsonx_str(v, "feedback"), "ghost.md"));
	}
	/* No model verification of the failed attempt: the verifier ran once (attempt 2)
	 * plus the final check. */
	assert_int_equal(r.rec->calls[ROLE_VERIFIER], 2);
	assert_non_null(strstr(r.rec->exec_prompts.v[1], "ghost.md"));
	run_free(&r);
}

/*
 * A model's tool input nested as deep as cJSON reads it (1000 levels) would put in
 * tool.call's params a line nested deeper than any reader takes: the journal would no
 * longer load (no resume, no replay, no report). Such an input is refused as the tool's
 * error, and the journal stays whole.
 */
static void test_deep_tool_input_keeps_the_journal(void **state)
{
	struct run r;
	cJSON *attempts = cJSON_CreateArray(), *good = cJSON_CreateObject();
	cJSON *rounds = cJSON_AddArrayToObject(good, "rounds");
	cJSON *round = cJSON_CreateObject(), *calls = cJSON_AddArrayToObject(round, "tool_calls");
	cJSON *call = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(call, "input");
	const cJSON *res;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	cJSON_AddStringToObject(round, "text", "writing");
	cJSON_AddStringToObject(call, "name", "write_file");
	cJSON_AddStringToObject(in, "path", "deep.md");
	cJSON_AddStringToObject(in, "content", "x");
	cJSON_AddItemToArray(calls, call);
	cJSON_AddItemToArray(rounds, round);
	cJSON_AddItemToArray(attempts, good);
	cJSON_AddItemToObject(cJSON_GetObjectItem(r.script, "executor"), "s1", attempts);
	r.deep_input = 1000;
	run_go(&r, GATE_MODE_YES, false); /* loads the journal: it must load */
	res = nth(&r, "tool.result", "s1", 0);
	assert_non_null(res);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "ok")));
	assert_non_null(strstr(jsonx_str(res, "summary"), "nest deeper than"));
	run_free(&r);
}

static void test_gate_without_operator_exits_3(void **state)
{
	struct run r;
	const cJSON *dec;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_PLAN);
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_NONE, false), PEV_EXIT_ABORTED);
	dec = last(&r, "gate.decision");
	assert_string_equal(jsonx_str(dec, "by"), "policy");
	assert_string_equal(jsonx_str(dec, "decision"), "reject");
	assert_non_null(strstr(jsonx_str(dec, "reason"), "plan gate"));
	assert_int_equal(count(&r, "step.start", NULL), 0);
	run_free(&r);
}

static void test_identical_step_reuses_result(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.parallel = 3; /* both are ready at once: the second waits for the first */
	r.delay_ms = 1;
	/* Same definition (the id aside), no inputs: the second is the same work. */
	{
		cJSON *a = step("s1", NULL, NULL, NULL), *b = step("s2", NULL, NULL, NULL);
		cJSON_ReplaceItemInObject(a, "name", cJSON_CreateString("same work"));
		cJSON_ReplaceItemInObject(b, "name", cJSON_CreateString("same work"));
		script_plan(r.script, plan_of(a, b, NULL));
	}
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "step.start", "s2"), 0);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(nth(&r, "step.end", "s2", 0), "reused")));
	assert_int_equal(r.rec->exec_prompts.n, 1);
	/* It waited for its twin, in the open. */
	assert_non_null(strstr(jsonx_str(nth(&r, "notice", "s2", 0), "message"), "waits for s1"));
	run_free(&r);
}

static void test_abort_at_gate(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	r.answers[r.n_answers++] = (struct answer){"high", 0, NULL, PEV_CMD_ABORT, true};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", "high", NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_ABORTED);
	assert_string_equal(end_status(&r, "s1"), "passed");
	assert_int_equal(count(&r, "step.start", "s2"), 0);
	assert_string_equal(jsonx_str(last(&r, "run.end"), "status"), "aborted");
	run_free(&r);
}

static void test_quit_then_resume_runs_nothing_twice(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	r.answers[r.n_answers++] = (struct answer){"high", 0, NULL, PEV_CMD_QUIT, true};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", "high", NULL),
				      step("s3", "s2", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_ABORTED);
	assert_journal_shape(&r, false); /* quit leaves no run.end: resumable */
	assert_string_equal(end_status(&r, "s1"), "passed");
	run_end_go(&r);

	r.n_answers = 0;
	assert_int_equal(run_go(&r, GATE_MODE_YES, true), PEV_EXIT_OK);
	assert_journal_shape(&r, true);
	assert_int_equal(count(&r, "run.start", NULL), 1);
	assert_int_equal(count(&r, "step.start", "s1"), 1); /* not executed again */
	assert_string_equal(end_status(&r, "s2"), "passed");
	assert_string_equal(end_status(&r, "s3"), "passed");
	/* The resumed engine made no planner call for a plan: only the synthesis. */
	assert_int_equal(r.rec->calls[ROLE_PLANNER], 1);
	run_free(&r);
}

/* A replan proposal waiting at its gate when the run stopped is asked again on resume,
 * without a new planner call and without running the failed step again first. */
static void test_resume_reopens_replan_gate(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_REPLAN);
	r.answers[r.n_answers++] = (struct answer){"replan", 0, NULL, PEV_CMD_QUIT, true};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2b", "s1", NULL, NULL), NULL));
	script_verdicts(r.script, "s2", verdict("replan", "wrong source"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_ABORTED);
	assert_int_equal(count(&r, "gate.open", NULL), 1);
	run_end_go(&r);

	r.n_answers = 0;
	assert_int_equal(run_go(&r, GATE_MODE_YES, true), PEV_EXIT_OK);
	assert_int_equal(count(&r, "gate.open", NULL), 2);
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 1), "gate"), "replan");
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 1), "failed_step"), "s2");
	assert_int_equal(count(&r, "step.start", "s2"), 1);
	assert_string_equal(end_status(&r, "s2b"), "passed");
	assert_int_equal(metric(&r, "replans"), 1);
	assert_int_equal(r.rec->calls[ROLE_PLANNER], 1); /* only the synthesis */
	run_free(&r);
}

static void test_resume_refuses_finished_run(void **state)
{
	struct run r;
	struct provider *roles[ROLE__COUNT];
	struct bus *bus;
	struct gatekeeper *g;
	char *err = NULL;
	struct pev *e;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	pev_free(r.e); /* its lock on the run folder goes with it */
	r.e = NULL;
	bus = bus_new();
	g = gatekeeper_new(bus, 0, GATE_MODE_YES);
	for (int i = 0; i < ROLE__COUNT; i++)
		roles[i] = &r.rec->base;
	e = pev_new(&r.s, roles, bus, g, r.run_dir, PEV_OPEN_RESUME, &err);
	assert_null(e);
	/* Without a cockpit nobody can reopen it: one line that says where to go instead. */
	assert_non_null(strstr(err, "already finished (passed): browse it with pevtui --replay run1"));
	assert_non_null(strstr(err, "reopen it in the cockpit"));
	assert_null(strchr(err, '\n'));
	free(err);
	err = pev_finished_refusal(r.run_dir);
	assert_non_null(err);
	assert_non_null(strstr(err, "already finished (passed)"));
	free(err);
	gatekeeper_free(g);
	bus_free(bus);
	run_free(&r);
}

/* One engine per run folder: a second one, even in the same process, is refused while
 * the first lives, names the holder, and changes nothing. */
static void test_second_engine_on_a_run_folder_is_refused(void **state)
{
	struct run r;
	struct provider *roles[ROLE__COUNT];
	struct bus *bus;
	struct gatekeeper *g;
	char *err = NULL, *want, *path, *before, *after;
	struct pev *e;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	r.s.gates = GATE_MASK(GATE_PLAN);
	assert_int_equal(run_go(&r, GATE_MODE_NONE, false), PEV_EXIT_ABORTED);
	path = xasprintf("%s/journal.jsonl", r.run_dir);
	before = testdir_slurp(path);
	bus = bus_new();
	g = gatekeeper_new(bus, 0, GATE_MODE_YES);
	for (int i = 0; i < ROLE__COUNT; i++)
		roles[i] = &r.rec->base;
	e = pev_new(&r.s, roles, bus, g, r.run_dir, PEV_OPEN_RESUME, &err);
	assert_null(e);
	want = xasprintf("the run run1 is in use by pid %ld", (long)getpid());
	assert_non_null(strstr(err, want));
	free(want);
	free(err);
	err = NULL;
	after = testdir_slurp(path);
	assert_string_equal(before, after);
	free(after);
	/* Released with the first engine: now the resume is taken. */
	pev_free(r.e);
	r.e = NULL;
	e = pev_new(&r.s, roles, bus, g, r.run_dir, PEV_OPEN_RESUME, &err);
	if (!e)
		fail_msg("pev_new after release: %s", err);
	pev_free(e);
	free(before);
	free(path);
	gatekeeper_free(g);
	bus_free(bus);
	run_free(&r);
}

/* The most steps started and not yet ended at any point of the journal. */
static int max_in_flight(const struct run *r)
{
	struct strvec open = STRVEC_INIT;
	const cJSON *ev;
	int most = 0;

	cJSON_ArrayForEach(ev, r->events)
	{
		const char *type = jsonx_str(ev, "type"), *sid = jsonx_str(ev, "step_id");
		size_t k;
		if (!sid)
			continue;
		for (k = 0; k < open.n && strcmp(open.v[k], sid); k++)
			;
		if (!strcmp(type, "step.start") && k == open.n)
			strvec_push(&open, sid);
		if (!strcmp(type, "step.end") && k < open.n) {
			free(open.v[k]);
			open.v[k] = open.v[--open.n];
		}
		if ((int)open.n > most)
			most = (int)open.n;
	}
	strvec_clear(&open);
	return most;
}

/* For failure messages: one line per event. */
static void dump_events(const struct run *r)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
	{
		const char *sid = jsonx_str(ev, "step_id");
		double seq = 0, att = 0;
		jsonx_num(ev, "seq", &seq);
		jsonx_num(ev, "attempt", &att);
		print_message("  %3d %-15s %-6s %d %s%s\n", (int)seq, jsonx_str(ev, "type"),
			      sid ? sid : "", (int)att, jsonx_str(ev, "status") ? jsonx_str(ev, "status") : "",
			      jsonx_str(ev, "action") ? jsonx_str(ev, "action") : "");
	}
}

static double seq_of(const cJSON *ev)
{
	double d = -1;

	jsonx_num(ev, "seq", &d);
	return d;
}

static void test_parallel_limit_and_order(void **state)
{
	struct run r;
	double join_start;

	(void)state;
	run_init(&r, script_new());
	r.s.parallel = 2;
	r.delay_ms = 2; /* long enough for steps to overlap */
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), step("d", NULL, NULL, NULL),
				      step("join", "a,b,c,d", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	/* Two at a time, never more. */
	if (max_in_flight(&r) != 2)
		dump_events(&r);
	assert_int_equal(max_in_flight(&r), 2);
	/* The join starts only after every one of its dependencies passed. */
	join_start = seq_of(nth(&r, "step.start", "join", 0));
	assert_true(seq_of(nth(&r, "step.end", "a", 0)) < join_start);
	assert_true(seq_of(nth(&r, "step.end", "b", 0)) < join_start);
	assert_true(seq_of(nth(&r, "step.end", "c", 0)) < join_start);
	assert_true(seq_of(nth(&r, "step.end", "d", 0)) < join_start);
	assert_int_equal(metric(&r, "steps_passed"), 5);
	/* The join's executor saw the four outputs and nothing else. */
	{
		const char *jp = NULL;
		for (size_t k = 0; k < r.rec->exec_prompts.n; k++)
			if (strstr(r.rec->exec_prompts.v[k], "depends on")) /* only the join has deps */
				jp = r.rec->exec_prompts.v[k];
		assert_non_null(jp);
		assert_non_null(strstr(jp, "- a: "));
		assert_non_null(strstr(jp, "- d: "));
	}
	run_free(&r);
}

static void test_parallel_one_is_sequential(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.parallel = 1;
	r.delay_ms = 1;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(max_in_flight(&r), 1);
	run_free(&r);
}

/* A replan requested while other steps run waits for them, then applies. */
static void test_replan_waits_for_running_steps(void **state)
{
	struct run r;
	const cJSON *proposal, *ev;
	double at;

	(void)state;
	run_init(&r, script_new());
	r.s.parallel = 3;
	r.s.max_retries = 0;
	r.delay_ms = 1;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), NULL));
	script_plan(r.script, plan_of(step("a2", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), NULL));
	script_verdicts(r.script, "a", verdict("replan", "wrong approach"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	proposal = nth(&r, "plan.proposed", NULL, 1);
	assert_non_null(proposal);
	at = seq_of(proposal);
	/* Every step that had started before the proposal had ended before it. */
	cJSON_ArrayForEach(ev, r.events)
	{
		const char *sid = jsonx_str(ev, "step_id");
		if (seq_of(ev) > at || strcmp(jsonx_str(ev, "type"), "step.start"))
			continue;
		if (!strcmp(sid, "a"))
			continue; /* the failing step ends by the replan itself */
		if (!(seq_of(nth(&r, "step.end", sid, 0)) < at)) {
			dump_events(&r);
			fail_msg("%s ended after the replan proposal", sid);
		}
	}
	/* b and c passed under revision 0 and are kept, not run again. */
	assert_int_equal(count(&r, "step.start", "b"), 1);
	assert_int_equal(count(&r, "step.start", "c"), 1);
	assert_string_equal(end_status(&r, "a2"), "passed");
	run_free(&r);
}

/* The tool failures --chaos injects, as "step:tool" lines in journal order per step. */
static char *chaos_trace(const struct run *r)
{
	struct strvec lines = STRVEC_INIT;
	const cJSON *ev;
	char *joined;

	cJSON_ArrayForEach(ev, r->events)
	{
		const char *kind = jsonx_str(ev, "kind");
		if (strcmp(jsonx_str(ev, "type"), "notice") || !kind || strcmp(kind, "tool_retry"))
			continue;
		strvec_pushf(&lines, "%s:%s", jsonx_str(ev, "step_id"), jsonx_str(ev, "tool"));
	}
	/* Steps run in parallel interleave differently; each step's own sequence is what
	 * the seed fixes, so compare sorted. */
	strvec_sort(&lines);
	joined = strvec_join(&lines, "\n");
	strvec_clear(&lines);
	return joined;
}

static char *chaos_run(unsigned long seed)
{
	struct run r;
	char *trace;

	run_init(&r, script_new());
	r.s.parallel = 3;
	r.s.chaos = 0.5;
	r.s.chaos_seed = seed;
	r.s.max_retries = 5;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), NULL));
	run_go(&r, GATE_MODE_YES, false);
	trace = chaos_trace(&r);
	run_free(&r);
	return trace;
}

/* --chaos is seeded: the same seed injects the same failures, even with parallel steps. */
static void test_chaos_is_reproducible(void **state)
{
	char *t1 = chaos_run(7), *t2 = chaos_run(7), *t3 = chaos_run(8);

	(void)state;
	assert_true(strlen(t1) > 0); /* failures were injected and retried */
	assert_string_equal(t1, t2);
	assert_string_not_equal(t1, t3);
	free(t1);
	free(t2);
	free(t3);
}


/* ------------------------------------------------- the operator loop (issue 9) */

static bool is(const cJSON *ev, const char *type, const char *step_id)
{
	const char *sid = jsonx_str(ev, "step_id");

	return !strcmp(jsonx_str(ev, "type"), type) &&
	       (!step_id || (sid && !strcmp(sid, step_id)));
}

static unsigned long gate_id_of(const cJSON *ev)
{
	double d = 0;

	jsonx_num(ev, "gate_id", &d);
	return (unsigned long)d;
}

/* big's high gate stays open until `after` (which depends on quick) has finished. */
static void hold_big_gate(struct run *r, const cJSON *ev)
{
	if (is(ev, "gate.open", "big"))
		r->held_gate = gate_id_of(ev);
	if (is(ev, "step.end", "after")) {
		assert_true(r->held_gate != 0);
		assert_true(gatekeeper_answer(r->gates, r->held_gate, GATE_APPROVE, NULL));
	}
}

/* A gate holds only its step: the others run, finish and start while it is open. */
static void test_gate_holds_only_its_step(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	r.s.parallel = 2;
	r.hook = hold_big_gate;
	script_plan(r.script, plan_of(step("big", NULL, "high", NULL), step("quick", NULL, NULL, NULL),
				      step("after", "quick", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	/* quick passed and after started and passed while big's gate was open. */
	assert_true(seq_of(nth(&r, "gate.open", "big", 0)) < seq_of(nth(&r, "step.end", "quick", 0)));
	assert_true(seq_of(nth(&r, "step.end", "after", 0)) <
		    seq_of(nth(&r, "gate.decision", "big", 0)));
	assert_string_equal(jsonx_str(nth(&r, "step.state", "big", 0), "state"), "waiting");
	assert_string_equal(end_status(&r, "big"), "passed");
	run_free(&r);
}

/* At b's gate the operator edits a (which b depends on): b's gate is withdrawn, b goes
 * stale, a runs again, and only then b is asked about again and runs. */
static void edit_input_at_gate(struct run *r, const cJSON *ev)
{
	if (is(ev, "gate.open", "b") && r->hook_state++ == 0) {
		cJSON *a = step("a", NULL, NULL, NULL);
		char *json;
		cJSON_ReplaceItemInObject(a, "description", cJSON_CreateString("do it better"));
		json = jsonx_print(a);
		cJSON_Delete(a);
		pev_post(r->e, PEV_CMD_EDIT, "a", json);
		free(json);
	} else if (is(ev, "gate.open", "b")) {
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev), GATE_APPROVE, NULL));
	}
}

/* The n-th step.state of a step with this state, or NULL. */
static const cJSON *nth_state(const struct run *r, const char *step_id, const char *state, int n)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
	{
		if (is(ev, "step.state", step_id) && !strcmp(jsonx_str(ev, "state"), state) &&
		    n-- == 0)
			return ev;
	}
	return NULL;
}

static void test_edit_at_gate_invalidates_dependents(void **state)
{
	struct run r;
	const cJSON *withdrawn, *stale;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_HIGH);
	r.hook = edit_input_at_gate;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", "a", "high", NULL),
				      NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	withdrawn = nth(&r, "gate.decision", "b", 0);
	assert_string_equal(jsonx_str(withdrawn, "decision"), "withdrawn");
	stale = nth_state(&r, "a", "stale", 0);
	assert_non_null(stale);
	assert_non_null(nth_state(&r, "b", "stale", 0));
	assert_string_equal(jsonx_str(nth_state(&r, "b", "stale", 0), "cause"), "a");
	assert_int_equal(count(&r, "step.start", "a"), 2);
	assert_int_equal(count(&r, "step.start", "b"), 1);
	/* b ran on a's second pass, after its second gate. */
	assert_true(seq_of(nth(&r, "step.end", "a", 1)) < seq_of(nth(&r, "gate.open", "b", 1)));
	assert_true(seq_of(nth(&r, "gate.decision", "b", 1)) < seq_of(nth(&r, "step.start", "b", 0)));
	/* The journal says what was asked, before what it caused. */
	assert_true(seq_of(nth(&r, "operator.command", NULL, 0)) < seq_of(stale));
	run_free(&r);
}

/* The cockpit's run stays open after run.end: a forced re-run reopens it, runs the step
 * and its dependents again (no reuse), and ends a second segment. */
static void rerun_after_end(struct run *r, const cJSON *ev)
{
	if (is(ev, "run.end", NULL) && r->hook_state++ == 0)
		pev_post(r->e, PEV_CMD_RERUN_FORCE, "a", NULL);
	else if (is(ev, "run.end", NULL))
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
}

/* At run.end the journal file is moved away (the engine's descriptor still appends to it). */
static void hide_journal_at_end(struct run *r, const cJSON *ev)
{
	char *path, *away;

	if (strcmp(jsonx_str(ev, "type"), "run.end"))
		return;
	path = xasprintf("%s/journal.jsonl", r->run_dir);
	away = xasprintf("%s/journal.away", r->run_dir);
	r->hook_state = rename(path, away) == 0;
	free(path);
	free(away);
}

static void bring_journal_back(struct run *r)
{
	char *path = xasprintf("%s/journal.jsonl", r->run_dir);
	char *away = xasprintf("%s/journal.away", r->run_dir);

	assert_int_equal(r->hook_state, 1);
	assert_int_equal(rename(away, path), 0);
	free(path);
	free(away);
}

/* The report comes from the events the engine published, not from reading the journal
 * back: with no journal.jsonl in the folder when run.end is written, report.md is written
 * all the same (no warning follows run.end), and it is what the journal renders to. */
static void test_report_without_reading_the_journal(void **state)
{
	struct run r;
	char *report;

	(void)state;
	run_init(&r, script_new());
	r.hook = hide_journal_at_end;
	r.joined = bring_journal_back;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(r.events, cJSON_GetArraySize(r.events) - 1),
				      "type"),
			    "run.end");
	report = xasprintf("%s/report.md", r.run_dir);
	assert_int_equal(access(report, R_OK), 0);
	free(report);
	/* run_go compared it with report_write's render of the journal (check_report). */
	run_free(&r);
}

/* The operator's edit, journaled in operator.command as the JSON it is, could nest as
 * deep as cJSON reads (1000): kept as a string instead, so the journal still loads. */
static void edit_deeply(struct run *r, const cJSON *ev)
{
	struct strbuf sb;

	if (!ev || !is(ev, "step.start", "s2") || r->hook_state++)
		return; /* (no ev: a line the hook cannot parse back) */
	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"context\":");
	for (int i = 0; i < 999; i++)
		strbuf_addc(&sb, '[');
	for (int i = 0; i < 999; i++)
		strbuf_addc(&sb, ']');
	strbuf_addc(&sb, '}');
	pev_post(r->e, PEV_CMD_EDIT, "s1", sb.buf);
	strbuf_release(&sb);
}

static void test_deep_operator_edit_keeps_the_journal(void **state)
{
	struct run r;
	const cJSON *cmd;

	(void)state;
	run_init(&r, script_new());
	r.hook = edit_deeply;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL), NULL));
	run_go(&r, GATE_MODE_YES, false); /* loads the journal: it must load */
	cmd = last(&r, "operator.command");
	assert_non_null(cmd);
	assert_string_equal(jsonx_str(cmd, "command"), "edit");
	assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cmd, "edited")));
	assert_int_equal(strncmp(jsonx_str(cmd, "edited"), "{\"context\":[[[", 14), 0);
	run_free(&r);
}

/* A lingering cockpit's run ends (report.md written), is re-run, and the operator quits
 * the second segment before its end: what the first end said of the report is forgotten,
 * so the front end prints no "report:" line for a segment that wrote none. */
static void rerun_then_quit(struct run *r, const cJSON *ev)
{
	if (is(ev, "run.end", NULL) && r->hook_state++ == 0)
		pev_post(r->e, PEV_CMD_RERUN_FORCE, "a", NULL);
	else if (is(ev, "run.reopen", NULL))
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
}

static void no_report_said(struct run *r)
{
	assert_int_equal(r->hook_state, 1); /* the first segment ended */
	assert_null(pev_report_path(r->e));
	assert_null(pev_report_error(r->e));
}

static void test_quit_after_rerun_forgets_the_report(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.linger = true;
	r.hook = rerun_then_quit;
	r.joined = no_report_said;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	run_go(&r, GATE_MODE_YES, false);
	assert_int_equal(count(&r, "run.reopen", NULL), 1);
	run_free(&r);
}

static void test_forced_rerun_reopens_finished_run(void **state)
{
	struct run r;
	const cJSON *ev;
	int ends = 0, reopens = 0;

	(void)state;
	run_init(&r, script_new());
	r.linger = true;
	r.hook = rerun_after_end;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", "a", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "step.start", "a"), 2);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(nth(&r, "step.end", "a", 1), "reused")));
	/* b went stale; its inputs came back byte for byte the same, so it reuses its own
	 * verified result, as a build tool would (a forced re-run of b would not). */
	assert_non_null(nth_state(&r, "b", "stale", 0));
	assert_int_equal(count(&r, "step.start", "b"), 1);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(nth(&r, "step.end", "b", 1), "reused")));
	/* One run.end per segment, a run.reopen between, naming the command. */
	cJSON_ArrayForEach(ev, r.events)
	{
		if (is(ev, "run.end", NULL))
			assert_int_equal(++ends, reopens + 1);
		if (is(ev, "run.reopen", NULL)) {
			assert_int_equal(++reopens, ends);
			assert_true(jsonx_num(ev, "by_seq", &(double){0}));
		}
	}
	assert_int_equal(ends, 2);
	assert_int_equal(count(&r, "run.final", NULL), 2);
	run_free(&r);
}

/*
 * An MCP server that finishes starting after run.end, in the cockpit (which keeps the run
 * open): the server of the tests waits on a FIFO (--hold) until the first run.end, when a
 * thread of the test lets it start, waits until the hub has its outcome and then posts
 * `then` (a re-run of "a", or quit). Nothing is journaled after a run.end but what a
 * command starts.
 */
static struct late_server {
	char *fifo;
	enum pev_cmd then;
	pthread_t thread;
	bool thread_live;
} late;

static void *let_server_start(void *arg)
{
	struct run *r = arg;
	int fd = open(late.fifo, O_WRONLY | O_CLOEXEC); /* once the server reads it */

	assert_true(fd >= 0);
	close(fd);
	mcp_hub_wait(r->e->mcp); /* its start is over: told, or held while the run is ended */
	pev_post(r->e, late.then, late.then == PEV_CMD_QUIT ? NULL : "a", NULL);
	return NULL;
}

/* "a" is skipped at its gate the first time (no executor call waits for the server, so
 * the run ends while it starts), approved the second. */
static void late_server_hook(struct run *r, const cJSON *ev)
{
	if (is(ev, "gate.open", "a"))
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev),
					      r->hook_state == 0 ? GATE_SKIP : GATE_APPROVE, NULL));
	if (is(ev, "run.end", NULL) && r->hook_state++ == 0) {
		assert_int_equal(pthread_create(&late.thread, NULL, let_server_start, r), 0);
		late.thread_live = true;
	} else if (is(ev, "run.end", NULL)) {
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
	}
}

static void late_server_run(struct run *r, enum pev_cmd then)
{
	char *err = NULL;
	cJSON *ex = cJSON_CreateObject(), *attempt, *round;

	run_init(r, script_new());
	late.fifo = xasprintf("%s/hold", r->dir);
	late.then = then;
	late.thread_live = false;
	assert_int_equal(mkfifo(late.fifo, 0600), 0);
	assert_true(mcp_conf_set_key(&r->s.mcp, "t", "command", MCP_TEST_SERVER, &err));
	/* the FIFO's path as one word, whatever it holds */
	strvec_push(&r->s.mcp.v[0].args, "--hold");
	strvec_push(&r->s.mcp.v[0].args, late.fifo);
	assert_true(mcp_conf_set_key(&r->s.mcp, "t", "allow", "echo", &err));
	r->s.gates = GATE_MASK(GATE_HIGH);
	r->linger = true;
	r->hook = late_server_hook;
	script_plan(r->script, plan_of(step("a", NULL, "high", NULL), NULL));
	/* The re-run's attempt calls the server's echo. */
	attempt = cJSON_CreateObject();
	round = cJSON_CreateObject();
	cJSON_AddStringToObject(round, "text", "Calling.");
	cJSON_AddItemToObject(round, "tool_calls",
			      cJSON_Parse("[{\"name\": \"t__echo\", \"input\": {\"text\": \"hi\"}}]"));
	cJSON_AddItemToArray(cJSON_AddArrayToObject(attempt, "rounds"), round);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(ex, "a"), attempt);
	cJSON_ReplaceItemInObject(r->script, "executor", ex);
}

static void late_server_done(struct run *r)
{
	if (late.thread_live)
		pthread_join(late.thread, NULL);
	free(late.fifo);
	late.fifo = NULL;
	run_free(r);
}

/* Every event after a run.end, up to the next run.reopen, is the command that reopened
 * the run; nothing at all follows the last. */
static void assert_nothing_after_run_end(const struct run *r)
{
	const cJSON *ev;
	bool ended = false;

	cJSON_ArrayForEach(ev, r->events)
	{
		if (ended && !is(ev, "operator.command", NULL) && !is(ev, "run.reopen", NULL))
			fail_msg("%s (%s) was journaled after run.end", jsonx_str(ev, "type"),
				 jsonx_str(ev, "message") ? jsonx_str(ev, "message") : "");
		/* A quit after the end ends the loop, not the run: it is no part of the record. */
		if (ended && is(ev, "operator.command", NULL) &&
		    !strcmp(jsonx_str(ev, "command"), "quit"))
			fail_msg("operator.command quit was journaled after run.end");
		if (is(ev, "run.end", NULL))
			ended = true;
		if (is(ev, "run.reopen", NULL))
			ended = false;
	}
	assert_true(ended);
}

/* The cockpit's --resume of a finished run opens it at its end: nothing is journaled
 * until a command reopens it, and a quit leaves the journal byte for byte as it was. */
static void quit_at_once(struct run *r)
{
	assert_true(pev_post(r->e, PEV_CMD_QUIT, NULL, NULL));
}

static void test_finished_run_opens_at_its_end(void **state)
{
	struct run r;
	char *path, *before, *after;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, PEV_OPEN_NEW), PEV_EXIT_OK);
	run_end_go(&r);
	path = xasprintf("%s/journal.jsonl", r.run_dir);
	before = testdir_slurp(path);
	r.linger = true;
	r.started = quit_at_once;
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, PEV_OPEN_FINISHED), PEV_EXIT_OK);
	after = testdir_slurp(path);
	assert_string_equal(before, after);
	/* The loop is over: nothing more can be delivered, and the poster is told. */
	assert_false(pev_post(r.e, PEV_CMD_RERUN, "a", NULL));
	free(before);
	free(after);
	free(path);
	run_free(&r);
}

/* ... and a re-run reopens it: run.reopen names the command, the step runs again, and the
 * new segment ends with its own run.end (after which the quit is not journaled). */
static void rerun_at_once(struct run *r)
{
	assert_true(pev_post(r->e, PEV_CMD_RERUN_FORCE, "a", NULL));
}

static void quit_at_end(struct run *r, const cJSON *ev)
{
	if (is(ev, "run.end", NULL))
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
}

static void test_finished_run_reopened_by_rerun(void **state)
{
	struct run r;
	const cJSON *reopen, *cmd;

	(void)state;
	run_init(&r, script_new());
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, PEV_OPEN_NEW), PEV_EXIT_OK);
	run_end_go(&r);
	r.linger = true;
	r.started = rerun_at_once;
	r.hook = quit_at_end;
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, PEV_OPEN_FINISHED), PEV_EXIT_OK);
	assert_int_equal(count(&r, "run.end", NULL), 2);
	assert_int_equal(count(&r, "run.reopen", NULL), 1);
	assert_int_equal(count(&r, "step.start", "a"), 2);
	reopen = nth(&r, "run.reopen", NULL, 0);
	assert_string_equal(jsonx_str(reopen, "reason"), "rerun");
	cmd = last(&r, "operator.command");
	assert_string_equal(jsonx_str(cmd, "command"), "rerun");
	assert_true(jsonx_num(reopen, "by_seq", &(double){0}));
	assert_nothing_after_run_end(&r);
	run_free(&r);
}

/* A detached run stays at its end while a cockpit watches: a re-run from it reopens the
 * run; when the last watcher goes the engine leaves, journaling nothing for it. */
static atomic_bool watching_now;

static void watched_rerun_then_leave(struct run *r, const cJSON *ev)
{
	if (!is(ev, "run.end", NULL))
		return;
	if (r->hook_state++ == 0) {
		assert_true(pev_post(r->e, PEV_CMD_RERUN_FORCE, "a", NULL));
	} else {
		atomic_store(&watching_now, false);
		pev_watchers_changed(r->e);
	}
}

static void test_detached_run_lingers_while_watched(void **state)
{
	struct run r;

	(void)state;
	atomic_store(&watching_now, true);
	run_init(&r, script_new());
	r.watch = &watching_now;
	r.hook = watched_rerun_then_leave;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, PEV_OPEN_NEW), PEV_EXIT_OK);
	assert_int_equal(count(&r, "run.end", NULL), 2);
	assert_int_equal(count(&r, "run.reopen", NULL), 1);
	assert_int_equal(count(&r, "step.start", "a"), 2);
	assert_nothing_after_run_end(&r);
	assert_false(pev_post(r.e, PEV_CMD_RERUN, "a", NULL));
	run_free(&r);
}

/* Nobody watching at run.end: the detached run leaves there, as a headless one does. */
static void test_detached_run_unwatched_leaves_at_end(void **state)
{
	struct run r;

	(void)state;
	atomic_store(&watching_now, false);
	run_init(&r, script_new());
	r.watch = &watching_now;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, PEV_OPEN_NEW), PEV_EXIT_OK);
	assert_int_equal(count(&r, "run.end", NULL), 1);
	assert_nothing_after_run_end(&r);
	run_free(&r);
}

static const cJSON *mcp_notice(const struct run *r, const char *state)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
	{
		if (is(ev, "notice", NULL) && jsonx_str(ev, "kind") &&
		    !strcmp(jsonx_str(ev, "kind"), "mcp_server") &&
		    !strcmp(jsonx_str(ev, "state"), state))
			return ev;
	}
	return NULL;
}

/* The operator quits the ended run: the server that came up after run.end is not told. */
static void test_server_up_after_run_end_is_not_journaled(void **state)
{
	struct run r;

	(void)state;
	late_server_run(&r, PEV_CMD_QUIT);
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_PARTIAL);
	assert_string_equal(end_status(&r, "a"), "skipped");
	assert_nothing_after_run_end(&r);
	assert_null(mcp_notice(&r, "started"));
	late_server_done(&r);
}

/* A re-run reopens the run: the server that came up while it was ended is told in the new
 * segment, before the re-run calls its tool. */
static void test_rerun_uses_server_up_after_run_end(void **state)
{
	struct run r;
	const cJSON *up, *reopen, *res;

	(void)state;
	late_server_run(&r, PEV_CMD_RERUN);
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	assert_nothing_after_run_end(&r);
	up = mcp_notice(&r, "started");
	reopen = nth(&r, "run.reopen", NULL, 0);
	res = nth(&r, "tool.result", "a", 0);
	assert_non_null(up);
	assert_non_null(reopen);
	assert_non_null(res);
	assert_true(seq_of(reopen) < seq_of(up));
	assert_true(seq_of(up) < seq_of(nth(&r, "tool.call", "a", 0)));
	assert_string_equal(jsonx_str(res, "server"), "t");
	assert_string_equal(jsonx_str(res, "mcp_status"), "ok");
	assert_string_equal(end_status(&r, "a"), "passed");
	late_server_done(&r);
}

/*
 * --resume of a run that ended (rejected at its plan gate): the run is ended until the
 * run.reopen the resumed engine publishes first; its MCP servers start beside it, and a
 * start that is over before that run.reopen is told after it, not after the run.end.
 */
static void test_resumed_ended_run_tells_servers_after_reopen(void **state)
{
	struct run r;
	char *err = NULL;
	const cJSON *ev;
	bool ended = false;
	int bad = 0;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_PLAN);
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_NONE, false), PEV_EXIT_ABORTED);
	run_end_go(&r);

	r.s.gates = 0;
	/* A server that fails at once: its outcome is ready before the engine's first event. */
	assert_true(mcp_conf_set_key(&r.s.mcp, "t", "command", "/nonexistent/pevtui-mcp", &err));
	assert_int_equal(run_go(&r, GATE_MODE_YES, true), PEV_EXIT_OK);
	cJSON_ArrayForEach(ev, r.events)
	{
		if (ended && !is(ev, "operator.command", NULL) && !is(ev, "run.reopen", NULL)) {
			print_message("%s (%s) after run.end\n", jsonx_str(ev, "type"),
				      jsonx_str(ev, "message") ? jsonx_str(ev, "message") : "");
			bad++;
		}
		if (is(ev, "run.end", NULL))
			ended = true;
		if (is(ev, "run.reopen", NULL))
			ended = false;
	}
	assert_int_equal(bad, 0);
	ev = mcp_notice(&r, "failed");
	assert_non_null(ev);
	assert_true(seq_of(nth(&r, "run.reopen", NULL, 0)) < seq_of(ev));
	run_free(&r);
}

/*
 * A call whose provider rebuilt its body (a retry) writes it again under the same number;
 * when that rewrite cannot be kept (the cap: an older run's 256 MiB of requests/, sparse
 * here), llm.call still names the number, whose first body is on disk.
 */
static void test_request_kept_when_its_rewrite_is_not(void **state)
{
	struct run r;
	struct request_ref ref;
	char *old, *err = NULL, *body;
	const cJSON *call, *ev;
	size_t len;
	int fd;
	bool told = false;

	(void)state;
	run_init(&r, script_new());
	r.rewrite_planner = true;
	r.run_dir = xasprintf("%s/run1", r.dir);
	assert_int_equal(mkdir(r.run_dir, 0700), 0);
	old = xasprintf("%s/" REQUESTS_DIR, r.run_dir);
	assert_int_equal(mkdir(old, 0700), 0);
	free(old);
	old = xasprintf("%s/" REQUESTS_DIR "/000001-planner-~-0.json", r.run_dir);
	fd = open(old, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(REQUESTS_MAX_BYTES - 1000)), 0);
	close(fd);
	free(old);
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	call = nth(&r, "llm.call", NULL, 0);
	assert_string_equal(jsonx_str(call, "role"), "planner");
	assert_non_null(jsonx_str(call, "request"));
	assert_string_equal(jsonx_str(call, "request"), "requests.jsonl#2");
	assert_true(requests_find(r.run_dir, jsonx_str(call, "request"), &ref));
	body = requests_read(r.run_dir, &ref, 1024, &len, NULL, &err);
	assert_non_null(body);
	assert_string_equal(body, "{\"first\":1}");
	free(body);
	requests_ref_release(&ref);
	/* The run says why the rest was not kept; later calls name no request. */
	cJSON_ArrayForEach(ev, r.events)
	{
		if (is(ev, "notice", NULL) && strstr(jsonx_str(ev, "message"), "cap of 256 MiB"))
			told = true;
		if (is(ev, "llm.call", NULL) && ev != call)
			assert_null(jsonx_str(ev, "request"));
	}
	assert_true(told);
	run_free(&r);
}

/* A verdict that leaves out a criterion is asked again, then counts as failed with the
 * criterion marked "not judged". */
static cJSON *verdict_judging(const char *passing_csv)
{
	cJSON *v = cJSON_CreateObject(), *crit = cJSON_CreateArray();
	char *copy = xstrdup(passing_csv), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "criterion", t);
		cJSON_AddBoolToObject(c, "passed", true);
		cJSON_AddStringToObject(c, "evidence", "seen");
		cJSON_AddItemToArray(crit, c);
	}
	free(copy);
	cJSON_AddBoolToObject(v, "overall_pass", true);
	cJSON_AddItemToObject(v, "criteria_results", crit);
	cJSON_AddStringToObject(v, "action", "pass");
	cJSON_AddStringToObject(v, "severity", "minor");
	return v;
}

static void test_unjudged_criterion_fails_the_verdict(void **state)
{
	struct run r;
	const cJSON *v, *c;
	bool not_judged = false;

	(void)state;
	run_init(&r, script_new());
	r.s.max_retries = 0;
	r.s.max_replans = 0;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, "alpha,beta,gamma,delta"), NULL));
	script_verdicts(r.script, "s1", verdict_judging("alpha,beta,gamma"), NULL);
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_PARTIAL);
	/* Asked twice for the one attempt: the second time naming "delta". */
	assert_int_equal(r.rec->calls[ROLE_VERIFIER], 2); /* no final check: nothing passed */
	v = nth(&r, "verify.verdict", "s1", 1);
	assert_string_equal(jsonx_str(v, "stage"), "model");
	assert_string_equal(jsonx_str(v, "action"), "retry");
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(v, "criteria"))
	{
		if (!strcmp(jsonx_str(c, "criterion"), "delta")) {
			not_judged = cJSON_IsTrue(cJSON_GetObjectItem(c, "not_judged"));
			assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c, "passed")));
		}
	}
	assert_true(not_judged);
	assert_non_null(strstr(jsonx_str(v, "feedback"), "delta"));
	assert_string_equal(end_status(&r, "s1"), "fail_accepted");
	run_free(&r);
}

static void priced_models(struct run *r)
{
	free(r->s.model[ROLE_PLANNER]);
	free(r->s.model[ROLE_EXECUTOR]);
	free(r->s.model[ROLE_VERIFIER]);
	r->s.model[ROLE_PLANNER] = xstrdup("sim-planner");
	r->s.model[ROLE_EXECUTOR] = xstrdup("sim-executor");
	r->s.model[ROLE_VERIFIER] = xstrdup("sim-verifier");
}

static double spent(const struct run *r, double *max_call)
{
	const cJSON *ev;
	double total = 0, c;

	*max_call = 0;
	cJSON_ArrayForEach(ev, r->events)
	{
		if (is(ev, "llm.call", NULL) && jsonx_num(ev, "cost_usd", &c)) {
			total += c;
			if (c > *max_call)
				*max_call = c;
		}
	}
	return total;
}

/* --yes never raises the budget: the run stops at the cap, within the calls in flight. */
static void test_budget_is_a_cap_without_operator(void **state)
{
	struct run r;
	double max_call, total;

	(void)state;
	run_init(&r, script_new());
	priced_models(&r);
	r.s.gates = GATE_MASK(GATE_BUDGET) | GATE_MASK(GATE_PLAN);
	r.s.parallel = 3;
	r.s.budget_usd = 0.02;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", NULL, NULL, NULL),
				      step("c", NULL, NULL, NULL), step("d", "a,b,c", NULL, NULL),
				      step("e", "d", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_ABORTED);
	total = spent(&r, &max_call);
	if (max_call <= 0)
		dump_events(&r);
	assert_true(max_call > 0);
	assert_true(total <= 0.02 + 3 * max_call);
	assert_non_null(strstr(jsonx_str(last(&r, "run.end"), "reason"), "--budget"));
	assert_null(last(&r, "run.final"));
	/* The plan gate said the estimate is over the budget. */
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(nth(&r, "gate.open", NULL, 0), "over_budget")));
	run_free(&r);
}

/* At the budget gate the operator sets a new cap; the check is armed again at it. */
static void raise_budget(struct run *r, const cJSON *ev)
{
	if (is(ev, "gate.open", NULL) && !strcmp(jsonx_str(ev, "gate"), "budget")) {
		const char *cap = r->hook_state++ == 0 ? "{\"budget_usd\": 0.03}" : "{\"budget_usd\": 10}";
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev), GATE_APPROVE, cap));
	}
}

static void test_budget_gate_takes_a_new_cap(void **state)
{
	struct run r;
	double max_call, total, at_second = 0;
	const cJSON *ev;

	(void)state;
	run_init(&r, script_new());
	priced_models(&r);
	r.s.gates = GATE_MASK(GATE_BUDGET);
	r.s.budget_usd = 0.02;
	r.hook = raise_budget;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), step("b", "a", NULL, NULL),
				      step("c", "b", NULL, NULL), step("d", "c", NULL, NULL),
				      step("e", "d", NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "gate.open", NULL), 2);
	/* The second gate opened at the new cap, not before it. */
	total = 0;
	cJSON_ArrayForEach(ev, r.events)
	{
		double c;
		if (is(ev, "llm.call", NULL) && jsonx_num(ev, "cost_usd", &c))
			total += c;
		if (is(ev, "gate.open", NULL) && !at_second && count(&r, "gate.open", NULL) == 2 &&
		    ev == nth(&r, "gate.open", NULL, 1))
			at_second = total;
	}
	assert_true(at_second > 0.02);
	assert_true(at_second <= 0.03 + 1e-9);
	assert_true(jsonx_num(nth(&r, "gate.decision", NULL, 0), "budget_usd", &(double){0}));
	(void)spent(&r, &max_call);
	run_free(&r);
}

/* A quit while the final answer is being written: no crash, no run.end, resumable. */
static void quit_at_final_check(struct run *r, const cJSON *ev)
{
	if (is(ev, "llm.call", NULL) && !strcmp(jsonx_str(ev, "purpose"), "final_check"))
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
}

static void test_quit_during_finish(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.hook = quit_at_final_check;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_ABORTED);
	assert_null(last(&r, "run.final"));
	assert_null(last(&r, "run.end"));
	run_end_go(&r);
	r.hook = NULL;
	assert_int_equal(run_go(&r, GATE_MODE_YES, true), PEV_EXIT_OK);
	assert_int_equal(count(&r, "step.start", "a"), 1);
	assert_non_null(last(&r, "run.final"));
	run_free(&r);
}

/* Cancelling what runs (the second p) cancels the planner's call too; resume asks again. */
static void cancel_the_planner(struct run *r, const cJSON *ev)
{
	if (is(ev, "run.start", NULL))
		pev_post(r->e, PEV_CMD_CANCEL_RUNNING, NULL, NULL);
	if (is(ev, "llm.call", NULL) && !strcmp(jsonx_str(ev, "status"), "cancelled"))
		pev_post(r->e, PEV_CMD_RESUME, NULL, NULL);
}

static void test_cancel_running_cancels_the_planner(void **state)
{
	struct run r;

	(void)state;
	run_init(&r, script_new());
	r.delay_ms = 20;
	r.hook = cancel_the_planner;
	script_plan(r.script, plan_of(step("a", NULL, NULL, NULL), NULL));
	assert_int_equal(run_go(&r, GATE_MODE_YES, false), PEV_EXIT_OK);
	assert_string_equal(jsonx_str(nth(&r, "llm.call", NULL, 0), "status"), "cancelled");
	assert_string_equal(jsonx_str(nth(&r, "llm.call", NULL, 0), "role"), "planner");
	assert_int_equal(count(&r, "plan.proposed", NULL), 1);
	run_free(&r);
}

/* -------------------------------------------------------- the shell gate */

/* An executor attempt that runs each command (NULL-terminated) in a round of its own. */
static cJSON *shell_attempt(const char *first, ...)
{
	cJSON *a = cJSON_CreateObject(), *rounds = cJSON_AddArrayToObject(a, "rounds");
	cJSON *res = cJSON_CreateObject(), *out;
	va_list ap;

	va_start(ap, first);
	for (const char *c = first; c; c = va_arg(ap, const char *)) {
		cJSON *round = cJSON_CreateObject();
		cJSON *calls = cJSON_AddArrayToObject(round, "tool_calls");
		cJSON *call = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(call, "input");
		cJSON_AddStringToObject(round, "text", "running it");
		cJSON_AddStringToObject(call, "name", "run_shell");
		cJSON_AddStringToObject(in, "command", c);
		cJSON_AddItemToArray(calls, call);
		cJSON_AddItemToArray(rounds, round);
	}
	va_end(ap);
	cJSON_AddStringToObject(res, "reasoning", "ran them");
	cJSON_AddItemToObject(res, "actions_taken", strings("run_shell"));
	out = cJSON_AddObjectToObject(res, "step_output");
	cJSON_AddStringToObject(out, "findings", "they ran");
	cJSON_AddItemToObject(out, "artifacts", cJSON_CreateArray());
	cJSON_AddBoolToObject(out, "meets_criteria", true);
	cJSON_AddNumberToObject(res, "confidence", 0.9);
	cJSON_AddStringToObject(res, "notes", "");
	cJSON_AddItemToObject(a, "final", res);
	return a;
}

static void script_attempt(cJSON *script, const char *step_id, cJSON *attempt)
{
	cJSON *arr = cJSON_CreateArray();

	cJSON_AddItemToArray(arr, attempt);
	cJSON_AddItemToObject(cJSON_GetObjectItem(script, "executor"), step_id, arr);
}

/* The n-th run_shell tool.result, or NULL. */
static const cJSON *nth_shell(const struct run *r, int n)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, r->events)
		if (is(ev, "tool.result", NULL) && !strcmp(jsonx_str(ev, "tool"), "run_shell") &&
		    n-- == 0)
			return ev;
	return NULL;
}

/* "Allow this exact command for the rest of the run": approved once with remember, the
 * same command runs again without a gate, in its step and in the next; another command
 * still asks. Each tool.result says what ran, how it got through, its exit and its time. */
static void test_shell_allowed_for_run(void **state)
{
	struct run r;
	const cJSON *d, *t;
	double v;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_SHELL);
	r.answers[r.n_answers++] = (struct answer){"shell", GATE_APPROVE, "{\"remember\":true}",
						   PEV_CMD_PAUSE, false};
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL),
				      NULL));
	script_attempt(r.script, "s1", shell_attempt("echo same", "echo same", NULL));
	script_attempt(r.script, "s2", shell_attempt("echo same", "echo other; exit 4", NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "gate.open", NULL), 2);
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 0), "command"), "echo same");
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 1), "command"),
			    "echo other; exit 4");
	d = nth(&r, "gate.decision", NULL, 0);
	assert_string_equal(jsonx_str(d, "decision"), "approve");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "remember")));
	assert_string_equal(jsonx_str(d, "command"), "echo same");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(nth(&r, "operator.command", NULL, 0),
						     "remember")));
	assert_int_equal(count(&r, "tool.result", NULL), 4);
	for (int i = 0; i < 4; i++) {
		static const char *const how[] = {"operator", "allowed_for_run", "allowed_for_run",
						  "operator"};
		t = nth_shell(&r, i);
		assert_non_null(t);
		assert_string_equal(jsonx_str(t, "approval"), how[i]);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(t, "ran")));
		assert_true(jsonx_num(t, "duration_ms", &v) && v >= 0);
		assert_true(jsonx_num(t, "exit_status", &v));
		assert_true(v == (i == 3 ? 4 : 0));
	}
	assert_string_equal(jsonx_str(nth_shell(&r, 3), "command"), "echo other; exit 4");
	assert_string_equal(jsonx_str(nth_shell(&r, 3), "output"), "other\n");
	run_free(&r);
}

/* Issue 29: an edit at the shell gate brings the gate back showing the edited command,
 * marked edited with what the model had asked for; nothing runs until it is approved,
 * and the tool.result says the command ran as edited. */
static void edit_then_approve_shell(struct run *r, const cJSON *ev)
{
	if (!is(ev, "gate.open", NULL))
		return;
	if (r->hook_state++ == 0)
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev), GATE_EDIT,
					      "{\"command\":\"echo edited\"}"));
	else
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev), GATE_APPROVE, NULL));
}

static void test_shell_edit_comes_back_to_the_gate(void **state)
{
	struct run r;
	const cJSON *again, *t;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_SHELL);
	r.hook = edit_then_approve_shell;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), NULL));
	script_attempt(r.script, "s1", shell_attempt("echo model", NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_OK);
	assert_int_equal(count(&r, "gate.open", NULL), 2);
	assert_null(cJSON_GetObjectItem(nth(&r, "gate.open", NULL, 0), "edited"));
	again = nth(&r, "gate.open", NULL, 1);
	assert_string_equal(jsonx_str(again, "command"), "echo edited");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(again, "edited")));
	assert_string_equal(jsonx_str(again, "edited_from"), "echo model");
	assert_string_equal(jsonx_str(nth(&r, "gate.decision", NULL, 0), "decision"), "edit");
	assert_string_equal(jsonx_str(nth(&r, "gate.decision", NULL, 1), "decision"), "approve");
	assert_int_equal(count(&r, "tool.result", NULL), 1);
	t = nth_shell(&r, 0);
	assert_string_equal(jsonx_str(t, "command"), "echo edited");
	assert_string_equal(jsonx_str(t, "approval"), "edited");
	assert_string_equal(jsonx_str(t, "output"), "edited\n");
	run_free(&r);
}

/* At s2's gate the operator quits. Resumed, s2 starts over, and the command allowed for
 * the run at s1's gate asks again: a journal never widens what a run may do (the allowance
 * came from the journal, which a run folder from elsewhere could have written). */
static void quit_at_second_shell_gate(struct run *r, const cJSON *ev)
{
	if (!is(ev, "gate.open", NULL))
		return;
	if (r->hook_state++ == 0)
		assert_true(gatekeeper_answer(r->gates, gate_id_of(ev), GATE_APPROVE,
					      "{\"remember\":true}"));
	else
		pev_post(r->e, PEV_CMD_QUIT, NULL, NULL);
}

static void test_shell_allowed_for_run_asks_again_after_resume(void **state)
{
	struct run r;
	const cJSON *ev;
	bool said = false;

	(void)state;
	run_init(&r, script_new());
	r.s.gates = GATE_MASK(GATE_SHELL);
	r.hook = quit_at_second_shell_gate;
	script_plan(r.script, plan_of(step("s1", NULL, NULL, NULL), step("s2", "s1", NULL, NULL),
				      NULL));
	script_attempt(r.script, "s1", shell_attempt("echo same", NULL));
	script_attempt(r.script, "s2", shell_attempt("echo other", "echo same", NULL));
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, false), PEV_EXIT_ABORTED);
	assert_int_equal(count(&r, "gate.open", NULL), 2);
	run_end_go(&r);

	r.hook = NULL;
	r.answers[r.n_answers++] =
		(struct answer){"shell", GATE_APPROVE, NULL, PEV_CMD_PAUSE, false};
	assert_int_equal(run_go(&r, GATE_MODE_OPERATOR, true), PEV_EXIT_OK);
	/* Two more gates: "echo other" and "echo same" both ask. */
	assert_int_equal(count(&r, "gate.open", NULL), 4);
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 2), "command"), "echo other");
	assert_string_equal(jsonx_str(nth(&r, "gate.open", NULL, 3), "command"), "echo same");
	cJSON_ArrayForEach(ev, r.events)
		if (is(ev, "notice", NULL) &&
		    strstr(jsonx_str(ev, "message"),
			   "1 shell command allowed for the run before the stop asks at the gate "
			   "again"))
			said = true;
	assert_true(said);
	run_free(&r);
}

/* ---- the scheduler's indexes, without a run ------------------------------------------ */

/* A plan of steps "id" or "id:dep,dep", separated by ';'. */
static struct plan *plan_from_spec(const char *spec)
{
	struct plan *p = plan_new();
	char *copy = xstrdup(spec), *save = NULL;

	p->goal = xstrdup("g");
	p->steps = xcalloc(32, sizeof(*p->steps));
	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct plan_step *st = &p->steps[p->n_steps++];
		char *colon = strchr(t, ':');

		if (colon) {
			char *dsave = NULL;

			*colon = '\0';
			for (char *d = strtok_r(colon + 1, ",", &dsave); d; d = strtok_r(NULL, ",", &dsave))
				strvec_push(&st->deps, d);
		}
		st->id = xstrdup(t);
		st->name = xstrdup(t);
		strvec_push(&st->criteria, "done");
	}
	free(copy);
	return p;
}

static void engine_take_plan(struct pev *e, struct plan *p)
{
	plan_free(e->plan);
	free(e->st);
	e->plan = p;
	e->st = xcalloc(p->n_steps, sizeof(*e->st));
	sched_index_plan(e);
}

static void engine_drop_plan(struct pev *e)
{
	plan_ids_free(e->ids);
	free(e->dep_idx);
	free(e->dep_off);
	free(e->st);
	plan_free(e->plan);
	e->ids = NULL;
	e->dep_idx = NULL;
	e->dep_off = NULL;
	e->st = NULL;
	e->plan = NULL;
}

static void expect_find_as_plan_find(struct pev *e, const char *const *ids, size_t n)
{
	for (size_t k = 0; k < n; k++)
		assert_int_equal(sched_find(e, ids[k]), plan_find(e->plan, ids[k]));
	for (size_t i = 0; i < e->plan->n_steps; i++)
		for (size_t d = 0; d < e->plan->steps[i].deps.n; d++)
			assert_int_equal(e->dep_idx[e->dep_off[i] + d],
					 plan_find(e->plan, e->plan->steps[i].deps.v[d]));
}

/* sched_find and the dependency indexes follow the plan through a replan that replaces
 * and removes steps, an edit, and repeated ids (the first step wins, as in plan_find). */
static void test_sched_index_follows_plan(void **state)
{
	static const char *const ids[] = {"a", "b", "c", "d", "x", "y", "", "zz"};
	struct pev *e = xcalloc(1, sizeof(*e));

	(void)state;
	assert_int_equal(sched_find(e, "a"), -1);
	engine_take_plan(e, plan_from_spec("a;b:a;c:a;d:b,c"));
	expect_find_as_plan_find(e, ids, 8);
	assert_int_equal(sched_find(e, "d"), 3);
	/* a replan: b and d gone, x new, a moved to the end */
	engine_take_plan(e, plan_from_spec("x;c:x;a:c"));
	expect_find_as_plan_find(e, ids, 8);
	assert_int_equal(sched_find(e, "b"), -1);
	assert_int_equal(sched_find(e, "d"), -1);
	assert_int_equal(sched_find(e, "a"), 2);
	/* repeated ids and a dependency on one */
	engine_take_plan(e, plan_from_spec("y;x;y:x;x:y;c:y,zz"));
	expect_find_as_plan_find(e, ids, 8);
	assert_int_equal(sched_find(e, "y"), 0);
	assert_int_equal(sched_find(e, "x"), 1);
	assert_int_equal(e->dep_idx[e->dep_off[4] + 1], -1);
	/* a plan of PLAN_MAX_STEPS */
	{
		struct plan *p = plan_new();

		p->steps = xcalloc(PLAN_MAX_STEPS, sizeof(*p->steps));
		for (size_t i = 0; i < PLAN_MAX_STEPS; i++) {
			p->steps[i].id = xasprintf("s%zu", i + 1);
			if (i)
				strvec_pushf(&p->steps[i].deps, "s%zu", i);
		}
		p->n_steps = PLAN_MAX_STEPS;
		engine_take_plan(e, p);
		for (size_t i = 0; i < PLAN_MAX_STEPS; i++) {
			char id[16];

			snprintf(id, sizeof(id), "s%zu", i + 1);
			assert_int_equal(sched_find(e, id), (int)i);
			if (i)
				assert_int_equal(e->dep_idx[e->dep_off[i]], (int)i - 1);
		}
	}
	engine_drop_plan(e);
	free(e);
}

/* The reuse key: the definition without its id, then each input's output ("-" for none),
 * the same through the engine's plan (cached dependency indexes) and another plan. */
static void test_sched_reuse_key(void **state)
{
	struct pev *e = xcalloc(1, sizeof(*e));
	struct plan *other;
	struct plan_step def;
	char *want, *key, *d;

	(void)state;
	engine_take_plan(e, plan_from_spec("a;b;c:a,b,q"));
	e->st[0].output_json = xstrdup("{\"out\":\"A\"}");
	other = plan_clone(e->plan);
	plan_step_copy(&def, &e->plan->steps[2]);
	free(def.id);
	def.id = xstrdup("");
	d = plan_step_to_string(&def, false);
	want = xasprintf("%s\n{\"out\":\"A\"}\n-\n-", d);
	key = sched_reuse_key(e, e->plan, 2);
	assert_string_equal(key, want);
	free(key);
	key = sched_reuse_key(e, other, 2);
	assert_string_equal(key, want);
	free(key);
	/* another id, same definition and inputs: the same key */
	free(other->steps[2].id);
	other->steps[2].id = xstrdup("renamed");
	key = sched_reuse_key(e, other, 2);
	assert_string_equal(key, want);
	free(key);
	free(want);
	free(d);
	plan_step_free_fields(&def);
	plan_free(other);
	free(e->st[0].output_json);
	engine_drop_plan(e);
	free(e);
}

/* A step job that comes back reuses the key it started with while nothing it reads changed;
 * once an input is re-run (the step goes stale: its generation moves) or a plan is adopted
 * (the revision moves), the key is the step's current one, not the job's. */
static void test_sched_job_reuse_key(void **state)
{
	struct pev *e = xcalloc(1, sizeof(*e));
	struct job *j;
	char *key, *want;

	(void)state;
	e->bus = bus_new();
	e->budget = budget_new(0, 0);
	pthread_mutex_init(&e->pool_lock, NULL);
	pthread_cond_init(&e->pool_cond, NULL);
	e->phase = PH_EXECUTING;
	engine_take_plan(e, plan_from_spec("a;b:a;c"));
	e->st[0].status = FS_PASSED;
	e->st[0].output_json = xstrdup("{\"out\":\"A\"}");
	e->st[1].status = FS_RUNNING;
	j = job_new_step(e, 1);
	/* A stand-in for the key it started with: seen back only if it is reused. */
	j->reuse_key = xstrdup("the job's key");
	key = sched_job_reuse_key(e, j, 1);
	assert_string_equal(key, "the job's key");
	free(key);
	/* Another step's re-run leaves it alone. */
	sched_invalidate(e, 2, false, "re-run by the operator");
	key = sched_job_reuse_key(e, j, 1);
	assert_string_equal(key, "the job's key");
	free(key);
	/* Its input is re-run and comes back with another output. */
	sched_invalidate(e, 0, false, "re-run by the operator");
	assert_int_equal(e->st[1].status, FS_STALE);
	free(e->st[0].output_json);
	e->st[0].output_json = xstrdup("{\"out\":\"B\"}");
	e->st[0].status = FS_PASSED;
	want = sched_reuse_key(e, e->plan, 1);
	assert_non_null(strstr(want, "\"B\""));
	key = sched_job_reuse_key(e, j, 1);
	assert_string_equal(key, want);
	free(key);
	free(want);
	/* The same generation under another plan revision. */
	j->gen = e->st[1].gen;
	e->revision = j->revision + 1;
	want = sched_reuse_key(e, e->plan, 1);
	key = sched_job_reuse_key(e, j, 1);
	assert_string_equal(key, want);
	free(key);
	free(want);
	job_free(j);
	for (size_t i = 0; i < e->plan->n_steps; i++)
		free(e->st[i].output_json);
	engine_drop_plan(e);
	budget_free(e->budget);
	bus_free(e->bus);
	pthread_mutex_destroy(&e->pool_lock);
	pthread_cond_destroy(&e->pool_cond);
	free(e);
}

/* The reuse table: every key found again among many (its hash table grows), keys alike
 * but for their last byte, every length around the 8-byte words the hash reads, an add of
 * a known key replacing its results, an unknown key found nowhere. */
static void test_sched_reuse_table(void **state)
{
	struct pev *e = xcalloc(1, sizeof(*e));
	struct strvec keys = STRVEC_INIT;
	char *long_prefix = xcalloc(301, 1);

	(void)state;
	memset(long_prefix, 'x', 300);
	assert_null(sched_reuse_find(e, "a"));
	strvec_push(&keys, "");
	for (size_t n = 1; n <= 20; n++)
		strvec_pushf(&keys, "%.*s", (int)n, "abcdefghijklmnopqrstuvwxyz");
	for (int i = 0; i < 400; i++)
		strvec_pushf(&keys, "%s%d", long_prefix, i);
	for (size_t k = 0; k < keys.n; k++) {
		char *r = xasprintf("r%zu", k);

		sched_reuse_add(e, xstrdup(keys.v[k]), r, "out");
		free(r);
		assert_int_equal(e->n_reuse, k + 1);
	}
	for (size_t k = 0; k < keys.n; k++) {
		const struct reuse_entry *hit = sched_reuse_find(e, keys.v[k]);
		char *r = xasprintf("r%zu", k);

		assert_non_null(hit);
		assert_string_equal(hit->key, keys.v[k]);
		assert_string_equal(hit->result_json, r);
		free(r);
	}
	sched_reuse_add(e, xstrdup(keys.v[7]), "again", "out2");
	assert_int_equal(e->n_reuse, keys.n);
	assert_string_equal(sched_reuse_find(e, keys.v[7])->result_json, "again");
	assert_string_equal(sched_reuse_find(e, keys.v[7])->output_json, "out2");
	assert_null(sched_reuse_find(e, "abcdefghijklmnopqrstu"));
	assert_null(sched_reuse_find(e, "zzz"));
	{
		char *miss = xasprintf("%s400", long_prefix);

		assert_null(sched_reuse_find(e, miss));
		free(miss);
	}
	sched_reuse_free(e);
	free(e);
	free(long_prefix);
	strvec_clear(&keys);
}

int main(void)
{
	/* A stalled engine would hang the suite: fail it instead. */
	alarm(120);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sched_index_follows_plan),
		cmocka_unit_test(test_sched_reuse_key),
		cmocka_unit_test(test_sched_job_reuse_key),
		cmocka_unit_test(test_sched_reuse_table),
		cmocka_unit_test(test_all_pass),
		cmocka_unit_test(test_resumed_ended_run_tells_servers_after_reopen),
		cmocka_unit_test(test_deep_tool_input_keeps_the_journal),
		cmocka_unit_test(test_deep_operator_edit_keeps_the_journal),
		cmocka_unit_test(test_second_engine_on_a_run_folder_is_refused),
		cmocka_unit_test(test_synthesis_failure_keeps_verified_results),
		cmocka_unit_test(test_cut_off_answer_retried_as_such),
		cmocka_unit_test(test_final_check_failure_is_a_gap),
		cmocka_unit_test(test_retry_then_pass),
		cmocka_unit_test(test_retries_exhausted_replan_keeps_passed),
		cmocka_unit_test(test_replan_limit_fail_accepts),
		cmocka_unit_test(test_verifier_asks_replan),
		cmocka_unit_test(test_operator_rejects_plan),
		cmocka_unit_test(test_operator_skips_high_step),
		cmocka_unit_test(test_operator_edits_step_at_gate),
		cmocka_unit_test(test_report_without_reading_the_journal),
		cmocka_unit_test(test_invalid_plan_fixed_on_reask),
		cmocka_unit_test(test_invalid_plan_twice_is_error),
		cmocka_unit_test(test_deterministic_catches_missing_artifact),
		cmocka_unit_test(test_gate_without_operator_exits_3),
		cmocka_unit_test(test_identical_step_reuses_result),
		cmocka_unit_test(test_abort_at_gate),
		cmocka_unit_test(test_quit_then_resume_runs_nothing_twice),
		cmocka_unit_test(test_resume_reopens_replan_gate),
		cmocka_unit_test(test_resume_refuses_finished_run),
		cmocka_unit_test(test_parallel_limit_and_order),
		cmocka_unit_test(test_parallel_one_is_sequential),
		cmocka_unit_test(test_replan_waits_for_running_steps),
		cmocka_unit_test(test_chaos_is_reproducible),
		cmocka_unit_test(test_gate_holds_only_its_step),
		cmocka_unit_test(test_edit_at_gate_invalidates_dependents),
		cmocka_unit_test(test_forced_rerun_reopens_finished_run),
		cmocka_unit_test(test_finished_run_opens_at_its_end),
		cmocka_unit_test(test_finished_run_reopened_by_rerun),
		cmocka_unit_test(test_detached_run_lingers_while_watched),
		cmocka_unit_test(test_detached_run_unwatched_leaves_at_end),
		cmocka_unit_test(test_quit_after_rerun_forgets_the_report),
		cmocka_unit_test(test_server_up_after_run_end_is_not_journaled),
		cmocka_unit_test(test_rerun_uses_server_up_after_run_end),
		cmocka_unit_test(test_request_kept_when_its_rewrite_is_not),
		cmocka_unit_test(test_unjudged_criterion_fails_the_verdict),
		cmocka_unit_test(test_budget_is_a_cap_without_operator),
		cmocka_unit_test(test_budget_gate_takes_a_new_cap),
		cmocka_unit_test(test_quit_during_finish),
		cmocka_unit_test(test_cancel_running_cancels_the_planner),
		cmocka_unit_test(test_shell_allowed_for_run),
		cmocka_unit_test(test_shell_edit_comes_back_to_the_gate),
		cmocka_unit_test(test_shell_allowed_for_run_asks_again_after_resume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
