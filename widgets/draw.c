/* draw — UTF-8 to wide characters on stdscr, clipped by measured width; frames. */
#include "config.h"

#include "draw.h"

#include <curses.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "textsan.h"
#include "xalloc.h"

/* Wide characters are put in small batches so long lines need no allocation. */
#define BATCH 128

int draw_text(int y, int x, int maxw, const char *s, enum theme_role role)
{
	return s ? draw_textn(y, x, maxw, s, strlen(s), role) : 0;
}

int draw_textn(int y, int x, int maxw, const char *s, size_t n, enum theme_role role)
{
	size_t i = 0, len;
	wchar_t buf[BATCH + 1];
	int nb = 0, used = 0, w, bx = x;
	uint32_t cp;

	if (!s || maxw <= 0 || y < 0 || x < 0 || y >= LINES || x >= COLS)
		return 0;
	if (x + maxw > COLS)
		maxw = COLS - x;
	attrset((attr_t)theme_attr(role));
	while (i < n) {
		len = textsan_decode(s + i, n - i, &cp);
		if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			cp = '?';
		w = textsan_cpwidth(cp);
		if (used + w > maxw)
			break;
		if (w == 0 && used == 0) { /* nothing to combine with */
			i += len;
			continue;
		}
		buf[nb++] = (wchar_t)cp;
		used += w;
		i += len;
		if (nb == BATCH) {
			buf[nb] = 0;
			mvaddnwstr(y, bx, buf, nb);
			getyx(stdscr, y, bx);
			nb = 0;
		}
	}
	if (nb) {
		buf[nb] = 0;
		mvaddnwstr(y, bx, buf, nb);
	}
	attrset(A_NORMAL);
	return used;
}

int draw_textf(int y, int x, int maxw, enum theme_role role, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	r = draw_text(y, x, maxw, s, role);
	free(s);
	return r;
}

int draw_text_cut(int y, int x, int maxw, const char *s, enum theme_role role)
{
	char *cut;
	int r;

	if (!s || maxw <= 0)
		return 0;
	if (textsan_width(s) <= maxw)
		return draw_text(y, x, maxw, s, role);
	cut = textsan_truncate(s, maxw);
	r = draw_text(y, x, maxw, cut, role);
	free(cut);
	return r;
}

int draw_textf_cut(int y, int x, int maxw, enum theme_role role, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	r = draw_text_cut(y, x, maxw, s, role);
	free(s);
	return r;
}

void draw_fill(struct rect r, enum theme_role role)
{
	attr_t a = (attr_t)theme_attr(role);

	if (r.w <= 0 || r.h <= 0)
		return;
	attrset(a);
	for (int y = r.y; y < r.y + r.h && y < LINES; y++)
		mvhline(y, r.x, ' ', r.w);
	attrset(A_NORMAL);
}

void draw_frame(struct rect r, const char *title, enum theme_role border,
		enum theme_role title_role)
{
	if (r.w < 2 || r.h < 2)
		return;
	attrset((attr_t)theme_attr(border));
	mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
	mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
	mvvline(r.y + 1, r.x, ACS_VLINE, r.h - 2);
	mvvline(r.y + 1, r.x + r.w - 1, ACS_VLINE, r.h - 2);
	mvaddch(r.y, r.x, ACS_ULCORNER);
	mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
	mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
	mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
	attrset(A_NORMAL);
	if (title && *title && r.w > 4) {
		int used = draw_text(r.y, r.x + 2, r.w - 4, " ", title_role);

		/* one column kept for the blank after the title */
		used += draw_text_cut(r.y, r.x + 2 + used, r.w - 5 - used, title, title_role);
		draw_text(r.y, r.x + 2 + used, r.w - 4 - used, " ", title_role);
	}
}

void draw_box(struct rect r, const char *title, bool focus)
{
	draw_frame(r, title, focus ? THEME_BORDER_FOCUS : THEME_BORDER,
		   focus ? THEME_TITLE_FOCUS : THEME_TITLE);
}
