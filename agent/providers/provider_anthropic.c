/* provider_anthropic — Anthropic Messages: request building, SSE and JSON answers, errors. */
#include "config.h"

#include "provider_anthropic.h"

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

#define DEFAULT_MAX_TOKENS 8192

struct anthropic {
	struct provider pub;
	struct phttp_conf cf;
	atomic_size_t last_body; /* the size of the last body built: the next one's guess */
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
	struct phttp h;         /* text, raw body, SSE, model, usage, completeness */
	struct block *blocks;   /* by content index */
	size_t n_blocks, cap_blocks;
	bool started;
	char *error_type, *error_msg;
	char *explanation; /* a refusal's stop_details.explanation */
};

/* One call; the phttp_wire callbacks and the SSE parser get a struct call *. */
struct call {
	struct parse ps;
	struct anthropic *a; /* its last_body changes */
	const struct llm_request *req; /* NULL in provider_anthropic_parse */
};

static void parse_clear(void *ctx)
{
	struct parse *ps = &((struct call *)ctx)->ps;

	for (size_t i = 0; i < ps->n_blocks; i++) {
		free(ps->blocks[i].id);
		free(ps->blocks[i].name);
		free(ps->blocks[i].initial_input);
		strbuf_release(&ps->blocks[i].json);
	}
	free(ps->blocks);
	ps->blocks = NULL;
	ps->n_blocks = ps->cap_blocks = 0;
	free(ps->error_type);
	free(ps->error_msg);
	ps->error_type = ps->error_msg = NULL;
	free(ps->explanation);
	ps->explanation = NULL;
	ps->started = false;
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

static void take_usage(struct parse *ps, const cJSON *u)
{
	struct llm_usage *us = &ps->h.usage;

	if (!cJSON_IsObject(u))
		return;
	us->reported = true;
	us->input_tokens = phttp_num_field(u, "input_tokens", us->input_tokens);
	us->output_tokens = phttp_num_field(u, "output_tokens", us->output_tokens);
	us->cache_write_tokens =
		phttp_num_field(u, "cache_creation_input_tokens", us->cache_write_tokens);
	us->cache_read_tokens =
		phttp_num_field(u, "cache_read_input_tokens", us->cache_read_tokens);
}

static void take_error(struct parse *ps, const cJSON *obj)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, "error");

	free(ps->error_type);
	free(ps->error_msg);
	ps->error_type = ps->error_msg = NULL;
	if (cJSON_IsObject(e)) {
		phttp_set_str(&ps->error_type, cJSON_GetObjectItemCaseSensitive(e, "type"));
		phttp_set_str(&ps->error_msg, cJSON_GetObjectItemCaseSensitive(e, "message"));
	} else if (cJSON_IsString(e)) {
		ps->error_msg = xstrdup(e->valuestring);
	}
	if (!ps->error_type)
		ps->error_type = xstrdup("error");
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct parse *ps = &((struct call *)ctx)->ps;
	cJSON *obj = cJSON_ParseWithLength(data, len);
	const cJSON *type, *delta, *cb, *details;
	struct block *b;
	int rc = 0;

	if (!obj || !cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		ps->h.bad_json = true;
		return 1;
	}
	type = cJSON_GetObjectItemCaseSensitive(obj, "type");
	const char *t = cJSON_IsString(type) ? type->valuestring : event;

	/* A bare JSON line or an `error:` field (sse.h): an error only if it says so. */
	if (!strcmp(event, SSE_EVENT_RAW) || !strcmp(event, SSE_EVENT_ERROR)) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(obj, "error");

		if (e && !cJSON_IsNull(e))
			t = "error";
		else if (!strcmp(event, SSE_EVENT_RAW))
			t = "";
	}

	if (!strcmp(t, "message_start")) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "message");

		ps->started = true;
		phttp_set_str(&ps->h.model, cJSON_GetObjectItemCaseSensitive(m, "model"));
		take_usage(ps, cJSON_GetObjectItemCaseSensitive(m, "usage"));
	} else if (!strcmp(t, "content_block_start")) {
		b = block_at(ps, cJSON_GetObjectItemCaseSensitive(obj, "index"));
		cb = cJSON_GetObjectItemCaseSensitive(obj, "content_block");
		type = cJSON_GetObjectItemCaseSensitive(cb, "type");
		if (b && cJSON_IsString(type) && !strcmp(type->valuestring, "tool_use")) {
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(cb, "input");

			b->is_tool = true;
			phttp_set_str(&b->id, cJSON_GetObjectItemCaseSensitive(cb, "id"));
			phttp_set_str(&b->name, cJSON_GetObjectItemCaseSensitive(cb, "name"));
			if (cJSON_IsObject(in) && in->child) {
				free(b->initial_input);
				b->initial_input = cJSON_PrintUnformatted(in);
			}
		} else if (b && cJSON_IsString(type) && !strcmp(type->valuestring, "text")) {
			const cJSON *tx = cJSON_GetObjectItemCaseSensitive(cb, "text");

			if (cJSON_IsString(tx) && tx->valuestring[0])
				phttp_add_text(&ps->h, tx->valuestring);
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
					phttp_add_text(&ps->h, v->valuestring);
			} else if (!strcmp(type->valuestring, "input_json_delta")) {
				v = cJSON_GetObjectItemCaseSensitive(delta, "partial_json");
				if (cJSON_IsString(v))
					strbuf_adds(&b->json, v->valuestring);
			}
			/* thinking_delta, signature_delta, citations_delta: not ours to show. */
		}
	} else if (!strcmp(t, "message_delta")) {
		delta = cJSON_GetObjectItemCaseSensitive(obj, "delta");
		phttp_set_str(&ps->h.stop_reason,
			      cJSON_GetObjectItemCaseSensitive(delta, "stop_reason"));
		details = cJSON_GetObjectItemCaseSensitive(delta, "stop_details");
		phttp_set_str(&ps->explanation,
			      cJSON_GetObjectItemCaseSensitive(details, "explanation"));
		take_usage(ps, cJSON_GetObjectItemCaseSensitive(obj, "usage"));
	} else if (!strcmp(t, "message_stop")) {
		ps->h.complete = true;
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
		ps->h.bad_json = true;
		cJSON_Delete(root);
		return;
	}
	type = cJSON_GetObjectItemCaseSensitive(root, "type");
	if (cJSON_IsString(type) && !strcmp(type->valuestring, "error")) {
		take_error(ps, root);
		cJSON_Delete(root);
		return;
	}
	phttp_set_str(&ps->h.model, cJSON_GetObjectItemCaseSensitive(root, "model"));
	phttp_set_str(&ps->h.stop_reason, cJSON_GetObjectItemCaseSensitive(root, "stop_reason"));
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
				phttp_add_text(&ps->h, tx->valuestring);
		} else if (!strcmp(it->valuestring, "tool_use")) {
			struct block *b;
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(item, "input");

			idx_num.type = cJSON_Number;
			idx_num.valuedouble = (double)idx;
			b = block_at(ps, &idx_num);
			if (!b)
				continue;
			b->is_tool = true;
			phttp_set_str(&b->id, cJSON_GetObjectItemCaseSensitive(item, "id"));
			phttp_set_str(&b->name, cJSON_GetObjectItemCaseSensitive(item, "name"));
			if (cJSON_IsObject(in)) {
				char *s = cJSON_PrintUnformatted(in);

				strbuf_adds(&b->json, s ? s : "{}");
				cJSON_free(s);
			}
		}
		idx++;
	}
	ps->started = ps->h.complete = true;
	cJSON_Delete(root);
}

