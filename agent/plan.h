/* plan — the structured plan of DESIGN.md: model, JSON in and out, validation. */
#ifndef PEVTUI_PLAN_H
#define PEVTUI_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct cJSON;

/* Size bounds a valid plan must respect (validation reports each excess). */
#define PLAN_MAX_STEPS 200
#define PLAN_MAX_ID 64          /* bytes in a step_id */
#define PLAN_MAX_TEXT 8192      /* bytes in any one text field */
#define PLAN_MAX_LIST 64        /* entries in any one list (criteria, deps, …) */
#define PLAN_MAX_JSON_DEPTH 32  /* nesting accepted in model JSON */

enum complexity { CX_LOW, CX_MEDIUM, CX_HIGH };

struct plan_action {
	char *tool;
	char *params_json; /* compact JSON text of `params` ("{}" when absent) */
};

/* One step. Plain data shared on purpose (engine, view, editor). */
struct plan_step {
	char *id;
	char *name;
	char *description;
	struct plan_action *actions;
	size_t n_actions;
	struct strvec criteria;         /* acceptance_criteria */
	struct strvec expected_outputs;
	struct strvec deps;             /* dependencies (step ids) */
	enum complexity complexity;
};

struct plan {
	char *goal;
	char *context;
	struct plan_step *steps;
	size_t n_steps;
	struct strvec success_criteria;
	char *rollback_strategy;
};

const char *complexity_name(enum complexity c);          /* "low" … */
int complexity_from_name(const char *s);                 /* -1 if unknown */

struct plan *plan_new(void);
void plan_free(struct plan *p);                          /* NULL ok */
struct plan *plan_clone(const struct plan *p);
void plan_step_free_fields(struct plan_step *s);
void plan_step_copy(struct plan_step *dst, const struct plan_step *src);
/* True when two steps have the same definition (every field). */
bool plan_step_equal(const struct plan_step *a, const struct plan_step *b);
/* True when two plans have the same content (NULL text equals ""). */
bool plan_equal(const struct plan *a, const struct plan *b);
/* Index of the step with this id, or -1. */
int plan_find(const struct plan *p, const char *id);

/* An index of a plan's step ids, for callers that look up many: plan_find's answer (the
 * first step with the id, -1 for none or NULL) at a constant cost. It points into the
 * plan's ids: build it again when they change, free it before the plan. */
struct plan_ids;
struct plan_ids *plan_ids_new(const struct plan *p);
void plan_ids_free(struct plan_ids *ix);                 /* NULL ok */
int plan_ids_find(const struct plan_ids *ix, const char *id);

/*
 * Builds a plan from model text: prose and ```json fences around one JSON object are
 * tolerated. Returns NULL and appends one human sentence per problem to `errors` when the
 * text holds no usable plan (malformed JSON, wrong types, missing fields). Does not run
 * plan_validate. Caller owns the result.
 */
struct plan *plan_parse(const char *text, struct strvec *errors);
/* Same from a cJSON object (not taken). */
struct plan *plan_from_json(const struct cJSON *obj, struct strvec *errors);
/* One step from a JSON object (used by the step editor). false + errors on bad input. */
bool plan_step_from_json(const struct cJSON *obj, struct plan_step *out, struct strvec *errors);

/* Checks ids unique and well-formed, dependencies known, no cycle (the cycle is named,
 * e.g. "dependency cycle: a -> b -> a"), at least one step, bounded sizes. Appends one
 * sentence per problem; returns true when there is none. */
bool plan_validate(const struct plan *p, struct strvec *errors);
/* A task longer than the plan's goal may be (PLAN_MAX_TEXT: the planner restates it) is
 * refused before any model call: one line saying how long, the limit, and how to pass a
 * long brief instead (malloc'd), or NULL when the task fits. */
char *plan_task_error(const char *task);

/* JSON out. Caller owns the cJSON / the string. */
struct cJSON *plan_to_json(const struct plan *p);
struct cJSON *plan_step_to_json(const struct plan_step *s);
char *plan_to_string(const struct plan *p, bool pretty);
char *plan_step_to_string(const struct plan_step *s, bool pretty);
/* Appends what plan_step_to_string returns to sb. */
void plan_step_add_json(struct strbuf *sb, const struct plan_step *s, bool pretty);

/* Step ids in an order where each step comes after its dependencies (plan must be
 * valid). Returns an array of n_steps indexes; caller frees. */
size_t *plan_topo_order(const struct plan *p);

#endif
