/* test_checkpoints — the real binary: a step whose attempts keep appending to a file is
 * restored before every retry, each attempt's changes are journaled and reported, and the
 * verifier is shown the diff. A scripted model (--script) plays every role. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "requests.h"
#include "testdir.h"
#include "xalloc.h"

#define REJECT                                                                                     \
	"{\"overall_pass\": false, \"criteria_results\": [{\"criterion\": \"notes.txt holds a "    \
	"line\", \"passed\": false, \"evidence\": \"not convinced\", \"confidence\": 0.9, "        \
	"\"feedback\": \"again\"}], \"action\": \"retry\", \"feedback_for_executor\": \"Do it "    \
	"again.\", \"severity\": \"major\"}"
#define ACCEPT                                                                                     \
	"{\"overall_pass\": true, \"criteria_results\": [{\"criterion\": \"notes.txt holds a "     \
	"line\", \"passed\": true, \"evidence\": \"the diff shows it\", \"confidence\": 0.9, "     \
	"\"feedback\": \"\"}], \"action\": \"pass\", \"feedback_for_executor\": \"\", "            \
	"\"severity\": \"minor\"}"

/* One step: `echo line >> notes.txt` through run_shell; the verifier answers `verdicts`
 * (a JSON list, by attempt; the last repeats). */
static char *write_script_with(const char *dir, const char *verdicts)
{
	char *text = xasprintf(
	    "{\"task\": \"Append a line\",\n"
	    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"append\",\n"
	    "   \"name\": \"Append\", \"description\": \"Append a line to notes.txt.\",\n"
	    "   \"acceptance_criteria\": [\"notes.txt holds a line\"], \"dependencies\": [],\n"
	    "   \"expected_outputs\": [\"notes.txt\"], \"estimated_complexity\": \"low\"}]}],\n"
	    " \"executor\": {\"append\": [{\"rounds\": [{\"text\": \"Appending.\", "
	    "\"tool_calls\":\n"
	    "   [{\"name\": \"run_shell\", \"input\": {\"command\": \"echo line >> "
	    "notes.txt\"}}]}],\n"
	    "   \"final\": {\"reasoning\": \"appended\", \"actions_taken\": [\"run_shell\"],\n"
	    "     \"step_output\": {\"findings\": \"done\", \"artifacts\": [\"notes.txt\"],\n"
	    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]},\n"
	    " \"verifier\": {\"append\": %s}\n"
	    "}\n",
	    verdicts);
	char *path = cli_put(dir, "script.json", text);

	free(text);
	return path;
}

/* The verifier rejects attempts 1 and 2 and passes attempt 3. */
static char *write_script(const char *dir)
{
	char *v = xasprintf("[%s, %s, %s]", REJECT, REJECT, ACCEPT), *path;

	path = write_script_with(dir, v);
	free(v);
	return path;
}

struct fx {
	struct cli_fx c;
	char *ws, *script;
};

/* Runs the script with `config`; `seed` (may be NULL) names a file the workspace holds
 * before the run. The run must pass. */
static void run(struct fx *fx, const char *config, const char *seed)
{
	char *cfg;

	cli_fx_init(&fx->c);
	fx->ws = xasprintf("%s/ws", fx->c.tmp);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	if (seed)
		free(cli_put(fx->ws, seed, "from before the run\n"));
	fx->script = write_script(fx->c.tmp);
	cfg = cli_put(fx->c.tmp, "config", config ? config : "");
	cli_fx_run(&fx->c, 0, NULL, "--headless", "--json", "--yes", "--provider", "sim",
	           "--script", fx->script, "--sim-delay", "0", "--workspace", fx->ws, "--config",
	           cfg, "Append a line", NULL);
	free(cfg);
}

static void fx_free(struct fx *fx)
{
	cli_fx_release(&fx->c);
	free(fx->ws);
	free(fx->script);
}

