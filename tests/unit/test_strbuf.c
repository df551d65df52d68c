/* test_strbuf — growable strings: room made ahead, printf into the room there is; JSON
 * strings written as cJSON writes them. Built twice: test_strbuf_scalar compiles
 * common/strbuf.c without its SSE2 scan (STRBUF_NO_SIMD), so both paths are checked. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

/* strbuf_grow makes the room at once: what fits in it is appended without moving. */
static void test_grow_makes_room(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	const char *before;

	(void)state;
	strbuf_grow(&sb, 100); /* an empty strbuf is a string too */
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_true(sb.cap >= 101);
	before = sb.buf;
	for (int i = 0; i < 100; i++)
		strbuf_addc(&sb, 'x');
	assert_ptr_equal(sb.buf, before);
	assert_int_equal(sb.len, 100);
	assert_int_equal(strlen(sb.buf), 100);
	strbuf_addc(&sb, 'y'); /* past it: grows as before */
	assert_int_equal(sb.len, 101);
	assert_int_equal(sb.buf[100], 'y');
	assert_int_equal(sb.buf[101], '\0');
	strbuf_release(&sb);
}

/* strbuf_addu and strbuf_addi write what "%llu" and "%lld" write, at the ends too. */
static void test_add_numbers_as_printf(void **state)
{
	static const unsigned long long us[] = {0, 1, 9, 10, 99, 100, 12345, 4294967295ULL,
						4294967296ULL, 18446744073709551615ULL};
	static const long long is[] = {0, 1, -1, 9, -9, 10, -10, 2147483647LL, -2147483648LL,
				       9223372036854775807LL, -9223372036854775807LL - 1};
	char want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_adds(&sb, "x");
		strbuf_addu(&sb, us[i]);
		snprintf(want, sizeof(want), "x%llu", us[i]);
		assert_string_equal(sb.buf, want);
		assert_int_equal(sb.len, strlen(want));
		strbuf_release(&sb);
	}
	for (size_t i = 0; i < sizeof(is) / sizeof(is[0]); i++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addi(&sb, is[i]);
		snprintf(want, sizeof(want), "%lld", is[i]);
		assert_string_equal(sb.buf, want);
		assert_int_equal(sb.len, strlen(want));
		strbuf_release(&sb);
	}
}

/* strbuf_addf gives what snprintf gives, whether the text fits the room there is, fills
 * it exactly, or overflows it by one byte or by much. */
static void test_addf_at_every_fill(void **state)
{
	(void)state;
	for (size_t pre = 0; pre < 40; pre++)
		for (size_t n = 0; n < 80; n++) {
			struct strbuf sb = STRBUF_INIT;
			char want[200], arg[100];

			strbuf_init(&sb);
			memset(arg, 'a', n);
			arg[n] = '\0';
			for (size_t i = 0; i < pre; i++)
				strbuf_addc(&sb, 'p');
			strbuf_addf(&sb, "<%s|%zu>", arg, n);
			snprintf(want, sizeof(want), "%.*s<%s|%zu>", (int)pre,
				 "pppppppppppppppppppppppppppppppppppppppp", arg, n);
			assert_string_equal(sb.buf, want);
			assert_int_equal(sb.len, strlen(want));
			assert_true(sb.cap > sb.len);
			strbuf_release(&sb);
		}
	{
		struct strbuf sb = STRBUF_INIT; /* never initialised: the first addf makes it */

		strbuf_addf(&sb, "%d-%s", 42, "x");
		assert_string_equal(sb.buf, "42-x");
		strbuf_addf(&sb, "%s", "");
		assert_string_equal(sb.buf, "42-x");
		assert_int_equal(sb.len, 4);
		strbuf_release(&sb);
	}
}

/* json_escape_byte writes every byte JSON must escape as cJSON does (the journal's lines
 * are byte for byte what cJSON wrote). */
static void test_escape_byte_as_cjson(void **state)
{
	(void)state;
	for (unsigned c = 1; c < 128; c++) {
		char text[2] = {(char)c, 0}, esc[6], *printed;
		cJSON *str;
		size_t n;

		if (c >= 32 && c != '"' && c != '\\')
			continue;
		str = cJSON_CreateString(text);
		printed = cJSON_PrintUnformatted(str);
		n = json_escape_byte((unsigned char)c, esc);
		assert_int_equal(strlen(printed), n + 2); /* the quotes around it */
		assert_memory_equal(printed + 1, esc, n);
		cJSON_free(printed);
		cJSON_Delete(str);
	}
}

/* ---- strbuf_add_json against the escapers it replaced, kept here as the reference ---- */

/* events.c's put_string before strbuf_add_json: a byte at a time, up to a NUL. */
static unsigned ref_dangerous_at(const unsigned char *p, size_t *len)
{
	if (p[0] == 0x7f) {
		*len = 1;
		return 0x7f;
	}
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
		*len = 2;
		return p[1];
	}
	if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0xa8 && p[2] <= 0xae))) {
		*len = 3;
		return 0x2000u + (p[2] - 0x80u);
	}
	if (p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) {
		*len = 3;
		return 0x2040u + (p[2] - 0x80u);
	}
	return 0;
}

