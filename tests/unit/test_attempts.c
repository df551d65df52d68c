/* test_attempts — what each attempt leaves in the run folder: artifact copies and tool
 * outputs, written beneath a run folder opened once, never through a link. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attempts.h"
#include "sandbox.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

struct fx {
	char *dir; /* the test's folder */
	char *run; /* dir/run, the run folder */
	struct attempts *a;
};

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	char *err = NULL;

	fx->dir = testdir_new("attempts");
	if (!fx->dir)
		return -1;
	fx->run = xasprintf("%s/run", fx->dir);
	if (mkdir(fx->run, 0700) < 0)
		return -1;
	fx->a = attempts_open(fx->run, &err);
	if (!fx->a)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	attempts_close(fx->a);
	assert_true(testdir_remove(fx->dir));
	free(fx->run);
	free(fx->dir);
	free(fx);
	return 0;
}

static void put(const char *dir, const char *rel, const char *text)
{
	assert_true(testdir_put(dir, rel, text));
}

static void make_dir(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel);

	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
}

/* Whether anything below DIR holds the bytes TEXT (grep without a shell's quoting of
 * untrusted names: the names here are the test's own). */
static bool found_below(const char *dir, const char *text)
{
	char *cmd = xasprintf("grep -r -q '%s' '%s'", text, dir);
	bool yes = system(cmd) == 0;

	free(cmd);
	return yes;
}

static void test_artifact_copies(void **state)
{
	struct fx *fx = *state;
	char *ws = xasprintf("%s/ws", fx->dir), *err = NULL, *s, *rel, *big;
	struct strvec paths = STRVEC_INIT;
	struct attempts_dir *d;
	size_t len = 0;
	bool cut = true;
	int root;

	root = sandbox_open_root(ws, &err);
	assert_true(root >= 0);
	make_dir(ws, "sub");
	put(ws, "sub/a.md", "attempt text\n");
	put(ws, "top.md", "top text\n");
	put(fx->dir, "secret.txt", "outside\n");
	assert_int_equal(symlinkat("../secret.txt", root, "link.md"), 0);
	big = xmalloc(ATTEMPTS_MAX_FILE + 2);
	memset(big, 'x', ATTEMPTS_MAX_FILE + 1);
	big[ATTEMPTS_MAX_FILE + 1] = '\0';
	put(ws, "big.txt", big);
	free(big);
	strvec_push(&paths, "sub/a.md");
	strvec_push(&paths, "top.md");
	strvec_push(&paths, "../secret.txt"); /* refused: leaves the workspace */
	strvec_push(&paths, "/etc/passwd");   /* refused: absolute */
	strvec_push(&paths, "link.md");       /* refused: a symbolic link */
	strvec_push(&paths, "big.txt");       /* over the cap: left out */
	strvec_push(&paths, "missing.md");
	d = attempts_dir_new(fx->a, "step 1", 2);
	assert_int_equal(attempts_keep_artifacts(d, root, &paths), 2);
	attempts_dir_free(d);
	rel = attempts_artifact_path("step 1", 2, "sub/a.md");
	assert_string_equal(rel, "attempts/step%201/2/files/sub/a.md");
	s = attempts_read_beneath(fx->run, rel, 1024, &len, &cut, &err);
	assert_non_null(s);
	assert_string_equal(s, "attempt text\n");
	assert_int_equal(len, 13);
	assert_false(cut);
	free(s);
	free(rel);
	s = testdir_slurp_in(fx->run, "attempts/step%201/2/files/top.md");
	assert_string_equal(s, "top text\n");
	free(s);
	/* nothing else was written: not the secret, not the big file */
	assert_false(found_below(fx->run, "outside"));
	rel = attempts_artifact_path("step 1", 2, "big.txt");
	assert_null(attempts_read_beneath(fx->run, rel, 1024, &len, NULL, &err));
	free(err);
	err = NULL;
	free(rel);
	/* reading never leaves its folder either */
	assert_null(attempts_read_beneath(fx->run, "../secret.txt", 1024, &len, NULL, &err));
	assert_non_null(err);
	free(err);
	err = NULL;
	/* a read stops at its bound and says so */
	s = attempts_read_beneath(ws, "sub/a.md", 4, &len, &cut, &err);
	assert_int_equal(len, 4);
	assert_true(cut);
	free(s);
	close(root);
	strvec_clear(&paths);
	free(ws);
}

