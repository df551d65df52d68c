/* test_prompts — the messages each role is sent, byte for byte as they were printed with
 * printf formats before they were put together by plain appends, the step shown as
 * plan_step_to_string prints it (tricky texts: '%',
 * escapes, UTF-8, control bytes, empty and absent values). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "prompts.h"
#include "strbuf.h"
#include "xalloc.h"

/* Texts a model or an operator may write. */
static const char *const texts[] = {
	"",
	"plain",
	"100% sure: %s %d %n %%",
	"quote \" backslash \\ newline \n tab \t cr \r",
	"caf\xc3\xa9 \xe2\x80\xae bidi \xf0\x9f\x98\x80 emoji, bad \xff\xfe utf-8",
	"\x01\x02\x1f\x7f controls",
	"{\"nested\":[1,{\"a\":\"b\\\"c\"}],\"x\":null}",
};
#define N_TEXTS (sizeof(texts) / sizeof(texts[0]))

/* The old ways, kept here as the reference. */
static char *old_execute(const char *goal, const struct plan_step *step,
			 const struct prompt_dep *deps, size_t n_deps,
			 const struct strvec *critiques, int attempt)
{
	struct strbuf sb;
	char *sj = plan_step_to_string(step, true);

	strbuf_init(&sb);
	strbuf_addf(&sb, "Goal of the plan: %s\n\nYour step (attempt %d):\n%s\n", goal ? goal : "",
		    attempt, sj);
	if (n_deps) {
		strbuf_adds(&sb, "\nVerified outputs of the steps this one depends on:\n");
		for (size_t i = 0; i < n_deps; i++)
			strbuf_addf(&sb, "- %s: %s\n", deps[i].step_id, deps[i].output_json);
	}
	if (critiques && critiques->n) {
		strbuf_adds(&sb, "\nEarlier attempts failed verification. Address every point:\n");
		for (size_t i = 0; i < critiques->n; i++)
			strbuf_addf(&sb, "%zu. %s\n", i + 1, critiques->v[i]);
	}
	strbuf_adds(&sb, "\nDo the step, then answer with the result JSON.");
	free(sj);
	return strbuf_detach(&sb);
}

static char *old_verify(const char *goal, const struct plan_step *step, const char *result_json,
			const char *tool_log, const char *diff)
{
	struct strbuf sb;
	char *sj = plan_step_to_string(step, true);

	strbuf_init(&sb);
	strbuf_addf(&sb, "Goal of the plan: %s\n\nThe step:\n%s\n\nThe executor's result:\n%s\n",
		    goal ? goal : "", sj, result_json);
	if (tool_log && *tool_log)
		strbuf_addf(&sb, "\nTool calls made in this attempt:\n%s\n", tool_log);
	if (diff)
		strbuf_addf(&sb,
			    "\nWhat this attempt changed in the workspace (taken from the files "
			    "themselves, not from the executor's account):\n%s\n",
			    *diff ? diff : "(no file changed)\n");
	strbuf_adds(&sb, "\nJudge each acceptance criterion and answer with the verdict JSON.");
	free(sj);
	return strbuf_detach(&sb);
}

static char *old_replan(const char *task, const struct plan *current, const struct strvec *passed,
			const char *failed_step, const char *failure)
{
	struct strbuf sb;
	char *pj = plan_to_string(current, true);

	strbuf_init(&sb);
	strbuf_addf(&sb, "Task:\n%s\n\nThe current plan:\n%s\n\n", task, pj);
	strbuf_adds(&sb, "Steps that passed verification (keep them unchanged): ");
	if (!passed->n)
		strbuf_adds(&sb, "none");
	for (size_t i = 0; i < passed->n; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", passed->v[i]);
	strbuf_addf(&sb, "\n\nStep %s failed: %s\n\nWrite the revised plan as one JSON object.",
		    failed_step ? failed_step : "(none)", failure ? failure : "(no reason given)");
	free(pj);
	return strbuf_detach(&sb);
}

static char *old_final_check(const struct plan *p, const struct strvec *results)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_addf(&sb, "Goal: %s\n\nSuccess criteria of the whole plan:\n", p->goal ? p->goal : "");
	for (size_t i = 0; i < p->success_criteria.n; i++)
		strbuf_addf(&sb, "- %s\n", p->success_criteria.v[i]);
	strbuf_adds(&sb, "\nVerified step results:\n");
	for (size_t i = 0; i < results->n; i++)
		strbuf_addf(&sb, "%s\n", results->v[i]);
	strbuf_adds(&sb, "\nJudge each success criterion (as criteria_results) and answer with "
			 "the verdict JSON.");
	return strbuf_detach(&sb);
}

