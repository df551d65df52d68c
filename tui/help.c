/* help — a modal listing every key with what it does (long descriptions wrap), scrollable
 * on small screens. */
#include "config.h"

#include "help.h"

#include "draw.h"
#include "modal.h"
#include "textsan.h"
#include "textview.h"

void help_draw(const char *const *pairs, int rows, int cols, int *scroll)
{
	int n = 0, kw = 0, total = 0, want_w = 84, dw, skip, y;
	struct rect r, in;

	for (int i = 0; pairs[i] && pairs[i + 1]; i += 2, n++) {
		int w = textsan_width(pairs[i]);

		kw = w > kw ? w : kw;
	}
	if (want_w > cols)
		want_w = cols;
	/* Description column: the dialog's inner width less the key column and margins. */
	dw = want_w - 4 - kw - 2;
	if (dw < 8)
		dw = 8;
	for (int i = 0; i < n; i++)
		total += textview_rows(pairs[2 * i + 1], dw);
	r = modal_rect(rows - 1, cols, total + 4, want_w);
	in = modal_draw(r, "Keys", "any key closes  j/k scroll");
	in.x += 1;
	in.w -= 2;
	in.y += 1;
	in.h -= 1;
	if (in.h <= 0 || in.w <= kw + 2)
		return;
	dw = in.w - kw - 2;
	total = 0;
	for (int i = 0; i < n; i++)
		total += textview_rows(pairs[2 * i + 1], dw);
	if (*scroll > total - in.h)
		*scroll = total - in.h;
	if (*scroll < 0)
		*scroll = 0;
	skip = *scroll;
	y = in.y;
	for (int i = 0; i < n && y < in.y + in.h; i++) {
		const char *d = pairs[2 * i + 1];
		int h = textview_rows(d, dw);

		if (skip >= h) {
			skip -= h;
			continue;
		}
		if (skip == 0)
			draw_text(y, in.x, kw, pairs[2 * i], THEME_ACCENT);
		y += textview_draw(y, in.x + kw + 2, dw, in.y + in.h - y, skip, d, THEME_DIALOG);
		skip = 0;
	}
}
