/* test_resume — crash and resume through the real binary: kill -9 at many points (between
 * events, inside a line, during a tool call, at a gate), then --resume must finish the run
 * like an uninterrupted one and never execute a passed step again. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "journal.h"
#include "jsonx.h"
#include "report_check.h"
#include "strbuf.h"
#include "xalloc.h"

/*
 * The killed runs stream with --sim-delay 1 ms per chunk: a scenario then takes 1–2 s and
 * writes an event every ~10 ms, which leaves the 1 ms poll loop ample time to stop it at
 * a chosen line while keeping the whole suite well under a minute (at 5 ms a single run
 * takes 8 s). When a run ends before its kill point, the case starts again with a 4×
 * longer delay instead of passing without a kill.
 */
#define FIRST_DELAY_MS 1
#define DELAY_TRIES 3
#define KILL_DEADLINE_MS 30000
#define RUN_DEADLINE_MS 30000

static const char *const scenarios[] = {"legal-review", "density", "dag", "replan", "flaky-search"};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static const char *pevtui_bin(void)
{
	const char *p = getenv("PEVTUI");

	return p ? p : "./pevtui";
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The whole file, NUL-terminated, or NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	strbuf_init(&sb);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	if (len)
		*len = sb.len;
	return strbuf_detach(&sb);
}

/* Starts pevtui with `args` (NULL-terminated), stdout and stderr into files. */
static pid_t spawn(const char *const *args, const char *out_path, const char *err_path)
{
	const char *argv[40];
	int n = 0;
	pid_t pid;

	argv[n++] = pevtui_bin();
	for (int i = 0; args[i] && n < 39; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (in < 0 || out < 0 || err < 0)
			_exit(126);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		/* Tests never use a real key or a user's config. */
		unsetenv("ANTHROPIC_API_KEY");
		unsetenv("OPENAI_API_KEY");
		unsetenv("OPENAI_BASE_URL");
		unsetenv("ANTHROPIC_BASE_URL");
		setenv("XDG_CONFIG_HOME", "/nonexistent-pevtui-test", 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

struct proc {
	int status; /* exit code, or -1 when killed by a signal */
	char *out, *err;
};

static void proc_free(struct proc *p)
{
	free(p->out);
	free(p->err);
}

/* Runs pevtui to the end (bounded: a hang fails the test instead of the suite). */
static struct proc run_wait(const char *tmp, const char *const *args)
{
	char *out = xasprintf("%s/run.out", tmp), *err = xasprintf("%s/run.err", tmp);
	pid_t pid = spawn(args, out, err);
	long deadline = now_ms() + RUN_DEADLINE_MS;
	struct proc p = {-1, NULL, NULL};
	int st = 0;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("pevtui %s did not finish within %d ms", args[0], RUN_DEADLINE_MS);
		}
		sleep_ms(2);
	}
	p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	p.out = slurp(out, NULL);
	p.err = slurp(err, NULL);
	assert_non_null(p.out);
	assert_non_null(p.err);
	free(out);
	free(err);
	return p;
}

/* The one run directory below runs_dir, or NULL while there is none yet. */
static char *find_run(const char *runs_dir)
{
	DIR *d = opendir(runs_dir);
	struct dirent *de;
	char *found = NULL;
	int n = 0;

	if (!d)
		return NULL;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			free(found);
			found = xasprintf("%s/%s", runs_dir, de->d_name);
			n++;
		}
	closedir(d);
	assert_true(n <= 1);
	return found;
}

/* ------------------------------------------------------------- journals */

struct loaded {
	cJSON *events;       /* array of parsed events */
	struct strvec lines; /* their exact JSON text */
	struct journal_load_info info;
};

static bool collect(void *ctx, const struct event *ev)
{
	struct loaded *l = ctx;
	cJSON *o = cJSON_Parse(ev->json);

	assert_non_null(o);
	cJSON_AddItemToArray(l->events, o);
	strvec_push(&l->lines, ev->json);
	return true;
}

static void load(const char *run_dir, struct loaded *l)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;

	l->events = cJSON_CreateArray();
	l->lines = (struct strvec)STRVEC_INIT;
	if (!journal_load(path, collect, l, &l->info, &err))
		fail_msg("the journal does not load: %s", err);
	free(path);
}

static void loaded_free(struct loaded *l)
{
	cJSON_Delete(l->events);
	strvec_clear(&l->lines);
}

static const char *type_of(const cJSON *ev)
{
	const char *t = jsonx_str(ev, "type");

	return t ? t : "";
}

static int count_type(const cJSON *events, const char *type)
{
	const cJSON *ev;
	int n = 0;

	cJSON_ArrayForEach(ev, events) n += !strcmp(type_of(ev), type);
	return n;
}

static const cJSON *last_of(const cJSON *events, const char *type)
{
	const cJSON *ev, *found = NULL;

	cJSON_ArrayForEach(ev, events) if (!strcmp(type_of(ev), type)) found = ev;
	return found;
}

/* {step_id: final status} over the steps of the last adopted plan. */
static cJSON *final_statuses(const cJSON *events)
{
	const cJSON *plan = cJSON_GetObjectItem(last_of(events, "plan.adopted"), "plan");
	const cJSON *s, *ev;
	cJSON *map = cJSON_CreateObject();

	assert_non_null(plan);
	cJSON_ArrayForEach(s, cJSON_GetObjectItem(plan, "steps"))
	{
		const char *id = jsonx_str(s, "step_id");
		const char *status = "never ended";
		cJSON_ArrayForEach(ev, events) if (!strcmp(type_of(ev), "step.end") &&
		                                   !strcmp(jsonx_str(ev, "step_id"), id)) status =
		    jsonx_str(ev, "status");
		cJSON_AddStringToObject(map, id, status);
	}
	return map;
}

