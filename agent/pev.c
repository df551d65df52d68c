/* pev — the Plan-Execute-Verify state machine and scheduler, run in its own thread.
 *
 * The engine owns the plan and every step's state; only the engine thread touches them.
 * Steps run in worker threads (pev_worker.c) on snapshots; operators reach the engine
 * through pev_post (a queue drained at safe points) and gates. Every change is published
 * as an event, so the journal alone is enough to rebuild a run (pev_resume.c).
 */
#include "config.h"

#include "pev.h"
#include "pev_impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "cost.h"
#include "journal.h"
#include "jsonx.h"
#include "plan.h"
#include "prompts.h"
#include "report.h"
#include "result.h"
#include "sandbox.h"
#include "settings.h"
#include "xalloc.h"

/* ------------------------------------------------------------------ helpers */

static bool apply_commands(struct pev *e);
static bool stopping(struct pev *e);
static void publish_control(struct pev *e, const char *kind, const char *step_id,
			    bool cancel, const char *message);
static void apply_edit(struct pev *e, const char *step_id, const char *json);
static const struct reuse_entry *reuse_find(struct pev *e, const char *key);

static const char *status_name(enum step_status s)
{
	switch (s) {
	case SS_PENDING: return "pending";
	case SS_RUNNING: return "running";
	case SS_PASSED: return "passed";
	case SS_FAIL_ACCEPTED: return "fail_accepted";
	case SS_SKIPPED: return "skipped";
	}
	return "unknown";
}

void pev_step_state_release(struct step_state *s)
{
	strvec_clear(&s->critiques);
	free(s->result_json);
	free(s->output_json);
	memset(s, 0, sizeof(*s));
}

/* Caches each step's dependency indexes: the scheduler asks "is it ready?" for every
 * step on every event, and a name lookup per dependency made that quadratic. Called
 * whenever the plan's steps change. */
void pev_index_plan(struct pev *e)
{
	size_t total = 0, k = 0;

	for (size_t i = 0; i < e->plan->n_steps; i++)
		total += e->plan->steps[i].deps.n;
	free(e->dep_idx);
	free(e->dep_off);
	e->dep_idx = xcalloc(total ? total : 1, sizeof(*e->dep_idx));
	e->dep_off = xcalloc(e->plan->n_steps + 1, sizeof(*e->dep_off));
	for (size_t i = 0; i < e->plan->n_steps; i++) {
		e->dep_off[i] = k;
		for (size_t d = 0; d < e->plan->steps[i].deps.n; d++)
			e->dep_idx[k++] = plan_find(e->plan, e->plan->steps[i].deps.v[d]);
	}
	e->dep_off[e->plan->n_steps] = k;
}

static void add_json_string_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}




static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}


static void set_end(struct pev *e, enum pev_exit code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_end(struct pev *e, enum pev_exit code, const char *fmt, ...)
{
	va_list ap;

	e->stop = true;
	e->exit_code = code;
	free(e->end_reason);
	va_start(ap, fmt);
	e->end_reason = xvasprintf(fmt, ap);
	va_end(ap);
}

/* --------------------------------------------------------- operator commands */

/* Cancels the workers of step_id (every worker when NULL). Caller holds e->lock. */
static void cancel_workers_locked(struct pev *e, const char *step_id)
{
	for (struct worker *w = e->running; w; w = w->next)
		if (!step_id || !strcmp(w->step.id, step_id))
			atomic_store(&w->cancel, true);
}

void pev_post(struct pev *e, enum pev_cmd cmd, const char *step_id, const char *json)
{
	struct cmd *c = xcalloc(1, sizeof(*c));

	c->cmd = cmd;
	c->step_id = xstrdup(step_id);
	c->json = xstrdup(json);
	pthread_mutex_lock(&e->lock);
	*e->cmds_tail = c;
	e->cmds_tail = &c->next;
	switch (cmd) {
	case PEV_CMD_PAUSE: e->paused = true; break;
	case PEV_CMD_CANCEL_RUNNING:
		e->paused = true;
		cancel_workers_locked(e, NULL);
		break;
	case PEV_CMD_RESUME: e->paused = false; break;
	case PEV_CMD_ABORT:
	case PEV_CMD_QUIT:
		atomic_store(&e->aborting, true);
		atomic_store(&e->cancel_call, true);
		cancel_workers_locked(e, NULL);
		gatekeeper_cancel_all(e->gates);
		break;
	case PEV_CMD_EDIT:
	case PEV_CMD_SKIP:
		/* An edit or skip of a step in flight cancels its worker's call at once; the
		 * engine then restarts (edit) or skips it when the worker returns. */
		if (step_id)
			cancel_workers_locked(e, step_id);
		break;
	case PEV_CMD_RERUN: break;
	}
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static struct cmd *take_cmds(struct pev *e)
{
	struct cmd *list;

	pthread_mutex_lock(&e->lock);
	list = e->cmds;
	e->cmds = NULL;
	e->cmds_tail = &e->cmds;
	pthread_mutex_unlock(&e->lock);
	return list;
}

static void cmd_free(struct cmd *c)
{
	free(c->step_id);
	free(c->json);
	free(c);
}

/* ------------------------------------------------------------------- events */

static void publish_step_end(struct pev *e, const char *id, enum step_status s, int attempts,
			     bool reused)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", id);
	cJSON_AddStringToObject(f, "status", status_name(s));
	cJSON_AddNumberToObject(f, "attempts", attempts);
	cJSON_AddBoolToObject(f, "reused", reused);
	bus_publish(e->bus, EV_STEP_END, f);
}

void pev_publish_verdict(struct pev *e, const char *id, int attempt, const char *stage,
			    const struct verdict *v)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "stage", stage);
	cJSON_AddStringToObject(f, "action", verdict_action_name(v->action));
	cJSON_AddStringToObject(f, "severity", severity_name(v->severity));
	cJSON_AddBoolToObject(f, "overall_pass", v->overall_pass);
	cJSON_AddItemToObject(f, "criteria", verdict_criteria_to_json(v));
	add_json_string_or_null(f, "feedback", v->feedback);
	bus_publish(e->bus, EV_VERIFY_VERDICT, f);
}

/* ------------------------------------------------------------ model calls */

struct call_ctx {
	struct pev *e;
	enum llm_role role;
	const char *step_id;
	int attempt;
};

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
	add_json_string_or_null(f, "step_id", c->step_id);
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
	add_json_string_or_null(f, "step_id", c->step_id);
	cJSON_AddNumberToObject(f, "http_status", http_status);
	cJSON_AddNumberToObject(f, "wait_ms", (double)wait_ms);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddNumberToObject(f, "max", max);
	cJSON_AddStringToObject(f, "reason", reason ? reason : "");
	bus_publish(c->e->bus, EV_LLM_RETRY, f);
}

/* Adds a call's usage; flags the budget for the engine thread when it is crossed. */
static void account(struct pev *e, enum llm_role role, const struct llm_usage *us, bool known,
		    double cost)
{
	struct role_usage *u = &e->usage[role];
	bool crossed;

	pthread_mutex_lock(&e->acct);
	u->calls++;
	u->input += us->input_tokens;
	u->output += us->output_tokens;
	u->cached += us->cache_read_tokens;
	u->cache_write += us->cache_write_tokens;
	if (known) {
		u->cost += cost;
		e->spent += cost;
	} else {
		u->cost_unknown = true;
	}
	crossed = e->budget > 0 && e->spent >= e->budget;
	pthread_mutex_unlock(&e->acct);
	if (crossed) {
		pthread_mutex_lock(&e->lock);
		e->budget_crossed = true;
		pthread_cond_broadcast(&e->cond);
		pthread_mutex_unlock(&e->lock);
	}
}

