/* mcp_client — one MCP server: JSON-RPC 2.0 over stdio (one message a line; the server
 * started with only the environment its config names, plus PATH and HOME) or over
 * Streamable HTTP (mcp_http.h). Negotiates the protocol revision, lists its tools
 * (following pages and list_changed) and calls them with a time limit and cancellation.
 * A server that dies (or an HTTP session that is lost) is started again once. */
#include "config.h"

#include "mcp_client.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fdio.h"
#include "mcp_config.h"
#include "mcp_http.h"
#include "oauth_login.h"
#include "oauth_session.h"
#include "mcp_proc.h"
#include "mcp_result.h"
#include "mcp_schema.h"
#include "textsan.h"
#include "xalloc.h"

/* Revisions pevtui accepts from a server, newest first. */
static const char *const revisions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", MCP_PROTOCOL_OLDEST};

#define SLICE_MS 50  /* how often a wait looks at the cancel flag */
#define STARTS_MAX 2 /* the first start and one restart */
#define LISTEN_WAIT_S 2 /* for the server's answer to the GET stream, at start */

struct mcp_client {
	struct mcp_conf one; /* this server's definition, v[0] */
	char *log_path, *workspace;
	const struct confine_session *sandbox; /* borrowed; NULL: none */
	pthread_mutex_t mu;       /* one request at a time */
	pthread_mutex_t tools_mu; /* `tools`: read without waiting for a call in flight */
	struct mcp_proc proc;     /* a stdio server's process (pid 0: not running) */
	struct strbuf rbuf;       /* bytes read, not yet a whole line */
	long next_id;
	char *protocol;
	struct mcp_tools tools;
	atomic_bool tools_stale; /* notifications/tools/list_changed arrived */
	bool has_tools;   /* the server announced the tools capability */
	int starts;
	/* Streamable HTTP instead of a process (the config's url, no command) */
	struct mcp_http *http;
	bool http_up; /* initialized; false again when the session is gone */
	/* the standalone GET stream's reader, from initialize to the end of the session */
	pthread_t listener;
	bool listening;
	atomic_bool listen_stop;
	/* the request waiting for its answer over HTTP (a server may send it on the GET
	 * stream instead of the request's own): set and read under wait_mu */
	pthread_mutex_t wait_mu;
	struct http_wait *waiting;
	pthread_cond_t listen_cv; /* listen_told: the GET stream was answered (or ended) */
	bool listen_told;
	bool offers_elicitation;
	const struct mcp_asker *asker; /* of the call in flight, under wait_mu */
	unsigned long files; /* non-text results saved, for their names */
};

void mcp_tools_release(struct mcp_tools *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].description);
		free(t->v[i].schema_json);
		free(t->v[i].annotations_json);
		free(t->v[i].output_schema_json);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static const struct mcp_server_conf *conf_of(const struct mcp_client *c)
{
	return &c->one.v[0];
}

void mcp_client_set_sandbox(struct mcp_client *c, const struct confine_session *sb)
{
	c->sandbox = sb;
}

struct mcp_client *mcp_client_new(const struct mcp_server_conf *conf, const char *log_path,
                                  const char *workspace)
{
	struct mcp_client *c = xcalloc(1, sizeof(*c));
	struct mcp_conf tmp = {.v = (struct mcp_server_conf *)conf, .n = 1, .cap = 1};

	mcp_conf_copy(&c->one, &tmp);
	c->log_path = xstrdup(log_path);
	c->workspace = xstrdup(workspace);
	c->proc.to_fd = c->proc.from_fd = -1;
	c->next_id = 1;
	strbuf_init(&c->rbuf);
	if (pthread_mutex_init(&c->mu, NULL) || pthread_mutex_init(&c->tools_mu, NULL) ||
	    pthread_mutex_init(&c->wait_mu, NULL) || pthread_cond_init(&c->listen_cv, NULL))
		fatal("cannot initialise an MCP client lock");
	return c;
}

const char *mcp_client_name(const struct mcp_client *c)
{
	return conf_of(c)->name;
}

const struct mcp_server_conf *mcp_client_conf(const struct mcp_client *c)
{
	return conf_of(c);
}

const char *mcp_client_protocol(const struct mcp_client *c)
{
	return c->protocol;
}

