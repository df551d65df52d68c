/* mcp_test_server — a small MCP server over stdio for the tests, with scripted tools:
 * pages of tools, list_changed, a slow tool, one that errors, one that crashes the server,
 * non-text, structured, oversized and hostile results. Every method it receives is
 * written to stderr ("got METHOD"), so a test can read what the client sent.
 * Options: --version REV (answer initialize with REV), --page N (tools per page),
 * --http (Streamable HTTP on 127.0.0.1 instead of stdio: the port is printed on stdout;
 * answers are JSON, or an event stream when there is more than one message or with --sse;
 * a session id is given at initialize and required after; DELETE ends it),
 * --resume (the answer to tools/call is a stream that ends after an event with an id and
 * `retry: 300`; a GET with Last-Event-ID then carries the answer, and "got GET
 * Last-Event-ID: ID after MS ms" is logged), --listen (a GET without Last-Event-ID opens
 * the standalone stream, which says at once that the tools changed; without it GET is
 * 405), --stray (both, but the answer goes on the standalone stream, as the conformance
 * suite's sse-retry server may do, and a GET with Last-Event-ID gets an empty stream),
 * --get404 (GET answered 404, as servers without a GET route do),
 * --flood BYTES (writes BYTES of stderr, in lines, before it serves: a chatty server),
 * --hold PATH (reads PATH, a FIFO, to its end before it serves: a server that starts only
 * when the test says so — the test opens the FIFO for writing and closes it). */
#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef MCP_STDIO_ONLY /* pevtui-mcp-demo, the demo's copy, speaks stdio only */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#endif

#include <cjson/cJSON.h>

static const char *version = NULL;
static int page = 3;
static int extra = 0; /* "change" adds a tool */
/* HTTP mode: what a request's answer holds (each message a line), under `mu`. */
static bool http_mode, sse_always, resume_mode, listen_mode, stray_mode, get_404;
static char outbox[1 << 20];
static size_t outbox_len;
static int outbox_n;
#ifndef MCP_STDIO_ONLY
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char session[32];
static char pending[1 << 20]; /* --resume: the answer a GET with Last-Event-ID carries */
static size_t pending_len;
static struct timespec closed_at; /* when the stream without the answer was sent */
static volatile bool stopping;
#endif

static const char *const tools[][2] = {
    {"echo", "Says back the text it is given."},
    {"slow", "Waits ms milliseconds, then answers."},
    {"fail", "Always fails (isError)."},
    {"crash", "Ends the server at once."},
    {"image", "Returns a small PNG image."},
    {"big", "Returns 200 KB of text."},
    {"hostile", "Returns text full of terminal escape sequences."},
    {"change", "Adds the tool extra and says the list changed."},
    {"structured", "Returns structuredContent {total} (an outputSchema), with text when "
                   "given text, total when given total."},
    {"env", "Returns the value of the environment variable named."},
    {"read_note", "Reads a note (allowed without the gate in the tests)."},
    {"pid", "Returns the server's process id."},
};
#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

static void send_out(cJSON *m)
{
	char *t = cJSON_PrintUnformatted(m);
	if (http_mode) {
		size_t n = strlen(t);
		if (outbox_len + n + 1 < sizeof(outbox)) {
			memcpy(outbox + outbox_len, t, n);
			outbox[outbox_len + n] = '\n';
			outbox_len += n + 1;
			outbox_n++;
		}
	} else {
		printf("%s\n", t);
		fflush(stdout);
	}
	free(t);
	cJSON_Delete(m);
}

static cJSON *reply(const cJSON *id)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, 1));
	return r;
}

static cJSON *text_result(cJSON *r, const char *text, bool error)
{
	cJSON *res = cJSON_AddObjectToObject(r, "result");
	cJSON *c = cJSON_AddArrayToObject(res, "content");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", text);
	cJSON_AddItemToArray(c, t);
	if (error)
		cJSON_AddBoolToObject(res, "isError", true);
	return res;
}

