/* textview — word wrapping of UTF-8 text into rows of a width (pure) and drawing it. */
#ifndef PEVTUI_TEXTVIEW_H
#define PEVTUI_TEXTVIEW_H

#include <stddef.h>

#include "theme.h"

/*
 * The byte length of the first row of `s` in `width` columns: breaks after the last space
 * that fits, else inside a word; never splits a character; at least one character when
 * width >= 2 so a row always advances. `*next` gets the offset where the next row starts
 * (spaces at the break are skipped).
 */
size_t textview_row(const char *s, int width, size_t *next);
/* Rows `s` takes when wrapped at `width` (at least 1). */
int textview_rows(const char *s, int width);
/*
 * Draws `s` wrapped at `width` starting `skip` rows into it, at (y, x), at most `maxrows`
 * rows. Returns the rows drawn.
 */
int textview_draw(int y, int x, int width, int maxrows, int skip, const char *s,
		  enum theme_role role);
/* The same, with bytes [mark_off, mark_off + mark_len) of `s` drawn in `mark_role` (a
 * search match). */
int textview_draw_mark(int y, int x, int width, int maxrows, int skip, const char *s,
		       enum theme_role role, size_t mark_off, size_t mark_len,
		       enum theme_role mark_role);

#endif