static int metric(const cJSON *events, const char *key)
{
	double d = -1;

	jsonx_num(cJSON_GetObjectItem(last_of(events, "run.final"), "metrics"), key, &d);
	return (int)d;
}

/* ------------------------------------------------------------- baselines */

/* One uninterrupted run per scenario: what a resumed run must end like. */
struct baseline {
	int exit_code;
	int lines;
	int replans;
	cJSON *statuses;
};

static struct baseline baselines[N_SCENARIOS];

static const struct baseline *baseline(const char *scenario)
{
	size_t k = 0;

	while (k < N_SCENARIOS && strcmp(scenarios[k], scenario))
		k++;
	assert_true(k < N_SCENARIOS);
	if (!baselines[k].statuses) {
		char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd;
		const char *args[] = {"--headless",  "--demo", "--yes",      "--scenario", scenario,
		                      "--sim-delay", "0",      "--runs-dir", runs,         NULL};
		struct proc p = run_wait(tmp, args);
		struct loaded l;

		assert_true(p.status == 0 || p.status == 2);
		rd = find_run(runs);
		assert_non_null(rd);
		load(rd, &l);
		baselines[k].exit_code = p.status;
		baselines[k].lines = cJSON_GetArraySize(l.events);
		baselines[k].replans = metric(l.events, "replans");
		baselines[k].statuses = final_statuses(l.events);
		loaded_free(&l);
		proc_free(&p);
		cli_rm_rf(tmp);
		free(rd);
		free(runs);
		free(tmp);
	}
	return &baselines[k];
}

/* ------------------------------------------------------------- killing */

enum kill_at {
	AT_LINES, /* once the journal has `lines` complete lines */
	AT_EVENT, /* once the `nth` event of type `event` is written; the journal is then cut
	           * right after it, as if the crash came just after that write */
};

struct kill_spec {
	const char *scenario;
	enum kill_at at;
	int lines;
	const char *event;
	int nth;
	bool tear;                /* then cut the last line in half (a write torn by the crash) */
	const char *resume;       /* kill a resumed run of this id instead of a fresh run */
	const char *step;         /* AT_EVENT: count only the events of this step */
	const char *const *extra; /* more options for the first run */
	const char *const *resume_extra; /* more options for every --resume */
	/* more checks on the interrupted and the resumed journal */
	void (*also)(const struct loaded *before, const struct loaded *after);
};

/* Appends the NULL-terminated `more` to argv[*n]. */
static void add_args(const char **argv, int *n, int cap, const char *const *more)
{
	for (int i = 0; more && more[i]; i++) {
		assert_true(*n < cap - 1);
		argv[(*n)++] = more[i];
	}
	argv[*n] = NULL;
}

/* The event type of a journal line is `type` (the first "type" key, after seq and ts),
 * and when `step` is given, its step_id is `step`. */
static bool line_is(const char *line, size_t len, const char *type, const char *step)
{
	char *key = xasprintf("\"type\":\"%s\"", type);
	char *sid = step ? xasprintf("\"step_id\":\"%s\"", step) : NULL;
	const char *p = memmem(line, len, "\"type\":\"", 8);
	bool yes = p && (size_t)(line + len - p) >= strlen(key) && !strncmp(p, key, strlen(key));

	if (yes && sid)
		yes = memmem(line, len, sid, strlen(sid)) != NULL;
	free(key);
	free(sid);
	return yes;
}

/* Where the kill point is in `buf`: the end offset of the line that reaches it, or -1. */
static long kill_point(const struct kill_spec *k, const char *buf, size_t len)
{
	int lines = 0, hits = 0;
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		lines++;
		if (k->at == AT_LINES && lines >= k->lines)
			return (long)i + 1;
		if (k->at == AT_EVENT && line_is(buf + start, i - start, k->event, k->step) &&
		    ++hits >= k->nth)
			return (long)i + 1;
		start = i + 1;
	}
	return -1;
}

/*
 * Runs the scenario (or resumes k->resume) with `delay_ms` and kills it with SIGKILL at
 * the kill point. Returns the run directory, or NULL when the run ended before the kill
 * point was reached (the caller tries again, slower).
 */
