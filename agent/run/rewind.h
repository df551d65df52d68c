/*
 * rewind — taking a run's workspace back to a checkpoint on purpose (pevtui --rewind
 * RUN[:STEP]): to before the run, to before a step's first attempt, or to a checkpoint by
 * id (the undo of an earlier rewind). What it will change is known before anything is
 * written, and a checkpoint of the workspace as it is now is taken first, so a rewind can
 * be undone. The workspace's own .git is never read or written (checkpoint.h).
 */
#ifndef PEVTUI_REWIND_H
#define PEVTUI_REWIND_H

#include <stdbool.h>
#include <sys/types.h>

#include "checkpoint.h"
#include "strbuf.h"

struct rewind {
	char *run_dir, *run_id;
	char *workspace;            /* where the files are restored */
	char target[CP_ID_LEN + 1]; /* the checkpoint the workspace goes back to */
	char *what;                 /* "to before the run", "to before step S", … */
	char undo[CP_ID_LEN + 1];   /* the workspace just before the rewind (rewind_apply) */
	struct cp_plan plan;        /* what the rewind does to each path (kept ones too) */
	bool journal;               /* the run's journal is ours to append to (not live) */
	struct checkpoints *cp;
};

/*
 * Reads RUNDIR's journal and store and works out a rewind to before the run (`to` NULL),
 * before step `to`'s first attempt, or to the checkpoint `to` names (40 hex digits, or a
 * unique start of at least 7). `workspace` (may be NULL) is the --workspace given: it must
 * be the run's own when the journal puts the workspace outside the run folder. A run held
 * by a live pevtui is refused unless it is paused with no step running — unless `ours`
 * (the cockpit of that very run asks, and checks that itself). Writes nothing: the plan
 * comes from a snapshot held in memory (checkpoint_take_dry). The snapshot is taken by the
 * rules the target checkpoint was taken by (recorded in it), whatever the config says
 * now; `exclude` (may be NULL: today's [checkpoints] exclude patterns) leaves more out,
 * never less. false + *err (one sentence; caller frees) when the run, the step or the
 * checkpoint is unknown, the run has no checkpoints, or it is live.
 */
bool rewind_prepare(const char *run_dir, const char *to, const char *workspace, bool ours,
                    const struct strvec *exclude, struct rewind *rw, char **err);
/*
 * Takes the undo checkpoint (rw->undo), plans again from it (the workspace may have moved
 * since the preview) and carries the plan out: each file back as the target holds it —
 * content, link, permission bits — or removed when the target proves it absent; the rest
 * kept (checkpoint_plan). rw->plan says what was done. Appends a `notice` of kind `rewind`
 * to the journal when the run is not live. false + *err when the undo checkpoint could not
 * be taken (nothing done) or a file could not be restored (the others are still tried).
 */
bool rewind_apply(struct rewind *rw, char **err);
void rewind_release(struct rewind *rw);

struct cJSON;
/* The `rewind` notice's fields (doc/events.md), for --rewind and the cockpit's `u` alike:
 * the sentence, the checkpoint gone back to, the undo checkpoint, the paths written, those
 * kept and why, and the counts by kind. Caller owns the object. */
struct cJSON *rewind_notice(const char *msg, const char *target, const char *undo,
                            const struct cp_plan *plan);
/* "1 removed, 1 put back (a.txt, b.txt); kept: cache.tmp, left out of the checkpoint by
 * exclude = *.tmp" style sentence of what a carried-out plan did (at most `names` paths
 * written and `names` kept ones named). Caller frees. */
char *rewind_summary(const struct cp_plan *plan, size_t names);

#endif
