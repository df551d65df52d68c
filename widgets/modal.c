/* modal — centring, clearing and framing; the content is the caller's. */
#include "config.h"

#include "modal.h"

#include "draw.h"
#include "textsan.h"

struct rect modal_rect(int rows, int cols, int want_h, int want_w)
{
	struct rect r;

	r.h = want_h < rows ? want_h : rows;
	r.w = want_w < cols ? want_w : cols;
	if (r.h < 0)
		r.h = 0;
	if (r.w < 0)
		r.w = 0;
	r.y = (rows - r.h) / 2;
	r.x = (cols - r.w) / 2;
	return r;
}

struct rect modal_draw(struct rect r, const char *title, const char *hint)
{
	draw_fill(r, THEME_DIALOG);
	draw_frame(r, title, THEME_DIALOG_BORDER, THEME_DIALOG_BORDER);
	if (hint && r.w > 6 && r.h >= 2) {
		int w = textsan_width(hint);
		int room = r.w - 4;
		int x = r.x + r.w - 2 - (w < room ? w : room);

		draw_text_cut(r.y + r.h - 1, x, room, hint, THEME_DIALOG_BORDER);
	}
	return rect_inner(r);
}
