/* strindex — positions found by their string keys (see strindex.h). */
#include "config.h"

#include "strindex.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

size_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	size_t n = strlen(s);

	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w ^ n) * 0x100000001b3ull;
	/* A multiplication carries a byte's change up, never down: the low bits a table
	 * uses get every byte's from a final mix (MurmurHash3's fmix64). */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (size_t)h;
}

/* The slot holding key (hash h), or the free slot where it would go. cap is a power of
 * two and the table is never full, so the probe ends. */
static size_t probe(const struct strindex *ix, const char *key, size_t h,
		    strindex_key_fn key_of, const void *ctx)
{
	size_t mask = ix->cap - 1, i = h & mask;

	while (ix->slot[i].pos1 &&
	       (ix->slot[i].hash != h || strcmp(key_of(ctx, ix->slot[i].pos1 - 1), key) != 0))
		i = (i + 1) & mask;
	return i;
}

/* Room for one more key: the slots move by their hashes, no key is read. */
static void make_room(struct strindex *ix)
{
	struct strindex_slot *old = ix->slot;
	size_t old_cap = ix->cap;

	if (2 * (ix->n + 1) <= ix->cap)
		return;
	ix->cap = old_cap ? 2 * old_cap : 16;
	ix->slot = xcalloc(ix->cap, sizeof(*ix->slot));
	for (size_t i = 0; i < old_cap; i++) {
		size_t k;

		if (!old[i].pos1)
			continue;
		for (k = old[i].hash & (ix->cap - 1); ix->slot[k].pos1; k = (k + 1) & (ix->cap - 1))
			;
		ix->slot[k] = old[i];
	}
	free(old);
}

bool strindex_get(const struct strindex *ix, const char *key, strindex_key_fn key_of,
		  const void *ctx, size_t *pos)
{
	size_t i;

	if (!key || !ix->n)
		return false;
	i = probe(ix, key, str_hash(key), key_of, ctx);
	if (!ix->slot[i].pos1)
		return false;
	*pos = ix->slot[i].pos1 - 1;
	return true;
}

/* The slot of key, made when it was not there (*added says which). */
static struct strindex_slot *slot_of(struct strindex *ix, const char *key, size_t pos,
				     strindex_key_fn key_of, const void *ctx, bool *added)
{
	size_t h = str_hash(key), i;

	make_room(ix);
	i = probe(ix, key, h, key_of, ctx);
	*added = !ix->slot[i].pos1;
	if (*added) {
		ix->slot[i] = (struct strindex_slot){pos + 1, h};
		ix->n++;
	}
	return &ix->slot[i];
}

bool strindex_add(struct strindex *ix, const char *key, size_t pos, strindex_key_fn key_of,
		  const void *ctx)
{
	bool added;

	slot_of(ix, key, pos, key_of, ctx, &added);
	return added;
}

void strindex_set(struct strindex *ix, const char *key, size_t pos, strindex_key_fn key_of,
		  const void *ctx)
{
	bool added;

	slot_of(ix, key, pos, key_of, ctx, &added)->pos1 = pos + 1;
}

void strindex_reset(struct strindex *ix)
{
	if (ix->slot)
		memset(ix->slot, 0, ix->cap * sizeof(*ix->slot));
	ix->n = 0;
}

void strindex_free(struct strindex *ix)
{
	free(ix->slot);
	*ix = (struct strindex)STRINDEX_INIT;
}
