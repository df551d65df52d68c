/* view — folds the run's events into what the cockpit shows; sanitizes all model text. */
#include "config.h"

#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "textsan.h"
#include "xalloc.h"

/* An unfinished escape sequence longer than this is not one: it is dropped. */
#define CARRY_MAX 256
/* Tool parameters are shown up to this many columns in the log. */
#define PARAMS_COLS 160

/* ---- small JSON helpers (untrusted input: every getter checks the type) ---- */

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static bool jnum(const cJSON *o, const char *k, double *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return false;
	*out = it->valuedouble;
	return true;
}

static long jlong(const cJSON *o, const char *k, long def)
{
	double d;

	if (!jnum(o, k, &d) || d < -1e15 || d > 1e15)
		return def;
	return (long)d;
}

static bool jbool(const cJSON *o, const char *k, bool def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsBool(it) ? cJSON_IsTrue(it) : def;
}

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* One line of safe text from an untrusted string (NULL → ""). Caller frees. */
static char *san(const char *s)
{
	return s ? textsan_clean(s, strlen(s), 0) : xstrdup("");
}

static char *san_or_null(const char *s)
{
	return s ? textsan_clean(s, strlen(s), 0) : NULL;
}

static char *print_json(const cJSON *it)
{
	char *p = it ? cJSON_PrintUnformatted(it) : NULL;
	char *r = xstrdup(p ? p : "null");

	cJSON_free(p);
	return r;
}

static void set_str(char **dst, char *val)
{
	free(*dst);
	*dst = val;
}

/* Adds multi-line untrusted text to a store, sanitized. */
static void add_text(struct linestore *ls, int kind, const char *text)
{
	char *c;

	if (!text)
		return;
	c = textsan_clean(text, strlen(text), TEXTSAN_KEEP_NL);
	linestore_add(ls, kind, c);
	free(c);
}

static void addf(struct linestore *ls, int kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void addf(struct linestore *ls, int kind, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	linestore_add(ls, kind, s);
	free(s);
}

/* ---- time ---- */

double view_parse_ts(const char *ts)
{
	struct tm tm;
	int y, mo, d, h, mi, n = 0;
	double sec;
	time_t t;

	if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
		return 0;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    sec < 0 || sec >= 61)
		return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = 0;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return 0;
	return (double)t + sec;
}

/* ---- lifetime ---- */

struct view *view_new(void)
{
	struct view *v = xcalloc(1, sizeof(*v));

	linestore_init(&v->runlog);
	v->estimate_usd = -1;
	v->exit_code = -1;
	return v;
}

static void cost_release(struct vcost *c)
{
	free(c->model);
	memset(c, 0, sizeof(*c));
}

static void step_release(struct vstep *s)
{
	free(s->id);
	free(s->name);
	free(s->description);
	free(s->complexity);
	free(s->json);
	strvec_clear(&s->criteria);
	strvec_clear(&s->deps);
	cost_release(&s->cost);
	free(s->attempt_usd);
	linestore_release(&s->log);
	free(s->carry);
}

static void verdict_release(struct vverdict *vd)
{
	free(vd->step_id);
	free(vd->stage);
	free(vd->action);
	free(vd->severity);
	free(vd->feedback);
	for (size_t i = 0; i < vd->n_criteria; i++) {
		free(vd->criteria[i].text);
		free(vd->criteria[i].evidence);
	}
	free(vd->criteria);
}

static void gate_release(struct vgate *g)
{
	free(g->kind);
	free(g->step_id);
	free(g->title);
	free(g->edit_json);
	free(g->command);
	linestore_release(&g->body);
}

void view_free(struct view *v)
{
	if (!v)
		return;
	free(v->run_id);
	free(v->task);
	free(v->goal);
	free(v->provider);
	free(v->plan_json);
	free(v->proposed_json);
	for (size_t i = 0; i < v->n_steps; i++)
		step_release(&v->steps[i]);
	free(v->steps);
	linestore_release(&v->runlog);
	free(v->runlog_carry);
	for (size_t i = 0; i < v->n_verdicts; i++)
		verdict_release(&v->verdicts[i]);
	free(v->verdicts);
	for (size_t i = 0; i < v->n_gates; i++)
		gate_release(&v->gates[i]);
	free(v->gates);
	for (int i = 0; i < VC__COUNT; i++)
		cost_release(&v->cost[i]);
	free(v->end_status);
	free(v->end_reason);
	free(v->answer);
	free(v);
}

/* ---- queries ---- */

static const char *const status_names[VS__COUNT] = {
	[VS_PENDING] = "pending",       [VS_READY] = "ready",
	[VS_RUNNING] = "running",       [VS_VERIFYING] = "verifying",
	[VS_PASSED] = "passed",         [VS_RETRYING] = "retrying",
	[VS_FAIL_ACCEPTED] = "fail-accepted", [VS_SKIPPED] = "skipped",
	[VS_GATE] = "at gate",
};

const char *view_status_name(enum vstep_status s)
{
	return (s >= 0 && s < VS__COUNT) ? status_names[s] : "?";
}

int view_find_step(const struct view *v, const char *id)
{
	if (!id)
		return -1;
	for (size_t i = 0; i < v->n_steps; i++)
		if (v->steps[i].id && strcmp(v->steps[i].id, id) == 0)
			return (int)i;
	return -1;
}

static struct vstep *find_step(struct view *v, const char *id)
{
	int i = view_find_step(v, id);

	return i < 0 ? NULL : &v->steps[i];
}

