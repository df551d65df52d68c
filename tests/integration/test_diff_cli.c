/* test_diff_cli — `pevtui --diff RUN[:STEP]` through the real binary, on runs the test
 * makes with a scripted model (--script): a step whose first attempt is rejected appends
 * a line to notes.txt and writes a binary file; the retry starts from a restored
 * workspace. Then the diff of the run, of the step, and every way to ask for one wrongly. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "testdir.h"
#include "xalloc.h"

#define VERDICT(pass, action)                                                                      \
	"{\"overall_pass\": " pass ", \"criteria_results\": [{\"criterion\": \"notes.txt holds "   \
	"a line\", \"passed\": " pass ", \"evidence\": \"seen\", \"confidence\": 0.9, "            \
	"\"feedback\": \"\"}], \"action\": \"" action                                              \
	"\", \"feedback_for_executor\": \"Again.\", "                                              \
	"\"severity\": \"major\"}"

static const char script[] =
    "{\"task\": \"Append a line\",\n"
    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"append\",\n"
    "   \"name\": \"Append\", \"description\": \"Append a line to notes.txt.\",\n"
    "   \"acceptance_criteria\": [\"notes.txt holds a line\"], \"dependencies\": [],\n"
    "   \"expected_outputs\": [\"notes.txt\"], \"estimated_complexity\": \"low\"}]}],\n"
    " \"executor\": {\"append\": [{\"rounds\": [{\"text\": \"Appending.\", \"tool_calls\":\n"
    "   [{\"name\": \"run_shell\", \"input\": {\"command\": \"echo line >> notes.txt; printf "
    "'a\\\\000b' > blob.bin\"}}]}],\n"
    "   \"final\": {\"reasoning\": \"appended\", \"actions_taken\": [\"run_shell\"],\n"
    "     \"step_output\": {\"findings\": \"done\", \"artifacts\": [\"notes.txt\"],\n"
    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]},\n"
    " \"verifier\": {\"append\": [" VERDICT("false", "retry") ", " VERDICT("true", "pass") "]}\n"
                                                                                           "}\n";

struct fx {
	char *dir, *runs, *ws, *run, *cfg, *script;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void make_run(struct fx *fx, const char *config)
{
	struct cli_proc p;

	fx->dir = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->dir);
	fx->ws = xasprintf("%s/ws", fx->dir);
	fx->cfg = xasprintf("%s/config", fx->dir);
	fx->script = xasprintf("%s/script.json", fx->dir);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	put(fx->cfg, config);
	put(fx->script, script);
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", fx->script,
	            "--sim-delay", "0", "--runs-dir", fx->runs, "--workspace", fx->ws, "--config",
	            fx->cfg, "Append a line", NULL);
	assert_int_equal(p.status, 0);
	cli_proc_free(&p);
	fx->run = cli_only_run(fx->runs);
	assert_non_null(fx->run);
}

static void fx_free(struct fx *fx)
{
	cli_rm_rf(fx->dir);
	free(fx->dir);
	free(fx->runs);
	free(fx->ws);
	free(fx->run);
	free(fx->cfg);
	free(fx->script);
}

static struct cli_proc diff(const struct fx *fx, const char *ref)
{
	return cli_run(NULL, "--runs-dir", fx->runs, "--config", fx->cfg, "--diff", ref, NULL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* One line on stderr, naming `what`; nothing on stdout; exit 1. */
static void assert_fails(struct cli_proc *p, const char *what)
{
	assert_int_equal(p->status, 1);
	assert_string_equal(p->out, "");
	assert_non_null(strstr(p->err, what));
	assert_int_equal(count(p->err, "\n"), 1);
	cli_proc_free(p);
}

static void test_run_and_step(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	const char *id;
	char *prefix;

	(void)state;
	make_run(&fx, "");
	id = strrchr(fx.run, '/') + 1;

	/* The whole run: the file as it ends, once (the retry started clean). */
	p = diff(&fx, id);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+line\n"));
	assert_int_equal(count(p.out, "+line"), 1);
	assert_non_null(strstr(p.out, "Binary file blob.bin added: 0 bytes -> 3 bytes"));
	assert_null(strstr(p.out, "# step"));
	cli_proc_free(&p);

	/* The same through "last" and through the start of the id. */
	p = diff(&fx, "last");
	assert_int_equal(p.status, 0);
	assert_int_equal(count(p.out, "+line"), 1);
	cli_proc_free(&p);
	prefix = xstrndup(id, strlen(id) - 2);
	p = diff(&fx, prefix);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "+++ b/notes.txt"));
	cli_proc_free(&p);
	free(prefix);

	/* One step: each attempt, oldest first, with what it changed. */
	p = diff(&fx, "last:append");
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "# step append, attempt 1: 2 files changed, +1 -0"));
	assert_non_null(strstr(p.out, "# step append, attempt 2: 2 files changed, +1 -0"));
	assert_true(strstr(p.out, "attempt 1:") < strstr(p.out, "attempt 2:"));
	assert_int_equal(count(p.out, "+line"), 2);
	assert_int_equal(count(p.out, "Binary file blob.bin added"), 2);
	cli_proc_free(&p);

	/* report.md: the run's total besides each attempt's own. */
	{
		char *path = xasprintf("%s/report.md", fx.run), *md = testdir_slurp(path);

		assert_non_null(md);
		assert_non_null(strstr(md, "- Attempt 2 changed the workspace: 2 files changed"));
		assert_non_null(strstr(md,
		                       "## Workspace changes\n\nFrom the first checkpoint to the "
		                       "last, the run changed the workspace: 2 files changed, "
		                       "+1 -0.\n"));
		assert_non_null(strstr(md, "- `blob.bin` added (binary, 0 → 3 bytes)\n"));
		assert_non_null(strstr(md, "- `notes.txt` added (+1 −0)\n"));
		free(md);
		free(path);
	}

	/* --json carries each attempt's changes (a replay prints what the run printed). */
	p = cli_run(NULL, "--runs-dir", fx.runs, "--config", fx.cfg, "--headless", "--json",
	            "--replay", "last", NULL);
	assert_int_equal(p.status, 0);
	assert_int_equal(count(p.out, "\"type\":\"step.changes\",\"step_id\":\"append\""), 2);
	assert_int_equal(count(p.out, "{\"path\":\"notes.txt\",\"change\":\"added\""), 2);
	cli_proc_free(&p);

	/* Wrongly asked: one line on stderr, exit 1. */
	p = diff(&fx, "last:nope");
	assert_fails(&p, "has no step \"nope\" (its steps: append)");
	p = diff(&fx, "no-such-run");
	assert_fails(&p, "no run \"no-such-run\"");
	fx_free(&fx);
}

