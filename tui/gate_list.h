/* gate_list — the open gates to pick from, one line each (kind, step, what it asks): the
 * operator chooses which gate the dialog shows instead of the oldest one first. */
#ifndef PEVTUI_GATE_LIST_H
#define PEVTUI_GATE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct view;
struct vgate;

/* The gates waiting for this operator: the view's open gates but those whose ids are in
 * answered[0..n_answered) (answered here, their decision not yet in). Borrowed. */
struct gate_waiting {
	const struct view *v;
	const unsigned long *answered;
	size_t n_answered;
};

size_t gate_list_count(const struct gate_waiting *w);
/* The i-th waiting gate in the order they opened, or NULL. */
struct vgate *gate_list_nth(const struct gate_waiting *w, size_t i);
/* The position of gate `id` among them, or -1. */
long gate_list_index(const struct gate_waiting *w, unsigned long id);

/* One line of safe text about g: kind, step, and the command or the title. Caller frees. */
char *gate_list_line(const struct vgate *g);

enum gate_list_action {
	GATE_LIST_CONTINUE, /* the selection may have moved */
	GATE_LIST_PICK,     /* show the selected gate */
	GATE_LIST_CLOSE,    /* back to what was shown */
};
/* A key in the list of n rows: j/k and the arrows move *sel, a digit 1-9 selects that row
 * and picks it, Enter picks, Esc, q and w close. */
enum gate_list_action gate_list_key(size_t *sel, size_t n, bool is_key, unsigned int ch);

/* Draws the list centred on a rows × cols screen: row *sel marked (clamped here), the gate
 * the dialog shows now (`shown`, 0 none) labelled. */
void gate_list_draw(const struct gate_waiting *w, size_t *sel, unsigned long shown, int rows,
		    int cols);

#endif
