/* gate_dialog — the modal for the gate at the head of the queue, drawn over live panes. */
#ifndef PEVTUI_GATE_DIALOG_H
#define PEVTUI_GATE_DIALOG_H

#include <stdbool.h>
#include <stddef.h>

struct vgate;

/* The keys this kind of gate accepts, as "a approve  e edit …". */
const char *gate_dialog_hint(const struct vgate *g);
/* Draws gate `g` (`pending` gates open in all) centred on a rows × cols screen, its body
 * scrolled by *scroll rows (clamped here). `readonly` (a replay) shows no answer keys. */
void gate_dialog_draw(const struct vgate *g, size_t pending, int rows, int cols, int *scroll,
		      bool readonly);

#endif
