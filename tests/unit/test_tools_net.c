/* test_tools_net — http_get against a local libmicrohttpd server (127.0.0.1, never the net). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

static struct MHD_Daemon *daemon_;
static unsigned short port;
static atomic_int requests;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const void *body, size_t n, const char *location)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	if (location)
		MHD_add_response_header(r, "Location", location);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	(void)cls;
	(void)method;
	(void)version;
	(void)data;
	(void)data_size;
	if (!*con_cls) { /* the first call only announces the request */
		*con_cls = c;
		return MHD_YES;
	}
	atomic_fetch_add(&requests, 1);
	if (strcmp(url, "/text") == 0)
		return reply(c, 200, "text/plain; charset=utf-8", "hello from the test server\n",
			     27, NULL);
	if (strcmp(url, "/big") == 0) {
		char *b = xmalloc(10000);
		memset(b, 'b', 10000);
		enum MHD_Result r = reply(c, 200, "text/plain", b, 10000, NULL);
		free(b);
		return r;
	}
	if (strcmp(url, "/slow") == 0) {
		struct timespec ts = {2, 0};
		nanosleep(&ts, NULL);
		return reply(c, 200, "text/plain", "late", 4, NULL);
	}
	if (strcmp(url, "/binary") == 0)
		return reply(c, 200, "image/png", "\x89PNG\r\n\x1a\n\0\0", 10, NULL);
	if (strcmp(url, "/nul") == 0)
		return reply(c, 200, "text/plain", "ab\0cd", 5, NULL);
	if (strcmp(url, "/redir-file") == 0)
		return reply(c, 302, "text/plain", "", 0, "file:///etc/passwd");
	if (strcmp(url, "/redir-loop") == 0)
		return reply(c, 302, "text/plain", "", 0, "/redir-loop");
	if (strcmp(url, "/redir-ok") == 0)
		return reply(c, 302, "text/plain", "", 0, "/text");
	if (strcmp(url, "/e503") == 0)
		return reply(c, 503, "text/plain", "busy", 4, NULL);
	if (strcmp(url, "/e429") == 0)
		return reply(c, 429, "text/plain", "slow down", 9, NULL);
	return reply(c, 404, "text/plain", "no such page here", 17, NULL);
}

static int group_setup(void **state)
{
	(void)state;
	/* A proxy from the environment must not see the local requests. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("ALL_PROXY");
	unsetenv("all_proxy");
	setenv("no_proxy", "*", 1);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	daemon_ = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				   0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10, MHD_OPTION_END);
	if (!daemon_)
		return -1;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
	port = info ? info->port : 0;
	return port ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	MHD_stop_daemon(daemon_);
	return 0;
}

struct result {
	bool ok;
	bool transient;
	char *text;
};

static struct result get(struct tool_env *env, const char *url)
{
	struct result r = {0};
	cJSON *in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "url", url);
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	env->transient = &r.transient;
	r.ok = tool_find("http_get")->run(env, in, &out);
	env->transient = NULL;
	cJSON_Delete(in);
	r.text = strbuf_detach(&out);
	return r;
}

static char *local(const char *path)
{
	return xasprintf("http://127.0.0.1:%u%s", port, path);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

static void test_text(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1};
	char *u = local("/text");
	struct result r = get(&env, u);
	assert_true(r.ok);
	assert_false(r.transient);
	assert_string_equal(r.text,
			    "HTTP 200 (text/plain; charset=utf-8), 27 bytes\nhello from the test "
			    "server\n");
	free(r.text);
	free(u);
	u = local("/redir-ok");
	r = get(&env, u);
	assert_true(r.ok);
	assert_non_null(strstr(r.text, "hello from the test server"));
	free(r.text);
	free(u);
}

static void test_size_limit(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1, .http_max_bytes = 4096};
	char *u = local("/big");
	struct result r = get(&env, u);
	assert_true(r.ok);
	assert_non_null(strstr(r.text, "larger than the 4096-byte limit"));
	const char *body = strchr(r.text, '\n');
	assert_non_null(body);
	size_t bs = strspn(body + 1, "b");
	assert_int_equal(bs, 4096);
	free(r.text);
	/* with the default limit the whole body comes */
	env.http_max_bytes = 0;
	r = get(&env, u);
	assert_true(r.ok);
	assert_non_null(strstr(r.text, "10000 bytes"));
	free(r.text);
	free(u);
}

static void test_time_limit(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1, .http_timeout_s = 1};
	char *u = local("/slow");
	long t0 = now_ms();
	struct result r = get(&env, u);
	long took = now_ms() - t0;
	assert_false(r.ok);
	assert_true(r.transient);
	assert_true(took >= 900 && took < 1900);
	assert_non_null(strstr(r.text, "took longer than 1 s"));
	free(r.text);
	free(u);
}

static atomic_bool cancel_flag;

static void *cancel_later(void *arg)
{
	(void)arg;
	struct timespec ts = {0, 200 * 1000000L};
	nanosleep(&ts, NULL);
	atomic_store(&cancel_flag, true);
	return NULL;
}

