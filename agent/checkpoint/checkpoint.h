/*
 * checkpoint — snapshots of the whole workspace in a content-addressed store (a bare git
 * repository) shared by every run on the workspace ($XDG_DATA_HOME/pevtui/stores/NAME-KEY,
 * named by the run folder's `store` file; a run from before kept its own
 * RUNDIR/checkpoints.git, still read where it is): taken before and after every attempt,
 * compared, and restored path by path. The workspace's own .git is never read or
 * written: a `.git` entry at any depth is left out of every snapshot.
 *
 * Thread safety: one store serves every worker thread; each function below takes the
 * store's mutex for its whole length, so calls from parallel attempts are serialized.
 */
#ifndef PEVTUI_CHECKPOINT_H
#define PEVTUI_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strbuf.h"

#define CP_ID_LEN 40                      /* a checkpoint id: the commit's hex object id */
#define CP_MAX_FILE_DEFAULT (50ull << 20) /* bigger files are left out, with a warning */
#define CP_MAX_TOTAL_DEFAULT (1ull << 30) /* bytes stored per checkpoint, then no more */

struct checkpoints;

/*
 * Opens (creating it when missing) the store of the workspace `ws_path` for the run in
 * `run_dir` (the one its `store` file names when it has one: a resumed run), and writes
 * run_dir/store. NULL + *err (caller frees) when the store cannot be created or opened, or
 * the workspace is not a folder. A full disk later is a take that fails saying so, and
 * every later take too (the run goes on without checkpoints); a store deleted under the
 * run is made again, with a warning.
 */
struct checkpoints *checkpoint_open(const char *run_dir, const char *ws_path, char **err);
void checkpoint_close(struct checkpoints *cp);
/* Whether checkpoints are off for the rest of the run (the disk was full). */
bool checkpoint_is_off(struct checkpoints *cp);
/* Per-file and per-checkpoint limits in bytes (0 keeps the current one). */
void checkpoint_set_limits(struct checkpoints *cp, uint64_t max_file, uint64_t max_total);

#define CP_EXCLUDED_LISTED 100 /* paths left out on purpose a checkpoint names */

/*
 * Paths left out of every checkpoint from now on, as [checkpoints] exclude writes them: a
 * NAME (globs * ? [..] allowed) is that name at any depth, a pattern with a '/' inside is
 * the whole path from the workspace's root ("/build": the top one only), a trailing '/'
 * means folders only. Copied; NULL or empty: none. Like a .gitignore'd path, an excluded
 * one is neither stored, compared nor restored, and is named in the checkpoint.
 */
void checkpoint_set_exclude(struct checkpoints *cp, const struct strvec *patterns);

/*
 * Snapshots the workspace: regular files with their exec bit, symbolic links as links
 * (never followed), deletions implied by absence. `.gitignore`d paths, `.git` entries and
 * things that are neither files nor links nor folders are left out; a file over the
 * per-file limit, or past the per-checkpoint limit, is left out and named in `warnings`
 * (sentences appended, may be NULL) and remembered in the checkpoint, so that diff and
 * restore never take it for a deletion. Writes the id in out_id (NUL-terminated).
 * false + *err when the workspace cannot be read or the store written.
 */
bool checkpoint_take(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                     char **err);

/*
 * The same for one step's attempt: `starting` for the checkpoint before it, false for the
 * one after. The store keeps which steps' attempts are between their two checkpoints; a
 * path that changed between two checkpoints while more than one was is theirs jointly,
 * and checkpoint_series_restore never restores it (it says so in `conflicts`).
 */
bool checkpoint_take_step(struct checkpoints *cp, const char *step_id, bool starting,
                          char out_id[CP_ID_LEN + 1], struct strvec *warnings, char **err);

enum cp_change { CP_ADDED, CP_MODIFIED, CP_DELETED };

struct cp_file {
	char *path;
	enum cp_change change;
	long plus, minus; /* lines added and removed (0 for binaries) */
	bool binary;
	uint64_t old_size, new_size;
	unsigned old_mode, new_mode; /* git modes: 0100644, 0100755, 0120000; 0 absent */
	unsigned old_perm, new_perm; /* a file's permission bits (07777); 0 unknown, absent */
};

/* What changed between two checkpoints, paths in bytewise order. */
struct cp_changes {
	struct cp_file *v;
	size_t n, cap;
	long plus, minus;
	char *diff; /* unified diff text, at most the bound asked (then diff_cut) */
	bool diff_cut;
	/* Left out of the later checkpoint on purpose ([checkpoints] exclude, .gitignore):
	 * the first CP_EXCLUDED_LISTED paths (folders end in '/'), and how many in all. */
	struct strvec excluded;
	size_t n_excluded;
};

