/* logview — tail-following wrapped view over a line store; bottom-up layout when following. */
#include "config.h"

#include "logview.h"

#include <string.h>

#include "draw.h"
#include "textview.h"

#define NO_HIT ((size_t)-1)

void logview_init(struct logview *lv)
{
	memset(lv, 0, sizeof(*lv));
	lv->follow = true;
	lv->hit = NO_HIT;
	lv->sel = NO_HIT;
}

/* Keeps the selected line on screen: the fewest lines scrolled. */
static void reveal_selection(struct logview *lv, const struct linestore *ls, struct rect r)
{
	size_t first;
	int rows;

	if (lv->follow || lv->sel >= ls->n)
		return;
	if (lv->sel < lv->top) {
		lv->top = lv->sel;
		return;
	}
	/* The highest top that still shows the whole selected line at the bottom. */
	first = lv->sel;
	rows = textview_rows(ls->v[first].text, r.w);
	while (first > lv->top && rows + textview_rows(ls->v[first - 1].text, r.w) <= r.h)
		rows += textview_rows(ls->v[--first].text, r.w);
	if (first > lv->top)
		lv->top = first;
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
		reveal_selection(lv, ls, r);
		first = lv->top < ls->n ? lv->top : ls->n - 1;
	}
	lv->first_shown = first;
	for (size_t i = first; i < ls->n && y < r.y + r.h; i++) {
		/* Only the matched text of a search hit is marked, not its whole line. */
		size_t mark = i == lv->hit ? lv->hit_len : 0;

		bool sel = lv->show_sel && i == logview_selected(lv, ls);

		/* Without colour the selection bar and the mark look alike: on the line with
		 * the match, the bar would hide which text matched, so only the match shows. */
		if (sel && mark && theme_attr(THEME_SELECTED) == theme_attr(THEME_SEARCH))
			sel = false;
		y += textview_draw_mark(y, r.x, r.w, r.y + r.h - y, skip, ls->v[i].text,
					sel ? THEME_SELECTED : role_of(ls->v[i].kind), lv->hit_off,
					mark, THEME_SEARCH);
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
	lv->sel = 0;
}

void logview_end(struct logview *lv)
{
	lv->follow = true;
	lv->sel = NO_HIT;
}

bool logview_search(struct logview *lv, const struct linestore *ls, const char *needle,
		    bool forward)
{
	struct linestore_pos at;
	size_t line, off;

	if (ls->n == 0 || !*needle)
		return false;
	if (lv->hit != NO_HIT && lv->hit < ls->n) {
		line = lv->hit;
		off = forward ? lv->hit_off + 1 : lv->hit_off;
	} else {
		line = forward ? lv->first_shown % ls->n : lv->last_shown % ls->n;
		off = forward ? 0 : (size_t)-1;
	}
	if (!linestore_find(ls, needle, line, off, forward, &at))
		return false;
	lv->hit = at.line;
	lv->hit_off = at.off;
	lv->hit_len = strlen(needle);
	lv->matches = linestore_count(ls, needle, &at, &lv->match_no);
	lv->follow = false;
	lv->top = at.line;
	return true;
}

size_t logview_selected(const struct logview *lv, const struct linestore *ls)
{
	if (ls->n == 0)
		return NO_HIT;
	return lv->sel < ls->n ? lv->sel : ls->n - 1;
}

void logview_select_line(struct logview *lv, const struct linestore *ls, size_t i)
{
	if (ls->n == 0)
		return;
	if (i >= ls->n)
		i = ls->n - 1;
	if (lv->follow)
		lv->top = lv->first_shown;
	lv->sel = i;
	lv->follow = false;
}

void logview_select(struct logview *lv, const struct linestore *ls, long lines)
{
	size_t cur = logview_selected(lv, ls), up;

	if (ls->n == 0)
		return;
	if (lines < 0) {
		up = (size_t)(-lines);
		logview_select_line(lv, ls, cur > up ? cur - up : 0);
		return;
	}
	if (cur + (size_t)lines >= ls->n - 1) {
		/* Onto the last line: follow the tail again. */
		lv->sel = NO_HIT;
		lv->follow = true;
		return;
	}
	logview_select_line(lv, ls, cur + (size_t)lines);
}
