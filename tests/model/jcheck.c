/*
 * jcheck — the journal checker of the model test.
 *
 * One pass over the events, in order, keeping just enough of a fold to judge each event
 * when it arrives: the plan definitions in force (plan.adopted, then step.edit), each
 * step's state by doc/events.md's rule, the gates open, the segment, the budget. What each
 * invariant checks exactly:
 *
 * deps-settled  At step.start of X (and at a reused step.end passed of X): X is in the
 *               adopted plan, and every dependency D of X in the definitions in force is
 *               passed, fail_accepted or skipped and has not been invalidated since it
 *               settled — by a step.edit of D, or by a plan.adopted that changed D or did
 *               not keep its pass.
 * stale         No pass survives a change of its inputs. (a) Every step.state stale of Y
 *               and every step.edit of Y (in the adopted plan) marks each transitive
 *               dependent of Y that is passed as owing a stale: it must leave passed
 *               (step.state, step.start or step.end) before any step that depends on it
 *               starts or passes, and before run.final, run.end and run.resume. (b) A
 *               dependent that was running then must not end passed from that attempt (a
 *               new step.start first), and a high/step gate of a dependent that was open
 *               then must close as withdrawn. (c) A step.end passed (not reused) comes
 *               from an attempt that started after the step's last definition change and
 *               after every dependency last ended passed or fail_accepted. (d) plan.adopted
 *               keeps only steps that are settled (doc/events.md says passed; the engine
 *               also keeps skipped and fail-accepted ones, taken as sound), unchanged, and
 *               whose transitive inputs are unchanged and kept; the others start over as
 *               pending (as fold.c reads it; no step.state says so). (e) A settled step
 *               starts again only after something invalidated it or the operator asked
 *               for a re-run or an edit. (f) One job per step: a step.start that is not a
 *               retry comes only after the step's previous job is over (a verdict other
 *               than a deterministic pass, a step.end, a notice step_cancelled): a re-run
 *               of a running step must not race its cancelled attempt. (g) run.final:
 *               every step settled, and each passed step ended after its last change and
 *               after each dependency's last pass.
 * gate-isolation A step.end passed (not reused) of X follows X's passing model verdict
 *               directly: between them no other event names X (step.state and notice
 *               aside) — no call, tool or output of an attempt still going on. Which gate
 *               decisions fall between them is not judged here: the worker publishes the
 *               verdict and the loop the step.end, so an answer the loop takes in between
 *               is a race, not a hold. The driver checks the hold live instead: it answers
 *               a gate only once no other step is in progress, and a step in progress that
 *               says nothing for HOLD_MS while a gate is open is reported.
 * criteria      A verify.verdict of stage model with action pass has overall_pass true and
 *               lists every acceptance criterion of the step, as defined when its attempt
 *               started, with passed true and without not_judged. A step.end passed that
 *               is not reused follows such a verdict since the step's last step.start.
 * budget        With a cap C in force (run.start/run.resume policy, operator.command
 *               budget, gate.decision of a budget gate), M = parallel + 1 calls may be in
 *               flight (one per step worker and the planner). (a) Calls that complete
 *               while the spend before them is already >= C were dispatched before the
 *               cap was reached: at most M of them until the cap rises above the spend.
 *               (b) At every llm.call, spend <= B + M * the most expensive call so
 *               far, where B is the highest cap so far, or the spend at the moment a cap
 *               was set below it (a cap cannot undo what is spent).
 * segments      run.start first; run.start/run.reopen open a segment, run.end closes it;
 *               no run.end without an open segment, no run.reopen inside one, no run.final
 *               outside one; after run.end only run.reopen, run.resume, operator.command
 *               and notice until a run.reopen; no gate is left open at run.end; a finished
 *               journal ends with its last segment closed.
 * resume        After run.resume, a step that was settled at that point neither starts
 *               again nor leaves its settled state until something touches it: an
 *               operator.command naming it or an input, a step.edit, a step.state stale
 *               of an input, or a plan.adopted that does not keep it. (The driver adds the
 *               prefix comparisons: live states against journal prefixes and fold.c.)
 * pause         Between operator.command pause or cancel_running and the next resume, no
 *               step starts but retries of an attempt in progress and at most the steps
 *               already handed to a worker: parallel minus the attempts in progress at the
 *               pause (workers publish step.start, so a step dispatched just before the
 *               pause may appear just after it). A run.resume clears the pause.
 * shape         seq 1, 2, … without gaps; a known state name; step events and edits of
 *               steps the plan holds; decisions of gates that are open.
 */
#include "config.h"

#include "jcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "strbuf.h"
#include "xalloc.h"

static const char *const inv_names[JC__COUNT] = {
	[JC_DEPS] = "deps-settled", [JC_STALE] = "stale",       [JC_GATES] = "gate-isolation",
	[JC_CRITERIA] = "criteria", [JC_BUDGET] = "budget",     [JC_SEGMENTS] = "segments",
	[JC_RESUME] = "resume",     [JC_PAUSE] = "pause",       [JC_SHAPE] = "shape",
};

static const char *const state_names[JS__COUNT] = {
	"pending", "waiting", "running", "verifying", "stale", "passed", "fail_accepted", "skipped",
};

const char *jcheck_inv_name(enum jcheck_inv inv)
{
	return inv >= 0 && inv < JC__COUNT ? inv_names[inv] : "?";
}

const char *jcheck_state_name(enum jcheck_state s)
{
	return s >= 0 && s < JS__COUNT ? state_names[s] : "?";
}

static int state_from_name(const char *s)
{
	for (int i = 0; s && i < JS__COUNT; i++)
		if (!strcmp(state_names[i], s))
			return i;
	return -1;
}

static bool settled(enum jcheck_state s)
{
	return s == JS_PASSED || s == JS_FAIL_ACCEPTED || s == JS_SKIPPED;
}

