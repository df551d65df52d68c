/* series — each step's series of attempts (the checkpoint before the attempt that first
 * changed each path), restored before the step's next attempt; steps a replan removed;
 * the series rebuilt for --resume. */
#include "config.h"
#include "checkpoint_store.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void cp_series_free(struct series *s)
{
	free(s->step_id);
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
}

struct series *cp_series_find(struct checkpoints *cp, const char *step_id)
{
	for (size_t i = 0; i < cp->n_series; i++)
		if (!strcmp(cp->series[i].step_id, step_id))
			return &cp->series[i];
	return NULL;
}

static struct series *series_get(struct checkpoints *cp, const char *step_id)
{
	struct series *s = cp_series_find(cp, step_id);

	if (!s) {
		cp->series =
		    xgrow(cp->series, &cp->cap_series, cp->n_series + 1, sizeof(*cp->series));
		s = &cp->series[cp->n_series++];
		memset(s, 0, sizeof(*s));
		s->step_id = xstrdup(step_id);
	}
	return s;
}

/* Adds paths to step's series (a path known already keeps its older base). */
static void series_add(struct checkpoints *cp, const char *step_id, const char *before,
                       const char *after, const struct strvec *paths)
{
	struct series *s = series_get(cp, step_id);

	memcpy(s->after, after, CP_ID_LEN + 1);
	for (size_t i = 0; i < paths->n; i++) {
		bool known = false;
		for (size_t k = 0; k < s->n && !known; k++)
			known = !strcmp(s->v[k].path, paths->v[i]);
		if (known)
			continue;
		s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
		s->v[s->n].path = xstrdup(paths->v[i]);
		memcpy(s->v[s->n].base, before, CP_ID_LEN + 1);
		s->n++;
	}
}

void checkpoint_series_note(struct checkpoints *cp, const char *step_id, const char *before,
                            const char *after, const struct cp_changes *changes)
{
	struct strvec paths = STRVEC_INIT;

	if (!before || !after || strlen(before) != CP_ID_LEN || strlen(after) != CP_ID_LEN)
		return;
	for (size_t i = 0; changes && i < changes->n; i++)
		strvec_push(&paths, changes->v[i].path);
	cp_lock(cp);
	series_add(cp, step_id, before, after, &paths);
	cp_unlock(cp);
	strvec_clear(&paths);
}

/* Restores every path of series s to its base and empties the series: a path restored,
 * already as it was, or left to whoever changed it since (`conflicts`) is no longer the
 * series' — the next attempt's changes start it again from the checkpoint before that
 * attempt, which holds the same content. */
bool cp_series_restore_locked(struct checkpoints *cp, struct series *s, struct strvec *restored,
                              struct strvec *conflicts, struct strvec *bases, struct strvec *shared,
                              char **err)
{
	bool ok = true;

	for (size_t i = 0; i < s->n; i++) {
		struct strvec one = STRVEC_INIT, conf = STRVEC_INIT, done = STRVEC_INIT;
		bool beside = cp_is_shared(cp, s->step_id, s->v[i].path);

		strvec_push(&one, s->v[i].path);
		if (beside && shared)
			strvec_push(shared, s->v[i].path); /* another step may have made it */
		else if (beside)
			strvec_push(&conf, s->v[i].path);
		else if (!cp_restore_locked(cp, s->v[i].base, &one, s->after, &done, &conf, err))
			ok = false;
		/* A step running beside this one will see the restore as its own change: the
		 * path is not its to restore later (it would write back what was undone). */
		for (size_t d = 0; restored && d < done.n; d++)
			strvec_push(restored, done.v[d]);
		cp_shared_beside(cp, s->step_id, &done);
		/* Someone else changed it since: it is theirs now, not the series'. */
		if (conf.n && conflicts)
			strvec_push(conflicts, s->v[i].path);
		if (conf.n && bases)
			strvec_push(bases, s->v[i].base);
		strvec_clear(&done);
		strvec_clear(&one);
		strvec_clear(&conf);
		free(s->v[i].path);
	}
	s->n = 0;
	s->orphan = false;
	return ok;
}

