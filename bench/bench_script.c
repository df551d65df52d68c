/* bench_script — the scripted 50-step run (bench_script.h). */
#include "config.h"

#include "bench_script.h"

#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

static char *json_text(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o), *t = xstrdup(s);

	cJSON_free(s);
	cJSON_Delete(o);
	return t;
}

static cJSON *head(const char *object)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "id", "chatcmpl-bench");
	cJSON_AddStringToObject(c, "object", object);
	cJSON_AddStringToObject(c, "model", BENCH_MODEL);
	return c;
}

static void add_usage(cJSON *c)
{
	cJSON *u = cJSON_AddObjectToObject(c, "usage");

	cJSON_AddNumberToObject(u, "prompt_tokens", 400);
	cJSON_AddNumberToObject(u, "completion_tokens", 120);
	cJSON_AddNumberToObject(u, "total_tokens", 520);
}

/* The text, or one call of `tool` with `args`, into a delta or a message. */
static void add_content(cJSON *msg, const char *text, const char *tool, const char *args)
{
	cJSON_AddStringToObject(msg, "role", "assistant");
	if (text) {
		cJSON_AddStringToObject(msg, "content", text);
	} else {
		cJSON *calls = cJSON_AddArrayToObject(msg, "tool_calls");
		cJSON *tc = cJSON_CreateObject(), *fn;

		cJSON_AddNullToObject(msg, "content");
		cJSON_AddNumberToObject(tc, "index", 0);
		cJSON_AddStringToObject(tc, "id", "call_bench");
		cJSON_AddStringToObject(tc, "type", "function");
		fn = cJSON_AddObjectToObject(tc, "function");
		cJSON_AddStringToObject(fn, "name", tool);
		cJSON_AddStringToObject(fn, "arguments", args);
		cJSON_AddItemToArray(calls, tc);
	}
}

static void add_data(struct strbuf *sb, cJSON *c)
{
	char *s = json_text(c);

	strbuf_addf(sb, "data: %s\n\n", s);
	free(s);
}

/* One delta chunk (text, or one tool call), the finish chunk, the usage chunk, [DONE]. */
static char *sse_reply(const char *text, const char *tool, const char *args)
{
	struct strbuf sb;
	cJSON *c = head("chat.completion.chunk"), *choices = cJSON_AddArrayToObject(c, "choices");
	cJSON *ch = cJSON_CreateObject();

	strbuf_init(&sb);
	cJSON_AddNumberToObject(ch, "index", 0);
	add_content(cJSON_AddObjectToObject(ch, "delta"), text, tool, args);
	cJSON_AddNullToObject(ch, "finish_reason");
	cJSON_AddItemToArray(choices, ch);
	add_data(&sb, c);

	c = head("chat.completion.chunk");
	choices = cJSON_AddArrayToObject(c, "choices");
	ch = cJSON_CreateObject();
	cJSON_AddNumberToObject(ch, "index", 0);
	cJSON_AddObjectToObject(ch, "delta");
	cJSON_AddStringToObject(ch, "finish_reason", text ? "stop" : "tool_calls");
	cJSON_AddItemToArray(choices, ch);
	add_data(&sb, c);

	c = head("chat.completion.chunk");
	cJSON_AddArrayToObject(c, "choices");
	add_usage(c);
	add_data(&sb, c);
	strbuf_adds(&sb, "data: [DONE]\n\n");
	return strbuf_detach(&sb);
}

/* The same answer as one chat.completion body, for a client that does not stream. */
static char *plain_reply(const char *text, const char *tool, const char *args)
{
	cJSON *c = head("chat.completion"), *choices = cJSON_AddArrayToObject(c, "choices");
	cJSON *ch = cJSON_CreateObject();

	cJSON_AddNumberToObject(ch, "index", 0);
	add_content(cJSON_AddObjectToObject(ch, "message"), text, tool, args);
	cJSON_AddStringToObject(ch, "finish_reason", text ? "stop" : "tool_calls");
	cJSON_AddItemToArray(choices, ch);
	add_usage(c);
	return json_text(c);
}

struct pusher {
	struct mock *m;
	bool stream;
};

static void push(const struct pusher *p, const char *needle, const char *text, const char *tool,
		 const char *args)
{
	char *body = p->stream ? sse_reply(text, tool, args) : plain_reply(text, tool, args);
	struct mock_reply r = {.body = body, .chunk = MOCK_CHUNK_EVENTS};

	mock_push_for(p->m, needle, &r);
	free(body);
}

