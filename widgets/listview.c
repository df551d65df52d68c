/* listview — the selection follows the keys; the window follows the selection. */
#include "config.h"

#include "listview.h"

#include "draw.h"

void listview_clamp(struct listview *lv, int n, int h)
{
	if (lv->sel >= n)
		lv->sel = n - 1;
	if (lv->sel < 0)
		lv->sel = 0;
	if (h < 1)
		h = 1;
	if (lv->sel < lv->top)
		lv->top = lv->sel;
	if (lv->sel >= lv->top + h)
		lv->top = lv->sel - h + 1;
	if (lv->top > n - h)
		lv->top = n - h;
	if (lv->top < 0)
		lv->top = 0;
}

void listview_move(struct listview *lv, int n, int delta)
{
	lv->sel += delta;
	if (lv->sel >= n)
		lv->sel = n - 1;
	if (lv->sel < 0)
		lv->sel = 0;
}

void listview_draw(struct listview *lv, int n, struct rect r, bool focus, listview_row_fn fn,
		   void *ctx)
{
	listview_clamp(lv, n, r.h);
	for (int i = 0; i < r.h && lv->top + i < n; i++) {
		bool sel = lv->top + i == lv->sel;

		if (sel)
			draw_fill((struct rect){r.y + i, r.x, 1, r.w},
				  focus ? THEME_SELECTED : THEME_NORMAL);
		fn(ctx, lv->top + i, r.y + i, r.x, r.w, sel);
	}
}
