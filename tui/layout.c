/* layout — pane rectangles for a screen size: four panes, one pane with tabs, or zoom. */
#include "config.h"

#include "layout.h"

#include <string.h>

static const char *const titles[PANE__COUNT] = {
	[PANE_PLAN] = "Plan",
	[PANE_LOG] = "Step log",
	[PANE_VERDICTS] = "Verdicts",
	[PANE_COST] = "Cost",
};

const char *layout_pane_title(enum pane_id p)
{
	return (p >= 0 && p < PANE__COUNT) ? titles[p] : "";
}

static struct rect mkrect(int y, int x, int h, int w)
{
	struct rect r = {y, x, h < 0 ? 0 : h, w < 0 ? 0 : w};

	return r;
}

/* The cost pane needs three role rows, a total, a bar and the step line inside a border. */
#define COST_ROWS 9

void layout_compute(struct layout *l, int rows, int cols, enum pane_id focus, bool zoom)
{
	int body, left, top_l, top_r;

	memset(l, 0, sizeof(*l));
	if (rows < 0)
		rows = 0;
	if (cols < 0)
		cols = 0;
	if (focus < 0 || focus >= PANE__COUNT)
		focus = PANE_PLAN;
	if (rows >= 1)
		l->status = mkrect(rows - 1, 0, 1, cols);
	body = rows - 1;
	if (body <= 0)
		return;

	if (zoom && rows >= LAYOUT_MIN_ROWS && cols >= LAYOUT_MIN_COLS) {
		l->pane[focus] = mkrect(0, 0, body, cols);
		l->visible[focus] = true;
		return;
	}
	if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) {
		/* One pane at a time; the tab bar sits just above the status line. */
		l->tabbar = true;
		l->tabs = mkrect(body - 1, 0, 1, cols);
		if (body - 1 > 0) {
			l->pane[focus] = mkrect(0, 0, body - 1, cols);
			l->visible[focus] = true;
		}
		return;
	}

	left = cols * 2 / 5;
	if (left < 34)
		left = 34;
	top_l = body - COST_ROWS;
	top_r = body * 3 / 5;
	l->pane[PANE_PLAN] = mkrect(0, 0, top_l, left);
	l->pane[PANE_COST] = mkrect(top_l, 0, body - top_l, left);
	l->pane[PANE_LOG] = mkrect(0, left, top_r, cols - left);
	l->pane[PANE_VERDICTS] = mkrect(top_r, left, body - top_r, cols - left);
	for (int i = 0; i < PANE__COUNT; i++)
		l->visible[i] = true;
}
