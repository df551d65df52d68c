/*
 * series_rebuild — --resume rebuilds each step's checkpoint series (what its attempts
 * changed, restored before its next attempt) from the journal, not from memory: the
 * step.checkpoint and step.changes events say which attempt ran between which two
 * checkpoints and which series were restored before it; attempts that overlapped another
 * step's are marked so their paths are never restored as the step's alone; an attempt
 * with a step.checkpoint and no step.changes was cut off by a stop.
 */
#ifndef PEVTUI_SERIES_REBUILD_H
#define PEVTUI_SERIES_REBUILD_H

#include <stdbool.h>
#include <stddef.h>

struct checkpoints;
struct event;

struct series_rebuild;

/* Notes into `cp` (borrowed, must outlive it). */
struct series_rebuild *series_rebuild_new(struct checkpoints *cp);
void series_rebuild_free(struct series_rebuild *sr);
/* One journaled event, in journal order. */
void series_rebuild_event(struct series_rebuild *sr, const struct event *ev);
/*
 * An attempt cut off by a stop (kill -9, power loss, a journal that could not be written):
 * the journal names the checkpoint before it (step.checkpoint) but no step.changes ends
 * it before the process that ran it was gone. --resume compares the workspace as the
 * stop left it with `before` (crash_cut.c).
 */
struct series_cut {
	char *step_id;
	int attempt;
	char *before;
	bool overlapped; /* another step's attempt ran in the same window */
};

/*
 * The attempts cut off and not settled yet (no step.changes marked `cut` names them),
 * once every event was given: windows still open at the journal's end are cut too. *v is
 * owned by sr, valid until the next call on it.
 */
size_t series_rebuild_cut(struct series_rebuild *sr, const struct series_cut **v);
/* Attempts whose checkpoints the store lacks (their files are not restored), and the
 * first such error (NULL when none; owned by sr). */
size_t series_rebuild_missing(const struct series_rebuild *sr, const char **first_err);

#endif
