/* prompts — the system prompts and user messages for each role. */
#ifndef PEVTUI_PROMPTS_H
#define PEVTUI_PROMPTS_H

#include "strbuf.h"

struct plan;
struct plan_step;

/* The static (cacheable) system prompt of each purpose. Static storage. */
const char *prompt_system_planner(void);
const char *prompt_system_executor(void);
const char *prompt_system_verifier(void);
const char *prompt_system_synthesizer(void);

/* The user message for a first plan. Caller frees. */
char *prompt_plan(const char *task);
/* The user message asking to fix an invalid plan; `problems` are the validation errors,
 * one sentence each, joined by "\n". */
char *prompt_plan_fix(const char *task, const char *problems);
/* The same for a verdict that cannot be read. */
char *prompt_verdict_fix(const char *problem);
/* Replan: the current plan, what passed (ids), what failed and why. */
char *prompt_replan(const char *task, const struct plan *current, const struct strvec *passed,
		    const char *failed_step, const char *failure);

/* Dependency output handed to the executor. */
struct prompt_dep {
	const char *step_id;
	const char *output_json;
};

/* The executor's message: the step (`step_text`: plan_step_to_string(step, true), made
 * once for the attempt's two prompts), its dependencies' outputs only, the goal, and the
 * critiques of earlier failed attempts (oldest first). */
char *prompt_execute(const char *goal, const char *step_text, const struct prompt_dep *deps,
		     size_t n_deps, const struct strvec *critiques, int attempt);
/* The verifier's message: the step (`step_text` as for prompt_execute), its criteria, the
 * executor's result, the tool calls and `diff` (may be NULL): what the attempt changed in
 * the workspace, as the engine bounded it. */
char *prompt_verify(const char *goal, const char *step_text, const char *result_json,
		    const char *tool_log, const char *diff);
/* Whole-plan check against success_criteria, from verified results. */
char *prompt_final_check(const struct plan *p, const struct strvec *results);
/* Synthesis of the answer from verified results; `gaps` lists fail-accepted/skipped steps. */
char *prompt_synthesize(const char *task, const struct plan *p, const struct strvec *results,
			const struct strvec *gaps);

#endif
