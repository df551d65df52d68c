/* mcp_calls — the operator's MCP servers in a run: started beside the planner, their tools
 * offered to the executor as SERVER__tool, each call behind the mcp gate unless the tool
 * is on its server's allow list (annotations such as readOnlyHint are shown at the gate,
 * never trusted to skip it), every server ended with the run. */
#include "config.h"

#include "engine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "jsonx.h"
#include "mcp_hub.h"
#include "tool.h"
#include "xalloc.h"

#define DESC_SHOWN 500 /* of a tool's description, the gate shows this much */
/* The planner waits this long for servers still starting, then plans with what it has:
 * a slow server's start-up overlaps the planner's call instead of delaying it. */
#define MCP_PLANNER_WAIT_MS 1500

/*
 * Whether a server's news may be journaled now, and the start outcomes held while it may
 * not, are under the engine's `mcp_told_lock`, held while a notice is published: a starter
 * thread's notice is either in the journal before run.end or not at all
 * (mcpcalls_run_ended).
 */

static void on_server(void *ctx, const char *server, bool ok, bool stopped, size_t n_tools,
                      const char *protocol, const char *err)
{
	struct pev *e = ctx;
	cJSON *f;
	char *msg;

	f = cJSON_CreateObject();
	if (stopped)
		msg = xasprintf("MCP server %s stopped with the run", server);
	else if (ok)
		msg = xasprintf("MCP server %s is up: %zu tool%s (protocol %s)", server, n_tools,
		                n_tools == 1 ? "" : "s", protocol ? protocol : "?");
	else
		msg = xasprintf("%s; its tools are not offered in this run", err ? err : server);
	cJSON_AddStringToObject(f, "level", ok ? "info" : "error");
	cJSON_AddStringToObject(f, "kind", "mcp_server");
	cJSON_AddStringToObject(f, "server", server);
	cJSON_AddStringToObject(f, "state", stopped ? "stopped" : ok ? "started" : "failed");
	if (ok && !stopped) {
		cJSON_AddNumberToObject(f, "tools", (double)n_tools);
		if (protocol)
			cJSON_AddStringToObject(f, "protocol", protocol);
	}
	cJSON_AddStringToObject(f, "message", msg);
	free(msg);
	/* Nothing is journaled after run.end. A cockpit keeps the ended run open, and its
	 * servers for a re-run: a start that ends meanwhile is told if the run reopens;
	 * servers stopping after the end stop without a notice. */
	pthread_mutex_lock(&e->mcp_told_lock);
	if (!e->mcp_ended) {
		bus_publish(e->bus, EV_NOTICE, f);
	} else if (!stopped) {
		if (!e->mcp_held)
			e->mcp_held = cJSON_CreateArray();
		cJSON_AddItemToArray(e->mcp_held, f);
	} else {
		cJSON_Delete(f);
	}
	pthread_mutex_unlock(&e->mcp_told_lock);
}

void mcpcalls_start(struct pev *e)
{
	mcp_hub_start(e->mcp, on_server, e);
}

void mcpcalls_stop(struct pev *e)
{
	mcp_hub_stop(e->mcp);
	/* Every starter is back: what the run never reopened for is dropped. */
	pthread_mutex_lock(&e->mcp_told_lock);
	cJSON_Delete(e->mcp_held);
	e->mcp_held = NULL;
	pthread_mutex_unlock(&e->mcp_told_lock);
}

void mcpcalls_run_ended(struct pev *e)
{
	pthread_mutex_lock(&e->mcp_told_lock);
	e->mcp_ended = true;
	pthread_mutex_unlock(&e->mcp_told_lock);
}

void mcpcalls_run_reopened(struct pev *e)
{
	cJSON *f;

	pthread_mutex_lock(&e->mcp_told_lock);
	e->mcp_ended = false;
	while (e->mcp_held && (f = cJSON_DetachItemFromArray(e->mcp_held, 0)))
		bus_publish(e->bus, EV_NOTICE, f);
	cJSON_Delete(e->mcp_held);
	e->mcp_held = NULL;
	pthread_mutex_unlock(&e->mcp_told_lock);
}

char *mcpcalls_describe(struct pev *e)
{
	char *list;

	if (!e->mcp)
		return NULL;
	list = mcp_hub_describe(e->mcp, MCP_PLANNER_WAIT_MS);
	if (!*list) {
		free(list);
		return NULL;
	}
	return list;
}

