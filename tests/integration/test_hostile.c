/* test_hostile — the real binary against a hostile model, a hostile run folder and a hostile
 * machine: keys out of the commands' reach, a full disk, two processes on one run, a run
 * folder that lies, text meant for the terminal, signals. The simulated provider plays the
 * model (--script); every check reads what the binary printed and journaled. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonx.h"
#include "strbuf.h"
#include "testdir.h"
#include "textsan.h"
#include "xalloc.h"

/* ------------------------------------------------------------------ helpers */

/* A one-step plan whose executor makes the given tool calls (a JSON array of
 * {"name", "input"} objects, one round each) and then reports success with the last
 * tool result, whole, as its findings (the journal keeps only a summary of each). */
static char *script_with_calls(const char *dir, const char *task, const char *calls_json)
{
	cJSON *calls = cJSON_Parse(calls_json), *c;
	struct strbuf rounds = STRBUF_INIT;
	char *text, *path;

	assert_non_null(calls);
	strbuf_init(&rounds);
	cJSON_ArrayForEach(c, calls)
	{
		char *one = cJSON_PrintUnformatted(c);
		strbuf_addf(&rounds, "%s{\"text\": \"Working.\", \"tool_calls\": [%s]}",
			    rounds.len ? ", " : "", one);
		cJSON_free(one);
	}
	cJSON_Delete(calls);
	text = xasprintf(
		"{\"task\": \"%s\",\n"
		" \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"probe\",\n"
		"   \"name\": \"Probe\", \"description\": \"Look around.\",\n"
		"   \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
		"   \"estimated_complexity\": \"low\"}]}],\n"
		" \"executor\": {\"probe\": [{\"rounds\": [%s],\n"
		"   \"final\": {\"reasoning\": \"looked\", \"actions_taken\": [\"run_shell\"],\n"
		"     \"step_output\": {\"findings\": \"{{tool_result}}\", \"artifacts\": [],\n"
		"       \"meets_criteria\": true}, \"confidence\": 0.9}}]}\n"
		"}\n",
		task, rounds.buf);
	path = cli_put(dir, "script.json", text);
	free(text);
	strbuf_release(&rounds);
	return path;
}

static char *journal_text(const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	char *text = testdir_slurp(path);

	assert_non_null(text);
	free(path);
	return text;
}

/* The last tool result the executor got, whole: its findings (script_with_calls). */
static char *last_tool_result(const cJSON *events)
{
	const char *found = NULL;
	const cJSON *e;

	cJSON_ArrayForEach(e, events)
	{
		const cJSON *out = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "result"),
						       "step_output");
		if (!strcmp(jsonx_str(e, "type"), "step.output") && jsonx_str(out, "findings"))
			found = jsonx_str(out, "findings");
	}
	assert_non_null(found);
	return xstrdup(found);
}

static int count_type(const cJSON *events, const char *type)
{
	const cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, events)
		n += !strcmp(jsonx_str(e, "type"), type);
	return n;
}

#define FAIL_RUN(p, want) \
	fail_msg("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", (p).status, (want), (p).out, (p).err)

/* ------------------------------------------------------------------- secrets */

/*
 * A command the executor runs reads every process environment it can see and the core
 * limit of the process above it. The key given to pevtui is in none of them, anywhere it
 * could reach the model, the journal or the screen; core files are off.
 */
