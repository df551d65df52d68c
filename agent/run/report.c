/* report — renders report.md for a run from its events (finished or interrupted): fed one
 * at a time as they are published, or read back from its journal. */
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
#include "fdio.h"
#include "fold.h"
#include "gate.h"
#include "journal.h"
#include "jsonx.h"
#include "report_audit.h"
#include "report_changes.h"
#include "report_mcp.h"
#include "report_replans.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* What happened to one step, as markdown list lines in journal order. */
struct step_log {
	char *id;
	char *name; /* from step.start, for a step the final plan no longer has */
	struct strbuf text;
};

/*
 * The run state is the fold's; the report adds the story the fold does not keep (each
 * step's attempts, verdicts, tool failures and gate answers in journal order, the gates,
 * warnings) and the run.final details it renders as they were written.
 */
struct report {
	struct run_state rs;
	bool has_start;
	cJSON *final; /* run.final of the current segment (metrics, final_check) */
	struct step_log *steps;
	size_t n_steps, cap_steps;
	size_t step_hint; /* where step_get found the last one */
	struct strindex step_of; /* step id -> its story in steps */
	/* The success criteria of the last plan.adopted and plan.proposed the fold took (what
	 * its plan_json and proposed_json hold: a step edit changes neither), or NULL. */
	cJSON *criteria_adopted, *criteria_proposed;
	struct strvec unknown_models[3]; /* per role: models without a known price */
	struct strbuf gates;
	struct strbuf notices;
	const char *last_type; /* event_type_name's */
	bool torn_tail; /* the journal read had a cut-off last line */
	struct audit *audit; /* times, tool calls, edits, budget (report_audit.h) */
	struct report_replans *replans; /* each replan and its diff (report_replans.h) */
	struct report_mcp *mcp; /* MCP servers and their calls (report_mcp.h) */
};

static const char *const role_names[3] = {"planner", "executor", "verifier"};

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

static const char *str_or(const cJSON *obj, const char *key, const char *dflt)
{
	const char *s = jsonx_str(obj, key);

	return s ? s : dflt;
}

static const char *story_id_at(const void *ctx, size_t i)
{
	return ((const struct report *)ctx)->steps[i].id;
}

static struct step_log *step_get(struct report *r, const char *id)
{
	struct step_log *s;
	size_t i;

	/* A step's events come in runs: try the last one found before the index. */
	if (r->step_hint < r->n_steps && !strcmp(r->steps[r->step_hint].id, id))
		return &r->steps[r->step_hint];
	if (strindex_get(&r->step_of, id, story_id_at, r, &i)) {
		r->step_hint = i;
		return &r->steps[i];
	}
	r->step_hint = r->n_steps;
	r->steps = xgrow(r->steps, &r->cap_steps, r->n_steps + 1, sizeof(*r->steps));
	s = &r->steps[r->n_steps++];
	s->id = xstrdup(id);
	s->name = NULL;
	strbuf_init(&s->text);
	strindex_add(&r->step_of, id, r->step_hint, story_id_at, r);
	return s;
}

/* Remembers the step's name as the plan had it then: a replan may drop the step later. */
static void note_name(struct report *r, struct step_log *s, const char *event_name)
{
	int i = fold_find_step(&r->rs, s->id);
	const char *name = i >= 0 && r->rs.steps[i].name ? r->rs.steps[i].name : event_name;

	if (name) {
		free(s->name);
		s->name = xstrdup(name);
	}
}

static void on_step_start(struct report *r, const char *sid, const cJSON *o)
{
	struct step_log *s = step_get(r, sid);
	double attempt = 0;

	note_name(r, s, jsonx_str(o, "name"));
	jsonx_num(o, "attempt", &attempt);
	strbuf_addf(&s->text, "- Attempt %.0f started\n", attempt);
}

#define CHANGES_LISTED 50 /* files named per attempt; the stat counts them all */

