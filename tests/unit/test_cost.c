/* test_cost — price tables (file, override, fallback), call costs and plan estimates. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cost.h"
#include "plan.h"
#include "provider.h"
#include "testdir.h"
#include "xalloc.h"

static char tmpdir[64];

static int make_tmp(void **state)
{
	strcpy(tmpdir, "/tmp/test_cost.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int remove_tmp(void **state)
{
	assert_true(testdir_remove(tmpdir));
	return 0;
}

static char *write_file(const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static double price_in(const char *model)
{
	struct price p;

	assert_true(cost_lookup(model, &p));
	return p.input;
}

/* Runs first: cost_init reads $XDG_CONFIG_HOME/pevtui/prices.tsv exactly once. */
static void test_init_reads_user_override(void **state)
{
	char *dir = xasprintf("%s/pevtui", tmpdir), *path;
	struct price p;

	assert_int_equal(mkdir(dir, 0700), 0);
	path = write_file("pevtui/prices.tsv", "# read: 2030-01-01\n"
					       "# source: my contract\n"
					       "my-local-model\t0.5\t1.5\t0\t0\n");
	setenv("XDG_CONFIG_HOME", tmpdir, 1);
	assert_true(cost_init());
	assert_null(cost_load_error());
	assert_true(cost_lookup("my-local-model-q4", &p));
	assert_true(p.output == 1.5);
	/* The built-in (or shipped) rows are still there under the override. */
	assert_true(price_in("claude-haiku-4-5") == 1.0);
	free(path);
	free(dir);
}

static void test_builtin_prices_and_longest_prefix(void **state)
{
	struct price p;

	cost_reset();
	assert_true(price_in("claude-sonnet-4-5-20250929") == 3.0);
	assert_true(price_in("claude-opus-4-5") == 5.0);
	assert_true(price_in("claude-opus-4-1-20250805") == 15.0);
	assert_true(price_in("gpt-5-mini") == 0.25);
	assert_true(price_in("gpt-5-nano-2025-08-07") == 0.05);
	assert_true(price_in("gpt-5") == 1.25);
	assert_true(price_in("gpt-4o-mini") == 0.15);
	assert_true(price_in("gpt-4o-2024-08-06") == 2.5);
	assert_false(cost_lookup("llama3.1", &p));
	assert_false(cost_lookup(NULL, &p));
}

static void test_cost_of_call_exact_and_unknown(void **state)
{
	struct llm_usage u = {.input_tokens = 1200,
			      .output_tokens = 400,
			      .cache_read_tokens = 30000,
			      .cache_write_tokens = 2000,
			      .reported = true};
	bool known = false;
	double c;

	cost_reset();
	/* 1200*3 + 400*15 + 30000*0.30 + 2000*3.75 = 26100 micro-dollars */
	c = cost_of_call("claude-sonnet-4-5", &u, &known);
	assert_true(known);
	assert_true(c > 0.0260999 && c < 0.0261001);
	c = cost_of_call("mystery-model", &u, &known);
	assert_false(known);
	assert_true(c == 0.0);
}

static const char *const sample_models[] = {
	"claude-opus-4-5", "claude-opus-4-0", "claude-sonnet-4-5", "claude-haiku-4-5",
	"gpt-4.1", "gpt-4o-mini", "gpt-4o", "o4-mini", "gpt-5-nano", "gpt-5-mini", "gpt-5",
	"sim-planner", "sim-executor", "sim-verifier",
};

static void test_shipped_file_matches_builtin(void **state)
{
	size_t n = sizeof(sample_models) / sizeof(sample_models[0]);
	struct price before[sizeof(sample_models) / sizeof(sample_models[0])], after;
	char *err = NULL, *src;

	cost_reset();
	for (size_t i = 0; i < n; i++)
		assert_true(cost_lookup(sample_models[i], &before[i]));
	assert_true(cost_load_file(TOP_SRCDIR "/data/prices.tsv", false, &err));
	assert_null(err);
	for (size_t i = 0; i < n; i++) {
		assert_true(cost_lookup(sample_models[i], &after));
		if (memcmp(&before[i], &after, sizeof(after)))
			fail_msg("%s: data/prices.tsv and the built-in table disagree",
				 sample_models[i]);
	}
	src = cost_describe_source();
	assert_non_null(strstr(src, "2026-11-22"));
	assert_non_null(strstr(src, "Anthropic"));
	free(src);
}