/*
 * One model call with its llm.call event and accounting, from any thread. Returns
 * PROVIDER_OK, PROVIDER_CANCELLED (`cancel` was set), or PROVIDER_ERROR with *err set to
 * the provider's sentence (caller frees); the caller decides what an error ends.
 */
int pev_call_model(struct pev *e, struct llm_request *req, struct llm_response *out,
		      const atomic_bool *cancel, char **err)
{
	struct call_ctx cc = {e, req->role, req->step_id, req->attempt};
	struct llm_hooks hooks = {&cc, on_delta, on_retry, cancel};
	long t0 = now_ms();
	int rc;
	bool known = false;
	double cost = 0;
	cJSON *f;

	*err = NULL;
	req->model = e->models[req->role];
	req->task = e->task;
	rc = provider_complete(e->prov[req->role], req, &hooks, out, err);
	if (rc == PROVIDER_OK) {
		cost = cost_of_call(req->model, &out->usage, &known);
		if (!out->latency_ms)
			out->latency_ms = now_ms() - t0;
	}

	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "role", llm_role_name(req->role));
	cJSON_AddStringToObject(f, "purpose", llm_purpose_name(req->purpose));
	cJSON_AddStringToObject(f, "model", req->model ? req->model : "");
	cJSON_AddBoolToObject(f, "simulated", e->prov[req->role]->simulated);
	add_json_string_or_null(f, "step_id", req->step_id);
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
	cJSON_AddNumberToObject(f, "latency_ms",
				(double)(rc == PROVIDER_OK ? out->latency_ms : now_ms() - t0));
	cJSON_AddStringToObject(f, "status",
				rc == PROVIDER_OK ? "ok"
						  : rc == PROVIDER_CANCELLED ? "cancelled" : "error");
	cJSON_AddNumberToObject(f, "http_status", rc == PROVIDER_OK ? out->http_status : 0);
	if (rc == PROVIDER_ERROR)
		cJSON_AddStringToObject(f, "error", *err ? *err : "model call failed");
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

/* A call by the engine thread itself: a provider error ends the run (exit 1). */
static int call_or_end(struct pev *e, struct llm_request *req, struct llm_response *out)
{
	char *err = NULL;
	int rc = pev_call_model(e, req, out, &e->cancel_call, &err);

	if (rc == PROVIDER_ERROR && !atomic_load(&e->aborting) && !e->stop)
		set_end(e, PEV_EXIT_ERROR, "%s call failed: %s", llm_role_name(req->role), err);
	free(err);
	return rc;
}

/* Engine thread: the budget gate, once, when a call has crossed --budget. */
static void budget_gate(struct pev *e)
{
	cJSON *p;
	enum gate_decision d;
	double spent;
	bool crossed;

	pthread_mutex_lock(&e->lock);
	crossed = e->budget_crossed;
	pthread_mutex_unlock(&e->lock);
	if (!crossed || e->budget_asked)
		return;
	e->budget_asked = true;
	pthread_mutex_lock(&e->acct);
	spent = e->spent;
	pthread_mutex_unlock(&e->acct);
	if (!gatekeeper_enabled(e->gates, GATE_BUDGET)) {
		bus_notice(e->bus, "error", NULL, "spending $%.4f crossed the budget of $%.2f",
			   spent, e->budget);
		set_end(e, PEV_EXIT_ABORTED, "budget of $%.2f exceeded", e->budget);
		return;
	}
	p = cJSON_CreateObject();
	cJSON_AddNumberToObject(p, "spent_usd", spent);
	cJSON_AddNumberToObject(p, "budget_usd", e->budget);
	d = gatekeeper_ask(e->gates, GATE_BUDGET, NULL, p, NULL);
	if (d == GATE_REJECT && !stopping(e))
		set_end(e, PEV_EXIT_ABORTED, "the operator stopped the run at the budget gate");
}

/* ------------------------------------------------------------------ planning */

/* `failed_step` and `failure` go with replan proposals (so --resume can re-open their
 * gate); NULL otherwise. */
static void publish_proposed(struct pev *e, const struct plan *p, int revision,
			     const char *reason, const char *failed_step, const char *failure)
{
	cJSON *f = cJSON_CreateObject();
	bool known = false;
	double est = cost_estimate_plan(p, (const char *const *)e->models, &known);

	cJSON_AddItemToObject(f, "plan", plan_to_json(p));
	cJSON_AddNumberToObject(f, "revision", revision);
	if (known)
		cJSON_AddNumberToObject(f, "estimate_usd", est);
	else
		cJSON_AddNullToObject(f, "estimate_usd");
	cJSON_AddStringToObject(f, "reason", reason);
	if (failed_step) {
		cJSON_AddStringToObject(f, "failed_step", failed_step);
		cJSON_AddStringToObject(f, "failure", failure ? failure : "");
	}
	bus_publish(e->bus, EV_PLAN_PROPOSED, f);
}

/*
 * One call, and when its answer cannot be read, one more: the model sees its answer and
 * the correction fix(why). Returns the parsed answer; NULL when a call failed (*err) or
 * was cancelled (neither set), or when the second answer could not be read either (*why).
 * `prompt` is taken. Any thread.
 */
void *pev_ask_and_read(struct pev *e, struct llm_request *req, char *prompt,
			  const atomic_bool *cancel, pev_read_fn read,
			  char *(*fix)(struct pev *e, const char *why), char **why, char **err)
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
		if (pev_call_model(e, req, &res, cancel, err) != PROVIDER_OK) {
			llm_response_release(&res);
			break;
		}
		out = read(e, res.text, why);
		if (!out && round == 0) {
			bus_notice(e->bus, "warn", req->step_id,
				   "the %s's answer cannot be used (%s); asking it once to fix it",
				   llm_role_name(req->role), *why);
			msgs[1].kind = LLM_MSG_ASSISTANT;
			msgs[1].text = xstrdup(res.text);
			msgs[2].kind = LLM_MSG_USER;
			msgs[2].text = fix(e, *why);
			n = 3;
		}
		llm_response_release(&res);
	}
	for (size_t i = 0; i < n; i++)
		llm_msg_release(&msgs[i]);
	return out;
}

/* A plan that parses and validates; the problems joined by newlines otherwise. */
static void *read_plan(struct pev *e, const char *text, char **why)
{
	struct strvec errors = STRVEC_INIT;
	struct plan *p = plan_parse(text, &errors);

	(void)e;
	if (p && !plan_validate(p, &errors)) {
		plan_free(p);
		p = NULL;
	}
	if (!p)
		*why = errors.n ? strvec_join(&errors, "\n") : xstrdup("no plan in the answer");
	strvec_clear(&errors);
	return p;
}

static char *fix_plan(struct pev *e, const char *why)
{
	return prompt_plan_fix(e->task, why);
}

/*
 * Asks the planner for a plan (PURPOSE_PLAN or PURPOSE_REPLAN with `prompt`, taken),
 * validated, re-asked once with the errors. Returns the valid plan or NULL (run ended).
 */