bool mcpcalls_owns(struct pev *e, const char *name)
{
	char *server = NULL, *tool = NULL;
	bool yes = e->mcp && mcp_hub_lookup(e->mcp, name, &server, &tool, NULL, NULL);

	free(server);
	free(tool);
	return yes;
}

void mcpcalls_annotate(struct pev *e, const char *name, cJSON *f)
{
	char *server = NULL, *tool = NULL;

	if (e->mcp && mcp_hub_lookup(e->mcp, name, &server, &tool, NULL, NULL)) {
		cJSON_AddStringToObject(f, "server", server);
		cJSON_AddStringToObject(f, "mcp_tool", tool);
	}
	free(server);
	free(tool);
}

/* The step's own job asks the gate and waits for its answer (only it waits), as the
 * shell gate does. true: approved. */
static bool confirm(struct job *j, cJSON *payload)
{
	struct pev *e = j->e;
	enum gate_decision d;

	pthread_mutex_lock(&e->pool_lock);
	free(j->mcp_ask);
	j->mcp_ask = cJSON_PrintUnformatted(payload);
	j->ask_kind = GATE_MCP;
	pthread_mutex_unlock(&e->pool_lock);
	d = job_ask_and_wait(j);
	if (!j->shell_answered)
		j->shell_how = "cancelled";
	j->ask_kind = GATE_SHELL;
	pthread_mutex_unlock(&e->pool_lock);
	return d == GATE_APPROVE && !atomic_load(&j->cancel);
}

static bool run_allowed(struct pev *e, const char *tool)
{
	bool yes = false;

	if (!tool)
		return false;
	pthread_mutex_lock(&e->pool_lock);
	for (size_t i = 0; i < e->mcp_run_allow.n && !yes; i++)
		yes = !strcmp(e->mcp_run_allow.v[i], tool);
	pthread_mutex_unlock(&e->pool_lock);
	return yes;
}

void mcpcalls_ask(struct pev *e, struct job *j)
{
	int i = e->plan ? plan_find(e->plan, j->step.id) : -1;
	cJSON *payload;

	if (atomic_load(&j->cancel) || e->phase == PH_ENDING || e->phase == PH_ENDED) {
		job_shell_reply(e, j, GATE_REJECT, NULL, "cancelled");
		return;
	}
	if (!gates_enabled(e, GATE_MCP)) {
		job_shell_reply(e, j, GATE_APPROVE, NULL, "gate_off");
		return;
	}
	pthread_mutex_lock(&e->pool_lock);
	payload = cJSON_Parse(j->mcp_ask ? j->mcp_ask : "{}");
	pthread_mutex_unlock(&e->pool_lock);
	/* Allowed for the run after the step asked (the engine takes the operator's A before
	 * this ask): no gate. */
	if (run_allowed(e,
	                cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(payload, "tool")))) {
		cJSON_Delete(payload);
		job_shell_reply(e, j, GATE_APPROVE, NULL, "allowed_for_run");
		return;
	}
	if (!payload)
		payload = cJSON_CreateObject();
	cJSON_AddItemToObject(payload, "step", plan_step_to_json(&j->step));
	if (i >= 0 && e->st[i].gen == j->gen)
		sched_set_state(e, (size_t)i, FS_WAITING, NULL, "waits at its mcp gate");
	gates_open(e, GATE_MCP, j->step.id, j->gen, j, payload);
}

static long since_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)(t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static const char *status_name(enum mcp_status st)
{
	switch (st) {
	case MCP_OK: return "ok";
	case MCP_TOOL_ERROR: return "tool_error";
	case MCP_FAILED: return "failed";
	case MCP_CANCELLED: return "cancelled";
	}
	return "failed";
}

char *mcpcalls_gate_tool(struct pev *e, struct job *j)
{
	cJSON *ask;
	char *tool;

	pthread_mutex_lock(&e->pool_lock);
	ask = j->mcp_ask ? cJSON_Parse(j->mcp_ask) : NULL;
	pthread_mutex_unlock(&e->pool_lock);
	tool = xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ask, "tool")));
	cJSON_Delete(ask);
	return tool;
}

