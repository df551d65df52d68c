/* linestore — growing array of owned lines; streamed text joins the open last line. */
#include "config.h"

#include "linestore.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

void linestore_init(struct linestore *ls)
{
	memset(ls, 0, sizeof(*ls));
}

void linestore_release(struct linestore *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->v[i].text);
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

static void push(struct linestore *ls, int kind, const char *s, size_t len)
{
	ls->v = xgrow(ls->v, &ls->cap, ls->n + 1, sizeof(*ls->v));
	ls->v[ls->n].text = xstrndup(s, len);
	ls->v[ls->n].kind = kind;
	ls->n++;
}

/* A cut point at or before `max` that does not split a UTF-8 character. */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t i = max;

	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i ? i : max;
}

/* Appends s[0..len) (no '\n') to the open line, breaking it when too long. */
static void extend(struct linestore *ls, int kind, const char *s, size_t len)
{
	while (len > 0) {
		struct line *last;
		size_t have, room, take;

		if (!ls->open || ls->n == 0 || ls->v[ls->n - 1].kind != kind) {
			push(ls, kind, "", 0);
			ls->open = true;
		}
		last = &ls->v[ls->n - 1];
		have = strlen(last->text);
		room = LINESTORE_MAX_LINE - have;
		take = len <= room ? len : utf8_cut(s, room);
		last->text = xrealloc(last->text, have + take + 1);
		memcpy(last->text + have, s, take);
		last->text[have + take] = '\0';
		s += take;
		len -= take;
		if (len > 0)
			ls->open = false;
	}
}

void linestore_stream(struct linestore *ls, int kind, const char *text)
{
	const char *nl;

	if (ls->open && ls->n && ls->v[ls->n - 1].kind != kind)
		ls->open = false;
	while ((nl = strchr(text, '\n')) != NULL) {
		if (nl == text && !ls->open)
			push(ls, kind, "", 0);
		else
			extend(ls, kind, text, (size_t)(nl - text));
		ls->open = false;
		text = nl + 1;
	}
	if (*text)
		extend(ls, kind, text, strlen(text));
}

void linestore_add(struct linestore *ls, int kind, const char *text)
{
	ls->open = false;
	linestore_stream(ls, kind, text);
	ls->open = false;
}

void linestore_close(struct linestore *ls)
{
	ls->open = false;
}

/* ---- search ---- */

/* The first match of `needle` (nl bytes, ASCII case-insensitive) in `t` at or after byte
 * `from`, counting matches from the line start without overlap; -1 when none. */
static long next_match(const char *t, const char *needle, size_t nl, size_t from)
{
	for (size_t i = 0; t[i];) {
		if (strncasecmp(t + i, needle, nl) == 0) {
			if (i >= from)
				return (long)i;
			i += nl;
		} else {
			i++;
		}
	}
	return -1;
}

/* The last match before byte `before` (same counting); -1 when none. */
static long prev_match(const char *t, const char *needle, size_t nl, size_t before)
{
	long last = -1;

	for (size_t i = 0; t[i] && i < before;) {
		if (strncasecmp(t + i, needle, nl) == 0) {
			last = (long)i;
			i += nl;
		} else {
			i++;
		}
	}
	return last;
}

bool linestore_find(const struct linestore *ls, const char *needle, size_t line, size_t off,
		    bool forward, struct linestore_pos *hit)
{
	size_t n = ls->n, nl = strlen(needle);

	if (n == 0 || nl == 0)
		return false;
	if (line >= n) {
		line = forward ? 0 : n - 1;
		off = forward ? 0 : (size_t)-1;
	}
	/* The start line from `off` on (forward) or before it (backward), then each other
	 * line whole, then the start line whole again: a search wraps around. */
	for (size_t k = 0; k <= n; k++) {
		size_t i = forward ? (line + k) % n : (line + n - k) % n;
		const char *t = ls->v[i].text;
		long at;

		if (forward)
			at = next_match(t, needle, nl, k == 0 ? off : 0);
		else
			at = prev_match(t, needle, nl, k == 0 ? off : (size_t)-1);
		if (at >= 0) {
			hit->line = i;
			hit->off = (size_t)at;
			return true;
		}
	}
	return false;
}

size_t linestore_count(const struct linestore *ls, const char *needle,
		       const struct linestore_pos *at, size_t *index)
{
	size_t nl = strlen(needle), total = 0;

	if (index)
		*index = 0;
	if (nl == 0)
		return 0;
	for (size_t i = 0; i < ls->n; i++) {
		const char *t = ls->v[i].text;

		for (size_t j = 0; t[j];) {
			if (strncasecmp(t + j, needle, nl) != 0) {
				j++;
				continue;
			}
			total++;
			if (index && at && at->line == i && at->off == j)
				*index = total;
			j += nl;
		}
	}
	return total;
}