struct step {
	char *id;
	bool in_plan;
	cJSON *def;                 /* the definition in force (owned copy) */
	struct strvec deps, crit;
	enum jcheck_state state;
	bool invalid;               /* settled, but edited or not kept since */
	size_t last_start;          /* event index + 1 of each; 0 = never */
	size_t last_end, last_good_end, last_change, verdict;
	bool pass_verdict;          /* a passing model verdict since the last step.start */
	struct strvec start_crit;   /* the criteria when the latest attempt started */
	bool have_start_crit;
	bool attempt_open;
	size_t owes_stale;          /* index + 1 of the change it owes a stale to */
	size_t must_restart;        /* running when an input changed: index + 1 */
	bool rerun_asked;           /* the operator asked for it to run again */
	bool retrying;              /* its last verdict asked for a retry */
	size_t in_flight;           /* index + 1 of the step.start of a job not yet over */
	bool settled_at_resume;     /* settled at the last run.resume … */
	bool released;              /* … and touched since */
};

struct gate {
	unsigned long id;
	char *kind, *step_id;
	size_t open;                /* index + 1 of its gate.open */
	size_t must_withdraw;       /* index + 1 of the change that voids it */
};

struct jcheck {
	cJSON **evs;
	size_t n_evs, cap_evs;
	struct step **steps;
	size_t n_steps, cap_steps;
	cJSON *proposal;            /* plan waiting for its gate (owned), or NULL */
	struct gate *gates;
	size_t n_gates, cap_gates;
	bool started, seg_open, final_seen, paused;
	int pause_allow;            /* fresh starts still in the pipeline at the pause */
	int last_exit;
	unsigned long last_seq;
	/* budget */
	double cap, spent, c_max;
	double base;                /* the highest cap, or spend when a cap was set below it */
	int parallel, over;
	struct jcheck_violation *v;
	size_t n_v, cap_v;
	struct jcheck_gate *pub;    /* jcheck_gate's answers, rebuilt on demand */
	size_t cap_pub;
};

/* ------------------------------------------------------------------ helpers */

static const char *str_of(const cJSON *o, const char *k)
{
	return jsonx_str(o, k);
}

static unsigned long seq_of(const cJSON *ev)
{
	double d = 0;

	jsonx_num(ev, "seq", &d);
	return d > 0 ? (unsigned long)d : 0;
}

static bool eq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void add_violation(struct jcheck *c, enum jcheck_inv inv, const unsigned long *seqs,
			  int n, const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void add_violation(struct jcheck *c, enum jcheck_inv inv, const unsigned long *seqs,
			  int n, const char *fmt, va_list ap)
{
	struct jcheck_violation *x;

	c->v = xgrow(c->v, &c->cap_v, c->n_v + 1, sizeof(*c->v));
	x = &c->v[c->n_v++];
	memset(x, 0, sizeof(*x));
	x->inv = inv;
	x->msg = xvasprintf(fmt, ap);
	for (int i = 0; i < n && i < 4; i++)
		if (seqs[i])
			x->seqs[x->n_seqs++] = seqs[i];
}

/* A violation naming up to two events by index + 1 (0 = none). */
static void fail2(struct jcheck *c, enum jcheck_inv inv, size_t a, size_t b, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void fail2(struct jcheck *c, enum jcheck_inv inv, size_t a, size_t b, const char *fmt, ...)
{
	unsigned long seqs[2] = {a ? seq_of(c->evs[a - 1]) : 0, b ? seq_of(c->evs[b - 1]) : 0};
	va_list ap;

	va_start(ap, fmt);
	add_violation(c, inv, seqs, 2, fmt, ap);
	va_end(ap);
}

void jcheck_report(struct jcheck *c, enum jcheck_inv inv, unsigned long seq, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_violation(c, inv, &seq, 1, fmt, ap);
	va_end(ap);
}

static struct step *find_step(const struct jcheck *c, const char *id)
{
	for (size_t i = 0; id && i < c->n_steps; i++)
		if (!strcmp(c->steps[i]->id, id))
			return c->steps[i];
	return NULL;
}

static struct step *plan_step(const struct jcheck *c, const char *id)
{
	struct step *s = find_step(c, id);

	return s && s->in_plan ? s : NULL;
}

static struct step *get_step(struct jcheck *c, const char *id)
{
	struct step *s = find_step(c, id);

	if (s)
		return s;
	s = xcalloc(1, sizeof(*s));
	s->id = xstrdup(id);
	c->steps = xgrow(c->steps, &c->cap_steps, c->n_steps + 1, sizeof(*c->steps));
	c->steps[c->n_steps++] = s;
	return s;
}

static void strings_of(struct strvec *out, const cJSON *arr)
{
	const cJSON *it;

	strvec_clear(out);
	cJSON_ArrayForEach(it, arr)
	{
		char *id = jsonx_as_id(it);
		if (id)
			strvec_push(out, id);
		else if (cJSON_IsString(it))
			strvec_push(out, it->valuestring);
		free(id);
	}
}

static void set_def(struct step *s, const cJSON *def)
{
	cJSON_Delete(s->def);
	s->def = cJSON_Duplicate(def, 1);
	strings_of(&s->deps, cJSON_GetObjectItemCaseSensitive(def, "dependencies"));
	strings_of(&s->crit, cJSON_GetObjectItemCaseSensitive(def, "acceptance_criteria"));
}

static bool has(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* Marks every step of the adopted plan that depends, transitively, on `root` (not root
 * itself) in `out`, indexed like c->steps. */
static void dependents(const struct jcheck *c, const char *root, bool *out)
{
	struct strvec reach = STRVEC_INIT;
	bool grew = true;

	memset(out, 0, c->n_steps * sizeof(*out));
	strvec_push(&reach, root);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < c->n_steps; i++) {
			struct step *s = c->steps[i];
			if (!s->in_plan || out[i] || !strcmp(s->id, root))
				continue;
			for (size_t d = 0; d < s->deps.n; d++) {
				if (has(&reach, s->deps.v[d])) {
					out[i] = grew = true;
					strvec_push(&reach, s->id);
					break;
				}
			}
		}
	}
	strvec_clear(&reach);
}

static struct gate *find_gate(struct jcheck *c, unsigned long id)
{
	for (size_t i = 0; i < c->n_gates; i++)
		if (c->gates[i].id == id)
			return &c->gates[i];
	return NULL;
}

static void drop_gate(struct jcheck *c, struct gate *g)
{
	free(g->kind);
	free(g->step_id);
	*g = c->gates[--c->n_gates];
}

/* ------------------------------------------------------------ the checks */

/*
 * Y (or its input) changed at event `at`: the passed transitive dependents of `root` owe
 * a stale, the running ones a restart, and gates of dependents must be withdrawn.
 */
static void invalidate_from(struct jcheck *c, const char *root, size_t at)
{
	bool *dep = xcalloc(c->n_steps + 1, sizeof(*dep));

	dependents(c, root, dep);
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		if (!dep[i])
			continue;
		s->released = true;
		if (s->state == JS_PASSED && !s->invalid && !s->owes_stale)
			s->owes_stale = at;
		if (s->attempt_open || s->state == JS_RUNNING || s->state == JS_VERIFYING)
			if (!s->must_restart)
				s->must_restart = at;
		for (size_t g = 0; g < c->n_gates; g++) {
			struct gate *gt = &c->gates[g];
			if (eq(gt->step_id, s->id) && !gt->must_withdraw &&
			    (eq(gt->kind, "high") || eq(gt->kind, "step") || eq(gt->kind, "shell")))
				gt->must_withdraw = at;
		}
	}
	free(dep);
}

