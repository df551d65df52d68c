/* panes — draws the view into the Plan, Step log, Verdicts and Cost panes and the tab bar. */
#ifndef PEVTUI_PANES_H
#define PEVTUI_PANES_H

#include <stdbool.h>

#include "layout.h"
#include "listview.h"
#include "logview.h"

struct view;
struct vstep;

/* What the operator has selected and scrolled; owned by the app, read and kept in range
 * by the drawing. */
struct panes_state {
	enum pane_id focus;
	bool zoom;
	struct listview plan;   /* row 0 is the run itself, row i + 1 is step i */
	struct logview log;
	const void *log_of;     /* the store the log view was showing (reset on change) */
	int verdict_skip;       /* rows scrolled in the verdicts pane */
	unsigned spin;          /* spinner frame */
	bool show_proposal;     /* the Plan pane shows the proposal at a replan gate (view.h) */
	bool verdicts_of_step;  /* the Verdicts pane shows only the selected step's verdicts */
	double now;             /* epoch seconds */
};

void panes_init(struct panes_state *ps);
/* Draws every visible pane of `l` and the tab bar. */
void panes_draw(const struct view *v, struct panes_state *ps, const struct layout *l);
/* Rows the Plan pane has: the run, then the steps of the revision shown. */
int panes_plan_rows(const struct view *v, const struct panes_state *ps);
/* True while the Plan pane shows the proposal waiting at a gate, not the plan in force. */
bool panes_showing_proposal(const struct view *v, const struct panes_state *ps);
/* The selected step, or NULL when the run row is selected (with the proposal shown: the
 * step of the plan in force with the same id, or NULL for a new one). */
struct vstep *panes_selected_step(const struct view *v, const struct panes_state *ps);
/* The log the step log pane shows now. */
const struct linestore *panes_log_store(const struct view *v, const struct panes_state *ps);
/* The glyph for a step status (spinner frame for running ones). */
const char *panes_status_glyph(int status, unsigned spin);
/* "1:05", "12.3s" …; into buf. */
void panes_duration(char *buf, unsigned long n, double secs);
/* "$0.0123", "?" or "$0.0123+?" for a sum that is known, unknown or partly known. */
void panes_money(char *buf, unsigned long n, double usd, bool unknown);

#endif
