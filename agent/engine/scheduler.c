/* scheduler — step states, ready steps, dispatch up to --parallel, invalidation like a
 * build tool, and what a finished step job brings back. Engine thread only. */
#include "config.h"

#include "engine.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "jsonx.h"
#include "xalloc.h"

void sched_release_state(struct step_state *s)
{
	strvec_clear(&s->critiques);
	free(s->result_json);
	free(s->output_json);
	memset(s, 0, sizeof(*s));
}

/* Caches each step's dependency indexes: "is it ready?" is asked for every step after
 * every message, and a name lookup per dependency made that quadratic. */
void sched_index_plan(struct pev *e)
{
	size_t total = 0, k = 0;

	plan_ids_free(e->ids);
	e->ids = plan_ids_new(e->plan);
	for (size_t i = 0; i < e->plan->n_steps; i++)
		total += e->plan->steps[i].deps.n;
	free(e->dep_idx);
	free(e->dep_off);
	e->dep_idx = xcalloc(total ? total : 1, sizeof(*e->dep_idx));
	e->dep_off = xcalloc(e->plan->n_steps + 1, sizeof(*e->dep_off));
	for (size_t i = 0; i < e->plan->n_steps; i++) {
		e->dep_off[i] = k;
		for (size_t d = 0; d < e->plan->steps[i].deps.n; d++)
			e->dep_idx[k++] = plan_ids_find(e->ids, e->plan->steps[i].deps.v[d]);
	}
	e->dep_off[e->plan->n_steps] = k;
}

int sched_find(struct pev *e, const char *id)
{
	if (!e->plan)
		return -1;
	return e->ids ? plan_ids_find(e->ids, id) : plan_find(e->plan, id);
}

void sched_set_state(struct pev *e, size_t i, enum fstep_state s, const char *cause,
		     const char *fmt, ...)
{
	cJSON *f = cJSON_CreateObject();
	va_list ap;
	char *reason;

	e->st[i].status = s;
	va_start(ap, fmt);
	reason = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(f, "step_id", e->plan->steps[i].id);
	cJSON_AddStringToObject(f, "state", fold_state_name(s));
	cJSON_AddStringToObject(f, "reason", reason);
	if (cause)
		cJSON_AddStringToObject(f, "cause", cause);
	if (e->cmd_seq)
		cJSON_AddNumberToObject(f, "by_seq", (double)e->cmd_seq);
	free(reason);
	bus_publish(e->bus, EV_STEP_STATE, f);
}

void sched_publish_end(struct pev *e, size_t i, bool reused)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", e->plan->steps[i].id);
	cJSON_AddStringToObject(f, "status", fold_state_name(e->st[i].status));
	cJSON_AddNumberToObject(f, "attempts", e->st[i].attempts);
	cJSON_AddBoolToObject(f, "reused", reused);
	bus_publish(e->bus, EV_STEP_END, f);
}

void sched_fail_accept(struct pev *e, size_t i, const char *why)
{
	bus_notice(e->bus, "warn", e->plan->steps[i].id,
		   "step %s is fail-accepted: %s; its last result is kept and marked",
		   e->plan->steps[i].id, why);
	e->st[i].status = FS_FAIL_ACCEPTED;
	sched_publish_end(e, i, false);
}

/* ------------------------------------------------------------------ reuse */

char *sched_reuse_key(struct pev *e, const struct plan *p, size_t i)
{
	struct plan_step def = p->steps[i];
	struct strbuf sb = STRBUF_INIT;

	/* The id does not matter for reuse: the definition and the inputs do. */
	def.id = NULL;
	strbuf_init(&sb);
	plan_step_add_json(&sb, &def, false);
	for (size_t d = 0; d < p->steps[i].deps.n; d++) {
		int di = p == e->plan ? e->dep_idx[e->dep_off[i] + d]
				      : plan_find(p, p->steps[i].deps.v[d]);
		const char *out = di >= 0 ? e->st[di].output_json : NULL;

		strbuf_addc(&sb, '\n');
		strbuf_adds(&sb, out ? out : "-");
	}
	return strbuf_detach(&sb);
}

/*
 * Computing the key again when a job comes back cost as much as the rest of a step's
 * bookkeeping, and it is the key the job started with unless something it reads changed
 * meanwhile: the step's definition or the outputs of its dependencies. An edit or re-run
 * of the step, or of any step it depends on directly or not, bumps its generation
 * (sched_invalidate: a dependency cannot be run again while the step runs, since it
 * starts only when they are settled); an adoption changes the revision (and happens only
 * with no step job out). Anything else is computed again.
 */
