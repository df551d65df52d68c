/* gate_dialog — title with the queue position, wrapped body lines, keys on the frame. */
#include "config.h"

#include "gate_dialog.h"

#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "meter.h"
#include "strbuf.h"
#include "modal.h"
#include "textsan.h"
#include "textview.h"
#include "view.h"
#include "xalloc.h"

const char *gate_dialog_hint(const struct vgate *g)
{
	switch (g->kind) {
	case GATE_PLAN: return "a approve  e edit step  E edit plan  x reject  Esc hide";
	case GATE_REPLAN:
		return "a approve  E edit plan  s keep old plan, fail-accept  c old/new plan  x "
		       "reject  Esc hide";
	case GATE_HIGH:
	case GATE_STEP: return "a approve  e edit (then a)  E edit JSON  s skip  x reject  Esc hide";
	case GATE_SHELL:
		return "a approve  A allow for run  e edit command  s refuse  x reject  Esc hide";
	case GATE_BUDGET: return "a +50%  d double  e set the cap  x stop the run  Esc hide";
	case GATE_REWIND: return "a restore  s keep theirs  d show the diff  x reject  Esc hide";
	case GATE_MCP:
		return "a approve  A allow tool for run  s refuse  x reject  Esc hide";
	case GATE_ELICIT: return "a answer (a form)  s decline  x cancel the question  Esc hide";
	case GATE__COUNT: break;
	}
	return "a approve  x reject  Esc hide";
}

const char *const *gate_dialog_keys(const struct vgate *g)
{
	/* What gate_dialog_hint says, short: keep the two in step. `s` only where the gate
	 * can be skipped (gate_kind_can_skip). */
	static const char *const plan[] = {"a", "approve", "e", "edit step", "E", "edit plan",
					   "x", "reject", "?", "help", NULL};
	static const char *const replan[] = {"a", "approve", "E", "edit plan", "s",
					     "keep old plan", "c", "old/new plan", "x", "reject",
					     "?", "help", NULL};
	static const char *const step[] = {"a", "approve", "e", "edit", "E", "edit JSON", "s",
					   "skip", "x", "reject", "?", "help", NULL};
	static const char *const shell[] = {"a", "approve", "A", "allow for this run", "e",
					    "edit command", "s", "refuse", "x", "reject", "?",
					    "help", NULL};
	static const char *const budget[] = {"a", "+50%", "d", "double", "e", "set the cap",
					     "x", "stop the run", "?", "help", NULL};
	static const char *const rewind[] = {"a", "restore", "s", "keep theirs", "d",
					     "show the diff", "x", "reject", "?", "help", NULL};
	static const char *const mcp[] = {"a", "approve", "A", "allow tool for this run", "s",
					  "refuse", "x", "reject", "?", "help", NULL};
	static const char *const elicit[] = {"a", "answer", "s", "decline", "x", "cancel",
					     "?", "help", NULL};
	static const char *const other[] = {"a", "approve", "x", "reject", "?", "help", NULL};

	switch (g->kind) {
	case GATE_PLAN: return plan;
	case GATE_REPLAN: return replan;
	case GATE_HIGH:
	case GATE_STEP: return step;
	case GATE_SHELL: return shell;
	case GATE_BUDGET: return budget;
	case GATE_REWIND: return rewind;
	case GATE_MCP: return mcp;
	case GATE_ELICIT: return elicit;
	case GATE__COUNT: break;
	}
	return other;
}

/* The footer for a dialog `room` columns wide: the whole hint when it fits, else the
 * answering keys alone with "? help  Esc hide", else those keys and "? Esc" (issue 29: at
 * 60 columns the footer cut "Esc hide", and at 40 the keys). malloc'd. */
