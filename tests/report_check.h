/* report_check — a run's report.md, as the engine wrote it from the events it published,
 * against what report_write renders from the run's finished journal: they must be the
 * same bytes. */
#ifndef PEVTUI_REPORT_CHECK_H
#define PEVTUI_REPORT_CHECK_H

/* NULL when RUNDIR/report.md is what report_write(RUNDIR) renders (it is rendered again,
 * in place); otherwise a sentence naming the first line that differs. Caller frees. */
char *report_check_live(const char *run_dir);

#endif