/* What an attempt changed in the workspace (step.changes), in the step's story. */
static void on_step_changes(struct report *r, const char *sid, const cJSON *o)
{
	struct step_log *s = step_get(r, sid);
	const cJSON *files = jsonx_get(o, "files"), *it;
	double attempt = 0, more = 0;
	int n = 0;

	jsonx_num(o, "attempt", &attempt);
	jsonx_num(o, "files_more", &more);
	strbuf_addf(&s->text, "- Attempt %.0f %schanged the workspace: ", attempt,
		    cJSON_IsTrue(jsonx_get(o, "cut"))
			? "(cut off by a stop; found on --resume) "
			: "");
	add_clean(&s->text, str_or(o, "stat", "?"), true);
	strbuf_adds(&s->text, "\n");
	cJSON_ArrayForEach(it, files) {
		double plus = 0, minus = 0, osz = 0, nsz = 0;
		if (n++ == CHANGES_LISTED) {
			strbuf_addf(&s->text, "  - and %d more\n",
				    cJSON_GetArraySize(files) - CHANGES_LISTED + (int)more);
			break;
		}
		jsonx_num(it, "plus", &plus);
		jsonx_num(it, "minus", &minus);
		strbuf_adds(&s->text, "  - `");
		add_clean(&s->text, str_or(it, "path", "?"), true);
		strbuf_adds(&s->text, "` ");
		add_clean(&s->text, str_or(it, "change", "?"), true);
		if (cJSON_IsTrue(jsonx_get(it, "binary"))) {
			jsonx_num(it, "old_size", &osz);
			jsonx_num(it, "new_size", &nsz);
			strbuf_addf(&s->text, " (binary, %.0f → %.0f bytes)\n", osz, nsz);
		} else {
			strbuf_addf(&s->text, " (+%.0f −%.0f)\n", plus, minus);
		}
	}
	if (n <= CHANGES_LISTED && more > 0)
		strbuf_addf(&s->text, "  - and %.0f more\n", more);
}

