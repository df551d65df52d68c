/* provider_sim — the offline simulated provider (--provider sim, --demo). */
#ifndef PEVTUI_PROVIDER_SIM_H
#define PEVTUI_PROVIDER_SIM_H

#include <stdbool.h>

struct provider;

/*
 * Creates a simulated provider playing `scenario` (a built-in name, see
 * sim_scenario_names, or NULL for the generic plan of any task), or, when `script_path`
 * is given, the responses of that JSON script file. Text streams in small chunks with
 * `delay_ms` between them. NULL + *err for an unknown scenario or a bad script.
 */
struct provider *provider_sim_new(const char *scenario, const char *script_path, int delay_ms,
				  char **err);

/* NULL-terminated list of built-in scenario names. */
const char *const *sim_scenario_names(void);
/* The built-in task of a scenario (for --demo without a task); NULL if unknown. */
const char *sim_scenario_task(const char *name);
/* Files a scenario seeds into the workspace before the run: calls fn for each. */
typedef void (*sim_seed_fn)(void *ctx, const char *rel_path, const char *content);
void sim_scenario_seed(const char *name, sim_seed_fn fn, void *ctx);

#endif
