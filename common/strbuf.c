/* strbuf — growable strings and string vectors. */
#include "config.h"

#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && !defined(STRBUF_NO_SIMD)
#include <emmintrin.h>
#endif

#include "xalloc.h"

static void strbuf_grow_to(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need < sb->len)
		fatal("string too long");
	sb->buf = xgrow(sb->buf, &sb->cap, need, 1);
}

/* Room for `extra` more bytes and the NUL; the test is all that most calls do. */
static inline void strbuf_reserve(struct strbuf *sb, size_t extra)
{
	if (!sb->buf || extra >= sb->cap - sb->len)
		strbuf_grow_to(sb, extra);
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	strbuf_reserve(sb, extra);
	if (sb->len == 0)
		sb->buf[0] = '\0';
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
	strbuf_reserve(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	size_t room;
	int n;

	/* Printed once where it fits in the room there is, else measured and printed again. */
	strbuf_reserve(sb, 0);
	room = sb->cap - sb->len;
	va_copy(ap2, ap);
	n = vsnprintf(sb->buf + sb->len, room, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		fatal("bad format string \"%s\"", fmt);
	if ((size_t)n >= room) {
		strbuf_reserve(sb, (size_t)n);
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_addu(struct strbuf *sb, unsigned long long v)
{
	char digits[20], *p = digits + sizeof(digits);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	strbuf_add(sb, p, (size_t)(digits + sizeof(digits) - p));
}

void strbuf_addi(struct strbuf *sb, long long v)
{
	if (v < 0) {
		strbuf_addc(sb, '-');
		/* through unsigned: LLONG_MIN has no positive counterpart */
		strbuf_addu(sb, 0ULL - (unsigned long long)v);
		return;
	}
	strbuf_addu(sb, (unsigned long long)v);
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

/* What a byte asks of strbuf_add_json: 1 an escape always (C0, '"', '\\'), 2 a look with
 * STRBUF_JSON_TERMINAL (DEL, and the lead bytes of the sequences it escapes). */
static const unsigned char json_class[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1, [0x7f] = 2, [0xc2] = 2, [0xe2] = 2,
};

/* The first byte at or after p, before end, of a class in `mask`; end when none. Where
 * SSE2 is (every x86-64), 16 bytes at a time: a block none of whose bytes is below 0x20,
 * '"', '\\' (or, for the terminal, DEL or above 0x7f) is passed over whole; the first byte
 * that may need a look is then looked at in the table. */
static const unsigned char *json_plain_run(const unsigned char *p, const unsigned char *end,
					   unsigned mask)
{
#if defined(__SSE2__) && !defined(STRBUF_NO_SIMD)
	const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
	const __m128i c0 = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);

	while (end - p >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)p), m;
		unsigned bits;

		m = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash));
		m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_min_epu8(x, c0), x)); /* x <= 0x1f */
		if (mask & 2) /* DEL, and every byte with its top bit set */
			m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(x, del), x));
		bits = (unsigned)_mm_movemask_epi8(m);
		if (!bits) {
			p += 16;
			continue;
		}
		p += __builtin_ctz(bits);
		if (json_class[*p] & mask)
			return p;
		p++; /* a byte the terminal may show after all (UTF-8) */
	}
#endif
	while (p < end && !(json_class[*p] & mask))
		p++;
	return p;
}

/* The code point of the sequence at p that STRBUF_JSON_TERMINAL escapes, and its length;
 * 0 when p starts none. */
static unsigned json_terminal_at(const unsigned char *p, const unsigned char *end, size_t *len)
{
	size_t left = (size_t)(end - p);

	if (p[0] == 0x7f) {
		*len = 1;
		return 0x7f;
	}
	if (p[0] == 0xc2 && left >= 2 && p[1] >= 0x80 && p[1] <= 0x9f) {
		*len = 2;
		return p[1];
	}
	if (p[0] == 0xe2 && left >= 3 && p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) {
		*len = 3;
		return 0x2000u + (p[2] - 0x80u);
	}
	if (p[0] == 0xe2 && left >= 3 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) {
		*len = 3;
		return 0x2040u + (p[2] - 0x80u);
	}
	return 0;
}

void strbuf_add_json(struct strbuf *sb, const char *s, size_t len, unsigned flags)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const unsigned mask = flags & STRBUF_JSON_TERMINAL ? 3 : 1;

	/* Room for the string with nothing escaped; each escape makes room for the rest. */
	strbuf_reserve(sb, len + 2);
	sb->buf[sb->len++] = '"';
	for (;;) {
		const unsigned char *run = p;
		size_t n = 1;
		unsigned cp;
		char *o;

		p = json_plain_run(p, end, mask);
		if (p > run) {
			memcpy(sb->buf + sb->len, run, (size_t)(p - run));
			sb->len += (size_t)(p - run);
		}
		if (p == end)
			break;
		strbuf_reserve(sb, 6 + (size_t)(end - p) + 1);
		o = sb->buf + sb->len;
		if (json_class[*p] == 1) {
			sb->len += json_escape_byte(*p++, o);
			continue;
		}
		cp = json_terminal_at(p, end, &n);
		if (!cp) { /* a character that starts the same way, harmless */
			sb->buf[sb->len++] = (char)*p++;
			continue;
		}
		o[0] = '\\';
		o[1] = 'u';
		o[2] = hex[(cp >> 12) & 15];
		o[3] = hex[(cp >> 8) & 15];
		o[4] = hex[(cp >> 4) & 15];
		o[5] = hex[cp & 15];
		sb->len += 6;
		p += n;
	}
	sb->buf[sb->len++] = '"';
	sb->buf[sb->len] = '\0';
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
