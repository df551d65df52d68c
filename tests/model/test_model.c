/*
 * test_model — a model-based randomized test of the engine: many seeded cases (mgen), each
 * a real engine on the simulated provider driven by an operator schedule, every journal
 * judged by the checker (jcheck).
 *
 *   PEVTUI_MODEL_CASES=N   how many cases (default 200)
 *   PEVTUI_MODEL_BASE=B    the series of seeds (default 1; "time" for a new one each run)
 *   PEVTUI_MODEL_SEED=S    replay one case, in this process, saying what it does
 *   PEVTUI_MODEL_VERBOSE=1 one line per case
 *   PEVTUI_MODEL_KEEP=N    keep the run dirs of the first N failing cases (default 3)
 *
 * Each case runs in a child process, so a crash or a hang of the engine is reported with
 * its seed and the series goes on. The interleaving of threads is not part of the seed: a
 * replay runs the same plan, script and schedule, not necessarily the same event order.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "fold.h"
#include "gate.h"
#include "jcheck.h"
#include "journal.h"
#include "jsonx.h"
#include "mgen.h"
#include "pev.h"
#include "provider.h"
#include "provider_sim.h"
#include "settings.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

/* Limits. The quiet time is how long the engine may say nothing before the driver takes
 * it as waiting for the operator (gates, pause, a lingering finished run); with the
 * simulated models at --sim-delay 0 a working engine is never quiet that long. A hold is
 * a step in progress that says nothing for HOLD_MS while some gate is open (the gate holds
 * it); a stall, the same for STALL_MS with or without gates. */
#define WATCHDOG_MS 20000
#define QUIET_MS 25
#define HOLD_MS 1500
#define STALL_MS 5000
#define SNAPSHOTS 8

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct snap {
	unsigned long seq;
	char *states; /* jcheck_states of the live fold after event `seq` */
};

struct drv {
	const struct mgen_case *mc;
	bool verbose;
	char *dir, *run_dir, *script_path;
	struct settings s;

	/* the engine of this segment of the case */
	struct provider *prov;
	struct bus *bus;
	struct gatekeeper *gk;
	struct pev *e;
	pthread_t joiner;

	/* from the bus subscriber and the joiner, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct event **q;
	size_t qn, qcap;
	bool engine_done;
	int exit_code;

	/* what the driver saw and did */
	struct jcheck *live;      /* every event from the buses, folded as it came */
	struct strvec live_lines; /* their JSON text, to compare with the journal */
	struct jcheck *notes;     /* the driver's own findings (stall, exit code, …) */
	size_t next;              /* the next schedule entry */
	unsigned long *answered;  /* gate ids already answered */
	size_t n_answered, cap_answered;
	bool quit_posted, want_resume, final_quit, resume_posted;
	int engines;
	int edits;
	double last_event;  /* when the last event came (stalls) */
	double quiet_from;  /* … or the driver last acted on a quiet engine (quiet spells) */
	double deadline;
	bool stalled, held;
	struct snap snaps[SNAPSHOTS + 16];
	int n_snaps, n_resume_snaps;
	unsigned long seen;       /* live events seen, for the reservoir */
	struct mgen_rng rng;
};

/* ------------------------------------------------------------ the engine */

