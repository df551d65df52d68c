/* attach — `pevtui --attach RUN`: the cockpit on a run whose engine lives in another
 * process, through the run folder's control socket (doc/protocol.md). */
#ifndef PEVTUI_ATTACH_H
#define PEVTUI_ATTACH_H

#include <stdbool.h>

struct notify;
struct settings;

/*
 * `nt` (borrowed, may be NULL): the bell and notifications for gates, as in a cockpit.
 * Opens the cockpit on the live run in run_dir: the journal through the same view model
 * as --resume (open gates kept), then the live events; commands and gate answers go to
 * the engine. q leaves the run going. A run with no live engine is said so, naming
 * pevtui --resume (or --replay for a finished run). Returns an exit status.
 */
int attach_run(const struct settings *s, const char *run_dir, struct notify *nt);

/* `pevtui --attach-stdio RUN`: relays run_dir's control socket to stdin and stdout (the
 * far end of --attach HOST:RUN). A run with no engine: one ctl.error line, exit 1. */
int attach_stdio(const char *run_dir);

/* RUN of --attach names another machine (HOST:RUN, [v6addr]:RUN): true + *host, *run
 * (caller frees). A path or a bare id: false. */
bool attach_is_remote(const char *ref, char **host, char **run);

/* `pevtui --attach HOST:RUN`: `ssh HOST pevtui --attach-stdio RUN` ($PEVTUI_SSH is the ssh
 * command, default ssh) and the cockpit on its standard output; the screen is drawn here,
 * the engine stays there. Returns an exit status. */
int attach_remote(const struct settings *s, const char *host, const char *run,
		  struct notify *nt);

/* Why nobody serves run_dir's socket, as one sentence naming what to do (caller frees). */
char *attach_why_not(const char *run_dir, int connect_errno);

#endif
