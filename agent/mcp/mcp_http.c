/* mcp_http — the Streamable HTTP transport of MCP: each message POSTed to the server's
 * endpoint; the answer is one JSON message or an event stream of them; the session id the
 * server gives at initialize goes with every later request, and the session is ended with
 * DELETE. Blocking, one transfer at a time (the client's lock). */
#include "config.h"

#include "mcp_http.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "mcp_client.h"
#include "sse.h"
#include "textsan.h"
#include "xalloc.h"

struct mcp_http {
	CURL *curl;
	char *url;
	struct strvec headers;
	char *session;  /* Mcp-Session-Id, NULL before initialize or without sessions */
	char *protocol; /* MCP-Protocol-Version */
};

/* One transfer's state. */
struct xfer {
	struct mcp_http *h;
	bool sse;  /* the answer is text/event-stream */
	bool done; /* on_msg has what it waited for */
	bool too_big;
	struct strbuf body; /* a JSON answer (or an error page) */
	struct sse_parser *parser;
	bool (*on_msg)(void *ctx, const char *text);
	void *ctx;
	const atomic_bool *cancel;
};

struct mcp_http *mcp_http_new(const char *url, const struct strvec *headers)
{
	struct mcp_http *h = xcalloc(1, sizeof(*h));

	h->curl = curl_easy_init();
	if (!h->curl)
		fatal("cannot initialise libcurl for an MCP server");
	h->url = xstrdup(url);
	for (size_t i = 0; headers && i < headers->n; i++)
		strvec_push(&h->headers, headers->v[i]);
	return h;
}

void mcp_http_set_protocol(struct mcp_http *h, const char *revision)
{
	free(h->protocol);
	h->protocol = xstrdup(revision);
}

void mcp_http_forget_session(struct mcp_http *h)
{
	free(h->session);
	h->session = NULL;
}

static struct curl_slist *header_list(const struct mcp_http *h, bool post)
{
	struct curl_slist *l = NULL;
	char *line;

	if (post) {
		l = curl_slist_append(l, "Content-Type: application/json");
		l = curl_slist_append(l, "Accept: application/json, text/event-stream");
	}
	if (h->session) {
		line = xasprintf("Mcp-Session-Id: %s", h->session);
		l = curl_slist_append(l, line);
		free(line);
	}
	if (h->protocol) {
		line = xasprintf("MCP-Protocol-Version: %s", h->protocol);
		l = curl_slist_append(l, line);
		free(line);
	}
	for (size_t i = 0; i < h->headers.n; i++)
		l = curl_slist_append(l, h->headers.v[i]);
	return l;
}

/* The value of header line `line` when its name is `name` (trimmed; caller frees). */
static char *header_value(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name), a, b;

	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return NULL;
	a = k + 1;
	while (a < n && (line[a] == ' ' || line[a] == '\t'))
		a++;
	b = n;
	while (b > a && (line[b - 1] == '\r' || line[b - 1] == '\n' || line[b - 1] == ' '))
		b--;
	return xstrndup(line + a, b - a);
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nitems;
	char *v;

	if ((v = header_value(buf, n, "Content-Type"))) {
		x->sse = strncasecmp(v, "text/event-stream", 17) == 0;
		free(v);
	} else if ((v = header_value(buf, n, "Mcp-Session-Id"))) {
		/* Visible ASCII only (the spec's rule): anything else is not kept. */
		bool ok = *v && strlen(v) < 256;
		for (const char *p = v; ok && *p; p++)
			ok = *p >= 0x21 && *p <= 0x7e;
		if (ok) {
			free(x->h->session);
			x->h->session = v;
		} else {
			free(v);
		}
	}
	return n;
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct xfer *x = ctx;

	(void)event;
	(void)len;
	if (!*data)
		return 0; /* a priming event or a keep-alive */
	if (x->on_msg(x->ctx, data)) {
		x->done = true;
		return 1;
	}
	return 0;
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;

	if (x->sse) {
		if (!x->parser)
			x->parser = sse_new(on_event, x);
		if (sse_feed(x->parser, buf, n) == 0)
			return n;
		if (!x->done)
			x->too_big = true; /* the parser refused an event */
		return 0;                  /* either way nothing more is read */
	}
	if (x->body.len + n > MCP_MAX_MESSAGE) {
		x->too_big = true;
		return 0;
	}
	strbuf_add(&x->body, buf, n);
	return n;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct xfer *x = arg;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return x->cancel && atomic_load(x->cancel) ? 1 : 0;
}

/* The first line of an error page, cleaned and short (caller frees). */
static char *page_line(const struct strbuf *body)
{
	size_t n = strcspn(body->buf, "\r\n");
	char *c = textsan_clean(body->buf, n > 200 ? 200 : n, 0);

	return c;
}

enum mcp_http_end mcp_http_post(struct mcp_http *h, const char *body, long timeout_ms,
                                const atomic_bool *cancel,
                                bool (*on_msg)(void *ctx, const char *text), void *ctx, bool *gone,
                                char **err)
{
	struct xfer x = {.h = h, .on_msg = on_msg, .ctx = ctx, .cancel = cancel};
	struct curl_slist *hl = header_list(h, true);
	bool had_session = h->session != NULL;
	enum mcp_http_end end = MCP_HTTP_OK;
	long status = 0;
	CURLcode rc;

	*gone = false;
	strbuf_init(&x.body);
	curl_easy_reset(h->curl);
	curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
	curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h->curl, CURLOPT_XFERINFODATA, &x);
	curl_easy_setopt(h->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS,
	                 timeout_ms < 10000 ? timeout_ms : 10000L);
	rc = curl_easy_perform(h->curl);
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	if (x.done) {
		end = MCP_HTTP_OK; /* stopped reading on purpose */
	} else if (rc == CURLE_ABORTED_BY_CALLBACK) {
		end = MCP_HTTP_CANCELLED;
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		end = MCP_HTTP_TIMEOUT;
	} else if (x.too_big) {
		*err = xasprintf("sent a message larger than %u MiB", MCP_MAX_MESSAGE >> 20);
		end = MCP_HTTP_FAILED;
	} else if (rc != CURLE_OK) {
		*err = xasprintf("%s", curl_easy_strerror(rc));
		end = MCP_HTTP_FAILED;
	} else if (status >= 400) {
		char *line = page_line(&x.body);
		*gone = status == 404 && had_session;
		if (*gone)
			mcp_http_forget_session(h);
		*err = xasprintf("HTTP %ld%s%s", status, *line ? ": " : "", line);
		free(line);
		end = MCP_HTTP_FAILED;
	} else if (x.sse) {
		if (x.parser)
			sse_finish(x.parser);
	} else if (x.body.len) {
		on_msg(ctx, x.body.buf);
	}
	sse_free(x.parser);
	strbuf_release(&x.body);
	curl_slist_free_all(hl);
	return end;
}

static size_t discard(char *buf, size_t size, size_t nmemb, void *arg)
{
	(void)buf;
	(void)arg;
	return size * nmemb;
}

void mcp_http_free(struct mcp_http *h)
{
	if (!h)
		return;
	if (h->session) {
		struct curl_slist *hl = header_list(h, false);
		curl_easy_reset(h->curl);
		curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
		curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, "DELETE");
		curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, discard);
		curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hl);
		curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, 2000L);
		curl_easy_perform(h->curl); /* best effort: a server may not allow it (405) */
		curl_slist_free_all(hl);
	}
	curl_easy_cleanup(h->curl);
	free(h->url);
	strvec_clear(&h->headers);
	free(h->session);
	free(h->protocol);
	free(h);
}
