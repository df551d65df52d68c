/* linestore — growing array of owned lines; streamed text joins the open last line. */
#include "config.h"

#include "linestore.h"

#include <stdlib.h>
#include <string.h>

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