static void test_tool_outputs(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 3);
	char *rel, *s, *err = NULL;
	size_t len;

	rel = attempts_keep_output(d, 0, "full\noutput\n", 12);
	assert_string_equal(rel, "attempts/s1/3/tool-1.txt");
	s = attempts_read_beneath(fx->run, rel, 100, &len, NULL, &err);
	assert_string_equal(s, "full\noutput\n");
	free(s);
	free(rel);
	/* the attempt's next call goes beside it, in the folder already open */
	rel = attempts_keep_output(d, 1, "second", 6);
	assert_string_equal(rel, "attempts/s1/3/tool-2.txt");
	free(rel);
	s = testdir_slurp_in(fx->run, "attempts/s1/3/tool-2.txt");
	assert_string_equal(s, "second");
	free(s);
	attempts_dir_free(d);
	/* a leading dot cannot make a hidden or parent folder */
	s = attempts_id_component("..");
	assert_string_equal(s, "%2E.");
	free(s);
	s = attempts_id_component("a.b-c_d");
	assert_string_equal(s, "a.b-c_d");
	free(s);
}

/* An attempt's folder that is there already (a resumed run) is used as it is: its output
 * is replaced, what else it holds stays. */
static void test_existing_attempt_folder(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d;
	char *rel, *s;

	make_dir(fx->run, "attempts");
	make_dir(fx->run, "attempts/s1");
	make_dir(fx->run, "attempts/s1/1");
	put(fx->run, "attempts/s1/1/tool-1.txt", "an older, longer output");
	put(fx->run, "attempts/s1/1/note.txt", "left alone");
	d = attempts_dir_new(fx->a, "s1", 1);
	rel = attempts_keep_output(d, 0, "new", 3);
	assert_string_equal(rel, "attempts/s1/1/tool-1.txt");
	free(rel);
	attempts_dir_free(d);
	s = testdir_slurp_in(fx->run, "attempts/s1/1/tool-1.txt");
	assert_string_equal(s, "new");
	free(s);
	s = testdir_slurp_in(fx->run, "attempts/s1/1/note.txt");
	assert_string_equal(s, "left alone");
	free(s);
}

/* A FIFO put where tool-1.txt belongs keeps nothing and never hangs the worker: with no
 * reader the open fails at once; with one, the output is not sent down the pipe. */
static void test_fifo_in_place_of_an_output(void **state)
{
	struct fx *fx = *state;
	char *fifo;
	char buf[16];
	int reader;

	make_dir(fx->run, "attempts");
	make_dir(fx->run, "attempts/s1");
	make_dir(fx->run, "attempts/s1/1");
	fifo = xasprintf("%s/attempts/s1/1/tool-1.txt", fx->run);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (int with_reader = 0; with_reader < 2; with_reader++) {
		struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 1);

		reader = with_reader ? open(fifo, O_RDONLY | O_NONBLOCK) : -1;
		assert_true(!with_reader || reader >= 0);
		assert_null(attempts_keep_output(d, 0, "secret output", 13));
		if (reader >= 0) {
			assert_int_equal(read(reader, buf, sizeof(buf)), 0); /* nothing sent */
			close(reader);
		}
		attempts_dir_free(d);
	}
	free(fifo);
}

/* A symbolic link where attempts/, a step's folder or an attempt's folder belongs is not
 * followed: nothing is kept, nothing is written where it points. */
