/* test_crash_cut — the real binary killed (SIGKILL) in the middle of an attempt, after its
 * tool call changed the workspace and before the attempt's second checkpoint: --resume
 * finds the "before" checkpoint in the journal (step.checkpoint), journals what the cut
 * attempt changed (step.changes marked `cut`) and restores it before the step runs again.
 * A scripted model (--script) plays every role; its final answers stream slowly, so the
 * kill lands between the tool call and the end of the attempt. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "attempts.h"
#include "cli.h"
#include "testdir.h"
#include "xalloc.h"

/* A final answer that streams for many seconds at --sim-delay 100 (16 bytes a chunk):
 * the window in which the test kills the process, once the tool call is journaled. */
static char *slow_final(const char *file)
{
	char pad[2001];

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	return xasprintf("{\"reasoning\": \"appended %s\", \"actions_taken\": [\"run_shell\"], "
	                 "\"step_output\": {\"findings\": \"done\", \"artifacts\": [\"%s\"], "
	                 "\"meets_criteria\": true}, \"confidence\": 0.9}",
	                 pad, file);
}

/* A step `id` that appends "line" to FILE with run_shell. */
static void add_step(struct cJSON *steps, struct cJSON *exec, struct cJSON *verif, const char *id,
                     const char *file)
{
	char *step = xasprintf("{\"step_id\": \"%s\", \"name\": \"Append to %s\", \"description\": "
	                       "\"Append a line to %s.\", \"acceptance_criteria\": [\"%s holds a "
	                       "line\"], \"dependencies\": [], \"expected_outputs\": [\"%s\"], "
	                       "\"estimated_complexity\": \"low\"}",
	                       id, file, file, file, file);
	char *final = slow_final(file);
	char *ex =
	    xasprintf("[{\"rounds\": [{\"text\": \"Appending.\", \"tool_calls\": [{\"name\": "
	              "\"run_shell\", \"input\": {\"command\": \"echo line >> %s\"}}]}], "
	              "\"final\": %s}]",
	              file, final);
	char *crit = xasprintf("%s holds a line", file);
	char *ve =
	    xasprintf("[{\"overall_pass\": true, \"criteria_results\": [{\"criterion\": "
	              "\"%s\", \"passed\": true, \"evidence\": \"seen\", \"confidence\": 0.9, "
	              "\"feedback\": \"\"}], \"action\": \"pass\", "
	              "\"feedback_for_executor\": \"\", \"severity\": \"minor\"}]",
	              crit);

	cJSON_AddItemToArray(steps, cJSON_Parse(step));
	cJSON_AddItemToObject(exec, id, cJSON_Parse(ex));
	cJSON_AddItemToObject(verif, id, cJSON_Parse(ve));
	free(step);
	free(final);
	free(ex);
	free(crit);
	free(ve);
}

/* The script: one step per (id, file) pair of `pairs` (NULL-terminated), no dependencies. */
static char *write_script(const char *dir, const char *const *pairs)
{
	cJSON *root = cJSON_CreateObject(), *planner = cJSON_AddArrayToObject(root, "planner");
	cJSON *plan = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(plan, "steps");
	cJSON *exec = cJSON_AddObjectToObject(root, "executor");
	cJSON *verif = cJSON_AddObjectToObject(root, "verifier");
	char *path = xasprintf("%s/script.json", dir), *text;
	FILE *f;

	cJSON_AddStringToObject(root, "task", "Append lines");
	cJSON_AddStringToObject(plan, "goal", "{{task}}");
	cJSON_AddItemToArray(planner, plan);
	for (size_t i = 0; pairs[i]; i += 2)
		add_step(steps, exec, verif, pairs[i], pairs[i + 1]);
	text = cJSON_Print(root);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	free(text);
	cJSON_Delete(root);
	return path;
}

struct fx {
	char *tmp, *runs, *ws, *script, *run;
};

static void fx_init(struct fx *fx, const char *const *pairs)
{
	fx->tmp = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->tmp);
	fx->ws = xasprintf("%s/ws", fx->tmp);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	fx->script = write_script(fx->tmp, pairs);
	fx->run = NULL;
}

