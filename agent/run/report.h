/* report — report.md for a run, rendered from its journal. */
#ifndef PEVTUI_REPORT_H
#define PEVTUI_REPORT_H

#include <stdbool.h>

/* Reads RUNDIR/journal.jsonl and writes RUNDIR/report.md: task, plan, per-step verdicts,
 * answer, metrics, cost per role. false + *err. */
bool report_write(const char *run_dir, char **err);

#endif