static void fill_calls(void *ctx, struct llm_response *out)
{
	struct parse *ps = &((struct call *)ctx)->ps;
	size_t n = 0;

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
}

/* Mid-stream error types worth another attempt (the rest would fail again). */
static bool error_type_transient(const char *t)
{
	return t && (!strcmp(t, "overloaded_error") || !strcmp(t, "api_error") ||
		     !strcmp(t, "rate_limit_error") || !strcmp(t, "timeout_error"));
}

static void finish(void *ctx)
{
	struct parse *ps = &((struct call *)ctx)->ps;

	if (ps->h.stream)
		sse_finish(ps->h.sse);
	else
		parse_message(ps, ps->h.raw.buf, ps->h.raw.len);
}

static bool body_error(void *ctx, int status, char **msg, enum http_verdict *verdict)
{
	struct parse *ps = &((struct call *)ctx)->ps;
	char *t, *m;
	size_t n_tools = 0;
	bool refused;

	if (!ps->error_type) {
		/* No text and no tool use, with a reason (refusal, max_tokens): say why. */
		for (size_t i = 0; i < ps->n_blocks; i++)
			n_tools += ps->blocks[i].is_tool;
		if (!ps->h.complete || ps->h.text.len || n_tools)
			return false;
		refused = ps->h.stop_reason && !strcmp(ps->h.stop_reason, "refusal");
		*msg = phttp_empty_answer_reason(status, ps->h.stop_reason,
						 refused ? ps->explanation : NULL);
		*verdict = HTTP_FAIL;
		return *msg != NULL;
	}
	t = http_clean_text(ps->error_type);
	m = http_clean_text(ps->error_msg ? ps->error_msg : "(no message)");
	*msg = xasprintf("HTTP %d then error event %s: %s%s", status, t, m,
			 phttp_discarded(&ps->h));
	free(t);
	free(m);
	*verdict = error_type_transient(ps->error_type) ? HTTP_RETRY : HTTP_FAIL;
	return true;
}