static struct plan *ask_planner(struct pev *e, enum llm_purpose purpose, char *prompt)
{
	struct llm_request req = {.role = ROLE_PLANNER,
				  .purpose = purpose,
				  .system = prompt_system_planner(),
				  .want_json = true,
				  .max_tokens = MAX_TOKENS_PLAN};
	char *why = NULL, *err = NULL;
	struct plan *p = pev_ask_and_read(e, &req, prompt, &e->cancel_call, read_plan, fix_plan,
				      &why, &err);

	if (!p && err && !atomic_load(&e->aborting)) {
		set_end(e, PEV_EXIT_ERROR, "planner call failed: %s", err);
	} else if (!p && why) {
		for (char *c = why; (c = strchr(c, '\n')); )
			*c = ' ';
		bus_notice(e->bus, "error", NULL, "the planner's plan is still invalid: %s", why);
		set_end(e, PEV_EXIT_ERROR, "the planner returned an invalid plan twice: %s", why);
	} else if (!p && !stopping(e)) {
		set_end(e, PEV_EXIT_ABORTED, "run aborted while planning");
	}
	free(why);
	free(err);
	return p;
}

/* Parses and validates operator-edited plan JSON. NULL + notice when it is unusable. */
static struct plan *plan_from_edit(struct pev *e, const char *json)
{
	struct strvec errors = STRVEC_INIT;
	struct plan *p = json ? plan_parse(json, &errors) : NULL;

	if (p && !plan_validate(p, &errors)) {
		plan_free(p);
		p = NULL;
	}
	if (!p) {
		char *joined = strvec_join(&errors, "; ");
		bus_notice(e->bus, "error", NULL, "the edited plan is invalid: %s",
			   *joined ? joined : "no plan");
		free(joined);
	}
	strvec_clear(&errors);
	return p;
}


/*
 * Makes `np` the current plan. Steps that passed (or were fail-accepted) and whose
 * definition and inputs are unchanged keep their results; the others start over.
 */
static void adopt_plan(struct pev *e, struct plan *np, int revision)
{
	struct step_state *nst = xcalloc(np->n_steps ? np->n_steps : 1, sizeof(*nst));
	size_t *order = plan_topo_order(np);
	cJSON *f = cJSON_CreateObject(), *kept = cJSON_CreateArray();

	for (size_t k = 0; k < np->n_steps; k++) {
		size_t i = order[k];
		struct plan_step *s = &np->steps[i];
		int old = e->plan ? plan_find(e->plan, s->id) : -1;
		bool keep = false;

		if (old >= 0) {
			struct step_state *os = &e->st[old];
			nst[i].attempts = os->attempts;
			/* Critiques still apply if the step is the same. */
			if (plan_step_equal(s, &e->plan->steps[old])) {
				for (size_t c = 0; c < os->critiques.n; c++)
					strvec_push(&nst[i].critiques, os->critiques.v[c]);
				keep = os->status == SS_PASSED || os->status == SS_FAIL_ACCEPTED ||
				       os->status == SS_SKIPPED;
			}
			/* Inputs unchanged only if every dependency was kept too. */
			for (size_t d = 0; keep && d < s->deps.n; d++) {
				int di = plan_find(np, s->deps.v[d]);
				if (di < 0 || nst[di].status == SS_PENDING)
					keep = false;
			}
			if (keep) {
				nst[i].status = os->status;
				nst[i].result_json = xstrdup(os->result_json);
				nst[i].output_json = xstrdup(os->output_json);
				cJSON_AddItemToArray(kept, cJSON_CreateString(s->id));
			}
		}
	}
	free(order);
	if (e->plan) {
		for (size_t i = 0; i < e->plan->n_steps; i++)
			pev_step_state_release(&e->st[i]);
	}
	free(e->st);
	plan_free(e->plan);
	e->plan = np;
	e->st = nst;
	e->revision = revision;
	pev_index_plan(e);

	cJSON_AddNumberToObject(f, "revision", revision);
	cJSON_AddItemToObject(f, "plan", plan_to_json(np));
	cJSON_AddItemToObject(f, "kept", kept);
	bus_publish(e->bus, EV_PLAN_ADOPTED, f);
	{
		char *pj = plan_to_string(np, true), *err = NULL;
		if (!journal_write_plan(e->run_dir, pj, &err)) {
			bus_notice(e->bus, "warn", NULL, "cannot write plan.json: %s", err);
			free(err);
		}
		free(pj);
	}
}

/* Plan gate loop: approve adopts, edit adopts the edited plan (re-asking on errors),
 * reject ends the run. Takes `p`. */
static bool gate_and_adopt(struct pev *e, struct plan *p, int revision)
{
	for (;;) {
		cJSON *payload = cJSON_CreateObject();
		bool known = false;
		double est = cost_estimate_plan(p, (const char *const *)e->models, &known);
		char *edited = NULL;
		enum gate_decision d;

		cJSON_AddNumberToObject(payload, "revision", revision);
		if (known)
			cJSON_AddNumberToObject(payload, "estimate_usd", est);
		else
			cJSON_AddNullToObject(payload, "estimate_usd");
		d = gatekeeper_ask(e->gates, GATE_PLAN, NULL, payload, &edited);
		if (d == GATE_APPROVE || d == GATE_SKIP) {
			adopt_plan(e, p, revision);
			return true;
		}
		if (d == GATE_REJECT) {
			plan_free(p);
			if (!stopping(e))
				set_end(e, PEV_EXIT_ABORTED, "the plan was rejected at the plan gate");
			return false;
		}
		{
			struct plan *np = plan_from_edit(e, edited);
			free(edited);
			if (np) {
				plan_free(p);
				p = np;
				publish_proposed(e, p, revision, "edit", NULL, NULL);
				adopt_plan(e, p, revision);
				return true;
			}
			/* Invalid edit: ask again with the unchanged proposal. */
		}
	}
}

static bool make_first_plan(struct pev *e)
{
	struct plan *p;

	if (e->pending_plan) {
		/* Resume: the proposal was waiting at its gate when the run stopped. */
		struct strvec errors = STRVEC_INIT;
		p = plan_parse(e->pending_plan, &errors);
		strvec_clear(&errors);
		free(e->pending_plan);
		e->pending_plan = NULL;
		if (p)
			return gate_and_adopt(e, p, e->revision);
	}
	p = ask_planner(e, PURPOSE_PLAN, prompt_plan(e->task));
	if (!p)
		return false;
	publish_proposed(e, p, 0, "initial", NULL, NULL);
	return gate_and_adopt(e, p, 0);
}

/* The replan diff for the gate: steps added, removed, changed, kept. */
static cJSON *plan_diff(const struct plan *old, const struct plan *np)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *added = cJSON_AddArrayToObject(d, "added");
	cJSON *removed = cJSON_AddArrayToObject(d, "removed");
	cJSON *changed = cJSON_AddArrayToObject(d, "changed");
	cJSON *kept = cJSON_AddArrayToObject(d, "kept");

	for (size_t i = 0; i < np->n_steps; i++) {
		int o = plan_find(old, np->steps[i].id);
		cJSON *id = cJSON_CreateString(np->steps[i].id);
		if (o < 0)
			cJSON_AddItemToArray(added, id);
		else if (!plan_step_equal(&old->steps[o], &np->steps[i]))
			cJSON_AddItemToArray(changed, id);
		else
			cJSON_AddItemToArray(kept, id);
	}
	for (size_t i = 0; i < old->n_steps; i++)
		if (plan_find(np, old->steps[i].id) < 0)
			cJSON_AddItemToArray(removed, cJSON_CreateString(old->steps[i].id));
	return d;
}