/* Any request body kept for the verifier's call of attempt `attempt` holding `needle`. */
static bool verifier_request_has(const struct fx *fx, int attempt, const char *needle)
{
	struct request_ref *v;
	size_t n = requests_list(fx->c.run, "append", attempt, &v);
	bool found = false;

	assert_true(n > 0);
	for (size_t i = 0; i < n && !found; i++) {
		char *err = NULL, *s;
		size_t len;

		if (strcmp(v[i].role, "verifier"))
			continue;
		s = requests_read(fx->c.run, &v[i], REQUESTS_MAX_BYTES, &len, NULL, &err);
		found = s && strstr(s, needle);
		free(s);
		free(err);
	}
	requests_list_free(v, n);
	return found;
}

static void test_retries_start_clean(void **state)
{
	struct fx fx = {0};
	cJSON *ev;
	int changes = 0, restores = 0;
	char *s;

	(void)state;
	run(&fx, NULL, NULL);
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n"); /* one line, not three */
	free(s);

	cJSON_ArrayForEach(ev, fx.c.events)
	{
		const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
		if (!strcmp(type, "step.changes")) {
			cJSON *files = cJSON_GetObjectItem(ev, "files"),
			      *f0 = cJSON_GetArrayItem(files, 0);
			changes++;
			assert_int_equal(cJSON_GetObjectItem(ev, "attempt")->valueint, changes);
			assert_int_equal(strlen(cJSON_GetObjectItem(ev, "before")->valuestring),
			                 40);
			assert_int_equal(strlen(cJSON_GetObjectItem(ev, "after")->valuestring), 40);
			assert_int_equal(cJSON_GetArraySize(files), 1);
			assert_string_equal(cJSON_GetObjectItem(f0, "path")->valuestring,
			                    "notes.txt");
			/* The first attempt adds the file; each retry starts without it again. */
			assert_string_equal(cJSON_GetObjectItem(f0, "change")->valuestring,
			                    "added");
			assert_int_equal(cJSON_GetObjectItem(f0, "plus")->valueint, 1);
			assert_int_equal(cJSON_GetObjectItem(f0, "minus")->valueint, 0);
		}
		if (!strcmp(type, "notice") && cJSON_GetObjectItem(ev, "kind") &&
		    !strcmp(cJSON_GetObjectItem(ev, "kind")->valuestring, "checkpoint_restore"))
			restores++;
	}
	assert_int_equal(changes, 3);
	assert_int_equal(restores, 2);

	/* --json carries the event as it was journaled. */
	assert_non_null(strstr(fx.c.p.out, "\"type\":\"step.changes\""));

	s = cli_slurp_in(fx.c.run, "report.md");
	assert_non_null(s);
	assert_non_null(strstr(s, "Attempt 3 changed the workspace: 1 file changed, +1 -0"));
	assert_non_null(strstr(s, "`notes.txt` added (+1 −0)"));
	free(s);

	/* The verifier judged the diff, not only the executor's account. */
	assert_true(verifier_request_has(&fx, 1, "What this attempt changed in the workspace"));
	assert_true(verifier_request_has(&fx, 3, "+line"));

	/* The run folder names the workspace's store; the workspace holds no trace of it. */
	{
		char *store = cli_run_store(fx.c.run);
		assert_non_null(store);
		s = cli_slurp_in(store, "HEAD");
		assert_non_null(s);
		free(s);
		free(store);
	}
	s = cli_slurp_in(fx.ws, ".git/HEAD");
	assert_null(s);
	fx_free(&fx);
}

static void test_off(void **state)
{
	struct fx fx = {0};
	char *s;

	(void)state;
	run(&fx, "[policy]\ncheckpoints = off\n", NULL);
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\nline\nline\n"); /* what issue 18 was about */
	free(s);
	assert_null(strstr(fx.c.p.out, "\"type\":\"step.changes\""));
	s = cli_run_store(fx.c.run);
	assert_null(s);
	fx_free(&fx);
}

