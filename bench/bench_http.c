/* bench_http — client overhead of a provider call against the mock at zero latency, compared
 * with a bare libcurl request and a loopback TCP round trip; SSE parse throughput; TCP
 * connections opened for a 50-call run. Run by hand: make bench-http. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "http.h"
#include "mock_llm.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "sse.h"
#include "strbuf.h"
#include "xalloc.h"

#define CALLS 2000

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static struct llm_msg user = {.kind = LLM_MSG_USER, .text = (char *)"hello"};

static struct llm_request request(const char *model)
{
	struct llm_request r = {.model = model, .system = "You are a benchmark.", .msgs = &user,
				.n_msgs = 1, .max_tokens = 64};
	return r;
}

/* ---- loopback round trip ---------------------------------------------------------------- */

struct echo {
	int listen_fd;
};

static void *echo_main(void *arg)
{
	struct echo *e = arg;
	int fd = accept(e->listen_fd, NULL, NULL);
	char c;

	while (fd >= 0 && read(fd, &c, 1) == 1)
		if (write(fd, &c, 1) != 1)
			break;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static double loopback_rtt_us(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	struct echo e;
	pthread_t t;
	int fd, one = 1;
	double *v = xcalloc(CALLS, sizeof(double)), m;
	char c = 'x';

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	e.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(e.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(e.listen_fd, 1) ||
	    getsockname(e.listen_fd, (struct sockaddr *)&sa, &len))
		fatal("bench: loopback socket");
	pthread_create(&t, NULL, echo_main, &e);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		fatal("bench: connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < CALLS; i++) {
		double t0 = now_us();

		if (write(fd, &c, 1) != 1 || read(fd, &c, 1) != 1)
			fatal("bench: echo");
		v[i] = now_us() - t0;
	}
	close(fd);
	pthread_join(t, NULL);
	close(e.listen_fd);
	m = median(v, CALLS);
	free(v);
	return m;
}

/* ---- bare libcurl --------------------------------------------------------------------- */

static size_t sink(char *p, size_t s, size_t n, void *u)
{
	return s * n;
}

static double bare_curl_us(struct mock *m, const char *body)
{
	CURL *h = curl_easy_init();
	char *url = mock_url(m, "/v1/chat/completions");
	struct curl_slist *hd = curl_slist_append(NULL, "content-type: application/json");
	double *v = xcalloc(CALLS, sizeof(double)), med;

	hd = curl_slist_append(hd, "Expect:");
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	for (int i = 0; i < CALLS + 20; i++) {
		double t0 = now_us();

		if (curl_easy_perform(h) != CURLE_OK)
			fatal("bench: bare curl failed");
		if (i >= 20)
			v[i - 20] = now_us() - t0;
	}
	med = median(v, CALLS);
	curl_slist_free_all(hd);
	curl_easy_cleanup(h);
	free(url);
	free(v);
	return med;
}

/* ---- provider calls ------------------------------------------------------------------- */

static double provider_us(struct provider *p, const char *model)
{
	struct llm_request req = request(model);
	double *v = xcalloc(CALLS, sizeof(double)), med;

	for (int i = 0; i < CALLS + 20; i++) {
		struct llm_response out;
		char *err = NULL;
		double t0 = now_us();

		if (provider_complete(p, &req, NULL, &out, &err) != PROVIDER_OK)
			fatal("bench: call failed: %s", err);
		if (i >= 20)
			v[i - 20] = now_us() - t0;
		llm_response_release(&out);
	}
	med = median(v, CALLS);
	free(v);
	return med;
}

struct worker {
	struct provider *p;
	int calls;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct llm_request req = request("gpt-5-nano");

	for (int i = 0; i < w->calls; i++) {
		struct llm_response out;
		char *err = NULL;

		if (provider_complete(w->p, &req, NULL, &out, &err) != PROVIDER_OK)
			fatal("bench: call failed: %s", err);
		llm_response_release(&out);
	}
	http_thread_cleanup();
	return NULL;
}

/* Connections the mock accepted for `total` calls spread over `threads` workers. */
static size_t connections_for(int threads, int total, const char *reply)
{
	struct mock *m = mock_start();
	struct mock_reply r = {.body = reply};
	char *url = mock_url(m, "/v1"), *err = NULL;
	struct provider *p = provider_openai_new(url, "bench-key", &err);
	pthread_t t[16];
	struct worker w = {.p = p, .calls = total / threads};
	size_t n;

	mock_set_default(m, &r);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker_main, &w);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	n = mock_connections(m);
	provider_free(p);
	mock_stop(m);
	free(url);
	return n;
}