bool view_busy(const struct view *v)
{
	if (v->state == VR_FINISHED)
		return false;
	if (v->state == VR_PLANNING)
		return v->n_gates == 0;
	for (size_t i = 0; i < v->n_steps; i++) {
		enum vstep_status s = v->steps[i].status;

		if (s == VS_RUNNING || s == VS_VERIFYING || s == VS_RETRYING)
			return true;
	}
	return false;
}

double view_elapsed(const struct view *v, double now)
{
	double end = v->ended > 0 ? v->ended : now;

	if (v->started <= 0 || end < v->started)
		return 0;
	return end - v->started;
}

double view_step_elapsed(const struct vstep *s, double now)
{
	double end = s->ended > 0 ? s->ended : now;

	if (s->started <= 0 || end < s->started)
		return 0;
	return end - s->started;
}

double view_total_usd(const struct view *v, bool *unknown)
{
	double t = 0;

	*unknown = false;
	for (int i = 0; i < VC__COUNT; i++) {
		t += v->cost[i].usd;
		*unknown = *unknown || v->cost[i].unknown;
	}
	return t;
}

static bool in_flight(const struct vstep *s)
{
	enum vstep_status st = s->status == VS_GATE ? s->before_gate : s->status;

	return st == VS_RUNNING || st == VS_VERIFYING || st == VS_RETRYING;
}

int view_running(const struct view *v)
{
	int n = 0;

	for (size_t i = 0; i < v->n_steps; i++) {
		enum vstep_status st = v->steps[i].status;

		n += st == VS_RUNNING || st == VS_VERIFYING || st == VS_RETRYING;
	}
	return n;
}

enum vpause_action view_pause_action(const struct view *v)
{
	if (v->state == VR_FINISHED || v->aborting)
		return VP_NONE;
	if (!v->paused)
		return VP_PAUSE;
	return view_running(v) > 0 ? VP_CANCEL : VP_RESUME;
}

/* Parses an event's JSON for the replay predicates; NULL when it is not an object. */
static cJSON *event_object(const struct event *ev, enum event_type want)
{
	cJSON *o;

	if (!ev || ev->type != want || !ev->json)
		return NULL;
	o = cJSON_Parse(ev->json);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

bool view_event_is_replan(const struct event *ev)
{
	cJSON *o = event_object(ev, EV_PLAN_PROPOSED);
	const char *r = jstr(o, "reason");
	bool yes = r && strcmp(r, "replan") == 0;

	cJSON_Delete(o);
	return yes;
}

bool view_event_is_failure(const struct event *ev)
{
	cJSON *o;
	const char *s;
	bool yes = false;

	if (!ev)
		return false;
	switch (ev->type) {
	case EV_VERIFY_VERDICT:
		o = event_object(ev, ev->type);
		s = jstr(o, "action");
		yes = o && (!s || strcmp(s, "pass") != 0);
		break;
	case EV_TOOL_RESULT:
		o = event_object(ev, ev->type);
		yes = o && !jbool(o, "ok", true);
		break;
	case EV_LLM_CALL:
		o = event_object(ev, ev->type);
		s = jstr(o, "status");
		yes = s && strcmp(s, "error") == 0;
		break;
	default: return false;
	}
	cJSON_Delete(o);
	return yes;
}

char *view_state_text(const struct view *v)
{
	int n;

	if (v->state == VR_FINISHED)
		return xasprintf("finished \xe2\x80\x94 %s", v->end_status ? v->end_status : "?");
	if (v->aborting)
		return xstrdup("aborting");
	if (v->n_gates > 0)
		return xstrdup("waiting for you");
	if (v->paused && (n = view_running(v)) > 0)
		return xasprintf("paused, %d step%s finishing", n, n == 1 ? "" : "s");
	if (v->paused)
		return xstrdup("paused");
	if (v->state == VR_STARTING)
		return xstrdup("starting");
	if (v->state == VR_PLANNING)
		return xstrdup("planning");
	return xstrdup("running");
}

/* ---- plan ---- */

static void strvec_from_json(struct strvec *sv, const cJSON *arr)
{
	const cJSON *it;

	if (!cJSON_IsArray(arr))
		return;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it)) {
			char *s = san(it->valuestring);

			strvec_push(sv, s);
			free(s);
		}
	}
}

/* Fills the definition fields of `s` from a plan step object. */
static void step_define(struct vstep *s, const cJSON *o)
{
	const char *cx = jstr(o, "estimated_complexity");

	set_str(&s->name, san(jstr(o, "name")));
	set_str(&s->description, san(jstr(o, "description")));
	set_str(&s->complexity, san(cx ? cx : jstr(o, "complexity")));
	strvec_clear(&s->criteria);
	strvec_from_json(&s->criteria, jget(o, "acceptance_criteria"));
	strvec_clear(&s->deps);
	strvec_from_json(&s->deps, jget(o, "dependencies"));
	set_str(&s->json, print_json(o));
}

static bool dep_done(const struct view *v, const char *id)
{
	int i = view_find_step(v, id);

	return i >= 0 && (v->steps[i].status == VS_PASSED ||
			  v->steps[i].status == VS_FAIL_ACCEPTED);
}

/* Pending steps whose dependencies are all done are ready (display only). */
static void recompute_ready(struct view *v)
{
	for (size_t i = 0; i < v->n_steps; i++) {
		struct vstep *s = &v->steps[i];
		bool ok = true;

		if (s->status != VS_PENDING && s->status != VS_READY)
			continue;
		for (size_t d = 0; d < s->deps.n && ok; d++)
			ok = dep_done(v, s->deps.v[d]);
		s->status = ok ? VS_READY : VS_PENDING;
	}
}

