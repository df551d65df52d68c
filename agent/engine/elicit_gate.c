/* elicit_gate — an MCP server's question during a call (elicitation/create, form mode) as
 * a gate holding only the step whose call it is: the step's own job asks through the
 * shell gate's round trip (job_ask_and_wait) and only it waits. Accept sends the form's
 * content (checked against the server's schema), skip declines, reject cancels; --yes and
 * a run without a terminal decline (gates_open). The answer's content is not journaled:
 * the gate.decision says only what was decided. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "mcp_client.h"
#include "mcp_elicit.h"
#include "mcp_schema.h"
#include "xalloc.h"

#define MESSAGE_SHOWN 2000 /* of a server's message, the gate shows this much */

void elicitgate_open(struct pev *e, struct job *j)
{
	int i = e->plan ? plan_find(e->plan, j->step.id) : -1;
	cJSON *payload;

	pthread_mutex_lock(&e->pool_lock);
	payload = j->elicit_ask ? cJSON_Parse(j->elicit_ask) : NULL;
	pthread_mutex_unlock(&e->pool_lock);
	if (atomic_load(&j->cancel) || e->phase == PH_ENDING || e->phase == PH_ENDED ||
	    !gates_enabled(e, GATE_ELICIT) || !cJSON_IsObject(payload)) {
		cJSON_Delete(payload);
		job_shell_reply(e, j, GATE_SKIP, NULL, "declined");
		return;
	}
	/* Its clock stops while the operator answers. */
	if (i >= 0 && e->st[i].gen == j->gen)
		sched_set_state(e, (size_t)i, FS_WAITING, NULL, "waits at its MCP server's question");
	gates_open(e, GATE_ELICIT, j->step.id, j->gen, j, payload);
}

/* What the gate shows: the server, its message, its form (the schema itself: the cockpit
 * builds the form, with the defaults, from it). */
static char *ask_fields(const char *server, const char *message, const char *schema_json)
{
	cJSON *p = cJSON_CreateObject(), *schema = cJSON_Parse(schema_json);
	size_t n = strlen(message);
	char *msg, *text;

	if (n > MESSAGE_SHOWN) {
		n = MESSAGE_SHOWN;
		while (n > 0 && ((unsigned char)message[n] & 0xC0) == 0x80)
			n--;
	}
	msg = xstrndup(message, n);
	cJSON_AddStringToObject(p, "server", server);
	cJSON_AddStringToObject(p, "message", msg);
	cJSON_AddItemToObject(p, "schema", schema ? schema : cJSON_CreateObject());
	free(msg);
	text = cJSON_PrintUnformatted(p);
	cJSON_Delete(p);
	return text;
}

/* The content the operator sent, when it fits the server's schema (caller frees). */
static char *checked(struct pev *e, const char *server, const char *content,
                     const char *schema_json)
{
	cJSON *c = content ? cJSON_Parse(content) : NULL, *s = cJSON_Parse(schema_json);
	char *why = NULL, *out = NULL;

	if (cJSON_IsObject(c) && mcp_schema_check(s, c, &why))
		out = xstrdup(content);
	else
		bus_notice(e->bus, "warn", NULL,
		           "the answer to MCP server %s's question does not fit its form (%s); "
		           "it was declined",
		           server, why ? why : "not an object");
	free(why);
	cJSON_Delete(c);
	cJSON_Delete(s);
	return out;
}

enum mcp_elicit_action elicitgate_ask(void *ctx, const char *server, const char *message,
                                      const char *schema_json, char **content_json)
{
	struct job *j = ctx;
	struct pev *e = j->e;
	struct mcp_elicit_form form;
	enum gate_decision d;
	char *err = NULL, *answer;
	bool answered;

	if (!gates_enabled(e, GATE_ELICIT))
		return MCP_ELICIT_DECLINE;
	/* A form the cockpit cannot show is declined, and the operator told why. */
	if (!mcp_elicit_parse(schema_json, &form, &err)) {
		bus_notice(e->bus, "warn", j->step.id,
		           "MCP server %s asked a question pevtui cannot show as a form (%s); "
		           "it was declined",
		           server, err);
		free(err);
		return MCP_ELICIT_DECLINE;
	}
	mcp_elicit_release(&form);
	pthread_mutex_lock(&e->pool_lock);
	free(j->elicit_ask);
	j->elicit_ask = ask_fields(server, message, schema_json);
	free(j->elicit_answer);
	j->elicit_answer = NULL;
	j->ask_kind = GATE_ELICIT;
	pthread_mutex_unlock(&e->pool_lock);
	d = job_ask_and_wait(j); /* returns holding pool_lock */
	answered = j->shell_answered;
	answer = j->elicit_answer;
	j->elicit_answer = NULL;
	j->ask_kind = GATE_SHELL;
	free(j->elicit_ask);
	j->elicit_ask = NULL;
	pthread_mutex_unlock(&e->pool_lock);
	if (!answered || d == GATE_REJECT) {
		free(answer);
		return MCP_ELICIT_CANCEL; /* rejected, or the step was cancelled */
	}
	if (d != GATE_APPROVE) {
		free(answer);
		return MCP_ELICIT_DECLINE;
	}
	*content_json = checked(e, server, answer, schema_json);
	free(answer);
	return *content_json ? MCP_ELICIT_ACCEPT : MCP_ELICIT_DECLINE;
}
