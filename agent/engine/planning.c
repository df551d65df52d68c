/* planning — the planner's jobs (first plan, replans), the plan and replan gates, edits of
 * a proposal before it is adopted, and adoption (passed steps whose definition and inputs
 * are unchanged keep their results). Engine thread only. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "budget.h"
#include "bus.h"
#include "checkpoint.h"
#include "cost.h"
#include "jsonx.h"
#include "xalloc.h"

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

/* The replan diff for the gate: steps added, removed, changed, kept. */
static cJSON *plan_diff(const struct plan *old, const struct plan *np)
{
	cJSON *d = cJSON_CreateObject();
	cJSON *added = cJSON_AddArrayToObject(d, "added");
	cJSON *removed = cJSON_AddArrayToObject(d, "removed");
	cJSON *changed = cJSON_AddArrayToObject(d, "changed");
	cJSON *kept = cJSON_AddArrayToObject(d, "kept");
	struct plan_ids *old_ids = plan_ids_new(old), *np_ids = plan_ids_new(np);

	for (size_t i = 0; i < np->n_steps; i++) {
		int o = plan_ids_find(old_ids, np->steps[i].id);
		cJSON *id = cJSON_CreateString(np->steps[i].id);
		if (o < 0)
			cJSON_AddItemToArray(added, id);
		else if (!plan_step_equal(&old->steps[o], &np->steps[i]))
			cJSON_AddItemToArray(changed, id);
		else
			cJSON_AddItemToArray(kept, id);
	}
	for (size_t i = 0; i < old->n_steps; i++)
		if (plan_ids_find(np_ids, old->steps[i].id) < 0)
			cJSON_AddItemToArray(removed, cJSON_CreateString(old->steps[i].id));
	plan_ids_free(old_ids);
	plan_ids_free(np_ids);
	return d;
}

/* -------------------------------------------------------------- adoption */

void planning_adopt(struct pev *e, struct plan *np, int revision)
{
	struct step_state *nst = xcalloc(np->n_steps ? np->n_steps : 1, sizeof(*nst));
	size_t *order = plan_topo_order(np);
	cJSON *f = cJSON_CreateObject(), *kept = cJSON_CreateArray();
	struct plan_ids *np_ids = plan_ids_new(np);

	for (size_t k = 0; k < np->n_steps; k++) {
		size_t i = order[k];
		struct plan_step *s = &np->steps[i];
		int old = sched_find(e, s->id);
		bool keep = false;

		if (old < 0)
			continue;
		nst[i].attempts = e->st[old].attempts;
		nst[i].gen = e->st[old].gen + 1;
		/* Critiques still apply if the step is the same. */
		if (plan_step_equal(s, &e->plan->steps[old])) {
			for (size_t c = 0; c < e->st[old].critiques.n; c++)
				strvec_push(&nst[i].critiques, e->st[old].critiques.v[c]);
			keep = fold_state_settled(e->st[old].status);
		}
		/* Inputs unchanged only if every dependency was kept too. */
		for (size_t d = 0; keep && d < s->deps.n; d++) {
			int di = plan_ids_find(np_ids, s->deps.v[d]);
			if (di < 0 || !fold_state_settled(nst[di].status))
				keep = false;
		}
		if (keep) {
			nst[i].status = e->st[old].status;
			nst[i].result_json = xstrdup(e->st[old].result_json);
			nst[i].output_json = xstrdup(e->st[old].output_json);
			cJSON_AddItemToArray(kept, cJSON_CreateString(s->id));
		}
	}
	free(order);
	/* A step the replan removed before it passed leaves no leftovers for its
	 * replacement: its files are restored before the next attempt of any step. A passed
	 * one keeps its changes (an identical step under a new name reuses its result). */
	for (size_t i = 0; e->checkpoints && e->plan && i < e->plan->n_steps; i++)
		if (plan_ids_find(np_ids, e->plan->steps[i].id) < 0 &&
		    e->st[i].status != FS_PASSED)
			checkpoint_series_orphan(e->checkpoints, e->plan->steps[i].id);
	plan_ids_free(np_ids);
	if (e->plan)
		for (size_t i = 0; i < e->plan->n_steps; i++)
			sched_release_state(&e->st[i]);
	free(e->st);
	plan_free(e->plan);
	e->plan = np;
	e->st = nst;
	e->revision = revision;
	sched_index_plan(e);

	cJSON_AddNumberToObject(f, "revision", revision);
	cJSON_AddItemToObject(f, "plan", plan_to_json(np));
	cJSON_AddItemToObject(f, "kept", kept);
	bus_publish(e->bus, EV_PLAN_ADOPTED, f);
	engine_write_plan(e);
}

