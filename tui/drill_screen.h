/*
 * drill_screen — the full-screen view of a log entry opened whole (Enter on a step-log
 * line) and the pages it leads to: an artifact's diff against the previous attempt (d),
 * the requests a role was sent for the attempt (p), an artifact in $PAGER (o), what the
 * attempt changed in the workspace (c, from the run's checkpoints). Pages are
 * built by drill.h from the view, the journal and the run folder. Curses; UI thread only.
 */
#ifndef PEVTUI_DRILL_SCREEN_H
#define PEVTUI_DRILL_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

struct requests_index;
struct view;

/* Where pages find what the view does not hold. Borrowed for each call. */
struct drill_source {
	const struct view *v;
	const char *run_dir; /* NULL: no run folder to read (requests, copies, outputs) */
	/* The run folder's requests as listed before (requests.h), so that opening the
	 * requests again reads only what was kept since; NULL: read them afresh. */
	struct requests_index *requests;
	/* The event with this seq when the view kept only its seq (logref.h): the journal, or
	 * the events of a replay. Caller frees; NULL when not found. */
	char *(*fetch)(void *ctx, unsigned long seq);
	void *ctx;
};

struct drill_screen;

/*
 * Opens the entry behind line `line` of the log of step `step_id` (raw id; NULL: the run
 * log). NULL and *msg (a sentence; caller frees) when there is nothing to open.
 */
struct drill_screen *drill_screen_open(const struct drill_source *src, const char *step_id,
				       size_t line, char **msg);
/* Opens straight on the requests a role was sent for the attempt that line `line` of the
 * step's log belongs to ((size_t)-1: the step's latest attempt; NULL step: the planner's
 * and the final answer's). NULL and *msg when none was kept. */
struct drill_screen *drill_screen_requests(const struct drill_source *src, const char *step_id,
					   size_t line, char **msg);
/* Opens straight on what the attempt of line `line` of the step's log changed in the
 * workspace ((size_t)-1: every attempt of the step). NULL and *msg when it recorded none. */
struct drill_screen *drill_screen_changes(const struct drill_source *src, const char *step_id,
					  size_t line, char **msg);
void drill_screen_free(struct drill_screen *ds); /* NULL ok */

/* Draws over the whole screen; `gates` waiting are named in the footer. */
void drill_screen_draw(struct drill_screen *ds, int rows, int cols, size_t gates);

/* One key. false when the screen closes (Esc or q on its first page). */
bool drill_screen_key(struct drill_screen *ds, const struct drill_source *src, bool is_key,
		      unsigned int ch);

#endif