/* Depth = longest chain of dependencies; bounded passes so a cycle cannot loop forever. */
static void compute_depths(struct view *v)
{
	for (size_t i = 0; i < v->n_steps; i++)
		v->steps[i].depth = 0;
	for (size_t pass = 0; pass < v->n_steps; pass++) {
		bool changed = false;

		for (size_t i = 0; i < v->n_steps; i++) {
			struct vstep *s = &v->steps[i];

			for (size_t d = 0; d < s->deps.n; d++) {
				int j = view_find_step(v, s->deps.v[d]);

				if (j >= 0 && v->steps[j].depth + 1 > s->depth &&
				    v->steps[j].depth + 1 <= (int)v->n_steps) {
					s->depth = v->steps[j].depth + 1;
					changed = true;
				}
			}
		}
		if (!changed)
			break;
	}
}

static bool in_list(const cJSON *arr, const char *id)
{
	const cJSON *it;

	if (!cJSON_IsArray(arr))
		return false;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it) && strcmp(it->valuestring, id) == 0)
			return true;
	}
	return false;
}

/*
 * Replaces the steps with those of `plan`. Steps keeping their id keep their log, timing
 * and spend; ids in `kept` are passed, the others start pending.
 */
static void load_plan(struct view *v, const cJSON *plan, const cJSON *kept)
{
	const cJSON *steps = jget(plan, "steps"), *o;
	struct vstep *nv = NULL;
	size_t n = 0, cap = 0;

	if (!cJSON_IsArray(steps))
		return;
	cJSON_ArrayForEach(o, steps)
	{
		const char *id = jstr(o, "step_id");
		struct vstep *old, *s;
		char *sid;

		if (!cJSON_IsObject(o))
			continue;
		sid = san(id ? id : jstr(o, "id"));
		if (!*sid) {
			free(sid);
			continue;
		}
		nv = xgrow(nv, &cap, n + 1, sizeof(*nv));
		s = &nv[n];
		old = find_step(v, sid);
		if (old) {
			*s = *old;
			memset(old, 0, sizeof(*old));
			free(sid);
		} else {
			memset(s, 0, sizeof(*s));
			s->id = sid;
			linestore_init(&s->log);
		}
		/* Duplicate ids in a bad plan: the later one must not steal the first's state. */
		for (size_t k = 0; k < n; k++) {
			if (strcmp(nv[k].id, s->id) == 0) {
				char *dup = s->id;

				s->id = xasprintf("%s'", dup);
				free(dup);
			}
		}
		step_define(s, o);
		s->status = (id && in_list(kept, id)) ? VS_PASSED : VS_PENDING;
		n++;
	}
	for (size_t i = 0; i < v->n_steps; i++)
		step_release(&v->steps[i]);
	free(v->steps);
	v->steps = nv;
	v->n_steps = n;
	set_str(&v->goal, san_or_null(jstr(plan, "goal")));
	compute_depths(v);
	recompute_ready(v);
}

/* ---- cost ---- */

static void cost_add(struct vcost *c, const cJSON *o)
{
	const cJSON *usd = jget(o, "cost_usd");
	const char *model = jstr(o, "model");

	c->calls++;
	c->tokens_in += jlong(o, "input_tokens", 0);
	c->tokens_out += jlong(o, "output_tokens", 0);
	c->tokens_cached += jlong(o, "cached_tokens", 0);
	if (cJSON_IsNumber(usd) && isfinite(usd->valuedouble))
		c->usd += usd->valuedouble;
	else
		c->unknown = true;
	if (model)
		set_str(&c->model, san(model));
}

static int role_index(const char *role)
{
	if (!role)
		return -1;
	if (strcmp(role, "planner") == 0)
		return VC_PLANNER;
	if (strcmp(role, "executor") == 0)
		return VC_EXECUTOR;
	if (strcmp(role, "verifier") == 0)
		return VC_VERIFIER;
	return -1;
}

/* ---- gates ---- */

static const char *step_name_for(struct view *v, const cJSON *plan, const char *id)
{
	const cJSON *steps = jget(plan, "steps"), *o;
	struct vstep *s;

	if (cJSON_IsArray(steps)) {
		cJSON_ArrayForEach(o, steps)
		{
			const char *sid = jstr(o, "step_id");

			if (sid && strcmp(sid, id) == 0 && jstr(o, "name"))
				return jstr(o, "name");
		}
	}
	s = find_step(v, id);
	return s ? s->name : "";
}

/* The body lines that describe one step (name, description, criteria, dependencies). */
static void describe_step(struct view *v, struct linestore *b, const cJSON *step)
{
	const char *id = jstr(step, "step_id");
	const cJSON *arr, *it;
	char *s1, *s2, *s3;

	s1 = san(id);
	s2 = san(jstr(step, "name"));
	s3 = san(jstr(step, "estimated_complexity"));
	addf(b, VL_HEADER, "%s  %s  [%s]", s1, s2, s3);
	free(s1);
	free(s2);
	free(s3);
	if (jstr(step, "description"))
		add_text(b, VL_TEXT, jstr(step, "description"));
	arr = jget(step, "acceptance_criteria");
	if (cJSON_IsArray(arr) && cJSON_GetArraySize(arr) > 0) {
		linestore_add(b, VL_NOTICE, "Acceptance criteria:");
		cJSON_ArrayForEach(it, arr)
		{
			if (cJSON_IsString(it)) {
				s1 = san(it->valuestring);
				addf(b, VL_TEXT, "  \xe2\x80\xa2 %s", s1);
				free(s1);
			}
		}
	}
	arr = jget(step, "dependencies");
	if (cJSON_IsArray(arr) && cJSON_GetArraySize(arr) > 0) {
		linestore_add(b, VL_NOTICE, "Inputs from:");
		cJSON_ArrayForEach(it, arr)
		{
			if (cJSON_IsString(it)) {
				struct vstep *d = find_step(v, it->valuestring);

				s1 = san(it->valuestring);
				addf(b, VL_TEXT, "  %s %s (%s)", s1, d ? d->name : "",
				     d ? view_status_name(d->status) : "unknown");
				free(s1);
			}
		}
	}
}