static bool running(const struct mcp_client *c)
{
	return c->http ? c->http_up : c->proc.pid > 0;
}

static int timeout_ms(const struct mcp_client *c)
{
	int s = conf_of(c)->timeout_s > 0 ? conf_of(c)->timeout_s : MCP_TIMEOUT_S;
	return s * 1000;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the server: a process or an HTTP session ---------------------------------------- */

static void stop_listener(struct mcp_client *c)
{
	if (!c->listening)
		return;
	atomic_store(&c->listen_stop, true);
	pthread_join(c->listener, NULL);
	c->listening = false;
}

/* Ends the server: its process group (mcp_proc_stop), or its HTTP session. */
static void kill_server(struct mcp_client *c, bool polite)
{
	if (c->http) {
		stop_listener(c);
		mcp_http_free(c->http); /* ends the session */
		c->http = NULL;
		c->http_up = false;
		return;
	}
	mcp_proc_stop(&c->proc, polite);
	strbuf_reset(&c->rbuf);
}

static bool spawn(struct mcp_client *c, char **err)
{
	const struct mcp_server_conf *s = conf_of(c);

	c->starts++;
	if (s->url && !s->command) {
		if (!c->http) {
			c->http = mcp_http_new(s->url, &s->headers);
			mcp_http_set_auth(c->http, oauth_session_for(s, oauth_login_prompt(s)));
		}
		return true;
	}
	return mcp_proc_start(&c->proc, s, c->log_path, c->workspace, c->sandbox, err);
}

/* ---- messages ----------------------------------------------------------------------- */

static bool ignore_msg(void *ctx, const char *text);

static bool send_msg(struct mcp_client *c, cJSON *msg)
{
	char *text = cJSON_PrintUnformatted(msg);
	size_t n = strlen(text);
	bool ok;

	if (c->http) {
		/* A reply may go while an answer is being read: the transport takes another
		 * connection for it. */
		struct mcp_http_reader r = {.on_msg = ignore_msg, .ctx = c, .max_ms = timeout_ms(c)};
		bool gone;
		char *err = NULL;
		ok = mcp_http_post(c->http, text, &r, &gone, &err) == MCP_HTTP_OK;
		free(err);
		free(text);
		return ok;
	}
	/* cJSON escapes newlines inside strings: one message is one line. */
	text = xrealloc(text, n + 2);
	text[n] = '\n';
	ok = c->proc.to_fd >= 0 && fd_write_all(c->proc.to_fd, text, n + 1) == 0;
	free(text);
	return ok;
}

static void send_notification(struct mcp_client *c, const char *method, cJSON *params)
{
	cJSON *m = cJSON_CreateObject();

	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddStringToObject(m, "method", method);
	if (params)
		cJSON_AddItemToObject(m, "params", params);
	send_msg(c, m);
	cJSON_Delete(m);
}

static const char *const elicit_actions[] = {
    [MCP_ELICIT_ACCEPT] = "accept", [MCP_ELICIT_DECLINE] = "decline", [MCP_ELICIT_CANCEL] = "cancel"};

/* elicitation/create: asked of the call in flight's asker; declined when there is none. */
static void answer_question(struct mcp_client *c, const cJSON *params, cJSON *r)
{
	const char *mode = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "mode"));
	const char *message =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "message"));
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(params, "requestedSchema");
	const struct mcp_asker *asker;
	enum mcp_elicit_action act = MCP_ELICIT_DECLINE;
	char *content = NULL, *schema_json;
	cJSON *res, *parsed;

	if (mode && strcmp(mode, "form")) {
		cJSON *e = cJSON_AddObjectToObject(r, "error");
		cJSON_AddNumberToObject(e, "code", -32602);
		cJSON_AddStringToObject(e, "message", "pevtui answers form-mode questions only");
		return;
	}
	pthread_mutex_lock(&c->wait_mu);
	asker = c->asker;
	pthread_mutex_unlock(&c->wait_mu);
	schema_json = schema ? cJSON_PrintUnformatted(schema) : xstrdup("{}");
	if (asker && asker->fn)
		act = asker->fn(asker->ctx, conf_of(c)->name, message ? message : "", schema_json,
		                &content);
	free(schema_json);
	parsed = act == MCP_ELICIT_ACCEPT && content ? cJSON_Parse(content) : NULL;
	if (act == MCP_ELICIT_ACCEPT && !cJSON_IsObject(parsed))
		act = MCP_ELICIT_DECLINE; /* an asker's bug, never a malformed answer */
	res = cJSON_AddObjectToObject(r, "result");
	cJSON_AddStringToObject(res, "action", elicit_actions[act]);
	if (act == MCP_ELICIT_ACCEPT)
		cJSON_AddItemToObject(res, "content", parsed);
	else
		cJSON_Delete(parsed);
	free(content);
}

