/* headless — the front end without curses: progress lines or JSON events on stdout. */
#ifndef PEVTUI_HEADLESS_H
#define PEVTUI_HEADLESS_H

#include <stdbool.h>
#include <stdio.h>

struct event;

struct headless;

/* Prints to `out` (borrowed): readable lines, or one JSON event per line when `json`.
 * Subscribe headless_on_event to the bus with the returned context. */
struct headless *headless_new(FILE *out, bool json);
void headless_free(struct headless *h);
/* Bus subscriber (ctx = struct headless *). */
void headless_on_event(void *ctx, const struct event *ev);
/* Prints one event as it would during a run (also used by --headless --replay). */
void headless_print(struct headless *h, const struct event *ev);

#endif
