/* report — report.md for a run, rendered from its events: as they are published (the
 * engine), or read back from its journal (report_write). One path for both. */
#ifndef PEVTUI_REPORT_H
#define PEVTUI_REPORT_H

#include <stdbool.h>

struct cJSON;
struct report;

struct report *report_new(void);
void report_free(struct report *r); /* NULL ok */
/* Takes one journaled event in journal order: its type and its whole object as its line
 * reads ("seq", "ts", "type", then the fields; borrowed, read only during the call). */
void report_apply(struct report *r, int type, const struct cJSON *o);
/* Writes RUNDIR/report.md (temporary file + rename) from the events taken so far: task,
 * plan, per-step verdicts, answer, metrics, cost per role. false + *err. */
bool report_render_write(const struct report *r, const char *run_dir, char **err);

/* Reads RUNDIR/journal.jsonl and writes RUNDIR/report.md from it. false + *err. */
bool report_write(const char *run_dir, char **err);

#endif