/* Bus subscriber: runs with the bus lock held, so it only copies and wakes the driver. */
static void on_event(void *ctx, const struct event *ev)
{
	struct drv *d = ctx;

	pthread_mutex_lock(&d->mu);
	d->q = xgrow(d->q, &d->qcap, d->qn + 1, sizeof(*d->q));
	d->q[d->qn++] = event_dup(ev);
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

static void *join_main(void *arg)
{
	struct drv *d = arg;
	int code = pev_join(d->e);

	pthread_mutex_lock(&d->mu);
	d->exit_code = code;
	d->engine_done = true;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

static void note(struct drv *d, enum jcheck_inv inv, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct drv *d, enum jcheck_inv inv, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	jcheck_report(d->notes, inv, jcheck_last_seq(d->live), "%s", msg);
	free(msg);
}

/* Starts an engine on the run dir. false when pev_new refuses (err says why). */
static bool engine_start(struct drv *d, bool resume, char **err)
{
	struct provider *roles[ROLE__COUNT];

	d->prov = provider_sim_new(NULL, d->script_path, 0, err);
	if (!d->prov)
		return false;
	d->bus = bus_new();
	/* Before pev_new, so nothing the engine publishes is missed. */
	bus_subscribe(d->bus, on_event, d);
	d->gk = gatekeeper_new(d->bus, d->s.gates, GATE_MODE_OPERATOR);
	for (int i = 0; i < ROLE__COUNT; i++)
		roles[i] = d->prov;
	d->e = pev_new(&d->s, roles, d->bus, d->gk, d->run_dir, resume ? PEV_OPEN_RESUME : PEV_OPEN_NEW, err);
	if (!d->e) {
		gatekeeper_free(d->gk);
		bus_free(d->bus);
		provider_free(d->prov);
		d->gk = NULL;
		d->bus = NULL;
		d->prov = NULL;
		return false;
	}
	pev_set_linger(d->e, d->mc->linger);
	d->engine_done = false;
	d->quit_posted = d->want_resume = d->final_quit = d->resume_posted = false;
	d->n_answered = 0;
	d->engines++;
	pev_start(d->e);
	if (pthread_create(&d->joiner, NULL, join_main, d))
		fatal("cannot start a thread");
	return true;
}

static void engine_stop(struct drv *d)
{
	pthread_join(d->joiner, NULL);
	pev_free(d->e);
	gatekeeper_free(d->gk);
	bus_free(d->bus);
	provider_free(d->prov);
	d->e = NULL;
	d->gk = NULL;
	d->bus = NULL;
	d->prov = NULL;
}

/* ------------------------------------------------------------ the operator */

static void post(struct drv *d, enum pev_cmd cmd, const char *step_id, const char *json)
{
	if (d->verbose)
		printf("    → post %d %s %s\n", (int)cmd, step_id ? step_id : "",
		       json ? "(json)" : "");
	pev_post(d->e, cmd, step_id, json);
}

static bool was_answered(const struct drv *d, unsigned long id)
{
	for (size_t i = 0; i < d->n_answered; i++)
		if (d->answered[i] == id)
			return true;
	return false;
}

static void answer(struct drv *d, const struct jcheck_gate *g, enum gate_decision dec,
		   const char *json)
{
	bool ok;

	d->answered = xgrow(d->answered, &d->cap_answered, d->n_answered + 1,
			    sizeof(*d->answered));
	d->answered[d->n_answered++] = g->id;
	ok = pev_answer(d->e, g->id, dec, json);
	if (d->verbose)
		printf("    → answer gate %lu (%s %s) %s%s\n", g->id, g->kind,
		       g->step_id ? g->step_id : "", gate_decision_name(dec),
		       ok ? "" : " (refused)");
}

/* An open gate of this kind not answered yet, or NULL. */
static const struct jcheck_gate *open_gate(struct drv *d, const char *kind)
{
	for (size_t i = 0; i < jcheck_n_gates(d->live); i++) {
		const struct jcheck_gate *g = jcheck_gate(d->live, i);
		if ((!kind || !strcmp(g->kind, kind)) && !was_answered(d, g->id))
			return g;
	}
	return NULL;
}

/* The step's definition in force with a changed description (and maybe one more
 * criterion), as PEV_CMD_EDIT takes it. NULL when the step is unknown. Caller frees. */
static char *edited_step(struct drv *d, const char *id, bool add_criterion)
{
	const cJSON *def = jcheck_step_def(d->live, id);
	cJSON *copy;
	char *desc, *text;

	if (!def)
		return NULL;
	copy = cJSON_Duplicate(def, 1);
	d->edits++;
	desc = xasprintf("%s [operator edit %d]",
			 jsonx_str(copy, "description") ? jsonx_str(copy, "description") : "",
			 d->edits);
	cJSON_ReplaceItemInObject(copy, "description", cJSON_CreateString(desc));
	if (add_criterion) {
		cJSON *crit = cJSON_GetObjectItem(copy, "acceptance_criteria");
		char *c = xasprintf("operator criterion %d holds", d->edits);
		if (cJSON_IsArray(crit))
			cJSON_AddItemToArray(crit, cJSON_CreateString(c));
		free(c);
	}
	text = jsonx_print(copy);
	cJSON_Delete(copy);
	free(desc);
	return text;
}

/* The proposal at its gate with one step's description changed. Caller frees. */
static char *edited_plan(struct drv *d, int step)
{
	const cJSON *p = jcheck_proposal(d->live);
	cJSON *copy, *it;
	char *id = xasprintf("s%d", step), *text;

	if (!p) {
		free(id);
		return NULL;
	}
	copy = cJSON_Duplicate(p, 1);
	d->edits++;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(copy, "steps"))
	{
		if (strcmp(jsonx_str(it, "step_id") ? jsonx_str(it, "step_id") : "", id))
			continue;
		char *desc = xasprintf("Do part %d another way [plan edit %d].", step, d->edits);
		cJSON_ReplaceItemInObject(it, "description", cJSON_CreateString(desc));
		free(desc);
	}
	text = jsonx_print(copy);
	cJSON_Delete(copy);
	free(id);
	return text;
}

static char *budget_json(double usd)
{
	return xasprintf("{\"budget_usd\":%.4f}", usd);
}

/* Carries out one schedule entry; `g` is the gate that triggered it (or NULL). */
static void perform(struct drv *d, const struct mgen_entry *en, const struct jcheck_gate *g)
{
	char *id = xasprintf("s%d", en->step), *json = NULL;
	double spent = jcheck_spent(d->live);

	if (d->verbose)
		printf("  entry %zu: %s%s\n", d->next, mgen_action_name(en->action),
		       g ? " (at its gate)" : "");
	switch (en->action) {
	case MGEN_APPROVE:
		if (g && !strcmp(g->kind, "budget")) {
			json = budget_json(spent + en->budget_usd);
			answer(d, g, GATE_APPROVE, json);
		} else if (g) {
			answer(d, g, GATE_APPROVE, NULL);
		}
		break;
	case MGEN_REJECT:
		if (g)
			answer(d, g, GATE_REJECT, NULL);
		break;
	case MGEN_SKIP_GATE:
		if (g)
			answer(d, g, GATE_SKIP, NULL);
		break;
	case MGEN_EDIT_AT_GATE:
		if (g && g->step_id) {
			/* An edit is not an answer: the same gate stays open until approved. */
			json = edited_step(d, g->step_id, en->add_criterion);
			if (json)
				post(d, PEV_CMD_EDIT, g->step_id, json);
			answer(d, g, GATE_APPROVE, NULL);
			break;
		}
		if (g && (!strcmp(g->kind, "plan") || !strcmp(g->kind, "replan"))) {
			json = edited_plan(d, en->step);
			if (json)
				post(d, PEV_CMD_EDIT_PLAN, NULL, json);
			answer(d, g, GATE_APPROVE, NULL);
			break;
		}
		if (g)
			answer(d, g, GATE_APPROVE, NULL);
		/* fall through - no step at this gate: edit the scheduled one */
	case MGEN_EDIT:
		free(json);
		json = edited_step(d, id, en->add_criterion);
		if (json)
			post(d, PEV_CMD_EDIT, id, json);
		break;
	case MGEN_RERUN:
		post(d, PEV_CMD_RERUN, id, NULL);
		break;
	case MGEN_RERUN_FORCE:
		post(d, PEV_CMD_RERUN_FORCE, id, NULL);
		break;
	case MGEN_SKIP_STEP:
		post(d, PEV_CMD_SKIP, id, NULL);
		break;
	case MGEN_PAUSE:
		post(d, PEV_CMD_PAUSE, NULL, NULL);
		break;
	case MGEN_RESUME:
		post(d, PEV_CMD_RESUME, NULL, NULL);
		break;
	case MGEN_CANCEL_RUNNING:
		post(d, PEV_CMD_CANCEL_RUNNING, NULL, NULL);
		break;
	case MGEN_BUDGET:
		/* Odd steps set the cap as drawn (possibly below the spend), even ones raise it
		 * above what is spent. */
		json = budget_json(en->step % 2 ? en->budget_usd : spent + en->budget_usd);
		post(d, PEV_CMD_BUDGET, NULL, json);
		break;
	case MGEN_QUIT_RESUME:
		post(d, PEV_CMD_QUIT, NULL, NULL);
		d->quit_posted = d->want_resume = true;
		break;
	case MGEN__COUNT:
		break;
	}
	free(json);
	free(id);
}

/* One look at the run: schedule entries that are due, default answers, the end. */
static void act(struct drv *d, bool quiet, double now)
{
	const struct mgen_case *mc = d->mc;
	const struct mgen_entry *reserved = NULL; /* an entry waiting for a gate kind */
	double spent = jcheck_spent(d->live);

	if (!jcheck_started(d->live))
		return;
	while (d->next < mc->n_schedule && !d->quit_posted) {
		const struct mgen_entry *en = &mc->schedule[d->next];
		const struct jcheck_gate *g = NULL;
		bool fire;

		if (en->trigger == MGEN_AFTER_EVENTS) {
			fire = jcheck_last_seq(d->live) >= en->after || quiet;
		} else {
			g = open_gate(d, gate_kind_name(en->gate));
			fire = g || quiet;
			reserved = en;
		}
		if (!fire)
			break;
		perform(d, en, g);
		d->next++;
		reserved = NULL;
		quiet = false; /* one forced entry per quiet spell: let the engine answer */
	}

	/* Gates nobody scheduled: budget at once (it holds calls), the others once no step
	 * is in progress, so that a step held by another's gate shows as a hold. */
	for (size_t i = 0; i < jcheck_n_gates(d->live) && !d->quit_posted; i++) {
		const struct jcheck_gate *g = jcheck_gate(d->live, i);
		char *busy;
		if (was_answered(d, g->id))
			continue;
		if (reserved && !strcmp(g->kind, gate_kind_name(reserved->gate)))
			continue;
		if (!strcmp(g->kind, "budget")) {
			double cap = jcheck_cap(d->live);
			char *json = budget_json((spent > cap ? spent : cap) * 2 + 0.05);
			answer(d, g, GATE_APPROVE, json);
			free(json);
			continue;
		}
		busy = jcheck_busy_ids(d->live, g->step_id);
		if (!*busy) {
			answer(d, g, GATE_APPROVE, NULL);
		} else if (now - d->last_event >= HOLD_MS) {
			if (!d->held && !jcheck_paused(d->live) && !open_gate(d, "budget")) {
				char *states = jcheck_states(d->live);
				note(d, JC_GATES,
				     "hold: %s in progress said nothing for %d ms while the %s "
				     "gate %lu (step %s) was open (%s)",
				     busy, HOLD_MS, g->kind, g->id,
				     g->step_id ? g->step_id : "none", states);
				free(states);
				d->held = true;
			}
			answer(d, g, GATE_APPROVE, NULL);
		}
		free(busy);
	}

	if (d->next < mc->n_schedule || d->quit_posted)
		return;
	/* The schedule is done: end the case. */
	if (jcheck_paused(d->live) && !d->resume_posted) {
		post(d, PEV_CMD_RESUME, NULL, NULL);
		d->resume_posted = true;
	} else if (!jcheck_paused(d->live)) {
		d->resume_posted = false;
	}
	/* A lingering run stays open after run.end: quit once it has said all it will. */
	if (mc->linger && !jcheck_segment_open(d->live) && quiet && !d->final_quit) {
		post(d, PEV_CMD_QUIT, NULL, NULL);
		d->quit_posted = d->final_quit = true;
	}
}

static void snapshot(struct drv *d, struct snap *s)
{
	free(s->states);
	s->seq = jcheck_last_seq(d->live);
	s->states = jcheck_states(d->live);
}

static void take(struct drv *d, const struct event *ev)
{
	cJSON *o = cJSON_Parse(ev->json);
	const char *type = jsonx_str(o, "type");

	if (!o) {
		note(d, JC_SHAPE, "an event that is not JSON: %s", ev->json);
		return;
	}
	/* The state just before a resume is a prefix the new engine rebuilt. */
	if (type && !strcmp(type, "run.resume") && d->n_resume_snaps < 16)
		snapshot(d, &d->snaps[SNAPSHOTS + d->n_resume_snaps++]);
	jcheck_feed(d->live, o);
	strvec_push(&d->live_lines, ev->json);
	if (d->verbose) {
		char *cut = jsonx_snippet(ev->json, 160);
		printf("    %s\n", cut);
		free(cut);
	}
	/* Reservoir sampling: SNAPSHOTS prefixes uniformly over a run of unknown length. */
	d->seen++;
	if (d->n_snaps < SNAPSHOTS) {
		snapshot(d, &d->snaps[d->n_snaps++]);
	} else {
		unsigned long j = mgen_rng_below(&d->rng, (unsigned)d->seen);
		if (j < SNAPSHOTS)
			snapshot(d, &d->snaps[j]);
	}
	cJSON_Delete(o);
}

/* Drives one engine until its thread ends. false on the watchdog. */
static bool drive(struct drv *d)
{
	for (;;) {
		struct event **got;
		size_t n;
		bool done, quiet;
		double t;

		pthread_mutex_lock(&d->mu);
		while (!d->qn && !d->engine_done) {
			double until = d->quiet_from + QUIET_MS;
			struct timespec ts;
			if (now_ms() >= until)
				break;
			ts.tv_sec = (time_t)(until / 1e3);
			ts.tv_nsec = (long)((until - ts.tv_sec * 1e3) * 1e6);
			if (pthread_cond_timedwait(&d->cv, &d->mu, &ts) == ETIMEDOUT)
				break;
		}
		got = d->q;
		n = d->qn;
		d->q = NULL;
		d->qn = d->qcap = 0;
		done = d->engine_done;
		pthread_mutex_unlock(&d->mu);

		for (size_t i = 0; i < n; i++) {
			take(d, got[i]);
			event_free(got[i]);
		}
		free(got);
		t = now_ms();
		if (n)
			d->last_event = d->quiet_from = t;
		if (done && !n)
			return true;
		if (t > d->deadline) {
			note(d, JC_GATES, "watchdog: the case did not end in %d s",
			     WATCHDOG_MS / 1000);
			return false;
		}
		quiet = !n && t - d->quiet_from >= QUIET_MS;
		/* A step in progress, and nothing said for seconds: something holds it. */
		if (quiet && !d->stalled && !d->quit_posted && t - d->last_event >= STALL_MS &&
		    jcheck_busy(d->live) && !jcheck_paused(d->live) && !open_gate(d, "budget")) {
			char *states = jcheck_states(d->live);
			note(d, JC_GATES,
			     "stall: a step in progress and no event for %d s (%zu gates "
			     "open; %s)",
			     STALL_MS / 1000, jcheck_n_gates(d->live), states);
			free(states);
			d->stalled = true;
		}
		/* Open, but nothing runs, nothing is asked and nothing ends it: it never will. */
		if (quiet && !d->stalled && !d->quit_posted && t - d->last_event >= STALL_MS &&
		    jcheck_started(d->live) && jcheck_segment_open(d->live) &&
		    !jcheck_busy(d->live) && !jcheck_n_gates(d->live) && !jcheck_paused(d->live) &&
		    d->next >= d->mc->n_schedule) {
			char *states = jcheck_states(d->live);
			note(d, JC_SEGMENTS,
			     "idle: the run is open but nothing runs, no gate is open "
			     "and no run.end came for %d s (%s)",
			     STALL_MS / 1000, states);
			free(states);
			d->stalled = true;
			post(d, PEV_CMD_QUIT, NULL, NULL);
			d->quit_posted = true;
		}
		act(d, quiet, t);
		if (quiet)
			d->quiet_from = t; /* the next quiet spell starts now: no spinning */
	}
}

/* ------------------------------------------------------------ after the run */

static bool collect(void *ctx, const struct event *ev)
{
	strvec_push(ctx, ev->json);
	return true;
}

/* fold.c (what --resume rebuilds from, and what the screen shows) against our fold of the
 * same journal prefix, step by step over the adopted plan. */
static void compare_fold(struct jcheck *c, const struct run_state *rs, unsigned long seq)
{
	char *ids, *save = NULL;

	if (!rs->plan_adopted)
		return;
	ids = jcheck_plan_ids(c);
	for (char *id = strtok_r(ids, " ", &save); id; id = strtok_r(NULL, " ", &save)) {
		int fi = fold_find_step(rs, id), js = jcheck_step_state(c, id);
		const char *theirs = fi < 0 ? "(absent)" : fold_state_name(rs->steps[fi].state);
		const char *ours = js < 0 ? "(absent)" : jcheck_state_name((enum jcheck_state)js);

		if (strcmp(theirs, ours))
			jcheck_report(c, JC_RESUME, seq,
				      "after event %lu fold.c has %s %s, the journal says %s", seq,
				      id, theirs, ours);
	}
	free(ids);
}

/* The journal against the live stream, the checker over the journal, and the prefix
 * folds (ours and fold.c's) against the live snapshots. Returns the checker. */
static struct jcheck *judge(struct drv *d)
{
	char *path = xasprintf("%s/journal.jsonl", d->run_dir), *err = NULL;
	struct journal_load_info info = {0};
	struct strvec lines = STRVEC_INIT;
	struct jcheck *c = jcheck_new();
	struct run_state rs;
	bool differ = false;

	if (!journal_load(path, collect, &lines, &info, &err)) {
		jcheck_report(c, JC_SHAPE, 0, "journal_load: %s", err ? err : "?");
		free(err);
	} else if (info.torn_tail) {
		jcheck_report(c, JC_SHAPE, info.last_seq, "the journal has a torn last line");
	}
	free(path);

	fold_init(&rs);
	for (size_t i = 0; i < lines.n; i++) {
		cJSON *o = cJSON_Parse(lines.v[i]);
		unsigned long seq;
		int type;

		if (!o) {
			jcheck_report(c, JC_SHAPE, 0, "journal line %zu is not JSON", i + 1);
			continue;
		}
		if (!differ && (i >= d->live_lines.n || strcmp(lines.v[i], d->live_lines.v[i]))) {
			jcheck_report(c, JC_RESUME, (unsigned long)(i + 1),
				      "the journal and the live stream differ from event %zu on",
				      i + 1);
			differ = true;
		}
		jcheck_feed(c, o);
		type = event_type_from_name(jsonx_str(o, "type"));
		if (type >= 0)
			fold_apply_json(&rs, type, o);
		seq = jcheck_last_seq(c);
		for (int k = 0; k < SNAPSHOTS + 16; k++) {
			struct snap *s = &d->snaps[k];
			char *mine;
			if (!s->states || s->seq != seq)
				continue;
			/* Our fold of the journal prefix against the live fold at that point. */
			mine = jcheck_states(c);
			if (strcmp(mine, s->states))
				jcheck_report(c, JC_RESUME, seq,
					      "after event %lu the journal folds to \"%s\" but the "
					      "live run was \"%s\"",
					      seq, mine, s->states);
			free(mine);
			compare_fold(c, &rs, seq);
		}
		cJSON_Delete(o);
	}
	if (lines.n != d->live_lines.n)
		jcheck_report(c, JC_RESUME, 0, "the journal holds %zu events, the buses carried %zu",
			      lines.n, d->live_lines.n);
	fold_release(&rs);
	jcheck_finish(c);
	strvec_clear(&lines);
	/* The driver's own findings, with the events they name. */
	for (size_t i = 0; i < jcheck_n_violations(d->notes); i++) {
		const struct jcheck_violation *v = jcheck_violation(d->notes, i);
		jcheck_report(c, v->inv, v->n_seqs ? v->seqs[0] : 0, "%s", v->msg);
	}
	return c;
}

/* ------------------------------------------------------------ one case */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f))
		fatal("cannot write %s", path);
}

