/* provider_anthropic — Anthropic Messages: request building, SSE and JSON answers, errors. */
#include "config.h"

#include "provider_anthropic.h"

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

#define DEFAULT_MAX_TOKENS 8192

struct anthropic {
	struct provider pub;
	char *url;
	char *api_key;
	struct http_options opt;
	bool stream;
};

static const char *const default_models[ROLE__COUNT] = {
	[ROLE_PLANNER] = "claude-opus-4-5",
	[ROLE_EXECUTOR] = "claude-sonnet-4-5",
	[ROLE_VERIFIER] = "claude-haiku-4-5",
};

const char *provider_anthropic_default_model(enum llm_role role)
{
	return (role >= 0 && role < ROLE__COUNT) ? default_models[role]
						 : default_models[ROLE_EXECUTOR];
}

/* ---- the answer, as it is parsed ------------------------------------------------------ */

struct block {
	bool is_tool;
	char *id;
	char *name;
	struct strbuf json;   /* partial_json fragments joined */
	char *initial_input;  /* the `input` of content_block_start, for non-delta answers */
};

struct parse {
	const struct llm_hooks *hooks;
	bool want_stream;       /* what was asked for */
	bool stream;            /* what is being parsed (a server may answer whole JSON) */
	bool sniffed;           /* the first non-blank byte of this attempt was seen */
	struct sse_parser *sse;
	struct strbuf raw;      /* non-streamed body */
	struct strbuf text;
	struct block *blocks;   /* by content index */
	size_t n_blocks, cap_blocks;
	char *model;
	char *stop_reason;
	struct llm_usage usage;
	bool started, complete, bad_json;
	char *error_type, *error_msg;
	size_t shown;           /* bytes of text already passed to on_delta */
};

static void parse_clear(struct parse *ps)
{
	for (size_t i = 0; i < ps->n_blocks; i++) {
		free(ps->blocks[i].id);
		free(ps->blocks[i].name);
		free(ps->blocks[i].initial_input);
		strbuf_release(&ps->blocks[i].json);
	}
	free(ps->blocks);
	ps->blocks = NULL;
	ps->n_blocks = ps->cap_blocks = 0;
	free(ps->model);
	free(ps->stop_reason);
	free(ps->error_type);
	free(ps->error_msg);
	ps->model = ps->stop_reason = ps->error_type = ps->error_msg = NULL;
	strbuf_reset(&ps->text);
	strbuf_reset(&ps->raw);
	memset(&ps->usage, 0, sizeof(ps->usage));
	ps->started = ps->complete = ps->bad_json = false;
	ps->shown = 0;
	ps->stream = ps->want_stream;
	ps->sniffed = false;
	if (ps->sse)
		sse_reset(ps->sse);
}

/* Blocks are addressed by the server's index; a hostile index cannot make us allocate
 * much, because indexes beyond the count seen so far plus a margin are refused. */
static struct block *block_at(struct parse *ps, const cJSON *index)
{
	int i;

	if (!cJSON_IsNumber(index) || index->valuedouble < 0 || index->valuedouble > 1024)
		return NULL;
	i = (int)index->valuedouble;
	if ((size_t)i >= ps->n_blocks) {
		ps->blocks = xgrow(ps->blocks, &ps->cap_blocks, (size_t)i + 1, sizeof(*ps->blocks));
		for (size_t k = ps->n_blocks; k <= (size_t)i; k++) {
			memset(&ps->blocks[k], 0, sizeof(ps->blocks[k]));
			strbuf_init(&ps->blocks[k].json);
		}
		ps->n_blocks = (size_t)i + 1;
	}
	return &ps->blocks[i];
}

static long num_field(const cJSON *obj, const char *key, long fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15
		       ? (long)v->valuedouble
		       : fallback;
}

static void take_usage(struct parse *ps, const cJSON *u)
{
	if (!cJSON_IsObject(u))
		return;
	ps->usage.reported = true;
	ps->usage.input_tokens = num_field(u, "input_tokens", ps->usage.input_tokens);
	ps->usage.output_tokens = num_field(u, "output_tokens", ps->usage.output_tokens);
	ps->usage.cache_write_tokens =
		num_field(u, "cache_creation_input_tokens", ps->usage.cache_write_tokens);
	ps->usage.cache_read_tokens =
		num_field(u, "cache_read_input_tokens", ps->usage.cache_read_tokens);
}

