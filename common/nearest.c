/* nearest — optimal string alignment distance over two rows of a small table. */
#include "config.h"

#include "nearest.h"

#include <string.h>

#define NEAREST_MAX 64 /* longer words are never suggested or matched */

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* The distance of a and b (each at most NEAREST_MAX bytes). */
static size_t distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t rows[3][NEAREST_MAX + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;

			cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < cur[j])
				cur[j] = prev2[j - 2] + 1;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *nearest_word(const char *typed, const char *const *words, size_t n)
{
	size_t lt = typed ? strlen(typed) : 0, best_d = 3;
	const char *best = NULL;

	if (lt == 0 || lt > NEAREST_MAX)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t lw = words[i] ? strlen(words[i]) : NEAREST_MAX + 1, d;

		if (lw > NEAREST_MAX)
			continue;
		d = distance(typed, lt, words[i], lw);
		if (d < best_d && 2 * d < lt) {
			best_d = d;
			best = words[i];
		}
	}
	return best;
}
