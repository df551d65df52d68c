/*
 * diff_cmd — `pevtui --diff RUN[:STEP]`: what a run or one step changed in the workspace,
 * as unified diff text on stdout (binaries as sizes), for less or delta. The checkpoints
 * come from the run's journal, the text from its checkpoint store (rundiff.h).
 */
#ifndef PEVTUI_DIFF_CMD_H
#define PEVTUI_DIFF_CMD_H

#include <stdio.h>

/*
 * Splits "RUN:STEP" at its last colon: *run and *step (caller frees; *step NULL when
 * `ref` names no step). A `ref` that is an existing folder is a run whole, colon or not.
 */
void diff_cmd_split(const char *ref, char **run, char **step);

/*
 * Prints the diff of the run in `run_dir` (step NULL: the whole run, first checkpoint to
 * last; else every attempt of that step) to `out`, sanitized when `out` is a terminal.
 * Returns the exit status: 0, or 1 after one line on stderr naming what was wrong (no
 * journal, no such step, no checkpoints, a missing or corrupt store).
 */
int diff_cmd_print(const char *run_dir, const char *step, FILE *out);

#endif
