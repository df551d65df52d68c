/* provider_http — the part of the HTTP providers that does not depend on the wire format. */
#include "config.h"

#include "provider_http.h"

#include <stdlib.h>
#include <string.h>

#include "schemas.h"
#include "tool.h"
#include "xalloc.h"

void phttp_conf_init(struct phttp_conf *cf, char *url, const char *api_key)
{
	memset(cf, 0, sizeof(*cf));
	cf->url = url;
	cf->api_key = (api_key && *api_key) ? xstrdup(api_key) : NULL;
	cf->stream = true;
}

void phttp_conf_release(struct phttp_conf *cf)
{
	free(cf->url);
	if (cf->api_key)
		memset(cf->api_key, 0, strlen(cf->api_key));
	free(cf->api_key);
	cf->url = cf->api_key = NULL;
}

void phttp_init(struct phttp *h, const struct phttp_wire *wire, void *ctx,
		const struct llm_hooks *hooks, const struct phttp_conf *cf)
{
	memset(h, 0, sizeof(*h));
	clock_gettime(CLOCK_MONOTONIC, &h->t0);
	h->wire = wire;
	h->ctx = ctx;
	h->cf = cf;
	h->hooks = hooks;
	strvec_push(&h->headers, "content-type: application/json");
	h->want_stream = h->stream = cf->stream;
	strbuf_init(&h->text);
	strbuf_init(&h->raw);
	if (h->stream)
		h->sse = sse_new(wire->on_event, ctx);
}

/* Forgets what an attempt parsed, so that a retry starts clean. */
static void phttp_clear(struct phttp *h)
{
	h->wire->clear(h->ctx);
	free(h->model);
	free(h->stop_reason);
	h->model = h->stop_reason = NULL;
	strbuf_reset(&h->text);
	strbuf_reset(&h->raw);
	memset(&h->usage, 0, sizeof(h->usage));
	h->complete = h->bad_json = false;
	h->over_limit = 0;
	h->shown = 0;
	h->stream = h->want_stream;
	h->sniffed = false;
	h->bom = 0;
	if (h->sse)
		sse_reset(h->sse);
}

static void phttp_release(struct phttp *h)
{
	phttp_clear(h);
	sse_free(h->sse);
	h->sse = NULL;
	strbuf_release(&h->text);
	strbuf_release(&h->raw);
	/* A key may sit in a header line: do not leave it in freed memory. */
	for (size_t i = 0; i < h->headers.n; i++)
		memset(h->headers.v[i], 0, strlen(h->headers.v[i]));
	strvec_clear(&h->headers);
}

void phttp_add_text(struct phttp *h, const char *s)
{
	size_t n = strlen(s);

	strbuf_add(&h->text, s, n);
	if (h->hooks && h->hooks->on_delta && n) {
		h->hooks->on_delta(h->hooks->ctx, s, n);
		h->shown += n;
	}
}

const char *phttp_discarded(const struct phttp *h)
{
	return h->shown ? "; partial text discarded" : "";
}

void phttp_set_str(char **dst, const cJSON *v)
{
	if (cJSON_IsString(v)) {
		free(*dst);
		*dst = xstrdup(v->valuestring);
	}
}

long phttp_num_field(const cJSON *obj, const char *key, long fallback)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e15
		       ? (long)v->valuedouble
		       : fallback;
}

/* ---- the http_call callbacks ---------------------------------------------------------- */

static void call_begin(void *ctx, int attempt)
{
	phttp_clear(ctx);
}