static void list(const cJSON *id, const cJSON *params)
{
	const cJSON *cur = cJSON_GetObjectItemCaseSensitive(params, "cursor");
	int from = cJSON_IsString(cur) ? atoi(cur->valuestring) : 0;
	int total = (int)N_TOOLS + extra;
	cJSON *r = reply(id), *res = cJSON_AddObjectToObject(r, "result");
	cJSON *arr = cJSON_AddArrayToObject(res, "tools");

	for (int i = from; i < total && i < from + page; i++) {
		cJSON *t = cJSON_CreateObject(), *s;
		cJSON_AddStringToObject(t, "name", i < (int)N_TOOLS ? tools[i][0] : "extra");
		cJSON_AddStringToObject(t, "description",
		                        i < (int)N_TOOLS ? tools[i][1] : "Appeared after change.");
		s = cJSON_AddObjectToObject(t, "inputSchema");
		cJSON_AddStringToObject(s, "type", "object");
		if (i < (int)N_TOOLS && !strcmp(tools[i][0], "read_note")) {
			cJSON *a = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(a, "readOnlyHint", true);
		}
		if (i < (int)N_TOOLS && !strcmp(tools[i][0], "structured")) {
			cJSON *o = cJSON_AddObjectToObject(t, "outputSchema"), *p, *q;
			cJSON_AddStringToObject(o, "type", "object");
			p = cJSON_AddObjectToObject(o, "properties");
			q = cJSON_AddObjectToObject(p, "total");
			cJSON_AddStringToObject(q, "type", "number");
			cJSON_AddItemToObject(o, "required", cJSON_CreateStringArray(
			                                         (const char *const[]){"total"}, 1));
		}
		if (i < (int)N_TOOLS && !strcmp(tools[i][0], "crash")) {
			cJSON *a = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(a, "readOnlyHint", true); /* a lie: never trusted */
			cJSON_AddBoolToObject(a, "destructiveHint", false);
		}
		cJSON_AddItemToArray(arr, t);
	}
	if (from + page < total) {
		char buf[16];
		snprintf(buf, sizeof(buf), "%d", from + page);
		cJSON_AddStringToObject(res, "nextCursor", buf);
	}
	send_out(r);
}

/* echo with "ask": SCHEMA (stdio only): asks the client (elicitation/create, the schema
 * as requestedSchema), waits for its answer and says it back: "ACTION CONTENT". */
static void ask(cJSON *r, const cJSON *schema)
{
	cJSON *q = cJSON_CreateObject(), *p;
	char *line = NULL, *t;
	size_t cap = 0;

	if (http_mode) {
		text_result(r, "ask works over stdio only", true);
		return;
	}
	cJSON_AddStringToObject(q, "jsonrpc", "2.0");
	cJSON_AddStringToObject(q, "id", "q1");
	cJSON_AddStringToObject(q, "method", "elicitation/create");
	p = cJSON_AddObjectToObject(q, "params");
	cJSON_AddStringToObject(p, "message", "Which colour?");
	cJSON_AddItemToObject(p, "requestedSchema", cJSON_Duplicate(schema, 1));
	t = cJSON_PrintUnformatted(q);
	printf("%s\n", t);
	fflush(stdout);
	free(t);
	cJSON_Delete(q);
	while (getline(&line, &cap, stdin) > 0) {
		cJSON *a = cJSON_Parse(line);
		const cJSON *res = cJSON_GetObjectItemCaseSensitive(a, "result");
		const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "id"));
		if (id && !strcmp(id, "q1")) {
			const char *act =
			    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "action"));
			char *c = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(res, "content"));
			char *said = malloc(strlen(c ? c : "") + 64);
			sprintf(said, "%s %s", act ? act : "(no action)", c ? c : "");
			fprintf(stderr, "got the answer %s\n", said);
			text_result(r, said, false);
			free(said);
			free(c);
			cJSON_Delete(a);
			break;
		}
		cJSON_Delete(a);
	}
	free(line);
}

