/* report — renders report.md for a run from its journal (finished or interrupted). */
#include "config.h"

#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "journal.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* Tokens and money spent by one role, summed over its llm.call events. */
struct role_cost {
	char *role;
	unsigned long calls;
	double input, output, cached;
	double cost;  /* sum of the known costs */
	bool unknown; /* at least one call had no price */
	struct strvec unknown_models;
};

/* What happened to one step, as markdown list lines in journal order. */
struct step_log {
	char *id;
	char *name; /* from step.start, when the plan does not name it */
	struct strbuf text;
};

struct report {
	cJSON *start;    /* run.start */
	cJSON *proposed; /* latest plan.proposed */
	cJSON *adopted;  /* latest plan.adopted */
	cJSON *final;    /* run.final */
	cJSON *end;      /* run.end */
	struct step_log *steps;
	size_t n_steps, cap_steps;
	struct role_cost *roles;
	size_t n_roles, cap_roles;
	struct strbuf gates;
	struct strbuf notices;
	unsigned long last_seq;
	char *last_type;
};

/*
 * Model and journal text may carry terminal escapes; report.md is read with cat and less.
 * With oneline, newlines and tabs become spaces.
 */
static void add_clean(struct strbuf *sb, const char *s, bool oneline)
{
	/* Escape sequences go whole, not byte by byte, so none of their text is left. */
	char *c = textsan_clean(s ? s : "", s ? strlen(s) : 0,
				oneline ? 0 : TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);

	strbuf_adds(sb, c);
	free(c);
}

/* A table cell: one line, and '|' would end the cell. */
static void add_cell(struct strbuf *sb, const char *s)
{
	struct strbuf tmp = STRBUF_INIT;

	add_clean(&tmp, s, true);
	for (size_t i = 0; i < tmp.len; i++) {
		if (tmp.buf[i] == '|')
			strbuf_addc(sb, '\\');
		strbuf_addc(sb, tmp.buf[i]);
	}
	strbuf_release(&tmp);
}

/* Multi-line text as a block quote, each line prefixed with `prefix` then "> ". */
static void add_quote(struct strbuf *sb, const char *prefix, const char *s)
{
	struct strbuf tmp = STRBUF_INIT;
	char *line;

	add_clean(&tmp, s, false);
	if (tmp.len == 0) {
		strbuf_addf(sb, "%s> (empty)\n", prefix);
		strbuf_release(&tmp);
		return;
	}
	/* Blank lines stay in the quote as bare ">" lines. */
	line = tmp.buf;
	while (line) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (*line)
			strbuf_addf(sb, "%s> %s\n", prefix, line);
		else if (nl)
			strbuf_addf(sb, "%s>\n", prefix);
		line = nl ? nl + 1 : NULL;
	}
	strbuf_release(&tmp);
}

/* cJSON_ArrayForEach would also walk an object's members: only iterate real arrays. */
static const cJSON *as_array(const cJSON *a)
{
	return cJSON_IsArray(a) ? a : NULL;
}

static const char *str_or(const cJSON *obj, const char *key, const char *dflt)
{
	const char *s = jsonx_str(obj, key);

	return s ? s : dflt;
}

static struct step_log *step_get(struct report *r, const char *id)
{
	struct step_log *s;

	for (size_t i = 0; i < r->n_steps; i++)
		if (!strcmp(r->steps[i].id, id))
			return &r->steps[i];
	r->steps = xgrow(r->steps, &r->cap_steps, r->n_steps + 1, sizeof(*r->steps));
	s = &r->steps[r->n_steps++];
	s->id = xstrdup(id);
	s->name = NULL;
	strbuf_init(&s->text);
	return s;
}

static struct role_cost *role_get(struct report *r, const char *role)
{
	struct role_cost *rc;

