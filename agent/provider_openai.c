/* provider_openai — Chat Completions: request building, SSE and JSON answers, the quirks
 * of compatible servers (WIRE.md), and JSON mode with a remembered fallback. */
#include "config.h"

#include "provider_openai.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "sse.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

#define MAX_TOOL_CALLS 128

struct openai {
	struct provider pub;
	char *url;
	char *api_key; /* NULL: no Authorization header */
	struct http_options opt;
	bool stream;
	bool official; /* api.openai.com: max_completion_tokens instead of max_tokens */
	atomic_bool no_json_mode; /* the server rejected response_format once */
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
	const struct llm_hooks *hooks;
	bool want_stream;   /* what was asked for */
	bool stream;        /* what is being parsed (a server may answer whole JSON) */
	bool sniffed;       /* the first non-blank byte of this attempt was seen */
	struct sse_parser *sse;
	struct strbuf raw;
	struct strbuf text;
	struct slot *slots;
	size_t n_slots, cap_slots;
	char *model;
	char *stop_reason;
	struct llm_usage usage;
	bool complete, bad_json;
	char *error;        /* a mid-stream or in-body error, described */
	char *error_kind;
	size_t shown;
};

static void parse_clear(struct parse *ps)
{
	for (size_t i = 0; i < ps->n_slots; i++) {
		free(ps->slots[i].id);
		free(ps->slots[i].name);
		strbuf_release(&ps->slots[i].args);
	}
	free(ps->slots);
	ps->slots = NULL;
	ps->n_slots = ps->cap_slots = 0;
	free(ps->model);
	free(ps->stop_reason);
	free(ps->error);
	free(ps->error_kind);
	ps->model = ps->stop_reason = ps->error = ps->error_kind = NULL;
	strbuf_reset(&ps->text);
	strbuf_reset(&ps->raw);
	memset(&ps->usage, 0, sizeof(ps->usage));
	ps->complete = ps->bad_json = false;
	ps->shown = 0;
	ps->stream = ps->want_stream;
	ps->sniffed = false;
	if (ps->sse)
		sse_reset(ps->sse);
}

static void set_str(char **dst, const cJSON *v)
{
	if (cJSON_IsString(v)) {
		free(*dst);
		*dst = xstrdup(v->valuestring);
	}
}

static long num_field(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15
		       ? (long)v->valuedouble
		       : 0;
}

static void take_usage(struct parse *ps, const cJSON *u)
{
	const cJSON *details;
	long prompt, cached = 0;

	if (!cJSON_IsObject(u))
		return; /* missing or null: Ollama without include_usage, many local servers */
	prompt = num_field(u, "prompt_tokens");
	details = cJSON_GetObjectItemCaseSensitive(u, "prompt_tokens_details");
	if (cJSON_IsObject(details))
		cached = num_field(details, "cached_tokens");
	if (cached > prompt)
		cached = prompt;
	ps->usage.reported = true;
	ps->usage.input_tokens = prompt - cached;
	ps->usage.cache_read_tokens = cached;
	ps->usage.cache_write_tokens = 0;
	ps->usage.output_tokens = num_field(u, "completion_tokens");
}

static void add_text(struct parse *ps, const char *s)
{
	size_t n = strlen(s);

	strbuf_add(&ps->text, s, n);
	if (ps->hooks && ps->hooks->on_delta && n) {
		ps->hooks->on_delta(ps->hooks->ctx, s, n);
		ps->shown += n;
	}
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
}

static void take_chunk(struct parse *ps, const cJSON *obj, const char *json, size_t len)
{
	const cJSON *choices, *c0, *delta, *content, *fr;

	if (cJSON_GetObjectItemCaseSensitive(obj, "error")) {
		take_error(ps, json, len);
		return;
	}
	set_str(&ps->model, cJSON_GetObjectItemCaseSensitive(obj, "model"));
	take_usage(ps, cJSON_GetObjectItemCaseSensitive(obj, "usage"));
	choices = cJSON_GetObjectItemCaseSensitive(obj, "choices");
	c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
	if (!cJSON_IsObject(c0))
		return; /* the include_usage chunk has choices:[] */
	delta = cJSON_GetObjectItemCaseSensitive(c0, ps->stream ? "delta" : "message");
	content = cJSON_GetObjectItemCaseSensitive(delta, "content");
	if (cJSON_IsString(content))
		add_text(ps, content->valuestring);
	take_tool_calls(ps, cJSON_GetObjectItemCaseSensitive(delta, "tool_calls"));
	fr = cJSON_GetObjectItemCaseSensitive(c0, "finish_reason");
	set_str(&ps->stop_reason, fr);
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct parse *ps = ctx;
	cJSON *obj;

	/* Not a reason to stop reading: cutting the transfer would close the kept-alive
	 * connection. */
	if (len == 6 && !memcmp(data, "[DONE]", 6)) {
		ps->complete = true;
		return 0;
	}
	if (ps->complete)
		return 0;
	obj = cJSON_ParseWithLength(data, len);
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		ps->bad_json = true;
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
		ps->bad_json = true;
	} else {
		take_chunk(ps, root, body, len);
		ps->complete = !ps->error;
	}
	cJSON_Delete(root);
}