static void fail_accept(struct pev *e, size_t i, const char *why)
{
	struct step_state *s = &e->st[i];

	bus_notice(e->bus, "warn", e->plan->steps[i].id,
		   "step %s is fail-accepted: %s; its last result is kept and marked",
		   e->plan->steps[i].id, why);
	s->status = SS_FAIL_ACCEPTED;
	publish_step_end(e, e->plan->steps[i].id, SS_FAIL_ACCEPTED, s->attempts, false);
}

static void replan_gate(struct pev *e, size_t i, const char *failure, struct plan *np);

/* Retries exhausted or the verifier asked for a replan. */
static void replan(struct pev *e, size_t i, const char *failure)
{
	struct strvec passed = STRVEC_INIT;
	char *failed_id = xstrdup(e->plan->steps[i].id);
	struct plan *np;
	char *prompt;

	if (e->replans >= e->max_replans) {
		char *why = xasprintf("the replan limit (%d) is reached", e->max_replans);
		fail_accept(e, i, why);
		free(why);
		free(failed_id);
		return;
	}
	for (size_t k = 0; k < e->plan->n_steps; k++)
		if (e->st[k].status == SS_PASSED)
			strvec_push(&passed, e->plan->steps[k].id);
	prompt = prompt_replan(e->task, e->plan, &passed, failed_id, failure);
	strvec_clear(&passed);
	np = ask_planner(e, PURPOSE_REPLAN, prompt);
	if (!np) {
		free(failed_id);
		return;
	}
	e->replans++;
	publish_proposed(e, np, e->revision + 1, "replan", failed_id, failure);
	replan_gate(e, i, failure, np);
	free(failed_id);
}

/* The replan gate for proposal `np` (taken): approve adopts it, edit adopts the edited
 * plan, skip keeps the old plan and fail-accepts step i, reject ends the run. */
static void replan_gate(struct pev *e, size_t i, const char *failure, struct plan *np)
{
	char *failed_id = xstrdup(e->plan->steps[i].id);

	for (;;) {
		cJSON *payload = cJSON_CreateObject();
		char *edited = NULL;
		enum gate_decision d;

		cJSON_AddNumberToObject(payload, "revision", e->revision + 1);
		cJSON_AddStringToObject(payload, "failed_step", failed_id);
		cJSON_AddStringToObject(payload, "reason", failure ? failure : "");
		cJSON_AddItemToObject(payload, "diff", plan_diff(e->plan, np));
		d = gatekeeper_ask(e->gates, GATE_REPLAN, failed_id, payload, &edited);
		if (d == GATE_APPROVE) {
			adopt_plan(e, np, e->revision + 1);
			break;
		}
		if (d == GATE_SKIP) {
			plan_free(np);
			fail_accept(e, i, "the operator kept the old plan");
			break;
		}
		if (d == GATE_REJECT) {
			plan_free(np);
			if (!stopping(e))
				set_end(e, PEV_EXIT_ABORTED, "the replan was rejected at its gate");
			break;
		}
		{
			struct plan *ep = plan_from_edit(e, edited);
			free(edited);
			if (ep) {
				plan_free(np);
				publish_proposed(e, ep, e->revision + 1, "edit", NULL, NULL);
				adopt_plan(e, ep, e->revision + 1);
				break;
			}
		}
	}
	free(failed_id);
}

/* ------------------------------------------------------------ execution */








/* ---------------------------------------------------------------- workers */






char *pev_reuse_key(struct pev *e, const struct plan *p, size_t i)
{
	struct plan_step copy;
	struct strbuf sb = STRBUF_INIT;
	char *def;

	/* The id does not matter for reuse: the definition and the inputs do. */
	plan_step_copy(&copy, &p->steps[i]);
	free(copy.id);
	copy.id = xstrdup("");
	def = plan_step_to_string(&copy, false);
	plan_step_free_fields(&copy);
	strbuf_init(&sb);
	strbuf_adds(&sb, def);
	free(def);
	for (size_t d = 0; d < p->steps[i].deps.n; d++) {
		int di = plan_find(p, p->steps[i].deps.v[d]);
		strbuf_addc(&sb, '\n');
		strbuf_adds(&sb, di >= 0 && e->st[di].output_json ? e->st[di].output_json : "-");
	}
	return strbuf_detach(&sb);
}

static const struct reuse_entry *reuse_find(struct pev *e, const char *key)
{
	for (size_t r = 0; r < e->n_reuse; r++)
		if (!strcmp(e->reuse[r].key, key))
			return &e->reuse[r];
	return NULL;
}

void pev_reuse_add(struct pev *e, char *key, const char *result, const char *output)
{
	if (reuse_find(e, key)) {
		free(key);
		return;
	}
	e->reuse = xgrow(e->reuse, &e->cap_reuse, e->n_reuse + 1, sizeof(*e->reuse));
	e->reuse[e->n_reuse++] = (struct reuse_entry){key, xstrdup(result), xstrdup(output)};
}





/* After an operator stop (abort/quit) was posted, applies it; true if the run stops. */
static bool stopping(struct pev *e)
{
	if (atomic_load(&e->aborting))
		apply_commands(e);
	return e->stop;
}

/* Starts step i's worker; `key` (its pev_reuse_key) is taken. */
static void start_worker(struct pev *e, size_t i, char *key)
{
	struct worker *w = pev_worker_new(e, i);

	w->reuse_key = key;
	e->st[i].status = SS_RUNNING;
	pthread_mutex_lock(&e->lock);
	w->next = e->running;
	e->running = w;
	e->n_running++;
	if (e->n_running > e->max_in_flight)
		e->max_in_flight = e->n_running;
	pthread_mutex_unlock(&e->lock);
	if (pthread_create(&w->thread, NULL, pev_worker_main, w))
		fatal("cannot start a worker thread");
}

/* Engine thread: applies what a finished worker brings back. */
static void apply_worker(struct pev *e, struct worker *w)
{
	int i = plan_find(e->plan, w->step.id);
	struct step_state *s;

	pthread_join(w->thread, NULL);
	/* Steps waiting for an identical one look again: reuse if it passed, run if not. */
	for (size_t k = 0; k < e->plan->n_steps; k++)
		e->st[k].twin_wait = false;
	/* Counted as running until applied, so the journal never shows more than
	 * --parallel steps between step.start and step.end. */
	pthread_mutex_lock(&e->lock);
	e->n_running--;
	pthread_mutex_unlock(&e->lock);
	if (i < 0) {
		pev_worker_free(w);
		return;
	}
	s = &e->st[i];
	s->attempts = w->attempts;
	s->round_attempts = w->round_attempts;
	strvec_clear(&s->critiques);
	for (size_t c = 0; c < w->critiques.n; c++)
		strvec_push(&s->critiques, w->critiques.v[c]);
	if (w->result_json) {
		free(s->result_json);
		free(s->output_json);
		s->result_json = w->result_json;
		s->output_json = w->output_json;
		w->result_json = w->output_json = NULL;
	}
	s->status = SS_PENDING;
	if (s->skip_requested) {
		s->skip_requested = false;
		s->status = SS_SKIPPED;
		publish_step_end(e, w->step.id, SS_SKIPPED, s->attempts, false);
		pev_worker_free(w);
		return;
	}
	if (w->gen != s->gen && w->outcome != OUT_ERROR) {
		/* Edited or re-run while it ran: its result does not count; it runs again. */
		publish_control(e, "step_cancelled", w->step.id, false,
				"the step was changed while it ran: it starts over");
		pev_worker_free(w);
		return;
	}
	switch (w->outcome) {
	case OUT_PASSED:
		s->status = SS_PASSED;
		pev_reuse_add(e, pev_reuse_key(e, e->plan, (size_t)i), s->result_json, s->output_json);
		publish_step_end(e, w->step.id, SS_PASSED, s->attempts, false);
		break;
	case OUT_REPLAN:
		if (!e->replan_step) {
			e->replan_step = xstrdup(w->step.id);
			e->replan_why = xstrdup(w->failure);
		} else {
			/* One replan at a time: this step fails again later if it must. */
			s->round_attempts = 0;
		}
		break;
	case OUT_ERROR:
		if (!e->stop && !atomic_load(&e->aborting))
			set_end(e, PEV_EXIT_ERROR, "executor/verifier call for step %s failed: %s",
				w->step.id, w->failure ? w->failure : "unknown error");
		break;
	case OUT_CANCELLED:
		/* Cancelled (pause with cancel, edit, abort): it starts over as a new attempt. */
		if (!e->stop)
			publish_control(e, "step_cancelled", w->step.id, false,
					"the step's calls were cancelled: it starts over");
		break;
	}
	pev_worker_free(w);
}

