/* gate_dialog — the modal for the gate at the head of the queue, drawn over live panes. */
#ifndef PEVTUI_GATE_DIALOG_H
#define PEVTUI_GATE_DIALOG_H

#include <stdbool.h>
#include <stddef.h>

struct vgate;

/* The keys this kind of gate accepts, as "a approve  e edit …". */
const char *gate_dialog_hint(const struct vgate *g);
/* The same keys as key / word pairs for the status line, NULL-terminated (static). */
const char *const *gate_dialog_keys(const struct vgate *g);
/* Draws gate `g` (number pos + 1 of the `pending` gates open) centred on a rows × cols
 * screen, its body scrolled by *scroll rows (clamped here). `readonly` (a replay) shows
 * no answer keys. Returns the rows of the body that do not fit (0: nothing to scroll). */
int gate_dialog_draw(const struct vgate *g, size_t pos, size_t pending, int rows, int cols,
		     int *scroll, bool readonly);

#endif
