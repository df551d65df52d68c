/*
 * attempts — what each attempt of a step leaves in the run folder for the operator to read
 * and compare once the workspace has moved on: a copy of every artifact the attempt
 * declared (RUNDIR/attempts/STEP/N/files/PATH) and the full output of each of its tool
 * calls (RUNDIR/attempts/STEP/N/tool-K.txt). Written by the engine's workers, read by
 * the cockpit; every path is opened beneath its root, never outside.
 */
#ifndef PEVTUI_ATTEMPTS_H
#define PEVTUI_ATTEMPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* A larger artifact is not copied; a longer tool output is kept cut to this. */
#define ATTEMPTS_MAX_FILE (1u << 20)

/* A step id as one file name component: letters, digits, '_', '-' and '.' (not leading)
 * stay, every other byte is written %XX. Caller frees. */
char *attempts_id_component(const char *id);

/*
 * The run folder's side of the copies, one per run and shared by the workers: the run
 * folder is opened once (its path is the operator's, so it is opened as given) and
 * RUN_DIR/attempts beneath it is made on first use and held open; each write after
 * that is relative to a descriptor, never a path walked again.
 */
struct attempts;

/* Opens RUN_DIR (which exists) for the copies. NULL + *err (a sentence; caller frees)
 * when it cannot be opened. Freed by attempts_close (NULL is fine). */
struct attempts *attempts_open(const char *run_dir, char **err);
void attempts_close(struct attempts *a);

/*
 * One attempt's folder RUN_DIR/attempts/STEP/N: nothing is touched until the first copy,
 * which makes it (mkdirat; one that exists is used as it is) and opens it, held until
 * attempts_dir_free. A symbolic link in the place of attempts/, STEP or N is not
 * followed: the copies are left out, as they are once the run folder is removed. Used by
 * one thread at a time; `a` outlives it. NULL when `a` is NULL: the keepers below then
 * keep nothing.
 */
struct attempts_dir;
struct attempts_dir *attempts_dir_new(struct attempts *a, const char *step_id, int attempt);
void attempts_dir_free(struct attempts_dir *d);

/*
 * Copies the artifacts the attempt declared (workspace-relative paths) from the workspace
 * `ws_fd` to its folder's files/PATH. A path that is unsafe, missing, not a regular file
 * or larger than ATTEMPTS_MAX_FILE is left out. Returns how many were copied.
 */
int attempts_keep_artifacts(struct attempts_dir *d, int ws_fd, const struct strvec *paths);

/*
 * Keeps the full output of the attempt's tool call `k` (0-based, in the attempt's order)
 * as tool-K.txt in its folder (older runs: tools/K.txt), cut at ATTEMPTS_MAX_FILE.
 * Returns that path relative to the run folder, or NULL when it could not be written.
 * Caller frees.
 */
char *attempts_keep_output(struct attempts_dir *d, int k, const char *text, size_t len);

/* RUN_DIR-relative path of an attempt's copy of an artifact: "attempts/STEP/N/files/PATH".
 * Caller frees. */
char *attempts_artifact_path(const char *step_id, int attempt, const char *path);

/*
 * Reads `rel` beneath the folder `root_dir` (the workspace or the run folder), refusing
 * absolute paths, ".." and symbolic links on the way (sandbox.h), up to `max` bytes
 * (*cut tells whether there was more; may be NULL). Returns the bytes (NUL-terminated;
 * *len without it), or NULL + *err (a sentence; caller frees).
 */
char *attempts_read_beneath(const char *root_dir, const char *rel, size_t max, size_t *len,
			    bool *cut, char **err);

#endif