void cp_changes_release(struct cp_changes *c);
const char *cp_change_name(enum cp_change c); /* "added", "modified", "deleted" */
/* "2 files changed, +3 −1" style short stat (caller frees). */
char *cp_changes_stat(const struct cp_changes *c);

/*
 * The files that differ from checkpoint `from` to `to`, with line counts, and their
 * unified diff (text files; binaries as sizes) cut at `max_diff` bytes. A path left out of
 * either checkpoint for its size is not reported. false + *err for an unknown id.
 */
bool checkpoint_diff(struct checkpoints *cp, const char *from, const char *to, size_t max_diff,
                     struct cp_changes *out, char **err);
/* The same for step_id's attempt between its checkpoints `from` and `to`: without the
 * paths another step alone changed meanwhile (checkpoint_step_writes). */
bool checkpoint_diff_step(struct checkpoints *cp, const char *step_id, const char *from,
                          const char *to, size_t max_diff, struct cp_changes *out, char **err);

/* The same for the paths of `paths` alone (a step.changes' list: what the journal
 * attributes to one attempt, when other steps' attempts ran in the same window). */
bool checkpoint_diff_listed(struct checkpoints *cp, const char *from, const char *to,
                            const struct strvec *paths, size_t max_diff, struct cp_changes *out,
                            char **err);

/*
 * Restores each of `paths` to its state in checkpoint `id`: its content, mode or link,
 * or deletes it when `id` does not have it (never a path left out of `id` for its size).
 * When `expect` is given, a path whose current state differs from its state in `expect`
 * (someone else changed it since) is not touched and is appended to `conflicts`. Writes
 * go through a temporary file renamed into place, in folders opened one by one without
 * following links, so nothing is written outside the workspace. Paths restored are
 * appended to `restored` (may be NULL). false + *err when a path could not be restored
 * (the others are still tried; *err names the first failure).
 */
bool checkpoint_restore_paths(struct checkpoints *cp, const char *id, const struct strvec *paths,
                              const char *expect, struct strvec *restored, struct strvec *conflicts,
                              char **err);

/*
 * A step's series of attempts: the checkpoint before the attempt that first changed each
 * path, every path its attempts changed, and the checkpoint after its latest one. The
 * engine notes each attempt and restores the series before the step's next attempt,
 * whatever brings it (a retry, a re-run, an edit, a stale input, a replan): a pass does not
 * end it, so a step that runs again starts from where it first started.
 */
void checkpoint_series_note(struct checkpoints *cp, const char *step_id, const char *before,
                            const char *after, const struct cp_changes *changes);
/*
 * Before a new attempt of a step with a series: restores the paths the series changed to
 * the checkpoint before the attempt that first changed them, leaving out (in `conflicts`)
 * those changed since its last attempt by someone else and those that changed while
 * another step's attempt ran too (checkpoint_take_step). The series is then empty: every
 * path is either as it was, or someone else's. Returns false when the step has no series
 * (then nothing was done) or on an error (*err).
 */
bool checkpoint_series_restore(struct checkpoints *cp, const char *step_id, struct strvec *restored,
                               struct strvec *conflicts, char **err);
/* Forgets a step's series and what is known about it (nothing is restored). */
void checkpoint_series_end(struct checkpoints *cp, const char *step_id);
/*
 * Whether `path` changed while step_id's attempt ran beside another step's (between their
 * checkpoints at the same time) that could have changed it too: the store cannot tell
 * which of them did, so it is not step_id's alone (step.changes marks it "shared"; a
 * restore leaves it).
 */
bool checkpoint_path_shared(struct checkpoints *cp, const char *step_id, const char *path);

/*
 * What step_id's attempt (between its two checkpoints) is about to change, told before
 * each tool call (attribution.c): the path its own file tool writes, or anything (a shell
 * command, an MCP call). A path that changes while several attempts run is the one step's
 * that could have changed it; the others' step.changes leave it out (checkpoint_diff_step).
 * When several could have, or none said so, it is shared (checkpoint_path_shared).
 */
void checkpoint_step_writes(struct checkpoints *cp, const char *step_id, const char *path);
void checkpoint_step_writes_any(struct checkpoints *cp, const char *step_id);

/*
 * Opens the store of the run in `run_dir` to read it only (checkpoint_diff): nothing is
 * created or changed, so it is safe beside the pevtui running the run, and the workspace
 * need not exist any more. NULL + *err (caller frees) when the store is missing or is no
 * store. Close with checkpoint_close; take nothing with it.
 */