/* The operator touched `id`: it and its dependents may change state after a resume. */
static void release_from(struct jcheck *c, const char *id)
{
	bool *dep = xcalloc(c->n_steps + 1, sizeof(*dep));
	struct step *s = find_step(c, id);

	if (s)
		s->released = true;
	dependents(c, id, dep);
	for (size_t i = 0; i < c->n_steps; i++)
		if (dep[i])
			c->steps[i]->released = true;
	free(dep);
}

/* No step may still owe a stale at `at` (run.final, run.end, run.resume). */
static void check_no_debts(struct jcheck *c, size_t at, const char *what)
{
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		if (s->owes_stale && s->in_plan) {
			fail2(c, JC_STALE, at, s->owes_stale,
			      "%s while %s still holds a pass although an input changed", what,
			      s->id);
			s->owes_stale = 0;
		}
	}
}

/* X is about to use its inputs (starts, or passes by reuse) at event `at`. */
static void check_inputs(struct jcheck *c, struct step *x, size_t at, const char *what)
{
	for (size_t d = 0; d < x->deps.n; d++) {
		struct step *dep = plan_step(c, x->deps.v[d]);
		if (!dep) {
			fail2(c, JC_DEPS, at, 0, "%s of %s, whose dependency %s is not in the plan",
			      what, x->id, x->deps.v[d]);
			continue;
		}
		if (!settled(dep->state))
			fail2(c, JC_DEPS, at, dep->last_end ? dep->last_end : dep->last_start,
			      "%s of %s while its dependency %s is %s", what, x->id, dep->id,
			      state_names[dep->state]);
		else if (dep->invalid)
			fail2(c, JC_DEPS, at, dep->last_change,
			      "%s of %s while its dependency %s was changed after it settled", what,
			      x->id, dep->id);
		if (dep->owes_stale)
			fail2(c, JC_STALE, at, dep->owes_stale,
			      "%s of %s while its input %s still holds a pass that a change made "
			      "stale",
			      what, x->id, dep->id);
	}
}

static bool criterion_ok(const cJSON *list, const char *want, const char **why)
{
	const cJSON *it;

	*why = "is missing";
	cJSON_ArrayForEach(it, list)
	{
		const char *name = jsonx_str(it, "criterion");
		bool passed = false, nj = false;
		if (!name)
			continue;
		if (strcmp(name, want) && strcasecmp(name, want))
			continue;
		jsonx_bool(it, "not_judged", &nj);
		jsonx_bool(it, "passed", &passed);
		if (nj) {
			*why = "is not judged";
			return false;
		}
		if (!passed) {
			*why = "did not pass";
			return false;
		}
		return true;
	}
	return false;
}

static void on_verdict(struct jcheck *c, const cJSON *ev, size_t at)
{
	struct step *x = find_step(c, str_of(ev, "step_id"));
	const char *stage = str_of(ev, "stage"), *action = str_of(ev, "action");
	const struct strvec *crit;
	bool overall = false;

	if (!x) {
		fail2(c, JC_SHAPE, at, 0, "verdict for a step no plan holds");
		return;
	}
	if (!eq(stage, "model")) {
		if (!eq(action, "pass"))
			x->attempt_open = false;
		x->retrying = eq(action, "retry");
		if (!eq(action, "pass"))
			x->in_flight = 0; /* the job retries (a new start) or returns */
		return;
	}
	x->attempt_open = false;
	x->in_flight = 0;
	x->verdict = at;
	x->retrying = eq(action, "retry");
	if (!eq(action, "pass"))
		return;
	x->pass_verdict = true;
	jsonx_bool(ev, "overall_pass", &overall);
	if (!overall)
		fail2(c, JC_CRITERIA, at, 0, "model verdict for %s passes with overall_pass false",
		      x->id);
	crit = x->have_start_crit ? &x->start_crit : &x->crit;
	for (size_t i = 0; i < crit->n; i++) {
		const char *why;
		if (!criterion_ok(cJSON_GetObjectItemCaseSensitive(ev, "criteria"), crit->v[i],
		                  &why))
			fail2(c, JC_CRITERIA, at, x->last_start,
			      "model verdict for %s passes but criterion \"%s\" %s", x->id,
			      crit->v[i], why);
	}
}

