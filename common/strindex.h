/* strindex — positions in a caller's array, found by their string keys: open addressing,
 * at most half full, so a lookup costs the same at 10 keys or 100,000. The keys stay in
 * the caller's entries; the index keeps each position with its key's hash and reads the
 * key back through a key_of function only to compare. Not thread-safe. */
#ifndef PEVTUI_STRINDEX_H
#define PEVTUI_STRINDEX_H

#include <stdbool.h>
#include <stddef.h>

/* The one string hash of the program (strset's too): FNV-1a over 8 bytes at a time, then
 * a final mix so that the low bits depend on every byte. */
size_t str_hash(const char *s);

struct strindex_slot {
	size_t pos1; /* position + 1; 0: a free slot */
	size_t hash;
};

struct strindex {
	struct strindex_slot *slot;
	size_t n, cap; /* cap: 0 or a power of two */
};

#define STRINDEX_INIT {NULL, 0, 0}

/* The key of position `pos` in the caller's array (ctx). */
typedef const char *(*strindex_key_fn)(const void *ctx, size_t pos);

/* The position indexed under key into *pos; false when there is none (or key is NULL). */
bool strindex_get(const struct strindex *ix, const char *key, strindex_key_fn key_of,
		  const void *ctx, size_t *pos);
/* Indexes pos under key unless the key is there already: then the first position stays
 * and this returns false. */
bool strindex_add(struct strindex *ix, const char *key, size_t pos, strindex_key_fn key_of,
		  const void *ctx);
/* Indexes pos under key, in place of the position it had if any. */
void strindex_set(struct strindex *ix, const char *key, size_t pos, strindex_key_fn key_of,
		  const void *ctx);
/* Empties the index, keeping its table for the next keys. */
void strindex_reset(struct strindex *ix);
void strindex_free(struct strindex *ix);

#endif
