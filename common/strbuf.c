/* strbuf — growable strings and string vectors. */
#include "config.h"

#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static void strbuf_reserve(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		fatal("string too long");
	if (!sb->buf || need > sb->cap) {
		sb->buf = xgrow(sb->buf, &sb->cap, need, 1);
	}
}

void strbuf_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = 0;
	sb->cap = 0;
	strbuf_reserve(sb, 0);
	sb->buf[0] = '\0';
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
	strbuf_reserve(sb, n);
	if (n)
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_adds(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addc(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		fatal("bad format string \"%s\"", fmt);
	strbuf_reserve(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s;

	if (!sb->buf)
		strbuf_init(sb);
	s = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return s;
}

void strvec_push(struct strvec *sv, const char *s)
{
	sv->v = xgrow(sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v));
	sv->v[sv->n++] = xstrdup(s ? s : "");
}

size_t json_escape_byte(unsigned char c, char esc[6])
{
	static const char hex[] = "0123456789abcdef";
	static const char short_form[] = {['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
	                                  ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't'};

	esc[0] = '\\';
	if (c < sizeof(short_form) && short_form[c]) {
		esc[1] = short_form[c];
		return 2;
	}
	memcpy(esc + 1, "u00", 3);
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 15];
	return 6;
}

void strvec_take(struct strvec *sv, char *s)
{
	sv->v = xgrow(sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v));
	sv->v[sv->n++] = s;
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;

	sv->v = xgrow(sv->v, &sv->cap, sv->n + 1, sizeof(*sv->v));
	va_start(ap, fmt);
	sv->v[sv->n++] = xvasprintf(fmt, ap);
	va_end(ap);
}

void strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strvec_sort(struct strvec *sv)
{
	if (sv->n > 1)
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_strp);
}

char *strvec_join(const struct strvec *sv, const char *sep)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			strbuf_adds(&sb, sep);
		strbuf_adds(&sb, sv->v[i]);
	}
	return strbuf_detach(&sb);
}