char *sched_job_reuse_key(struct pev *e, const struct job *j, size_t i)
{
	if (j->reuse_key && j->gen == e->st[i].gen && j->revision == e->revision)
		return xstrdup(j->reuse_key);
	return sched_reuse_key(e, e->plan, i);
}

/* Reuse entries are found through an index of their keys: a long run would otherwise
 * compare every new key with all the earlier ones. */
static const char *reuse_key_at(const void *ctx, size_t i)
{
	return ((const struct pev *)ctx)->reuse[i].key;
}

void sched_reuse_free(struct pev *e)
{
	for (size_t r = 0; r < e->n_reuse; r++) {
		free(e->reuse[r].key);
		free(e->reuse[r].result_json);
		free(e->reuse[r].output_json);
	}
	free(e->reuse);
	strindex_free(&e->reuse_of);
	e->reuse = NULL;
	e->n_reuse = 0;
	e->cap_reuse = 0;
}

const struct reuse_entry *sched_reuse_find(struct pev *e, const char *key)
{
	size_t i;

	return strindex_get(&e->reuse_of, key, reuse_key_at, e, &i) ? &e->reuse[i] : NULL;
}

void sched_reuse_add(struct pev *e, char *key, const char *result, const char *output)
{
	size_t i;

	if (strindex_get(&e->reuse_of, key, reuse_key_at, e, &i)) {
		struct reuse_entry *r = &e->reuse[i];

		/* A forced re-run replaces what an identical step may reuse. */
		free(r->result_json);
		free(r->output_json);
		r->result_json = xstrdup(result);
		r->output_json = xstrdup(output);
		free(key);
		return;
	}
	e->reuse = xgrow(e->reuse, &e->cap_reuse, e->n_reuse + 1, sizeof(*e->reuse));
	e->reuse[e->n_reuse] = (struct reuse_entry){key, xstrdup(result), xstrdup(output)};
	strindex_add(&e->reuse_of, key, e->n_reuse++, reuse_key_at, e);
}

/* ---------------------------------------------------------------- dispatch */

static bool settled(enum fstep_state s)
{
	return fold_state_settled(s);
}

static bool ready(struct pev *e, size_t i)
{
	if ((e->st[i].status != FS_PENDING && e->st[i].status != FS_STALE) || e->st[i].twin_wait ||
	    e->st[i].job_live)
		return false;
	for (size_t k = e->dep_off[i]; k < e->dep_off[i + 1]; k++) {
		int di = e->dep_idx[k];
		if (di >= 0 && !settled(e->st[di].status))
			return false;
	}
	return true;
}

/* The next attempt of step i: counted and announced here, in the loop, so the journal
 * never shows a start the engine did not decide (after a pause, or a stale input). */
static void start_attempt(struct pev *e, size_t i, char *key)
{
	struct step_state *s = &e->st[i];
	struct job *j;
	cJSON *f;

	s->attempts++;
	s->round_attempts++;
	s->status = FS_RUNNING;
	s->job_live = true;
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", e->plan->steps[i].id);
	cJSON_AddNumberToObject(f, "attempt", s->attempts);
	cJSON_AddStringToObject(f, "name",
				e->plan->steps[i].name ? e->plan->steps[i].name : e->plan->steps[i].id);
	bus_publish(e->bus, EV_STEP_START, f);
	j = job_new_step(e, i);
	j->reuse_key = key ? key : sched_reuse_key(e, e->plan, i);
	e->n_step_jobs++;
	pool_submit(e, j);
}

