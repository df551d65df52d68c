/* Unit tests for textsan: escape stripping, UTF-8 repair, column widths, truncation. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "textsan.h"

static void check_clean(const char *in, size_t n, unsigned flags, const char *want)
{
	char *got = textsan_clean(in, n, flags);

	assert_string_equal(got, want);
	free(got);
}

static void test_plain_text_unchanged(void **state)
{
	const char *s = "Hello, world — caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87";

	check_clean(s, strlen(s), 0, s);
}

static void test_csi_removed(void **state)
{
	const char *s = "a\x1b[31;1mred\x1b[0m b\x1b[2J\x1b[?1049hc";

	check_clean(s, strlen(s), 0, "ared bc");
}

static void test_osc_removed_bel_and_st(void **state)
{
	const char *s = "x\x1b]0;evil title\x07y\x1b]8;;http://e.invalid\x1b\\link\x1b]8;;\x1b\\z";

	check_clean(s, strlen(s), 0, "xylinkz");
}

static void test_dcs_and_apc_removed(void **state)
{
	const char *s = "1\x1bPq#0;2;0;0;0\x1b\\2\x1b_hidden\x1b\\3\x1b^pm\x1b\\4";

	check_clean(s, strlen(s), 0, "1234");
}

static void test_unterminated_osc_drops_rest(void **state)
{
	const char *s = "ok\x1b]52;c;Zm9vYmFy";

	check_clean(s, strlen(s), 0, "ok");
}

static void test_c1_controls(void **state)
{
	/* U+009B is an 8-bit CSI: "\u009b31m" must vanish whole; U+0085 (NEL) is dropped. */
	const char *s = "a\xc2\x9b" "31mb\xc2\x85" "c\xc2\x9d" "0;t\xc2\x9c" "d";

	check_clean(s, strlen(s), 0, "abcd");
}

static void test_c0_and_keep_flags(void **state)
{
	const char *s = "a\tb\nc\rd\x07" "e\x7f" "f\x01g";

	check_clean(s, strlen(s), 0, "a b cdefg");
	check_clean(s, strlen(s), TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB, "a\tb\ncdefg");
}

static void test_nul_inside_is_dropped(void **state)
{
	const char s[] = {'a', 0, 'b'};

	check_clean(s, sizeof(s), 0, "ab");
}

static void test_two_byte_escapes(void **state)
{
	const char *s = "a\x1b" "7b\x1b(Bc\x1b" "8d\x1b";

	check_clean(s, strlen(s), 0, "abcd");
}

static void test_invalid_utf8_replaced(void **state)
{
	/* lone continuation, overlong '/', surrogate, truncated sequence at end */
	const char *s = "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe4\xb8";
	char *got = textsan_clean(s, strlen(s), 0);
	const char *p;
	size_t repl = 0;

	for (p = got; (p = strstr(p, "\xef\xbf\xbd")) != NULL; p += 3)
		repl++;
	assert_true(repl >= 5);
	assert_non_null(strchr(got, 'a'));
	assert_non_null(strchr(got, 'd'));
	assert_null(strchr(got, '\x80'));
	free(got);
}

static void test_bidi_overrides_dropped(void **state)
{
	const char *s = "abc\xe2\x80\xae" "fed\xe2\x81\xa6" "x";

	check_clean(s, strlen(s), 0, "abcfedx");
}

static void test_complete_prefix(void **state)
{
	const char *s1 = "hello \x1b[3";
	const char *s2 = "hi \xe4\xb8";
	const char *s3 = "text\x1b]0;title";
	const char *s4 = "done\x1b[0m";

	assert_int_equal(textsan_complete_prefix(s1, strlen(s1)), 6);
	assert_int_equal(textsan_complete_prefix(s2, strlen(s2)), 3);
	assert_int_equal(textsan_complete_prefix(s3, strlen(s3)), 4);
	assert_int_equal(textsan_complete_prefix(s4, strlen(s4)), strlen(s4));
}

static void test_widths(void **state)
{
	assert_int_equal(textsan_width("abc"), 3);
	assert_int_equal(textsan_width("\xe4\xb8\xad\xe6\x96\x87"), 4); /* 中文 */
	assert_int_equal(textsan_width("e\xcc\x81"), 1);                 /* e + combining acute */
	assert_int_equal(textsan_width("\xf0\x9f\x98\x80"), 2);          /* emoji */
	assert_int_equal(textsan_width("\xef\xbd\xb1"), 1);              /* halfwidth katakana */
}

static void test_fit_never_splits_wide(void **state)
{
	const char *s = "a\xe4\xb8\xad\xe6\x96\x87";
	int used = -1;

	assert_int_equal(textsan_fit(s, 2, &used), 1);
	assert_int_equal(used, 1);
	assert_int_equal(textsan_fit(s, 3, &used), 4);
	assert_int_equal(used, 3);
	assert_int_equal(textsan_fit(s, 0, &used), 0);
	assert_int_equal(used, 0);
}

static void test_truncate(void **state)
{
	char *t = textsan_truncate("abcdefgh", 5);

	assert_string_equal(t, "abcd\xe2\x80\xa6");
	assert_int_equal(textsan_width(t), 5);
	free(t);
	t = textsan_truncate("abc", 5);
	assert_string_equal(t, "abc");
	free(t);
	t = textsan_truncate("\xe4\xb8\xad\xe6\x96\x87\xe5\xad\x97", 4);
	assert_true(textsan_width(t) <= 4);
	assert_non_null(strstr(t, "\xe2\x80\xa6"));
	free(t);
	t = textsan_truncate("abc", 0);
	assert_string_equal(t, "");
	free(t);
}

static void test_decode(void **state)
{
	uint32_t cp;

	assert_int_equal(textsan_decode("\xe4\xb8\xad", 3, &cp), 3);
	assert_int_equal(cp, 0x4E2D);
	assert_int_equal(textsan_decode("\xf4\x90\x80\x80", 4, &cp), 1); /* > U+10FFFF */
	assert_int_equal(cp, 0xFFFD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_text_unchanged),
		cmocka_unit_test(test_csi_removed),
		cmocka_unit_test(test_osc_removed_bel_and_st),
		cmocka_unit_test(test_dcs_and_apc_removed),
		cmocka_unit_test(test_unterminated_osc_drops_rest),
		cmocka_unit_test(test_c1_controls),
		cmocka_unit_test(test_c0_and_keep_flags),
		cmocka_unit_test(test_nul_inside_is_dropped),
		cmocka_unit_test(test_two_byte_escapes),
		cmocka_unit_test(test_invalid_utf8_replaced),
		cmocka_unit_test(test_bidi_overrides_dropped),
		cmocka_unit_test(test_complete_prefix),
		cmocka_unit_test(test_widths),
		cmocka_unit_test(test_fit_never_splits_wide),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_decode),
	};

	/* Widths come from the C library: a UTF-8 locale must be active, as in the program. */
	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