static void describe_plan(struct view *v, struct linestore *b, const cJSON *plan)
{
	const cJSON *steps = jget(plan, "steps"), *o;

	if (jstr(plan, "goal")) {
		char *g = san(jstr(plan, "goal"));

		addf(b, VL_HEADER, "Goal: %s", g);
		free(g);
	}
	if (!cJSON_IsArray(steps))
		return;
	cJSON_ArrayForEach(o, steps)
		describe_step(v, b, o);
}

static void money(char *buf, size_t n, double usd, bool known)
{
	if (!known)
		snprintf(buf, n, "?");
	else
		snprintf(buf, n, "$%.4f", usd);
}

/* One diff entry: a step id string or an object naming the step. */
static void diff_line(struct view *v, struct linestore *b, int kind, const char *mark,
		      const cJSON *plan, const cJSON *it)
{
	const char *id = NULL, *name = NULL;
	char *s1, *s2;

	if (cJSON_IsString(it)) {
		id = it->valuestring;
	} else if (cJSON_IsObject(it)) {
		id = jstr(it, "step_id");
		if (!id)
			id = jstr(it, "id");
		name = jstr(it, "name");
		if (!name && cJSON_IsObject(jget(it, "after")))
			name = jstr(jget(it, "after"), "name");
	}
	if (!id)
		return;
	if (!name)
		name = step_name_for(v, plan, id);
	s1 = san(id);
	s2 = san(name);
	addf(b, kind, "%s %s  %s", mark, s1, s2);
	free(s1);
	free(s2);
	if (cJSON_IsObject(it) && cJSON_IsArray(jget(it, "fields"))) {
		char *f = print_json(jget(it, "fields"));
		char *fs = san(f);

		addf(b, kind, "    fields: %s", fs);
		free(f);
		free(fs);
	}
}

static void describe_diff(struct view *v, struct linestore *b, const cJSON *diff,
			  const cJSON *plan)
{
	static const struct {
		const char *key, *mark, *label;
		int kind;
	} parts[] = {
		{"added", "+", "added", VL_PASS},
		{"removed", "-", "removed", VL_ERROR},
		{"changed", "~", "changed", VL_WARN},
		{"kept", "=", "kept (passed, not run again)", VL_NOTICE},
	};

	linestore_add(b, VL_HEADER, "New plan against the old one:");
	for (size_t p = 0; p < sizeof(parts) / sizeof(parts[0]); p++) {
		const cJSON *arr = jget(diff, parts[p].key), *it;

		if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
			continue;
		addf(b, VL_NOTICE, "%s:", parts[p].label);
		cJSON_ArrayForEach(it, arr)
			diff_line(v, b, parts[p].kind, parts[p].mark, plan, it);
	}
}

