/* restore — what a resumed run takes back from its journal's run.start, checked as the
 * command line checks it. A run folder may come from elsewhere: nothing restored widens
 * what the run may do (its gates, --yes, its workspace) unless this command line says so. */
#ifndef PEVTUI_RESTORE_H
#define PEVTUI_RESTORE_H

#include <stdbool.h>

struct settings;

/* Settings this command line gave as flags: those win and are not restored. */
enum restore_field {
	RESTORE_PROVIDER, RESTORE_MODEL_PLANNER, RESTORE_MODEL_EXECUTOR, RESTORE_MODEL_VERIFIER,
	RESTORE_SCENARIO, RESTORE_WORKSPACE, RESTORE_GATES, RESTORE_YES, RESTORE_MAX_RETRIES,
	RESTORE_MAX_REPLANS, RESTORE_PARALLEL, RESTORE_BUDGET, RESTORE_CHAOS,
};
#define RESTORE_GIVEN(f) (1u << (f))

/*
 * `s` holds the defaults, the config file and this command line's flags (`given` says
 * which flags); `run_start_json` is the journal's run.start event of the run in run_dir.
 * Restores the task, provider, scenario, models and policy numbers not given as flags,
 * each checked as its flag is (settings_policy_check). Never widens:
 * - gates: those of the journal are added to this machine's (config or defaults); a
 *   journal cannot turn one off — only --gate can;
 * - --yes is never restored: it must be given again;
 * - the workspace is restored only when it is the run's own (RUNDIR/workspace);
 *   another directory must be named again with --workspace.
 * true + *said (one sentence: what came from the journal and what did not carry over;
 * caller frees), or false + *err naming the field, the value, what it must be and the
 * flag that chooses it (caller frees).
 */
bool restore_settings(struct settings *s, const char *run_start_json, const char *run_dir,
		      unsigned given, char **said, char **err);

#endif
