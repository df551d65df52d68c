/* bench_sandbox — what the command sandbox costs a command's start: the median wall time
 * of run_shell running `true`, unconfined and under each set of layers this machine
 * offers (the probe's test hook PEVTUI_SANDBOX_LAYERS picks them).
 *
 *   bench/bench_sandbox [RUNS] [HELPER]      (defaults: 200, ./pevtui-confine) */
#include "config.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "tool.h"
#include "xalloc.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median milliseconds of `runs` run_shell calls of `true` (NULL sb: unconfined). */
static double median_ms(const char *ws, int ws_fd, const struct confine_session *sb, int runs)
{
	const struct tool_def *shell = tool_find("run_shell");
	cJSON *input = cJSON_Parse("{\"command\": \"true\"}");
	struct tool_env env = {.ws_fd = ws_fd, .ws_path = ws, .sandbox = sb};
	double *t = xcalloc((size_t)runs, sizeof(*t));

	for (int i = 0; i < runs; i++) {
		struct strbuf out = STRBUF_INIT;
		strbuf_init(&out);
		double t0 = now_ms();
		if (!shell->run(&env, input, &out)) {
			fprintf(stderr, "bench_sandbox: the command failed: %s\n", out.buf);
			exit(1);
		}
		t[i] = now_ms() - t0;
		strbuf_release(&out);
	}
	qsort(t, (size_t)runs, sizeof(*t), by_value);
	double m = t[runs / 2];
	free(t);
	cJSON_Delete(input);
	return m;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 200;
	char *helper = realpath(argc > 2 ? argv[2] : "./pevtui-confine", NULL);
	char ws[] = "/tmp/bench-sandbox-XXXXXX";
	static const char *const sets[] = {"bwrap,landlock,seccomp", "landlock,seccomp",
					   "bwrap", "landlock"};

	if (runs < 1 || !mkdtemp(ws)) {
		fprintf(stderr, "usage: bench_sandbox [RUNS] [HELPER]\n");
		return 2;
	}
	int ws_fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	double base = median_ms(ws, ws_fd, NULL, runs);
	printf("run_shell `true`, median of %d runs\n", runs);
	printf("  %-46s %7.2f ms\n", "unconfined", base);
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		setenv("PEVTUI_SANDBOX_LAYERS", sets[i], 1);
		struct confine_setup setup = {.mode = CONFINE_WORKSPACE_WRITE, .workspace = ws,
					      .run_id = "bench", .helper = helper,
					      .home = getenv("HOME")};
		struct confine_session *sb = confine_session_new(&setup);
		if (confine_session_gate_why(sb)) {
			printf("  %-46s (not available here)\n", sets[i]);
		} else {
			double m = median_ms(ws, ws_fd, sb, runs);
			const char *line = confine_session_line(sb);
			const char *dash = strstr(line, "\xe2\x80\x94 ");
			printf("  %-46s %7.2f ms (+%.2f)\n", dash ? dash + 4 : line, m, m - base);
		}
		confine_session_free(sb);
	}
	close(ws_fd);
	rmdir(ws);
	free(helper);
	return 0;
}
