/*
 * rundiff — what a run, or one step of it, changed in the workspace: the checkpoints its
 * journal names (step.changes, read through the fold) compared in the run's store. For
 * `pevtui --diff`, the cockpit's changes page and report.md's total.
 */
#ifndef PEVTUI_RUNDIFF_H
#define PEVTUI_RUNDIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "checkpoint.h"
#include "strbuf.h"

struct run_state;
struct fchange;
struct strvec;

/*
 * The run's whole change: from the earliest checkpoint taken before an attempt to the
 * latest taken after one (by when they were taken: parallel attempts overlap), into
 * *out (cp_changes_release it), the diff cut at `max_diff` bytes. false + *err (caller
 * frees) when the journal names no checkpoint or the store lacks one.
 */
bool rundiff_run(struct checkpoints *cp, const struct run_state *rs, size_t max_diff,
                 struct cp_changes *out, char **err);

/*
 * What attempt `fc` changed as its step.changes attributes it (the paths it lists), from
 * its two checkpoints: under --parallel the raw checkpoints hold other steps' files too.
 */
bool rundiff_attempt(struct checkpoints *cp, const struct fchange *fc, size_t max_diff,
                     struct cp_changes *out, char **err);

/*
 * The changes of step `step_id`: attempt `attempt`, or every attempt when it is 0, oldest
 * first, appended to `out` as text: for each attempt a line
 * "# step ID, attempt N: STAT (checkpoint AAAAAAA..BBBBBBB)", then its unified diff
 * (binaries as sizes), each cut at `max_diff` bytes with a "# (cut …)" line. false + *err
 * when the journal has no step.changes for it, or the store lacks a checkpoint.
 */
bool rundiff_step(struct checkpoints *cp, const struct run_state *rs, const char *step_id,
                  int attempt, size_t max_diff, struct strbuf *out, char **err);

/*
 * One line for what attempt `fc` changed: "1 file changed, +1 -0: +notes.txt, b.md"
 * (+ added, - deleted), at most `max_names` paths then "and N more"; "no files changed".
 * Raw (paths are a model's): sanitize before drawing. Caller frees.
 */
char *rundiff_summary(const struct fchange *fc, int max_names);

#endif
