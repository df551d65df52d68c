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
 * Copies the artifacts an attempt declared (workspace-relative paths) from the workspace
 * `ws_fd` to RUN_DIR/attempts/STEP/N/files/PATH. A path that is unsafe, missing, not a
 * regular file or larger than ATTEMPTS_MAX_FILE is left out. Returns how many were copied.
 */
int attempts_keep_artifacts(const char *run_dir, int ws_fd, const char *step_id, int attempt,
			    const struct strvec *paths);

/*
 * Keeps the full output of tool call `k` (0-based, in the attempt's order) as
 * RUN_DIR/attempts/STEP/N/tool-K.txt (older runs: tools/K.txt), cut at ATTEMPTS_MAX_FILE.
 * Returns that path relative to run_dir, or NULL when it could not be written. Caller
 * frees.
 */
char *attempts_keep_output(const char *run_dir, const char *step_id, int attempt, int k,
			   const char *text, size_t len);

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
