/* test_attempts — what each attempt leaves in the run folder: artifact copies and tool
 * outputs, records of one append-only attempts.pack beneath a run folder opened once,
 * never through a link; a torn pack loads; older runs' files are read the same way. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
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

/* Entries of DIR, . and .. left out. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The copy named rel, read as the cockpit reads it; NULL when there is none. */
static char *read_copy(const char *run, const char *rel)
{
	char *err = NULL, *s;
	size_t len = 0;

	s = attempts_read(run, rel, 1024, &len, NULL, &err);
	assert_true(!s == !!err);
	free(err);
	return s;
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
	s = attempts_read(fx->run, rel, 1024, &len, &cut, &err);
	assert_non_null(s);
	assert_string_equal(s, "attempt text\n");
	assert_int_equal(len, 13);
	assert_false(cut);
	free(s);
	/* a read stops at its bound and says so */
	s = attempts_read(fx->run, rel, 4, &len, &cut, &err);
	assert_int_equal(len, 4);
	assert_true(cut);
	free(s);
	free(rel);
	s = read_copy(fx->run, "attempts/step%201/2/files/top.md");
	assert_string_equal(s, "top text\n");
	free(s);
	/* one file holds them all: no folder per step, attempt or artifact */
	assert_int_equal(count_entries(fx->run), 1);
	/* nothing else was written: not the secret, not the big file */
	assert_false(found_below(fx->run, "outside"));
	rel = attempts_artifact_path("step 1", 2, "big.txt");
	assert_null(read_copy(fx->run, rel));
	free(rel);
	/* reading never leaves its folder either */
	assert_null(attempts_read(fx->run, "../secret.txt", 1024, &len, NULL, &err));
	assert_non_null(err);
	free(err);
	err = NULL;
	/* a read beneath a folder stops at its bound and says so */
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
	char *rel, *s;

	rel = attempts_keep_output(d, 0, "full\noutput\n", 12);
	assert_string_equal(rel, "attempts/s1/3/tool-1.txt");
	s = read_copy(fx->run, rel);
	assert_string_equal(s, "full\noutput\n");
	free(s);
	free(rel);
	/* the attempt's next call goes after it, in the pack already open */
	rel = attempts_keep_output(d, 1, "second", 6);
	assert_string_equal(rel, "attempts/s1/3/tool-2.txt");
	free(rel);
	s = read_copy(fx->run, "attempts/s1/3/tool-2.txt");
	assert_string_equal(s, "second");
	free(s);
	/* a name it does not hold */
	assert_null(read_copy(fx->run, "attempts/s1/3/tool-3.txt"));
	attempts_dir_free(d);
	/* a leading dot cannot make a hidden or parent folder */
	s = attempts_id_component("..");
	assert_string_equal(s, "%2E.");
	free(s);
	s = attempts_id_component("a.b-c_d");
	assert_string_equal(s, "a.b-c_d");
	free(s);
}

/* A run kept by an older pevtui (a file per copy, tool-K.txt or tools/K.txt) is read the
 * same way; resumed, its new copies go to the pack, which then counts. */
static void test_older_layout_read(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d;
	char *rel, *s;

	make_dir(fx->run, "attempts");
	make_dir(fx->run, "attempts/s1");
	make_dir(fx->run, "attempts/s1/1");
	make_dir(fx->run, "attempts/s1/1/tools");
	put(fx->run, "attempts/s1/1/tool-1.txt", "an older output");
	put(fx->run, "attempts/s1/1/tools/2.txt", "an even older one");
	s = read_copy(fx->run, "attempts/s1/1/tool-1.txt");
	assert_string_equal(s, "an older output");
	free(s);
	s = read_copy(fx->run, "attempts/s1/1/tools/2.txt");
	assert_string_equal(s, "an even older one");
	free(s);
	d = attempts_dir_new(fx->a, "s1", 1);
	rel = attempts_keep_output(d, 0, "new", 3);
	assert_string_equal(rel, "attempts/s1/1/tool-1.txt");
	attempts_dir_free(d);
	s = read_copy(fx->run, rel);
	assert_string_equal(s, "new");
	free(s);
	free(rel);
	s = testdir_slurp_in(fx->run, "attempts/s1/1/tool-1.txt"); /* left as it was */
	assert_string_equal(s, "an older output");
	free(s);
}

/* Appends `text` to the run's pack as it is (a crash's torn record). */
static void append_raw(const char *run, const char *text)
{
	char *p = xasprintf("%s/attempts.pack", run);
	FILE *f = fopen(p, "a");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	free(p);
}

static long pack_size(const char *run)
{
	char *p = xasprintf("%s/attempts.pack", run);
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	free(p);
	return (long)st.st_size;
}

/* A pack that a crash cut in the middle of a record loads up to its last whole one; the
 * next run on it (a --resume) cuts the torn tail off before it appends. */
