/* bench_mcp — what pevtui's MCP client costs per call over the server's own time:
 * N calls of the test server's echo over stdio; wall time per round trip, pevtui's CPU per
 * call (the client: build, write, poll, read, parse, clean) and the server's CPU per call
 * (its process, reaped). Also the server's start-up (spawn, initialize, tools/list).
 * Usage: bench_mcp SERVER [N] */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "strbuf.h"
#include "xalloc.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct mcp_conf conf = {0};
	struct mcp_client *c;
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	int n = argc > 2 ? atoi(argv[2]) : 5000;
	double t0, t1, c0, c1, s0, s1;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_mcp SERVER [N]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (!mcp_conf_set_key(&conf, "b", "command", argv[1], &err))
		return 2;
	c = mcp_client_new(&conf.v[0], NULL, ".");
	t0 = now_s();
	if (!mcp_client_start(c, &err)) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	t1 = now_s();
	printf("start-up (spawn, initialize, tools/list): %.2f ms\n", (t1 - t0) * 1e3);
	strbuf_init(&out);
	/* warm up */
	for (int i = 0; i < 50; i++)
		mcp_client_call(c, "echo", "{\"text\":\"warm\"}", NULL, -1, 0, &out, NULL, NULL);
	s0 = cpu_s(RUSAGE_CHILDREN);
	c0 = cpu_s(RUSAGE_SELF);
	t0 = now_s();
	for (int i = 0; i < n; i++)
		if (mcp_client_call(c, "echo", "{\"text\":\"hello from the benchmark\"}", NULL, -1,
		                    64 * 1024, &out, NULL, NULL) != MCP_OK) {
			fprintf(stderr, "call %d failed: %s\n", i, out.buf);
			return 1;
		}
	t1 = now_s();
	c1 = cpu_s(RUSAGE_SELF);
	mcp_client_free(c); /* reaps the server: its CPU joins RUSAGE_CHILDREN */
	s1 = cpu_s(RUSAGE_CHILDREN);
	printf("%d calls: %.3f ms per round trip (wall)\n", n, (t1 - t0) * 1e3 / n);
	printf("pevtui's client: %.3f ms of CPU per call\n", (c1 - c0) * 1e3 / n);
	printf("the server (whole life, incl. start-up): %.3f ms of CPU per call\n",
	       (s1 - s0) * 1e3 / n);
	strbuf_release(&out);
	mcp_conf_release(&conf);
	return 0;
}
