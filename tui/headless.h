/* headless — the front end without curses: progress lines or JSON events on stdout. */
#ifndef PEVTUI_HEADLESS_H
#define PEVTUI_HEADLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cJSON;
struct event;

struct headless;

/* Past these the queue drops events (counted, and said once on `out`): 4 MiB of lines
 * or the lines of 10000 events waiting for a reader of `out` that does not keep up. */
#define HEADLESS_QUEUE_BYTES ((size_t)4 << 20)
#define HEADLESS_QUEUE_EVENTS 10000

/*
 * Prints to `out` (borrowed): readable lines, or one JSON event per line when `json`.
 * A printer thread of its own does the printing, so subscribe headless_on_event to the
 * bus with the returned context: the engine never waits for `out`.
 */
struct headless *headless_new(FILE *out, bool json);
/* Prints what is still queued (waiting for `out` as long as it takes), stops the printer
 * thread and frees. NULL ok. */
void headless_free(struct headless *h);
/* Bus tree subscriber (bus_subscribe_tree, ctx = struct headless *): folds the event from
 * its object `line`, queues the lines it prints for the printer thread and returns; never
 * blocks on `out`. */
void headless_on_tree(void *ctx, const struct event *ev, const struct cJSON *line);
/* The same for an event alone (a plain bus subscriber): its text is parsed. */
void headless_on_event(void *ctx, const struct event *ev);
/* --resume: folds RUNDIR's journal without printing it, so step names and the spend so far
 * count the whole run. Before subscribing. false + *err when it cannot be read. */
bool headless_fold_journal(struct headless *h, const char *run_dir, char **err);
/* Prints one event now, in the calling thread, as it would during a run (used by
 * --headless --replay). */
void headless_print(struct headless *h, const struct event *ev);

#endif
