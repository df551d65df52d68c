/* bench_peer — pevtui beside its peer, the seeds' PEV graph in LangGraph.js
 * (../shared/bench/peer-langgraph), against the same mock LLM server in one run: the same
 * 50-step plan (bench_script.h), each step a write_file call, a result and a verdict, the
 * replies sent with chunked transfer encoding on kept-alive connections as the real APIs
 * send them: pevtui's streamed (SSE, a chunk per event), the peer's plain JSON (it does not
 * ask to stream by default; its PEER_STREAM=1 makes LangChain count tokens with a
 * tokenizer it fetches from the internet, so the bench leaves it off). The two take turns, run by run, so a
 * busy machine weighs on both alike. pevtui runs in its default configuration (checkpoints,
 * kept requests, --parallel 3); its run folders and the peer's workspaces lie in $TMPDIR
 * (else /tmp): on the ordinary disk unless $TMPDIR says otherwise.
 *
 * Per side, medians of the runs: CPU time (user + sys, wait4), private memory (peak of
 * /proc/PID/smaps_rollup's Private_Clean + Private_Dirty, sampled every 2 ms for pevtui and
 * every 10 ms for the peer, whose 11 GB address space takes ~10 ms a read (sampled more
 * sparsely, its short peaks are missed: 88 MB at 50 ms, 125 MB at 10): what a second
 * process on the machine really costs), peak RSS (ru_maxrss), TCP connections the mock
 * accepted, model calls; for pevtui also the inodes one run leaves beside the workspace's
 * own files: in its run folder, and in its checkpoint store. Then the peer's figures over pevtui's.
 *
 * Usage: bench_peer [-n RUNS] --peer DIR [--node NODE] [PEVTUI]
 * (DIR holds pev.mjs with its node_modules; make bench-peer prepares it). */
#include "config.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_child.h"
#include "bench_script.h"
#include "mock_llm.h"
#include "xalloc.h"

#define MAX_RUNS 64
#define SAMPLE_MS 2
#define PEER_SAMPLE_MS 10

struct side {
	const char *name;
	double cpu[MAX_RUNS], user[MAX_RUNS], sys[MAX_RUNS], priv[MAX_RUNS], rss[MAX_RUNS];
	double inodes[MAX_RUNS], ckpt_inodes[MAX_RUNS];
	size_t conn_min, conn_max, calls;
};

static char *top; /* $TMPDIR (else /tmp)/pevtui-bench-peer-XXXXXX, removed at the end */
static int n_dirs;
static const char *api_key = "OPENAI_API_KEY=sk-bench-7f3a9c1e5b2d8046af1c3e5b7d9f0a2c4e6b8d0f";

/* ---- inodes a run leaves ---------------------------------------------------------------- */

static size_t walk_base_len;
static long n_walked;

static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	/* the workspace's own changes (the notes the steps wrote) are left out */
	if (strncmp(path + walk_base_len, "/workspace/", 11))
		n_walked++;
	return 0;
}

/* Inodes beneath DIR, itself included (none when it is not there). */
static long count_below(const char *dir)
{
	if (access(dir, F_OK))
		return 0;
	walk_base_len = strlen(dir);
	n_walked = 0;
	if (nftw(dir, count_one, 16, FTW_PHYS))
		fatal("bench: cannot walk %s", dir);
	return n_walked;
}

/* Inodes of RUNS' one run folder (itself included, the workspace's files left out) in
 * *run, and of the checkpoint store (HOME/.local/share/pevtui: the run's own store, since
 * each run has a HOME of its own; older versions kept checkpoints.git in the run folder,
 * counted here too) in *ckpt. */
static void count_inodes(const char *home, const char *runs, double *run, double *ckpt)
{
	DIR *d = opendir(runs);
	struct dirent *e;
	char *dir = NULL, *store = xasprintf("%s/.local/share/pevtui", home), *old;
	long in_run, in_store = count_below(store);

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.' && !dir)
			dir = xasprintf("%s/%s", runs, e->d_name);
	if (d)
		closedir(d);
	if (!dir)
		fatal("bench: no run folder in %s", runs);
	old = xasprintf("%s/checkpoints.git", dir);
	in_run = count_below(dir);
	in_store += count_below(old);
	*run = (double)(in_run - count_below(old));
	*ckpt = (double)in_store;
	free(old);
	free(store);
	free(dir);
}