static char *kill_run(const struct kill_spec *k, const char *tmp, const char *runs, int delay_ms)
{
	char *delay = xasprintf("%d", delay_ms), *out = xasprintf("%s/killed.out", tmp);
	char *err = xasprintf("%s/killed.err", tmp), *rd = NULL;
	const char *fresh[] = {"--headless",  "--demo", "--yes",      "--scenario", k->scenario,
	                       "--sim-delay", delay,    "--runs-dir", runs,         NULL};
	const char *again[] = {"--headless", "--resume",   k->resume, "--yes", "--sim-delay",
	                       delay,        "--runs-dir", runs,      NULL};
	const char *argv[32];
	int n = 0;
	pid_t pid;
	long deadline = now_ms() + KILL_DEADLINE_MS, cut = -1;
	int st;

	add_args(argv, &n, 32, k->resume ? again : fresh);
	add_args(argv, &n, 32, k->resume ? k->resume_extra : k->extra);
	pid = spawn(argv, out, err);

	for (;;) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			goto ended; /* finished (or failed) before the kill point */
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("%s: the kill point was not reached within %d ms", k->scenario,
			         KILL_DEADLINE_MS);
		}
		free(rd);
		rd = find_run(runs);
		if (rd) {
			char *path = xasprintf("%s/journal.jsonl", rd);
			size_t len = 0;
			char *buf = slurp(path, &len);
			cut = buf ? kill_point(k, buf, len) : -1;
			free(buf);
			free(path);
			if (cut >= 0)
				break;
		}
		sleep_ms(1);
	}
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		goto ended; /* it exited by itself between the check and the kill */
	if (k->at == AT_EVENT) {
		char *path = xasprintf("%s/journal.jsonl", rd);
		assert_int_equal(truncate(path, (off_t)cut), 0);
		free(path);
	}
	if (k->tear) {
		char *path = xasprintf("%s/journal.jsonl", rd);
		size_t len = 0;
		char *buf = slurp(path, &len);
		size_t start;

		assert_non_null(buf);
		assert_true(len > 2 && buf[len - 1] == '\n');
		start = len - 1;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		/* Half of the last line, without its newline: a write cut off by the crash. */
		assert_int_equal(truncate(path, (off_t)(start + (len - 1 - start) / 2)), 0);
		free(buf);
		free(path);
	}
	free(delay);
	free(out);
	free(err);
	return rd;
ended:
	free(delay);
	free(out);
	free(err);
	free(rd);
	return NULL;
}

/* ------------------------------------------------------------- checks */

static bool kept_in(const cJSON *adopted, const char *id)
{
	const cJSON *k;

	cJSON_ArrayForEach(
	    k, cJSON_GetObjectItem(adopted, "kept")) if (cJSON_IsString(k) &&
	                                                 !strcmp(k->valuestring, id)) return true;
	return false;
}

/* Drops the ids that an adopted plan (or an edit) made run again legitimately. */
static void forget_reset(cJSON *set, const cJSON *ev)
{
	if (!strcmp(type_of(ev), "plan.adopted")) {
		cJSON *s = set->child, *next;
		for (; s; s = next) {
			next = s->next;
			if (!kept_in(ev, s->string))
				cJSON_DeleteItemFromObject(set, s->string);
		}
	} else if (!strcmp(type_of(ev), "step.edit") && jsonx_str(ev, "step_id")) {
		cJSON_DeleteItemFromObject(set, jsonx_str(ev, "step_id"));
	}
}

/* Steps that passed in the interrupted part (and still stand), and the attempts in
 * flight when it stopped. */
static void before_state(const cJSON *events, cJSON *passed, cJSON *in_flight)
{
	const cJSON *ev;

	cJSON_ArrayForEach(ev, events)
	{
		const char *t = type_of(ev), *id = jsonx_str(ev, "step_id");
		forget_reset(passed, ev);
		forget_reset(in_flight, ev);
		if (!id)
			continue;
		if (!strcmp(t, "step.start")) {
			cJSON_DeleteItemFromObject(in_flight, id);
			cJSON_AddTrueToObject(in_flight, id);
		} else if (!strcmp(t, "step.end")) {
			cJSON_DeleteItemFromObject(in_flight, id);
			cJSON_DeleteItemFromObject(passed, id);
			if (!strcmp(jsonx_str(ev, "status"), "passed"))
				cJSON_AddTrueToObject(passed, id);
		}
	}
}

/*
 * The resumed journal: loads whole, seq 1..n, one run.start first, run.final then one
 * run.end last (`run_ends` in all: an aborted first life journals its own), the
 * interrupted part unchanged, no passed step started again, every attempt in flight
 * started over, and every step ending as in the uninterrupted run.
 */
static void check_resumed(const struct loaded *before, const struct loaded *after,
                          const struct baseline *base, int run_ends)
{
	int k = cJSON_GetArraySize(before->events), n = cJSON_GetArraySize(after->events);
	cJSON *passed = cJSON_CreateObject(), *in_flight = cJSON_CreateObject(), *statuses;
	char *want, *got;

	assert_false(after->info.torn_tail);
	assert_true(n > k);
	for (int i = 0; i < n; i++) {
		double seq = 0;
		assert_true(jsonx_num(cJSON_GetArrayItem(after->events, i), "seq", &seq));
		assert_int_equal((int)seq, i + 1);
	}
	/* What was journaled before the crash is never rewritten. */
	for (int i = 0; i < k; i++)
		assert_string_equal(before->lines.v[i], after->lines.v[i]);
	assert_string_equal(type_of(cJSON_GetArrayItem(after->events, 0)), "run.start");
	assert_int_equal(count_type(after->events, "run.start"), 1);
	assert_int_equal(count_type(after->events, "run.end"), run_ends);
	assert_string_equal(type_of(cJSON_GetArrayItem(after->events, n - 1)), "run.end");
	assert_string_equal(type_of(cJSON_GetArrayItem(after->events, n - 2)), "run.final");

	before_state(before->events, passed, in_flight);
	for (int i = k; i < n; i++) {
		const cJSON *ev = cJSON_GetArrayItem(after->events, i);
		const char *id = jsonx_str(ev, "step_id");
		forget_reset(passed, ev);
		forget_reset(in_flight, ev);
		if (!strcmp(type_of(ev), "step.start")) {
			if (cJSON_HasObjectItem(passed, id))
				fail_msg("step %s passed before the crash and was started again "
				         "(seq %d)",
				         id, i + 1);
			cJSON_DeleteItemFromObject(in_flight, id);
		}
	}
	if (cJSON_GetArraySize(in_flight) > 0)
		fail_msg("the attempt of step %s was in flight and never started over",
		         in_flight->child->string);

	statuses = final_statuses(after->events);
	want = cJSON_PrintUnformatted(base->statuses);
	got = cJSON_PrintUnformatted(statuses);
	assert_string_equal(got, want);
	assert_int_equal(metric(after->events, "steps_passed"),
	                 metric(after->events, "steps_total") -
	                     metric(after->events, "steps_fail_accepted"));
	free(want);
	free(got);
	cJSON_Delete(statuses);
	cJSON_Delete(passed);
	cJSON_Delete(in_flight);
}

