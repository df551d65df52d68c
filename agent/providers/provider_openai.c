/* provider_openai — Chat Completions: request building, SSE and JSON answers, the quirks
 * of compatible servers (WIRE.md), and JSON mode with a remembered fallback. */
#include "config.h"

#include "provider_openai.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "provider_http.h"
#include "schemas.h"
#include "sse.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

#define MAX_TOOL_CALLS 128

struct openai {
	struct provider pub;
	struct phttp_conf cf; /* api_key NULL: no Authorization header */
	bool official; /* api.openai.com: max_completion_tokens instead of max_tokens */
	atomic_bool no_json_mode; /* the server rejected response_format once */
	atomic_size_t last_body;  /* the size of the last body built: the next one's guess */
};

static const char *const default_models[ROLE__COUNT] = {
	[ROLE_PLANNER] = "gpt-5",
	[ROLE_EXECUTOR] = "gpt-5-mini",
	[ROLE_VERIFIER] = "gpt-5-nano",
};

const char *provider_openai_default_model(enum llm_role role)
{
	return (role >= 0 && role < ROLE__COUNT) ? default_models[role]
						 : default_models[ROLE_EXECUTOR];
}

/* ---- the answer, as it is parsed ------------------------------------------------------ */

struct slot {
	int index;
	char *id;
	char *name;
	struct strbuf args;
};

struct parse {
	struct phttp h;     /* text, raw body, SSE, model, usage, completeness */
	struct slot *slots;
	size_t n_slots, cap_slots;
	char *error;        /* a mid-stream or in-body error, described */
	char *error_kind;
	int error_code;     /* its HTTP-like `code`, 0 when none */
	struct strbuf refusal; /* api.openai.com's `refusal` deltas */
};

/* One call; the phttp_wire callbacks and the SSE parser get a struct call *. */
struct call {
	struct parse ps;
	struct openai *o;
	const struct llm_request *req; /* NULL in provider_openai_parse */
	bool sent_json_mode;
	bool json_mode_rejected;
};

static void parse_clear(void *ctx)
{
	struct parse *ps = &((struct call *)ctx)->ps;

	for (size_t i = 0; i < ps->n_slots; i++) {
		free(ps->slots[i].id);
		free(ps->slots[i].name);
		strbuf_release(&ps->slots[i].args);
	}
	free(ps->slots);
	ps->slots = NULL;
	ps->n_slots = ps->cap_slots = 0;
	free(ps->error);
	free(ps->error_kind);
	ps->error = ps->error_kind = NULL;
	ps->error_code = 0;
	/* Released, not re-initialised: this is also the last call, and an empty strbuf
	 * (buf NULL) takes text again. */
	strbuf_release(&ps->refusal);
}

static void take_usage(struct parse *ps, const cJSON *u)
{
	const cJSON *details;
	long prompt, cached = 0;

	if (!cJSON_IsObject(u))
		return; /* missing or null: Ollama without include_usage, many local servers */
	prompt = phttp_num_field(u, "prompt_tokens", 0);
	details = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
	if (cJSON_IsObject(details))
		cached = phttp_num_field(details, "cached_tokens", 0);
	if (cached > prompt)
		cached = prompt;
	ps->h.usage.reported = true;
	ps->h.usage.input_tokens = prompt - cached;
	ps->h.usage.cache_read_tokens = cached;
	ps->h.usage.cache_write_tokens = 0;
	ps->h.usage.output_tokens = phttp_num_field(u, "completion_tokens", 0);
}

static struct slot *new_slot(struct parse *ps, int index)
{
	struct slot *s;

	if (ps->n_slots >= MAX_TOOL_CALLS)
		return NULL;
	ps->slots = xgrow(ps->slots, &ps->cap_slots, ps->n_slots + 1, sizeof(*ps->slots));
	s = &ps->slots[ps->n_slots++];
	memset(s, 0, sizeof(*s));
	s->index = index;
	strbuf_init(&s->args);
	return s;
}

/* Finds the call a delta belongs to: by `index` (OpenAI, llama.cpp), else by `id`, else a
 * new one when it carries an id (Ollama sends whole calls without index), else the last. */
static struct slot *slot_for(struct parse *ps, const cJSON *tc)
{
	const cJSON *index = cJSON_GetObjectItemCaseSensitive(tc, "index");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");
	bool has_id = cJSON_IsString(id) && id->valuestring[0];