static void fx_free(struct fx *fx)
{
	cli_rm_rf(fx->tmp);
	free(fx->tmp);
	free(fx->runs);
	free(fx->ws);
	free(fx->script);
	free(fx->run);
}

/* The journal holds every one of `needles` (NULL-terminated). */
struct journal_has {
	const char *run;
	const char *const *needles;
};

static bool journal_has(void *ctx)
{
	const struct journal_has *h = ctx;
	char *p = xasprintf("%s/journal.jsonl", h->run), *s = testdir_slurp(p);
	bool all = s != NULL;

	for (size_t i = 0; all && h->needles[i]; i++)
		all = strstr(s, h->needles[i]) != NULL;
	free(s);
	free(p);
	return all;
}

static char *ws_file(const struct fx *fx, const char *rel)
{
	char *p = xasprintf("%s/%s", fx->ws, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

/* Starts the run (or resumes it, once there is one) at --sim-delay 100 and kills it with
 * SIGKILL once the journal holds every needle. */
static void run_and_kill(struct fx *fx, const char *const *needles)
{
	struct journal_has h;
	struct cli_bg bg;
	struct cli_proc p;

	if (!fx->run)
		bg = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script",
		               fx->script, "--sim-delay", "100", "--parallel", "2", "--runs-dir",
		               fx->runs, "--workspace", fx->ws, "Append lines", NULL);
	else
		bg = cli_spawn(NULL, "--headless", "--yes", "--resume", fx->run, "--provider",
		               "sim", "--script", fx->script, "--sim-delay", "100", "--runs-dir",
		               fx->runs, "--workspace", fx->ws, NULL);
	if (!fx->run)
		fx->run = cli_wait_run(fx->runs, 30);
	h.run = fx->run;
	h.needles = needles;
	assert_true(cli_wait_until(journal_has, &h, 90));
	assert_int_equal(kill(bg.pid, SIGKILL), 0);
	p = cli_wait(&bg);
	assert_int_equal(p.status, -1);
	cli_proc_free(&p);
}

/* The resume as an operator types it standing in the workspace: no --workspace (issue 25:
 * the current folder names it). */
static struct cli_proc resume(const struct fx *fx)
{
	char *cwd = getcwd(NULL, 0);
	char *bin = realpath(getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui", NULL);
	struct cli_proc p;

	assert_non_null(cwd);
	assert_non_null(bin);
	assert_int_equal(setenv("PEVTUI", bin, 1), 0);
	assert_int_equal(chdir(fx->ws), 0);
	p = cli_run(NULL, "--headless", "--yes", "--resume", fx->run, "--provider", "sim",
	            "--script", fx->script, "--sim-delay", "0", "--runs-dir", fx->runs, NULL);
	assert_int_equal(chdir(cwd), 0);
	free(bin);
	free(cwd);
	if (p.status != 0)
		fprintf(stderr, "resume: %s\n%s\n", p.out, p.err);
	return p;
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static int num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valueint : -1;
}

static bool is_notice(const cJSON *ev, const char *kind)
{
	return !strcmp(str(ev, "type"), "notice") && !strcmp(str(ev, "kind"), kind);
}

/* What the journal names exists after a crash: each tool.result's output_file is whole in
 * the run's attempts.pack, read as the cockpit reads it. Returns how many were named. */
static int outputs_kept(const char *run)
{
	cJSON *j = cli_load_journal(run), *ev;
	int named = 0;

	cJSON_ArrayForEach(ev, j)
	{
		const char *file = str(ev, "output_file");
		char *err = NULL, *data;
		size_t len = 0;

		if (strcmp(str(ev, "type"), "tool.result") || !*file)
			continue;
		named++;
		data = attempts_read(run, file, ATTEMPTS_MAX_FILE, &len, NULL, &err);
		if (!data)
			fprintf(stderr, "%s: %s\n", file, err);
		assert_non_null(data);
		assert_true(len == (size_t)num(ev, "bytes") || len == ATTEMPTS_MAX_FILE);
		free(data);
		free(err);
	}
	cJSON_Delete(j);
	return named;
}

/*
 * Killed twice, each time after the attempt's `echo line >> notes.txt` ran: on each resume
 * the cut attempt's change is journaled (step.changes, cut) and put back before the step's
 * next attempt, so notes.txt ends with one line, not three. The second resume rebuilds the
 * first cut attempt's series from the journal like any other attempt's.
 */
static void test_cut_attempt_is_restored(void **state)
{
	static const char *const pairs[] = {"append", "notes.txt", NULL};
	static const char *const first[] = {
	    "\"type\":\"tool.result\",\"step_id\":\"append\",\"attempt\":1", NULL};
	static const char *const second[] = {
	    "\"type\":\"tool.result\",\"step_id\":\"append\",\"attempt\":2", NULL};
	struct fx fx;
	struct cli_proc p;
	cJSON *j, *ev;
	int cut = 0, whole = 0, restores = 0, seen_before = 0;
	char *s, *arg;

	(void)state;
	fx_init(&fx, pairs);
	run_and_kill(&fx, first);
	s = ws_file(&fx, "notes.txt");
	assert_string_equal(s, "line\n");
	free(s);
	assert_int_equal(outputs_kept(fx.run), 1);
	/* The journal names the checkpoint before the attempt ahead of its first tool call,
	 * and nothing after it. */
	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
	{
		const char *type = str(ev, "type");
		if (!strcmp(type, "step.checkpoint")) {
			assert_int_equal(num(ev, "attempt"), 1);
			assert_int_equal(strlen(str(ev, "before")), 40);
			seen_before++;
		}
		if (!strcmp(type, "tool.call"))
			assert_int_equal(seen_before, 1);
		assert_string_not_equal(type, "step.changes");
	}
	assert_int_equal(seen_before, 1);
	cJSON_Delete(j);

	/* The first resume: restored, the line appended again, killed again. */
	run_and_kill(&fx, second);
	s = ws_file(&fx, "notes.txt");
	assert_string_equal(s, "line\n");
	free(s);
	assert_int_equal(outputs_kept(fx.run), 2);

	p = resume(&fx);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "by an attempt a stop cut off"));
	s = ws_file(&fx, "notes.txt");
	assert_string_equal(s, "line\n"); /* one line, not three */
	free(s);
	cli_proc_free(&p);
	assert_int_equal(outputs_kept(fx.run), 3);

	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
	{
		const cJSON *files = cJSON_GetObjectItem(ev, "files");
		if (!strcmp(str(ev, "type"), "step.changes")) {
			bool is_cut = cJSON_IsTrue(cJSON_GetObjectItem(ev, "cut"));
			assert_int_equal(cJSON_GetArraySize(files), 1);
			assert_string_equal(str(cJSON_GetArrayItem(files, 0), "path"), "notes.txt");
			assert_string_equal(str(cJSON_GetArrayItem(files, 0), "change"), "added");
			if (is_cut)
				assert_int_equal(num(ev, "attempt"), ++cut);
			else
				whole++;
		}
		if (is_notice(ev, "checkpoint_restore")) {
			const cJSON *paths = cJSON_GetObjectItem(ev, "paths");
			restores++;
			assert_int_equal(cJSON_GetArraySize(paths), 1);
			assert_string_equal(cJSON_GetArrayItem(paths, 0)->valuestring, "notes.txt");
			assert_non_null(strstr(str(ev, "message"), "that the stop cut off"));
		}
	}
	assert_int_equal(cut, 2);
	assert_int_equal(whole, 1);
	assert_int_equal(restores, 2);
	cJSON_Delete(j);

	/* The report and --diff tell the cut attempts like any other. */
	arg = xasprintf("%s/report.md", fx.run);
	s = testdir_slurp(arg);
	assert_non_null(s);
	assert_non_null(strstr(s, "- Attempt 1 (cut off by a stop; found on --resume) changed the "
	                          "workspace: 1 file changed, +1 -0\n  - `notes.txt` added"));
	assert_non_null(strstr(s, "- Attempt 2 (cut off by a stop"));
	assert_non_null(strstr(s, "| cut off by a stop |")); /* the attempts' table */
	free(s);
	free(arg);
	arg = xasprintf("%s:append", fx.run);
	p = cli_run(NULL, "--diff", arg, NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(
	    strstr(p.out, "# step append, attempt 1, cut off by a stop: 1 file changed"));
	assert_non_null(
	    strstr(p.out, "# step append, attempt 2, cut off by a stop: 1 file changed"));
	assert_non_null(strstr(p.out, "# step append, attempt 3: 1 file changed"));
	cli_proc_free(&p);
	free(arg);
	fx_free(&fx);
}

/* The store lacks the checkpoint the journal names (deleted after the crash): one warning
 * in the journal and the output, and the run goes on; the cut attempt's line stays. */
static void test_store_lacks_the_before(void **state)
{
	static const char *const pairs[] = {"append", "notes.txt", NULL};
	static const char *const first[] = {
	    "\"type\":\"tool.result\",\"step_id\":\"append\",\"attempt\":1", NULL};
	struct fx fx;
	struct cli_proc p;
	cJSON *j, *ev;
	int warned = 0;
	char *store, *s;

	(void)state;
	fx_init(&fx, pairs);
	run_and_kill(&fx, first);
	store = cli_run_store(fx.run);
	assert_non_null(store);
	assert_true(testdir_remove(store));
	free(store);

	p = resume(&fx);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "cannot be read from the store"));
	s = ws_file(&fx, "notes.txt");
	assert_string_equal(s, "line\nline\n"); /* not restored: what it changed stays */
	free(s);
	cli_proc_free(&p);
	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
	{
		if (!strcmp(str(ev, "type"), "step.changes"))
			assert_false(cJSON_IsTrue(cJSON_GetObjectItem(ev, "cut")));
		if (is_notice(ev, "checkpoint") &&
		    strstr(str(ev, "message"), "attempt 1 was cut off")) {
			assert_string_equal(str(ev, "level"), "warn");
			assert_string_equal(str(ev, "step_id"), "append");
			assert_null(strchr(str(ev, "message"), '\n'));
			warned++;
		}
	}
	assert_int_equal(warned, 1);
	cJSON_Delete(j);
	fx_free(&fx);
}

