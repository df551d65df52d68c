/* rewind_plan — what a rewind does to each path, decided from what the two checkpoints
 * prove: put back or brought back from the target, removed only when the target's walk
 * proves it absent, kept (and said why) otherwise. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

void cp_plan_release(struct cp_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].path);
		free(p->v[i].why);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const char *cp_act_verb(enum cp_act a)
{
	static const char *const verbs[] = {"remove", "put back", "bring back", "keep"};

	return a < CP_ACT__COUNT ? verbs[a] : "?";
}

static void add(struct cp_plan *p, const char *path, enum cp_act act, char *why)
{
	struct cp_plan_ent *e;

	p->v = xgrow(p->v, &p->cap, p->n + 1, sizeof(*p->v));
	e = &p->v[p->n++];
	e->path = xstrdup(path);
	e->act = act;
	e->why = why;
	e->done = false;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cp_plan_ent *)a)->path, ((const struct cp_plan_ent *)b)->path);
}

/* A path the target lacks: removed only when the target proves it absent. */
static void judge_added(struct checkpoints *cp, int root, const struct snap *t, const char *path,
                        struct cp_plan *out)
{
	const char *why = cp_meta_left_why(&t->meta, path);

	if (why)
		add(out, path, CP_ACT_KEEP, xasprintf("left out of the checkpoint %s", why));
	else if (cp_path_excluded(cp, path))
		add(out, path, CP_ACT_KEEP, xstrdup("left out of checkpoints by exclude"));
	else if (t->meta.left_cut)
		add(out, path, CP_ACT_KEEP,
		    xstrdup("not proved absent: the checkpoint left out more paths than it names"));
	else if (cp_there_before(root, path, &t->taken))
		add(out, path, CP_ACT_KEEP, xstrdup("there before the checkpoint was taken"));
	else
		add(out, path, CP_ACT_REMOVE, NULL);
}

bool checkpoint_plan(struct checkpoints *cp, const char *target, const char *now,
                     struct cp_plan *out, char **err)
{
	struct cp_changes ch;
	struct snap t, n;
	int root;

	memset(out, 0, sizeof(*out));
	if (!checkpoint_diff(cp, target, now, 0, &ch, err))
		return false;
	cp_lock(cp);
	if (!cp_snap_load(cp, target, &t, err)) {
		cp_unlock(cp);
		cp_changes_release(&ch);
		return false;
	}
	if (!cp_snap_load(cp, now, &n, err)) {
		cp_snap_release(&t);
		cp_unlock(cp);
		cp_changes_release(&ch);
		return false;
	}
	root = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < ch.n; i++) {
		const char *path = ch.v[i].path, *why;
		switch (ch.v[i].change) {
		case CP_ADDED:
			judge_added(cp, root, &t, path, out);
			break;
		case CP_DELETED:
			/* Absent from `now` because it is left out of it: what it holds now is in
			 * no checkpoint, so writing over it could not be undone. */
			why = cp_meta_left_why(&n.meta, path);
			if (why)
				break; /* named below, with the rest `now` left out */
			add(out, path, CP_ACT_BRING_BACK, NULL);
			break;
		case CP_MODIFIED:
			add(out, path, CP_ACT_PUT_BACK, NULL);
			break;
		}
	}
	/* What the workspace holds now that no checkpoint of it holds: kept, and named. */
	for (size_t i = 0; i < n.meta.n_left; i++)
		add(out, n.meta.left[i].path, CP_ACT_KEEP,
		    xasprintf("left out of the checkpoint %s", n.meta.left[i].why));
	for (size_t i = 0; i < n.left_out.n; i++)
		if (!cp_meta_left_why(&n.meta, n.left_out.v[i]))
			add(out, n.left_out.v[i], CP_ACT_KEEP,
			    xstrdup("left out of the checkpoint for its size"));
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), ent_cmp);
	if (root >= 0)
		close(root);
	cp_snap_release(&t);
	cp_snap_release(&n);
	cp_unlock(cp);
	cp_changes_release(&ch);
	return true;
}

bool checkpoint_plan_apply(struct checkpoints *cp, const char *target, struct cp_plan *plan,
                           char **err)
{
	struct strvec paths = STRVEC_INIT, restored = STRVEC_INIT, kept = STRVEC_INIT;
	bool ok;

	for (size_t i = 0; i < plan->n; i++)
		if (plan->v[i].act != CP_ACT_KEEP)
			strvec_push(&paths, plan->v[i].path);
	ok = checkpoint_restore_paths(cp, target, &paths, NULL, &restored, &kept, err);
	for (size_t i = 0; i < plan->n; i++) {
		struct cp_plan_ent *e = &plan->v[i];
		if (e->act == CP_ACT_KEEP)
			continue;
		if (cp_in_vec(&restored, e->path)) {
			e->done = true;
		} else if (cp_in_vec(&kept, e->path)) {
			e->act = CP_ACT_KEEP;
			free(e->why);
			e->why = xstrdup("there before the checkpoint was taken");
		}
	}
	strvec_clear(&paths);
	strvec_clear(&restored);
	strvec_clear(&kept);
	return ok;
}

size_t cp_plan_acts(const struct cp_plan *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->v[i].act != CP_ACT_KEEP;
	return n;
}

char *cp_plan_counts(const struct cp_plan *p, bool done)
{
	static const char *const past[] = {"removed", "put back", "brought back", "kept"};
	size_t count[CP_ACT__COUNT] = {0};
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < p->n; i++)
		if (!done || p->v[i].done || p->v[i].act == CP_ACT_KEEP)
			count[p->v[i].act]++;
	strbuf_init(&sb);
	for (int a = 0; a < CP_ACT__COUNT; a++)
		if (count[a])
			strbuf_addf(&sb, "%s%zu %s", sb.len ? ", " : "", count[a], past[a]);
	if (!sb.len)
		strbuf_adds(&sb, "nothing");
	return strbuf_detach(&sb);
}
