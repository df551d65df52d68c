/* bus — total-order publication of events to subscribers. */
#include "config.h"

#include "bus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "xalloc.h"

struct subscriber {
	bus_fn fn;
	void *ctx;
	bool ephemeral; /* also takes events that are never journaled */
};

struct bus {
	pthread_mutex_t lock;
	struct subscriber *subs;
	size_t n_subs, cap_subs;
	unsigned long next_seq;
	atomic_int n_ephemeral; /* subscribers that take ephemeral events */
};

struct bus *bus_new(void)
{
	struct bus *b = xcalloc(1, sizeof(*b));

	if (pthread_mutex_init(&b->lock, NULL))
		fatal("pthread_mutex_init failed");
	b->next_seq = 1;
	atomic_init(&b->n_ephemeral, 0);
	return b;
}

void bus_free(struct bus *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b->subs);
	free(b);
}

static void subscribe(struct bus *b, bus_fn fn, void *ctx, bool ephemeral)
{
	pthread_mutex_lock(&b->lock);
	b->subs = xgrow(b->subs, &b->cap_subs, b->n_subs + 1, sizeof(*b->subs));
	b->subs[b->n_subs++] = (struct subscriber){fn, ctx, ephemeral};
	if (ephemeral)
		atomic_fetch_add(&b->n_ephemeral, 1);
	pthread_mutex_unlock(&b->lock);
}

void bus_subscribe(struct bus *b, bus_fn fn, void *ctx)
{
	subscribe(b, fn, ctx, false);
}

void bus_subscribe_all(struct bus *b, bus_fn fn, void *ctx)
{
	subscribe(b, fn, ctx, true);
}

bool bus_wants_ephemeral(struct bus *b)
{
	return atomic_load(&b->n_ephemeral) > 0;
}

void bus_set_next_seq(struct bus *b, unsigned long seq)
{
	pthread_mutex_lock(&b->lock);
	b->next_seq = seq;
	pthread_mutex_unlock(&b->lock);
}

/* Gives a built event its seq and the time now: event_build writes "seq" and "ts" first
 * and "type" after them (events.h), so the header before ,"type": is replaced. */
static void stamp(struct event *ev, unsigned long seq)
{
	const char *rest = strstr(ev->json, ",\"type\":");
	char ts[40], head[80];
	size_t n, len;
	char *json;

	if (!rest)
		fatal("bus: an event without its header: %.60s", ev->json);
	event_timestamp(ts, sizeof(ts));
	n = (size_t)snprintf(head, sizeof(head), "{\"seq\":%lu,\"ts\":\"%s\"", seq, ts);
	len = strlen(rest);
	json = xmalloc(n + len + 1);
	memcpy(json, head, n);
	memcpy(json + n, rest, len + 1);
	free(ev->json);
	ev->json = json;
	ev->seq = seq;
}

unsigned long bus_publish(struct bus *b, enum event_type t, cJSON *fields)
{
	struct event *ev;
	unsigned long seq = 0;
	bool ephemeral = event_type_is_ephemeral(t);

	if (ephemeral && !bus_wants_ephemeral(b)) {
		/* Nobody draws streaming text (headless, tests): skip the serialization. */
		cJSON_Delete(fields);
		return 0;
	}
	/* Printed outside the lock (the costly part, and publishers on other threads would
	 * wait for it); numbered and stamped under it, so that seq order and timestamp order
	 * agree. */
	ev = event_build(t, 0, fields);
	pthread_mutex_lock(&b->lock);
	if (!ephemeral)
		seq = b->next_seq++;
	stamp(ev, seq);
	for (size_t i = 0; i < b->n_subs; i++)
		if (!ephemeral || b->subs[i].ephemeral)
			b->subs[i].fn(b->subs[i].ctx, ev);
	pthread_mutex_unlock(&b->lock);
	event_free(ev);
	return seq;
}

void bus_notice(struct bus *b, const char *level, const char *step_id, const char *fmt, ...)
{
	cJSON *f = cJSON_CreateObject();
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(f, "level", level);
	cJSON_AddStringToObject(f, "message", msg);
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	free(msg);
	bus_publish(b, EV_NOTICE, f);
}

void bus_deliver(struct bus *b, const struct event *ev)
{
	bool ephemeral = event_type_is_ephemeral(ev->type);

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n_subs; i++)
		if (!ephemeral || b->subs[i].ephemeral)
			b->subs[i].fn(b->subs[i].ctx, ev);
	pthread_mutex_unlock(&b->lock);
}

void bus_unsubscribe(struct bus *b, bus_fn fn, void *ctx)
{
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n_subs; i++) {
		if (b->subs[i].fn != fn || b->subs[i].ctx != ctx)
			continue;
		if (b->subs[i].ephemeral)
			atomic_fetch_sub(&b->n_ephemeral, 1);
		memmove(&b->subs[i], &b->subs[i + 1], (b->n_subs - i - 1) * sizeof(*b->subs));
		b->n_subs--;
		break;
	}
	pthread_mutex_unlock(&b->lock);
}
