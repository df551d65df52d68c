/* bench_http_run — a whole PEV run over HTTP, whole process: the real pevtui binary, run as
 * a child (--headless --yes --provider openai --base-url http://127.0.0.1:PORT/v1), against
 * the mock LLM server at zero latency (bench_script.h: replies streamed in chunks, one per
 * SSE event, on kept-alive connections). The plan has STEPS independent steps; each step is
 * a write_file tool call, the executor's result and the verifier's verdict, plus the plan,
 * the whole-plan check and the synthesis: 3 × STEPS + 3 model calls.
 *
 * Measured per run: CPU time of the child (user + sys, from wait4), its peak RSS
 * (ru_maxrss), the TCP connections the mock accepted and the requests it answered. CPU and
 * RSS are the median of the runs (RSS also its maximum).
 *
 * Usage: bench_http_run [-n RUNS] [-p PARALLEL] [--chain] [--no-checkpoints] [PEVTUI...]  (default ./pevtui,
 * or $PEVTUI; several binaries take turns, for before/after figures on a busy machine).
 * The runs' folders go in $TMPDIR (else /tmp): TMPDIR=/dev/shm takes the disk's file system
 * out of the figures.
 * Run by hand: make bench-http-run. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_child.h"
#include "bench_script.h"
#include "mock_llm.h"
#include "strbuf.h"
#include "xalloc.h"

#define STEPS BENCH_STEPS
#define MODEL BENCH_MODEL

/* ---- one run ---------------------------------------------------------------------------- */

struct figures {
	int status;
	double cpu_ms, user_ms, sys_ms, rss_mb;
	size_t connections, calls, pending;
};

/* One folder for all runs, removed at the end: deleting a run's files just before the
 * next run starts would make the file system's inode allocation for the next one slower
 * (ext4 steps over recently freed inodes), which no real run sees. */
static char *top; /* $TMPDIR (else /tmp)/pevtui-bench-http-XXXXXX */
static int n_dirs;
static char *config; /* --no-checkpoints: a config file saying so, else NULL */

static struct figures run_once(const char *bin, int parallel, bool chain, const char *log)
{
	struct mock *m = mock_start();
	char *dir = xasprintf("%s/%d", top, ++n_dirs);
	char *url, *runs, *base, *par;
	struct figures f = {0};

