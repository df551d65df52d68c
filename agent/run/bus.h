/* bus — publishes each event once, in one total order, to every subscriber. */
#ifndef PEVTUI_BUS_H
#define PEVTUI_BUS_H

#include <stdbool.h>

#include "events.h"

struct cJSON;
struct bus;

/*
 * Called in the publishing thread with the bus lock held, in publish order. Must be quick
 * and must not publish (copy the event with event_dup and wake your own thread instead).
 * `ev` stays owned by the bus.
 */
typedef void (*bus_fn)(void *ctx, const struct event *ev);

/*
 * For a subscriber that would parse each event's text: called as bus_fn is, for journaled
 * events only, with `line` the object cJSON_Parse would make of ev->json ("seq", "ts" and
 * "type" first, then the fields, numbers as the text has them) built from the fields the
 * event was printed from, not parsed. `line` is the bus's and is freed after the call:
 * read it, do not keep it or change it.
 */
typedef void (*bus_tree_fn)(void *ctx, const struct event *ev, const struct cJSON *line);

struct bus *bus_new(void);
void bus_free(struct bus *b);
/* Journaled events only (everything but streaming deltas). */
void bus_subscribe(struct bus *b, bus_fn fn, void *ctx);
/* Every event, ephemeral ones (llm.delta) included: for live screens. */
void bus_subscribe_all(struct bus *b, bus_fn fn, void *ctx);
/* Journaled events with their objects (bus_tree_fn). */
void bus_subscribe_tree(struct bus *b, bus_tree_fn fn, void *ctx);
/* Removes a subscriber (fn and ctx as subscribed); once it returns, fn is not called
 * again with ctx. */
void bus_unsubscribe(struct bus *b, bus_fn fn, void *ctx);
void bus_unsubscribe_tree(struct bus *b, bus_tree_fn fn, void *ctx);
/* True if some subscriber takes ephemeral events: publishers may skip building them. */
bool bus_wants_ephemeral(struct bus *b);
/* Next seq to hand out (resume continues a journal's numbering). */
void bus_set_next_seq(struct bus *b, unsigned long seq);
/* Publishes; `fields` (a cJSON object) is taken. Returns the event's seq (0 if ephemeral). */
unsigned long bus_publish(struct bus *b, enum event_type t, struct cJSON *fields);
/* Hands an event published elsewhere (another process, over the control socket) to every
 * subscriber as it is, seq and time included; `ev` stays the caller's. */
void bus_deliver(struct bus *b, const struct event *ev);
/* Convenience: an EV_NOTICE with "level" (info|warn|error) and "message". */
void bus_notice(struct bus *b, const char *level, const char *step_id, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