static enum http_verdict status_verdict(void *ctx, const struct http_result *res,
					const char *kind, enum http_verdict v)
{
	/* A spent balance is not transient, whatever the status says. */
	if (kind && (!strcmp(kind, "billing_error") || !strcmp(kind, "insufficient_quota")))
		return HTTP_FAIL;
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
		strbuf_addc(sb, '{');
		phttp_add_tool_members(sb, memo, t, "\"input_schema\":");
		strbuf_addc(sb, '}');
	}
	strbuf_addc(sb, ']');
	schemas_free(own);
}

/* A call's input: the API insists on an object, so a model's broken arguments are sent
 * back repaired. Reprinted by cJSON, as the tree did: its spacing and numbers are cJSON's. */
static void add_tool_input(struct strbuf *sb, const char *json)
{
	bool bad;
	char *fixed = phttp_repair_args(json, &bad);
	cJSON *v = cJSON_Parse(fixed);

	free(fixed);
	if (cJSON_IsObject(v)) {
		char *p = cJSON_PrintUnformatted(v);

		if (!p)
			fatal("cJSON_PrintUnformatted failed");
		strbuf_adds(sb, p);
		cJSON_free(p);
	} else {
		PHTTP_LIT(sb, "{}");
	}
	cJSON_Delete(v);
}

/* The call a tool result answers, among the turns before message `before`. */
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

static void add_assistant(struct strbuf *sb, const struct llm_msg *m)
{
	PHTTP_LIT(sb, "{\"role\":\"assistant\",\"content\":[");
	if (m->text && *m->text) {
		PHTTP_LIT(sb, "{\"type\":\"text\",\"text\":");
		phttp_add_str(sb, m->text);
		strbuf_addc(sb, '}');
	}
	for (size_t k = 0; k < m->n_calls; k++) {
		const struct llm_tool_call *c = &m->calls[k];

		if (k || (m->text && *m->text))
			strbuf_addc(sb, ',');
		PHTTP_LIT(sb, "{\"type\":\"tool_use\",\"id\":");
		phttp_add_str(sb, c->id ? c->id : "");
		PHTTP_LIT(sb, ",\"name\":");
		phttp_add_str(sb, c->name ? c->name : "");
		PHTTP_LIT(sb, ",\"input\":");
		add_tool_input(sb, c->input_json);
		strbuf_addc(sb, '}');
	}
	if (!m->n_calls && !(m->text && *m->text))
		PHTTP_LIT(sb, "{\"type\":\"text\",\"text\":\"(no text)\"}");
	PHTTP_LIT(sb, "]}");
}

/* Message i's results, as the user turn that answers the calls. */
static void add_results(struct strbuf *sb, const struct llm_request *req, size_t i)
{
	const struct llm_msg *m = &req->msgs[i];

	PHTTP_LIT(sb, "{\"role\":\"user\",\"content\":[");
	for (size_t k = 0; k < m->n_results; k++) {
		const struct llm_tool_result *r = &m->results[k];
		const struct llm_tool_call *tc = call_of(req, i, r->call_id);
		bool bad = false;
		char *sent = phttp_repair_args(tc ? tc->input_json : NULL, &bad);

		if (k)
			strbuf_addc(sb, ',');
		PHTTP_LIT(sb, "{\"type\":\"tool_result\",\"tool_use_id\":");
		phttp_add_str(sb, r->call_id ? r->call_id : "");
		PHTTP_LIT(sb, ",\"content\":");
		if (tc && bad) {
			char *note = phttp_bad_args_note(tc->name, sent, r->content);

			phttp_add_str(sb, note);
			free(note);
		} else {
			phttp_add_str(sb, r->content ? r->content : "");
		}
		free(sent);
		if (r->is_error)
			PHTTP_LIT(sb, ",\"is_error\":true");
		strbuf_addc(sb, '}');
	}
	PHTTP_LIT(sb, "]}");
}

