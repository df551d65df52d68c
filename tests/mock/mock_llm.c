/* mock_llm — scripted LLM server over libmicrohttpd (thread per connection, so a reply may
 * sleep or stall without holding up the others). */
#include "config.h"

#include "mock_llm.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "strbuf.h"
#include "xalloc.h"

struct reply {
	char *needle; /* NULL: any request */
	bool used;
	int status;
	char *headers;
	char *content_type;
	char *body;
	size_t len;
	enum mock_fault fault;
	size_t cut_at;
	size_t chunk;
	int delay_ms;
};

struct mock {
	struct MHD_Daemon *d;
	int port;
	pthread_mutex_t lock;
	struct reply *script;
	size_t n_script, cap_script;
	struct reply dflt;
	bool have_dflt;
	struct mock_request *reqs;
	size_t n_reqs, cap_reqs;
	size_t connections;
	atomic_bool stopping;
};

static char *dup0(const char *s)
{
	return xstrdup(s ? s : "");
}

static void reply_copy(struct reply *dst, const struct mock_reply *r)
{
	dst->needle = NULL;
	dst->used = false;
	dst->status = r->status ? r->status : 200;
	dst->headers = r->headers ? xstrdup(r->headers) : NULL;
	dst->content_type = r->content_type ? xstrdup(r->content_type) : NULL;
	dst->body = dup0(r->body);
	dst->len = strlen(dst->body);
	dst->fault = r->fault;
	dst->cut_at = r->cut_at;
	dst->chunk = r->chunk;
	dst->delay_ms = r->delay_ms;
}

static void reply_clone(struct reply *dst, const struct reply *src)
{
	*dst = *src;
	dst->needle = NULL;
	dst->headers = src->headers ? xstrdup(src->headers) : NULL;
	dst->content_type = src->content_type ? xstrdup(src->content_type) : NULL;
	dst->body = xstrdup(src->body);
}

static void reply_free(struct reply *r)
{
	free(r->needle);
	r->needle = NULL;
	free(r->headers);
	free(r->content_type);
	free(r->body);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* ---- streaming a reply ---------------------------------------------------------------- */

struct stream {
	struct mock *m;
	struct reply r;
	size_t limit; /* bytes to send before the fault */
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *s = cls;
	size_t n;

	if (pos >= s->limit) {
		switch (s->r.fault) {
		case MOCK_CUT:
			return MHD_CONTENT_READER_END_WITH_ERROR;
		case MOCK_STALL:
			/* Silent until the test ends; the client's idle timeout must cut us. */
			for (int i = 0; i < 3000 && !atomic_load(&s->m->stopping); i++)
				sleep_ms(10);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		default:
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
	}
	if (s->r.delay_ms)
		sleep_ms(s->r.delay_ms);
	n = s->limit - (size_t)pos;
	if (s->r.chunk == MOCK_CHUNK_EVENTS) {
		const char *end = memmem(s->r.body + pos, n, "\n\n", 2);

		if (end)
			n = (size_t)(end + 2 - (s->r.body + pos));
	} else if (s->r.chunk && n > s->r.chunk) {
		n = s->r.chunk;
	}
	if (n > max)
		n = max;
	memcpy(buf, s->r.body + pos, n);
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *s = cls;

	reply_free(&s->r);
	free(s);
}

static void add_headers(struct MHD_Response *resp, const struct reply *r)
{
	const char *ct = r->content_type;
	char *copy, *line, *save = NULL;

	if (!ct)
		ct = (!strncmp(r->body, "event:", 6) || !strncmp(r->body, "data:", 5) ||
		      !strncmp(r->body, ":", 1))
			     ? "text/event-stream"
			     : "application/json";
	MHD_add_response_header(resp, "Content-Type", ct);
	if (!r->headers)
		return;
	copy = xstrdup(r->headers);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = '\0';
		colon++;
		while (*colon == ' ')
			colon++;
		MHD_add_response_header(resp, line, colon);
	}
	free(copy);
}

/* ---- requests ------------------------------------------------------------------------- */

struct pending {
	struct strbuf body;
};

static const char *hdr(struct MHD_Connection *c, const char *name)
{
	const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);

	return v ? v : "";
}

