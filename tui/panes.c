/* panes — the four panes: plan tree, step log, verdicts newest first, cost per role. */
#include "config.h"

#include "panes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "meter.h"
#include "textsan.h"
#include "textview.h"
#include "view.h"
#include "xalloc.h"

static const char *const spinner[] = {
	"\xe2\xa0\x8b", "\xe2\xa0\x99", "\xe2\xa0\xb9", "\xe2\xa0\xb8", "\xe2\xa0\xbc",
	"\xe2\xa0\xb4", "\xe2\xa0\xa6", "\xe2\xa0\xa7", "\xe2\xa0\x87", "\xe2\xa0\x8f",
};

void panes_init(struct panes_state *ps)
{
	memset(ps, 0, sizeof(*ps));
	logview_init(&ps->log);
}

const char *panes_status_glyph(int status, unsigned spin)
{
	switch (status) {
	case VS_PENDING: return "\xc2\xb7";            /* · */
	case VS_READY: return "\xe2\x97\x8b";          /* ○ */
	case VS_WAITING: return "\xe2\x97\x86";        /* ◆ */
	case VS_RUNNING: return spinner[spin % 10];
	case VS_VERIFYING: return "\xe2\x97\x90";      /* ◐ */
	case VS_RETRYING: return "\xe2\x86\xbb";       /* ↻ */
	case VS_STALE: return "\xe2\x97\x8c";          /* ◌ */
	case VS_PASSED: return "\xe2\x9c\x93";         /* ✓ */
	case VS_FAIL_ACCEPTED: return "\xe2\x9c\x97";  /* ✗ */
	case VS_SKIPPED: return "\xc2\xbb";            /* » */
	default: return "?";
	}
}

static enum theme_role status_role(int status)
{
	switch (status) {
	case VS_PENDING: return THEME_DIM;
	case VS_READY: return THEME_NORMAL;
	case VS_WAITING: return THEME_WAIT;
	case VS_RUNNING:
	case VS_VERIFYING: return THEME_BUSY;
	case VS_RETRYING: return THEME_WARN;
	case VS_STALE: return THEME_STALE;
	case VS_PASSED: return THEME_GOOD;
	case VS_FAIL_ACCEPTED: return THEME_BAD;
	case VS_SKIPPED: return THEME_DIM;
	default: return THEME_NORMAL;
	}
}