/* Written straight into one buffer, byte for byte as cJSON_PrintUnformatted printed the
 * tree this used to build (on_request_printed relies on it; test_bodies checks it). */
static char *build_body(struct anthropic *a, const struct llm_request *req)
{
	struct strbuf sb;

	phttp_body_start(&sb, &a->last_body);
	PHTTP_LIT(&sb, "{\"model\":");
	phttp_add_str(&sb, req->model ? req->model : "");
	PHTTP_LIT(&sb, ",\"max_tokens\":");
	/* cJSON: "%d" for a whole number */
	strbuf_addi(&sb, req->max_tokens > 0 ? req->max_tokens : DEFAULT_MAX_TOKENS);
	if (req->system && *req->system) {
		/* One block marked for the prompt cache: the role's long static instructions. */
		PHTTP_LIT(&sb, ",\"system\":[{\"type\":\"text\",\"text\":");
		phttp_add_str_memo(&sb, req->schemas, req->system);
		PHTTP_LIT(&sb, ",\"cache_control\":{\"type\":\"ephemeral\"}}]");
	}
	PHTTP_LIT(&sb, ",\"messages\":[");
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *m = &req->msgs[i];

		if (i)
			strbuf_addc(&sb, ',');
		switch (m->kind) {
		case LLM_MSG_USER:
			PHTTP_LIT(&sb, "{\"role\":\"user\",\"content\":");
			phttp_add_str(&sb, m->text ? m->text : "");
			strbuf_addc(&sb, '}');
			break;
		case LLM_MSG_ASSISTANT:
			add_assistant(&sb, m);
			break;
		case LLM_MSG_TOOL_RESULTS:
			add_results(&sb, req, i);
			break;
		}
	}
	strbuf_addc(&sb, ']');
	add_tools(&sb, req);
	/* No JSON mode on this API: want_json relies on the prompt asking for JSON. */
	if (a->cf.stream)
		PHTTP_LIT(&sb, ",\"stream\":true");
	strbuf_addc(&sb, '}');
	phttp_body_done(&sb, &a->last_body);
	return strbuf_detach(&sb);
}

static char *call_build_body(void *ctx)
{
	const struct call *c = ctx;

	return build_body(c->a, c->req);
}

static const struct phttp_wire anthropic_wire = {
	.name = "anthropic",
	.end_marker = "message_stop",
	.on_event = on_event,
	.clear = parse_clear,
	.finish = finish,
	.body_error = body_error,
	.status_verdict = status_verdict,
	.fill_calls = fill_calls,
	.build_body = call_build_body,
};

static int anthropic_complete(struct provider *p, const struct llm_request *req,
			      const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct anthropic *a = p->impl;
	struct call c = {.a = a, .req = req};

	phttp_init(&c.ps.h, &anthropic_wire, &c, hooks, &a->cf);
	strvec_push(&c.ps.h.headers, "anthropic-version: " ANTHROPIC_VERSION);
	strvec_pushf(&c.ps.h.headers, "x-api-key: %s", a->cf.api_key);
	return phttp_complete(&c.ps.h, out, err);
}

static void anthropic_destroy(struct provider *p)
{
	struct anthropic *a = p->impl;

	phttp_conf_release(&a->cf);
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
	phttp_conf_init(&a->cf, url, api_key);
	atomic_init(&a->last_body, 0);
	return &a->pub;
}

void provider_anthropic_set_http(struct provider *p, const struct http_options *opt)
{
	struct anthropic *a = p->impl;

	a->cf.opt = *opt;
}

void provider_anthropic_set_stream(struct provider *p, bool stream)
{
	struct anthropic *a = p->impl;

	a->cf.stream = stream;
}

char *provider_anthropic_body(struct provider *p, const struct llm_request *req)
{
	return build_body(p->impl, req);
}

int provider_anthropic_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			     char **err)
{
	const struct phttp_conf cf = {.stream = stream};
	struct call c = {.a = NULL}; /* no request is built */

	phttp_init(&c.ps.h, &anthropic_wire, &c, NULL, &cf);
	return phttp_parse(&c.ps.h, body, len, out, err);
}
