/*
 * report_replans — the "Replans" section of report.md: for each replan, the step that
 * failed and why, how the replan was answered, and what it changed in the plan as a word
 * diff (plandiff.h). Read from the journal's events in order, after the fold has taken
 * each (report.c feeds them); renders markdown.
 */
#ifndef PEVTUI_REPORT_REPLANS_H
#define PEVTUI_REPORT_REPLANS_H

struct cJSON;
struct run_state;
struct strbuf;

struct report_replans;

struct report_replans *report_replans_new(void);
void report_replans_free(struct report_replans *rp); /* NULL ok */

/* Takes one event (`o`, the whole object, borrowed) once `rs` has folded it. */
void report_replans_apply(struct report_replans *rp, const struct run_state *rs, int type,
			  const struct cJSON *o);

/* "## Replans" with one part per replan; nothing when the run had none. */
void report_replans_render(const struct report_replans *rp, struct strbuf *sb);

#endif