/* A request of the server's own: ping and questions are answered, anything else is not
 * offered. */
static void answer_server(struct mcp_client *c, const cJSON *msg)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id",
	                      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(msg, "id"), 1));
	if (cJSON_IsString(method) && !strcmp(method->valuestring, "ping")) {
		cJSON_AddObjectToObject(r, "result");
	} else if (cJSON_IsString(method) && !strcmp(method->valuestring, "elicitation/create") &&
	           c->offers_elicitation) {
		answer_question(c, cJSON_GetObjectItemCaseSensitive(msg, "params"), r);
	} else {
		cJSON *e = cJSON_AddObjectToObject(r, "error");
		cJSON_AddNumberToObject(e, "code", -32601);
		cJSON_AddStringToObject(e, "message", "pevtui does not offer this method");
	}
	send_msg(c, r);
	cJSON_Delete(r);
}

/* One line from the server: the response to `want` is returned (caller deletes); other
 * messages are handled here. */
static cJSON *handle_line(struct mcp_client *c, const char *line, long want)
{
	cJSON *msg = cJSON_Parse(line);
	const cJSON *method, *id;

	if (!cJSON_IsObject(msg)) {
		cJSON_Delete(msg); /* not JSON-RPC (a stray print): ignored */
		return NULL;
	}
	method = cJSON_GetObjectItemCaseSensitive(msg, "method");
	id = cJSON_GetObjectItemCaseSensitive(msg, "id");
	if (cJSON_IsString(method)) {
		if (id)
			answer_server(c, msg);
		else if (!strcmp(method->valuestring, "notifications/tools/list_changed"))
			atomic_store(&c->tools_stale, true);
		cJSON_Delete(msg);
		return NULL;
	}
	if (cJSON_IsNumber(id) && (long)id->valuedouble == want)
		return msg;
	cJSON_Delete(msg); /* a late answer to a request given up on */
	return NULL;
}

/* The answer to a notification or a reply: anything in it is handled, nothing awaited. */
static bool ignore_msg(void *ctx, const char *text)
{
	cJSON_Delete(handle_line(ctx, text, -1));
	return false;
}

enum wait_end { W_GOT, W_TIMEOUT, W_CANCELLED, W_DEAD, W_TOO_BIG };

/* One POST of a request over HTTP, its answer read until the response to `want`. */
struct http_wait {
	struct mcp_client *c;
	long want;
	cJSON *resp;      /* under c->wait_mu */
	atomic_bool got; /* resp was put here by the GET stream's reader */
};

/* Keeps the response `r` (taken) for the request waiting for it; false when none is. */
static bool hand_over(struct mcp_client *c, cJSON *r, bool from_listener)
{
	bool taken = false;

	pthread_mutex_lock(&c->wait_mu);
	if (c->waiting && !c->waiting->resp) {
		c->waiting->resp = r;
		if (from_listener)
			atomic_store(&c->waiting->got, true);
		taken = true;
	}
	pthread_mutex_unlock(&c->wait_mu);
	return taken;
}

static bool take_msg(void *ctx, const char *text)
{
	struct http_wait *w = ctx;
	cJSON *r = handle_line(w->c, text, w->want);

	if (r && !hand_over(w->c, r, false))
		cJSON_Delete(r); /* answered already, by the GET stream */
	return r != NULL;
}

