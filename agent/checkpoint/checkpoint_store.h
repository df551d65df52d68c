/*
 * checkpoint_store — the insides of the checkpoint store, shared by the files of
 * agent/checkpoint/ and by nothing else (the rest of pevtui sees checkpoint.h):
 *
 *   store.c          opening and closing the store, reading a checkpoint back, which of
 *                    two came first, resolving an id prefix
 *   take.c           taking a snapshot: the walk, the stat cache, the folder memo, the
 *                    commit; which paths changed while attempts overlapped
 *   diff.c           what changed between two checkpoints, with the unified diff
 *   restore_paths.c  restoring paths beneath the workspace without following links
 *   series.c         each step's series of attempts, restored before its next attempt
 *   conflict.c       what the rewind gate needs: a series' conflicts, their diffs, and a
 *                    restore over someone else's change
 *   attribution.c    whose change a path is when several steps' attempts ran at once
 *   pack.c           writing a checkpoint's new objects as one pack with its index
 *   place.c          where a workspace's store lives; the run folder's `store` file
 *   statcache.c      the stat cache kept in the store between runs
 *   prune.c          dropping old runs' checkpoints and what nothing else needs
 *   meta.c           what a checkpoint records beside its tree: its rules, the paths it
 *                    left out and why, each file's permission bits
 *   rewind_plan.c    what a rewind does to each path, proved by the checkpoints
 *
 * Every function here expects the store's mutex held unless it says otherwise.
 */
#ifndef PEVTUI_CHECKPOINT_STORE_H
#define PEVTUI_CHECKPOINT_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <git2.h>

#include "checkpoint.h"
#include "strbuf.h"
#include "strset.h"

struct pack;

/* ---- meta.c: recorded in each checkpoint's commit message */
#define CP_PERM_EXEC_TAG 0x10000 /* cp_meta_perm: the file is exec in the tree */
struct cp_left {
	char *path; /* a folder's ends in '/' */
	char *why;  /* "by exclude = *.tmp", "by .gitignore", "for its size (…)", … */
};
struct cp_perm {
	char *path;
	unsigned perm; /* st_mode & 07777 (| CP_PERM_EXEC_TAG while taking) */
};
struct cp_meta {
	bool has_rules; /* the rules below are the checkpoint's (a store from before: no) */
	struct strvec exclude;
	uint64_t max_file, max_total;
	bool left_known, left_cut; /* cut: more were left out than named */
	struct cp_left *left;      /* sorted by path once loaded */
	size_t n_left, cap_left;
	bool perms_known;
	unsigned perm_file, perm_exec; /* most files' bits; the others in perms */
	struct cp_perm *perms;         /* sorted by path once loaded */
	size_t n_perms, cap_perms;
};

/* A file's identity when it was last stored: same stat, same content (as git's index). */
struct cache_ent {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	mode_t mode;
	git_oid oid;
	bool moved; /* its path now belongs to the next walk's entry */
};

/* A folder's tree in the last snapshot, with its entries, so that an unchanged folder
 * reuses its tree instead of writing it again (a write of an object the store holds
 * already still costs a lookup and a "freshen" of its file). */
struct memo_ent {
	char *name;
	git_oid oid;
	git_filemode_t mode;
};

struct tree_memo {
	char *path;
	git_oid oid;
	struct memo_ent *v;
	size_t n;
};

struct series_path {
	char *path;
	char base[CP_ID_LEN + 1]; /* the checkpoint before the series first changed it */
};

struct series {
	char *step_id;
	char after[CP_ID_LEN + 1]; /* after its latest attempt */
	struct series_path *v;
	size_t n, cap;
	bool orphan; /* its step left the plan: restored before the next attempt of any step */
};