static void start_step(struct pev *e, size_t i)
{
	const struct plan_step *step = &e->plan->steps[i];
	struct step_state *s = &e->st[i];
	char *key = sched_reuse_key(e, e->plan, i);
	const struct reuse_entry *hit = s->force ? NULL : sched_reuse_find(e, key);

	if (hit) {
		free(s->result_json);
		free(s->output_json);
		s->result_json = xstrdup(hit->result_json);
		s->output_json = xstrdup(hit->output_json);
		s->status = FS_PASSED;
		bus_notice(e->bus, "info", step->id,
			   "step %s reuses an identical step's verified result (same definition "
			   "and inputs)",
			   step->id);
		sched_publish_end(e, i, true);
		free(key);
		return;
	}
	if (!s->force) {
		/* The same work is in flight under another id: wait for it rather than pay
		 * twice; it is reused if it passes, and run here if it does not. */
		char *twin = NULL;

		pthread_mutex_lock(&e->pool_lock);
		for (struct job *w = e->live; w && !twin; w = w->next_live)
			if (w->kind == JOB_STEP && w->reuse_key && !strcmp(w->reuse_key, key) &&
			    !atomic_load(&w->cancel))
				twin = xstrdup(w->step.id);
		pthread_mutex_unlock(&e->pool_lock);
		if (twin) {
			s->twin_wait = true;
			bus_notice(e->bus, "info", step->id,
				   "step %s waits for %s, which does the same work", step->id, twin);
			free(twin);
			free(key);
			return;
		}
	}
	s->force = false;
	start_attempt(e, i, key);
}

/* Gates before a step (step, or high for high complexity); only this step waits. */
static void dispatch(struct pev *e, size_t i)
{
	const struct plan_step *step = &e->plan->steps[i];
	struct step_state *s = &e->st[i];
	enum gate_kind kind = GATE__COUNT;

	if (gates_enabled(e, GATE_STEP))
		kind = GATE_STEP;
	else if (step->complexity == CX_HIGH && gates_enabled(e, GATE_HIGH))
		kind = GATE_HIGH;
	if (kind != GATE__COUNT && !s->approved) {
		cJSON *payload = cJSON_CreateObject();
		unsigned long id;

		cJSON_AddItemToObject(payload, "step", plan_step_to_json(step));
		sched_set_state(e, i, FS_WAITING, NULL, "waits at its %s gate",
				gate_kind_name(kind));
		/* The policy may answer inside gates_open: the id is recorded first. */
		s->gate_id = e->next_gate_id;
		id = gates_open(e, kind, step->id, s->gen, NULL, payload);
		if (!id)
			s->gate_id = 0;
		return;
	}
	start_step(e, i);
}

void sched_gate_answered(struct pev *e, size_t i, enum gate_decision d)
{
	struct step_state *s = &e->st[i];

	switch (d) {
	case GATE_REJECT:
		engine_end(e, PEV_EXIT_ABORTED, "step %s was rejected at its gate",
			   e->plan->steps[i].id);
		break;
	case GATE_SKIP:
		s->status = FS_SKIPPED;
		sched_publish_end(e, i, false);
		break;
	case GATE_APPROVE:
	case GATE_EDIT:
		s->approved = true;
		if (!e->paused && e->phase == PH_EXECUTING && !e->replan_step &&
		    e->n_step_jobs < e->parallel) {
			start_step(e, i);
		} else {
			sched_set_state(e, i, FS_PENDING, NULL,
					e->paused ? "approved; starts when the run resumes"
						  : "approved; starts when a worker is free");
		}
		break;
	}
}

static bool all_settled(struct pev *e)
{
	for (size_t i = 0; i < e->plan->n_steps; i++)
		if (!settled(e->st[i].status))
			return false;
	return true;
}

static bool any_waiting(struct pev *e)
{
	for (size_t i = 0; i < e->plan->n_steps; i++)
		if (e->st[i].status == FS_WAITING)
			return true;
	return false;
}

void sched_run(struct pev *e)
{
	if (e->phase != PH_EXECUTING || !e->plan)
		return;
	if (e->replan_step) {
		/* Steps in flight finish first; nothing new starts meanwhile. */
		if (e->n_step_jobs == 0 && !e->paused)
			planning_replan(e);
		return;
	}
	if (!e->paused) {
		for (size_t i = 0; i < e->plan->n_steps && e->n_step_jobs < e->parallel; i++) {
			if (e->phase != PH_EXECUTING || e->replan_step)
				return;
			if (ready(e, i))
				dispatch(e, i);
		}
	}
	if (e->phase != PH_EXECUTING || e->n_step_jobs > 0 || any_waiting(e) || e->paused)
		return;
	if (all_settled(e)) {
		finish_start(e);
		return;
	}
	for (size_t i = 0; i < e->plan->n_steps; i++)
		if (ready(e, i) || e->st[i].twin_wait)
			return;
	engine_end(e, PEV_EXIT_ERROR, "no step can run: the plan is blocked");
}

/* ------------------------------------------------------------ job results */

