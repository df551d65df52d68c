/* events — event types, building events as JSON lines, parsing them back. */
#include "config.h"

#include "events.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "xalloc.h"

static const char *const type_names[EV__COUNT] = {
	[EV_RUN_START] = "run.start",
	[EV_PLAN_PROPOSED] = "plan.proposed",
	[EV_PLAN_ADOPTED] = "plan.adopted",
	[EV_GATE_OPEN] = "gate.open",
	[EV_GATE_DECISION] = "gate.decision",
	[EV_STEP_START] = "step.start",
	[EV_LLM_CALL] = "llm.call",
	[EV_LLM_DELTA] = "llm.delta",
	[EV_LLM_RETRY] = "llm.retry",
	[EV_TOOL_CALL] = "tool.call",
	[EV_TOOL_RESULT] = "tool.result",
	[EV_STEP_OUTPUT] = "step.output",
	[EV_VERIFY_VERDICT] = "verify.verdict",
	[EV_STEP_END] = "step.end",
	[EV_STEP_EDIT] = "step.edit",
	[EV_NOTICE] = "notice",
	[EV_RUN_FINAL] = "run.final",
	[EV_RUN_END] = "run.end",
	[EV_STEP_STATE] = "step.state",
	[EV_OPERATOR_COMMAND] = "operator.command",
	[EV_RUN_REOPEN] = "run.reopen",
	[EV_RUN_RESUME] = "run.resume",
};

const char *event_type_name(enum event_type t)
{
	return (t >= 0 && t < EV__COUNT) ? type_names[t] : "unknown";
}

int event_type_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < EV__COUNT; i++)
		if (strcmp(type_names[i], name) == 0)
			return i;
	return -1;
}

bool event_type_is_ephemeral(enum event_type t)
{
	return t == EV_LLM_DELTA;
}

void event_timestamp(char *buf, unsigned long bufsize)
{
	struct timespec ts;
	struct tm tm;
	char base[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, bufsize, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

struct event *event_build(enum event_type t, unsigned long seq, cJSON *fields)
{
	struct event *ev = xcalloc(1, sizeof(*ev));
	cJSON *obj = cJSON_CreateObject();
	char ts[40];
	const char *sid;

	if (!obj)
		fatal("out of memory building an event");
	event_timestamp(ts, sizeof(ts));
	cJSON_AddNumberToObject(obj, "seq", (double)seq);
	cJSON_AddStringToObject(obj, "ts", ts);
	cJSON_AddStringToObject(obj, "type", event_type_name(t));
	if (fields && !cJSON_IsObject(fields))
		fatal("event_build: fields of %s are not an object", event_type_name(t));
	if (fields) {
		/* Move the fields over, skipping any that would shadow the header. */
		while (fields->child) {
			cJSON *item = cJSON_DetachItemViaPointer(fields, fields->child);
			if (!strcmp(item->string, "seq") || !strcmp(item->string, "ts") ||
			    !strcmp(item->string, "type")) {
				cJSON_Delete(item);
				continue;
			}
			cJSON_AddItemToObject(obj, item->string, item);
		}
		cJSON_Delete(fields);
	}
	ev->type = t;
	ev->seq = seq;
	sid = jsonx_str(obj, "step_id");
	ev->step_id = xstrdup(sid);
	ev->json = jsonx_print(obj);
	cJSON_Delete(obj);
	return ev;
}

struct event *event_from_line(const char *line, char **err)
{
	/* Nothing may follow the object: two events glued together are not one event. */
	cJSON *obj = cJSON_ParseWithOpts(line, NULL, 1);
	struct event *ev;
	const char *type;
	double seq = 0;
	int t;

	if (!obj || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		*err = xstrdup("not a JSON object");
		return NULL;
	}
	type = jsonx_str(obj, "type");
	t = event_type_from_name(type);
	if (t < 0) {
		*err = xasprintf("unknown event type \"%s\"", type ? type : "(missing)");
		cJSON_Delete(obj);
		return NULL;
	}
	/* A whole number that fits: the bound is checked before the cast. */
	if (!jsonx_num(obj, "seq", &seq) || !(seq >= 0 && seq <= 9007199254740992.0) ||
	    seq != (double)(unsigned long)seq) {
		*err = xstrdup("event without a valid \"seq\"");
		cJSON_Delete(obj);
		return NULL;
	}
	ev = xcalloc(1, sizeof(*ev));
	ev->type = (enum event_type)t;
	ev->seq = (unsigned long)seq;
	ev->step_id = xstrdup(jsonx_str(obj, "step_id"));
	{
		/* The line is already one compact object: keep it rather than print it again
		 * (loading a long journal is dominated by JSON work). */
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		ev->json = xstrndup(line, n);
	}
	cJSON_Delete(obj);
	return ev;
}

struct event *event_dup(const struct event *ev)
{
	struct event *d = xcalloc(1, sizeof(*d));

	d->type = ev->type;
	d->seq = ev->seq;
	d->step_id = xstrdup(ev->step_id);
	d->json = xstrdup(ev->json);
	return d;
}

void event_free(struct event *ev)
{
	if (!ev)
		return;
	free(ev->step_id);
	free(ev->json);
	free(ev);
}
