/*
 * logref — which event each stretch of a log came from, so that a log line can be opened
 * whole (tui/drill.h). One entry per event that added lines: where its lines start, its
 * type and seq, and the event's JSON while a byte budget lasts (after that, only the seq:
 * the event is read back from the journal when it is opened). No curses.
 */
#ifndef PEVTUI_LOGREF_H
#define PEVTUI_LOGREF_H

#include <stddef.h>

/* The JSON of all the events a view keeps, and of any one of them; beyond either only the
 * seq is kept. */
#define LOGREF_BUDGET (32u << 20)
#define LOGREF_MAX_EVENT (1u << 20)

struct logref_entry {
	size_t line;       /* the first line it added */
	int type;          /* enum event_type */
	unsigned long seq; /* 0 for streamed text (never journaled) */
	char *json;        /* the whole event, or NULL (over the budget, or streamed text) */
};

/* Plain data: entries in line order. */
struct logref {
	struct logref_entry *v;
	size_t n, cap;
};

void logref_init(struct logref *r);
void logref_release(struct logref *r);
/* Adds an entry for lines from `line` on. `json` (copied, may be NULL) is kept while
 * *budget (the bytes the caller's view still may keep) allows, and charged to it. */
void logref_add(struct logref *r, size_t line, int type, unsigned long seq, const char *json,
		size_t *budget);
/* The index of the entry that holds `line` (the last one starting at or before it), or -1
 * when no entry does. */
long logref_find(const struct logref *r, size_t line);
/* The lines [first, end) of entry i, given the store's line count. */
void logref_span(const struct logref *r, size_t i, size_t n_lines, size_t *first, size_t *end);

#endif
