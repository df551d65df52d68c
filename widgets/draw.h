/* draw — putting sanitized UTF-8 text and frames on the screen (stdscr), clipped to a width. */
#ifndef PEVTUI_DRAW_H
#define PEVTUI_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#include "rect.h"
#include "theme.h"

/* Draws `s` at (y, x) in at most `maxw` columns; wide characters are never split. Control
 * characters show as '?'. Returns the columns used. */
int draw_text(int y, int x, int maxw, const char *s, enum theme_role role);
/* Same for the first `n` bytes of `s`. */
int draw_textn(int y, int x, int maxw, const char *s, size_t n, enum theme_role role);
/* Same with printf formatting. */
int draw_textf(int y, int x, int maxw, enum theme_role role, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Like draw_text, but a text cut to fit ends in "…" so the cut shows. */
int draw_text_cut(int y, int x, int maxw, const char *s, enum theme_role role);
/* Same with printf formatting. */
int draw_textf_cut(int y, int x, int maxw, enum theme_role role, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Fills a rectangle with blanks in a role. */
void draw_fill(struct rect r, enum theme_role role);
/* A single-line frame with an optional title on the top edge. */
void draw_frame(struct rect r, const char *title, enum theme_role border,
		enum theme_role title_role);
/* A pane frame: focused panes use the focus roles. */
void draw_box(struct rect r, const char *title, bool focus);

#endif