static void fill_response(struct parse *ps, struct llm_response *out)
{
	out->text = xstrdup(ps->text.buf);
	out->calls = ps->n_slots ? xcalloc(ps->n_slots, sizeof(*out->calls)) : NULL;
	for (size_t i = 0; i < ps->n_slots; i++) {
		struct slot *s = &ps->slots[i];
		struct llm_tool_call *c = &out->calls[out->n_calls++];

		c->id = s->id ? xstrdup(s->id) : xasprintf("call_%zu", i);
		c->name = xstrdup(s->name ? s->name : "");
		c->input_json = xstrdup(s->args.len ? s->args.buf : "{}");
	}
	out->stop_reason = xstrdup(ps->stop_reason ? ps->stop_reason : "");
	out->usage = ps->usage;
	out->model = xstrdup(ps->model ? ps->model : "");
}

static const char *discarded(const struct parse *ps)
{
	return ps->shown ? "; partial text discarded" : "";
}

/* In-body errors carry no status; retry those that do not look like the request's fault. */
static bool error_kind_transient(const char *kind)
{
	static const char *const permanent[] = {
		"invalid_request_error", "authentication_error", "permission_error",
		"not_found_error", "insufficient_quota", "context_length_exceeded",
		"model_not_found", "invalid_api_key", "400", "401", "403", "404",
	};

	if (!kind)
		return true;
	for (size_t i = 0; i < sizeof(permanent) / sizeof(permanent[0]); i++)
		if (!strcmp(kind, permanent[i]))
			return false;
	return true;
}

static enum http_verdict judge_body(struct parse *ps, int status, char **msg)
{
	if (ps->stream && !ps->complete && !ps->error && !ps->bad_json)
		sse_finish(ps->sse);
	else if (!ps->stream)
		parse_whole(ps, ps->raw.buf, ps->raw.len);
	if (ps->error) {
		*msg = xasprintf("HTTP %d then %s%s", status, ps->error, discarded(ps));
		return error_kind_transient(ps->error_kind) ? HTTP_RETRY : HTTP_FAIL;
	}
	if (ps->bad_json) {
		*msg = xasprintf("HTTP %d with malformed JSON in the response%s", status,
				 discarded(ps));
		return HTTP_RETRY;
	}
	if (!ps->complete) {
		*msg = xasprintf("HTTP %d stream ended before [DONE] (truncated)%s", status,
				 discarded(ps));
		return HTTP_RETRY;
	}
	return HTTP_DONE;
}

/* ---- the call ------------------------------------------------------------------------- */

struct call {
	struct openai *o;
	struct parse ps;
	bool sent_json_mode;
	bool json_mode_rejected;
};

static void call_begin(void *ctx, int attempt)
{
	struct call *c = ctx;

	parse_clear(&c->ps);
}

