/* textsan — stripping terminal controls from untrusted text and measuring it in columns. */
#include "config.h"

#include "textsan.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "strbuf.h"
#include "xalloc.h"

#define REPLACEMENT 0xFFFDu

size_t textsan_decode(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c, min;
	size_t len;

	if (n == 0) {
		*cp = REPLACEMENT;
		return 0;
	}
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2, c = s[0] & 0x1F, min = 0x80;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3, c = s[0] & 0x0F, min = 0x800;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else {
		*cp = REPLACEMENT;
		return 1;
	}
	if (n < len) {
		*cp = REPLACEMENT;
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = REPLACEMENT;
			return 1;
		}
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
		*cp = REPLACEMENT;
		return 1;
	}
	*cp = c;
	return len;
}

/* ESC-introduced strings (OSC, DCS, SOS, PM, APC) run to a terminator. */
static bool is_string_type(int t)
{
	return t == ']' || t == 'P' || t == 'X' || t == '^' || t == '_';
}

/* The 8-bit C1 introducers, as the ESC letter they stand for; 0 for other C1 codes. */
static int c1_type(uint32_t cp)
{
	switch (cp) {
	case 0x9B: return '[';
	case 0x9D: return ']';
	case 0x90: return 'P';
	case 0x98: return 'X';
	case 0x9E: return '^';
	case 0x9F: return '_';
	default: return 0;
	}
}

/* Index just past a string body starting at i; *complete false if it runs off the end. */
static size_t skip_string(const unsigned char *s, size_t n, size_t i, bool *complete)
{
	for (size_t j = i; j < n; j++) {
		if (s[j] == 0x07)
			return j + 1;
		if (s[j] == 0x1B) {
			if (j + 1 >= n)
				break;
			return s[j + 1] == '\\' ? j + 2 : j;
		}
		if (s[j] == 0xC2) {
			if (j + 1 >= n)
				break;
			if (s[j + 1] == 0x9C)
				return j + 2;
		}
	}
	*complete = false;
	return n;
}

/* Index just past a CSI body (parameters, intermediates, final) starting at i. */
static size_t skip_csi(const unsigned char *s, size_t n, size_t i, bool *complete)
{
	while (i < n && s[i] >= 0x20 && s[i] <= 0x3F)
		i++;
	if (i >= n) {
		*complete = false;
		return n;
	}
	if (s[i] >= 0x40 && s[i] <= 0x7E)
		return i + 1;
	return i; /* broken by a control: the sequence ends here */
}

static size_t skip_typed(const unsigned char *s, size_t n, size_t i, int type, bool *complete)
{
	if (type == '[')
		return skip_csi(s, n, i, complete);
	return skip_string(s, n, i, complete);
}

/*
 * If an escape sequence (ESC … or an 8-bit C1 introducer) starts at i, returns the index
 * past it; otherwise returns i. *complete false when the text ends inside it.
 */
static size_t skip_sequence(const unsigned char *s, size_t n, size_t i, bool *complete)
{
	uint32_t cp;
	size_t len;
	int t;

	*complete = true;
	if (s[i] == 0x1B) {
		if (i + 1 >= n) {
			*complete = false;
			return n;
		}
		t = s[i + 1];
		if (t == '[' || is_string_type(t))
			return skip_typed(s, n, i + 2, t, complete);
		if (t >= 0x20 && t <= 0x2F) {
			size_t j = i + 1;

			while (j < n && s[j] >= 0x20 && s[j] <= 0x2F)
				j++;
			if (j >= n) {
				*complete = false;
				return n;
			}
			return (s[j] >= 0x30 && s[j] <= 0x7E) ? j + 1 : j;
		}
		if (t >= 0x30 && t <= 0x7E)
			return i + 2;
		return i + 1;
	}
	if (s[i] == 0xC2) {
		len = textsan_decode((const char *)s + i, n - i, &cp);
		if (len == 2 && (t = c1_type(cp)) != 0)
			return skip_typed(s, n, i + 2, t, complete);
	}
	return i;
}

static bool is_dropped(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F))
		return true;
	/* Bidirectional embeddings, overrides and isolates can make text lie about itself. */
	return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