/* [checkpoints] exclude: the excluded file is neither restored nor compared, the others
 * still are, and report.md says what was left out. */
static void test_exclude(void **state)
{
	struct fx fx = {0};
	char *s;

	(void)state;
	run(&fx, "[checkpoints]\nexclude = *.log\n", "build.log");
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n");
	free(s);
	s = cli_slurp_in(fx.ws, "build.log");
	assert_non_null(s);
	assert_string_equal(s, "from before the run\n");
	free(s);
	s = cli_slurp_in(fx.c.run, "report.md");
	assert_non_null(s);
	assert_non_null(strstr(s, "Left out of the checkpoints on purpose"));
	assert_non_null(strstr(s, "`build.log`"));
	free(s);
	fx_free(&fx);
}

/* A file over [checkpoints] max_file is left out of all six checkpoints of the three
 * attempts, is said so once in the run (not at every checkpoint), and is left as it was. */
static void test_too_large_told_once(void **state)
{
	struct fx fx = {0};
	char big[2049], *cfg, *s;
	const cJSON *ev;
	int told = 0;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cli_fx_init(&fx.c);
	fx.ws = xasprintf("%s/ws", fx.c.tmp);
	assert_int_equal(mkdir(fx.ws, 0755), 0);
	free(cli_put(fx.ws, "big.bin", big));
	fx.script = write_script(fx.c.tmp);
	cfg = cli_put(fx.c.tmp, "config", "[checkpoints]\nmax_file = 1024\n");
	cli_fx_run(&fx.c, 0, NULL, "--headless", "--json", "--yes", "--provider", "sim",
	           "--script", fx.script, "--sim-delay", "0", "--workspace", fx.ws, "--config",
	           cfg, "Append a line", NULL);
	free(cfg);
	cJSON_ArrayForEach(ev, fx.c.events)
	{
		const cJSON *kind = cJSON_GetObjectItem(ev, "kind"),
		            *msg = cJSON_GetObjectItem(ev, "message");
		if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "checkpoint") &&
		    cJSON_IsString(msg) && strstr(msg->valuestring, "big.bin"))
			told++;
	}
	assert_int_equal(told, 1);
	s = cli_slurp_in(fx.ws, "big.bin");
	assert_non_null(s);
	assert_string_equal(s, big);
	free(s);
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_string_equal(s, "line\n");
	free(s);
	fx_free(&fx);
}

/*
 * The process dies after the attempt changed notes.txt and before its verdict; --resume
 * starts the attempt over, and it starts where the first one did: the series of the step is
 * rebuilt from the journal's step.changes, not lost with the process's memory.
 */