/* Gates before a step, reuse of identical passed work, then a worker. */
static void dispatch_step(struct pev *e, size_t i)
{
	const struct plan_step *step = &e->plan->steps[i];
	enum gate_kind kind = GATE__COUNT;
	char *key;
	const struct reuse_entry *hit;

	if (gatekeeper_enabled(e->gates, GATE_STEP))
		kind = GATE_STEP;
	else if (step->complexity == CX_HIGH && gatekeeper_enabled(e->gates, GATE_HIGH))
		kind = GATE_HIGH;
	if (kind != GATE__COUNT) {
		cJSON *payload = cJSON_CreateObject();
		char *edited = NULL;
		enum gate_decision d;

		cJSON_AddItemToObject(payload, "step", plan_step_to_json(step));
		/* Running steps go on while the operator decides. */
		d = gatekeeper_ask(e->gates, kind, step->id, payload, &edited);
		if (d == GATE_REJECT) {
			if (!stopping(e))
				set_end(e, PEV_EXIT_ABORTED, "step %s was rejected at the %s gate",
					step->id, gate_kind_name(kind));
			return;
		}
		if (d == GATE_SKIP) {
			e->st[i].status = SS_SKIPPED;
			publish_step_end(e, step->id, SS_SKIPPED, e->st[i].attempts, false);
			return;
		}
		if (d == GATE_EDIT) {
			apply_edit(e, step->id, edited);
			free(edited);
			step = &e->plan->steps[i];
		}
		/* Commands that arrived during the gate (abort, skip…) come first. */
		if (!apply_commands(e) || e->st[i].status != SS_PENDING)
			return;
	}

	key = pev_reuse_key(e, e->plan, i);
	hit = reuse_find(e, key);
	if (hit) {
		free(key);
		struct step_state *s = &e->st[i];
		free(s->result_json);
		free(s->output_json);
		s->result_json = xstrdup(hit->result_json);
		s->output_json = xstrdup(hit->output_json);
		s->status = SS_PASSED;
		bus_notice(e->bus, "info", step->id,
			   "step %s reuses an identical step's verified result (same definition "
			   "and inputs)",
			   step->id);
		publish_step_end(e, step->id, SS_PASSED, s->attempts, true);
		return;
	}
	{
		/* The same work is in flight under another id: wait for it rather than pay
		 * twice; it is reused if it passes, and run here if it does not. */
		char *twin = NULL;
		pthread_mutex_lock(&e->lock);
		for (struct worker *w = e->running; w && !twin; w = w->next)
			if (w->reuse_key && !strcmp(w->reuse_key, key))
				twin = xstrdup(w->step.id);
		pthread_mutex_unlock(&e->lock);
		if (twin) {
			e->st[i].twin_wait = true;
			bus_notice(e->bus, "info", step->id,
				   "step %s waits for %s, which does the same work", step->id, twin);
			free(twin);
			free(key);
			return;
		}
	}
	start_worker(e, i, key);
}

/* Marks step i and everything that depends on it (transitively) to run again; those in
 * flight are cancelled and start over when their worker returns. */
void pev_reset_with_dependents(struct pev *e, size_t i)
{
	bool *mark = xcalloc(e->plan->n_steps, sizeof(*mark));
	bool changed = true;

	mark[i] = true;
	while (changed) {
		changed = false;
		for (size_t k = 0; k < e->plan->n_steps; k++) {
			if (mark[k])
				continue;
			for (size_t d = 0; d < e->plan->steps[k].deps.n; d++) {
				int di = plan_find(e->plan, e->plan->steps[k].deps.v[d]);
				if (di >= 0 && mark[di]) {
					mark[k] = changed = true;
					break;
				}
			}
		}
	}
	for (size_t k = 0; k < e->plan->n_steps; k++) {
		if (!mark[k])
			continue;
		e->st[k].round_attempts = 0;
		e->st[k].gen++;
		if (e->st[k].status == SS_RUNNING) {
			pthread_mutex_lock(&e->lock);
			cancel_workers_locked(e, e->plan->steps[k].id);
			pthread_mutex_unlock(&e->lock);
		} else {
			e->st[k].status = SS_PENDING;
		}
	}
	free(mark);
}

static void apply_edit(struct pev *e, const char *step_id, const char *json)
{
	int i = plan_find(e->plan, step_id);
	struct strvec errors = STRVEC_INIT;
	struct plan_step ns;
	char *perr = NULL;
	cJSON *obj = json ? jsonx_extract(json, PLAN_MAX_JSON_DEPTH, &perr) : NULL;
	struct plan *trial;
	cJSON *f;

	if (i < 0) {
		bus_notice(e->bus, "error", step_id, "cannot edit unknown step %s", step_id);
		cJSON_Delete(obj);
		free(perr);
		return;
	}
	if (!obj || !plan_step_from_json(obj, &ns, &errors)) {
		char *joined = strvec_join(&errors, "; ");
		bus_notice(e->bus, "error", step_id, "the edited step %s is invalid: %s", step_id,
			   *joined ? joined : perr ? perr : "not a JSON object");
		free(joined);
		free(perr);
		strvec_clear(&errors);
		cJSON_Delete(obj);
		return;
	}
	cJSON_Delete(obj);
	/* The id is the step's identity: an edit never renames it. */
	free(ns.id);
	ns.id = xstrdup(step_id);
	trial = plan_clone(e->plan);
	plan_step_free_fields(&trial->steps[i]);
	plan_step_copy(&trial->steps[i], &ns);
	if (!plan_validate(trial, &errors)) {
		char *joined = strvec_join(&errors, "; ");
		bus_notice(e->bus, "error", step_id, "the edited step %s breaks the plan: %s",
			   step_id, joined);
		free(joined);
		strvec_clear(&errors);
		plan_free(trial);
		plan_step_free_fields(&ns);
		return;
	}
	plan_free(trial);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddItemToObject(f, "before", plan_step_to_json(&e->plan->steps[i]));
	cJSON_AddItemToObject(f, "after", plan_step_to_json(&ns));
	cJSON_AddStringToObject(f, "by", "operator");
	bus_publish(e->bus, EV_STEP_EDIT, f);
	plan_step_free_fields(&e->plan->steps[i]);
	e->plan->steps[i] = ns;
	pev_index_plan(e);
	/* A pending step runs as edited; a running one starts over; a settled one runs
	 * again with everything that depends on it. */
	if (e->st[i].status != SS_PENDING)
		pev_reset_with_dependents(e, (size_t)i);
	e->st[i].round_attempts = 0;
	{
		char *pj = plan_to_string(e->plan, true), *err = NULL;
		if (!journal_write_plan(e->run_dir, pj, &err))
			free(err);
		free(pj);
	}
}

