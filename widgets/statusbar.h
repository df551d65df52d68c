/* statusbar — one row: a state on the left, key hints on the right as far as they fit. */
#ifndef PEVTUI_STATUSBAR_H
#define PEVTUI_STATUSBAR_H

#include "rect.h"

/* `hints` alternates key and label, NULL-terminated: {"a", "approve", "q", "quit", NULL}.
 * Hints that do not fit are left out from the end. */
void statusbar_draw(struct rect r, const char *left, const char *const *hints);
/* The same with the hints first: keys that answer something open (a gate) stay on the
 * row at any width. They are drawn whole when they fit beside at least `min_left` columns
 * of the left text, else as their keys alone ("a e E x ? help"); the left text is cut
 * (ending in "…") to what remains. */
void statusbar_draw_keys_first(struct rect r, const char *left, const char *const *hints,
			       int min_left);

#endif