static void test_broken_store(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *store, *objects, *moved;

	(void)state;
	make_run(&fx, "");
	store = cli_run_store(fx.run);
	assert_non_null(store);
	moved = xasprintf("%s/moved.git", fx.dir);
	objects = xasprintf("%s/objects", store);

	assert_int_equal(rename(store, moved), 0);
	p = diff(&fx, "last");
	assert_fails(&p, "the run's checkpoints are gone");
	assert_int_equal(rename(moved, store), 0);

	/* Objects lost: the checkpoints the journal names are not in the store. */
	cli_rm_rf(objects);
	assert_int_equal(mkdir(objects, 0755), 0);
	p = diff(&fx, "last");
	assert_fails(&p, "no checkpoint");
	p = diff(&fx, "last:append");
	assert_fails(&p, "no checkpoint");

	/* Not a store at all. */
	cli_rm_rf(store);
	assert_int_equal(mkdir(store, 0755), 0);
	p = diff(&fx, "last");
	assert_fails(&p, "cannot be read");
	free(store);
	free(objects);
	free(moved);
	fx_free(&fx);
}

static void test_no_checkpoints(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;

	(void)state;
	make_run(&fx, "[policy]\ncheckpoints = off\n");
	p = diff(&fx, "last");
	assert_fails(&p, "has no checkpoints: it ran with checkpoints = off");
	p = diff(&fx, "last:append");
	assert_fails(&p, "has no checkpoints");
	fx_free(&fx);
}

/* Issue 25: a step's diff is that step's. Under --parallel (the demo's default plan), each
 * attempt of a step diffs what its step.changes attributes to it — the same stat — not
 * every file the raw checkpoints saw change while other steps ran; shared files are
 * marked. */
static void test_parallel_step_is_its_own(void **state)
{
	struct cli_fx c;
	struct cli_proc p;
	const cJSON *ev;
	int attempts = 0;

	(void)state;
	cli_fx_init(&c);
	cli_fx_run(&c, 0, NULL, "--headless", "--demo", "--yes", "--parallel", "3", "--sim-delay",
	           "0", NULL);
	p = cli_run(NULL, "--runs-dir", c.runs, "--diff", "last:brightline", NULL);
	cli_expect_status(&p, 0);
	cJSON_ArrayForEach(ev, c.events)
	{
		const cJSON *t = cJSON_GetObjectItem(ev, "type"), *sid = cJSON_GetObjectItem(ev, "step_id");
		const cJSON *files, *f;
		char *head;

		if (!cJSON_IsString(t) || strcmp(t->valuestring, "step.changes") ||
		    !cJSON_IsString(sid) || strcmp(sid->valuestring, "brightline"))
			continue;
		head = xasprintf("# step brightline, attempt %d: %s (",
		                 cJSON_GetObjectItem(ev, "attempt")->valueint,
		                 cJSON_GetObjectItem(ev, "stat")->valuestring);
		if (!strstr(p.out, head))
			fprintf(stderr, "want %s in:\n%s\n", head, p.out);
		assert_non_null(strstr(p.out, head));
		free(head);
		files = cJSON_GetObjectItem(ev, "files");
		cJSON_ArrayForEach(f, files)
		{
			const cJSON *sh = cJSON_GetObjectItem(f, "shared");
			char *line = xasprintf("# shared: %s (",
			                       cJSON_GetObjectItem(f, "path")->valuestring);
			if (cJSON_IsTrue(sh))
				assert_non_null(strstr(p.out, line));
			free(line);
		}
		attempts++;
	}
	assert_true(attempts > 0);
	/* No other step's review shows up as brightline's own. */
	assert_null(strstr(p.out, "+++ b/reviews/acme"));
	cli_proc_free(&p);
	cli_fx_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_run_and_step),
	    cmocka_unit_test(test_parallel_step_is_its_own),
	    cmocka_unit_test(test_broken_store),
	    cmocka_unit_test(test_no_checkpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
