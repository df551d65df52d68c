/* gates — approval gates as pending requests with continuations. Opening a gate publishes
 * gate.open and returns at once; the answer is a message (pev_answer) that runs the
 * continuation for the gate's kind. A gate holds only what it is about. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "budget.h"
#include "bus.h"
#include "jsonx.h"
#include "xalloc.h"

bool gates_enabled(const struct pev *e, enum gate_kind k)
{
	return (e->gate_mask & GATE_MASK(k)) != 0;
}

struct egate *gates_find(struct pev *e, unsigned long id)
{
	for (size_t i = 0; i < e->n_gates; i++)
		if (e->gates[i].id == id)
			return &e->gates[i];
	return NULL;
}

/* pev_answer may answer only ids listed here (under the inbox lock). */
static void allow_answers(struct pev *e, unsigned long id, bool allow)
{
	pthread_mutex_lock(&e->lock);
	if (allow) {
		e->open_ids = xgrow(e->open_ids, &e->cap_open_ids, e->n_open_ids + 1,
				    sizeof(*e->open_ids));
		e->open_ids[e->n_open_ids++] = id;
	} else {
		for (size_t i = 0; i < e->n_open_ids; i++) {
			if (e->open_ids[i] == id) {
				e->open_ids[i] = e->open_ids[--e->n_open_ids];
				break;
			}
		}
	}
	pthread_mutex_unlock(&e->lock);
}

static void publish_decision(struct pev *e, const struct egate *g, const char *decision,
			     const char *by, const char *reason, const char *edited,
			     double budget_usd, const char *remember)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddNumberToObject(f, "gate_id", (double)g->id);
	cJSON_AddStringToObject(f, "gate", gate_kind_name(g->kind));
	if (g->step_id)
		cJSON_AddStringToObject(f, "step_id", g->step_id);
	else
		cJSON_AddNullToObject(f, "step_id");
	cJSON_AddStringToObject(f, "decision", decision);
	cJSON_AddStringToObject(f, "by", by);
	if (reason)
		cJSON_AddStringToObject(f, "reason", reason);
	if (edited) {
		cJSON *j = jsonx_parse_for_event(edited);
		if (j)
			cJSON_AddItemToObject(f, "edited", j);
		else
			cJSON_AddStringToObject(f, "edited", edited);
	}
	if (budget_usd > 0)
		cJSON_AddNumberToObject(f, "budget_usd", budget_usd);
	if (remember) {
		/* Allowed for the rest of the run: the fold (and --resume) keeps the command. */
		cJSON_AddBoolToObject(f, "remember", true);
		/* an mcp gate's is the tool (SERVER__tool), a shell gate's the command */
		cJSON_AddStringToObject(f, g->kind == GATE_MCP ? "tool" : "command", remember);
	}
	bus_publish(e->bus, EV_GATE_DECISION, f);
}

/* Removes gate `id` from the table; returns a copy of it (caller frees step_id). */
static bool take_gate(struct pev *e, unsigned long id, struct egate *out)
{
	for (size_t i = 0; i < e->n_gates; i++) {
		if (e->gates[i].id != id)
			continue;
		*out = e->gates[i];
		e->gates[i] = e->gates[--e->n_gates];
		allow_answers(e, id, false);
		return true;
	}
	return false;
}

/* The new cap at the budget gate: the figure the operator gave, else half as much again. */
static double new_cap(struct pev *e, const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	double cap = budget_cap(e->budget), v = -1;

	if (cJSON_IsNumber(o))
		v = o->valuedouble;
	else
		jsonx_num(o, "budget_usd", &v);
	cJSON_Delete(o);
	if (v > 0)
		return v;
	return cap > 0 ? cap * 1.5 : 0;
}