/* --list-runs names the run with `state`. */
static void assert_listed(const char *tmp, const char *runs, const char *id, const char *state)
{
	const char *args[] = {"--list-runs", "--runs-dir", runs, NULL};
	struct proc p = run_wait(tmp, args);
	char *line = strstr(p.out, id), *eol;

	assert_int_equal(p.status, 0);
	assert_non_null(line);
	eol = strchr(line, '\n');
	if (eol)
		*eol = '\0';
	if (!strstr(line, state))
		fail_msg("--list-runs shows \"%s\", expected the state %s", line, state);
	proc_free(&p);
}

/*
 * One crash: kill the run at the kill point (slower and again if it ends first), check
 * the interrupted journal, resume to the end and check the result.
 */
static void crash_and_resume(struct kill_spec k)
{
	const struct baseline *base = baseline(k.scenario);
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd = NULL, *id;
	struct loaded before, after;
	struct proc p;
	int delay = FIRST_DELAY_MS;

	for (int t = 0; t < DELAY_TRIES && !rd; t++, delay *= 4) {
		cli_rm_rf(runs);
		rd = kill_run(&k, tmp, runs, delay);
	}
	if (!rd)
		fail_msg("%s: the run always ended before its kill point, even at %d ms",
		         k.scenario, delay / 4);
	id = strrchr(rd, '/') + 1;

	load(rd, &before);
	assert_int_equal(before.info.torn_tail, k.tear);
	/* The kill really interrupted the run. */
	assert_int_equal(count_type(before.events, "run.end"), 0);
	assert_true(cJSON_GetArraySize(before.events) >= 1);
	assert_listed(tmp, runs, id, "unfinished");

	{
		const char *args[] = {"--headless", "--resume",   id,   "--yes", "--sim-delay",
		                      "0",          "--runs-dir", runs, NULL};
		const char *argv[32];
		int n = 0;
		add_args(argv, &n, 32, args);
		add_args(argv, &n, 32, k.resume_extra);
		p = run_wait(tmp, argv);
	}
	if (p.status != base->exit_code)
		fail_msg("%s: resume exited %d, want %d\nstdout:\n%s\nstderr:\n%s", k.scenario,
		         p.status, base->exit_code, p.out, p.err);
	load(rd, &after);
	check_resumed(&before, &after, base, 1);
	{
		/* The resumed process's report covers the killed part too, as the journal's. */
		char *why = report_check_live(rd);
		if (why)
			fail_msg("%s: %s", k.scenario, why);
	}
	if (k.also)
		k.also(&before, &after);
	assert_listed(tmp, runs, id, base->exit_code ? "partial" : "passed");

	proc_free(&p);
	loaded_free(&before);
	loaded_free(&after);
	cli_rm_rf(tmp);
	free(rd);
	free(runs);
	free(tmp);
}

/* ------------------------------------------------------------- tests */

/* Kills at the first line (run.start only: killed while planning), then at about half and
 * nine tenths of an uninterrupted run's journal. */
static void kill_between_events(const char *scenario)
{
	const struct baseline *base = baseline(scenario);
	const int lines[] = {1, base->lines / 2, 9 * base->lines / 10};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		crash_and_resume(
		    (struct kill_spec){.scenario = scenario, .at = AT_LINES, .lines = lines[i]});
}

static void test_between_events_legal_review(void **state)
{
	(void)state;
	kill_between_events("legal-review");
}

static void test_between_events_density(void **state)
{
	(void)state;
	kill_between_events("density");
}

static void test_between_events_dag(void **state)
{
	(void)state;
	kill_between_events("dag");
}

static void test_between_events_replan(void **state)
{
	(void)state;
	kill_between_events("replan");
}

static void test_between_events_flaky_search(void **state)
{
	(void)state;
	kill_between_events("flaky-search");
}

/* Killed mid-run, and the last line written only half. */
static void test_torn_last_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_SCENARIOS; i++) {
		const struct baseline *base = baseline(scenarios[i]);
		crash_and_resume((struct kill_spec){.scenario = scenarios[i],
		                                    .at = AT_LINES,
		                                    .lines = base->lines / 2,
		                                    .tear = true});
	}
}

/* The first plan proposal torn in half: the plan must be asked for again. */
static void test_torn_plan_proposal(void **state)
{
	(void)state;
	crash_and_resume((struct kill_spec){
	    .scenario = "dag", .at = AT_EVENT, .event = "plan.proposed", .nth = 1, .tear = true});
}

/* Killed while a tool runs: the journal ends with its tool.call (the first call of the run
 * in some scenarios, the second in the others). */
static void test_during_tool_call(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_SCENARIOS; i++)
		crash_and_resume((struct kill_spec){.scenario = scenarios[i],
		                                    .at = AT_EVENT,
		                                    .event = "tool.call",
		                                    .nth = 1 + (int)(i % 2)});
}