/* A notice the screen acts on: `kind` says what changed (pause, resume_run, abort,
 * step_cancelled); `step_id` may be NULL; `cancel` marks a pause that cancelled calls. */
static void publish_control(struct pev *e, const char *kind, const char *step_id,
			    bool cancel, const char *message)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "level", "info");
	cJSON_AddStringToObject(f, "kind", kind);
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	if (cancel)
		cJSON_AddBoolToObject(f, "cancel", true);
	cJSON_AddStringToObject(f, "message", message);
	bus_publish(e->bus, EV_NOTICE, f);
}

/*
 * Engine thread: applies queued operator commands. Pausing is applied by the main loop
 * (no new dispatch). Returns false when the run must stop (abort / quit).
 */
static bool apply_commands(struct pev *e)
{
	struct cmd *c = take_cmds(e), *next;

	for (; c; c = next) {
		int i;

		next = c->next;
		i = c->step_id && e->plan ? plan_find(e->plan, c->step_id) : -1;
		switch (c->cmd) {
		case PEV_CMD_ABORT:
			if (!e->stop)
				set_end(e, PEV_EXIT_ABORTED, "aborted by the operator");
			publish_control(e, "abort", NULL, false, "run aborted by the operator");
			break;
		case PEV_CMD_QUIT:
			if (!e->stop)
				set_end(e, PEV_EXIT_ABORTED, "the operator quit; the run can be resumed");
			e->quit = true;
			break;
		case PEV_CMD_PAUSE:
			publish_control(e, "pause", NULL, false,
					"paused: no new step starts; running steps finish");
			break;
		case PEV_CMD_CANCEL_RUNNING:
			publish_control(e, "pause", NULL, true,
					"paused: calls in flight cancelled; those steps start over on "
					"resume");
			break;
		case PEV_CMD_RESUME:
			publish_control(e, "resume_run", NULL, false, "resumed");
			break;
		case PEV_CMD_EDIT:
			if (e->plan)
				apply_edit(e, c->step_id, c->json);
			break;
		case PEV_CMD_RERUN:
			if (i >= 0) {
				pev_reset_with_dependents(e, (size_t)i);
				bus_notice(e->bus, "info", c->step_id,
					   "step %s will run again, with its dependents", c->step_id);
			}
			break;
		case PEV_CMD_SKIP:
			if (i >= 0 && e->st[i].status == SS_PENDING) {
				e->st[i].status = SS_SKIPPED;
				publish_step_end(e, c->step_id, SS_SKIPPED, e->st[i].attempts, false);
			} else if (i >= 0 && e->st[i].status == SS_RUNNING) {
				/* Its worker was cancelled by pev_post; skipped when it returns. */
				e->st[i].skip_requested = true;
			}
			break;
		}
		cmd_free(c);
	}
	return !e->stop;
}

/* ------------------------------------------------------------------ finish */

static void collect_results(struct pev *e, struct strvec *results, struct strvec *gaps)
{
	for (size_t i = 0; i < e->plan->n_steps; i++) {
		const struct plan_step *s = &e->plan->steps[i];
		const struct step_state *st = &e->st[i];
		if (st->status == SS_PASSED)
			strvec_pushf(results, "[%s] %s: %s", s->id, s->name ? s->name : "",
				     st->output_json ? st->output_json : "");
		else if (st->status == SS_FAIL_ACCEPTED)
			strvec_pushf(gaps, "%s (%s): fail-accepted after failing verification",
				     s->id, s->name ? s->name : "");
		else
			strvec_pushf(gaps, "%s (%s): %s", s->id, s->name ? s->name : "",
				     st->status == SS_SKIPPED ? "skipped" : "not run");
	}
}

static cJSON *metrics_json(struct pev *e)
{
	cJSON *m = cJSON_CreateObject(), *tok, *cost;
	int passed = 0, fa = 0, skipped = 0, attempts = 0;
	double total = 0;
	bool known = true;

	for (size_t i = 0; i < e->plan->n_steps; i++) {
		attempts += e->st[i].attempts;
		passed += e->st[i].status == SS_PASSED;
		fa += e->st[i].status == SS_FAIL_ACCEPTED;
		skipped += e->st[i].status == SS_SKIPPED;
	}
	cJSON_AddNumberToObject(m, "steps_total", (double)e->plan->n_steps);
	cJSON_AddNumberToObject(m, "steps_passed", passed);
	cJSON_AddNumberToObject(m, "steps_fail_accepted", fa);
	cJSON_AddNumberToObject(m, "steps_skipped", skipped);
	cJSON_AddNumberToObject(m, "total_attempts", attempts);
	cJSON_AddNumberToObject(m, "replans", e->replans);
	tok = cJSON_AddObjectToObject(m, "tokens");
	cost = cJSON_AddObjectToObject(m, "cost_usd");
	for (int r = 0; r < ROLE__COUNT; r++) {
		cJSON *t = cJSON_AddObjectToObject(tok, llm_role_name(r));
		cJSON_AddNumberToObject(t, "input", (double)e->usage[r].input);
		cJSON_AddNumberToObject(t, "output", (double)e->usage[r].output);
		cJSON_AddNumberToObject(t, "cached", (double)e->usage[r].cached);
		if (e->usage[r].cost_unknown) {
			cJSON_AddNullToObject(cost, llm_role_name(r));
			known = false;
		} else {
			cJSON_AddNumberToObject(cost, llm_role_name(r), e->usage[r].cost);
		}
		total += e->usage[r].cost;
	}
	cJSON_AddNumberToObject(cost, "total", total);
	cJSON_AddBoolToObject(m, "cost_known", known);
	return m;
}

