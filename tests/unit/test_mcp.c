/* test_mcp — the MCP client and hub against tests/mcp/mcp_test_server over stdio: the
 * protocol (negotiation, pages, list_changed, ping, cancel), results of every kind, time
 * limits, a crashing server restarted once, the environment, the config forms. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_elicit.h"
#include "mcp_trust.h"
#include "mcp_hub.h"
#include "sandbox.h"
#include "strbuf.h"
#include "testdir.h"
#include "tool.h"
#include "xalloc.h"

struct fx {
	char *top, *ws, *log;
	int ws_fd;
	struct mcp_conf conf;
};

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char *err = NULL;

	fx->top = testdir_new("mcp");
	fx->ws = xasprintf("%s/ws", fx->top);
	fx->log = xasprintf("%s/t.log", fx->top);
	fx->ws_fd = sandbox_open_root(fx->ws, &err);
	assert_true(fx->ws_fd >= 0);
	assert_true(mcp_conf_set_key(&fx->conf, "t", "command", MCP_TEST_SERVER, &err));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	close(fx->ws_fd);
	mcp_conf_release(&fx->conf);
	assert_true(testdir_remove(fx->top));
	free(fx->top);
	free(fx->ws);
	free(fx->log);
	free(fx);
	return 0;
}

static void set(struct fx *fx, const char *key, const char *value)
{
	char *err = NULL;
	assert_true(mcp_conf_set_key(&fx->conf, "t", key, value, &err));
}

static struct mcp_client *started(struct fx *fx)
{
	struct mcp_client *c = mcp_client_new(&fx->conf.v[0], fx->log, fx->ws);
	char *err = NULL;

	if (!mcp_client_start(c, &err))
		fail_msg("start: %s", err);
	return c;
}

static enum mcp_status call(struct fx *fx, struct mcp_client *c, const char *tool, const char *args,
                            struct strbuf *out)
{
	return mcp_client_call(c, tool, args, NULL, fx->ws_fd, TOOL_MAX_OUTPUT, out, NULL, NULL);
}

static void test_lists_every_page(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;
	struct mcp_tools t;

	set(fx, "args", "[\"--page\", \"2\"]");
	c = started(fx);
	assert_string_equal(mcp_client_protocol(c), MCP_PROTOCOL_LATEST);
	mcp_client_tools(c, &t);
	assert_int_equal(t.n, 12);
	assert_string_equal(t.v[0].name, "echo");
	assert_string_equal(t.v[10].name, "read_note");
	assert_string_equal(t.v[11].name, "pid");
	assert_non_null(strstr(t.v[10].annotations_json, "readOnlyHint"));
	mcp_tools_release(&t);
	mcp_client_free(c);
}

static void test_negotiates_down(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;

	set(fx, "args", "[\"--version\", \"2025-03-26\"]");
	c = started(fx);
	assert_string_equal(mcp_client_protocol(c), "2025-03-26");
	mcp_client_free(c);
}

static void test_refuses_unknown_revision(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;
	char *err = NULL;

	set(fx, "args", "[\"--version\", \"1999-01-01\"]");
	c = mcp_client_new(&fx->conf.v[0], fx->log, fx->ws);
	assert_false(mcp_client_start(c, &err));
	assert_non_null(strstr(err, "speaks protocol revision 1999-01-01"));
	free(err);
	mcp_client_free(c);
}

static void test_call_text_error_and_unknown(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c = started(fx);
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;

	strbuf_init(&out);
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"hello\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "hello");
	assert_int_equal(call(fx, c, "fail", "{}", &out), MCP_TOOL_ERROR);
	assert_non_null(strstr(out.buf, "as it always does"));
	assert_int_equal(call(fx, c, "nope", "{}", &out), MCP_TOOL_ERROR);
	assert_non_null(strstr(out.buf, "Unknown tool"));
	assert_true(mcp_client_ping(c, &err));
	strbuf_release(&out);
	mcp_client_free(c);
}

static void test_results_of_every_kind(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c = started(fx);
	struct strbuf out = STRBUF_INIT;
	char *png, *path;
	struct stat st;

	strbuf_init(&out);
	assert_int_equal(call(fx, c, "image", "{}", &out), MCP_OK);
	assert_non_null(strstr(out.buf, "saved as mcp-files/t-image-1.png"));
	path = xasprintf("%s/mcp-files/t-image-1.png", fx->ws);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 12);
	png = testdir_slurp(path);
	assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
	free(png);
	free(path);

	assert_int_equal(call(fx, c, "structured", "{}", &out), MCP_OK);
	assert_string_equal(out.buf, "{\"total\":42}");
	/* Beside a short text, structuredContent is kept; a text block that is the same JSON
	 * says it already. */
	assert_int_equal(call(fx, c, "structured", "{\"text\":\"short\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "short\n{\"total\":42}");
	assert_int_equal(call(fx, c, "structured", "{\"text\":\"{\\\"total\\\": 42}\"}", &out),
	                 MCP_OK);
	assert_string_equal(out.buf, "{\"total\": 42}");
	{
		char *sc = NULL;
		assert_int_equal(mcp_client_call(c, "structured", "{\"total\":\"many\"}", NULL,
		                                 fx->ws_fd, TOOL_MAX_OUTPUT, &out, &sc, NULL),
		                 MCP_TOOL_ERROR);
		assert_non_null(strstr(out.buf, "the result of structured does not match the "
		                                "outputSchema the tool declared (at $.total: "
		                                "expected type \"number\", got string)"));
		assert_string_equal(sc, "{\"total\":\"many\"}");
		free(sc);
	}

	assert_int_equal(call(fx, c, "big", "{}", &out), MCP_OK);
	assert_true(out.len < TOOL_MAX_OUTPUT + 200);
	assert_non_null(strstr(out.buf, "more bytes of this result were cut"));

	assert_int_equal(call(fx, c, "hostile", "{}", &out), MCP_OK);
	assert_null(strchr(out.buf, '\x1b'));
	assert_null(strchr(out.buf, '\x07'));
	assert_null(strstr(out.buf, "\xe2\x80\xae"));
	assert_non_null(strstr(out.buf, "before"));
	assert_non_null(strstr(out.buf, "evil after"));
	strbuf_release(&out);
	mcp_client_free(c);
}

static void test_list_changed(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c = started(fx);
	struct strbuf out = STRBUF_INIT;
	struct mcp_tools t;

	strbuf_init(&out);
	mcp_client_tools(c, &t);
	assert_int_equal(t.n, 12);
	mcp_tools_release(&t);
	assert_int_equal(call(fx, c, "change", "{}", &out), MCP_OK);
	mcp_client_tools(c, &t);
	assert_int_equal(t.n, 13);
	assert_string_equal(t.v[12].name, "extra");
	mcp_tools_release(&t);
	assert_int_equal(call(fx, c, "extra", "{}", &out), MCP_OK);
	strbuf_release(&out);
	mcp_client_free(c);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The log holds `what` (the server writes each method it gets), within 5 s. */
static bool log_says(struct fx *fx, const char *what)
{
	for (int i = 0; i < 500; i++) {
		char *log = testdir_slurp(fx->log);
		bool yes = log && strstr(log, what);
		free(log);
		if (yes)
			return true;
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	return false;
}

static void test_timeout_and_cancel(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;
	struct strbuf out = STRBUF_INIT;
	struct timespec t0;
	atomic_bool cancel;

	set(fx, "timeout", "1");
	c = started(fx);
	strbuf_init(&out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(call(fx, c, "slow", "{\"ms\":1500}", &out), MCP_FAILED);
	assert_true(ms_since(&t0) < 1400);
	assert_non_null(strstr(out.buf, "did not answer tools/call within 1 s"));
	/* The server hears of it; the late answer is dropped and the next call works. */
	assert_true(log_says(fx, "got notifications/cancelled"));
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"still here\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "still here");

	atomic_init(&cancel, true);
	assert_int_equal(mcp_client_call(c, "slow", "{\"ms\":10}", &cancel, fx->ws_fd, 0, &out, NULL, NULL),
	                 MCP_CANCELLED);
	assert_non_null(strstr(out.buf, "was cancelled"));
	strbuf_release(&out);
	mcp_client_free(c);
}

static void test_crash_restarts_once(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c = started(fx);
	struct strbuf out = STRBUF_INIT;

	strbuf_init(&out);
	assert_int_equal(call(fx, c, "crash", "{}", &out), MCP_FAILED);
	assert_non_null(strstr(out.buf, "stopped (exit status 3)"));
	assert_non_null(strstr(out.buf, "started again for the next call"));
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"back\"}", &out), MCP_OK);
	assert_int_equal(call(fx, c, "crash", "{}", &out), MCP_FAILED);
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"gone\"}", &out), MCP_FAILED);
	assert_non_null(strstr(out.buf, "unavailable for the rest of the run"));
	strbuf_release(&out);
	mcp_client_free(c);
}

