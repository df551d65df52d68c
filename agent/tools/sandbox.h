/* sandbox — opening paths beneath the workspace without ever leaving it. */
#ifndef PEVTUI_SANDBOX_H
#define PEVTUI_SANDBOX_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "strbuf.h"

/*
 * Checks a workspace-relative path: not empty, not absolute, no ".." component, no NUL,
 * bounded length. Returns NULL if fine, else a static sentence naming the problem.
 */
const char *sandbox_check_path(const char *rel);

/*
 * Opens `rel` beneath the directory descriptor `root`, refusing absolute paths, ".."
 * escapes and symbolic links anywhere on the way (resolution is done component by
 * component with openat and O_NOFOLLOW, not by string checks alone). `flags`/`mode` as
 * for open(2); with O_CREAT, missing parent directories are created when `mkdirs`.
 * Returns a descriptor, or -1 with *err set to a sentence (caller frees).
 */
int sandbox_open(int root, const char *rel, int flags, mode_t mode, bool mkdirs, char **err);

/* sandbox_open, and *st holds what fstat said of the descriptor returned (the check of
 * its kind needs it anyway): a caller that wants the size or kind need not ask again. */
int sandbox_open_stat(int root, const char *rel, int flags, mode_t mode, bool mkdirs,
		      struct stat *st, char **err);

/* Opens the workspace root itself (a directory, created if missing). -1 + *err on failure. */
int sandbox_open_root(const char *path, char **err);

/* Appends the names in the directory `dfd` (not "." or ".."), sorted bytewise, to
 * `names`. `dfd` stays open and its position unchanged. false when it cannot be read. */
bool sandbox_read_dir(int dfd, struct strvec *names);

/* True if `rel` names a regular, non-empty file beneath root (no links followed). */
bool sandbox_file_nonempty(int root, const char *rel);

#endif
