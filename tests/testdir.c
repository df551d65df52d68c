/* testdir — temporary folders for tests. */
#include "config.h"

#include "testdir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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
