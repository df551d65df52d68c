/* prompts — what each role is told. System prompts are static so providers can cache them.
 * The texts are put together with plain appends: printf's cost grows with the texts (a
 * result, a tool log, a diff) and these run for every call. */
#include "config.h"

#include "prompts.h"

#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "xalloc.h"

/* s as printf's "%s" wrote it (glibc writes a NULL as "(null)"). */
static void put(struct strbuf *sb, const char *s)
{
	strbuf_adds(sb, s ? s : "(null)");
}

static const char planner_system[] =
	"You are the planner of a supervised Plan-Execute-Verify run. Turn the operator's task "
	"into a plan that an executor can carry out one step at a time with workspace tools "
	"(read_file, write_file, list_files) and that a verifier can check.\n"
	"Answer with ONE JSON object and nothing else, of this form:\n"
	"{\"goal\": string, \"context\": string,\n"
	" \"steps\": [{\"step_id\": \"s1\", \"name\": string, \"description\": string,\n"
	"   \"actions\": [{\"tool\": string, \"params\": object}],\n"
	"   \"acceptance_criteria\": [string], \"expected_outputs\": [string],\n"
	"   \"dependencies\": [step_id], \"estimated_complexity\": \"low\"|\"medium\"|\"high\"}],\n"
	" \"success_criteria\": [string], \"rollback_strategy\": string}\n"
	"Rules: step ids are short and unique (letters, digits, - _ .); dependencies name "
	"earlier steps only and never form a cycle; every acceptance criterion is concrete and "
	"checkable from the step's output or files; a step that writes files lists them in "
	"expected_outputs; mark a step high complexity when a mistake in it would be costly.\n"
	"When revising a plan, keep every step that already passed exactly as it was (same "
	"step_id, same definition) so its result is reused, and change only what failed.";

static const char executor_system[] =
	"You are the executor of one step of a plan. Use the tools to do the work inside the "
	"workspace; paths are relative to the workspace root. Do only this step. Address every "
	"critique of earlier attempts. When done, answer with ONE JSON object and nothing else:\n"
	"{\"reasoning\": string, \"actions_taken\": [string],\n"
	" \"step_output\": {\"findings\": string, \"artifacts\": [workspace-relative paths you "
	"wrote], \"meets_criteria\": bool},\n"
	" \"confidence\": number from 0 to 1, \"notes\": string}\n"
	"If a tool failed, say so in notes and how you worked around it. Claim only artifacts "
	"you actually wrote (a file you only read, list in step_output.read_only too), and "
	"never claim success you cannot show.";

static const char verifier_system[] =
	"You are the verifier. Judge the executor's result against each acceptance criterion, "
	"strictly, from the evidence given. Answer with ONE JSON object and nothing else:\n"
	"{\"overall_pass\": bool,\n"
	" \"criteria_results\": [{\"criterion\": string, \"passed\": bool, \"evidence\": string,"
	" \"confidence\": number, \"feedback\": string}],\n"
	" \"action\": \"pass\"|\"retry\"|\"replan\",\n"
	" \"feedback_for_executor\": string (required unless pass: concrete, actionable),\n"
	" \"severity\": \"minor\"|\"major\"|\"critical\"}\n"
	"Choose retry when another attempt at the same step can fix it, replan when the step "
	"itself is wrong or impossible as defined.";

static const char synthesizer_system[] =
	"You write the final answer of a run from verified step results only. Be concise and "
	"factual; cite which step each fact comes from. If some steps were not verified, start "
	"the answer with \"PARTIAL:\" and name the gaps. Answer in plain text, not JSON.";

const char *prompt_system_planner(void)
{
	return planner_system;
}

const char *prompt_system_executor(void)
{
	return executor_system;
}

const char *prompt_system_verifier(void)
{
	return verifier_system;
}

const char *prompt_system_synthesizer(void)
{
	return synthesizer_system;
}

char *prompt_plan(const char *task)
{
	return xasprintf("Task:\n%s\n\nWrite the plan.", task);
}

char *prompt_plan_fix(const char *task, const char *problems)
{
	struct strbuf sb;
	const char *line = problems;

	strbuf_init(&sb);
	strbuf_addf(&sb, "Your plan for the task \"%s\" cannot be used:\n", task);
	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);
		strbuf_addf(&sb, "- %.*s\n", (int)n, line);
		line = nl ? nl + 1 : NULL;
	}
	strbuf_adds(&sb, "Answer again with the whole corrected plan as one JSON object.");
	return strbuf_detach(&sb);
}

char *prompt_verdict_fix(const char *problem)
{
	return xasprintf("Your verdict cannot be read: %s. Answer again with exactly one verdict "
			 "JSON object.",
			 problem);
}