	for (size_t i = 0; i < r->n_roles; i++)
		if (!strcmp(r->roles[i].role, role))
			return &r->roles[i];
	r->roles = xgrow(r->roles, &r->cap_roles, r->n_roles + 1, sizeof(*r->roles));
	rc = &r->roles[r->n_roles++];
	memset(rc, 0, sizeof(*rc));
	rc->role = xstrdup(role);
	return rc;
}

static void replace(cJSON **slot, cJSON *obj)
{
	cJSON_Delete(*slot);
	*slot = obj;
}

static void on_step_start(struct report *r, const char *sid, const cJSON *o)
{
	struct step_log *s = step_get(r, sid);
	double attempt = 0;
	const char *name = jsonx_str(o, "name");

	if (name && !s->name)
		s->name = xstrdup(name);
	jsonx_num(o, "attempt", &attempt);
	strbuf_addf(&s->text, "- Attempt %.0f started\n", attempt);
}

static void on_verdict(struct report *r, const char *sid, const cJSON *o)
{
	struct step_log *s = step_get(r, sid);
	const cJSON *crit = cJSON_GetObjectItemCaseSensitive(o, "criteria");
	const cJSON *c;
	const char *fb = jsonx_str(o, "feedback");
	double attempt = 0;

	jsonx_num(o, "attempt", &attempt);
	strbuf_addf(&s->text, "- Attempt %.0f, ", attempt);
	add_clean(&s->text, str_or(o, "stage", "unknown"), true);
	strbuf_adds(&s->text, " verdict: ");
	add_clean(&s->text, str_or(o, "action", "unknown"), true);
	if (jsonx_str(o, "severity")) {
		strbuf_adds(&s->text, " (severity ");
		add_clean(&s->text, jsonx_str(o, "severity"), true);
		strbuf_adds(&s->text, ")");
	}
	strbuf_adds(&s->text, "\n");
	cJSON_ArrayForEach(c, as_array(crit))
	{
		bool passed = true;
		const char *cf = jsonx_str(c, "feedback");

		if (!jsonx_bool(c, "passed", &passed) || passed)
			continue;
		strbuf_adds(&s->text, "  - Failed criterion: ");
		add_clean(&s->text, str_or(c, "criterion", "(unnamed)"), true);
		if (cf && *cf) {
			strbuf_adds(&s->text, " — ");
			add_clean(&s->text, cf, true);
		}
		strbuf_adds(&s->text, "\n");
	}
	if (fb && *fb) {
		strbuf_adds(&s->text, "  - Feedback: ");
		add_clean(&s->text, fb, true);
		strbuf_adds(&s->text, "\n");
	}
}

static void on_step_end(struct report *r, const char *sid, const cJSON *o)
{
	struct step_log *s = step_get(r, sid);
	double attempts = 0;
	bool reused = false;

	jsonx_num(o, "attempts", &attempts);
	jsonx_bool(o, "reused", &reused);
	strbuf_adds(&s->text, "- Ended: ");
	add_clean(&s->text, str_or(o, "status", "unknown"), true);
	strbuf_addf(&s->text, " after %.0f attempt%s%s\n", attempts, attempts == 1 ? "" : "s",
	            reused ? " (result reused from an earlier plan)" : "");
}

static void on_tool_result(struct report *r, const char *sid, const cJSON *o)
{
	bool ok = true;
	double attempt = 0;
	struct step_log *s;

	if (!jsonx_bool(o, "ok", &ok) || ok)
		return; /* only failures matter in a report */
	s = step_get(r, sid);
	jsonx_num(o, "attempt", &attempt);
	strbuf_addf(&s->text, "- Attempt %.0f: tool ", attempt);
	add_clean(&s->text, str_or(o, "tool", "?"), true);
	strbuf_adds(&s->text, " failed: ");
	add_clean(&s->text, str_or(o, "summary", ""), true);
	strbuf_adds(&s->text, "\n");
}

