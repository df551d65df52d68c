/* mcp_http — the Streamable HTTP transport of MCP: POSTed messages, their answers (JSON or
 * an event stream, resumed with GET and Last-Event-ID when it ends early), the standalone
 * GET stream, the session id, DELETE at the end. Each transfer is a `struct xfer` run by
 * transfer() on a connection of its own, so several threads may talk at once. */
#include "config.h"

#include "mcp_http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "mcp_client.h"
#include "oauth_session.h"
#include "sse.h"
#include "textsan.h"
#include "xalloc.h"

#define SLICE_MS 50           /* how often a transfer looks at its stop flag and clock */
#define RETRY_DEFAULT_MS 1000 /* the wait before a resumption when the server named none */
#define RETRY_MAX_MS 60000    /* a server's retry: beyond this is taken as this */
#define RESUME_MAX 5          /* resumptions in a row that bring nothing new */
#define IDLE_CONNS 2          /* connections kept for reuse */

/* A curl handle and the multi that drives it (and keeps its connection for the next). */
struct conn {
	CURLM *multi;
	CURL *easy;
	struct conn *next;
};

struct mcp_http {
	char *url;
	struct strvec headers;
	pthread_mutex_t mu; /* session, protocol, idle */
	char *session;      /* Mcp-Session-Id, NULL before initialize or without sessions */
	char *protocol;     /* MCP-Protocol-Version */
	struct conn *idle;
	int n_idle;
	struct oauth_session *auth; /* NULL: no sign-in (stdio, or a fixed Authorization) */
};

/* One transfer (and, for a POST, the GETs that resume its stream). */
struct xfer {
	struct mcp_http *h;
	const struct mcp_http_reader *r;
	const char *method; /* "POST", "GET" or "DELETE" */
	const char *body;   /* POST */
	bool listen;        /* the standalone stream: on_msg's answer does not end it */
	/* the answer */
	long status;
	bool opened; /* on_open was told the status */
	bool sse;    /* the answer is text/event-stream */
	bool done;   /* on_msg has what it waited for */
	bool too_big;
	bool cancelled, timed_out;
	struct strbuf body_buf; /* a JSON answer (or an error page) */
	struct sse_parser *parser;
	/* where the stream is, kept across its connections */
	char *last_id;
	long retry_ms;
	unsigned long events; /* messages read, over all connections */
	/* the clock: the deadline moves by the time spent inside on_msg */
	long deadline; /* absolute, now_ms(); 0: none */
	/* sign-in: the token the request went with, the server's challenge, the outcome */
	unsigned auth_gen;
	char *www_auth;
	char *auth_err;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mcp_http_set_auth(struct mcp_http *h, struct oauth_session *s)
{
	oauth_session_free(h->auth);
	h->auth = s;
}

struct mcp_http *mcp_http_new(const char *url, const struct strvec *headers)
{
	struct mcp_http *h = xcalloc(1, sizeof(*h));

	if (pthread_mutex_init(&h->mu, NULL))
		fatal("cannot initialise an MCP HTTP lock");
	h->url = xstrdup(url);
	for (size_t i = 0; headers && i < headers->n; i++)
		strvec_push(&h->headers, headers->v[i]);
	return h;
}

void mcp_http_set_protocol(struct mcp_http *h, const char *revision)
{
	pthread_mutex_lock(&h->mu);
	free(h->protocol);
	h->protocol = xstrdup(revision);
	pthread_mutex_unlock(&h->mu);
}

void mcp_http_forget_session(struct mcp_http *h)
{
	pthread_mutex_lock(&h->mu);
	free(h->session);
	h->session = NULL;
	pthread_mutex_unlock(&h->mu);
}

static bool has_session(struct mcp_http *h)
{
	bool yes;

	pthread_mutex_lock(&h->mu);
	yes = h->session != NULL;
	pthread_mutex_unlock(&h->mu);
	return yes;
}

/* ---- connections -------------------------------------------------------------------- */

static struct conn *take_conn(struct mcp_http *h)
{
	struct conn *k;

