/* view — what the cockpit shows of the fold's run state: sanitized text, logs, dialogs. */
#include "config.h"

#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "elicit_view.h"
#include "events.h"
#include "jsonx.h"
#include "plan.h"
#include "provider.h"
#include "rundiff.h"
#include "shell_view.h"
#include "textsan.h"
#include "xalloc.h"

/* An unfinished escape sequence longer than this is not one: it is dropped. */
#define CARRY_MAX 256
/* Tool parameters are shown up to this many columns in the log. */
#define PARAMS_COLS 160

/* ---- small JSON helpers (untrusted input: every getter checks the type) ---- */

static long jlong(const cJSON *o, const char *k, long def)
{
	double d;

	if (!jsonx_num(o, k, &d) || d < -1e15 || d > 1e15)
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

/* ---- lifetime ---- */

struct view *view_new(void)
{
	struct view *v = xcalloc(1, sizeof(*v));

	fold_init(&v->rs);
	linestore_init(&v->runlog);
	strbuf_init(&v->answer_stream);
	logref_init(&v->runlog_refs);
	v->ref_budget = LOGREF_BUDGET;
	return v;
}

static void step_release(struct vstep *s)
{
	free(s->key);
	free(s->id);
	free(s->name);
	free(s->description);
	free(s->complexity);
	strvec_clear(&s->criteria);
	strvec_clear(&s->deps);
	linestore_release(&s->log);
	logref_release(&s->refs);
	free(s->carry);
	memset(s, 0, sizeof(*s));
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
	free(vd->changes);
}

static void gate_release(struct vgate *g)
{
	free(g->step_id);
	free(g->orig_json);
	free(g->title);
	free(g->edit_json);
	free(g->command);
	linestore_release(&g->body);
}

static void proposal_release(struct view *v)
{
	for (size_t i = 0; i < v->n_proposal; i++) {
		free(v->proposal[i].key);
		free(v->proposal[i].id);
		free(v->proposal[i].name);
		free(v->proposal[i].complexity);
	}
	free(v->proposal);
	v->proposal = NULL;
	v->n_proposal = 0;
}

void view_free(struct view *v)
{
	if (!v)
		return;
	fold_release(&v->rs);
	free(v->run_id);
	free(v->task);
	free(v->goal);
	free(v->provider);
	for (size_t i = 0; i < v->n_steps; i++)
		step_release(&v->steps[i]);
	free(v->steps);
	linestore_release(&v->runlog);
	logref_release(&v->runlog_refs);
	free(v->runlog_carry);
	strbuf_release(&v->answer_stream);
	for (size_t i = 0; i < v->n_verdicts; i++)
		verdict_release(&v->verdicts[i]);
	free(v->verdicts);
	for (size_t i = 0; i < v->n_gates; i++)
		gate_release(&v->gates[i]);
	free(v->gates);
	for (int i = 0; i < VC__COUNT; i++)
		free(v->model[i]);
	proposal_release(v);
	free(v->logged_proposal);
	free(v);
}

/* ---- queries ---- */

static const char *const status_names[VS__COUNT] = {
	[VS_PENDING] = "pending",     [VS_READY] = "ready",
	[VS_WAITING] = "waiting",     [VS_RUNNING] = "running",
	[VS_VERIFYING] = "verifying", [VS_RETRYING] = "retrying",
	[VS_STALE] = "stale",         [VS_PASSED] = "passed",
	[VS_FAIL_ACCEPTED] = "fail-accepted", [VS_SKIPPED] = "skipped",
};

const char *view_status_name(enum vstep_status s)
{
	return ((int)s >= 0 && s < VS__COUNT) ? status_names[s] : "?";
}

int view_find_step(const struct view *v, const char *id)
{
	return fold_find_step(&v->rs, id);
}

static struct vstep *find_step(struct view *v, const char *id)
{
	int i = view_find_step(v, id);

	return i < 0 ? NULL : &v->steps[i];
}

static bool moving(enum vstep_status s)
{
	return s == VS_RUNNING || s == VS_VERIFYING || s == VS_RETRYING;
}

bool view_busy(const struct view *v)
{
	if (v->state == VR_FINISHED)
		return false;
	if (v->state == VR_PLANNING)
		return v->n_gates == 0;
	return view_running(v) > 0;
}

double view_elapsed(const struct view *v, double now)
{
	double end = v->rs.ended_at > 0 ? v->rs.ended_at : now;

	if (v->rs.started <= 0 || end < v->rs.started)
		return 0;
	return end - v->rs.started;
}

double view_step_elapsed(const struct vstep *s, double now)
{
	return s->f ? fold_step_seconds(s->f, now) : 0;
}

double view_total_usd(const struct view *v, bool *unknown)
{
	return fold_total_usd(&v->rs, unknown);
}

int view_running(const struct view *v)
{
	int n = 0;

	for (size_t i = 0; i < v->n_steps; i++)
		n += moving(v->steps[i].status);
	return n;
}

enum vpause_action view_pause_action(const struct view *v)
{
	if (v->state == VR_FINISHED || v->aborting)
		return VP_NONE;
	if (!v->rs.paused)
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
	const char *r = jsonx_str(o, "reason");
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
		s = jsonx_str(o, "action");
		yes = o && (!s || strcmp(s, "pass") != 0);
		break;
	case EV_TOOL_RESULT:
		o = event_object(ev, ev->type);
		yes = o && !jbool(o, "ok", true);
		break;
	case EV_LLM_CALL:
		o = event_object(ev, ev->type);
		s = jsonx_str(o, "status");
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

	if (v->state == VR_FINISHED) {
		char *st = san(v->rs.end_status ? v->rs.end_status : "?");
		char *r = xasprintf("finished \xe2\x80\x94 %s", st);

		free(st);
		return r;
	}
	if (v->aborting)
		return xstrdup("aborting");
	if (v->n_gates > 0)
		return xstrdup("waiting for you");
	if (v->rs.paused && (n = view_running(v)) > 0)
		return xasprintf("paused, %d step%s finishing", n, n == 1 ? "" : "s");
	if (v->rs.paused)
		return xstrdup("paused");
	if (v->state == VR_STARTING)
		return xstrdup("starting");
	if (v->state == VR_PLANNING)
		return xstrdup("planning");
	return xstrdup("running");
}

/* ---- keeping the presentation in step with the fold ---- */

static void strvec_san(struct strvec *dst, const struct strvec *src)
{
	strvec_clear(dst);
	for (size_t i = 0; i < src->n; i++) {
		char *s = san(src->v[i]);

		strvec_push(dst, s);
		free(s);
	}
}

/* The drawable copy of a step's definition. */
static void step_define(struct vstep *s)
{
	const struct fstep *f = s->f;

	set_str(&s->id, san(f->id));
	set_str(&s->name, san(f->name));
	set_str(&s->description, san(f->description));
	set_str(&s->complexity, san(f->complexity));
	strvec_san(&s->criteria, &f->criteria);
	strvec_san(&s->deps, &f->deps);
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

			for (size_t d = 0; d < s->f->deps.n; d++) {
				int j = view_find_step(v, s->f->deps.v[d]);

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

/*
 * One vstep per fold step, in the same order. When the fold replaced its steps (a plan
 * proposed or adopted), a step keeping its id keeps its log; `redefine` refreshes the
 * drawable definitions (the plan or a step was edited).
 */
static void sync_steps(struct view *v, bool redefine)
{
	const struct run_state *rs = &v->rs;
	bool same = v->n_steps == rs->n_steps;

	for (size_t i = 0; same && i < v->n_steps; i++)
		same = strcmp(v->steps[i].key, rs->steps[i].id) == 0;
	if (!same) {
		struct vstep *nv = xcalloc(rs->n_steps + 1, sizeof(*nv));

		for (size_t i = 0; i < rs->n_steps; i++) {
			for (size_t j = 0; j < v->n_steps; j++) {
				struct vstep *old = &v->steps[j];

				if (old->key && strcmp(old->key, rs->steps[i].id) == 0) {
					nv[i] = *old;
					memset(old, 0, sizeof(*old));
					break;
				}
			}
			if (!nv[i].key) {
				nv[i].key = xstrdup(rs->steps[i].id);
				linestore_init(&nv[i].log);
			}
		}
		for (size_t j = 0; j < v->n_steps; j++)
			step_release(&v->steps[j]);
		free(v->steps);
		v->steps = nv;
		v->n_steps = rs->n_steps;
		redefine = true;
	}
	for (size_t i = 0; i < v->n_steps; i++)
		v->steps[i].f = &rs->steps[i];
	if (redefine) {
		for (size_t i = 0; i < v->n_steps; i++)
			step_define(&v->steps[i]);
		compute_depths(v);
	}
}

static void sync_strings(struct view *v)
{
	set_str(&v->run_id, san_or_null(v->rs.run_id));
	set_str(&v->task, san_or_null(v->rs.task));
	set_str(&v->provider, san_or_null(v->rs.provider));
	set_str(&v->goal, san_or_null(v->rs.goal));
}

/* Drops the dialogs of gates the fold no longer has open. */
static void sync_gates(struct view *v)
{
	size_t k = 0;

	for (size_t i = 0; i < v->n_gates; i++) {
		if (fold_find_gate(&v->rs, v->gates[i].id))
			v->gates[k++] = v->gates[i];
		else
			gate_release(&v->gates[i]);
	}
	v->n_gates = k;
}

static bool gate_names(const struct view *v, const char *id)
{
	for (size_t i = 0; i < v->rs.n_gates; i++)
		if (v->rs.gates[i].step_id && strcmp(v->rs.gates[i].step_id, id) == 0)
			return true;
	return false;
}

static bool inputs_done(const struct view *v, const struct fstep *f)
{
	for (size_t d = 0; d < f->deps.n; d++) {
		int j = view_find_step(v, f->deps.v[d]);

		if (j < 0 || !fold_state_settled(v->rs.steps[j].state))
			return false;
	}
	return true;
}

/* Whether an attempt hint (see struct vstep) is about the attempt in hand. */
static bool current(int hint, const struct fstep *f)
{
	return hint > 0 && hint >= f->attempts;
}

/* What the Plan pane shows: the fold's state, with the refinements journals written
 * before step.state need (verifying after a result, retrying after a failed verdict, a
 * cancelled attempt no longer running). */
static enum vstep_status display_status(const struct view *v, const struct vstep *s)
{
	const struct fstep *f = s->f;

	if (!fold_state_settled(f->state) && f->state != FS_STALE && gate_names(v, f->id))
		return VS_WAITING;
	switch (f->state) {
	case FS_WAITING: return VS_WAITING;
	case FS_STALE: return VS_STALE;
	case FS_PASSED: return VS_PASSED;
	case FS_FAIL_ACCEPTED: return VS_FAIL_ACCEPTED;
	case FS_SKIPPED: return VS_SKIPPED;
	case FS_RUNNING:
	case FS_VERIFYING:
		if (current(s->cancelled_attempt, f))
			break; /* starts over: shown as pending below */
		if (current(s->retry_attempt, f))
			return VS_RETRYING;
		if (f->state == FS_VERIFYING || current(s->output_attempt, f))
			return VS_VERIFYING;
		return VS_RUNNING;
	case FS_PENDING:
	case FS__COUNT: break;
	}
	return inputs_done(v, f) ? VS_READY : VS_PENDING;
}

static void sync_status(struct view *v)
{
	bool started = false;

	for (size_t i = 0; i < v->n_steps; i++) {
		v->steps[i].status = display_status(v, &v->steps[i]);
		started = started || v->steps[i].f->first_start > 0 ||
			  v->steps[i].f->state != FS_PENDING;
	}
	v->revision = v->rs.plan_adopted || v->rs.proposed_revision < 0 ? v->rs.revision
									 : v->rs.proposed_revision;
	if (v->rs.ended)
		v->state = VR_FINISHED;
	else if (v->rs.plan_adopted || started)
		v->state = VR_RUNNING;
	else if (v->rs.segments > 0)
		v->state = VR_PLANNING;
	else
		v->state = VR_STARTING;
}

/* ---- gates ---- */

static const char *step_name_for(struct view *v, const cJSON *plan, const char *id)
{
	const cJSON *steps = jget(plan, "steps"), *o;
	struct vstep *s;

	if (cJSON_IsArray(steps)) {
		cJSON_ArrayForEach(o, steps)
		{
			const char *sid = jsonx_str(o, "step_id");

			if (sid && strcmp(sid, id) == 0 && jsonx_str(o, "name"))
				return jsonx_str(o, "name");
		}
	}
	s = find_step(v, id);
	return s ? s->name : "";
}

/* The body lines that describe one step (name, description, criteria, dependencies). */
static void describe_step(struct view *v, struct linestore *b, const cJSON *step)
{
	const char *id = jsonx_str(step, "step_id");
	const cJSON *arr, *it;
	char *s1, *s2, *s3;

	s1 = san(id);
	s2 = san(jsonx_str(step, "name"));
	s3 = san(jsonx_str(step, "estimated_complexity"));
	addf(b, VL_HEADER, "%s  %s  [%s]", s1, s2, s3);
	free(s1);
	free(s2);
	free(s3);
	if (jsonx_str(step, "description"))
		add_text(b, VL_TEXT, jsonx_str(step, "description"));
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
				     d ? view_status_name(display_status(v, d)) : "unknown");
				free(s1);
			}
		}
	}
}