/* A failed attempt: again with the critique, or a replan when retries are spent. */
static void route_retry(struct pev *e, size_t i, const char *critique)
{
	struct step_state *s = &e->st[i];
	const char *id = e->plan->steps[i].id;

	if (s->round_attempts > e->max_retries) {
		char *why = xasprintf("%d attempts failed verification; last critique: %s",
				      s->round_attempts, critique);
		s->status = FS_PENDING;
		if (!e->replan_step) {
			e->replan_step = xstrdup(id);
			e->replan_why = why;
			sched_set_state(e, i, FS_PENDING, NULL, "retries are spent: the plan is revised");
		} else {
			/* One replan at a time: this step fails again later if it must. */
			free(why);
			s->round_attempts = 0;
			sched_set_state(e, i, FS_PENDING, NULL,
					"failed while another replan was pending; it runs again");
		}
		return;
	}
	bus_notice(e->bus, "info", id, "retrying %s (attempt %d of %d): %s", id,
		   s->round_attempts + 1, e->max_retries + 1, critique);
	if (!e->paused && !e->replan_step && e->phase == PH_EXECUTING)
		start_attempt(e, i, NULL); /* its own worker slot, freed just now */
	else
		sched_set_state(e, i, FS_PENDING, NULL,
				e->paused ? "its retry waits for the run to resume"
					  : "its retry waits for the replan");
}

void sched_job_done(struct pev *e, struct job *j)
{
	int i = sched_find(e, j->step.id);
	bool ending = e->phase == PH_ENDING || e->phase == PH_ENDED;
	struct step_state *s;

	e->n_step_jobs--;
	/* Steps waiting for an identical one look again: reuse if it passed, run if not. */
	for (size_t k = 0; e->plan && k < e->plan->n_steps; k++)
		e->st[k].twin_wait = false;
	if (i < 0)
		return;
	s = &e->st[i];
	s->job_live = false;
	if (j->gen != s->gen) {
		/* Edited, re-run or made stale while it ran: its result does not count. */
		if (!ending)
			engine_control(e, "step_cancelled", j->step.id, false,
				       "the step changed while it ran: it starts over");
		return;
	}
	if (j->result_json) {
		free(s->result_json);
		free(s->output_json);
		s->result_json = j->result_json;
		s->output_json = j->output_json;
		j->result_json = j->output_json = NULL;
	}
	if (s->skip_requested) {
		s->skip_requested = false;
		s->status = FS_SKIPPED;
		sched_publish_end(e, (size_t)i, false);
		return;
	}
	switch (j->outcome) {
	case OUT_PASSED:
		s->status = FS_PASSED;
		sched_reuse_add(e, sched_job_reuse_key(e, j, (size_t)i), s->result_json,
				s->output_json);
		sched_publish_end(e, (size_t)i, false);
		break;
	case OUT_RETRY:
		strvec_push(&s->critiques, j->failure);
		if (ending) {
			sched_set_state(e, (size_t)i, FS_PENDING, NULL, "the run stopped");
			break;
		}
		route_retry(e, (size_t)i, j->failure);
		break;
	case OUT_REPLAN:
		strvec_push(&s->critiques, j->failure);
		if (ending) {
			sched_set_state(e, (size_t)i, FS_PENDING, NULL, "the run stopped");
		} else if (!e->replan_step) {
			e->replan_step = xstrdup(j->step.id);
			e->replan_why = xasprintf("the verifier asked for a replan: %s", j->failure);
			sched_set_state(e, (size_t)i, FS_PENDING, NULL,
					"the verifier asked for a replan");
		} else {
			s->round_attempts = 0;
			sched_set_state(e, (size_t)i, FS_PENDING, NULL,
					"failed while another replan was pending; it runs again");
		}
		break;
	case OUT_ERROR:
		sched_set_state(e, (size_t)i, FS_PENDING, NULL, "its model call failed");
		if (!ending && !atomic_load(&e->aborting))
			engine_end(e, PEV_EXIT_ERROR, "executor/verifier call for step %s failed: %s",
				   j->step.id, j->failure ? j->failure : "unknown error");
		break;
	case OUT_CANCELLED:
		/* The attempt never got a verdict: it does not use up a retry. */
		if (s->round_attempts > 0)
			s->round_attempts--;
		if (ending) {
			sched_set_state(e, (size_t)i, FS_PENDING, NULL, "the run stopped");
		} else {
			sched_set_state(e, (size_t)i, FS_PENDING, NULL,
					"its calls were cancelled: it starts over");
			engine_control(e, "step_cancelled", j->step.id, false,
				       "the step's calls were cancelled: it starts over");
		}
		break;
	}
}