	pthread_mutex_lock(&h->mu);
	k = h->idle;
	if (k) {
		h->idle = k->next;
		h->n_idle--;
	}
	pthread_mutex_unlock(&h->mu);
	if (k)
		return k;
	k = xcalloc(1, sizeof(*k));
	k->multi = curl_multi_init();
	k->easy = curl_easy_init();
	if (!k->multi || !k->easy)
		fatal("cannot initialise libcurl for an MCP server");
	return k;
}

static void conn_free(struct conn *k)
{
	curl_easy_cleanup(k->easy);
	curl_multi_cleanup(k->multi);
	free(k);
}

static void put_conn(struct mcp_http *h, struct conn *k)
{
	pthread_mutex_lock(&h->mu);
	if (h->n_idle < IDLE_CONNS) {
		k->next = h->idle;
		h->idle = k;
		h->n_idle++;
		k = NULL;
	}
	pthread_mutex_unlock(&h->mu);
	if (k)
		conn_free(k);
}

/* ---- one transfer ------------------------------------------------------------------- */

static struct curl_slist *header_list(struct mcp_http *h, struct xfer *x)
{
	struct curl_slist *l = NULL;
	char *line;

	if (!strcmp(x->method, "POST")) {
		l = curl_slist_append(l, "Content-Type: application/json");
		l = curl_slist_append(l, "Accept: application/json, text/event-stream");
	} else if (!strcmp(x->method, "GET")) {
		l = curl_slist_append(l, "Accept: text/event-stream");
		if (x->last_id) {
			line = xasprintf("Last-Event-ID: %s", x->last_id);
			l = curl_slist_append(l, line);
			free(line);
		}
	}
	pthread_mutex_lock(&h->mu);
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
	pthread_mutex_unlock(&h->mu);
	for (size_t i = 0; i < h->headers.n; i++)
		l = curl_slist_append(l, h->headers.v[i]);
	if (h->auth && (line = oauth_session_header(h->auth, &x->auth_gen))) {
		l = curl_slist_append(l, line);
		memset(line, 0, strlen(line)); /* the token lives on in the session only */
		free(line);
	}
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