/* ---- one run of each ------------------------------------------------------------------- */

static void check(const struct bench_child *c, struct mock *m, const char *log, const char *who,
		  const char *must)
{
	char *text = mock_read_file(log);

	if (c->status != 0 || mock_pending(m) || (must && !strstr(text, must))) {
		fprintf(stderr, "%s", text);
		fatal("bench: %s: exit %d, %zu scripted replies unused%s", who, c->status,
		      mock_pending(m), must && !strstr(text, must) ? ", not every step passed" : "");
	}
	free(text);
}

static void record(struct side *s, int i, const struct bench_child *c, struct mock *m)
{
	size_t conn = mock_connections(m);

	s->cpu[i] = c->cpu_ms;
	s->user[i] = c->user_ms;
	s->sys[i] = c->sys_ms;
	s->priv[i] = c->private_mb;
	s->rss[i] = c->rss_mb;
	s->calls = mock_request_count(m);
	if (conn > s->conn_max)
		s->conn_max = conn;
	if (conn < s->conn_min)
		s->conn_min = conn;
}

static void run_pevtui(struct side *s, int i, const char *bin, const char *log)
{
	struct mock *m = mock_start();
	char *dir = xasprintf("%s/%d", top, ++n_dirs), *url, *runs, *home;
	struct bench_child c;

	if (mkdir(dir, 0700))
		fatal("bench: cannot create %s", dir);
	bench_script(m, BENCH_PEVTUI, false, true);
	url = mock_url(m, "/v1");
	runs = xasprintf("%s/runs", dir);
	home = xasprintf("HOME=%s", dir);
	{
		const char *envp[] = {api_key, home, "XDG_CONFIG_HOME=/nonexistent",
				      "PATH=/usr/bin:/bin", "LANG=C", NULL};
		const char *argv[] = {bin,	  "--headless", "--yes", "--provider", "openai",
				      "--base-url", url,	  "--model", BENCH_MODEL,  "--runs-dir",
				      runs,	  BENCH_TASK,	NULL};

		c = bench_child_run(argv, envp, NULL, log, SAMPLE_MS);
	}
	check(&c, m, log, "pevtui", NULL);
	record(s, i, &c, m);
	count_inodes(dir, runs, &s->inodes[i], &s->ckpt_inodes[i]);
	mock_stop(m);
	free(dir);
	free(url);
	free(runs);
	free(home);
}

static void run_peer(struct side *s, int i, const char *node, const char *script, const char *log)
{
	struct mock *m = mock_start();
	char *dir = xasprintf("%s/%d", top, ++n_dirs), *url, *ws, *home, *base;
	char must[32];
	struct bench_child c;

	ws = xasprintf("%s/ws", dir);
	if (mkdir(dir, 0700) || mkdir(ws, 0700))
		fatal("bench: cannot create %s", ws);
	bench_script(m, BENCH_PEER, false, false);
	url = mock_url(m, "/v1");
	home = xasprintf("HOME=%s", dir);
	base = xasprintf("OPENAI_BASE_URL=%s", url);
	{
		const char *envp[] = {api_key, home, base, "PATH=/usr/bin:/bin", "LANG=C", NULL};
		const char *argv[] = {node, script, ws, BENCH_TASK, NULL};

		c = bench_child_run(argv, envp, NULL, log, PEER_SAMPLE_MS);
	}
	snprintf(must, sizeof(must), "\"passed\":%d", BENCH_STEPS);
	check(&c, m, log, "peer", must);
	record(s, i, &c, m);
	mock_stop(m);
	free(dir);
	free(url);
	free(ws);
	free(home);
	free(base);
}

/* ---- report ----------------------------------------------------------------------------- */

struct medians {
	double cpu, user, sys, priv, rss;
};