static void gate_open(struct view *v, const cJSON *o)
{
	const char *kind = jstr(o, "gate"), *sid = jstr(o, "step_id");
	struct vgate *g;
	cJSON *proposed = v->proposed_json ? cJSON_Parse(v->proposed_json) : NULL;
	double d;
	char m1[32], m2[32];

	v->gates = xgrow(v->gates, &v->cap_gates, v->n_gates + 1, sizeof(*v->gates));
	g = &v->gates[v->n_gates++];
	memset(g, 0, sizeof(*g));
	linestore_init(&g->body);
	g->id = (unsigned long)jlong(o, "gate_id", 0);
	g->kind = san(kind ? kind : "?");
	g->step_id = san_or_null(sid);
	g->spent_usd = g->budget_usd = -1;

	if (strcmp(g->kind, "plan") == 0) {
		g->title = xasprintf("Approve the plan (revision %ld)", jlong(o, "revision", 0));
		if (proposed)
			describe_plan(v, &g->body, proposed);
		money(m1, sizeof(m1), jnum(o, "estimate_usd", &d) ? d : 0,
		      jnum(o, "estimate_usd", &d));
		addf(&g->body, VL_HEADER, "Estimated cost: %s%s", m1,
		     jnum(o, "estimate_usd", &d) ? "" : " (a model's price is unknown)");
		g->edit_json = xstrdup(v->proposed_json);
	} else if (strcmp(g->kind, "replan") == 0) {
		char *fs = san(jstr(o, "failed_step"));

		g->title = xasprintf("Replan after step %s (revision %ld)", fs,
				     jlong(o, "revision", 0));
		free(fs);
		if (jstr(o, "reason")) {
			linestore_add(&g->body, VL_HEADER, "Why:");
			add_text(&g->body, VL_CRITIQUE, jstr(o, "reason"));
		}
		if (cJSON_IsObject(jget(o, "diff")))
			describe_diff(v, &g->body, jget(o, "diff"), proposed);
		g->edit_json = xstrdup(v->proposed_json);
	} else if (strcmp(g->kind, "budget") == 0) {
		money(m1, sizeof(m1), jnum(o, "spent_usd", &d) ? d : 0, jnum(o, "spent_usd", &d));
		money(m2, sizeof(m2), jnum(o, "budget_usd", &d) ? d : 0,
		      jnum(o, "budget_usd", &d));
		g->title = xstrdup("Budget reached");
		if (jnum(o, "spent_usd", &d))
			g->spent_usd = d;
		if (jnum(o, "budget_usd", &d))
			g->budget_usd = d;
		addf(&g->body, VL_WARN, "Spent %s of the %s budget.", m1, m2);
		if (g->spent_usd >= 0 && g->budget_usd > 0)
			addf(&g->body, VL_TEXT, "That is %.0f%% of the budget.",
			     100.0 * g->spent_usd / g->budget_usd);
		linestore_add(&g->body, VL_NOTICE,
			      "Continue (a) lets the run go past the budget; reject (x) stops it.");
	} else {
		const cJSON *step = jget(o, "step");
		struct vstep *s = find_step(v, sid);
		cJSON *fallback = NULL;
		char *name;

		if (!cJSON_IsObject(step) && s && s->json)
			step = fallback = cJSON_Parse(s->json);
		name = san(cJSON_IsObject(step) ? jstr(step, "name") : (s ? s->name : NULL));
		if (strcmp(g->kind, "high") == 0)
			g->title = xasprintf("High-complexity step: %s", name);
		else if (strcmp(g->kind, "shell") == 0)
			g->title = xstrdup("Run a shell command?");
		else
			g->title = xasprintf("Before step: %s", name);
		free(name);
		if (jstr(o, "command")) {
			g->command = san(jstr(o, "command"));
			linestore_add(&g->body, VL_HEADER, "Command:");
			add_text(&g->body, VL_WARN, jstr(o, "command"));
		}
		if (strcmp(g->kind, "shell") == 0) {
			char *id = san(sid);

			addf(&g->body, VL_NOTICE, "Asked by step %s; other steps go on meanwhile.",
			     *id ? id : "?");
			free(id);
		}
		if (cJSON_IsObject(step)) {
			describe_step(v, &g->body, step);
			g->edit_json = print_json(step);
		}
		cJSON_Delete(fallback);
	}
	cJSON_Delete(proposed);

	if (g->step_id) {
		struct vstep *s = find_step(v, g->step_id);

		if (s && s->status != VS_GATE) {
			s->before_gate = s->status;
			s->status = VS_GATE;
		}
	}
	addf(&v->runlog, VL_WARN, "Gate open: %s", g->title);
}

static void gate_decision(struct view *v, const cJSON *o)
{
	unsigned long id = (unsigned long)jlong(o, "gate_id", 0);
	const char *dec = jstr(o, "decision"), *by = jstr(o, "by");
	char *sid = NULL, *kind = NULL;

	for (size_t i = 0; i < v->n_gates; i++) {
		if (v->gates[i].id != id)
			continue;
		sid = v->gates[i].step_id;
		kind = v->gates[i].kind;
		v->gates[i].step_id = v->gates[i].kind = NULL;
		gate_release(&v->gates[i]);
		memmove(&v->gates[i], &v->gates[i + 1],
			(v->n_gates - i - 1) * sizeof(*v->gates));
		v->n_gates--;
		break;
	}
	if (!sid)
		sid = san_or_null(jstr(o, "step_id"));
	if (!kind)
		kind = san(jstr(o, "gate"));
	if (sid) {
		struct vstep *s = find_step(v, sid);

		if (s && s->status == VS_GATE) {
			/* Skip at a shell gate refuses one command; the step goes on. */
			if (dec && strcmp(dec, "skip") == 0 && strcmp(kind, "replan") != 0 &&
			    strcmp(kind, "shell") != 0)
				s->status = VS_SKIPPED;
			else
				s->status = s->before_gate;
		}
		if (s) {
			char *d = san(dec), *b = san(by);

			addf(&s->log, VL_NOTICE, "Gate %s: %s by %s", kind, d, b);
			free(d);
			free(b);
		}
	}
	{
		char *d = san(dec), *b = san(by), *r = san_or_null(jstr(o, "reason"));

		addf(&v->runlog, VL_NOTICE, "Gate %s%s%s: %s by %s%s%s", kind, sid ? " " : "",
		     sid ? sid : "", d, b, r ? " \xe2\x80\x94 " : "", r ? r : "");
		free(d);
		free(b);
		free(r);
	}
	free(sid);
	free(kind);
	recompute_ready(v);
}

/* ---- streaming text ---- */

/* Streams a delta into a store, holding back a cut escape sequence until the next one. */
static void stream_into(struct linestore *ls, char **carry, size_t *carry_len, const char *text)
{
	size_t tl = strlen(text), n = *carry_len + tl, keep;
	char *buf = xmalloc(n + 1), *clean;

	if (*carry_len)
		memcpy(buf, *carry, *carry_len);
	memcpy(buf + *carry_len, text, tl);
	buf[n] = '\0';
	keep = textsan_complete_prefix(buf, n);
	clean = textsan_clean(buf, keep, TEXTSAN_KEEP_NL);
	linestore_stream(ls, VL_TEXT, clean);
	free(clean);
	free(*carry);
	*carry = NULL;
	*carry_len = 0;
	if (n - keep > 0 && n - keep <= CARRY_MAX) {
		*carry = xstrndup(buf + keep, n - keep);
		*carry_len = n - keep;
	}
	free(buf);
}