static void test_resume_restores_before_the_retry(void **state)
{
	struct cli_fx fx;
	char *verdicts = xasprintf("[%s]", ACCEPT), *script, *ws, *run, *s;
	struct cli_bg bg;
	struct cli_proc p;
	const cJSON *ev;
	int restores = 0, changes = 0;

	(void)state;
	cli_fx_init(&fx);
	ws = xasprintf("%s/ws", fx.tmp);
	assert_int_equal(mkdir(ws, 0755), 0);
	script = write_script_with(fx.tmp, verdicts);
	/* Slow chunks: the verdict streams for seconds after step.changes is journaled. */
	bg = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	               "--sim-delay", "300", "--runs-dir", fx.runs, "--workspace", ws,
	               "Append a line", NULL);
	run = cli_wait_run(fx.runs, 30);
	cli_wait_journal(run, "\"type\":\"step.changes\"", 60);
	assert_int_equal(kill(bg.pid, SIGKILL), 0);
	p = cli_wait(&bg);
	cli_proc_free(&p);
	/* Killed before the verdict: the attempt starts over. */
	assert_false(cli_journal_has(run, "\"type\":\"verify.verdict\",\"step_id\":\"append\","
	                                  "\"attempt\":1,\"stage\":\"model\""));
	s = cli_slurp_in(ws, "notes.txt");
	assert_string_equal(s, "line\n");
	free(s);

	cli_fx_run(&fx, 0, NULL, "--headless", "--yes", "--resume", run, "--provider", "sim",
	           "--script", script, "--sim-delay", "0", "--workspace", ws, NULL);
	s = cli_slurp_in(ws, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n"); /* not two: the resumed attempt started clean */
	free(s);

	assert_string_equal(fx.run, run);
	cJSON_ArrayForEach(ev, fx.events)
	{
		const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
		const cJSON *kind = cJSON_GetObjectItem(ev, "kind");
		if (!strcmp(type, "notice") && cJSON_IsString(kind) &&
		    !strcmp(kind->valuestring, "checkpoint_restore")) {
			const cJSON *paths = cJSON_GetObjectItem(ev, "paths");
			restores++;
			assert_int_equal(cJSON_GetArraySize(paths), 1);
			assert_string_equal(cJSON_GetArrayItem(paths, 0)->valuestring, "notes.txt");
		}
		if (!strcmp(type, "step.changes") && ++changes == 2) {
			const cJSON *rs = cJSON_GetObjectItem(ev, "restored_series");
			assert_int_equal(cJSON_GetArraySize(rs), 1);
			assert_string_equal(cJSON_GetArrayItem(rs, 0)->valuestring, "append");
		}
	}
	assert_int_equal(restores, 1);
	assert_int_equal(changes, 2);
	cli_fx_release(&fx);
	free(run);
	free(script);
	free(verdicts);
	free(ws);
}

/* A replan replaces a failing step by another: the files the removed step changed are
 * restored before its replacement runs, so it does not start on the leftovers. */
static void test_replaced_step_is_restored(void **state)
{
	struct cli_fx fx;
	char *ws, *script, *s;
	char *text = xasprintf(
	    "{\"task\": \"Write notes\",\n"
	    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"old\",\n"
	    "   \"name\": \"Old\", \"description\": \"Append to old.txt.\",\n"
	    "   \"acceptance_criteria\": [\"notes.txt holds a line\"], \"dependencies\": [],\n"
	    "   \"expected_outputs\": [\"old.txt\"], \"estimated_complexity\": \"low\"}]},\n"
	    "  {\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"new\",\n"
	    "   \"name\": \"New\", \"description\": \"Write new.md.\",\n"
	    "   \"acceptance_criteria\": [\"new.md exists\"], \"dependencies\": [],\n"
	    "   \"expected_outputs\": [\"new.md\"], \"estimated_complexity\": \"low\"}]}],\n"
	    " \"executor\": {\"old\": [{\"rounds\": [{\"text\": \"Appending.\", \"tool_calls\":\n"
	    "   [{\"name\": \"run_shell\", \"input\": {\"command\": \"echo line >> old.txt\"}}]}],\n"
	    "   \"final\": {\"reasoning\": \"appended\", \"actions_taken\": [\"run_shell\"],\n"
	    "     \"step_output\": {\"findings\": \"done\", \"artifacts\": [\"old.txt\"],\n"
	    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]},\n"
	    " \"verifier\": {\"old\": [%s]}\n"
	    "}\n",
	    REJECT);
	const cJSON *ev;
	int orphan_restores = 0;

	(void)state;
	cli_fx_init(&fx);
	ws = xasprintf("%s/ws", fx.tmp);
	assert_int_equal(mkdir(ws, 0755), 0);
	script = cli_put(fx.tmp, "script.json", text);
	cli_fx_run(&fx, 0, NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	           "--sim-delay", "0", "--max-retries", "0", "--max-replans", "1", "--workspace",
	           ws, "Write notes", NULL);
	s = cli_slurp_in(ws, "old.txt");
	assert_null(s); /* old's leftovers are gone */
	s = cli_slurp_in(ws, "new.md");
	assert_non_null(s);
	free(s);
	cJSON_ArrayForEach(ev, fx.events)
	{
		const cJSON *kind = cJSON_GetObjectItem(ev, "kind"), *sid;
		if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "checkpoint_restore"))
			continue;
		sid = cJSON_GetObjectItem(ev, "step_id");
		assert_string_equal(sid->valuestring, "old");
		assert_non_null(strstr(cJSON_GetObjectItem(ev, "message")->valuestring,
		                       "left the plan"));
		orphan_restores++;
	}
	assert_int_equal(orphan_restores, 1);
	cli_fx_release(&fx);
	free(text);
	free(script);
	free(ws);
}

