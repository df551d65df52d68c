/* textview — wrapping at spaces by display width; drawing the visible rows only. */
#include "config.h"

#include "textview.h"

#include <string.h>

#include "draw.h"
#include "textsan.h"

size_t textview_row(const char *s, int width, size_t *next)
{
	size_t n = strlen(s), i = 0, len, brk = 0, nxt;
	int used = 0, w;
	uint32_t cp;

	if (width < 1)
		width = 1;
	while (i < n) {
		len = textsan_decode(s + i, n - i, &cp);
		w = textsan_cpwidth(cp);
		if (used + w > width)
			break;
		if (cp == ' ')
			brk = i;
		used += w;
		i += len;
	}
	if (i >= n) {
		*next = n;
		return n;
	}
	if (s[i] == ' ')
		brk = i; /* the row ends exactly before a space */
	if (brk > 0) {
		/* Break at the last space; the next row starts after the spaces. */
		nxt = brk;
		while (s[nxt] == ' ')
			nxt++;
		*next = nxt;
		return brk;
	}
	if (i == 0) /* a character wider than the row: take it anyway */
		i = textsan_decode(s, n, &cp);
	nxt = i;
	while (s[nxt] == ' ')
		nxt++;
	*next = nxt;
	return i;
}

int textview_rows(const char *s, int width)
{
	int rows = 1;
	size_t next;

	while (*s) {
		textview_row(s, width, &next);
		s += next;
		if (*s)
			rows++;
	}
	return rows;
}

int textview_draw(int y, int x, int width, int maxrows, int skip, const char *s,
		  enum theme_role role)
{
	return textview_draw_mark(y, x, width, maxrows, skip, s, role, 0, 0, role);
}

int textview_draw_mark(int y, int x, int width, int maxrows, int skip, const char *s,
		       enum theme_role role, size_t mark_off, size_t mark_len,
		       enum theme_role mark_role)
{
	const char *base = s;
	int row = 0, drawn = 0;
	size_t len, next;

	if (maxrows <= 0 || width <= 0)
		return 0;
	do {
		len = textview_row(s, width, &next);
		if (row >= skip) {
			/* This row holds bytes [a, b) of the text; the mark may cover some. */
			size_t a = (size_t)(s - base), b = a + len;
			size_t m0 = mark_off > a ? mark_off : a;
			size_t m1 = mark_off + mark_len < b ? mark_off + mark_len : b;

			if (mark_len && m0 < m1) {
				int used = draw_textn(y + drawn, x, width, s, m0 - a, role);

				used += draw_textn(y + drawn, x + used, width - used, base + m0,
						   m1 - m0, mark_role);
				draw_textn(y + drawn, x + used, width - used, base + m1, b - m1, role);
			} else {
				draw_textn(y + drawn, x, width, s, len, role);
			}
			drawn++;
		}
		row++;
		s += next;
	} while (*s && drawn < maxrows);
	return drawn;
}
