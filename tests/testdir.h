/* testdir — temporary folders for tests: one way to make them and one to remove them. */
#ifndef PEVTUI_TESTDIR_H
#define PEVTUI_TESTDIR_H

#include <stdbool.h>

/* A new folder /tmp/pevtui-test-TAG-XXXXXX; NULL if it cannot be made. Caller frees. */
char *testdir_new(const char *tag);
/* Removes the folder and everything below it, without following links and without a
 * shell. true when nothing is left. */
bool testdir_remove(const char *dir);
/* A whole file as a string (NUL-terminated; NULs inside stay), or NULL if it cannot be
 * read. Caller frees. */
char *testdir_slurp(const char *path);
/* testdir_slurp of DIR/REL. */
char *testdir_slurp_in(const char *dir, const char *rel);
/* Writes TEXT as the whole of DIR/REL (made or truncated); false if it cannot. */
bool testdir_put(const char *dir, const char *rel, const char *text);

#endif
