/* textsan — making untrusted text safe to draw: escape sequences out, widths in columns. */
#ifndef PEVTUI_TEXTSAN_H
#define PEVTUI_TEXTSAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags for textsan_clean. Without them '\n' and '\t' become one space each. */
#define TEXTSAN_KEEP_NL 1u
#define TEXTSAN_KEEP_TAB 2u

/*
 * Returns a copy of `s` (`n` bytes, NULs included as data) that is valid UTF-8 and holds
 * no terminal control: CSI, OSC, DCS/SOS/PM/APC strings and other escape sequences are
 * removed whole, C0 and C1 controls and DEL dropped (except '\n' / '\t' when kept),
 * bidirectional overrides dropped, invalid bytes replaced by U+FFFD. Caller frees.
 */
char *textsan_clean(const char *s, size_t n, unsigned flags);

/*
 * For text arriving in chunks: the length of the longest prefix of `s` that does not end
 * inside an unfinished escape sequence or UTF-8 character. Clean that prefix now and keep
 * the rest for the next chunk.
 */
size_t textsan_complete_prefix(const char *s, size_t n);

/*
 * Decodes one code point of valid or invalid UTF-8 at s[0..n). Returns the bytes consumed
 * (>= 1 when n > 0); *cp gets U+FFFD for an invalid sequence (one byte consumed).
 */
size_t textsan_decode(const char *s, size_t n, uint32_t *cp);

/* Columns a code point takes: 0 (combining, zero width), 1 or 2 (East Asian wide, emoji).
 * Controls count 0. Uses wcwidth when the locale knows the character. */
int textsan_cpwidth(uint32_t cp);

/* Columns the NUL-terminated UTF-8 string takes. */
int textsan_width(const char *s);

/*
 * The number of bytes of `s` that fit in `cols` columns without splitting a character;
 * *used (may be NULL) gets the columns they take.
 */
size_t textsan_fit(const char *s, int cols, int *used);

/* A copy of `s` cut to at most `cols` columns, ending in "…" when something was cut.
 * Caller frees. */
char *textsan_truncate(const char *s, int cols);

#endif