struct checkpoints {
	pthread_mutex_t lock;
	git_repository *repo; /* the store, bare: nothing of the workspace's applies to it */
	/* The store again, with the workspace as its work folder (in memory only), for the
	 * workspace's .gitignore files — and for nothing else: a .gitattributes a step wrote
	 * must not change how the verifier is shown its diff. */
	git_repository *ign;
	struct pack *pack; /* where a checkpoint's new objects are written */
	char *store_dir;   /* the store (shared by every run on the workspace) */
	char *run_ref;     /* refs/pevtui/runs/RUN: keeps the run's checkpoints from --prune */
	int lock_fd;       /* pevtui.lock held shared while the store is open (-1: none) */
	/* The disk was full (or the store unwritable for good): no more checkpoints this
	 * run; why, for each later attempt to take one. */
	char *off;
	bool ref_warned; /* said once that run_ref could not be written */
	/* Set while a preview's snapshot is taken: objects go to this in-memory backend of
	 * `odb`, never to the disk, and nothing of the store's state moves (take.c). */
	git_odb_backend *dry;
	bool dry_on;
	char *last_meta; /* `last`'s rules, left-out paths and modes as its message has them */
	struct strvec exclude; /* [checkpoints] exclude patterns */
	unsigned long seq;     /* checkpoints this process took: orders those of one tick */
	bool last_moved; /* refs/pevtui/last is behind `last` */
	char *ws_path;
	char *run_rel; /* the run folder's path in the workspace when it is inside */
	uint64_t max_file, max_total;
	struct cache_ent *cache; /* sorted by path */
	size_t n_cache;
	/* The coarse clock when the last snapshot began: a cached entry is trusted only when
	 * its ctime is older, since any later change to the file (content, mode, times) sets
	 * its ctime to the coarse clock at that moment, which is at least this. */
	struct timespec trust_before;
	struct tree_memo *trees; /* each folder's tree in the last snapshot, sorted by path */
	size_t n_trees;
	git_oid last;
	bool have_last;
	/* `trees` and the lists below describe `last` (it was taken by this process): the
	 * next snapshot can tell what changed, and whether anything did, without the store. */
	bool last_known;
	struct strvec last_skipped, last_excluded; /* what `last` left out, as it names it */
	size_t last_n_excluded;
	struct series *series;
	size_t n_series, cap_series;
	struct strvec active;    /* steps with an attempt between its two checkpoints */
	/* attribution.c: "STEP\nPATH" keys */
	struct strset shared;  /* changed while STEP ran beside another that could have too */
	struct strset foreign; /* changed in STEP's window by the one other step that could */
	struct strset writes;  /* STEP's attempt said its file tool writes PATH */
	struct strvec writes_any; /* steps whose attempt ran something that may write anywhere */
};



struct snap {
	git_commit *commit;
	git_tree *tree;
	struct strvec left_out;
	struct strvec excluded;
	size_t n_excluded;
	/* When its walk began, on the kernel's coarse clock (file times come from it); the
	 * commit's second for a store from before that field. */
	struct timespec taken;
	unsigned long seq; /* its count in the process that took it; 0: a store from before */
	struct cp_meta meta;
};