static void on_start(struct jcheck *c, const cJSON *ev, size_t at)
{
	const char *id = str_of(ev, "step_id");
	struct step *x = plan_step(c, id);

	if (!x) {
		fail2(c, JC_DEPS, at, 0, "step.start of %s, which is not in the adopted plan",
		      id ? id : "(no id)");
		return;
	}
	if (c->paused && !x->retrying) {
		if (c->pause_allow > 0)
			c->pause_allow--;
		else
			fail2(c, JC_PAUSE, at, 0, "%s started while the run is paused", x->id);
	}
	if (x->in_flight && !x->retrying)
		fail2(c, JC_STALE, at, x->in_flight,
		      "%s starts while an earlier job of it still runs (no verdict, step.end or "
		      "step_cancelled since its step.start)",
		      x->id);
	x->retrying = false;
	x->in_flight = at;
	check_inputs(c, x, at, "step.start");
	if (settled(x->state) && !x->invalid && !x->rerun_asked)
		fail2(c, x->settled_at_resume && !x->released ? JC_RESUME : JC_STALE, at,
		      x->last_end, "%s runs again although it is %s and nothing made it stale",
		      x->id, state_names[x->state]);
	x->state = JS_RUNNING;
	x->invalid = false;
	x->attempt_open = true;
	x->last_start = at;
	x->pass_verdict = false;
	x->must_restart = 0;
	x->owes_stale = 0;
	strvec_clear(&x->start_crit);
	for (size_t i = 0; i < x->crit.n; i++)
		strvec_push(&x->start_crit, x->crit.v[i]);
	x->have_start_crit = true;
}

/* gate-isolation: X's passing step.end follows its verdict with nothing else of X in
 * between. */
static void check_direct(struct jcheck *c, struct step *x, size_t at)
{
	if (!x->verdict)
		return;
	for (size_t i = x->verdict; i + 1 < at; i++) {
		const cJSON *e = c->evs[i];
		const char *type = str_of(e, "type");
		if (eq(type, "run.resume") || eq(type, "run.start") || eq(type, "run.reopen"))
			return; /* a new process finished it: not a turn of the loop */
		if (eq(str_of(e, "step_id"), x->id) && !eq(type, "step.state") &&
		    !eq(type, "notice")) {
			fail2(c, JC_GATES, at, i + 1,
			      "%s's step.end does not follow its passing verdict directly", x->id);
			return;
		}
	}
}

static void on_end(struct jcheck *c, const cJSON *ev, size_t at)
{
	const char *id = str_of(ev, "step_id"), *status = str_of(ev, "status");
	struct step *x = find_step(c, id);
	int st = state_from_name(status);
	bool reused = false;

	if (!x) {
		fail2(c, JC_SHAPE, at, 0, "step.end of %s, which no plan holds",
		      id ? id : "(no id)");
		return;
	}
	if (st < 0 || !settled((enum jcheck_state)st)) {
		fail2(c, JC_SHAPE, at, 0, "step.end of %s with status \"%s\"", x->id,
		      status ? status : "(none)");
		return;
	}
	jsonx_bool(ev, "reused", &reused);
	if (!x->in_plan) {
		/* A step a replan dropped, ending its last attempt: nothing to judge. */
	} else if (st == JS_PASSED && reused) {
		check_inputs(c, x, at, "reused step.end passed");
	} else if (st == JS_PASSED) {
		if (!x->pass_verdict)
			fail2(c, JC_CRITERIA, at, x->last_start,
			      "%s passed without a passing model verdict since its step.start",
			      x->id);
		else
			check_direct(c, x, at);
		if (x->last_change && x->last_start < x->last_change)
			fail2(c, JC_STALE, at, x->last_change,
			      "%s passed from an attempt that began before its definition changed",
			      x->id);
		if (x->must_restart)
			fail2(c, JC_STALE, at, x->must_restart,
			      "%s passed from an attempt that was running when an input changed",
			      x->id);
		for (size_t d = 0; d < x->deps.n; d++) {
			struct step *dep = plan_step(c, x->deps.v[d]);
			if (dep && dep->last_good_end > x->last_start)
				fail2(c, JC_STALE, at, dep->last_good_end,
				      "%s passed from an attempt that began before its input %s "
				      "ended again",
				      x->id, dep->id);
		}
	}
	x->state = (enum jcheck_state)st;
	x->last_end = at;
	if (st != JS_SKIPPED)
		x->last_good_end = at;
	x->invalid = false;
	x->attempt_open = false;
	x->owes_stale = 0;
	x->must_restart = 0;
	x->rerun_asked = false;
	x->pass_verdict = false;
	x->retrying = false;
	x->in_flight = 0;
}

static void on_state(struct jcheck *c, const cJSON *ev, size_t at)
{
	const char *id = str_of(ev, "step_id"), *name = str_of(ev, "state");
	const char *cause = str_of(ev, "cause");
	struct step *x;
	int st = state_from_name(name);

	if (!id || st < 0) {
		fail2(c, JC_SHAPE, at, 0, "step.state of %s to \"%s\"", id ? id : "(no id)",
		      name ? name : "(none)");
		return;
	}
	/* A proposal's steps may be announced before the plan is adopted. */
	x = get_step(c, id);
	if (!settled((enum jcheck_state)st) && settled(x->state) && x->settled_at_resume &&
	    !x->released)
		fail2(c, JC_RESUME, at, x->last_end,
		      "%s was %s at the resume and became %s with nothing touching it", x->id,
		      state_names[x->state], name);
	x->state = (enum jcheck_state)st;
	if (st != JS_RUNNING && st != JS_VERIFYING) /* the attempt is over, or void */
		x->attempt_open = x->retrying = x->pass_verdict = false;
	if (settled((enum jcheck_state)st)) {
		x->last_end = at;
		if (st != JS_SKIPPED)
			x->last_good_end = at;
		x->invalid = false;
	} else {
		x->owes_stale = 0;
	}
	if (st == JS_STALE) {
		x->released = true;
		invalidate_from(c, x->id, at);
		if (cause && strcmp(cause, x->id))
			invalidate_from(c, cause, at);
	}
}