/* ---- SSE throughput -------------------------------------------------------------------- */

static int count_event(void *ctx, const char *event, const char *data, size_t len)
{
	*(size_t *)ctx += 1;
	return 0;
}

static char *big_anthropic_stream(size_t target, size_t *len)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{"
			 "\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":1,"
			 "\"output_tokens\":1}}}\n\n"
			 "event: content_block_start\ndata: {\"type\":\"content_block_start\","
			 "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
	while (sb.len < target)
		strbuf_adds(&sb,
			    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
			    "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"The quick "
			    "brown fox jumps over the lazy dog. \"}}\n\n");
	strbuf_adds(&sb, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{"
			 "\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n"
			 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
	*len = sb.len;
	return strbuf_detach(&sb);
}

static void sse_throughput(void)
{
	size_t len, events = 0;
	char *s = big_anthropic_stream(64u * 1024 * 1024, &len);
	struct sse_parser *p = sse_new(count_event, &events);
	struct llm_response out;
	char *err = NULL;
	double t0 = now_us(), dt;

	for (size_t off = 0; off < len; off += 16384)
		sse_feed(p, s + off, len - off < 16384 ? len - off : 16384);
	sse_finish(p);
	dt = now_us() - t0;
	sse_free(p);
	printf("SSE framing only:        %8.0f MB/s  (%zu MB, %zu events, 16 KiB chunks)\n",
	       (double)len / dt, len >> 20, events);
	t0 = now_us();
	if (provider_anthropic_parse(s, len, true, &out, &err) != PROVIDER_OK)
		fatal("bench: parse failed: %s", err);
	dt = now_us() - t0;
	printf("Anthropic stream, full:  %8.0f MB/s  (SSE + cJSON per event + text assembly)\n",
	       (double)len / dt);
	llm_response_release(&out);
	free(s);
}

int main(void)
{
	struct mock *m = mock_start();
	char *oai_reply = mock_openai_text_sse("gpt-5-nano", "Hello from the mock.", 12, 6);
	char *ant_reply =
	    mock_anthropic_text_sse("claude-haiku-4-5", "Hello from the mock.", 12, 6);
	char *url = mock_url(m, "/v1"), *err = NULL;
	struct provider *oai = provider_openai_new(url, "bench-key", &err);
	struct provider *ant = provider_anthropic_new(url, "bench-key", &err);
	struct mock_reply r = {.body = oai_reply};
	double rtt, bare, po, pa;
	size_t c1, c4;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	mock_set_default(m, &r);
	rtt = loopback_rtt_us();
	bare = bare_curl_us(m, "{\"model\":\"gpt-5-nano\",\"messages\":[]}");
	po = provider_us(oai, "gpt-5-nano");
	r.body = ant_reply;
	mock_set_default(m, &r);
	pa = provider_us(ant, "claude-haiku-4-5");
	printf("Median of %d calls to the mock on 127.0.0.1 (zero added latency):\n", CALLS);
	printf("  loopback TCP round trip (1 byte):   %7.1f us\n", rtt);
	printf("  bare libcurl POST (reused handle):  %7.1f us\n", bare);
	printf("  openai provider call (streamed):    %7.1f us  (+%.1f us over bare libcurl)\n",
	       po, po - bare);
	printf("  anthropic provider call (streamed): %7.1f us  (+%.1f us over bare libcurl)\n",
	       pa, pa - bare);
	c1 = connections_for(1, 50, oai_reply);
	c4 = connections_for(5, 50, oai_reply);
	printf("TCP connections for a 50-call run: %zu with 1 worker, %zu with 5 workers\n", c1,
	       c4);
	sse_throughput();
	provider_free(oai);
	provider_free(ant);
	mock_stop(m);
	http_thread_cleanup();
	free(url);
	free(oai_reply);
	free(ant_reply);
	curl_global_cleanup();
	return 0;
}
