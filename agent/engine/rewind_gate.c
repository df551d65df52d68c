/* rewind_gate — the rewind gate: before an attempt, a file its step's earlier attempts
 * changed (or a step a replan removed changed) was changed by someone else since — another
 * step, the operator in an editor. Nothing is overwritten silently: the step's own job
 * asks, as at the shell gate, and only it waits; restore, keep theirs, or reject. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "xalloc.h"

void rewindgate_reply(struct pev *e, struct job *j, enum gate_decision d)
{
	pthread_mutex_lock(&e->pool_lock);
	if (j->rewind_waiting && !j->rewind_answered) {
		j->rewind_answered = true;
		j->rewind_decision = d;
		pthread_cond_broadcast(&e->pool_cond);
	}
	pthread_mutex_unlock(&e->pool_lock);
}

void rewindgate_open(struct pev *e, struct job *j, const char *fields_json)
{
	int i = e->plan ? plan_find(e->plan, j->step.id) : -1;
	cJSON *payload = fields_json ? cJSON_Parse(fields_json) : NULL;

	if (atomic_load(&j->cancel) || e->phase == PH_ENDING || e->phase == PH_ENDED ||
	    !gates_enabled(e, GATE_REWIND) || !cJSON_IsObject(payload)) {
		cJSON_Delete(payload);
		rewindgate_reply(e, j, GATE_SKIP);
		return;
	}
	/* Its clock stops while the operator compares. */
	if (i >= 0 && e->st[i].gen == j->gen)
		sched_set_state(e, (size_t)i, FS_WAITING, NULL, "waits at its rewind gate");
	gates_open(e, GATE_REWIND, j->step.id, j->gen, j, payload);
}

enum gate_decision rewindgate_ask(struct job *j, char *fields_json)
{
	struct pev *e = j->e;
	struct msg *m;
	enum gate_decision d;

	if (!gates_enabled(e, GATE_REWIND)) {
		free(fields_json);
		return GATE_SKIP;
	}
	pthread_mutex_lock(&e->pool_lock);
	j->rewind_waiting = true;
	j->rewind_answered = false;
	pthread_mutex_unlock(&e->pool_lock);
	m = xcalloc(1, sizeof(*m));
	m->kind = MSG_REWIND_ASK;
	m->job = j;
	m->json = fields_json;
	engine_post(e, m);

	pthread_mutex_lock(&e->pool_lock);
	while (!j->rewind_answered && !atomic_load(&j->cancel))
		pthread_cond_wait(&e->pool_cond, &e->pool_lock);
	j->rewind_waiting = false;
	d = j->rewind_answered ? j->rewind_decision : GATE_SKIP;
	pthread_mutex_unlock(&e->pool_lock);
	return d;
}
