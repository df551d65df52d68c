/* crash_cut — an attempt the process's death cut off between its two checkpoints: the
 * journal names the checkpoint before it (step.checkpoint) and nothing after. --resume
 * takes a checkpoint of the workspace as the stop left it, puts what changed since the
 * "before" in the step's series (restored before its next attempt, like a retry's) and
 * journals it as a step.changes marked `cut`, for the report, --diff and the next resume. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "checkpoint.h"
#include "series_rebuild.h"
#include "xalloc.h"

void crashcut_collect(struct pev *e, struct series_rebuild *sr)
{
	const struct series_cut *v;
	size_t n = series_rebuild_cut(sr, &v);

	crashcut_release(e);
	if (!n)
		return;
	e->cut = xcalloc(n, sizeof(*e->cut));
	for (size_t i = 0; i < n; i++) {
		e->cut[i].step_id = xstrdup(v[i].step_id);
		e->cut[i].attempt = v[i].attempt;
		e->cut[i].before = xstrdup(v[i].before);
		e->cut[i].overlapped = v[i].overlapped;
	}
	e->n_cut = n;
}

void crashcut_release(struct pev *e)
{
	for (size_t i = 0; i < e->n_cut; i++) {
		free(e->cut[i].step_id);
		free(e->cut[i].before);
	}
	free(e->cut);
	e->cut = NULL;
	e->n_cut = 0;
}

static void notice(struct pev *e, const char *level, const char *step_id, const char *msg)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "level", level);
	cJSON_AddStringToObject(f, "kind", "checkpoint");
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddStringToObject(f, "message", msg);
	bus_publish(e->bus, EV_NOTICE, f);
}

/* The checkpoint's warnings (a file left out for its size), each told once a run. */
static void tell_warnings(struct pev *e, const struct strvec *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (engine_checkpoint_warning_new(e, w->v[i]))
			notice(e, "warn", NULL, w->v[i]);
}

/* One cut attempt: what changed from its "before" to `now`, noted and journaled. */
static void settle_one(struct pev *e, struct cut_attempt *c, const char *now)
{
	struct cp_changes ch = {0};
	char *err = NULL;
	cJSON *f;

	/* The diff's text is not needed: the paths and their counts are. */
	if (!checkpoint_diff(e->checkpoints, c->before, now, 0, &ch, &err) ||
	    !checkpoint_series_note_ids(e->checkpoints, c->step_id, c->before, now, c->overlapped,
	                                &err)) {
		char *msg =
		    xasprintf("step %s: attempt %d was cut off by the stop, and the checkpoint "
		              "before it (%.12s) cannot be read from the store (%s): what "
		              "it changed stays in the workspace",
		              c->step_id, c->attempt, c->before, err ? err : "unknown error");
		notice(e, "warn", c->step_id, msg);
		free(msg);
		free(err);
		cp_changes_release(&ch);
		return;
	}
	/* Noted with `overlapped`, every path of an attempt that ran beside another step's
	 * is shared: which of them changed it is not known, so it is never restored as this
	 * step's alone (worker_changes_fields marks it). */
	f = worker_changes_fields(e, c->step_id, c->attempt, c->before, now, NULL, &ch);
	cJSON_AddBoolToObject(f, "cut", true);
	bus_publish(e->bus, EV_STEP_CHANGES, f);
	cp_changes_release(&ch);
	pthread_mutex_lock(&e->acct);
	c->settled = true;
	pthread_mutex_unlock(&e->acct);
}

void crashcut_settle(struct pev *e)
{
	struct strvec warnings = STRVEC_INIT;
	char now[CP_ID_LEN + 1];
	char *err = NULL, *msg;

	if (!e->n_cut)
		return;
	if (!e->checkpoints) {
		msg = xasprintf("%zu attempt%s cut off by the stop changed files that are not "
		                "restored: the checkpoints are %s",
		                e->n_cut, e->n_cut == 1 ? "" : "s",
		                e->checkpoint_err ? "not available" : "off");
		notice(e, "warn", NULL, msg);
		free(msg);
		return;
	}
	if (!checkpoint_take(e->checkpoints, now, &warnings, &err)) {
		msg =
		    xasprintf("cannot take a checkpoint of the workspace as the stop left it (%s): "
		              "what %zu attempt%s cut off by the stop changed stays in the "
		              "workspace",
		              err ? err : "unknown error", e->n_cut, e->n_cut == 1 ? "" : "s");
		notice(e, "error", NULL, msg);
		free(msg);
		free(err);
		tell_warnings(e, &warnings);
		strvec_clear(&warnings);
		return;
	}
	tell_warnings(e, &warnings);
	strvec_clear(&warnings);
	for (size_t i = 0; i < e->n_cut; i++)
		settle_one(e, &e->cut[i], now);
}

bool crashcut_start(struct pev *e)
{
	if (!e->n_cut)
		return false;
	pool_submit(e, job_new(e, JOB_SETTLE));
	return true;
}

int crashcut_take_told(struct pev *e, const char *step_id)
{
	int attempt = 0;

	pthread_mutex_lock(&e->acct);
	for (size_t i = 0; i < e->n_cut && !attempt; i++) {
		struct cut_attempt *c = &e->cut[i];
		if (c->settled && !c->told && !strcmp(c->step_id, step_id)) {
			c->told = true;
			attempt = c->attempt;
		}
	}
	pthread_mutex_unlock(&e->acct);
	return attempt;
}