static void set_str(char **dst, const cJSON *v)
{
	if (cJSON_IsString(v)) {
		free(*dst);
		*dst = xstrdup(v->valuestring);
	}
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

static void take_error(struct parse *ps, const cJSON *obj)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, "error");

	free(ps->error_type);
	free(ps->error_msg);
	ps->error_type = ps->error_msg = NULL;
	if (cJSON_IsObject(e)) {
		set_str(&ps->error_type, cJSON_GetObjectItemCaseSensitive(e, "type"));
		set_str(&ps->error_msg, cJSON_GetObjectItemCaseSensitive(e, "message"));
	} else if (cJSON_IsString(e)) {
		ps->error_msg = xstrdup(e->valuestring);
	}
	if (!ps->error_type)
		ps->error_type = xstrdup("error");
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct parse *ps = ctx;
	cJSON *obj = cJSON_ParseWithLength(data, len);
	const cJSON *type, *delta, *cb;
	struct block *b;
	int rc = 0;

	if (!obj || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		ps->bad_json = true;
		return 1;
	}
	type = cJSON_GetObjectItemCaseSensitive(obj, "type");
	const char *t = cJSON_IsString(type) ? type->valuestring : event;

	if (!strcmp(t, "message_start")) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "message");

		ps->started = true;
		set_str(&ps->model, cJSON_GetObjectItemCaseSensitive(m, "model"));
		take_usage(ps, cJSON_GetObjectItemCaseSensitive(m, "usage"));
	} else if (!strcmp(t, "content_block_start")) {
		b = block_at(ps, cJSON_GetObjectItemCaseSensitive(obj, "index"));
		cb = cJSON_GetObjectItemCaseSensitive(obj, "content_block");
		type = cJSON_GetObjectItemCaseSensitive(cb, "type");
		if (b && cJSON_IsString(type) && !strcmp(type->valuestring, "tool_use")) {
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(cb, "input");

			b->is_tool = true;
			set_str(&b->id, cJSON_GetObjectItemCaseSensitive(cb, "id"));
			set_str(&b->name, cJSON_GetObjectItemCaseSensitive(cb, "name"));
			if (cJSON_IsObject(in) && in->child) {
				free(b->initial_input);
				b->initial_input = cJSON_PrintUnformatted(in);
			}
		} else if (b && cJSON_IsString(type) && !strcmp(type->valuestring, "text")) {
			const cJSON *tx = cJSON_GetObjectItemCaseSensitive(cb, "text");

			if (cJSON_IsString(tx) && tx->valuestring[0])
				add_text(ps, tx->valuestring);
		}
	} else if (!strcmp(t, "content_block_delta")) {
		b = block_at(ps, cJSON_GetObjectItemCaseSensitive(obj, "index"));
		delta = cJSON_GetObjectItemCaseSensitive(obj, "delta");
		type = cJSON_GetObjectItemCaseSensitive(delta, "type");
		if (b && cJSON_IsString(type)) {
			const cJSON *v;

			if (!strcmp(type->valuestring, "text_delta")) {
				v = cJSON_GetObjectItemCaseSensitive(delta, "text");
				if (cJSON_IsString(v))
					add_text(ps, v->valuestring);
			} else if (!strcmp(type->valuestring, "input_json_delta")) {
				v = cJSON_GetObjectItemCaseSensitive(delta, "partial_json");
				if (cJSON_IsString(v))
					strbuf_adds(&b->json, v->valuestring);
			}
			/* thinking_delta, signature_delta, citations_delta: not ours to show. */
		}
	} else if (!strcmp(t, "message_delta")) {
		delta = cJSON_GetObjectItemCaseSensitive(obj, "delta");
		set_str(&ps->stop_reason, cJSON_GetObjectItemCaseSensitive(delta, "stop_reason"));
		take_usage(ps, cJSON_GetObjectItemCaseSensitive(obj, "usage"));
	} else if (!strcmp(t, "message_stop")) {
		ps->complete = true;
	} else if (!strcmp(t, "error")) {
		take_error(ps, obj);
		rc = 1;
	}
	/* ping, content_block_stop and unknown types need nothing. */
	cJSON_Delete(obj);
	return rc;
}

