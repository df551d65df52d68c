/* report_audit — the audit trail of report.md (see report_audit.h). */
#include "config.h"

#include "report_audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fold.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* One attempt of one step, from its step.start to its verdict (or what ended it). */
struct attempt_rec {
	char *step_id;
	int attempt;
	double start, end; /* epoch seconds; end 0 while open */
	char *outcome;     /* NULL while open */
	long calls;
	double usd;
	bool usd_unknown;
	int tools, tool_failures;
	size_t prev; /* the step's attempt before this one: its index + 1, 0 for none */
};

/* A step's settling: its last step.end. */
struct step_end {
	char *id;
	double ts;
	char *status;
};

/* A tool call waiting for its result, or the one whose result was just read. */
struct call {
	char *id, *tool, *params;
	double ts;
};

struct gate_open {
	unsigned long id;
	double ts;
};

struct audit {
	double started; /* first run.start */
	double ended;   /* run.end of the last segment, 0 while live */
	char *end_status;
	int segments;

	struct attempt_rec *att;
	size_t n_att, cap_att;
	struct strindex last_att; /* step id -> its latest attempt in att */
	struct step_end *ends;
	size_t n_ends, cap_ends;
	struct strindex end_of; /* step id -> its entry in ends */

	struct call *calls; /* waiting for a result */
	size_t n_calls, cap_calls;
	struct call last; /* the call of the last tool.result (id NULL when none) */
	bool last_found;
	double last_result_ts;
	double last_ts; /* of the event before the one being applied */

	struct gate_open *gates;
	size_t n_gates, cap_gates;
	double gate_opened, gate_answered; /* of the last gate.decision; 0 unknown */

	/* budget */
	bool cap_set;
	double cap0, cap;
	struct strbuf cap_changes; /* list lines */
	long reserved_calls;
	double reserved_sum, reserved_max;
	struct strbuf budget_gates;

	/* plan edits */
	cJSON *last_plan; /* of the last plan.proposed */
	struct strbuf plan_edits;

	/* the final check */
	bool final_check, final_passed, final_seen;
};

static const char *att_step_at(const void *ctx, size_t i)
{
	return ((const struct audit *)ctx)->att[i].step_id;
}

static const char *end_id_at(const void *ctx, size_t i)
{
	return ((const struct audit *)ctx)->ends[i].id;
}

/* ---- small helpers ---------------------------------------------------------------------- */

static double ev_ts(const cJSON *o)
{
	const char *ts = jsonx_str(o, "ts");

	return ts ? fold_parse_ts(ts) : 0;
}

static char *dupid(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void add_clean(struct strbuf *sb, const char *s)
{
	char *c = textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);

	strbuf_adds(sb, c);
	free(c);
}

static void gmt(double t, struct tm *tm)
{
	time_t s = (time_t)floor(t);

	gmtime_r(&s, tm);
}