/* Killed just after a step was journaled as passed: the step must not run again. */
static void test_right_after_step_passed(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_SCENARIOS; i++)
		crash_and_resume((struct kill_spec){
		    .scenario = scenarios[i], .at = AT_EVENT, .event = "step.end", .nth = 1});
}

/* Killed between verification stages and while the whole-plan check runs. */
static void test_during_verification_and_finish(void **state)
{
	(void)state;
	crash_and_resume((struct kill_spec){
	    .scenario = "legal-review", .at = AT_EVENT, .event = "verify.verdict", .nth = 3});
	crash_and_resume((struct kill_spec){
	    .scenario = "flaky-search", .at = AT_EVENT, .event = "step.output", .nth = 2});
	crash_and_resume((struct kill_spec){
	    .scenario = "density", .at = AT_EVENT, .event = "plan.adopted", .nth = 2});
	crash_and_resume(
	    (struct kill_spec){.scenario = "dag", .at = AT_EVENT, .event = "run.final", .nth = 1});
}

/* After the crash, the first gate.open is the one left open: same kind and step, and
 * nothing of that step (or a new plan) comes before it. */
static void open_gate_reopens(const struct loaded *before, const struct loaded *after)
{
	int k = cJSON_GetArraySize(before->events), n = cJSON_GetArraySize(after->events);
	const cJSON *open = cJSON_GetArrayItem(before->events, k - 1);
	const char *kind = jsonx_str(open, "gate"), *step = jsonx_str(open, "step_id");

	assert_string_equal(type_of(open), "gate.open");
	for (int i = k; i < n; i++) {
		const cJSON *ev = cJSON_GetArrayItem(after->events, i);
		const char *t = type_of(ev);
		if (!strcmp(t, "gate.open")) {
			assert_string_equal(jsonx_str(ev, "gate"), kind);
			if (step)
				assert_string_equal(jsonx_str(ev, "step_id"), step);
			return;
		}
		if (!strcmp(t, "plan.proposed") || !strcmp(t, "plan.adopted") ||
		    (step && !strcmp(t, "step.start") && !strcmp(jsonx_str(ev, "step_id"), step)))
			fail_msg("%s (seq %d) came before the open %s gate was asked again", t,
			         i + 1, kind);
	}
	fail_msg("the %s gate open at the crash never opened again", kind);
}

/* Killed while a gate waits for its decision: the plan gate (dag), the high gate before
 * the memo (legal-review), the replan gate (replan). */
static void test_at_open_gate(void **state)
{
	(void)state;
	crash_and_resume((struct kill_spec){.scenario = "dag",
	                                    .at = AT_EVENT,
	                                    .event = "gate.open",
	                                    .nth = 1,
	                                    .also = open_gate_reopens});
	crash_and_resume((struct kill_spec){.scenario = "legal-review",
	                                    .at = AT_EVENT,
	                                    .event = "gate.open",
	                                    .nth = 2,
	                                    .also = open_gate_reopens});
	crash_and_resume((struct kill_spec){.scenario = "replan",
	                                    .at = AT_EVENT,
	                                    .event = "gate.open",
	                                    .nth = 2,
	                                    .also = open_gate_reopens});
}

/* A resumed run killed again, then resumed to the end. Both crashes come right after a
 * step passed, so each life leaves a passed step that the next must not run again. */
static void test_crash_twice(void **state)
{
	const struct baseline *base = baseline("legal-review");
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd = NULL, *rd2 = NULL, *id;
	struct kill_spec k = {
	    .scenario = "legal-review", .at = AT_EVENT, .event = "step.end", .nth = 1};
	struct loaded first, second, after;
	struct proc p;
	int delay = FIRST_DELAY_MS;

	(void)state;
	for (int t = 0; t < DELAY_TRIES && !rd; t++, delay *= 4) {
		cli_rm_rf(runs);
		rd = kill_run(&k, tmp, runs, delay);
	}
	assert_non_null(rd);
	id = strrchr(rd, '/') + 1;
	load(rd, &first);

	/* The second life: killed once the journal holds a third step.end. */
	k.resume = id;
	k.nth = 3;
	rd2 = kill_run(&k, tmp, runs, FIRST_DELAY_MS);
	if (!rd2)
		fail_msg("the resumed run ended before its kill point (a second life cannot be "
		         "repeated slower on the same run)");
	assert_string_equal(rd2, rd);
	load(rd, &second);
	assert_int_equal(count_type(second.events, "run.end"), 0);
	assert_true(cJSON_GetArraySize(second.events) > cJSON_GetArraySize(first.events));

	{
		const char *args[] = {"--headless", "--resume",   id,   "--yes", "--sim-delay",
		                      "0",          "--runs-dir", runs, NULL};
		p = run_wait(tmp, args);
	}
	assert_int_equal(p.status, base->exit_code);
	load(rd, &after);
	check_resumed(&first, &after, base, 1);
	check_resumed(&second, &after, base, 1);

	proc_free(&p);
	loaded_free(&first);
	loaded_free(&second);
	loaded_free(&after);
	cli_rm_rf(tmp);
	free(rd);
	free(rd2);
	free(runs);
	free(tmp);
}

/*
 * A gate without an operator: the run stops there by itself (exit 3, run.end aborted),
 * then --resume --yes opens the same gate again and finishes. `gate` is the --gate list,
 * `kind` and `step` the gate that stops it (step NULL for the plan gate).
 */