void panes_duration(char *buf, unsigned long n, double secs)
{
	long s = (long)secs;

	if (secs < 0)
		secs = 0, s = 0;
	if (secs < 60)
		snprintf(buf, n, "%.1fs", secs);
	else if (s < 3600)
		snprintf(buf, n, "%ld:%02ld", s / 60, s % 60);
	else
		snprintf(buf, n, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
}

void panes_money(char *buf, unsigned long n, double usd, bool unknown)
{
	if (unknown && usd <= 0)
		snprintf(buf, n, "?");
	else if (unknown)
		snprintf(buf, n, "$%.4f+?", usd);
	else
		snprintf(buf, n, "$%.4f", usd);
}

static void tokens(char *buf, size_t n, long t)
{
	if (t >= 1000000)
		snprintf(buf, n, "%.1fM", (double)t / 1e6);
	else if (t >= 10000)
		snprintf(buf, n, "%ldk", t / 1000);
	else if (t >= 1000)
		snprintf(buf, n, "%.1fk", (double)t / 1e3);
	else
		snprintf(buf, n, "%ld", t);
}

bool panes_showing_proposal(const struct view *v, const struct panes_state *ps)
{
	return ps->show_proposal && v->n_proposal > 0;
}

int panes_plan_rows(const struct view *v, const struct panes_state *ps)
{
	return (int)(panes_showing_proposal(v, ps) ? v->n_proposal : v->n_steps) + 1;
}

struct vstep *panes_selected_step(const struct view *v, const struct panes_state *ps)
{
	int i = ps->plan.sel - 1;

	if (panes_showing_proposal(v, ps)) {
		if (i < 0 || (size_t)i >= v->n_proposal)
			return NULL;
		i = view_find_step(v, v->proposal[i].key);
	}
	return (i >= 0 && (size_t)i < v->n_steps) ? &v->steps[i] : NULL;
}

const struct linestore *panes_log_store(const struct view *v, const struct panes_state *ps)
{
	struct vstep *s = panes_selected_step(v, ps);

	return s ? &s->log : &v->runlog;
}

/* Draws `s` right-aligned on the top border of a pane (revision, selected step …). */
static void border_note(struct rect r, const char *s, int title_w)
{
	int w = textsan_width(s), room = r.w - title_w - 8;

	if (room < 4)
		return;
	if (w > room)
		w = room;
	draw_text(r.y, r.x + r.w - 2 - w - 2, 1, " ", THEME_DIM);
	draw_text_cut(r.y, r.x + r.w - 2 - w - 1, w, s, THEME_DIM);
	draw_text(r.y, r.x + r.w - 3, 1, " ", THEME_DIM);
}

/* ---- Plan ---- */

struct plan_ctx {
	const struct view *v;
	const struct panes_state *ps;
};

static void plan_row(void *ctx, int index, int y, int x, int w, bool selected)
{
	struct plan_ctx *c = ctx;
	const struct view *v = c->v;
	const struct vstep *s;
	char right[64], dur[24];
	int used, rw, indent, ew;

	if (index == 0) {
		int u = draw_text(y, x, w, "\xe2\x96\xb8 ", THEME_ACCENT);

		draw_text_cut(y, x + u, w - u, v->goal ? v->goal : (v->task ? v->task : "Run"),
			      THEME_ACCENT);
		return;
	}
	s = &v->steps[index - 1];
	rw = 0;
	if (w >= 30) {
		right[0] = '\0';
		if (s->f->first_start > 0)
			panes_duration(dur, sizeof(dur), view_step_elapsed(s, c->ps->now));
		else
			dur[0] = '\0';
		/* Fixed widths, so the columns line up from row to row (issue 29): the
		 * attempts in two, the time right-aligned in five ("12.5s", "1:05"). */
		snprintf(right, sizeof(right), "%c %s%-2d %5s",
			 s->complexity && *s->complexity ? s->complexity[0] : '-',
			 "\xc3\x97", s->f->attempts, dur);
		rw = textsan_width(right);
	}
	used = draw_text(y, x, w, panes_status_glyph(s->status, c->ps->spin), status_role(s->status));
	used += draw_text(y, x + used, w - used, " ", THEME_NORMAL);
	indent = s->depth > 4 ? 4 : s->depth;
	for (int i = 0; i < indent && used + 2 < w; i++)
		used += draw_text(y, x + used, w - used, i + 1 == indent ? "\xe2\x94\x94 " : "  ",
				  THEME_DIM);
	/* A name cut to fit ends in "…"; z (zoom) gives it the width. "(edited)" keeps its
	 * room beside the right columns, so it shows unzoomed too (issue 29). */
	ew = s->f->edited && w - used - rw - 1 >= 20 ? 9 : 0;
	used += draw_textf_cut(y, x + used, w - used - rw - 1 - ew,
			       selected ? THEME_ACCENT : status_role(s->status) == THEME_DIM
					     ? THEME_DIM : THEME_NORMAL,
			       "%s %s%s", s->id, s->name ? s->name : "",
			       s->f->edited && !ew ? " (edited)" : "");
	if (ew)
		used += draw_text(y, x + used, ew, " (edited)", THEME_WARN);
	if (rw && used + rw + 1 <= w)
		draw_text(y, x + w - rw, rw, right, s->status == VS_WAITING ? THEME_WAIT : THEME_DIM);
}

/* A step of the proposal waiting at a replan gate: marked new (+), changed (~) or the
 * same (=) against the plan in force. */
static void proposal_row(void *ctx, int index, int y, int x, int w, bool selected)
{
	struct plan_ctx *c = ctx;
	const struct vpstep *s;
	static const char *const marks[] = {[PDC_SAME] = "=", [PDC_ADDED] = "+",
					    [PDC_CHANGED] = "~"};
	static const char *const words[] = {[PDC_SAME] = "same", [PDC_ADDED] = "new",
					    [PDC_CHANGED] = "changed"};
	enum theme_role role;
	char right[32];
	int used, rw = 0, indent;

	if (index == 0) {
		plan_row(ctx, 0, y, x, w, selected);
		return;
	}
	s = &c->v->proposal[index - 1];
	role = s->change == PDC_ADDED ? THEME_DIFF_ADD
	       : s->change == PDC_CHANGED ? THEME_DIFF_CHANGE : THEME_DIM;
	if (w >= 30) {
		snprintf(right, sizeof(right), "%c %s", *s->complexity ? s->complexity[0] : '-',
			 words[s->change]);
		rw = textsan_width(right);
	}
	used = draw_text(y, x, w, marks[s->change], role);
	used += draw_text(y, x + used, w - used, " ", THEME_NORMAL);
	indent = s->depth > 4 ? 4 : s->depth;
	for (int i = 0; i < indent && used + 2 < w; i++)
		used += draw_text(y, x + used, w - used, i + 1 == indent ? "\xe2\x94\x94 " : "  ",
				  THEME_DIM);
	used += draw_textf_cut(y, x + used, w - used - rw - 1,
			       selected ? THEME_ACCENT : s->change == PDC_SAME ? THEME_DIM
									: THEME_NORMAL,
			       "%s %s", s->id, s->name);
	if (rw && used + rw + 1 <= w)
		draw_text(y, x + w - rw, rw, right, role);
}

static void draw_plan(const struct view *v, struct panes_state *ps, struct rect r, bool focus)
{
	struct plan_ctx c = {v, ps};
	char note[64];
	struct rect in = rect_inner(r);
	bool proposal;

	if (!v->n_proposal)
		ps->show_proposal = false; /* the gate is gone: back to the plan in force */
	proposal = panes_showing_proposal(v, ps);
	draw_box(r, "Plan", focus);
	/* Which revision is shown, and that c shows the other while a proposal waits. */
	if (proposal)
		snprintf(note, sizeof(note), "proposed rev %d \xc2\xb7 c: rev %d in force",
			 v->rs.proposed_revision, v->rs.revision);
	else if (v->n_proposal)
		snprintf(note, sizeof(note), "rev %d \xc2\xb7 c: proposed rev %d", v->revision,
			 v->rs.proposed_revision);
	else
		snprintf(note, sizeof(note), "%srev %d", v->rs.plan_adopted ? "" : "proposed ",
			 v->revision);
	if (v->n_steps || proposal)
		border_note(r, note, 4);
	listview_draw(&ps->plan, panes_plan_rows(v, ps), in, focus,
		      proposal ? proposal_row : plan_row, &c);
}

/* ---- Step log ---- */

static enum theme_role log_role(int kind)
{
	switch (kind) {
	case VL_HEADER: return THEME_ACCENT;
	case VL_TOOL: return THEME_TOOL;
	case VL_TOOL_OK: return THEME_TOOL;
	case VL_TOOL_FAIL: return THEME_BAD;
	case VL_CRITIQUE: return THEME_WARN;
	case VL_RETRY: return THEME_WARN;
	case VL_PASS: return THEME_GOOD;
	case VL_NOTICE: return THEME_DIM;
	case VL_WARN: return THEME_WARN;
	case VL_ERROR: return THEME_BAD;
	case VL_DIFF_ADD: return THEME_DIFF_ADD;
	case VL_DIFF_DEL: return THEME_DIFF_DEL;
	case VL_DIFF_CHANGE: return THEME_DIFF_CHANGE;
	default: return THEME_NORMAL;
	}
}

static void draw_log(const struct view *v, struct panes_state *ps, struct rect r, bool focus)
{
	const struct linestore *ls = panes_log_store(v, ps);
	struct vstep *s = panes_selected_step(v, ps);
	struct rect in = rect_inner(r);
	char *note;

	if (ps->log_of != ls) {
		logview_init(&ps->log);
		ps->log_of = ls;
	}
	draw_box(r, "Step log", focus);
	note = s ? xasprintf("%s %s%s", s->id, s->name ? s->name : "",
			     ps->log.follow ? "" : " \xe2\x80\xa2 scrolled")
		 : xasprintf("run%s", ps->log.follow ? "" : " \xe2\x80\xa2 scrolled");
	border_note(r, note, 8);
	free(note);
	if (ls->n == 0) {
		draw_text(in.y, in.x, in.w, s ? "Nothing yet for this step." : "Waiting for events\xe2\x80\xa6",
			  THEME_DIM);
		return;
	}
	ps->log.show_sel = focus; /* the line Enter opens */
	logview_draw(&ps->log, ls, in, log_role);
}

/* ---- Verdicts ---- */

struct rows {
	struct rect r;
	int y;    /* next screen row */
	int skip; /* rows still to skip */
	int total;
};

/* Emits one wrapped text as rows, honouring the skip and the pane's bottom. */
static void emit(struct rows *rw, int indent, const char *s, enum theme_role role)
{
	int w = rw->r.w - indent, n;

	if (w <= 0)
		return;
	n = textview_rows(s, w);
	rw->total += n;
	if (rw->y >= rw->r.y + rw->r.h) {
		return;
	}
	if (rw->skip >= n) {
		rw->skip -= n;
		return;
	}
	rw->y += textview_draw(rw->y, rw->r.x + indent, w, rw->r.y + rw->r.h - rw->y, rw->skip,
			       s, role);
	rw->skip = 0;
}

/* Emits every verdict, newest first, as rows (only counted while the pane is full). */
static void verdict_rows(const struct view *v, struct rows *rw, const char *only)
{
	for (size_t k = v->n_verdicts; k-- > 0;) {
		const struct vverdict *vd = &v->verdicts[k];
		int si = view_find_step(v, v->rs.verdicts[k].step_id);
		char *head;

		if (only && (!v->rs.verdicts[k].step_id || strcmp(v->rs.verdicts[k].step_id, only)))
			continue;

		head = xasprintf("%s %s %s #%d  %s  %s%s%s",
				 vd->overall_pass ? "\xe2\x9c\x93" : "\xe2\x9c\x97", vd->step_id,
				 si >= 0 && v->steps[si].name ? v->steps[si].name : "", vd->attempt,
				 vd->stage, vd->action, vd->severity ? "  " : "",
				 vd->severity ? vd->severity : "");
		emit(rw, 0, head, vd->overall_pass ? THEME_GOOD : THEME_BAD);
		free(head);
		if (vd->changes) {
			/* What the verdict judged: the attempt's workspace changes (D shows them). */
			char *about = xasprintf("judged: %s", vd->changes);

			emit(rw, 2, about, THEME_DIM);
			free(about);
		}
		for (size_t i = 0; i < vd->n_criteria; i++) {
			const struct vcriterion *cr = &vd->criteria[i];
			char *line, conf[16] = "";

			if (cr->confidence >= 0)
				snprintf(conf, sizeof(conf), " (%.2f)", cr->confidence);
			line = xasprintf("%s %s%s%s%s%s",
					 cr->not_judged ? "?"
					 : cr->passed	? "\xe2\x9c\x93"
							: "\xe2\x9c\x97",
					 cr->text, cr->not_judged ? " (not judged)" : "", conf,
					 cr->evidence ? " \xe2\x80\x94 " : "",
					 cr->evidence ? cr->evidence : "");
			emit(rw, 2, line,
			     cr->not_judged ? THEME_DIM : cr->passed ? THEME_NORMAL : THEME_WARN);
			free(line);
		}
		if (vd->feedback && !vd->overall_pass)
			emit(rw, 2, vd->feedback, THEME_DIM);
	}
}

static void draw_verdicts(const struct view *v, struct panes_state *ps, struct rect r,
			  bool focus)
{
	struct rect in = rect_inner(r), none = in;
	struct rows count = {none, 0, 0, 0}, rw = {in, in.y, 0, 0};
	struct vstep *s = ps->verdicts_of_step ? panes_selected_step(v, ps) : NULL;
	const char *only = s ? s->f->id : NULL;
	char *note;
	size_t shown = 0;

	draw_box(r, "Verdicts", focus);
	for (size_t k = 0; k < v->n_verdicts; k++)
		shown += !only || (v->rs.verdicts[k].step_id && !strcmp(v->rs.verdicts[k].step_id, only));
	/* Whose verdicts these are: t switches between every step and the selected one. */
	if (s)
		note = xasprintf("step %s \xc2\xb7 %zu of %zu", s->id, shown, v->n_verdicts);
	else
		note = xasprintf("%s%zu", ps->verdicts_of_step ? "all steps \xc2\xb7 " : "",
				 v->n_verdicts);
	if (v->n_verdicts)
		border_note(r, note, 8);
	free(note);
	if (!shown) {
		draw_text(in.y, in.x, in.w,
			  only ? "No verification of this step yet (t: every step's)."
			       : "No verification yet.",
			  THEME_DIM);
		return;
	}
	/* Measure first so scrolling stops at the last row. */
	count.r.h = 0;
	count.y = count.r.y;
	verdict_rows(v, &count, only);
	if (ps->verdict_skip > count.total - in.h)
		ps->verdict_skip = count.total - in.h;
	if (ps->verdict_skip < 0)
		ps->verdict_skip = 0;
	rw.skip = ps->verdict_skip;
	verdict_rows(v, &rw, only);
}

/* ---- Cost ---- */

static void draw_cost(const struct view *v, struct panes_state *ps, struct rect r, bool focus)
{
	static const char *const roles[VC__COUNT] = {"planner", "executor", "verifier"};
	struct rect in = rect_inner(r);
	int y = in.y, bottom = in.y + in.h;
	char m[40], m2[40], ti[24], to[24], tc[24];
	bool unknown;
	double total = view_total_usd(v, &unknown), limit;
	struct vstep *s = panes_selected_step(v, ps);

	draw_box(r, "Cost", focus);
	/* Every simulated model is labelled (issue 29: "sim-planner" and its dollars read as
	 * real): the frame says so, and so does the total. */
	if (v->rs.simulated)
		border_note(r, "simulated models", 4);
	for (int i = 0; i < VC__COUNT && y < bottom; i++, y++) {
		const struct fusage *c = &v->rs.roles[i];
		int u;

		panes_money(m, sizeof(m), c->usd, c->unknown);
		tokens(ti, sizeof(ti), c->tokens_in);
		tokens(to, sizeof(to), c->tokens_out);
		tokens(tc, sizeof(tc), c->tokens_cached);
		u = draw_textf(y, in.x, in.w, THEME_NORMAL, "%-8s %3ld\xc3\x97 %s\xe2\x86\x92%s", roles[i],
			       c->calls, ti, to);
		if (in.w >= 56) {
			u += draw_textf(y, in.x + u, in.w - u, THEME_DIM, " cached %s", tc);
			if (v->model[i])
				draw_text_cut(y, in.x + u + 1, in.w - u - 12, v->model[i], THEME_DIM);
		}
		draw_text(y, in.x + in.w - textsan_width(m), in.w, m,
			  c->unknown ? THEME_WARN : THEME_NORMAL);
	}
	if (y >= bottom)
		return;
	panes_money(m, sizeof(m), total, unknown);
	if (v->rs.estimate_usd >= 0)
		snprintf(m2, sizeof(m2), "$%.4f", v->rs.estimate_usd);
	else
		snprintf(m2, sizeof(m2), "?");
	draw_textf(y++, in.x, in.w, THEME_ACCENT, "total %s  estimate %s%s", m, m2,
		   v->rs.simulated ? "  (simulated)" : "");
	if (y >= bottom)
		return;
	limit = v->rs.budget_usd > 0 ? v->rs.budget_usd : v->rs.estimate_usd;
	if (limit > 0) {
		int lw = draw_textf(y, in.x, in.w, THEME_DIM, "%s ",
				    v->rs.budget_usd > 0 ? "budget" : "of est.");
		char pct[16];
		int pw;

		snprintf(pct, sizeof(pct), " %3.0f%%", 100.0 * total / limit);
		pw = textsan_width(pct);
		meter_draw(y, in.x + lw, in.w - lw - pw, total / limit);
		draw_text(y, in.x + in.w - pw, pw, pct, total > limit ? THEME_BAD : THEME_DIM);
	} else {
		draw_text(y, in.x, in.w, "no budget set (--budget)", THEME_DIM);
	}
	y++;
	if (y >= bottom || !s)
		return;
	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_init(&sb);
		panes_money(m, sizeof(m), s->f->cost.usd, s->f->cost.unknown);
		strbuf_addf(&sb, "%s: %s", s->id, m);
		for (int a = 0; a < s->f->n_attempt_usd; a++)
			strbuf_addf(&sb, "  #%d $%.4f", a + 1, s->f->attempt_usd[a]);
		y += textview_draw(y, in.x, in.w, bottom - y, 0, sb.buf, THEME_NORMAL);
		strbuf_release(&sb);
	}
}