static char *hint_fit(const struct vgate *g, int room, bool readonly)
{
	const char *full = readonly ? "replay: read-only  Esc hide" : gate_dialog_hint(g);
	const char *const *k = gate_dialog_keys(g);
	struct strbuf sb = STRBUF_INIT;

	if (readonly || textsan_width(full) <= room)
		return xstrdup(full);
	strbuf_init(&sb);
	for (int i = 0; k[i] && k[i + 1]; i += 2)
		if (strcmp(k[i], "?") != 0)
			strbuf_addf(&sb, "%s ", k[i]);
	strbuf_adds(&sb, " ? help  Esc hide");
	if (textsan_width(sb.buf) > room) {
		sb.len -= strlen(" ? help  Esc hide");
		sb.buf[sb.len] = '\0';
		strbuf_adds(&sb, "? Esc");
	}
	return strbuf_detach(&sb);
}

static enum theme_role body_role(int kind)
{
	switch (kind) {
	case VL_HEADER: return THEME_ACCENT;
	case VL_PASS: return THEME_DIFF_ADD;
	case VL_DIFF_ADD: return THEME_DIFF_ADD;
	case VL_DIFF_DEL: return THEME_DIFF_DEL;
	case VL_DIFF_CHANGE: return THEME_DIFF_CHANGE;
	case VL_ERROR: return THEME_DIFF_DEL;
	case VL_WARN: return THEME_DIFF_CHANGE;
	case VL_CRITIQUE: return THEME_DIFF_CHANGE;
	case VL_NOTICE: return THEME_DIALOG_BORDER;
	default: return THEME_DIALOG;
	}
}

int gate_dialog_draw(const struct vgate *g, size_t pos, size_t pending, int rows, int cols,
		     int *scroll, bool readonly)
{
	int want_w = cols - 8 > 100 ? 100 : cols - 8, total = 0, skip, y, max_h;
	/* Budget gates end with a bar of spend against the budget, under the text. */
	bool bar = g->kind == GATE_BUDGET && g->budget_usd > 0 && g->spent_usd >= 0;
	int extra = bar ? 2 : 0;
	struct rect r, in;
	char *title, *hint;

	if (want_w < 20)
		want_w = cols;
	for (size_t i = 0; i < g->body.n; i++)
		total += textview_rows(g->body.v[i].text, want_w - 4);
	/* Leave the pane frames and titles visible around the dialog: the run goes on. */
	max_h = rows >= 16 ? rows - 6 : rows - 1;
	r = modal_rect(rows - 1, cols, total + extra + 4 < max_h ? total + extra + 4 : max_h,
		       want_w);
	/* With more than one waiting, w lists them to pick another. */
	title = pending > 1
			? xasprintf("Gate: %s (%zu of %zu, w list)", g->title, pos + 1, pending)
			: xasprintf("Gate: %s", g->title);
	hint = hint_fit(g, r.w - 4, readonly);
	in = modal_draw(r, title, hint);
	free(hint);
	free(title);
	in.x += 1;
	in.w -= 2;
	in.y += 1;
	in.h -= 1;
	if (bar && in.h > extra + 1 && in.w > 12) {
		in.h -= extra;
		meter_draw(in.y + in.h + 1, in.x, in.w, view_gate_committed(g) / g->budget_usd);
	}
	if (in.h <= 0 || in.w <= 0)
		return 0;
	if (*scroll > total - in.h)
		*scroll = total - in.h;
	if (*scroll < 0)
		*scroll = 0;
	skip = *scroll;
	y = in.y;
	for (size_t i = 0; i < g->body.n && y < in.y + in.h; i++) {
		int n = textview_rows(g->body.v[i].text, in.w);

		if (skip >= n) {
			skip -= n;
			continue;
		}
		y += textview_draw(y, in.x, in.w, in.y + in.h - y, skip, g->body.v[i].text,
				   body_role(g->body.v[i].kind));
		skip = 0;
	}
	if (total > in.h) {
		/* How far down the body is, and that the arrows scroll it. */
		char *where = xasprintf(" \xe2\x86\x91\xe2\x86\x93 %d/%d ",
					*scroll + in.h < total ? *scroll + in.h : total, total);
		int w = textsan_width(where);

		if (w + 4 < r.w)
			draw_text(r.y, r.x + r.w - 2 - w, w, where, THEME_DIALOG_BORDER);
		free(where);
	}
	return total > in.h ? total - in.h : 0;
}
