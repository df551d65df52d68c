/* help — a modal listing every key with what it does, then a legend of what the panes
 * draw (Plan glyphs and columns, Cost and Verdicts notation); long descriptions wrap and
 * the whole scrolls on small screens. */
#include "config.h"

#include "help.h"

#include <stdbool.h>
#include <stdlib.h>

#include "draw.h"
#include "modal.h"
#include "panes.h"
#include "textsan.h"
#include "textview.h"
#include "view.h"
#include "xalloc.h"

/* One row of the overlay: a key (or glyph) and its text, or a section heading. */
struct entry {
	const char *key, *text;
	bool heading;
};

/* The legend. Glyphs of step states come from panes_status_glyph (below), so the legend
 * cannot drift from what the Plan pane draws. */
static const struct {
	int status; /* a VS_* state, or -1: the key is given here */
	const char *key, *text;
} legend[] = {
    {-1, NULL, "Plan pane: one row per step"},
    {VS_PENDING, NULL, "pending: waits for its dependencies"},
    {VS_READY, NULL, "ready: its dependencies passed; starts when a worker is free"},
    {VS_WAITING, NULL, "waiting at its own gate (its clock stops)"},
    {VS_RUNNING, NULL, "running (the dots turn)"},
    {VS_VERIFYING, NULL, "verifying: checks, then the verifier model"},
    {VS_RETRYING, NULL, "retrying with the verifier's critique"},
    {VS_STALE, NULL, "stale: an input changed; runs again once its inputs pass"},
    {VS_PASSED, NULL, "passed"},
    {VS_FAIL_ACCEPTED, NULL, "fail-accepted: its last result is kept, marked"},
    {VS_SKIPPED, NULL, "skipped"},
    {-1, "\xe2\x94\x94", "depends on a step above (indented by the length of its chain)"},
    {-1, "h \u00d72 1:05",
     "right columns: complexity (l low, m medium, h high, - none), attempts so far, time "
     "it ran (its clock stops at a gate)"},
    {-1, "(edited)", "the operator changed the step"},
    {-1, "rev 2", "on the frame: the plan revision; \"proposed\" until the plan is approved"},
    {-1, "\xe2\x80\xa6", "the row was cut to fit: z zooms the pane"},
    {-1, NULL, "Cost pane: one row per role"},
    {-1, "3\xc3\x97", "model calls"},
    {-1, "1.2k\u2192450", "input tokens \xe2\x86\x92 output tokens (k thousands, M millions)"},
    {-1, "cached 800", "cached input tokens, then the model (wide panes)"},
    {-1, "simulated models", "on the frame and after the total: the models and their "
     "prices are simulated (--demo, the sim provider)"},
    {-1, "$0.0123", "spent (simulated runs: simulated prices)"},
    {-1, "$0.01+?", "some calls have no known price; ? alone: none has"},
    {-1, "total", "spent by the run, and the plan's estimate"},
    {-1, "budget", "bar and share of --budget spent (\"of est.\": of the estimate)"},
    {-1, "s1: #1 #2", "the selected step's cost, then each attempt's"},
    {-1, NULL, "Verdicts pane: newest first"},
    {-1, "\xe2\x9c\x93 \xe2\x9c\x97",
     "the attempt passed / failed: step, #attempt, stage, action, severity"},
    {-1, "  \xe2\x9c\x93 \xe2\x9c\x97 ?", "a criterion passed / failed / was not judged"},
    {-1, "(0.90)", "the verifier's confidence, then its evidence after \xe2\x80\x94"},
    {-1, NULL, "Step log"},
    {-1, "/ n N", "search; the status line says \"match 3/17\" and only the match is marked"},
};

#define N_LEGEND (sizeof(legend) / sizeof(legend[0]))

/* The keys from `pairs`, then the legend, as one list; caller frees. */
static struct entry *entries(const char *const *pairs, size_t *n)
{
	size_t k = 0, np = 0;
	struct entry *e;

	while (pairs[np] && pairs[np + 1])
		np += 2;
	e = xcalloc(np / 2 + N_LEGEND + 1, sizeof(*e));
	for (size_t i = 0; i < np; i += 2)
		e[k++] = (struct entry){pairs[i], pairs[i + 1], false};
	for (size_t i = 0; i < N_LEGEND; i++) {
		const char *key =
		    legend[i].status >= 0 ? panes_status_glyph(legend[i].status, 0) : legend[i].key;

		e[k++] = (struct entry){key ? key : "", legend[i].text, !key};
	}
	*n = k;
	return e;
}

/* Rows entry i takes with keys kw columns wide in a w-column dialog: a heading has a blank
 * row above it and spans the width. */
static int entry_rows(const struct entry *e, int kw, int w)
{
	if (e->heading)
		return 1 + textview_rows(e->text, w);
	return textview_rows(e->text, w - kw - 2 > 8 ? w - kw - 2 : 8);
}

/* The key column of each block (the keys, then each legend section) fits its own keys. */
static void key_widths(const struct entry *e, size_t n, int *kw)
{
	int w = 0;
	size_t start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i == n || e[i].heading) {
			for (size_t j = start; j < i; j++)
				kw[j] = w;
			if (i < n)
				kw[i] = 0;
			w = 0;
			start = i + 1;
			continue;
		}
		w = textsan_width(e[i].key) > w ? textsan_width(e[i].key) : w;
	}
}

void help_draw(const char *const *pairs, int rows, int cols, int *scroll)
{
	int total = 0, want_w = 84, skip, y, *kw;
	size_t n;
	struct entry *e = entries(pairs, &n);
	struct rect r, in;

	kw = xcalloc(n + 1, sizeof(*kw));
	key_widths(e, n, kw);
	if (want_w > cols)
		want_w = cols;
	for (size_t i = 0; i < n; i++)
		total += entry_rows(&e[i], kw[i], want_w - 4);
	r = modal_rect(rows - 1, cols, total + 4, want_w);
	in =
	    modal_draw(r, "Keys and legend",
		       "j/k \xe2\x86\x93\xe2\x86\x91 scroll  any other key closes");
	in.x += 1;
	in.w -= 2;
	in.y += 1;
	in.h -= 1;
	if (in.h <= 0 || in.w <= 12)
		goto out;
	total = 0;
	for (size_t i = 0; i < n; i++)
		total += entry_rows(&e[i], kw[i], in.w);
	if (*scroll > total - in.h)
		*scroll = total - in.h;
	if (*scroll < 0)
		*scroll = 0;
	skip = *scroll;
	y = in.y;
	for (size_t i = 0; i < n && y < in.y + in.h; i++) {
		int h = entry_rows(&e[i], kw[i], in.w), dw = in.w - kw[i] - 2;

		if (skip >= h) {
			skip -= h;
			continue;
		}
		if (e[i].heading) {
			/* the blank row above a heading */
			if (skip == 0)
				y++;
			else
				skip--;
			if (y < in.y + in.h)
				y += textview_draw(y, in.x, in.w, in.y + in.h - y, skip, e[i].text,
				                   THEME_ACCENT);
		} else {
			if (dw < 8)
				dw = 8;
			if (skip == 0)
				draw_text(y, in.x, kw[i], e[i].key, THEME_ACCENT);
			y += textview_draw(y, in.x + kw[i] + 2, dw, in.y + in.h - y, skip,
			                   e[i].text, THEME_DIALOG);
		}
		skip = 0;
	}
out:
	free(kw);
	free(e);
}