static void on_gate_decision(struct report *r, const cJSON *o)
{
	const char *sid = jsonx_str(o, "step_id");
	const char *reason = jsonx_str(o, "reason");

	strbuf_adds(&r->gates, "- ");
	add_clean(&r->gates, str_or(o, "gate", "unknown"), true);
	strbuf_adds(&r->gates, " gate");
	if (sid) {
		strbuf_adds(&r->gates, " for step ");
		add_clean(&r->gates, sid, true);
	}
	strbuf_adds(&r->gates, ": ");
	add_clean(&r->gates, str_or(o, "decision", "unknown"), true);
	strbuf_adds(&r->gates, " by ");
	add_clean(&r->gates, str_or(o, "by", "unknown"), true);
	if (reason && *reason) {
		strbuf_adds(&r->gates, " — ");
		add_clean(&r->gates, reason, true);
	}
	strbuf_adds(&r->gates, "\n");
	if (sid) {
		struct step_log *s = step_get(r, sid);

		strbuf_adds(&s->text, "- Gate ");
		add_clean(&s->text, str_or(o, "gate", "unknown"), true);
		strbuf_adds(&s->text, ": ");
		add_clean(&s->text, str_or(o, "decision", "unknown"), true);
		strbuf_adds(&s->text, " by ");
		add_clean(&s->text, str_or(o, "by", "unknown"), true);
		strbuf_adds(&s->text, "\n");
	}
}

static void on_llm_call(struct report *r, const cJSON *o)
{
	struct role_cost *rc = role_get(r, str_or(o, "role", "unknown"));
	const char *model = str_or(o, "model", "unknown");
	double v;

	rc->calls++;
	if (jsonx_num(o, "input_tokens", &v))
		rc->input += v;
	if (jsonx_num(o, "output_tokens", &v))
		rc->output += v;
	if (jsonx_num(o, "cached_tokens", &v))
		rc->cached += v;
	/* cost_usd is null when the model's price is unknown: never count that as free. */
	if (jsonx_num(o, "cost_usd", &v)) {
		rc->cost += v;
	} else {
		bool seen = false;

		rc->unknown = true;
		for (size_t i = 0; i < rc->unknown_models.n; i++)
			if (!strcmp(rc->unknown_models.v[i], model))
				seen = true;
		if (!seen)
			strvec_push(&rc->unknown_models, model);
	}
}

static void on_notice(struct report *r, const cJSON *o)
{
	const char *level = str_or(o, "level", "info");
	const char *sid = jsonx_str(o, "step_id");

	if (strcmp(level, "warn") && strcmp(level, "error"))
		return;
	strbuf_adds(&r->notices, "- ");
	add_clean(&r->notices, level, true);
	if (sid) {
		strbuf_adds(&r->notices, " (step ");
		add_clean(&r->notices, sid, true);
		strbuf_adds(&r->notices, ")");
	}
	strbuf_adds(&r->notices, ": ");
	add_clean(&r->notices, str_or(o, "message", ""), true);
	strbuf_adds(&r->notices, "\n");
}

static bool visit(void *ctx, const struct event *ev)
{
	struct report *r = ctx;
	cJSON *o = cJSON_Parse(ev->json);
	const char *sid;

	if (!o)
		return true; /* journal_load parsed it already; cannot happen */
	r->last_seq = ev->seq;
	free(r->last_type);
	r->last_type = xstrdup(event_type_name(ev->type));
	sid = ev->step_id;
	switch (ev->type) {
	case EV_RUN_START: replace(&r->start, o); return true;
	case EV_PLAN_PROPOSED: replace(&r->proposed, o); return true;
	case EV_PLAN_ADOPTED: replace(&r->adopted, o); return true;
	case EV_RUN_FINAL: replace(&r->final, o); return true;
	case EV_RUN_END: replace(&r->end, o); return true;
	case EV_STEP_START:
		if (sid)
			on_step_start(r, sid, o);
		break;
	case EV_VERIFY_VERDICT:
		if (sid)
			on_verdict(r, sid, o);
		break;
	case EV_STEP_END:
		if (sid)
			on_step_end(r, sid, o);
		break;
	case EV_TOOL_RESULT:
		if (sid)
			on_tool_result(r, sid, o);
		break;
	case EV_STEP_EDIT:
		if (sid) {
			struct step_log *s = step_get(r, sid);

			strbuf_adds(&s->text, "- Edited by ");
			add_clean(&s->text, str_or(o, "by", "operator"), true);
			strbuf_adds(&s->text, "\n");
		}
		break;
	case EV_GATE_DECISION: on_gate_decision(r, o); break;
	case EV_LLM_CALL: on_llm_call(r, o); break;
	case EV_NOTICE: on_notice(r, o); break;
	default: break;
	}
	cJSON_Delete(o);
	return true;
}

