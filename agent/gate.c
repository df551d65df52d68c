/* gate — approval gates as requests the engine waits on until answered. */
#include "config.h"

#include "gate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "strbuf.h"
#include "xalloc.h"

static const char *const kind_names[GATE__COUNT] = {
	[GATE_PLAN] = "plan",     [GATE_HIGH] = "high",     [GATE_REPLAN] = "replan",
	[GATE_SHELL] = "shell",   [GATE_BUDGET] = "budget", [GATE_STEP] = "step",
};

static const char *const decision_names[] = {
	[GATE_APPROVE] = "approve", [GATE_REJECT] = "reject",
	[GATE_SKIP] = "skip",       [GATE_EDIT] = "edit",
};

/* One open gate; lives on the asking thread's stack while it waits. */
struct pending {
	unsigned long id;
	bool answered;
	enum gate_decision decision;
	char *edited;
	struct pending *next;
};

struct gatekeeper {
	struct bus *bus;
	unsigned mask;
	enum gate_mode mode;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pending *open;
	unsigned long next_id;
	bool cancelled;
};

const char *gate_kind_name(enum gate_kind k)
{
	return (k >= 0 && k < GATE__COUNT) ? kind_names[k] : "unknown";
}

int gate_kind_from_name(const char *s)
{
	for (int i = 0; s && i < GATE__COUNT; i++)
		if (!strcmp(s, kind_names[i]))
			return i;
	return -1;
}

const char *gate_decision_name(enum gate_decision d)
{
	return (d >= GATE_APPROVE && d <= GATE_EDIT) ? decision_names[d] : "unknown";
}

int gate_decision_from_name(const char *s)
{
	for (int i = GATE_APPROVE; s && i <= GATE_EDIT; i++)
		if (!strcmp(s, decision_names[i]))
			return i;
	return -1;
}

bool gate_parse_list(const char *list, unsigned *mask, char **err)
{
	char *copy = xstrdup(list ? list : ""), *save = NULL, *tok;
	unsigned m = 0;
	bool none = false, ok = true;

	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int k;

		if (!strcmp(tok, "none")) {
			none = true;
			continue;
		}
		k = gate_kind_from_name(tok);
		if (k < 0) {
			*err = xasprintf("unknown gate \"%s\": use a comma list of plan, high, "
					 "replan, shell, budget, step, or none",
					 tok);
			ok = false;
			break;
		}
		m |= GATE_MASK(k);
	}
	if (ok && none && m) {
		*err = xstrdup("gate list mixes \"none\" with other gates");
		ok = false;
	}
	free(copy);
	if (ok)
		*mask = m;
	return ok;
}

struct gatekeeper *gatekeeper_new(struct bus *bus, unsigned mask, enum gate_mode mode)
{
	struct gatekeeper *g = xcalloc(1, sizeof(*g));

	g->bus = bus;
	g->mask = mask;
	g->mode = mode;
	g->next_id = 1;
	if (pthread_mutex_init(&g->lock, NULL) || pthread_cond_init(&g->cond, NULL))
		fatal("cannot initialise gate lock");
	return g;
}

void gatekeeper_free(struct gatekeeper *g)
{
	if (!g)
		return;
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

bool gatekeeper_enabled(const struct gatekeeper *g, enum gate_kind k)
{
	return (g->mask & GATE_MASK(k)) != 0;
}

static void publish_decision(struct gatekeeper *g, unsigned long id, enum gate_kind k,
			     const char *step_id, enum gate_decision d, const char *by,
			     const char *reason, const char *edited)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddNumberToObject(f, "gate_id", (double)id);
	cJSON_AddStringToObject(f, "gate", gate_kind_name(k));
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	else
		cJSON_AddNullToObject(f, "step_id");
	cJSON_AddStringToObject(f, "decision", gate_decision_name(d));
	cJSON_AddStringToObject(f, "by", by);
	if (reason)
		cJSON_AddStringToObject(f, "reason", reason);
	if (edited) {
		cJSON *e = cJSON_Parse(edited);
		if (e)
			cJSON_AddItemToObject(f, "edited", e);
	}
	bus_publish(g->bus, EV_GATE_DECISION, f);
}

