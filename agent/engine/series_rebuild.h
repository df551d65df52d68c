/*
 * series_rebuild — --resume rebuilds each step's checkpoint series (what its attempts
 * changed, restored before its next attempt) from the journal, not from memory: the
 * step.changes events say which attempt ran between which two checkpoints and which
 * series were restored before it; attempts that overlapped another step's are marked so
 * their paths are never restored as the step's alone.
 */
#ifndef PEVTUI_SERIES_REBUILD_H
#define PEVTUI_SERIES_REBUILD_H

#include <stddef.h>

struct checkpoints;
struct event;

struct series_rebuild;

/* Notes into `cp` (borrowed, must outlive it). */
struct series_rebuild *series_rebuild_new(struct checkpoints *cp);
void series_rebuild_free(struct series_rebuild *sr);
/* One journaled event, in journal order. */
void series_rebuild_event(struct series_rebuild *sr, const struct event *ev);
/* Attempts whose checkpoints the store lacks (their files are not restored), and the
 * first such error (NULL when none; owned by sr). */
size_t series_rebuild_missing(const struct series_rebuild *sr, const char **first_err);

#endif
