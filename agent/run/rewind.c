/* rewind — a run's workspace back to a checkpoint on purpose: which checkpoint (from the
 * journal's step.changes), whether the run may be touched (runlock, the fold's pause),
 * what changes back, the undo checkpoint, the restore, and a journal notice. */
#include "config.h"

#include "rewind.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fold.h"
#include "journal.h"
#include "jsonx.h"
#include "runlock.h"
#include "textsan.h"
#include "xalloc.h"

/* What the journal says, folded once. */
struct scan {
	struct run_state rs;
	char *first_before; /* the run's first checkpoint: before its first attempt */
	const char *step;   /* the step asked for, or NULL */
	char *step_before;  /* before that step's first attempt */
	bool step_seen;     /* the step has a step.start or step.changes */
	struct strvec ids;  /* steps that ran, in order of their first attempt */
};

static void note_id(struct scan *sc, const char *id)
{
	for (size_t i = 0; i < sc->ids.n; i++)
		if (!strcmp(sc->ids.v[i], id))
			return;
	strvec_push(&sc->ids, id);
}

static bool visit(void *ctx, const struct event *ev)
{
	struct scan *sc = ctx;

	fold_apply(&sc->rs, ev);
	if ((ev->type == EV_STEP_START || ev->type == EV_STEP_CHANGES) && ev->step_id) {
		note_id(sc, ev->step_id);
		if (sc->step && !strcmp(sc->step, ev->step_id))
			sc->step_seen = true;
	}
	/* step.checkpoint names the "before" as the attempt starts: an attempt a stop cut off
	 * (no step.changes yet) is rewound too. */
	if (ev->type == EV_STEP_CHANGES || ev->type == EV_STEP_CHECKPOINT) {
		cJSON *o = cJSON_Parse(ev->json);
		const char *before = jsonx_str(o, "before");

		if (before && strlen(before) == CP_ID_LEN) {
			if (!sc->first_before)
				sc->first_before = xstrdup(before);
			if (sc->step && ev->step_id && !strcmp(sc->step, ev->step_id) &&
			    !sc->step_before)
				sc->step_before = xstrdup(before);
		}
		cJSON_Delete(o);
	}
	return true;
}

static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

/* Shown in a sentence: a path or id from a journal, cleaned for the terminal. */
static char *shown(const char *s)
{
	return textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);
}

/* The folder files are restored into: the run's own, or the one the operator names when
 * the journal puts it elsewhere (a journal alone never aims a restore outside its run). */
static char *pick_workspace(const char *run_dir, const char *journal_ws, const char *given,
                            char **err)
{
	char *own = xasprintf("%s/workspace", run_dir);
	struct stat st;

	if (!journal_ws) {
		*err = xasprintf("the journal does not say where the workspace is");
		free(own);
		return NULL;
	}
	if (given) {
		if (!same_dir(given, journal_ws)) {
			char *g = shown(given), *j = shown(journal_ws);
			*err =
			    xasprintf("the run's workspace is %s, not %s: its checkpoints are of "
			              "that folder",
			              j, g);
			free(g);
			free(j);
			free(own);
			return NULL;
		}
		free(own);
		return xstrdup(given);
	}
	if (!same_dir(journal_ws, own)) {
		char *j = shown(journal_ws);
		*err = xasprintf("the journal puts the workspace at %s, outside the run's folder; "
		                 "to rewind it there, say so: --workspace %s",
		                 j, j);
		free(j);
		free(own);
		return NULL;
	}
	if (lstat(own, &st) == 0 && S_ISLNK(st.st_mode)) {
		*err = xasprintf("%s is a symbolic link, not the run's own folder; to rewind the "
		                 "folder it points to, say so: --workspace DIR",
		                 own);
		free(own);
		return NULL;
	}
	return own;
}

/* A live run may be rewound only while it is paused and no step is between its
 * checkpoints; false + *err otherwise. *live: another pevtui holds the run. */