static void describe_plan(struct view *v, struct linestore *b, const cJSON *plan)
{
	const cJSON *steps = jget(plan, "steps"), *o;

	if (jsonx_str(plan, "goal")) {
		char *g = san(jsonx_str(plan, "goal"));

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
		id = jsonx_str(it, "step_id");
		if (!id)
			id = jsonx_str(it, "id");
		name = jsonx_str(it, "name");
		if (!name && cJSON_IsObject(jget(it, "after")))
			name = jsonx_str(jget(it, "after"), "name");
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

/* The fields of a step an operator edits: key, label, and the label of one item. */
static const char *const edit_fields[][3] = {
	{"name", "name", NULL},
	{"description", "description", NULL},
	{"acceptance_criteria", "criteria", "criterion"},
	{"expected_outputs", "outputs", "output"},
	{"dependencies", "inputs", "input"},
	{"estimated_complexity", "complexity", NULL},
	{"actions", "actions", NULL},
};

static bool has_string(const cJSON *arr, const char *v)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, v))
			return true;
	return false;
}

/* Lists of text: one line per item removed or added, not the whole list twice. */
static void mark_list(struct linestore *b, const char *label, const cJSON *x, const cJSON *y)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, x)
	{
		if (cJSON_IsString(it) && !has_string(y, it->valuestring)) {
			char *t = san(it->valuestring);
			addf(b, VL_ERROR, "  - %s: %s", label, t);
			free(t);
		}
	}
	cJSON_ArrayForEach(it, y)
	{
		if (cJSON_IsString(it) && !has_string(x, it->valuestring)) {
			char *t = san(it->valuestring);
			addf(b, VL_PASS, "  + %s: %s", label, t);
			free(t);
		}
	}
}

/* One line per change of `after` against `before` (for lists, per item): what the
 * operator changed at this gate, before approving it. Returns how many fields. */