/* ------------------------------------------------------------------ gates */

static void clear_proposal(struct pev *e)
{
	plan_free(e->proposal);
	e->proposal = NULL;
	free(e->proposal_reason);
	e->proposal_reason = NULL;
}

static void adopt_proposal(struct pev *e)
{
	struct plan *p = e->proposal;

	e->proposal = NULL;
	clear_proposal(e);
	planning_adopt(e, p, e->proposal_rev);
	free(e->replan_step);
	free(e->replan_why);
	e->replan_step = e->replan_why = NULL;
	e->phase = PH_EXECUTING;
}

static void open_plan_gate(struct pev *e)
{
	cJSON *payload = cJSON_CreateObject();
	bool known = false;
	double est = cost_estimate_plan(e->proposal, (const char *const *)e->models, &known);
	double cap = budget_cap(e->budget), left = cap - budget_spent(e->budget);

	cJSON_AddNumberToObject(payload, "revision", e->proposal_rev);
	if (known)
		cJSON_AddNumberToObject(payload, "estimate_usd", est);
	else
		cJSON_AddNullToObject(payload, "estimate_usd");
	if (cap > 0) {
		cJSON_AddNumberToObject(payload, "budget_usd", cap);
		cJSON_AddBoolToObject(payload, "over_budget", known && est > left);
		if (known && est > left)
			bus_notice(e->bus, "warn", NULL,
				   "the plan's estimate $%.4f is more than the $%.4f left of the "
				   "$%.4f budget",
				   est, left > 0 ? left : 0, cap);
	} else {
		cJSON_AddNullToObject(payload, "budget_usd");
		cJSON_AddBoolToObject(payload, "over_budget", false);
	}
	e->phase = PH_PLAN_GATE;
	if (!gates_open(e, GATE_PLAN, NULL, 0, NULL, payload))
		adopt_proposal(e);
}

static void open_replan_gate(struct pev *e)
{
	cJSON *payload = cJSON_CreateObject();

	cJSON_AddNumberToObject(payload, "revision", e->proposal_rev);
	cJSON_AddStringToObject(payload, "failed_step", e->replan_step ? e->replan_step : "");
	cJSON_AddStringToObject(payload, "reason", e->replan_why ? e->replan_why : "");
	cJSON_AddItemToObject(payload, "diff", plan_diff(e->plan, e->proposal));
	e->phase = PH_REPLAN_GATE;
	if (!gates_open(e, GATE_REPLAN, e->replan_step, 0, NULL, payload))
		adopt_proposal(e);
}

void planning_gate_answered(struct pev *e, enum gate_kind k, enum gate_decision d)
{
	if (!e->proposal)
		return;
	if (d == GATE_REJECT) {
		clear_proposal(e);
		engine_end(e, PEV_EXIT_ABORTED,
			   k == GATE_PLAN ? "the plan was rejected at the plan gate"
					  : "the replan was rejected at its gate");
		return;
	}
	if (k == GATE_REPLAN && d == GATE_SKIP) {
		/* Keep the old plan: the failed step is fail-accepted and the run goes on. */
		int i = e->replan_step ? sched_find(e, e->replan_step) : -1;
		clear_proposal(e);
		free(e->replan_step);
		free(e->replan_why);
		e->replan_step = e->replan_why = NULL;
		e->phase = PH_EXECUTING;
		if (i >= 0)
			sched_fail_accept(e, (size_t)i, "the operator kept the old plan");
		return;
	}
	adopt_proposal(e);
}

/* ------------------------------------------------------------------- jobs */

/* A plan that parses and validates; the problems joined by newlines otherwise. */
static void *read_plan(void *ctx, const char *text, bool last, char **why)
{
	struct strvec errors = STRVEC_INIT;
	struct plan *p = plan_parse(text, &errors);

	(void)ctx;
	(void)last;
	if (p && !plan_validate(p, &errors)) {
		plan_free(p);
		p = NULL;
	}
	if (!p)
		*why = errors.n ? strvec_join(&errors, "\n") : xstrdup("no plan in the answer");
	strvec_clear(&errors);
	return p;
}

