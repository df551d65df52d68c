/* test_strbuf — growable strings: room made ahead, printf into the room there is. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grow_makes_room),
	    cmocka_unit_test(test_addf_at_every_fill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
