/* linestore — an append-only store of text lines with a colour tag each (no curses). */
#ifndef PEVTUI_LINESTORE_H
#define PEVTUI_LINESTORE_H

#include <stdbool.h>
#include <stddef.h>

/* Longer lines are broken so one runaway line cannot make drawing slow. */
#define LINESTORE_MAX_LINE 4096

struct line {
	char *text;  /* owned, UTF-8, no '\n' */
	int kind;    /* caller's tag, e.g. a theme role */
};

/* Plain data on purpose: views read v[0..n) directly. */
struct linestore {
	struct line *v;
	size_t n, cap;
	bool open; /* the last line still receives streamed text */
};

void linestore_init(struct linestore *ls);
void linestore_release(struct linestore *ls);
/* Adds `text` (copied) as complete lines, one per '\n'-separated part; closes an open line. */
void linestore_add(struct linestore *ls, int kind, const char *text);
/* Streams `text` (copied): continues the open line when it has the same kind, and leaves
 * the last part open unless text ends with '\n'. */
void linestore_stream(struct linestore *ls, int kind, const char *text);
/* Ends the open line, if any. */
void linestore_close(struct linestore *ls);

/* A place in the store: a line and a byte offset in its text. */
struct linestore_pos {
	size_t line, off;
};

/*
 * Search, ASCII case-insensitive. Matches are counted from each line's start without
 * overlapping ("aa" is in "aaaa" twice), the same way by every function here.
 * linestore_find: the first match after (line, off) — at or after `off` in that line
 * when forward, before it when backward — wrapping around the store; a `line` past the
 * end starts at the top (forward) or the bottom. true and *hit when found.
 */
bool linestore_find(const struct linestore *ls, const char *needle, size_t line, size_t off,
		    bool forward, struct linestore_pos *hit);
/* The number of matches in the store; *index (may be NULL) gets the 1-based number of the
 * match at `at` (0 when `at` is NULL or no match starts there). */
size_t linestore_count(const struct linestore *ls, const char *needle,
		       const struct linestore_pos *at, size_t *index);

#endif