static void finish(struct pev *e)
{
	struct strvec results = STRVEC_INIT, gaps = STRVEC_INIT;
	struct verdict *check = NULL;
	char *answer = NULL;
	bool partial;
	cJSON *f;

	collect_results(e, &results, &gaps);
	partial = gaps.n > 0;

	if (results.n) {
		struct llm_msg msg = {.kind = LLM_MSG_USER,
				      .text = prompt_final_check(e->plan, &results)};
		struct llm_request req = {.role = ROLE_VERIFIER,
					  .purpose = PURPOSE_FINAL_CHECK,
					  .system = prompt_system_verifier(),
					  .msgs = &msg,
					  .n_msgs = 1,
					  .want_json = true,
					  .max_tokens = MAX_TOKENS_STEP};
		struct llm_response res = {0};
		char *err = NULL;

		if (call_or_end(e, &req, &res) == PROVIDER_OK) {
			check = verdict_parse(res.text, &err);
			if (!check)
				bus_notice(e->bus, "warn", NULL,
					   "the whole-plan check could not be read: %s", err);
			free(err);
		}
		llm_response_release(&res);
		llm_msg_release(&msg);
	}
	if (e->stop)
		goto out;

	{
		struct llm_msg msg = {.kind = LLM_MSG_USER,
				      .text = prompt_synthesize(e->task, e->plan, &results, &gaps)};
		struct llm_request req = {.role = ROLE_PLANNER,
					  .purpose = PURPOSE_SYNTHESIZE,
					  .system = prompt_system_synthesizer(),
					  .msgs = &msg,
					  .n_msgs = 1,
					  .max_tokens = MAX_TOKENS_PLAN};
		struct llm_response res = {0};

		if (call_or_end(e, &req, &res) == PROVIDER_OK) {
			answer = res.text;
			res.text = NULL;
		}
		llm_response_release(&res);
		llm_msg_release(&msg);
	}
	if (e->stop)
		goto out;
	if (partial && strncmp(answer, "PARTIAL:", 8) != 0) {
		/* The contract holds even if the model forgot: gaps are named up front. */
		char *g = strvec_join(&gaps, "; "), *a = xasprintf("PARTIAL: not verified: %s\n\n%s", g, answer);
		free(g);
		free(answer);
		answer = a;
	}

	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "answer", answer);
	cJSON_AddBoolToObject(f, "partial", partial);
	{
		cJSON *fc = cJSON_AddObjectToObject(f, "final_check");
		if (check) {
			cJSON_AddBoolToObject(fc, "passed", check->overall_pass);
			add_json_string_or_null(fc, "feedback", check->feedback);
		} else {
			cJSON_AddNullToObject(fc, "passed");
			cJSON_AddNullToObject(fc, "feedback");
		}
	}
	cJSON_AddItemToObject(f, "metrics", metrics_json(e));
	bus_publish(e->bus, EV_RUN_FINAL, f);
	e->exit_code = partial ? PEV_EXIT_PARTIAL : PEV_EXIT_OK;
	if (partial) {
		char *g = strvec_join(&gaps, "; ");
		free(e->end_reason);
		e->end_reason = xasprintf("finished with gaps: %s", g);
		free(g);
	}
out:
	verdict_free(check);
	free(answer);
	strvec_clear(&results);
	strvec_clear(&gaps);
}

/* ------------------------------------------------------------------- resume */




/* ----------------------------------------------------------------- the run */

static void publish_run_start(struct pev *e)
{
	cJSON *f = cJSON_CreateObject(), *models, *policy, *gates;

	cJSON_AddStringToObject(f, "run_id", e->run_id);
	cJSON_AddStringToObject(f, "task", e->task);
	cJSON_AddStringToObject(f, "provider", e->prov[ROLE_PLANNER]->ops->name);
	cJSON_AddBoolToObject(f, "simulated", e->prov[ROLE_PLANNER]->simulated);
	if (e->scenario)
		cJSON_AddStringToObject(f, "scenario", e->scenario);
	models = cJSON_AddObjectToObject(f, "models");
	for (int r = 0; r < ROLE__COUNT; r++)
		cJSON_AddStringToObject(models, llm_role_name(r), e->models[r]);
	policy = cJSON_AddObjectToObject(f, "policy");
	gates = cJSON_AddArrayToObject(policy, "gates");
	for (int k = 0; k < GATE__COUNT; k++)
		if (gatekeeper_enabled(e->gates, k))
			cJSON_AddItemToArray(gates, cJSON_CreateString(gate_kind_name(k)));
	cJSON_AddBoolToObject(policy, "yes", e->yes);
	cJSON_AddNumberToObject(policy, "max_retries", e->max_retries);
	cJSON_AddNumberToObject(policy, "max_replans", e->max_replans);
	cJSON_AddNumberToObject(policy, "parallel", e->parallel);
	if (e->budget > 0)
		cJSON_AddNumberToObject(policy, "budget_usd", e->budget);
	else
		cJSON_AddNullToObject(policy, "budget_usd");
	cJSON_AddNumberToObject(policy, "confidence_threshold", e->threshold);
	cJSON_AddNumberToObject(policy, "chaos", e->chaos);
	cJSON_AddStringToObject(f, "workspace", e->workspace);
	bus_publish(e->bus, EV_RUN_START, f);
}

/* The next step to run: pending with every dependency settled, in plan order. -1 none;
 * *blocked when some pending step waits on an unsettled dependency. */
static int next_ready(struct pev *e, bool *blocked)
{
	*blocked = false;
	for (size_t i = 0; i < e->plan->n_steps; i++) {
		bool ready = true;
		if (e->st[i].status != SS_PENDING || e->st[i].twin_wait)
			continue;
		for (size_t k = e->dep_off[i]; k < e->dep_off[i + 1]; k++) {
			int di = e->dep_idx[k];
			if (di >= 0 && (e->st[di].status == SS_PENDING ||
					e->st[di].status == SS_RUNNING)) {
				ready = false;
				break;
			}
		}
		if (ready)
			return (int)i;
		*blocked = true;
	}
	return -1;
}

static struct worker *take_done(struct pev *e)
{
	struct worker *w;

	pthread_mutex_lock(&e->lock);
	w = e->done;
	e->done = NULL;
	pthread_mutex_unlock(&e->lock);
	return w;
}

/* The scheduler: dispatches ready steps up to --parallel, applies finished workers,
 * replans once nothing runs, and sleeps on the condition variable in between. */
static void schedule(struct pev *e)
{
	for (;;) {
		struct worker *w, *next;
		int running, i;
		bool paused, blocked, more_done;

		if (!apply_commands(e))
			return;
		budget_gate(e);
		for (w = take_done(e); w; w = next) {
			next = w->next;
			apply_worker(e, w);
		}
		if (e->stop)
			return;
		pthread_mutex_lock(&e->lock);
		running = e->n_running;
		paused = e->paused;
		more_done = e->done != NULL;
		pthread_mutex_unlock(&e->lock);
		/* A worker that finished meanwhile is applied first: decisions below (replan,
		 * finish) need every result that exists. */
		if (more_done)
			continue;

		if (e->replan_step) {
			if (running == 0) {
				/* Steps in flight have finished: the replan applies now. */
				char *sid = e->replan_step, *why = e->replan_why;
				e->replan_step = e->replan_why = NULL;
				i = plan_find(e->plan, sid);
				if (i >= 0)
					replan(e, (size_t)i, why);
				free(sid);
				free(why);
				continue;
			}
		} else if (!paused) {
			bool dispatched = false;
			while (running < e->parallel && (i = next_ready(e, &blocked)) >= 0) {
				dispatch_step(e, (size_t)i);
				dispatched = true;
				if (e->stop)
					return;
				pthread_mutex_lock(&e->lock);
				running = e->n_running;
				pthread_mutex_unlock(&e->lock);
			}
			if (dispatched)
				continue;
			if (running == 0) {
				if (next_ready(e, &blocked) < 0) {
					if (blocked)
						set_end(e, PEV_EXIT_ERROR,
							"no step can run: the plan is blocked");
					return;
				}
				continue;
			}
		}

		/* Wait for a worker to finish, a command, or the budget. */
		pthread_mutex_lock(&e->lock);
		while (!e->done && !e->cmds && !(e->budget_crossed && !e->budget_asked) &&
		       (e->n_running > 0 || e->paused))
			pthread_cond_wait(&e->cond, &e->lock);
		pthread_mutex_unlock(&e->lock);
	}
}

