/*
 * loose — writes objects into a git object folder as loose files, deflated without
 * compression (zlib level 0, which git and libgit2 read like any other), for the
 * checkpoint store: most of a first checkpoint's time was compressing the workspace, and
 * libgit2 offers no uncompressed writes. Object ids come from libgit2 (git_odb_hash).
 *
 * Not thread-safe: the checkpoint store calls it under its own lock.
 */
#ifndef PEVTUI_LOOSE_H
#define PEVTUI_LOOSE_H

#include <stdbool.h>
#include <stddef.h>

#include <git2.h>

struct loose;

/* Opens the object folder `objects_dir` (it must exist). NULL + errno on failure. */
struct loose *loose_open(const char *objects_dir);
void loose_close(struct loose *l); /* NULL ok */

/*
 * Stores `len` bytes as an object of `type` (GIT_OBJECT_BLOB, _TREE, _COMMIT) unless the
 * folder holds it already; its id in *oid. The file appears whole or not at all (written
 * under a temporary name, then renamed). false + errno on failure.
 */
bool loose_write(struct loose *l, git_object_t type, const void *buf, size_t len, git_oid *oid);

#endif