static char *fix_plan(void *ctx, const char *why)
{
	return prompt_plan_fix(ctx, why);
}

void planning_job_run(struct job *j)
{
	struct llm_request req = {.role = ROLE_PLANNER,
				  .purpose = j->purpose,
				  .system = prompt_system_planner(),
				  .want_json = true,
				  .max_tokens = MAX_TOKENS_PLAN};
	char *prompt = j->prompt;
	/* Waits for the MCP servers started with the run (they start while the run opens):
	 * the planner is told which of their tools exist, so plans can name them. */
	char *mcp = mcpcalls_describe(j->e);

	j->prompt = NULL;
	if (mcp) {
		char *more = xasprintf("%s\n\nBesides the built-in tools, the executor has these "
				       "tools of the operator's MCP servers (each call may ask "
				       "the operator first); name them in a step's actions where "
				       "they fit:\n%s",
				       prompt, mcp);
		free(prompt);
		prompt = more;
		free(mcp);
	}
	j->plan = engine_ask_and_read(j->e, &req, prompt, &j->cancel, read_plan, j->e->task,
				      fix_plan, &j->why, &j->err);
	if (atomic_load(&j->cancel)) {
		plan_free(j->plan);
		j->plan = NULL;
	}
}

static void submit_plan_job(struct pev *e, enum llm_purpose purpose)
{
	struct job *j = job_new(e, JOB_PLAN);

	j->purpose = purpose;
	if (purpose == PURPOSE_PLAN) {
		j->prompt = prompt_plan(e->task);
	} else {
		struct strvec passed = STRVEC_INIT;
		for (size_t k = 0; k < e->plan->n_steps; k++)
			if (e->st[k].status == FS_PASSED)
				strvec_push(&passed, e->plan->steps[k].id);
		j->prompt = prompt_replan(e->task, e->plan, &passed, e->replan_step,
					  e->replan_why);
		strvec_clear(&passed);
	}
	e->plan_job = j;
	pool_submit(e, j);
}

void planning_start(struct pev *e)
{
	if (e->plan && e->proposal && e->replan_step) {
		open_replan_gate(e);
	} else if (e->plan) {
		e->phase = PH_EXECUTING;
	} else if (e->proposal) {
		open_plan_gate(e);
	} else {
		e->phase = PH_PLANNING;
		submit_plan_job(e, PURPOSE_PLAN);
	}
}

void planning_replan(struct pev *e)
{
	int i = sched_find(e, e->replan_step);

	if (i < 0) {
		free(e->replan_step);
		free(e->replan_why);
		e->replan_step = e->replan_why = NULL;
		sched_run(e);
		return;
	}
	if (e->replans >= e->max_replans) {
		char *why = xasprintf("the replan limit (%d) is reached", e->max_replans);
		free(e->replan_step);
		free(e->replan_why);
		e->replan_step = e->replan_why = NULL;
		sched_fail_accept(e, (size_t)i, why);
		free(why);
		sched_run(e);
		return;
	}
	/* Step gates ask about the old plan: they open again after adoption if needed. */
	for (size_t k = 0; k < e->plan->n_steps; k++) {
		if (e->st[k].status == FS_WAITING && e->st[k].gate_id) {
			unsigned long g = e->st[k].gate_id;
			e->st[k].gate_id = 0;
			gates_withdraw(e, g, "the plan is being revised");
			sched_set_state(e, k, FS_PENDING, NULL, "the plan is being revised");
		}
	}
	e->phase = PH_REPLANNING;
	submit_plan_job(e, PURPOSE_REPLAN);
}

void planning_resubmit(struct pev *e)
{
	if (e->paused || e->plan_job)
		return;
	if (e->phase == PH_PLANNING)
		submit_plan_job(e, PURPOSE_PLAN);
	else if (e->phase == PH_REPLANNING)
		submit_plan_job(e, PURPOSE_REPLAN);
}

