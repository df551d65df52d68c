/* test_checkpoint — workspace snapshots: what is kept, what a diff says, what a restore
 * writes (and never writes outside the workspace). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "checkpoint.h"
#include "cpfix.h"
#include "pack.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

static const struct cp_file *find(const struct cp_changes *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].path, path))
			return &c->v[i];
	return NULL;
}

/* Whether the workspace's file system records when a file was born (statx btime). */
static bool fs_has_birth_time(const struct cpfix *fx)
{
	struct statx sx;

	return statx(AT_FDCWD, fx->ws, 0, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME);
}

/* An empty folder of the operator's is not the attempt's: a restore that deletes a file
 * beside it leaves it (it was born before the checkpoint). */
static void test_restore_keeps_an_old_empty_folder(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL, *dir = cpfix_at(fx, "empty");
	struct stat st;

	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(stat(dir, &st), 0);
	for (int i = 0; i < 1000; i++) { /* the file clock moves past it (bounded) */
		struct timespec now, tick = {0, 1000000L};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec ||
		    (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
			break;
		nanosleep(&tick, NULL);
	}
	cpfix_take(fx, b1, NULL);
	cpfix_put(fx, "empty/made.txt", "by the attempt\n");
	cpfix_take(fx, a1, NULL);
	assert_true(checkpoint_diff(fx->cp, b1, a1, 1 << 20, &c, &err));
	checkpoint_series_note(fx->cp, "s1", b1, a1, &c);
	cp_changes_release(&c);
	assert_true(checkpoint_series_restore(fx->cp, "s1", NULL, NULL, &err));
	assert_false(cpfix_exists(fx, "empty/made.txt"));
	assert_true(cpfix_exists(fx, "empty"));
	free(dir);
}

/* The store is the workspace's, below XDG_DATA_HOME/pevtui/stores, named by the run
 * folder's `store` file; the run folder holds no store of its own. */
static void test_store_named_by_run_folder(void **state)
{
	struct cpfix *fx = *state;
	char *store = cpfix_store(fx), *p = xasprintf("%s/HEAD", store);
	char *stores = xasprintf("%s/pevtui/stores/ws-", fx->data);
	char *own = xasprintf("%s/checkpoints.git", fx->run);
	char id[CP_ID_LEN + 1];

	cpfix_take(fx, id, NULL);
	assert_int_equal(access(p, F_OK), 0);
	assert_int_equal(strncmp(store, stores, strlen(stores)), 0);
	assert_int_not_equal(access(own, F_OK), 0);
	free(own);
	free(stores);
	free(p);
	free(store);
}

static void test_added_modified_deleted(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	const struct cp_file *f;
	char *err = NULL;
	char *p;

	cpfix_put(fx, "keep.txt", "same\n");
	cpfix_put(fx, "mod.txt", "one\ntwo\nthree\n");
	cpfix_put(fx, "gone.txt", "bye\n");
	cpfix_take(fx, a, NULL);
	cpfix_put(fx, "mod.txt", "one\nTWO\nthree\nfour\n");
	p = cpfix_at(fx, "gone.txt");
	unlink(p);
	free(p);
	p = cpfix_at(fx, "sub");
	mkdir(p, 0755);
	free(p);
	cpfix_put(fx, "sub/new.txt", "hello\n");
	cpfix_take(fx, b, NULL);

	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_null(err);
	assert_int_equal(c.n, 3);
	f = find(&c, "mod.txt");
	assert_non_null(f);
	assert_int_equal(f->change, CP_MODIFIED);
	assert_int_equal(f->plus, 2);
	assert_int_equal(f->minus, 1);
	f = find(&c, "gone.txt");
	assert_non_null(f);
	assert_int_equal(f->change, CP_DELETED);
	assert_int_equal(f->minus, 1);
	f = find(&c, "sub/new.txt");
	assert_non_null(f);
	assert_int_equal(f->change, CP_ADDED);
	assert_null(find(&c, "keep.txt"));
	assert_non_null(strstr(c.diff, "+TWO"));
	assert_non_null(strstr(c.diff, "-two"));
	assert_false(c.diff_cut);
	cp_changes_release(&c);

	/* Restore all three: back to a, and the empty sub/ folder goes too. */
	{
		struct strvec paths = STRVEC_INIT, restored = STRVEC_INIT;
		char *s;
		strvec_push(&paths, "mod.txt");
		strvec_push(&paths, "gone.txt");
		strvec_push(&paths, "sub/new.txt");
		assert_true(
		    checkpoint_restore_paths(fx->cp, a, &paths, NULL, &restored, NULL, &err));
		assert_null(err);
		assert_int_equal(restored.n, 3);
		s = cpfix_get(fx, "mod.txt");
		assert_string_equal(s, "one\ntwo\nthree\n");
		free(s);
		s = cpfix_get(fx, "gone.txt");
		assert_string_equal(s, "bye\n");
		free(s);
		assert_false(cpfix_exists(fx, "sub/new.txt"));
		/* The folder the attempt made goes too, where the file system tells when a
		 * folder was born; without that it is kept (it could be the operator's). */
		assert_int_equal(cpfix_exists(fx, "sub"), !fs_has_birth_time(fx));
		strvec_clear(&paths);
		strvec_clear(&restored);
	}

	/* The diff is bounded, and says so. */
	assert_true(checkpoint_diff(fx->cp, a, b, 40, &c, &err));
	assert_true(c.diff_cut);
	assert_true(strlen(c.diff) <= 40);
	cp_changes_release(&c);
}

static void test_modes(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	struct strvec paths = STRVEC_INIT;
	char *err = NULL, *p = cpfix_at(fx, "run.sh");
	struct stat st;

	cpfix_put(fx, "run.sh", "#!/bin/sh\necho hi\n");
	assert_int_equal(chmod(p, 0755), 0);
	cpfix_take(fx, a, NULL);
	assert_int_equal(chmod(p, 0644), 0);
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].change, CP_MODIFIED);
	assert_int_equal(c.v[0].old_mode, 0100755);
	assert_int_equal(c.v[0].new_mode, 0100644);
	cp_changes_release(&c);
	strvec_push(&paths, "run.sh");
	assert_true(checkpoint_restore_paths(fx->cp, a, &paths, NULL, NULL, NULL, &err));
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_mode & S_IXUSR);
	strvec_clear(&paths);
	free(p);
}

