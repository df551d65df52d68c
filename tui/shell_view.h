/* shell_view — how the cockpit shows shell commands: the shell gate's lines about where a
 * command runs, its time limit and the allow list, and a run_shell result as one line
 * (the command as it ran, its end, its time) followed by its output as lines. No curses. */
#ifndef PEVTUI_SHELL_VIEW_H
#define PEVTUI_SHELL_VIEW_H

#include <stdbool.h>

struct cJSON;
struct linestore;

/* Output lines a step log shows under a shell command; the journal has them all. */
#define SHELL_VIEW_LINES 20

/* Adds a run_shell tool.result (one that names its `command`) to a log, tagged with the
 * view's kinds, every string sanitized. false, adding nothing, for any other result. */
bool shell_view_result(struct linestore *log, const struct cJSON *o);
/* Adds a shell gate's "Runs in", "Time limit" and "Allow list" lines (gate.open fields
 * cwd, timeout_s, allow); nothing for the fields an older journal lacks. */
void shell_view_gate(struct linestore *body, const struct cJSON *o);

#endif