/* ---- event handlers ---- */

struct ctx {
	struct view *v;
	const cJSON *o;
	double ts;
	struct vstep *step; /* the event's step, when it names a known one */
	struct linestore *log; /* the step's log, else the run log */
};

static void on_run_start(struct ctx *c)
{
	struct view *v = c->v;
	const cJSON *policy = jget(c->o, "policy");
	double b;

	set_str(&v->run_id, san_or_null(jstr(c->o, "run_id")));
	set_str(&v->task, san_or_null(jstr(c->o, "task")));
	set_str(&v->provider, san_or_null(jstr(c->o, "provider")));
	v->simulated = jbool(c->o, "simulated", false);
	if (cJSON_IsObject(policy) && jnum(policy, "budget_usd", &b) && b > 0)
		v->budget_usd = b;
	if (v->started <= 0)
		v->started = c->ts;
	if (v->state == VR_STARTING)
		v->state = VR_PLANNING;
	addf(&v->runlog, VL_HEADER, "Run %s started%s", v->run_id ? v->run_id : "",
	     v->simulated ? " (simulated models)" : "");
	if (v->task)
		addf(&v->runlog, VL_TEXT, "Task: %s", v->task);
}

static void on_plan_proposed(struct ctx *c)
{
	struct view *v = c->v;
	const cJSON *plan = jget(c->o, "plan"), *steps;
	double est;
	char *reason = san(jstr(c->o, "reason"));
	char m[32];

	if (!cJSON_IsObject(plan)) {
		free(reason);
		return;
	}
	set_str(&v->proposed_json, print_json(plan));
	if (jnum(c->o, "estimate_usd", &est))
		v->estimate_usd = est;
	else
		v->estimate_usd = -1;
	if (!v->plan_adopted) {
		load_plan(v, plan, NULL);
		v->revision = (int)jlong(c->o, "revision", 0);
	}
	steps = jget(plan, "steps");
	money(m, sizeof(m), v->estimate_usd, v->estimate_usd >= 0);
	addf(&v->runlog, VL_HEADER, "Plan proposed: revision %ld%s%s, %d steps, estimate %s",
	     jlong(c->o, "revision", 0), *reason ? ", " : "", reason,
	     cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0, m);
	free(reason);
}

static void on_plan_adopted(struct ctx *c)
{
	struct view *v = c->v;
	const cJSON *plan = jget(c->o, "plan");

	if (!cJSON_IsObject(plan))
		return;
	load_plan(v, plan, jget(c->o, "kept"));
	set_str(&v->plan_json, print_json(plan));
	v->revision = (int)jlong(c->o, "revision", 0);
	v->plan_adopted = true;
	if (v->state != VR_FINISHED)
		v->state = VR_RUNNING;
	addf(&v->runlog, VL_PASS, "Plan revision %d adopted", v->revision);
}

static void on_step_start(struct ctx *c)
{
	struct vstep *s = c->step;
	long attempt = jlong(c->o, "attempt", 1);

	if (!s)
		return;
	linestore_close(&s->log);
	s->status = VS_RUNNING;
	s->attempts = (int)(attempt > 0 ? attempt : 1);
	if (s->started <= 0 || s->ended > 0)
		s->started = c->ts;
	s->ended = 0;
	if (c->v->state != VR_FINISHED)
		c->v->state = VR_RUNNING;
	addf(&s->log, VL_HEADER, "\xe2\x94\x80\xe2\x94\x80 attempt %d \xe2\x94\x80\xe2\x94\x80",
	     s->attempts);
}

/* Pause-and-cancel, edit or skip: the engine drops this attempt and starts the step over
 * later (or skips it); until then it is not running. */
static void step_cancelled(struct view *v, struct vstep *s)
{
	if (s->status == VS_GATE)
		s->before_gate = VS_PENDING;
	else
		s->status = VS_PENDING;
	recompute_ready(v);
}

static void on_llm_call(struct ctx *c)
{
	struct view *v = c->v;
	const char *role = jstr(c->o, "role"), *status = jstr(c->o, "status");
	int r = role_index(role);
	struct vstep *s = c->step;
	const cJSON *usd = jget(c->o, "cost_usd");

	if (r >= 0)
		cost_add(&v->cost[r], c->o);
	if (s && r != VC_PLANNER) {
		long att = jlong(c->o, "attempt", s->attempts);

		cost_add(&s->cost, c->o);
		if (att >= 1 && att <= 1000 && cJSON_IsNumber(usd)) {
			if (att > s->n_attempt_usd) {
				s->attempt_usd = xrealloc(s->attempt_usd, (size_t)att * sizeof(double));
				for (long i = s->n_attempt_usd; i < att; i++)
					s->attempt_usd[i] = 0;
				s->n_attempt_usd = (int)att;
			}
			s->attempt_usd[att - 1] += usd->valuedouble;
		}
	}
	if (status && strcmp(status, "cancelled") == 0 && s && in_flight(s)) {
		linestore_close(c->log);
		addf(c->log, VL_WARN, "%s call cancelled; the step starts over",
		     role ? role : "model");
		step_cancelled(v, s);
	} else if (status && strcmp(status, "ok") != 0) {
		char *e = san(jstr(c->o, "error")), *st = san(status);

		linestore_close(c->log);
		addf(c->log, VL_ERROR, "%s call %s: %s", role ? role : "model", st, e);
		free(e);
		free(st);
	}
}