/* Runs the case of `seed`. Returns the number of violations (printed). A hung engine ends
 * the process (exit 3) after printing what it saw. */
static int run_case(uint64_t seed, bool verbose, bool keep_on_failure)
{
	struct mgen_case mc;
	struct drv d;
	struct jcheck *c;
	char *text, *err = NULL;
	bool resume = false, ok = true, ran_last = false;
	int bad, last_exit = -1;
	pthread_condattr_t ca;

	mgen_case_make(&mc, seed);
	memset(&d, 0, sizeof(d));
	d.mc = &mc;
	d.verbose = verbose;
	mgen_rng_seed(&d.rng, seed ^ 0x5eed);
	pthread_mutex_init(&d.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d.cv, &ca);
	pthread_condattr_destroy(&ca);
	d.live = jcheck_new();
	d.notes = jcheck_new();
	d.dir = testdir_new("model");
	if (!d.dir)
		fatal("cannot make a temporary folder");
	d.script_path = xasprintf("%s/script.json", d.dir);
	text = cJSON_Print(mc.script);
	write_file(d.script_path, text);
	cJSON_free(text);
	{
		char *runs = xasprintf("%s/runs", d.dir);
		mkdir(runs, 0700);
		d.run_dir = xasprintf("%s/run1", runs);
		free(runs);
	}
	settings_init(&d.s);
	d.s.task = xstrdup("model test task");
	d.s.sim_delay_ms = 0;
	/* Named as the CLI names them for --provider sim, so every call has a price and the
	 * budget is real. */
	d.s.model[ROLE_PLANNER] = xstrdup("sim-planner");
	d.s.model[ROLE_EXECUTOR] = xstrdup("sim-executor");
	d.s.model[ROLE_VERIFIER] = xstrdup("sim-verifier");
	d.s.gates = mc.gates;
	d.s.parallel = mc.parallel;
	d.s.max_retries = mc.max_retries;
	d.s.max_replans = mc.max_replans;
	d.s.budget_usd = mc.budget_usd;
	d.deadline = now_ms() + WATCHDOG_MS;
	if (verbose) {
		char *desc = mgen_case_describe(&mc);
		printf("case %" PRIu64 ":\n%s", seed, desc);
		free(desc);
	}

	for (;;) {
		if (!engine_start(&d, resume, &err)) {
			/* Resuming a finished run may be refused; anything else is a failure. */
			if (!resume || jcheck_segment_open(d.live))
				note(&d, resume ? JC_RESUME : JC_SHAPE, "%s refused: %s",
				     resume ? "resume" : "pev_new", err ? err : "?");
			free(err);
			err = NULL;
			ran_last = false;
			break;
		}
		d.last_event = d.quiet_from = now_ms();
		ok = drive(&d);
		if (!ok)
			break;
		engine_stop(&d);
		ran_last = true;
		last_exit = d.exit_code;
		if (!d.quit_posted && jcheck_segment_open(d.live))
			note(&d, JC_SEGMENTS,
			     "the engine stopped with no run.end and no quit (exit %d)",
			     d.exit_code);
		if (!d.want_resume)
			break;
		/* The operator comes back: maybe with the cap in force, maybe with the first. */
		if (mc.resume_keeps_cap && jcheck_cap(d.live) > 0)
			d.s.budget_usd = jcheck_cap(d.live);
		resume = true;
		if (verbose)
			printf("  -- resume --\n");
	}
	if (ok && ran_last && jcheck_last_exit(d.live) >= 0 && !jcheck_segment_open(d.live) &&
	    last_exit != jcheck_last_exit(d.live))
		note(&d, JC_SEGMENTS, "pev_join returned %d but the last run.end says exit_code %d",
		     last_exit, jcheck_last_exit(d.live));

	if (!ok) {
		/* A hung engine cannot be freed: report what there is and leave. */
		c = d.live;
		for (size_t i = 0; i < jcheck_n_violations(d.notes); i++)
			jcheck_report(c, jcheck_violation(d.notes, i)->inv, jcheck_last_seq(c),
			              "%s", jcheck_violation(d.notes, i)->msg);
		printf("model: seed %" PRIu64 " FAILED (%s)\n", seed, "hung");
		{
			char *desc = mgen_case_describe(&mc), *states = jcheck_states(c);
			printf("%s  states: %s\n", desc, states);
			free(desc);
			free(states);
		}
		jcheck_print(c, stdout, 8);
		printf("  run dir kept: %s\n  replay: PEVTUI_MODEL_SEED=%" PRIu64
		       " tests/model/test_model\n",
		       d.run_dir, seed);
		fflush(stdout);
		_exit(3);
	}

	c = judge(&d);
	bad = (int)jcheck_n_violations(c);
	if (bad) {
		char *desc = mgen_case_describe(&mc);
		printf("model: seed %" PRIu64 " FAILED: %d violation%s\n%s", seed, bad,
		       bad == 1 ? "" : "s", desc);
		jcheck_print(c, stdout, 8);
		if (keep_on_failure)
			printf("  run dir kept: %s\n", d.run_dir);
		printf("  replay: PEVTUI_MODEL_SEED=%" PRIu64 " tests/model/test_model\n", seed);
		free(desc);
	} else if (verbose) {
		char *states = jcheck_states(d.live);
		printf("case %" PRIu64 ": ok, %zu events, %d engine%s, exit %d, %s\n", seed,
		       jcheck_n_events(d.live), d.engines, d.engines == 1 ? "" : "s", last_exit,
		       states);
		free(states);
	}
	jcheck_free(c);
	if (!(bad && keep_on_failure))
		testdir_remove(d.dir);

	for (int k = 0; k < SNAPSHOTS + 16; k++)
		free(d.snaps[k].states);
	strvec_clear(&d.live_lines);
	jcheck_free(d.live);
	jcheck_free(d.notes);
	free(d.answered);
	free(d.dir);
	free(d.run_dir);
	free(d.script_path);
	settings_release(&d.s);
	pthread_cond_destroy(&d.cv);
	pthread_mutex_destroy(&d.mu);
	mgen_case_release(&mc);
	fflush(stdout);
	return bad;
}