static int mark_step_changes(struct linestore *b, const cJSON *before, const cJSON *after)
{
	int n = 0;

	for (size_t f = 0; f < sizeof(edit_fields) / sizeof(edit_fields[0]); f++) {
		const cJSON *x = jget(before, edit_fields[f][0]), *y = jget(after, edit_fields[f][0]);
		char *px, *py, *sx, *sy;

		if (cJSON_Compare(x, y, true) || (!x && !y))
			continue;
		n++;
		if (edit_fields[f][2] && (!x || cJSON_IsArray(x)) && (!y || cJSON_IsArray(y))) {
			mark_list(b, edit_fields[f][2], x, y);
			continue;
		}
		px = x ? (cJSON_IsString(x) ? xstrdup(x->valuestring) : print_json(x)) : xstrdup("");
		py = y ? (cJSON_IsString(y) ? xstrdup(y->valuestring) : print_json(y)) : xstrdup("");
		sx = san(px);
		sy = san(py);
		addf(b, VL_ERROR, "  - %s: %s", edit_fields[f][1], sx);
		addf(b, VL_PASS, "  + %s: %s", edit_fields[f][1], sy);
		free(px);
		free(py);
		free(sx);
		free(sy);
	}
	return n;
}

/* ---- plan revisions: their diffs in dialogs and the run log, the proposal's rows ---- */

static const int diff_tags[] = {
	[PDL_SAME_STEP] = VL_NOTICE,	 [PDL_ADDED_STEP] = VL_DIFF_ADD,
	[PDL_ADDED] = VL_DIFF_ADD,	 [PDL_REMOVED_STEP] = VL_DIFF_DEL,
	[PDL_REMOVED] = VL_DIFF_DEL,	 [PDL_CHANGED_STEP] = VL_DIFF_CHANGE,
	[PDL_CHANGED] = VL_DIFF_CHANGE, [PDL_CONTEXT] = VL_TEXT,
};

/* What turns one plan (JSON) into another, under "head:", tagged for colour; one line when
 * nothing differs. false, and nothing added, when either is not a plan. */
static bool add_plan_diff(struct linestore *b, const char *head, const char *old_json,
			  const char *new_json)
{
	struct plandiff *d = plandiff_from_json(old_json, new_json);

	if (!d)
		return false;
	if (plandiff_empty(d)) {
		addf(b, VL_NOTICE, "%s: none.", head);
	} else {
		addf(b, VL_HEADER, "%s:", head);
		for (size_t i = 0; i < d->n_lines; i++)
			linestore_add(b, diff_tags[d->lines[i].kind], d->lines[i].text);
	}
	plandiff_free(d);
	return true;
}

/* The proposal waiting against the plan in force. */
static bool add_revision_diff(struct view *v, struct linestore *b)
{
	char *head;
	bool ok;

	if (!v->rs.plan_adopted || !v->rs.proposed_json)
		return false;
	head = xasprintf("Changes against revision %d, the plan in force", v->rs.revision);
	ok = add_plan_diff(b, head, v->rs.plan_json, v->rs.proposed_json);
	free(head);
	return ok;
}

/* The run log tells what each proposal changes: a replan against the plan in force, an edit
 * made at a gate against the proposal it replaces. */
static void log_proposal_diff(struct view *v, const char *reason)
{
	if (reason && strcmp(reason, "replan") == 0)
		add_revision_diff(v, &v->runlog);
	else if (reason && strcmp(reason, "edit") == 0 && v->logged_proposal)
		add_plan_diff(&v->runlog, "Changes made by the edit", v->logged_proposal,
			      v->rs.proposed_json);
	set_str(&v->logged_proposal, xstrdup(v->rs.proposed_json));
}

static struct plan *plan_of(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	struct plan *p = cJSON_IsObject(o) ? plan_from_json(o, NULL) : NULL;

	cJSON_Delete(o);
	return p;
}

static bool plan_gate_open(const struct view *v)
{
	for (size_t i = 0; i < v->rs.n_gates; i++)
		if (v->rs.gates[i].kind == GATE_PLAN || v->rs.gates[i].kind == GATE_REPLAN)
			return true;
	return false;
}

/* Depth in the proposal's own tree; bounded passes so a cycle cannot loop forever. */
static void proposal_depths(struct vpstep *rows, const struct plan *p)
{
	for (size_t pass = 0; pass < p->n_steps; pass++) {
		bool changed = false;

		for (size_t i = 0; i < p->n_steps; i++) {
			for (size_t d = 0; d < p->steps[i].deps.n; d++) {
				int j = plan_find(p, p->steps[i].deps.v[d]);

				if (j >= 0 && rows[j].depth + 1 > rows[i].depth &&
				    rows[j].depth + 1 <= (int)p->n_steps) {
					rows[i].depth = rows[j].depth + 1;
					changed = true;
				}
			}
		}
		if (!changed)
			break;
	}
}

/*
 * The Plan pane's other revision: while a plan or replan gate holds a proposal for a plan
 * already adopted, the proposal's steps, each marked against that plan. `changed`: the
 * plan or the proposal may differ from what the rows were built from.
 */
static void sync_proposal(struct view *v, bool changed)
{
	bool want = v->rs.plan_adopted && v->rs.proposed_json && plan_gate_open(v);
	struct plan *old, *np;

	if (!changed && want == (v->proposal != NULL))
		return;
	proposal_release(v);
	if (!want)
		return;
	old = plan_of(v->rs.plan_json);
	np = old ? plan_of(v->rs.proposed_json) : NULL;
	if (np && np->n_steps) {
		struct plandiff *d = plandiff_new(old, np);

		v->proposal = xcalloc(np->n_steps, sizeof(*v->proposal));
		v->n_proposal = np->n_steps;
		for (size_t i = 0; i < np->n_steps; i++) {
			struct vpstep *r = &v->proposal[i];

			r->key = xstrdup(np->steps[i].id);
			r->id = san(np->steps[i].id);
			r->name = san(np->steps[i].name);
			r->complexity = xstrdup(complexity_name(np->steps[i].complexity));
			r->change = d->steps[i].change;
		}
		proposal_depths(v->proposal, np);
		plandiff_free(d);
	}
	plan_free(old);
	plan_free(np);
}

/* The ids of the proposal's high-complexity steps, ", "-joined and sanitized, and their
 * count; NULL when there is none. */
