/* test_store — the workspace's one checkpoint store: a second run's first checkpoint of an
 * unchanged workspace reads no file (the stat cache kept in the store), a cache naming
 * blobs the store lost is not trusted, each checkpoint's pack is git's (libgit2 reads it,
 * its index holds what it wrote), the place of the store, and ages. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
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
#include "xalloc.h"

#define BIG (1u << 20)

/* Bytes this process has read so far (/proc/self/io's rchar): what a checkpoint read. */
static long long bytes_read(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %lld", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void put_big(const struct cpfix *fx, const char *rel, char fill)
{
	char *text = xmalloc(BIG + 1);

	memset(text, fill, BIG);
	text[BIG] = '\0';
	cpfix_put(fx, rel, text);
	free(text);
}

/* Waits (bounded) until the coarse clock is past REL's change time. */
static void wait_past(const struct cpfix *fx, const char *rel)
{
	char *p = cpfix_at(fx, rel);
	struct stat st;
	struct timespec now;

	assert_int_equal(stat(p, &st), 0);
	for (int i = 0; i < 500; i++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (now.tv_sec > st.st_ctim.tv_sec ||
		    (now.tv_sec == st.st_ctim.tv_sec && now.tv_nsec > st.st_ctim.tv_nsec))
			break;
		usleep(2000);
	}
	free(p);
}

/* The store opened for a new run folder `name` beside fx->run, as a second run would. */
static struct checkpoints *open_run(const struct cpfix *fx, const char *name)
{
	char *run = xasprintf("%s/%s", fx->top, name), *err = NULL;
	struct checkpoints *cp;

	assert_int_equal(mkdir(run, 0700), 0);
	cp = checkpoint_open(run, fx->ws, &err);
	assert_null(err);
	assert_non_null(cp);
	free(run);
	return cp;
}

static void test_second_run_reads_nothing_unchanged(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1], *err = NULL, *store;
	struct checkpoints *cp2;
	struct cp_changes c;
	long long r0;

	put_big(fx, "big1", 'a');
	put_big(fx, "big2", 'b');
	/* a file's stat is trusted only when it is older than the walk that saw it */
	wait_past(fx, "big2");
	cpfix_take(fx, a, NULL);
	checkpoint_close(fx->cp); /* the first run ends: its stat cache is kept */
	fx->cp = NULL;
	cp2 = open_run(fx, "run2");
	r0 = bytes_read();
	assert_true(checkpoint_take(cp2, b, NULL, &err));
	if (r0 >= 0)
		assert_true(bytes_read() - r0 < BIG / 2); /* neither megabyte read again */
	/* the same tree as the first run's, in a commit of the second run's own */
	assert_true(checkpoint_diff(cp2, a, b, 1 << 16, &c, &err));
	assert_int_equal(c.n, 0);
	cp_changes_release(&c);
	checkpoint_close(cp2);
	store = cpfix_store(fx);
	free(store);
	fx->cp = open_run(fx, "run3");
}

/* A stat cache naming blobs the store no longer holds (its packs gone) is not trusted:
 * the files are read and stored again, and the checkpoint reads back whole. */
static void test_cache_of_a_lost_blob_is_not_trusted(void **state)
{
	struct cpfix *fx = *state;
	char a[CP_ID_LEN + 1], b[CP_ID_LEN + 1], *err = NULL, *store, *packs;
	struct checkpoints *cp2;
	struct strvec paths = STRVEC_INIT;
	long long r0;
	DIR *d;
	struct dirent *de;

	put_big(fx, "big1", 'a');
	cpfix_take(fx, a, NULL);
	checkpoint_close(fx->cp);
	fx->cp = NULL;
	store = cpfix_store(fx);
	packs = xasprintf("%s/objects/pack", store);
	d = opendir(packs);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char *p = xasprintf("%s/%s", packs, de->d_name);
		if (de->d_name[0] != '.')
			assert_int_equal(unlink(p), 0);
		free(p);
	}
	closedir(d);
	cp2 = open_run(fx, "run2");
	r0 = bytes_read();
	assert_true(checkpoint_take(cp2, b, NULL, &err));
	if (r0 >= 0)
		assert_true(bytes_read() - r0 >= BIG);
	cpfix_put(fx, "big1", "small now\n");
	strvec_push(&paths, "big1");
	assert_true(checkpoint_restore_paths(cp2, b, &paths, NULL, NULL, NULL, &err));
	{
		char *s = cpfix_get(fx, "big1");
		assert_int_equal(strlen(s), BIG);
		free(s);
	}
	strvec_clear(&paths);
	checkpoint_close(cp2);
	free(packs);
	free(store);
	fx->cp = open_run(fx, "run3");
}

