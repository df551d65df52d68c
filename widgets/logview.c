/* logview — tail-following wrapped view over a line store; bottom-up layout when following. */
#include "config.h"

#include "logview.h"

#include <strings.h>
#include <string.h>

#include "draw.h"
#include "textview.h"

#define NO_HIT ((size_t)-1)

void logview_init(struct logview *lv)
{
	memset(lv, 0, sizeof(*lv));
	lv->follow = true;
	lv->hit = NO_HIT;
}

void logview_draw(struct logview *lv, const struct linestore *ls, struct rect r,
		  logview_role_fn role_of)
{
	size_t first;
	int skip = 0, y = r.y;

	if (r.h <= 0 || r.w <= 0 || ls->n == 0) {
		lv->first_shown = lv->last_shown = 0;
		return;
	}
	if (lv->follow) {
		/* Walk back from the last line until the rows fill the pane. */
		int rows = 0;

		first = ls->n;
		while (first > 0 && rows < r.h) {
			first--;
			rows += textview_rows(ls->v[first].text, r.w);
		}
		skip = rows > r.h ? rows - r.h : 0;
	} else {
		first = lv->top < ls->n ? lv->top : ls->n - 1;
	}
	lv->first_shown = first;
	for (size_t i = first; i < ls->n && y < r.y + r.h; i++) {
		enum theme_role role = i == lv->hit ? THEME_SEARCH : role_of(ls->v[i].kind);

		y += textview_draw(y, r.x, r.w, r.y + r.h - y, skip, ls->v[i].text, role);
		skip = 0;
		lv->last_shown = i;
	}
}

void logview_scroll(struct logview *lv, const struct linestore *ls, long lines)
{
	size_t top = lv->follow ? lv->first_shown : lv->top;

	if (ls->n == 0)
		return;
	if (lines < 0) {
		size_t up = (size_t)(-lines);

		lv->top = top > up ? top - up : 0;
		lv->follow = false;
		return;
	}
	if (lv->follow)
		return;
	/* Scrolling down past what is already on screen returns to following the tail. */
	if (top + (size_t)lines >= ls->n || lv->last_shown + 1 >= ls->n) {
		lv->follow = true;
		return;
	}
	lv->top = top + (size_t)lines;
}

void logview_home(struct logview *lv)
{
	lv->follow = false;
	lv->top = 0;
}

void logview_end(struct logview *lv)
{
	lv->follow = true;
}

bool logview_search(struct logview *lv, const struct linestore *ls, const char *needle,
		    bool forward)
{
	size_t n = ls->n, nl = strlen(needle), s0;

	if (n == 0 || nl == 0)
		return false;
	if (lv->hit != NO_HIT && lv->hit < n)
		s0 = forward ? (lv->hit + 1) % n : (lv->hit + n - 1) % n;
	else
		s0 = forward ? lv->first_shown % n : lv->last_shown % n;
	for (size_t k = 0; k < n; k++) {
		size_t i = forward ? (s0 + k) % n : (s0 + n - k) % n;

		for (const char *t = ls->v[i].text; *t; t++) {
			if (strncasecmp(t, needle, nl) == 0) {
				lv->hit = i;
				lv->follow = false;
				lv->top = i;
				return true;
			}
		}
	}
	return false;
}
