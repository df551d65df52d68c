/* bus — total-order publication of events to subscribers. */
#include "config.h"

#include "bus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>

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
	pthread_mutex_lock(&b->lock);
	if (!ephemeral)
		seq = b->next_seq++;
	/* Built under the lock so that seq order and timestamp order agree. */
	ev = event_build(t, seq, fields);
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
