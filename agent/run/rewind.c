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
	/* Standing in the run's workspace names it: `cd proj && pevtui --rewind last`. */
	if (!same_dir(journal_ws, own) && same_dir(journal_ws, ".")) {
		free(own);
		return xstrdup(journal_ws);
	}
	if (!same_dir(journal_ws, own)) {
		char *j = shown(journal_ws);
		*err = xasprintf("the journal puts the workspace at %s, outside the run's folder; "
		                 "to rewind it there, run this in that folder or say so: "
		                 "--workspace %s",
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
	/* Today's exclude list for a store from before rules were recorded; with the
	 * target's rules below otherwise. */
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
		char now[CP_ID_LEN + 1];
		ok = checkpoint_use_rules(rw->cp, rw->target, exclude, err) &&
		     checkpoint_take_dry(rw->cp, now, err) &&
		     checkpoint_plan(rw->cp, rw->target, now, &rw->plan, err);
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
                     const struct cp_plan *plan)
{
	static const char *const kinds[] = {"removed", "put_back", "brought_back", "kept"};
	size_t count[CP_ACT__COUNT] = {0};
	cJSON *f = cJSON_CreateObject(), *a, *w, *c;

	cJSON_AddStringToObject(f, "level", "info");
	cJSON_AddStringToObject(f, "kind", "rewind");
	cJSON_AddStringToObject(f, "message", msg);
	cJSON_AddStringToObject(f, "checkpoint", target);
	cJSON_AddStringToObject(f, "undo", undo);
	a = cJSON_AddArrayToObject(f, "paths");
	for (size_t i = 0; i < plan->n; i++)
		if (plan->v[i].done) {
			cJSON_AddItemToArray(a, cJSON_CreateString(plan->v[i].path));
			count[plan->v[i].act]++;
		}
	a = cJSON_AddArrayToObject(f, "kept");
	w = cJSON_AddArrayToObject(f, "kept_why");
	for (size_t i = 0; i < plan->n; i++)
		if (plan->v[i].act == CP_ACT_KEEP) {
			cJSON_AddItemToArray(a, cJSON_CreateString(plan->v[i].path));
			cJSON_AddItemToArray(w, cJSON_CreateString(plan->v[i].why ? plan->v[i].why
			                                                          : ""));
			count[CP_ACT_KEEP]++;
		}
	c = cJSON_AddObjectToObject(f, "counts");
	for (int k = 0; k < CP_ACT__COUNT; k++)
		cJSON_AddNumberToObject(c, kinds[k], (double)count[k]);
	return f;
}

char *rewind_summary(const struct cp_plan *plan, size_t names)
{
	struct strbuf sb = STRBUF_INIT;
	char *counts = cp_plan_counts(plan, true);
	size_t named = 0, kept = 0;

	strbuf_init(&sb);
	strbuf_adds(&sb, counts);
	free(counts);
	for (size_t i = 0; i < plan->n; i++) {
		char *p;
		if (!plan->v[i].done)
			continue;
		if (named == names) {
			strbuf_adds(&sb, ", …");
			break;
		}
		p = shown(plan->v[i].path);
		strbuf_addf(&sb, "%s%s", named++ ? ", " : " (", p);
		free(p);
	}
	if (named)
		strbuf_adds(&sb, ")");
	named = 0;
	for (size_t i = 0; i < plan->n; i++) {
		const struct cp_plan_ent *e = &plan->v[i];
		if (e->act != CP_ACT_KEEP)
			continue;
		kept++;
		if (named < names) {
			char *p = shown(e->path);
			strbuf_addf(&sb, "%s%s, %s", named ? "; " : "; kept: ", p, e->why ? e->why : "");
			free(p);
			named++;
		}
	}
	if (kept > named)
		strbuf_addf(&sb, "; and %zu more kept", kept - named);
	return strbuf_detach(&sb);
}

/* The rewind in the run's journal, so replay, resume and the report see it. */
static void journal_it(struct rewind *rw)
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
	{
		char *sum = rewind_summary(&rw->plan, 5);
		msg = xasprintf("the workspace was rewound %s: %s; undo with pevtui --rewind %s:%s",
		                rw->what, sum, rw->run_id, rw->undo);
		free(sum);
	}
	f = rewind_notice(msg, rw->target, rw->undo, &rw->plan);
	ev = event_build(EV_NOTICE, info.last_seq + 1, f);
	journal_on_event(j, ev);
	if (journal_error(j))
		fprintf(stderr, "pevtui: the rewind is not in the journal: %s\n", journal_error(j));
	event_free(ev);
	journal_close(j);
	free(msg);
	free(path);
}

bool rewind_apply(struct rewind *rw, char **err)
{
	struct strvec warnings = STRVEC_INIT;
	bool ok;

	/* The undo first: nothing is written to the workspace without it. */
	ok = checkpoint_take(rw->cp, rw->undo, &warnings, err);
	strvec_clear(&warnings);
	if (!ok)
		return false;
	cp_plan_release(&rw->plan);
	if (!checkpoint_plan(rw->cp, rw->target, rw->undo, &rw->plan, err))
		return false;
	ok = checkpoint_plan_apply(rw->cp, rw->target, &rw->plan, err);
	if (rw->journal)
		journal_it(rw);
	return ok;
}

void rewind_release(struct rewind *rw)
{
	checkpoint_close(rw->cp);
	cp_plan_release(&rw->plan);
	free(rw->run_dir);
	free(rw->run_id);
	free(rw->workspace);
	free(rw->what);
	memset(rw, 0, sizeof(*rw));
}
