/* shell_gate — what the shell gate shows (where the command runs, its time limit, why the
 * allow list did not let it through) and the commands the operator allowed for the rest
 * of the run: an exact command approved with "remember" skips the gate from then on.
 * They are not taken back on --resume: a journal never widens what a run may do (the
 * resumed run asks for them again and says how many). */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "tool.h"
#include "xalloc.h"

static bool run_allowed(const struct pev *e, const char *cmd)
{
	for (size_t i = 0; cmd && i < e->shell_run_allow.n; i++)
		if (!strcmp(e->shell_run_allow.v[i], cmd))
			return true;
	return false;
}

cJSON *shellgate_payload(struct pev *e, struct job *j)
{
	cJSON *p = NULL, *allow;

	pthread_mutex_lock(&e->pool_lock);
	/* "remember" covers the command in the sandbox, never outside it */
	if (!j->shell_ask.outside && run_allowed(e, j->shell_command))
		goto out;
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "command", j->shell_command);
	if (j->shell_edited_from) {
		/* The operator's edit, back at the gate: what the model had asked for. */
		cJSON_AddBoolToObject(p, "edited", true);
		cJSON_AddStringToObject(p, "edited_from", j->shell_edited_from);
	}
	cJSON_AddStringToObject(p, "cwd", j->shell_ask.cwd ? j->shell_ask.cwd : e->workspace);
	cJSON_AddNumberToObject(p, "timeout_s",
				j->shell_ask.timeout_s > 0  ? j->shell_ask.timeout_s
				: e->shell_timeout_s > 0 ? e->shell_timeout_s
							 : TOOL_SHELL_TIMEOUT_S);
	allow = cJSON_AddObjectToObject(p, "allow");
	cJSON_AddBoolToObject(allow, "matched", false);
	if (j->shell_ask.allow_prefix)
		cJSON_AddStringToObject(allow, "prefix", j->shell_ask.allow_prefix);
	if (j->shell_ask.allow_why)
		cJSON_AddStringToObject(allow, "why", j->shell_ask.allow_why);
	if (j->shell_ask.sandbox)
		cJSON_AddStringToObject(p, "sandbox", j->shell_ask.sandbox);
	if (j->shell_ask.outside) {
		cJSON_AddBoolToObject(p, "outside_sandbox", true);
		cJSON_AddStringToObject(p, "reason", j->shell_ask.reason ? j->shell_ask.reason : "");
	}
out:
	pthread_mutex_unlock(&e->pool_lock);
	return p;
}

bool shellgate_outside(struct pev *e, struct job *j)
{
	bool outside;

	pthread_mutex_lock(&e->pool_lock);
	outside = j->shell_ask.outside;
	pthread_mutex_unlock(&e->pool_lock);
	return outside;
}

bool shellgate_wants_remember(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	bool yes = false;

	if (cJSON_IsObject(o))
		jsonx_bool(o, "remember", &yes);
	cJSON_Delete(o);
	return yes;
}

char *shellgate_command(struct pev *e, struct job *j)
{
	char *cmd;

	pthread_mutex_lock(&e->pool_lock);
	cmd = xstrdup(j->shell_command);
	pthread_mutex_unlock(&e->pool_lock);
	return cmd;
}

const char *shellgate_how(enum gate_decision d, const char *by)
{
	bool policy = by && !strcmp(by, "policy");

	switch (d) {
	case GATE_APPROVE: return policy ? "policy" : "operator";
	case GATE_EDIT: return "edited";
	case GATE_SKIP: return "refused";
	case GATE_REJECT: return "rejected";
	}
	return NULL;
}

void shellgate_allow_for_run(struct pev *e, const char *cmd)
{
	if (cmd && *cmd && !run_allowed(e, cmd))
		strvec_push(&e->shell_run_allow, cmd);
}

void shellgate_remember(struct pev *e, const char *cmd)
{
	unsigned long *same;
	size_t n = 0;

	shellgate_allow_for_run(e, cmd);
	/* Other steps waiting at a gate for the same command need not ask either. */
	same = xcalloc(e->n_gates ? e->n_gates : 1, sizeof(*same));
	for (size_t i = 0; i < e->n_gates; i++) {
		char *c;

		if (e->gates[i].kind != GATE_SHELL || !e->gates[i].job)
			continue;
		c = shellgate_command(e, e->gates[i].job);
		if (c && !strcmp(c, cmd))
			same[n++] = e->gates[i].id;
		free(c);
	}
	for (size_t k = 0; k < n; k++) {
		/* gates_decide_how ignores a gate no longer open */
		gates_decide_how(e, same[k], GATE_APPROVE, "policy",
				 "the operator allowed this exact command for the rest of the run",
				 NULL, "allowed_for_run");
	}
	free(same);
}