	if (cJSON_IsNumber(index) && index->valuedouble >= 0 && index->valuedouble < 1e6) {
		int i = (int)index->valuedouble;

		for (size_t k = 0; k < ps->n_slots; k++)
			if (ps->slots[k].index == i)
				return &ps->slots[k];
		return new_slot(ps, i);
	}
	if (has_id)
		for (size_t k = 0; k < ps->n_slots; k++)
			if (ps->slots[k].id && !strcmp(ps->slots[k].id, id->valuestring))
				return &ps->slots[k];
	if (has_id || ps->n_slots == 0)
		return new_slot(ps, -1 - (int)ps->n_slots);
	return &ps->slots[ps->n_slots - 1];
}

static void take_tool_calls(struct parse *ps, const cJSON *arr)
{
	const cJSON *tc;

	cJSON_ArrayForEach(tc, arr)
	{
		struct slot *s = slot_for(ps, tc);
		const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(tc, "id");

		if (!s)
			continue;
		if (cJSON_IsString(id) && id->valuestring[0] && !s->id)
			s->id = xstrdup(id->valuestring);
		if (cJSON_IsString(name) && name->valuestring[0] && !s->name)
			s->name = xstrdup(name->valuestring);
		if (cJSON_IsString(args)) {
			strbuf_adds(&s->args, args->valuestring);
		} else if (cJSON_IsObject(args)) {
			/* Some servers send the arguments as an object, not a string. */
			char *j = cJSON_PrintUnformatted(args);

			strbuf_adds(&s->args, j ? j : "{}");
			cJSON_free(j);
		}
	}
}

/* Records an error found inside a 200 body (llama.cpp, OpenRouter, Ollama). */
static void take_error(struct parse *ps, const char *json, size_t len)
{
	free(ps->error);
	free(ps->error_kind);
	ps->error_kind = NULL;
	ps->error = http_describe_error(0, json, len, &ps->error_kind);
	ps->error_code = http_error_code(json, len);
}

static void take_chunk(struct parse *ps, const cJSON *obj, const char *json, size_t len)
{
	const cJSON *choices, *c0, *delta, *content, *fr;

	const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, "error");

	if (e && !cJSON_IsNull(e)) {
		take_error(ps, json, len);
		return;
	}
	phttp_set_str(&ps->h.model, cJSON_GetObjectItemCaseSensitive(obj, "model"));
	take_usage(ps, cJSON_GetObjectItemCaseSensitive(obj, "usage"));
	choices = cJSON_GetObjectItemCaseSensitive(obj, "choices");
	c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
	if (!cJSON_IsObject(c0))
		return; /* the include_usage chunk has choices:[] */
	delta = cJSON_GetObjectItemCaseSensitive(c0, ps->h.stream ? "delta" : "message");
	content = cJSON_GetObjectItemCaseSensitive(delta, "content");
	if (cJSON_IsString(content))
		phttp_add_text(&ps->h, content->valuestring);
	content = cJSON_GetObjectItemCaseSensitive(delta, "refusal");
	if (cJSON_IsString(content))
		strbuf_adds(&ps->refusal, content->valuestring);
	take_tool_calls(ps, cJSON_GetObjectItemCaseSensitive(delta, "tool_calls"));
	fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
	phttp_set_str(&ps->h.stop_reason, fr);
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct parse *ps = &((struct call *)ctx)->ps;
	cJSON *obj;

	/* Not a reason to stop reading: cutting the transfer would close the kept-alive
	 * connection. */
	if (len == 6 && !memcmp(data, "[DONE]", 6)) {
		ps->h.complete = true;
		return 0;
	}
	if (ps->h.complete)
		return 0;
	obj = cJSON_ParseWithLength(data, len);
	if (!strcmp(event, SSE_EVENT_ERROR)) {
		/* Older llama.cpp: `error: {"code":400,"message":…}`, then [DONE]. The call
		 * failed, whatever follows. */
		cJSON_Delete(obj);
		take_error(ps, data, len);
		return 1;
	}
	if (!strcmp(event, SSE_EVENT_RAW)) {
		/* Ollama: a bare {"error":"…"} line once streaming began. Other bare JSON
		 * is not ours to read. */
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, "error");

		if (!e || cJSON_IsNull(e)) {
			cJSON_Delete(obj);
			return 0;
		}
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		ps->h.bad_json = true;
		return 1;
	}
	take_chunk(ps, obj, data, len);
	cJSON_Delete(obj);
	return ps->error ? 1 : 0;
}

static void parse_whole(struct parse *ps, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);

	if (!cJSON_IsObject(root)) {
		ps->h.bad_json = true;
	} else {
		take_chunk(ps, root, body, len);
		ps->h.complete = !ps->error;
	}
	cJSON_Delete(root);
}

