/*
 * logview — a scrolling, wrapping view over a linestore: follows the tail until the
 * operator scrolls; draws only the rows on screen, so a million lines cost nothing.
 */
#ifndef PEVTUI_LOGVIEW_H
#define PEVTUI_LOGVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "linestore.h"
#include "rect.h"
#include "theme.h"

/* Maps a line's kind to a colour role. */
typedef enum theme_role (*logview_role_fn)(int kind);

/* Plain state, embedded by its owner. */
struct logview {
	bool follow;     /* stick to the last line */
	size_t top;      /* first line shown when not following */
	size_t hit;      /* line of the last search hit, or (size_t)-1 */
	size_t first_shown, last_shown; /* set by the last draw */
};

void logview_init(struct logview *lv);
/* Draws into `r` (no frame). */
void logview_draw(struct logview *lv, const struct linestore *ls, struct rect r,
		  logview_role_fn role_of);
/* Scrolls by `lines` (negative = up); reaching the end follows the tail again. */
void logview_scroll(struct logview *lv, const struct linestore *ls, long lines);
void logview_home(struct logview *lv);
void logview_end(struct logview *lv);
/* Finds `needle` (case-insensitive) from the line after the last hit (or from the top
 * shown); wraps around. true and scrolls to it when found. */
bool logview_search(struct logview *lv, const struct linestore *ls, const char *needle,
		    bool forward);

#endif
