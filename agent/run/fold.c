/* fold — events → run state: the one reading of a journal (see fold.h for the contract). */
#include "config.h"

#include "fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "jsonx.h"
#include "strset.h"
#include "xalloc.h"

/* A larger attempt number is not believed: it would size the per-attempt spend array. */
#define ATTEMPT_MAX 1000

/* ---- getters for untrusted objects: every one checks the type ---- */

static const cJSON *jget(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? jsonx_get(o, k) : NULL;
}

/* A whole number in [lo, hi], else `def`: the bound is checked before the cast. */
static long jlong(const cJSON *o, const char *k, long lo, long hi, long def)
{
	double d;

	if (!jsonx_num(o, k, &d) || d < (double)lo || d > (double)hi)
		return def;
	return (long)d;
}

static bool jbool(const cJSON *o, const char *k, bool def)
{
	const cJSON *it = jget(o, k);

	return cJSON_IsBool(it) ? cJSON_IsTrue(it) : def;
}

static bool jis(const cJSON *o, const char *k, const char *want)
{
	const char *s = jsonx_str(o, k);

	return s && strcmp(s, want) == 0;
}

/* Compact JSON of any value; NULL for NULL. */
static char *print_json(const cJSON *it)
{
	char *p, *r;

	if (!it)
		return NULL;
	p = cJSON_PrintUnformatted(it);
	if (!p)
		fatal("fold: out of memory printing JSON");
	r = xstrdup(p);
	cJSON_free(p);
	return r;
}

static void set_str(char **dst, const char *val)
{
	char *c = xstrdup(val);

	free(*dst);
	*dst = c;
}

static void set_own(char **dst, char *val)
{
	free(*dst);
	*dst = val;
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

/* ---- time ---- */

/* n decimal digits at p as a number; -1 if one is not a digit. */
static int digits(const char *p, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar; linear in d, so a
 * day past the month's end counts on into the next month as timegm's does. */
static long days_from_civil(int y, int m, int d)
{
	long yy = y - (m <= 2), era = yy / 400, yoe = yy - era * 400;
	long doy = (153L * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;

	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/*
 * strtod's value for the seconds at p (two digits checked), without strtod: the digits
 * (up to 15 in all) make an integer that a double holds exactly, and one division by an
 * exact power of ten rounds once, as strtod does. Longer fractions and exponents go to
 * strtod. The point is '.', whatever the locale (RFC 3339; strtod would read "05.678" as
 * 5 under a locale with a decimal comma).
 */
static double seconds(const char *start)
{
	static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6, 1e7,
				       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14};
	const char *p = start + 2;
	long long v = (start[0] - '0') * 10 + (start[1] - '0');
	int k = 0;

	if (*p == '.') {
		for (p++; k < 13 && *p >= '0' && *p <= '9'; p++, k++)
			v = v * 10 + (*p - '0');
	}
	if ((*p >= '0' && *p <= '9') || *p == 'e' || *p == 'E')
		return strtod(start, NULL);
	return (double)v / pow10[k];
}

static double parse_ts(const char *ts);

double fold_parse_ts(const char *ts)
{
	/* The readers of one event (the fold, the report's audit) each parse its time: the
	 * last one this thread read is kept. */
	static _Thread_local char last[40];
	static _Thread_local double last_value;
	size_t n;

	if (!ts)
		return 0;
	n = strnlen(ts, sizeof(last));
	if (n < sizeof(last) && last[0] && memcmp(last, ts, n + 1) == 0)
		return last_value;
	last_value = parse_ts(ts);
	if (n < sizeof(last))
		memcpy(last, ts, n + 1);
	else
		last[0] = '\0';
	return last_value;
}

static double parse_ts(const char *ts)
{
	struct tm tm;
	int y, mo, d, h, mi, n = 0;
	double sec;
	time_t t;

	/* The spelling events are written in (YYYY-MM-DDTHH:MM:SS…), read without sscanf and
	 * timegm: a folded journal parses two per event. The same checks and the same value
	 * as the general reading below, which takes every other spelling. */
	if (ts && strnlen(ts, 19) == 19 && ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' &&
	    ts[13] == ':' && ts[16] == ':' && (y = digits(ts, 4)) >= 0 &&
	    (mo = digits(ts + 5, 2)) >= 0 && (d = digits(ts + 8, 2)) >= 0 &&
	    (h = digits(ts + 11, 2)) >= 0 && (mi = digits(ts + 14, 2)) >= 0 &&
	    digits(ts + 17, 2) >= 0) {
		sec = seconds(ts + 17);
		if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 ||
		    mi > 59 || !(sec >= 0 && sec < 61))
			return 0;
		return (double)(days_from_civil(y, mo, d) * 86400L + h * 3600L + mi * 60L) + sec;
	}
	if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
		return 0;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 ||
	    mi < 0 || mi > 59 || !(sec >= 0 && sec < 61))
		return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return 0;
	return (double)t + sec;
}

/* ---- states ---- */

static const char *const state_names[FS__COUNT] = {
	[FS_PENDING] = "pending",     [FS_WAITING] = "waiting", [FS_RUNNING] = "running",
	[FS_VERIFYING] = "verifying", [FS_STALE] = "stale",     [FS_PASSED] = "passed",
	[FS_FAIL_ACCEPTED] = "fail_accepted", [FS_SKIPPED] = "skipped",
};

const char *fold_state_name(enum fstep_state s)
{
	return ((int)s >= 0 && s < FS__COUNT) ? state_names[s] : "unknown";
}

int fold_state_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < FS__COUNT; i++)
		if (strcmp(state_names[i], name) == 0)
			return i;
	return -1;
}

