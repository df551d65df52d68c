/* rewind_gate — the rewind gate: before an attempt, a file its step's earlier attempts
 * changed (or a step a replan removed changed) was changed by someone else since — another
 * step, the operator in an editor. Nothing is overwritten silently: the step's own job
 * asks through the shell gate's round trip (job_ask_and_wait), and only it waits;
 * restore, keep theirs, or reject. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>

#include <cjson/cJSON.h>

void rewindgate_open(struct pev *e, struct job *j)
{
	int i = e->plan ? plan_find(e->plan, j->step.id) : -1;
	cJSON *payload;

	pthread_mutex_lock(&e->pool_lock);
	payload = j->rewind_ask ? cJSON_Parse(j->rewind_ask) : NULL;
	pthread_mutex_unlock(&e->pool_lock);
	if (atomic_load(&j->cancel) || e->phase == PH_ENDING || e->phase == PH_ENDED ||
	    !gates_enabled(e, GATE_REWIND) || !cJSON_IsObject(payload)) {
		cJSON_Delete(payload);
		job_shell_reply(e, j, GATE_SKIP, NULL, NULL);
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
	enum gate_decision d;

	if (!gates_enabled(e, GATE_REWIND)) {
		free(fields_json);
		return GATE_SKIP;
	}
	pthread_mutex_lock(&e->pool_lock);
	j->rewind_ask = fields_json;
	j->ask_kind = GATE_REWIND;
	pthread_mutex_unlock(&e->pool_lock);
	d = job_ask_and_wait(j);
	if (!j->shell_answered)
		d = GATE_SKIP; /* cancelled: nothing is overwritten */
	j->ask_kind = GATE_SHELL;
	free(j->rewind_ask);
	j->rewind_ask = NULL;
	pthread_mutex_unlock(&e->pool_lock);
	return d;
}
