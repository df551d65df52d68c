/* rect — a rectangle of screen cells (plain data, no curses), shared by layout and widgets. */
#ifndef PEVTUI_RECT_H
#define PEVTUI_RECT_H

struct rect {
	int y, x; /* top-left cell */
	int h, w; /* rows, columns; both >= 0 */
};

/* The inside of a bordered rectangle (never negative). */
static inline struct rect rect_inner(struct rect r)
{
	struct rect in = {r.y + 1, r.x + 1, r.h - 2, r.w - 2};

	if (in.h < 0)
		in.h = 0;
	if (in.w < 0)
		in.w = 0;
	return in;
}

#endif
