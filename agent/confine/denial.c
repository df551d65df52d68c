/* denial — a confined command's refusals told by name: the lines of its output where the
 * kernel said no, and the path or address each names. A guess from text (commands word
 * their errors as they like), so it says what the line said, not more. */
#include "config.h"

#include "confine.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define MAX_NOTES 3

static const char *const refusals[] = {"Permission denied", "Operation not permitted",
				       "Read-only file system"};

/* The first '…' or "…" in [from, to), as a new string; NULL when none. */
static char *quoted_in(const char *from, const char *to, bool last)
{
	char *found = NULL;
	for (const char *p = from; p < to; p++) {
		if (*p != '\'' && *p != '"' && strncmp(p, "\xe2\x80\x98", 3))
			continue;
		bool curly = *p == '\xe2';
		const char *s = p + (curly ? 3 : 1), *e = s;
		while (e < to && (curly ? strncmp(e, "\xe2\x80\x99", 3) != 0 : *e != *p))
			e++;
		if (e >= to)
			break;
		if (e > s) {
			free(found);
			found = xstrndup(s, (size_t)(e - s));
			if (!last)
				return found;
		}
		p = e + (curly ? 2 : 0);
	}
	return found;
}

/* The word just before `at` ("cannot create /etc/x: Permission denied" → /etc/x) when
 * it looks like a path; NULL otherwise. */
static char *word_before(const char *line, const char *at)
{
	const char *e = at;
	while (e > line && (e[-1] == ' ' || e[-1] == ':'))
		e--;
	const char *s = e;
	while (s > line && s[-1] != ' ' && s[-1] != ':')
		s--;
	if (e > s && memchr(s, '/', (size_t)(e - s)))
		return xstrndup(s, (size_t)(e - s));
	return NULL;
}

bool confine_denial(const char *output, struct strbuf *note)
{
	int told = 0;
	struct strvec seen = STRVEC_INIT;
	for (const char *line = output; line && *line && told < MAX_NOTES;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		const char *at = NULL, *what = NULL;
		for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]) && !at; i++) {
			const char *f = strstr(line, refusals[i]);
			if (f && f < end) {
				at = f;
				what = refusals[i];
			}
		}
		if (at) {
			char *path = quoted_in(at, end, false);
			if (!path)
				path = quoted_in(line, at, true);
			if (!path)
				path = word_before(line, at);
			char *key = xasprintf("%s|%s", path ? path : "", what);
			bool dup = false;
			for (size_t i = 0; i < seen.n; i++)
				dup = dup || !strcmp(seen.v[i], key);
			if (!dup) {
				strvec_take(&seen, key);
				strbuf_addf(note, "%ssandbox denied: %s (%s)", told ? "\n" : "",
					    path ? path : "an operation", what);
				told++;
			} else {
				free(key);
			}
			free(path);
		}
		line = *end ? end + 1 : end;
	}
	strvec_clear(&seen);
	return told > 0;
}