/* The verdict the fold has just read, told under its step. */
static void on_verdict(struct report *r, const char *sid)
{
	struct step_log *s = step_get(r, sid);
	const struct fverdict *v = &r->rs.verdicts[r->rs.n_verdicts - 1];

	strbuf_addf(&s->text, "- Attempt %d, ", v->attempt);
	add_clean(&s->text, v->stage ? v->stage : "unknown", true);
	strbuf_adds(&s->text, " verdict: ");
	add_clean(&s->text, v->action ? v->action : "unknown", true);
	if (v->severity) {
		strbuf_adds(&s->text, " (severity ");
		add_clean(&s->text, v->severity, true);
		strbuf_adds(&s->text, ")");
	}
	strbuf_adds(&s->text, "\n");
	for (size_t i = 0; i < v->n_criteria; i++) {
		const struct fcriterion *c = &v->criteria[i];

		if (c->passed && !c->not_judged)
			continue;
		/* Left out by the verifier: neither passed nor failed, and said so. */
		strbuf_adds(&s->text,
			    c->not_judged ? "  - Not judged: " : "  - Failed criterion: ");
		add_clean(&s->text, c->text ? c->text : "(unnamed)", true);
		if (!c->not_judged && c->feedback && *c->feedback) {
			strbuf_adds(&s->text, " — ");
			add_clean(&s->text, c->feedback, true);
		}
		strbuf_adds(&s->text, "\n");
	}
	if (v->feedback && *v->feedback) {
		strbuf_adds(&s->text, "  - Feedback: ");
		add_clean(&s->text, v->feedback, true);
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

/* Every tool call with its params in short and how it ended. A shell command that ran is
 * told by on_shell_result (the command as it ran), so it is not told twice. */
static void on_tool_result(struct report *r, const char *sid, const cJSON *o)
{
	bool ran = false;

	if (jsonx_str(o, "command") && jsonx_bool(o, "ran", &ran) && ran)
		return;
	audit_tool_line(r->audit, &step_get(r, sid)->text, o);
}

/* Inline code for any text: a fence longer than any run of backticks in it. */
static void add_code(struct strbuf *sb, const char *s)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t run = 0, longest = 0;

	add_clean(&tmp, s, true);
	for (const char *p = tmp.buf; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	strbuf_adds(sb, " ");
	strbuf_adds(sb, tmp.buf);
	strbuf_adds(sb, " ");
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	strbuf_release(&tmp);
}

/* A shell command as it ran (tool.result of run_shell): the command after any edit, its
 * exit status, its duration and how the gate let it through. */
static void on_shell_result(struct report *r, const char *sid, const cJSON *o)
{
	const char *cmd = jsonx_str(o, "command");
	const char *how = gate_shell_approval_words(jsonx_str(o, "approval"));
	double attempt = 0, v;
	bool ran = false, timed_out = false;
	struct step_log *s;

	if (!cmd || !jsonx_bool(o, "ran", &ran) || !ran)
		return;
	s = step_get(r, sid);
	jsonx_num(o, "attempt", &attempt);
	strbuf_addf(&s->text, "- Attempt %.0f: shell ", attempt);
	add_code(&s->text, cmd);
	if (jsonx_num(o, "exit_status", &v))
		strbuf_addf(&s->text, " — exit status %.0f", v);
	else if (jsonx_num(o, "signal", &v))
		strbuf_addf(&s->text, " — killed by signal %.0f", v);
	else if (jsonx_bool(o, "timed_out", &timed_out) && timed_out)
		strbuf_adds(&s->text, " — stopped at its time limit");
	else
		strbuf_adds(&s->text, " — stopped");
	if (jsonx_num(o, "duration_ms", &v))
		strbuf_addf(&s->text, " after %.1f s", v / 1000.0);
	if (how)
		strbuf_addf(&s->text, " (%s)", how);
	strbuf_adds(&s->text, "\n");
}

static void on_gate_decision(struct report *r, const cJSON *o)
{
	const char *sid = jsonx_str(o, "step_id");
	const char *reason = jsonx_str(o, "reason");
	bool remember = false;

	strbuf_adds(&r->gates, "- ");
	add_clean(&r->gates, str_or(o, "gate", "unknown"), true);
	strbuf_adds(&r->gates, " gate");
	if (sid) {
		strbuf_adds(&r->gates, " for step ");
		add_clean(&r->gates, sid, true);
	}
	strbuf_adds(&r->gates, ": ");
	add_clean(&r->gates,
		  gate_decision_word(jsonx_str(o, "gate"), str_or(o, "decision", "unknown")), true);
	strbuf_adds(&r->gates, " by ");
	add_clean(&r->gates, str_or(o, "by", "unknown"), true);
	if (reason && *reason) {
		strbuf_adds(&r->gates, " — ");
		add_clean(&r->gates, reason, true);
	}
	if (jsonx_bool(o, "remember", &remember) && remember && jsonx_str(o, "command")) {
		strbuf_adds(&r->gates, " — allowed for the rest of the run: ");
		add_code(&r->gates, jsonx_str(o, "command"));
	}
	strbuf_adds(&r->gates, "\n");
	if (sid) {
		struct step_log *s = step_get(r, sid);

		strbuf_adds(&s->text, "- Gate ");
		add_clean(&s->text, str_or(o, "gate", "unknown"), true);
		strbuf_adds(&s->text, ": ");
		add_clean(&s->text,
			  gate_decision_word(jsonx_str(o, "gate"), str_or(o, "decision", "unknown")),
			  true);
		strbuf_adds(&s->text, " by ");
		add_clean(&s->text, str_or(o, "by", "unknown"), true);
		strbuf_adds(&s->text, "\n");
	}
}

/* Models without a price, named once per role (their calls are not in the sums). */
static void on_llm_call(struct report *r, const cJSON *o)
{
	const char *role = jsonx_str(o, "role"), *model = str_or(o, "model", "unknown");
	double v;

	if (jsonx_num(o, "cost_usd", &v))
		return;
	for (int i = 0; role && i < 3; i++) {
		if (strcmp(role, role_names[i]) != 0)
			continue;
		for (size_t k = 0; k < r->unknown_models[i].n; k++)
			if (!strcmp(r->unknown_models[i].v[k], model))
				return;
		strvec_push(&r->unknown_models[i], model);
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

/* The plan's success criteria, kept as the fold keeps the plan (the rest of the plan's
 * JSON is not read again). */
static void keep_criteria(struct report *r, int type, const cJSON *plan)
{
	cJSON **slot = type == EV_PLAN_ADOPTED ? &r->criteria_adopted : &r->criteria_proposed;
	const cJSON *sc = jsonx_get(plan, "success_criteria");

	if (!cJSON_IsObject(plan))
		return; /* the fold ignored it too */
	cJSON_Delete(*slot);
	*slot = sc ? cJSON_Duplicate(sc, true) : NULL;
	if (sc && !*slot)
		fatal("report: out of memory copying the success criteria");
}

/* The fold reads each event, then the story takes what it adds. */
void report_apply(struct report *r, int type, const cJSON *o)
{
	const char *sid = jsonx_str(o, "step_id"); /* what journal_load makes ev->step_id */

	if (!cJSON_IsObject(o) || type < 0 || type >= EV__COUNT)
		return;
	fold_apply_json(&r->rs, type, o);
	audit_apply(r->audit, type, o);
	report_replans_apply(r->replans, &r->rs, type, o);
	report_mcp_apply(r->mcp, type, o);
	r->last_type = event_type_name((enum event_type)type);
	switch ((enum event_type)type) {
	case EV_RUN_START: r->has_start = true; break;
	case EV_RUN_FINAL:
		cJSON_Delete(r->final);
		r->final = cJSON_Duplicate(o, true);
		break;
	case EV_RUN_REOPEN:
		cJSON_Delete(r->final);
		r->final = NULL;
		break;
	case EV_PLAN_PROPOSED:
	case EV_PLAN_ADOPTED:
		keep_criteria(r, type, jsonx_get(o, "plan"));
		break;
	case EV_STEP_START:
		if (sid)
			on_step_start(r, sid, o);
		break;
	case EV_VERIFY_VERDICT:
		if (sid && r->rs.n_verdicts)
			on_verdict(r, sid);
		break;
	case EV_STEP_END:
		if (sid)
			on_step_end(r, sid, o);
		break;
	case EV_TOOL_RESULT:
		if (sid)
			on_shell_result(r, sid, o);
		if (sid)
			on_tool_result(r, sid, o);
		break;
	case EV_STEP_EDIT:
		if (sid) {
			struct step_log *s = step_get(r, sid);

			strbuf_adds(&s->text, "- Edited by ");
			add_clean(&s->text, str_or(o, "by", "operator"), true);
			strbuf_adds(&s->text, "\n");
			audit_step_edit_lines(&s->text, "  ",
					      jsonx_get(o, "before"),
					      jsonx_get(o, "after"));
		}
		break;
	case EV_GATE_DECISION:
		on_gate_decision(r, o);
		audit_gate_line(r->audit, &r->gates, o);
		break;
	case EV_STEP_CHANGES:
		if (sid)
			on_step_changes(r, sid, o);
		break;
	case EV_LLM_CALL: on_llm_call(r, o); break;
	case EV_NOTICE: on_notice(r, o); break;
	default: break;
	}
}

static bool visit(void *ctx, const struct event *ev)
{
	cJSON *o = cJSON_Parse(ev->json); /* journal_load checked it is an object */

	report_apply(ctx, (int)ev->type, o);
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

static void add_strvec(struct strbuf *sb, const char *indent, const char *title,
		       const struct strvec *sv)
{
	if (!sv->n)
		return;
	strbuf_addf(sb, "%s- %s:\n", indent, title);
	for (size_t i = 0; i < sv->n; i++) {
		strbuf_addf(sb, "%s  - ", indent);
		add_clean(sb, sv->v[i], true);
		strbuf_adds(sb, "\n");
	}
}

/* The plan shown: the adopted one (with its edits), else the proposal never adopted. */
static const char *shown_plan(const struct report *r)
{
	return r->rs.plan_adopted ? r->rs.plan_json : r->rs.proposed_json;
}

static void render_plan(struct strbuf *sb, const struct report *r)
{
	const struct run_state *rs = &r->rs;
	const char *text = shown_plan(r);
	const cJSON *criteria = rs->plan_adopted ? r->criteria_adopted : r->criteria_proposed;

	strbuf_adds(sb, "## Plan\n\n");
	if (!text) {
		strbuf_adds(sb, "No plan was proposed.\n\n");
		return;
	}
	strbuf_addf(sb, "Revision %d, %s.\n\n",
		    rs->plan_adopted ? rs->revision : rs->proposed_revision,
		    rs->plan_adopted ? "adopted" : "proposed but never adopted");
	if (rs->goal) {
		strbuf_adds(sb, "Goal: ");
		add_clean(sb, rs->goal, true);
		strbuf_adds(sb, "\n\n");
	}
	for (size_t i = 0; i < rs->n_steps; i++) {
		const struct fstep *st = &rs->steps[i];

		strbuf_addf(sb, "%zu. **", i + 1);
		add_clean(sb, st->id, true);
		strbuf_adds(sb, "** ");
		add_clean(sb, st->name ? st->name : "", true);
		strbuf_adds(sb, "\n   - Complexity: ");
		add_clean(sb, st->complexity ? st->complexity : "unknown", true);
		strbuf_adds(sb, "\n   - Depends on: ");
		for (size_t d = 0; d < st->deps.n; d++) {
			if (d)
				strbuf_adds(sb, ", ");
			add_clean(sb, st->deps.v[d], true);
		}
		if (!st->deps.n)
			strbuf_adds(sb, "nothing");
		strbuf_adds(sb, "\n");
		add_strvec(sb, "   ", "Criteria", &st->criteria);
	}
	if (!rs->n_steps)
		strbuf_adds(sb, "The plan has no steps.\n");
	strbuf_adds(sb, "\n");
	/* The fold keeps steps; the plan's own success criteria were kept as it came. */
	if (cJSON_GetArraySize(criteria)) {
		add_list(sb, "", "Success criteria", criteria);
		strbuf_adds(sb, "\n");
	}
}

static void render_steps(struct strbuf *sb, const struct report *r)
{
	const struct run_state *rs = &r->rs;
	bool *done = xcalloc(r->n_steps + 1, sizeof(*done));
	size_t i;

	strbuf_adds(sb, "## Steps\n\n");
	if (!r->n_steps)
		strbuf_adds(sb, "No step was started.\n\n");
	/* Plan order first, then steps that a replan removed, in the order they ran. */
	for (size_t k = 0; k < rs->n_steps; k++) {
		const struct fstep *st = &rs->steps[k];

		/* A story's id is there once: the index finds it. */
		if (strindex_get(&r->step_of, st->id, story_id_at, r, &i) && !done[i]) {
			done[i] = true;
			strbuf_adds(sb, "### ");
			add_clean(sb, st->id, true);
			if (st->name) {
				strbuf_adds(sb, " — ");
				add_clean(sb, st->name, true);
			}
			strbuf_adds(sb, "\n\n");
			audit_render_step(r->audit, sb, st->id);
			strbuf_adds(sb, r->steps[i].text.buf);
			strbuf_addc(sb, '\n');
		}
	}
	for (i = 0; i < r->n_steps; i++) {
		if (done[i])
			continue;
		strbuf_adds(sb, "### ");
		add_clean(sb, r->steps[i].id, true);
		if (r->steps[i].name) {
			strbuf_adds(sb, " — ");
			add_clean(sb, r->steps[i].name, true);
		}
		strbuf_adds(sb, " (not in the final plan)\n\n");
		audit_render_step(r->audit, sb, r->steps[i].id);
		strbuf_adds(sb, r->steps[i].text.buf);
		strbuf_addc(sb, '\n');
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
	const struct fusage *roles = r->rs.roles;
	long in = 0, out = 0, cached = 0, calls = 0;
	double cost = 0;
	bool unknown = false;

	strbuf_adds(sb, "## Cost\n\n");
	for (int i = 0; i < 3; i++)
		calls += roles[i].calls;
	if (!calls) {
		strbuf_adds(sb, "No model was called.\n\n");
		return;
	}
	strbuf_adds(sb, "| Role | Calls | Input tokens | Output tokens | Cached tokens | Cost |\n");
	strbuf_adds(sb, "|---|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < 3; i++) {
		const struct fusage *u = &roles[i];

		if (!u->calls)
			continue;
		strbuf_addf(sb, "| %s | %ld | %ld | %ld | %ld | ", role_names[i], u->calls,
			    u->tokens_in, u->tokens_out, u->tokens_cached);
		add_money(sb, u->usd, u->unknown);
		strbuf_adds(sb, " |\n");
		in += u->tokens_in;
		out += u->tokens_out;
		cached += u->tokens_cached;
		cost += u->usd;
		unknown = unknown || u->unknown;
	}
	strbuf_addf(sb, "| **total** | %ld | %ld | %ld | %ld | ", calls, in, out, cached);
	add_money(sb, cost, unknown);
	strbuf_adds(sb, " |\n\n");
	for (int i = 0; i < 3; i++) {
		for (size_t k = 0; k < r->unknown_models[i].n; k++) {
			strbuf_adds(sb, "No price is known for model `");
			add_clean(sb, r->unknown_models[i].v[k], true);
			strbuf_addf(sb, "` (%s); its calls are not counted in the sums above.\n",
				    role_names[i]);
		}
	}
	strbuf_adds(sb, "\n");
}

static void render_final(struct strbuf *sb, const struct report *r)
{
	const struct run_state *rs = &r->rs;
	const cJSON *m = jsonx_get(r->final, "metrics");
	const cJSON *fc = jsonx_get(r->final, "final_check");
	bool b;
	double v;

	strbuf_adds(sb, "## Answer\n\n");
	if (!rs->final_seen && rs->ended) {
		strbuf_adds(sb, "No final answer: the run ended with status ");
		add_clean(sb, rs->end_status ? rs->end_status : "unknown", true);
		strbuf_adds(sb, " before one was written.\n\n");
	} else if (!rs->final_seen) {
		strbuf_adds(sb, "No final answer: the run did not finish.\n\n");
	} else {
		if (rs->partial)
			strbuf_adds(sb, "Partial answer: some steps were not verified.\n\n");
		add_quote(sb, "", rs->answer ? rs->answer : "");
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
		strbuf_adds(sb, rs->ended ? "No metrics were recorded.\n\n"
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

static void render_outcome(struct strbuf *sb, const struct report *r)
{
	const struct run_state *rs = &r->rs;
	const char *reason = rs->end_reason;

	strbuf_adds(sb, "## Outcome\n\n");
	if (rs->ended) {
		strbuf_adds(sb, "Status: ");
		add_clean(sb, rs->end_status ? rs->end_status : "unknown", true);
		strbuf_addf(sb, ", exit code %d.\n", rs->exit_code);
		if (reason && *reason) {
			strbuf_adds(sb, "Reason: ");
			add_clean(sb, reason, true);
			strbuf_adds(sb, "\n");
		}
	} else {
		strbuf_addf(sb,
		            "The run did not finish: the journal ends at event %lu (%s) "
		            "without run.end.\n",
		            rs->last_seq, r->last_type ? r->last_type : "none");
	}
	if (r->torn_tail)
		strbuf_adds(sb, "The journal's last line was cut off and was left out.\n");
}

static char *render(const struct report *r, const char *run_dir)
{
	struct strbuf sb = STRBUF_INIT;
	const struct run_state *rs = &r->rs;

	strbuf_adds(&sb, "# pevtui run ");
	add_clean(&sb, rs->run_id ? rs->run_id : "(unknown id)", true);
	strbuf_addf(&sb, "%s\n\n", rs->simulated ? " (simulated)" : "");
	if (!r->has_start)
		strbuf_adds(&sb, "The journal has no run.start event.\n\n");
	strbuf_adds(&sb, "- Task: ");
	add_clean(&sb, rs->task ? rs->task : "(unknown)", true);
	strbuf_adds(&sb, "\n- Provider: ");
	add_clean(&sb, rs->provider ? rs->provider : "(unknown)", true);
	if (rs->simulated)
		strbuf_adds(&sb, " (simulated)");
	strbuf_adds(&sb, "\n");
	for (size_t i = 0; i < 3; i++) {
		strbuf_addf(&sb, "- %c%s model: ", role_names[i][0] - 'a' + 'A', role_names[i] + 1);
		add_clean(&sb, rs->models[i] ? rs->models[i] : "(unknown)", true);
		strbuf_adds(&sb, "\n");
	}
	if (rs->workspace) {
		strbuf_adds(&sb, "- Workspace: ");
		add_clean(&sb, rs->workspace, true);
		strbuf_adds(&sb, "\n");
	}
	if (rs->sandbox) {
		strbuf_adds(&sb, "- Commands: ");
		add_clean(&sb, rs->sandbox, true);
		strbuf_adds(&sb, "\n");
	}
	audit_render_times(r->audit, &sb);
	strbuf_adds(&sb, "- Status: ");
	if (rs->ended)
		add_clean(&sb, rs->end_status ? rs->end_status : "unknown", true);
	else
		strbuf_adds(&sb, "did not finish");
	strbuf_adds(&sb, "\n\n");
	if (rs->task && strchr(rs->task, '\n')) {
		strbuf_adds(&sb, "## Task\n\n");
		add_quote(&sb, "", rs->task);
		strbuf_adds(&sb, "\n");
	}
	render_plan(&sb, r);
	audit_render_plan_edits(r->audit, &sb);
	report_replans_render(r->replans, &sb);
	render_steps(&sb, r);
	report_changes_render(&sb, rs, run_dir);
	audit_render_unjudged(r->audit, &sb, rs);
	report_mcp_render(r->mcp, &sb);
	strbuf_adds(&sb, "## Gates\n\n");
	strbuf_adds(&sb, r->gates.len ? r->gates.buf : "No gate was decided.\n");
	strbuf_adds(&sb, "\n");
	if (r->notices.len)
		strbuf_addf(&sb, "## Warnings and errors\n\n%s\n", r->notices.buf);
	render_final(&sb, r);
	render_cost(&sb, r);
	audit_render_budget(r->audit, &sb, rs);
	render_outcome(&sb, r);
	return strbuf_detach(&sb);
}

struct report *report_new(void)
{
	struct report *r = xcalloc(1, sizeof(*r));

	fold_init(&r->rs);
	strbuf_init(&r->gates);
	strbuf_init(&r->notices);
	r->audit = audit_new();
	r->replans = report_replans_new();
	r->mcp = report_mcp_new();
	return r;
}

void report_free(struct report *r)
{
	if (!r)
		return;
	fold_release(&r->rs);
	cJSON_Delete(r->final);
	for (size_t i = 0; i < r->n_steps; i++) {
		free(r->steps[i].id);
		free(r->steps[i].name);
		strbuf_release(&r->steps[i].text);
	}
	free(r->steps);
	strindex_free(&r->step_of);
	cJSON_Delete(r->criteria_adopted);
	cJSON_Delete(r->criteria_proposed);
	for (int i = 0; i < 3; i++)
		strvec_clear(&r->unknown_models[i]);
	strbuf_release(&r->gates);
	strbuf_release(&r->notices);
	audit_free(r->audit);
	report_replans_free(r->replans);
	report_mcp_free(r->mcp);
	free(r);
}

/* Temporary file + fsync + rename, so a reader never sees half a report. */
static bool write_atomic(const char *path, const char *text, char **err)
{
	char *tmp = xasprintf("%s.tmp", path);
	size_t len = strlen(text);
	const char *p = text;
	int fd, e = 0;

	/* A fresh file of our own: one left by a crash goes first, and a link planted in its
	 * place (symbolic or hard) is neither followed nor written through. */
	(void)unlink(tmp); /* mostly ENOENT; whatever else, open says below */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*err = xasprintf("cannot create %s: %s", tmp, strerror(errno));
		free(tmp);
		return false;
	}
	e = fd_write_all(fd, p, len);
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

bool report_render_write(const struct report *r, const char *run_dir, char **err)
{
	char *rpath = xasprintf("%s/report.md", run_dir);
	char *text = render(r, run_dir);
	bool ok = write_atomic(rpath, text, err);

	free(text);
	free(rpath);
	return ok;
}

bool report_write(const char *run_dir, char **err)
{
	struct report *r = report_new();
	struct journal_load_info info;
	char *jpath = xasprintf("%s/journal.jsonl", run_dir);
	bool ok = journal_load(jpath, visit, r, &info, err);

	if (ok) {
		r->torn_tail = info.torn_tail;
		ok = report_render_write(r, run_dir, err);
	}
	report_free(r);
	free(jpath);
	return ok;
}