/*
 * Between a rejected attempt and its retry, someone else changes the file the attempt
 * wrote. Headless, the rewind gate follows the gate policy: without --yes the run stops
 * at it (exit 3, nothing overwritten); with --yes the policy keeps theirs and says so.
 */
static void conflict_run(bool yes)
{
	struct cli_fx fx;
	char *verdicts = xasprintf("[%s, %s]", REJECT, ACCEPT), *script, *ws, *notes, *run, *s;
	struct cli_bg bg;
	FILE *f;

	cli_fx_init(&fx);
	ws = xasprintf("%s/ws", fx.tmp);
	notes = xasprintf("%s/notes.txt", ws);
	assert_int_equal(mkdir(ws, 0755), 0);
	script = write_script_with(fx.tmp, verdicts);
	if (yes)
		bg = cli_spawn(NULL, "--headless", "--yes", "--gate", "rewind", "--sim-delay",
		               "100", "--provider", "sim", "--script", script, "--runs-dir",
		               fx.runs, "--workspace", ws, "Append a line", NULL);
	else
		bg = cli_spawn(NULL, "--headless", "--gate", "rewind", "--sim-delay", "100",
		               "--provider", "sim", "--script", script, "--runs-dir", fx.runs,
		               "--workspace", ws, "Append a line", NULL);
	run = cli_wait_run(fx.runs, 30);
	cli_wait_journal(run, "\"type\":\"step.changes\"", 60);
	/* The verdict is still streaming: the retry has not started. */
	assert_false(
	    cli_journal_has(run, "\"type\":\"step.start\",\"step_id\":\"append\",\"attempt\":2"));
	f = fopen(notes, "a");
	assert_non_null(f);
	fputs("theirs\n", f);
	assert_int_equal(fclose(f), 0);
	cli_fx_wait(&fx, &bg, yes ? 0 : 3);
	s = testdir_slurp(notes);
	assert_non_null(s);
	if (!yes) {
		assert_non_null(strstr(fx.p.out, "rewind gate needs an operator"));
		assert_string_equal(s, "line\ntheirs\n"); /* not overwritten, not appended */
		assert_true(cli_journal_has(run, "\"type\":\"gate.open\",\"gate_id\""));
	} else {
		assert_string_equal(s, "line\ntheirs\nline\n"); /* theirs kept, then the retry */
		assert_true(cli_journal_has(run, "\"gate\":\"rewind\",\"step_id\":\"append\","
		                                 "\"decision\":\"skip\",\"by\":\"policy\""));
		assert_true(cli_journal_has(run, "\"kind\":\"checkpoint_conflict\""));
	}
	free(s);
	cli_fx_release(&fx);
	free(run);
	free(notes);
	free(script);
	free(verdicts);
	free(ws);
}

static void test_conflict_without_operator(void **state)
{
	(void)state;
	conflict_run(false);
}

static void test_conflict_with_yes_keeps_theirs(void **state)
{
	(void)state;
	conflict_run(true);
}

/* --parallel: two steps whose attempts overlap each write a file. Which of them wrote a
 * file changed while both ran cannot be told from the workspace: step.changes says so
 * ("shared") rather than guess, and the step log line says it in words. */