static void add_list(struct strbuf *sb, const char *indent, const char *title, const cJSON *arr)
{
	const cJSON *it;

	if (!cJSON_IsArray(arr) || !cJSON_GetArraySize(arr))
		return;
	strbuf_addf(sb, "%s- %s:\n", indent, title);
	cJSON_ArrayForEach(it, arr)
	{
		strbuf_addf(sb, "%s  - ", indent);
		add_clean(sb, cJSON_IsString(it) ? it->valuestring : "(not text)", true);
		strbuf_adds(sb, "\n");
	}
}

static const char *plan_step_name(const struct report *r, const char *id)
{
	const cJSON *plan = r->adopted ? r->adopted : r->proposed;
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(plan, "plan"), "steps");
	const cJSON *st;

	cJSON_ArrayForEach(st, as_array(steps))
	{
		const char *sid = jsonx_str(st, "step_id");

		if (sid && !strcmp(sid, id))
			return jsonx_str(st, "name");
	}
	return NULL;
}

static void render_plan(struct strbuf *sb, const struct report *r)
{
	const cJSON *ev = r->adopted ? r->adopted : r->proposed;
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(ev, "plan");
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(plan, "steps");
	const cJSON *st;
	double rev = 0;
	int i = 0;

	strbuf_adds(sb, "## Plan\n\n");
	if (!ev) {
		strbuf_adds(sb, "No plan was proposed.\n\n");
		return;
	}
	jsonx_num(ev, "revision", &rev);
	strbuf_addf(sb, "Revision %.0f, %s.\n\n", rev,
	            r->adopted ? "adopted" : "proposed but never adopted");
	if (jsonx_str(plan, "goal")) {
		strbuf_adds(sb, "Goal: ");
		add_clean(sb, jsonx_str(plan, "goal"), true);
		strbuf_adds(sb, "\n\n");
	}
	cJSON_ArrayForEach(st, as_array(steps))
	{
		const cJSON *deps = cJSON_GetObjectItemCaseSensitive(st, "dependencies");
		const cJSON *d;
		bool first = true;

		strbuf_addf(sb, "%d. **", ++i);
		add_clean(sb, str_or(st, "step_id", "?"), true);
		strbuf_adds(sb, "** ");
		add_clean(sb, str_or(st, "name", ""), true);
		strbuf_adds(sb, "\n   - Complexity: ");
		add_clean(sb, str_or(st, "estimated_complexity", "unknown"), true);
		strbuf_adds(sb, "\n   - Depends on: ");
		cJSON_ArrayForEach(d, as_array(deps))
		{
			if (!cJSON_IsString(d))
				continue;
			if (!first)
				strbuf_adds(sb, ", ");
			add_clean(sb, d->valuestring, true);
			first = false;
		}
		if (first)
			strbuf_adds(sb, "nothing");
		strbuf_adds(sb, "\n");
		add_list(sb, "   ", "Criteria",
		         cJSON_GetObjectItemCaseSensitive(st, "acceptance_criteria"));
	}
	if (i == 0)
		strbuf_adds(sb, "The plan has no steps.\n");
	strbuf_adds(sb, "\n");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(plan, "success_criteria"))) {
		add_list(sb, "", "Success criteria",
		         cJSON_GetObjectItemCaseSensitive(plan, "success_criteria"));
		strbuf_adds(sb, "\n");
	}
}

