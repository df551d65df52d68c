/* modal — a framed box in the centre of the screen, drawn over whatever is behind it. */
#ifndef PEVTUI_MODAL_H
#define PEVTUI_MODAL_H

#include "rect.h"

/* A rectangle of at most want_h × want_w centred in rows × cols (clipped to fit). */
struct rect modal_rect(int rows, int cols, int want_h, int want_w);
/* Clears `r`, frames it with `title` on top and `hint` on the bottom edge (both may be
 * NULL). Returns the inside. */
struct rect modal_draw(struct rect r, const char *title, const char *hint);

#endif