static void gate_then_resume(const char *scenario, const char *gate, const char *kind,
                             const char *step)
{
	const struct baseline *base = baseline(scenario);
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd, *id;
	struct loaded before, after;
	const cJSON *end, *reopened = NULL;
	struct proc p;
	int k, n, plans_before;

	{
		const char *args[] = {"--headless", "--demo", "--gate",      gate,
		                      "--scenario", scenario, "--sim-delay", "0",
		                      "--runs-dir", runs,     NULL};
		p = run_wait(tmp, args);
	}
	if (p.status != 3)
		fail_msg("%s at the %s gate: exit %d, want 3\n%s\n%s", scenario, kind, p.status,
		         p.out, p.err);
	proc_free(&p);
	rd = find_run(runs);
	assert_non_null(rd);
	id = strrchr(rd, '/') + 1;
	load(rd, &before);
	end = last_of(before.events, "gate.open");
	assert_non_null(end);
	assert_string_equal(jsonx_str(end, "gate"), kind);
	end = last_of(before.events, "run.end");
	assert_non_null(end);
	assert_string_equal(jsonx_str(end, "status"), "aborted");
	assert_listed(tmp, runs, id, "aborted");
	plans_before = count_type(before.events, "plan.proposed");

	{
		const char *args[] = {"--headless", "--resume",   id,   "--yes", "--sim-delay",
		                      "0",          "--runs-dir", runs, NULL};
		p = run_wait(tmp, args);
	}
	if (p.status != base->exit_code)
		fail_msg("resume after the %s gate: exit %d\n%s\n%s", kind, p.status, p.out, p.err);
	load(rd, &after);
	/* The aborted first life journaled its own run.end; the resumed one ends the run. */
	check_resumed(&before, &after, base, 2);
	k = cJSON_GetArraySize(before.events);
	n = cJSON_GetArraySize(after.events);
	for (int i = k; i < n && !reopened; i++) {
		const cJSON *ev = cJSON_GetArrayItem(after.events, i);
		if (!strcmp(type_of(ev), "gate.open") && !strcmp(jsonx_str(ev, "gate"), kind))
			reopened = ev;
		/* Nothing of the stopped step runs before its gate opens again. */
		if (step && !strcmp(type_of(ev), "step.start"))
			assert_string_not_equal(jsonx_str(ev, "step_id"), step);
	}
	assert_non_null(reopened);
	if (step)
		assert_string_equal(jsonx_str(reopened, "step_id"), step);
	/* The plan waiting at its gate is the one adopted: no new planner call. */
	if (!step)
		assert_int_equal(count_type(after.events, "plan.proposed"), plans_before);
	assert_listed(tmp, runs, id, "passed");

	proc_free(&p);
	loaded_free(&before);
	loaded_free(&after);
	cli_rm_rf(tmp);
	free(rd);
	free(runs);
	free(tmp);
}

static void test_high_gate_then_resume(void **state)
{
	(void)state;
	gate_then_resume("legal-review", "high", "high", "memo");
}

static void test_plan_gate_then_resume(void **state)
{
	(void)state;
	gate_then_resume("dag", "plan", "plan", NULL);
}

/*
 * A crash while a replan proposal waits at its gate (the journal ends with the replan's
 * plan.proposed): the resumed run must put that proposal to its gate again, not execute
 * the failed step once more and pay for a second replan (fixed in 2db0c14).
 */
static void test_replan_gate_reopens(void **state)
{
	const struct baseline *base;
	char *tmp, *runs, *rd = NULL, *id;
	struct kill_spec k = {
	    .scenario = "replan", .at = AT_EVENT, .event = "plan.proposed", .nth = 2};
	struct loaded before, after;
	const cJSON *adopted = NULL;
	struct proc p;
	int delay = FIRST_DELAY_MS, n, kk;

	(void)state;
	base = baseline("replan");
	tmp = cli_tmpdir();
	runs = xasprintf("%s/runs", tmp);
	for (int t = 0; t < DELAY_TRIES && !rd; t++, delay *= 4) {
		cli_rm_rf(runs);
		rd = kill_run(&k, tmp, runs, delay);
	}
	assert_non_null(rd);
	id = strrchr(rd, '/') + 1;
	load(rd, &before);
	kk = cJSON_GetArraySize(before.events);
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(before.events, kk - 1), "reason"),
	                    "replan");
	{
		const char *args[] = {"--headless", "--resume",   id,   "--yes", "--sim-delay",
		                      "0",          "--runs-dir", runs, NULL};
		p = run_wait(tmp, args);
	}
	assert_int_equal(p.status, base->exit_code);
	load(rd, &after);
	check_resumed(&before, &after, base, 1);
	n = cJSON_GetArraySize(after.events);
	for (int i = kk; i < n && !adopted; i++) {
		const cJSON *ev = cJSON_GetArrayItem(after.events, i);
		if (!strcmp(type_of(ev), "plan.adopted"))
			adopted = ev;
		if (!strcmp(type_of(ev), "step.start"))
			fail_msg("step %s ran before the waiting replan was decided",
			         jsonx_str(ev, "step_id"));
	}
	assert_non_null(adopted);
	{
		double rev = -1;
		assert_true(jsonx_num(adopted, "revision", &rev));
		assert_int_equal((int)rev, 1);
	}
	assert_int_equal(metric(after.events, "replans"), base->replans);

	proc_free(&p);
	loaded_free(&before);
	loaded_free(&after);
	cli_rm_rf(tmp);
	free(rd);
	free(runs);
	free(tmp);
}