	if (n >= 5 && !strncmp(buf, "HTTP/", 5)) {
		/* A new response (after a redirect or 100 Continue): "HTTP/1.1 200 OK". */
		const char *sp = memchr(buf, ' ', n);
		x->sse = false;
		x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
		free(x->www_auth);
		x->www_auth = NULL;
	} else if ((n == 2 && buf[0] == '\r') || (n == 1 && buf[0] == '\n')) {
		x->opened = x->status >= 200; /* the headers are in (a 1xx is not the answer) */
	} else if ((v = header_value(buf, n, "WWW-Authenticate"))) {
		free(x->www_auth);
		x->www_auth = v;
	} else if ((v = header_value(buf, n, "Content-Type"))) {
		x->sse = strncasecmp(v, "text/event-stream", 17) == 0;
		free(v);
	} else if ((v = header_value(buf, n, "Mcp-Session-Id"))) {
		/* Visible ASCII only (the spec's rule): anything else is not kept. */
		bool ok = *v && strlen(v) < 256;
		for (const char *p = v; ok && *p; p++)
			ok = *p >= 0x21 && *p <= 0x7e;
		if (ok) {
			pthread_mutex_lock(&x->h->mu);
			free(x->h->session);
			x->h->session = v;
			pthread_mutex_unlock(&x->h->mu);
		} else {
			free(v);
		}
	}
	return n;
}

/* Hands one message to on_msg; the time spent there does not count against the deadline
 * (a server's question may wait for a person). */
static bool deliver(struct xfer *x, const char *text)
{
	long t0 = now_ms();
	bool got = x->r->on_msg(x->r->ctx, text);

	if (x->deadline)
		x->deadline += now_ms() - t0;
	x->events++;
	return got && !x->listen;
}

static int on_event(void *ctx, const char *event, const char *data, size_t len)
{
	struct xfer *x = ctx;

	(void)event;
	(void)len;
	if (!*data)
		return 0; /* a priming event or a keep-alive */
	if (deliver(x, data)) {
		x->done = true;
		return 1;
	}
	return 0;
}

static size_t on_body(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;

	x->opened = true;
	if (x->sse && x->status < 300) {
		if (!x->parser)
			x->parser = sse_new(on_event, x);
		if (sse_feed(x->parser, buf, n) == 0)
			return n;
		if (!x->done)
			x->too_big = true; /* the parser refused an event */
		return 0;                  /* either way nothing more is read */
	}
	if (x->body_buf.len + n > MCP_MAX_MESSAGE) {
		x->too_big = true;
		return 0;
	}
	strbuf_add(&x->body_buf, buf, n);
	return n;
}

static bool stopped(const struct xfer *x)
{
	return x->r->stop && atomic_load(x->r->stop);
}

/* The answer came by another stream: done as if read here. */
static bool answered(struct xfer *x)
{
	if (x->r->answered && atomic_load(x->r->answered))
		x->done = true;
	return x->done;
}

/* Takes the stream's position from the parser of the connection that just ended. */
static void keep_position(struct xfer *x)
{
	const char *id;

	if (!x->parser)
		return;
	if (!x->done)
		sse_finish(x->parser);
	id = sse_last_id(x->parser);
	if (id) {
		free(x->last_id);
		x->last_id = xstrdup(id);
	}
	if (sse_retry_ms(x->parser) >= 0)
		x->retry_ms = sse_retry_ms(x->parser);
	sse_free(x->parser);
	x->parser = NULL;
}

/* Tells on_open the status, once per connection, from inside the transfer. */
static void tell_open(struct xfer *x, CURL *easy)
{
	long status = 0;

	if (!x->r->on_open)
		return;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
	if (status)
		x->r->on_open(x->r->ctx, status);
}

/* Runs one request to its end (or until on_msg has its answer, the stop flag, the
 * deadline). Returns curl's verdict; x->status, x->body_buf, the position are filled. */
static CURLcode transfer(struct xfer *x)
{
	struct mcp_http *h = x->h;
	struct conn *k = take_conn(h);
	struct curl_slist *hl = header_list(h, x);
	long connect_ms = x->r->max_ms > 0 && x->r->max_ms < 10000 ? x->r->max_ms : 10000;
	CURLcode rc = CURLE_OK;
	CURLMsg *m;
	int running = 1, left;
	bool told = false;

	x->status = 0;
	x->opened = false;
	x->sse = false;
	strbuf_reset(&x->body_buf);
	curl_easy_reset(k->easy);
	curl_easy_setopt(k->easy, CURLOPT_URL, h->url);
	curl_easy_setopt(k->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(k->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k->easy, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(k->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k->easy, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(k->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(k->easy, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	if (!strcmp(x->method, "POST")) {
		curl_easy_setopt(k->easy, CURLOPT_POSTFIELDS, x->body);
		curl_easy_setopt(k->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(x->body));
	} else if (!strcmp(x->method, "GET")) {
		curl_easy_setopt(k->easy, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(k->easy, CURLOPT_CUSTOMREQUEST, x->method);
	}
	curl_multi_add_handle(k->multi, k->easy);
	while (running) {
		if (curl_multi_perform(k->multi, &running) != CURLM_OK) {
			rc = CURLE_FAILED_INIT;
			break;
		}
		if (!told && x->opened) {
			told = true;
			tell_open(x, k->easy);
		}
		if (!running || answered(x) || x->too_big)
			break;
		if (stopped(x)) {
			x->cancelled = true;
			break;
		}
		if (x->deadline && now_ms() >= x->deadline) {
			x->timed_out = true;
			break;
		}
		curl_multi_poll(k->multi, NULL, 0, SLICE_MS, NULL);
	}
	while ((m = curl_multi_info_read(k->multi, &left)))
		if (m->msg == CURLMSG_DONE)
			rc = m->data.result;
	curl_easy_getinfo(k->easy, CURLINFO_RESPONSE_CODE, &x->status);
	if (!told && x->status)
		tell_open(x, k->easy);
	curl_multi_remove_handle(k->multi, k->easy);
	curl_slist_free_all(hl);
	put_conn(h, k);
	keep_position(x);
	return rc;
}

/* transfer(), sent again when the server refuses the token (401, or 403 with
 * insufficient_scope) and the session could do something about it: another request's new
 * token, a refresh, a sign-in. Otherwise x->auth_err says why not. */
static CURLcode transfer_signed(struct xfer *x)
{
	int signins = 0;

	for (int round = 0;; round++) {
		CURLcode rc = transfer(x);
		if (!x->h->auth || rc != CURLE_OK || x->done || (x->status != 401 && x->status != 403))
			return rc;
		free(x->auth_err);
		x->auth_err = NULL;
		if (round >= 2 * OAUTH_SIGNINS_MAX + 2 ||
		    !oauth_session_challenged(x->h->auth, x->auth_gen, x->status, x->www_auth,
		                              &signins, &x->auth_err))
			return rc;
	}
}

/* The first line of an error page, cleaned and short (caller frees). */
static char *page_line(const struct strbuf *body)
{
	size_t n = strcspn(body->buf, "\r\n");

	return textsan_clean(body->buf, n > 200 ? 200 : n, 0);
}

/* What one connection's end means. *gone for a 404 in a session. */
static enum mcp_http_end judge(struct xfer *x, CURLcode rc, bool had_session, bool *gone,
                               char **err)
{
	if (x->done)
		return MCP_HTTP_OK; /* stopped reading on purpose */
	if (x->cancelled)
		return MCP_HTTP_CANCELLED;
	if (x->timed_out || rc == CURLE_OPERATION_TIMEDOUT)
		return MCP_HTTP_TIMEOUT;
	if (x->too_big) {
		*err = xasprintf("sent a message larger than %u MiB", MCP_MAX_MESSAGE >> 20);
		return MCP_HTTP_FAILED;
	}
	if (rc != CURLE_OK) {
		*err = xasprintf("%s", curl_easy_strerror(rc));
		return MCP_HTTP_FAILED;
	}
	if (x->status >= 400 && x->auth_err) {
		*err = x->auth_err;
		x->auth_err = NULL;
		return MCP_HTTP_FAILED;
	}
	if (x->status >= 400) {
		char *line = page_line(&x->body_buf);
		if (x->status == 404 && had_session) {
			*gone = true;
			mcp_http_forget_session(x->h);
		}
		*err = xasprintf("HTTP %ld%s%s", x->status, *line ? ": " : "", line);
		free(line);
		return MCP_HTTP_FAILED;
	}
	return MCP_HTTP_OK;
}

/* Waits `ms` (the server's retry delay) unless stopped or out of time first. */
static enum mcp_http_end pause_ms(struct xfer *x, long ms)
{
	long until = now_ms() + ms;

	for (;;) {
		long left = until - now_ms();
		if (answered(x))
			return MCP_HTTP_OK;
		if (stopped(x))
			return MCP_HTTP_CANCELLED;
		if (x->deadline && now_ms() >= x->deadline)
			return MCP_HTTP_TIMEOUT;
		if (left <= 0)
			return MCP_HTTP_OK;
		struct timespec ts = {0, (left < SLICE_MS ? left : SLICE_MS) * 1000000L};
		nanosleep(&ts, NULL);
	}
}

static long retry_wait(const struct xfer *x)
{
	if (x->retry_ms < 0)
		return RETRY_DEFAULT_MS;
	return x->retry_ms < RETRY_MAX_MS ? x->retry_ms : RETRY_MAX_MS;
}

static void xfer_release(struct xfer *x)
{
	sse_free(x->parser);
	strbuf_release(&x->body_buf);
	free(x->last_id);
	free(x->www_auth);
	free(x->auth_err);
}

enum mcp_http_end mcp_http_post(struct mcp_http *h, const char *body,
                                const struct mcp_http_reader *r, bool *gone, char **err)
{
	struct xfer x = {.h = h, .r = r, .method = "POST", .body = body, .retry_ms = -1};
	bool had_session = has_session(h);
	enum mcp_http_end end;
	int fruitless = 0;

	*gone = false;
	strbuf_init(&x.body_buf);
	if (r->max_ms > 0)
		x.deadline = now_ms() + r->max_ms;
	end = judge(&x, transfer_signed(&x), had_session, gone, err);
	if (end == MCP_HTTP_OK && !x.done && !x.sse && x.body_buf.len)
		deliver(&x, x.body_buf.buf); /* a JSON answer */
	/* A stream that ended before the answer: resumed where it stopped. */
	while (end == MCP_HTTP_OK && x.sse && !x.done && x.last_id && fruitless < RESUME_MAX) {
		unsigned long before = x.events;
		char *before_id = xstrdup(x.last_id);

		end = pause_ms(&x, retry_wait(&x));
		if (end == MCP_HTTP_OK) {
			/* A 404 to a GET may be a server without GET streams (many answer 404,
			 * not 405): the session is judged by the next POST. */
			x.method = "GET";
			end = judge(&x, transfer_signed(&x), false, gone, err);
			if (end == MCP_HTTP_OK && !x.sse && !x.done) {
				*err = xstrdup("its stream ended before the answer, and the GET that "
				               "resumes it did not answer with a stream");
				end = MCP_HTTP_FAILED;
			} else if (end == MCP_HTTP_FAILED) {
				char *why = *err;
				*err = xasprintf("its stream ended before the answer, and resuming "
				                 "it failed: %s",
				                 why);
				free(why);
			}
		}
		fruitless = x.events > before || strcmp(before_id, x.last_id) ? 0 : fruitless + 1;
		free(before_id);
	}
	xfer_release(&x);
	return end;
}

enum mcp_http_end mcp_http_listen(struct mcp_http *h, const struct mcp_http_reader *r,
                                  char **err)
{
	struct xfer x = {.h = h, .r = r, .method = "GET", .listen = true, .retry_ms = -1};
	enum mcp_http_end end;
	int fruitless = 0;

	strbuf_init(&x.body_buf);
	for (;;) {
		unsigned long before = x.events;
		bool gone = false;
		CURLcode rc = transfer_signed(&x);

		if (x.status == 405) {
			end = MCP_HTTP_NONE;
			break;
		}
		end = judge(&x, rc, false, &gone, err); /* a 404 here ends no session */
		if (end != MCP_HTTP_OK)
			break;
		if (!x.sse) {
			*err = xasprintf("its GET stream is not an event stream (HTTP %ld)", x.status);
			end = MCP_HTTP_FAILED;
			break;
		}
		fruitless = x.events > before ? 0 : fruitless + 1;
		if (fruitless >= RESUME_MAX) {
			*err = xasprintf("it ended its GET stream %d times in a row without a message",
			                 fruitless);
			end = MCP_HTTP_FAILED;
			break;
		}
		end = pause_ms(&x, retry_wait(&x));
		if (end != MCP_HTTP_OK)
			break;
	}
	xfer_release(&x);
	return end;
}

static bool ignore(void *ctx, const char *text)
{
	(void)ctx;
	(void)text;
	return false;
}

void mcp_http_free(struct mcp_http *h)
{
	if (!h)
		return;
	if (has_session(h)) {
		/* Best effort: a server may not allow it (405). */
		struct mcp_http_reader r = {.on_msg = ignore, .max_ms = 2000};
		struct xfer x = {.h = h, .r = &r, .method = "DELETE", .retry_ms = -1};
		strbuf_init(&x.body_buf);
		x.deadline = now_ms() + r.max_ms;
		transfer(&x);
		xfer_release(&x);
	}
	while (h->idle) {
		struct conn *k = h->idle;
		h->idle = k->next;
		conn_free(k);
	}
	pthread_mutex_destroy(&h->mu);
	free(h->url);
	strvec_clear(&h->headers);
	free(h->session);
	free(h->protocol);
	oauth_session_free(h->auth);
	free(h);
}