void mcpcalls_remember(struct pev *e, const char *tool)
{
	unsigned long *same;
	size_t n = 0;

	if (!tool || !*tool)
		return;
	if (!run_allowed(e, tool)) {
		pthread_mutex_lock(&e->pool_lock);
		strvec_push(&e->mcp_run_allow, tool);
		pthread_mutex_unlock(&e->pool_lock);
	}
	/* Other steps waiting to call the same tool need not ask either. */
	same = xcalloc(e->n_gates ? e->n_gates : 1, sizeof(*same));
	for (size_t i = 0; i < e->n_gates; i++) {
		char *t;
		if (e->gates[i].kind != GATE_MCP || !e->gates[i].job)
			continue;
		t = mcpcalls_gate_tool(e, e->gates[i].job);
		if (t && !strcmp(t, tool))
			same[n++] = e->gates[i].id;
		free(t);
	}
	for (size_t k = 0; k < n; k++)
		gates_decide_how(e, same[k], GATE_APPROVE, "policy",
		                 "the operator allowed this tool for the rest of the run", NULL,
		                 "allowed_for_run");
	free(same);
}

/* tool.result's `structured`: the result's structuredContent, whole, as the server sent it
 * (the model reads it in the text unless a text block said the same); one larger than a
 * tool output may be is only measured. */
static void add_structured(cJSON *f, const char *structured)
{
	cJSON *sc;

	if (!structured)
		return;
	if (strlen(structured) > TOOL_MAX_OUTPUT) {
		cJSON_AddNumberToObject(f, "structured_bytes", (double)strlen(structured));
		return;
	}
	sc = jsonx_parse_for_event(structured);
	if (sc)
		cJSON_AddItemToObject(f, "structured", sc);
}

bool mcpcalls_run(struct job *j, const char *name, const cJSON *input, struct strbuf *out, cJSON *f)
{
	struct pev *e = j->e;
	char *server = NULL, *tool = NULL, *ann = NULL, *desc = NULL, *args, *structured = NULL;
	struct mcp_asker asker = {.fn = elicitgate_ask, .ctx = j};
	const char *pattern = NULL, *how;
	struct timespec t0;
	enum mcp_status st;

	if (!mcp_hub_lookup(e->mcp, name, &server, &tool, &ann, &desc)) {
		strbuf_addf(out, "unknown tool \"%s\"", name);
		return false;
	}
	cJSON_AddStringToObject(f, "server", server);
	cJSON_AddStringToObject(f, "mcp_tool", tool);
	if (mcp_hub_allowed(e->mcp, server, tool, &pattern)) {
		how = "allow_list";
		cJSON_AddStringToObject(f, "allowed_by", pattern);
	} else if (run_allowed(e, name)) {
		how = "allowed_for_run";
	} else {
		cJSON *p = cJSON_CreateObject(), *a = ann ? cJSON_Parse(ann) : NULL;
		bool ok;

		cJSON_AddStringToObject(p, "server", server);
		cJSON_AddStringToObject(p, "tool", name);
		cJSON_AddStringToObject(p, "mcp_tool", tool);
		cJSON_AddItemToObject(p, "arguments", cJSON_Duplicate(input, true));
		if (a)
			cJSON_AddItemToObject(p, "annotations", a);
		if (desc) {
			size_t n = strlen(desc);
			if (n > DESC_SHOWN) {
				n = DESC_SHOWN;
				while (n > 0 && ((unsigned char)desc[n] & 0xC0) == 0x80)
					n--;
				desc[n] = '\0';
			}
			cJSON_AddStringToObject(p, "description", desc);
		}
		ok = confirm(j, p);
		cJSON_Delete(p);
		pthread_mutex_lock(&e->pool_lock);
		how = j->shell_how ? j->shell_how : ok ? "operator" : "refused";
		pthread_mutex_unlock(&e->pool_lock);
		if (!ok) {
			cJSON_AddStringToObject(f, "approval", how);
			cJSON_AddBoolToObject(f, "ran", false);
			if (!strcmp(how, "refused"))
				strbuf_addf(out,
				            "the operator refused this call of %s; do without "
				            "it or try another way",
				            name);
			else
				strbuf_addf(out, "the call of %s did not run (%s)", name, how);
			free(server);
			free(tool);
			free(ann);
			free(desc);
			return false;
		}
	}
	cJSON_AddStringToObject(f, "approval", how);
	cJSON_AddBoolToObject(f, "ran", true);
	args = cJSON_PrintUnformatted(input);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	st = mcp_hub_call(e->mcp, server, tool, args, &j->cancel, e->ws_fd, TOOL_MAX_OUTPUT, out,
	                  &structured, &asker);
	cJSON_AddNumberToObject(f, "duration_ms", (double)since_ms(&t0));
	cJSON_AddStringToObject(f, "mcp_status", status_name(st));
	add_structured(f, structured);
	free(structured);
	free(args);
	free(server);
	free(tool);
	free(ann);
	free(desc);
	return st == MCP_OK;
}