static char *plan_text(bool chain)
{
	cJSON *plan = cJSON_CreateObject(), *steps, *sc;

	cJSON_AddStringToObject(plan, "goal", BENCH_TASK);
	cJSON_AddStringToObject(plan, "context", "benchmark");
	steps = cJSON_AddArrayToObject(plan, "steps");
	for (int i = 1; i <= BENCH_STEPS; i++) {
		cJSON *s = cJSON_CreateObject(), *crit, *outs, *deps;
		char id[16], name[32], desc[96], file[24];

		snprintf(id, sizeof(id), "s%d", i);
		snprintf(name, sizeof(name), "note %d", i);
		/* The tag [tNNN] is the mock's needle for this step's requests: the executor's
		 * two and the verifier's one, in that order. */
		snprintf(desc, sizeof(desc), "Write a short note for this step [t%03d].", i);
		snprintf(file, sizeof(file), "note%03d.md", i);
		cJSON_AddStringToObject(s, "step_id", id);
		cJSON_AddStringToObject(s, "name", name);
		cJSON_AddStringToObject(s, "description", desc);
		cJSON_AddArrayToObject(s, "actions");
		crit = cJSON_AddArrayToObject(s, "acceptance_criteria");
		cJSON_AddItemToArray(crit, cJSON_CreateString("the note exists"));
		outs = cJSON_AddArrayToObject(s, "expected_outputs");
		cJSON_AddItemToArray(outs, cJSON_CreateString(file));
		deps = cJSON_AddArrayToObject(s, "dependencies");
		if (chain && i > 1) {
			snprintf(id, sizeof(id), "s%d", i - 1);
			cJSON_AddItemToArray(deps, cJSON_CreateString(id));
		}
		cJSON_AddStringToObject(s, "estimated_complexity", "low");
		cJSON_AddItemToArray(steps, s);
	}
	sc = cJSON_AddArrayToObject(plan, "success_criteria");
	cJSON_AddItemToArray(sc, cJSON_CreateString("every note exists"));
	cJSON_AddStringToObject(plan, "rollback_strategy", "none");
	return json_text(plan);
}

static char *verdict_text(const char *criterion)
{
	cJSON *v = cJSON_CreateObject(), *list, *r;

	cJSON_AddBoolToObject(v, "overall_pass", 1);
	list = cJSON_AddArrayToObject(v, "criteria_results");
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "criterion", criterion);
	cJSON_AddBoolToObject(r, "passed", 1);
	cJSON_AddStringToObject(r, "evidence", "the file is there");
	cJSON_AddNumberToObject(r, "confidence", 0.9);
	cJSON_AddStringToObject(r, "feedback", "");
	cJSON_AddItemToArray(list, r);
	cJSON_AddStringToObject(v, "action", "pass");
	cJSON_AddStringToObject(v, "feedback_for_executor", "");
	cJSON_AddStringToObject(v, "severity", "minor");
	return json_text(v);
}

static char *result_text(const char *file)
{
	cJSON *res = cJSON_CreateObject(), *acts, *out, *arts;

	cJSON_AddStringToObject(res, "reasoning", "wrote the note with write_file");
	acts = cJSON_AddArrayToObject(res, "actions_taken");
	cJSON_AddItemToArray(acts, cJSON_CreateString("write_file"));
	out = cJSON_AddObjectToObject(res, "step_output");
	cJSON_AddStringToObject(out, "findings", "The note is written.");
	arts = cJSON_AddArrayToObject(out, "artifacts");
	cJSON_AddItemToArray(arts, cJSON_CreateString(file));
	cJSON_AddBoolToObject(out, "meets_criteria", 1);
	cJSON_AddNumberToObject(res, "confidence", 0.9);
	cJSON_AddStringToObject(res, "notes", "");
	return json_text(res);
}

void bench_script(struct mock *m, enum bench_client who, bool chain, bool stream)
{
	const struct pusher p = {m, stream};
	bool peer = who == BENCH_PEER;
	char *t;

	t = plan_text(chain);
	push(&p, peer ? "You are a planner" : "Write the plan.", t, NULL, NULL);
	free(t);
	for (int i = 1; i <= BENCH_STEPS; i++) {
		char needle[16], file[24];
		cJSON *args = cJSON_CreateObject();
		char *a, *content;

		snprintf(needle, sizeof(needle), "[t%03d]", i);
		snprintf(file, sizeof(file), "note%03d.md", i);
		content = xasprintf("# Note %d\n\nThis step wrote its note, as asked.\n", i);
		cJSON_AddStringToObject(args, "path", file);
		cJSON_AddStringToObject(args, "content", content);
		a = json_text(args);
		push(&p, needle, NULL, "write_file", a);
		free(a);
		free(content);

		t = result_text(file);
		push(&p, needle, t, NULL, NULL);
		free(t);

		t = verdict_text("the note exists");
		push(&p, needle, t, NULL, NULL);
		free(t);
	}
	if (!peer) {
		t = verdict_text("every note exists");
		push(&p, "Success criteria of the whole plan", t, NULL, NULL);
		free(t);
	}
	push(&p, peer ? "Write the final answer from the verified step results" : "Write the final answer.",
	     "Every step wrote its note (s1 to s50).", NULL, NULL);
}