static enum wait_end http_round(struct mcp_client *c, cJSON *m, long want,
                                const atomic_bool *cancel, cJSON **resp, char **why)
{
	char *text = cJSON_PrintUnformatted(m);
	struct http_wait w = {.c = c, .want = want};
	struct mcp_http_reader r = {.on_msg = take_msg,
	                            .ctx = &w,
	                            .stop = cancel,
	                            .answered = &w.got,
	                            .max_ms = timeout_ms(c)};
	enum mcp_http_end end;
	bool gone = false;

	pthread_mutex_lock(&c->wait_mu);
	c->waiting = &w;
	pthread_mutex_unlock(&c->wait_mu);
	end = mcp_http_post(c->http, text, &r, &gone, why);
	pthread_mutex_lock(&c->wait_mu);
	c->waiting = NULL;
	pthread_mutex_unlock(&c->wait_mu);
	free(text);
	if (gone)
		c->http_up = false; /* initialize again on the next call */
	*resp = w.resp;
	switch (end) {
	case MCP_HTTP_OK:
		if (w.resp)
			return W_GOT;
		*why = xstrdup("its answer held no response to the request");
		return W_DEAD;
	case MCP_HTTP_TIMEOUT: return W_TIMEOUT;
	case MCP_HTTP_CANCELLED: return W_CANCELLED;
	case MCP_HTTP_FAILED:
	case MCP_HTTP_NONE: return W_DEAD;
	}
	return W_DEAD;
}

/* Reads until the response to `want` (or, with want < 0, until nothing is waiting).
 * deadline_ms: absolute (now_ms), 0 = only what is ready now. */
static enum wait_end read_until(struct mcp_client *c, long want, long deadline_ms,
                                const atomic_bool *cancel, cJSON **resp)
{
	char buf[65536];

	*resp = NULL;
	for (;;) {
		char *nl;
		while ((nl = memchr(c->rbuf.buf, '\n', c->rbuf.len))) {
			size_t n = (size_t)(nl - c->rbuf.buf);
			cJSON *r;
			long t0 = now_ms();
			*nl = '\0';
			r = handle_line(c, c->rbuf.buf, want);
			if (deadline_ms)
				deadline_ms += now_ms() - t0; /* a question waits for a person */
			memmove(c->rbuf.buf, nl + 1, c->rbuf.len - n - 1);
			c->rbuf.len -= n + 1;
			c->rbuf.buf[c->rbuf.len] = '\0';
			if (r) {
				*resp = r;
				return W_GOT;
			}
		}
		if (c->rbuf.len > MCP_MAX_MESSAGE)
			return W_TOO_BIG;
		if (cancel && atomic_load(cancel))
			return W_CANCELLED;
		long left = deadline_ms ? deadline_ms - now_ms() : 0;
		if (deadline_ms && left <= 0)
			return W_TIMEOUT;
		struct pollfd p = {.fd = c->proc.from_fd, .events = POLLIN};
		int pr = poll(&p, 1, deadline_ms ? (int)(left < SLICE_MS ? left : SLICE_MS) : 0);
		if (pr < 0 && errno != EINTR)
			return W_DEAD;
		if (pr <= 0) {
			if (!deadline_ms)
				return W_TIMEOUT;
			continue;
		}
		ssize_t got = read(c->proc.from_fd, buf, sizeof(buf));
		if (got == 0)
			return W_DEAD;
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return W_DEAD;
		}
		strbuf_add(&c->rbuf, buf, (size_t)got);
	}
}

/* The server is gone (or made unusable): reap it and say how it ended. */
static void lost(struct mcp_client *c)
{
	kill_server(c, false);
}

/*
 * One request. MCP_OK with *result (caller deletes); MCP_TOOL_ERROR when the server
 * answered with a JSON-RPC error (*err: its message); MCP_FAILED / MCP_CANCELLED with *err.
 */
