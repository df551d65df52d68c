/*
 * report_changes — report.md's "Workspace changes": the run's total diff stat, first
 * checkpoint to last, with the files it changed (each step's own changes are told under
 * its step by report.c).
 */
#ifndef PEVTUI_REPORT_CHANGES_H
#define PEVTUI_REPORT_CHANGES_H

#include "strbuf.h"

struct run_state;

/*
 * Appends the section for the run in `run_dir` whose journal folded into `rs`: nothing
 * when the journal names no checkpoint; the reason when the store cannot be read.
 */
void report_changes_render(struct strbuf *sb, const struct run_state *rs, const char *run_dir);

#endif
