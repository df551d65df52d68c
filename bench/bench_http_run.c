/* bench_http_run — a whole PEV run over HTTP, whole process: the real pevtui binary, run as
 * a child (--headless --yes --provider openai --base-url http://127.0.0.1:PORT/v1), against
 * the mock LLM server at zero latency. The plan has STEPS independent steps; each step is
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

#include <cjson/cJSON.h>

#include "mock_llm.h"
#include "strbuf.h"
#include "xalloc.h"

#define STEPS 50
#define MODEL "bench-model"

/* ---- OpenAI-compatible streamed replies ------------------------------------------------ */

static cJSON *chunk(void)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "id", "chatcmpl-bench");
	cJSON_AddStringToObject(c, "object", "chat.completion.chunk");
	cJSON_AddStringToObject(c, "model", MODEL);
	return c;
}

static void add_data(struct strbuf *sb, cJSON *c)
{
	char *s = cJSON_PrintUnformatted(c);

	strbuf_addf(sb, "data: %s\n\n", s);
	cJSON_free(s);
	cJSON_Delete(c);
}

/* One delta chunk (text, or one tool call), the finish chunk, the usage chunk, [DONE]. */
static char *sse_reply(const char *text, const char *tool, const char *args)
{
	struct strbuf sb;
	cJSON *c = chunk(), *choices = cJSON_AddArrayToObject(c, "choices");
	cJSON *ch = cJSON_CreateObject(), *delta = cJSON_AddObjectToObject(ch, "delta"), *u;

	strbuf_init(&sb);
	cJSON_AddNumberToObject(ch, "index", 0);
	cJSON_AddStringToObject(delta, "role", "assistant");
	if (text) {
		cJSON_AddStringToObject(delta, "content", text);
	} else {
		cJSON *calls = cJSON_AddArrayToObject(delta, "tool_calls");
		cJSON *tc = cJSON_CreateObject(), *fn;

		cJSON_AddNullToObject(delta, "content");
		cJSON_AddNumberToObject(tc, "index", 0);
		cJSON_AddStringToObject(tc, "id", "call_bench");
		cJSON_AddStringToObject(tc, "type", "function");
		fn = cJSON_AddObjectToObject(tc, "function");
		cJSON_AddStringToObject(fn, "name", tool);
		cJSON_AddStringToObject(fn, "arguments", args);
		cJSON_AddItemToArray(calls, tc);
	}
	cJSON_AddNullToObject(ch, "finish_reason");
	cJSON_AddItemToArray(choices, ch);
	add_data(&sb, c);

	c = chunk();
	choices = cJSON_AddArrayToObject(c, "choices");
	ch = cJSON_CreateObject();
	cJSON_AddNumberToObject(ch, "index", 0);
	cJSON_AddObjectToObject(ch, "delta");
	cJSON_AddStringToObject(ch, "finish_reason", text ? "stop" : "tool_calls");
	cJSON_AddItemToArray(choices, ch);
	add_data(&sb, c);

	c = chunk();
	cJSON_AddArrayToObject(c, "choices");
	u = cJSON_AddObjectToObject(c, "usage");
	cJSON_AddNumberToObject(u, "prompt_tokens", 400);
	cJSON_AddNumberToObject(u, "completion_tokens", 120);
	cJSON_AddNumberToObject(u, "total_tokens", 520);
	add_data(&sb, c);
	strbuf_adds(&sb, "data: [DONE]\n\n");
	return strbuf_detach(&sb);
}

static void push(struct mock *m, const char *needle, char *body)
{
	struct mock_reply r = {.body = body};

	mock_push_for(m, needle, &r);
	free(body);
}

static char *json_text(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o), *t = xstrdup(s);

	cJSON_free(s);
	cJSON_Delete(o);
	return t;
}

static char *plan_text(bool chain)
{
	cJSON *plan = cJSON_CreateObject(), *steps, *sc;

	cJSON_AddStringToObject(plan, "goal", "write one note per step");
	cJSON_AddStringToObject(plan, "context", "benchmark");
	steps = cJSON_AddArrayToObject(plan, "steps");
	for (int i = 1; i <= STEPS; i++) {
		cJSON *s = cJSON_CreateObject(), *crit, *outs, *deps;
		char id[16], name[32], desc[96], file[24];

		snprintf(id, sizeof(id), "s%d", i);
		snprintf(name, sizeof(name), "note %d", i);
		/* The tag [tNNN] is the mock's needle for this step's requests: the executor's
		 * two and the verifier's one, in that order. */
		snprintf(desc, sizeof(desc), "Write a short note for this step [t%03d].", i);
		snprintf(file, sizeof(file), "note%03d.md", i);
		cJSON_AddStringToObject(s, "step_id", id);
		cJSON_AddStringToObject(s, "name", name);
		cJSON_AddStringToObject(s, "description", desc);
		cJSON_AddArrayToObject(s, "actions");
		crit = cJSON_AddArrayToObject(s, "acceptance_criteria");
		cJSON_AddItemToArray(crit, cJSON_CreateString("the note exists"));
		outs = cJSON_AddArrayToObject(s, "expected_outputs");
		cJSON_AddItemToArray(outs, cJSON_CreateString(file));
		deps = cJSON_AddArrayToObject(s, "dependencies");
		if (chain && i > 1) {
			snprintf(id, sizeof(id), "s%d", i - 1);
			cJSON_AddItemToArray(deps, cJSON_CreateString(id));
		}
		cJSON_AddStringToObject(s, "estimated_complexity", "low");
		cJSON_AddItemToArray(steps, s);
	}
	sc = cJSON_AddArrayToObject(plan, "success_criteria");
	cJSON_AddItemToArray(sc, cJSON_CreateString("every note exists"));
	cJSON_AddStringToObject(plan, "rollback_strategy", "none");
	return json_text(plan);
}