static void on_edit(struct jcheck *c, const cJSON *ev, size_t at)
{
	const char *id = str_of(ev, "step_id");
	const cJSON *after = cJSON_GetObjectItemCaseSensitive(ev, "after");
	cJSON *steps = c->proposal ? cJSON_GetObjectItemCaseSensitive(c->proposal, "steps") : NULL;
	cJSON *it;
	struct step *x;

	/* At a plan or replan gate an edit changes the proposal, not the plan in force. */
	cJSON_ArrayForEach(it, steps)
	{
		if (!eq(jsonx_str(it, "step_id"), id))
			continue;
		if (cJSON_IsObject(after))
			cJSON_ReplaceItemViaPointer(steps, it, cJSON_Duplicate(after, 1));
		return;
	}
	x = plan_step(c, id);
	if (!x) {
		fail2(c, JC_SHAPE, at, 0, "step.edit of %s, which no plan holds",
		      id ? id : "(no id)");
		return;
	}
	if (cJSON_IsObject(after))
		set_def(x, after);
	x->last_change = at;
	x->released = true;
	x->rerun_asked = true;
	if (settled(x->state))
		x->invalid = true;
	invalidate_from(c, x->id, at);
}

/* plan.adopted: the kept steps must really be unchanged; the rest loses its pass. */
static void on_adopted(struct jcheck *c, const cJSON *ev, size_t at)
{
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(ev, "plan");
	const cJSON *steps, *it;
	struct strvec kept = STRVEC_INIT;
	bool *changed, *in_new;

	if (!cJSON_IsObject(plan))
		plan = c->proposal;
	steps = cJSON_GetObjectItemCaseSensitive(plan, "steps");
	strings_of(&kept, cJSON_GetObjectItemCaseSensitive(ev, "kept"));
	/* Create every step first, so indexes below cover them all. */
	cJSON_ArrayForEach(it, steps)
		if (jsonx_str(it, "step_id"))
			get_step(c, jsonx_str(it, "step_id"));
	changed = xcalloc(c->n_steps + 1, sizeof(*changed));
	in_new = xcalloc(c->n_steps + 1, sizeof(*in_new));
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		const cJSON *def = NULL;
		cJSON_ArrayForEach(it, steps)
			if (eq(jsonx_str(it, "step_id"), s->id))
				def = it;
		if (!def)
			continue;
		in_new[i] = true;
		changed[i] = !s->in_plan || !s->def || !cJSON_Compare(s->def, def, true);
	}
	/* kept: settled, unchanged, and every transitive input unchanged and kept or not
	 * settled. Judged against the new definitions of the inputs. */
	for (size_t k = 0; k < kept.n; k++) {
		struct step *s = find_step(c, kept.v[k]);
		size_t si = 0;
		if (!s) {
			fail2(c, JC_STALE, at, 0, "plan.adopted keeps %s, which it does not hold",
			      kept.v[k]);
			continue;
		}
		while (c->steps[si] != s)
			si++;
		if (!in_new[si] || changed[si] || !settled(s->state) || s->invalid) {
			fail2(c, JC_STALE, at, s->last_end,
			      "plan.adopted keeps %s although it %s", s->id,
			      !in_new[si] ? "is not in the plan"
			      : changed[si] ? "changed"
					    : "is not settled");
			continue;
		}
		/* Its inputs, under the new plan's dependencies. */
		{
			struct strvec todo = STRVEC_INIT, seen = STRVEC_INIT;
			const cJSON *def = NULL;
			cJSON_ArrayForEach(it, steps)
				if (eq(jsonx_str(it, "step_id"), s->id))
					def = it;
			strings_of(&todo, cJSON_GetObjectItemCaseSensitive(def, "dependencies"));
			while (todo.n) {
				char *d = todo.v[--todo.n];
				struct step *ds = find_step(c, d);
				size_t di = 0;
				if (!has(&seen, d) && ds) {
					strvec_push(&seen, d);
					while (c->steps[di] != ds)
						di++;
					if (in_new[di] && (changed[di] || (settled(ds->state) &&
									  !has(&kept, d))))
						fail2(c, JC_STALE, at, 0,
						      "plan.adopted keeps %s although its input %s "
						      "changed or lost its pass",
						      s->id, d);
					cJSON_ArrayForEach(it, steps)
						if (eq(jsonx_str(it, "step_id"), d)) {
							struct strvec more = STRVEC_INIT;
							strings_of(&more,
								   cJSON_GetObjectItemCaseSensitive(
									   it, "dependencies"));
							for (size_t m = 0; m < more.n; m++)
								strvec_push(&todo, more.v[m]);
							strvec_clear(&more);
						}
				}
				free(d);
			}
			strvec_clear(&todo);
			strvec_clear(&seen);
		}
	}
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		if (!in_new[i]) {
			s->in_plan = false;
			continue;
		}
		cJSON_ArrayForEach(it, steps)
			if (eq(jsonx_str(it, "step_id"), s->id))
				set_def(s, it);
		s->in_plan = true;
		if (changed[i])
			s->last_change = at;
		if (settled(s->state) &&
		    (changed[i] || (s->state == JS_PASSED && !has(&kept, s->id)))) {
			s->invalid = true;
			s->released = true;
		}
		/* Read as fold.c reads it: a step the adoption does not keep starts over as
		 * pending, though no step.state says so (doc/events.md is silent here). */
		if (!has(&kept, s->id)) {
			s->state = JS_PENDING;
			s->invalid = false;
		}
	}
	free(changed);
	free(in_new);
	strvec_clear(&kept);
	cJSON_Delete(c->proposal);
	c->proposal = NULL;
}