char *prompt_replan(const char *task, const struct plan *current, const struct strvec *passed,
		    const char *failed_step, const char *failure)
{
	struct strbuf sb;
	char *pj = plan_to_string(current, true);

	strbuf_init(&sb);
	strbuf_adds(&sb, "Task:\n");
	put(&sb, task);
	strbuf_adds(&sb, "\n\nThe current plan:\n");
	put(&sb, pj);
	strbuf_adds(&sb, "\n\nSteps that passed verification (keep them unchanged): ");
	if (!passed->n)
		strbuf_adds(&sb, "none");
	for (size_t i = 0; i < passed->n; i++) {
		if (i)
			strbuf_adds(&sb, ", ");
		put(&sb, passed->v[i]);
	}
	strbuf_adds(&sb, "\n\nStep ");
	put(&sb, failed_step ? failed_step : "(none)");
	strbuf_adds(&sb, " failed: ");
	put(&sb, failure ? failure : "(no reason given)");
	strbuf_adds(&sb, "\n\nWrite the revised plan as one JSON object.");
	free(pj);
	return strbuf_detach(&sb);
}

char *prompt_execute(const char *goal, const char *step_text, const struct prompt_dep *deps,
		     size_t n_deps, const struct strvec *critiques, int attempt)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "Goal of the plan: ");
	put(&sb, goal ? goal : "");
	strbuf_adds(&sb, "\n\nYour step (attempt ");
	strbuf_addi(&sb, attempt);
	strbuf_adds(&sb, "):\n");
	put(&sb, step_text);
	strbuf_addc(&sb, '\n');
	if (n_deps) {
		strbuf_adds(&sb, "\nVerified outputs of the steps this one depends on:\n");
		for (size_t i = 0; i < n_deps; i++) {
			strbuf_adds(&sb, "- ");
			put(&sb, deps[i].step_id);
			strbuf_adds(&sb, ": ");
			put(&sb, deps[i].output_json);
			strbuf_addc(&sb, '\n');
		}
	}
	if (critiques && critiques->n) {
		strbuf_adds(&sb, "\nEarlier attempts failed verification. Address every point:\n");
		for (size_t i = 0; i < critiques->n; i++) {
			strbuf_addu(&sb, i + 1);
			strbuf_adds(&sb, ". ");
			put(&sb, critiques->v[i]);
			strbuf_addc(&sb, '\n');
		}
	}
	strbuf_adds(&sb, "\nDo the step, then answer with the result JSON.");
	return strbuf_detach(&sb);
}

char *prompt_verify(const char *goal, const char *step_text, const char *result_json,
		    const char *tool_log, const char *diff)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "Goal of the plan: ");
	put(&sb, goal ? goal : "");
	strbuf_adds(&sb, "\n\nThe step:\n");
	put(&sb, step_text);
	strbuf_adds(&sb, "\n\nThe executor's result:\n");
	put(&sb, result_json);
	strbuf_addc(&sb, '\n');
	if (tool_log && *tool_log) {
		strbuf_adds(&sb, "\nTool calls made in this attempt:\n");
		put(&sb, tool_log);
		strbuf_addc(&sb, '\n');
	}
	if (diff) {
		strbuf_adds(&sb, "\nWhat this attempt changed in the workspace (taken from the "
				 "files themselves, not from the executor's account):\n");
		put(&sb, *diff ? diff : "(no file changed)\n");
		strbuf_addc(&sb, '\n');
	}
	strbuf_adds(&sb, "\nJudge each acceptance criterion and answer with the verdict JSON.");
	return strbuf_detach(&sb);
}

char *prompt_final_check(const struct plan *p, const struct strvec *results)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "Goal: ");
	put(&sb, p->goal ? p->goal : "");
	strbuf_adds(&sb, "\n\nSuccess criteria of the whole plan:\n");
	for (size_t i = 0; i < p->success_criteria.n; i++) {
		strbuf_adds(&sb, "- ");
		put(&sb, p->success_criteria.v[i]);
		strbuf_addc(&sb, '\n');
	}
	strbuf_adds(&sb, "\nVerified step results:\n");
	for (size_t i = 0; i < results->n; i++) {
		put(&sb, results->v[i]);
		strbuf_addc(&sb, '\n');
	}
	strbuf_adds(&sb, "\nJudge each success criterion (as criteria_results) and answer with "
			 "the verdict JSON.");
	return strbuf_detach(&sb);
}

char *prompt_synthesize(const char *task, const struct plan *p, const struct strvec *results,
			const struct strvec *gaps)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "Task:\n");
	put(&sb, task);
	strbuf_adds(&sb, "\n\nGoal: ");
	put(&sb, p->goal ? p->goal : "");
	strbuf_adds(&sb, "\n\nVerified step results:\n");
	for (size_t i = 0; i < results->n; i++) {
		put(&sb, results->v[i]);
		strbuf_addc(&sb, '\n');
	}
	if (gaps->n) {
		strbuf_adds(&sb, "\nNot verified (start the answer with \"PARTIAL:\" and name "
				 "these gaps):\n");
		for (size_t i = 0; i < gaps->n; i++) {
			strbuf_adds(&sb, "- ");
			put(&sb, gaps->v[i]);
			strbuf_addc(&sb, '\n');
		}
	}
	strbuf_adds(&sb, "\nWrite the final answer.");
	return strbuf_detach(&sb);
}