enum gate_decision gatekeeper_ask(struct gatekeeper *g, enum gate_kind k, const char *step_id,
				  cJSON *payload, char **edited)
{
	struct pending me = {0};
	struct pending **pp;
	cJSON *f;

	if (edited)
		*edited = NULL;
	if (!gatekeeper_enabled(g, k)) {
		cJSON_Delete(payload);
		return GATE_APPROVE;
	}

	pthread_mutex_lock(&g->lock);
	me.id = g->next_id++;
	if (g->mode == GATE_MODE_OPERATOR && !g->cancelled) {
		me.next = g->open;
		g->open = &me;
	}
	pthread_mutex_unlock(&g->lock);

	/* Published outside the gate lock: subscribers may answer from their own thread. */
	f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "gate_id", (double)me.id);
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
	bus_publish(g->bus, EV_GATE_OPEN, f);

	if (g->mode == GATE_MODE_YES) {
		publish_decision(g, me.id, k, step_id, GATE_APPROVE, "policy", NULL, NULL);
		return GATE_APPROVE;
	}
	if (g->mode == GATE_MODE_NONE) {
		char *why = xasprintf("the %s gate needs an operator: run in a terminal, pass "
				      "--yes, or leave it out of --gate",
				      gate_kind_name(k));
		publish_decision(g, me.id, k, step_id, GATE_REJECT, "policy", why, NULL);
		free(why);
		return GATE_REJECT;
	}

	pthread_mutex_lock(&g->lock);
	while (!me.answered && !g->cancelled)
		pthread_cond_wait(&g->cond, &g->lock);
	for (pp = &g->open; *pp; pp = &(*pp)->next) {
		if (*pp == &me) {
			*pp = me.next;
			break;
		}
	}
	if (!me.answered) {
		me.decision = GATE_REJECT;
		me.answered = true;
		pthread_mutex_unlock(&g->lock);
		publish_decision(g, me.id, k, step_id, GATE_REJECT, "operator", "run aborted",
				 NULL);
		return GATE_REJECT;
	}
	pthread_mutex_unlock(&g->lock);

	publish_decision(g, me.id, k, step_id, me.decision, "operator", NULL,
			 me.decision == GATE_EDIT ? me.edited : NULL);
	if (me.decision == GATE_EDIT && edited)
		*edited = me.edited;
	else
		free(me.edited);
	return me.decision;
}

bool gatekeeper_answer(struct gatekeeper *g, unsigned long gate_id, enum gate_decision d,
		       const char *edited_json)
{
	bool found = false;

	pthread_mutex_lock(&g->lock);
	for (struct pending *p = g->open; p; p = p->next) {
		if (p->id == gate_id && !p->answered) {
			p->answered = true;
			p->decision = d;
			p->edited = (d == GATE_EDIT) ? xstrdup(edited_json) : NULL;
			found = true;
			break;
		}
	}
	if (found)
		pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	return found;
}

void gatekeeper_cancel_all(struct gatekeeper *g)
{
	pthread_mutex_lock(&g->lock);
	g->cancelled = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void gatekeeper_set_next_id(struct gatekeeper *g, unsigned long next_id)
{
	pthread_mutex_lock(&g->lock);
	if (next_id > g->next_id)
		g->next_id = next_id;
	pthread_mutex_unlock(&g->lock);
}

int gatekeeper_pending(struct gatekeeper *g)
{
	int n = 0;

	pthread_mutex_lock(&g->lock);
	for (struct pending *p = g->open; p; p = p->next)
		if (!p->answered)
			n++;
	pthread_mutex_unlock(&g->lock);
	return n;
}