static void test_link_in_place_of_a_folder(void **state)
{
	struct fx *fx = *state;
	static const char *const links[] = {"attempts", "attempts/s1", "attempts/s1/1"};
	char *elsewhere = xasprintf("%s/elsewhere", fx->dir);
	struct strvec paths = STRVEC_INIT;
	char *ws = xasprintf("%s/ws", fx->dir), *err = NULL;
	int root = sandbox_open_root(ws, &err);

	assert_true(root >= 0);
	put(ws, "a.md", "artifact");
	strvec_push(&paths, "a.md");
	assert_int_equal(mkdir(elsewhere, 0755), 0);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		char *p = xasprintf("%s/%s", fx->run, links[i]);
		struct attempts_dir *d;

		if (i > 0)
			make_dir(fx->run, links[i - 1]);
		assert_int_equal(symlink(elsewhere, p), 0);
		d = attempts_dir_new(fx->a, "s1", 1);
		assert_null(attempts_keep_output(d, 0, "output", 6));
		assert_int_equal(attempts_keep_artifacts(d, root, &paths), 0);
		attempts_dir_free(d);
		assert_int_equal(unlink(p), 0);
		assert_int_equal(rmdir(elsewhere), 0); /* still empty */
		assert_int_equal(mkdir(elsewhere, 0755), 0);
		free(p);
	}
	close(root);
	strvec_clear(&paths);
	free(ws);
	free(elsewhere);
}

/* The run folder is opened once: moved while the run goes on, the copies follow it. */
static void test_run_folder_held_open(void **state)
{
	struct fx *fx = *state;
	char *moved = xasprintf("%s/moved", fx->dir), *rel, *s;
	struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 1);

	assert_int_equal(rename(fx->run, moved), 0);
	rel = attempts_keep_output(d, 0, "kept", 4);
	assert_non_null(rel);
	s = testdir_slurp_in(moved, rel);
	assert_string_equal(s, "kept");
	free(s);
	free(rel);
	attempts_dir_free(d);
	assert_int_equal(rename(moved, fx->run), 0);
	free(moved);
}

/* A run folder removed while the run goes on: nothing is kept (and nothing crashes), both
 * before attempts/ was first made and after. */
static void test_run_folder_removed(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d;
	char *err = NULL, *rel;
	struct attempts *later = attempts_open(fx->run, &err);

	assert_non_null(later);
	d = attempts_dir_new(fx->a, "s1", 1);
	rel = attempts_keep_output(d, 0, "first", 5); /* attempts/ made and held */
	assert_non_null(rel);
	free(rel);
	attempts_dir_free(d);
	assert_true(testdir_remove(fx->run));

	d = attempts_dir_new(fx->a, "s1", 2);
	assert_null(attempts_keep_output(d, 0, "second", 6));
	attempts_dir_free(d);
	d = attempts_dir_new(later, "s1", 2);
	assert_null(attempts_keep_output(d, 0, "second", 6));
	attempts_dir_free(d);
	attempts_close(later);
	assert_int_equal(access(fx->run, F_OK), -1);
	/* opening a run folder that is not there says so */
	assert_null(attempts_open(fx->run, &err));
	assert_non_null(strstr(err, "cannot open the run folder"));
	free(err);
	assert_int_equal(mkdir(fx->run, 0700), 0); /* for the teardown */
}

/* attempts/ alone removed while the run goes on: the next attempt makes it again. */
static void test_attempts_folder_removed(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 1);
	char *rel = attempts_keep_output(d, 0, "first", 5), *p, *s;

	assert_non_null(rel);
	free(rel);
	attempts_dir_free(d);
	p = xasprintf("%s/attempts", fx->run);
	assert_true(testdir_remove(p));
	free(p);
	d = attempts_dir_new(fx->a, "s1", 2);
	rel = attempts_keep_output(d, 0, "second", 6);
	assert_string_equal(rel, "attempts/s1/2/tool-1.txt");
	attempts_dir_free(d);
	s = testdir_slurp_in(fx->run, rel);
	assert_string_equal(s, "second");
	free(s);
	free(rel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_artifact_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_attempt_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_in_place_of_an_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_in_place_of_a_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_folder_held_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_folder_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_attempts_folder_removed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