static bool may_touch(const struct scan *sc, const char *run_dir, const char *run_id, bool *live,
                      char **err)
{
	pid_t pid = runlock_holder(run_dir);

	*live = pid > 0;
	if (!*live)
		return true;
	if (!sc->rs.paused) {
		*err = xasprintf("run %s is live (pid %ld): pause it first (p in its cockpit), or "
		                 "wait until it ends; nothing was changed",
		                 run_id, (long)pid);
		return false;
	}
	for (size_t i = 0; i < sc->rs.n_steps; i++) {
		enum fstep_state s = sc->rs.steps[i].state;
		if (s == FS_RUNNING || s == FS_VERIFYING) {
			char *id = shown(sc->rs.steps[i].id);
			*err =
			    xasprintf("run %s is paused, but step %s is still running: wait until "
			              "it stops; nothing was changed",
			              run_id, id);
			free(id);
			return false;
		}
	}
	return true;
}

/* The last component of a folder path (trailing slashes ignored). Caller frees. */
static char *last_component(const char *path)
{
	char *p = xstrdup(path), *slash;
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	slash = strrchr(p, '/');
	if (slash && slash[1]) {
		char *r = xstrdup(slash + 1);
		free(p);
		return r;
	}
	return p;
}

static bool skip_all(void *ctx, const struct event *ev)
{
	(void)ctx;
	(void)ev;
	return true;
}

bool rewind_prepare(const char *run_dir, const char *to, const char *workspace, bool ours,
                    const struct strvec *exclude, struct rewind *rw, char **err)
{
	char *jpath = xasprintf("%s/journal.jsonl", run_dir), *id;
	struct journal_load_info info = {0};
	struct scan sc = {.step = to};
	struct stat st;
	bool ok = false, live = false;
	const char *from = NULL;

	memset(rw, 0, sizeof(*rw));
	fold_init(&sc.rs);
	rw->run_dir = xstrdup(run_dir);
	id = last_component(run_dir);
	rw->run_id = shown(id);
	free(id);
	if (stat(jpath, &st) != 0) {
		*err = xasprintf("no run %s: %s has no journal", rw->run_id, run_dir);
		goto out;
	}
	if (!journal_load(jpath, visit, &sc, &info, err))
		goto out;
	if (!ours && !may_touch(&sc, run_dir, rw->run_id, &live, err))
		goto out;
	rw->journal = !live && !ours;
	if (to && !sc.step_seen) {
		bool hex = strlen(to) >= 7 && strspn(to, "0123456789abcdef") == strlen(to);
		if (!hex) {
			char *t = shown(to), *ids = strvec_join(&sc.ids, ", ");
			char *names = shown(ids);
			*err = sc.ids.n
			           ? xasprintf("run %s has no step \"%s\" that ran (its steps: %s)",
			                       rw->run_id, t, names)
			           : xasprintf("run %s has no step \"%s\": no step of it ran",
			                       rw->run_id, t);
			free(t);
			free(ids);
			free(names);
			goto out;
		}
	}
	if (to && sc.step_seen && !sc.step_before) {
		char *t = shown(to);
		*err = xasprintf("step %s of run %s has no checkpoint to go back to (checkpoints "
		                 "were off, or it never got to run)",
		                 t, rw->run_id);
		free(t);
		goto out;
	}
	if (!to && !sc.first_before) {
		*err = xasprintf("run %s has no checkpoints to go back to (checkpoints were off, "
		                 "or no step ran)",
		                 rw->run_id);
		goto out;
	}
	rw->workspace = pick_workspace(run_dir, sc.rs.workspace, workspace, err);
	if (!rw->workspace)
		goto out;
	rw->cp = checkpoint_open(run_dir, rw->workspace, err);
	if (!rw->cp)
		goto out;
	checkpoint_set_exclude(rw->cp, exclude);
	if (!to) {
		from = sc.first_before;
		rw->what = xstrdup("to before the run");
	} else if (sc.step_before) {
		char *t = shown(to);
		from = sc.step_before;
		rw->what = xasprintf("to before step %s", t);
		free(t);
	}
	if (from) {
		memcpy(rw->target, from, CP_ID_LEN + 1);
	} else {
		if (!checkpoint_resolve(rw->cp, to, rw->target, err))
			goto out;
		rw->what = xstrdup("to the checkpoint given");
	}
	{
		struct strvec warnings = STRVEC_INIT;
		ok = checkpoint_take(rw->cp, rw->undo, &warnings, err) &&
		     checkpoint_diff(rw->cp, rw->target, rw->undo, 64 * 1024, &rw->changes, err);
		strvec_clear(&warnings);
	}
out:
	fold_release(&sc.rs);
	free(sc.first_before);
	free(sc.step_before);
	strvec_clear(&sc.ids);
	free(jpath);
	return ok;
}