static void on_llm_delta(struct ctx *c)
{
	const char *role = jstr(c->o, "role"), *text = jstr(c->o, "text");

	if (!text || !role)
		return;
	if (strcmp(role, "executor") == 0 && c->step)
		stream_into(&c->step->log, &c->step->carry, &c->step->carry_len, text);
	else if (strcmp(role, "planner") == 0)
		stream_into(&c->v->runlog, &c->v->runlog_carry, &c->v->runlog_carry_len, text);
}

static void on_llm_retry(struct ctx *c)
{
	const char *role = jstr(c->o, "role");
	long http = jlong(c->o, "http_status", 0), wait = jlong(c->o, "wait_ms", 0);
	char *reason = san(jstr(c->o, "reason"));
	char code[24];

	if (http > 0)
		snprintf(code, sizeof(code), "%ld", http);
	else
		snprintf(code, sizeof(code), "error");
	linestore_close(c->log);
	addf(c->log, VL_RETRY, "%s %s \xe2\x80\x94 retrying in %.1f s (%ld/%ld)%s%s",
	     role ? role : "model", code, (double)wait / 1000.0, jlong(c->o, "attempt", 0),
	     jlong(c->o, "max", 0), *reason ? ": " : "", reason);
	free(reason);
}

static void on_tool_call(struct ctx *c)
{
	char *tool = san(jstr(c->o, "tool")), *p = print_json(jget(c->o, "params"));
	char *ps = san(p), *pt = textsan_truncate(ps, PARAMS_COLS);

	linestore_close(c->log);
	addf(c->log, VL_TOOL, "\xe2\x86\x92 %s %s", tool, pt);
	free(tool);
	free(p);
	free(ps);
	free(pt);
}

static void on_tool_result(struct ctx *c)
{
	bool ok = jbool(c->o, "ok", false);
	char *tool = san(jstr(c->o, "tool")), *sum = san(jstr(c->o, "summary"));

	linestore_close(c->log);
	addf(c->log, ok ? VL_TOOL_OK : VL_TOOL_FAIL, "\xe2\x86\x90 %s %s: %s (%ld bytes)", tool,
	     ok ? "ok" : "failed", sum, jlong(c->o, "bytes", 0));
	free(tool);
	free(sum);
}

static void on_step_output(struct ctx *c)
{
	const cJSON *res = jget(c->o, "result");
	double conf;

	if (!c->step)
		return;
	linestore_close(&c->step->log);
	c->step->status = VS_VERIFYING;
	if (cJSON_IsObject(res) && jnum(res, "confidence", &conf))
		addf(&c->step->log, VL_NOTICE, "Result in (confidence %.2f); verifying\xe2\x80\xa6",
		     conf);
	else
		linestore_add(&c->step->log, VL_NOTICE, "Result in; verifying\xe2\x80\xa6");
}

static void on_verdict(struct ctx *c)
{
	struct view *v = c->v;
	const cJSON *crit = jget(c->o, "criteria"), *it;
	struct vverdict *vd;
	const char *action;

	v->verdicts = xgrow(v->verdicts, &v->cap_verdicts, v->n_verdicts + 1,
			    sizeof(*v->verdicts));
	vd = &v->verdicts[v->n_verdicts++];
	memset(vd, 0, sizeof(*vd));
	vd->step_id = san(jstr(c->o, "step_id"));
	vd->stage = san(jstr(c->o, "stage"));
	vd->action = san(jstr(c->o, "action"));
	vd->severity = san_or_null(jstr(c->o, "severity"));
	vd->feedback = san_or_null(jstr(c->o, "feedback"));
	vd->attempt = (int)jlong(c->o, "attempt", 0);
	vd->overall_pass = jbool(c->o, "overall_pass", strcmp(vd->action, "pass") == 0);
	if (cJSON_IsArray(crit)) {
		vd->criteria = xcalloc((size_t)cJSON_GetArraySize(crit) + 1, sizeof(*vd->criteria));
		cJSON_ArrayForEach(it, crit)
		{
			struct vcriterion *cr = &vd->criteria[vd->n_criteria];
			double conf;

			if (!cJSON_IsObject(it))
				continue;
			cr->text = san(jstr(it, "criterion"));
			cr->evidence = san_or_null(jstr(it, "evidence"));
			cr->passed = jbool(it, "passed", false);
			cr->confidence = jnum(it, "confidence", &conf) ? conf : -1;
			vd->n_criteria++;
		}
	}
	action = vd->action;
	if (!c->step)
		return;
	linestore_close(&c->step->log);
	addf(&c->step->log, vd->overall_pass ? VL_PASS : VL_CRITIQUE, "Verdict (%s): %s%s%s",
	     vd->stage, action, vd->severity ? ", " : "", vd->severity ? vd->severity : "");
	for (size_t i = 0; i < vd->n_criteria; i++) {
		if (!vd->criteria[i].passed)
			addf(&c->step->log, VL_CRITIQUE, "  \xe2\x9c\x97 %s", vd->criteria[i].text);
	}
	if (!vd->overall_pass && vd->feedback)
		addf(&c->step->log, VL_CRITIQUE, "Critique for the next attempt: %s", vd->feedback);
	if (strcmp(action, "retry") == 0 || strcmp(action, "replan") == 0)
		c->step->status = VS_RETRYING;
}

