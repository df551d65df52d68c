/* cost — prices per model (a data file, a user override, a built-in fallback), the cost
 * of a call, and the estimate of a plan before it is approved. */
#ifndef PEVTUI_COST_H
#define PEVTUI_COST_H

#include <stdbool.h>
#include <stddef.h>

struct llm_usage;
struct plan;
struct plan_step;

/* USD per million tokens. */
struct price {
	double input;
	double output;
	double cache_read;
	double cache_write;
};

/* The date the built-in prices were read and where. */
extern const char cost_prices_source[];

/* Name of the price file, in $(pkgdatadir) and in $XDG_CONFIG_HOME/pevtui/. */
#define COST_PRICES_FILE "prices.tsv"

/*
 * Loads the price tables once: the shipped file ($(pkgdatadir)/prices.tsv) replaces the
 * built-in table when present, then the user's $XDG_CONFIG_HOME/pevtui/prices.tsv
 * (~/.config when unset) overrides or adds rows. Called by cost_lookup on first use; call
 * it at start to report problems early. Returns false when a present file was unusable
 * (then the previous table stays and cost_load_error says why).
 */
bool cost_init(void);
/* The first load problem as "FILE:LINE: reason", or NULL. Valid until the next load. */
const char *cost_load_error(void);

/*
 * Loads one price file. Lines: "# read: DATE", "# source: TEXT", other '#' comments,
 * blank lines, and rows "PREFIX<TAB>input<TAB>output<TAB>cache_read<TAB>cache_write"
 * (spaces also separate). `merge` adds to the active table (rows with the same prefix are
 * replaced) instead of replacing it. All-or-nothing: on a bad line returns false, sets
 * *err "FILE:LINE: reason" (caller frees) and changes nothing.
 */
bool cost_load_file(const char *path, bool merge, char **err);
/* Back to the built-in table; no file is loaded later. For tests. */
void cost_reset(void);
/* "prices read DATE from SOURCE" for the active table; caller frees. */
char *cost_describe_source(void);

/* Looks a model up (longest matching prefix). false when the model is unknown. */
bool cost_lookup(const char *model, struct price *out);
/* Cost of one call in USD; *known false (and 0 returned) when the model is unknown. */
double cost_of_call(const char *model, const struct llm_usage *u, bool *known);

/*
 * Estimates, before approval, what executing and verifying a plan will cost, with
 * models[ROLE_PLANNER], [ROLE_EXECUTOR], [ROLE_VERIFIER] (the planner's own calls are
 * already spent and not counted). Token assumptions per step by complexity
 * (input includes context re-sent on every tool turn; no cache discount, so it errs high):
 *   executor  low 8k in / 1k out, medium 20k / 2.5k, high 50k / 6k
 *   verifier  4k in + (0, 2k, 4k) by complexity / 600 out
 *   final check (verifier, once)  2k + 500 per step in / 800 out
 * *known is false when a needed model has no price; the known part is then returned.
 */
double cost_estimate_plan(const struct plan *p, const char *const models[3], bool *known);
/* The same for one step (executor and verifier; no final check). */
double cost_estimate_step(const struct plan_step *s, const char *const models[3], bool *known);

/* The cost reserved against the budget before one call: its input (characters) and its
 * answer's limit. *known false (and 0) when the model has no price. */
double cost_estimate_call(const char *model, size_t input_chars, int max_tokens, bool *known);

#endif
