/* provider_sim — the offline simulated provider (--provider sim, --demo, --script). */
#ifndef PEVTUI_PROVIDER_SIM_H
#define PEVTUI_PROVIDER_SIM_H

#include <stdbool.h>

struct provider;

/*
 * Creates a simulated provider playing `scenario` (a built-in name, see
 * sim_scenario_names, or NULL for the generic plan of any task), or, when `script_path`
 * is given, the responses of that JSON script file. Text streams in small chunks with
 * `delay_ms` between them. NULL + *err for an unknown scenario or a bad script (caller
 * frees *err). The result is freed with provider_free.
 *
 * Script format (the built-in scenarios use the same one):
 *   { "task": "...", "about": "...", "seed": {"rel/path": "content", ...},
 *     "planner": [TEXT, ...],            PLAN/REPLAN calls in order; the last repeats
 *     "executor": {"s1": [ATTEMPT, ...]}, by request attempt; the last repeats
 *     "verifier": {"s1": [TEXT, ...]},    by request attempt; the last repeats
 *     "final_check": TEXT, "synthesis": TEXT }
 * TEXT is a string (used verbatim), a JSON object or array (printed compact), or the
 * wrapper {"before": "prose", "json": {...}, "after": "prose"} which prints the prose
 * around a ```json fenced, pretty-printed block. ATTEMPT is {"rounds": [{"text": "...",
 * "tool_calls": [{"name": "write_file", "input": {...}}]}, ...], "final": TEXT}.
 * In every string "{{task}}", "{{step_id}}", "{{attempt}}" and "{{tool_result}}" (the
 * content of the latest tool result of the attempt) are replaced; inside JSON values the
 * replacement is escaped by the printer, inside a plain string TEXT it is verbatim.
 * Anything the script leaves out gets a default: a plan from the generic scenario, an
 * executor attempt writing <step_id>.md, a verdict passing every acceptance criterion,
 * a passing final check and a summarising synthesis.
 */
struct provider *provider_sim_new(const char *scenario, const char *script_path, int delay_ms,
				  char **err);

/* NULL-terminated list of built-in scenario names. Static storage. */
const char *const *sim_scenario_names(void);
/* The built-in task of a scenario (for --demo without a task); NULL if unknown. Static. */
const char *sim_scenario_task(const char *name);
/* The one-line description of a scenario (for --help); NULL if unknown. Static. */
const char *sim_scenario_about(const char *name);
/* Files a scenario seeds into the workspace before the run: calls fn for each. Paths are
 * relative and never contain "..". */
typedef void (*sim_seed_fn)(void *ctx, const char *rel_path, const char *content);
void sim_scenario_seed(const char *name, sim_seed_fn fn, void *ctx);

/* The same for the script a simulated provider plays (built-in or --script FILE).
 * provider_sim_task returns NULL when the script has no task; the string lives as long
 * as the provider. */
const char *provider_sim_task(const struct provider *p);
void provider_sim_seed(const struct provider *p, sim_seed_fn fn, void *ctx);

#endif
