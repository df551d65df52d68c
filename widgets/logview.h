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
	size_t hit_off, hit_len; /* the matched bytes in that line (drawn marked) */
	size_t match_no, matches; /* the hit is match match_no of matches (from 1) */
	size_t first_shown, last_shown; /* set by the last draw */
	size_t sel;      /* the selected line, or (size_t)-1: the last one, while following */
	bool show_sel;   /* draw the selected line marked (its pane has the focus) */
};

void logview_init(struct logview *lv);
/* Draws into `r` (no frame). */
void logview_draw(struct logview *lv, const struct linestore *ls, struct rect r,
		  logview_role_fn role_of);
/* Scrolls by `lines` (negative = up); reaching the end follows the tail again. */
void logview_scroll(struct logview *lv, const struct linestore *ls, long lines);
void logview_home(struct logview *lv);
void logview_end(struct logview *lv);
/* Finds `needle` (ASCII case-insensitive) after the last hit (or from the top shown);
 * wraps around. true and scrolls to it when found, with match_no and matches set
 * (linestore_find and linestore_count say how matches are counted). */
bool logview_search(struct logview *lv, const struct linestore *ls, const char *needle,
		    bool forward);
/* Moves the selection by `lines` (negative = up), scrolling as little as it takes to keep
 * it on screen; moving down onto the last line follows the tail again. */
void logview_select(struct logview *lv, const struct linestore *ls, long lines);
/* Selects line `i` (scrolled into view at the next draw). */
void logview_select_line(struct logview *lv, const struct linestore *ls, size_t i);
/* The selected line (the last one while following); (size_t)-1 when the store is empty. */
size_t logview_selected(const struct logview *lv, const struct linestore *ls);

#endif
