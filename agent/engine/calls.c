/* calls — one model call with its budget reservation, llm.call event and accounting; the
 * ask-and-re-ask helper the planner and the verifier share; verdict events. Any thread. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "budget.h"
#include "bus.h"
#include "cost.h"
#include "requests.h"
#include "result.h"
#include "xalloc.h"

static void add_string_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

struct call_ctx {
	struct pev *e;
	enum llm_role role;
	enum llm_purpose purpose; /* said with each delta: the cockpit heads the answer's */
	const char *step_id;
	int attempt;
	unsigned long request; /* the kept request's SEQ (llm.call's `request`), or 0 */
	bool kept;     /* a body is on disk under `request` */
	bool sent;     /* the provider showed the body it sends */
};

/*
 * Keeps a request body in the run folder (requests.h) under the call's one SEQ; `printed`:
 * compact JSON printed by pevtui (requests_write_printed); `req` instead of a body: the
 * request as the engine built it (requests_write_body_of). A body rebuilt for a retry is
 * written again under it (the later line is the one read back). When that rewrite cannot
 * be kept (the cap, a failed write: a notice says which), the call still names its SEQ if
 * an earlier body is on disk: a body this call did send, rather than no trace of the
 * call's request at all.
 */
static void keep_request(struct call_ctx *c, const char *body, size_t len, bool printed,
			 const struct llm_request *req)
{
	const char *role = llm_role_name(c->role);
	char *err = NULL, *why;
	bool ok;

	if (!c->request)
		c->request = requests_next(c->e->requests);
	if (!c->request)
		ok = false;
	else if (req)
		ok = requests_write_body_of(c->e->requests, c->request, role, c->step_id,
					    c->attempt, req, &err);
	else
		ok = (printed ? requests_write_printed : requests_write)(
			c->e->requests, c->request, role, c->step_id, c->attempt, body, len, &err);
	if (ok)
		c->kept = true;
	else if (!c->kept)
		c->request = 0;
	free(err);
	why = requests_take_notice(c->e->requests);
	if (why)
		bus_notice(c->e->bus, "warn", c->step_id, "%s", why);
	free(why);
}

/* Each body built replaces the last: the last one is what went out. */
static void on_request(void *ctx, const char *body, size_t len)
{
	struct call_ctx *c = ctx;

	c->sent = true;
	keep_request(c, body, len, false, NULL);
}

static void on_request_printed(void *ctx, const char *body, size_t len)
{
	struct call_ctx *c = ctx;

	c->sent = true;
	keep_request(c, body, len, true, NULL);
}

static void on_delta(void *ctx, const char *text, size_t len)
{
	struct call_ctx *c = ctx;
	cJSON *f;
	char *t;

	if (!bus_wants_ephemeral(c->e->bus))
		return;
	f = cJSON_CreateObject();
	t = xstrndup(text, len);
	cJSON_AddStringToObject(f, "role", llm_role_name(c->role));
	cJSON_AddStringToObject(f, "purpose", llm_purpose_name(c->purpose));
	add_string_or_null(f, "step_id", c->step_id);
	cJSON_AddNumberToObject(f, "attempt", c->attempt);
	cJSON_AddStringToObject(f, "text", t);
	free(t);
	bus_publish(c->e->bus, EV_LLM_DELTA, f);
}

static void on_retry(void *ctx, int http_status, long wait_ms, int attempt, int max,
		     const char *reason)
{
	struct call_ctx *c = ctx;
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "role", llm_role_name(c->role));
	add_string_or_null(f, "step_id", c->step_id);
	cJSON_AddNumberToObject(f, "http_status", http_status);
	cJSON_AddNumberToObject(f, "wait_ms", (double)wait_ms);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddNumberToObject(f, "max", max);
	cJSON_AddStringToObject(f, "reason", reason ? reason : "");
	bus_publish(c->e->bus, EV_LLM_RETRY, f);
}

static void account(struct pev *e, enum llm_role role, const struct llm_usage *us, bool known,
		    double cost)
{
	struct role_usage *u = &e->usage[role];

	pthread_mutex_lock(&e->acct);
	u->calls++;
	u->input += us->input_tokens;
	u->output += us->output_tokens;
	u->cached += us->cache_read_tokens;
	u->cache_write += us->cache_write_tokens;
	if (known)
		u->cost += cost;
	else
		u->cost_unknown = true;
	pthread_mutex_unlock(&e->acct);
}