bool checkpoint_series_restore(struct checkpoints *cp, const char *step_id, struct strvec *restored,
                               struct strvec *conflicts, char **err)
{
	struct series *s;
	bool ok;

	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	if (!s || !s->n) {
		cp_unlock(cp);
		return false;
	}
	ok = cp_series_restore_locked(cp, s, restored, conflicts, NULL, NULL, err);
	cp_unlock(cp);
	return ok;
}

void checkpoint_series_end(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	if (s) {
		cp_series_free(s);
		*s = cp->series[--cp->n_series];
	}
	cp_step_forget(cp, step_id);
	cp_unlock(cp);
}

/* ------------------------------------------------- series: replaced steps, resume */

bool checkpoint_series_has(struct checkpoints *cp, const char *step_id)
{
	struct series *s;
	bool has;

	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	has = s && s->n;
	cp_unlock(cp);
	return has;
}

void checkpoint_series_orphan(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	if (s && s->n)
		s->orphan = true;
	cp_unlock(cp);
}

void cp_restored_release(struct cp_restored *r)
{
	free(r->step_id);
	strvec_clear(&r->restored);
	strvec_clear(&r->conflicts);
	strvec_clear(&r->bases);
	strvec_clear(&r->shared);
	memset(r, 0, sizeof(*r));
}

void cp_restored_free(struct cp_restored *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cp_restored_release(&v[i]);
	free(v);
}

size_t checkpoint_series_restore_orphans(struct checkpoints *cp, struct cp_restored **out,
                                         char **err)
{
	size_t n = 0, cap = 0;

	*out = NULL;
	cp_lock(cp);
	for (size_t i = 0; i < cp->n_series; i++) {
		struct series *s = &cp->series[i];
		struct cp_restored *r;

		if (!s->orphan || !s->n || cp_in_vec(&cp->active, s->step_id))
			continue;
		*out = xgrow(*out, &cap, n + 1, sizeof(**out));
		r = &(*out)[n++];
		memset(r, 0, sizeof(*r));
		r->step_id = xstrdup(s->step_id);
		cp_series_restore_locked(cp, s, &r->restored, &r->conflicts, &r->bases, &r->shared,
		                         err);
	}
	cp_unlock(cp);
	return n;
}

void checkpoint_series_clear(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	if (s) {
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i].path);
		s->n = 0;
		s->orphan = false;
	}
	cp_unlock(cp);
}

bool checkpoint_series_note_ids(struct checkpoints *cp, const char *step_id, const char *before,
                                const char *after, bool overlapped, char **err)
{
	struct snap a, b;
	git_diff *diff = NULL;
	struct strvec paths = STRVEC_INIT;
	bool ok = false;

	cp_lock(cp);
	if (!cp_snap_load(cp, before, &a, err)) {
		cp_unlock(cp);
		return false;
	}
	if (!cp_snap_load(cp, after, &b, err)) {
		cp_snap_release(&a);
		cp_unlock(cp);
		return false;
	}
	if (git_diff_tree_to_tree(&diff, cp->repo, a.tree, b.tree, NULL) < 0) {
		cp_set_err(err, "checkpoints: cannot compare %.12s and %.12s: %s", before, after,
		           cp_git_why());
	} else {
		for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
			const git_diff_delta *d = git_diff_get_delta(diff, i);
			const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;
			if (!cp_in_vec(&a.left_out, p) && !cp_in_vec(&b.left_out, p))
				strvec_push(&paths, p);
		}
		series_add(cp, step_id, before, after, &paths);
		/* Beside another step's attempt: which of them made a path is not known. */
		for (size_t i = 0; overlapped && i < paths.n; i++)
			cp_shared_one(cp, step_id, paths.v[i]);
		ok = true;
	}
	git_diff_free(diff);
	cp_snap_release(&a);
	cp_snap_release(&b);
	cp_unlock(cp);
	strvec_clear(&paths);
	return ok;
}