static void ref_terminal(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	strbuf_addc(sb, '"');
	for (;;) {
		char esc[6];
		size_t len = 1;
		unsigned cp = *p ? ref_dangerous_at(p, &len) : 0;

		if (!*p)
			break;
		if (cp) {
			strbuf_addf(sb, "\\u%04x", cp);
			p += len;
		} else if (*p < 32 || *p == '"' || *p == '\\') {
			strbuf_add(sb, esc, json_escape_byte(*p++, esc));
		} else {
			strbuf_addc(sb, (char)*p++);
		}
	}
	strbuf_addc(sb, '"');
}

/* requests.c's put_strn before it: NUL escaped like the other C0 bytes. */
static void ref_cjson(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_addc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6];

		if (c < 32 || c == '"' || c == '\\')
			strbuf_add(sb, esc, json_escape_byte(c, esc));
		else
			strbuf_addc(sb, (char)c);
	}
	strbuf_addc(sb, '"');
}

/* What both writers must give for s[0..n) (no NUL in it for the terminal's, which stops
 * at one, nor for cJSON's): cJSON's print, the references. */
static void check_json_string(const char *s, size_t n)
{
	struct strbuf got = STRBUF_INIT, want = STRBUF_INIT;
	char *z = xstrndup(s, n);
	bool nul = strlen(z) != n;

	strbuf_init(&got);
	strbuf_init(&want);
	strbuf_adds(&got, "x");  /* appended after what is there */
	strbuf_adds(&want, "x");
	strbuf_add_json(&got, s, n, 0);
	ref_cjson(&want, s, n);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.buf, want.buf, want.len + 1);
	if (!nul) {
		cJSON *str = cJSON_CreateString(z);
		char *printed = cJSON_PrintUnformatted(str);

		assert_string_equal(got.buf + 1, printed);
		cJSON_free(printed);
		cJSON_Delete(str);
		strbuf_reset(&got);
		strbuf_reset(&want);
		strbuf_add_json(&got, s, n, STRBUF_JSON_TERMINAL);
		ref_terminal(&want, z);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.buf, want.buf, want.len + 1);
	}
	free(z);
	strbuf_release(&got);
	strbuf_release(&want);
}

/* Every byte (NUL, C0, '"', '\\', DEL, C1 lead bytes, bytes of broken UTF-8) at every
 * place in the first and last eight-byte word of a run of plain text, and alone. */
static void test_json_string_every_byte(void **state)
{
	char buf[40];

	(void)state;
	for (unsigned c = 0; c < 256; c++) {
		check_json_string((const char *)&(unsigned char){(unsigned char)c}, 1);
		for (size_t at = 0; at < sizeof(buf); at++) {
			memset(buf, 'a', sizeof(buf));
			buf[at] = (char)c;
			check_json_string(buf, sizeof(buf));
			check_json_string(buf, at + 1);
		}
	}
	check_json_string("", 0);
	/* NUL is escaped, not an end, in a counted string */
	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_init(&sb);
		strbuf_add_json(&sb, "a\0b", 3, 0);
		assert_string_equal(sb.buf, "\"a\\u0000b\"");
		strbuf_release(&sb);
	}
}

/* The sequences the terminal's writer escapes, their neighbours it leaves, and each of them
 * cut short by the end of the string. */
static void test_json_string_sequences(void **state)
{
	static const unsigned char seconds[] = {0x00, 0x7f, 0x80, 0x81, 0x9b, 0x9f,
						0xa0, 0xa5, 0xa6, 0xa8, 0xa9, 0xaa,
						0xae, 0xaf, 0xbf, 0xc2, 0xe2, 0xff};
	char buf[24];

	(void)state;
	for (size_t i = 0; i < sizeof(seconds); i++)
		for (size_t j = 0; j < sizeof(seconds); j++)
			for (int lead = 0; lead < 2; lead++)
				for (size_t at = 0; at < 12; at++) {
					memset(buf, 'b', sizeof(buf));
					buf[at] = (char)(lead ? 0xe2 : 0xc2);
					buf[at + 1] = (char)seconds[i];
					buf[at + 2] = (char)seconds[j];
					for (size_t n = at + 1; n <= sizeof(buf); n++)
						check_json_string(buf, n);
				}
}

/* Random strings over the bytes that matter and plain text, in lengths around a word. */
static void test_json_string_random(void **state)
{
	static const unsigned char alphabet[] = {'a', 'Z', ' ', '0', '"', '\\', '/', '\n', '\t', 0x01,
						 0x1f, 0x7f, 0x80, 0x81, 0x9b, 0xa8, 0xa9,
						 0xaa, 0xae, 0xa6, 0xc2, 0xc3, 0xe2, 0xff, 0x00};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned char buf[80];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		n = (size_t)(x % sizeof(buf));
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* mostly plain text, so that runs are long enough to be skipped whole */
			buf[i] = (x >> 8) % 4 ? (unsigned char)('a' + x % 26)
					       : alphabet[(x >> 16) % sizeof(alphabet)];
		}
		check_json_string((const char *)buf, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_makes_room),
	    cmocka_unit_test(test_addf_at_every_fill),
	    cmocka_unit_test(test_add_numbers_as_printf),
	    cmocka_unit_test(test_escape_byte_as_cjson),
	    cmocka_unit_test(test_json_string_every_byte),
	    cmocka_unit_test(test_json_string_sequences),
	    cmocka_unit_test(test_json_string_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
