/* nearest — the word a mistyped one most likely meant ("did you mean"). */
#ifndef PEVTUI_NEAREST_H
#define PEVTUI_NEAREST_H

#include <stddef.h>

/* Of the n words, the one closest to `typed` by edit distance (insert, delete, replace,
 * swap of two neighbours), when it is at most 2 and less than half the typed length;
 * the first such word on a tie. NULL when none is that close. */
const char *nearest_word(const char *typed, const char *const *words, size_t n);

#endif
