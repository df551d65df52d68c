/* journal — journal.jsonl (append-only, one event per line), plan.json, loading. */
#ifndef PEVTUI_JOURNAL_H
#define PEVTUI_JOURNAL_H

#include <stdbool.h>

#include "events.h"

struct journal;

/* Opens RUNDIR/journal.jsonl for appending (creating RUNDIR's file). NULL + *err. */
struct journal *journal_open(const char *run_dir, char **err);
void journal_close(struct journal *j); /* NULL ok */
/*
 * Bus subscriber (ctx = struct journal *): appends non-ephemeral events, each line with a
 * single write(2). The first write error (a full disk, a file size limit) stops the
 * journal: what the failed write left of its line is cut off again, so the file ends on
 * its last complete event and the run can be resumed from it, nothing more is written,
 * and the failure callback (if set) is called once with the error sentence.
 */
void journal_on_event(void *ctx, const struct event *ev);
/* The callback for that failure; called on the thread that published the event. */
void journal_on_failure(struct journal *j, void (*fn)(void *ctx, const char *error),
			void *ctx);
/*
 * Forces what was appended so far to the disk (fdatasync), for an event that must outlive
 * a power loss before what follows it changes the world (step.checkpoint, before the
 * attempt's tools run). Any thread; NULL ok. Errors are ignored: the line was written.
 */
void journal_sync(struct journal *j);
/* The first write error as a sentence, or NULL. Owned by the journal. */
const char *journal_error(const struct journal *j);

/* Replaces RUNDIR/plan.json atomically (temporary file + rename). false + *err. */
bool journal_write_plan(const char *run_dir, const char *plan_json, char **err);

struct journal_load_info {
	unsigned long events;     /* complete events read */
	unsigned long last_seq;
	bool torn_tail;           /* the last line was cut off and was ignored */
	long torn_offset;         /* byte offset where the torn line starts, or -1 */
};

/* Called for each complete event in order; return false to stop early. The event is
 * freed after the call. */
typedef bool (*journal_visit_fn)(void *ctx, const struct event *ev);

/*
 * Reads a journal. A torn last line (no newline, or unparsable and last) is ignored and
 * reported in info. A bad line before the end is an error naming its line number.
 * Returns false + *err on error (missing file, bad line).
 */
bool journal_load(const char *path, journal_visit_fn fn, void *ctx,
		  struct journal_load_info *info, char **err);

/* Truncates a torn tail so appends start on a fresh line (used by --resume). */
bool journal_repair(const char *path, const struct journal_load_info *info, char **err);

#endif
