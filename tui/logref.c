/* logref — log lines → the events they came from, with a budget for the kept JSON. */
#include "config.h"

#include "logref.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void logref_init(struct logref *r)
{
	memset(r, 0, sizeof(*r));
}

void logref_release(struct logref *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].json);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

void logref_add(struct logref *r, size_t line, int type, unsigned long seq, const char *json,
		size_t *budget)
{
	struct logref_entry *e;
	size_t len = json ? strlen(json) : 0;

	/* A second event adding no line before the next one: the later one names the line. */
	if (r->n && r->v[r->n - 1].line == line) {
		e = &r->v[r->n - 1];
		if (e->json && budget)
			*budget += strlen(e->json);
		free(e->json);
	} else {
		r->v = xgrow(r->v, &r->cap, r->n + 1, sizeof(*r->v));
		e = &r->v[r->n++];
	}
	e->line = line;
	e->type = type;
	e->seq = seq;
	e->json = NULL;
	if (json && len <= LOGREF_MAX_EVENT && budget && *budget >= len) {
		e->json = xstrdup(json);
		*budget -= len;
	}
}

long logref_find(const struct logref *r, size_t line)
{
	size_t lo = 0, hi = r->n;

	if (!r->n || r->v[0].line > line)
		return -1;
	/* the last entry with v[i].line <= line */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].line <= line)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo;
}

void logref_span(const struct logref *r, size_t i, size_t n_lines, size_t *first, size_t *end)
{
	*first = i < r->n ? r->v[i].line : n_lines;
	*end = i + 1 < r->n ? r->v[i + 1].line : n_lines;
	if (*end > n_lines)
		*end = n_lines;
	if (*first > *end)
		*first = *end;
}