static void test_parallel_changes_are_marked_shared(void **state)
{
	struct cli_fx fx;
	char *ws, *script;
#define STEP_TPL(x)                                                                        \
	"{\"step_id\": \"" x "\", \"name\": \"Write " x "\", \"description\": \"Write " x    \
	".txt.\", \"acceptance_criteria\": [\"" x ".txt exists\"], \"dependencies\": [],"      \
	" \"expected_outputs\": [\"" x ".txt\"], \"estimated_complexity\": \"low\"}"
/* Each step's command waits until the other's has started (a file each): so both
 * attempts are surely between their checkpoints when the files change, whatever the
 * machine's load. */
#define EXEC_TPL(x, y)                                                                     \
	"\"" x "\": [{\"rounds\": [{\"text\": \"Writing.\", \"tool_calls\": [{\"name\": "  \
	"\"run_shell\", \"input\": {\"command\": \": > " x ".ready; while [ ! -e " y          \
	".ready ]; do sleep 0.05; done; echo " x " > " x ".txt\"}}]}], \"final\": "               \
	"{\"reasoning\": \"wrote\", \"actions_taken\": [\"run_shell\"], \"step_output\": "    \
	"{\"findings\": \"done\", \"artifacts\": [\"" x ".txt\"], \"meets_criteria\": "      \
	"true}, \"confidence\": 0.9}}]"
	const char *sa = STEP_TPL("a"), *sb = STEP_TPL("b"), *ea = EXEC_TPL("a", "b"),
	           *eb = EXEC_TPL("b", "a");
	char *text = xasprintf("{\"task\": \"Write two files\",\n \"planner\": [{\"goal\": "
	                       "\"{{task}}\", \"steps\": [%s, %s]}],\n \"executor\": {%s, %s}\n}\n",
	                       sa, sb, ea, eb);
	const cJSON *ev;
	int changes = 0, shared = 0;

	(void)state;
	cli_fx_init(&fx);
	ws = xasprintf("%s/ws", fx.tmp);
	assert_int_equal(mkdir(ws, 0755), 0);
	script = cli_put(fx.tmp, "script.json", text);
	cli_fx_run(&fx, 0, NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	           "--sim-delay", "0", "--parallel", "2", "--workspace", ws, "Write two files",
	           NULL);
	assert_non_null(strstr(fx.p.out, "changed while another step ran too"));
	cJSON_ArrayForEach(ev, fx.events)
	{
		const cJSON *files, *file;
		if (strcmp(cJSON_GetObjectItem(ev, "type")->valuestring, "step.changes"))
			continue;
		changes++;
		files = cJSON_GetObjectItem(ev, "files");
		cJSON_ArrayForEach(file, files) shared += cJSON_IsTrue(cJSON_GetObjectItem(file, "shared"));
	}
	assert_int_equal(changes, 2);
	assert_true(shared >= 2); /* each step's window saw the files change */
	cli_fx_release(&fx);
	free(text);
	free(script);
	free(ws);
}

/* The journal position (0-based) of the first event of `type` for step `step` whose
 * `tool` is `tool` (NULL: any), or -1. */
static int event_at(const cJSON *events, const char *type, const char *step, const char *tool)
{
	const cJSON *ev;
	int i = 0;

	cJSON_ArrayForEach(ev, events)
	{
		const cJSON *t = cJSON_GetObjectItem(ev, "type"), *s = cJSON_GetObjectItem(ev, "step_id"),
		            *tl = cJSON_GetObjectItem(ev, "tool");
		if (cJSON_IsString(t) && !strcmp(t->valuestring, type) && cJSON_IsString(s) &&
		    !strcmp(s->valuestring, step) &&
		    (!tool || (cJSON_IsString(tl) && !strcmp(tl->valuestring, tool))))
			return i;
		i++;
	}
	return -1;
}

/* Whether x's write_file call came while y's attempt was between its checkpoints. */
static bool written_in_window(const cJSON *events, const char *x, const char *y)
{
	int w = event_at(events, "tool.call", x, "write_file");

	return w > event_at(events, "step.checkpoint", y, NULL) &&
	       w < event_at(events, "step.changes", y, NULL);
}

