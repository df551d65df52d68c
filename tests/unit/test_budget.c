/* test_budget — reservations against the cap: what fits, what waits, what wakes it. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "budget.h"

static void test_no_cap_always_fits(void **state)
{
	struct budget *b = budget_new(0, 0);

	(void)state;
	assert_true(budget_reserve(b, 1e6, NULL));
	budget_settle(b, 1e6, 2e6);
	assert_true(budget_reserve(b, 5, NULL));
	assert_true(budget_spent(b) == 2e6);
	budget_free(b);
}

static void test_reservations_count_against_the_cap(void **state)
{
	struct budget *b = budget_new(1.0, 0.25);

	(void)state;
	assert_true(budget_reserve(b, 0.5, NULL));   /* 0.25 spent + 0.5 held */
	assert_false(budget_reserve(b, 0.5, NULL));  /* would be 1.25 */
	assert_true(budget_would_block(b, 0.5));
	assert_true(budget_reserve(b, 0.25, NULL));  /* exactly 1.0 */
	assert_true(budget_reserved(b) == 0.75);
	/* The first call cost less than reserved: room is made. */
	budget_settle(b, 0.5, 0.1);
	assert_true(budget_reserved(b) == 0.25);
	assert_true(budget_spent(b) > 0.349 && budget_spent(b) < 0.351);
	assert_true(budget_reserve(b, 0.4, NULL));
	/* A call that costs more than reserved overshoots: the next one waits. */
	budget_settle(b, 0.4, 0.9);
	assert_false(budget_reserve(b, 0.01, NULL));
	/* A free call always goes. */
	assert_true(budget_reserve(b, 0, NULL));
	budget_free(b);
}

struct waiter {
	struct budget *b;
	atomic_bool cancel;
	unsigned long gen;
	bool result;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->result = budget_wait(w->b, w->gen, &w->cancel);
	return NULL;
}

static void test_a_new_cap_wakes_a_held_call(void **state)
{
	struct waiter w = {.b = budget_new(0.1, 0.1)};
	pthread_t t;

	(void)state;
	atomic_init(&w.cancel, false);
	assert_false(budget_reserve(w.b, 0.05, &w.gen));
	pthread_create(&t, NULL, wait_thread, &w);
	budget_set_cap(w.b, 1.0);
	pthread_join(t, NULL);
	assert_true(w.result);
	assert_true(budget_reserve(w.b, 0.05, NULL));
	budget_free(w.b);
}

/* The cap may move between the failed reservation and the wait: it is not missed. */
static void test_a_change_before_the_wait_is_not_missed(void **state)
{
	struct waiter w = {.b = budget_new(0.1, 0.1)};

	(void)state;
	atomic_init(&w.cancel, false);
	assert_false(budget_reserve(w.b, 0.05, &w.gen));
	budget_set_cap(w.b, 1.0);
	assert_true(budget_wait(w.b, w.gen, &w.cancel)); /* returns at once */
	budget_free(w.b);
}

static void test_cancel_wakes_without_room(void **state)
{
	struct waiter w = {.b = budget_new(0.1, 0.1)};
	pthread_t t;

	(void)state;
	atomic_init(&w.cancel, false);
	assert_false(budget_reserve(w.b, 0.05, &w.gen));
	pthread_create(&t, NULL, wait_thread, &w);
	atomic_store(&w.cancel, true);
	budget_wake(w.b);
	pthread_join(t, NULL);
	assert_false(w.result);
	budget_free(w.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_cap_always_fits),
		cmocka_unit_test(test_reservations_count_against_the_cap),
		cmocka_unit_test(test_a_new_cap_wakes_a_held_call),
		cmocka_unit_test(test_a_change_before_the_wait_is_not_missed),
		cmocka_unit_test(test_cancel_wakes_without_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