struct checkpoints *checkpoint_open_read(const char *run_dir, char **err);

/*
 * Which of checkpoints `a` and `b` was taken first: *order -1 (a), 1 (b), 0 (the same
 * one, or the store cannot tell). false + *err for an unknown id.
 */
bool checkpoint_compare(struct checkpoints *cp, const char *a, const char *b, int *order,
                        char **err);

/* ---- a step a replan removed, and resume (series.c) ---- */

/* Whether step_id has a series with paths to restore. */
bool checkpoint_series_has(struct checkpoints *cp, const char *step_id);
/* The step left the plan (a replan replaced it) without passing: its series is restored
 * by the next checkpoint_series_restore_orphans, before whichever step runs next. */
void checkpoint_series_orphan(struct checkpoints *cp, const char *step_id);

/* What one series' restore did. */
struct cp_restored {
	char *step_id;
	struct strvec restored, conflicts;
	struct strvec bases; /* for each conflict, the checkpoint it would be restored to */
	struct strvec shared; /* left as they are: changed while another step's attempt ran
			       * too, so not the step's alone (not a conflict to ask about) */
};
void cp_restored_free(struct cp_restored *v, size_t n);
void cp_restored_release(struct cp_restored *r); /* its members, not r */
/*
 * Restores the series of every orphaned step whose attempt is not between its two
 * checkpoints, as checkpoint_series_restore does. Returns how many series were restored,
 * with what each did in *out (caller frees with cp_restored_free); *err (caller frees)
 * names the first path that could not be restored.
 */
size_t checkpoint_series_restore_orphans(struct checkpoints *cp, struct cp_restored **out,
                                         char **err);

/* For --resume, which rebuilds the series from the journal's step.changes events: */
/* empties step_id's series (a step.changes said it was restored before that attempt). */
void checkpoint_series_clear(struct checkpoints *cp, const char *step_id);
/*
 * Notes the attempt of step_id between checkpoints `before` and `after` (ids from the
 * journal), its paths read from the store (a step.changes lists at most 500). With
 * `overlapped` (another step's attempt ran in the same window) none of its paths is the
 * step's alone to restore. false + *err when the store lacks either checkpoint.
 */
bool checkpoint_series_note_ids(struct checkpoints *cp, const char *step_id, const char *before,
                                const char *after, bool overlapped, char **err);
/* ---- the rewind gate (conflict.c) ---- */

/*
 * checkpoint_series_restore with what the rewind gate needs: each conflict with the
 * checkpoint it would be restored to (out->bases). Returns false when the step has no
 * series (nothing done). out's members are the caller's either way (cp_restored_release).
 */
bool checkpoint_series_restore_step(struct checkpoints *cp, const char *step_id,
                                    struct cp_restored *out, char **err);
/*
 * Appends to `out` the unified diff from what the workspace holds at `path` now to what
 * checkpoint `base` holds there (what a restore would write), at most `max` bytes in all
 * (*cut set when it was cut). false + *err for an unknown id or an unreadable store.
 */
bool checkpoint_conflict_diff(struct checkpoints *cp, const char *base, const char *path,
                              size_t max, struct strbuf *out, bool *cut, char **err);
/*
 * Restores `path` to checkpoint `base` whatever it holds now (the operator chose restore
 * at the rewind gate); appended to `restored` when written. Steps between their two
 * checkpoints (other than step_id) see the restore as theirs: it is not theirs to restore.
 * A file that looks added but was there before the checkpoint is still never deleted.
 * false + *err when it was not restored.
 */
bool checkpoint_restore_over(struct checkpoints *cp, const char *step_id, const char *base,
                             const char *path, struct strvec *restored, char **err);
/* ---- rewind (store.c, meta.c, rewind_plan.c) ---- */

/*
 * A snapshot of the workspace for a preview: taken as checkpoint_take takes one, but its
 * objects stay in memory (nothing is written to the store) and the store's state does not
 * move. The id serves checkpoint_plan and checkpoint_diff on this store handle only.
 */
bool checkpoint_take_dry(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], char **err);

/*
 * From now on, checkpoints are taken by the rules checkpoint `id` was taken by (its
 * [checkpoints] exclude, max_file and max_total, recorded in it), with the patterns of
 * `also` (may be NULL) excluded too. A checkpoint from before rules were recorded leaves
 * the store's rules as they are. false + *err for an unknown id.
 */
