/* test_run_list — RUN as --resume and --replay take it: an id, "last", the start of one
 * id (as git takes short ids), with ambiguity named; and the runs' order by start. */
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

#include "run_list.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

static void ids_of(struct strvec *ids, const char *const *names)
{
	for (; *names; names++)
		strvec_push(ids, *names);
}

static void test_pick_exact_last_prefix(void **state)
{
	static const char *const names[] = {"20261122-090000-ab12", "20261122-233012-cd34",
	                                    "20261123-080000-ef56", "nightly", NULL};
	struct strvec ids = STRVEC_INIT;
	char *err = NULL, *id;

	(void)state;
	ids_of(&ids, names);
	id = run_list_pick(&ids, "20261122-233012-cd34", NULL, &err);
	assert_string_equal(id, "20261122-233012-cd34");
	free(id);
	/* "last" is the newest: the last of the list, which is ordered by start */
	id = run_list_pick(&ids, "last", NULL, &err);
	assert_string_equal(id, "nightly");
	free(id);
	/* a unique start, however short */
	id = run_list_pick(&ids, "20261123", NULL, &err);
	assert_string_equal(id, "20261123-080000-ef56");
	free(id);
	id = run_list_pick(&ids, "n", NULL, &err);
	assert_string_equal(id, "nightly");
	free(id);
	assert_null(err);
	strvec_clear(&ids);
}

static void test_pick_ambiguous_lists_the_candidates(void **state)
{
	static const char *const names[] = {"20261122-090000-ab12", "20261122-233012-cd34",
	                                    "20261123-080000-ef56", NULL};
	struct strvec ids = STRVEC_INIT;
	char *err = NULL;

	(void)state;
	ids_of(&ids, names);
	assert_null(run_list_pick(&ids, "20261122", NULL, &err));
	assert_non_null(strstr(err, "run \"20261122\" is ambiguous: 2 runs start with it"));
	assert_non_null(strstr(err, "\n  20261122-090000-ab12\n  20261122-233012-cd34"));
	assert_null(strstr(err, "ef56"));
	free(err);
	err = NULL;
	assert_null(run_list_pick(&ids, "2027", "/runs", &err));
	assert_non_null(strstr(err, "no run \"2027\" in /runs"));
	assert_non_null(strstr(err, "--list-runs"));
	free(err);
	err = NULL;
	assert_null(run_list_pick(&ids, "", NULL, &err)); /* an empty start names nothing */
	free(err);
	strvec_clear(&ids);
}

static void test_pick_many_candidates_shows_the_newest(void **state)
{
	struct strvec ids = STRVEC_INIT;
	char *err = NULL;

	(void)state;
	for (int i = 0; i < 25; i++)
		strvec_pushf(&ids, "20261122-0000%02d-aaaa", i);
	assert_null(run_list_pick(&ids, "2026", NULL, &err));
	assert_non_null(strstr(err, "25 runs start with it (the newest 10 below)"));
	assert_non_null(strstr(err, "20261122-000024-aaaa"));
	assert_non_null(strstr(err, "20261122-000015-aaaa"));
	assert_null(strstr(err, "20261122-000014-aaaa"));
	free(err);
	strvec_clear(&ids);
}

static void test_pick_with_no_runs(void **state)
{
	struct strvec ids = STRVEC_INIT;
	char *err = NULL;

	(void)state;
	assert_null(run_list_pick(&ids, "last", "/runs", &err));
	assert_non_null(strstr(err, "no run yet in /runs"));
	free(err);
}

/* A run folder whose journal starts with `first` (a line). */
static void make_run(const char *runs, const char *name, const char *first)
{
	char *dir = xasprintf("%s/%s", runs, name), *path = xasprintf("%s/journal.jsonl", dir);
	FILE *f;

	assert_int_equal(mkdir(dir, 0700), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(first, f);
	fclose(f);
	free(path);
	free(dir);
}

static void test_ids_oldest_first_from_the_folders(void **state)
{
	char *runs = testdir_new("runlist"), *err = NULL, *id, *path;
	struct strvec ids = STRVEC_INIT;
	FILE *f;

	(void)state;
	assert_non_null(runs);
	/* By the journal's first timestamp, to the millisecond; without one by the time in
	 * the id; other names by the folder's time (now: the newest). */
	make_run(runs, "20201231-235959-ffff", "{}\n");
	make_run(runs, "20200101-000000-0000", "{}\n");
	make_run(runs, "20991231-000000-late",
	         "{\"seq\":1,\"ts\":\"2020-06-01T00:00:00.250Z\",\"type\":\"run.start\"}\n");
	make_run(runs, "20991231-000000-soon",
	         "{\"seq\":1,\"ts\":\"2020-06-01T00:00:00.0251Z\",\"type\":\"run.start\"}\n");
	make_run(runs, "renamed-run", "not json\n");
	make_run(runs, ".hidden", "{}\n");
	path = xasprintf("%s/a-file", runs);
	f = fopen(path, "w");
	fclose(f);
	free(path);
	assert_true(run_list_ids(runs, &ids, &err));
	assert_int_equal(ids.n, 5);
	assert_string_equal(ids.v[0], "20200101-000000-0000");
	assert_string_equal(ids.v[1], "20991231-000000-soon");
	assert_string_equal(ids.v[2], "20991231-000000-late");
	assert_string_equal(ids.v[3], "20201231-235959-ffff");
	assert_string_equal(ids.v[4], "renamed-run");
	strvec_clear(&ids);

	id = run_list_resolve(runs, "last", &err);
	assert_string_equal(id, "renamed-run");
	free(id);
	id = run_list_resolve(runs, "2020123", &err);
	assert_string_equal(id, "20201231-235959-ffff");
	free(id);
	id = run_list_resolve(runs, "20991231-000000-s", &err);
	assert_string_equal(id, "20991231-000000-soon");
	free(id);
	assert_null(run_list_resolve(runs, "2020", &err));
	assert_non_null(strstr(err, "ambiguous"));
	free(err);
	err = NULL;
	assert_null(run_list_resolve(runs, ".hidden", &err)); /* not a run */
	free(err);
	err = NULL;
	assert_true(testdir_remove(runs));

	assert_false(run_list_ids(runs, &ids, &err));
	assert_non_null(strstr(err, "no runs yet in"));
	free(err);
	free(runs);
}

/* --list-runs with no run says so and where it looked (issue 29: an empty folder printed
 * only the header), whether the folder is empty or missing. */
static void test_print_with_no_runs(void **state)
{
	char *runs = testdir_new("runlist-empty"), *err = NULL, *text = NULL, *want;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(runs);
	want = xasprintf("no runs yet in %s (another folder: --runs-dir DIR)\n", runs);
	for (int pass = 0; pass < 2; pass++) {
		f = open_memstream(&text, &len);
		assert_true(run_list_print(f, runs, &err));
		fclose(f);
		assert_string_equal(text, want);
		free(text);
		text = NULL;
		assert_true(testdir_remove(runs)); /* the second pass: missing */
	}
	free(want);
	free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pick_exact_last_prefix),
	    cmocka_unit_test(test_pick_ambiguous_lists_the_candidates),
	    cmocka_unit_test(test_pick_many_candidates_shows_the_newest),
	    cmocka_unit_test(test_pick_with_no_runs),
	    cmocka_unit_test(test_ids_oldest_first_from_the_folders),
	    cmocka_unit_test(test_print_with_no_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
