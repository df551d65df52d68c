/* mgen — seeded random cases for the model test. */
#include "config.h"

#include "mgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

/* ------------------------------------------------------------------ the PRNG */

static uint64_t splitmix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void mgen_rng_seed(struct mgen_rng *r, uint64_t seed)
{
	r->s = splitmix(seed);
	if (!r->s)
		r->s = 0x2545f4914f6cdd1dULL; /* xorshift never leaves zero */
}

uint64_t mgen_rng_next(struct mgen_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

unsigned mgen_rng_below(struct mgen_rng *r, unsigned n)
{
	return n ? (unsigned)((mgen_rng_next(r) >> 11) % n) : 0;
}

bool mgen_rng_chance(struct mgen_rng *r, unsigned percent)
{
	return mgen_rng_below(r, 100) < percent;
}

uint64_t mgen_case_seed(uint64_t base, unsigned i)
{
	return splitmix(base * 0x100000001b3ULL + i) & 0xffffffffffffULL; /* short to type */
}

static const char *const action_names[MGEN__COUNT] = {
	[MGEN_APPROVE] = "approve",
	[MGEN_REJECT] = "reject",
	[MGEN_SKIP_GATE] = "skip-gate",
	[MGEN_EDIT_AT_GATE] = "edit-at-gate",
	[MGEN_EDIT] = "edit",
	[MGEN_RERUN] = "rerun",
	[MGEN_RERUN_FORCE] = "rerun-force",
	[MGEN_SKIP_STEP] = "skip-step",
	[MGEN_PAUSE] = "pause",
	[MGEN_RESUME] = "resume",
	[MGEN_CANCEL_RUNNING] = "cancel-running",
	[MGEN_BUDGET] = "budget",
	[MGEN_QUIT_RESUME] = "quit+resume",
};

/* gate_kind_name lives with the engine; the generator stays free of it. */
static const char *const gate_names[GATE__COUNT] = {
	[GATE_PLAN] = "plan",     [GATE_HIGH] = "high",     [GATE_REPLAN] = "replan",
	[GATE_SHELL] = "shell",   [GATE_BUDGET] = "budget", [GATE_STEP] = "step",
	[GATE_MCP] = "mcp",
};

const char *mgen_action_name(enum mgen_action a)
{
	return a >= 0 && a < MGEN__COUNT ? action_names[a] : "?";
}

/* ------------------------------------------------------------ the plan */

/* What the script makes of a step, kept for the description and the revisions. */
struct gstep {
	int n_deps, deps[4];
	int n_crit;
	const char *cx;
	char verdicts[8]; /* P pass all, M pass missing a criterion, R retry, X replan */
	char attempts[4]; /* N tool failure with a note, B bare tool failure, O ok */
	bool risky;
};

static cJSON *strings_array(int n, const char *const *v)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static char *criterion_text(int step, int k)
{
	static const char *const what[] = {
		"the figures are sourced", "the summary names every input",
		"the output file is written", "the totals reconcile", "no claim is unsupported",
	};
	return xasprintf("s%d-c%d: %s", step, k, what[(step + k) % 5]);
}

static cJSON *step_json(const struct gstep *g, int i, int revision)
{
	cJSON *s = cJSON_CreateObject(), *deps = cJSON_CreateArray(), *crit = cJSON_CreateArray();
	char *id = xasprintf("s%d", i), *name = xasprintf("Part %d", i), *desc;

	if (revision && g->risky)
		desc =
		    xasprintf("Do part %d of the task (revision %d: another route).", i, revision);
	else
		desc = xasprintf("Do part %d of the task.", i);
	cJSON_AddStringToObject(s, "step_id", id);
	cJSON_AddStringToObject(s, "name", name);
	cJSON_AddStringToObject(s, "description", desc);
	cJSON_AddItemToObject(s, "actions", cJSON_CreateArray());
	for (int k = 1; k <= g->n_crit; k++) {
		char *t = criterion_text(i, k);
		cJSON_AddItemToArray(crit, cJSON_CreateString(t));
		free(t);
	}
	cJSON_AddItemToObject(s, "acceptance_criteria", crit);
	{
		char *out = xasprintf("s%d.md", i);
		const char *outs[] = {out};
		cJSON_AddItemToObject(s, "expected_outputs", strings_array(1, outs));
		free(out);
	}
	for (int d = 0; d < g->n_deps; d++) {
		char *dep = xasprintf("s%d", g->deps[d]);
		cJSON_AddItemToArray(deps, cJSON_CreateString(dep));
		free(dep);
	}
	cJSON_AddItemToObject(s, "dependencies", deps);
	cJSON_AddStringToObject(s, "estimated_complexity", g->cx);
	free(id);
	free(name);
	free(desc);
	return s;
}

static cJSON *plan_json(const struct gstep *g, int n, int revision)
{
	cJSON *p = cJSON_CreateObject(), *steps = cJSON_CreateArray();
	static const char *const sc[] = {"every part is done and checked"};

	cJSON_AddStringToObject(p, "goal", "Answer the scripted task from its parts");
	cJSON_AddStringToObject(p, "context",
				revision ? "revised after a failed step" : "model test plan");
	for (int i = 1; i <= n; i++)
		cJSON_AddItemToArray(steps, step_json(&g[i], i, revision));
	cJSON_AddItemToObject(p, "steps", steps);
	cJSON_AddItemToObject(p, "success_criteria", strings_array(1, sc));
	cJSON_AddStringToObject(p, "rollback_strategy", "discard the workspace");
	return p;
}

/* A verdict of kind P, M, R or X for step i. */
static cJSON *verdict_json(const struct gstep *g, int i, char kind, struct mgen_rng *r)
{
	cJSON *v = cJSON_CreateObject(), *list = cJSON_CreateArray();
	bool pass = kind == 'P' || kind == 'M';
	int left_out = kind == 'M' ? 1 + (int)mgen_rng_below(r, (unsigned)g->n_crit) : 0;

	cJSON_AddBoolToObject(v, "overall_pass", pass);
	for (int k = 1; k <= g->n_crit; k++) {
		cJSON *c;
		char *t;
		if (k == left_out)
			continue; /* the verifier forgot this one */
		c = cJSON_CreateObject();
		t = criterion_text(i, k);
		cJSON_AddStringToObject(c, "criterion", t);
		cJSON_AddBoolToObject(c, "passed", pass || k > 1);
		cJSON_AddStringToObject(c, "evidence",
		                        pass || k > 1 ? "shown in the file" : "absent");
		cJSON_AddNumberToObject(c, "confidence", 0.9);
		cJSON_AddStringToObject(c, "feedback",
		                        pass || k > 1 ? "" : "cite where it comes from");
		cJSON_AddItemToArray(list, c);
		free(t);
	}
	cJSON_AddItemToObject(v, "criteria_results", list);
	cJSON_AddStringToObject(v, "action", pass ? "pass" : kind == 'R' ? "retry" : "replan");
	cJSON_AddStringToObject(v, "feedback_for_executor",
	                        pass ? ""
	                        : kind == 'R'
	                            ? "Criterion 1 is not met: cite the source of each figure."
	                            : "This route cannot work: the source does not exist.");
	cJSON_AddStringToObject(v, "severity", pass ? "minor" : kind == 'R' ? "major" : "critical");
	return v;
}

/* An executor attempt: N or B read a missing file first (N says so in its notes), O does
 * not; all write {{step_id}}.md and claim it. */
static cJSON *attempt_json(char kind)
{
	cJSON *a = cJSON_CreateObject(), *rounds = cJSON_AddArrayToObject(a, "rounds");
	cJSON *fin = cJSON_CreateObject(), *out, *arts;

	if (kind != 'O') {
		cJSON *round = cJSON_CreateObject(), *calls, *call, *in;
		cJSON_AddStringToObject(round, "text", "Reading the notes first.");
		calls = cJSON_AddArrayToObject(round, "tool_calls");
		call = cJSON_CreateObject();
		cJSON_AddStringToObject(call, "name", "read_file");
		in = cJSON_AddObjectToObject(call, "input");
		cJSON_AddStringToObject(in, "path", "missing-{{step_id}}.txt");
		cJSON_AddItemToArray(calls, call);
		cJSON_AddItemToArray(rounds, round);
	}
	{
		cJSON *round = cJSON_CreateObject(), *calls, *call, *in;
		cJSON_AddStringToObject(round, "text", "Writing the result.");
		calls = cJSON_AddArrayToObject(round, "tool_calls");
		call = cJSON_CreateObject();
		cJSON_AddStringToObject(call, "name", "write_file");
		in = cJSON_AddObjectToObject(call, "input");
		cJSON_AddStringToObject(in, "path", "{{step_id}}.md");
		cJSON_AddStringToObject(in, "content",
		                        "# {{step_id}}\n\nAttempt {{attempt}}: done.\n");
		cJSON_AddItemToArray(calls, call);
		cJSON_AddItemToArray(rounds, round);
	}
	cJSON_AddStringToObject(fin, "reasoning", "Did the part and wrote it down.");
	cJSON_AddItemToObject(fin, "actions_taken", cJSON_CreateArray());
	out = cJSON_AddObjectToObject(fin, "step_output");
	cJSON_AddStringToObject(out, "findings", "Part {{step_id}} is in {{step_id}}.md.");
	arts = cJSON_AddArrayToObject(out, "artifacts");
	cJSON_AddItemToArray(arts, cJSON_CreateString("{{step_id}}.md"));
	cJSON_AddBoolToObject(out, "meets_criteria", 1);
	cJSON_AddNumberToObject(fin, "confidence", 0.9);
	cJSON_AddStringToObject(fin, "notes",
				kind == 'N' ? "read_file failed: missing-{{step_id}}.txt does not "
					      "exist, and the result stands without it."
					    : "");
	cJSON_AddItemToObject(a, "final", fin);
	return a;
}

/* ---------------------------------------------------------- the schedule */

static void push_entry(struct mgen_case *c, size_t *cap, struct mgen_entry e)
{
	c->schedule = xgrow(c->schedule, cap, c->n_schedule + 1, sizeof(*c->schedule));
	c->schedule[c->n_schedule++] = e;
}

static enum mgen_action pick(struct mgen_rng *r, const int *weights, const enum mgen_action *acts,
			     int n)
{
	int total = 0, x;

	for (int i = 0; i < n; i++)
		total += weights[i];
	x = (int)mgen_rng_below(r, (unsigned)total);
	for (int i = 0; i < n; i++) {
		if (x < weights[i])
			return acts[i];
		x -= weights[i];
	}
	return acts[n - 1];
}

static void make_schedule(struct mgen_case *c, struct mgen_rng *r, bool any_high, bool any_risky)
{
	enum gate_kind kinds[GATE__COUNT];
	int n_kinds = 0, n_entries;
	unsigned long horizon = (unsigned long)c->n_steps * 10 + 15;
	size_t cap = 0;

	if (c->gates & GATE_MASK(GATE_PLAN))
		kinds[n_kinds++] = GATE_PLAN;
	if ((c->gates & GATE_MASK(GATE_HIGH)) && any_high)
		kinds[n_kinds++] = GATE_HIGH;
	if (c->gates & GATE_MASK(GATE_STEP))
		kinds[n_kinds++] = GATE_STEP;
	if ((c->gates & GATE_MASK(GATE_REPLAN)) && any_risky)
		kinds[n_kinds++] = GATE_REPLAN;
	if ((c->gates & GATE_MASK(GATE_BUDGET)) && c->budget_usd > 0)
		kinds[n_kinds++] = GATE_BUDGET;

	n_entries = mgen_rng_chance(r, 25) ? 0 : 1 + (int)mgen_rng_below(r, 6);
	for (int i = 0; i < n_entries; i++) {
		struct mgen_entry e = {0};
		e.step = 1 + (int)mgen_rng_below(r, (unsigned)c->n_steps);
		e.add_criterion = mgen_rng_chance(r, 30);
		e.budget_usd = 0.01 + mgen_rng_below(r, 200) / 1000.0;
		if (n_kinds && mgen_rng_chance(r, 45)) {
			e.trigger = MGEN_AT_GATE;
			e.gate = kinds[mgen_rng_below(r, (unsigned)n_kinds)];
			if (e.gate == GATE_BUDGET) {
				static const enum mgen_action a[] = {MGEN_APPROVE, MGEN_REJECT,
								     MGEN_QUIT_RESUME, MGEN_BUDGET};
				static const int w[] = {55, 10, 15, 20};
				e.action = pick(r, w, a, 4);
			} else {
				static const enum mgen_action a[] = {
				    MGEN_APPROVE, MGEN_EDIT_AT_GATE, MGEN_SKIP_GATE,
				    MGEN_REJECT,  MGEN_QUIT_RESUME,  MGEN_PAUSE,
				    MGEN_RERUN,   MGEN_EDIT};
				static const int w[] = {30, 25, 15, 5, 10, 5, 5, 5};
				e.action = pick(r, w, a, 8);
			}
		} else {
			static const enum mgen_action a[] = {
			    MGEN_EDIT,  MGEN_RERUN,          MGEN_RERUN_FORCE, MGEN_SKIP_STEP,
			    MGEN_PAUSE, MGEN_CANCEL_RUNNING, MGEN_BUDGET,      MGEN_QUIT_RESUME};
			static const int w[] = {20, 14, 10, 8, 12, 8, 10, 18};
			e.trigger = MGEN_AFTER_EVENTS;
			e.after = 1 + mgen_rng_below(r, (unsigned)horizon);
			e.action = pick(r, w, a, 8);
		}
		push_entry(c, &cap, e);
		/* A pause always ends: the resume comes a little later (or when idle). */
		if (e.action == MGEN_PAUSE || e.action == MGEN_CANCEL_RUNNING) {
			struct mgen_entry res = {0};
			res.trigger = MGEN_AFTER_EVENTS;
			res.after = (e.trigger == MGEN_AFTER_EVENTS ? e.after : 0) + 1 +
				    mgen_rng_below(r, 20);
			res.action = MGEN_RESUME;
			push_entry(c, &cap, res);
		}
	}
}

/* ------------------------------------------------------------ the case */

void mgen_case_make(struct mgen_case *c, uint64_t seed)
{
	struct mgen_rng r;
	struct gstep *g;
	cJSON *planner, *executor, *verifier;
	bool any_high = false, any_risky = false;
	unsigned roll;

	memset(c, 0, sizeof(*c));
	c->seed = seed;
	mgen_rng_seed(&r, seed);

	/* Mostly small plans: they are fast and reach the interesting corners as often. */
	roll = mgen_rng_below(&r, 100);
	c->n_steps = roll < 60   ? 1 + (int)mgen_rng_below(&r, 5)
		     : roll < 88 ? 6 + (int)mgen_rng_below(&r, 7)
				 : 13 + (int)mgen_rng_below(&r, 18);
	c->parallel = 1 + (int)mgen_rng_below(&r, 4);
	c->max_retries = (int)mgen_rng_below(&r, 3);
	c->max_replans = (int)mgen_rng_below(&r, 3);
	c->budget_usd = mgen_rng_chance(&r, 35) ? 0.01 + mgen_rng_below(&r, 150) / 1000.0 : 0;
	c->linger = mgen_rng_chance(&r, 35);
	c->resume_keeps_cap = mgen_rng_chance(&r, 50);
	if (mgen_rng_chance(&r, 45))
		c->gates |= GATE_MASK(GATE_PLAN);
	if (mgen_rng_chance(&r, 45))
		c->gates |= GATE_MASK(GATE_HIGH);
	if (mgen_rng_chance(&r, 45))
		c->gates |= GATE_MASK(GATE_REPLAN);
	if (mgen_rng_chance(&r, 20))
		c->gates |= GATE_MASK(GATE_STEP);
	if (c->budget_usd > 0 && mgen_rng_chance(&r, 60))
		c->gates |= GATE_MASK(GATE_BUDGET);

	g = xcalloc((size_t)c->n_steps + 1, sizeof(*g));
	for (int i = 1; i <= c->n_steps; i++) {
		struct gstep *s = &g[i];
		unsigned want =
		    i > 1 ? mgen_rng_below(&r, 3) + (mgen_rng_chance(&r, 15) ? 1 : 0) : 0;
		unsigned cx = mgen_rng_below(&r, 100);

		/* Dependencies only on earlier steps: a DAG by construction. */
		for (unsigned k = 0; k < want && s->n_deps < 4; k++) {
			int d = 1 + (int)mgen_rng_below(&r, (unsigned)i - 1);
			bool dup = false;
			for (int m = 0; m < s->n_deps; m++)
				dup |= s->deps[m] == d;
			if (!dup)
				s->deps[s->n_deps++] = d;
		}
		s->n_crit = 1 + (int)mgen_rng_below(&r, 4);
		s->cx = cx < 55 ? "low" : cx < 85 ? "medium" : "high";
		any_high |= cx >= 85;
		if (mgen_rng_chance(&r, 45)) {
			int n = 1 + (int)mgen_rng_below(&r, 3);
			for (int k = 0; k < n; k++) {
				static const char kinds[] = "RRXMMP";
				s->verdicts[k] = kinds[mgen_rng_below(&r, 6)];
			}
			/* Most end passing; some never do (retries, replans, fail-accept). */
			s->verdicts[n] = mgen_rng_chance(&r, 82) ? 'P' : 'R';
			s->risky = true;
		}
		if (mgen_rng_chance(&r, 25)) {
			int n = 1 + (int)mgen_rng_below(&r, 2);
			for (int k = 0; k < n; k++)
				s->attempts[k] = mgen_rng_chance(&r, 50) ? 'N' : 'B';
			s->attempts[n] =
			    mgen_rng_chance(&r, 85) ? (mgen_rng_chance(&r, 50) ? 'O' : 'N') : 'B';
			s->risky = true;
		}
		any_risky |= s->risky;
	}

	c->script = cJSON_CreateObject();
	cJSON_AddStringToObject(c->script, "task", "model test task");
	cJSON_AddStringToObject(c->script, "about", "generated by tests/model/mgen.c");
	planner = cJSON_AddArrayToObject(c->script, "planner");
	/* Revision k changes the description of every step that may fail: the planner
	 * cannot know which of them failed first when steps run in parallel. */
	for (int rev = 0; rev <= 3; rev++)
		cJSON_AddItemToArray(planner, plan_json(g, c->n_steps, rev));
	executor = cJSON_AddObjectToObject(c->script, "executor");
	verifier = cJSON_AddObjectToObject(c->script, "verifier");
	for (int i = 1; i <= c->n_steps; i++) {
		char *id = xasprintf("s%d", i);
		if (g[i].verdicts[0]) {
			cJSON *list = cJSON_AddArrayToObject(verifier, id);
			for (int k = 0; g[i].verdicts[k]; k++)
				cJSON_AddItemToArray(list,
				                     verdict_json(&g[i], i, g[i].verdicts[k], &r));
		}
		if (g[i].attempts[0]) {
			cJSON *list = cJSON_AddArrayToObject(executor, id);
			for (int k = 0; g[i].attempts[k]; k++)
				cJSON_AddItemToArray(list, attempt_json(g[i].attempts[k]));
		}
		free(id);
	}
	make_schedule(c, &r, any_high, any_risky);
	free(g);
}

void mgen_case_release(struct mgen_case *c)
{
	cJSON_Delete(c->script);
	free(c->schedule);
	memset(c, 0, sizeof(*c));
}

char *mgen_case_describe(const struct mgen_case *c)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *plan = cJSON_GetArrayItem(cJSON_GetObjectItem(c->script, "planner"), 0);
	const cJSON *st;

	strbuf_init(&sb);
	strbuf_addf(&sb, "  policy: parallel %d, max_retries %d, max_replans %d, budget $%.3f, "
			 "gates",
		    c->parallel, c->max_retries, c->max_replans, c->budget_usd);
	for (int k = 0; k < GATE__COUNT; k++)
		if (c->gates & GATE_MASK(k))
			strbuf_addf(&sb, " %s", gate_names[k]);
	strbuf_addf(&sb, "%s%s\n", c->gates ? "" : " none", c->linger ? ", linger" : "");
	strbuf_adds(&sb, "  plan:");
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(plan, "steps"))
	{
		const cJSON *d;
		const char *id = cJSON_GetObjectItem(st, "step_id")->valuestring;
		strbuf_addf(&sb, " %s(%c%d", id,
			    cJSON_GetObjectItem(st, "estimated_complexity")->valuestring[0],
			    cJSON_GetArraySize(cJSON_GetObjectItem(st, "acceptance_criteria")));
		cJSON_ArrayForEach(d, cJSON_GetObjectItem(st, "dependencies"))
			strbuf_addf(&sb, "<%s", d->valuestring);
		strbuf_addc(&sb, ')');
	}
	strbuf_adds(&sb, "\n  scripted:");
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(c->script, "verifier"))
	{
		const cJSON *v;
		strbuf_addf(&sb, " %s verdicts", st->string);
		cJSON_ArrayForEach(v, st)
		{
			const char *a = cJSON_GetObjectItem(v, "action")->valuestring;
			int n = cJSON_GetArraySize(cJSON_GetObjectItem(v, "criteria_results"));
			strbuf_addf(&sb, " %s/%d", a, n);
		}
		strbuf_adds(&sb, ";");
	}
	cJSON_ArrayForEach(st, cJSON_GetObjectItem(c->script, "executor"))
	{
		const cJSON *a;
		strbuf_addf(&sb, " %s attempts", st->string);
		cJSON_ArrayForEach(a, st)
		{
			const char *notes =
			    cJSON_GetObjectItem(cJSON_GetObjectItem(a, "final"), "notes")
			        ->valuestring;
			int rounds = cJSON_GetArraySize(cJSON_GetObjectItem(a, "rounds"));
			strbuf_adds(&sb, rounds == 1 ? " ok"
			                 : *notes    ? " toolfail+note"
			                             : " toolfail");
		}
		strbuf_adds(&sb, ";");
	}
	strbuf_adds(&sb, "\n  schedule:");
	if (!c->n_schedule)
		strbuf_adds(&sb, " (none)");
	for (size_t i = 0; i < c->n_schedule; i++) {
		const struct mgen_entry *e = &c->schedule[i];
		if (e->trigger == MGEN_AT_GATE)
			strbuf_addf(&sb, " [at %s gate: ", gate_names[e->gate]);
		else
			strbuf_addf(&sb, " [after #%lu: ", e->after);
		strbuf_addf(&sb, "%s s%d%s", action_names[e->action], e->step,
			    e->add_criterion ? " +crit" : "");
		if (e->action == MGEN_BUDGET ||
		    (e->action == MGEN_APPROVE && e->gate == GATE_BUDGET))
			strbuf_addf(&sb, " $%.3f", e->budget_usd);
		strbuf_adds(&sb, "]");
	}
	strbuf_addc(&sb, '\n');
	return strbuf_detach(&sb);
}
