/* testdir — temporary folders for tests. */
#include "config.h"

#include "testdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "xalloc.h"

char *testdir_new(const char *tag)
{
	char *d = xasprintf("/tmp/pevtui-test-%s-XXXXXX", tag);

	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	return d;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

bool testdir_remove(const char *dir)
{
	struct stat st;

	/* Depth first, links removed as links: nothing outside the folder is touched. */
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return lstat(dir, &st) != 0;
}

char *testdir_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb);
}

char *testdir_slurp_in(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

bool testdir_put(const char *dir, const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	bool ok = f && fputs(text, f) >= 0;

	if (f && fclose(f))
		ok = false;
	free(p);
	return ok;
}