static void test_symlink_outside(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	char *secret = xasprintf("%s/secret.txt", fx->outside);
	char *link = cpfix_at(fx, "escape");
	struct cp_changes c;
	struct strvec paths = STRVEC_INIT;
	char *err = NULL, *s;
	char target[4096];
	ssize_t n;
	FILE *f = fopen(secret, "w");

	assert_non_null(f);
	fputs("outside\n", f);
	fclose(f);
	assert_int_equal(symlink(secret, link), 0);
	cpfix_take(fx, a, NULL);
	/* The link changes where it points; the file outside must never be written. */
	unlink(link);
	assert_int_equal(symlink("elsewhere", link), 0);
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].old_mode, 0120000);
	assert_non_null(strstr(c.diff, secret)); /* the link's target, not the file's text */
	assert_null(strstr(c.diff, "outside\n"));
	cp_changes_release(&c);

	/* A regular file in a is restored over a link: the link is replaced, not followed. */
	unlink(link);
	cpfix_put(fx, "escape", "was a file\n");
	cpfix_take(fx, b, NULL);
	unlink(link);
	assert_int_equal(symlink(secret, link), 0);
	strvec_push(&paths, "escape");
	assert_true(checkpoint_restore_paths(fx->cp, b, &paths, NULL, NULL, NULL, &err));
	assert_null(err);
	s = testdir_slurp(secret);
	assert_string_equal(s, "outside\n");
	free(s);
	s = cpfix_get(fx, "escape");
	assert_string_equal(s, "was a file\n");
	free(s);

	/* And a link is restored as a link. */
	assert_true(checkpoint_restore_paths(fx->cp, a, &paths, NULL, NULL, NULL, &err));
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, secret);
	s = testdir_slurp(secret);
	assert_string_equal(s, "outside\n");
	free(s);

	/* A folder on the way that became a link is not followed either. */
	{
		char *dir = cpfix_at(fx, "d");
		char id[CP_ID_LEN + 1];
		struct strvec one = STRVEC_INIT;
		char *outfile = xasprintf("%s/x.txt", fx->outside);
		mkdir(dir, 0755);
		cpfix_put(fx, "d/x.txt", "inside\n");
		cpfix_take(fx, id, NULL);
		char *xf = cpfix_at(fx, "d/x.txt");
		unlink(xf);
		free(xf);
		rmdir(dir);
		assert_int_equal(symlink(fx->outside, dir), 0);
		strvec_push(&one, "d/x.txt");
		assert_false(checkpoint_restore_paths(fx->cp, id, &one, NULL, NULL, NULL, &err));
		assert_non_null(err);
		free(err);
		err = NULL;
		assert_int_equal(access(outfile, F_OK), -1);
		strvec_clear(&one);
		free(outfile);
		free(dir);
	}
	strvec_clear(&paths);
	free(secret);
	free(link);
}

static void test_refuses_escaping_paths(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1];
	struct strvec paths = STRVEC_INIT;
	char *err = NULL;
	char *victim = xasprintf("%s/victim", fx->top);
	FILE *f = fopen(victim, "w");

	assert_non_null(f);
	fclose(f);
	cpfix_take(fx, a, NULL);
	strvec_push(&paths, "../victim");
	strvec_push(&paths, "/etc/passwd");
	assert_false(checkpoint_restore_paths(fx->cp, a, &paths, NULL, NULL, NULL, &err));
	assert_non_null(err);
	free(err);
	assert_int_equal(access(victim, F_OK), 0);
	strvec_clear(&paths);
	free(victim);
}

/* Every byte and time of a folder, for "untouched" checks. */
static void fingerprint(const char *dir, struct strbuf *out)
{
	struct strvec names = STRVEC_INIT;
	char *cmd = xasprintf("cd '%s' && find . -print0 | sort -z | xargs -0 stat -c '%%n %%s %%Y "
	                      "%%y %%a' && find . -type f -print0 | sort -z | xargs -0 cat | "
	                      "md5sum",
	                      dir);
	FILE *p = popen(cmd, "r");
	char buf[4096];
	size_t n;

	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(out, buf, n);
	pclose(p);
	free(cmd);
	strvec_clear(&names);
}