static char *old_synthesize(const char *task, const struct plan *p, const struct strvec *results,
			    const struct strvec *gaps)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_addf(&sb, "Task:\n%s\n\nGoal: %s\n\nVerified step results:\n", task,
		    p->goal ? p->goal : "");
	for (size_t i = 0; i < results->n; i++)
		strbuf_addf(&sb, "%s\n", results->v[i]);
	if (gaps->n) {
		strbuf_adds(&sb, "\nNot verified (start the answer with \"PARTIAL:\" and name "
				 "these gaps):\n");
		for (size_t i = 0; i < gaps->n; i++)
			strbuf_addf(&sb, "- %s\n", gaps->v[i]);
	}
	strbuf_adds(&sb, "\nWrite the final answer.");
	return strbuf_detach(&sb);
}

static void same(char *got, char *want)
{
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* A plan of two steps whose texts are all tricky ones; its goal is `goal`. */
static struct plan *tricky_plan(const char *goal, const char *text)
{
	struct plan *p = plan_new();

	p->goal = goal ? xstrdup(goal) : NULL;
	p->context = xstrdup(text);
	p->rollback_strategy = xstrdup(text);
	p->n_steps = 2;
	p->steps = xcalloc(2, sizeof(*p->steps));
	for (size_t i = 0; i < 2; i++) {
		struct plan_step *s = &p->steps[i];

		s->id = xstrdup(i ? "s2" : "s1");
		s->name = xstrdup(text);
		s->description = xstrdup(text);
		strvec_push(&s->criteria, text);
		strvec_push(&s->criteria, "the file exists");
		strvec_push(&s->expected_outputs, "out.txt");
		if (i)
			strvec_push(&s->deps, "s1");
	}
	strvec_push(&p->success_criteria, text);
	strvec_push(&p->success_criteria, "all done");
	return p;
}

static void test_prompts_as_printed(void **state)
{
	(void)state;
	for (size_t t = 0; t < N_TEXTS; t++) {
		const char *x = texts[t];
		const char *y = texts[(t + 3) % N_TEXTS];
		struct plan *p = tricky_plan(x, y);
		struct prompt_dep deps[2] = {{"s1", x}, {"s%d", y}};
		struct strvec crit = STRVEC_INIT, none = STRVEC_INIT;
		const char *goals[] = {x, NULL};
		char *st[2] = {plan_step_to_string(&p->steps[0], true),
			       plan_step_to_string(&p->steps[1], true)};

		strvec_push(&crit, x);
		strvec_push(&crit, y);
		for (size_t g = 0; g < 2; g++) {
			const char *goal = goals[g];

			for (int attempt = 1; attempt <= 12; attempt += 11) {
				same(prompt_execute(goal, st[1], deps, 2, &crit, attempt),
				     old_execute(goal, &p->steps[1], deps, 2, &crit, attempt));
				same(prompt_execute(goal, st[0], NULL, 0, &none, attempt),
				     old_execute(goal, &p->steps[0], NULL, 0, &none, attempt));
				same(prompt_execute(goal, st[0], deps, 1, NULL, attempt),
				     old_execute(goal, &p->steps[0], deps, 1, NULL, attempt));
			}
			same(prompt_verify(goal, st[0], x, y, x),
			     old_verify(goal, &p->steps[0], x, y, x));
			same(prompt_verify(goal, st[1], y, NULL, NULL),
			     old_verify(goal, &p->steps[1], y, NULL, NULL));
			same(prompt_verify(goal, st[1], y, "", ""),
			     old_verify(goal, &p->steps[1], y, "", ""));
			same(prompt_replan(goal ? goal : "task", p, &crit, x, y),
			     old_replan(goal ? goal : "task", p, &crit, x, y));
			same(prompt_replan(x, p, &none, NULL, NULL), old_replan(x, p, &none, NULL, NULL));
			same(prompt_final_check(p, &crit), old_final_check(p, &crit));
			same(prompt_final_check(p, &none), old_final_check(p, &none));
			same(prompt_synthesize(x, p, &crit, &crit), old_synthesize(x, p, &crit, &crit));
			same(prompt_synthesize(y, p, &none, &none), old_synthesize(y, p, &none, &none));
		}
		strvec_clear(&crit);
		free(st[0]);
		free(st[1]);
		plan_free(p);
	}
}

/* A task that a journal did not hold (NULL) reads "(null)", as printf wrote it. */
static void test_absent_task(void **state)
{
	struct plan *p = tricky_plan("goal", "text");
	struct strvec none = STRVEC_INIT;
	char *s = prompt_synthesize(NULL, p, &none, &none);

	(void)state;
	assert_non_null(strstr(s, "Task:\n(null)\n\nGoal: goal\n"));
	free(s);
	s = prompt_replan(NULL, p, &none, "s1", "why");
	assert_true(!strncmp(s, "Task:\n(null)\n\n", 14));
	free(s);
	plan_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_prompts_as_printed),
	    cmocka_unit_test(test_absent_task),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