/* --parallel: two steps whose attempts overlap each write their own file with write_file,
 * which says which file it writes: each step's changes are its own file only, and nothing
 * is shared (with a shell command in the window it would be: see the test above). The
 * windows overlap for certain only on a machine that keeps up, so the run is made again
 * (up to five times) until the journal shows both writes inside both windows. */
static void test_parallel_write_file_is_attributed(void **state)
{
	struct cli_fx fx;
	char *ws = NULL, *script = NULL;
#define WSTEP(x)                                                                           \
	"{\"step_id\": \"" x "\", \"name\": \"Write " x "\", \"description\": \"Write " x    \
	".txt.\", \"acceptance_criteria\": [\"" x ".txt exists\"], \"dependencies\": [],"      \
	" \"expected_outputs\": [\"" x ".txt\"], \"estimated_complexity\": \"low\"}"
#define WEXEC(x)                                                                           \
	"\"" x "\": [{\"rounds\": [{\"text\": \"Writing.\", \"tool_calls\": [{\"name\": "  \
	"\"write_file\", \"input\": {\"path\": \"./" x ".txt\", \"content\": \"" x "\\n\"}}]}],"  \
	" \"final\": {\"reasoning\": \"wrote the file as asked, and checked it\", "             \
	"\"actions_taken\": [\"write_file\"], \"step_output\": {\"findings\": \"done\", "      \
	"\"artifacts\": [\"" x ".txt\"], \"meets_criteria\": true}, \"confidence\": 0.9}}]"
	char *text = xasprintf("{\"task\": \"Write two files\",\n \"planner\": [{\"goal\": "
	                       "\"{{task}}\", \"steps\": [%s, %s]}],\n \"executor\": {%s, %s}\n}\n",
	                       WSTEP("a"), WSTEP("b"), WEXEC("a"), WEXEC("b"));
	bool overlapped = false;

	(void)state;
	for (int run = 0; run < 5 && !overlapped; run++) {
		if (run) {
			cli_fx_release(&fx);
			free(ws);
			free(script);
		}
		cli_fx_init(&fx);
		ws = xasprintf("%s/ws", fx.tmp);
		assert_int_equal(mkdir(ws, 0755), 0);
		script = cli_put(fx.tmp, "script.json", text);
		cli_fx_run(&fx, 0, NULL, "--headless", "--yes", "--provider", "sim", "--script",
		           script, "--sim-delay", "40", "--parallel", "2", "--workspace", ws,
		           "Write two files", NULL);
		overlapped = written_in_window(fx.events, "a", "b") &&
		             written_in_window(fx.events, "b", "a");
	}
	assert_true(overlapped);
	assert_null(strstr(fx.p.out, "changed while another step ran too"));
	for (int k = 0; k < 2; k++) {
		const char *step = k ? "b" : "a", *file = k ? "b.txt" : "a.txt";
		const cJSON *ev = cJSON_GetArrayItem(fx.events,
		                                     event_at(fx.events, "step.changes", step, NULL));
		const cJSON *files = cJSON_GetObjectItem(ev, "files"), *f0 = cJSON_GetArrayItem(files, 0);
		assert_int_equal(cJSON_GetArraySize(files), 1);
		assert_string_equal(cJSON_GetObjectItem(f0, "path")->valuestring, file);
		assert_null(cJSON_GetObjectItem(f0, "shared"));
		assert_null(cJSON_GetObjectItem(ev, "shared"));
	}
	cli_fx_release(&fx);
	free(text);
	free(script);
	free(ws);
}

#define WRITE_OTHER "{\"name\": \"run_shell\", \"input\": {\"command\": \"echo x > other.txt\"}}"

/* A one-step run whose step makes the tool calls `calls` (a JSON list's items;
 * WRITE_OTHER writes other.txt) and claims `claims` as its artifacts (and `read_only`, a
 * JSON list, as files it only reads); old.txt predates the run. */
