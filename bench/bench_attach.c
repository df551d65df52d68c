/* bench_attach — how long a gate answer from an attached cockpit takes to reach the
 * engine: runs started with --detach (the demo, a gate before every step) are driven over
 * their control sockets; each answer is timed from its send to the gate.decision event the
 * engine publishes for it, which comes back on the same socket (a round trip, so an upper
 * bound for the way in). A ping's round trip is timed too: the socket and the server
 * thread alone. Run by hand: make bench-attach. Prints figures; asserts nothing. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ctl_proto.h"
#include "jsonx.h"
#include "runlock.h"
#include "strbuf.h"
#include "xalloc.h"

#define RUNS 5
#define PINGS 2000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct reader {
	int fd;
	struct strbuf buf;
};

static char *next_line(struct reader *r)
{
	for (;;) {
		char *nl = memchr(r->buf.buf, '\n', r->buf.len), chunk[65536];
		struct pollfd p = {r->fd, POLLIN, 0};
		ssize_t n;

		if (nl) {
			char *line = xstrndup(r->buf.buf, (size_t)(nl - r->buf.buf));
			size_t rest = r->buf.len - (size_t)(nl - r->buf.buf) - 1;

			memmove(r->buf.buf, nl + 1, rest);
			r->buf.len = rest;
			r->buf.buf[rest] = '\0';
			return line;
		}
		if (poll(&p, 1, 60000) <= 0)
			return NULL;
		n = read(r->fd, chunk, sizeof(chunk));
		if (n <= 0)
			return NULL;
		strbuf_add(&r->buf, chunk, (size_t)n);
	}
}

static void say(int fd, const char *line)
{
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		perror("bench_attach: send");
		exit(1);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, size_t n)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	printf("%-34s n=%-5zu median %.3f ms  mean %.3f ms  p95 %.3f ms  max %.3f ms\n", what, n,
	       v[n / 2], sum / (double)n, v[n * 95 / 100], v[n - 1]);
}

/* Starts a detached demo run below runs; its folder (caller frees). */
static char *start_run(const char *pevtui, const char *runs)
{
	char *cmd = xasprintf("'%s' --detach --demo --gate plan,step,high --sim-delay 0 "
			      "--runs-dir '%s' 2>/dev/null",
			      pevtui, runs);
	char *dir = NULL, line[512];
	FILE *ls;

	if (system(cmd) != 0) {
		fprintf(stderr, "bench_attach: %s failed\n", cmd);
		exit(1);
	}
	free(cmd);
	cmd = xasprintf("ls -t '%s' | head -n 1", runs);
	ls = popen(cmd, "r");
	if (ls && fgets(line, sizeof(line), ls)) {
		line[strcspn(line, "\n")] = '\0';
		dir = xasprintf("%s/%s", runs, line);
	}
	if (ls)
		pclose(ls);
	free(cmd);
	if (!dir) {
		fprintf(stderr, "bench_attach: no run folder in %s\n", runs);
		exit(1);
	}
	return dir;
}

int main(void)
{
	const char *pevtui = getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui";
	char tmpl[] = "/tmp/pevtui-bench-attach.XXXXXX";
	char *runs, *cmd;
	double answers[RUNS * 16], pings[PINGS];
	size_t n_answers = 0;

	if (!mkdtemp(tmpl)) {
		perror("bench_attach: mkdtemp");
		return 1;
	}
	runs = xasprintf("%s/runs", tmpl);
	for (int run = 0; run < RUNS; run++) {
		char *dir = start_run(pevtui, runs), *line;
		struct reader r = {ctl_connect(dir), STRBUF_INIT};
		double sent_at[256] = {0}; /* by gate id: gates open several at once */

		if (r.fd < 0) {
			fprintf(stderr, "bench_attach: cannot connect to %s: %s\n", dir,
				strerror(errno));
			return 1;
		}
		strbuf_init(&r.buf);
		if (run == 0) {
			for (int i = 0; i < PINGS; i++) {
				double t0 = now_ms();

				say(r.fd, "{\"v\":1,\"cmd\":\"ping\",\"id\":\"b\"}\n");
				while ((line = next_line(&r)) && !strstr(line, "ctl.pong"))
					free(line);
				pings[i] = now_ms() - t0;
				free(line);
			}
		}
		/* Events only after the pings: none of them is read past while timing. */
		say(r.fd, "{\"v\":1,\"cmd\":\"hello\"}\n");
		while ((line = next_line(&r))) {
			cJSON *o = strncmp(line, "{\"seq\"", 6) ? NULL : cJSON_Parse(line);
			const char *type = jsonx_str(o, "type");
			double id = 0;

			if (type && !strcmp(type, "gate.open") && jsonx_num(o, "gate_id", &id)) {
				char *a = xasprintf("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":%ld,"
						    "\"decision\":\"approve\"}\n",
						    (long)id);
				if (id > 0 && id < 256)
					sent_at[(long)id] = now_ms();
				say(r.fd, a);
				free(a);
			} else if (type && !strcmp(type, "gate.decision") &&
				   jsonx_num(o, "gate_id", &id) && id > 0 && id < 256 &&
				   sent_at[(long)id] > 0) {
				if (n_answers < sizeof(answers) / sizeof(answers[0]))
					answers[n_answers++] = now_ms() - sent_at[(long)id];
				sent_at[(long)id] = 0;
			}
			cJSON_Delete(o);
			free(line);
			if (type && !strcmp(type, "run.end"))
				break;
		}
		close(r.fd);
		strbuf_release(&r.buf);
		while (runlock_holder(dir) > 0)
			usleep(10000);
		free(dir);
	}
	printf("bench_attach: %d detached demo runs, a gate before every step\n", RUNS);
	report("ping round trip", pings, PINGS);
	if (n_answers)
		report("gate answer -> gate.decision", answers, n_answers);
	cmd = xasprintf("rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_attach: could not remove %s\n", tmpl);
	free(cmd);
	free(runs);
	return 0;
}