/* A whole (non-streamed) message. */
static void parse_message(struct parse *ps, const char *body, size_t len)
{
	cJSON *root = cJSON_ParseWithLength(body, len);
	const cJSON *content, *item;
	const cJSON *type;
	size_t idx = 0;

	if (!cJSON_IsObject(root)) {
		ps->bad_json = true;
		cJSON_Delete(root);
		return;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (cJSON_IsString(type) && !strcmp(type->valuestring, "error")) {
		take_error(ps, root);
		cJSON_Delete(root);
		return;
	}
	set_str(&ps->model, cJSON_GetObjectItemCaseSensitive(root, "model"));
	set_str(&ps->stop_reason, cJSON_GetObjectItemCaseSensitive(root, "stop_reason"));
	take_usage(ps, cJSON_GetObjectItemCaseSensitive(root, "usage"));
	content = cJSON_GetObjectItemCaseSensitive(root, "content");
	cJSON_ArrayForEach(item, content)
	{
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(item, "type");
		cJSON idx_num = {0};

		if (!cJSON_IsString(it))
			continue;
		if (!strcmp(it->valuestring, "text")) {
			const cJSON *tx = cJSON_GetObjectItemCaseSensitive(item, "text");

			if (cJSON_IsString(tx))
				add_text(ps, tx->valuestring);
		} else if (!strcmp(it->valuestring, "tool_use")) {
			struct block *b;
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(item, "input");

			idx_num.type = cJSON_Number;
			idx_num.valuedouble = (double)idx;
			b = block_at(ps, &idx_num);
			if (!b)
				continue;
			b->is_tool = true;
			set_str(&b->id, cJSON_GetObjectItemCaseSensitive(item, "id"));
			set_str(&b->name, cJSON_GetObjectItemCaseSensitive(item, "name"));
			if (cJSON_IsObject(in)) {
				char *s = cJSON_PrintUnformatted(in);

				strbuf_adds(&b->json, s ? s : "{}");
				cJSON_free(s);
			}
		}
		idx++;
	}
	ps->started = ps->complete = true;
	cJSON_Delete(root);
}

static void fill_response(struct parse *ps, struct llm_response *out)
{
	size_t n = 0;

	out->text = xstrdup(ps->text.buf);
	for (size_t i = 0; i < ps->n_blocks; i++)
		n += ps->blocks[i].is_tool;
	out->calls = n ? xcalloc(n, sizeof(*out->calls)) : NULL;
	for (size_t i = 0; i < ps->n_blocks; i++) {
		struct block *b = &ps->blocks[i];
		struct llm_tool_call *c;

		if (!b->is_tool)
			continue;
		c = &out->calls[out->n_calls++];
		c->id = xstrdup(b->id ? b->id : "");
		c->name = xstrdup(b->name ? b->name : "");
		/* The first fragment may be "": an argument-less call is "{}". */
		if (b->json.len)
			c->input_json = xstrdup(b->json.buf);
		else
			c->input_json = xstrdup(b->initial_input ? b->initial_input : "{}");
	}
	out->stop_reason = xstrdup(ps->stop_reason ? ps->stop_reason : "");
	out->usage = ps->usage;
	out->model = xstrdup(ps->model ? ps->model : "");
}

/* Mid-stream error types worth another attempt (the rest would fail again). */
static bool error_type_transient(const char *t)
{
	return t && (!strcmp(t, "overloaded_error") || !strcmp(t, "api_error") ||
		     !strcmp(t, "rate_limit_error") || !strcmp(t, "timeout_error"));
}

static const char *discarded(const struct parse *ps)
{
	return ps->shown ? "; partial text discarded" : "";
}

/* Judges a 2xx body once it has fully arrived (or was refused by the parser). */
static enum http_verdict judge_body(struct parse *ps, int status, char **msg)
{
	if (ps->stream)
		sse_finish(ps->sse);
	else
		parse_message(ps, ps->raw.buf, ps->raw.len);
	if (ps->error_type) {
		char *t = http_clean_text(ps->error_type);
		char *m = http_clean_text(ps->error_msg ? ps->error_msg : "(no message)");

		*msg = xasprintf("HTTP %d then error event %s: %s%s", status, t, m, discarded(ps));
		free(t);
		free(m);
		return error_type_transient(ps->error_type) ? HTTP_RETRY : HTTP_FAIL;
	}
	if (ps->bad_json) {
		*msg = xasprintf("HTTP %d with malformed JSON in the response%s", status,
				 discarded(ps));
		return HTTP_RETRY;
	}
	if (!ps->complete) {
		*msg = xasprintf("HTTP %d stream ended before message_stop (truncated)%s", status,
				 discarded(ps));
		return HTTP_RETRY;
	}
	return HTTP_DONE;
}

/* ---- the call ------------------------------------------------------------------------- */

struct call {
	struct anthropic *a;
	struct parse ps;
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
		/* A spent balance is not transient, whatever the status says. */
		if (kind && (!strcmp(kind, "billing_error") || !strcmp(kind, "insufficient_quota")))
			v = HTTP_FAIL;
		free(kind);
	} else {
		v = judge_body(&c->ps, res->status, msg);
	}
	if (*msg)
		http_redact(*msg, c->a->api_key);
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
		cJSON *o = cJSON_CreateObject();
		cJSON *schema = t->schema_json ? cJSON_Parse(t->schema_json) : NULL;

		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "description", t->description ? t->description : "");
		if (!cJSON_IsObject(schema)) {
			cJSON_Delete(schema);
			schema = cJSON_Parse("{\"type\":\"object\"}");
		}
		cJSON_AddItemToObject(o, "input_schema", schema);
		cJSON_AddItemToArray(tools, o);
	}
}

