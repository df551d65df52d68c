/* result — the executor's result and the verifier's verdict, parsed from model text. */
#ifndef PEVTUI_RESULT_H
#define PEVTUI_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct cJSON;

/* One criterion of a per-criterion meets_criteria answer. */
struct criterion_met {
	char *name; /* the map key or the object's `criterion`; "1", "2"… by position if none */
	bool met;
};

struct exec_result {
	char *reasoning;
	struct strvec actions_taken;
	char *findings;          /* text; a non-string findings value is kept as JSON text */
	struct strvec artifacts; /* workspace-relative paths the executor claims to have made */
	/* step_output.read_only (optional): paths among the artifacts the step only reads (a
	 * report on a file, say): not expected to be created or changed by the attempt. */
	struct strvec read_only;
	/* The executor's own claim: true, or given per criterion with every one met (an
	 * empty set is not met). */
	bool meets_criteria;
	/* Per criterion, in the model's order; NULL / 0 when it answered with one boolean. */
	struct criterion_met *criteria_met;
	size_t n_criteria_met;
	double confidence;       /* 0..1 */
	char *notes;
	/* The normalized result object, compact. A per-criterion meets_criteria and a
	 * non-string findings keep the value the model wrote. */
	char *json;
	/* Its step_output object, as it stands in `json` (what cJSON prints of that object). */
	char *output_json;
};

enum verdict_action { VERDICT_PASS, VERDICT_RETRY, VERDICT_REPLAN };
enum severity { SEV_MINOR, SEV_MAJOR, SEV_CRITICAL };

struct criterion_result {
	char *criterion;
	bool passed;
	char *evidence;
	double confidence;
	char *feedback;
};

struct verdict {
	bool overall_pass;
	struct criterion_result *criteria;
	size_t n_criteria;
	enum verdict_action action;
	char *feedback;          /* feedback_for_executor; never NULL when action != pass */
	enum severity severity;
};

const char *verdict_action_name(enum verdict_action a); /* "pass" "retry" "replan" */
const char *severity_name(enum severity s);             /* "minor" … */

/* Parse from model text (prose / fences tolerated, as plan_parse). NULL + *err (one
 * sentence naming the field) on bad input. Caller owns results and *err. */
struct exec_result *exec_result_parse(const char *text, char **err);
struct verdict *verdict_parse(const char *text, char **err);
void exec_result_free(struct exec_result *r);
void verdict_free(struct verdict *v);
struct cJSON *verdict_criteria_to_json(const struct verdict *v);

#endif