static void render_steps(struct strbuf *sb, const struct report *r)
{
	const cJSON *ev = r->adopted ? r->adopted : r->proposed;
	const cJSON *steps =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ev, "plan"), "steps");
	bool *done = xcalloc(r->n_steps + 1, sizeof(*done));
	const cJSON *st;

	strbuf_adds(sb, "## Steps\n\n");
	if (!r->n_steps)
		strbuf_adds(sb, "No step was started.\n\n");
	/* Plan order first, then steps that a replan removed, in the order they ran. */
	cJSON_ArrayForEach(st, as_array(steps))
	{
		const char *id = jsonx_str(st, "step_id");

		for (size_t i = 0; id && i < r->n_steps; i++) {
			if (done[i] || strcmp(r->steps[i].id, id))
				continue;
			done[i] = true;
			strbuf_adds(sb, "### ");
			add_clean(sb, id, true);
			if (jsonx_str(st, "name")) {
				strbuf_adds(sb, " — ");
				add_clean(sb, jsonx_str(st, "name"), true);
			}
			strbuf_addf(sb, "\n\n%s\n", r->steps[i].text.buf);
		}
	}
	for (size_t i = 0; i < r->n_steps; i++) {
		const char *name;

		if (done[i])
			continue;
		name = r->steps[i].name ? r->steps[i].name : plan_step_name(r, r->steps[i].id);
		strbuf_adds(sb, "### ");
		add_clean(sb, r->steps[i].id, true);
		if (name) {
			strbuf_adds(sb, " — ");
			add_clean(sb, name, true);
		}
		strbuf_addf(sb, " (not in the final plan)\n\n%s\n", r->steps[i].text.buf);
	}
	free(done);
}

static void add_money(struct strbuf *sb, double known, bool unknown)
{
	if (unknown && known > 0)
		strbuf_addf(sb, "unknown (at least $%.4f)", known);
	else if (unknown)
		strbuf_adds(sb, "unknown");
	else
		strbuf_addf(sb, "$%.4f", known);
}

static void render_cost(struct strbuf *sb, const struct report *r)
{
	double in = 0, out = 0, cached = 0, cost = 0;
	unsigned long calls = 0;
	bool unknown = false;

	strbuf_adds(sb, "## Cost\n\n");
	if (!r->n_roles) {
		strbuf_adds(sb, "No model was called.\n\n");
		return;
	}
	strbuf_adds(sb, "| Role | Calls | Input tokens | Output tokens | Cached tokens | Cost |\n");
	strbuf_adds(sb, "|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < r->n_roles; i++) {
		const struct role_cost *rc = &r->roles[i];

		strbuf_adds(sb, "| ");
		add_cell(sb, rc->role);
		strbuf_addf(sb, " | %lu | %.0f | %.0f | %.0f | ", rc->calls, rc->input, rc->output,
		            rc->cached);
		add_money(sb, rc->cost, rc->unknown);
		strbuf_adds(sb, " |\n");
		calls += rc->calls;
		in += rc->input;
		out += rc->output;
		cached += rc->cached;
		cost += rc->cost;
		unknown = unknown || rc->unknown;
	}
	strbuf_addf(sb, "| **total** | %lu | %.0f | %.0f | %.0f | ", calls, in, out, cached);
	add_money(sb, cost, unknown);
	strbuf_adds(sb, " |\n\n");
	for (size_t i = 0; i < r->n_roles; i++) {
		const struct role_cost *rc = &r->roles[i];

		for (size_t k = 0; k < rc->unknown_models.n; k++) {
			strbuf_adds(sb, "No price is known for model `");
			add_clean(sb, rc->unknown_models.v[k], true);
			strbuf_adds(sb, "` (");
			add_clean(sb, rc->role, true);
			strbuf_adds(sb, "); its calls are not counted in the sums above.\n");
		}
	}
	strbuf_adds(sb, "\n");
}

