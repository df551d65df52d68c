/* test_strset — the string set: adding, testing, removing by a rule, growing. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "strset.h"

static void test_add_has(void **state)
{
	struct strset s = STRSET_INIT;

	(void)state;
	assert_false(strset_has(&s, "a")); /* an empty set has no table yet */
	assert_true(strset_add(&s, "a"));
	assert_false(strset_add(&s, "a"));
	assert_true(strset_add(&s, ""));
	assert_true(strset_has(&s, "a"));
	assert_true(strset_has(&s, ""));
	assert_false(strset_has(&s, "b"));
	assert_int_equal(s.n, 2);
	strset_clear(&s);
	assert_int_equal(s.n, 0);
	assert_false(strset_has(&s, "a"));
}

static bool starts_with(const char *key, void *arg)
{
	return !strncmp(key, arg, strlen(arg));
}

/* 20,000 keys (the table grows many times), then half removed by a rule: every key left
 * is still found, probe runs included, and none removed is. */
static void test_many_and_remove_if(void **state)
{
	struct strset s = STRSET_INIT;
	char key[32];

	(void)state;
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "A\npath/%d", i);
		assert_true(strset_add(&s, key));
		snprintf(key, sizeof(key), "B\npath/%d", i);
		assert_true(strset_add(&s, key));
	}
	assert_int_equal(s.n, 20000);
	assert_true(s.cap >= 2 * s.n);
	strset_remove_if(&s, starts_with, "A\n");
	assert_int_equal(s.n, 10000);
	for (int i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "A\npath/%d", i);
		assert_false(strset_has(&s, key));
		snprintf(key, sizeof(key), "B\npath/%d", i);
		assert_true(strset_has(&s, key));
	}
	assert_true(strset_add(&s, "A\npath/1"));
	assert_false(strset_add(&s, "B\npath/1"));
	strset_clear(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_add_has),
	    cmocka_unit_test(test_many_and_remove_if),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
