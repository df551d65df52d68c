/* strset — a set of owned strings (see strset.h). */
#include "config.h"

#include "strset.h"

#include <stdlib.h>
#include <string.h>

#include "strindex.h"
#include "xalloc.h"

/* The slot holding key, or the free slot where it would go. cap is a power of two and
 * the table is never full, so the probe ends. */
static size_t probe(char *const *slot, size_t cap, const char *key)
{
	size_t i = str_hash(key) & (cap - 1);

	while (slot[i] && strcmp(slot[i], key))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Moves the keys into a table of `cap` slots. */
static void rehash(struct strset *s, size_t cap)
{
	char **old = s->slot;
	size_t old_cap = s->cap;

	s->slot = xcalloc(cap, sizeof(*s->slot));
	s->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			s->slot[probe(s->slot, cap, old[i])] = old[i];
	free(old);
}

bool strset_add(struct strset *s, const char *key)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap)
		rehash(s, s->cap ? 2 * s->cap : 16);
	i = probe(s->slot, s->cap, key);
	if (s->slot[i])
		return false;
	s->slot[i] = xstrdup(key);
	s->n++;
	return true;
}

bool strset_has(const struct strset *s, const char *key)
{
	return s->n && s->slot[probe(s->slot, s->cap, key)];
}

void strset_remove_if(struct strset *s, bool (*drop)(const char *key, void *arg), void *arg)
{
	size_t before = s->n;

	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i] && drop(s->slot[i], arg)) {
			free(s->slot[i]);
			s->slot[i] = NULL;
			s->n--;
		}
	/* Open addressing cannot leave holes in a probe run: the rest are placed again. */
	if (s->n != before)
		rehash(s, s->cap);
}

void strset_clear(struct strset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slot[i]);
	free(s->slot);
	s->slot = NULL;
	s->n = s->cap = 0;
}
