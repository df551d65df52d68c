/* test_checkpoints — the real binary: a step whose attempts keep appending to a file is
 * restored before every retry, each attempt's changes are journaled and reported, and the
 * verifier is shown the diff. A scripted model (--script) plays every role. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
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
	char *path = xasprintf("%s/script.json", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
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
	char *dir, *runs, *ws, *script, *run;
	struct cli_proc p;
};

/* Runs the script with `config`; `seed` (may be NULL) names a file the workspace holds
 * before the run. */
static void run(struct fx *fx, const char *config, const char *seed)
{
	char *cfg = NULL;

	fx->dir = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->dir);
	fx->ws = xasprintf("%s/ws", fx->dir);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	if (seed) {
		char *p = xasprintf("%s/%s", fx->ws, seed);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs("from before the run\n", f);
		fclose(f);
		free(p);
	}
	fx->script = write_script(fx->dir);
	cfg = xasprintf("%s/config", fx->dir);
	{
		FILE *f = fopen(cfg, "w");
		assert_non_null(f);
		fputs(config ? config : "", f);
		fclose(f);
	}
	fx->p = cli_run(NULL, "--headless", "--json", "--yes", "--provider", "sim", "--script",
	                fx->script, "--sim-delay", "0", "--runs-dir", fx->runs, "--workspace",
	                fx->ws, "--config", cfg, "Append a line", NULL);
	free(cfg);
	fx->run = cli_only_run(fx->runs);
	assert_non_null(fx->run);
}

static void fx_free(struct fx *fx)
{
	cli_proc_free(&fx->p);
	cli_rm_rf(fx->dir);
	free(fx->dir);
	free(fx->runs);
	free(fx->ws);
	free(fx->script);
	free(fx->run);
}

