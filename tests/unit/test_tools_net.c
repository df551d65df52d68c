/* test_tools_net — http_get against a local libmicrohttpd server (127.0.0.1, never the net):
 * limits, redirects, retries, and the guard that keeps it off local and private addresses
 * unless the host is allowed; netguard's address classes and allow list. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netdb.h>
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

#include "netguard.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

static struct MHD_Daemon *daemon_;
static unsigned short port;
static atomic_int requests;
static atomic_int connections;
static atomic_int canary_hits; /* requests for /canary: a refused destination */
/* The tests reach the server as "127.0.0.1", allowed here; the guard tests leave it out. */
static struct strvec allow_local;

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
	if (strcmp(url, "/canary") == 0) {
		atomic_fetch_add(&canary_hits, 1);
		return reply(c, 200, "text/plain", "canary", 6, NULL);
	}
	if (strcmp(url, "/redir-localhost") == 0 || strcmp(url, "/redir-mapped") == 0) {
		char *to = xasprintf(url[7] == 'l' ? "http://localhost:%u/canary"
						   : "http://[::ffff:127.0.0.1]:%u/canary",
				     port);
		enum MHD_Result r = reply(c, 302, "text/plain", "", 0, to);
		free(to);
		return r;
	}
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

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)c;
	(void)socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&connections, 1);
}

static int group_setup(void **state)
{
	(void)state;
	strvec_push(&allow_local, "127.0.0.1");
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
				   MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
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
	strvec_clear(&allow_local);
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local, .http_max_bytes = 4096};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local, .http_timeout_s = 1};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local, .cancel = &cancel_flag};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local};
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
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local, .hook_ctx = &rt, .on_tool_retry = on_retry};
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

/* ---- the network guard ------------------------------------------------------------------ */

/* Classifies a numeric host the way curl's resolver reads it (getaddrinfo, which takes
 * 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 as inet_aton does). */
