/* test_cp_random — rewinds proved on random workspaces (issue 25): random trees of files
 * with random modes, links, an ignored and an excluded kind of file and a nested .git;
 * random histories of edits, chmods, deletions, renames and new files, a checkpoint after
 * each; then a rewind (undo checkpoint, plan, restore) to a random one of them. After
 * each, every file and link the checkpoints keep equals the snapshot byte for byte and
 * mode for mode, and nothing they leave out (ignored, excluded, .git) was touched.
 *
 * CP_RANDOM_CASES (default 200) sets how many cases run; CP_RANDOM_SEED the first seed.
 * make bench-rewind runs thousands. A failing case prints its seed. File↔folder type
 * changes of one path are not generated (a restore does not replace a folder by a file). */
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

#include "checkpoint.h"
#include "cpfix.h"
#include "strbuf.h"
#include "xalloc.h"

static unsigned long rng;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ul + 1442695040888963407ul;
	return n ? (unsigned)((rng >> 33) % n) : 0;
}

static const char *const dirs[] = {"", "a", "a/b", "c", "c/d/e"};
static const char *const names[] = {"f1", "f2", "g.txt", "h.sh", "x.ign", "y.ex", "z"};
static const unsigned modes[] = {0644, 0600, 0640, 0755, 0700, 0444, 0664, 0750};

static char *path_of(const char *dir, const char *name)
{
	return *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

/* Kept by the checkpoints: not ignored (*.ign), not excluded (*.ex), not under .git. */
static bool kept_kind(const char *rel)
{
	size_t n = strlen(rel);

	return !strstr(rel, ".git") && !(n > 4 && !strcmp(rel + n - 4, ".ign")) &&
	       !(n > 3 && !strcmp(rel + n - 3, ".ex"));
}

static void mkdirs(const struct cpfix *fx, const char *dir)
{
	char *p = xstrdup(dir);

	for (char *s = p;; s++) {
		char *slash = strchr(s, '/'), *full;
		if (slash)
			*slash = '\0';
		full = cpfix_at(fx, p);
		mkdir(full, 0755);
		free(full);
		if (!slash)
			break;
		*slash = '/';
		s = slash;
	}
	free(p);
}

static void write_file(const struct cpfix *fx, const char *rel, unsigned mode)
{
	char *p = cpfix_at(fx, rel), *text = xasprintf("%s %lu\n", rel, rng);
	int fd;

	unlink(p);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (unsigned i = rnd(4); i > 0; i--)
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
	assert_int_equal(chmod(p, mode), 0);
	free(text);
	free(p);
}

static void make_link(const struct cpfix *fx, const char *rel)
{
	char *p = cpfix_at(fx, rel), *target = xasprintf("t%u", rnd(5));

	unlink(p);
	assert_int_equal(symlink(target, p), 0);
	free(target);
	free(p);
}

/* Every file and link below the workspace, one line each, sorted: path, kind, mode,
 * content or target (and, with `stamp`, inode and change time: untouched). Only the kept
 * kind or only the others. */
static void walk(const struct cpfix *fx, const char *rel, bool kept, bool stamp, struct strvec *out)
{
	char *dir = *rel ? cpfix_at(fx, rel) : xstrdup(fx->ws);
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char *r, *p;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = path_of(rel, de->d_name);
		p = xasprintf("%s/%s", dir, de->d_name);
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			walk(fx, r, kept, stamp, out);
		} else if (kept_kind(r) == kept) {
			struct strbuf sb = STRBUF_INIT;
			strbuf_init(&sb);
			if (S_ISLNK(st.st_mode)) {
				char t[256];
				ssize_t n = readlink(p, t, sizeof(t) - 1);
				assert_true(n >= 0);
				t[n] = '\0';
				strbuf_addf(&sb, "%s -> %s", r, t);
			} else {
				char *s = cpfix_get(fx, r);
				assert_non_null(s);
				strbuf_addf(&sb, "%s %o %s", r, st.st_mode & 07777, s);
				free(s);
			}
			if (stamp)
				strbuf_addf(&sb, " ino %lu ctime %ld.%09ld", (unsigned long)st.st_ino,
				            (long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
			strvec_take(out, strbuf_detach(&sb));
		}
		free(p);
		free(r);
	}
	closedir(d);
	free(dir);
}

static char *listing(const struct cpfix *fx, bool kept, bool stamp)
{
	struct strvec v = STRVEC_INIT;
	char *s;

	walk(fx, "", kept, stamp, &v);
	strvec_sort(&v);
	s = strvec_join(&v, "\n");
	strvec_clear(&v);
	return s;
}

/* The files of the kept kind now (paths), for picking one. */
static void kept_files(const struct cpfix *fx, struct strvec *out)
{
	struct strvec v = STRVEC_INIT;

	walk(fx, "", true, false, &v);
	for (size_t i = 0; i < v.n; i++) {
		char *sp = strchr(v.v[i], ' ');
		strvec_take(out, xstrndup(v.v[i], (size_t)(sp - v.v[i])));
	}
	strvec_clear(&v);
}

static void mutate(struct cpfix *fx)
{
	struct strvec files = STRVEC_INIT;
	unsigned op = rnd(8);
	char *p;

	kept_files(fx, &files);
	if (!files.n)
		op = 0;
	switch (op) {
	case 0: { /* a new file or link somewhere */
		const char *dir = dirs[rnd(5)];
		char *rel = path_of(dir, names[rnd(7)]);
		char *full = cpfix_at(fx, rel);
		struct stat st;
		mkdirs(fx, dir);
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			free(full);
			free(rel);
			break;
		}
		if (rnd(5) == 0)
			make_link(fx, rel);
		else
			write_file(fx, rel, modes[rnd(8)]);
		free(full);
		free(rel);
		break;
	}
	case 1: /* edited */
	case 2:
		write_file(fx, files.v[rnd((unsigned)files.n)], modes[rnd(8)]);
		break;
	case 3: /* chmod alone */
		p = cpfix_at(fx, files.v[rnd((unsigned)files.n)]);
		{
			struct stat st;
			if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
				assert_int_equal(chmod(p, modes[rnd(8)]), 0);
		}
		free(p);
		break;
	case 4: /* deleted */
		p = cpfix_at(fx, files.v[rnd((unsigned)files.n)]);
		assert_int_equal(unlink(p), 0);
		free(p);
		break;
	case 5: { /* renamed (into a folder of its own: no file takes a folder's place) */
		const char *dir = dirs[rnd(5)];
		char *to = path_of(dir, rnd(2) ? "moved" : "f1"), *a, *b;
		struct stat st;
		mkdirs(fx, dir);
		a = cpfix_at(fx, files.v[rnd((unsigned)files.n)]);
		b = cpfix_at(fx, to);
		if (!(lstat(b, &st) == 0 && S_ISDIR(st.st_mode)))
			assert_int_equal(rename(a, b), 0);
		free(a);
		free(b);
		free(to);
		break;
	}
	case 6: /* what the checkpoints leave out changes too */
		mkdirs(fx, "a");
		write_file(fx, rnd(2) ? "x.ign" : "a/y.ex", modes[rnd(8)]);
		break;
	default: /* the nested repository's own files */
		write_file(fx, "c/.git/HEAD", 0644);
		break;
	}
	strvec_clear(&files);
}