/* --resume: the replan proposal that was waiting at its gate is asked again. */
static void reopen_replan_gate(struct pev *e)
{
	struct strvec errors = STRVEC_INIT;
	struct plan *np = plan_parse(e->pending_plan, &errors);
	int i = plan_find(e->plan, e->pending_failed);

	strvec_clear(&errors);
	if (np && i >= 0)
		replan_gate(e, (size_t)i, e->pending_failure, np);
	else
		plan_free(np);
	free(e->pending_plan);
	free(e->pending_failed);
	free(e->pending_failure);
	e->pending_plan = e->pending_failed = e->pending_failure = NULL;
}

/* Stops every worker and waits for them (end of run, abort, quit, error). */
static void drain_workers(struct pev *e)
{
	struct worker *w, *next;

	pthread_mutex_lock(&e->lock);
	cancel_workers_locked(e, NULL);
	while (e->running)
		pthread_cond_wait(&e->cond, &e->lock);
	w = e->done;
	e->done = NULL;
	e->n_running = 0;
	pthread_mutex_unlock(&e->lock);
	for (; w; w = next) {
		next = w->next;
		pthread_join(w->thread, NULL);
		pev_worker_free(w);
	}
}

static void *engine_main(void *arg)
{
	struct pev *e = arg;

	/* Killed between run.final and run.end: only run.end is written, so run.final
	 * stays the event before it. */
	if (e->final_done)
		goto end;
	if (e->resume)
		bus_notice(e->bus, "info", NULL, "resuming run %s from its journal", e->run_id);
	else
		publish_run_start(e);

	if (!e->plan && !make_first_plan(e))
		goto end;
	if (e->pending_plan)
		reopen_replan_gate(e);
	schedule(e);
	drain_workers(e);
	if (!e->stop)
		finish(e);
end:
	if (!e->quit) {
		cJSON *f = cJSON_CreateObject();
		const char *status = e->exit_code == PEV_EXIT_OK        ? "passed"
				     : e->exit_code == PEV_EXIT_PARTIAL ? "partial"
				     : e->exit_code == PEV_EXIT_ABORTED ? "aborted"
									: "error";
		char *err = NULL;

		cJSON_AddStringToObject(f, "status", status);
		cJSON_AddNumberToObject(f, "exit_code", e->exit_code);
		if (e->end_reason)
			cJSON_AddStringToObject(f, "reason", e->end_reason);
		bus_publish(e->bus, EV_RUN_END, f);
		if (!report_write(e->run_dir, &err)) {
			/* The journal has everything; the report is a convenience. */
			free(err);
		}
	}
	return NULL;
}

/* ------------------------------------------------------------- lifecycle */

static char *make_run_id(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
	return xasprintf("%s-%04lx", buf, ((unsigned long)ts.tv_nsec ^ (unsigned long)getpid()) & 0xffff);
}

struct pev *pev_new(const struct settings *s, struct provider *providers[ROLE__COUNT],
		    struct bus *bus, struct gatekeeper *gates, const char *run_dir, bool resume,
		    char **err)
{
	struct pev *e = xcalloc(1, sizeof(*e));
	const char *slash;

	e->task = xstrdup(s->task ? s->task : "");
	if (providers[ROLE_PLANNER]->simulated && !s->script)
		e->scenario = xstrdup(s->scenario);
	for (int r = 0; r < ROLE__COUNT; r++) {
		e->prov[r] = providers[r];
		e->models[r] = xstrdup(s->model[r] ? s->model[r] : "unknown");
	}
	e->max_retries = s->max_retries;
	e->max_replans = s->max_replans;
	e->budget = s->budget_usd;
	e->threshold = s->confidence_threshold;
	e->chaos = s->chaos;
	for (size_t k = 0; k < s->shell_allow.n; k++)
		strvec_push(&e->shell_allow, s->shell_allow.v[k]);
	e->shell_timeout_s = s->shell_timeout_s;
	e->http_max_bytes = s->http_max_bytes > 0 ? (size_t)s->http_max_bytes : 0;
	e->chaos_seed = s->chaos_seed;
	e->demo = providers[ROLE_EXECUTOR]->simulated;
	e->yes = s->yes;
	e->parallel = s->parallel;
	e->bus = bus;
	e->gates = gates;
	e->run_dir = xstrdup(run_dir);
	slash = strrchr(e->run_dir, '/');
	e->run_id = xstrdup(slash ? slash + 1 : e->run_dir);
	e->workspace = s->workspace ? xstrdup(s->workspace) : xasprintf("%s/workspace", run_dir);
	e->resume = resume;
	e->ws_fd = -1;
	e->cmds_tail = &e->cmds;
	atomic_init(&e->cancel_call, false);
	atomic_init(&e->aborting, false);
	if (pthread_mutex_init(&e->lock, NULL) || pthread_cond_init(&e->cond, NULL) ||
	    pthread_mutex_init(&e->acct, NULL))
		fatal("cannot initialise engine lock");

	if (mkdir(run_dir, 0700) && errno != EEXIST) {
		*err = xasprintf("cannot create run directory %s: %s", run_dir, strerror(errno));
		goto fail;
	}
	e->ws_fd = sandbox_open_root(e->workspace, err);
	if (e->ws_fd < 0)
		goto fail;
	if (resume && !pev_rebuild(e, err))
		goto fail;
	e->journal = journal_open(run_dir, err);
	if (!e->journal)
		goto fail;
	bus_subscribe(bus, journal_on_event, e->journal);
	return e;
fail:
	pev_free(e);
	return NULL;
}

void pev_start(struct pev *e)
{
	if (pthread_create(&e->thread, NULL, engine_main, e))
		fatal("cannot start the engine thread");
	e->started = true;
}

enum pev_exit pev_join(struct pev *e)
{
	if (e->started) {
		pthread_join(e->thread, NULL);
		e->started = false;
	}
	return e->exit_code;
}

const char *pev_run_id(const struct pev *e)
{
	return e->run_id;
}

const char *pev_end_reason(const struct pev *e)
{
	return e->end_reason;
}

void pev_free(struct pev *e)
{
	struct cmd *c, *next;

	if (!e)
		return;
	pev_join(e);
	for (c = e->cmds; c; c = next) {
		next = c->next;
		cmd_free(c);
	}
	if (e->plan)
		for (size_t i = 0; i < e->plan->n_steps; i++)
			pev_step_state_release(&e->st[i]);
	free(e->st);
	free(e->dep_idx);
	free(e->dep_off);
	plan_free(e->plan);
	for (size_t r = 0; r < e->n_reuse; r++) {
		free(e->reuse[r].key);
		free(e->reuse[r].result_json);
		free(e->reuse[r].output_json);
	}
	free(e->reuse);
	for (int r = 0; r < ROLE__COUNT; r++)
		free(e->models[r]);
	strvec_clear(&e->shell_allow);
	journal_close(e->journal);
	if (e->ws_fd >= 0)
		close(e->ws_fd);
	free(e->task);
	free(e->scenario);
	free(e->run_dir);
	free(e->run_id);
	free(e->workspace);
	free(e->end_reason);
	free(e->pending_plan);
	free(e->pending_failed);
	free(e->pending_failure);
	free(e->replan_step);
	free(e->replan_why);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->acct);
	free(e);
}

char *pev_new_run_dir(const char *runs_dir)
{
	char *id = make_run_id();
	char *dir = xasprintf("%s/%s", runs_dir, id);

	free(id);
	return dir;
}