static enum netguard_kind kind_of(const char *numeric)
{
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	if (getaddrinfo(numeric, NULL, &hints, &res) != 0)
		fail_msg("getaddrinfo does not read \"%s\"", numeric);
	enum netguard_kind k = netguard_classify(res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return k;
}

static void test_netguard_classes(void **state)
{
	(void)state;
	static const struct {
		const char *addr;
		enum netguard_kind kind;
	} cases[] = {
		/* loopback, in every spelling the probe used */
		{"127.0.0.1", NETGUARD_LOOPBACK},
		{"2130706433", NETGUARD_LOOPBACK},
		{"0x7f000001", NETGUARD_LOOPBACK},
		{"0177.0.0.1", NETGUARD_LOOPBACK},
		{"127.1", NETGUARD_LOOPBACK},
		{"127.255.255.254", NETGUARD_LOOPBACK},
		{"::1", NETGUARD_LOOPBACK},
		{"0:0:0:0:0:0:0:1", NETGUARD_LOOPBACK},
		/* IPv4 inside IPv6: mapped, compatible, SIIT, NAT64, 6to4 */
		{"::ffff:127.0.0.1", NETGUARD_LOOPBACK},
		{"::ffff:7f00:1", NETGUARD_LOOPBACK},
		{"::127.0.0.1", NETGUARD_LOOPBACK},
		{"::ffff:0:127.0.0.1", NETGUARD_LOOPBACK},
		{"64:ff9b::127.0.0.1", NETGUARD_LOOPBACK},
		{"2002:7f00:1::", NETGUARD_LOOPBACK},
		{"::ffff:10.1.2.3", NETGUARD_PRIVATE},
		{"::ffff:169.254.169.254", NETGUARD_LINK_LOCAL},
		{"64:ff9b::a9fe:a9fe", NETGUARD_LINK_LOCAL},
		{"2002:c0a8:101::1", NETGUARD_PRIVATE},
		{"::ffff:0.0.0.0", NETGUARD_UNSPECIFIED},
		/* private, shared, link-local */
		{"10.0.0.1", NETGUARD_PRIVATE},
		{"10.255.255.255", NETGUARD_PRIVATE},
		{"172.16.0.1", NETGUARD_PRIVATE},
		{"172.31.255.255", NETGUARD_PRIVATE},
		{"192.168.1.1", NETGUARD_PRIVATE},
		{"0xc0a80101", NETGUARD_PRIVATE},
		{"100.64.0.1", NETGUARD_SHARED},
		{"100.127.255.255", NETGUARD_SHARED},
		{"169.254.169.254", NETGUARD_LINK_LOCAL},
		{"fe80::1", NETGUARD_LINK_LOCAL},
		{"febf::1", NETGUARD_LINK_LOCAL},
		{"fec0::1", NETGUARD_SITE_LOCAL},
		{"fc00::1", NETGUARD_UNIQUE_LOCAL},
		{"fd12:3456::1", NETGUARD_UNIQUE_LOCAL},
		/* multicast, unspecified, broadcast */
		{"224.0.0.1", NETGUARD_MULTICAST},
		{"239.255.255.250", NETGUARD_MULTICAST},
		{"ff02::1", NETGUARD_MULTICAST},
		{"0.0.0.0", NETGUARD_UNSPECIFIED},
		{"0", NETGUARD_UNSPECIFIED},
		{"0.1.2.3", NETGUARD_UNSPECIFIED},
		{"::", NETGUARD_UNSPECIFIED},
		{"255.255.255.255", NETGUARD_BROADCAST},
		/* public, including the neighbours of every refused range */
		{"8.8.8.8", NETGUARD_PUBLIC},
		{"1.1.1.1", NETGUARD_PUBLIC},
		{"9.255.255.255", NETGUARD_PUBLIC},
		{"11.0.0.0", NETGUARD_PUBLIC},
		{"100.63.255.255", NETGUARD_PUBLIC},
		{"100.128.0.0", NETGUARD_PUBLIC},
		{"126.255.255.255", NETGUARD_PUBLIC},
		{"128.0.0.0", NETGUARD_PUBLIC},
		{"169.253.255.255", NETGUARD_PUBLIC},
		{"169.255.0.0", NETGUARD_PUBLIC},
		{"172.15.255.255", NETGUARD_PUBLIC},
		{"172.32.0.0", NETGUARD_PUBLIC},
		{"192.167.255.255", NETGUARD_PUBLIC},
		{"192.169.0.0", NETGUARD_PUBLIC},
		{"223.255.255.255", NETGUARD_PUBLIC},
		{"2606:4700:4700::1111", NETGUARD_PUBLIC},
		{"::ffff:8.8.8.8", NETGUARD_PUBLIC},
		{"64:ff9b::808:808", NETGUARD_PUBLIC},
		{"2002:808:808::1", NETGUARD_PUBLIC},
		{"fbff::1", NETGUARD_PUBLIC},
		{"fe00::1", NETGUARD_PUBLIC},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum netguard_kind k = kind_of(cases[i].addr);
		if (k != cases[i].kind)
			fail_msg("%s is %s, want %s", cases[i].addr, netguard_kind_name(k),
				 netguard_kind_name(cases[i].kind));
	}
	/* short or foreign addresses are never public */
	struct sockaddr_in6 six = {.sin6_family = AF_INET6};
	assert_int_equal(netguard_classify((struct sockaddr *)&six, sizeof(struct sockaddr_in)),
			 NETGUARD_UNKNOWN);
	struct sockaddr un = {.sa_family = AF_UNIX};
	assert_int_equal(netguard_classify(&un, sizeof(un)), NETGUARD_UNKNOWN);
	assert_int_equal(netguard_classify(NULL, 0), NETGUARD_UNKNOWN);
	assert_string_equal(netguard_kind_name(NETGUARD_LOOPBACK), "loopback");
}

static void test_netguard_allow_list(void **state)
{
	(void)state;
	struct strvec allow = STRVEC_INIT;
	strvec_push(&allow, "LocalHost");
	strvec_push(&allow, "192.168.1.10");
	strvec_push(&allow, "[::1]");
	strvec_push(&allow, "nas.home.");
	assert_true(netguard_host_allowed(&allow, "localhost"));
	assert_true(netguard_host_allowed(&allow, "LOCALHOST."));
	assert_true(netguard_host_allowed(&allow, "192.168.1.10"));
	assert_true(netguard_host_allowed(&allow, "::1"));
	assert_true(netguard_host_allowed(&allow, "[0:0::1]"));
	assert_true(netguard_host_allowed(&allow, "nas.home"));
	assert_false(netguard_host_allowed(&allow, "localhost.evil.example"));
	assert_false(netguard_host_allowed(&allow, "evil-localhost"));
	assert_false(netguard_host_allowed(&allow, "192.168.1.1"));
	assert_false(netguard_host_allowed(&allow, "127.0.0.1"));
	assert_false(netguard_host_allowed(&allow, "[::2]"));
	assert_false(netguard_host_allowed(&allow, ""));
	assert_false(netguard_host_allowed(&allow, NULL));
	assert_false(netguard_host_allowed(NULL, "localhost"));
	strvec_clear(&allow);

	const char *good[] = {"localhost", "192.168.1.10", "::1", "[fe80::1]", "my-box_2.lan"};
	const char *bad[] = {"",       "http://localhost", "localhost:8080", "*.lan",
			     "a b",    "host/path",        ".lan",           "[::1]:80"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(netguard_valid_entry(good[i]));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (netguard_valid_entry(bad[i]))
			fail_msg("\"%s\" was taken as a host", bad[i]);
}

static void assert_refused(const struct result *r)
{
	assert_false(r->ok);
	assert_false(r->transient);
	if (strncmp(r->text, "refused: ", 9) != 0 || !strstr(r->text, "http_allow_hosts"))
		fail_msg("not a refusal: %s", r->text);
}

/* Without an allow list, no spelling of the local server reaches it: not one connection. */
static void test_local_addresses_refused(void **state)
{
	(void)state;
	const char *hosts[] = {
		"127.0.0.1", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "localhost",
		"LocalHost", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "[::1]", "[::]",
		/* elsewhere on the local network: refused before any packet is sent */
		"169.254.169.254", "10.0.0.1", "192.168.0.1", "100.64.0.1", "[fe80::1]",
		"[fd00::1]", "224.0.0.1", "255.255.255.255"};
	struct tool_env env = {.ws_fd = -1};
	int req0 = atomic_load(&requests), con0 = atomic_load(&connections);
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		char *u = xasprintf("http://%s:%u/text", hosts[i], port);
		struct result r = get(&env, u);
		assert_refused(&r);
		free(r.text);
		free(u);
	}
	assert_int_equal(atomic_load(&requests), req0);
	assert_int_equal(atomic_load(&connections), con0);

	/* The message names the address and the host it came from. */
	char *u = xasprintf("http://localhost:%u/text", port);
	struct result r = get(&env, u);
	/* 127.0.0.1 or ::1, whichever curl tried first */
	assert_non_null(strstr(r.text, " for \"localhost\": loopback)"));
	free(r.text);
	free(u);
	u = xasprintf("http://2130706433:%u/text", port);
	r = get(&env, u);
	assert_non_null(strstr(r.text, "127.0.0.1"));
	assert_non_null(strstr(r.text, "loopback"));
	free(r.text);
	free(u);

	/* An allow list that names other hosts changes nothing. */
	struct strvec other = STRVEC_INIT;
	strvec_push(&other, "example.org");
	strvec_push(&other, "127.0.0.2");
	env.http_allow_hosts = &other;
	u = local("/text");
	r = get(&env, u);
	assert_refused(&r);
	free(r.text);
	free(u);
	strvec_clear(&other);
	assert_int_equal(atomic_load(&connections), con0);
}

/* An allowed host that redirects to one that is not: the second hop never connects. */
static void test_redirect_to_local_refused(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow_local};
	const char *paths[] = {"/redir-localhost", "/redir-mapped"};
	for (size_t i = 0; i < 2; i++) {
		int req0 = atomic_load(&requests), hits0 = atomic_load(&canary_hits);
		char *u = local(paths[i]);
		struct result r = get(&env, u);
		assert_refused(&r);
		assert_non_null(strstr(r.text, "redirected to"));
		assert_non_null(strstr(r.text, "/canary"));
		assert_int_equal(atomic_load(&canary_hits), hits0);
		assert_int_equal(atomic_load(&requests), req0 + 1); /* the redirect only */
		free(r.text);
		free(u);
	}
	/* A redirect to the allowed host itself is followed as before. */
	char *u = local("/redir-ok");
	struct result r = get(&env, u);
	assert_true(r.ok);
	assert_non_null(strstr(r.text, "hello from the test server"));
	free(r.text);
	free(u);
}

