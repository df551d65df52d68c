/* statusbar — left text first; hints fill what is left, whole hints only. */
#include "config.h"

#include "statusbar.h"

#include "draw.h"
#include "textsan.h"

void statusbar_draw(struct rect r, const char *left, const char *const *hints)
{
	int used, x, need = 0, n = 0;

	if (r.h <= 0 || r.w <= 0)
		return;
	draw_fill(r, THEME_STATUS);
	used = draw_text_cut(r.y, r.x + 1, r.w - 1, left, THEME_STATUS) + 1;
	if (!hints)
		return;
	/* Count how many hints fit right-aligned after the left text. */
	for (int i = 0; hints[i] && hints[i + 1]; i += 2) {
		int w = textsan_width(hints[i]) + 1 + textsan_width(hints[i + 1]) + 2;

		if (used + 2 + need + w > r.w)
			break;
		need += w;
		n++;
	}
	x = r.x + r.w - need;
	for (int i = 0; i < n; i++) {
		x += draw_text(r.y, x, r.w, hints[2 * i], THEME_STATUS_KEY);
		x += draw_text(r.y, x, r.w, " ", THEME_STATUS);
		x += draw_text(r.y, x, r.w, hints[2 * i + 1], THEME_STATUS);
		x += draw_text(r.y, x, r.w, "  ", THEME_STATUS);
	}
}