static char *high_steps(const cJSON *proposed, int *n)
{
	const cJSON *it;
	struct strbuf sb;

	*n = 0;
	strbuf_init(&sb);
	cJSON_ArrayForEach(it, jget(proposed, "steps"))
	{
		const char *c = jsonx_str(it, "estimated_complexity");
		char *id;

		if (!c || strcmp(c, "high") != 0)
			continue;
		id = san(jsonx_str(it, "step_id"));
		strbuf_addf(&sb, "%s%s", (*n)++ ? ", " : "", id);
		free(id);
	}
	if (!*n) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/*
 * What the operator must weigh before approving a plan, first in its dialog (issue 29):
 * an estimate over the budget, high-complexity steps, and the gates that will ask again
 * while it runs (the run's policy, from the fold). Nothing when there is nothing to weigh.
 */
static void plan_weigh(struct view *v, struct vgate *g, const cJSON *o, const cJSON *proposed)
{
	unsigned on = v->rs.gates_known && !v->rs.yes ? v->rs.gates_on : 0;
	int n_high = 0, lines = 0;
	char *high = high_steps(proposed, &n_high);

	if (jbool(o, "over_budget", false)) {
		double cap = 0, left;
		double est = 0;
		bool known = jsonx_num(o, "estimate_usd", &est);
		char mc[32], ml[32], me[32];

		jsonx_num(o, "budget_usd", &cap);
		left = cap - v->rs.spent_usd;
		money(mc, sizeof(mc), cap, true);
		money(ml, sizeof(ml), left > 0 ? left : 0, true);
		money(me, sizeof(me), est, known);
		addf(&g->body, VL_WARN,
		     "Over budget: the estimate %s is more than the %s left of the %s budget.", me,
		     ml, mc);
		lines++;
	}
	if (high) {
		addf(&g->body, VL_WARN, "%d high-complexity step%s: %s%s", n_high,
		     n_high == 1 ? "" : "s", high,
		     on & GATE_MASK(GATE_HIGH) ? " (each asks again before it starts)" : "");
		lines++;
	}
	if (on & GATE_MASK(GATE_STEP)) {
		linestore_add(&g->body, VL_NOTICE, "Every step asks before it starts (step gate).");
		lines++;
	}
	/* MCP calls ask too, but the journal does not say before the first one whether the
	 * run has MCP servers: only the shell is named here. */
	if (on & GATE_MASK(GATE_SHELL)) {
		linestore_add(&g->body, VL_NOTICE,
			      "Tools that will ask: every shell command not on the allow list "
			      "(shell gate).");
		lines++;
	}
	free(high);
	if (lines)
		linestore_add(&g->body, VL_TEXT, "");
}

/* Fills a plan or replan gate's dialog: the proposal waiting there. */
static void gate_plan_body(struct view *v, struct vgate *g, const cJSON *o, const cJSON *proposed)
{
	double d = 0;
	char m[32];

	if (g->kind == GATE_PLAN) {
		bool known = jsonx_num(o, "estimate_usd", &d);

		g->title = xasprintf("Approve the plan (revision %ld)", jlong(o, "revision", 0));
		plan_weigh(v, g, o, proposed);
		money(m, sizeof(m), d, known);
		addf(&g->body, VL_HEADER, "Estimated cost: %s%s", m,
		     known ? "" : " (a model's price is unknown)");
		if (proposed)
			describe_plan(v, &g->body, proposed);
	} else {
		char *fs = san(jsonx_str(o, "failed_step"));

		g->title = xasprintf("Replan after step %s (revision %ld)", fs,
				     jlong(o, "revision", 0));
		free(fs);
		if (jsonx_str(o, "reason")) {
			linestore_add(&g->body, VL_HEADER, "Why:");
			add_text(&g->body, VL_CRITIQUE, jsonx_str(o, "reason"));
		}
		if (!add_revision_diff(v, &g->body) && cJSON_IsObject(jget(o, "diff")))
			describe_diff(v, &g->body, jget(o, "diff"), proposed);
	}
	g->edit_json = xstrdup(v->rs.proposed_json);
}

static void gate_budget_body(struct vgate *g, const cJSON *o)
{
	double d, spent = 0, cap = 0;
	char m1[32], m2[32];
	bool have_spent = jsonx_num(o, "spent_usd", &spent);
	bool have_cap = jsonx_num(o, "budget_usd", &cap);

	money(m1, sizeof(m1), spent, have_spent);
	money(m2, sizeof(m2), cap, have_cap);
	g->title = xstrdup("Budget reached");
	if (jsonx_num(o, "spent_usd", &d))
		g->spent_usd = d;
	if (jsonx_num(o, "reserved_usd", &d))
		g->reserved_usd = d;
	if (jsonx_num(o, "needed_usd", &d))
		g->needed_usd = d;
	if (jsonx_num(o, "budget_usd", &d))
		g->budget_usd = d;
	addf(&g->body, VL_WARN, "Spent %s of the %s budget.", m1, m2);
	if (g->reserved_usd > 0)
		addf(&g->body, VL_TEXT, "Calls in flight hold $%.4f more.", g->reserved_usd);
	if (g->needed_usd > 0)
		addf(&g->body, VL_TEXT, "The call that waits needs about $%.4f.", g->needed_usd);
	if (g->spent_usd >= 0 && g->budget_usd > 0)
		addf(&g->body, VL_TEXT, "That is %.0f%% of the budget%s.",
		     100.0 * view_gate_committed(g) / g->budget_usd,
		     g->reserved_usd > 0 || g->needed_usd > 0 ? " with those calls" : "");
	if (g->budget_usd > 0)
		addf(&g->body, VL_NOTICE,
		     "Raise the cap and go on: a to $%.4f (+50%%), d to $%.4f (double), e to a "
		     "figure you type. x stops the run (it can be resumed with a higher --budget).",
		     g->budget_usd * 1.5, g->budget_usd * 2);
	else
		linestore_add(&g->body, VL_NOTICE,
			      "Raise the cap (a, d, e) or stop the run (x).");
}

#define MCP_ARGS_SHOWN 4000 /* of a call's arguments, the mcp gate shows this much */

/* The mcp gate: which server and tool, with what arguments, and what the server says of
 * the tool (its annotations are shown as its claims, never as facts). */
static void gate_mcp_lines(struct vgate *g, const cJSON *o)
{
	const cJSON *args = jget(o, "arguments"), *ann = jget(o, "annotations"), *it;
	char *server = san(jsonx_str(o, "server")), *tool = san(jsonx_str(o, "mcp_tool"));
	char *p = args ? cJSON_Print(args) : NULL;
	static const struct {
		const char *key, *yes, *no;
	} hints[] = {
		{"readOnlyHint", "read-only", "may change things"},
		{"destructiveHint", "may destroy data", "not destructive"},
		{"idempotentHint", "idempotent", "not idempotent"},
		{"openWorldHint", "reaches beyond its own data", "stays within its own data"},
	};

	addf(&g->body, VL_HEADER, "Server %s, tool %s", server, tool);
	if (jsonx_str(o, "description"))
		add_text(&g->body, VL_TEXT, jsonx_str(o, "description"));
	linestore_add(&g->body, VL_HEADER, "Arguments:");
	if (p && strlen(p) > MCP_ARGS_SHOWN) {
		size_t n = MCP_ARGS_SHOWN;
		while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
			n--;
		p[n] = '\0';
		add_text(&g->body, VL_WARN, p);
		linestore_add(&g->body, VL_NOTICE, "(cut here; the drill-down holds them all)");
	} else {
		add_text(&g->body, VL_WARN, p ? p : "{}");
	}
	cJSON_free(p);
	cJSON_ArrayForEach(it, (cJSON_IsObject(ann) ? ann : NULL)) {
		for (size_t k = 0; k < sizeof(hints) / sizeof(hints[0]); k++)
			if (it->string && !strcmp(it->string, hints[k].key) && cJSON_IsBool(it))
				addf(&g->body, VL_NOTICE, "The server says: %s (%s; not checked)",
				     cJSON_IsTrue(it) ? hints[k].yes : hints[k].no, hints[k].key);
	}
	addf(&g->body, VL_NOTICE,
	     "Not on the allow list of [mcp.%s]: allow = [\"%s\"] lets it skip this gate.",
	     server, tool);
	free(server);
	free(tool);
}

/* High, step, shell and mcp gates: about one step (and, for shell, its command). */
static void gate_step_body(struct view *v, struct vgate *g, const cJSON *o)
{
	const cJSON *step = jget(o, "step");
	struct vstep *s = find_step(v, g->step_id);
	cJSON *fallback = NULL;
	char *name;

	if (!cJSON_IsObject(step) && s && s->f->json)
		step = fallback = cJSON_Parse(s->f->json);
	name = san(cJSON_IsObject(step) ? jsonx_str(step, "name") : (s ? s->name : NULL));
	if (g->kind == GATE_HIGH)
		g->title = xasprintf("High-complexity step: %s", name);
	else if (g->kind == GATE_SHELL)
		g->title = xstrdup(jbool(o, "edited", false) ? "Run the edited shell command?"
							    : "Run a shell command?");
	else if (g->kind == GATE_MCP)
		g->title = xstrdup("Call an MCP tool?");
	else
		g->title = xasprintf("Before step: %s", name);
	free(name);
	if (jsonx_str(o, "command")) {
		bool edited = g->kind == GATE_SHELL && jbool(o, "edited", false);

		g->command = san(jsonx_str(o, "command"));
		linestore_add(&g->body, VL_HEADER, edited ? "Command (edited):" : "Command:");
		add_text(&g->body, VL_WARN, jsonx_str(o, "command"));
		if (edited && jsonx_str(o, "edited_from")) {
			linestore_add(&g->body, VL_NOTICE,
				      "Edited at this gate (a runs it); the model had asked for:");
			add_text(&g->body, VL_DIFF_DEL, jsonx_str(o, "edited_from"));
		}
	}
	if (g->kind == GATE_MCP) {
		char *id = san(g->step_id);

		gate_mcp_lines(g, o);
		addf(&g->body, VL_NOTICE, "Asked by step %s; other steps go on meanwhile.",
		     *id ? id : "?");
		free(id);
	}
	if (g->kind == GATE_SHELL) {
		char *id = san(g->step_id);

		shell_view_gate(&g->body, o);
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

/* Rewind gates: the files a restore would write over someone else's change, whose they
 * were, and (on d) the diff from what is there now to what a restore writes. */
static void gate_rewind_body(struct view *v, struct vgate *g, const cJSON *o)
{
	const cJSON *it;
	const char *diff = jsonx_str(o, "diff");
	char *id = san(g->step_id);
	size_t n = 0;

	(void)v;
	g->title = xasprintf("Restore over someone else's change? (step %s)", id);
	addf(&g->body, VL_TEXT,
	     "Step %s runs again and starts where it first started. These files were changed "
	     "by its earlier attempts and by someone else since (another step, or you in an "
	     "editor):",
	     id);
	cJSON_ArrayForEach(it, jget(o, "paths"))
	{
		char *path = san(jsonx_str(it, "path")), *of = san(jsonx_str(it, "of_step"));
		const char *cp = jsonx_str(it, "checkpoint");

		addf(&g->body, VL_WARN, "  %s  (step %s's; back to checkpoint %.12s)", path, of,
		     cp ? cp : "?");
		free(path);
		free(of);
		n++;
	}
	addf(&g->body, VL_NOTICE,
	     "a restores %s as before the step first changed %s (the change made since is "
	     "lost); s keeps theirs (the step starts on %s); d %s what a restore would change; "
	     "x rejects (the run is aborted).",
	     n == 1 ? "it" : "them", n == 1 ? "it" : "them", n == 1 ? "it" : "them",
	     g->show_diff ? "hides" : "shows");
	if (g->show_diff) {
		char *clean = textsan_clean(diff ? diff : "", diff ? strlen(diff) : 0,
					    TEXTSAN_KEEP_NL);
		char *line = clean, *nl;

		linestore_add(&g->body, VL_HEADER, "What a restore would change (now → checkpoint):");
		if (!*clean)
			linestore_add(&g->body, VL_TEXT, "(no difference in content)");
		while (*line) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			linestore_add(&g->body,
				      line[0] == '+' && strncmp(line, "+++", 3)   ? VL_DIFF_ADD
				      : line[0] == '-' && strncmp(line, "---", 3) ? VL_DIFF_DEL
				      : line[0] == '@'                            ? VL_HEADER
										  : VL_TEXT,
				      line);
			if (!nl)
				break;
			line = nl + 1;
		}
		if (jbool(o, "diff_cut", false))
			linestore_add(&g->body, VL_NOTICE, "(the diff is cut here)");
		free(clean);
	}
	free(id);
}

/* The dialog of a gate the fold has just opened. */
static void gate_open(struct view *v, const cJSON *o)
{
	unsigned long id = (unsigned long)jlong(o, "gate_id", 0);
	const struct fgate *fg = fold_find_gate(&v->rs, id);
	struct vgate *g = NULL;
	cJSON *proposed;

	if (!fg)
		return; /* the fold did not take it (no known kind) */
	for (size_t i = 0; i < v->n_gates && !g; i++) {
		if (v->gates[i].id == id) {
			g = &v->gates[i];
			gate_release(g);
		}
	}
	if (!g) {
		v->gates = xgrow(v->gates, &v->cap_gates, v->n_gates + 1, sizeof(*v->gates));
		g = &v->gates[v->n_gates++];
	}
	memset(g, 0, sizeof(*g));
	linestore_init(&g->body);
	g->id = id;
	g->kind = fg->kind;
	g->step_id = xstrdup(fg->step_id);
	g->spent_usd = g->reserved_usd = g->needed_usd = g->budget_usd = -1;
	proposed = v->rs.proposed_json ? cJSON_Parse(v->rs.proposed_json) : NULL;
	switch (g->kind) {
	case GATE_PLAN:
	case GATE_REPLAN: gate_plan_body(v, g, o, proposed); break;
	case GATE_BUDGET: gate_budget_body(g, o); break;
	case GATE_REWIND: gate_rewind_body(v, g, o); break;
	case GATE_ELICIT:
		g->title = xstrdup("An MCP server asks");
		elicit_view_body(&g->body, o);
		break;
	case GATE_HIGH:
	case GATE_SHELL:
	case GATE_MCP:
	case GATE_STEP:
	case GATE__COUNT: gate_step_body(v, g, o); break;
	}
	cJSON_Delete(proposed);
	g->orig_json = xstrdup(g->edit_json);
	addf(&v->runlog, VL_WARN, "Gate open: %s", g->title);
}

/*
 * A gate always shows the current definitions: after an edit at the gate (a step.edit, or
 * a plan.proposed with reason edit) its dialog is built again from them, with what was
 * changed since it opened marked; a budget gate shows the spend as it is now.
 */
static void gate_rebuild(struct view *v, struct vgate *g)
{
	const struct fgate *fg = fold_find_gate(&v->rs, g->id);
	cJSON *o = fg && fg->json ? cJSON_Parse(fg->json) : NULL, *before = NULL, *now = NULL;
	char *orig = g->orig_json;
	unsigned long id = g->id;
	enum gate_kind kind = g->kind;
	char *step_id = g->step_id;
	bool show_diff = g->show_diff;

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return;
	}
	g->orig_json = NULL;
	g->step_id = NULL;
	gate_release(g);
	memset(g, 0, sizeof(*g));
	linestore_init(&g->body);
	g->id = id;
	g->kind = kind;
	g->step_id = step_id;
	g->orig_json = orig;
	g->show_diff = show_diff;
	g->spent_usd = g->reserved_usd = g->needed_usd = g->budget_usd = -1;
	before = orig ? cJSON_Parse(orig) : NULL;
	switch (kind) {
	case GATE_REWIND:
		gate_rewind_body(v, g, o);
		break;
	case GATE_ELICIT:
		g->title = xstrdup("An MCP server asks");
		elicit_view_body(&g->body, o);
		break;
	case GATE_PLAN:
	case GATE_REPLAN:
		now = v->rs.proposed_json ? cJSON_Parse(v->rs.proposed_json) : NULL;
		gate_plan_body(v, g, o, now);
		if (before && now && !cJSON_Compare(before, now, true) &&
		    !add_plan_diff(&g->body, "Edited at this gate (a approves it)", orig,
				   v->rs.proposed_json))
			linestore_add(&g->body, VL_HEADER, "Edited at this gate (a approves it).");
		break;
	case GATE_BUDGET:
		/* The spend as it is now, not as it was when the gate opened. */
		cJSON_DeleteItemFromObject(o, "spent_usd");
		cJSON_AddNumberToObject(o, "spent_usd", v->rs.spent_usd);
		gate_budget_body(g, o);
		break;
	case GATE_HIGH:
	case GATE_STEP:
	case GATE_SHELL:
	case GATE_MCP:
	case GATE__COUNT: {
		int i = fold_find_step(&v->rs, step_id);
		if (i >= 0 && v->rs.steps[i].json && kind != GATE_SHELL && kind != GATE_MCP) {
			now = cJSON_Parse(v->rs.steps[i].json);
			if (cJSON_IsObject(now)) {
				cJSON_DeleteItemFromObject(o, "step");
				cJSON_AddItemToObject(o, "step", cJSON_Duplicate(now, true));
			}
		}
		gate_step_body(v, g, o);
		if (before && now && !cJSON_Compare(before, now, true)) {
			linestore_add(&g->body, VL_HEADER, "Edited at this gate (a approves it):");
			mark_step_changes(&g->body, before, now);
		}
		break;
	}
	}
	cJSON_Delete(before);
	cJSON_Delete(now);
	cJSON_Delete(o);
}

/* Rebuilds the open gates an event changes. */
static void refresh_gates(struct view *v, enum event_type t, const char *step_id)
{
	for (size_t i = 0; i < v->n_gates; i++) {
		struct vgate *g = &v->gates[i];
		bool plan = g->kind == GATE_PLAN || g->kind == GATE_REPLAN;

		if ((t == EV_PLAN_PROPOSED && plan) || (t == EV_LLM_CALL && g->kind == GATE_BUDGET) ||
		    (t == EV_STEP_EDIT && !plan && g->kind != GATE_BUDGET && g->step_id && step_id &&
		     !strcmp(g->step_id, step_id)))
			gate_rebuild(v, g);
	}
}

static void gate_decision(struct view *v, const cJSON *o)
{
	unsigned long id = (unsigned long)jlong(o, "gate_id", 0);
	const char *kind = jsonx_str(o, "gate"), *sid = jsonx_str(o, "step_id");
	char *d, *b = san(jsonx_str(o, "by"));
	char *r = san_or_null(jsonx_str(o, "reason")), *k, *si;
	struct vstep *s;

	if (!r && jbool(o, "remember", false))
		r = xstrdup("this exact command is allowed for the rest of the run");
	/* The dialog still holds what the gate was about (the fold has closed it). */
	for (size_t i = 0; i < v->n_gates; i++) {
		if (v->gates[i].id == id) {
			kind = gate_kind_name(v->gates[i].kind);
			sid = v->gates[i].step_id;
			break;
		}
	}
	k = san(kind);
	d = san(gate_decision_word(kind, jsonx_str(o, "decision")));
	si = san_or_null(sid);
	s = find_step(v, sid);
	if (s)
		addf(&s->log, VL_NOTICE, "Gate %s: %s by %s%s", k, d, b,
		     jbool(o, "remember", false) ? " \xe2\x80\x94 allowed for the rest of the run"
						 : "");
	addf(&v->runlog, VL_NOTICE, "Gate %s%s%s: %s by %s%s%s", k, si ? " " : "", si ? si : "", d,
	     b, r ? " \xe2\x80\x94 " : "", r ? r : "");
	free(d);
	free(b);
	free(r);
	free(k);
	free(si);
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

/* ---- event handlers: what each event adds to the logs ---- */

struct ctx {
	struct view *v;
	const cJSON *o;
	struct vstep *step;    /* the event's step, when it names a known one */
	struct linestore *log; /* the step's log, else the run log */
};

static void on_run_start(struct ctx *c)
{
	struct view *v = c->v;

	addf(&v->runlog, VL_HEADER, "Run %s started%s", v->run_id ? v->run_id : "",
	     v->rs.simulated ? " (simulated models)" : "");
	if (v->task)
		addf(&v->runlog, VL_TEXT, "Task: %s", v->task);
}

static void on_run_resume(struct ctx *c)
{
	linestore_close(&c->v->runlog);
	linestore_add(&c->v->runlog, VL_HEADER, "Run resumed from its journal");
}

static void on_run_reopen(struct ctx *c)
{
	char *r = san(jsonx_str(c->o, "reason"));

	c->v->aborting = false;
	linestore_close(&c->v->runlog);
	addf(&c->v->runlog, VL_HEADER, "Run reopened%s%s%s", *r ? " (" : "", r, *r ? ")" : "");
	free(r);
}

static void on_plan_proposed(struct ctx *c)
{
	struct view *v = c->v;
	const cJSON *plan = jget(c->o, "plan"), *steps;
	char *reason = san(jsonx_str(c->o, "reason"));
	char m[32];

	if (cJSON_IsObject(plan)) {
		steps = jget(plan, "steps");
		money(m, sizeof(m), v->rs.estimate_usd, v->rs.estimate_usd >= 0);
		addf(&v->runlog, VL_HEADER,
		     "Plan proposed: revision %ld%s%s, %d steps, estimate %s",
		     jlong(c->o, "revision", 0), *reason ? ", " : "", reason,
		     cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0, m);
		log_proposal_diff(v, jsonx_str(c->o, "reason"));
	}
	free(reason);
}

static void on_plan_adopted(struct ctx *c)
{
	if (cJSON_IsObject(jget(c->o, "plan")))
		addf(&c->v->runlog, VL_PASS, "Plan revision %d adopted", c->v->rs.revision);
	free(c->v->logged_proposal);
	c->v->logged_proposal = NULL;
}

static void on_step_start(struct ctx *c)
{
	struct vstep *s = c->step;

	if (!s)
		return;
	linestore_close(&s->log);
	addf(&s->log, VL_HEADER, "\xe2\x94\x80\xe2\x94\x80 attempt %d \xe2\x94\x80\xe2\x94\x80",
	     s->f->attempts);
}

static void on_step_state(struct ctx *c)
{
	struct vstep *s = c->step;
	const char *st = jsonx_str(c->o, "state");
	char *r;

	if (!s || !st || fold_state_from_name(st) < 0)
		return;
	/* The attempt header and "Result in; verifying" already say these two. */
	if (strcmp(st, "running") == 0 || strcmp(st, "verifying") == 0)
		return;
	r = san_or_null(jsonx_str(c->o, "reason"));
	linestore_close(&s->log);
	addf(&s->log, strcmp(st, "stale") == 0 ? VL_WARN : VL_NOTICE, "Now %s%s%s",
	     view_status_name(display_status(c->v, s)), r ? " \xe2\x80\x94 " : "", r ? r : "");
	free(r);
}

/* Whether the engine is working on the step's current attempt. */
static bool in_flight(const struct vstep *s)
{
	return (s->f->state == FS_RUNNING || s->f->state == FS_VERIFYING) &&
	       !current(s->cancelled_attempt, s->f);
}

/* Pause-and-cancel, edit or skip: the engine drops this attempt and starts the step over
 * later (or skips it); until then it is not running. */
static void step_cancelled(struct vstep *s)
{
	s->cancelled_attempt = s->f->attempts > 0 ? s->f->attempts : 1;
}

static void on_llm_call(struct ctx *c)
{
	const char *role = jsonx_str(c->o, "role"), *status = jsonx_str(c->o, "status");
	const char *model = jsonx_str(c->o, "model");
	const char *stop = jsonx_str(c->o, "stop_reason");
	struct vstep *s = c->step;
	static const char *const roles[VC__COUNT] = {"planner", "executor", "verifier"};

	for (int r = 0; role && model && r < VC__COUNT; r++)
		if (strcmp(role, roles[r]) == 0)
			set_str(&c->v->model[r], san(model));
	if (status && strcmp(status, "cancelled") == 0 && s && in_flight(s)) {
		linestore_close(c->log);
		addf(c->log, VL_WARN, "%s call cancelled; the step starts over",
		     role ? role : "model");
		step_cancelled(s);
	} else if (status && strcmp(status, "ok") != 0) {
		char *e = san(jsonx_str(c->o, "error")), *st = san(status);

		linestore_close(c->log);
		addf(c->log, VL_ERROR, "%s call %s: %s", role ? role : "model", st, e);
		free(e);
		free(st);
	} else if (status && llm_stop_notable(stop)) {
		char *why = san(stop);

		linestore_close(c->log);
		addf(c->log, VL_WARN, "%s answer %s (stop reason \"%s\")", role ? role : "model",
		     llm_stop_is_cutoff(stop) ? "cut off at the token limit"
		                              : "stopped by the server",
		     why);
		free(why);
	}
}

static void on_llm_delta(struct ctx *c)
{
	const char *role = jsonx_str(c->o, "role"), *text = jsonx_str(c->o, "text");

	if (!text || !role)
		return;
	if (strcmp(role, "executor") == 0 && c->step)
		stream_into(&c->step->log, &c->step->carry, &c->step->carry_len, text);
	else if (strcmp(role, "planner") == 0) {
		const char *purpose = jsonx_str(c->o, "purpose");

		if (purpose && strcmp(purpose, "synthesize") == 0) {
			/* The answer as it comes, under the heading run.final would add. */
			if (!c->v->answer_streaming) {
				linestore_close(&c->v->runlog);
				linestore_add(&c->v->runlog, VL_HEADER, "Final answer:");
				strbuf_reset(&c->v->answer_stream);
				c->v->answer_streaming = true;
			}
			strbuf_adds(&c->v->answer_stream, text);
		}
		stream_into(&c->v->runlog, &c->v->runlog_carry, &c->v->runlog_carry_len, text);
	}
}

static void on_llm_retry(struct ctx *c)
{
	const char *role = jsonx_str(c->o, "role");
	long http = jlong(c->o, "http_status", 0), wait = jlong(c->o, "wait_ms", 0);
	char *reason = san(jsonx_str(c->o, "reason"));
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
	char *tool = san(jsonx_str(c->o, "tool")), *p = print_json(jget(c->o, "params"));
	char *ps = san(p), *pt = textsan_truncate(ps, PARAMS_COLS);

	char *server = san_or_null(jsonx_str(c->o, "server"));

	linestore_close(c->log);
	if (server) /* an MCP server's tool: which server is named */
		addf(c->log, VL_TOOL, "\xe2\x86\x92 %s (MCP server %s) %s", tool, server, pt);
	else
		addf(c->log, VL_TOOL, "\xe2\x86\x92 %s %s", tool, pt);
	free(server);
	free(tool);
	free(p);
	free(ps);
	free(pt);
}

static void on_tool_result(struct ctx *c)
{
	bool ok = jbool(c->o, "ok", false);
	char *tool, *sum;

	if (shell_view_result(c->log, c->o))
		return; /* the command as it ran, then its output as lines */
	const char *raw = jsonx_str(c->o, "summary");
	long bytes = jlong(c->o, "bytes", 0);

	tool = san(jsonx_str(c->o, "tool"));
	sum = san(raw);
	linestore_close(c->log);
	/* The size only when the summary is not the whole output: a write_file line says
	 * what it wrote ("created x (179 bytes)"), and a second size would be the reply's. */
	if (raw && bytes > (long)strlen(raw))
		addf(c->log, ok ? VL_TOOL_OK : VL_TOOL_FAIL, "\xe2\x86\x90 %s %s: %s (%ld bytes)",
		     tool, ok ? "ok" : "failed", sum, bytes);
	else
		addf(c->log, ok ? VL_TOOL_OK : VL_TOOL_FAIL, "\xe2\x86\x90 %s %s: %s", tool,
		     ok ? "ok" : "failed", sum);
	free(tool);
	free(sum);
}

static void on_step_output(struct ctx *c)
{
	const cJSON *res = jget(c->o, "result");
	struct vstep *s = c->step;
	double conf;

	if (!s)
		return;
	s->output_attempt = (int)jlong(c->o, "attempt", s->f->attempts);
	linestore_close(&s->log);
	if (cJSON_IsObject(res) && jsonx_num(res, "confidence", &conf))
		addf(&s->log, VL_NOTICE, "Result in (confidence %.2f); verifying\xe2\x80\xa6",
		     conf);
	else
		linestore_add(&s->log, VL_NOTICE, "Result in; verifying\xe2\x80\xa6");
}

/* What the attempt changed in the workspace: one line in its step's log. */
static void on_step_changes(struct ctx *c)
{
	struct vstep *s = c->step;
	char *line, *clean;

	if (!s)
		return;
	line = event_changes_summary(c->o, 3);
	clean = san(line);
	linestore_close(&s->log);
	linestore_add(&s->log, VL_NOTICE, clean);
	free(clean);
	free(line);
}

/* The drawable row of the verdict the fold has just added. */
static void on_verdict(struct ctx *c)
{
	struct view *v = c->v;
	const struct fverdict *fv;
	struct vverdict *vd;
	struct vstep *s = c->step;

	if (v->rs.n_verdicts <= v->n_verdicts)
		return;
	fv = &v->rs.verdicts[v->rs.n_verdicts - 1];
	v->verdicts = xgrow(v->verdicts, &v->cap_verdicts, v->n_verdicts + 1,
			    sizeof(*v->verdicts));
	vd = &v->verdicts[v->n_verdicts++];
	memset(vd, 0, sizeof(*vd));
	vd->step_id = san(fv->step_id);
	vd->stage = san(fv->stage);
	vd->action = san(fv->action);
	vd->severity = san_or_null(fv->severity);
	vd->feedback = san_or_null(fv->feedback);
	vd->attempt = fv->attempt;
	vd->overall_pass = fv->overall_pass;
	{
		/* What the verdict was about: the attempt's step.changes came before it. */
		const struct fchange *fc = fold_find_change(&v->rs, fv->step_id, fv->attempt);
		char *sum = fc ? rundiff_summary(fc, 3) : NULL;

		vd->changes = sum ? san(sum) : NULL;
		free(sum);
	}
	vd->criteria = xcalloc(fv->n_criteria + 1, sizeof(*vd->criteria));
	for (size_t i = 0; i < fv->n_criteria; i++) {
		struct vcriterion *cr = &vd->criteria[vd->n_criteria++];

		cr->text = san(fv->criteria[i].text);
		cr->evidence = san_or_null(fv->criteria[i].evidence);
		cr->passed = fv->criteria[i].passed;
		cr->not_judged = fv->criteria[i].not_judged;
		cr->confidence = fv->criteria[i].confidence;
	}
	if (!s)
		return;
	linestore_close(&s->log);
	addf(&s->log, vd->overall_pass ? VL_PASS : VL_CRITIQUE, "Verdict (%s): %s%s%s", vd->stage,
	     vd->action, vd->severity ? ", " : "", vd->severity ? vd->severity : "");
	for (size_t i = 0; i < vd->n_criteria; i++) {
		if (vd->criteria[i].not_judged)
			addf(&s->log, VL_NOTICE, "  ? %s (not judged)", vd->criteria[i].text);
		else if (!vd->criteria[i].passed)
			addf(&s->log, VL_CRITIQUE, "  \xe2\x9c\x97 %s", vd->criteria[i].text);
	}
	if (!vd->overall_pass && vd->feedback)
		addf(&s->log, VL_CRITIQUE, "Critique for the next attempt: %s", vd->feedback);
	if (strcmp(vd->action, "retry") == 0 || strcmp(vd->action, "replan") == 0)
		s->retry_attempt = vd->attempt > 0 ? vd->attempt : s->f->attempts;
}

static void on_step_end(struct ctx *c)
{
	struct vstep *s = c->step;
	bool reused = jbool(c->o, "reused", false);
	int st = fold_state_from_name(jsonx_str(c->o, "status"));

	if (!s || st < 0 || !fold_state_settled((enum fstep_state)st))
		return;
	linestore_close(&s->log);
	addf(&s->log, st == FS_PASSED ? VL_PASS : VL_WARN, "Step %s%s after %d attempt%s",
	     st == FS_PASSED ? "passed" : st == FS_SKIPPED ? "skipped" : "fail-accepted",
	     reused ? " (result reused)" : "", s->f->attempts, s->f->attempts == 1 ? "" : "s");
}

static void on_step_edit(struct ctx *c)
{
	char *by = san(jsonx_str(c->o, "by"));

	if (c->step && cJSON_IsObject(jget(c->o, "after")))
		addf(&c->step->log, VL_WARN, "Step edited by %s", *by ? by : "operator");
	free(by);
}

static void on_operator_command(struct ctx *c)
{
	char *cmd = san(jsonx_str(c->o, "command")), *sid = san_or_null(jsonx_str(c->o, "step_id"));

	addf(c->log, VL_NOTICE, "Operator: %s%s%s", cmd, sid ? " " : "", sid ? sid : "");
	free(cmd);
	free(sid);
}

static void on_notice(struct ctx *c)
{
	const char *level = jsonx_str(c->o, "level"), *kind = jsonx_str(c->o, "kind");
	int k = VL_NOTICE;

	if (level && strcmp(level, "warn") == 0)
		k = VL_WARN;
	else if (level && strcmp(level, "error") == 0)
		k = VL_ERROR;
	if (kind && strcmp(kind, "abort") == 0)
		c->v->aborting = true;
	else if (kind && strcmp(kind, "step_cancelled") == 0 && c->step && in_flight(c->step))
		/* An attempt cancelled inside a tool call, where no llm.call says so. */
		step_cancelled(c->step);
	else if (kind && strcmp(kind, "tool_retry") == 0)
		k = VL_RETRY;
	linestore_close(c->log);
	add_text(c->log, k, jsonx_str(c->o, "message"));
}

static void on_run_final(struct ctx *c)
{
	const char *answer = jsonx_str(c->o, "answer");

	bool shown = c->v->answer_streaming && answer &&
		     strcmp(c->v->answer_stream.buf, answer) == 0;

	c->v->answer_streaming = false;
	if (!answer)
		return;
	linestore_close(&c->v->runlog);
	/* Streamed whole already (issue 29: the run log printed the answer twice); one that
	 * differs from its stream (PARTIAL:, a retried call) is printed as it stands. */
	if (shown)
		return;
	linestore_add(&c->v->runlog, VL_HEADER, "Final answer:");
	add_text(&c->v->runlog, VL_TEXT, answer);
}

static void on_run_end(struct ctx *c)
{
	struct view *v = c->v;
	char *st = san(v->rs.end_status), *reason = san_or_null(v->rs.end_reason);

	linestore_close(&v->runlog);
	addf(&v->runlog, strcmp(st, "passed") == 0 ? VL_PASS : VL_WARN, "Run finished: %s%s%s", st,
	     reason ? " \xe2\x80\x94 " : "", reason ? reason : "");
	free(st);
	free(reason);
}

static void on_gate_open(struct ctx *c)
{
	gate_open(c->v, c->o);
}

static void on_gate_decision(struct ctx *c)
{
	gate_decision(c->v, c->o);
}

typedef void (*handler_fn)(struct ctx *c);

static const handler_fn handlers[EV__COUNT] = {
	[EV_RUN_START] = on_run_start,
	[EV_RUN_RESUME] = on_run_resume,
	[EV_RUN_REOPEN] = on_run_reopen,
	[EV_PLAN_PROPOSED] = on_plan_proposed,
	[EV_PLAN_ADOPTED] = on_plan_adopted,
	[EV_GATE_OPEN] = on_gate_open,
	[EV_GATE_DECISION] = on_gate_decision,
	[EV_STEP_START] = on_step_start,
	[EV_STEP_STATE] = on_step_state,
	[EV_LLM_CALL] = on_llm_call,
	[EV_LLM_DELTA] = on_llm_delta,
	[EV_LLM_RETRY] = on_llm_retry,
	[EV_TOOL_CALL] = on_tool_call,
	[EV_TOOL_RESULT] = on_tool_result,
	[EV_STEP_CHANGES] = on_step_changes,
	[EV_STEP_OUTPUT] = on_step_output,
	[EV_VERIFY_VERDICT] = on_verdict,
	[EV_STEP_END] = on_step_end,
	[EV_STEP_EDIT] = on_step_edit,
	[EV_OPERATOR_COMMAND] = on_operator_command,
	[EV_NOTICE] = on_notice,
	[EV_RUN_FINAL] = on_run_final,
	[EV_RUN_END] = on_run_end,
};

double view_gate_committed(const struct vgate *g)
{
	double t = 0;

	t += g->spent_usd > 0 ? g->spent_usd : 0;
	t += g->reserved_usd > 0 ? g->reserved_usd : 0;
	t += g->needed_usd > 0 ? g->needed_usd : 0;
	return t;
}

void view_gate_toggle_diff(struct view *v, struct vgate *g)
{
	if (g->kind != GATE_REWIND)
		return;
	g->show_diff = !g->show_diff;
	gate_rebuild(v, g);
}

void view_forget_gates(struct view *v)
{
	fold_forget_gates(&v->rs);
	sync_gates(v);
	sync_proposal(v, false);
	sync_status(v);
}

/*
 * Remembers the event behind the lines it added to a log (logref.h), for the drill-down.
 * Streamed text continuing an open line belongs to the entry that opened it.
 */
static void note_lines(struct view *v, struct logref *r, const struct linestore *ls, size_t n0,
		       bool was_open, const struct event *ev)
{
	if (ls->n <= n0 || (ev->type == EV_LLM_DELTA && was_open))
		return;
	logref_add(r, n0, (int)ev->type, ev->seq, ev->type == EV_LLM_DELTA ? NULL : ev->json,
		   &v->ref_budget);
}

/*
 * The fold first (run state), then the steps and strings it changed, then what the event
 * adds to the logs and dialogs (which reads both), then the statuses shown.
 */
void view_apply(struct view *v, const struct event *ev)
{
	struct ctx c = {v, NULL, NULL, NULL};
	cJSON *o;
	enum event_type t;

	if (!ev || !ev->json || (int)ev->type < 0 || ev->type >= EV__COUNT)
		return;
	o = cJSON_Parse(ev->json);
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return;
	}
	t = ev->type;
	fold_apply_json(&v->rs, (int)t, o);
	if (t == EV_LLM_DELTA) {
		/* Streamed text, many a second: it changes no run state, only a log. */
		c.o = o;
		c.step = find_step(v, jsonx_str(o, "step_id"));
		{
			struct vstep *s = c.step;
			size_t ns = s ? s->log.n : 0, nr = v->runlog.n;
			bool os = s && s->log.open, orun = v->runlog.open;

			on_llm_delta(&c);
			if (s)
				note_lines(v, &s->refs, &s->log, ns, os, ev);
			note_lines(v, &v->runlog_refs, &v->runlog, nr, orun, ev);
		}
		cJSON_Delete(o);
		return;
	}
	sync_steps(v, t == EV_PLAN_PROPOSED || t == EV_PLAN_ADOPTED || t == EV_STEP_EDIT);
	if (t == EV_RUN_START || t == EV_PLAN_PROPOSED || t == EV_PLAN_ADOPTED)
		sync_strings(v);
	c.o = o;
	c.step = find_step(v, jsonx_str(o, "step_id"));
	c.log = c.step ? &c.step->log : &v->runlog;
	{
		size_t ns = c.step ? c.step->log.n : 0, nr = v->runlog.n;

		if (handlers[t])
			handlers[t](&c);
		if (c.step)
			note_lines(v, &c.step->refs, &c.step->log, ns, false, ev);
		note_lines(v, &v->runlog_refs, &v->runlog, nr, false, ev);
	}
	sync_gates(v);
	sync_proposal(v, t == EV_PLAN_PROPOSED || t == EV_PLAN_ADOPTED || t == EV_STEP_EDIT);
	if (t == EV_PLAN_PROPOSED || t == EV_STEP_EDIT || t == EV_LLM_CALL)
		refresh_gates(v, t, jsonx_str(o, "step_id"));
	sync_status(v);
	cJSON_Delete(o);
}