static int retries_seen;

static void count_retry(void *ctx, const char *tool, int attempt, int max, long wait_ms,
			const char *reason)
{
	(void)ctx;
	(void)tool;
	(void)attempt;
	(void)max;
	(void)wait_ms;
	(void)reason;
	retries_seen++;
}

/* The engine's path: a refusal is final, not retried like a refused connection. */
static void test_refusal_not_retried(void **state)
{
	(void)state;
	struct tool_env env = {.ws_fd = -1, .on_tool_retry = count_retry};
	cJSON *in = cJSON_CreateObject();
	char *u = xasprintf("http://localhost:%u/canary", port);
	cJSON_AddStringToObject(in, "url", u);
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	int con0 = atomic_load(&connections);
	retries_seen = 0;
	assert_false(tool_invoke(tool_find("http_get"), &env, in, &out));
	assert_int_equal(retries_seen, 0);
	assert_int_equal(atomic_load(&connections), con0);
	assert_int_equal(atomic_load(&canary_hits), 0);
	assert_non_null(strstr(out.buf, "refused: "));
	strbuf_release(&out);
	cJSON_Delete(in);
	free(u);
}

/* A proxy from the environment is not used: through it, the guard would see the proxy's
 * address, and the proxy would reach whatever the URL names. */
static void test_environment_proxy_ignored(void **state)
{
	(void)state;
	char *proxy = xasprintf("http://127.0.0.1:%u", port);
	setenv("http_proxy", proxy, 1);
	setenv("HTTPS_PROXY", proxy, 1);
	setenv("ALL_PROXY", proxy, 1);
	unsetenv("no_proxy");
	/* The name is allowed, so only the proxy setting decides whether the local server
	 * (the would-be proxy) is reached; .invalid never resolves. */
	struct strvec allow = STRVEC_INIT;
	strvec_push(&allow, "pevtui-test.invalid");
	struct tool_env env = {.ws_fd = -1, .http_allow_hosts = &allow, .http_timeout_s = 3};
	int req0 = atomic_load(&requests), con0 = atomic_load(&connections);
	struct result r = get(&env, "http://pevtui-test.invalid/text");
	assert_false(r.ok);
	assert_int_equal(atomic_load(&requests), req0);
	assert_int_equal(atomic_load(&connections), con0);
	free(r.text);
	unsetenv("http_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("ALL_PROXY");
	setenv("no_proxy", "*", 1);
	strvec_clear(&allow);
	free(proxy);
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
		cmocka_unit_test(test_netguard_classes),
		cmocka_unit_test(test_netguard_allow_list),
		cmocka_unit_test(test_local_addresses_refused),
		cmocka_unit_test(test_redirect_to_local_refused),
		cmocka_unit_test(test_refusal_not_retried),
		cmocka_unit_test(test_environment_proxy_ignored),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
