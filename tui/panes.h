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
	double now;             /* epoch seconds */
};

void panes_init(struct panes_state *ps);
/* Draws every visible pane of `l` and the tab bar. */
void panes_draw(const struct view *v, struct panes_state *ps, const struct layout *l);
/* The selected step, or NULL when the run row is selected. */
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
