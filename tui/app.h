/* app — the curses cockpit: poll loop, panes, gates, keys. Only this thread calls curses. */
#ifndef PEVTUI_APP_H
#define PEVTUI_APP_H

#include <stdbool.h>
#include <stdio.h>

struct bus;
struct gatekeeper;
struct notify;
struct pev;
struct settings;

struct app;

/*
 * Starts curses and subscribes to `bus` (events are copied and queued; the engine thread
 * wakes the UI through a self-pipe). `s`, `bus` and `gates` are borrowed. NULL + *err when
 * the terminal cannot be used.
 */
struct app *app_new(const struct settings *s, struct bus *bus, struct gatekeeper *gates,
		    char **err);
/* Asks the operator for a task on screen. NULL when cancelled. Caller frees. */
char *app_prompt_task(struct app *a);
/* The run folder (copied): the drill-down reads the requests, the attempts' copies of
 * artifacts and the tools' full outputs kept there. */
void app_set_run_dir(struct app *a, const char *run_dir);
/* --resume: shows RUNDIR's journal as the run stood (plan, states, verdicts, spend,
 * budget, elapsed time) before the engine starts; the engine's events continue it (those
 * the journal already held are not applied twice). */
void app_preload(struct app *a, const char *run_dir);
/* The signal for an operator who looked away (bell, desktop notification, notify_cmd) on
 * the live events that call for one; `n` is borrowed and outlives the app. */
void app_set_notify(struct app *a, struct notify *n);
/* Runs the loop with the (started) engine until the operator quits. The engine may have
 * finished before; the screen then shows the final state until `q`. */
void app_run(struct app *a, struct pev *e);
/* --attach: the engine is another process's; q leaves the run going, without asking. */
void app_set_attached(struct app *a);
/* --attach: the journal of a live run on screen, its open gates included. Returns the
 * last seq applied: the live stream continues after it. */
unsigned long app_preload_live(struct app *a, const char *run_dir);
/* After app_run: the operator detached (D) or the terminal went away (SIGHUP). */
bool app_detached(const struct app *a);
/* Ends curses and frees. NULL ok. */
void app_free(struct app *a);
/* The key table `?` shows, as Markdown table rows ("| `q` | quit … |"): the keys of a
 * live run, then those only a replay has. `pevtui --keys` prints it; the README's keys
 * table is this output (tests/integration/readme_keys.sh). No curses needed. */
void app_print_keys(FILE *out);

/* --replay: browses the run in RUNDIR without calling any model. Returns an exit status. */
int app_replay(const struct settings *s, const char *run_dir);

#endif