/*
 * --parallel 2: both steps' attempts are cut off while they overlap. Which of them changed
 * a.txt and b.txt is not known, so neither is restored as one step's alone: each cut
 * step.changes marks its files shared and the resumed attempts say they left them.
 */
static void test_overlapping_cut_attempts_are_shared(void **state)
{
	static const char *const pairs[] = {"a", "a.txt", "b", "b.txt", NULL};
	static const char *const both[] = {
	    "\"type\":\"tool.result\",\"step_id\":\"a\",\"attempt\":1",
	    "\"type\":\"tool.result\",\"step_id\":\"b\",\"attempt\":1", NULL};
	struct fx fx;
	struct cli_proc p;
	cJSON *j, *ev;
	int cut = 0, kept = 0;
	char *s;

	(void)state;
	fx_init(&fx, pairs);
	run_and_kill(&fx, both);
	p = resume(&fx);
	assert_int_equal(p.status, 0);
	cli_proc_free(&p);
	s = ws_file(&fx, "a.txt");
	assert_string_equal(s, "line\nline\n"); /* kept, not guessed */
	free(s);
	s = ws_file(&fx, "b.txt");
	assert_string_equal(s, "line\nline\n");
	free(s);
	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
	{
		const cJSON *file;
		if (!strcmp(str(ev, "type"), "step.changes") &&
		    cJSON_IsTrue(cJSON_GetObjectItem(ev, "cut"))) {
			cut++;
			assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(ev, "files")) >= 1);
			cJSON_ArrayForEach(file, cJSON_GetObjectItem(ev, "files"))
			    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(file, "shared")));
		}
		assert_false(is_notice(ev, "checkpoint_restore"));
		if (is_notice(ev, "checkpoint_conflict"))
			kept++;
	}
	assert_int_equal(cut, 2);
	assert_true(kept >= 2); /* a.txt by a, b.txt by b, at least */
	cJSON_Delete(j);
	fx_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cut_attempt_is_restored),
	    cmocka_unit_test(test_store_lacks_the_before),
	    cmocka_unit_test(test_overlapping_cut_attempts_are_shared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