static void on_step_end(struct ctx *c)
{
	struct vstep *s = c->step;
	const char *st = jstr(c->o, "status");
	bool reused = jbool(c->o, "reused", false);

	if (!s || !st)
		return;
	linestore_close(&s->log);
	if (strcmp(st, "passed") == 0)
		s->status = VS_PASSED;
	else if (strcmp(st, "fail_accepted") == 0)
		s->status = VS_FAIL_ACCEPTED;
	else if (strcmp(st, "skipped") == 0)
		s->status = VS_SKIPPED;
	s->attempts = (int)jlong(c->o, "attempts", s->attempts);
	if (s->started > 0)
		s->ended = c->ts;
	addf(&s->log, s->status == VS_PASSED ? VL_PASS : VL_WARN, "Step %s%s after %d attempt%s",
	     view_status_name(s->status), reused ? " (result reused)" : "", s->attempts,
	     s->attempts == 1 ? "" : "s");
	recompute_ready(c->v);
}

static void on_step_edit(struct ctx *c)
{
	const cJSON *after = jget(c->o, "after");
	char *by = san(jstr(c->o, "by"));

	if (c->step && cJSON_IsObject(after)) {
		step_define(c->step, after);
		c->step->edited = true;
		compute_depths(c->v);
		addf(&c->step->log, VL_WARN, "Step edited by %s", *by ? by : "operator");
	}
	free(by);
}

static void on_notice(struct ctx *c)
{
	const char *level = jstr(c->o, "level"), *kind = jstr(c->o, "kind");
	int k = VL_NOTICE;

	if (level && strcmp(level, "warn") == 0)
		k = VL_WARN;
	else if (level && strcmp(level, "error") == 0)
		k = VL_ERROR;
	if (kind && strcmp(kind, "pause") == 0)
		c->v->paused = true;
	else if (kind && (strcmp(kind, "resume_run") == 0 || strcmp(kind, "unpause") == 0))
		c->v->paused = false;
	else if (kind && strcmp(kind, "abort") == 0)
		c->v->aborting = true;
	else if (kind && strcmp(kind, "step_cancelled") == 0 && c->step && in_flight(c->step))
		/* Proposed, not published by the engine yet: an attempt cancelled inside a tool
		 * call, where no llm.call says "cancelled". */
		step_cancelled(c->v, c->step);
	else if (kind && strcmp(kind, "tool_retry") == 0)
		k = VL_RETRY;
	linestore_close(c->log);
	add_text(c->log, k, jstr(c->o, "message"));
}

static void on_run_final(struct ctx *c)
{
	const char *answer = jstr(c->o, "answer");

	if (!answer)
		return;
	set_str(&c->v->answer, textsan_clean(answer, strlen(answer), TEXTSAN_KEEP_NL));
	linestore_close(&c->v->runlog);
	linestore_add(&c->v->runlog, VL_HEADER, "Final answer:");
	linestore_add(&c->v->runlog, VL_TEXT, c->v->answer);
}

static void on_run_end(struct ctx *c)
{
	struct view *v = c->v;
	char *reason = san_or_null(jstr(c->o, "reason"));

	set_str(&v->end_status, san(jstr(c->o, "status")));
	set_str(&v->end_reason, reason);
	v->exit_code = (int)jlong(c->o, "exit_code", -1);
	v->state = VR_FINISHED;
	v->paused = false;
	v->ended = c->ts;
	for (size_t i = 0; i < v->n_gates; i++)
		gate_release(&v->gates[i]);
	v->n_gates = 0;
	for (size_t i = 0; i < v->n_steps; i++)
		if (v->steps[i].status == VS_GATE)
			v->steps[i].status = v->steps[i].before_gate;
	linestore_close(&v->runlog);
	addf(&v->runlog, strcmp(v->end_status, "passed") == 0 ? VL_PASS : VL_WARN,
	     "Run finished: %s%s%s", v->end_status, reason ? " \xe2\x80\x94 " : "",
	     reason ? reason : "");
}

typedef void (*handler_fn)(struct ctx *c);

static const handler_fn handlers[EV__COUNT] = {
	[EV_RUN_START] = on_run_start,
	[EV_PLAN_PROPOSED] = on_plan_proposed,
	[EV_PLAN_ADOPTED] = on_plan_adopted,
	[EV_STEP_START] = on_step_start,
	[EV_LLM_CALL] = on_llm_call,
	[EV_LLM_DELTA] = on_llm_delta,
	[EV_LLM_RETRY] = on_llm_retry,
	[EV_TOOL_CALL] = on_tool_call,
	[EV_TOOL_RESULT] = on_tool_result,
	[EV_STEP_OUTPUT] = on_step_output,
	[EV_VERIFY_VERDICT] = on_verdict,
	[EV_STEP_END] = on_step_end,
	[EV_STEP_EDIT] = on_step_edit,
	[EV_NOTICE] = on_notice,
	[EV_RUN_FINAL] = on_run_final,
	[EV_RUN_END] = on_run_end,
};

void view_apply(struct view *v, const struct event *ev)
{
	struct ctx c = {v, NULL, 0, NULL, NULL};
	cJSON *o;

	if (!ev || !ev->json || ev->type < 0 || ev->type >= EV__COUNT)
		return;
	o = cJSON_Parse(ev->json);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return;
	}
	c.o = o;
	c.ts = view_parse_ts(jstr(o, "ts"));
	c.step = find_step(v, jstr(o, "step_id"));
	c.log = c.step ? &c.step->log : &v->runlog;
	v->events++;
	if (ev->seq)
		v->last_seq = ev->seq;
	if (ev->type == EV_GATE_OPEN)
		gate_open(v, o);
	else if (ev->type == EV_GATE_DECISION)
		gate_decision(v, o);
	else if (handlers[ev->type])
		handlers[ev->type](&c);
	cJSON_Delete(o);
}