static void set_cap(struct jcheck *c, double cap)
{
	c->cap = cap;
	/* A cap set below what is spent cannot undo the spend: count from there. */
	if (cap > 0 && (cap > c->base || c->spent > c->base))
		c->base = cap > c->spent ? cap : c->spent;
	if (cap <= 0 || cap > c->spent)
		c->over = 0;
}

static void read_policy(struct jcheck *c, const cJSON *ev)
{
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(ev, "policy");
	double d;

	if (jsonx_num(pol, "parallel", &d) && d >= 1)
		c->parallel = (int)d;
	if (jsonx_num(pol, "budget_usd", &d))
		set_cap(c, d);
	else if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(pol, "budget_usd")))
		set_cap(c, 0);
}

static void on_call(struct jcheck *c, const cJSON *ev, size_t at)
{
	double cost = 0, before = c->spent;
	int m = c->parallel + 1;

	if (!jsonx_num(ev, "cost_usd", &cost) || cost <= 0)
		return;
	c->spent += cost;
	if (cost > c->c_max)
		c->c_max = cost;
	if (c->cap <= 0)
		return;
	if (before >= c->cap - 1e-12 && ++c->over > m)
		fail2(c, JC_BUDGET, at, 0,
		      "call %d to complete after the spend ($%.4f) reached the cap ($%.4f): at "
		      "most %d can have been in flight",
		      c->over, before, c->cap, m);
	if (c->spent > c->base + m * c->c_max + 1e-9)
		fail2(c, JC_BUDGET, at, 0,
		      "spend $%.4f exceeds the highest cap $%.4f plus %d calls of at most $%.4f",
		      c->spent, c->base, m, c->c_max);
}

static void on_gate_open(struct jcheck *c, const cJSON *ev, size_t at)
{
	struct gate g = {0};
	double id = 0;

	jsonx_num(ev, "gate_id", &id);
	g.id = (unsigned long)id;
	g.kind = xstrdup(str_of(ev, "gate"));
	g.step_id = xstrdup(str_of(ev, "step_id"));
	g.open = at;
	c->gates = xgrow(c->gates, &c->cap_gates, c->n_gates + 1, sizeof(*c->gates));
	c->gates[c->n_gates++] = g;
}

static void on_gate_decision(struct jcheck *c, const cJSON *ev, size_t at)
{
	double id = 0, cap;
	const char *d = str_of(ev, "decision");
	struct gate *g;

	jsonx_num(ev, "gate_id", &id);
	g = find_gate(c, (unsigned long)id);
	if (!g) {
		fail2(c, JC_SHAPE, at, 0, "decision for gate %lu, which is not open",
		      (unsigned long)id);
		return;
	}
	if (g->must_withdraw && !eq(d, "withdrawn"))
		fail2(c, JC_STALE, at, g->must_withdraw,
		      "the %s gate of %s was answered %s after an input changed: it should have "
		      "been withdrawn",
		      g->kind, g->step_id, d ? d : "(none)");
	if (eq(g->kind, "budget") && eq(d, "approve")) {
		if (jsonx_num(ev, "budget_usd", &cap))
			set_cap(c, cap);
		else
			set_cap(c, c->cap * 1.5);
	}
	drop_gate(c, g);
}

static void on_command(struct jcheck *c, const cJSON *ev)
{
	const char *cmd = str_of(ev, "command"), *id = str_of(ev, "step_id");
	double cap;

	if ((eq(cmd, "pause") || eq(cmd, "cancel_running")) && !c->paused) {
		c->paused = true;
		c->pause_allow = c->parallel - jcheck_busy(c);
	}
	else if (eq(cmd, "resume"))
		c->paused = false;
	else if (eq(cmd, "budget") && jsonx_num(ev, "budget_usd", &cap))
		set_cap(c, cap);
	if (id && (eq(cmd, "rerun") || eq(cmd, "edit") || eq(cmd, "skip"))) {
		struct step *s = find_step(c, id);
		if (s && !eq(cmd, "skip"))
			s->rerun_asked = true;
		release_from(c, id);
	}
}

static void on_final(struct jcheck *c, size_t at)
{
	check_no_debts(c, at, "run.final");
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		if (!s->in_plan)
			continue;
		if (!settled(s->state) || s->invalid) {
			fail2(c, JC_STALE, at, s->last_change,
			      "run.final while %s is %s%s", s->id, state_names[s->state],
			      s->invalid ? " but changed since" : "");
			continue;
		}
		if (s->state != JS_PASSED)
			continue;
		if (s->last_change > s->last_end)
			fail2(c, JC_STALE, at, s->last_change,
			      "run.final with %s passed before its last change", s->id);
		for (size_t d = 0; d < s->deps.n; d++) {
			struct step *dep = plan_step(c, s->deps.v[d]);
			if (dep && dep->last_good_end > s->last_end)
				fail2(c, JC_STALE, at, s->last_end,
				      "run.final with %s passed before its input %s last ended",
				      s->id, dep->id);
		}
	}
}