static void add_cp(struct strbuf *sb, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		strbuf_addc(sb, (char)cp);
		return;
	}
	if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		strbuf_add(sb, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		strbuf_add(sb, b, 3);
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		strbuf_add(sb, b, 4);
	}
}

char *textsan_clean(const char *str, size_t n, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str;
	struct strbuf sb;
	size_t i = 0, next, len;
	bool complete;
	uint32_t cp;

	strbuf_init(&sb);
	while (i < n) {
		/* Printable ASCII starts no sequence and is kept as it is: copied a run at once. */
		for (next = i; next < n && s[next] >= 0x20 && s[next] < 0x7F; next++)
			;
		if (next != i) {
			strbuf_add(&sb, str + i, next - i);
			i = next;
			continue;
		}
		next = skip_sequence(s, n, i, &complete);
		if (next != i) {
			i = next;
			continue;
		}
		len = textsan_decode(str + i, n - i, &cp);
		i += len;
		if (cp == '\n') {
			strbuf_addc(&sb, (flags & TEXTSAN_KEEP_NL) ? '\n' : ' ');
		} else if (cp == '\t') {
			strbuf_addc(&sb, (flags & TEXTSAN_KEEP_TAB) ? '\t' : ' ');
		} else if (!is_dropped(cp)) {
			add_cp(&sb, cp);
		}
	}
	return strbuf_detach(&sb);
}

size_t textsan_complete_prefix(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, next, need;
	bool complete;

	while (i < n) {
		next = skip_sequence(s, n, i, &complete);
		if (!complete)
			return i;
		if (next != i) {
			i = next;
			continue;
		}
		need = s[i] >= 0xF0 ? 4 : s[i] >= 0xE0 ? 3 : s[i] >= 0xC2 ? 2 : 1;
		if (need > 1 && i + need > n) {
			/* A cut character: keep it for later only if what we have is valid so far. */
			bool valid = true;

			for (size_t j = i + 1; j < n; j++)
				valid = valid && (s[j] & 0xC0) == 0x80;
			if (valid && s[i] <= 0xF4)
				return i;
		}
		i++;
	}
	return n;
}

/* Wide ranges used when the C library does not know the character (non-UTF-8 locale). */
static const uint32_t wide_ranges[][2] = {
	{0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
	{0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},
	{0xFE30, 0xFE4F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F},
	{0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

int textsan_cpwidth(uint32_t cp)
{
	int w;

	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return 0;
	if (cp < 0x7F)
		return 1;
	w = wcwidth((wchar_t)cp);
	if (w >= 0)
		return w > 2 ? 2 : w;
	if ((cp >= 0x300 && cp <= 0x36F) || cp == 0x200B || cp == 0x200D || cp == 0xFE0F)
		return 0;
	for (size_t i = 0; i < sizeof(wide_ranges) / sizeof(wide_ranges[0]); i++)
		if (cp >= wide_ranges[i][0] && cp <= wide_ranges[i][1])
			return 2;
	return 1;
}

int textsan_width(const char *s)
{
	size_t n = strlen(s), i = 0;
	int cols = 0;
	uint32_t cp;

	while (i < n) {
		i += textsan_decode(s + i, n - i, &cp);
		cols += textsan_cpwidth(cp);
	}
	return cols;
}

size_t textsan_fit(const char *s, int cols, int *used)
{
	size_t n = strlen(s), i = 0, len;
	int u = 0, w;
	uint32_t cp;

	while (i < n) {
		len = textsan_decode(s + i, n - i, &cp);
		w = textsan_cpwidth(cp);
		if (u + w > cols)
			break;
		u += w;
		i += len;
	}
	if (used)
		*used = u;
	return i;
}

char *textsan_truncate(const char *s, int cols)
{
	struct strbuf sb;

	if (cols <= 0)
		return xstrdup("");
	if (textsan_width(s) <= cols)
		return xstrdup(s);
	strbuf_init(&sb);
	strbuf_add(&sb, s, textsan_fit(s, cols - 1, NULL));
	strbuf_adds(&sb, "\xe2\x80\xa6");
	return strbuf_detach(&sb);
}