static void fill_calls(void *ctx, struct llm_response *out)
{
	const struct parse *ps = &((struct call *)ctx)->ps;

	out->calls = ps->n_slots ? xcalloc(ps->n_slots, sizeof(*out->calls)) : NULL;
	for (size_t i = 0; i < ps->n_slots; i++) {
		struct slot *s = &ps->slots[i];
		struct llm_tool_call *c = &out->calls[out->n_calls++];

		c->id = s->id ? xstrdup(s->id) : xasprintf("call_%zu", i);
		c->name = xstrdup(s->name ? s->name : "");
		c->input_json = xstrdup(s->args.len ? s->args.buf : "{}");
	}
}

/* In-body errors carry no status; retry those that do not look like the request's fault. */
static bool error_kind_transient(const char *kind)
{
	static const char *const permanent[] = {
		"invalid_request_error", "authentication_error", "permission_error",
		"not_found_error", "insufficient_quota", "context_length_exceeded",
		"model_not_found", "invalid_api_key", "exceed_context_size_error",
		"not_supported_error", "BadRequestError", "NotFoundError",
		"AuthenticationError", "PermissionDeniedError", "UnprocessableEntityError",
	};

	if (!kind)
		return true;
	if (strspn(kind, "0123456789") == strlen(kind))
		return http_code_transient(atoi(kind));
	for (size_t i = 0; i < sizeof(permanent) / sizeof(permanent[0]); i++)
		if (!strcmp(kind, permanent[i]))
			return false;
	return true;
}

static void finish(void *ctx)
{
	struct parse *ps = &((struct call *)ctx)->ps;

	if (ps->h.stream && !ps->h.complete && !ps->error && !ps->h.bad_json)
		sse_finish(ps->h.sse);
	else if (!ps->h.stream)
		parse_whole(ps, ps->h.raw.buf, ps->h.raw.len);
}

static bool body_error(void *ctx, int status, char **msg, enum http_verdict *verdict)
{
	const struct parse *ps = &((struct call *)ctx)->ps;

	if (!ps->error) {
		/* No text and no call, with a reason: not an answer to read. Saying why here
		 * spares the operator "cannot parse an empty answer". */
		if (!ps->h.complete || ps->h.text.len || ps->n_slots)
			return false;
		*msg = phttp_empty_answer_reason(status, ps->h.stop_reason, ps->refusal.buf);
		*verdict = HTTP_FAIL;
		return *msg != NULL;
	}
	*msg = xasprintf("HTTP %d then %s%s", status, ps->error, phttp_discarded(&ps->h));
	/* A numeric code is a status (vLLM, llama.cpp, OpenRouter): a 400 for a prompt too
	 * long fails the same way every time. Only codes the SDKs retry are retried. */
	if (ps->error_code)
		*verdict = http_code_transient(ps->error_code) ? HTTP_RETRY : HTTP_FAIL;
	else
		*verdict = error_kind_transient(ps->error_kind) ? HTTP_RETRY : HTTP_FAIL;
	return true;
}