	if (mkdir(dir, 0700))
		fatal("bench: cannot create %s", dir);
	bench_script(m, BENCH_PEVTUI, chain, true);
	url = mock_url(m, "/v1");
	runs = xasprintf("%s/runs", dir);
	base = xasprintf("HOME=%s", dir);
	par = xasprintf("%d", parallel);
	{
		const char *envp[] = {"OPENAI_API_KEY=sk-bench-7f3a9c1e5b2d8046af1c3e5b7d9f0a2c4e6b8d0f", base, "XDG_CONFIG_HOME=/nonexistent",
				      "PATH=/usr/bin:/bin", "LANG=C", NULL};
		const char *argv[] = {bin,	   "--headless", "--yes",     "--provider",
				      "openai",	   "--base-url", url,	      "--model",
				      MODEL,	   "--parallel", par,	      "--runs-dir",
				      runs,	   BENCH_TASK, NULL,
				      NULL,	   NULL};
		struct bench_child c;

		if (config) { /* the task stays last */
			argv[15] = argv[13];
			argv[13] = "--config";
			argv[14] = config;
		}
		c = bench_child_run(argv, envp, NULL, log, 0);
		f.status = c.status;
		f.user_ms = c.user_ms;
		f.sys_ms = c.sys_ms;
		f.cpu_ms = c.cpu_ms;
		f.rss_mb = c.rss_mb;
	}
	f.connections = mock_connections(m);
	f.calls = mock_request_count(m);
	f.pending = mock_pending(m);
	mock_stop(m);
	free(dir);
	free(url);
	free(runs);
	free(base);
	free(par);
	return f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#define MAX_RUNS 64
#define MAX_BINS 4

struct series {
	const char *bin;
	double cpu[MAX_RUNS], user[MAX_RUNS], sys[MAX_RUNS], rss[MAX_RUNS];
	size_t conn_min, conn_max, calls;
};

static void report(struct series *s, int runs, int parallel, bool chain)
{
	double rss_max;

	qsort(s->cpu, (size_t)runs, sizeof(double), cmp_double);
	qsort(s->user, (size_t)runs, sizeof(double), cmp_double);
	qsort(s->sys, (size_t)runs, sizeof(double), cmp_double);
	qsort(s->rss, (size_t)runs, sizeof(double), cmp_double);
	rss_max = s->rss[runs - 1];
	printf("bench_http_run: %s, %d %s steps, --parallel %d, %d runs, mock on 127.0.0.1 "
	       "(zero latency)\n",
	       s->bin, STEPS, chain ? "chained" : "independent", parallel, runs);
	printf("  model calls:             %zu\n", s->calls);
	printf("  cpu time (user+sys):     %.1f ms  (median; user %.1f ms, sys %.1f ms; "
	       "min %.1f, max %.1f)\n",
	       s->cpu[runs / 2], s->user[runs / 2], s->sys[runs / 2], s->cpu[0],
	       s->cpu[runs - 1]);
	printf("  peak RSS:                %.2f MB  (median; max %.2f MB)\n", s->rss[runs / 2],
	       rss_max);
	if (s->conn_min == s->conn_max)
		printf("  TCP connections opened:  %zu\n", s->conn_max);
	else
		printf("  TCP connections opened:  %zu to %zu\n", s->conn_min, s->conn_max);
}

int main(int argc, char **argv)
{
	static struct series ser[MAX_BINS];
	int runs = 5, parallel = 3, n_bins = 0;
	bool chain = false;
	char log[] = "/tmp/pevtui-bench-http-log-XXXXXX";
	int fd = mkstemp(log);

	char *cmd;

	top = xasprintf("%s/pevtui-bench-http-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (fd < 0 || !mkdtemp(top))
		fatal("bench: mkstemp or mkdtemp failed");
	close(fd);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			parallel = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--chain"))
			chain = true;
		else if (!strcmp(argv[i], "--no-checkpoints"))
			config = xasprintf("%s/no-checkpoints.conf", top);
		else if (argv[i][0] == '-' || n_bins == MAX_BINS)
			fatal("usage: bench_http_run [-n RUNS] [-p PARALLEL] [--chain] "
			      "[--no-checkpoints] "
			      "[PEVTUI...] (up to %d binaries, run in turn)",
			      MAX_BINS);
		else
			ser[n_bins++].bin = argv[i];
	}
	if (config) {
		FILE *f = fopen(config, "w");
		if (!f || fputs("[policy]\ncheckpoints = false\n", f) < 0 || fclose(f) != 0)
			fatal("bench: cannot write %s", config);
	}
	if (!n_bins)
		ser[n_bins++].bin = getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui";
	if (runs < 1 || runs > MAX_RUNS || parallel < 1)
		fatal("bench: -n takes 1 to %d, -p at least 1", MAX_RUNS);
	for (int b = 0; b < n_bins; b++) {
		if (access(ser[b].bin, X_OK))
			fatal("bench: cannot run %s (build it, or name it: bench_http_run PATH)",
			      ser[b].bin);
		ser[b].conn_min = (size_t)-1;
	}
	/* Binaries take turns, so that a busy machine weighs on each alike. */
	for (int i = 0; i < runs; i++) {
		for (int b = 0; b < n_bins; b++) {
			struct series *s = &ser[b];
			struct figures f = run_once(s->bin, parallel, chain, log);

			if (f.status != 0 || f.pending) {
				char *text = mock_read_file(log);

				fprintf(stderr, "%s", text);
				free(text);
				fatal("bench: %s, run %d: exit %d, %zu scripted replies unused",
				      s->bin, i + 1, f.status, f.pending);
			}
			s->cpu[i] = f.cpu_ms;
			s->user[i] = f.user_ms;
			s->sys[i] = f.sys_ms;
			s->rss[i] = f.rss_mb;
			if (f.connections > s->conn_max)
				s->conn_max = f.connections;
			if (f.connections < s->conn_min)
				s->conn_min = f.connections;
			s->calls = f.calls;
		}
	}
	unlink(log);
	cmd = xasprintf("rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", top);
	free(cmd);
	free(top);
	for (int b = 0; b < n_bins; b++)
		report(&ser[b], runs, parallel, chain);
	printf("aims: <= 50 ms cpu, <= 8.5 MB peak RSS, <= %d connections (--parallel + 1)\n",
	       parallel + 1);
	return 0;
}