static void run_continuation(struct pev *e, const struct egate *g, enum gate_decision d,
			     const char *how, const char *json)
{
	int i = g->step_id && e->plan ? plan_find(e->plan, g->step_id) : -1;

	switch (g->kind) {
	case GATE_PLAN:
	case GATE_REPLAN:
		planning_gate_answered(e, g->kind, d);
		break;
	case GATE_HIGH:
	case GATE_STEP:
		if (i >= 0 && e->st[i].gate_id == g->id) {
			e->st[i].gate_id = 0;
			sched_gate_answered(e, (size_t)i, d);
		}
		break;
	case GATE_SHELL:
		if (d == GATE_REJECT)
			engine_end(e, PEV_EXIT_ABORTED, "a shell command of step %s was rejected",
				   g->step_id ? g->step_id : "?");
		if (g->job)
			job_shell_reply(e, g->job, d, json, how);
		/* An edit asks again at once (job_confirm_shell): the step keeps waiting. */
		if (i >= 0 && e->st[i].status == FS_WAITING && e->st[i].gen == g->gen &&
		    e->phase != PH_ENDING && d != GATE_EDIT)
			sched_set_state(e, (size_t)i, FS_RUNNING, NULL, "its shell command was %s",
					d == GATE_SKIP ? "refused" : "answered");
		break;
	case GATE_MCP:
		if (d == GATE_REJECT)
			engine_end(e, PEV_EXIT_ABORTED, "an MCP tool call of step %s was rejected",
				   g->step_id ? g->step_id : "?");
		if (g->job)
			job_shell_reply(e, g->job, d == GATE_EDIT ? GATE_APPROVE : d, NULL, how);
		if (i >= 0 && e->st[i].status == FS_WAITING && e->st[i].gen == g->gen &&
		    e->phase != PH_ENDING)
			sched_set_state(e, (size_t)i, FS_RUNNING, NULL, "its MCP tool call was %s",
					d == GATE_SKIP ? "refused" : "answered");
		break;
	case GATE_ELICIT:
		/* Every answer goes back to the server (reject: cancel); the run goes on. */
		if (g->job)
			job_shell_reply(e, g->job, d, json, how);
		if (i >= 0 && e->st[i].status == FS_WAITING && e->st[i].gen == g->gen &&
		    e->phase != PH_ENDING)
			sched_set_state(e, (size_t)i, FS_RUNNING, NULL,
					"its MCP server's question was answered");
		break;
	case GATE_BUDGET:
		e->budget_gate_open = false;
		if (d == GATE_REJECT) {
			engine_end(e, PEV_EXIT_ABORTED, "the operator stopped the run at the budget gate");
			break;
		}
		/* Blocked calls try again; the check is armed at the new cap. */
		budget_set_cap(e->budget, new_cap(e, json));
		break;
	case GATE_REWIND:
		if (d == GATE_REJECT)
			engine_end(e, PEV_EXIT_ABORTED, "step %s was rejected at its rewind gate",
				   g->step_id ? g->step_id : "?");
		if (g->job)
			job_shell_reply(e, g->job, d, NULL, NULL);
		if (i >= 0 && e->st[i].status == FS_WAITING && e->st[i].gen == g->gen &&
		    e->phase != PH_ENDING)
			sched_set_state(e, (size_t)i, FS_RUNNING, NULL, "its rewind gate was answered");
		break;
	case GATE__COUNT:
		break;
	}
}

void gates_decide(struct pev *e, unsigned long id, enum gate_decision d, const char *by,
		  const char *reason, const char *json)
{
	gates_decide_how(e, id, d, by, reason, json, NULL);
}

void gates_decide_how(struct pev *e, unsigned long id, enum gate_decision d, const char *by,
		      const char *reason, const char *json, const char *how)
{
	struct egate g;
	double cap = 0;
	char *remember = NULL;

	if (!take_gate(e, id, &g))
		return;
	/* Skipping is not an answer to every gate. */
	if (d == GATE_SKIP && !gate_kind_can_skip(g.kind))
		d = GATE_APPROVE;
	if (g.kind == GATE_BUDGET && d == GATE_APPROVE)
		cap = new_cap(e, json);
	if (g.kind == GATE_SHELL && d == GATE_APPROVE && g.job && shellgate_wants_remember(json))
		remember = shellgate_command(e, g.job);
	if (g.kind == GATE_MCP && d == GATE_APPROVE && g.job && shellgate_wants_remember(json))
		remember = mcpcalls_gate_tool(e, g.job);
	publish_decision(e, &g, gate_decision_name(d), by, reason,
			 g.kind == GATE_SHELL && d == GATE_EDIT ? json : NULL, cap, remember);
	if (g.kind == GATE_BUDGET && d == GATE_APPROVE)
		bus_notice(e->bus, "info", NULL, "budget raised to $%.4f ($%.4f spent)", cap,
			   budget_spent(e->budget));
	run_continuation(e, &g, d, how ? how : shellgate_how(d, by), json);
	free(g.step_id);
	if (remember && g.kind == GATE_MCP)
		mcpcalls_remember(e, remember);
	else if (remember)
		shellgate_remember(e, remember);
	free(remember);
}