static void test_key_out_of_the_commands_reach(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *script, *run_dir;
	char *key = xasprintf("OPENAI_API_KEY=sk-hostile-%ld-canary", (long)getpid());
	char *token = xasprintf("DEPLOY_TOKEN=tok-hostile-%ld-canary", (long)getpid());
	const char *env[] = {key, token, NULL};
	char *journal, *results;
	struct cli_proc p;
	cJSON *ev;

	(void)state;
	/* $PPID is the process that started the shell; its parent is read too, so the test
	 * holds whichever of them is pevtui. */
	script = script_with_calls(
		tmp, "Probe the environment",
		"[{\"name\": \"run_shell\", \"input\": {\"command\": "
		"\"grep 'Max core' /proc/$PPID/limits; "
		"P=$(awk '/^PPid/{print $2}' /proc/$PPID/status); for p in $PPID $P; do tr "
		"'\\\\0' '\\\\n' < /proc/$p/environ; done; echo environ-read\"}}]");
	/* Unconfined (--sandbox off): in the sandbox the reads fail (tests/sandbox/), and this
	 * is about what pevtui leaves in its environment for a command that can read it. */
	p = cli_run(env, "--headless", "--yes", "--provider", "sim", "--script", script,
		    "--sim-delay", "0", "--runs-dir", runs, "--sandbox", "off", NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	run_dir = cli_only_run(runs);
	ev = cli_load_journal(run_dir);
	results = last_tool_result(ev);
	/* The reads worked: pevtui's own environment is there, less its secrets. */
	assert_non_null(strstr(results, "environ-read"));
	assert_non_null(strstr(results, "XDG_CONFIG_HOME=/nonexistent-pevtui-test"));
	assert_non_null(strstr(results, "Max core file size"));
	assert_non_null(strstr(results, "Max core file size        0                    0"));
	journal = journal_text(run_dir);
	assert_null(strstr(journal, "hostile-"));
	assert_null(strstr(p.out, "hostile-"));
	assert_null(strstr(p.err, "hostile-"));

	free(journal);
	free(results);
	cJSON_Delete(ev);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(run_dir);
	free(script);
	free(runs);
	free(key);
	free(token);
	free(tmp);
}

/*
 * The attack of the report: an allow-listed grep with a glob over /proc. A glob is a
 * reason for the gate, and with no operator the gate refuses: the command never runs.
 */
static void test_allow_listed_glob_still_asks(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *script, *run_dir, *config;
	char *key = xasprintf("OPENAI_API_KEY=sk-hostile-%ld-canary", (long)getpid());
	const char *env[] = {key, NULL};
	struct cli_proc p;
	const cJSON *e;
	cJSON *ev;
	int shell_gates = 0, ran = 0;

	(void)state;
	config = cli_put(tmp, "config", "[tools]\nshell_allow = grep\n");
	script = script_with_calls(
		tmp, "Find the key",
		"[{\"name\": \"run_shell\", \"input\": {\"command\": \"grep -a -h -o "
		"OPENAI_API_KEY=[^[:cntrl:]]* /proc/self/../*/environ\"}}]");
	p = cli_run(env, "--headless", "--gate", "shell", "--config", config, "--provider",
		    "sim", "--script", script, "--sim-delay", "0", "--runs-dir", runs, NULL);
	run_dir = cli_only_run(runs);
	ev = cli_load_journal(run_dir);
	cJSON_ArrayForEach(e, ev)
	{
		if (!strcmp(jsonx_str(e, "type"), "gate.open") &&
		    !strcmp(jsonx_str(e, "gate"), "shell"))
			shell_gates++;
		if (!strcmp(jsonx_str(e, "type"), "tool.result") && jsonx_str(e, "output") &&
		    strstr(jsonx_str(e, "output"), "exit status"))
			ran++;
	}
	if (shell_gates != 1 || ran != 0)
		fail_msg("shell gates %d (want 1), commands run %d (want 0)\nstderr:\n%s",
			 shell_gates, ran, p.err);
	assert_null(strstr(p.out, "hostile-"));

	cJSON_Delete(ev);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(run_dir);
	free(script);
	free(config);
	free(runs);
	free(key);
	free(tmp);
}

/* ----------------------------------------------------------------- full disk */

/*
 * The journal hits the file size limit mid-run: the run stops at once with exit 1 and a
 * message that says what to do, names no report that was not written, leaves a journal
 * that ends on a whole event, and resumes to the end once there is room.
 */
static void test_full_disk_stops_the_run(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir, *report, *jpath;
	struct cli_proc p;
	struct stat st;
	cJSON *ev;

	(void)state;
	cli_set_file_limit(20000);
	p = cli_run(NULL, "--headless", "--yes", "--demo", "--sim-delay", "0", "--runs-dir",
		    runs, NULL);
	cli_set_file_limit(0);
	if (p.status != 1)
		FAIL_RUN(p, 1);
	assert_non_null(strstr(p.err, "cannot write to the journal"));
	assert_non_null(strstr(p.err, "File too large"));
	assert_non_null(strstr(p.err, "pevtui --resume"));
	assert_null(strstr(p.err, "report:"));
	run_dir = cli_only_run(runs);
	report = xasprintf("%s/report.md", run_dir);
	assert_int_equal(access(report, F_OK), -1);
	jpath = xasprintf("%s/journal.jsonl", run_dir);
	assert_int_equal(stat(jpath, &st), 0);
	assert_true(st.st_size <= 20000);
	ev = cli_load_journal(run_dir); /* whole events only: no torn tail */
	assert_int_equal(count_type(ev, "run.end"), 0);
	cJSON_Delete(ev);
	cli_proc_free(&p);

	/* Room again: the same run goes on to the end. */
	p = cli_run(NULL, "--headless", "--yes", "--resume", run_dir, "--sim-delay", "0",
		    "--runs-dir", runs, NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	assert_int_equal(access(report, R_OK), 0);
	ev = cli_load_journal(run_dir);
	assert_int_equal(count_type(ev, "run.end"), 1);

	cJSON_Delete(ev);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(jpath);
	free(report);
	free(run_dir);
	free(runs);
	free(tmp);
}

/* --------------------------------------------------------- one run, one process */

/* A run stopped at its plan gate (no operator): cheap to make, resumable. */
static char *stopped_run(const char *runs)
{
	struct cli_proc p = cli_run(NULL, "--headless", "--gate", "plan", "--demo", "--sim-delay",
				    "0", "--runs-dir", runs, NULL);

	if (p.status != 3)
		FAIL_RUN(p, 3);
	cli_proc_free(&p);
	return cli_only_run(runs);
}

struct lock_wait {
	const char *path;
	int pid;
};

/* The lock file names the given pid: that process holds the run. */
static bool lock_names(void *ctx)
{
	struct lock_wait *w = ctx;
	char *text = testdir_slurp(w->path);
	bool yes = text && atoi(text) == w->pid;

	free(text);
	return yes;
}

static void test_two_processes_one_run_folder(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir, *want;
	struct lock_wait w;
	struct cli_proc p, second, listing;
	struct cli_bg first;
	cJSON *ev;

	(void)state;
	run_dir = stopped_run(runs);
	first = cli_spawn(NULL, "--headless", "--yes", "--resume", run_dir, "--sim-delay", "100",
			  "--runs-dir", runs, NULL);
	w.path = xasprintf("%s/lock", run_dir);
	w.pid = first.pid;
	assert_true(cli_wait_until(lock_names, &w, 60));
	second = cli_run(NULL, "--headless", "--yes", "--resume", run_dir, "--sim-delay", "0",
			 "--runs-dir", runs, NULL);
	listing = cli_run(NULL, "--list-runs", "--runs-dir", runs, NULL);
	p = cli_wait(&first);
	want = xasprintf("(pid %d)", w.pid);
	if (!strstr(listing.out, "running") || !strstr(listing.out, want))
		fail_msg("--list-runs while it runs:\n%s", listing.out);
	free(want);
	cli_proc_free(&listing);
	if (second.status != 1)
		FAIL_RUN(second, 1);
	want = xasprintf("in use by pid %d (another pevtui)", w.pid);
	if (!strstr(second.err, want))
		fail_msg("the second resume said:\n%s", second.err);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	/* One writer: the journal replays whole, with one resume and one end. */
	ev = cli_load_journal(run_dir);
	assert_int_equal(count_type(ev, "run.resume"), 1);
	assert_int_equal(count_type(ev, "run.end"), 2); /* the stop at the gate, the finish */

	cJSON_Delete(ev);
	cli_proc_free(&p);
	cli_proc_free(&second);
	cli_rm_rf(tmp);
	free(want);
	free((char *)w.path);
	free(run_dir);
	free(runs);
	free(tmp);
}

/* ----------------------------------------------------- a run folder that lies */

/* Rewrites the journal's run.start with edit(run_start) applied. */
static void edit_run_start(const char *run_dir, void (*edit)(cJSON *start, void *ctx), void *ctx)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	char *text = testdir_slurp(path), *nl, *first, *line;
	cJSON *start;
	FILE *f;

	assert_non_null(text);
	nl = strchr(text, '\n');
	assert_non_null(nl);
	first = xstrndup(text, (size_t)(nl - text));
	start = cJSON_Parse(first);
	assert_non_null(start);
	edit(start, ctx);
	line = cJSON_PrintUnformatted(start);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s%s", line, nl);
	assert_int_equal(fclose(f), 0);
	cJSON_free(line);
	cJSON_Delete(start);
	free(first);
	free(text);
	free(path);
}

static void set_policy_number(cJSON *start, void *ctx)
{
	const char *const *kv = ctx;
	cJSON *pol = cJSON_GetObjectItem(start, "policy");

	cJSON_ReplaceItemInObject(pol, kv[0], cJSON_CreateNumber(strtod(kv[1], NULL)));
}

static void widen(cJSON *start, void *ctx)
{
	cJSON *pol = cJSON_GetObjectItem(start, "policy");

	cJSON_ReplaceItemInObject(pol, "yes", cJSON_CreateTrue());
	cJSON_ReplaceItemInObject(pol, "gates", cJSON_CreateArray());
	cJSON_ReplaceItemInObject(start, "workspace", cJSON_CreateString((const char *)ctx));
}

static void own_workspace(cJSON *start, void *ctx)
{
	cJSON_ReplaceItemInObject(start, "workspace", cJSON_CreateString((const char *)ctx));
}

static void test_resume_checks_the_run_folder(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir, *before, *after;
	char *elsewhere = xasprintf("%s/elsewhere", tmp), *own;
	const char *bad[][3] = {
		{"parallel", "1e300", "must be a whole number from 1 to 32"},
		{"max_retries", "1000000000", "must be a whole number from 0 to 10"},
		{"budget_usd", "-5", "--budget"},
	};
	struct cli_proc p;
	cJSON *ev;

	(void)state;
	run_dir = stopped_run(runs);
	own = xasprintf("%s/workspace", run_dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *good[] = {bad[i][0], i == 2 ? "0" : "2"}; /* one bad at a time */

		edit_run_start(run_dir, set_policy_number, (void *)bad[i]);
		before = journal_text(run_dir);
		p = cli_run(NULL, "--headless", "--yes", "--resume", run_dir, "--runs-dir", runs,
			    NULL);
		if (p.status != 1 || !strstr(p.err, bad[i][0]) || !strstr(p.err, bad[i][2]))
			fail_msg("%s = %s: exit %d\n%s", bad[i][0], bad[i][1], p.status, p.err);
		after = journal_text(run_dir);
		assert_string_equal(before, after); /* nothing changed */
		free(before);
		free(after);
		cli_proc_free(&p);
		edit_run_start(run_dir, set_policy_number, (void *)good);
	}
	/* The flag chooses instead: the bad values no longer matter. */
	p = cli_run(NULL, "--headless", "--gate", "plan", "--resume", run_dir, "--parallel", "2",
		    "--max-retries", "1", "--budget", "0", "--sim-delay", "0", "--runs-dir", runs,
		    NULL);
	if (p.status != 3) /* stopped at its plan gate again: no operator */
		FAIL_RUN(p, 3);
	cli_proc_free(&p);

	/* --yes, no gates and a workspace elsewhere, written into the journal: refused until
	 * the operator names the workspace; then the gates still hold and --yes is not taken. */
	mkdir(elsewhere, 0700);
	edit_run_start(run_dir, widen, elsewhere);
	p = cli_run(NULL, "--headless", "--resume", run_dir, "--runs-dir", runs, NULL);
	if (p.status != 1 || !strstr(p.err, "--workspace"))
		FAIL_RUN(p, 1);
	cli_proc_free(&p);
	edit_run_start(run_dir, own_workspace, own);
	p = cli_run(NULL, "--headless", "--resume", run_dir, "--sim-delay", "0", "--runs-dir",
		    runs, NULL);
	if (p.status != 3)
		FAIL_RUN(p, 3);
	assert_non_null(strstr(p.err, "not carried over: --yes"));
	assert_non_null(strstr(p.err, "a journal cannot turn a gate off"));
	ev = cli_load_journal(run_dir);
	assert_int_equal(count_type(ev, "plan.adopted"), 0); /* the plan gate held */
	cJSON_Delete(ev);
	/* Nothing was written where the journal pointed. */
	assert_int_equal(rmdir(elsewhere), 0);

	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(own);
	free(elsewhere);
	free(run_dir);
	free(runs);
	free(tmp);
}

/* ------------------------------------------------- text meant for the terminal */

/* Valid UTF-8 with no control but newlines: what cleaning leaves unchanged. */
static void assert_printable(const char *s)
{
	char *clean = textsan_clean(s, strlen(s), TEXTSAN_KEEP_NL);

	if (strcmp(clean, s))
		fail_msg("not printable as it is:\n%s", s);
	free(clean);
}

static void test_list_runs_and_journal_print_nothing_raw(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir, *journal, *bad;
	struct strbuf task = STRBUF_INIT;
	struct cli_proc p;

	(void)state;
	strbuf_init(&task);
	/* An OSC title, colours, a C1 CSI, a right-to-left override, then 70 "é": the cut at
	 * 60 columns falls inside the run of two-byte characters. */
	strbuf_adds(&task, "Hostile \x1b]0;pwned\x07title \x1b[31mred\x1b[0m \xc2\x9b"
			   "31m \xe2\x80\xae" "txet ");
	for (int i = 0; i < 70; i++)
		strbuf_adds(&task, "\xc3\xa9");
	p = cli_run(NULL, "--headless", "--yes", "--demo", "--sim-delay", "0", "--runs-dir",
		    runs, task.buf, NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	cli_proc_free(&p);
	run_dir = cli_only_run(runs);
	/* The journal holds the task, escaped: no raw C1 or bidi byte in the file. */
	journal = journal_text(run_dir);
	assert_null(strstr(journal, "\xc2\x9b"));
	assert_null(strstr(journal, "\xe2\x80\xae"));
	assert_null(strchr(journal, '\x1b'));
	assert_non_null(strstr(journal, "\\u009b31m \\u202etxet"));
	/* A folder named to attack the listing, with a journal that does not load. */
	bad = xasprintf("%s/evil\x1b]0;x\x07\x1b[2Jname", runs);
	assert_int_equal(mkdir(bad, 0700), 0);
	free(cli_put(bad, "journal.jsonl", "not json \x1b[31m\n{}\n"));

	p = cli_run(NULL, "--list-runs", "--runs-dir", runs, NULL);
	assert_int_equal(p.status, 0);
	assert_printable(p.out);
	assert_non_null(strstr(p.out, "Hostile"));
	assert_non_null(strstr(p.out, "passed"));
	assert_non_null(strstr(p.out, "unreadable"));
	assert_non_null(strstr(p.out, "\xc3\xa9\xe2\x80\xa6")); /* cut after a whole é, then … */

	cli_proc_free(&p);
	cli_rm_rf(tmp);
	strbuf_release(&task);
	free(bad);
	free(journal);
	free(run_dir);
	free(runs);
	free(tmp);
}

/* ------------------------------------------------------------ the workspace */

static void test_write_file_drops_setuid(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws, *script, *target;
	struct cli_proc p;
	struct stat st;

	(void)state;
	ws = xasprintf("%s/ws", tmp);
	assert_int_equal(mkdir(ws, 0700), 0);
	target = cli_put(ws, "tool.sh", "#!/bin/sh\necho old\n");
	assert_int_equal(chmod(target, 07777), 0);
	script = script_with_calls(tmp, "Replace the tool",
				   "[{\"name\": \"write_file\", \"input\": {\"path\": \"tool.sh\", "
				   "\"content\": \"#!/bin/sh\\necho new\\n\"}}]");
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
		    "--workspace", ws, "--sim-delay", "0", "--runs-dir", runs, NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0775);

	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(target);
	free(script);
	free(ws);
	free(runs);
	free(tmp);
}

/* ------------------------------------------------------------------- signals */

struct journal_wait {
	const char *runs;
	const char *needle;
};

/* Some run below runs has journaled the needle. */
static bool journal_has(void *ctx)
{
	struct journal_wait *w = ctx;
	DIR *d = opendir(w->runs);
	struct dirent *de;
	bool yes = false;

	while (d && !yes && (de = readdir(d))) {
		char *path = xasprintf("%s/%s/journal.jsonl", w->runs, de->d_name);
		char *text = de->d_name[0] != '.' ? testdir_slurp(path) : NULL;

		yes = text && strstr(text, w->needle);
		free(text);
		free(path);
	}
	if (d)
		closedir(d);
	return yes;
}

/* SIGHUP stops a headless run as SIGINT and SIGTERM do: resumable, and it resumes. */
static void test_sighup_stops_headless_cleanly(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir;
	struct journal_wait w = {runs, "\"type\":\"step.start\""};
	struct cli_bg bg;
	struct cli_proc p;
	cJSON *ev;

	(void)state;
	bg = cli_spawn(NULL, "--headless", "--yes", "--demo", "--sim-delay", "40", "--runs-dir",
		       runs, NULL);
	assert_true(cli_wait_until(journal_has, &w, 60)); /* a step is running */
	run_dir = cli_only_run(runs);
	assert_int_equal(kill(bg.pid, SIGHUP), 0);
	p = cli_wait(&bg);
	if (p.status != 3)
		FAIL_RUN(p, 3);
	assert_non_null(strstr(p.err, "pevtui --resume"));
	ev = cli_load_journal(run_dir);
	assert_int_equal(count_type(ev, "run.end"), 0); /* stopped, not ended */
	cJSON_Delete(ev);
	cli_proc_free(&p);

	p = cli_run(NULL, "--headless", "--yes", "--resume", run_dir, "--sim-delay", "0",
		    "--runs-dir", runs, NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);

	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(run_dir);
	free(runs);
	free(tmp);
}

/* The tool.result events printed by --json, in order (caller frees the array). */
static cJSON *printed_tool_results(const char *out)
{
	cJSON *all = cJSON_CreateArray();

	for (const char *line = out; line && *line;) {
		const char *nl = strchr(line, '\n');
		char *one = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);
		cJSON *ev = cJSON_Parse(one);

		if (ev && !strcmp(jsonx_str(ev, "type"), "tool.result"))
			cJSON_AddItemToArray(all, ev);
		else
			cJSON_Delete(ev);
		free(one);
		line = nl ? nl + 1 : NULL;
	}
	return all;
}

