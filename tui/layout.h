/* layout — where the panes, tab bar and status line go for a screen size. Pure, no curses. */
#ifndef PEVTUI_LAYOUT_H
#define PEVTUI_LAYOUT_H

#include <stdbool.h>

#include "rect.h"

enum pane_id { PANE_PLAN, PANE_LOG, PANE_VERDICTS, PANE_COST, PANE__COUNT };

/* Below this size one pane is shown at a time, with a tab bar. */
#define LAYOUT_MIN_COLS 80
#define LAYOUT_MIN_ROWS 24

struct layout {
	struct rect pane[PANE__COUNT];
	bool visible[PANE__COUNT];
	bool tabbar;        /* one pane at a time: tab bar shown */
	struct rect tabs;   /* the tab bar row (h = 0 when none) */
	struct rect status; /* the status line (h = 0 when the screen has no room) */
};

/* Pane titles exactly as DESIGN.md names them. */
const char *layout_pane_title(enum pane_id p);

/* Computes the layout of a rows × cols screen; `focus` is the focused pane, `zoom` shows it
 * alone. Every visible rectangle lies inside the screen; none overlaps another. */
void layout_compute(struct layout *l, int rows, int cols, enum pane_id focus, bool zoom);

#endif
