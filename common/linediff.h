/* linediff — a line diff (Myers) of two texts and its unified rendering (`diff -u`). */
#ifndef PEVTUI_LINEDIFF_H
#define PEVTUI_LINEDIFF_H

#include <stddef.h>

/* Edits past which a diff stops looking for the shortest script (time and memory grow
 * with its square): the rest is shown as removed whole, then added whole. */
#define LINEDIFF_MAX_EDITS 1500

struct linediff_stats {
	size_t added, removed; /* lines */
	int hunks;
	int exact; /* 1: the script is a shortest one; 0: the edit bound was reached */
};

/*
 * The unified diff that turns `a` (`alen` bytes) into `b` (`blen` bytes), lines split on
 * '\n', as GNU `diff -u` writes it: "--- name_a", "+++ name_b", then hunks
 * "@@ -l,n +l,n @@" with `context` lines around each change; a last line without a
 * newline is followed by "\ No newline at end of file". Returns "" when the texts are the
 * same. `max_edits` bounds the search (0: LINEDIFF_MAX_EDITS). Bytes are copied as they
 * are (sanitize before drawing). `st` may be NULL. Caller frees.
 */
char *linediff_unified(const char *a, size_t alen, const char *b, size_t blen,
		       const char *name_a, const char *name_b, int context, size_t max_edits,
		       struct linediff_stats *st);

#endif