static void test_torn_pack_loads(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 1);
	struct attempts *again;
	char *rel, *s, *err = NULL;
	long whole;

	rel = attempts_keep_output(d, 0, "first\n", 6);
	free(rel);
	rel = attempts_keep_output(d, 1, "second", 6);
	attempts_dir_free(d);
	whole = pack_size(fx->run);
	/* torn: the header promises more than is there */
	append_raw(fx->run, "attempt-file 24 100\nattempts/s1/2/tool-1.txt\npart of it");
	s = read_copy(fx->run, rel);
	assert_string_equal(s, "second");
	free(s);
	free(rel);
	assert_null(read_copy(fx->run, "attempts/s1/2/tool-1.txt"));
	/* the process that wrote it is gone; the next one opens the pack afresh */
	attempts_close(fx->a);
	fx->a = NULL;
	again = attempts_open(fx->run, &err);
	assert_non_null(again);
	d = attempts_dir_new(again, "s1", 2);
	rel = attempts_keep_output(d, 0, "third", 5);
	attempts_dir_free(d);
	s = read_copy(fx->run, rel);
	assert_string_equal(s, "third");
	free(s);
	free(rel);
	s = read_copy(fx->run, "attempts/s1/1/tool-1.txt");
	assert_string_equal(s, "first\n");
	free(s);
	assert_int_equal(pack_size(fx->run),
			 whole + (long)strlen("attempt-file 24 5\nattempts/s1/2/tool-1.txt\nthird\n"));
	/* garbage where a header belongs ends the pack there, for readers too */
	append_raw(fx->run, "not a record\nattempt-file 24 4\nattempts/s1/3/tool-1.txt\nlost\n");
	assert_null(read_copy(fx->run, "attempts/s1/3/tool-1.txt"));
	s = read_copy(fx->run, "attempts/s1/2/tool-1.txt");
	assert_string_equal(s, "third");
	free(s);
	fx->a = again;
}

/* A FIFO put where attempts.pack belongs keeps nothing and never hangs the worker: with
 * no reader the open fails at once; with one, the output is not sent down the pipe. */
static void test_fifo_in_place_of_the_pack(void **state)
{
	struct fx *fx = *state;
	char *fifo = xasprintf("%s/attempts.pack", fx->run);
	char buf[16];
	int reader;

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
	/* nor does a reader wait on it */
	assert_null(read_copy(fx->run, "attempts/s1/1/tool-1.txt"));
	free(fifo);
}

/* A symbolic link where attempts.pack belongs is not followed: nothing is kept, nothing is
 * written where it points, and a reader does not read through it. */
static void test_link_in_place_of_the_pack(void **state)
{
	struct fx *fx = *state;
	static const char fake[] = "attempt-file 24 4\nattempts/s1/1/tool-1.txt\nfake\n";
	char *elsewhere = xasprintf("%s/elsewhere", fx->dir), *p, *s, *err = NULL;
	char *ws = xasprintf("%s/ws", fx->dir);
	struct strvec paths = STRVEC_INIT;
	int root = sandbox_open_root(ws, &err);
	struct attempts_dir *d;

	assert_true(root >= 0);
	put(ws, "a.md", "artifact");
	strvec_push(&paths, "a.md");
	put(fx->dir, "elsewhere", fake);
	p = xasprintf("%s/attempts.pack", fx->run);
	assert_int_equal(symlink(elsewhere, p), 0);
	d = attempts_dir_new(fx->a, "s1", 1);
	assert_null(attempts_keep_output(d, 0, "output", 6));
	assert_int_equal(attempts_keep_artifacts(d, root, &paths), 0);
	attempts_dir_free(d);
	assert_null(read_copy(fx->run, "attempts/s1/1/tool-1.txt"));
	s = testdir_slurp(elsewhere);
	assert_string_equal(s, fake);
	free(s);
	close(root);
	strvec_clear(&paths);
	free(p);
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
	s = read_copy(moved, rel);
	assert_string_equal(s, "kept");
	free(s);
	free(rel);
	attempts_dir_free(d);
	assert_int_equal(rename(moved, fx->run), 0);
	free(moved);
}

/* A run folder removed while the run goes on: nothing is kept (and nothing crashes), both
 * before attempts.pack was first made and after. */
static void test_run_folder_removed(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d;
	char *err = NULL, *rel;
	struct attempts *later = attempts_open(fx->run, &err);

	assert_non_null(later);
	d = attempts_dir_new(fx->a, "s1", 1);
	rel = attempts_keep_output(d, 0, "first", 5); /* attempts.pack made and held */
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

/* attempts.pack alone removed while the run goes on: the next copy makes it again. */
static void test_pack_removed(void **state)
{
	struct fx *fx = *state;
	struct attempts_dir *d = attempts_dir_new(fx->a, "s1", 1);
	char *rel = attempts_keep_output(d, 0, "first", 5), *p, *s;

	assert_non_null(rel);
	free(rel);
	attempts_dir_free(d);
	p = xasprintf("%s/attempts.pack", fx->run);
	assert_int_equal(unlink(p), 0);
	free(p);
	d = attempts_dir_new(fx->a, "s1", 2);
	rel = attempts_keep_output(d, 0, "second", 6);
	assert_string_equal(rel, "attempts/s1/2/tool-1.txt");
	attempts_dir_free(d);
	s = read_copy(fx->run, rel);
	assert_string_equal(s, "second");
	free(s);
	free(rel);
	assert_int_equal(pack_size(fx->run),
			 (long)strlen("attempt-file 24 6\nattempts/s1/2/tool-1.txt\nsecond\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_artifact_copies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tool_outputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_older_layout_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_pack_loads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_in_place_of_the_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_in_place_of_the_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_folder_held_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_folder_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pack_removed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
