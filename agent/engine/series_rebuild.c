/* series_rebuild — each step's checkpoint series from the journal's step.start,
 * step.checkpoint, step.changes, step.end, step.state and plan.adopted events, and the
 * attempts a stop cut off, for --resume. */
#include "config.h"

#include "series_rebuild.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "checkpoint.h"
#include "events.h"
#include "jsonx.h"
#include "strbuf.h"
#include "xalloc.h"

/* A step whose attempt is between its two checkpoints, as far as the journal tells. */
struct live {
	char *id;
	bool overlapped; /* another step's attempt ran in the same window */
	char *before;    /* from its step.checkpoint, NULL before one */
	int attempt;
	bool cleared; /* its step.checkpoint's restored_series were applied */
};

struct series_rebuild {
	struct checkpoints *cp;
	struct live *live;
	size_t n_live, cap_live;
	struct series_cut *cuts; /* cut off by a stop, not settled yet */
	size_t n_cuts, cap_cuts;
	struct strvec passed; /* steps whose latest step.end is a pass */
	struct strvec plan;   /* the step ids of the plan adopted last */
	size_t missing;
	char *first_err;
};

struct series_rebuild *series_rebuild_new(struct checkpoints *cp)
{
	struct series_rebuild *sr = xcalloc(1, sizeof(*sr));

	sr->cp = cp;
	return sr;
}

static void cut_release(struct series_cut *c)
{
	free(c->step_id);
	free(c->before);
}

static void cuts_clear(struct series_rebuild *sr)
{
	for (size_t i = 0; i < sr->n_cuts; i++)
		cut_release(&sr->cuts[i]);
	sr->n_cuts = 0;
}

static void live_release(struct live *l)
{
	free(l->id);
	free(l->before);
}

void series_rebuild_free(struct series_rebuild *sr)
{
	if (!sr)
		return;
	for (size_t i = 0; i < sr->n_live; i++)
		live_release(&sr->live[i]);
	free(sr->live);
	cuts_clear(sr);
	free(sr->cuts);
	strvec_clear(&sr->passed);
	strvec_clear(&sr->plan);
	free(sr->first_err);
	free(sr);
}

size_t series_rebuild_missing(const struct series_rebuild *sr, const char **first_err)
{
	*first_err = sr->first_err;
	return sr->missing;
}

static struct live *live_find(struct series_rebuild *sr, const char *id)
{
	for (size_t i = 0; i < sr->n_live; i++)
		if (!strcmp(sr->live[i].id, id))
			return &sr->live[i];
	return NULL;
}

/* Ends id's window; *overlapped tells whether another attempt shared it. */
static void live_end(struct series_rebuild *sr, const char *id, bool *overlapped)
{
	struct live *l = live_find(sr, id);

	if (overlapped)
		*overlapped = l && l->overlapped;
	if (!l)
		return;
	live_release(l);
	*l = sr->live[--sr->n_live];
}

static void live_clear(struct series_rebuild *sr)
{
	for (size_t i = 0; i < sr->n_live; i++)
		live_release(&sr->live[i]);
	sr->n_live = 0;
}

/* The process ended (a stop: its windows were never closed): each attempt that had its
 * checkpoint before it journaled was cut off; the others had changed nothing yet. */
static void live_cut_all(struct series_rebuild *sr)
{
	for (size_t i = 0; i < sr->n_live; i++) {
		struct live *l = &sr->live[i];
		if (!l->before)
			continue;
		sr->cuts = xgrow(sr->cuts, &sr->cap_cuts, sr->n_cuts + 1, sizeof(*sr->cuts));
		sr->cuts[sr->n_cuts++] = (struct series_cut){
		    .step_id = xstrdup(l->id),
		    .attempt = l->attempt,
		    .before = xstrdup(l->before),
		    .overlapped = l->overlapped,
		};
	}
	live_clear(sr);
}

/* The cut attempt of `id` that started at `before` is settled (or superseded by a later
 * attempt, when before is NULL): forgotten. Returns whether it overlapped another. */
static bool cut_take(struct series_rebuild *sr, const char *id, const char *before)
{
	bool overlapped = false;

	for (size_t i = sr->n_cuts; i-- > 0;) {
		struct series_cut *c = &sr->cuts[i];
		if (strcmp(c->step_id, id) || (before && strcmp(c->before, before)))
			continue;
		overlapped = overlapped || c->overlapped;
		cut_release(c);
		memmove(c, c + 1, (sr->n_cuts - i - 1) * sizeof(*c));
		sr->n_cuts--;
	}
	return overlapped;
}

size_t series_rebuild_cut(struct series_rebuild *sr, const struct series_cut **v)
{
	live_cut_all(sr); /* the journal ends here: what is still open was cut off */
	*v = sr->cuts;
	return sr->n_cuts;
}

/* A new attempt of id: a window of its that never closed (its job was cancelled before
 * the first checkpoint) is replaced. */
static void live_start(struct series_rebuild *sr, const char *id)
{
	live_end(sr, id, NULL);
	for (size_t i = 0; i < sr->n_live; i++)
		sr->live[i].overlapped = true;
	sr->live = xgrow(sr->live, &sr->cap_live, sr->n_live + 1, sizeof(*sr->live));
	sr->live[sr->n_live] = (struct live){.id = xstrdup(id), .overlapped = sr->n_live > 0};
	sr->n_live++;
}