static void call(const cJSON *id, const cJSON *params)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "name"));
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	cJSON *r = reply(id);

	if (!name) {
		name = "";
	}
	if (!strcmp(name, "echo") && cJSON_GetObjectItemCaseSensitive(args, "ask")) {
		ask(r, cJSON_GetObjectItemCaseSensitive(args, "ask"));
	} else if (!strcmp(name, "echo") || !strcmp(name, "read_note")) {
		const char *t =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
		text_result(r, t ? t : "(nothing)", false);
	} else if (!strcmp(name, "slow")) {
		const cJSON *ms = cJSON_GetObjectItemCaseSensitive(args, "ms");
		long w = cJSON_IsNumber(ms) ? (long)ms->valuedouble : 2000;
		struct timespec ts = {w / 1000, (w % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		text_result(r, "slept", false);
	} else if (!strcmp(name, "fail")) {
		text_result(r, "the fail tool failed, as it always does", true);
	} else if (!strcmp(name, "crash")) {
		fprintf(stderr, "crashing on purpose\n");
		exit(3);
	} else if (!strcmp(name, "image")) {
		cJSON *res = cJSON_AddObjectToObject(r, "result");
		cJSON *c = cJSON_AddArrayToObject(res, "content");
		cJSON *i = cJSON_CreateObject();
		cJSON_AddStringToObject(i, "type", "image");
		cJSON_AddStringToObject(i, "mimeType", "image/png");
		/* "\x89PNG\r\n\x1a\n" and four bytes */
		cJSON_AddStringToObject(i, "data", "iVBORw0KGgoAAQID");
		cJSON_AddItemToArray(c, i);
	} else if (!strcmp(name, "big")) {
		size_t n = 200 * 1024;
		char *t = malloc(n + 1);
		for (size_t k = 0; k < n; k++)
			t[k] = k % 64 == 63 ? '\n' : 'x';
		t[n] = '\0';
		text_result(r, t, false);
		free(t);
	} else if (!strcmp(name, "hostile")) {
		text_result(r,
		            "before\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m\xe2\x80\xae"
		            "evil after",
		            false);
	} else if (!strcmp(name, "change")) {
		cJSON *n = cJSON_CreateObject();
		extra = 1;
		cJSON_AddStringToObject(n, "jsonrpc", "2.0");
		cJSON_AddStringToObject(n, "method", "notifications/tools/list_changed");
		send_out(n);
		text_result(r, "changed", false);
	} else if (!strcmp(name, "structured")) {
		const char *t =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
		const cJSON *total = cJSON_GetObjectItemCaseSensitive(args, "total");
		cJSON *res = t ? text_result(r, t, false) : cJSON_AddObjectToObject(r, "result");
		cJSON *s = cJSON_AddObjectToObject(res, "structuredContent");
		if (!t)
			cJSON_AddArrayToObject(res, "content");
		cJSON_AddItemToObject(s, "total",
		                      total ? cJSON_Duplicate(total, 1) : cJSON_CreateNumber(42));
	} else if (!strcmp(name, "env")) {
		const char *v =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name"));
		const char *val = v ? getenv(v) : NULL;
		text_result(r, val ? val : "(unset)", false);
	} else if (!strcmp(name, "pid")) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		text_result(r, buf, false);
	} else if (!strcmp(name, "extra") && extra) {
		text_result(r, "extra here", false);
	} else {
		cJSON *e = cJSON_AddObjectToObject(r, "error");
		cJSON_AddNumberToObject(e, "code", -32602);
		cJSON_AddStringToObject(e, "message", "Unknown tool");
	}
	send_out(r);
}

static void handle(const char *line);

#ifndef MCP_STDIO_ONLY
struct upload {
	char *buf;
	size_t len;
};

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *ct,
                                  const char *body, size_t n, bool with_session)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (ct)
		MHD_add_response_header(r, "Content-Type", ct);
	if (with_session)
		MHD_add_response_header(r, "Mcp-Session-Id", session);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The messages of `box` (one a line) as events with ids from `first` (caller frees). */
static char *as_events(const char *box, size_t len, int first, const char *prefix)
{
	size_t cap = len * 2 + 4096, n = 0;
	char *ev = malloc(cap);

	n += (size_t)snprintf(ev, cap, "%s", prefix);
	for (const char *p = box, *nl; (nl = memchr(p, '\n', len - (size_t)(p - box))); p = nl + 1)
		n += (size_t)snprintf(ev + n, cap - n, "id: ev-%d\nevent: message\ndata: %.*s\n\n",
		                      first++, (int)(nl - p), p);
	return ev;
}

/* --listen: the standalone stream, written as the client reads it (this thread is the
 * connection's own: it may wait). */
static ssize_t listen_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	int *step = cls;
	int n;

	(void)pos;
	if ((*step)++ == 0) {
		pthread_mutex_lock(&mu);
		extra = 1;
		pthread_mutex_unlock(&mu);
		n = snprintf(buf, max,
		             "id: l-1\nretry: 200\ndata: \n\n"
		             "id: l-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":"
		             "\"notifications/tools/list_changed\"}\n\n");
		return n;
	}
	for (int i = 0; i < 10 && !stopping; i++) {
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&mu);
		if (stray_mode && pending_len) {
			char *ev = as_events(pending, pending_len, 100 + *step, "");
			n = snprintf(buf, max, "%s", ev);
			fprintf(stderr, "sent the answer on the GET stream\n");
			pending_len = 0;
			free(ev);
			pthread_mutex_unlock(&mu);
			return n;
		}
		pthread_mutex_unlock(&mu);
	}
	if (stopping || *step > 600)
		return MHD_CONTENT_READER_END_OF_STREAM;
	return snprintf(buf, max, ":\n\n"); /* a keep-alive */
}