static void test_environment_is_only_what_is_named(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;
	struct strbuf out = STRBUF_INIT;

	setenv("ANTHROPIC_API_KEY", "sk-secret", 1);
	set(fx, "env", "{\"GREETING\": \"hi\"}");
	c = started(fx);
	strbuf_init(&out);
	assert_int_equal(call(fx, c, "env", "{\"name\":\"ANTHROPIC_API_KEY\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "(unset)");
	assert_int_equal(call(fx, c, "env", "{\"name\":\"GREETING\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "hi");
	assert_int_equal(call(fx, c, "env", "{\"name\":\"PATH\"}", &out), MCP_OK);
	assert_string_not_equal(out.buf, "(unset)");
	unsetenv("ANTHROPIC_API_KEY");
	strbuf_release(&out);
	mcp_client_free(c);
}

static void test_missing_command(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c;
	char *err = NULL;

	set(fx, "command", "pevtui-no-such-mcp-server");
	c = mcp_client_new(&fx->conf.v[0], fx->log, fx->ws);
	assert_false(mcp_client_start(c, &err));
	assert_non_null(strstr(err, "command \"pevtui-no-such-mcp-server\" not found"));
	free(err);
	mcp_client_free(c);
}

static void test_hub_offer_lookup_allow(void **state)
{
	struct fx *fx = *state;
	struct mcp_hub *h;
	struct mcp_offer o;
	char *srv = NULL, *tool = NULL, *ann = NULL, *desc = NULL, *list;
	const char *pat;
	struct strbuf out = STRBUF_INIT;

	set(fx, "allow", "[\"read_*\", \"echo\"]");
	h = mcp_hub_new(&fx->conf, fx->top, fx->ws);
	mcp_hub_start(h, NULL, NULL);
	mcp_hub_offer(h, &o);
	assert_int_equal(o.n, 12);
	assert_string_equal(o.v[0].name, "t__echo");
	assert_non_null(strstr(o.v[0].description, "[MCP server t]"));
	mcp_offer_release(&o);
	assert_true(mcp_hub_lookup(h, "t__read_note", &srv, &tool, &ann, &desc));
	assert_string_equal(srv, "t");
	assert_string_equal(tool, "read_note");
	assert_non_null(strstr(ann, "readOnlyHint"));
	assert_true(mcp_hub_allowed(h, srv, tool, &pat));
	assert_string_equal(pat, "read_*");
	assert_false(mcp_hub_allowed(h, "t", "crash", &pat));
	assert_false(mcp_hub_lookup(h, "t__nothing", &srv, &tool, NULL, NULL));
	assert_false(mcp_hub_lookup(h, "read_file", &srv, &tool, NULL, NULL));
	strbuf_init(&out);
	assert_int_equal(
	    mcp_hub_call(h, "t", "echo", "{\"text\":\"via hub\"}", NULL, fx->ws_fd, 0, &out, NULL, NULL),
	    MCP_OK);
	assert_string_equal(out.buf, "via hub");
	list = mcp_hub_describe(h, 5000);
	assert_non_null(strstr(list, "- t__slow: [MCP server t] Waits ms milliseconds"));
	free(list);
	free(srv);
	free(tool);
	free(ann);
	free(desc);
	strbuf_release(&out);
	mcp_hub_stop(h);
	mcp_hub_free(h);
}

static void *offer_thread(void *arg)
{
	struct mcp_offer o;
	size_t n;

	mcp_hub_offer(arg, &o);
	n = o.n;
	mcp_offer_release(&o);
	return (void *)n;
}

/* A server slow to start does not hold the planner up: it is named, and the executor's
 * offer (which waits) has its tools. */
static void test_slow_start_is_named(void **state)
{
	struct fx *fx = *state;
	struct mcp_hub *h;
	struct mcp_offer o;
	char *list, *args = xasprintf("[\"-c\", \"sleep 1; exec %s\"]", MCP_TEST_SERVER);
	pthread_t waiters[3];

	set(fx, "command", "sh");
	set(fx, "args", args);
	h = mcp_hub_new(&fx->conf, fx->top, fx->ws);
	mcp_hub_start(h, NULL, NULL);
	list = mcp_hub_describe(h, 50);
	assert_non_null(strstr(list, "- t__*: the tools of MCP server t (still starting"));
	free(list);
	/* Parallel steps wait for it at once (this hung when each joined the starter). */
	for (int k = 0; k < 3; k++)
		assert_int_equal(pthread_create(&waiters[k], NULL, offer_thread, h), 0);
	for (int k = 0; k < 3; k++) {
		void *n;
		assert_int_equal(pthread_join(waiters[k], &n), 0);
		assert_int_equal((size_t)n, 12);
	}
	mcp_hub_offer(h, &o);
	assert_int_equal(o.n, 12);
	mcp_offer_release(&o);
	mcp_hub_free(h);
	free(args);
}

/* A server's question during a call goes to the call's asker; its answer (content typed
 * as the schema says) goes back; without an asker, or without the offer, it is declined. */
static enum mcp_elicit_action pick_blue(void *ctx, const char *server, const char *message,
                                        const char *schema_json, char **content_json)
{
	struct mcp_elicit_form f;
	char *err = NULL;

	assert_string_equal(server, "t");
	assert_string_equal(message, "Which colour?");
	assert_true(mcp_elicit_parse(schema_json, &f, &err));
	assert_int_equal(f.n, 2);
	assert_string_equal(f.v[0].value, "red"); /* the schema's default */
	*content_json = mcp_elicit_defaults(&f, &err);
	mcp_elicit_release(&f);
	(*(int *)ctx)++;
	return MCP_ELICIT_ACCEPT;
}

static void test_questions(void **state)
{
	struct fx *fx = *state;
	struct mcp_client *c = mcp_client_new(&fx->conf.v[0], fx->log, fx->ws);
	int asked = 0;
	struct mcp_asker asker = {.fn = pick_blue, .ctx = &asked};
	struct strbuf out = STRBUF_INIT;
	const char *args = "{\"ask\":{\"type\":\"object\",\"properties\":{"
	                   "\"colour\":{\"type\":\"string\",\"enum\":[\"red\",\"blue\"],"
	                   "\"default\":\"red\"},\"n\":{\"type\":\"integer\",\"default\":3}}}}";
	char *err = NULL;

	strbuf_init(&out);
	mcp_client_offer_elicitation(c, true);
	assert_true(mcp_client_start(c, &err));
	assert_true(log_says(fx, "the client answers questions"));
	assert_int_equal(mcp_client_call(c, "echo", args, NULL, fx->ws_fd, 0, &out, NULL, &asker),
	                 MCP_OK);
	assert_int_equal(asked, 1);
	assert_string_equal(out.buf, "accept {\"colour\":\"red\",\"n\":3}");
	assert_int_equal(call(fx, c, "echo", args, &out), MCP_OK); /* no asker */
	assert_string_equal(out.buf, "decline ");
	mcp_client_free(c);
	strbuf_release(&out);
}

/* ---- the same server over Streamable HTTP on 127.0.0.1 ---- */

struct http_srv {
	pid_t pid;
	int in_fd; /* its stdin: closing it ends it */
	char *url;
};

/* Starts the test server with --http (and `mode`, may be NULL); stderr to `log`. */
static struct http_srv http_start(const char *mode, const char *log)
{
	struct http_srv s = {0};
	int in[2], out[2];
	char buf[32] = {0};
	ssize_t n;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	s.pid = fork();
	assert_true(s.pid >= 0);
	if (s.pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(fd, 2);
		close(in[1]);
		close(out[0]);
		execl(MCP_TEST_SERVER, MCP_TEST_SERVER, "--http", mode, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	n = read(out[0], buf, sizeof(buf) - 1); /* the port, once it listens */
	close(out[0]);
	assert_true(n > 0 && atoi(buf) > 0);
	s.in_fd = in[1];
	s.url = xasprintf("http://127.0.0.1:%d/mcp", atoi(buf));
	return s;
}

static void http_stop(struct http_srv *s)
{
	int st;

	close(s->in_fd);
	kill(s->pid, SIGTERM);
	waitpid(s->pid, &st, 0);
	free(s->url);
}

static struct mcp_client *http_client(struct fx *fx, const char *url, const char *timeout)
{
	struct mcp_conf c = {0};
	struct mcp_client *cl;
	char *err = NULL;

	assert_true(mcp_conf_set_key(&c, "h", "url", url, &err));
	assert_true(mcp_conf_set_key(&c, "h", "headers", "{\"X-Test\": \"yes\"}", &err));
	if (timeout)
		assert_true(mcp_conf_set_key(&c, "h", "timeout", timeout, &err));
	cl = mcp_client_new(&c.v[0], NULL, fx->ws);
	mcp_conf_release(&c);
	if (!mcp_client_start(cl, &err))
		fail_msg("start over HTTP: %s", err);
	return cl;
}

static void test_http_transport(void **state)
{
	struct fx *fx = *state;
	struct http_srv s = http_start(NULL, fx->log);
	struct mcp_client *c = http_client(fx, s.url, "1");
	struct strbuf out = STRBUF_INIT;
	struct mcp_tools t;
	char *err = NULL;

	strbuf_init(&out);
	assert_string_equal(mcp_client_protocol(c), MCP_PROTOCOL_LATEST);
	mcp_client_tools(c, &t);
	assert_int_equal(t.n, 12); /* four pages of three */
	mcp_tools_release(&t);
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"over http\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "over http");
	assert_int_equal(call(fx, c, "fail", "{}", &out), MCP_TOOL_ERROR);
	assert_int_equal(call(fx, c, "image", "{}", &out), MCP_OK);
	assert_non_null(strstr(out.buf, "saved as mcp-files/h-image-1.png"));
	assert_int_equal(call(fx, c, "hostile", "{}", &out), MCP_OK);
	assert_null(strchr(out.buf, '\x1b'));
	/* Two messages: the answer is an event stream (list_changed, then the result). */
	assert_int_equal(call(fx, c, "change", "{}", &out), MCP_OK);
	mcp_client_tools(c, &t);
	assert_int_equal(t.n, 13);
	mcp_tools_release(&t);
	assert_true(mcp_client_ping(c, &err));
	assert_int_equal(call(fx, c, "slow", "{\"ms\":1500}", &out), MCP_FAILED);
	assert_non_null(strstr(out.buf, "did not answer tools/call within 1 s"));
	assert_true(log_says(fx, "got notifications/cancelled"));
	mcp_client_free(c); /* ends the session */
	assert_true(log_says(fx, "got DELETE"));
	strbuf_release(&out);
	http_stop(&s);
}

/* Event streams for every answer; a session the server no longer knows is started again. */
static void test_http_sse_and_session(void **state)
{
	struct fx *fx = *state;
	struct http_srv s = http_start("--sse", fx->log);
	struct mcp_client *a = http_client(fx, s.url, NULL), *b;
	struct strbuf out = STRBUF_INIT;

	strbuf_init(&out);
	assert_int_equal(call(fx, a, "echo", "{\"text\":\"streamed\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "streamed");
	b = http_client(fx, s.url, NULL); /* the server keeps one session: a's is gone */
	assert_int_equal(call(fx, a, "echo", "{\"text\":\"x\"}", &out), MCP_FAILED);
	assert_non_null(strstr(out.buf, "HTTP 404"));
	assert_int_equal(call(fx, a, "echo", "{\"text\":\"again\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "again");
	mcp_client_free(a);
	mcp_client_free(b);
	strbuf_release(&out);
	http_stop(&s);
}

/* A stream that ends after an event with an id and `retry: 300` is resumed with GET and
 * Last-Event-ID, no sooner than the server asked, and the answer is taken there. */
static void test_http_resume(void **state)
{
	struct fx *fx = *state;
	struct http_srv s = http_start("--resume", fx->log);
	struct mcp_client *c = http_client(fx, s.url, "10");
	struct strbuf out = STRBUF_INIT;
	char *text, *at;

	strbuf_init(&out);
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"resumed\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "resumed");
	text = testdir_slurp(fx->log);
	at = strstr(text, "got GET Last-Event-ID: ev-1 after ");
	assert_non_null(at);
	assert_true(atol(at + strlen("got GET Last-Event-ID: ev-1 after ")) >= 280);
	free(text);
	/* Two messages on the resumed stream: the notice and the answer. */
	assert_int_equal(call(fx, c, "change", "{}", &out), MCP_OK);
	assert_string_equal(out.buf, "changed");
	mcp_client_free(c);
	strbuf_release(&out);
	http_stop(&s);
}

/* An answer the server sends on the standalone GET stream instead of the request's own
 * (resumed, empty) stream is taken there. */
static void test_http_answer_on_get_stream(void **state)
{
	struct fx *fx = *state;
	struct http_srv s = http_start("--stray", fx->log);
	struct mcp_client *c = http_client(fx, s.url, "10");
	struct strbuf out = STRBUF_INIT;

	strbuf_init(&out);
	assert_int_equal(call(fx, c, "echo", "{\"text\":\"strayed\"}", &out), MCP_OK);
	assert_string_equal(out.buf, "strayed");
	assert_true(log_says(fx, "sent the answer on the GET stream"));
	mcp_client_free(c);
	strbuf_release(&out);
	http_stop(&s);
}

/* The standalone GET stream: a notice the server sends there is heard; a server without
 * one answers 405 and nothing else changes. */
static void test_http_listen(void **state)
{
	struct fx *fx = *state;
	struct http_srv s = http_start("--listen", fx->log);
	struct mcp_client *c = http_client(fx, s.url, NULL);
	struct mcp_tools t = {0};

	for (int i = 0; i < 200; i++) { /* up to 10 s */
		mcp_client_tools(c, &t);
		if (t.n == 13)
			break;
		mcp_tools_release(&t);
		struct timespec ts = {0, 50 * 1000000L};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(t.n, 13);
	assert_string_equal(t.v[12].name, "extra");
	mcp_tools_release(&t);
	assert_true(log_says(fx, "got GET stream"));
	mcp_client_free(c); /* the stream is closed without waiting for the server */
	http_stop(&s);

	s = http_start(NULL, fx->log);
	c = http_client(fx, s.url, NULL);
	mcp_client_free(c);
	assert_true(log_says(fx, "got GET, refused"));
	http_stop(&s);

	/* A 404 to the GET (a server without the route) does not end the session. */
	s = http_start("--get404", fx->log);
	c = http_client(fx, s.url, NULL);
	{
		struct strbuf out = STRBUF_INIT;
		strbuf_init(&out);
		assert_int_equal(call(fx, c, "echo", "{\"text\":\"still in\"}", &out), MCP_OK);
		assert_string_equal(out.buf, "still in");
		strbuf_release(&out);
	}
	mcp_client_free(c);
	http_stop(&s);
}

static void test_config_forms(void **state)
{
	struct mcp_conf c = {0};
	char *err = NULL, *path;
	FILE *f;
	const struct mcp_server_conf *s;
	char *dir = testdir_new("mcpconf");

	(void)state;
	assert_true(mcp_conf_set_key(&c, "files", "command", "npx", &err));
	assert_true(mcp_conf_set_key(&c, "files", "args", "-y, pkg", &err));
	assert_true(mcp_conf_set_key(&c, "files", "env", "A=1, B=2", &err));
	assert_true(mcp_conf_set_key(&c, "files", "allow", "[\"read_*\"]", &err));
	assert_false(mcp_conf_set_key(&c, "files", "timeout", "0", &err));
	assert_non_null(strstr(err, "timeout must be"));
	free(err);
	err = NULL;
	assert_false(mcp_conf_set_key(&c, "a__b", "command", "x", &err));
	assert_non_null(strstr(err, "may not hold \"__\""));
	free(err);
	err = NULL;
	assert_false(mcp_conf_set_key(&c, "files", "colour", "x", &err));
	free(err);
	err = NULL;

	path = xasprintf("%s/.mcp.json", dir);
	f = fopen(path, "w");
	fputs("{\"mcpServers\": {\"files\": {\"command\": \"other\"},"
	      " \"git\": {\"command\": \"uvx\", \"args\": [\"mcp-server-git\"], \"env\": {\"X\": "
	      "\"y\"}},"
	      " \"remote\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\","
	      " \"headers\": {\"Authorization\": \"Bearer t\"}}}}",
	      f);
	fclose(f);
	assert_true(mcp_conf_load_json(&c, path, &err));
	s = mcp_conf_find(&c, "files");
	assert_string_equal(s->command, "npx"); /* the config wins */
	assert_int_equal(s->args.n, 2);
	s = mcp_conf_find(&c, "git");
	assert_string_equal(s->args.v[0], "mcp-server-git");
	assert_string_equal(s->env.v[0], "X=y");
	s = mcp_conf_find(&c, "remote");
	assert_string_equal(s->headers.v[0], "Authorization: Bearer t");

	assert_true(mcp_conf_add_flag(&c, "files=./srv --root 'a b'", &err));
	s = mcp_conf_find(&c, "files");
	assert_string_equal(s->command, "./srv");
	assert_int_equal(s->args.n, 2);
	assert_string_equal(s->args.v[1], "a b");
	assert_false(mcp_conf_add_flag(&c, "nocommand", &err));
	free(err);
	err = NULL;
	assert_true(mcp_conf_check(&c, &err));
	assert_true(mcp_conf_load_json(&c, "/nonexistent/.mcp.json", &err));
	free(path);
	mcp_conf_release(&c);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* What the approval question shows: the command as a shell would read it, cleaned of
 * terminal controls (a model may have written the file), the names of its environment
 * (not the values); for a remote server its URL and header names. */
static void test_trust_describe(void **state)
{
	struct mcp_server_conf sv = {0};
	char *d;

	(void)state;
	sv.name = "git";
	sv.command = "uvx";
	strvec_push(&sv.args, "mcp server");
	strvec_push(&sv.args, "it's\x1b]0;pwned\x07");
	strvec_push(&sv.env, "TOKEN=secret-value");
	d = mcp_trust_describe(&sv);
	assert_string_equal(d, "uvx 'mcp server' 'it'\\''s' (environment: TOKEN)");
	free(d);
	strvec_clear(&sv.args);
	strvec_clear(&sv.env);
	sv.command = NULL;
	sv.url = "https://mcp.example.com/mcp";
	strvec_push(&sv.headers, "Authorization: Bearer xyz");
	d = mcp_trust_describe(&sv);
	assert_string_equal(d, "https://mcp.example.com/mcp (headers: Authorization)");
	free(d);
	strvec_clear(&sv.headers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_trust_describe),
		cmocka_unit_test_setup_teardown(test_lists_every_page, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_negotiates_down, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refuses_unknown_revision, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_call_text_error_and_unknown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_results_of_every_kind, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list_changed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timeout_and_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_crash_restarts_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_environment_is_only_what_is_named, setup,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_missing_command, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hub_offer_lookup_allow, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slow_start_is_named, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_questions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_transport, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_sse_and_session, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_listen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_answer_on_get_stream, setup, teardown),
	    cmocka_unit_test(test_config_forms),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