static bool call_body(void *ctx, const char *buf, size_t n)
{
	struct call *c = ctx;

	if (!c->ps.sniffed) {
		size_t k = 0;

		while (k < n &&
		       (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r' || buf[k] == '\n'))
			k++;
		if (k == n)
			return true; /* blank so far: nothing to parse either way */
		c->ps.sniffed = true;
		/* Asked to stream, answered with one JSON object: some servers ignore "stream". */
		if (buf[k] == '{')
			c->ps.stream = false;
	}
	if (!c->ps.stream) {
		if (c->ps.raw.len + n > 64u * 1024 * 1024)
			return false;
		strbuf_add(&c->ps.raw, buf, n);
		return true;
	}
	return sse_feed(c->ps.sse, buf, n) == 0;
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

static enum http_verdict call_judge(void *ctx, const struct http_result *res, char **msg)
{
	struct call *c = ctx;
	enum http_verdict v;
	char *kind = NULL;

	if (res->transport_error) {
		if (res->status >= 200 && res->status < 300)
			*msg = xasprintf("HTTP %d stream cut: %s%s", res->status,
					 res->transport_msg, discarded(&c->ps));
		else
			*msg = xasprintf("connection error: %s", res->transport_msg);
		v = HTTP_RETRY;
	} else if (res->status < 200 || res->status >= 300) {
		*msg = http_describe_error(res->status, res->body.buf, res->body.len, &kind);
		v = http_status_retryable(res) ? HTTP_RETRY : HTTP_FAIL;
		if (kind && !strcmp(kind, "insufficient_quota"))
			v = HTTP_FAIL;
		if (res->status == 400 && c->sent_json_mode && rejects_json_mode(&res->body))
			c->json_mode_rejected = true;
		free(kind);
	} else {
		v = judge_body(&c->ps, res->status, msg);
	}
	if (*msg && c->o->api_key)
		http_redact(*msg, c->o->api_key);
	return v;
}

static void add_tools(cJSON *root, const struct llm_request *req)
{
	cJSON *tools;

	if (!req->n_tools)
		return;
	tools = cJSON_AddArrayToObject(root, "tools");
	for (size_t i = 0; i < req->n_tools; i++) {
		const struct tool_def *t = req->tools[i];
		cJSON *o = cJSON_CreateObject(), *fn;
		cJSON *schema = t->schema_json ? cJSON_Parse(t->schema_json) : NULL;

		cJSON_AddStringToObject(o, "type", "function");
		fn = cJSON_AddObjectToObject(o, "function");
		cJSON_AddStringToObject(fn, "name", t->name);
		cJSON_AddStringToObject(fn, "description", t->description ? t->description : "");
		if (!cJSON_IsObject(schema)) {
			cJSON_Delete(schema);
			schema = cJSON_Parse("{\"type\":\"object\"}");
		}
		cJSON_AddItemToObject(fn, "parameters", schema);
		cJSON_AddItemToArray(tools, o);
	}
}

static char *build_body(const struct openai *o, const struct llm_request *req, bool json_mode)
{
	cJSON *root = cJSON_CreateObject(), *msgs, *m;
	char *out;

	cJSON_AddStringToObject(root, "model", req->model ? req->model : "");
	msgs = cJSON_AddArrayToObject(root, "messages");
	if (req->system && *req->system) {
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "system");
		cJSON_AddStringToObject(m, "content", req->system);
		cJSON_AddItemToArray(msgs, m);
	}
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *lm = &req->msgs[i];

		switch (lm->kind) {
		case LLM_MSG_USER:
			m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "role", "user");
			cJSON_AddStringToObject(m, "content", lm->text ? lm->text : "");
			cJSON_AddItemToArray(msgs, m);
			break;
		case LLM_MSG_ASSISTANT: {
			cJSON *calls;

			m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "role", "assistant");
			if (lm->text && *lm->text)
				cJSON_AddStringToObject(m, "content", lm->text);
			else
				cJSON_AddNullToObject(m, "content");
			if (lm->n_calls) {
				calls = cJSON_AddArrayToObject(m, "tool_calls");
				for (size_t k = 0; k < lm->n_calls; k++) {
					cJSON *tc = cJSON_CreateObject(), *fn;

					cJSON_AddStringToObject(
					    tc, "id", lm->calls[k].id ? lm->calls[k].id : "");
					cJSON_AddStringToObject(tc, "type", "function");
					fn = cJSON_AddObjectToObject(tc, "function");
					cJSON_AddStringToObject(
					    fn, "name", lm->calls[k].name ? lm->calls[k].name : "");
					cJSON_AddStringToObject(fn, "arguments",
								lm->calls[k].input_json
									? lm->calls[k].input_json
									: "{}");
					cJSON_AddItemToArray(calls, tc);
				}
			}
			cJSON_AddItemToArray(msgs, m);
			break;
		}
		case LLM_MSG_TOOL_RESULTS:
			for (size_t k = 0; k < lm->n_results; k++) {
				const struct llm_tool_result *r = &lm->results[k];
				char *content = r->is_error
							? xasprintf("ERROR: %s",
								    r->content ? r->content : "")
							: xstrdup(r->content ? r->content : "");

				m = cJSON_CreateObject();
				cJSON_AddStringToObject(m, "role", "tool");
				cJSON_AddStringToObject(m, "tool_call_id",
							r->call_id ? r->call_id : "");
				cJSON_AddStringToObject(m, "content", content);
				cJSON_AddItemToArray(msgs, m);
				free(content);
			}
			break;
		}
	}
	add_tools(root, req);
	if (req->max_tokens > 0)
		cJSON_AddNumberToObject(root, o->official ? "max_completion_tokens" : "max_tokens",
					req->max_tokens);
	if (json_mode) {
		cJSON *rf = cJSON_AddObjectToObject(root, "response_format");

		cJSON_AddStringToObject(rf, "type", "json_object");
	}
	if (o->stream) {
		cJSON *so;

		cJSON_AddTrueToObject(root, "stream");
		so = cJSON_AddObjectToObject(root, "stream_options");
		cJSON_AddTrueToObject(so, "include_usage");
	}
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		fatal("cJSON_PrintUnformatted failed");
	return out;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