cJSON *rewind_notice(const char *msg, const char *target, const char *undo,
                     const struct strvec *restored, const struct strvec *kept)
{
	cJSON *f = cJSON_CreateObject(), *a;

	cJSON_AddStringToObject(f, "level", "info");
	cJSON_AddStringToObject(f, "kind", "rewind");
	cJSON_AddStringToObject(f, "message", msg);
	cJSON_AddStringToObject(f, "checkpoint", target);
	cJSON_AddStringToObject(f, "undo", undo);
	a = cJSON_AddArrayToObject(f, "paths");
	for (size_t i = 0; i < restored->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(restored->v[i]));
	a = cJSON_AddArrayToObject(f, "kept");
	for (size_t i = 0; i < kept->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(kept->v[i]));
	return f;
}

/* The rewind in the run's journal, so replay, resume and the report see it. */
static void journal_it(struct rewind *rw, const struct strvec *restored, const struct strvec *kept)
{
	char *path = xasprintf("%s/journal.jsonl", rw->run_dir), *err = NULL;
	struct journal_load_info info = {0};
	struct journal *j;
	cJSON *f;
	struct event *ev;
	char *msg;

	if (!journal_load(path, skip_all, NULL, &info, &err) ||
	    (info.torn_tail && !journal_repair(path, &info, &err)) ||
	    !(j = journal_open(rw->run_dir, &err))) {
		fprintf(stderr, "pevtui: the rewind is not in the journal: %s\n", err);
		free(err);
		free(path);
		return;
	}
	msg = xasprintf("the workspace was rewound %s: %zu file%s restored; undo with pevtui "
	                "--rewind %s:%s",
	                rw->what, restored->n, restored->n == 1 ? "" : "s", rw->run_id, rw->undo);
	f = rewind_notice(msg, rw->target, rw->undo, restored, kept);
	ev = event_build(EV_NOTICE, info.last_seq + 1, f);
	journal_on_event(j, ev);
	if (journal_error(j))
		fprintf(stderr, "pevtui: the rewind is not in the journal: %s\n", journal_error(j));
	event_free(ev);
	journal_close(j);
	free(msg);
	free(path);
}

bool rewind_apply(struct rewind *rw, struct strvec *restored, struct strvec *kept, char **err)
{
	struct strvec paths = STRVEC_INIT;
	bool ok;

	for (size_t i = 0; i < rw->changes.n; i++)
		strvec_push(&paths, rw->changes.v[i].path);
	ok = checkpoint_restore_paths(rw->cp, rw->target, &paths, NULL, restored, kept, err);
	strvec_clear(&paths);
	if (rw->journal)
		journal_it(rw, restored, kept);
	return ok;
}

void rewind_release(struct rewind *rw)
{
	checkpoint_close(rw->cp);
	cp_changes_release(&rw->changes);
	free(rw->run_dir);
	free(rw->run_id);
	free(rw->workspace);
	free(rw->what);
	memset(rw, 0, sizeof(*rw));
}