static char *ws_file(const struct fx *fx, const char *rel)
{
	char *p = xasprintf("%s/%s", fx->ws, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

static char *run_file(const struct fx *fx, const char *rel)
{
	char *p = xasprintf("%s/%s", fx->run, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

/* Any request body kept for the verifier's call of attempt `attempt` holding `needle`. */
static bool verifier_request_has(const struct fx *fx, int attempt, const char *needle)
{
	char *dir = xasprintf("%s/requests", fx->run);
	char *suffix = xasprintf("-verifier-append-%d.json", attempt);
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while (!found && (de = readdir(d))) {
		size_t n = strlen(de->d_name), k = strlen(suffix);
		if (n > k && !strcmp(de->d_name + n - k, suffix)) {
			char *p = xasprintf("%s/%s", dir, de->d_name), *s = testdir_slurp(p);
			found = s && strstr(s, needle);
			free(s);
			free(p);
		}
	}
	closedir(d);
	free(suffix);
	free(dir);
	return found;
}

static void test_retries_start_clean(void **state)
{
	struct fx fx = {0};
	cJSON *j, *ev;
	int changes = 0, restores = 0;
	char *s;

	(void)state;
	run(&fx, NULL, NULL);
	assert_int_equal(fx.p.status, 0);
	s = ws_file(&fx, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n"); /* one line, not three */
	free(s);

	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
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
	cJSON_Delete(j);

	/* --json carries the event as it was journaled. */
	assert_non_null(strstr(fx.p.out, "\"type\":\"step.changes\""));

	s = run_file(&fx, "report.md");
	assert_non_null(s);
	assert_non_null(strstr(s, "Attempt 3 changed the workspace: 1 file changed, +1 -0"));
	assert_non_null(strstr(s, "`notes.txt` added (+1 −0)"));
	free(s);

	/* The verifier judged the diff, not only the executor's account. */
	assert_true(verifier_request_has(&fx, 1, "What this attempt changed in the workspace"));
	assert_true(verifier_request_has(&fx, 3, "+line"));

	/* The store is in the run folder; the workspace holds no trace of it. */
	s = run_file(&fx, "checkpoints.git/HEAD");
	assert_non_null(s);
	free(s);
	s = ws_file(&fx, ".git/HEAD");
	assert_null(s);
	fx_free(&fx);
}

static void test_off(void **state)
{
	struct fx fx = {0};
	char *s;

	(void)state;
	run(&fx, "[policy]\ncheckpoints = off\n", NULL);
	assert_int_equal(fx.p.status, 0);
	s = ws_file(&fx, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\nline\nline\n"); /* what issue 18 was about */
	free(s);
	assert_null(strstr(fx.p.out, "\"type\":\"step.changes\""));
	s = run_file(&fx, "checkpoints.git/HEAD");
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
	assert_int_equal(fx.p.status, 0);
	s = ws_file(&fx, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n");
	free(s);
	s = ws_file(&fx, "build.log");
	assert_non_null(s);
	assert_string_equal(s, "from before the run\n");
	free(s);
	s = run_file(&fx, "report.md");
	assert_non_null(s);
	assert_non_null(strstr(s, "Left out of the checkpoints on purpose"));
	assert_non_null(strstr(s, "`build.log`"));
	free(s);
	fx_free(&fx);
}

/* The journal of `run` holds `needle` (for cli_wait_until). */
struct journal_has {
	const char *run, *needle;
};

static bool journal_has(void *ctx)
{
	const struct journal_has *h = ctx;
	char *p = xasprintf("%s/journal.jsonl", h->run), *s = testdir_slurp(p);
	bool found = s && strstr(s, h->needle);

	free(s);
	free(p);
	return found;
}

/* ctx[0] = the run folder below ctx[1] once there is one (for cli_wait_until). */
static bool has_run(void *ctx)
{
	char **found = ctx;
	DIR *d = opendir(found[1]);
	struct dirent *de;

	while (d && !found[0] && (de = readdir(d)))
		if (de->d_name[0] != '.')
			found[0] = xasprintf("%s/%s", found[1], de->d_name);
	if (d)
		closedir(d);
	return found[0] != NULL;
}

static char *slurp_in(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

/*
 * The process dies after the attempt changed notes.txt and before its verdict; --resume
 * starts the attempt over, and it starts where the first one did: the series of the step is
 * rebuilt from the journal's step.changes, not lost with the process's memory.
 */
static void test_resume_restores_before_the_retry(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws = xasprintf("%s/ws", tmp);
	char *script, *verdicts = xasprintf("[%s]", ACCEPT), *found[2] = {NULL, runs}, *s;
	struct cli_bg bg;
	struct cli_proc p;
	struct journal_has h;
	cJSON *j, *ev;
	int restores = 0, changes = 0;

	(void)state;
	assert_int_equal(mkdir(ws, 0755), 0);
	script = write_script_with(tmp, verdicts);
	/* Slow chunks: the verdict streams for seconds after step.changes is journaled. */
	bg = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	               "--sim-delay", "300", "--runs-dir", runs, "--workspace", ws, "Append a line",
	               NULL);
	assert_true(cli_wait_until(has_run, found, 30));
	h.run = found[0];
	h.needle = "\"type\":\"step.changes\"";
	assert_true(cli_wait_until(journal_has, &h, 60));
	assert_int_equal(kill(bg.pid, SIGKILL), 0);
	p = cli_wait(&bg);
	cli_proc_free(&p);
	h.needle = "\"type\":\"verify.verdict\",\"step_id\":\"append\",\"attempt\":1,\"stage\":\"model\"";
	assert_false(journal_has(&h)); /* killed before the verdict: the attempt starts over */
	s = slurp_in(ws, "notes.txt");
	assert_string_equal(s, "line\n");
	free(s);

	p = cli_run(NULL, "--headless", "--yes", "--resume", found[0], "--provider", "sim",
	            "--script", script, "--sim-delay", "0", "--runs-dir", runs, "--workspace", ws, NULL);
	if (p.status != 0)
		fprintf(stderr, "resume: %s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	s = slurp_in(ws, "notes.txt");
	assert_non_null(s);
	assert_string_equal(s, "line\n"); /* not two: the resumed attempt started clean */
	free(s);

	j = cli_load_journal(found[0]);
	cJSON_ArrayForEach(ev, j)
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
	cJSON_Delete(j);
	cli_proc_free(&p);
	free(found[0]);
	free(script);
	free(verdicts);
	free(ws);
	free(runs);
	cli_rm_rf(tmp);
	free(tmp);
}

/* A replan replaces a failing step by another: the files the removed step changed are
 * restored before its replacement runs, so it does not start on the leftovers. */
static void test_replaced_step_is_restored(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws = xasprintf("%s/ws", tmp);
	char *script = xasprintf("%s/script.json", tmp), *run_dir, *s;
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
	FILE *f;
	struct cli_proc p;
	cJSON *j, *ev;
	int orphan_restores = 0;

	(void)state;
	assert_int_equal(mkdir(ws, 0755), 0);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	              "--sim-delay", "0", "--max-retries", "0", "--max-replans", "1", "--runs-dir",
	              runs, "--workspace", ws, "Write notes", NULL);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	s = slurp_in(ws, "old.txt");
	assert_null(s); /* old's leftovers are gone */
	s = slurp_in(ws, "new.md");
	assert_non_null(s);
	free(s);
	run_dir = cli_only_run(runs);
	j = cli_load_journal(run_dir);
	cJSON_ArrayForEach(ev, j)
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
	cJSON_Delete(j);
	cli_proc_free(&p);
	free(run_dir);
	free(text);
	free(script);
	free(ws);
	free(runs);
	cli_rm_rf(tmp);
	free(tmp);
}

/*
 * Between a rejected attempt and its retry, someone else changes the file the attempt
 * wrote. Headless, the rewind gate follows the gate policy: without --yes the run stops
 * at it (exit 3, nothing overwritten); with --yes the policy keeps theirs and says so.
 */
static void conflict_run(bool yes)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws = xasprintf("%s/ws", tmp);
	char *verdicts = xasprintf("[%s, %s]", REJECT, ACCEPT), *script, *found[2] = {NULL, runs};
	struct cli_bg bg;
	struct cli_proc p;
	struct journal_has h;
	char *s, *notes = xasprintf("%s/notes.txt", ws);
	FILE *f;

	assert_int_equal(mkdir(ws, 0755), 0);
	script = write_script_with(tmp, verdicts);
	if (yes)
		bg = cli_spawn(NULL, "--headless", "--yes", "--gate", "rewind", "--sim-delay", "100",
		               "--provider", "sim", "--script", script, "--runs-dir", runs,
		               "--workspace", ws, "Append a line", NULL);
	else
		bg = cli_spawn(NULL, "--headless", "--gate", "rewind", "--sim-delay", "100",
		               "--provider", "sim", "--script", script, "--runs-dir", runs,
		               "--workspace", ws, "Append a line", NULL);
	assert_true(cli_wait_until(has_run, found, 30));
	h.run = found[0];
	h.needle = "\"type\":\"step.changes\"";
	assert_true(cli_wait_until(journal_has, &h, 60));
	/* The verdict is still streaming: the retry has not started. */
	h.needle = "\"type\":\"step.start\",\"step_id\":\"append\",\"attempt\":2";
	assert_false(journal_has(&h));
	f = fopen(notes, "a");
	assert_non_null(f);
	fputs("theirs\n", f);
	assert_int_equal(fclose(f), 0);
	p = cli_wait(&bg);
	s = testdir_slurp(notes);
	assert_non_null(s);
	h.needle = "\"type\":\"gate.open\",\"gate_id\"";
	if (!yes) {
		assert_int_equal(p.status, 3);
		assert_non_null(strstr(p.out, "rewind gate needs an operator"));
		assert_string_equal(s, "line\ntheirs\n"); /* not overwritten, not appended */
		assert_true(journal_has(&h));
	} else {
		if (p.status != 0)
			fprintf(stderr, "%s\n%s\n", p.out, p.err);
		assert_int_equal(p.status, 0);
		assert_string_equal(s, "line\ntheirs\nline\n"); /* theirs kept, then the retry */
		h.needle = "\"gate\":\"rewind\",\"step_id\":\"append\",\"decision\":\"skip\","
		           "\"by\":\"policy\"";
		assert_true(journal_has(&h));
		h.needle = "\"kind\":\"checkpoint_conflict\"";
		assert_true(journal_has(&h));
	}
	free(s);
	cli_proc_free(&p);
	free(found[0]);
	free(notes);
	free(script);
	free(verdicts);
	free(ws);
	free(runs);
	cli_rm_rf(tmp);
	free(tmp);
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
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *ws = xasprintf("%s/ws", tmp);
	char *script = xasprintf("%s/script.json", tmp), *run_dir;
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
	struct cli_proc p;
	FILE *f;
	cJSON *j, *ev;
	int changes = 0, shared = 0;

	(void)state;
	assert_int_equal(mkdir(ws, 0755), 0);
	f = fopen(script, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", script,
	            "--sim-delay", "0", "--parallel", "2", "--runs-dir", runs, "--workspace", ws,
	            "Write two files", NULL);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "changed while another step ran too"));
	run_dir = cli_only_run(runs);
	j = cli_load_journal(run_dir);
	cJSON_ArrayForEach(ev, j)
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
	cJSON_Delete(j);
	cli_proc_free(&p);
	free(run_dir);
	free(text);
	free(script);
	free(ws);
	free(runs);
	cli_rm_rf(tmp);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retries_start_clean),
	    cmocka_unit_test(test_off),
	    cmocka_unit_test(test_exclude),
	    cmocka_unit_test(test_parallel_changes_are_marked_shared),
	    cmocka_unit_test(test_resume_restores_before_the_retry),
	    cmocka_unit_test(test_replaced_step_is_restored),
	    cmocka_unit_test(test_conflict_without_operator),
	    cmocka_unit_test(test_conflict_with_yes_keeps_theirs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