/* ------------------------------------------------------------ invalidation */

/* Step k goes stale: a running one is cancelled (its result lapses), a waiting one has
 * its gate withdrawn, a settled one loses its result's standing. */
static void make_stale(struct pev *e, size_t k, const char *cause, const char *why, bool self)
{
	struct step_state *s = &e->st[k];
	const char *id = e->plan->steps[k].id;

	s->gen++;
	s->approved = false;
	s->round_attempts = 0;
	strvec_clear(&s->critiques);
	s->twin_wait = false;
	/* Whatever it does stops: its job (a running or verifying attempt, or one waiting
	 * at its shell gate) and any gate about it. */
	pool_cancel_step(e, id);
	for (size_t g = e->n_gates; g-- > 0;) {
		struct egate *eg = &e->gates[g];
		if (eg->step_id && !strcmp(eg->step_id, id) &&
		    (eg->kind == GATE_STEP || eg->kind == GATE_HIGH || eg->kind == GATE_SHELL ||
		     eg->kind == GATE_MCP))
			gates_withdraw(e, eg->id, why);
	}
	s->gate_id = 0;
	if (s->status == FS_SKIPPED && !self)
		return; /* the operator's skip of a dependent stands */
	sched_set_state(e, k, FS_STALE, cause, "%s", why);
}

void sched_invalidate(struct pev *e, size_t i, bool edited, const char *why)
{
	size_t n = e->plan->n_steps;
	bool *mark = xcalloc(n, sizeof(*mark));
	bool changed = true;
	const char *id = e->plan->steps[i].id;
	struct step_state *s = &e->st[i];

	/* The step itself. An edit at its own gate keeps the gate (which shows the new
	 * text), and a step that never ran has nothing stale. */
	if (edited && (s->status == FS_WAITING || s->status == FS_PENDING)) {
		s->gen++;
		s->round_attempts = 0;
		strvec_clear(&s->critiques);
	} else {
		make_stale(e, i, NULL, why, true);
	}

	mark[i] = true;
	while (changed) {
		changed = false;
		for (size_t k = 0; k < n; k++) {
			if (mark[k])
				continue;
			for (size_t d = e->dep_off[k]; d < e->dep_off[k + 1]; d++) {
				if (e->dep_idx[d] >= 0 && mark[e->dep_idx[d]]) {
					mark[k] = changed = true;
					break;
				}
			}
		}
	}
	for (size_t k = 0; k < n; k++) {
		char *w;
		if (!mark[k] || k == i)
			continue;
		if (e->st[k].status == FS_PENDING) {
			e->st[k].gen++;
			continue;
		}
		if (e->st[k].status == FS_STALE) {
			e->st[k].gen++;
			continue;
		}
		w = xasprintf("its input %s was %s", id, edited ? "edited" : "re-run");
		make_stale(e, k, id, w, false);
		free(w);
	}
	free(mark);
	/* A finishing run goes back to work: the final answer would use stale results. */
	if (e->phase == PH_FINISHING) {
		if (e->finish_job)
			job_cancel(e, e->finish_job);
		e->finish_job = NULL;
		e->phase = PH_EXECUTING;
	}
}

void sched_apply_edit(struct pev *e, const char *step_id, const char *json)
{
	int i = sched_find(e, step_id);
	struct plan *trial = planning_with_edit(e, e->plan, step_id, json);
	cJSON *f;

	if (!trial)
		return;
	if (plan_step_equal(&trial->steps[i], &e->plan->steps[i])) {
		bus_notice(e->bus, "info", step_id, "step %s is unchanged; nothing was edited",
			   step_id);
		plan_free(trial);
		return;
	}
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddItemToObject(f, "before", plan_step_to_json(&e->plan->steps[i]));
	cJSON_AddItemToObject(f, "after", plan_step_to_json(&trial->steps[i]));
	cJSON_AddStringToObject(f, "by", "operator");
	if (e->cmd_seq)
		cJSON_AddNumberToObject(f, "by_seq", (double)e->cmd_seq);
	bus_publish(e->bus, EV_STEP_EDIT, f);
	/* The same plan but for the step: its states keep their indexes. */
	plan_free(e->plan);
	e->plan = trial;
	sched_index_plan(e);
	sched_invalidate(e, (size_t)i, true, "edited by the operator");
	engine_write_plan(e);
}