static enum mcp_status request(struct mcp_client *c, const char *method, cJSON *params,
                               const atomic_bool *cancel, cJSON **result, char **err)
{
	const char *name = conf_of(c)->name;
	long id = c->next_id++;
	cJSON *m = cJSON_CreateObject(), *resp = NULL;
	const cJSON *e, *r;
	enum wait_end w;
	bool sent;
	char *why = NULL;

	*result = NULL;
	cJSON_AddStringToObject(m, "jsonrpc", "2.0");
	cJSON_AddNumberToObject(m, "id", (double)id);
	cJSON_AddStringToObject(m, "method", method);
	if (params)
		cJSON_AddItemToObject(m, "params", params);
	if (c->http) {
		w = http_round(c, m, id, cancel, &resp, &why);
		cJSON_Delete(m);
	} else {
		sent = send_msg(c, m);
		cJSON_Delete(m);
		w = sent ? read_until(c, id, now_ms() + timeout_ms(c), cancel, &resp) : W_DEAD;
	}
	switch (w) {
	case W_GOT: free(why); break;
	case W_TIMEOUT:
	case W_CANCELLED: {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddNumberToObject(p, "requestId", (double)id);
		cJSON_AddStringToObject(p, "reason", w == W_TIMEOUT ? "timed out" : "cancelled");
		free(why);
		send_notification(c, "notifications/cancelled", p);
		if (w == W_CANCELLED) {
			*err =
			    xasprintf("the %s call to MCP server %s was cancelled", method, name);
			return MCP_CANCELLED;
		}
		*err = xasprintf("MCP server %s did not answer %s within %d s (its timeout); the "
		                 "request was cancelled",
		                 name, method, timeout_ms(c) / 1000);
		return MCP_FAILED;
	}
	case W_TOO_BIG:
		lost(c);
		*err = xasprintf("MCP server %s sent a message larger than %u MiB; it was stopped",
		                 name, MCP_MAX_MESSAGE >> 20);
		return MCP_FAILED;
	case W_DEAD:
		if (c->http) {
			*err = xasprintf("MCP server %s (%s) failed to answer %s: %s", name,
			                 conf_of(c)->url, method, why ? why : "no answer");
			free(why);
			return MCP_FAILED;
		}
		lost(c);
		*err =
		    xasprintf("MCP server %s stopped (%s) while answering %s", name,
		              c->proc.last_exit ? c->proc.last_exit : "its output closed", method);
		return MCP_FAILED;
	}
	e = cJSON_GetObjectItemCaseSensitive(resp, "error");
	r = cJSON_GetObjectItemCaseSensitive(resp, "result");
	if (e) {
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
		*err = xasprintf("MCP server %s refused %s: %s", name, method,
		                 cJSON_IsString(msg) ? msg->valuestring : "(no message)");
		cJSON_Delete(resp);
		return MCP_TOOL_ERROR;
	}
	if (!cJSON_IsObject(r)) {
		*err = xasprintf("MCP server %s answered %s without a result object", name, method);
		cJSON_Delete(resp);
		return MCP_FAILED;
	}
	*result = cJSON_DetachItemViaPointer(resp, (cJSON *)r);
	cJSON_Delete(resp);
	return MCP_OK;
}

/* ---- initialize and tools/list ------------------------------------------------------ */

static char *print_or_null(const cJSON *it)
{
	return it ? cJSON_PrintUnformatted(it) : NULL;
}

static bool list_tools(struct mcp_client *c, char **err)
{
	struct mcp_tools fresh = {0};
	char *cursor = NULL;
	int pages = 0;

	atomic_store(&c->tools_stale, false);
	if (!c->has_tools) {
		pthread_mutex_lock(&c->tools_mu);
		mcp_tools_release(&c->tools);
		pthread_mutex_unlock(&c->tools_mu);
		return true;
	}
	do {
		cJSON *params = cJSON_CreateObject(), *res = NULL;
		const cJSON *tools, *t, *next;

		if (cursor)
			cJSON_AddStringToObject(params, "cursor", cursor);
		free(cursor);
		cursor = NULL;
		if (request(c, "tools/list", params, NULL, &res, err) != MCP_OK) {
			mcp_tools_release(&fresh);
			return false;
		}
		tools = cJSON_GetObjectItemCaseSensitive(res, "tools");
		cJSON_ArrayForEach(t, (cJSON_IsArray(tools) ? tools : NULL))
		{
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "description");
			struct mcp_tool *mt;
			if (!cJSON_IsString(n) || !*n->valuestring || strlen(n->valuestring) > 128)
				continue; /* a tool without a usable name cannot be offered */
			fresh.v = xgrow(fresh.v, &fresh.cap, fresh.n + 1, sizeof(*fresh.v));
			mt = &fresh.v[fresh.n++];
			mt->name = xstrdup(n->valuestring);
			mt->description = cJSON_IsString(d) ? xstrdup(d->valuestring) : NULL;
			mt->schema_json =
			    print_or_null(cJSON_GetObjectItemCaseSensitive(t, "inputSchema"));
			mt->annotations_json =
			    print_or_null(cJSON_GetObjectItemCaseSensitive(t, "annotations"));
			mt->output_schema_json =
			    print_or_null(cJSON_GetObjectItemCaseSensitive(t, "outputSchema"));
		}
		next = cJSON_GetObjectItemCaseSensitive(res, "nextCursor");
		if (cJSON_IsString(next) && *next->valuestring)
			cursor = xstrdup(next->valuestring);
		cJSON_Delete(res);
	} while (cursor && ++pages < 100);
	free(cursor);
	pthread_mutex_lock(&c->tools_mu);
	mcp_tools_release(&c->tools);
	c->tools = fresh;
	pthread_mutex_unlock(&c->tools_mu);
	return true;
}