void planning_job_done(struct pev *e, struct job *j)
{
	if (j != e->plan_job)
		return; /* a cancelled job that was replaced */
	e->plan_job = NULL;
	if (e->phase != PH_PLANNING && e->phase != PH_REPLANNING)
		return;
	if (j->plan) {
		clear_proposal(e);
		e->proposal = j->plan;
		j->plan = NULL;
		if (e->phase == PH_PLANNING) {
			e->proposal_rev = 0;
			e->proposal_reason = xstrdup("initial");
			publish_proposed(e, e->proposal, 0, "initial", NULL, NULL);
			open_plan_gate(e);
		} else {
			e->replans++;
			e->proposal_rev = e->revision + 1;
			e->proposal_reason = xstrdup("replan");
			publish_proposed(e, e->proposal, e->proposal_rev, "replan", e->replan_step,
					 e->replan_why);
			open_replan_gate(e);
		}
		return;
	}
	if (j->err && !atomic_load(&e->aborting)) {
		engine_end(e, PEV_EXIT_ERROR, "planner call failed: %s", j->err);
	} else if (j->why) {
		for (char *c = j->why; (c = strchr(c, '\n'));)
			*c = ' ';
		bus_notice(e->bus, "error", NULL, "the planner's plan is still invalid: %s", j->why);
		engine_end(e, PEV_EXIT_ERROR, "the planner returned an invalid plan twice: %s",
			   j->why);
	} else if (!e->paused && !atomic_load(&e->aborting)) {
		planning_resubmit(e); /* cancelled for no reason that still holds */
	}
}

/* ------------------------------------------------------------------ edits */

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

/* The proposal changed at its gate: journaled, and the same gate stays open. */
static void replace_proposal(struct pev *e, struct plan *np)
{
	plan_free(e->proposal);
	e->proposal = np;
	free(e->proposal_reason);
	e->proposal_reason = xstrdup("edit");
	/* At a replan gate the proposal still answers the same failure. */
	if (e->phase == PH_REPLAN_GATE)
		publish_proposed(e, np, e->proposal_rev, "edit", e->replan_step, e->replan_why);
	else
		publish_proposed(e, np, e->proposal_rev, "edit", NULL, NULL);
}

void planning_edit_plan(struct pev *e, const char *json)
{
	struct plan *np;

	if (!e->proposal || (e->phase != PH_PLAN_GATE && e->phase != PH_REPLAN_GATE)) {
		bus_notice(e->bus, "error", NULL,
			   "no proposed plan waits at a gate: edit the steps one at a time");
		return;
	}
	np = plan_from_edit(e, json);
	if (np)
		replace_proposal(e, np);
}

struct plan *planning_with_edit(struct pev *e, const struct plan *p, const char *step_id,
				const char *json)
{
	int i = p && step_id ? plan_find(p, step_id) : -1;
	struct strvec errors = STRVEC_INIT;
	struct plan_step ns;
	struct plan *trial;
	char *perr = NULL;
	cJSON *obj;

	if (i < 0) {
		bus_notice(e->bus, "error", step_id, "cannot edit unknown step %s",
			   step_id ? step_id : "(none)");
		return NULL;
	}
	obj = json ? jsonx_extract(json, PLAN_MAX_JSON_DEPTH, &perr) : NULL;
	if (!obj || !plan_step_from_json(obj, &ns, &errors)) {
		char *joined = strvec_join(&errors, "; ");
		bus_notice(e->bus, "error", step_id, "the edited step %s is invalid: %s", step_id,
			   *joined ? joined : perr ? perr : "not a JSON object");
		free(joined);
		free(perr);
		strvec_clear(&errors);
		cJSON_Delete(obj);
		return NULL;
	}
	cJSON_Delete(obj);
	/* The id is the step's identity: an edit never renames it. */
	free(ns.id);
	ns.id = xstrdup(step_id);
	trial = plan_clone(p);
	plan_step_free_fields(&trial->steps[i]);
	trial->steps[i] = ns;
	if (!plan_validate(trial, &errors)) {
		char *joined = strvec_join(&errors, "; ");
		bus_notice(e->bus, "error", step_id, "the edited step %s breaks the plan: %s",
			   step_id, joined);
		free(joined);
		strvec_clear(&errors);
		plan_free(trial);
		return NULL;
	}
	return trial;
}

bool planning_edit_proposal_step(struct pev *e, const char *step_id, const char *json)
{
	struct plan *trial;

	if (!e->proposal || !step_id || plan_find(e->proposal, step_id) < 0)
		return false;
	trial = planning_with_edit(e, e->proposal, step_id, json);
	if (trial)
		replace_proposal(e, trial);
	return true;
}
