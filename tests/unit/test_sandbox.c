/* test_sandbox — workspace confinement: every way out is refused, with a sentence. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

struct fx {
	char top[64];   /* mkdtemp dir: holds the workspace and an "outside" folder */
	char *ws;       /* top/ws */
	char *outside;  /* top/outside, with secret.txt */
	int root;
};

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	strcpy(fx->top, "/tmp/pevtui-test-sandbox-XXXXXX");
	if (!mkdtemp(fx->top))
		return -1;
	fx->ws = xasprintf("%s/ws/deeper", fx->top);
	fx->outside = xasprintf("%s/outside", fx->top);
	mkdir(fx->outside, 0755);
	char *secret = xasprintf("%s/secret.txt", fx->outside);
	write_text(secret, "top secret");
	free(secret);
	char *err = NULL;
	fx->root = sandbox_open_root(fx->ws, &err);
	if (fx->root < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	close(fx->root);
	assert_true(testdir_remove(fx->top));
	free(fx->ws);
	free(fx->outside);
	free(fx);
	return 0;
}

static char *at(struct fx *fx, const char *rel)
{
	return xasprintf("%s/%s", fx->ws, rel);
}

/* Opens rel expecting refusal; returns the error (caller frees). */
static char *refused(struct fx *fx, const char *rel, int flags, bool mkdirs)
{
	char *err = NULL;
	int fd = sandbox_open(fx->root, rel, flags, 0644, mkdirs, &err);
	if (fd >= 0)
		close(fd);
	assert_int_equal(fd, -1);
	assert_non_null(err);
	return err;
}

static void test_check_path(void **state)
{
	(void)state;
	assert_null(sandbox_check_path("a.txt"));
	assert_null(sandbox_check_path("a//b"));
	assert_null(sandbox_check_path("./a"));
	assert_null(sandbox_check_path("."));
	assert_null(sandbox_check_path("a/./b/"));
	assert_null(sandbox_check_path("..a/b.."));
	assert_non_null(sandbox_check_path(NULL));
	assert_non_null(sandbox_check_path(""));
	assert_non_null(strstr(sandbox_check_path("/etc/passwd"), "absolute"));
	assert_non_null(strstr(sandbox_check_path(".."), "leaves the workspace"));
	assert_non_null(strstr(sandbox_check_path("a/../../x"), "leaves the workspace"));
	assert_non_null(strstr(sandbox_check_path("a/.."), "leaves the workspace"));
	assert_non_null(strstr(sandbox_check_path("a//..//b"), "leaves the workspace"));
	assert_non_null(strstr(sandbox_check_path("a\nb"), "control character"));
}