/* ---- the standalone GET stream -------------------------------------------------------- */

/* A message the server sent on its own: handled as any (notifications, its requests); a
 * response goes to the request waiting for it. */
static bool listened(void *ctx, const char *text)
{
	struct mcp_client *c = ctx;
	cJSON *r;
	long want = -1;

	pthread_mutex_lock(&c->wait_mu);
	if (c->waiting)
		want = c->waiting->want;
	pthread_mutex_unlock(&c->wait_mu);
	r = handle_line(c, text, want);
	if (r && !hand_over(c, r, true))
		cJSON_Delete(r);
	return false;
}

static void listen_told(void *ctx, long status)
{
	struct mcp_client *c = ctx;

	(void)status;
	pthread_mutex_lock(&c->wait_mu);
	c->listen_told = true;
	pthread_cond_signal(&c->listen_cv);
	pthread_mutex_unlock(&c->wait_mu);
}

static void *listen_main(void *arg)
{
	struct mcp_client *c = arg;
	struct mcp_http_reader r = {
	    .on_msg = listened, .on_open = listen_told, .ctx = c, .stop = &c->listen_stop};
	char *err = NULL;

	/* The server may have none (405) or end it for good: then messages come only with
	 * answers, which is fine. Why it ended is not the operator's concern. */
	mcp_http_listen(c->http, &r, &err);
	listen_told(c, 0);
	free(err);
	return NULL;
}

/* Opens the standalone GET stream after initialize (HTTP only), and waits (a little) for
 * the server's answer to it: what the server sends there then has a reader before the
 * next request, and the requests go in the order a server expects. */
static void start_listener(struct mcp_client *c)
{
	struct timespec until;

	stop_listener(c);
	atomic_store(&c->listen_stop, false);
	c->listen_told = false;
	if (pthread_create(&c->listener, NULL, listen_main, c))
		return; /* no thread: the server's own messages come only with answers */
	c->listening = true;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LISTEN_WAIT_S;
	pthread_mutex_lock(&c->wait_mu);
	while (!c->listen_told)
		if (pthread_cond_timedwait(&c->listen_cv, &c->wait_mu, &until))
			break;
	pthread_mutex_unlock(&c->wait_mu);
}