static cJSON *tool_input(const char *json)
{
	cJSON *v = json ? cJSON_Parse(json) : NULL;

	/* The API insists on an object; a model's broken arguments are sent back as {}. */
	if (!cJSON_IsObject(v)) {
		cJSON_Delete(v);
		v = cJSON_CreateObject();
	}
	return v;
}

static char *build_body(const struct anthropic *a, const struct llm_request *req)
{
	cJSON *root = cJSON_CreateObject(), *msgs, *sys, *blk, *cc;
	char *out;

	cJSON_AddStringToObject(root, "model", req->model ? req->model : "");
	cJSON_AddNumberToObject(root, "max_tokens",
				req->max_tokens > 0 ? req->max_tokens : DEFAULT_MAX_TOKENS);
	if (req->system && *req->system) {
		/* One block marked for the prompt cache: the role's long static instructions. */
		sys = cJSON_AddArrayToObject(root, "system");
		blk = cJSON_CreateObject();
		cJSON_AddStringToObject(blk, "type", "text");
		cJSON_AddStringToObject(blk, "text", req->system);
		cc = cJSON_AddObjectToObject(blk, "cache_control");
		cJSON_AddStringToObject(cc, "type", "ephemeral");
		cJSON_AddItemToArray(sys, blk);
	}
	msgs = cJSON_AddArrayToObject(root, "messages");
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *m = &req->msgs[i];
		cJSON *o = cJSON_CreateObject(), *content;

		switch (m->kind) {
		case LLM_MSG_USER:
			cJSON_AddStringToObject(o, "role", "user");
			cJSON_AddStringToObject(o, "content", m->text ? m->text : "");
			break;
		case LLM_MSG_ASSISTANT:
			cJSON_AddStringToObject(o, "role", "assistant");
			content = cJSON_AddArrayToObject(o, "content");
			if (m->text && *m->text) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "text");
				cJSON_AddStringToObject(blk, "text", m->text);
				cJSON_AddItemToArray(content, blk);
			}
			for (size_t k = 0; k < m->n_calls; k++) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "tool_use");
				cJSON_AddStringToObject(blk, "id",
							m->calls[k].id ? m->calls[k].id : "");
				cJSON_AddStringToObject(blk, "name",
							m->calls[k].name ? m->calls[k].name : "");
				cJSON_AddItemToObject(blk, "input",
						      tool_input(m->calls[k].input_json));
				cJSON_AddItemToArray(content, blk);
			}
			if (!cJSON_GetArraySize(content)) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "text");
				cJSON_AddStringToObject(blk, "text", "(no text)");
				cJSON_AddItemToArray(content, blk);
			}
			break;
		case LLM_MSG_TOOL_RESULTS:
			cJSON_AddStringToObject(o, "role", "user");
			content = cJSON_AddArrayToObject(o, "content");
			for (size_t k = 0; k < m->n_results; k++) {
				const struct llm_tool_result *r = &m->results[k];

				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "tool_result");
				cJSON_AddStringToObject(blk, "tool_use_id",
							r->call_id ? r->call_id : "");
				cJSON_AddStringToObject(blk, "content",
							r->content ? r->content : "");
				if (r->is_error)
					cJSON_AddTrueToObject(blk, "is_error");
				cJSON_AddItemToArray(content, blk);
			}
			break;
		}
		cJSON_AddItemToArray(msgs, o);
	}
	add_tools(root, req);
	/* No JSON mode on this API: want_json relies on the prompt asking for JSON. */
	if (a->stream)
		cJSON_AddTrueToObject(root, "stream");
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

