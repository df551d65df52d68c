/* listview — selection and scrolling for a list of rows drawn by the owner. */
#ifndef PEVTUI_LISTVIEW_H
#define PEVTUI_LISTVIEW_H

#include <stdbool.h>

#include "rect.h"

/* Draws row `index` at (y, x) in `w` columns. */
typedef void (*listview_row_fn)(void *ctx, int index, int y, int x, int w, bool selected);

/* Plain state, embedded by its owner. */
struct listview {
	int sel; /* selected row */
	int top; /* first row shown */
};

/* Keeps sel inside [0, n) and on screen for a pane `h` rows high. */
void listview_clamp(struct listview *lv, int n, int h);
void listview_move(struct listview *lv, int n, int delta);
/* Draws rows top.. into `r`, highlighting sel when `focus`. */
void listview_draw(struct listview *lv, int n, struct rect r, bool focus, listview_row_fn fn,
		   void *ctx);

#endif