static void one_case(unsigned long seed)
{
	struct cpfix *fx = NULL;
	struct strvec ex = STRVEC_INIT;
	char ids[8][CP_ID_LEN + 1], undo[CP_ID_LEN + 1];
	char *snap[8], *others, *after;
	struct cp_plan plan;
	char *err = NULL;
	unsigned n, target;

	rng = seed;
	assert_int_equal(cpfix_setup((void **)&fx), 0);
	strvec_push(&ex, "*.ex");
	checkpoint_set_exclude(fx->cp, &ex);
	strvec_clear(&ex);
	mkdirs(fx, "c/.git");
	cpfix_put(fx, ".gitignore", "*.ign\n");
	for (unsigned i = 0, k = 3 + rnd(8); i < k; i++)
		mutate(fx);
	n = 2 + rnd(5);
	for (unsigned i = 0; i < n; i++) {
		cpfix_take(fx, ids[i], NULL);
		snap[i] = listing(fx, true, false);
		for (unsigned k = 1 + rnd(4); k > 0; k--)
			mutate(fx);
	}
	target = rnd(n);
	others = listing(fx, false, true);
	if (rnd(2))
		cpfix_reopen(fx); /* a rewind from another process, as --rewind is */
	checkpoint_set_exclude(fx->cp, NULL); /* today's config says nothing */
	assert_true(checkpoint_use_rules(fx->cp, ids[target], NULL, &err));
	assert_true(checkpoint_take(fx->cp, undo, NULL, &err));
	assert_true(checkpoint_plan(fx->cp, ids[target], undo, &plan, &err));
	if (!checkpoint_plan_apply(fx->cp, ids[target], &plan, &err))
		fail_msg("seed %lu: %s", seed, err);
	after = listing(fx, true, false);
	if (strcmp(after, snap[target])) {
		for (size_t i = 0; i < plan.n; i++)
			fprintf(stderr, "  %s %s %s\n", cp_act_verb(plan.v[i].act), plan.v[i].path,
			        plan.v[i].why ? plan.v[i].why : "");
		fail_msg("seed %lu: back to checkpoint %u of %u:\nwant:\n%s\nhave:\n%s", seed,
		         target + 1, n, snap[target], after);
	}
	free(after);
	after = listing(fx, false, true);
	if (strcmp(after, others))
		fail_msg("seed %lu: what no checkpoint holds was touched:\nbefore:\n%s\nafter:\n%s",
		         seed, others, after);
	free(after);
	free(others);
	cp_plan_release(&plan);
	for (unsigned i = 0; i < n; i++)
		free(snap[i]);
	cpfix_teardown((void **)&fx);
}

static void test_random_rewinds(void **state)
{
	const char *c = getenv("CP_RANDOM_CASES"), *s = getenv("CP_RANDOM_SEED");
	unsigned long cases = c ? strtoul(c, NULL, 10) : 200, seed = s ? strtoul(s, NULL, 10) : 1;

	(void)state;
	for (unsigned long i = 0; i < cases; i++)
		one_case(seed + i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_rewinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