bool checkpoint_use_rules(struct checkpoints *cp, const char *id, const struct strvec *also,
                          char **err);

/* The rules checkpoints are taken by now (exclude appended to `exclude`). */
void checkpoint_rules(struct checkpoints *cp, struct strvec *exclude, uint64_t *max_file,
                      uint64_t *max_total);

enum cp_act { CP_ACT_REMOVE, CP_ACT_PUT_BACK, CP_ACT_BRING_BACK, CP_ACT_KEEP, CP_ACT__COUNT };

struct cp_plan_ent {
	char *path;
	enum cp_act act;
	char *why;  /* CP_ACT_KEEP: why, as the end of "kept: PATH, …" */
	bool done;  /* checkpoint_plan_apply wrote it */
};

/* What a rewind does to each path: proved by the checkpoints, or kept. */
struct cp_plan {
	struct cp_plan_ent *v; /* in bytewise path order */
	size_t n, cap;
};

/*
 * The rewind from the workspace as checkpoint `now` holds it back to checkpoint `target`:
 * a file the target holds is put back (content, link, mode) or brought back; one it
 * proves absent (its walk saw everything there and left nothing out on the way) is
 * removed; and a path is kept, with why, when the target left it out (excluded, ignored,
 * over a limit, unreadable), when `now` left it out (what it holds now is in no
 * checkpoint), or when it was there before the target was taken. false + *err for an
 * unknown id.
 */
bool checkpoint_plan(struct checkpoints *cp, const char *target, const char *now,
                     struct cp_plan *out, char **err);
/* Carries the plan out (every entry but the kept ones); an entry found there before the
 * target meanwhile becomes kept. false + *err when a path could not be written (the
 * others are still tried). */
bool checkpoint_plan_apply(struct checkpoints *cp, const char *target, struct cp_plan *plan,
                           char **err);
void cp_plan_release(struct cp_plan *p);
/* "remove", "put back", "bring back", "keep". */
const char *cp_act_verb(enum cp_act a);
/* "1 removed, 1 put back, 2 kept" of the entries (only those done, with `done`; the kept
 * ones always); "nothing" when none. Caller frees. */
char *cp_plan_counts(const struct cp_plan *p, bool done);
/* How many entries act (not kept). */
size_t cp_plan_acts(const struct cp_plan *p);

/* The full id of the checkpoint `prefix` names (7 to 40 hex digits). false + *err when
 * none does, or more than one. */
bool checkpoint_resolve(struct checkpoints *cp, const char *prefix, char out[CP_ID_LEN + 1],
                        char **err);

/* ---- the store on the disk (place.c, prune.c) ---- */

/*
 * The store run_dir's checkpoints are in: what its `store` file names, or the run's own
 * checkpoints.git (*legacy set); NULL when it has neither. The store may be gone.
 */
char *checkpoint_run_store(const char *run_dir, bool *legacy);
/* The bytes a store takes on the disk (its blocks); 0 when it is gone. */
uint64_t checkpoint_store_bytes(const char *store_dir);
char *checkpoint_bytes_text(uint64_t bytes); /* "12 KB", "3.4 MB", "1.20 GB" */
/* The bytes every workspace's store takes ($XDG_DATA_HOME/pevtui/stores). */
uint64_t checkpoint_stores_bytes(void);
/* Whether run_dir's checkpoints can be read: its store is there and still names the run
 * (not pruned). false for a run that has no store. */
bool checkpoint_run_has_store(const char *run_dir);

/* What --prune (and [checkpoints] keep) drops. */
struct cp_prune_opts {
	double older_than_s; /* runs whose newest checkpoint is older than this lose them */
	bool dry_run;        /* say what would go, change nothing */
};
/*
 * Prunes every store below $XDG_DATA_HOME/pevtui/stores: each run whose newest checkpoint
 * is older than asked loses its checkpoints, the objects no other run's checkpoint needs
 * are dropped, and a store no run needs is removed. A store a running run holds is left
 * (said on `out`). Says on `out` what it did. false + *err when a store could not be
 * rewritten (nothing of it removed).
 */
bool checkpoint_prune(const struct cp_prune_opts *o, FILE *out, char **err);
/* [checkpoints] keep: checkpoint_prune with that age, silently, unless a prune ran in the
 * last day (the stores folder's .pruned file says when). */
void checkpoint_auto_prune(double keep_s);
/* "30d", "12h", "90m", "2w", "3600s" or seconds alone, into *sec; false when not one. */
bool checkpoint_parse_age(const char *s, double *sec);

#endif
