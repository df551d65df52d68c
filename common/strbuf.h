/* strbuf — a growable byte string, always NUL-terminated. Plain data on purpose. */
#ifndef PEVTUI_STRBUF_H
#define PEVTUI_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf; /* never NULL after strbuf_init; NUL-terminated */
	size_t len;
	size_t cap;
};

#define STRBUF_INIT {NULL, 0, 0}

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb); /* frees the buffer, leaves sb empty */
void strbuf_reset(struct strbuf *sb);   /* length 0, keeps the memory */
/* Makes room for `extra` more bytes at once (a size known or guessed ahead spares the
 * doublings on the way there). */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addc(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A number in decimal, as "%llu" / "%lld" print it, without printf's cost (hot paths). */
void strbuf_addu(struct strbuf *sb, unsigned long long v);
void strbuf_addi(struct strbuf *sb, long long v);
/* Returns the buffer (caller frees) and leaves sb empty. Never NULL. */
char *strbuf_detach(struct strbuf *sb);

/* The JSON escape of '"', '\\' or a C0 control byte c, as cJSON writes it ("\\n",
 * "\\u001f"), in esc; returns its length (2 or 6). */
size_t json_escape_byte(unsigned char c, char esc[6]);

/* strbuf_add_json's flags. */
enum {
	/* Also escape, as \uXXXX, the characters a terminal or an editor acts on: DEL, the C1
	 * controls U+0080–U+009F, the bidirectional overrides and isolates U+202A–U+202E and
	 * U+2066–U+2069, the line separators U+2028/U+2029 (for text people `cat`). */
	STRBUF_JSON_TERMINAL = 1,
};

/*
 * Appends s[0..len) as a JSON string, quotes included, as cJSON_PrintUnformatted writes
 * it: '"', '\\' and every C0 control byte (NUL too) escaped as json_escape_byte does, every
 * other byte copied as it is (invalid UTF-8 too); plus what `flags` asks for. Runs of
 * bytes that need no escape are found 16 bytes at a time (SSE2) and copied whole.
 */
void strbuf_add_json(struct strbuf *sb, const char *s, size_t len, unsigned flags);

/* strvec — a growable array of owned strings. */
struct strvec {
	char **v;
	size_t n;
	size_t cap;
};

#define STRVEC_INIT {NULL, 0, 0}

void strvec_push(struct strvec *sv, const char *s); /* copies s */
void strvec_take(struct strvec *sv, char *s);       /* takes s (malloc'd) as it is */
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_clear(struct strvec *sv); /* frees every string and the array */
/* Sorts the strings bytewise (strcmp order). */
void strvec_sort(struct strvec *sv);
/* Joins with sep; caller frees. Empty vector gives "". */
char *strvec_join(const struct strvec *sv, const char *sep);

#endif