static size_t request_chars(const struct llm_request *req)
{
	size_t n = req->system ? strlen(req->system) : 0;

	for (size_t m = 0; m < req->n_msgs; m++) {
		const struct llm_msg *msg = &req->msgs[m];
		n += msg->text ? strlen(msg->text) : 0;
		for (size_t c = 0; c < msg->n_calls; c++)
			n += msg->calls[c].input_json ? strlen(msg->calls[c].input_json) : 0;
		for (size_t r = 0; r < msg->n_results; r++)
			n += msg->results[r].content ? strlen(msg->results[r].content) : 0;
	}
	return n + 400 * req->n_tools; /* tool schemas */
}

/* Holds the call's estimated cost against the cap; a call that does not fit tells the
 * engine (which opens the budget gate) and waits here until the cap moves. false when it
 * was cancelled meanwhile. */
static bool reserve(struct pev *e, double est, const atomic_bool *cancel)
{
	unsigned long gen;

	while (!budget_reserve(e->budget, est, &gen)) {
		struct msg *m;

		if ((cancel && atomic_load(cancel)) || atomic_load(&e->aborting))
			return false;
		m = xcalloc(1, sizeof(*m));
		m->kind = MSG_BUDGET_BLOCKED;
		m->amount = est;
		engine_post(e, m);
		if (!budget_wait(e->budget, gen, cancel))
			return false;
	}
	return true;
}

int engine_call_model(struct pev *e, struct llm_request *req, struct llm_response *out,
		      const atomic_bool *cancel, char **err)
{
	struct call_ctx cc = {e, req->role, req->purpose, req->step_id, req->attempt, 0, false, false};
	struct llm_hooks hooks = {&cc, on_delta, on_retry, cancel, on_request, on_request_printed};
	long t0;
	int rc;
	bool known = false, est_known;
	double cost = 0, est;
	cJSON *f;

	*err = NULL;
	req->model = e->models[req->role];
	req->task = e->task;
	req->schemas = e->schemas;
	est = cost_estimate_call(req->model, request_chars(req), req->max_tokens, &est_known);
	if (!reserve(e, est, cancel))
		return PROVIDER_CANCELLED;
	t0 = engine_now_ms();
	rc = provider_complete(e->prov[req->role], req, &hooks, out, err);
	if (!cc.sent && (cc.request = requests_next(e->requests))) {
		/* A provider that sends nothing (simulated): the request as the engine built it. */
		keep_request(&cc, NULL, 0, true, req);
	}
	if (rc == PROVIDER_OK) {
		cost = cost_of_call(req->model, &out->usage, &known);
		if (!out->latency_ms)
			out->latency_ms = engine_now_ms() - t0;
	}
	budget_settle(e->budget, est, rc == PROVIDER_OK && known ? cost : 0);

	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "role", llm_role_name(req->role));
	cJSON_AddStringToObject(f, "purpose", llm_purpose_name(req->purpose));
	cJSON_AddStringToObject(f, "model", req->model ? req->model : "");
	cJSON_AddBoolToObject(f, "simulated", e->prov[req->role]->simulated);
	add_string_or_null(f, "step_id", req->step_id);
	cJSON_AddNumberToObject(f, "attempt", req->attempt);
	cJSON_AddNumberToObject(f, "input_tokens", rc == PROVIDER_OK ? out->usage.input_tokens : 0);
	cJSON_AddNumberToObject(f, "output_tokens",
				rc == PROVIDER_OK ? out->usage.output_tokens : 0);
	cJSON_AddNumberToObject(f, "cached_tokens",
				rc == PROVIDER_OK ? out->usage.cache_read_tokens : 0);
	cJSON_AddNumberToObject(f, "cache_write_tokens",
				rc == PROVIDER_OK ? out->usage.cache_write_tokens : 0);
	if (rc == PROVIDER_OK && known)
		cJSON_AddNumberToObject(f, "cost_usd", cost);
	else if (rc == PROVIDER_OK)
		cJSON_AddNullToObject(f, "cost_usd");
	else
		cJSON_AddNumberToObject(f, "cost_usd", 0);
	if (est_known && est > 0)
		cJSON_AddNumberToObject(f, "reserved_usd", est);
	cJSON_AddNumberToObject(f, "latency_ms",
				(double)(rc == PROVIDER_OK ? out->latency_ms : engine_now_ms() - t0));
	cJSON_AddStringToObject(f, "status",
				rc == PROVIDER_OK ? "ok"
						  : rc == PROVIDER_CANCELLED ? "cancelled" : "error");
	cJSON_AddNumberToObject(f, "http_status", rc == PROVIDER_CANCELLED ? 0 : out->http_status);
	if (rc == PROVIDER_OK && out->stop_reason)
		cJSON_AddStringToObject(f, "stop_reason", out->stop_reason);
	if (rc == PROVIDER_ERROR)
		cJSON_AddStringToObject(f, "error", *err ? *err : "model call failed");
	if (cc.request) {
		char *name = requests_name(cc.request);

		cJSON_AddStringToObject(f, "request", name);
		free(name);
	}
	bus_publish(e->bus, EV_LLM_CALL, f);

	if (rc == PROVIDER_OK) {
		account(e, req->role, &out->usage, known, cost);
	} else if (rc == PROVIDER_ERROR) {
		if (!*err)
			*err = xstrdup("model call failed");
		bus_notice(e->bus, "error", req->step_id, "%s", *err);
	}
	return rc;
}