static bool initialize(struct mcp_client *c, char **err)
{
	const char *name = conf_of(c)->name;
	cJSON *p = cJSON_CreateObject(), *info, *mine, *res = NULL;
	const cJSON *v, *caps;
	bool known = false;

	cJSON_AddStringToObject(p, "protocolVersion", MCP_PROTOCOL_LATEST);
	mine = cJSON_AddObjectToObject(p, "capabilities");
	/* An empty elicitation object is form mode (2025-11-25, and what older revisions
	 * know). */
	if (c->offers_elicitation)
		cJSON_AddObjectToObject(mine, "elicitation");
	info = cJSON_AddObjectToObject(p, "clientInfo");
	cJSON_AddStringToObject(info, "name", "pevtui");
	cJSON_AddStringToObject(info, "version", PACKAGE_VERSION);
	if (request(c, "initialize", p, NULL, &res, err) != MCP_OK)
		return false;
	v = cJSON_GetObjectItemCaseSensitive(res, "protocolVersion");
	for (size_t i = 0; cJSON_IsString(v) && i < sizeof(revisions) / sizeof(*revisions); i++)
		known = known || !strcmp(v->valuestring, revisions[i]);
	if (!known) {
		char *said = cJSON_IsString(v)
		                 ? textsan_clean(v->valuestring, strlen(v->valuestring), 0)
		                 : xstrdup("none");
		*err = xasprintf("MCP server %s speaks protocol revision %.40s; pevtui speaks "
		                 "%s down to %s",
		                 name, said, MCP_PROTOCOL_LATEST, MCP_PROTOCOL_OLDEST);
		free(said);
		cJSON_Delete(res);
		return false;
	}
	free(c->protocol);
	c->protocol = xstrdup(v->valuestring);
	if (c->http)
		mcp_http_set_protocol(c->http, c->protocol);
	caps = cJSON_GetObjectItemCaseSensitive(res, "capabilities");
	c->has_tools = cJSON_GetObjectItemCaseSensitive(caps, "tools") != NULL;
	cJSON_Delete(res);
	send_notification(c, "notifications/initialized", NULL);
	if (c->http) {
		c->http_up = true;
		start_listener(c);
	}
	return list_tools(c, err);
}

/* Under mu: a running, initialized server, started (again) when needed. */
static bool ensure_running(struct mcp_client *c, char **err)
{
	if (running(c))
		return true;
	if (c->starts >= STARTS_MAX) {
		*err =
		    xasprintf("MCP server %s stopped %s and is not started again; its tools "
		              "are unavailable for the rest of the run",
		              conf_of(c)->name,
		              c->starts > 1 ? "after its restart" : "and could not be restarted");
		return false;
	}
	if (!spawn(c, err))
		return false;
	if (!initialize(c, err)) {
		kill_server(c, false);
		return false;
	}
	return true;
}

void mcp_client_offer_elicitation(struct mcp_client *c, bool yes)
{
	c->offers_elicitation = yes;
}

bool mcp_client_start(struct mcp_client *c, char **err)
{
	bool ok;

	pthread_mutex_lock(&c->mu);
	ok = ensure_running(c, err);
	pthread_mutex_unlock(&c->mu);
	return ok;
}

void mcp_client_stop(struct mcp_client *c)
{
	pthread_mutex_lock(&c->mu);
	kill_server(c, true);
	c->starts = STARTS_MAX; /* stopped on purpose: no restart */
	pthread_mutex_unlock(&c->mu);
}

void mcp_client_free(struct mcp_client *c)
{
	if (!c)
		return;
	kill_server(c, true);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->tools_mu);
	pthread_mutex_destroy(&c->wait_mu);
	pthread_cond_destroy(&c->listen_cv);
	mcp_conf_release(&c->one);
	mcp_tools_release(&c->tools);
	strbuf_release(&c->rbuf);
	free(c->log_path);
	free(c->workspace);
	free(c->protocol);
	free(c->proc.last_exit);
	free(c);
}

void mcp_client_tools(struct mcp_client *c, struct mcp_tools *out)
{
	cJSON *none;
	char *err = NULL;

	memset(out, 0, sizeof(*out));
	/* Idle: a list_changed sent while nothing was asked is read now, and the list taken
	 * again. Busy with a call: the list as it is (the call reads any notice). */
	if (pthread_mutex_trylock(&c->mu) == 0) {
		if (c->proc.pid > 0 && read_until(c, -1, 0, NULL, &none) == W_DEAD)
			lost(c);
		if (running(c) && atomic_load(&c->tools_stale))
			list_tools(c, &err);
		free(err);
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_lock(&c->tools_mu);
	for (size_t i = 0; i < c->tools.n; i++) {
		const struct mcp_tool *t = &c->tools.v[i];
		out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof(*out->v));
		out->v[out->n].name = xstrdup(t->name);
		out->v[out->n].description = xstrdup(t->description);
		out->v[out->n].schema_json = xstrdup(t->schema_json);
		out->v[out->n].annotations_json = xstrdup(t->annotations_json);
		out->v[out->n].output_schema_json = xstrdup(t->output_schema_json);
		out->n++;
	}
	pthread_mutex_unlock(&c->tools_mu);
}

