/* xalloc — allocation that cannot fail: out of memory aborts here, in one place. */
#ifndef PEVTUI_XALLOC_H
#define PEVTUI_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* All return memory the caller owns and frees with free(). None returns NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows an array of `*cap` elements of `size` bytes so it holds at least `need`. */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);         /* NULL in, NULL out */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Prints "pevtui: fatal: MSG" and aborts: for impossible states only. */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
