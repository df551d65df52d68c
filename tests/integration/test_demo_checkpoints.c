/* test_demo_checkpoints — `pevtui --demo --scenario checkpoints` through the real binary,
 * headless: the changelog step's retry starts from the file as it was, so CHANGELOG.md
 * ends with one line for 1.4, not two (and with checkpoints = off, two: what the story is
 * about); the run's diff says the same. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "testdir.h"
#include "xalloc.h"

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Runs the scenario headless with --yes and `config`; returns the run folder, the test's
 * folder in *tmp. */
static char *demo(const char *config, char **tmp)
{
	char *runs, *cfg, *run;
	struct cli_proc p;
	FILE *f;

	*tmp = cli_tmpdir();
	runs = xasprintf("%s/runs", *tmp);
	cfg = xasprintf("%s/config", *tmp);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fputs(config, f);
	assert_int_equal(fclose(f), 0);
	p = cli_run(NULL, "--headless", "--demo", "--yes", "--scenario", "checkpoints",
	            "--sim-delay", "0", "--runs-dir", runs, "--config", cfg, NULL);
	if (p.status != 0)
		fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", p.status, p.out, p.err);
	cli_proc_free(&p);
	run = cli_only_run(runs);
	assert_non_null(run);
	free(runs);
	free(cfg);
	return run;
}

static char *changelog(const char *run)
{
	char *path = xasprintf("%s/workspace/CHANGELOG.md", run), *s = testdir_slurp(path);

	assert_non_null(s);
	free(path);
	return s;
}

static void test_retry_rewinds(void **state)
{
	char *tmp, *run = demo("", &tmp), *log = changelog(run), *runs;
	cJSON *events = cli_load_journal(run), *ev;
	int restores = 0, changes = 0;
	struct cli_proc p;

	(void)state;
	assert_int_equal(count(log, "- 1.4"), 1);
	assert_non_null(strstr(log, "(#198)\n- 1.4: export to CSV (#212)\n"));
	cJSON_ArrayForEach(ev, events)
	{
		const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
		const cJSON *kind = cJSON_GetObjectItem(ev, "kind");

		if (!strcmp(type, "step.changes"))
			changes++;
		if (!strcmp(type, "notice") && cJSON_IsString(kind) &&
		    !strcmp(kind->valuestring, "checkpoint_restore")) {
			restores++;
			assert_string_equal(cJSON_GetObjectItem(ev, "step_id")->valuestring,
			                    "changelog");
		}
	}
	assert_int_equal(changes, 3); /* changelog twice, notes once */
	assert_int_equal(restores, 1);

	/* The run's diff: the one line, and the notes. */
	runs = xasprintf("%s/runs", tmp);
	p = cli_run(NULL, "--runs-dir", runs, "--diff", "last", NULL);
	assert_int_equal(p.status, 0);
	assert_int_equal(count(p.out, "\n+- 1.4"), 1);
	assert_non_null(strstr(p.out, "+++ b/release-notes.md"));
	cli_proc_free(&p);
	/* The step: each attempt added its own line to the file as it was. */
	p = cli_run(NULL, "--runs-dir", runs, "--diff", "last:changelog", NULL);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "\n+- 1.4: export to CSV\n"));
	assert_non_null(strstr(p.out, "\n+- 1.4: export to CSV (#212)\n"));
	assert_int_equal(count(p.out, "# step changelog, attempt "), 2);
	cli_proc_free(&p);

	cJSON_Delete(events);
	free(runs);
	free(log);
	free(run);
	cli_rm_rf(tmp);
	free(tmp);
}

/* Without checkpoints the retry appends to the first attempt's line. */
static void test_without_checkpoints(void **state)
{
	char *tmp, *run = demo("[policy]\ncheckpoints = off\n", &tmp), *log = changelog(run);

	(void)state;
	assert_int_equal(count(log, "- 1.4"), 2);
	free(log);
	free(run);
	cli_rm_rf(tmp);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_retry_rewinds),
	    cmocka_unit_test(test_without_checkpoints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
