/*
 * drill_changes — the drill-down page of what a step's attempts changed in the workspace:
 * per attempt its stat, checkpoints and files, then the unified diff (text files; binaries
 * as sizes), read from the run's checkpoint store. Lines are sanitized and tagged with the
 * kinds drill.h uses. No curses.
 */
#ifndef PEVTUI_DRILL_CHANGES_H
#define PEVTUI_DRILL_CHANGES_H

#include <stdbool.h>

#include "linestore.h"

struct run_state;

/*
 * Appends to `page` the changes of attempt `attempt` of step `step_id` (0: every attempt,
 * oldest first) as the journal folded into `rs` names them, the diffs from the store in
 * `run_dir`. false + *msg (a sentence; caller frees) when there is nothing to show: no
 * run folder, no step.changes for it, the store missing or damaged (then nothing was
 * appended).
 */
bool drill_changes(struct linestore *page, const struct run_state *rs, const char *run_dir,
                   const char *step_id, int attempt, char **msg);

#endif
