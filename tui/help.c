/* help — a modal listing every key with what it does, scrollable on small screens. */
#include "config.h"

#include "help.h"

#include "draw.h"
#include "modal.h"
#include "textsan.h"

void help_draw(const char *const *pairs, int rows, int cols, int *scroll)
{
	int n = 0, kw = 0;
	struct rect r, in;

	for (int i = 0; pairs[i] && pairs[i + 1]; i += 2, n++) {
		int w = textsan_width(pairs[i]);

		kw = w > kw ? w : kw;
	}
	r = modal_rect(rows - 1, cols, n + 4, 72);
	in = modal_draw(r, "Keys", "any key closes  j/k scroll");
	in.x += 1;
	in.w -= 2;
	in.y += 1;
	in.h -= 1;
	if (*scroll > n - in.h)
		*scroll = n - in.h;
	if (*scroll < 0)
		*scroll = 0;
	for (int i = 0; i < in.h && *scroll + i < n; i++) {
		int k = 2 * (*scroll + i);

		draw_text(in.y + i, in.x, kw, pairs[k], THEME_ACCENT);
		draw_text(in.y + i, in.x + kw + 2, in.w - kw - 2, pairs[k + 1], THEME_DIALOG);
	}
}