bool mcp_client_ping(struct mcp_client *c, char **err)
{
	cJSON *res = NULL;
	bool ok;

	pthread_mutex_lock(&c->mu);
	ok = ensure_running(c, err) && request(c, "ping", NULL, NULL, &res, err) == MCP_OK;
	cJSON_Delete(res);
	pthread_mutex_unlock(&c->mu);
	return ok;
}

/* The outputSchema tool `name` declared (a tree; caller deletes), NULL when none. */
static cJSON *output_schema(struct mcp_client *c, const char *name)
{
	cJSON *schema = NULL;

	pthread_mutex_lock(&c->tools_mu);
	for (size_t i = 0; i < c->tools.n && !schema; i++)
		if (!strcmp(c->tools.v[i].name, name) && c->tools.v[i].output_schema_json)
			schema = cJSON_Parse(c->tools.v[i].output_schema_json);
	pthread_mutex_unlock(&c->tools_mu);
	return schema;
}

/* A result of a tool that declared an outputSchema: it must carry structuredContent that
 * matches. false + *why (caller frees). */
static bool result_fits(struct mcp_client *c, const char *name, const cJSON *res, char **why)
{
	cJSON *schema = output_schema(c, name);
	const cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
	char *w = NULL;
	bool ok = true;

	if (schema && !sc) {
		*why = xasprintf("the result of %s has no structuredContent, though the tool "
		                 "declared an outputSchema",
		                 name);
		ok = false;
	} else if (schema && !mcp_schema_check(schema, sc, &w)) {
		*why = xasprintf("the result of %s does not match the outputSchema the tool "
		                 "declared (%s)",
		                 name, w);
		free(w);
		ok = false;
	}
	cJSON_Delete(schema);
	return ok;
}

enum mcp_status mcp_client_call(struct mcp_client *c, const char *name, const char *args_json,
                                const atomic_bool *cancel, int ws_fd, size_t max_bytes,
                                struct strbuf *out, char **structured,
                                const struct mcp_asker *asker)
{
	cJSON *p, *args = cJSON_Parse(args_json ? args_json : "{}"), *res = NULL;
	enum mcp_status st;
	char *err = NULL;
	bool is_error = false;

	strbuf_reset(out);
	if (structured)
		*structured = NULL;
	pthread_mutex_lock(&c->mu);
	if (!ensure_running(c, &err)) {
		strbuf_adds(out, err);
		free(err);
		cJSON_Delete(args);
		pthread_mutex_unlock(&c->mu);
		return MCP_FAILED;
	}
	p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "name", name);
	cJSON_AddItemToObject(p, "arguments", cJSON_IsObject(args) ? args : cJSON_CreateObject());
	if (!cJSON_IsObject(args))
		cJSON_Delete(args);
	pthread_mutex_lock(&c->wait_mu);
	c->asker = asker;
	pthread_mutex_unlock(&c->wait_mu);
	st = request(c, "tools/call", p, cancel, &res, &err);
	pthread_mutex_lock(&c->wait_mu);
	c->asker = NULL;
	pthread_mutex_unlock(&c->wait_mu);
	if (st == MCP_OK) {
		const cJSON *ie = cJSON_GetObjectItemCaseSensitive(res, "isError");
		const cJSON *sc = cJSON_GetObjectItemCaseSensitive(res, "structuredContent");
		char *why = NULL;
		is_error = cJSON_IsTrue(ie);
		if (!is_error && !result_fits(c, name, res, &why)) {
			is_error = true;
			strbuf_addf(out, "%s; the result as sent:\n", why);
			free(why);
		}
		if (structured && sc)
			*structured = cJSON_PrintUnformatted(sc);
		mcp_result_render(res, conf_of(c)->name, name, &c->files, ws_fd, out);
		if (!out->len)
			strbuf_adds(out, is_error ? "(the tool failed and said nothing)"
			                          : "(the tool returned nothing)");
		if (is_error)
			st = MCP_TOOL_ERROR;
	} else {
		if (st == MCP_FAILED && !running(c) && c->starts < STARTS_MAX)
			strbuf_addf(out, "%s; it will be started again for the next call", err);
		else
			strbuf_adds(out, err);
	}
	cJSON_Delete(res);
	free(err);
	pthread_mutex_unlock(&c->mu);
	mcp_result_bound(out, max_bytes);
	return st;
}