/*
 * One call, and when its answer cannot be read, one more: the model sees its answer and
 * the correction fix(why). Returns the parsed answer; NULL when a call failed (*err) or
 * was cancelled (neither set), or when the second answer could not be read either (*why).
 * `read` is told when it reads the last answer (it may then accept what it can). `prompt`
 * is taken.
 */
void *engine_ask_and_read(struct pev *e, struct llm_request *req, char *prompt,
			  const atomic_bool *cancel, engine_read_fn read, void *ctx,
			  char *(*fix)(void *ctx, const char *why), char **why, char **err)
{
	struct llm_msg msgs[3] = {{0}};
	size_t n = 1;
	void *out = NULL;

	*why = *err = NULL;
	msgs[0].kind = LLM_MSG_USER;
	msgs[0].text = prompt;
	for (int round = 0; round < 2 && !out; round++) {
		struct llm_response res = {0};

		free(*why);
		*why = NULL;
		req->msgs = msgs;
		req->n_msgs = n;
		if (engine_call_model(e, req, &res, cancel, err) != PROVIDER_OK) {
			llm_response_release(&res);
			break;
		}
		out = read(ctx, res.text, round == 1, why);
		if (!out && *why && llm_stop_is_cutoff(res.stop_reason)) {
			/* Not a malformed answer: a cut one. Say so, to the model too. */
			char *cut = xasprintf("it was cut off at the output token limit (stop reason "
					      "\"%s\"), so %s; write a shorter answer",
					      res.stop_reason, *why);
			free(*why);
			*why = cut;
		}
		if (!out && round == 0) {
			bus_notice(e->bus, "warn", req->step_id,
				   "the %s's answer cannot be used (%s); asking it once to fix it",
				   llm_role_name(req->role), *why);
			msgs[1].kind = LLM_MSG_ASSISTANT;
			msgs[1].text = xstrdup(res.text);
			msgs[2].kind = LLM_MSG_USER;
			msgs[2].text = fix(ctx, *why);
			n = 3;
		}
		llm_response_release(&res);
	}
	for (size_t i = 0; i < n; i++)
		llm_msg_release(&msgs[i]);
	return out;
}

void engine_publish_verdict(struct pev *e, const char *id, int attempt, const char *stage,
			    const struct verdict *v, size_t not_judged_from)
{
	cJSON *f = cJSON_CreateObject(), *crit = verdict_criteria_to_json(v), *c;
	size_t k = 0;

	cJSON_AddStringToObject(f, "step_id", id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "stage", stage);
	cJSON_AddStringToObject(f, "action", verdict_action_name(v->action));
	cJSON_AddStringToObject(f, "severity", severity_name(v->severity));
	cJSON_AddBoolToObject(f, "overall_pass", v->overall_pass);
	cJSON_ArrayForEach(c, crit)
	{
		if (k++ >= not_judged_from)
			cJSON_AddBoolToObject(c, "not_judged", true);
	}
	cJSON_AddItemToObject(f, "criteria", crit);
	add_string_or_null(f, "feedback", v->feedback);
	bus_publish(e->bus, EV_VERIFY_VERDICT, f);
}