static void record(struct mock *m, struct MHD_Connection *c, const char *url, const char *body)
{
	struct mock_request *q;

	pthread_mutex_lock(&m->lock);
	m->reqs = xgrow(m->reqs, &m->cap_reqs, m->n_reqs + 1, sizeof(*m->reqs));
	q = &m->reqs[m->n_reqs++];
	q->path = dup0(url);
	q->api_key = dup0(hdr(c, "x-api-key"));
	q->authorization = dup0(hdr(c, "Authorization"));
	q->version = dup0(hdr(c, "anthropic-version"));
	q->body = dup0(body);
	pthread_mutex_unlock(&m->lock);
}

/* The first unused reply meant for this request, in script order. */
static bool next_reply(struct mock *m, const char *body, struct reply *out)
{
	bool ok = false;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n_script && !ok; i++) {
		struct reply *r = &m->script[i];

		if (r->used || (r->needle && !strstr(body, r->needle)))
			continue;
		reply_clone(out, r);
		r->used = true;
		ok = true;
	}
	if (!ok && m->have_dflt) {
		reply_clone(out, &m->dflt);
		ok = true;
	}
	pthread_mutex_unlock(&m->lock);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct mock *m = cls;
	struct pending *p = *con_cls;
	struct MHD_Response *resp;
	struct reply r;
	enum MHD_Result ret;

	if (!p) {
		p = xcalloc(1, sizeof(*p));
		strbuf_init(&p->body);
		*con_cls = p;
		return MHD_YES;
	}
	if (*upload_size) {
		strbuf_add(&p->body, upload_data, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	record(m, c, url, p->body.buf);
	if (!next_reply(m, p->body.buf, &r)) {
		static const char none[] =
			"{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":"
			"\"mock: script empty\"}}";
		struct mock_reply mr = {.status = 500, .body = none};

		reply_copy(&r, &mr);
	}
	if (r.fault == MOCK_RESET) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		struct linger lg = {1, 0};

		/* Linger 0: closing sends RST, the client sees a reset connection. */
		if (ci)
			setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		reply_free(&r);
		return MHD_NO;
	}
	if (r.fault == MOCK_NONE && !r.chunk && !r.delay_ms) {
		resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_COPY);
		add_headers(resp, &r);
		ret = MHD_queue_response(c, (unsigned int)r.status, resp);
		MHD_destroy_response(resp);
		reply_free(&r);
		return ret;
	}
	struct stream *s = xcalloc(1, sizeof(*s));

	s->m = m;
	s->r = r;
	s->limit = (r.fault == MOCK_NONE || r.cut_at > r.len) ? r.len : r.cut_at;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s,
						 stream_free);
	add_headers(resp, &s->r);
	ret = MHD_queue_response(c, (unsigned int)s->r.status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct pending *p = *con_cls;

	if (p) {
		strbuf_release(&p->body);
		free(p);
		*con_cls = NULL;
	}
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct mock *m = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		pthread_mutex_lock(&m->lock);
		m->connections++;
		pthread_mutex_unlock(&m->lock);
	}
}

struct mock *mock_start(void)
{
	struct mock *m = xcalloc(1, sizeof(*m));
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	pthread_mutex_init(&m->lock, NULL);
	atomic_init(&m->stopping, false);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	m->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, &sa,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)30, MHD_OPTION_END);
	if (!m->d)
		fatal("mock: MHD_start_daemon failed");
	info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || !info->port)
		fatal("mock: no bound port");
	m->port = info->port;
	return m;
}

