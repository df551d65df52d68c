/* gate_list — a modal list of the waiting gates; Enter makes the selected one the dialog. */
#include "config.h"

#include "gate_list.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>

#include "draw.h"
#include "gate.h"
#include "modal.h"
#include "strbuf.h"
#include "textsan.h"
#include "view.h"
#include "xalloc.h"

/* Step ids are shown up to this many columns in their column. */
#define STEP_COLS 16

static bool answered(const struct gate_waiting *w, unsigned long id)
{
	for (size_t i = 0; i < w->n_answered; i++)
		if (w->answered[i] == id)
			return true;
	return false;
}

size_t gate_list_count(const struct gate_waiting *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->v->n_gates; i++)
		n += !answered(w, w->v->gates[i].id);
	return n;
}

struct vgate *gate_list_nth(const struct gate_waiting *w, size_t i)
{
	for (size_t k = 0; k < w->v->n_gates; k++) {
		if (answered(w, w->v->gates[k].id))
			continue;
		if (i-- == 0)
			return &w->v->gates[k];
	}
	return NULL;
}

long gate_list_index(const struct gate_waiting *w, unsigned long id)
{
	long n = 0;

	for (size_t k = 0; k < w->v->n_gates; k++) {
		if (answered(w, w->v->gates[k].id))
			continue;
		if (w->v->gates[k].id == id)
			return n;
		n++;
	}
	return -1;
}

char *gate_list_line(const struct vgate *g)
{
	struct strbuf sb = STRBUF_INIT;
	char *step = g->step_id ? textsan_clean(g->step_id, strlen(g->step_id), 0) : xstrdup("-");
	char *cut = textsan_truncate(step, STEP_COLS);
	int pad = STEP_COLS - textsan_width(cut);

	strbuf_init(&sb);
	strbuf_addf(&sb, "%-6s  %s%*s  ", gate_kind_name(g->kind), cut, pad > 0 ? pad : 0, "");
	/* The view's strings are safe text already. */
	if (g->kind == GATE_SHELL && g->command)
		strbuf_addf(&sb, "$ %s", g->command);
	else
		strbuf_adds(&sb, g->title ? g->title : "");
	free(cut);
	free(step);
	return strbuf_detach(&sb);
}

enum gate_list_action gate_list_key(size_t *sel, size_t n, bool is_key, unsigned int ch)
{
	if (is_key) {
		if (ch == KEY_DOWN && *sel + 1 < n)
			(*sel)++;
		else if (ch == KEY_UP && *sel > 0)
			(*sel)--;
		else if (ch == KEY_HOME)
			*sel = 0;
		else if (ch == KEY_END && n > 0)
			*sel = n - 1;
		else if (ch == KEY_ENTER)
			return GATE_LIST_PICK;
		return GATE_LIST_CONTINUE;
	}
	switch (ch) {
	case 'j':
		if (*sel + 1 < n)
			(*sel)++;
		return GATE_LIST_CONTINUE;
	case 'k':
		if (*sel > 0)
			(*sel)--;
		return GATE_LIST_CONTINUE;
	case '\n':
	case '\r': return GATE_LIST_PICK;
	case 27:
	case 'q':
	case 'w': return GATE_LIST_CLOSE;
	default: break;
	}
	if (ch >= '1' && ch <= '9' && (size_t)(ch - '1') < n) {
		*sel = ch - '1';
		return GATE_LIST_PICK;
	}
	return GATE_LIST_CONTINUE;
}

void gate_list_draw(const struct gate_waiting *w, size_t *sel, unsigned long shown, int rows,
		    int cols)
{
	size_t n = gate_list_count(w), top = 0;
	int want_w = cols - 8 > 100 ? 100 : cols - 8;
	struct rect r, in;
	char *title;

	if (want_w < 30)
		want_w = cols;
	if (n > 0 && *sel >= n)
		*sel = n - 1;
	title = xasprintf("Waiting gates (%zu)", n);
	r = modal_rect(rows - 1, cols, (int)n + 4, want_w);
	in = modal_draw(r, title,
			"Enter show it  j/k \xe2\x86\x93\xe2\x86\x91 move  1-9 pick  Esc close");
	free(title);
	in.x += 1;
	in.w -= 2;
	in.y += 1;
	in.h -= 1;
	if (in.h <= 0 || in.w <= 8)
		return;
	if (n == 0) {
		draw_text(in.y, in.x, in.w, "No gate is waiting.", THEME_DIALOG);
		return;
	}
	/* The selected row stays in sight on a short screen. */
	if (*sel >= (size_t)in.h)
		top = *sel - (size_t)in.h + 1;
	for (size_t i = top; i < n && (int)(i - top) < in.h; i++) {
		const struct vgate *g = gate_list_nth(w, i);
		char *line = gate_list_line(g);
		char *row = xasprintf("%s%zu  %s%s", i == *sel ? "\xe2\x96\xb8 " : "  ", i + 1,
				      line, g->id == shown ? "  (shown)" : "");
		int y = in.y + (int)(i - top);

		draw_text_cut(y, in.x, in.w, row, i == *sel ? THEME_SELECTED : THEME_DIALOG);
		free(row);
		free(line);
	}
}
