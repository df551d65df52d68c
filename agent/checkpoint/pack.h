/*
 * pack — the checkpoint store's object writer: every object a checkpoint adds goes into
 * one new pack file (git's pack format, version 2, each object stored by zlib level 0 —
 * --prune compacts at level 1)
 * with its .idx beside it, so that `git` and libgit2 read the store as any repository.
 * One pack per checkpoint: a file or two to write and sync instead of one file per object
 * (the first checkpoint of a 10,000-file workspace), and all of it synced in one batch
 * before the checkpoint's id is handed out (and journaled).
 *
 * Which objects the store holds already is known from the .idx files read when the store
 * opens, and from the packs written since: an object it holds is not written again. A
 * pack another process wrote meanwhile is not seen, so an object may be stored twice
 * (harmless: readers take either).
 *
 * Object ids and pack checksums are SHA-1 from libcrypto (OpenSSL): libgit2 1.5 offers no
 * raw SHA-1, and its object hashing is a collision-detecting SHA-1 several times slower.
 *
 * Not thread-safe: the checkpoint store calls it under its own lock.
 */
#ifndef PEVTUI_PACK_H
#define PEVTUI_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <git2.h>

struct pack;

/* Opens the object folder `objects_dir` (its pack/ folder made when missing) and reads
 * which objects its packs hold. NULL + errno on failure. */
struct pack *pack_open(const char *objects_dir);
/* The same, knowing none of the objects the folder holds, and compressing (zlib level 1):
 * a pack of all the objects a store keeps (prune.c). */
struct pack *pack_open_fresh(const char *objects_dir);
void pack_close(struct pack *p); /* NULL ok; a pack not finished is dropped */

/* The object id git gives `len` bytes of `type`. */
void pack_hash(git_object_t type, const void *buf, size_t len, git_oid *oid);
/* Whether the store holds the object (in a pack read or written by this process, or in
 * the pack being written). */
bool pack_has(const struct pack *p, const git_oid *oid);

/*
 * Adds an object to the pack being written (begun by the first add) unless the store
 * holds it already; its id in *oid. false + errno when the pack cannot be written: then
 * the objects added since the last finish are dropped, and every add and finish fails
 * (pack_error) until pack_abort.
 */
bool pack_add(struct pack *p, git_object_t type, const void *buf, size_t len, git_oid *oid);
/* The same for an object whose id the caller has computed (pack_hash). */
bool pack_add_hashed(struct pack *p, git_object_t type, const void *buf, size_t len,
                     const git_oid *oid);

/*
 * Finishes the pack being written: its count and checksum, the .idx, both synced, renamed
 * into objects/pack/ and the folder synced. Nothing to do when nothing was added. false +
 * errno on failure (ENOSPC for a full disk); the objects added since the last finish are
 * then not in the store (pack_has forgets them).
 */
bool pack_finish(struct pack *p);
/* The errno of the failure that stopped the pack being written; 0: none. */
int pack_error(const struct pack *p);
/* Drops the pack being written, and forgets its failure. */
void pack_abort(struct pack *p);

/* ---- reading .idx files (prune) ---- */

/* The ids a pack index file holds (*n of them, GIT_OID_RAWSZ bytes each, caller frees).
 * NULL + errno when it is no version-2 index. */
unsigned char *pack_idx_read(const char *idx_path, size_t *n);

#endif
