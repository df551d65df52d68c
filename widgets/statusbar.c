/* statusbar — left text first, hints fill what is left, whole hints only; or the hints
 * first (keys that must stay seen), whole or as bare keys, the left text cut to fit. */
#include "config.h"

#include "statusbar.h"

#include <stdbool.h>

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

/* The width of the hints drawn whole ("a approve  x reject  ") or as bare keys
 * ("a x ? help "): the last pair keeps its word in the short form (`?` for the rest). */
static int hints_width(const char *const *hints, bool bare)
{
	int w = 0;

	for (int i = 0; hints[i] && hints[i + 1]; i += 2) {
		bool last = !hints[i + 2];

		w += textsan_width(hints[i]) + 1;
		if (!bare || last)
			w += textsan_width(hints[i + 1]) + (bare ? 1 : 2);
	}
	return w;
}

void statusbar_draw_keys_first(struct rect r, const char *left, const char *const *hints,
			       int min_left)
{
	bool bare;
	int w, x;

	if (!hints) {
		statusbar_draw(r, left, NULL);
		return;
	}
	if (r.h <= 0 || r.w <= 0)
		return;
	bare = hints_width(hints, false) + min_left + 1 > r.w;
	w = hints_width(hints, bare);
	if (w > r.w)
		w = r.w;
	draw_fill(r, THEME_STATUS);
	if (r.w - w - 2 > 0)
		draw_text_cut(r.y, r.x + 1, r.w - w - 2, left, THEME_STATUS);
	x = r.x + r.w - w;
	for (int i = 0; hints[i] && hints[i + 1] && x < r.x + r.w; i += 2) {
		bool last = !hints[i + 2];

		x += draw_text(r.y, x, r.x + r.w - x, hints[i], THEME_STATUS_KEY);
		x += draw_text(r.y, x, r.x + r.w - x, " ", THEME_STATUS);
		if (bare && !last)
			continue;
		x += draw_text(r.y, x, r.x + r.w - x, hints[i + 1], THEME_STATUS);
		x += draw_text(r.y, x, r.x + r.w - x, bare ? " " : "  ", THEME_STATUS);
	}
}