/* The run folder removed under a live run (its path is held open once, not walked again
 * for each copy): the copies after it are left out, the run goes on to the end, the
 * report that cannot be written is said on stderr, and nothing crashes. */
static void test_run_folder_removed_mid_run(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws = xasprintf("%s/ws", tmp);
	char *calls = xasprintf(
		"[{\"name\": \"write_file\", \"input\": {\"path\": \"before.md\", \"content\": \"b\"}},"
		" {\"name\": \"run_shell\", \"input\": {\"command\": \"rm -rf %s/*; echo gone\"}},"
		" {\"name\": \"write_file\", \"input\": {\"path\": \"after.md\", \"content\": \"a\"}}]",
		runs);
	char *script = script_with_calls(tmp, "Remove the run folder", calls);
	struct cli_proc p;
	cJSON *results;

	(void)state;
	assert_int_equal(mkdir(ws, 0700), 0);
	/* The sandbox hides the runs folder from commands: this is about pevtui outliving
	 * the loss of its folder, so the command runs unconfined (--sandbox off). */
	p = cli_run(NULL, "--headless", "--json", "--yes", "--provider", "sim", "--script", script,
		    "--sim-delay", "0", "--runs-dir", runs, "--workspace", ws, "--sandbox", "off",
		    NULL);
	if (p.status != 0)
		FAIL_RUN(p, 0);
	/* No report (its folder is gone), said on stderr: nothing is journaled after run.end,
	 * so run.end is the last event printed. */
	assert_non_null(strstr(p.err, "pevtui: no report: cannot create"));
	assert_non_null(strstr(p.out, "\"type\":\"run.end\""));
	assert_null(strstr(strstr(p.out, "\"type\":\"run.end\""), "\n{"));
	results = printed_tool_results(p.out);
	assert_int_equal(cJSON_GetArraySize(results), 3);
	assert_string_equal(jsonx_str(cJSON_GetArrayItem(results, 0), "output_file"),
			    "attempts/probe/1/tool-1.txt");
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 1), "output_file"));
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 2), "output_file"));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(results, 2), "ok")));
	cJSON_Delete(results);

	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(script);
	free(calls);
	free(ws);
	free(runs);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_out_of_the_commands_reach),
		cmocka_unit_test(test_allow_listed_glob_still_asks),
		cmocka_unit_test(test_full_disk_stops_the_run),
		cmocka_unit_test(test_two_processes_one_run_folder),
		cmocka_unit_test(test_resume_checks_the_run_folder),
		cmocka_unit_test(test_list_runs_and_journal_print_nothing_raw),
		cmocka_unit_test(test_write_file_drops_setuid),
		cmocka_unit_test(test_sighup_stops_headless_cleanly),
		cmocka_unit_test(test_run_folder_removed_mid_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