/* Count of events of `type` whose string field `key` is `value`, from index `from`. */
static int count_where(const cJSON *events, int from, const char *type, const char *key,
                       const char *value)
{
	int n = 0;

	for (int i = from; i < cJSON_GetArraySize(events); i++) {
		const cJSON *ev = cJSON_GetArrayItem(events, i);
		const char *v = jsonx_str(ev, key);
		n += !strcmp(type_of(ev), type) && v && !strcmp(v, value);
	}
	return n;
}

/*
 * The budget is a cap: --yes never raises it. The run stops at the cap (exit 3, run.end
 * naming --budget), spending no more than the cap plus the calls in flight; --resume with
 * a higher --budget reopens it (run.reopen) and it finishes, nothing passed run again.
 */
static void test_budget_stop_then_resume_higher(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd;
	const char *first[] = {"--headless", "--demo", "--yes", "--sim-delay", "0",
			       "--budget",   "0.02",   "--runs-dir", runs, NULL};
	struct loaded a, b;
	struct proc p;
	const cJSON *ev;
	double total = 0, biggest = 0, c;
	int k;

	(void)state;
	p = run_wait(tmp, first);
	assert_int_equal(p.status, 3);
	assert_non_null(strstr(p.err, "--budget"));
	proc_free(&p);
	rd = find_run(runs);
	assert_non_null(rd);
	load(rd, &a);
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(a.events, cJSON_GetArraySize(a.events) - 1),
				      "type"),
			    "run.end");
	cJSON_ArrayForEach(ev, a.events)
	{
		if (!strcmp(type_of(ev), "llm.call") && jsonx_num(ev, "cost_usd", &c)) {
			total += c;
			if (c > biggest)
				biggest = c;
		}
	}
	assert_true(total > 0);
	assert_true(total <= 0.02 + biggest); /* one call in flight at most (parallel 1) */

	{
		/* --yes is not restored from a journal: it is given again. */
		const char *again[] = {"--headless", "--yes",    "--resume", strrchr(rd, '/') + 1,
				       "--sim-delay", "0",       "--budget", "5",
				       "--runs-dir",  runs,      NULL};
		p = run_wait(tmp, again);
	}
	if (p.status != 0)
		fail_msg("resume exited %d\nstderr:\n%s", p.status, p.err);
	proc_free(&p);
	load(rd, &b);
	k = cJSON_GetArraySize(a.events);
	assert_string_equal(type_of(cJSON_GetArrayItem(b.events, k)), "run.reopen");
	assert_int_equal(count_type(b.events, "run.end"), 2);
	/* The higher cap stands: no budget stop after the resume. */
	assert_int_equal(count_where(b.events, k, "gate.open", "gate", "budget"), 0);
	/* Steps that passed before the stop are not run again. */
	for (int i = 0; i < k; i++) {
		const cJSON *e = cJSON_GetArrayItem(a.events, i);
		if (!strcmp(type_of(e), "step.end") && !strcmp(jsonx_str(e, "status"), "passed"))
			for (int j = k; j < cJSON_GetArraySize(b.events); j++) {
				const cJSON *f = cJSON_GetArrayItem(b.events, j);
				if (!strcmp(type_of(f), "step.start"))
					assert_string_not_equal(jsonx_str(f, "step_id"),
								jsonx_str(e, "step_id"));
			}
	}
	loaded_free(&a);
	loaded_free(&b);
	cli_rm_rf(tmp);
	free(runs);
	free(rd);
	free(tmp);
}

/* Attempts of step "density" that got a verdict before the first replan. */
static void full_retry_budget(const struct loaded *before, const struct loaded *after)
{
	const cJSON *ev;
	int verified = 0, last_attempt = 0;

	(void)before;
	cJSON_ArrayForEach(ev, after->events)
	{
		double a;
		if (!strcmp(type_of(ev), "plan.proposed") &&
		    !strcmp(jsonx_str(ev, "reason"), "replan"))
			break;
		if (strcmp(type_of(ev), "verify.verdict") ||
		    strcmp(jsonx_str(ev, "step_id"), "density") || !jsonx_num(ev, "attempt", &a))
			continue;
		if ((int)a != last_attempt)
			verified++;
		last_attempt = (int)a;
	}
	/* 1 + the default --max-retries 2, as without the crash. */
	if (verified != 3)
		fail_msg("step density was verified %d times before its replan, not 3: the "
		         "attempt in flight at the crash used up a retry",
		         verified);
}

/*
 * An attempt in flight at the crash starts over without using up one of the step's
 * retries (density's step "density" always fails verification, so it is retried up to
 * --max-retries before a replan).
 *
 * Regression: the attempt cut off by the crash used to count against the retries.
 */
static void test_in_flight_attempt_keeps_retries(void **state)
{
	(void)state;
	crash_and_resume((struct kill_spec){.scenario = "density",
	                                    .at = AT_EVENT,
	                                    .event = "step.start",
	                                    .step = "density",
	                                    .nth = 2,
	                                    .also = full_retry_budget});
}

/* Every gate.open in the journal has its own gate_id (decisions name their gate by it). */
static void gate_ids_unique(const struct loaded *before, const struct loaded *after)
{
	cJSON *seen = cJSON_CreateObject();
	const cJSON *ev;

	(void)before;
	cJSON_ArrayForEach(ev, after->events)
	{
		double id;
		char key[32];
		if (strcmp(type_of(ev), "gate.open") || !jsonx_num(ev, "gate_id", &id))
			continue;
		snprintf(key, sizeof(key), "%.0f", id);
		if (cJSON_HasObjectItem(seen, key))
			fail_msg("gate_id %s is used by two gates (the second at seq %.0f)", key,
			         cJSON_GetObjectItem(ev, "seq")->valuedouble);
		cJSON_AddTrueToObject(seen, key);
	}
	cJSON_Delete(seen);
}

