/*
 * attempts — what each attempt of a step leaves in the run folder for the operator to read
 * and compare once the workspace has moved on: a copy of every artifact the attempt
 * declared (named attempts/STEP/N/files/PATH) and the full output of each of its tool
 * calls (named attempts/STEP/N/tool-K.txt), each a record of RUN_DIR/attempts.pack, one
 * append-only file per run (older runs kept each as a file of that name, and are read
 * the same way). Written by the engine's workers, read by the cockpit; every file is
 * opened beneath its root, never outside, never through a link.
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
 * attempts.pack beneath it is opened (made when it is not there) on the first copy and
 * held open; a torn record a crash left at its end is cut off then. Each copy is one
 * record appended with one write, under a lock, before the event that names it is
 * published: what the journal names is in the pack, whole, after a crash of the process.
 * A symbolic link or a FIFO in the pack's place is not followed: nothing is kept.
 */
struct attempts;

/* Opens RUN_DIR (which exists) for the copies. NULL + *err (a sentence; caller frees)
 * when it cannot be opened. Freed by attempts_close (NULL is fine). */
struct attempts *attempts_open(const char *run_dir, char **err);
void attempts_close(struct attempts *a);

/*
 * One attempt's copies, named attempts/STEP/N/…: nothing is written until the first.
 * Once the run folder is removed nothing more is kept; attempts.pack alone removed is
 * made again by the next copy. Used by one thread at a time; `a` outlives it. NULL when
 * `a` is NULL: the keepers below then keep nothing.
 */
struct attempts_dir;
struct attempts_dir *attempts_dir_new(struct attempts *a, const char *step_id, int attempt);
void attempts_dir_free(struct attempts_dir *d);

/*
 * Copies the artifacts the attempt declared (workspace-relative paths) from the workspace
 * `ws_fd` to the pack as attempts/STEP/N/files/PATH. A path that is unsafe, missing, not a
 * regular file or larger than ATTEMPTS_MAX_FILE is left out. Returns how many were copied.
 */
int attempts_keep_artifacts(struct attempts_dir *d, int ws_fd, const struct strvec *paths);

/*
 * Keeps the full output of the attempt's tool call `k` (0-based, in the attempt's order)
 * as attempts/STEP/N/tool-K.txt (older runs: a file of that name, or tools/K.txt), cut at
 * ATTEMPTS_MAX_FILE. Returns that name, or NULL when it could not be written. Caller frees.
 */
char *attempts_keep_output(struct attempts_dir *d, int k, const char *text, size_t len);

/* The name of an attempt's copy of an artifact: "attempts/STEP/N/files/PATH". Caller frees. */
char *attempts_artifact_path(const char *step_id, int attempt, const char *path);

/*
 * Reads a copy named `rel` (as above, or as tool.result's output_file names it) of the run
 * folder RUN_DIR: the last whole record of that name in its attempts.pack, else the file
 * of that name beneath it (runs written by older versions), up to `max` bytes (*cut tells
 * whether there was more; may be NULL). NULL + *err (a sentence; caller frees) when
 * neither is there.
 */
char *attempts_read(const char *run_dir, const char *rel, size_t max, size_t *len, bool *cut,
		    char **err);

/*
 * Reads `rel` beneath the folder `root_dir` (the workspace or the run folder), refusing
 * absolute paths, ".." and symbolic links on the way (sandbox.h), up to `max` bytes
 * (*cut tells whether there was more; may be NULL). Returns the bytes (NUL-terminated;
 * *len without it), or NULL + *err (a sentence; caller frees).
 */
char *attempts_read_beneath(const char *root_dir, const char *rel, size_t max, size_t *len,
			    bool *cut, char **err);

#endif