static int anthropic_complete(struct provider *p, const struct llm_request *req,
			      const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct anthropic *a = p->impl;
	struct call c = {.a = a};
	struct strvec headers = STRVEC_INIT;
	struct http_call hc = {0};
	struct http_stats st;
	struct timespec t0;
	char *body, *e = NULL;
	int rc;

	*err = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c.ps.hooks = hooks;
	c.ps.want_stream = c.ps.stream = a->stream;
	strbuf_init(&c.ps.text);
	strbuf_init(&c.ps.raw);
	if (a->stream)
		c.ps.sse = sse_new(on_event, &c.ps);
	body = build_body(a, req);
	strvec_push(&headers, "content-type: application/json");
	strvec_push(&headers, "anthropic-version: " ANTHROPIC_VERSION);
	strvec_pushf(&headers, "x-api-key: %s", a->api_key);
	if (a->stream)
		strvec_push(&headers, "accept: text/event-stream");
	hc.url = a->url;
	hc.headers = &headers;
	hc.body = body;
	hc.body_len = strlen(body);
	hc.ctx = &c;
	hc.begin = call_begin;
	hc.on_body = call_body;
	hc.judge = call_judge;
	rc = http_perform(&hc, &a->opt, hooks, &st, &e);
	if (rc == PROVIDER_OK) {
		fill_response(&c.ps, out);
		out->http_status = st.final_status;
		out->latency_ms = elapsed_ms(&t0);
	} else if (rc == PROVIDER_ERROR) {
		*err = xasprintf("anthropic: %s", e ? e : "request failed");
		http_redact(*err, a->api_key);
	}
	free(e);
	parse_clear(&c.ps);
	sse_free(c.ps.sse);
	strbuf_release(&c.ps.text);
	strbuf_release(&c.ps.raw);
	/* The key sat in a header line: do not leave it in freed memory. */
	for (size_t i = 0; i < headers.n; i++)
		memset(headers.v[i], 0, strlen(headers.v[i]));
	strvec_clear(&headers);
	free(body);
	return rc;
}

static void anthropic_destroy(struct provider *p)
{
	struct anthropic *a = p->impl;

	free(a->url);
	if (a->api_key)
		memset(a->api_key, 0, strlen(a->api_key));
	free(a->api_key);
	free(a);
}

static const struct provider_ops anthropic_ops = {
	.name = "anthropic",
	.complete = anthropic_complete,
	.destroy = anthropic_destroy,
};

struct provider *provider_anthropic_new(const char *base_url, const char *api_key, char **err)
{
	struct anthropic *a;
	char *url;

	*err = NULL;
	if (!api_key || !*api_key) {
		*err = xstrdup("anthropic: no API key (set ANTHROPIC_API_KEY)");
		return NULL;
	}
	if (strpbrk(api_key, "\r\n")) {
		*err = xstrdup("anthropic: the API key contains a line break");
		return NULL;
	}
	url = http_endpoint(base_url, ANTHROPIC_DEFAULT_BASE_URL, "/v1", "/v1/messages", err);
	if (!url) {
		char *e = xasprintf("anthropic: %s", *err);
		free(*err);
		*err = e;
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->pub.ops = &anthropic_ops;
	a->pub.simulated = false;
	a->pub.impl = a;
	a->url = url;
	a->api_key = xstrdup(api_key);
	a->stream = true;
	return &a->pub;
}

void provider_anthropic_set_http(struct provider *p, const struct http_options *opt)
{
	struct anthropic *a = p->impl;

	a->opt = *opt;
}

void provider_anthropic_set_stream(struct provider *p, bool stream)
{
	struct anthropic *a = p->impl;

	a->stream = stream;
}

int provider_anthropic_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			     char **err)
{
	struct anthropic a = {.stream = stream, .api_key = (char *)""};
	struct call c = {.a = &a};
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
	if (!call_body(&c, body, len))
		c.ps.bad_json = c.ps.bad_json || !stream;
	v = call_judge(&c, &res, &msg);
	if (v == HTTP_DONE) {
		fill_response(&c.ps, out);
		out->http_status = 200;
	} else {
		*err = xasprintf("anthropic: %s", msg ? msg : "bad response");
	}
	free(msg);
	parse_clear(&c.ps);
	sse_free(c.ps.sse);
	strbuf_release(&c.ps.text);
	strbuf_release(&c.ps.raw);
	strbuf_release(&res.body);
	return v == HTTP_DONE ? PROVIDER_OK : PROVIDER_ERROR;
}
