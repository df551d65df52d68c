/* attach — `pevtui --attach RUN`: the cockpit on a run whose engine lives in another
 * process, through the run folder's control socket (doc/protocol.md). */
#ifndef PEVTUI_ATTACH_H
#define PEVTUI_ATTACH_H

struct settings;

/*
 * Opens the cockpit on the live run in run_dir: the journal through the same view model
 * as --resume (open gates kept), then the live events; commands and gate answers go to
 * the engine. q leaves the run going. A run with no live engine is said so, naming
 * pevtui --resume (or --replay for a finished run). Returns an exit status.
 */
int attach_run(const struct settings *s, const char *run_dir);

/* Why nobody serves run_dir's socket, as one sentence naming what to do (caller frees). */
char *attach_why_not(const char *run_dir, int connect_errno);

#endif