/* ------------------------------------------------------------ the series */

static uint64_t env_u64(const char *name, uint64_t dflt, bool *given)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (given)
		*given = false;
	if (!v || !*v)
		return dflt;
	if (!strcmp(v, "time"))
		return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "test_model: %s=%s is not a number\n", name, v);
		exit(99);
	}
	if (given)
		*given = true;
	return x;
}

int main(void)
{
	bool one = false;
	uint64_t seed = env_u64("PEVTUI_MODEL_SEED", 0, &one);
	uint64_t base = env_u64("PEVTUI_MODEL_BASE", 1, NULL);
	unsigned cases = (unsigned)env_u64("PEVTUI_MODEL_CASES", 200, NULL);
	bool verbose = getenv("PEVTUI_MODEL_VERBOSE") && *getenv("PEVTUI_MODEL_VERBOSE");
	size_t keep = (size_t)env_u64("PEVTUI_MODEL_KEEP", 3, NULL); /* run dirs of failures */
	struct strvec failed = STRVEC_INIT;
	double t0 = now_ms();
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (one)
		return run_case(seed, true, true) ? 1 : 0;

	printf("model: %u cases from base %" PRIu64 "\n", cases, base);
	for (unsigned i = 0; i < cases; i++) {
		uint64_t s = mgen_case_seed(base, i);
		pid_t pid;
		int status = 0;

		fflush(stdout);
		pid = fork();
		if (pid < 0)
			fatal("fork: %s", strerror(errno));
		if (pid == 0) {
			/* The backstop for a hang the driver's own watchdog cannot see (a
			 * pev_join or pev_free that never returns). */
			alarm(WATCHDOG_MS / 1000 + 15);
			int bad = run_case(s, false, failed.n < keep);
			if (verbose)
				printf("model: case %u seed %" PRIu64 " %s\n", i, s,
				       bad ? "FAILED" : "ok");
			fflush(stdout);
			_exit(bad ? 1 : 0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status)) {
			printf("model: seed %" PRIu64 " FAILED: the case died of signal %d (%s)\n"
			       "  replay: PEVTUI_MODEL_SEED=%" PRIu64 " tests/model/test_model\n",
			       s, WTERMSIG(status),
			       WTERMSIG(status) == SIGALRM ? "hung" : strsignal(WTERMSIG(status)),
			       s);
			strvec_pushf(&failed, "%" PRIu64, s);
		} else if (WEXITSTATUS(status)) {
			strvec_pushf(&failed, "%" PRIu64, s);
		}
	}
	printf("model: %u cases, %zu failed, %.1f s\n", cases, failed.n, (now_ms() - t0) / 1e3);
	if (failed.n) {
		char *list = strvec_join(&failed, " ");
		printf("model: failing seeds: %s\n", list);
		free(list);
	}
	rc = failed.n ? 1 : 0;
	strvec_clear(&failed);
	return rc;
}