static int openai_complete(struct provider *p, const struct llm_request *req,
			   const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct openai *o = p->impl;
	struct call c = {.o = o};
	struct strvec headers = STRVEC_INIT;
	struct http_call hc = {0};
	struct http_stats st;
	struct timespec t0;
	char *e = NULL, *body = NULL;
	int rc;

	*err = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c.ps.hooks = hooks;
	c.ps.want_stream = c.ps.stream = o->stream;
	strbuf_init(&c.ps.text);
	strbuf_init(&c.ps.raw);
	if (o->stream)
		c.ps.sse = sse_new(on_event, &c.ps);
	strvec_push(&headers, "content-type: application/json");
	if (o->api_key)
		strvec_pushf(&headers, "authorization: Bearer %s", o->api_key);
	if (o->stream)
		strvec_push(&headers, "accept: text/event-stream");
	hc.url = o->url;
	hc.headers = &headers;
	hc.ctx = &c;
	hc.begin = call_begin;
	hc.on_body = call_body;
	hc.judge = call_judge;
	for (;;) {
		c.sent_json_mode = req->want_json && !atomic_load(&o->no_json_mode);
		c.json_mode_rejected = false;
		free(body);
		body = build_body(o, req, c.sent_json_mode);
		hc.body = body;
		hc.body_len = strlen(body);
		free(e);
		e = NULL;
		rc = http_perform(&hc, &o->opt, hooks, &st, &e);
		if (rc != PROVIDER_ERROR || !c.json_mode_rejected)
			break;
		/* Remembered for the provider's lifetime: the prompts ask for JSON anyway. */
		atomic_store(&o->no_json_mode, true);
	}
	if (rc == PROVIDER_OK) {
		fill_response(&c.ps, out);
		out->http_status = st.final_status;
		out->latency_ms = elapsed_ms(&t0);
	} else if (rc == PROVIDER_ERROR) {
		*err = xasprintf("openai: %s", e ? e : "request failed");
		if (o->api_key)
			http_redact(*err, o->api_key);
	}
	free(e);
	parse_clear(&c.ps);
	sse_free(c.ps.sse);
	strbuf_release(&c.ps.text);
	strbuf_release(&c.ps.raw);
	for (size_t i = 0; i < headers.n; i++)
		memset(headers.v[i], 0, strlen(headers.v[i]));
	strvec_clear(&headers);
	free(body);
	return rc;
}

static void openai_destroy(struct provider *p)
{
	struct openai *o = p->impl;

	free(o->url);
	if (o->api_key)
		memset(o->api_key, 0, strlen(o->api_key));
	free(o->api_key);
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
	o->url = url;
	o->api_key = (api_key && *api_key) ? xstrdup(api_key) : NULL;
	o->stream = true;
	o->official = strstr(url, "://api.openai.com/") != NULL;
	atomic_init(&o->no_json_mode, false);
	return &o->pub;
}

void provider_openai_set_http(struct provider *p, const struct http_options *opt)
{
	struct openai *o = p->impl;

	o->opt = *opt;
}

void provider_openai_set_stream(struct provider *p, bool stream)
{
	struct openai *o = p->impl;

	o->stream = stream;
}

bool provider_openai_json_mode_disabled(const struct provider *p)
{
	const struct openai *o = p->impl;

	return atomic_load(&o->no_json_mode);
}

int provider_openai_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			  char **err)
{
	struct openai o = {.stream = stream};
	struct call c = {.o = &o};
	struct http_result res = {.status = 200, .should_retry = -1, .retry_after_ms = -1};
	enum http_verdict v;
	char *msg = NULL;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	c.ps.want_stream = c.ps.stream = stream;
	strbuf_init(&c.ps.text);
	strbuf_init(&c.ps.raw);
	strbuf_init(&res.body);
	if (stream)
		c.ps.sse = sse_new(on_event, &c.ps);
	call_begin(&c, 1);
	if (!call_body(&c, body, len) && !stream)
		c.ps.bad_json = true;
	v = call_judge(&c, &res, &msg);
	if (v == HTTP_DONE) {
		fill_response(&c.ps, out);
		out->http_status = 200;
	} else {
		*err = xasprintf("openai: %s", msg ? msg : "bad response");
	}
	free(msg);
	parse_clear(&c.ps);
	sse_free(c.ps.sse);
	strbuf_release(&c.ps.text);
	strbuf_release(&c.ps.raw);
	strbuf_release(&res.body);
	return v == HTTP_DONE ? PROVIDER_OK : PROVIDER_ERROR;
}