/* Does a 400 say the server does not do response_format (llama.cpp, older vLLM, …)? */
static bool rejects_json_mode(const struct strbuf *body)
{
	static const char *const needles[] = {"response_format", "json_object", "json mode",
					      "json_mode"};
	char *low = xstrdup(body->buf);
	bool hit = false;

	for (char *p = low; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	for (size_t i = 0; !hit && i < sizeof(needles) / sizeof(needles[0]); i++)
		hit = strstr(low, needles[i]) != NULL;
	free(low);
	return hit;
}

static enum http_verdict status_verdict(void *ctx, const struct http_result *res,
					const char *kind, enum http_verdict v)
{
	struct call *c = ctx;

	if (kind && !strcmp(kind, "insufficient_quota"))
		v = HTTP_FAIL;
	if (res->status == 400 && c->sent_json_mode && rejects_json_mode(&res->body))
		c->json_mode_rejected = true;
	return v;
}

/* The tools, as `,"tools":[…]`: texts and schemas every call repeats, escaped and
 * printed once per run (req->schemas). */
static void add_tools(struct strbuf *sb, const struct llm_request *req)
{
	struct schemas *own = NULL, *memo = req->schemas;

	if (!req->n_tools)
		return;
	if (!memo)
		memo = own = schemas_new();
	PHTTP_LIT(sb, ",\"tools\":[");
	for (size_t i = 0; i < req->n_tools; i++) {
		const struct tool_def *t = req->tools[i];

		if (i)
			strbuf_addc(sb, ',');
		PHTTP_LIT(sb, "{\"type\":\"function\",\"function\":{");
		phttp_add_tool_members(sb, memo, t, "\"parameters\":");
		PHTTP_LIT(sb, "}}");
	}
	strbuf_addc(sb, ']');
	schemas_free(own);
}

/* The call a tool result answers, among the assistant turns before message `before`. */
static const struct llm_tool_call *call_of(const struct llm_request *req, size_t before,
					   const char *id)
{
	for (size_t i = before; id && i-- > 0;) {
		const struct llm_msg *m = &req->msgs[i];

		if (m->kind != LLM_MSG_ASSISTANT)
			continue;
		for (size_t k = 0; k < m->n_calls; k++)
			if (m->calls[k].id && !strcmp(m->calls[k].id, id))
				return &m->calls[k];
	}
	return NULL;
}

static void add_assistant(struct strbuf *sb, const struct llm_msg *lm)
{
	PHTTP_LIT(sb, "{\"role\":\"assistant\",\"content\":");
	if (lm->text && *lm->text)
		phttp_add_str(sb, lm->text);
	else
		PHTTP_LIT(sb, "null");
	if (lm->n_calls) {
		PHTTP_LIT(sb, ",\"tool_calls\":[");
		for (size_t k = 0; k < lm->n_calls; k++) {
			const struct llm_tool_call *c = &lm->calls[k];
			bool bad;
			/* Sent back as they came, they would make Ollama and vLLM refuse the
			 * request (HTTP 400). */
			char *args = phttp_repair_args(c->input_json, &bad);

			if (k)
				strbuf_addc(sb, ',');
			PHTTP_LIT(sb, "{\"id\":");
			phttp_add_str(sb, c->id ? c->id : "");
			PHTTP_LIT(sb, ",\"type\":\"function\",\"function\":{\"name\":");
			phttp_add_str(sb, c->name ? c->name : "");
			PHTTP_LIT(sb, ",\"arguments\":");
			phttp_add_str(sb, args);
			PHTTP_LIT(sb, "}}");
			free(args);
		}
		strbuf_addc(sb, ']');
	}
	strbuf_addc(sb, '}');
}

/* One tool message per result of message i; *n counts the messages written. */
static void add_results(struct strbuf *sb, const struct llm_request *req, size_t i, size_t *n)
{
	const struct llm_msg *lm = &req->msgs[i];

	for (size_t k = 0; k < lm->n_results; k++) {
		const struct llm_tool_result *r = &lm->results[k];
		const struct llm_tool_call *tc = call_of(req, i, r->call_id);
		const char *content = r->content ? r->content : "";
		char *own = NULL;
		bool bad = false;
		char *sent = phttp_repair_args(tc ? tc->input_json : NULL, &bad);

		if ((*n)++)
			strbuf_addc(sb, ',');
		PHTTP_LIT(sb, "{\"role\":\"tool\",\"tool_call_id\":");
		phttp_add_str(sb, r->call_id ? r->call_id : "");
		PHTTP_LIT(sb, ",\"content\":");
		if (r->is_error) /* rare: the copy costs nothing worth saving */
			content = own = xasprintf("ERROR: %s", content);
		if (tc && bad) {
			char *note = phttp_bad_args_note(tc->name, sent, content);

			phttp_add_str(sb, note);
			free(note);
		} else {
			phttp_add_str(sb, content);
		}
		free(own);
		strbuf_addc(sb, '}');
		free(sent);
	}
}

/* Written straight into one buffer, byte for byte as cJSON_PrintUnformatted printed the
 * tree this used to build (on_request_printed relies on it; test_bodies checks it). */
static char *build_body(struct openai *o, const struct llm_request *req, bool json_mode)
{
	struct strbuf sb;
	size_t n = 0; /* messages written */

	phttp_body_start(&sb, &o->last_body);
	PHTTP_LIT(&sb, "{\"model\":");
	phttp_add_str(&sb, req->model ? req->model : "");
	PHTTP_LIT(&sb, ",\"messages\":[");
	if (req->system && *req->system) {
		PHTTP_LIT(&sb, "{\"role\":\"system\",\"content\":");
		phttp_add_str_memo(&sb, req->schemas, req->system);
		strbuf_addc(&sb, '}');
		n++;
	}
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *lm = &req->msgs[i];

		switch (lm->kind) {
		case LLM_MSG_USER:
			if (n++)
				strbuf_addc(&sb, ',');
			PHTTP_LIT(&sb, "{\"role\":\"user\",\"content\":");
			phttp_add_str(&sb, lm->text ? lm->text : "");
			strbuf_addc(&sb, '}');
			break;
		case LLM_MSG_ASSISTANT:
			if (n++)
				strbuf_addc(&sb, ',');
			add_assistant(&sb, lm);
			break;
		case LLM_MSG_TOOL_RESULTS:
			add_results(&sb, req, i, &n);
			break;
		}
	}
	strbuf_addc(&sb, ']');
	add_tools(&sb, req);
	if (req->max_tokens > 0) {
		if (o->official)
			PHTTP_LIT(&sb, ",\"max_completion_tokens\":");
		else
			PHTTP_LIT(&sb, ",\"max_tokens\":");
		strbuf_addi(&sb, req->max_tokens); /* cJSON: "%d" for a whole number */
	}
	if (json_mode)
		PHTTP_LIT(&sb, ",\"response_format\":{\"type\":\"json_object\"}");
	if (o->cf.stream)
		PHTTP_LIT(&sb, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
	strbuf_addc(&sb, '}');
	phttp_body_done(&sb, &o->last_body);
	return strbuf_detach(&sb);
}

static char *call_build_body(void *ctx)
{
	struct call *c = ctx;

	c->sent_json_mode = c->req->want_json && !atomic_load(&c->o->no_json_mode);
	c->json_mode_rejected = false;
	return build_body(c->o, c->req, c->sent_json_mode);
}

/* A server that rejected response_format gets the request again without it. */
static bool call_again(void *ctx, int rc)
{
	struct call *c = ctx;

	if (rc != PROVIDER_ERROR || !c->json_mode_rejected)
		return false;
	/* Remembered for the provider's lifetime: the prompts ask for JSON anyway. */
	atomic_store(&c->o->no_json_mode, true);
	return true;
}

static const struct phttp_wire openai_wire = {
	.name = "openai",
	.end_marker = "[DONE]",
	.on_event = on_event,
	.clear = parse_clear,
	.finish = finish,
	.body_error = body_error,
	.status_verdict = status_verdict,
	.fill_calls = fill_calls,
	.build_body = call_build_body,
	.again = call_again,
};

static int openai_complete(struct provider *p, const struct llm_request *req,
			   const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct openai *o = p->impl;
	struct call c = {.o = o, .req = req};

	phttp_init(&c.ps.h, &openai_wire, &c, hooks, &o->cf);
	if (o->cf.api_key)
		strvec_pushf(&c.ps.h.headers, "authorization: Bearer %s", o->cf.api_key);
	return phttp_complete(&c.ps.h, out, err);
}

static void openai_destroy(struct provider *p)
{
	struct openai *o = p->impl;

	phttp_conf_release(&o->cf);
	free(o);
}

static const struct provider_ops openai_ops = {
	.name = "openai",
	.complete = openai_complete,
	.destroy = openai_destroy,
};

struct provider *provider_openai_new(const char *base_url, const char *api_key, char **err)
{
	struct openai *o;
	char *url, *e = NULL;

	*err = NULL;
	if (api_key && strpbrk(api_key, "\r\n")) {
		*err = xstrdup("openai: the API key contains a line break");
		return NULL;
	}
	url = http_endpoint(base_url, OPENAI_DEFAULT_BASE_URL, NULL, "/chat/completions", &e);
	if (!url) {
		*err = xasprintf("openai: %s", e);
		free(e);
		return NULL;
	}
	o = xcalloc(1, sizeof(*o));
	o->pub.ops = &openai_ops;
	o->pub.simulated = false;
	o->pub.impl = o;
	phttp_conf_init(&o->cf, url, api_key);
	o->official = strstr(url, "://api.openai.com/") != NULL;
	atomic_init(&o->no_json_mode, false);
	atomic_init(&o->last_body, 0);
	return &o->pub;
}

void provider_openai_set_http(struct provider *p, const struct http_options *opt)
{
	struct openai *o = p->impl;

	o->cf.opt = *opt;
}

void provider_openai_set_stream(struct provider *p, bool stream)
{
	struct openai *o = p->impl;

	o->cf.stream = stream;
}

char *provider_openai_body(struct provider *p, const struct llm_request *req, bool json_mode)
{
	return build_body(p->impl, req, json_mode);
}

bool provider_openai_json_mode_disabled(const struct provider *p)
{
	const struct openai *o = p->impl;

	return atomic_load(&o->no_json_mode);
}

int provider_openai_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			  char **err)
{
	const struct phttp_conf cf = {.stream = stream};
	struct call c = {.o = NULL}; /* no request is built */

	phttp_init(&c.ps.h, &openai_wire, &c, NULL, &cf);
	return phttp_parse(&c.ps.h, body, len, out, err);
}