static void on_resume(struct jcheck *c, const cJSON *ev, size_t at)
{
	check_no_debts(c, at, "run.resume");
	read_policy(c, ev);
	/* The old process is gone: its gates, attempts, calls and pause with it. */
	for (size_t i = 0; i < c->n_gates; i++) {
		free(c->gates[i].kind);
		free(c->gates[i].step_id);
	}
	c->n_gates = 0;
	c->over = 0;
	c->paused = false;
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		s->attempt_open = false;
		s->in_flight = 0;
		s->must_restart = 0;
		s->settled_at_resume = s->in_plan && settled(s->state) && !s->invalid;
		s->released = false;
	}
}

/* Types allowed between a run.end and the next run.reopen. */
static bool allowed_after_end(const char *type)
{
	return eq(type, "run.reopen") || eq(type, "run.resume") || eq(type, "operator.command") ||
	       eq(type, "notice");
}

void jcheck_feed(struct jcheck *c, const cJSON *ev_in)
{
	cJSON *ev = cJSON_Duplicate(ev_in, 1);
	const char *type;
	unsigned long seq;
	size_t at;

	c->evs = xgrow(c->evs, &c->cap_evs, c->n_evs + 1, sizeof(*c->evs));
	c->evs[c->n_evs++] = ev;
	at = c->n_evs;
	type = str_of(ev, "type");
	seq = seq_of(ev);
	if (!type) {
		fail2(c, JC_SHAPE, at, 0, "an event without a type");
		return;
	}
	if (seq != c->last_seq + 1)
		fail2(c, JC_SHAPE, at, 0, "seq %lu follows seq %lu", seq, c->last_seq);
	c->last_seq = seq;

	if (!c->started && !eq(type, "run.start")) {
		fail2(c, JC_SEGMENTS, at, 0, "the journal does not begin with run.start");
		c->started = c->seg_open = true;
	}
	if (c->started && !c->seg_open && !allowed_after_end(type) && !eq(type, "run.start") &&
	    !eq(type, "run.end")) /* a second run.end has its own sentence below */
		fail2(c, JC_SEGMENTS, at, 0, "%s after run.end, before any run.reopen", type);

	if (eq(type, "run.start")) {
		if (c->started)
			fail2(c, JC_SEGMENTS, at, 0, "a second run.start");
		c->started = c->seg_open = true;
		read_policy(c, ev);
	} else if (eq(type, "run.resume")) {
		on_resume(c, ev, at);
	} else if (eq(type, "run.reopen")) {
		if (c->seg_open)
			fail2(c, JC_SEGMENTS, at, 0, "run.reopen inside an open segment");
		c->seg_open = true;
		c->final_seen = false;
	} else if (eq(type, "run.end")) {
		double code = -1;
		if (!c->seg_open)
			fail2(c, JC_SEGMENTS, at, 0, "run.end without a run.reopen since the last");
		for (size_t i = 0; i < c->n_gates; i++)
			fail2(c, JC_SEGMENTS, at, c->gates[i].open,
			      "run.end with the %s gate %lu still open", c->gates[i].kind,
			      c->gates[i].id);
		check_no_debts(c, at, "run.end");
		c->seg_open = false;
		for (size_t i = 0; i < c->n_steps; i++) { /* nothing runs on after the end */
			c->steps[i]->attempt_open = c->steps[i]->pass_verdict = false;
			c->steps[i]->in_flight = 0;
		}
		jsonx_num(ev, "exit_code", &code);
		c->last_exit = (int)code;
	} else if (eq(type, "run.final")) {
		if (c->final_seen)
			fail2(c, JC_SEGMENTS, at, 0, "a second run.final in one segment");
		c->final_seen = true;
		on_final(c, at);
	} else if (eq(type, "plan.proposed")) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(ev, "plan");
		cJSON_Delete(c->proposal);
		c->proposal = cJSON_IsObject(p) ? cJSON_Duplicate(p, 1) : NULL;
	} else if (eq(type, "plan.adopted")) {
		on_adopted(c, ev, at);
	} else if (eq(type, "gate.open")) {
		on_gate_open(c, ev, at);
	} else if (eq(type, "gate.decision")) {
		const char *k = str_of(ev, "gate"), *d = str_of(ev, "decision");
		on_gate_decision(c, ev, at);
		/* Answered without adopting: the proposal is void (skip keeps the old plan). */
		if ((eq(k, "plan") || eq(k, "replan")) && !eq(d, "approve") && !eq(d, "edit")) {
			cJSON_Delete(c->proposal);
			c->proposal = NULL;
		}
	} else if (eq(type, "step.start")) {
		on_start(c, ev, at);
	} else if (eq(type, "step.state")) {
		on_state(c, ev, at);
	} else if (eq(type, "step.end")) {
		on_end(c, ev, at);
	} else if (eq(type, "step.edit")) {
		on_edit(c, ev, at);
	} else if (eq(type, "verify.verdict")) {
		on_verdict(c, ev, at);
	} else if (eq(type, "llm.call")) {
		on_call(c, ev, at);
	} else if (eq(type, "operator.command")) {
		on_command(c, ev);
	} else if (eq(type, "notice") && eq(str_of(ev, "kind"), "step_cancelled")) {
		struct step *x = find_step(c, str_of(ev, "step_id"));
		if (x) { /* a job is gone (maybe an older one than the latest start) */
			x->attempt_open = false;
			x->in_flight = 0;
		}
	}
}

void jcheck_finish(struct jcheck *c)
{
	if (!c->started)
		jcheck_report(c, JC_SEGMENTS, 0, "the journal has no run.start");
	else if (c->seg_open)
		jcheck_report(c, JC_SEGMENTS, c->last_seq,
			      "the finished journal ends inside a segment (no run.end)");
}

/* ---------------------------------------------------------- life and output */

struct jcheck *jcheck_new(void)
{
	struct jcheck *c = xcalloc(1, sizeof(*c));

	c->parallel = 3;
	c->last_exit = -1;
	return c;
}