static bool call_body(void *ctx, const char *buf, size_t n)
{
	struct phttp *h = ctx;

	if (!h->sniffed) {
		static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
		size_t k = 0;

		/* A UTF-8 byte-order mark (some Windows and .NET servers) is not the start of
		 * the answer: drop it, or a JSON answer reads as a broken stream and a stream
		 * loses its first event. It may come split across writes. */
		while (h->bom < 3 && k < n && buf[k] == bom[h->bom]) {
			h->bom++;
			k++;
		}
		if (h->bom > 0 && h->bom < 3 && k < n)
			h->bom = 3; /* not a BOM: the bytes are lost, and the parse will say so */
		if (h->bom > 0 && h->bom < 3)
			return true;
		buf += k;
		n -= k;
		k = 0;
		while (k < n &&
		       (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r' || buf[k] == '\n'))
			k++;
		if (k == n)
			return true; /* blank so far: nothing to parse either way */
		h->sniffed = true;
		/* Asked to stream, answered with one JSON object: some servers ignore "stream". */
		if (buf[k] == '{')
			h->stream = false;
	}
	if (!h->stream) {
		if (h->raw.len + n > PHTTP_MAX_BODY) {
			h->over_limit = PHTTP_MAX_BODY;
			return false;
		}
		strbuf_add(&h->raw, buf, n);
		return true;
	}
	int rc = sse_feed(h->sse, buf, n);
	if (rc == SSE_TOO_LARGE)
		h->over_limit = SSE_MAX_EVENT;
	return rc == 0;
}

/* Judges a 2xx body once it has fully arrived (or was refused by the parser). */
static enum http_verdict judge_body(struct phttp *h, int status, char **msg)
{
	enum http_verdict v;

	/* What arrived was cut at the limit: parsing it would only call it malformed. The
	 * same request would bring the same answer, so it is not retried. */
	if (h->over_limit) {
		*msg = xasprintf("HTTP %d %s larger than the %zu MiB limit%s", status,
				 h->stream ? "stream with an event" : "answer",
				 h->over_limit / (1024 * 1024), phttp_discarded(h));
		return HTTP_FAIL;
	}
	h->wire->finish(h->ctx);
	if (h->wire->body_error(h->ctx, status, msg, &v))
		return v;
	if (h->bad_json) {
		*msg = xasprintf("HTTP %d with malformed JSON in the response%s", status,
				 phttp_discarded(h));
		return HTTP_RETRY;
	}
	if (!h->complete) {
		*msg = xasprintf("HTTP %d stream ended before %s (truncated)%s", status,
				 h->wire->end_marker, phttp_discarded(h));
		return HTTP_RETRY;
	}
	return HTTP_DONE;
}

static enum http_verdict call_judge(void *ctx, const struct http_result *res, char **msg)
{
	struct phttp *h = ctx;
	enum http_verdict v;
	char *kind = NULL;

	if (res->transport_error) {
		if (res->status >= 200 && res->status < 300)
			*msg = xasprintf("HTTP %d stream cut: %s%s", res->status,
					 res->transport_msg, phttp_discarded(h));
		else
			*msg = xasprintf("connection error: %s", res->transport_msg);
		v = HTTP_RETRY;
	} else if (res->status < 200 || res->status >= 300) {
		*msg = http_describe_error(res->status, res->body.buf, res->body.len, &kind);
		/* A 404 that is not an API's error object (FastAPI's {"detail":"Not Found"}, an
		 * HTML page) means the URL is wrong, not the model: name the URL tried. */
		if (res->status == 404 && !kind) {
			char *m = xasprintf("%s (POST %s: is the base URL right? often a missing "
					    "/v1)",
					    *msg, h->cf->url);

			free(*msg);
			*msg = m;
		}
		v = http_status_retryable(res) ? HTTP_RETRY : HTTP_FAIL;
		v = h->wire->status_verdict(h->ctx, res, kind, v);
		free(kind);
	} else {
		v = judge_body(h, res->status, msg);
	}
	if (*msg && h->cf->api_key)
		http_redact(*msg, h->cf->api_key);
	return v;
}

/* ---- the answer ----------------------------------------------------------------------- */

static void fill_response(struct phttp *h, struct llm_response *out)
{
	out->text = xstrdup(h->text.buf);
	h->wire->fill_calls(h->ctx, out);
	out->stop_reason = xstrdup(h->stop_reason ? h->stop_reason : "");
	out->usage = h->usage;
	out->model = xstrdup(h->model ? h->model : "");
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (long)((t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000);
}

int phttp_complete(struct phttp *h, struct llm_response *out, char **err)
{
	struct http_call hc = {0};
	struct http_stats st = {0};
	char *e = NULL, *body = NULL;
	int rc;

	*err = NULL;
	if (h->cf->stream)
		strvec_push(&h->headers, "accept: text/event-stream");
	hc.url = h->cf->url;
	hc.headers = &h->headers;
	hc.ctx = h;
	hc.begin = call_begin;
	hc.on_body = call_body;
	hc.judge = call_judge;
	for (;;) {
		free(body);
		body = h->wire->build_body(h->ctx);
		hc.body = body;
		hc.body_len = strlen(body);
		if (h->hooks && (h->hooks->on_request || h->hooks->on_request_printed)) {
			const char *key = h->cf->api_key;

			/* The key travels in a header; a body can still hold it when a tool
			 * result read it (a .env): the kept copy never does. Hidden, it is no
			 * longer the body as printed. */
			if (key && *key && memmem(body, hc.body_len, key, strlen(key))) {
				char *copy = xstrdup(body);

				http_redact(copy, key);
				if (h->hooks->on_request)
					h->hooks->on_request(h->hooks->ctx, copy, strlen(copy));
				free(copy);
			} else if (h->hooks->on_request_printed) {
				h->hooks->on_request_printed(h->hooks->ctx, body, hc.body_len);
			} else {
				h->hooks->on_request(h->hooks->ctx, body, hc.body_len);
			}
		}
		free(e);
		e = NULL;
		rc = http_perform(&hc, &h->cf->opt, h->hooks, &st, &e);
		if (!h->wire->again || !h->wire->again(h->ctx, rc))
			break;
	}
	if (rc == PROVIDER_OK) {
		fill_response(h, out);
		out->http_status = st.final_status;
		out->latency_ms = elapsed_ms(&h->t0);
	} else if (rc == PROVIDER_ERROR) {
		/* The status the server sent (a 401 with a JSON error body: 401), 0 when no
		 * answer came. */
		out->http_status = st.final_status;
		*err = xasprintf("%s: %s", h->wire->name, e ? e : "request failed");
		if (h->cf->api_key)
			http_redact(*err, h->cf->api_key);
	}
	free(e);
	phttp_release(h);
	free(body);
	return rc;
}

int phttp_parse(struct phttp *h, const char *body, size_t len, struct llm_response *out, char **err)
{
	struct http_result res = {.status = 200, .should_retry = -1, .retry_after_ms = -1};
	enum http_verdict v;
	char *msg = NULL;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	strbuf_init(&res.body);
	call_begin(h, 1);
	if (!call_body(h, body, len) && !h->want_stream)
		h->bad_json = true;
	v = call_judge(h, &res, &msg);
	if (v == HTTP_DONE) {
		fill_response(h, out);
		out->http_status = 200;
	} else {
		*err = xasprintf("%s: %s", h->wire->name, msg ? msg : "bad response");
	}
	free(msg);
	phttp_release(h);
	strbuf_release(&res.body);
	return v == HTTP_DONE ? PROVIDER_OK : PROVIDER_ERROR;
}

/* ---- what a model stopped for --------------------------------------------------------- */

char *phttp_empty_answer_reason(int status, const char *stop_reason, const char *refusal)
{
	if (refusal && *refusal) {
		char *r = http_clean_text(refusal), *m;

		m = xasprintf("HTTP %d: the model refused: %s", status, r);
		free(r);
		return m;
	}
	if (!stop_reason)
		return NULL;
	if (!strcmp(stop_reason, "length") || !strcmp(stop_reason, "max_tokens"))
		return xasprintf("HTTP %d: the answer was cut off at the token limit (stop reason "
				 "\"%s\") before any text: raise max_tokens",
				 status, stop_reason);
	if (!strcmp(stop_reason, "content_filter"))
		return xasprintf("HTTP %d: the server's content filter stopped the answer (stop "
				 "reason \"content_filter\") before any text",
				 status);
	if (!strcmp(stop_reason, "refusal"))
		return xasprintf("HTTP %d: the model refused to answer (stop reason \"refusal\")",
				 status);
	if (!strcmp(stop_reason, "model_context_window_exceeded"))
		return xasprintf("HTTP %d: the model's context window is full (stop reason "
				 "\"model_context_window_exceeded\") before any text",
				 status);
	return NULL;
}

/* ---- tool-call arguments a model broke ------------------------------------------------- */

/* Rewrites almost-JSON the way models break it: single-quoted strings, trailing commas,
 * and text cut off inside a string, after a key or with brackets left open. */
static char *mend(const char *s)
{
	struct strbuf out = STRBUF_INIT;
	char stack[64];
	size_t depth = 0;
	char quote = 0;

	strbuf_init(&out);
	for (const char *p = s; *p; p++) {
		char c = *p;

		if (quote) {
			if (c == '\\' && p[1]) {
				if (quote == '\'' && p[1] == '\'') {
					strbuf_addc(&out, '\'');
				} else {
					strbuf_addc(&out, c);
					strbuf_addc(&out, p[1]);
				}
				p++;
			} else if (c == quote) {
				strbuf_addc(&out, '"');
				quote = 0;
			} else if (c == '"') {
				strbuf_adds(&out, "\\\""); /* inside a single-quoted string */
			} else if (c == '\n') {
				strbuf_adds(&out, "\\n");
			} else {
				strbuf_addc(&out, c);
			}
			continue;
		}
		if (c == '"' || c == '\'') {
			quote = c;
			strbuf_addc(&out, '"');
		} else if (c == '{' || c == '[') {
			if (depth == sizeof(stack))
				break;
			stack[depth++] = c == '{' ? '}' : ']';
			strbuf_addc(&out, c);
		} else if (c == '}' || c == ']') {
			/* A trailing comma before a closing bracket. */
			while (out.len && strchr(", ", out.buf[out.len - 1]))
				out.buf[--out.len] = '\0';
			if (depth)
				depth--;
			strbuf_addc(&out, c);
		} else {
			strbuf_addc(&out, c);
		}
	}
	if (quote)
		strbuf_addc(&out, '"');
	while (out.len && strchr(", \t\r\n", out.buf[out.len - 1]))
		out.buf[--out.len] = '\0';
	if (out.len && out.buf[out.len - 1] == ':')
		strbuf_adds(&out, "null");
	while (depth)
		strbuf_addc(&out, stack[--depth]);
	return strbuf_detach(&out);
}

char *phttp_repair_args(const char *json, bool *was_bad)
{
	cJSON *v;
	char *fixed, *out;

	*was_bad = false;
	if (!json || !*json)
		return xstrdup("{}");
	v = cJSON_Parse(json);
	if (cJSON_IsObject(v)) {
		cJSON_Delete(v);
		return xstrdup(json);
	}
	cJSON_Delete(v);
	*was_bad = true;
	fixed = mend(json);
	v = cJSON_Parse(fixed);
	free(fixed);
	if (!cJSON_IsObject(v)) {
		cJSON_Delete(v);
		return xstrdup("{}");
	}
	out = cJSON_PrintUnformatted(v);
	cJSON_Delete(v);
	if (!out)
		fatal("cJSON_PrintUnformatted failed");
	fixed = xstrdup(out);
	cJSON_free(out);
	return fixed;
}

char *phttp_bad_args_note(const char *name, const char *sent, const char *content)
{
	return xasprintf("Your arguments for %s were not valid JSON; they were replaced by %s. "
			 "Call the tool again with a valid JSON object.%s%s",
			 name && *name ? name : "the tool", sent, content && *content ? "\n" : "",
			 content ? content : "");
}

void phttp_add_str(struct strbuf *sb, const char *s)
{
	strbuf_add_json(sb, s, strlen(s), 0);
}

void phttp_add_str_memo(struct strbuf *sb, struct schemas *memo, const char *s)
{
	const char *text = memo ? schemas_string(memo, s) : NULL;

	if (text)
		strbuf_adds(sb, text);
	else
		phttp_add_str(sb, s);
}

void phttp_add_tool_members(struct strbuf *sb, struct schemas *memo, const struct tool_def *t,
			    const char *schema_key)
{
	/* cJSON left out a member whose string was NULL */
	if (t->name) {
		PHTTP_LIT(sb, "\"name\":");
		phttp_add_str_memo(sb, memo, t->name);
		strbuf_addc(sb, ',');
	}
	PHTTP_LIT(sb, "\"description\":");
	phttp_add_str_memo(sb, memo, t->description ? t->description : "");
	strbuf_addc(sb, ',');
	strbuf_adds(sb, schema_key);
	strbuf_adds(sb, schemas_object(memo, t->schema_json));
}

void phttp_body_start(struct strbuf *sb, const atomic_size_t *last)
{
	strbuf_init(sb);
	/* A conversation grows between its calls: a little more than the last body. */
	strbuf_grow(sb, atomic_load_explicit(last, memory_order_relaxed) * 5 / 4 + 1024);
}

void phttp_body_done(const struct strbuf *sb, atomic_size_t *last)
{
	atomic_store_explicit(last, sb->len, memory_order_relaxed);
}