static void listen_done(void *cls)
{
	free(cls);
}

static long ms_since(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000 + (now.tv_nsec - t->tv_nsec) / 1000000;
}

static enum MHD_Result on_get(struct MHD_Connection *c, const char *sid)
{
	const char *leid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	enum MHD_Result ret;

	pthread_mutex_lock(&mu);
	if (!sid || strcmp(sid, session)) {
		pthread_mutex_unlock(&mu);
		return reply_text(c, sid ? 404 : 400, "text/plain", "no such session", 15, false);
	}
	if (leid && stray_mode) {
		pthread_mutex_unlock(&mu);
		fprintf(stderr, "got GET Last-Event-ID: %s, sent nothing\n", leid);
		return reply_text(c, 200, "text/event-stream", "retry: 300\n\n", 12, false);
	}
	if (leid && resume_mode && pending_len) {
		char *ev = as_events(pending, pending_len, 2, "");
		fprintf(stderr, "got GET Last-Event-ID: %s after %ld ms\n", leid,
		        ms_since(&closed_at));
		pending_len = 0;
		ret = reply_text(c, 200, "text/event-stream", ev, strlen(ev), false);
		free(ev);
		pthread_mutex_unlock(&mu);
		return ret;
	}
	pthread_mutex_unlock(&mu);
	if (!leid && listen_mode) {
		int *step = calloc(1, sizeof(*step));
		struct MHD_Response *r = MHD_create_response_from_callback(
		    MHD_SIZE_UNKNOWN, 1024, listen_read, step, listen_done);
		fprintf(stderr, "got GET stream\n");
		MHD_add_response_header(r, "Content-Type", "text/event-stream");
		ret = MHD_queue_response(c, 200, r);
		MHD_destroy_response(r);
		return ret;
	}
	fprintf(stderr, "got GET%s%s, refused\n", leid ? " Last-Event-ID: " : "", leid ? leid : "");
	if (get_404) /* as servers without a GET route answer */
		return reply_text(c, 404, "text/plain", "Cannot GET", 10, false);
	return reply_text(c, 405, "text/plain", "POST only", 9, false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *ver, const char *data,
                                  size_t *size, void **con_cls)
{
	struct upload *u = *con_cls;
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	enum MHD_Result ret;
	cJSON *m;
	const char *meth;
	bool is_init, is_call, needs_answer;

	(void)cls;
	(void)url;
	(void)ver;
	if (!u) {
		*con_cls = calloc(1, sizeof(struct upload));
		return MHD_YES;
	}
	if (*size) {
		u->buf = realloc(u->buf, u->len + *size + 1);
		memcpy(u->buf + u->len, data, *size);
		u->len += *size;
		u->buf[u->len] = '\0';
		*size = 0;
		return MHD_YES;
	}
	if (!strcmp(method, "DELETE")) {
		fprintf(stderr, "got DELETE\n");
		pthread_mutex_lock(&mu);
		session[0] = '\0';
		pthread_mutex_unlock(&mu);
		return reply_text(c, 200, NULL, "", 0, false);
	}
	if (!strcmp(method, "GET"))
		return on_get(c, sid);
	if (strcmp(method, "POST") || !u->buf)
		return reply_text(c, 405, "text/plain", "POST only", 9, false);
	m = cJSON_Parse(u->buf);
	meth = m ? cJSON_GetStringValue(cJSON_GetObjectItem(m, "method")) : NULL;
	is_init = meth && !strcmp(meth, "initialize");
	is_call = meth && !strcmp(meth, "tools/call");
	needs_answer = m && cJSON_GetObjectItem(m, "method") && cJSON_GetObjectItem(m, "id");
	cJSON_Delete(m);
	pthread_mutex_lock(&mu);
	if (is_init) {
		static int n;
		snprintf(session, sizeof(session), "sess-%d", ++n);
	} else if (!sid || strcmp(sid, session)) {
		pthread_mutex_unlock(&mu);
		fprintf(stderr, "got a request of a session that is not mine\n");
		return reply_text(c, sid ? 404 : 400, "text/plain", "no such session", 15, false);
	}
	outbox_len = 0;
	outbox_n = 0;
	handle(u->buf);
	if (!needs_answer) {
		pthread_mutex_unlock(&mu);
		return reply_text(c, 202, NULL, "", 0, false);
	}
	if (is_call && resume_mode) {
		/* The answer is kept for the GET that resumes this stream. */
		static const char cut[] = "id: ev-1\nretry: 300\ndata: \n\n";
		memcpy(pending, outbox, outbox_len);
		pending_len = outbox_len;
		clock_gettime(CLOCK_MONOTONIC, &closed_at);
		ret = reply_text(c, 200, "text/event-stream", cut, sizeof(cut) - 1, false);
	} else if (outbox_n > 1 || sse_always) {
		char *ev = as_events(outbox, outbox_len, 1, ": a comment, then the messages\n\n");
		ret = reply_text(c, 200, "text/event-stream", ev, strlen(ev), is_init);
		free(ev);
	} else {
		ret = reply_text(c, 200, "application/json", outbox, outbox_len, is_init);
	}
	pthread_mutex_unlock(&mu);
	return ret;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

/* Serves until its stdin closes (the test ends it, or kills it). */
static int serve_http(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	char buf[256];

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
	                     NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
	                     MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
	if (!d)
		return 1;
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("%u\n", info ? info->port : 0);
	fflush(stdout);
	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		;
	stopping = true;
	MHD_stop_daemon(d);
	return 0;
}
#else
static int serve_http(void)
{
	fprintf(stderr, "this copy of the server speaks stdio only\n");
	return 2;
}
#endif

/* n bytes of stderr, 64 a line. */
static void flood(long n)
{
	char line[64];

	memset(line, 'f', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (long k = 0; k < n; k += 64)
		fwrite(line, 1, n - k < 64 ? (size_t)(n - k) : 64, stderr);
}

/* Blocks until the writer of the FIFO at `path` has come and gone. */
static void hold(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		perror(path);
		exit(2);
	}
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--version") && i + 1 < argc)
			version = argv[++i];
		else if (!strcmp(argv[i], "--page") && i + 1 < argc)
			page = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--http"))
			http_mode = true;
		else if (!strcmp(argv[i], "--sse"))
			sse_always = true;
		else if (!strcmp(argv[i], "--resume"))
			resume_mode = true;
		else if (!strcmp(argv[i], "--listen"))
			listen_mode = true;
		else if (!strcmp(argv[i], "--get404"))
			get_404 = true;
		else if (!strcmp(argv[i], "--stray"))
			stray_mode = resume_mode = listen_mode = true;
		else if (!strcmp(argv[i], "--flood") && i + 1 < argc)
			flood(atol(argv[++i]));
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold(argv[++i]);
	}
	if (http_mode)
		return serve_http();
	while (getline(&line, &cap, stdin) > 0) {
		handle(line);
	}
	free(line);
	return 0;
}

static void handle(const char *line)
{
	{
		cJSON *m = cJSON_Parse(line);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		const char *method =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "method"));
		const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");

