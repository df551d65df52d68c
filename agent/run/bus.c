/* bus — total-order publication of events to subscribers. */
#include "config.h"

#include "bus.h"

#include <math.h>
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
	bus_tree_fn tree; /* instead of fn: takes journaled events with their objects */
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
	b->subs[b->n_subs++] = (struct subscriber){fn, NULL, ctx, ephemeral};
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

void bus_subscribe_tree(struct bus *b, bus_tree_fn fn, void *ctx)
{
	pthread_mutex_lock(&b->lock);
	b->subs = xgrow(b->subs, &b->cap_subs, b->n_subs + 1, sizeof(*b->subs));
	b->subs[b->n_subs++] = (struct subscriber){NULL, fn, ctx, false};
	pthread_mutex_unlock(&b->lock);
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

/* A number as a reader of the line has it: whole numbers below 1e15 are written exactly;
 * others as event_build writes them (15 significant digits when they read back closely
 * enough, null for NaN), read back as cJSON reads them. */
static void number_as_read(cJSON *it)
{
	double d = it->valuedouble;
	char *text;
	cJSON *back;

	if (d > -1e15 && d < 1e15 && d == (double)(long long)d && !(d == 0 && signbit(d))) {
		cJSON_SetNumberHelper(it, d);
		return;
	}
	text = event_number_text(d);
	back = cJSON_Parse(text);
	if (cJSON_IsNumber(back)) {
		cJSON_SetNumberHelper(it, back->valuedouble);
	} else {
		it->type = cJSON_NULL | (it->type & cJSON_StringIsConst);
		it->valuedouble = 0;
		it->valueint = 0;
	}
	cJSON_Delete(back);
	free(text);
}

/* Raw JSON text (written as it is) becomes the values it stands for. */
static void raw_as_read(cJSON *it)
{
	cJSON *back = cJSON_Parse(it->valuestring);

	if (!back)
		fatal("bus: raw JSON that does not parse in an event: %.60s", it->valuestring);
	cJSON_free(it->valuestring);
	it->type = back->type | (it->type & cJSON_StringIsConst);
	it->valuestring = back->valuestring;
	it->valuedouble = back->valuedouble;
	it->valueint = back->valueint;
	it->child = back->child;
	back->valuestring = NULL;
	back->child = NULL;
	cJSON_Delete(back);
}

/* A value as cJSON_Parse gives it back from the line (strings, booleans and null are the
 * same either way). Events hold no cJSON references. */
static void value_as_read(cJSON *it)
{
	switch (it->type & 0xFF) {
	case cJSON_Number: number_as_read(it); break;
	case cJSON_Raw: raw_as_read(it); break;
	case cJSON_Array:
	case cJSON_Object:
		for (cJSON *c = it->child; c; c = c->next)
			value_as_read(c);
		break;
	default: break;
	}
}

/*
 * The object cJSON_Parse would make of the event's line, from the fields it was printed
 * from (taken; NULL ok): "seq", "ts" and "type" first, the fields that would shadow them
 * left out (as event_build does), the fields in order, numbers as read back.
 */
static cJSON *as_line(cJSON *fields, enum event_type t, unsigned long seq, const char *ts)
{
	cJSON *line = cJSON_CreateObject(), *f, *next;

	cJSON_AddNumberToObject(line, "seq", (double)seq);
	cJSON_AddStringToObject(line, "ts", ts);
	cJSON_AddStringToObject(line, "type", event_type_name(t));
	for (f = fields ? fields->child : NULL; f; f = next) {
		next = f->next;
		cJSON_DetachItemViaPointer(fields, f);
		if ((f->string[0] == 's' || f->string[0] == 't') &&
		    (!strcmp(f->string, "seq") || !strcmp(f->string, "ts") ||
		     !strcmp(f->string, "type"))) {
			cJSON_Delete(f);
			continue;
		}
		value_as_read(f);
		cJSON_AddItemToArray(line, f);
	}
	cJSON_Delete(fields);
	return line;
}

unsigned long bus_publish(struct bus *b, enum event_type t, cJSON *fields)
{
	struct event *ev;
	unsigned long seq = 0;
	bool ephemeral = event_type_is_ephemeral(t);
	cJSON *line = NULL;
	char ts[40];

	if (ephemeral && !bus_wants_ephemeral(b)) {
		/* Nobody draws streaming text (headless, tests): skip the serialization. */
		cJSON_Delete(fields);
		return 0;
	}
	/* Printed outside the lock (the costly part, and publishers on other threads would
	 * wait for it); numbered and stamped under it, so that seq order and timestamp order
	 * agree. */
	ev = event_print_unstamped(t, fields);
	pthread_mutex_lock(&b->lock);
	if (!ephemeral)
		seq = b->next_seq++;
	event_stamp(ev, seq, ts);
	for (size_t i = 0; i < b->n_subs; i++) {
		struct subscriber *s = &b->subs[i];

		if (s->tree && !ephemeral) {
			if (!line) {
				line = as_line(fields, t, seq, ts);
				fields = NULL;
			}
			s->tree(s->ctx, ev, line);
		} else if (s->fn && (!ephemeral || s->ephemeral)) {
			s->fn(s->ctx, ev);
		}
	}
	pthread_mutex_unlock(&b->lock);
	event_free(ev);
	/* Freed out of the lock, as event_build would have freed it before. */
	cJSON_Delete(line ? line : fields);
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
	cJSON *line = NULL;

	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n_subs; i++) {
		struct subscriber *s = &b->subs[i];

		if (s->tree && !ephemeral) {
			/* Text from elsewhere: its tree is the parsed line. */
			if (!line)
				line = cJSON_Parse(ev->json);
			if (line)
				s->tree(s->ctx, ev, line);
		} else if (s->fn && (!ephemeral || s->ephemeral)) {
			s->fn(s->ctx, ev);
		}
	}
	pthread_mutex_unlock(&b->lock);
	cJSON_Delete(line);
}

static void unsubscribe(struct bus *b, bus_fn fn, bus_tree_fn tree, void *ctx)
{
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->n_subs; i++) {
		if (b->subs[i].fn != fn || b->subs[i].tree != tree || b->subs[i].ctx != ctx)
			continue;
		if (b->subs[i].ephemeral)
			atomic_fetch_sub(&b->n_ephemeral, 1);
		memmove(&b->subs[i], &b->subs[i + 1], (b->n_subs - i - 1) * sizeof(*b->subs));
		b->n_subs--;
		break;
	}
	pthread_mutex_unlock(&b->lock);
}

void bus_unsubscribe(struct bus *b, bus_fn fn, void *ctx)
{
	unsubscribe(b, fn, NULL, ctx);
}

void bus_unsubscribe_tree(struct bus *b, bus_tree_fn fn, void *ctx)
{
	unsubscribe(b, NULL, fn, ctx);
}