void mock_stop(struct mock *m)
{
	if (!m)
		return;
	atomic_store(&m->stopping, true);
	MHD_stop_daemon(m->d);
	for (size_t i = 0; i < m->n_script; i++)
		reply_free(&m->script[i]);
	free(m->script);
	if (m->have_dflt)
		reply_free(&m->dflt);
	for (size_t i = 0; i < m->n_reqs; i++) {
		free(m->reqs[i].path);
		free(m->reqs[i].api_key);
		free(m->reqs[i].authorization);
		free(m->reqs[i].version);
		free(m->reqs[i].body);
	}
	free(m->reqs);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

int mock_port(const struct mock *m)
{
	return m->port;
}

char *mock_url(const struct mock *m, const char *suffix)
{
	return xasprintf("http://127.0.0.1:%d%s", m->port, suffix ? suffix : "");
}

void mock_push(struct mock *m, const struct mock_reply *r)
{
	pthread_mutex_lock(&m->lock);
	m->script = xgrow(m->script, &m->cap_script, m->n_script + 1, sizeof(*m->script));
	reply_copy(&m->script[m->n_script++], r);
	pthread_mutex_unlock(&m->lock);
}

void mock_push_for(struct mock *m, const char *needle, const struct mock_reply *r)
{
	pthread_mutex_lock(&m->lock);
	m->script = xgrow(m->script, &m->cap_script, m->n_script + 1, sizeof(*m->script));
	reply_copy(&m->script[m->n_script], r);
	m->script[m->n_script++].needle = xstrdup(needle);
	pthread_mutex_unlock(&m->lock);
}

void mock_set_default(struct mock *m, const struct mock_reply *r)
{
	pthread_mutex_lock(&m->lock);
	if (m->have_dflt)
		reply_free(&m->dflt);
	reply_copy(&m->dflt, r);
	m->have_dflt = true;
	pthread_mutex_unlock(&m->lock);
}

size_t mock_pending(struct mock *m)
{
	size_t n = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n_script; i++)
		n += !m->script[i].used;
	pthread_mutex_unlock(&m->lock);
	return n;
}

size_t mock_request_count(struct mock *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->n_reqs;
	pthread_mutex_unlock(&m->lock);
	return n;
}

struct mock_request *mock_request_get(struct mock *m, size_t i)
{
	struct mock_request *q = NULL;

	pthread_mutex_lock(&m->lock);
	if (i < m->n_reqs) {
		q = xcalloc(1, sizeof(*q));
		q->path = xstrdup(m->reqs[i].path);
		q->api_key = xstrdup(m->reqs[i].api_key);
		q->authorization = xstrdup(m->reqs[i].authorization);
		q->version = xstrdup(m->reqs[i].version);
		q->body = xstrdup(m->reqs[i].body);
	}
	pthread_mutex_unlock(&m->lock);
	return q;
}

void mock_request_free(struct mock_request *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->api_key);
	free(r->authorization);
	free(r->version);
	free(r->body);
	free(r);
}

size_t mock_connections(struct mock *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->connections;
	pthread_mutex_unlock(&m->lock);
	return n;
}

char *mock_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		fatal("mock: cannot read %s", path);
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb);
}

/* Text escaped for a JSON string (tests pass plain ASCII; quotes and backslashes handled). */
static void add_json_string(struct strbuf *sb, const char *s)
{
	strbuf_addc(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf_addc(sb, '\\');
		if (*s == '\n') {
			strbuf_adds(sb, "\\n");
			continue;
		}
		strbuf_addc(sb, *s);
	}
	strbuf_addc(sb, '"');
}

char *mock_anthropic_text_sse(const char *model, const char *text, long in, long out)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_addf(&sb,
		    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"
		    "\"msg_mock\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
		    "\"model\":\"%s\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":"
		    "{\"input_tokens\":%ld,\"output_tokens\":1}}}\n\n",
		    model, in);
	strbuf_adds(&sb, "event: content_block_start\ndata: {\"type\":\"content_block_start\","
			 "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
	strbuf_adds(&sb, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
			 "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":");
	add_json_string(&sb, text);
	strbuf_adds(&sb, "}}\n\n");
	strbuf_adds(&sb, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\","
			 "\"index\":0}\n\n");
	strbuf_addf(&sb,
		    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":"
		    "{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":"
		    "{\"output_tokens\":%ld}}\n\n",
		    out);
	strbuf_adds(&sb, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
	return strbuf_detach(&sb);
}

char *mock_openai_text_sse(const char *model, const char *text, long prompt, long completion)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_addf(&sb,
		    "data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\","
		    "\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
		    "\"content\":",
		    model);
	add_json_string(&sb, text);
	strbuf_adds(&sb, "},\"finish_reason\":null}]}\n\n");
	strbuf_addf(&sb,
		    "data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\","
		    "\"model\":\"%s\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
		    "\"stop\"}]}\n\n",
		    model);
	strbuf_addf(&sb,
		    "data: {\"id\":\"chatcmpl-mock\",\"object\":\"chat.completion.chunk\","
		    "\"model\":\"%s\",\"choices\":[],\"usage\":{\"prompt_tokens\":%ld,"
		    "\"completion_tokens\":%ld,\"total_tokens\":%ld}}\n\n",
		    model, prompt, completion, prompt + completion);
	strbuf_adds(&sb, "data: [DONE]\n\n");
	return strbuf_detach(&sb);
}