static char *verdict_text(const char *criterion)
{
	cJSON *v = cJSON_CreateObject(), *list, *r;

	cJSON_AddBoolToObject(v, "overall_pass", 1);
	list = cJSON_AddArrayToObject(v, "criteria_results");
	r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "criterion", criterion);
	cJSON_AddBoolToObject(r, "passed", 1);
	cJSON_AddStringToObject(r, "evidence", "the file is there");
	cJSON_AddNumberToObject(r, "confidence", 0.9);
	cJSON_AddStringToObject(r, "feedback", "");
	cJSON_AddItemToArray(list, r);
	cJSON_AddStringToObject(v, "action", "pass");
	cJSON_AddStringToObject(v, "feedback_for_executor", "");
	cJSON_AddStringToObject(v, "severity", "minor");
	return json_text(v);
}

static void script(struct mock *m, bool chain)
{
	char *t;

	t = plan_text(chain);
	push(m, "Write the plan.", sse_reply(t, NULL, NULL));
	free(t);
	for (int i = 1; i <= STEPS; i++) {
		char needle[16], file[24];
		cJSON *args = cJSON_CreateObject(), *res = cJSON_CreateObject(), *acts, *out, *arts;
		char *a, *content;

		snprintf(needle, sizeof(needle), "[t%03d]", i);
		snprintf(file, sizeof(file), "note%03d.md", i);
		content = xasprintf("# Note %d\n\nThis step wrote its note, as asked.\n", i);
		cJSON_AddStringToObject(args, "path", file);
		cJSON_AddStringToObject(args, "content", content);
		a = json_text(args);
		push(m, needle, sse_reply(NULL, "write_file", a));
		free(a);
		free(content);

		cJSON_AddStringToObject(res, "reasoning", "wrote the note with write_file");
		acts = cJSON_AddArrayToObject(res, "actions_taken");
		cJSON_AddItemToArray(acts, cJSON_CreateString("write_file"));
		out = cJSON_AddObjectToObject(res, "step_output");
		cJSON_AddStringToObject(out, "findings", "The note is written.");
		arts = cJSON_AddArrayToObject(out, "artifacts");
		cJSON_AddItemToArray(arts, cJSON_CreateString(file));
		cJSON_AddBoolToObject(out, "meets_criteria", 1);
		cJSON_AddNumberToObject(res, "confidence", 0.9);
		cJSON_AddStringToObject(res, "notes", "");
		t = json_text(res);
		push(m, needle, sse_reply(t, NULL, NULL));
		free(t);

		t = verdict_text("the note exists");
		push(m, needle, sse_reply(t, NULL, NULL));
		free(t);
	}
	t = verdict_text("every note exists");
	push(m, "Success criteria of the whole plan", sse_reply(t, NULL, NULL));
	free(t);
	push(m, "Write the final answer.",
	     sse_reply("Every step wrote its note (s1 to s50).", NULL, NULL));
}

/* ---- one run ---------------------------------------------------------------------------- */

struct figures {
	int status;
	double cpu_ms, user_ms, sys_ms, rss_mb;
	size_t connections, calls, pending;
};

static double ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

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
	struct rusage ru;
	int st = 0;
	pid_t pid;

	if (mkdir(dir, 0700))
		fatal("bench: cannot create %s", dir);
	script(m, chain);
	url = mock_url(m, "/v1");
	runs = xasprintf("%s/runs", dir);
	base = xasprintf("HOME=%s", dir);
	par = xasprintf("%d", parallel);
	{
		/* Everything the child needs is built before fork (the mock runs threads). */
		const char *envp[] = {"OPENAI_API_KEY=sk-bench-7f3a9c1e5b2d8046af1c3e5b7d9f0a2c4e6b8d0f", base, "XDG_CONFIG_HOME=/nonexistent",
				      "PATH=/usr/bin:/bin", "LANG=C", NULL};
		const char *argv[] = {bin,	   "--headless", "--yes",     "--provider",
				      "openai",	   "--base-url", url,	      "--model",
				      MODEL,	   "--parallel", par,	      "--runs-dir",
				      runs,	   "write one note per step", NULL,
				      NULL,	   NULL};
		int out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (config) { /* the task stays last */
			argv[15] = argv[13];
			argv[13] = "--config";
			argv[14] = config;
		}
		int in = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (out < 0 || in < 0)
			fatal("bench: cannot open %s or /dev/null", log);
		pid = fork();
		if (pid < 0)
			fatal("bench: fork failed");
		if (pid == 0) {
			dup2(in, 0);
			dup2(out, 1);
			dup2(out, 2);
			execve(bin, (char *const *)argv, (char *const *)envp);
			_exit(127);
		}
		close(out);
		close(in);
	}
	if (wait4(pid, &st, 0, &ru) != pid)
		fatal("bench: wait4 failed");
	f.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	f.user_ms = ms(ru.ru_utime);
	f.sys_ms = ms(ru.ru_stime);
	f.cpu_ms = f.user_ms + f.sys_ms;
	f.rss_mb = (double)ru.ru_maxrss / 1024.0;
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