/* meta.c */
void cp_meta_release(struct cp_meta *m);
/* While taking: a path left out (why: the phrase after "left out of the checkpoint"). */
void cp_meta_left(struct cp_meta *m, const char *path, bool dir, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void cp_meta_perm(struct cp_meta *m, const char *path, unsigned perm, bool exec);
void cp_rules_from(struct cp_meta *m, const struct checkpoints *cp);
struct cJSON;
void cp_meta_to_json(const struct cp_meta *m, struct cJSON *o);
void cp_meta_from_json(struct cp_meta *m, const struct cJSON *o);
/* Why `path` (or a folder on its way) was left out of the checkpoint; NULL: it was not
 * (or the checkpoint does not say: !left_known). */
const char *cp_meta_left_why(const struct cp_meta *m, const char *path);
/* The permission bits of the file at `path` (its tree mode git_mode); 0: not known. */
unsigned cp_meta_perm_of(const struct cp_meta *m, const char *path, unsigned git_mode);

/* store.c */
void cp_git_setup(void); /* libgit2 started, with no git configuration of the machine's */
void cp_set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *cp_git_why(void); /* libgit2's last error, as a sentence */
void cp_lock(struct checkpoints *cp);
void cp_unlock(struct checkpoints *cp);
/* Reads checkpoint `id` back (commit, tree, what its message says). */
bool cp_snap_load(struct checkpoints *cp, const char *id, struct snap *s, char **err);
void cp_snap_release(struct snap *s);
bool cp_in_vec(const struct strvec *v, const char *s);
/* Whether the store was deleted under the run. */
bool cp_store_gone(const struct checkpoints *cp);
/* Makes the store again where it was (deleted under the run) and starts afresh. */
bool cp_store_reopen(struct checkpoints *cp, char **err);

/* place.c */
char *cp_stores_root(void); /* $XDG_DATA_HOME/pevtui/stores; NULL without a home */
/* The store of the workspace (not created). NULL + *err when it cannot be found. */
char *cp_store_for(const char *ws_path, char **err);
bool cp_make_store_dir(const char *dir, char **err);
/* Writes run_dir/store naming the store (synced, renamed into place). */
bool cp_name_run_store(const char *run_dir, const char *store, char **err);
char *cp_run_ref(const char *run_dir); /* "refs/pevtui/runs/RUN" */
/* STORE/pevtui.lock opened and flock'ed (`how`: LOCK_SH, LOCK_EX, | LOCK_NB); -1 + errno. */
int cp_store_lock(const char *dir, int how);

/* statcache.c */
void cp_statcache_load(struct checkpoints *cp); /* nothing when there is none */
bool cp_statcache_save(struct checkpoints *cp);

/* take.c */
void cp_memo_free(struct tree_memo *m, size_t n);
void cp_cache_free(struct cache_ent *c, size_t n);
bool cp_older(const struct timespec *a, const struct timespec *b); /* a before b */
/* A regular file beneath dfd read whole (no link followed), at most max + 1 bytes; NULL +
 * errno on failure. *st: its stat before reading; *changed when it moved meanwhile. */
char *cp_read_file_at(int dfd, const char *name, uint64_t max, size_t *len, struct stat *st,
                      bool *changed);
bool cp_path_excluded(const struct checkpoints *cp, const char *path);

/* diff.c */
void cp_diff_append(struct strbuf *sb, const char *text, size_t len, size_t max, bool *cut);

/* restore_paths.c */
int cp_open_parent(int root, const char *path, bool create, const char **name);
void cp_tree_state(git_tree *tree, const char *path, unsigned *mode, git_oid *oid);
bool cp_path_ok(const char *p);
/* Whether the entry at path beneath root last changed before `taken` (it was there when a
 * checkpoint taken then was: a file that checkpoint lacks is not deleted). */
bool cp_there_before(int root, const char *path, const struct timespec *taken);
bool cp_restore_locked(struct checkpoints *cp, const char *id, const struct strvec *paths,
                       const char *expect, struct strvec *restored, struct strvec *conflicts,
                       char **err);

/* series.c */
void cp_series_free(struct series *s);
struct series *cp_series_find(struct checkpoints *cp, const char *step_id);

/* attribution.c */
/* Each of `paths` changed while every active step but step_id (NULL: every one) ran: not
 * theirs alone to restore. */
void cp_shared_beside(struct checkpoints *cp, const char *step_id, const struct strvec *paths);
void cp_shared_one(struct checkpoints *cp, const char *step_id, const char *path);
bool cp_is_shared(const struct checkpoints *cp, const char *step_id, const char *path);
/* Changed in step_id's window by another step alone: not step_id's change at all. */
bool cp_is_foreign(const struct checkpoints *cp, const char *step_id, const char *path);
/* `paths` changed since the last checkpoint while the active steps ran: each is the one
 * step's that could have changed it, or shared by all of them. */
void cp_attribute(struct checkpoints *cp, const struct strvec *paths);
/* step_id's new attempt begins: what its last one said and was told is forgotten. */
void cp_attempt_begins(struct checkpoints *cp, const char *step_id);
/* ... and its series ends: what was shared with it too. */
void cp_step_forget(struct checkpoints *cp, const char *step_id);
bool cp_series_restore_locked(struct checkpoints *cp, struct series *s, struct strvec *restored,
                              struct strvec *conflicts, struct strvec *bases,
                              struct strvec *shared, char **err);

#endif