void jcheck_free(struct jcheck *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_evs; i++)
		cJSON_Delete(c->evs[i]);
	free(c->evs);
	for (size_t i = 0; i < c->n_steps; i++) {
		struct step *s = c->steps[i];
		free(s->id);
		cJSON_Delete(s->def);
		strvec_clear(&s->deps);
		strvec_clear(&s->crit);
		strvec_clear(&s->start_crit);
		free(s);
	}
	free(c->steps);
	cJSON_Delete(c->proposal);
	for (size_t i = 0; i < c->n_gates; i++) {
		free(c->gates[i].kind);
		free(c->gates[i].step_id);
	}
	free(c->gates);
	for (size_t i = 0; i < c->n_v; i++)
		free(c->v[i].msg);
	free(c->v);
	free(c->pub);
	free(c);
}

size_t jcheck_n_violations(const struct jcheck *c)
{
	return c->n_v;
}

const struct jcheck_violation *jcheck_violation(const struct jcheck *c, size_t i)
{
	return i < c->n_v ? &c->v[i] : NULL;
}

const cJSON *jcheck_event(const struct jcheck *c, unsigned long seq)
{
	for (size_t i = c->n_evs; i-- > 0;)
		if (seq_of(c->evs[i]) == seq)
			return c->evs[i];
	return NULL;
}

void jcheck_print(const struct jcheck *c, FILE *out, size_t max)
{
	for (size_t i = 0; i < c->n_v && i < max; i++) {
		const struct jcheck_violation *v = &c->v[i];
		fprintf(out, "  [%s] %s\n", inv_names[v->inv], v->msg);
		for (int k = 0; k < v->n_seqs; k++) {
			const cJSON *e = jcheck_event(c, v->seqs[k]);
			char *text = e ? jsonx_print(e) : xstrdup("(no such event)");
			char *cut = jsonx_snippet(text, 400);
			fprintf(out, "      #%lu %s\n", v->seqs[k], cut);
			free(cut);
			free(text);
		}
	}
	if (c->n_v > max)
		fprintf(out, "  … and %zu more\n", c->n_v - max);
}

unsigned long jcheck_last_seq(const struct jcheck *c)
{
	return c->last_seq;
}

size_t jcheck_n_events(const struct jcheck *c)
{
	return c->n_evs;
}

char *jcheck_plan_ids(const struct jcheck *c)
{
	struct strvec ids = STRVEC_INIT;
	char *out;

	for (size_t i = 0; i < c->n_steps; i++)
		if (c->steps[i]->in_plan)
			strvec_push(&ids, c->steps[i]->id);
	out = strvec_join(&ids, " ");
	strvec_clear(&ids);
	return out;
}

char *jcheck_states(const struct jcheck *c)
{
	struct strvec ids = STRVEC_INIT;
	char *out;

	for (size_t i = 0; i < c->n_steps; i++)
		if (c->steps[i]->in_plan)
			strvec_pushf(&ids, "%s=%s", c->steps[i]->id,
			             state_names[c->steps[i]->state]);
	out = strvec_join(&ids, " ");
	strvec_clear(&ids);
	return out;
}

int jcheck_step_state(const struct jcheck *c, const char *id)
{
	const struct step *s = find_step(c, id);

	return s ? (int)s->state : -1;
}

const cJSON *jcheck_step_def(const struct jcheck *c, const char *id)
{
	const cJSON *it;
	const struct step *s;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(c->proposal, "steps"))
		if (eq(jsonx_str(it, "step_id"), id))
			return it;
	s = plan_step(c, id);
	return s ? s->def : NULL;
}

const cJSON *jcheck_proposal(const struct jcheck *c)
{
	return c->proposal;
}

size_t jcheck_n_gates(const struct jcheck *c)
{
	return c->n_gates;
}

const struct jcheck_gate *jcheck_gate(const struct jcheck *c, size_t i)
{
	struct jcheck *m = (struct jcheck *)c;

	if (i >= c->n_gates)
		return NULL;
	/* A view of the private gate, so the header need not show its bookkeeping. */
	m->pub = xgrow(m->pub, &m->cap_pub, c->n_gates, sizeof(*m->pub));
	m->pub[i].id = c->gates[i].id;
	m->pub[i].kind = c->gates[i].kind;
	m->pub[i].step_id = c->gates[i].step_id;
	return &m->pub[i];
}

int jcheck_busy(const struct jcheck *c)
{
	int n = 0;

	for (size_t i = 0; i < c->n_steps; i++)
		n += c->steps[i]->attempt_open;
	return n;
}

char *jcheck_busy_ids(const struct jcheck *c, const char *except)
{
	struct strvec ids = STRVEC_INIT;
	char *out;

	for (size_t i = 0; i < c->n_steps; i++)
		if ((c->steps[i]->attempt_open ||
		     (c->steps[i]->pass_verdict && !settled(c->steps[i]->state))) &&
		    !eq(c->steps[i]->id, except))
			strvec_push(&ids, c->steps[i]->id);
	out = strvec_join(&ids, " ");
	strvec_clear(&ids);
	return out;
}

bool jcheck_pass_pending(const struct jcheck *c)
{
	for (size_t i = 0; i < c->n_steps; i++)
		if (c->steps[i]->pass_verdict && !settled(c->steps[i]->state))
			return true;
	return false;
}

bool jcheck_paused(const struct jcheck *c)
{
	return c->paused;
}

bool jcheck_started(const struct jcheck *c)
{
	return c->started;
}

bool jcheck_segment_open(const struct jcheck *c)
{
	return c->seg_open;
}

double jcheck_spent(const struct jcheck *c)
{
	return c->spent;
}

double jcheck_cap(const struct jcheck *c)
{
	return c->cap;
}

int jcheck_last_exit(const struct jcheck *c)
{
	return c->last_exit;
}
