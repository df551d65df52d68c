/* rewind_key — the cockpit's rewind key: what a rewind of the run (or to before a step)
 * would change back, as the question its confirmation asks, and the engine command. */
#ifndef PEVTUI_REWIND_KEY_H
#define PEVTUI_REWIND_KEY_H

#include <stdbool.h>

struct strvec;

/*
 * For the run in run_dir (whose cockpit this is), its workspace `workspace`: the question
 * (safe text) naming the files a rewind to before step `step_id` (NULL: before the run)
 * would change back, and the PEV_CMD_REWIND JSON. false + *err (a sentence for the status
 * line) when there is nothing to go back to or nothing would change. `exclude`: the
 * [checkpoints] exclude patterns (may be NULL). Caller frees all.
 */
bool rewind_key_preview(const char *run_dir, const char *workspace, const char *step_id,
                        const struct strvec *exclude, char **question, char **command_json,
                        char **err);

#endif
