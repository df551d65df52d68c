/* statusbar — one row: a state on the left, key hints on the right as far as they fit. */
#ifndef PEVTUI_STATUSBAR_H
#define PEVTUI_STATUSBAR_H

#include "rect.h"

/* `hints` alternates key and label, NULL-terminated: {"a", "approve", "q", "quit", NULL}.
 * Hints that do not fit are left out from the end. */
void statusbar_draw(struct rect r, const char *left, const char *const *hints);

#endif