static void render_final(struct strbuf *sb, const struct report *r)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(r->final, "metrics");
	const cJSON *fc = cJSON_GetObjectItemCaseSensitive(r->final, "final_check");
	bool partial = false, b;
	double v;

	strbuf_adds(sb, "## Answer\n\n");
	if (!r->final && r->end) {
		strbuf_adds(sb, "No final answer: the run ended with status ");
		add_clean(sb, str_or(r->end, "status", "unknown"), true);
		strbuf_adds(sb, " before one was written.\n\n");
	} else if (!r->final) {
		strbuf_adds(sb, "No final answer: the run did not finish.\n\n");
	} else {
		jsonx_bool(r->final, "partial", &partial);
		if (partial)
			strbuf_adds(sb, "Partial answer: some steps were not verified.\n\n");
		add_quote(sb, "", str_or(r->final, "answer", ""));
		strbuf_adds(sb, "\n");
		if (jsonx_bool(fc, "passed", &b)) {
			strbuf_addf(sb, "Final check: %s", b ? "passed" : "failed");
			if (jsonx_str(fc, "feedback") && *jsonx_str(fc, "feedback")) {
				strbuf_adds(sb, " — ");
				add_clean(sb, jsonx_str(fc, "feedback"), true);
			}
			strbuf_adds(sb, "\n\n");
		}
	}
	strbuf_adds(sb, "## Metrics\n\n");
	if (!cJSON_IsObject(m)) {
		strbuf_adds(sb, r->end ? "No metrics were recorded.\n\n"
		                       : "No metrics: the run did not finish.\n\n");
		return;
	}
	static const struct {
		const char *key, *label;
	} rows[] = {
	    {"steps_total", "Steps"},
	    {"steps_passed", "Passed"},
	    {"steps_fail_accepted", "Fail-accepted"},
	    {"steps_skipped", "Skipped"},
	    {"total_attempts", "Attempts"},
	    {"replans", "Replans"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (jsonx_num(m, rows[i].key, &v))
			strbuf_addf(sb, "- %s: %.0f\n", rows[i].label, v);
	strbuf_adds(sb, "\n");
}

static void render_outcome(struct strbuf *sb, const struct report *r,
                           const struct journal_load_info *info)
{
	double code = 0;
	const char *reason = jsonx_str(r->end, "reason");

	strbuf_adds(sb, "## Outcome\n\n");
	if (r->end) {
		jsonx_num(r->end, "exit_code", &code);
		strbuf_adds(sb, "Status: ");
		add_clean(sb, str_or(r->end, "status", "unknown"), true);
		strbuf_addf(sb, ", exit code %.0f.\n", code);
		if (reason && *reason) {
			strbuf_adds(sb, "Reason: ");
			add_clean(sb, reason, true);
			strbuf_adds(sb, "\n");
		}
	} else {
		strbuf_addf(sb,
		            "The run did not finish: the journal ends at event %lu (%s) "
		            "without run.end.\n",
		            r->last_seq, r->last_type ? r->last_type : "none");
	}
	if (info->torn_tail)
		strbuf_adds(sb, "The journal's last line was cut off and was left out.\n");
}

static char *render(const struct report *r, const struct journal_load_info *info)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *s = r->start;
	const cJSON *models = cJSON_GetObjectItemCaseSensitive(s, "models");
	bool simulated = false;

	jsonx_bool(s, "simulated", &simulated);
	strbuf_adds(&sb, "# pevtui run ");
	add_clean(&sb, str_or(s, "run_id", "(unknown id)"), true);
	strbuf_addf(&sb, "%s\n\n", simulated ? " (simulated)" : "");
	if (!s)
		strbuf_adds(&sb, "The journal has no run.start event.\n\n");
	strbuf_adds(&sb, "- Task: ");
	add_clean(&sb, str_or(s, "task", "(unknown)"), true);
	strbuf_adds(&sb, "\n- Provider: ");
	add_clean(&sb, str_or(s, "provider", "(unknown)"), true);
	if (simulated)
		strbuf_adds(&sb, " (simulated)");
	strbuf_adds(&sb, "\n");
	static const char *const roles[] = {"planner", "executor", "verifier"};
	for (size_t i = 0; i < 3; i++) {
		strbuf_addf(&sb, "- %c%s model: ", roles[i][0] - 'a' + 'A', roles[i] + 1);
		add_clean(&sb, str_or(models, roles[i], "(unknown)"), true);
		strbuf_adds(&sb, "\n");
	}
	if (jsonx_str(s, "workspace")) {
		strbuf_adds(&sb, "- Workspace: ");
		add_clean(&sb, jsonx_str(s, "workspace"), true);
		strbuf_adds(&sb, "\n");
	}
	strbuf_adds(&sb, "- Status: ");
	if (r->end)
		add_clean(&sb, str_or(r->end, "status", "unknown"), true);
	else
		strbuf_adds(&sb, "did not finish");
	strbuf_adds(&sb, "\n\n");
	if (jsonx_str(s, "task") && strchr(jsonx_str(s, "task"), '\n')) {
		strbuf_adds(&sb, "## Task\n\n");
		add_quote(&sb, "", jsonx_str(s, "task"));
		strbuf_adds(&sb, "\n");
	}
	render_plan(&sb, r);
	render_steps(&sb, r);
	strbuf_adds(&sb, "## Gates\n\n");
	strbuf_adds(&sb, r->gates.len ? r->gates.buf : "No gate was decided.\n");
	strbuf_adds(&sb, "\n");
	if (r->notices.len)
		strbuf_addf(&sb, "## Warnings and errors\n\n%s\n", r->notices.buf);
	render_final(&sb, r);
	render_cost(&sb, r);
	render_outcome(&sb, r, info);
	return strbuf_detach(&sb);
}