void audit_add_time(struct strbuf *sb, double t)
{
	struct tm tm;

	if (t <= 0) {
		strbuf_adds(sb, "unknown");
		return;
	}
	gmt(t, &tm);
	strbuf_addf(sb, "%04d-%02d-%02d %02d:%02d:%02d UTC", tm.tm_year + 1900, tm.tm_mon + 1,
	            tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* A time of day; with its date when the run started on another day (UTC). */
static void add_clock(const struct audit *a, struct strbuf *sb, double t)
{
	struct tm tm, t0;

	if (t <= 0) {
		strbuf_adds(sb, "—");
		return;
	}
	gmt(t, &tm);
	if (a->started > 0) {
		gmt(a->started, &t0);
		if (t0.tm_year != tm.tm_year || t0.tm_yday != tm.tm_yday)
			strbuf_addf(sb, "%04d-%02d-%02d ", tm.tm_year + 1900, tm.tm_mon + 1,
			            tm.tm_mday);
	}
	strbuf_addf(sb, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void audit_add_duration(struct strbuf *sb, double s)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		strbuf_addf(sb, "%.1f s", s);
	else if (s < 3600)
		strbuf_addf(sb, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
	else
		strbuf_addf(sb, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

/* Printable ASCII only: text that cleaning leaves as it is, one column a byte. */
static bool plain_ascii(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E)
			return false;
	return true;
}

/* Clean one-line text cut at `cols` columns; *cut gets the characters left out. */
static char *cut_text(const char *s, int cols, size_t *cut)
{
	size_t n = s ? strlen(s) : 0;
	char *c;
	size_t keep, total = 0, kept = 0, len;
	uint32_t cp;

	*cut = 0;
	if (plain_ascii(s, n)) {
		/* What the general way below gives such text, without decoding it thrice. */
		c = xstrndup(s ? s : "", n);
		if (cols >= 0 && n <= (size_t)cols)
			return c;
		keep = cols > 1 ? (size_t)cols - 1 : 0;
		*cut = n - keep;
		c[keep] = '\0';
		return c;
	}
	c = textsan_clean(s ? s : "", n, 0);
	if (textsan_width(c) <= cols)
		return c;
	keep = textsan_fit(c, cols - 1, NULL);
	len = strlen(c); /* once: a length per character made a long text quadratic */
	for (size_t i = 0; i < len;) {
		size_t step = textsan_decode(c + i, len - i, &cp);

		total++;
		if (i < keep)
			kept++;
		i += step;
	}
	*cut = total - kept;
	c[keep] = '\0';
	return c;
}

static void add_cut_note(struct strbuf *sb, size_t cut)
{
	if (cut)
		strbuf_addf(sb, " [cut: %zu more character%s]", cut, cut == 1 ? "" : "s");
}

void audit_add_code(struct strbuf *sb, const char *text, int cols)
{
	size_t cut, run = 0, longest = 0;
	char *c = cut_text(text, cols, &cut);

	/* A fence longer than any run of backticks inside (CommonMark inline code). */
	for (const char *p = c; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	/* A space inside the fence only where a backtick would touch it (it is stripped). */
	bool pad = *c == '`' || (*c && c[strlen(c) - 1] == '`' && !cut);

	if (!*c) {
		strbuf_adds(sb, "(empty)");
		free(c);
		return;
	}
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	if (pad)
		strbuf_addc(sb, ' ');
	strbuf_adds(sb, c);
	if (cut)
		strbuf_adds(sb, "…");
	if (pad)
		strbuf_addc(sb, ' ');
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	add_cut_note(sb, cut);
	free(c);
}

static void add_text(struct strbuf *sb, const char *text, int cols)
{
	size_t cut;
	char *c = cut_text(text, cols, &cut);

	strbuf_adds(sb, c);
	if (cut)
		strbuf_adds(sb, "…");
	add_cut_note(sb, cut);
	free(c);
}

static char *json_text(const cJSON *it)
{
	char *p, *r;

	if (!it)
		return NULL;
	p = cJSON_PrintUnformatted(it);
	if (!p)
		fatal("report: out of memory printing JSON");
	r = xstrdup(p);
	cJSON_free(p);
	return r;
}

static void add_money(struct strbuf *sb, double usd)
{
	strbuf_addf(sb, "$%.4f", usd);
}

/* ---- reading events --------------------------------------------------------------------- */

/* The step's latest attempt if it is still open. */
static struct attempt_rec *open_attempt(struct audit *a, const char *sid)
{
	size_t i;

	if (!strindex_get(&a->last_att, sid, att_step_at, a, &i))
		return NULL;
	return a->att[i].outcome ? NULL : &a->att[i];
}

/* The latest attempt of the step with that number (0: the latest of the step). */
static struct attempt_rec *find_attempt(struct audit *a, const char *sid, int attempt)
{
	size_t i;

	if (!strindex_get(&a->last_att, sid, att_step_at, a, &i))
		return NULL;
	for (i++; i; i = a->att[i - 1].prev)
		if (!attempt || a->att[i - 1].attempt == attempt)
			return &a->att[i - 1];
	return NULL;
}

/* "ACTION (STAGE)", without a printf per verdict. */
static char *outcome(const char *action, const char *stage)
{
	size_t na = strlen(action), ns = strlen(stage);
	char *o = xmalloc(na + ns + 4);

	memcpy(o, action, na);
	memcpy(o + na, " (", 2);
	memcpy(o + na + 2, stage, ns);
	memcpy(o + na + 2 + ns, ")", 2);
	return o;
}

static void close_attempt(struct attempt_rec *r, double ts, char *outcome)
{
	r->end = ts;
	free(r->outcome);
	r->outcome = outcome;
}

static void on_step_start(struct audit *a, const cJSON *o, const char *sid, double ts)
{
	struct attempt_rec *r = open_attempt(a, sid);
	double n = 0;

	if (r) /* started again without a word on the last one */
		close_attempt(r, ts, xstrdup("cancelled"));
	jsonx_num(o, "attempt", &n);
	a->att = xgrow(a->att, &a->cap_att, a->n_att + 1, sizeof(*a->att));
	r = &a->att[a->n_att++];
	memset(r, 0, sizeof(*r));
	if (strindex_get(&a->last_att, sid, att_step_at, a, &r->prev))
		r->prev++;
	r->step_id = xstrdup(sid);
	strindex_set(&a->last_att, sid, a->n_att - 1, att_step_at, a);
	r->attempt = n >= 0 && n < 1e6 ? (int)n : 0;
	r->start = ts;
}

static void on_verdict(struct audit *a, const cJSON *o, const char *sid, double ts)
{
	double n = 0;
	struct attempt_rec *r;
	const char *action = jsonx_str(o, "action"), *stage = jsonx_str(o, "stage");

	jsonx_num(o, "attempt", &n);
	r = find_attempt(a, sid, n > 0 && n < 1e6 ? (int)n : 0);
	if (!r)
		return;
	close_attempt(r, ts, outcome(action ? action : "unknown", stage ? stage : "unknown"));
}

static void on_step_state(struct audit *a, const cJSON *o, const char *sid, double ts)
{
	const char *st = jsonx_str(o, "state");
	struct attempt_rec *r = open_attempt(a, sid);

	/* waiting (a shell gate) and verifying belong to the attempt; these end it */
	if (r && st && (!strcmp(st, "stale") || !strcmp(st, "pending")))
		close_attempt(r, ts, xasprintf("cancelled (%s)", st));
}

static void on_step_end(struct audit *a, const cJSON *o, const char *sid, double ts)
{
	const char *status = jsonx_str(o, "status");
	struct attempt_rec *r = open_attempt(a, sid);
	struct step_end *e = NULL;
	size_t i;

	if (r)
		close_attempt(r, ts, xstrdup(status ? status : "ended"));
	if (strindex_get(&a->end_of, sid, end_id_at, a, &i)) {
		e = &a->ends[i];
	} else {
		a->ends = xgrow(a->ends, &a->cap_ends, a->n_ends + 1, sizeof(*a->ends));
		e = &a->ends[a->n_ends++];
		memset(e, 0, sizeof(*e));
		e->id = xstrdup(sid);
		strindex_add(&a->end_of, sid, a->n_ends - 1, end_id_at, a);
	}
	e->ts = ts;
	free(e->status);
	e->status = dupid(status);
}

/* --resume after a stop: an attempt still open was cut off by it, at the latest when the
 * journal's last event before the resume was written. */
static void on_run_resume(struct audit *a)
{
	for (size_t i = 0; i < a->n_att; i++)
		if (!a->att[i].outcome)
			close_attempt(&a->att[i], a->last_ts, xstrdup("cut off by a stop"));
}

static void on_run_end(struct audit *a, const cJSON *o, double ts)
{
	const char *status = jsonx_str(o, "status");

	for (size_t i = 0; i < a->n_att; i++)
		if (!a->att[i].outcome)
			close_attempt(
			    &a->att[i], ts,
			    xasprintf("stopped: the run ended (%s)", status ? status : "unknown"));
	a->ended = ts;
	free(a->end_status);
	a->end_status = dupid(status);
}

static void on_llm_call(struct audit *a, const cJSON *o, const char *sid)
{
	double usd = 0, res = 0, n = 0;
	bool priced = jsonx_num(o, "cost_usd", &usd);
	struct attempt_rec *r;

	if (jsonx_num(o, "reserved_usd", &res)) {
		a->reserved_calls++;
		a->reserved_sum += res;
		if (res > a->reserved_max)
			a->reserved_max = res;
	}
	if (!sid)
		return;
	jsonx_num(o, "attempt", &n);
	r = find_attempt(a, sid, n > 0 && n < 1e6 ? (int)n : 0);
	if (!r)
		return;
	r->calls++;
	if (priced)
		r->usd += usd;
	else
		r->usd_unknown = true;
}

static void call_release(struct call *c)
{
	free(c->id);
	free(c->tool);
	free(c->params);
	memset(c, 0, sizeof(*c));
}

static void on_tool_call(struct audit *a, const cJSON *o, double ts)
{
	struct call *c;
	const char *id = jsonx_str(o, "call_id");

	if (!id)
		return;
	a->calls = xgrow(a->calls, &a->cap_calls, a->n_calls + 1, sizeof(*a->calls));
	c = &a->calls[a->n_calls++];
	c->id = xstrdup(id);
	c->tool = dupid(jsonx_str(o, "tool"));
	c->params = json_text(jsonx_get(o, "params"));
	c->ts = ts;
}

static void on_tool_result(struct audit *a, const cJSON *o, const char *sid, double ts)
{
	const char *id = jsonx_str(o, "call_id");
	bool ok = true;
	double n = 0;
	struct attempt_rec *r;

	call_release(&a->last);
	a->last_found = false;
	a->last_result_ts = ts;
	for (size_t i = 0; id && i < a->n_calls; i++) {
		if (strcmp(a->calls[i].id, id))
			continue;
		a->last = a->calls[i];
		a->last_found = true;
		a->calls[i] = a->calls[--a->n_calls];
		break;
	}
	if (!sid)
		return;
	jsonx_num(o, "attempt", &n);
	r = find_attempt(a, sid, n > 0 && n < 1e6 ? (int)n : 0);
	if (!r)
		return;
	r->tools++;
	if (jsonx_bool(o, "ok", &ok) && !ok)
		r->tool_failures++;
}

static void on_gate_open(struct audit *a, const cJSON *o, double ts)
{
	double id = 0, spent = 0, reserved = 0, cap = 0, need = 0;
	const char *kind = jsonx_str(o, "gate");

	jsonx_num(o, "gate_id", &id);
	a->gates = xgrow(a->gates, &a->cap_gates, a->n_gates + 1, sizeof(*a->gates));
	a->gates[a->n_gates].id = (unsigned long)id;
	a->gates[a->n_gates++].ts = ts;
	if (!kind || strcmp(kind, "budget"))
		return;
	jsonx_num(o, "spent_usd", &spent);
	jsonx_num(o, "reserved_usd", &reserved);
	jsonx_num(o, "budget_usd", &cap);
	jsonx_num(o, "needed_usd", &need);
	strbuf_adds(&a->budget_gates, "  - ");
	add_clock(a, &a->budget_gates, ts);
	strbuf_adds(&a->budget_gates, " the budget gate opened: ");
	add_money(&a->budget_gates, spent);
	strbuf_adds(&a->budget_gates, " spent and ");
	add_money(&a->budget_gates, reserved);
	strbuf_adds(&a->budget_gates, " reserved of ");
	add_money(&a->budget_gates, cap);
	strbuf_adds(&a->budget_gates, "; the next call needed about ");
	add_money(&a->budget_gates, need);
	strbuf_adds(&a->budget_gates, "\n");
}

static void cap_change(struct audit *a, double ts, double cap, const char *how)
{
	strbuf_adds(&a->cap_changes, "  - ");
	add_clock(a, &a->cap_changes, ts);
	if (cap > 0) {
		strbuf_adds(&a->cap_changes, " set to ");
		add_money(&a->cap_changes, cap);
	} else {
		strbuf_adds(&a->cap_changes, " removed");
	}
	strbuf_addf(&a->cap_changes, " %s\n", how);
	a->cap = cap;
}

static void on_gate_decision(struct audit *a, const cJSON *o, double ts)
{
	double id = 0, cap;
	const char *kind = jsonx_str(o, "gate"), *d = jsonx_str(o, "decision");

	jsonx_num(o, "gate_id", &id);
	a->gate_opened = 0;
	a->gate_answered = ts;
	for (size_t i = 0; i < a->n_gates; i++) {
		if (a->gates[i].id != (unsigned long)id)
			continue;
		a->gate_opened = a->gates[i].ts;
		a->gates[i] = a->gates[--a->n_gates];
		break;
	}
	if (kind && d && !strcmp(kind, "budget") && !strcmp(d, "approve") &&
	    jsonx_num(o, "budget_usd", &cap) && cap > 0) {
		char *how = xasprintf("at the budget gate (by %s)",
		                      jsonx_str(o, "by") ? jsonx_str(o, "by") : "operator");

		cap_change(a, ts, cap, how);
		free(how);
	}
}

/* The policy's budget: a number, null (none) or absent (unchanged). */
static void on_policy(struct audit *a, const cJSON *o, double ts, bool start)
{
	const cJSON *pol = jsonx_get(o, "policy");
	const cJSON *b =
	    cJSON_IsObject(pol) ? jsonx_get(pol, "budget_usd") : NULL;
	double cap;

	if (!b || (!cJSON_IsNull(b) && !cJSON_IsNumber(b)))
		return;
	cap = cJSON_IsNumber(b) && b->valuedouble > 0 ? b->valuedouble : 0;
	if (start && !a->cap_set) {
		a->cap_set = true;
		a->cap0 = a->cap = cap;
	} else if (cap != a->cap) {
		cap_change(a, ts, cap, "when the run was resumed");
	}
}

static void on_operator_command(struct audit *a, const cJSON *o, double ts)
{
	double cap;

	if (jsonx_str(o, "command") && !strcmp(jsonx_str(o, "command"), "budget") &&
	    jsonx_num(o, "budget_usd", &cap))
		cap_change(a, ts, cap > 0 ? cap : 0, "by the operator");
}

/* ---- edits -------------------------------------------------------------------------------- */

static const struct {
	const char *key, *label;
	bool list; /* a list of strings */
} step_fields[] = {
    {"name", "Name", false},
    {"description", "Description", false},
    {"estimated_complexity", "Complexity", false},
    {"dependencies", "Depends on", true},
    {"acceptance_criteria", "Criteria", true},
    {"expected_outputs", "Outputs", true},
    {"actions", "Actions", false},
};

static bool known_field(const char *key)
{
	if (!strcmp(key, "step_id"))
		return true;
	for (size_t i = 0; i < sizeof(step_fields) / sizeof(step_fields[0]); i++)
		if (!strcmp(step_fields[i].key, key))
			return true;
	return false;
}

static bool same(const cJSON *x, const cJSON *y)
{
	if (!x || !y)
		return !x && !y;
	return cJSON_Compare(x, y, true);
}

/* One value as the report shows it: a string as code, a list of strings as code items
 * separated by "; ", anything else as its JSON. */
static void add_value(struct strbuf *sb, const cJSON *v, bool list)
{
	const cJSON *it;
	bool first = true;
	char *j;

	if (!v || cJSON_IsNull(v)) {
		strbuf_adds(sb, "(none)");
		return;
	}
	if (cJSON_IsString(v)) {
		audit_add_code(sb, v->valuestring, AUDIT_TEXT_COLS);
		return;
	}
	if (list && cJSON_IsArray(v)) {
		if (!cJSON_GetArraySize(v))
			strbuf_adds(sb, "(none)");
		cJSON_ArrayForEach(it, v)
		{
			if (!first)
				strbuf_adds(sb, "; ");
			first = false;
			j = cJSON_IsString(it) ? xstrdup(it->valuestring) : json_text(it);
			audit_add_code(sb, j, AUDIT_TEXT_COLS);
			free(j);
		}
		return;
	}
	j = json_text(v);
	audit_add_code(sb, j, AUDIT_TEXT_COLS);
	free(j);
}

/* Every field of a step the report names, one line each. */
static void add_fields(struct strbuf *sb, const char *indent, const cJSON *step)
{
	for (size_t i = 0; i < sizeof(step_fields) / sizeof(step_fields[0]); i++) {
		const cJSON *v = jsonx_get(step, step_fields[i].key);

		if (!v)
			continue;
		strbuf_addf(sb, "%s- %s: ", indent, step_fields[i].label);
		add_value(sb, v, step_fields[i].list);
		strbuf_adds(sb, "\n");
	}
}

void audit_step_edit_lines(struct strbuf *sb, const char *indent, const cJSON *before,
                           const cJSON *after)
{
	struct strvec other = STRVEC_INIT;
	bool any = false;
	const cJSON *it;

	if (!cJSON_IsObject(after))
		return;
	if (!cJSON_IsObject(before)) {
		char *deeper = xasprintf("%s  ", indent);

		strbuf_addf(sb, "%s- The step before the edit was not journaled; after:\n", indent);
		add_fields(sb, deeper, after);
		free(deeper);
		return;
	}
	for (size_t i = 0; i < sizeof(step_fields) / sizeof(step_fields[0]); i++) {
		const cJSON *b = jsonx_get(before, step_fields[i].key);
		const cJSON *x = jsonx_get(after, step_fields[i].key);

		if (same(b, x))
			continue;
		any = true;
		strbuf_addf(sb, "%s- %s before: ", indent, step_fields[i].label);
		add_value(sb, b, step_fields[i].list);
		strbuf_addf(sb, "\n%s- %s after: ", indent, step_fields[i].label);
		add_value(sb, x, step_fields[i].list);
		strbuf_adds(sb, "\n");
	}
	/* Fields this report does not name, in either version. */
	cJSON_ArrayForEach(it, after)
	{
		if (it->string && !known_field(it->string) &&
		    !same(jsonx_get(before, it->string), it))
			strvec_push(&other, it->string);
	}
	cJSON_ArrayForEach(it, before)
	{
		if (it->string && !known_field(it->string) &&
		    !jsonx_get(after, it->string))
			strvec_push(&other, it->string);
	}
	for (size_t i = 0; i < other.n; i++) {
		const cJSON *b = jsonx_get(before, other.v[i]);
		const cJSON *x = jsonx_get(after, other.v[i]);

		any = true;
		strbuf_addf(sb, "%s- ", indent);
		add_clean(sb, other.v[i]);
		strbuf_adds(sb, " before: ");
		add_value(sb, b, false);
		strbuf_addf(sb, "\n%s- ", indent);
		add_clean(sb, other.v[i]);
		strbuf_adds(sb, " after: ");
		add_value(sb, x, false);
		strbuf_adds(sb, "\n");
	}
	strvec_clear(&other);
	if (!any)
		strbuf_addf(sb, "%s- No field changed\n", indent);
}

static const cJSON *plan_step(const cJSON *plan, const char *id)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, jsonx_get(plan, "steps"))
	{
		const char *sid = jsonx_str(it, "step_id");

		if (sid && !strcmp(sid, id))
			return it;
	}
	return NULL;
}

static void add_plan_field(struct strbuf *sb, const cJSON *before, const cJSON *after,
                           const char *key, const char *label, bool list, bool *any)
{
	const cJSON *b = jsonx_get(before, key);
	const cJSON *x = jsonx_get(after, key);

	if (same(b, x))
		return;
	*any = true;
	strbuf_addf(sb, "  - %s before: ", label);
	add_value(sb, b, list);
	strbuf_addf(sb, "\n  - %s after: ", label);
	add_value(sb, x, list);
	strbuf_adds(sb, "\n");
}

static void on_plan_proposed(struct audit *a, const cJSON *o, double ts)
{
	const cJSON *plan = jsonx_get(o, "plan");
	const char *reason = jsonx_str(o, "reason");
	const cJSON *it;
	struct strbuf *sb = &a->plan_edits;
	bool any = false;
	double rev = 0;

	if (!cJSON_IsObject(plan))
		return;
	if (reason && !strcmp(reason, "edit") && a->last_plan) {
		jsonx_num(o, "revision", &rev);
		strbuf_adds(sb, "- ");
		add_clock(a, sb, ts);
		strbuf_addf(sb, " revision %.0f edited by the operator at its gate:\n", rev);
		add_plan_field(sb, a->last_plan, plan, "goal", "Goal", false, &any);
		cJSON_ArrayForEach(it, jsonx_get(plan, "steps"))
		{
			const char *id = jsonx_str(it, "step_id");
			const cJSON *old = id ? plan_step(a->last_plan, id) : NULL;

			if (!id)
				continue;
			if (!old) {
				any = true;
				strbuf_adds(sb, "  - Step ");
				audit_add_code(sb, id, 80);
				strbuf_adds(sb, " added:\n");
				add_fields(sb, "    ", it);
			} else if (!same(old, it)) {
				any = true;
				strbuf_adds(sb, "  - Step ");
				audit_add_code(sb, id, 80);
				strbuf_adds(sb, " changed:\n");
				audit_step_edit_lines(sb, "    ", old, it);
			}
		}
		cJSON_ArrayForEach(it, jsonx_get(a->last_plan, "steps"))
		{
			const char *id = jsonx_str(it, "step_id");

			if (!id || plan_step(plan, id))
				continue;
			any = true;
			strbuf_adds(sb, "  - Step ");
			audit_add_code(sb, id, 80);
			strbuf_adds(sb, " removed (it was ");
			add_value(sb, jsonx_get(it, "name"), false);
			strbuf_adds(sb, ")\n");
		}
		add_plan_field(sb, a->last_plan, plan, "success_criteria", "Success criteria", true,
		               &any);
		add_plan_field(sb, a->last_plan, plan, "rollback_strategy", "Rollback strategy",
		               false, &any);
		if (!any)
			strbuf_adds(sb, "  - Nothing changed\n");
	}
	cJSON_Delete(a->last_plan);
	a->last_plan = cJSON_Duplicate(plan, true);
}

/* ---- the object ------------------------------------------------------------------------- */

struct audit *audit_new(void)
{
	struct audit *a = xcalloc(1, sizeof(*a));

	strbuf_init(&a->cap_changes);
	strbuf_init(&a->budget_gates);
	strbuf_init(&a->plan_edits);
	return a;
}

void audit_free(struct audit *a)
{
	if (!a)
		return;
	free(a->end_status);
	for (size_t i = 0; i < a->n_att; i++) {
		free(a->att[i].step_id);
		free(a->att[i].outcome);
	}
	free(a->att);
	strindex_free(&a->last_att);
	strindex_free(&a->end_of);
	for (size_t i = 0; i < a->n_ends; i++) {
		free(a->ends[i].id);
		free(a->ends[i].status);
	}
	free(a->ends);
	for (size_t i = 0; i < a->n_calls; i++)
		call_release(&a->calls[i]);
	free(a->calls);
	call_release(&a->last);
	free(a->gates);
	strbuf_release(&a->cap_changes);
	strbuf_release(&a->budget_gates);
	strbuf_release(&a->plan_edits);
	cJSON_Delete(a->last_plan);
	free(a);
}

void audit_apply(struct audit *a, int type, const cJSON *o)
{
	double ts = ev_ts(o);
	const char *sid = jsonx_str(o, "step_id");
	const cJSON *fc;

	if (!cJSON_IsObject(o))
		return;
	switch (type) {
	case EV_RUN_START:
		if (a->started <= 0)
			a->started = ts;
		a->segments++;
		on_policy(a, o, ts, true);
		break;
	case EV_RUN_RESUME:
		on_run_resume(a);
		on_policy(a, o, ts, false);
		break;
	case EV_RUN_REOPEN:
		a->segments++;
		a->ended = 0;
		a->final_seen = false;
		break;
	case EV_RUN_END: on_run_end(a, o, ts); break;
	case EV_RUN_FINAL:
		fc = jsonx_get(o, "final_check");
		a->final_seen = true;
		a->final_check = jsonx_bool(fc, "passed", &a->final_passed);
		break;
	case EV_PLAN_PROPOSED: on_plan_proposed(a, o, ts); break;
	case EV_STEP_START:
		if (sid)
			on_step_start(a, o, sid, ts);
		break;
	case EV_STEP_STATE:
		if (sid)
			on_step_state(a, o, sid, ts);
		break;
	case EV_STEP_END:
		if (sid)
			on_step_end(a, o, sid, ts);
		break;
	case EV_VERIFY_VERDICT:
		if (sid)
			on_verdict(a, o, sid, ts);
		break;
	case EV_LLM_CALL: on_llm_call(a, o, sid); break;
	case EV_TOOL_CALL: on_tool_call(a, o, ts); break;
	case EV_TOOL_RESULT: on_tool_result(a, o, sid, ts); break;
	case EV_GATE_OPEN: on_gate_open(a, o, ts); break;
	case EV_GATE_DECISION: on_gate_decision(a, o, ts); break;
	case EV_OPERATOR_COMMAND: on_operator_command(a, o, ts); break;
	default: break;
	}
	if (ts > 0)
		a->last_ts = ts;
}

/* ---- story lines ------------------------------------------------------------------------ */

void audit_tool_line(const struct audit *a, struct strbuf *sb, const cJSON *o)
{
	const char *tool = jsonx_str(o, "tool");
	const char *summary = jsonx_str(o, "summary");
	double attempt = 0, bytes = -1;
	bool ok = true;
	bool has_ok = jsonx_bool(o, "ok", &ok);
	const struct call *c = a->last_found ? &a->last : NULL;
	bool paren = false;

	jsonx_num(o, "attempt", &attempt);
	jsonx_num(o, "bytes", &bytes);
	if (!tool && c)
		tool = c->tool;
	strbuf_addf(sb, "- Attempt %.0f: tool ", attempt);
	add_clean(sb, tool ? tool : "?");
	if (c && c->params) {
		strbuf_adds(sb, " ");
		audit_add_code(sb, c->params, AUDIT_PARAMS_COLS);
	}
	strbuf_adds(sb, !has_ok ? " ended" : ok ? " ok" : " failed");
	if (ok && bytes >= 0) {
		strbuf_addf(sb, " (%.0f bytes", bytes);
		paren = true;
	}
	if (c && c->ts > 0 && a->last_result_ts >= c->ts) {
		strbuf_adds(sb, paren ? ", " : " (");
		audit_add_duration(sb, a->last_result_ts - c->ts);
		paren = true;
	}
	if (paren)
		strbuf_adds(sb, ")");
	if (summary && *summary) {
		strbuf_adds(sb, ": ");
		add_text(sb, summary, AUDIT_TEXT_COLS);
	}
	strbuf_adds(sb, "\n");
}

void audit_gate_line(const struct audit *a, struct strbuf *sb, const cJSON *o)
{
	const char *d = jsonx_str(o, "decision");

	if (a->gate_answered <= 0)
		return;
	strbuf_adds(sb, "  - ");
	if (a->gate_opened > 0) {
		strbuf_adds(sb, "opened ");
		add_clock(a, sb, a->gate_opened);
		strbuf_adds(sb, ", ");
	}
	strbuf_adds(sb, d && !strcmp(d, "withdrawn") ? "withdrawn " : "answered ");
	add_clock(a, sb, a->gate_answered);
	if (a->gate_opened > 0) {
		strbuf_adds(sb, " after ");
		audit_add_duration(sb, a->gate_answered - a->gate_opened);
	}
	strbuf_adds(sb, "\n");
}

/* ---- sections --------------------------------------------------------------------------- */

void audit_render_times(const struct audit *a, struct strbuf *sb)
{
	strbuf_adds(sb, "- Started: ");
	audit_add_time(sb, a->started);
	strbuf_adds(sb, "\n- Finished: ");
	if (a->ended > 0) {
		audit_add_time(sb, a->ended);
		if (a->started > 0) {
			strbuf_adds(sb, " (");
			audit_add_duration(sb, a->ended - a->started);
			strbuf_adds(sb, a->segments > 1 ? " from the first start, " : ")");
			if (a->segments > 1)
				strbuf_addf(sb, "in %d segments)", a->segments);
		}
	} else {
		strbuf_adds(sb, "no (the journal ends while the run was live)");
	}
	strbuf_adds(sb, "\n");
}

void audit_render_step(const struct audit *a, struct strbuf *sb, const char *sid)
{
	const struct step_end *e = NULL;
	double first = 0, in_attempts = 0;
	size_t n = 0, i, *mine = NULL;

	if (strindex_get(&a->end_of, sid, end_id_at, a, &i))
		e = &a->ends[i];
	/* The step's attempts, oldest first (the chain runs from the latest). */
	if (strindex_get(&a->last_att, sid, att_step_at, a, &i)) {
		for (size_t k = i + 1; k; k = a->att[k - 1].prev)
			n++;
		mine = xcalloc(n, sizeof(*mine));
		for (size_t k = i + 1, j = n; k; k = a->att[k - 1].prev)
			mine[--j] = k - 1;
	}
	for (size_t j = 0; j < n; j++) {
		const struct attempt_rec *r = &a->att[mine[j]];

		if (!j)
			first = r->start;
		if (r->end > 0 && r->start > 0)
			in_attempts += r->end - r->start;
	}
	if (!n && !e)
		return;
	if (n) {
		strbuf_adds(sb, "First started ");
		add_clock(a, sb, first);
		strbuf_adds(sb, e ? ", settled " : ", not settled");
	} else {
		strbuf_adds(sb, "Settled ");
	}
	if (e) {
		add_clock(a, sb, e->ts);
		strbuf_adds(sb, " (");
		add_clean(sb, e->status ? e->status : "unknown");
		strbuf_adds(sb, ")");
	}
	if (n && e && first > 0 && e->ts >= first) {
		strbuf_adds(sb, ": ");
		audit_add_duration(sb, e->ts - first);
		strbuf_adds(sb, " in all, ");
		audit_add_duration(sb, in_attempts);
		strbuf_adds(sb, " in attempts");
	}
	strbuf_adds(sb, ".\n\n");
	if (!n)
		return;
	strbuf_adds(sb, "| Attempt | Started | Ended | Duration | Outcome | Tool calls | Cost |\n");
	strbuf_adds(sb, "|---:|---|---|---:|---|---:|---:|\n");
	for (size_t j = 0; j < n; j++) {
		const struct attempt_rec *r = &a->att[mine[j]];

		strbuf_addf(sb, "| %d | ", r->attempt);
		add_clock(a, sb, r->start);
		strbuf_adds(sb, " | ");
		add_clock(a, sb, r->end);
		strbuf_adds(sb, " | ");
		if (r->end > 0 && r->start > 0)
			audit_add_duration(sb, r->end - r->start);
		else
			strbuf_adds(sb, "—");
		strbuf_adds(sb, " | ");
		add_clean(sb, r->outcome ? r->outcome : "did not finish");
		strbuf_addf(sb, " | %d", r->tools);
		if (r->tool_failures)
			strbuf_addf(sb, " (%d failed)", r->tool_failures);
		strbuf_adds(sb, " | ");
		if (!r->calls)
			strbuf_adds(sb, "—");
		else if (r->usd_unknown)
			strbuf_addf(sb, "unknown (at least $%.4f)", r->usd);
		else
			add_money(sb, r->usd);
		strbuf_adds(sb, " |\n");
	}
	strbuf_adds(sb, "\n");
	free(mine);
}

void audit_render_plan_edits(const struct audit *a, struct strbuf *sb)
{
	if (!a->plan_edits.len)
		return;
	strbuf_addf(sb, "## Plan edits\n\n%s\n", a->plan_edits.buf);
}

void audit_render_budget(const struct audit *a, struct strbuf *sb, const struct run_state *rs)
{
	strbuf_adds(sb, "## Budget\n\n- Cap: ");
	if (rs->budget_usd > 0)
		add_money(sb, rs->budget_usd);
	else
		strbuf_adds(sb, "none");
	if (a->cap_changes.len) {
		strbuf_adds(sb, " (at the start: ");
		if (a->cap0 > 0)
			add_money(sb, a->cap0);
		else
			strbuf_adds(sb, "none");
		strbuf_adds(sb, ")\n- Changes:\n");
		strbuf_adds(sb, a->cap_changes.buf);
	} else {
		strbuf_adds(sb, "\n");
	}
	strbuf_adds(sb, "- Spent: ");
	if (rs->spent_unknown)
		strbuf_addf(sb, "at least $%.4f (some calls had no known price)", rs->spent_usd);
	else
		add_money(sb, rs->spent_usd);
	if (rs->budget_usd > 0)
		strbuf_addf(sb, ", %.0f%% of the cap", 100.0 * rs->spent_usd / rs->budget_usd);
	strbuf_adds(sb, "\n- Reserved at the end: ");
	if (a->ended > 0)
		strbuf_adds(sb, "$0.0000 (the run ended with no call in flight; a call's "
		                "estimate is held only while it runs)\n");
	else
		strbuf_adds(sb, "not known: the journal ends while the run was live, and a call "
		                "is journaled only when it ends\n");
	strbuf_adds(sb, "- Estimates held before calls: ");
	if (a->reserved_calls) {
		add_money(sb, a->reserved_sum);
		strbuf_addf(sb, " over %ld call%s (largest ", a->reserved_calls,
		            a->reserved_calls == 1 ? "" : "s");
		add_money(sb, a->reserved_max);
		strbuf_adds(sb, ")\n");
	} else {
		strbuf_adds(sb, "none journaled\n");
	}
	if (a->budget_gates.len) {
		strbuf_adds(sb, "- Budget gates:\n");
		strbuf_adds(sb, a->budget_gates.buf);
	}
	strbuf_adds(sb, "\n");
}

/* The last verdict of a step, or NULL, from an index of the last verdict by step. */
static const char *verdict_step_at(const void *ctx, size_t i)
{
	return ((const struct run_state *)ctx)->verdicts[i].step_id;
}

static const struct fverdict *last_verdict(const struct run_state *rs,
					   const struct strindex *last, const char *sid)
{
	size_t i;

	return strindex_get(last, sid, verdict_step_at, rs, &i) ? &rs->verdicts[i] : NULL;
}

static void add_criteria(struct strbuf *sb, const struct strvec *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (i)
			strbuf_adds(sb, "; ");
		audit_add_code(sb, c->v[i], AUDIT_TEXT_COLS);
	}
}

void audit_render_unjudged(const struct audit *a, struct strbuf *sb, const struct run_state *rs)
{
	size_t lines = 0;
	struct strindex last = STRINDEX_INIT;

	for (size_t i = 0; i < rs->n_verdicts; i++)
		if (rs->verdicts[i].step_id)
			strindex_set(&last, rs->verdicts[i].step_id, i, verdict_step_at, rs);
	strbuf_adds(sb, "## Criteria not judged\n\n");
	for (size_t k = 0; k < rs->n_steps; k++) {
		const struct fstep *st = &rs->steps[k];
		const struct fverdict *v = last_verdict(rs, &last, st->id);
		size_t mark = sb->len;

		strbuf_adds(sb, "- ");
		add_clean(sb, st->id);
		strbuf_adds(sb, " (");
		strbuf_adds(sb, fold_state_name(st->state));
		strbuf_adds(sb, "): ");
		if (st->reused) {
			sb->len = mark; /* judged when its result was made, in an earlier plan */
			sb->buf[mark] = '\0';
			continue;
		}
		if (v && !strcmp(v->stage ? v->stage : "", "model")) {
			bool any = false;

			for (size_t i = 0; i < v->n_criteria; i++) {
				if (!v->criteria[i].not_judged)
					continue;
				if (any)
					strbuf_adds(sb, "; ");
				any = true;
				audit_add_code(
				    sb, v->criteria[i].text ? v->criteria[i].text : "(unnamed)",
				    AUDIT_TEXT_COLS);
			}
			if (any) {
				strbuf_addf(sb, " — left out by the verifier (attempt %d)\n",
				            v->attempt);
				lines++;
				continue;
			}
		} else if (st->criteria.n && st->state != FS_PASSED) {
			add_criteria(sb, &st->criteria);
			if (st->state == FS_SKIPPED)
				strbuf_adds(sb, " — the step was skipped\n");
			else if (v)
				strbuf_addf(sb,
				            " — its last attempt (%d) stopped at the "
				            "deterministic checks, before the verifier model\n",
				            v->attempt);
			else
				strbuf_adds(sb, " — no attempt was verified\n");
			lines++;
			continue;
		}
		sb->len = mark;
		sb->buf[mark] = '\0';
	}
	strindex_free(&last);
	if (!lines)
		strbuf_adds(sb, rs->n_steps ? "Every step's criteria were judged.\n"
		                            : "The run has no plan steps.\n");
	strbuf_adds(sb, "\n");
	if (!a->final_seen)
		strbuf_adds(sb, "The plan's success criteria were not checked: the run ended "
		                "before its final check.\n\n");
	else if (a->final_check)
		strbuf_addf(sb,
		            "The plan's success criteria were checked together by the final "
		            "check (%s), not one by one.\n\n",
		            a->final_passed ? "passed" : "failed");
	else
		strbuf_adds(sb, "The final answer was written without a recorded final check of "
		                "the success criteria.\n\n");
}
