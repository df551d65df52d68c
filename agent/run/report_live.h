/* report_live — the engine's report.md, built from the events as the bus publishes them
 * (no journal read at the end): report.c's accumulator behind a lock of its own, since
 * workers publish too and the report is written on the engine thread. */
#ifndef PEVTUI_REPORT_LIVE_H
#define PEVTUI_REPORT_LIVE_H

#include <stdbool.h>

struct bus;
struct cJSON;
struct report_live;

struct report_live *report_live_new(void);
/* Unsubscribes from its bus first. NULL ok. */
void report_live_free(struct report_live *l);
/* An event from before this process (the journal a resumed run was rebuilt from), in
 * journal order, before report_live_attach: `o` is the line's object, borrowed. */
void report_live_apply(struct report_live *l, int type, const struct cJSON *o);
/* From now on takes every journaled event published on `b`, in publish order; subscribe
 * it together with the journal so that both see the same events. */
void report_live_attach(struct report_live *l, struct bus *b);
/* Writes RUNDIR/report.md from the events taken so far (what report_write would render
 * from the journal they went to). Any thread. false + *err. */
bool report_live_write(struct report_live *l, const char *run_dir, char **err);

#endif