static void test_open_root_creates_parents(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	assert_int_equal(stat(fx->ws, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* a second open of an existing folder works too */
	char *err = NULL;
	int fd = sandbox_open_root(fx->ws, &err);
	assert_true(fd >= 0);
	close(fd);
	/* a file where the workspace should be is an error naming it */
	char *file = xasprintf("%s/afile", fx->top);
	write_text(file, "x");
	fd = sandbox_open_root(file, &err);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(err, "afile"));
	free(err);
	free(file);
}

static void test_plain_paths_open(void **state)
{
	struct fx *fx = *state;
	char *p = at(fx, "hello.txt");
	write_text(p, "hi");
	free(p);
	const char *ok[] = {"hello.txt", "./hello.txt", ".//hello.txt", "hello.txt/"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *err = NULL;
		int fd = sandbox_open(fx->root, ok[i], O_RDONLY, 0, false, &err);
		assert_true(fd >= 0);
		char buf[8] = {0};
		assert_int_equal(read(fd, buf, sizeof(buf) - 1), 2);
		assert_string_equal(buf, "hi");
		close(fd);
		assert_null(err);
	}
	/* "." is the workspace itself */
	char *err = NULL;
	int fd = sandbox_open(fx->root, ".", O_RDONLY | O_DIRECTORY, 0, false, &err);
	assert_true(fd >= 0);
	struct stat a, b;
	fstat(fd, &a);
	stat(fx->ws, &b);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	close(fd);
}

static void test_escape_messages(void **state)
{
	struct fx *fx = *state;
	char *err = refused(fx, "../x", O_RDONLY, false);
	assert_string_equal(err, "path \"../x\" leaves the workspace (\"..\" is not allowed)");
	free(err);

	err = refused(fx, "a/../../x", O_WRONLY | O_CREAT, true);
	assert_string_equal(err,
			    "path \"a/../../x\" leaves the workspace (\"..\" is not allowed)");
	free(err);
	/* nothing was created on the way */
	char *a = at(fx, "a");
	assert_int_equal(access(a, F_OK), -1);
	free(a);

	err = refused(fx, "/etc/passwd", O_RDONLY, false);
	assert_non_null(strstr(err, "\"/etc/passwd\" is absolute"));
	free(err);

	err = refused(fx, "..", O_RDONLY | O_DIRECTORY, false);
	assert_non_null(strstr(err, "leaves the workspace"));
	free(err);

	err = refused(fx, "", O_RDONLY, false);
	assert_non_null(strstr(err, "is empty"));
	free(err);

	err = refused(fx, NULL, O_RDONLY, false);
	assert_non_null(strstr(err, "is empty"));
	free(err);
}

static void test_long_path(void **state)
{
	struct fx *fx = *state;
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	while (sb.len <= 4096)
		strbuf_adds(&sb, "abcdefg/");
	strbuf_adds(&sb, "f");
	char *err = refused(fx, sb.buf, O_WRONLY | O_CREAT, true);
	assert_non_null(strstr(err, "longer than 4096 bytes"));
	/* the message quotes a bounded part of the path, not all of it */
	assert_true(strlen(err) < 400);
	free(err);
	char *first = at(fx, "abcdefg");
	assert_int_equal(access(first, F_OK), -1);
	free(first);
	strbuf_release(&sb);
}

static void test_symlink_to_etc(void **state)
{
	struct fx *fx = *state;
	char *l = at(fx, "etc");
	assert_int_equal(symlink("/etc", l), 0);
	free(l);

	char *err = refused(fx, "etc/passwd", O_RDONLY, false);
	assert_non_null(strstr(err, "\"etc\""));
	assert_non_null(strstr(err, "is a symbolic link; links are not followed in the workspace"));
	free(err);

	err = refused(fx, "etc", O_RDONLY | O_DIRECTORY, false);
	assert_string_equal(err, "path \"etc\" is a symbolic link; links are not followed in "
				 "the workspace");
	free(err);

	err = refused(fx, "etc/pevtui-should-not-exist", O_WRONLY | O_CREAT, true);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	assert_int_equal(access("/etc/pevtui-should-not-exist", F_OK), -1);
}

static void test_symlink_dir_in_middle(void **state)
{
	struct fx *fx = *state;
	char *p = at(fx, "a");
	mkdir(p, 0755);
	free(p);
	p = at(fx, "a/link");
	assert_int_equal(symlink(fx->outside, p), 0);
	free(p);

	char *err = refused(fx, "a/link/secret.txt", O_RDONLY, false);
	assert_string_equal(err, "\"a/link\" (in path \"a/link/secret.txt\") is a symbolic link; "
				 "links are not followed in the workspace");
	free(err);

	/* mkdirs must not create anything through the link */
	err = refused(fx, "a/link/new/file.txt", O_WRONLY | O_CREAT, true);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	char *o = xasprintf("%s/new", fx->outside);
	assert_int_equal(access(o, F_OK), -1);
	free(o);

	/* a link pointing inside the workspace is refused just the same */
	p = at(fx, "b");
	mkdir(p, 0755);
	free(p);
	p = at(fx, "inner");
	assert_int_equal(symlink("b", p), 0);
	free(p);
	err = refused(fx, "inner/x.txt", O_WRONLY | O_CREAT, true);
	assert_non_null(strstr(err, "\"inner\" (in path \"inner/x.txt\") is a symbolic link"));
	free(err);
}

static void test_symlink_to_file_inside(void **state)
{
	struct fx *fx = *state;
	char *t = at(fx, "target.txt");
	write_text(t, "original");
	char *l = at(fx, "alias.txt");
	assert_int_equal(symlink("target.txt", l), 0);

	char *err = refused(fx, "alias.txt", O_RDONLY, false);
	assert_string_equal(err, "path \"alias.txt\" is a symbolic link; links are not followed "
				 "in the workspace");
	free(err);

	err = refused(fx, "alias.txt", O_WRONLY | O_CREAT | O_TRUNC, true);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	char *content = testdir_slurp(t);
	assert_string_equal(content, "original");
	free(content);

	/* a dangling link is not created through either */
	char *d = at(fx, "dangling");
	assert_int_equal(symlink("made-by-link.txt", d), 0);
	err = refused(fx, "dangling", O_WRONLY | O_CREAT, false);
	assert_non_null(strstr(err, "symbolic link"));
	free(err);
	char *m = at(fx, "made-by-link.txt");
	assert_int_equal(access(m, F_OK), -1);
	free(m);
	free(d);
	free(t);
	free(l);
}

static void test_mkdirs(void **state)
{
	struct fx *fx = *state;
	char *err = refused(fx, "x/y/z.txt", O_WRONLY | O_CREAT, false);
	assert_string_equal(err, "path \"x/y/z.txt\" does not exist (there is no folder \"x\")");
	free(err);

	err = NULL;
	int fd = sandbox_open(fx->root, "x//y/./z.txt", O_WRONLY | O_CREAT, 0644, true, &err);
	assert_true(fd >= 0);
	assert_null(err);
	assert_int_equal(write(fd, "z", 1), 1);
	close(fd);
	char *p = at(fx, "x/y/z.txt");
	char *content = testdir_slurp(p);
	assert_string_equal(content, "z");
	free(content);
	free(p);
	p = at(fx, "x/y");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(p);

	/* with O_DIRECTORY the last folder is made too */
	fd = sandbox_open(fx->root, "m/n/", O_RDONLY | O_DIRECTORY, 0, true, &err);
	assert_true(fd >= 0);
	close(fd);
	p = at(fx, "m/n");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	free(p);

	/* a file in the middle is not a folder */
	err = refused(fx, "x/y/z.txt/w", O_WRONLY | O_CREAT, true);
	assert_non_null(strstr(err, "\"x/y/z.txt\" (in path \"x/y/z.txt/w\") is not a folder"));
	free(err);

	/* missing file without O_CREAT */
	err = refused(fx, "nope.txt", O_RDONLY, false);
	assert_string_equal(err, "path \"nope.txt\" does not exist");
	free(err);
}

static void test_fifo_refused(void **state)
{
	struct fx *fx = *state;
	char *p = at(fx, "pipe");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	/* must not block waiting for a writer */
	char *err = refused(fx, "pipe", O_RDONLY, false);
	assert_non_null(strstr(err, "is not a regular file or folder"));
	free(err);
}

/* sandbox_open_stat hands back the fstat it made, on the fast path and the walk alike. */
static void test_open_stat(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	char *p = at(fx, "five.txt"), *err = NULL;
	int fd;

	write_text(p, "12345");
	free(p);
	fd = sandbox_open_stat(fx->root, "five.txt", O_RDONLY, 0, false, &st, &err);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 5);
	close(fd);
	/* made on the way (the walk): a new empty file */
	fd = sandbox_open_stat(fx->root, "new/dir/f.txt", O_WRONLY | O_CREAT, 0644, true, &st,
			       &err);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	close(fd);
	fd = sandbox_open_stat(fx->root, "new/dir", O_RDONLY | O_DIRECTORY, 0, false, &st, &err);
	assert_true(fd >= 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	assert_null(err);
}

static void test_nonempty(void **state)
{
	struct fx *fx = *state;
	char *p = at(fx, "full.txt");
	write_text(p, "data");
	free(p);
	p = at(fx, "empty.txt");
	write_text(p, "");
	free(p);
	p = at(fx, "dir");
	mkdir(p, 0755);
	free(p);
	p = at(fx, "full-link");
	assert_int_equal(symlink("full.txt", p), 0);
	free(p);

	assert_true(sandbox_file_nonempty(fx->root, "full.txt"));
	assert_true(sandbox_file_nonempty(fx->root, "./full.txt"));
	assert_false(sandbox_file_nonempty(fx->root, "empty.txt"));
	assert_false(sandbox_file_nonempty(fx->root, "missing.txt"));
	assert_false(sandbox_file_nonempty(fx->root, "dir"));
	assert_false(sandbox_file_nonempty(fx->root, "full-link"));
	assert_false(sandbox_file_nonempty(fx->root, "../outside/secret.txt"));
	assert_false(sandbox_file_nonempty(fx->root, ""));
}

/*
 * Many random paths built from dangerous pieces, opened with O_CREAT and mkdirs: whatever
 * opens must lie inside the workspace, and nothing may appear outside it.
 */
static void test_random_paths_stay_inside(void **state)
{
	struct fx *fx = *state;
	static const char *const pieces[] = {"a", "b", "..", ".", "", "up", "in", "f.txt", "/"};
	char *p = at(fx, "up");
	assert_int_equal(symlink("..", p), 0);
	free(p);
	p = at(fx, "in");
	assert_int_equal(symlink("a", p), 0);
	free(p);
	char real_ws[4096];
	assert_non_null(realpath(fx->ws, real_ws));
	size_t ws_len = strlen(real_ws);

	srand(12345);
	int opened = 0;
	for (int i = 0; i < 3000; i++) {
		struct strbuf rel = STRBUF_INIT;
		strbuf_init(&rel);
		int n = 1 + rand() % 6;
		for (int k = 0; k < n; k++) {
			if (k)
				strbuf_addc(&rel, '/');
			strbuf_adds(&rel, pieces[rand() % 9]);
		}
		char *err = NULL;
		int flags = (rand() % 2) ? (O_WRONLY | O_CREAT) : (O_RDONLY | O_DIRECTORY);
		int fd = sandbox_open(fx->root, rel.buf, flags, 0644, true, &err);
		if (fd >= 0) {
			opened++;
			char link[64], target[4096];
			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			ssize_t len = readlink(link, target, sizeof(target) - 1);
			assert_true(len > 0);
			target[len] = '\0';
			if (strncmp(target, real_ws, ws_len) != 0 ||
			    (target[ws_len] != '\0' && target[ws_len] != '/'))
				fail_msg("\"%s\" opened %s, outside the workspace", rel.buf, target);
			close(fd);
			assert_null(err);
		} else {
			assert_non_null(err);
			assert_true(strlen(err) > 10);
		}
		free(err);
		strbuf_release(&rel);
	}
	assert_true(opened > 100); /* the test also exercised the paths that succeed */
	char *top_entries = xasprintf("%s/outside/new", fx->top);
	assert_int_equal(access(top_entries, F_OK), -1);
	free(top_entries);
	/* the only things beside ws/deeper are what setup made */
	char *parent = xasprintf("%s/ws", fx->top);
	char *a = xasprintf("%s/a", parent);
	char *f = xasprintf("%s/f.txt", parent);
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(access(f, F_OK), -1);
	char *ta = xasprintf("%s/a", fx->top);
	assert_int_equal(access(ta, F_OK), -1);
	free(ta);
	free(a);
	free(f);
	free(parent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_path),
		cmocka_unit_test_setup_teardown(test_open_root_creates_parents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_paths_open, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escape_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_to_etc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_dir_in_middle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_to_file_inside, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mkdirs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_stat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonempty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_paths_stay_inside, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
