/* pager — hands the terminal to $PAGER (less by default) for a text, then takes it back. */
#ifndef PEVTUI_PAGER_H
#define PEVTUI_PAGER_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Shows `text` (`len` bytes; untrusted: sanitized first, newlines and tabs kept) in $PAGER
 * from a temporary file whose name ends like `name` (so a pager may colour it by its
 * extension), removed afterwards. Curses is left (def_prog_mode, endwin) and restored;
 * the caller redraws. false + *err (a sentence; caller frees). UI thread only.
 */
bool pager_show(const char *name, const char *text, size_t len, char **err);

#endif