bool fold_state_settled(enum fstep_state s)
{
	return s == FS_PASSED || s == FS_FAIL_ACCEPTED || s == FS_SKIPPED;
}

/* ---- lifetime ---- */

void fold_init(struct run_state *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->estimate_usd = -1;
	rs->exit_code = -1;
	rs->proposed_revision = -1;
}

static void step_release(struct fstep *s)
{
	free(s->id);
	free(s->name);
	free(s->description);
	free(s->complexity);
	strvec_clear(&s->criteria);
	strvec_clear(&s->deps);
	strvec_clear(&s->outputs);
	free(s->json);
	free(s->state_reason);
	strvec_clear(&s->critiques);
	free(s->result_json);
	free(s->output_json);
	free(s->attempt_usd);
	memset(s, 0, sizeof(*s));
}

static void verdict_release(struct fverdict *v)
{
	free(v->step_id);
	free(v->stage);
	free(v->action);
	free(v->severity);
	free(v->feedback);
	for (size_t i = 0; i < v->n_criteria; i++) {
		free(v->criteria[i].text);
		free(v->criteria[i].evidence);
		free(v->criteria[i].feedback);
	}
	free(v->criteria);
}

static void gate_release(struct fgate *g)
{
	free(g->step_id);
	free(g->json);
}

static void proposal_clear(struct run_state *rs)
{
	free(rs->proposed_json);
	free(rs->proposed_reason);
	free(rs->proposed_failed);
	free(rs->proposed_failure);
	rs->proposed_json = rs->proposed_reason = NULL;
	rs->proposed_failed = rs->proposed_failure = NULL;
}

static void change_release(struct fchange *c)
{
	free(c->step_id);
	strvec_clear(&c->paths);
	free(c->kinds);
	strvec_clear(&c->shared);
	free(c->stat);
}

void fold_release(struct run_state *rs)
{
	free(rs->run_id);
	free(rs->task);
	free(rs->provider);
	free(rs->workspace);
	free(rs->sandbox);
	free(rs->scenario);
	for (int i = 0; i < 3; i++)
		free(rs->models[i]);
	free(rs->goal);
	free(rs->plan_json);
	for (size_t i = 0; i < rs->n_steps; i++)
		step_release(&rs->steps[i]);
	free(rs->steps);
	proposal_clear(rs);
	for (size_t i = 0; i < rs->n_verdicts; i++)
		verdict_release(&rs->verdicts[i]);
	free(rs->verdicts);
	for (size_t i = 0; i < rs->n_gates; i++)
		gate_release(&rs->gates[i]);
	free(rs->gates);
	strvec_clear(&rs->shell_allowed);
	for (size_t i = 0; i < rs->n_changes; i++)
		change_release(&rs->changes[i]);
	free(rs->changes);
	free(rs->answer);
	free(rs->end_status);
	free(rs->end_reason);
	strindex_free(&rs->step_ix);
	fold_init(rs);
}

/* ---- queries ---- */

static const char *fstep_id_at(const void *ctx, size_t i)
{
	return ((const struct run_state *)ctx)->steps[i].id;
}

/* Indexes the steps by id after they were replaced: in plan order, so that of two equal
 * ids the first is found, as a scan would. */
static void index_steps(struct run_state *rs)
{
	strindex_reset(&rs->step_ix);
	for (size_t i = 0; i < rs->n_steps; i++)
		strindex_add(&rs->step_ix, rs->steps[i].id, i, fstep_id_at, rs);
	rs->step_indexed = rs->steps;
	rs->n_step_indexed = rs->n_steps;
}