static void test_merge_overrides_and_adds(void **state)
{
	char *path = write_file("over.tsv", "# a comment\n\n"
					    "claude-sonnet-4  1  2  3  4\n"
					    "local-free\t0\t0\t0\t0\n");
	char *err = NULL;
	struct price p;
	struct llm_usage u = {.input_tokens = 1000, .output_tokens = 10, .reported = true};
	bool known = false;

	cost_reset();
	assert_true(cost_load_file(path, true, &err));
	assert_true(cost_lookup("claude-sonnet-4-5", &p));
	assert_true(p.input == 1 && p.output == 2 && p.cache_read == 3 && p.cache_write == 4);
	assert_true(price_in("claude-opus-4-5") == 5.0);
	/* A free model is known and costs zero; that differs from unknown. */
	assert_true(cost_of_call("local-free", &u, &known) == 0.0);
	assert_true(known);
	free(path);
}

static void test_bad_file_rejected_whole(void **state)
{
	char *path = write_file("bad.tsv", "good-model 1 1 1 1\n# fine\nbroken 1 2 3\n");
	char *neg = write_file("neg.tsv", "neg-model 1 -2 0 0\n");
	char *err = NULL, *want;
	struct price p;

	cost_reset();
	assert_false(cost_load_file(path, false, &err));
	want = xasprintf("%s:3:", path);
	assert_non_null(err);
	assert_non_null(strstr(err, want));
	free(err);
	free(want);
	/* Nothing of the bad file was taken, the old table stands. */
	assert_false(cost_lookup("good-model", &p));
	assert_true(price_in("gpt-5") == 1.25);
	assert_false(cost_load_file(neg, true, &err));
	assert_non_null(strstr(err, "neg-model"));
	free(err);
	assert_false(cost_load_file("/nonexistent/prices.tsv", true, &err));
	assert_non_null(err);
	free(err);
	free(path);
	free(neg);
}

static struct plan *two_step_plan(void)
{
	struct plan *p = plan_new();

	p->steps = xcalloc(2, sizeof(*p->steps));
	p->n_steps = 2;
	p->steps[0].id = xstrdup("s1");
	p->steps[0].complexity = CX_LOW;
	p->steps[1].id = xstrdup("s2");
	p->steps[1].complexity = CX_HIGH;
	return p;
}

static void test_plan_estimate(void **state)
{
	const char *const models[3] = {"claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"};
	const char *const unknown_exec[3] = {"claude-opus-4-5", "llama3.1", "claude-haiku-4-5"};
	struct plan *p = two_step_plan();
	bool known = false;
	double c;

	cost_reset();
	/* By the assumptions in cost.h, in micro-dollars:
	 * exec low 8000*3+1000*15 = 39000; exec high 50000*3+6000*15 = 240000;
	 * verify low 4000*1+600*5 = 7000; verify high 8000*1+600*5 = 11000;
	 * final check (2000+2*500)*1+800*5 = 7000.  Sum 304000. */
	c = cost_estimate_plan(p, models, &known);
	assert_true(known);
	assert_true(c > 0.303999 && c < 0.304001);
	c = cost_estimate_step(&p->steps[1], models, &known);
	assert_true(known);
	assert_true(c > 0.250999 && c < 0.251001);
	/* Unknown executor: the known (verifier) part only, flagged unknown. */
	c = cost_estimate_plan(p, unknown_exec, &known);
	assert_false(known);
	assert_true(c > 0.024999 && c < 0.025001);
	plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_reads_user_override),
		cmocka_unit_test(test_builtin_prices_and_longest_prefix),
		cmocka_unit_test(test_cost_of_call_exact_and_unknown),
		cmocka_unit_test(test_shipped_file_matches_builtin),
		cmocka_unit_test(test_merge_overrides_and_adds),
		cmocka_unit_test(test_bad_file_rejected_whole),
		cmocka_unit_test(test_plan_estimate),
	};
	int rc = cmocka_run_group_tests(tests, make_tmp, remove_tmp);

	cost_reset();
	return rc;
}
