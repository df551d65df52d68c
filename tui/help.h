/* help — the key list overlay shown by `?`. */
#ifndef PEVTUI_HELP_H
#define PEVTUI_HELP_H

/* `pairs` alternates key and description, NULL-terminated. *scroll is clamped. */
void help_draw(const char *const *pairs, int rows, int cols, int *scroll);

#endif