unsigned long gates_open(struct pev *e, enum gate_kind k, const char *step_id, unsigned gen,
			 struct job *job, cJSON *payload)
{
	struct egate *g;
	unsigned long id;
	cJSON *f;
	bool outside = k == GATE_SHELL && payload &&
		       cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(payload, "outside_sandbox"));

	if (!gates_enabled(e, k)) {
		cJSON_Delete(payload);
		return 0;
	}
	id = e->next_gate_id++;
	e->gates = xgrow(e->gates, &e->cap_gates, e->n_gates + 1, sizeof(*e->gates));
	g = &e->gates[e->n_gates++];
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->kind = k;
	g->step_id = xstrdup(step_id);
	g->gen = gen;
	g->job = job;
	if (e->gate_mode == GATE_MODE_OPERATOR)
		allow_answers(e, id, true);

	f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "gate_id", (double)id);
	cJSON_AddStringToObject(f, "gate", gate_kind_name(k));
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	else
		cJSON_AddNullToObject(f, "step_id");
	if (payload) {
		while (payload->child) {
			cJSON *item = cJSON_DetachItemViaPointer(payload, payload->child);
			cJSON_AddItemToObject(f, item->string, item);
		}
		cJSON_Delete(payload);
	}
	bus_publish(e->bus, EV_GATE_OPEN, f);

	if (e->gate_mode != GATE_MODE_OPERATOR && k == GATE_ELICIT) {
		/* Nobody to answer a server's question: declined, the step goes on. */
		gates_decide(e, id, GATE_SKIP, "policy",
			     e->gate_mode == GATE_MODE_YES
				 ? "--yes declines an MCP server's questions"
				 : "no terminal to ask the operator: the MCP server's question "
				   "was declined",
			     NULL);
	} else if (e->gate_mode == GATE_MODE_YES && k == GATE_REWIND) {
		/* A policy never overwrites someone else's change: it keeps theirs. */
		gates_decide(e, id, GATE_SKIP, "policy", NULL, NULL);
	} else if (e->gate_mode == GATE_MODE_YES && outside) {
		/* refused, not rejected: the step goes on, in the sandbox */
		gates_decide(e, id, GATE_SKIP, "policy",
			     "a command outside the sandbox needs an operator: --yes never approves "
			     "it",
			     NULL);
	} else if (e->gate_mode == GATE_MODE_YES && k != GATE_BUDGET) {
		gates_decide(e, id, GATE_APPROVE, "policy", NULL, NULL);
	} else if (e->gate_mode != GATE_MODE_OPERATOR) {
		char *why = k == GATE_BUDGET
				    ? xstrdup("the budget gate needs an operator: --yes never "
					      "raises the budget; resume with a higher --budget")
				    : xasprintf("the %s gate needs an operator: run in a terminal, "
						"pass --yes, or leave it out of --gate",
						gate_kind_name(k));
		gates_decide(e, id, GATE_REJECT, "policy", why, NULL);
		free(why);
	}
	return id;
}

void gates_withdraw(struct pev *e, unsigned long id, const char *reason)
{
	struct egate g;
	int i;

	if (!take_gate(e, id, &g))
		return;
	publish_decision(e, &g, "withdrawn", "engine", reason, NULL, 0, NULL);
	i = g.step_id && e->plan ? plan_find(e->plan, g.step_id) : -1;
	if (i >= 0 && e->st[i].gate_id == g.id)
		e->st[i].gate_id = 0;
	if ((g.kind == GATE_SHELL || g.kind == GATE_MCP || g.kind == GATE_REWIND ||
	     g.kind == GATE_ELICIT) &&
	    g.job)
		job_shell_reply(e, g.job, GATE_SKIP, NULL, "withdrawn");
	if (g.kind == GATE_BUDGET)
		e->budget_gate_open = false;
	free(g.step_id);
}

void gates_withdraw_all(struct pev *e, const char *reason)
{
	while (e->n_gates)
		gates_withdraw(e, e->gates[e->n_gates - 1].id, reason);
}