static struct medians report(struct side *s, int runs, int sample_ms, bool inodes)
{
	struct medians md = {bench_median(s->cpu, runs), bench_median(s->user, runs),
			     bench_median(s->sys, runs), bench_median(s->priv, runs),
			     bench_median(s->rss, runs)};

	printf("%s\n", s->name);
	printf("  cpu (user+sys):    %8.1f ms  (user %.1f, sys %.1f; min %.1f, max %.1f)\n",
	       md.cpu, md.user, md.sys, s->cpu[0], s->cpu[runs - 1]);
	printf("  private memory:    %8.2f MB  (peak, sampled every %d ms; max %.2f)\n", md.priv,
	       sample_ms, s->priv[runs - 1]);
	printf("  peak RSS:          %8.2f MB  (max %.2f)\n", md.rss, s->rss[runs - 1]);
	printf("  model calls:       %8zu\n", s->calls);
	if (s->conn_min == s->conn_max)
		printf("  TCP connections:   %8zu\n", s->conn_max);
	else
		printf("  TCP connections:   %zu to %zu\n", s->conn_min, s->conn_max);
	if (inodes)
		printf("  inodes made beside the workspace's own files: %.0f in the run folder, "
		       "%.0f in the checkpoint store\n",
		       bench_median(s->inodes, runs), bench_median(s->ckpt_inodes, runs));
	return md;
}

int main(int argc, char **argv)
{
	static struct side pev = {.name = NULL}, peer = {.name = NULL};
	const char *bin = getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui";
	const char *node = "/usr/bin/node", *peer_dir = NULL;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char log[] = "/tmp/pevtui-bench-peer-log-XXXXXX";
	int runs = 5, fd = mkstemp(log);
	struct medians a, b;
	char *script, *cmd;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--peer") && i + 1 < argc)
			peer_dir = argv[++i];
		else if (!strcmp(argv[i], "--node") && i + 1 < argc)
			node = argv[++i];
		else if (argv[i][0] != '-')
			bin = argv[i];
		else
			fatal("usage: bench_peer [-n RUNS] --peer DIR [--node NODE] [PEVTUI]");
	}
	if (!peer_dir)
		fatal("bench: --peer DIR (the peer's pev.mjs with node_modules) is needed");
	if (runs < 1 || runs > MAX_RUNS)
		fatal("bench: -n takes 1 to %d", MAX_RUNS);
	script = xasprintf("%s/pev.mjs", peer_dir);
	if (access(bin, X_OK) || access(node, X_OK) || access(script, R_OK))
		fatal("bench: cannot run %s, %s or read %s", bin, node, script);
	top = xasprintf("%s/pevtui-bench-peer-XXXXXX", tmp);
	if (fd < 0 || !mkdtemp(top))
		fatal("bench: mkstemp or mkdtemp in %s failed", tmp);
	close(fd);
	pev.name = xasprintf("pevtui (%s), default configuration", bin);
	peer.name = xasprintf("peer: LangGraph.js (%s, its default: plain JSON replies)", script);
	pev.conn_min = peer.conn_min = (size_t)-1;
	for (int i = 0; i < runs; i++) {
		run_pevtui(&pev, i, bin, log);
		run_peer(&peer, i, node, script, log);
	}
	unlink(log);
	cmd = xasprintf("rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", top);
	printf("bench_peer: %d steps, %d runs each, alternating; run folders in %s\n",
	       BENCH_STEPS, runs, tmp);
	a = report(&pev, runs, SAMPLE_MS, true);
	b = report(&peer, runs, PEER_SAMPLE_MS, false);
	printf("peer / pevtui:  cpu %.1f×   private memory %.1f×   peak RSS %.1f×\n",
	       b.cpu / a.cpu, b.priv / a.priv, b.rss / a.rss);
	printf("aims (issue 28): cpu >= 40×, private memory >= 40×, <= 25 inodes\n");
	free(cmd);
	free(top);
	free(script);
	free((char *)pev.name);
	free((char *)peer.name);
	return 0;
}