static void report_release(struct report *r)
{
	cJSON_Delete(r->start);
	cJSON_Delete(r->proposed);
	cJSON_Delete(r->adopted);
	cJSON_Delete(r->final);
	cJSON_Delete(r->end);
	for (size_t i = 0; i < r->n_steps; i++) {
		free(r->steps[i].id);
		free(r->steps[i].name);
		strbuf_release(&r->steps[i].text);
	}
	free(r->steps);
	for (size_t i = 0; i < r->n_roles; i++) {
		free(r->roles[i].role);
		strvec_clear(&r->roles[i].unknown_models);
	}
	free(r->roles);
	strbuf_release(&r->gates);
	strbuf_release(&r->notices);
	free(r->last_type);
}

/* Temporary file + fsync + rename, so a reader never sees half a report. */
static bool write_atomic(const char *path, const char *text, char **err)
{
	char *tmp = xasprintf("%s.tmp", path);
	size_t len = strlen(text);
	const char *p = text;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int e = 0;

	if (fd < 0) {
		*err = xasprintf("cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return false;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? errno : EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!e && fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (!e && rename(tmp, path) < 0)
		e = errno;
	if (e) {
		*err = xasprintf("cannot write %s: %s", path, strerror(e));
		unlink(tmp);
	}
	free(tmp);
	return e == 0;
}

bool report_write(const char *run_dir, char **err)
{
	struct report r;
	struct journal_load_info info;
	char *jpath = xasprintf("%s/journal.jsonl", run_dir);
	char *rpath = xasprintf("%s/report.md", run_dir);
	char *text;
	bool ok;

	memset(&r, 0, sizeof(r));
	strbuf_init(&r.gates);
	strbuf_init(&r.notices);
	ok = journal_load(jpath, visit, &r, &info, err);
	if (ok) {
		text = render(&r, &info);
		ok = write_atomic(rpath, text, err);
		free(text);
	}
	report_release(&r);
	free(jpath);
	free(rpath);
	return ok;
}