static void test_git_workspace_untouched(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	char *gitdir = cpfix_at(fx, ".git"), *hooks = cpfix_at(fx, ".git/hooks");
	char *nested = cpfix_at(fx, "lib");
	char *nested_git = cpfix_at(fx, "lib/.git");
	struct strbuf before = STRBUF_INIT, after = STRBUF_INIT;
	struct cp_changes c;
	struct strvec paths = STRVEC_INIT;
	char *err = NULL;

	strbuf_init(&before);
	strbuf_init(&after);
	mkdir(gitdir, 0755);
	mkdir(hooks, 0755);
	mkdir(nested, 0755);
	cpfix_put(fx, "lib/.git", "gitdir: ../.git/modules/lib\n");
	cpfix_put(fx, ".git/HEAD", "ref: refs/heads/main\n");
	cpfix_put(fx, ".git/config", "[core]\n\tbare = false\n");
	cpfix_put(fx, ".git/index", "DIRC\001\002binary");
	cpfix_put(fx, ".git/hooks/pre-commit", "#!/bin/sh\nexit 1\n");
	cpfix_put(fx, "file.txt", "v1\n");
	cpfix_put(fx, "lib/code.c", "int x;\n");
	fingerprint(gitdir, &before);
	cpfix_take(fx, a, NULL);
	cpfix_put(fx, "file.txt", "v2\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].path, "file.txt");
	cp_changes_release(&c);
	strvec_push(&paths, "file.txt");
	strvec_push(&paths, "lib/code.c");
	assert_true(checkpoint_restore_paths(fx->cp, a, &paths, NULL, NULL, NULL, &err));
	fingerprint(gitdir, &after);
	assert_string_equal(before.buf, after.buf);
	{
		char *s = cpfix_get(fx, "lib/.git");
		assert_string_equal(s, "gitdir: ../.git/modules/lib\n");
		free(s);
	}
	/* Nothing named .git is ever in a checkpoint: changing one changes nothing. */
	cpfix_put(fx, ".git/HEAD", "ref: refs/heads/other\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 0);
	cp_changes_release(&c);
	strvec_clear(&paths);
	strbuf_release(&before);
	strbuf_release(&after);
	free(gitdir);
	free(hooks);
	free(nested);
	free(nested_git);
}

static void test_gitignore(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL, *d = cpfix_at(fx, "build");

	cpfix_put(fx, ".gitignore", "*.log\nbuild/\n");
	mkdir(d, 0755);
	cpfix_take(fx, a, NULL);
	cpfix_put(fx, "debug.log", "noise\n");
	cpfix_put(fx, "build/out.o", "obj\n");
	cpfix_put(fx, "real.txt", "kept\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].path, "real.txt");
	cp_changes_release(&c);
	free(d);
}

static void test_too_large(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct strvec warnings = STRVEC_INIT, paths = STRVEC_INIT;
	struct cp_changes c;
	char *err = NULL, *s;

	checkpoint_set_limits(fx->cp, 10, 0);
	cpfix_put(fx, "small.txt", "tiny\n");
	cpfix_take(fx, a, NULL);
	cpfix_put(fx, "big.bin", "far more than ten bytes\n");
	cpfix_take(fx, b, &warnings);
	assert_int_equal(warnings.n, 1);
	assert_non_null(strstr(warnings.v[0], "big.bin"));
	assert_non_null(strstr(warnings.v[0], "limit"));
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 0);
	cp_changes_release(&c);
	/* Left out of b is not deleted in b: restoring b never removes it. */
	strvec_push(&paths, "big.bin");
	assert_true(checkpoint_restore_paths(fx->cp, b, &paths, NULL, NULL, NULL, &err));
	s = cpfix_get(fx, "big.bin");
	assert_non_null(s);
	free(s);
	strvec_clear(&paths);
	strvec_clear(&warnings);
}

static void test_binary(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL, *p = cpfix_at(fx, "blob.bin");
	FILE *f;

	cpfix_take(fx, a, NULL);
	f = fopen(p, "wb");
	fwrite("\0\1\2\3\0", 1, 5, f);
	fclose(f);
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_true(c.v[0].binary);
	assert_int_equal(c.v[0].new_size, 5);
	assert_non_null(strstr(c.diff, "Binary file blob.bin added: 0 bytes -> 5 bytes"));
	cp_changes_release(&c);
	free(p);
}

/* A step's retries start from where its first attempt started; another step's change to
 * the same file is left alone and reported. */
static void test_series(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1], b2[CP_ID_LEN + 1], a2[CP_ID_LEN + 1];
	struct cp_changes c;
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL, *s;

	cpfix_put(fx, "notes.txt", "start\n");
	cpfix_put(fx, "shared.txt", "base\n");
	cpfix_take(fx, b1, NULL);
	cpfix_put(fx, "notes.txt", "start\nline\n");
	cpfix_put(fx, "shared.txt", "mine\n");
	cpfix_take(fx, a1, NULL);
	assert_true(checkpoint_diff(fx->cp, b1, a1, 1 << 20, &c, &err));
	checkpoint_series_note(fx->cp, "s1", b1, a1, &c);
	cp_changes_release(&c);

	cpfix_put(fx, "shared.txt", "theirs\n"); /* another step, in parallel */
	assert_true(checkpoint_series_restore(fx->cp, "s1", &restored, &conflicts, &err));
	assert_null(err);
	assert_int_equal(restored.n, 1);
	assert_string_equal(restored.v[0], "notes.txt");
	assert_int_equal(conflicts.n, 1);
	assert_string_equal(conflicts.v[0], "shared.txt");
	s = cpfix_get(fx, "notes.txt");
	assert_string_equal(s, "start\n");
	free(s);
	s = cpfix_get(fx, "shared.txt");
	assert_string_equal(s, "theirs\n");
	free(s);

	/* Second attempt appends again: restored again, to one line. */
	cpfix_take(fx, b2, NULL);
	cpfix_put(fx, "notes.txt", "start\nline\n");
	cpfix_take(fx, a2, NULL);
	assert_true(checkpoint_diff(fx->cp, b2, a2, 1 << 20, &c, &err));
	checkpoint_series_note(fx->cp, "s1", b2, a2, &c);
	cp_changes_release(&c);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
	assert_true(checkpoint_series_restore(fx->cp, "s1", &restored, &conflicts, &err));
	assert_int_equal(conflicts.n, 0);
	s = cpfix_get(fx, "notes.txt");
	assert_string_equal(s, "start\n");
	free(s);

	checkpoint_series_end(fx->cp, "s1");
	assert_false(checkpoint_series_restore(fx->cp, "s1", NULL, NULL, &err));
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/*
 * A step that edits .gitignore makes an ignored file of the operator's look added; a retry
 * must not delete it. A restored file keeps the permissions it has (a 0600 file stays
 * 0600), and a file the attempt really created is removed.
 */
static void test_restore_keeps_old_files_and_modes(void **state)
{
	struct cpfix *fx = *state;
	char b1[CP_ID_LEN + 1], a1[CP_ID_LEN + 1];
	struct cp_changes c;
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL, *s, *p;
	struct stat st;

	cpfix_put(fx, ".gitignore", "*.log\n");
	cpfix_put(fx, "notes.log", "the operator's\n");
	cpfix_put(fx, "secret.env", "k=v\n");
	p = cpfix_at(fx, "secret.env");
	assert_int_equal(chmod(p, 0600), 0);
	/* The operator's files are older than the checkpoint: wait for the file clock to
	 * move past them (a state, bounded), as it has for any file made before a run. */
	assert_int_equal(stat(p, &st), 0);
	for (int i = 0; i < 1000; i++) {
		struct timespec now, tick = {0, 1000000L};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec ||
		    (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
			break;
		nanosleep(&tick, NULL);
	}
	cpfix_take(fx, b1, NULL);
	cpfix_put(fx, ".gitignore", "build/\n"); /* the attempt: notes.log is no longer ignored */
	cpfix_put(fx, "secret.env", "k=changed\n");
	cpfix_put(fx, "made.txt", "by the attempt\n");
	cpfix_take(fx, a1, NULL);
	assert_true(checkpoint_diff(fx->cp, b1, a1, 1 << 20, &c, &err));
	assert_non_null(find(&c, "notes.log")); /* looks added */
	checkpoint_series_note(fx->cp, "s1", b1, a1, &c);
	cp_changes_release(&c);

	assert_true(checkpoint_series_restore(fx->cp, "s1", &restored, &conflicts, &err));
	assert_null(err);
	s = cpfix_get(fx, "notes.log");
	assert_string_equal(s, "the operator's\n");
	free(s);
	assert_false(cpfix_exists(fx, "made.txt"));
	s = cpfix_get(fx, "secret.env");
	assert_string_equal(s, "k=v\n");
	free(s);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	s = cpfix_get(fx, ".gitignore");
	assert_string_equal(s, "*.log\n");
	free(s);
	free(p);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* Two steps' attempts overlap: what changed meanwhile is neither's to restore. */
static void test_parallel_overlap(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	struct cp_changes c;
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL, *s;

	assert_true(checkpoint_take_step(fx->cp, "A", true, ab, NULL, &err));
	cpfix_put(fx, "a-alone.txt", "A wrote this alone\n");
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	cpfix_put(fx, "b.txt", "B wrote this while A ran\n");
	assert_true(checkpoint_take_step(fx->cp, "A", false, aa, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_true(checkpoint_diff(fx->cp, ab, aa, 1 << 20, &c, &err));
	assert_int_equal(c.n, 2); /* A's window saw both files */
	/* b.txt changed while both ran: neither's alone; a-alone.txt before B started. */
	assert_true(checkpoint_path_shared(fx->cp, "A", "b.txt"));
	assert_true(checkpoint_path_shared(fx->cp, "B", "b.txt"));
	assert_false(checkpoint_path_shared(fx->cp, "A", "a-alone.txt"));
	checkpoint_series_note(fx->cp, "A", ab, aa, &c);
	cp_changes_release(&c);

	assert_true(checkpoint_series_restore(fx->cp, "A", &restored, &conflicts, &err));
	assert_int_equal(restored.n, 1);
	assert_string_equal(restored.v[0], "a-alone.txt");
	assert_int_equal(conflicts.n, 1);
	assert_string_equal(conflicts.v[0], "b.txt");
	assert_false(cpfix_exists(fx, "a-alone.txt"));
	s = cpfix_get(fx, "b.txt");
	assert_string_equal(s, "B wrote this while A ran\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* What changed while two attempts overlapped (found from the snapshots' folders in
 * memory): a changed file, a folder gone and one come, a file become a folder and a folder
 * become a file, a new link, a mode; what did not change is not shared. */
static void test_overlap_paths(void **state)
{
	static const char *const want[] = {"d/x.txt", "d/gone/y.txt", "f", "f/z.txt", "g",
	                                   "g/w.txt", "l", "m.sh", "new/deep/n.txt"};
	struct cpfix *fx = *state;
	char id[4][CP_ID_LEN + 1];
	char *err = NULL, *p;
	char *dirs[] = {cpfix_at(fx, "d"), cpfix_at(fx, "d/gone"), cpfix_at(fx, "g"), cpfix_at(fx, "new"),
	                cpfix_at(fx, "new/deep")};
	char *f = cpfix_at(fx, "f"), *g = cpfix_at(fx, "g"), *l = cpfix_at(fx, "l"), *m = cpfix_at(fx, "m.sh");

	assert_int_equal(mkdir(dirs[0], 0700), 0);
	assert_int_equal(mkdir(dirs[1], 0700), 0);
	assert_int_equal(mkdir(dirs[2], 0700), 0);
	cpfix_put(fx, "d/x.txt", "x\n");
	cpfix_put(fx, "d/keep.txt", "keep\n");
	cpfix_put(fx, "d/gone/y.txt", "y\n");
	cpfix_put(fx, "f", "a file\n");
	cpfix_put(fx, "g/w.txt", "w\n");
	cpfix_put(fx, "m.sh", "echo\n");
	assert_int_equal(chmod(m, 0600), 0);
	cpfix_put(fx, "same.txt", "same\n");
	assert_true(checkpoint_take_step(fx->cp, "A", true, id[0], NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", true, id[1], NULL, &err));
	cpfix_put(fx, "d/x.txt", "x changed\n");
	p = cpfix_at(fx, "d/gone/y.txt");
	assert_int_equal(unlink(p), 0);
	free(p);
	assert_int_equal(rmdir(dirs[1]), 0);
	assert_int_equal(unlink(f), 0);
	assert_int_equal(mkdir(f, 0700), 0);
	cpfix_put(fx, "f/z.txt", "z\n");
	p = cpfix_at(fx, "g/w.txt");
	assert_int_equal(unlink(p), 0);
	free(p);
	assert_int_equal(rmdir(g), 0);
	cpfix_put(fx, "g", "now a file\n");
	assert_int_equal(symlink("same.txt", l), 0);
	assert_int_equal(chmod(m, 0700), 0);
	assert_int_equal(mkdir(dirs[3], 0700), 0);
	assert_int_equal(mkdir(dirs[4], 0700), 0);
	cpfix_put(fx, "new/deep/n.txt", "n\n");
	assert_true(checkpoint_take_step(fx->cp, "A", false, id[2], NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", false, id[3], NULL, &err));
	assert_null(err);
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		assert_true(checkpoint_path_shared(fx->cp, "A", want[i]));
		assert_true(checkpoint_path_shared(fx->cp, "B", want[i]));
	}
	assert_false(checkpoint_path_shared(fx->cp, "A", "d/keep.txt"));
	assert_false(checkpoint_path_shared(fx->cp, "A", "same.txt"));
	assert_false(checkpoint_path_shared(fx->cp, "A", "d"));
	assert_false(checkpoint_path_shared(fx->cp, "A", "new"));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		free(dirs[i]);
	free(f);
	free(g);
	free(l);
	free(m);
}

/* Whose change a path is while attempts overlap, by what each step said its tools write:
 * a file only A said it writes is A's alone (not in B's changes, not shared); one that B
 * might have written too (B ran a command: anything) is shared; one nobody said they write
 * (the operator's) is shared; a path said as "./sub//x" is the snapshot's "sub/x". */
static void test_attribution(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	char *err = NULL, *sub = cpfix_at(fx, "sub");
	struct cp_changes c;

	assert_int_equal(mkdir(sub, 0700), 0);
	assert_true(checkpoint_take_step(fx->cp, "A", true, ab, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	checkpoint_step_writes(fx->cp, "A", "./sub//a.txt");
	checkpoint_step_writes(fx->cp, "B", "b.txt");
	cpfix_put(fx, "sub/a.txt", "A's\n");
	cpfix_put(fx, "b.txt", "B's\n");
	cpfix_put(fx, "op.txt", "the operator's\n");
	/* a checkpoint between (a third step starting) sees them change while A and B ran */
	assert_true(checkpoint_take_step(fx->cp, "C", true, ab, NULL, &err));
	checkpoint_step_writes_any(fx->cp, "C");
	cpfix_put(fx, "sub/a.txt", "A's again\n"); /* now C might have too */
	assert_true(checkpoint_take_step(fx->cp, "A", false, aa, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_null(err);

	assert_false(checkpoint_path_shared(fx->cp, "B", "b.txt"));
	assert_true(checkpoint_path_shared(fx->cp, "A", "op.txt"));
	assert_true(checkpoint_path_shared(fx->cp, "B", "op.txt"));
	assert_true(checkpoint_path_shared(fx->cp, "A", "sub/a.txt")); /* C ran a command */
	assert_true(checkpoint_diff_step(fx->cp, "B", bb, ba, 1 << 20, &c, &err));
	assert_int_equal(c.n, 3); /* b.txt, op.txt, and sub/a.txt (shared since C) */
	assert_string_equal(c.v[0].path, "b.txt");
	assert_string_equal(c.v[1].path, "op.txt");
	assert_string_equal(c.v[2].path, "sub/a.txt");
	assert_null(strstr(c.diff, "A's\n"));
	cp_changes_release(&c);
	/* B's whole window, without what A alone wrote: checkpoint_diff has it all */
	assert_true(checkpoint_diff(fx->cp, bb, ba, 1 << 20, &c, &err));
	assert_int_equal(c.n, 3);
	cp_changes_release(&c);
	free(sub);
}

/* A path another step alone changed earlier in A's attempt is A's too once A says it
 * writes it: A's later write must not be left out of A's changes (it is shared). */
static void test_attribution_foreign_then_own(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	char *err = NULL;
	struct cp_changes c;

	assert_true(checkpoint_take_step(fx->cp, "A", true, ab, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	checkpoint_step_writes(fx->cp, "B", "p.txt");
	cpfix_put(fx, "p.txt", "B's\n");
	checkpoint_step_writes_any(fx->cp, "B");
	cpfix_put(fx, "q.txt", "B's\n");
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	/* B is done; A now writes p.txt, and runs a command that may write anything */
	checkpoint_step_writes(fx->cp, "A", "p.txt");
	cpfix_put(fx, "p.txt", "A's\n");
	checkpoint_step_writes_any(fx->cp, "A");
	cpfix_put(fx, "q.txt", "A's\n");
	assert_true(checkpoint_take_step(fx->cp, "A", false, aa, NULL, &err));
	assert_null(err);
	assert_true(checkpoint_diff_step(fx->cp, "A", ab, aa, 1 << 20, &c, &err));
	assert_int_equal(c.n, 2);
	assert_string_equal(c.v[0].path, "p.txt");
	assert_string_equal(c.v[1].path, "q.txt");
	assert_non_null(strstr(c.diff, "A's"));
	cp_changes_release(&c);
	/* B changed them too while A ran: whose they are is not known */
	assert_true(checkpoint_path_shared(fx->cp, "A", "p.txt"));
	assert_true(checkpoint_path_shared(fx->cp, "A", "q.txt"));
}

/* Before C ran its command, a file only A said it writes is not B's change at all. */
static void test_attribution_foreign(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	char *err = NULL;
	struct cp_changes c;

	assert_true(checkpoint_take_step(fx->cp, "A", true, ab, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	checkpoint_step_writes(fx->cp, "A", "a.txt");
	checkpoint_step_writes(fx->cp, "B", "b.txt");
	cpfix_put(fx, "a.txt", "A's\n");
	cpfix_put(fx, "b.txt", "B's\n");
	assert_true(checkpoint_take_step(fx->cp, "A", false, aa, NULL, &err));
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_null(err);
	assert_false(checkpoint_path_shared(fx->cp, "A", "a.txt"));
	assert_false(checkpoint_path_shared(fx->cp, "B", "b.txt"));
	assert_true(checkpoint_diff_step(fx->cp, "A", ab, aa, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1); /* b.txt changed before A's after too, but B alone said so */
	assert_string_equal(c.v[0].path, "a.txt");
	cp_changes_release(&c);
	assert_true(checkpoint_diff_step(fx->cp, "B", bb, ba, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].path, "b.txt");
	assert_null(strstr(c.diff, "A's"));
	checkpoint_series_note(fx->cp, "B", bb, ba, &c);
	cp_changes_release(&c);
	/* B's retry restores b.txt only: a.txt is A's */
	{
		struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
		char *s;
		assert_true(checkpoint_series_restore(fx->cp, "B", &restored, &conflicts, &err));
		assert_int_equal(restored.n, 1);
		assert_string_equal(restored.v[0], "b.txt");
		s = cpfix_get(fx, "a.txt");
		assert_string_equal(s, "A's\n");
		free(s);
		strvec_clear(&restored);
		strvec_clear(&conflicts);
	}
	/* a new attempt of B forgets what the last one was told */
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	cpfix_put(fx, "a.txt", "changed again\n");
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_true(checkpoint_diff_step(fx->cp, "B", bb, ba, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].path, "a.txt"); /* B alone ran: its window's change */
	cp_changes_release(&c);
}

/* A's retry undoes x.txt while B runs: B sees that as its own change, but it is not B's
 * to restore — B's retry must not write back what A's retry undid. */
static void test_restore_beside_a_running_step(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	struct cp_changes c;
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	char *err = NULL;

	cpfix_attempt(fx, "A", "x.txt", "A's rejected work\n", ab, aa);

	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	assert_true(checkpoint_series_restore(fx->cp, "A", &restored, &conflicts, &err));
	assert_false(cpfix_exists(fx, "x.txt")); /* A's retry starts clean */
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_true(checkpoint_diff(fx->cp, bb, ba, 1 << 20, &c, &err));
	assert_non_null(find(&c, "x.txt")); /* B's window saw the restore */
	checkpoint_series_note(fx->cp, "B", bb, ba, &c);
	cp_changes_release(&c);

	strvec_clear(&restored);
	strvec_clear(&conflicts);
	assert_true(checkpoint_series_restore(fx->cp, "B", &restored, &conflicts, &err));
	assert_false(cpfix_exists(fx, "x.txt"));
	assert_int_equal(conflicts.n, 1);
	assert_string_equal(conflicts.v[0], "x.txt");
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

static void test_unknown_id(void **state)
{
	struct cpfix *fx = *state;
	struct cp_changes c;
	char *err = NULL;

	assert_false(checkpoint_diff(fx->cp, "nope", "0000000000000000000000000000000000000000", 10,
	                             &c, &err));
	assert_non_null(err);
	free(err);
}

/* Reopening the store (a resumed run) finds the earlier checkpoints. */
static void test_reopen(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL;

	cpfix_put(fx, "x.txt", "1\n");
	cpfix_take(fx, a, NULL);
	checkpoint_close(fx->cp);
	fx->cp = checkpoint_open(fx->run, fx->ws, &err);
	assert_non_null(fx->cp);
	cpfix_put(fx, "x.txt", "2\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	cp_changes_release(&c);
}

/* A rewrite that keeps the size and puts the old modification time back is still seen:
 * the cache trusts a file's stat only with its change time (which no one can set back). */
static void test_same_stat_rewrite_seen(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1], c_id[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL, *p = cpfix_at(fx, "same.txt");
	struct stat st;
	struct timespec times[2];

	cpfix_put(fx, "same.txt", "aaaa\n");
	cpfix_take(fx, a, NULL);
	cpfix_take(fx, b, NULL); /* the file is in the cache now */
	assert_int_equal(stat(p, &st), 0);
	cpfix_put(fx, "same.txt", "bbbb\n");
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, p, times, 0), 0);
	cpfix_take(fx, c_id, NULL);
	assert_true(checkpoint_diff(fx->cp, b, c_id, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].change, CP_MODIFIED);
	assert_non_null(strstr(c.diff, "+bbbb"));
	cp_changes_release(&c);
	free(p);
}

/* The objects the store's packs hold, and how many packs there are. */
static size_t count_objects(const struct cpfix *fx, size_t *packs)
{
	char *store = cpfix_store(fx), *dir = xasprintf("%s/objects/pack", store);
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	*packs = 0;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name), k = 0;
		char *idx;
		unsigned char *ids;
		if (len < 4 || strcmp(e->d_name + len - 4, ".idx") || e->d_name[0] == 't')
			continue;
		idx = xasprintf("%s/%s", dir, e->d_name);
		ids = pack_idx_read(idx, &k);
		assert_non_null(ids);
		n += k;
		(*packs)++;
		free(ids);
		free(idx);
	}
	closedir(d);
	free(dir);
	free(store);
	return n;
}

/* An unchanged workspace costs nothing: the last checkpoint serves again (same id, no
 * object written). One changed file costs its blob, the trees on its way and the commit. */
static void test_unchanged_stores_nothing_again(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	char *d = cpfix_at(fx, "sub");
	size_t n, packs;

	assert_int_equal(mkdir(d, 0700), 0);
	cpfix_put(fx, "top.txt", "top\n");
	cpfix_put(fx, "sub/one.txt", "one\n");
	cpfix_put(fx, "sub/two.txt", "two\n");
	cpfix_take(fx, a, NULL);
	n = count_objects(fx, &packs);
	assert_int_equal(n, 6); /* 3 blobs, 2 trees, 1 commit */
	assert_int_equal(packs, 1);
	cpfix_take(fx, b, NULL);
	assert_string_equal(b, a);
	assert_int_equal(count_objects(fx, &packs), n);
	assert_int_equal(packs, 1); /* not even a commit */
	cpfix_put(fx, "top.txt", "changed\n");
	cpfix_take(fx, b, NULL);
	assert_string_not_equal(b, a);
	assert_int_equal(count_objects(fx, &packs), n + 3);
	assert_int_equal(packs, 2); /* the blob, the root tree, the commit */
	free(d);
}

/* The workspace's .gitattributes (a step may write one) does not change what a diff
 * shows: text stays text for the verifier and the operator. */
static void test_gitattributes_not_obeyed(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL;

	cpfix_put(fx, ".gitattributes", "* binary -diff\n");
	cpfix_put(fx, "claim.txt", "old\n");
	cpfix_take(fx, a, NULL);
	cpfix_put(fx, "claim.txt", "new\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_false(c.v[0].binary);
	assert_int_equal(c.v[0].plus, 1);
	assert_non_null(strstr(c.diff, "+new"));
	cp_changes_release(&c);
}

/* The store's trees are git's own: rebuilt by libgit2's tree builder from the entries it
 * reads back, each folder's tree gets the same id (so the order of names, folder names
 * sorting as if they ended in '/', and the modes are git's). */
static void check_tree(git_repository *repo, const git_oid *id)
{
	git_tree *tree = NULL;
	git_treebuilder *tb = NULL;
	git_oid again;

	assert_int_equal(git_tree_lookup(&tree, repo, id), 0);
	assert_int_equal(git_treebuilder_new(&tb, repo, NULL), 0);
	for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);
		assert_int_equal(git_treebuilder_insert(NULL, tb, git_tree_entry_name(e),
		                                        git_tree_entry_id(e),
		                                        git_tree_entry_filemode(e)),
		                 0);
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
			check_tree(repo, git_tree_entry_id(e));
	}
	assert_int_equal(git_treebuilder_write(&again, tb), 0);
	assert_true(git_oid_equal(&again, id));
	git_treebuilder_free(tb);
	git_tree_free(tree);
}

static void test_trees_are_gits(void **state)
{
	struct cpfix *fx = *state;
	char id[CP_ID_LEN + 1];
	char *store = cpfix_store(fx), *p;
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	git_oid oid;

	for (const char *const *d = (const char *const[]){"sub", "sub.d", "sub/deep", NULL}; *d;
	     d++) {
		p = cpfix_at(fx, *d);
		assert_int_equal(mkdir(p, 0700), 0);
		free(p);
	}
	cpfix_put(fx, "a", "a\n");
	cpfix_put(fx, "sub-z", "z\n");
	cpfix_put(fx, "sub/x", "x\n");
	cpfix_put(fx, "sub/deep/y", "y\n");
	cpfix_put(fx, "sub.d/w", "w\n");
	cpfix_put(fx, "sub0", "0\n");
	p = cpfix_at(fx, "sub-z");
	assert_int_equal(chmod(p, 0755), 0);
	free(p);
	p = cpfix_at(fx, "link");
	assert_int_equal(symlink("sub/x", p), 0);
	free(p);
	cpfix_take(fx, id, NULL);
	git_libgit2_init();
	assert_int_equal(git_repository_open_bare(&repo, store), 0);
	assert_int_equal(git_oid_fromstr(&oid, id), 0);
	assert_int_equal(git_commit_lookup(&commit, repo, &oid), 0);
	check_tree(repo, git_commit_tree_id(commit));
	git_commit_free(commit);
	git_repository_free(repo);
	git_libgit2_shutdown();
	free(store);
}

/* [checkpoints] exclude: names at any depth, rooted paths, folders only; what is left out
 * is neither compared nor restored, and the checkpoint names it. */
static void test_exclude(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct strvec pats = STRVEC_INIT, restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	struct cp_changes c;
	char *err = NULL;

	for (const char *const *d =
	         (const char *const[]){"node_modules", "sub", "sub/build", "build", "docs",
	                               "docs/tmp", NULL};
	     *d; d++) {
		char *p = cpfix_at(fx, *d);
		assert_int_equal(mkdir(p, 0700), 0);
		free(p);
	}
	strvec_push(&pats, "node_modules/");
	strvec_push(&pats, "*.log");
	strvec_push(&pats, "/build");
	strvec_push(&pats, "docs/tmp");
	checkpoint_set_exclude(fx->cp, &pats);
	cpfix_put(fx, "node_modules/dep.js", "1\n");
	cpfix_put(fx, "x.log", "1\n");
	cpfix_put(fx, "sub/y.log", "1\n");
	cpfix_put(fx, "build/out", "1\n");
	cpfix_put(fx, "sub/build/kept", "1\n");
	cpfix_put(fx, "docs/tmp/t", "1\n");
	cpfix_put(fx, "docs/kept.md", "1\n");
	cpfix_put(fx, "sub/node_modules", "a file, not a folder\n");
	cpfix_take(fx, a, NULL);
	for (const char *const *f =
	         (const char *const[]){"node_modules/dep.js", "x.log", "sub/y.log", "build/out",
	                               "sub/build/kept", "docs/tmp/t", "docs/kept.md",
	                               "sub/node_modules", NULL};
	     *f; f++)
		cpfix_put(fx, *f, "2\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_null(err);
	assert_int_equal(c.n, 3);
	assert_non_null(find(&c, "docs/kept.md"));
	assert_non_null(find(&c, "sub/build/kept"));
	assert_non_null(find(&c, "sub/node_modules"));
	assert_int_equal(c.n_excluded, 5);
	assert_int_equal(c.excluded.n, 5);
	{
		const char *want[] = {"build/", "docs/tmp/", "node_modules/", "sub/y.log", "x.log"};
		for (size_t i = 0; i < 5; i++) {
			bool seen = false;
			for (size_t k = 0; k < c.excluded.n; k++)
				seen = seen || !strcmp(c.excluded.v[k], want[i]);
			assert_true(seen);
		}
	}
	/* A restore of every path to `a` leaves the excluded ones as they are now. */
	{
		struct strvec paths = STRVEC_INIT;
		char *s;
		strvec_push(&paths, "x.log");
		strvec_push(&paths, "docs/kept.md");
		checkpoint_restore_paths(fx->cp, a, &paths, NULL, &restored, &conflicts, &err);
		free(err);
		err = NULL;
		s = cpfix_get(fx, "x.log");
		assert_string_equal(s, "2\n");
		free(s);
		s = cpfix_get(fx, "docs/kept.md");
		assert_string_equal(s, "1\n");
		free(s);
		strvec_clear(&paths);
	}
	cp_changes_release(&c);
	strvec_clear(&pats);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* Names a step may well create — a newline, invalid UTF-8, a leading dash, spaces — are
 * stored, compared and restored like any other (git's trees take any byte but NUL and
 * '/'). */
static void test_odd_names(void **state)
{
	struct cpfix *fx = *state;
	const char *names[] = {"line\nbreak.txt", "bad\xff\xfe.txt", "-dash", "with space"};
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct strvec paths = STRVEC_INIT, restored = STRVEC_INIT, conflicts = STRVEC_INIT;
	struct cp_changes c;
	char *err = NULL;

	for (size_t i = 0; i < 4; i++)
		cpfix_put(fx, names[i], "before\n");
	cpfix_take(fx, a, NULL);
	for (size_t i = 0; i < 4; i++)
		cpfix_put(fx, names[i], "after\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_non_null(find(&c, names[i]));
		strvec_push(&paths, names[i]);
	}
	cp_changes_release(&c);
	assert_true(checkpoint_restore_paths(fx->cp, a, &paths, NULL, &restored, &conflicts, &err));
	assert_int_equal(restored.n, 4);
	for (size_t i = 0; i < 4; i++) {
		char *t = cpfix_get(fx, names[i]);
		assert_string_equal(t, "before\n");
		free(t);
	}
	strvec_clear(&paths);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
}

/* The workspace vanished (deleted, unmounted): the checkpoint fails with a sentence that
 * names it, and the store is no worse for it (an earlier checkpoint still reads). */
static void test_workspace_vanished(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	struct cp_changes c;
	char *err = NULL, *moved = xasprintf("%s.gone", fx->ws);

	cpfix_put(fx, "x.txt", "x\n");
	cpfix_take(fx, a, NULL);
	assert_int_equal(rename(fx->ws, moved), 0);
	assert_false(checkpoint_take(fx->cp, b, NULL, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "cannot open the workspace"));
	assert_non_null(strstr(err, fx->ws));
	free(err);
	err = NULL;
	assert_int_equal(rename(moved, fx->ws), 0);
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 0);
	cp_changes_release(&c);
	free(moved);
}

/* Checkpoints taken one after another compare in that order, also within one tick of the
 * coarse clock (by the count each carries, not by a walk through the history). */
static void test_compare_order(void **state)
{
	struct cpfix *fx = *state;
	char id[5][CP_ID_LEN + 1];
	char *err = NULL;
	int order;

	for (int i = 0; i < 5; i++) {
		char name[24]; /* room for any int: -Wformat-truncation under ASan */
		snprintf(name, sizeof(name), "f%d.txt", i);
		cpfix_put(fx, name, "x\n");
		cpfix_take(fx, id[i], NULL);
	}
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 5; k++) {
			assert_true(checkpoint_compare(fx->cp, id[i], id[k], &order, &err));
			assert_int_equal(order, i < k ? -1 : i > k ? 1 : 0);
		}
}

/* write_file's temporary file of this process (caught between its write and its rename
 * by a parallel step's checkpoint) is not a file of the workspace; a file of that shape
 * from another process is. */
static void test_own_temp_left_out(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1];
	char *mine = xasprintf(".pevtui-tmp-%ld-7", (long)getpid());
	struct cp_changes c;
	char *err = NULL;

	cpfix_take(fx, a, NULL);
	cpfix_put(fx, mine, "half-written\n");
	cpfix_put(fx, ".pevtui-tmp-1-7", "someone else's\n");
	cpfix_take(fx, b, NULL);
	assert_true(checkpoint_diff(fx->cp, a, b, 1 << 20, &c, &err));
	assert_int_equal(c.n, 1);
	assert_string_equal(c.v[0].path, ".pevtui-tmp-1-7");
	cp_changes_release(&c);
	free(mine);
}

/* Waits (bounded) until the coarse clock, which file times come from, is past rel's ctime
 * and birth: what was made before now is older than the next walk. */
static void wait_past(const struct cpfix *fx, const char *rel)
{
	char *p = cpfix_at(fx, rel);
	struct stat st;

	assert_int_equal(lstat(p, &st), 0);
	for (int i = 0; i < 1000; i++) {
		struct timespec now, tick = {0, 1000000L};

		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec ||
		    (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
			break;
		nanosleep(&tick, NULL);
	}
	free(p);
}

/*
 * A checkpoint that finds the workspace as the last one holds it may serve as that one only
 * when the walk saw nothing the tree lacks: a file in an ignored folder made after the last
 * checkpoint but before this attempt's is the operator's, and a retry of an attempt that
 * un-ignored it must not delete it (the "before" must be at least as late as the file).
 */
static void test_reused_before_keeps_newer_ignored_file(void **state)
{
	struct cpfix *fx = *state;
	char b0[CP_ID_LEN + 1], before[CP_ID_LEN + 1], after[CP_ID_LEN + 1];
	char *cache = cpfix_at(fx, "cache"), *err = NULL, *s;
	struct cp_changes c;
	struct strvec restored = STRVEC_INIT, conflicts = STRVEC_INIT;

	cpfix_put(fx, ".gitignore", "cache/\n");
	assert_int_equal(mkdir(cache, 0700), 0);
	cpfix_put(fx, "cache/old.bin", "old\n");
	wait_past(fx, "cache/old.bin");
	cpfix_take(fx, b0, NULL); /* e.g. the last step's "after" */
	cpfix_put(fx, "cache/new.bin", "made after it, before the attempt\n");
	wait_past(fx, "cache/new.bin");
	assert_true(checkpoint_take_step(fx->cp, "s1", true, before, NULL, &err));
	cpfix_put(fx, ".gitignore", "*.log\n"); /* the attempt un-ignores cache/ */
	assert_true(checkpoint_take_step(fx->cp, "s1", false, after, NULL, &err));
	assert_true(checkpoint_diff(fx->cp, before, after, 1 << 20, &c, &err));
	assert_non_null(find(&c, "cache/new.bin")); /* looks added */
	checkpoint_series_note(fx->cp, "s1", before, after, &c);
	cp_changes_release(&c);
	assert_true(checkpoint_series_restore(fx->cp, "s1", &restored, &conflicts, &err));
	assert_null(err);
	s = cpfix_get(fx, "cache/new.bin");
	assert_non_null(s);
	assert_string_equal(s, "made after it, before the attempt\n");
	free(s);
	s = cpfix_get(fx, ".gitignore");
	assert_string_equal(s, "cache/\n");
	free(s);
	strvec_clear(&restored);
	strvec_clear(&conflicts);
	free(cache);
}

/* An empty folder made after the last checkpoint (a passed step's, which changed nothing
 * git keeps) is there before the next attempt: that attempt's retry keeps it. */
static void test_reused_before_keeps_newer_empty_folder(void **state)
{
	struct cpfix *fx = *state;
	char ab[CP_ID_LEN + 1], aa[CP_ID_LEN + 1], bb[CP_ID_LEN + 1], ba[CP_ID_LEN + 1];
	char *out = cpfix_at(fx, "out"), *err = NULL;
	struct cp_changes c;

	if (!fs_has_birth_time(fx)) {
		free(out);
		skip();
	}
	cpfix_put(fx, "a.txt", "a\n");
	assert_true(checkpoint_take_step(fx->cp, "A", true, ab, NULL, &err));
	assert_int_equal(mkdir(out, 0755), 0); /* step A's work: an empty folder */
	wait_past(fx, "out");
	assert_true(checkpoint_take_step(fx->cp, "A", false, aa, NULL, &err));
	checkpoint_series_end(fx->cp, "A"); /* A passed */
	assert_true(checkpoint_take_step(fx->cp, "B", true, bb, NULL, &err));
	cpfix_put(fx, "out/r.txt", "B's rejected work\n");
	assert_true(checkpoint_take_step(fx->cp, "B", false, ba, NULL, &err));
	assert_true(checkpoint_diff(fx->cp, bb, ba, 1 << 20, &c, &err));
	checkpoint_series_note(fx->cp, "B", bb, ba, &c);
	cp_changes_release(&c);
	assert_true(checkpoint_series_restore(fx->cp, "B", NULL, NULL, &err));
	assert_null(err);
	assert_false(cpfix_exists(fx, "out/r.txt"));
	assert_true(cpfix_exists(fx, "out")); /* A's folder stays */
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    CPFIX_TEST(test_store_named_by_run_folder),
	    CPFIX_TEST(test_restore_keeps_an_old_empty_folder),
	    CPFIX_TEST(test_added_modified_deleted),
	    CPFIX_TEST(test_modes),
	    CPFIX_TEST(test_symlink_outside),
	    CPFIX_TEST(test_refuses_escaping_paths),
	    CPFIX_TEST(test_git_workspace_untouched),
	    CPFIX_TEST(test_gitignore),
	    CPFIX_TEST(test_too_large),
	    CPFIX_TEST(test_binary),
	    CPFIX_TEST(test_series),
	    CPFIX_TEST(test_restore_keeps_old_files_and_modes),
	    CPFIX_TEST(test_parallel_overlap),
	    CPFIX_TEST(test_overlap_paths),
	    CPFIX_TEST(test_attribution),
	    CPFIX_TEST(test_attribution_foreign),
	    CPFIX_TEST(test_attribution_foreign_then_own),
	    CPFIX_TEST(test_restore_beside_a_running_step),
	    CPFIX_TEST(test_unknown_id),
	    CPFIX_TEST(test_reopen),
	    CPFIX_TEST(test_same_stat_rewrite_seen),
	    CPFIX_TEST(test_unchanged_stores_nothing_again),
	    CPFIX_TEST(test_gitattributes_not_obeyed),
	    CPFIX_TEST(test_trees_are_gits),
	    CPFIX_TEST(test_exclude),
	    CPFIX_TEST(test_odd_names),
	    CPFIX_TEST(test_workspace_vanished),
	    CPFIX_TEST(test_compare_order),
	    CPFIX_TEST(test_own_temp_left_out),
	    CPFIX_TEST(test_reused_before_keeps_newer_ignored_file),
	    CPFIX_TEST(test_reused_before_keeps_newer_empty_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
