/* xalloc — allocation wrappers that abort on out-of-memory. */
#include "config.h"

#include "xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("pevtui: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (!p)
		fatal("out of memory allocating %zu x %zu bytes", count, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		fatal("out of memory reallocating %zu bytes", n);
	return q;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap;

	if (need <= c)
		return p;
	if (c < 8)
		c = 8;
	while (c < need) {
		if (c > ((size_t)-1) / 2)
			fatal("array size overflow");
		c *= 2;
	}
	if (size && c > ((size_t)-1) / size)
		fatal("array size overflow");
	*cap = c;
	return xrealloc(p, c * size);
}

char *xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *d = xmalloc(len + 1);

	memcpy(d, s, len);
	d[len] = '\0';
	return d;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *s;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		fatal("bad format string \"%s\"", fmt);
	s = xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