static void test_cancel(void **state)
{
	(void)state;
	atomic_store(&cancel_flag, false);
	struct tool_env env = {.ws_fd = -1, .cancel = &cancel_flag};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, NULL), 0);
	char *u = local("/slow");
	long t0 = now_ms();
	struct result r = get(&env, u);
	long took = now_ms() - t0;
	pthread_join(th, NULL);
	assert_false(r.ok);
	assert_false(r.transient);
	assert_true(took < 1500);
	assert_non_null(strstr(r.text, "cancelled"));
	free(r.text);
	free(u);
}

static void test_schemes_and_redirects(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1};
	const char *bad[] = {"file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://x/",
			     "/etc/passwd", "http://a b/"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct result r = get(&env, bad[i]);
		assert_false(r.ok);
		assert_false(r.transient);
		assert_null(strstr(r.text, "root:"));
		free(r.text);
	}
	int before = atomic_load(&requests);
	char *u = local("/redir-file");
	struct result r = get(&env, u);
	assert_false(r.ok);
	assert_false(r.transient);
	assert_null(strstr(r.text, "root:"));
	assert_non_null(strstr(r.text, "only http and https are followed"));
	free(r.text);
	free(u);
	assert_int_equal(atomic_load(&requests), before + 1);

	before = atomic_load(&requests);
	u = local("/redir-loop");
	r = get(&env, u);
	assert_false(r.ok);
	assert_non_null(strstr(r.text, "more than 5 redirects"));
	assert_int_equal(atomic_load(&requests), before + 6);
	free(r.text);
	free(u);
}

static void test_status_and_binary(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1};
	char *u = local("/missing");
	struct result r = get(&env, u);
	assert_false(r.ok);
	assert_false(r.transient);
	assert_non_null(strstr(r.text, "HTTP 404"));
	assert_non_null(strstr(r.text, "no such page here"));
	free(r.text);
	free(u);
	const char *trans[] = {"/e503", "/e429"};
	for (size_t i = 0; i < 2; i++) {
		u = local(trans[i]);
		r = get(&env, u);
		assert_false(r.ok);
		assert_true(r.transient);
		free(r.text);
		free(u);
	}
	const char *bin[] = {"/binary", "/nul"};
	for (size_t i = 0; i < 2; i++) {
		u = local(bin[i]);
		r = get(&env, u);
		assert_true(r.ok);
		assert_non_null(strstr(r.text, "binary data, not text"));
		assert_null(strstr(r.text, "PNG"));
		free(r.text);
		free(u);
	}
}

static void test_connection_refused_is_transient(void **state)
{
	(void)state;
	/* a port that was free a moment ago: nothing listens there */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof(sa);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	close(s);
	char *u = xasprintf("http://127.0.0.1:%u/", ntohs(sa.sin_port));
	struct tool_env env = {.ws_fd = -1};
	struct result r = get(&env, u);
	assert_false(r.ok);
	assert_true(r.transient);
	free(r.text);
	free(u);
}

struct retries {
	int n;
	long wait[4];
};

static void on_retry(void *ctx, const char *tool, int attempt, int max, long wait_ms,
		     const char *reason)
{
	struct retries *rt = ctx;
	assert_string_equal(tool, "http_get");
	assert_int_equal(attempt, rt->n + 2);
	assert_int_equal(max, TOOL_RETRY_TRIES);
	assert_non_null(strstr(reason, "HTTP 503"));
	rt->wait[rt->n++] = wait_ms;
}

/* The engine's path: a 503 is retried TOOL_RETRY_TRIES times, each retry announced. */
static void test_invoke_retries_503(void **state)
{
	(void)state;
	struct retries rt = {0};
	struct tool_env env = {.ws_fd = -1, .hook_ctx = &rt, .on_tool_retry = on_retry};
	int before = atomic_load(&requests);
	cJSON *in = cJSON_CreateObject();
	char *u = local("/e503");
	cJSON_AddStringToObject(in, "url", u);
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	assert_false(tool_invoke(tool_find("http_get"), &env, in, &out));
	assert_int_equal(atomic_load(&requests), before + TOOL_RETRY_TRIES);
	assert_int_equal(rt.n, TOOL_RETRY_TRIES - 1);
	assert_true(rt.wait[0] >= TOOL_RETRY_BASE_MS / 2 && rt.wait[0] <= TOOL_RETRY_BASE_MS);
	assert_true(rt.wait[1] >= TOOL_RETRY_BASE_MS && rt.wait[1] <= 2 * TOOL_RETRY_BASE_MS);
	assert_non_null(strstr(out.buf, "failed 3 times in a row"));
	strbuf_release(&out);
	cJSON_Delete(in);
	free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_schemes_and_redirects),
		cmocka_unit_test(test_status_and_binary),
		cmocka_unit_test(test_connection_refused_is_transient),
		cmocka_unit_test(test_invoke_retries_503),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