/* Each checkpoint's new objects are one pack whose index holds exactly them, and libgit2
 * reads every object of it back with the bytes that were stored. */
static void test_pack_is_gits(void **state)
{
	struct cpfix *fx = *state;
	char *store = cpfix_store(fx), *objects = xasprintf("%s/objects", store);
	struct pack *p = pack_open(objects);
	git_repository *repo = NULL;
	git_odb *odb = NULL;
	git_oid ids[3];
	const char *texts[3] = {"one\n", "", "three\n"};

	assert_non_null(p);
	for (int i = 0; i < 3; i++)
		assert_true(pack_add(p, GIT_OBJECT_BLOB, texts[i], strlen(texts[i]), &ids[i]));
	assert_true(pack_has(p, &ids[1]));
	assert_true(pack_finish(p));
	pack_close(p);
	assert_int_equal(git_repository_open_bare(&repo, store), 0);
	assert_int_equal(git_repository_odb(&odb, repo), 0);
	for (int i = 0; i < 3; i++) {
		git_odb_object *o = NULL;
		assert_int_equal(git_odb_read(&o, odb, &ids[i]), 0);
		assert_int_equal(git_odb_object_size(o), strlen(texts[i]));
		assert_memory_equal(git_odb_object_data(o), texts[i], strlen(texts[i]));
		git_odb_object_free(o);
	}
	/* a new writer knows them from the index: nothing is written again */
	p = pack_open(objects);
	for (int i = 0; i < 3; i++)
		assert_true(pack_has(p, &ids[i]));
	pack_close(p);
	git_odb_free(odb);
	git_repository_free(repo);
	free(objects);
	free(store);
}

/* One store per workspace: another folder has another; the same folder by another path
 * (a link) has the same. */
static void test_one_store_per_workspace(void **state)
{
	struct cpfix *fx = *state;
	char *link = xasprintf("%s/wslink", fx->top), *other = xasprintf("%s/outside", fx->top);
	char *run_b = xasprintf("%s/rb", fx->top), *run_c = xasprintf("%s/rc", fx->top);
	char *err = NULL, *sa = cpfix_store(fx), *sb, *sc;
	struct checkpoints *b, *c;
	bool legacy;

	assert_int_equal(symlink(fx->ws, link), 0);
	assert_int_equal(mkdir(run_b, 0700), 0);
	assert_int_equal(mkdir(run_c, 0700), 0);
	b = checkpoint_open(run_b, link, &err);
	c = checkpoint_open(run_c, other, &err);
	assert_non_null(b);
	assert_non_null(c);
	sb = checkpoint_run_store(run_b, &legacy);
	sc = checkpoint_run_store(run_c, &legacy);
	assert_string_equal(sa, sb);
	assert_string_not_equal(sa, sc);
	checkpoint_close(b);
	checkpoint_close(c);
	free(sa);
	free(sb);
	free(sc);
	free(link);
	free(other);
	free(run_b);
	free(run_c);
}

static void test_ages(void **state)
{
	double s;

	(void)state;
	assert_true(checkpoint_parse_age("30d", &s));
	assert_true(s == 30 * 86400.0);
	assert_true(checkpoint_parse_age("12h", &s) && s == 43200.0);
	assert_true(checkpoint_parse_age("2w", &s) && s == 14 * 86400.0);
	assert_true(checkpoint_parse_age("90", &s) && s == 90.0);
	assert_true(checkpoint_parse_age("0s", &s) && s == 0.0);
	assert_false(checkpoint_parse_age("30 days", &s));
	assert_false(checkpoint_parse_age("-1d", &s));
	assert_false(checkpoint_parse_age("", &s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    CPFIX_TEST(test_second_run_reads_nothing_unchanged),
	    CPFIX_TEST(test_cache_of_a_lost_blob_is_not_trusted),
	    CPFIX_TEST(test_pack_is_gits),
	    CPFIX_TEST(test_one_store_per_workspace),
	    cmocka_unit_test(test_ages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