int fold_find_step(const struct run_state *rs, const char *id)
{
	size_t i;

	if (!id)
		return -1;
	if (rs->step_indexed == rs->steps && rs->n_step_indexed == rs->n_steps && rs->steps)
		return strindex_get(&rs->step_ix, id, fstep_id_at, rs, &i) ? (int)i : -1;
	/* Steps set by hand (not through the fold) are scanned. */
	for (i = 0; i < rs->n_steps; i++)
		if (strcmp(rs->steps[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* Events of one step come in runs (start, calls, tools, output, verdicts, end): the step
 * of the last event is tried first, which spares a scan of the plan per event. */
static struct fstep *find_step(struct run_state *rs, const char *id)
{
	int i;

	if (id && rs->step_hint < rs->n_steps && !strcmp(rs->steps[rs->step_hint].id, id))
		return &rs->steps[rs->step_hint];
	i = fold_find_step(rs, id);
	if (i < 0)
		return NULL;
	rs->step_hint = (size_t)i;
	return &rs->steps[i];
}

const struct fgate *fold_find_gate(const struct run_state *rs, unsigned long id)
{
	for (size_t i = 0; i < rs->n_gates; i++)
		if (rs->gates[i].id == id)
			return &rs->gates[i];
	return NULL;
}

double fold_step_seconds(const struct fstep *s, double now)
{
	double t = s->run_seconds;

	if (s->run_since > 0 && now > s->run_since)
		t += now - s->run_since;
	return t;
}

double fold_total_usd(const struct run_state *rs, bool *unknown)
{
	if (unknown)
		*unknown = rs->spent_unknown;
	return rs->spent_usd;
}

const struct fchange *fold_find_change(const struct run_state *rs, const char *id, int attempt)
{
	for (size_t i = rs->n_changes; id && i-- > 0;) {
		const struct fchange *c = &rs->changes[i];

		if (!strcmp(c->step_id, id) && (attempt <= 0 || c->attempt == attempt))
			return c;
	}
	return NULL;
}

/* ---- step clocks ---- */

/* A step's clock runs while it runs or is verified; waiting at a gate, pending or stale
 * it stands still. A bad timestamp (0) opens nothing and adds nothing. */
static void clock_open(struct fstep *s, double ts)
{
	if (s->run_since <= 0 && ts > 0)
		s->run_since = ts;
}

static void clock_close(struct fstep *s, double ts)
{
	if (s->run_since <= 0)
		return;
	if (ts >= s->run_since)
		s->run_seconds += ts - s->run_since;
	s->run_since = 0;
}

/* A fresh round: the step was (re)planned, edited or made stale, so earlier critiques
 * were about another definition or other inputs. */
static void new_round(struct fstep *s)
{
	s->round_attempts = 0;
	strvec_clear(&s->critiques);
}

static void set_state(struct fstep *s, enum fstep_state st, double ts)
{
	s->state = st;
	if (st == FS_RUNNING || st == FS_VERIFYING)
		clock_open(s, ts);
	else
		clock_close(s, ts);
	s->ended = fold_state_settled(st) ? ts : 0;
}

/* ---- the plan ---- */

static void strvec_from(struct strvec *sv, const cJSON *arr)
{
	const cJSON *it;

	strvec_clear(sv);
	if (!cJSON_IsArray(arr))
		return;
	cJSON_ArrayForEach(it, arr)
	{
		if (cJSON_IsString(it))
			strvec_push(sv, it->valuestring);
	}
}

/* The definition fields of `s` from a plan step object (its id is kept). `text` is the
 * object's compact JSON when the caller has it (`len` bytes, not terminated); NULL prints
 * it. */
static void step_define(struct fstep *s, const cJSON *o, const char *text, size_t len)
{
	const char *cx = jsonx_str(o, "estimated_complexity");

	set_str(&s->name, jsonx_str(o, "name"));
	set_str(&s->description, jsonx_str(o, "description"));
	set_str(&s->complexity, cx ? cx : jsonx_str(o, "complexity"));
	strvec_from(&s->criteria, jget(o, "acceptance_criteria"));
	strvec_from(&s->deps, jget(o, "dependencies"));
	strvec_from(&s->outputs, jget(o, "expected_outputs"));
	set_own(&s->json, text ? xstrndup(text, len) : print_json(o));
}

/*
 * Cutting the steps' text out of the plan's: printing each of 200 steps again cost more
 * than the rest of a plan event. cJSON prints a value the same wherever it stands (compact
 * output has no indentation, and an array member's name is not printed), so a step's bytes
 * inside the plan's print are its own print. The text is walked beside the tree, so that
 * strings and raw values are never taken for structure; each function returns the end of
 * the value that starts at `p`, or NULL when the text does not follow the tree (then the
 * caller prints instead).
 */
static const char *text_skip_string(const char *p)
{
	if (*p != '"')
		return NULL;
	/* cJSON escapes every quote and backslash inside a string: the closing quote is the first
	 * one after an even run of backslashes. */
	for (p++;; p++) {
		const char *q = strchr(p, '"'), *b = q;

		if (!q)
			return NULL;
		while (b > p && b[-1] == '\\')
			b--;
		p = q;
		if ((q - b) % 2 == 0)
			return q + 1;
	}
}

static const char *text_skip(const cJSON *it, const char *p)
{
	const cJSON *c;
	char close;

	switch (it->type & 0xFF) {
	case cJSON_Raw:
		/* Printed as it is, whatever it holds. */
		if (!it->valuestring || strncmp(p, it->valuestring, strlen(it->valuestring)) != 0)
			return NULL;
		return p + strlen(it->valuestring);
	case cJSON_String: return text_skip_string(p);
	case cJSON_Number:
	case cJSON_True:
	case cJSON_False:
	case cJSON_NULL:
		/* A number, true, false or null: no punctuation inside. */
		if (!*p || strchr(",]}", *p))
			return NULL;
		return p + strcspn(p, ",]}");
	case cJSON_Array:
	case cJSON_Object:
		close = (it->type & 0xFF) == cJSON_Array ? ']' : '}';
		if (*p++ != (close == ']' ? '[' : '{'))
			return NULL;
		for (c = it->child; c; c = c->next) {
			if (c != it->child && *p++ != ',')
				return NULL;
			if (close == '}') {
				p = text_skip_string(p);
				if (!p || *p++ != ':')
					return NULL;
			}
			p = text_skip(c, p);
			if (!p)
				return NULL;
		}
		return *p == close ? p + 1 : NULL;
	default: return NULL;
	}
}

/* Where the first member of the array `arr`, a member of `plan`, starts in `text` (the
 * compact print of `plan`; the closing ']' for an empty array), or NULL. */
static const char *text_of_member(const cJSON *plan, const cJSON *arr, const char *text)
{
	const char *p = text;

	if (!text || *p++ != '{')
		return NULL;
	for (const cJSON *c = plan->child; c; c = c->next) {
		if (c != plan->child && *p++ != ',')
			return NULL;
		p = text_skip_string(p);
		if (!p || *p++ != ':')
			return NULL;
		if (c == arr)
			return *p == '[' ? p + 1 : NULL;
		p = text_skip(c, p);
		if (!p)
			return NULL;
	}
	return NULL;
}

static const char *step_object_id(const cJSON *o)
{
	const char *id = jsonx_str(o, "step_id");

	return id ? id : jsonx_str(o, "id");
}

/*
 * Moves what `src` knows into the new step `dst` (same id). Spend, time and attempt
 * numbers belong to the id for the whole run. With `whole`, so does the rest (a kept step,
 * or a proposal shown before adoption); otherwise the step was replanned: it starts
 * pending, with no result and a fresh round.
 */
static void carry(struct fstep *dst, struct fstep *src, bool whole, double ts)
{
	if (!whole)
		clock_close(src, ts);
	dst->attempts = src->attempts;
	dst->first_start = src->first_start;
	dst->run_seconds = src->run_seconds;
	dst->cost = src->cost;
	dst->attempt_usd = src->attempt_usd;
	dst->n_attempt_usd = src->n_attempt_usd;
	src->attempt_usd = NULL;
	if (!whole)
		return;
	dst->state = src->state;
	dst->state_reason = src->state_reason;
	dst->round_attempts = src->round_attempts;
	dst->critiques = src->critiques;
	dst->result_json = src->result_json;
	dst->output_json = src->output_json;
	dst->reused = src->reused;
	dst->ended = src->ended;
	dst->run_since = src->run_since;
	src->state_reason = src->result_json = src->output_json = NULL;
	memset(&src->critiques, 0, sizeof(src->critiques));
}

/*
 * Replaces the steps with those of `plan`. Before adoption (`adopt` false) a step keeping
 * its id keeps everything; at an adoption only the ids in `kept` keep their state and
 * result. A plan without a steps array changes nothing. Steps without an id are left out;
 * a duplicate id (a bad plan) gets a prime so it cannot take the first one's state.
 */
static void replace_steps(struct run_state *rs, const cJSON *plan, const char *plan_text,
			  const cJSON *kept, bool adopt, double ts, bool edit)
{
	const cJSON *arr = jget(plan, "steps"), *o;
	const char *at;
	struct fstep *nv = NULL;
	size_t n = 0, cap = 0;
	struct strset taken = STRSET_INIT;

	if (!cJSON_IsArray(arr))
		return;
	at = text_of_member(plan, arr, plan_text);
	cJSON_ArrayForEach(o, arr)
	{
		const char *id = step_object_id(o);
		const char *text = at, *end = at ? text_skip(o, at) : NULL;
		struct fstep *s, *old;
		char *sid;

		/* The next member starts after the comma; a mismatch prints the rest. */
		if (!end || (*end != ',' && *end != ']') || (*end == ']') != !o->next)
			text = end = NULL;
		at = end ? end + 1 : NULL;
		if (!cJSON_IsObject(o) || !id || !*id)
			continue;
		sid = xstrdup(id);
		while (!strset_add(&taken, sid)) {
			char *d = xasprintf("%s'", sid);

			free(sid);
			sid = d;
		}
		nv = xgrow(nv, &cap, n + 1, sizeof(*nv));
		s = &nv[n++];
		memset(s, 0, sizeof(*s));
		s->id = sid;
		old = find_step(rs, sid);
		if (old)
			carry(s, old, !adopt || in_list(kept, sid), ts);
		step_define(s, o, text, text ? (size_t)(end - text) : 0);
		/* Edited in this revision: by a step.edit or by the operator's edit of the
		 * proposal at its gate (issue 29: a plan-gate edit was never marked), kept when
		 * the first plan is adopted, which is that proposal. */
		if (old && (!adopt || !rs->plan_adopted))
			s->edited = old->edited;
		if (edit && (!old || !old->json || !s->json || strcmp(old->json, s->json) != 0))
			s->edited = true;
	}
	strset_clear(&taken);
	for (size_t i = 0; i < rs->n_steps; i++)
		step_release(&rs->steps[i]);
	free(rs->steps);
	rs->steps = nv;
	rs->n_steps = n;
	index_steps(rs);
}

/* Replaces the step `id` inside a plan's JSON text with `step`; the text is unchanged when
 * it does not parse or holds no such step. */
static void patch_plan(char **plan_json, const char *id, const cJSON *step)
{
	cJSON *plan = *plan_json ? cJSON_Parse(*plan_json) : NULL;
	cJSON *arr = plan ? cJSON_GetObjectItemCaseSensitive(plan, "steps") : NULL, *o;

	if (cJSON_IsArray(arr)) {
		cJSON_ArrayForEach(o, arr)
		{
			const char *sid = step_object_id(o);
			cJSON *dup;

			if (!sid || strcmp(sid, id) != 0)
				continue;
			dup = cJSON_Duplicate(step, 1);
			if (!dup)
				fatal("fold: out of memory copying a step");
			cJSON_ReplaceItemViaPointer(arr, o, dup);
			set_own(plan_json, print_json(plan));
			break;
		}
	}
	cJSON_Delete(plan);
}

/* ---- usage ---- */

static int role_index(const char *role)
{
	static const char *const roles[3] = {"planner", "executor", "verifier"};

	for (int i = 0; role && i < 3; i++)
		if (strcmp(role, roles[i]) == 0)
			return i;
	return -1;
}

static void usage_add(struct fusage *u, const cJSON *o, bool priced, double usd)
{
	u->calls++;
	u->tokens_in += jlong(o, "input_tokens", 0, 1000000000000L, 0);
	u->tokens_out += jlong(o, "output_tokens", 0, 1000000000000L, 0);
	u->tokens_cached += jlong(o, "cached_tokens", 0, 1000000000000L, 0);
	if (priced)
		u->usd += usd;
	else
		u->unknown = true;
}

/* ---- event handlers ---- */

struct ctx {
	struct run_state *rs;
	const cJSON *o;
	double ts;
	struct fstep *step; /* the step the event names, when the plan has it */
};

static void policy_apply(struct run_state *rs, const cJSON *pol)
{
	const cJSON *b = jget(pol, "budget_usd");
	double d;

	if (!cJSON_IsObject(pol))
		return;
	/* null is "no budget"; a missing key leaves the cap as it was. */
	if (cJSON_IsNull(b))
		rs->budget_usd = 0;
	else if (jsonx_num(pol, "budget_usd", &d))
		rs->budget_usd = d > 0 ? d : 0;
	rs->max_retries = (int)jlong(pol, "max_retries", 0, 1000, rs->max_retries);
	rs->max_replans = (int)jlong(pol, "max_replans", 0, 1000, rs->max_replans);
	rs->parallel = (int)jlong(pol, "parallel", 1, 1000, rs->parallel);
	if (jsonx_str(jget(pol, "sandbox"), "line"))
		set_str(&rs->sandbox, jsonx_str(jget(pol, "sandbox"), "line"));
	rs->yes = jbool(pol, "yes", rs->yes);
	if (cJSON_IsArray(jget(pol, "gates"))) {
		const cJSON *it;

		rs->gates_on = 0;
		rs->gates_known = true;
		cJSON_ArrayForEach(it, jget(pol, "gates"))
		{
			int k = cJSON_IsString(it) ? gate_kind_from_name(it->valuestring) : -1;

			if (k >= 0)
				rs->gates_on |= GATE_MASK(k);
		}
	}
}

static void on_run_start(struct ctx *c)
{
	struct run_state *rs = c->rs;
	const cJSON *models = jget(c->o, "models");
	static const char *const roles[3] = {"planner", "executor", "verifier"};

	set_str(&rs->run_id, jsonx_str(c->o, "run_id"));
	set_str(&rs->task, jsonx_str(c->o, "task"));
	set_str(&rs->provider, jsonx_str(c->o, "provider"));
	set_str(&rs->workspace, jsonx_str(c->o, "workspace"));
	set_str(&rs->scenario, jsonx_str(c->o, "scenario"));
	rs->simulated = jbool(c->o, "simulated", false);
	for (int i = 0; i < 3; i++)
		set_str(&rs->models[i], jsonx_str(models, roles[i]));
	policy_apply(rs, jget(c->o, "policy"));
	if (rs->started <= 0)
		rs->started = c->ts;
	rs->segments++;
}

static void on_run_resume(struct ctx *c)
{
	policy_apply(c->rs, jget(c->o, "policy"));
}

static void on_plan_proposed(struct ctx *c)
{
	struct run_state *rs = c->rs;
	const cJSON *plan = jget(c->o, "plan");
	double est;

	if (!cJSON_IsObject(plan))
		return;
	set_own(&rs->proposed_json, print_json(plan));
	rs->proposed_revision = (int)jlong(c->o, "revision", 0, 1000000, 0);
	set_str(&rs->proposed_reason, jsonx_str(c->o, "reason"));
	set_str(&rs->proposed_failed, jsonx_str(c->o, "failed_step"));
	set_str(&rs->proposed_failure, jsonx_str(c->o, "failure"));
	rs->estimate_usd = jsonx_num(c->o, "estimate_usd", &est) ? est : -1;
	if (jis(c->o, "reason", "replan"))
		rs->replans++;
	if (!rs->plan_adopted) {
		replace_steps(rs, plan, rs->proposed_json, NULL, false, c->ts,
			      jis(c->o, "reason", "edit"));
		set_str(&rs->goal, jsonx_str(plan, "goal"));
	}
}

static void on_plan_adopted(struct ctx *c)
{
	struct run_state *rs = c->rs;
	const cJSON *plan = jget(c->o, "plan");

	if (!cJSON_IsObject(plan))
		return;
	set_own(&rs->plan_json, print_json(plan));
	replace_steps(rs, plan, rs->plan_json, jget(c->o, "kept"), true, c->ts, false);
	set_str(&rs->goal, jsonx_str(plan, "goal"));
	rs->revision = (int)jlong(c->o, "revision", 0, 1000000, 0);
	rs->plan_adopted = true;
	proposal_clear(rs);
	rs->proposed_revision = -1;
}

static void on_step_edit(struct ctx *c)
{
	const cJSON *after = jget(c->o, "after");
	struct fstep *s = c->step;

	if (!s || !cJSON_IsObject(after))
		return;
	step_define(s, after, NULL, 0);
	s->edited = true;
	new_round(s);
	patch_plan(c->rs->plan_adopted ? &c->rs->plan_json : &c->rs->proposed_json, s->id, after);
}

static void on_step_state(struct ctx *c)
{
	struct fstep *s = c->step;
	int st = fold_state_from_name(jsonx_str(c->o, "state"));

	if (!s || st < 0)
		return;
	set_state(s, (enum fstep_state)st, c->ts);
	set_str(&s->state_reason, jsonx_str(c->o, "reason"));
	if (st == FS_STALE)
		new_round(s);
}

static void on_step_start(struct ctx *c)
{
	struct fstep *s = c->step;
	long attempt = jlong(c->o, "attempt", 1, ATTEMPT_MAX, 0);

	if (!s)
		return;
	set_state(s, FS_RUNNING, c->ts);
	set_str(&s->state_reason, NULL);
	if (attempt > s->attempts)
		s->attempts = (int)attempt;
	else if (attempt == 0 && s->attempts < ATTEMPT_MAX)
		s->attempts++; /* no usable number: count it anyway */
	s->round_attempts++;
	if (s->first_start <= 0)
		s->first_start = c->ts;
}

static void on_step_end(struct ctx *c)
{
	struct fstep *s = c->step;
	int st = fold_state_from_name(jsonx_str(c->o, "status"));
	long attempts = jlong(c->o, "attempts", 0, ATTEMPT_MAX, 0);

	if (!s || st < 0 || !fold_state_settled((enum fstep_state)st))
		return;
	set_state(s, (enum fstep_state)st, c->ts);
	set_str(&s->state_reason, NULL);
	if (attempts > s->attempts)
		s->attempts = (int)attempts;
	s->reused = jbool(c->o, "reused", false);
}

static void on_step_output(struct ctx *c)
{
	struct fstep *s = c->step;
	const cJSON *r = jget(c->o, "result");
	const cJSON *so = jget(r, "step_output");

	if (!s || !r)
		return;
	set_own(&s->result_json, print_json(r));
	/* As the engine hands it on: the step_output, or the whole result without one. */
	set_own(&s->output_json, so ? print_json(so) : xstrdup(s->result_json));
}

static void on_verdict(struct ctx *c)
{
	struct run_state *rs = c->rs;
	const cJSON *crit = jget(c->o, "criteria"), *it;
	struct fverdict *v;
	double d;

	rs->verdicts = xgrow(rs->verdicts, &rs->cap_verdicts, rs->n_verdicts + 1,
			     sizeof(*rs->verdicts));
	v = &rs->verdicts[rs->n_verdicts++];
	memset(v, 0, sizeof(*v));
	v->seq = (unsigned long)jlong(c->o, "seq", 0, 9007199254740992L, 0);
	v->step_id = xstrdup(jsonx_str(c->o, "step_id"));
	v->stage = xstrdup(jsonx_str(c->o, "stage"));
	v->action = xstrdup(jsonx_str(c->o, "action"));
	v->severity = xstrdup(jsonx_str(c->o, "severity"));
	v->feedback = xstrdup(jsonx_str(c->o, "feedback"));
	v->attempt = (int)jlong(c->o, "attempt", 0, ATTEMPT_MAX, 0);
	v->overall_pass = jbool(c->o, "overall_pass", v->action && !strcmp(v->action, "pass"));
	if (cJSON_IsArray(crit)) {
		v->criteria = xcalloc((size_t)cJSON_GetArraySize(crit) + 1, sizeof(*v->criteria));
		cJSON_ArrayForEach(it, crit)
		{
			struct fcriterion *cr = &v->criteria[v->n_criteria];

			if (!cJSON_IsObject(it))
				continue;
			cr->text = xstrdup(jsonx_str(it, "criterion"));
			cr->evidence = xstrdup(jsonx_str(it, "evidence"));
			cr->feedback = xstrdup(jsonx_str(it, "feedback"));
			cr->passed = jbool(it, "passed", false);
			cr->not_judged = jbool(it, "not_judged", false);
			cr->confidence = jsonx_num(it, "confidence", &d) ? d : -1;
			v->n_criteria++;
		}
	}
	/* The next attempt must address what this one was blamed for. */
	if (c->step && v->action && strcmp(v->action, "pass") != 0)
		strvec_push(&c->step->critiques, v->feedback ? v->feedback : "verification failed");
}

/* A checkpoint id as the store names it (40 hex digits), else "". */
static void copy_id(char dst[41], const char *src)
{
	size_t n = src ? strspn(src, "0123456789abcdef") : 0;

	if (n == 40 && !src[40])
		memcpy(dst, src, 41);
	else
		dst[0] = '\0';
}

static void on_step_changes(struct ctx *c)
{
	struct run_state *rs = c->rs;
	const cJSON *files = jget(c->o, "files"), *it;
	const char *sid = jsonx_str(c->o, "step_id");
	struct strbuf kinds;
	struct fchange *ch;

	if (!sid || !*sid)
		return;
	rs->changes = xgrow(rs->changes, &rs->cap_changes, rs->n_changes + 1, sizeof(*rs->changes));
	ch = &rs->changes[rs->n_changes++];
	memset(ch, 0, sizeof(*ch));
	ch->seq = (unsigned long)jlong(c->o, "seq", 0, 9007199254740992L, 0);
	ch->step_id = xstrdup(sid);
	ch->attempt = (int)jlong(c->o, "attempt", 0, ATTEMPT_MAX, 0);
	copy_id(ch->before, jsonx_str(c->o, "before"));
	copy_id(ch->after, jsonx_str(c->o, "after"));
	ch->plus = jlong(c->o, "plus", 0, 1000000000000L, 0);
	ch->minus = jlong(c->o, "minus", 0, 1000000000000L, 0);
	ch->stat = xstrdup(jsonx_str(c->o, "stat"));
	jsonx_bool(c->o, "cut", &ch->cut);
	strbuf_init(&kinds);
	if (cJSON_IsArray(files)) {
		cJSON_ArrayForEach(it, files)
		{
			const char *path = jsonx_str(it, "path"), *kind = jsonx_str(it, "change");

			if (!path)
				continue;
			bool shared = false;
			strvec_push(&ch->paths, path);
			if (jsonx_bool(it, "shared", &shared) && shared)
				strvec_push(&ch->shared, path);
			strbuf_addc(&kinds, kind && !strcmp(kind, "added")     ? 'A'
					    : kind && !strcmp(kind, "deleted") ? 'D'
									       : 'M');
		}
	}
	ch->kinds = strbuf_detach(&kinds);
	ch->n_files = (long)ch->paths.n + jlong(c->o, "files_more", 0, 1000000000L, 0);
}

static void on_llm_call(struct ctx *c)
{
	struct run_state *rs = c->rs;
	int r = role_index(jsonx_str(c->o, "role"));
	struct fstep *s = c->step;
	double usd = 0;
	/* cost_usd null (or anything but a number) is an unknown price, never free. */
	bool priced = jsonx_num(c->o, "cost_usd", &usd);

	if (priced)
		rs->spent_usd += usd;
	else
		rs->spent_unknown = true;
	if (r >= 0)
		usage_add(&rs->roles[r], c->o, priced, usd);
	if (!s)
		return;
	usage_add(&s->cost, c->o, priced, usd);
	if (priced) {
		long att = jlong(c->o, "attempt", 1, ATTEMPT_MAX, s->attempts);

		if (att < 1)
			return;
		if (att > s->n_attempt_usd) {
			s->attempt_usd = xrealloc(s->attempt_usd, (size_t)att * sizeof(double));
			for (long i = s->n_attempt_usd; i < att; i++)
				s->attempt_usd[i] = 0;
			s->n_attempt_usd = (int)att;
		}
		s->attempt_usd[att - 1] += usd;
	}
}

static void on_gate_open(struct ctx *c)
{
	struct run_state *rs = c->rs;
	int kind = gate_kind_from_name(jsonx_str(c->o, "gate"));
	unsigned long id = (unsigned long)jlong(c->o, "gate_id", 0, 9007199254740992L, 0);
	struct fgate *g = NULL;

	if (kind < 0)
		return; /* a gate nobody could answer here */
	rs->gates_opened[kind]++;
	for (size_t i = 0; i < rs->n_gates && !g; i++)
		if (rs->gates[i].id == id)
			g = &rs->gates[i]; /* opened again (a resumed run): the latest wins */
	if (g) {
		gate_release(g);
	} else {
		rs->gates = xgrow(rs->gates, &rs->cap_gates, rs->n_gates + 1, sizeof(*rs->gates));
		g = &rs->gates[rs->n_gates++];
	}
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->kind = (enum gate_kind)kind;
	g->step_id = xstrdup(jsonx_str(c->o, "step_id"));
	g->json = print_json(c->o);
	g->seq = (unsigned long)jlong(c->o, "seq", 0, 9007199254740992L, 0);
	if (id > rs->max_gate_id)
		rs->max_gate_id = id;
}

static void gate_remove(struct run_state *rs, size_t i)
{
	gate_release(&rs->gates[i]);
	memmove(&rs->gates[i], &rs->gates[i + 1], (rs->n_gates - i - 1) * sizeof(*rs->gates));
	rs->n_gates--;
}

/* An exact command allowed for the rest of the run (once, in the order allowed). */
static void shell_allow_add(struct run_state *rs, const char *cmd)
{
	if (!cmd || !*cmd)
		return;
	for (size_t i = 0; i < rs->shell_allowed.n; i++)
		if (!strcmp(rs->shell_allowed.v[i], cmd))
			return;
	strvec_push(&rs->shell_allowed, cmd);
}

static void on_gate_decision(struct ctx *c)
{
	struct run_state *rs = c->rs;
	unsigned long id = (unsigned long)jlong(c->o, "gate_id", 0, 9007199254740992L, 0);
	int kind = gate_kind_from_name(jsonx_str(c->o, "gate"));
	double b;

	for (size_t i = 0; i < rs->n_gates; i++) {
		if (rs->gates[i].id == id) {
			kind = (int)rs->gates[i].kind;
			gate_remove(rs, i);
			break;
		}
	}
	/* Continuing past the budget names the new cap. */
	if (kind == GATE_BUDGET && jis(c->o, "decision", "approve") &&
	    jsonx_num(c->o, "budget_usd", &b) && b > 0)
		rs->budget_usd = b;
	if (kind == GATE_SHELL && jis(c->o, "decision", "approve") &&
	    jbool(c->o, "remember", false))
		shell_allow_add(rs, jsonx_str(c->o, "command"));
}

void fold_forget_gates(struct run_state *rs)
{
	while (rs->n_gates)
		gate_remove(rs, rs->n_gates - 1);
}

static void on_operator_command(struct ctx *c)
{
	double b;

	if (jis(c->o, "command", "budget") && jsonx_num(c->o, "budget_usd", &b))
		c->rs->budget_usd = b > 0 ? b : 0;
}

static void on_notice(struct ctx *c)
{
	const char *kind = jsonx_str(c->o, "kind");

	if (!kind)
		return;
	if (strcmp(kind, "pause") == 0)
		c->rs->paused = true;
	else if (strcmp(kind, "resume_run") == 0 || strcmp(kind, "unpause") == 0)
		c->rs->paused = false;
}

static void on_run_final(struct ctx *c)
{
	c->rs->final_seen = true;
	c->rs->partial = jbool(c->o, "partial", false);
	set_str(&c->rs->answer, jsonx_str(c->o, "answer"));
}

static void on_run_end(struct ctx *c)
{
	struct run_state *rs = c->rs;

	rs->ended = true;
	set_str(&rs->end_status, jsonx_str(c->o, "status"));
	set_str(&rs->end_reason, jsonx_str(c->o, "reason"));
	rs->exit_code = (int)jlong(c->o, "exit_code", 0, 255, -1);
	rs->ended_at = c->ts;
	rs->paused = false;
	for (size_t i = 0; i < rs->n_steps; i++)
		clock_close(&rs->steps[i], c->ts);
	/* A segment that ended asks nothing any more, whether or not each gate's withdrawal
	 * was journaled (journals from before `withdrawn` do not have it). */
	fold_forget_gates(rs);
}

static void on_run_reopen(struct ctx *c)
{
	struct run_state *rs = c->rs;

	rs->ended = false;
	rs->final_seen = false;
	rs->partial = false;
	set_str(&rs->answer, NULL);
	set_str(&rs->end_status, NULL);
	set_str(&rs->end_reason, NULL);
	rs->exit_code = -1;
	rs->ended_at = 0;
	rs->segments++;
}

typedef void (*handler_fn)(struct ctx *c);

static const handler_fn handlers[EV__COUNT] = {
	[EV_RUN_START] = on_run_start,
	[EV_RUN_RESUME] = on_run_resume,
	[EV_PLAN_PROPOSED] = on_plan_proposed,
	[EV_PLAN_ADOPTED] = on_plan_adopted,
	[EV_GATE_OPEN] = on_gate_open,
	[EV_GATE_DECISION] = on_gate_decision,
	[EV_STEP_START] = on_step_start,
	[EV_STEP_STATE] = on_step_state,
	[EV_STEP_END] = on_step_end,
	[EV_STEP_EDIT] = on_step_edit,
	[EV_STEP_OUTPUT] = on_step_output,
	[EV_STEP_CHANGES] = on_step_changes,
	[EV_VERIFY_VERDICT] = on_verdict,
	[EV_LLM_CALL] = on_llm_call,
	[EV_OPERATOR_COMMAND] = on_operator_command,
	[EV_NOTICE] = on_notice,
	[EV_RUN_FINAL] = on_run_final,
	[EV_RUN_END] = on_run_end,
	[EV_RUN_REOPEN] = on_run_reopen,
};

void fold_apply_json(struct run_state *rs, int type, const cJSON *o)
{
	struct ctx c;
	long seq;

	if (!cJSON_IsObject(o))
		return;
	rs->events++;
	seq = jlong(o, "seq", 0, 9007199254740992L, 0);
	if (seq > 0)
		rs->last_seq = (unsigned long)seq;
	if (type < 0 || type >= EV__COUNT || !handlers[type])
		return;
	c.rs = rs;
	c.o = o;
	c.ts = fold_parse_ts(jsonx_str(o, "ts"));
	c.step = find_step(rs, jsonx_str(o, "step_id"));
	handlers[type](&c);
}

void fold_apply(struct run_state *rs, const struct event *ev)
{
	cJSON *o;

	if (!ev || !ev->json)
		return;
	o = cJSON_Parse(ev->json);
	fold_apply_json(rs, (int)ev->type, o);
	cJSON_Delete(o);
}
