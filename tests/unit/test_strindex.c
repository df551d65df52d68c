/* Unit tests for strindex: positions by string keys held in the caller's array. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strindex.h"
#include "xalloc.h"

static const char *key_at(const void *ctx, size_t i)
{
	return ((char *const *)ctx)[i];
}

/* Positions added and set, found after the table grew, absent keys absent. */
static void test_add_set_get(void **state)
{
	struct strindex ix = STRINDEX_INIT;
	char **keys = xcalloc(1001, sizeof(*keys));
	size_t pos = 99;

	(void)state;
	assert_false(strindex_get(&ix, "a", key_at, keys, &pos));
	for (size_t i = 0; i < 1000; i++) {
		keys[i] = xasprintf("s%zu", i);
		assert_true(strindex_add(&ix, keys[i], i, key_at, keys));
	}
	assert_int_equal(ix.n, 1000);
	keys[1000] = xstrdup("s7"); /* a second entry of one key */
	assert_false(strindex_add(&ix, "s7", 1000, key_at, keys)); /* the first stays */
	assert_true(strindex_get(&ix, "s7", key_at, keys, &pos));
	assert_int_equal(pos, 7);
	strindex_set(&ix, "s7", 1000, key_at, keys); /* now the second */
	assert_int_equal(ix.n, 1000);
	for (size_t i = 0; i < 1000; i++) {
		char id[32];

		snprintf(id, sizeof(id), "s%zu", i);
		assert_true(strindex_get(&ix, id, key_at, keys, &pos));
		assert_int_equal(pos, i == 7 ? 1000 : i);
	}
	pos = 99;
	assert_false(strindex_get(&ix, "s1000", key_at, keys, &pos));
	assert_false(strindex_get(&ix, "", key_at, keys, &pos));
	assert_false(strindex_get(&ix, NULL, key_at, keys, &pos));
	assert_int_equal(pos, 99);
	strindex_reset(&ix);
	assert_false(strindex_get(&ix, "s1", key_at, keys, &pos));
	strindex_free(&ix);
	strindex_free(&ix);
	for (size_t i = 0; i <= 1000; i++)
		free(keys[i]);
	free(keys);
}

/* Keys that share a long start and an empty key: told apart by their whole text. */
static void test_long_and_empty_keys(void **state)
{
	struct strindex ix = STRINDEX_INIT;
	char *keys[3];
	size_t pos;

	(void)state;
	keys[0] = xstrdup("");
	keys[1] = xasprintf("%0500dx", 0);
	keys[2] = xasprintf("%0500dy", 0);
	for (size_t i = 0; i < 3; i++)
		assert_true(strindex_add(&ix, keys[i], i, key_at, keys));
	for (size_t i = 0; i < 3; i++) {
		assert_true(strindex_get(&ix, keys[i], key_at, keys, &pos));
		assert_int_equal(pos, i);
	}
	assert_int_not_equal(str_hash(keys[1]), str_hash(keys[2]));
	strindex_free(&ix);
	for (size_t i = 0; i < 3; i++)
		free(keys[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_set_get),
		cmocka_unit_test(test_long_and_empty_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