		fprintf(stderr, "got %s\n", method ? method : "(response)");
		if (method && !strcmp(method, "initialize")) {
			const char *want = cJSON_GetStringValue(
			    cJSON_GetObjectItemCaseSensitive(params, "protocolVersion"));
			cJSON *r = reply(id), *res = cJSON_AddObjectToObject(r, "result"), *info;
			cJSON_AddStringToObject(res, "protocolVersion", version ? version : want);
			cJSON_AddObjectToObject(cJSON_AddObjectToObject(res, "capabilities"),
			                        "tools");
			if (cJSON_GetObjectItemCaseSensitive(
			        cJSON_GetObjectItemCaseSensitive(params, "capabilities"), "elicitation"))
				fprintf(stderr, "the client answers questions\n");
			info = cJSON_AddObjectToObject(res, "serverInfo");
			cJSON_AddStringToObject(info, "name", "pevtui-test-server");
			cJSON_AddStringToObject(info, "version", "1");
			send_out(r);
		} else if (method && !strcmp(method, "tools/list")) {
			list(id, params);
		} else if (method && !strcmp(method, "tools/call")) {
			call(id, params);
		} else if (method && !strcmp(method, "ping")) {
			cJSON *r = reply(id);
			cJSON_AddObjectToObject(r, "result");
			send_out(r);
		} else if (method && id) {
			cJSON *r = reply(id), *e = cJSON_AddObjectToObject(r, "error");
			cJSON_AddNumberToObject(e, "code", -32601);
			cJSON_AddStringToObject(e, "message", "Method not found");
			send_out(r);
		}
		cJSON_Delete(m);
	}
}
