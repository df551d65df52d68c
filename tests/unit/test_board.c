/* test_board — the board's rows from run folders: a live run at a gate is "waiting" with
 * its gates named and comes first; a stopped run's gates are not shown; the filter and
 * the sort keys; text from a folder is cleaned. */
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

#include "board.h"
#include "runlock.h"
#include "testdir.h"
#include "xalloc.h"

static void write_run(const char *runs, const char *id, const char *hour, const char *task,
		      const char *tail)
{
	char *dir = xasprintf("%s/%s", runs, id), *path = xasprintf("%s/journal.jsonl", dir);
	FILE *f;

	assert_int_equal(mkdir(dir, 0700), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"seq\":1,\"ts\":\"2026-11-25T%s:00:00.000Z\",\"type\":\"run.start\","
		"\"run_id\":\"%s\",\"task\":\"%s\",\"provider\":\"sim\",\"simulated\":true}\n%s",
		hour, id, task, tail);
	fclose(f);
	free(path);
	free(dir);
}

static const char gate_plan[] =
	"{\"seq\":2,\"ts\":\"2026-11-25T10:00:01.000Z\",\"type\":\"gate.open\",\"gate_id\":1,"
	"\"gate\":\"plan\",\"step_id\":null}\n"
	"{\"seq\":3,\"ts\":\"2026-11-25T10:00:01.000Z\",\"type\":\"gate.open\",\"gate_id\":2,"
	"\"gate\":\"shell\",\"step_id\":\"s2\"}\n";
static const char ended[] =
	"{\"seq\":2,\"ts\":\"2026-11-25T10:00:02.000Z\",\"type\":\"run.end\",\"status\":"
	"\"passed\",\"exit_code\":0}\n";

static void test_rows(void **state)
{
	char *runs = testdir_new("board"), *live = xasprintf("%s/20261125-100000-aaaa", runs);
	struct board b = {0};
	char *err = NULL;
	int lock;

	(void)state;
	write_run(runs, "20261125-090000-bbbb", "09", "an old one", ended);
	write_run(runs, "20261125-100000-aaaa", "10", "at its gates", gate_plan);
	write_run(runs, "20261125-110000-cccc", "11", "stopped \\u001b[31mred\\u001b[0m", gate_plan);
	lock = runlock_take(live, &err); /* this process is the live engine */
	assert_true(lock >= 0);

	assert_true(board_scan(runs, &b, &err));
	board_sort(&b, BOARD_SORT_STATE);
	assert_int_equal(b.n, 3);
	assert_string_equal(b.rows[0].id, "20261125-100000-aaaa");
	assert_string_equal(b.rows[0].state, "waiting");
	assert_string_equal(b.rows[0].gates, "plan, shell s2");
	assert_int_equal(b.rows[0].n_gates, 2);
	assert_true(b.rows[0].pid > 0);
	/* not live: its gates were asked by an engine that is gone */
	assert_string_equal(b.rows[1].id, "20261125-110000-cccc");
	assert_string_equal(b.rows[1].state, "unfinished");
	assert_string_equal(b.rows[1].gates, "");
	assert_null(strchr(b.rows[1].task, '\x1b'));
	assert_string_equal(b.rows[2].state, "passed");
	assert_int_equal(board_gates_waiting(&b), 2);

	assert_true(board_row_matches(&b.rows[0], "SHELL"));
	assert_false(board_row_matches(&b.rows[2], "shell"));
	assert_true(board_row_matches(&b.rows[2], "old"));
	assert_true(board_row_matches(&b.rows[2], ""));
	board_sort(&b, BOARD_SORT_ID);
	assert_string_equal(b.rows[0].id, "20261125-090000-bbbb");
	board_sort(&b, BOARD_SORT_AGE);
	assert_string_equal(b.rows[0].id, "20261125-110000-cccc");
	assert_string_equal(board_sort_name(BOARD_SORT_SPEND), "spend");

	board_release(&b);
	runlock_release(lock);
	assert_true(testdir_remove(runs));
	free(live);
	free(runs);
}

static void test_missing_folder(void **state)
{
	struct board b = {0};
	char *err = NULL;

	(void)state;
	assert_false(board_scan("/nonexistent/pevtui/runs", &b, &err));
	assert_non_null(err);
	free(err);
	assert_int_equal(b.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_missing_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