static void set_passed(struct series_rebuild *sr, const char *id, bool passed)
{
	for (size_t i = 0; i < sr->passed.n; i++) {
		if (!strcmp(sr->passed.v[i], id)) {
			if (!passed) {
				free(sr->passed.v[i]);
				sr->passed.v[i] = sr->passed.v[--sr->passed.n];
			}
			return;
		}
	}
	if (passed)
		strvec_push(&sr->passed, id);
}

static bool is_passed(const struct series_rebuild *sr, const char *id)
{
	for (size_t i = 0; i < sr->passed.n; i++)
		if (!strcmp(sr->passed.v[i], id))
			return true;
	return false;
}

/* The series restored before an attempt (its step.checkpoint or step.changes says which)
 * are empty from there on. */
static void clear_restored(struct series_rebuild *sr, const cJSON *o)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "restored_series"))
	{
		if (cJSON_IsString(it))
			checkpoint_series_clear(sr->cp, it->valuestring);
	}
}

/* The checkpoint before the attempt, taken before its tools ran. */
static void on_checkpoint(struct series_rebuild *sr, const cJSON *o, const char *id)
{
	const char *before = jsonx_str(o, "before");
	double attempt = 0;
	struct live *l;

	if (!live_find(sr, id))
		live_start(sr, id); /* a journal without its step.start: the window opens here */
	l = live_find(sr, id);
	clear_restored(sr, o);
	l->cleared = true;
	free(l->before);
	l->before = before && *before ? xstrdup(before) : NULL;
	jsonx_num(o, "attempt", &attempt);
	l->attempt = attempt >= 1 && attempt <= 1e6 ? (int)attempt : 0;
}

static void on_changes(struct series_rebuild *sr, const cJSON *o, const char *id)
{
	const char *before = jsonx_str(o, "before"), *after = jsonx_str(o, "after");
	const struct live *l = live_find(sr, id);
	bool overlapped = false, cut = false;
	double shared = 0;
	char *err = NULL;

	/* Its step.checkpoint cleared them already; later notes must not be undone. */
	if (!l || !l->cleared)
		clear_restored(sr, o);
	jsonx_bool(o, "cut", &cut);
	if (l) {
		live_end(sr, id, &overlapped);
	} else if (cut) {
		/* Settled on a resume after its process was gone: the window closed with it. */
		overlapped = cut_take(sr, id, before);
		overlapped = overlapped || (jsonx_num(o, "shared", &shared) && shared > 0);
	}
	if (!before || !after)
		return;
	if (!checkpoint_series_note_ids(sr->cp, id, before, after, overlapped, &err)) {
		sr->missing++;
		if (!sr->first_err)
			sr->first_err = err;
		else
			free(err);
	}
}

/* The steps of the adopted plan; those that left it before they passed are orphans. No
 * attempt runs across an adoption (a replan waits for the steps in flight). */
static void on_adopted(struct series_rebuild *sr, const cJSON *o)
{
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan"), *st;
	struct strvec ids = STRVEC_INIT;

	cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(plan, "steps"))
	{
		const char *sid = jsonx_str(st, "step_id");
		if (sid)
			strvec_push(&ids, sid);
	}
	for (size_t i = 0; i < sr->plan.n; i++) {
		bool stays = false;
		for (size_t k = 0; k < ids.n && !stays; k++)
			stays = !strcmp(ids.v[k], sr->plan.v[i]);
		if (!stays && !is_passed(sr, sr->plan.v[i]))
			checkpoint_series_orphan(sr->cp, sr->plan.v[i]);
	}
	strvec_clear(&sr->plan);
	sr->plan = ids;
	live_clear(sr);
}

void series_rebuild_event(struct series_rebuild *sr, const struct event *ev)
{
	cJSON *o;
	const char *id = ev->step_id;

	if (ev->type == EV_RUN_RESUME) {
		live_cut_all(sr); /* no attempt outlives its process */
		return;
	}
	if (ev->type == EV_RUN_END) {
		live_clear(sr); /* a run ends once its attempts are back: none was cut */
		cuts_clear(sr); /* nor is one cut before it settled after it */
		return;
	}
	if (ev->type != EV_STEP_START && ev->type != EV_STEP_CHANGES && ev->type != EV_STEP_END &&
	    ev->type != EV_STEP_STATE && ev->type != EV_PLAN_ADOPTED &&
	    ev->type != EV_STEP_CHECKPOINT)
		return;
	o = cJSON_Parse(ev->json);
	if (!o)
		return;
	switch (ev->type) {
	case EV_STEP_START:
		if (id) {
			/* A later attempt: the process that started it went on without the cut
			 * one's changes (the store lacked its checkpoint). */
			cut_take(sr, id, NULL);
			live_start(sr, id);
			set_passed(sr, id, false);
		}
		break;
	case EV_STEP_CHECKPOINT:
		if (id)
			on_checkpoint(sr, o, id);
		break;
	case EV_STEP_CHANGES:
		if (id)
			on_changes(sr, o, id);
		break;
	case EV_STEP_END:
		if (id) {
			const char *status = jsonx_str(o, "status");
			live_end(sr, id, NULL);
			set_passed(sr, id, status && !strcmp(status, "passed"));
		}
		break;
	case EV_STEP_STATE:
		if (id) {
			const char *state = jsonx_str(o, "state");
			/* A stale step's job may still be between its checkpoints: its window
			 * stays open until its step.changes. */
			if (state && !strcmp(state, "stale"))
				set_passed(sr, id, false);
		}
		break;
	case EV_PLAN_ADOPTED:
		on_adopted(sr, o);
		cuts_clear(sr);
		break;
	default: break;
	}
	cJSON_Delete(o);
}