/*
 * Gate ids stay unique across a resume: killed while the high gate (id 2) is open, the
 * resumed run's gates must not reuse 1 or 2, or a decision matched by gate_id (the view
 * model does so) closes the wrong gate and the stale one looks open forever in a replay.
 *
 * Regression: gate ids used to restart at 1 after a resume.
 */
static void test_gate_ids_unique_after_resume(void **state)
{
	(void)state;
	crash_and_resume((struct kill_spec){.scenario = "legal-review",
	                                    .at = AT_EVENT,
	                                    .event = "gate.open",
	                                    .nth = 2,
	                                    .also = gate_ids_unique});
}

static char *workspace_dir;

static void work_in_workspace(const struct loaded *before, const struct loaded *after)
{
	char *memo = xasprintf("%s/memo.md", workspace_dir);
	const cJSON *start = cJSON_GetArrayItem(after->events, 0);

	(void)before;
	assert_string_equal(jsonx_str(start, "workspace"), workspace_dir);
	/* The memo is written after the crash: in the run's own workspace. */
	assert_int_equal(access(memo, R_OK), 0);
	free(memo);
}

/*
 * A run started with --workspace DIR resumes in DIR (journaled in run.start), not in
 * RUNDIR/workspace.
 *
 * Regression: the journaled workspace used to be ignored on resume.
 */
static void test_resume_keeps_workspace(void **state)
{
	const char *ws[] = {"--workspace", NULL, NULL};

	(void)state;
	workspace_dir = cli_tmpdir();
	ws[1] = workspace_dir;
	crash_and_resume((struct kill_spec){.scenario = "legal-review",
	                                    .at = AT_EVENT,
	                                    .event = "step.end",
	                                    .nth = 1,
	                                    .extra = ws,
	                                    /* a workspace outside the run folder is
	                                     * named again to be resumed there */
	                                    .resume_extra = ws,
	                                    .also = work_in_workspace});
	cli_rm_rf(workspace_dir);
	free(workspace_dir);
	workspace_dir = NULL;
}

static void test_resume_finished_or_missing(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *rd, *id;
	struct proc p;

	(void)state;
	{
		const char *args[] = {"--headless",  "--demo", "--yes",      "--scenario", "dag",
		                      "--sim-delay", "0",      "--runs-dir", runs,         NULL};
		p = run_wait(tmp, args);
	}
	assert_int_equal(p.status, 0);
	proc_free(&p);
	rd = find_run(runs);
	assert_non_null(rd);
	id = strrchr(rd, '/') + 1;
	{
		const char *args[] = {"--headless", "--resume", id,  "--yes",
		                      "--runs-dir", runs,       NULL};
		p = run_wait(tmp, args);
	}
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "already finished"));
	proc_free(&p);
	/* By directory too, and the finished journal is left as it was. */
	{
		char *path = xasprintf("%s/journal.jsonl", rd);
		size_t len0 = 0, len1 = 0;
		char *j0 = slurp(path, &len0), *j1;
		const char *args[] = {"--headless", "--resume", rd,  "--yes",
		                      "--runs-dir", runs,       NULL};
		p = run_wait(tmp, args);
		assert_int_equal(p.status, 1);
		assert_non_null(strstr(p.err, "already finished"));
		j1 = slurp(path, &len1);
		assert_int_equal(len1, len0);
		assert_memory_equal(j0, j1, len0);
		free(j0);
		free(j1);
		free(path);
		proc_free(&p);
	}
	{
		const char *args[] = {"--headless", "--resume",   "no-such-run-4711",
		                      "--yes",      "--runs-dir", runs,
		                      NULL};
		p = run_wait(tmp, args);
	}
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "no-such-run-4711"));
	{
		/* Nothing was created for the missing run. */
		char *only = find_run(runs);
		assert_string_equal(only, rd);
		free(only);
	}
	proc_free(&p);
	cli_rm_rf(tmp);
	free(rd);
	free(runs);
	free(tmp);
}

static int teardown_baselines(void **state)
{
	(void)state;
	for (size_t i = 0; i < N_SCENARIOS; i++)
		cJSON_Delete(baselines[i].statuses);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_between_events_legal_review),
	    cmocka_unit_test(test_between_events_density),
	    cmocka_unit_test(test_between_events_dag),
	    cmocka_unit_test(test_between_events_replan),
	    cmocka_unit_test(test_between_events_flaky_search),
	    cmocka_unit_test(test_torn_last_line),
	    cmocka_unit_test(test_torn_plan_proposal),
	    cmocka_unit_test(test_during_tool_call),
	    cmocka_unit_test(test_right_after_step_passed),
	    cmocka_unit_test(test_during_verification_and_finish),
	    cmocka_unit_test(test_crash_twice),
	    cmocka_unit_test(test_at_open_gate),
	    cmocka_unit_test(test_high_gate_then_resume),
	    cmocka_unit_test(test_plan_gate_then_resume),
	    cmocka_unit_test(test_replan_gate_reopens),
	    cmocka_unit_test(test_budget_stop_then_resume_higher),
	    cmocka_unit_test(test_resume_keeps_workspace),
	    cmocka_unit_test(test_in_flight_attempt_keeps_retries),
	    cmocka_unit_test(test_gate_ids_unique_after_resume),
	    cmocka_unit_test(test_resume_finished_or_missing),
	};

	return cmocka_run_group_tests(tests, NULL, teardown_baselines);
}