static struct cli_fx claim_run(const char *calls, const char *claims, const char *read_only,
                               int want)
{
	struct cli_fx c;
	char *ws, *text, *script;

	cli_fx_init(&c);
	ws = xasprintf("%s/ws", c.tmp);
	assert_int_equal(mkdir(ws, 0755), 0);
	free(cli_put(ws, "old.txt", "from before the run\n"));
	text = xasprintf(
	    "{\"task\": \"Claim\",\n"
	    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"claim\",\n"
	    "   \"name\": \"Claim\", \"description\": \"Write other.txt.\",\n"
	    "   \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
	    "   \"expected_outputs\": [], \"estimated_complexity\": \"low\"}]}],\n"
	    " \"executor\": {\"claim\": [{\"rounds\": [{\"text\": \"Writing.\", \"tool_calls\":\n"
	    "   [%s]}],\n"
	    "   \"final\": {\"reasoning\": \"done\", \"actions_taken\": [\"run_shell\"],\n"
	    "     \"step_output\": {\"findings\": \"done\", \"artifacts\": %s, \"read_only\": %s,\n"
	    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]}}\n",
	    calls, claims, read_only);
	script = cli_put(c.tmp, "script.json", text);
	cli_fx_run(&c, want, NULL, "--headless", "--json", "--yes", "--provider", "sim",
	           "--script", script, "--sim-delay", "0", "--max-retries", "0", "--workspace", ws,
	           "Claim", NULL);
	free(script);
	free(text);
	free(ws);
	return c;
}

/* Issue 25: a claim is checked against what happened. An artifact the attempt neither
 * created nor changed (old.txt predates the step, nothing touched it) fails the
 * deterministic stage, which names it; listed in step_output.read_only, it does not. */
static void test_unchanged_claim_fails(void **state)
{
	struct cli_fx c;

	(void)state;
	c = claim_run(WRITE_OTHER, "[\"other.txt\", \"old.txt\"]", "[]", CLI_ANY_STATUS);
	assert_int_not_equal(c.p.status, 0);
	assert_non_null(strstr(c.p.out, "declared artifacts were made or changed by this attempt"));
	assert_non_null(strstr(c.p.out, "not changed by this attempt: old.txt"));
	assert_true(cli_journal_has(c.run, "Artifact \\\"old.txt\\\" was not changed by this attempt"));
	cli_fx_release(&c);

	c = claim_run(WRITE_OTHER, "[\"other.txt\", \"old.txt\"]", "[\"old.txt\"]", 0);
	assert_null(strstr(c.p.out, "not changed by this attempt"));
	assert_non_null(strstr(c.p.out, "only read: old.txt"));
	cli_fx_release(&c);

	/* Written again with the bytes it held (a retry after a resume does this): the
	 * attempt did the work, though no checkpoint sees a change. */
	c = claim_run(WRITE_OTHER ", {\"name\": \"write_file\", \"input\": {\"path\": \"old.txt\", "
	              "\"content\": \"from before the run\\n\"}}",
	              "[\"other.txt\", \"old.txt\"]", "[]", 0);
	assert_null(strstr(c.p.out, "not changed by this attempt"));
	cli_fx_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retries_start_clean),
	    cmocka_unit_test(test_unchanged_claim_fails),
	    cmocka_unit_test(test_off),
	    cmocka_unit_test(test_exclude),
	    cmocka_unit_test(test_too_large_told_once),
	    cmocka_unit_test(test_parallel_changes_are_marked_shared),
	    cmocka_unit_test(test_parallel_write_file_is_attributed),
	    cmocka_unit_test(test_resume_restores_before_the_retry),
	    cmocka_unit_test(test_replaced_step_is_restored),
	    cmocka_unit_test(test_conflict_without_operator),
	    cmocka_unit_test(test_conflict_with_yes_keeps_theirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