/* ---- all ---- */

static void draw_tabs(const struct panes_state *ps, struct rect r)
{
	int x = r.x;

	draw_fill(r, THEME_TAB);
	for (int p = 0; p < PANE__COUNT && x < r.x + r.w; p++) {
		char *t = xasprintf(" %d %s ", p + 1, layout_pane_title((enum pane_id)p));

		x += draw_text(r.y, x, r.x + r.w - x, t,
			       p == (int)ps->focus ? THEME_TAB_ACTIVE : THEME_TAB);
		x += draw_text(r.y, x, r.x + r.w - x, " ", THEME_TAB);
		free(t);
	}
}

void panes_draw(const struct view *v, struct panes_state *ps, const struct layout *l)
{
	typedef void (*draw_fn)(const struct view *, struct panes_state *, struct rect, bool);
	static const draw_fn fns[PANE__COUNT] = {
		[PANE_PLAN] = draw_plan,
		[PANE_LOG] = draw_log,
		[PANE_VERDICTS] = draw_verdicts,
		[PANE_COST] = draw_cost,
	};

	for (int p = 0; p < PANE__COUNT; p++) {
		if (l->visible[p] && l->pane[p].h >= 2 && l->pane[p].w >= 2)
			fns[p](v, ps, l->pane[p], (int)ps->focus == p);
	}
	if (l->tabbar && l->tabs.h > 0)
		draw_tabs(ps, l->tabs);
}
