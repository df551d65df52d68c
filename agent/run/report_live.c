/* report_live — report.c fed by the bus as events are published. */
#include "config.h"

#include "report_live.h"

#include <pthread.h>
#include <stdlib.h>

#include "bus.h"
#include "report.h"
#include "xalloc.h"

struct report_live {
	/* Taken inside the bus lock (on_event) and alone (write): never the other way. */
	pthread_mutex_t lock;
	struct report *report;
	struct bus *bus; /* subscribed to, or NULL */
};

struct report_live *report_live_new(void)
{
	struct report_live *l = xcalloc(1, sizeof(*l));

	if (pthread_mutex_init(&l->lock, NULL))
		fatal("cannot initialise the report's lock");
	l->report = report_new();
	return l;
}

void report_live_free(struct report_live *l)
{
	if (!l)
		return;
	report_live_attach(l, NULL);
	report_free(l->report);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void report_live_apply(struct report_live *l, int type, const struct cJSON *o)
{
	pthread_mutex_lock(&l->lock);
	report_apply(l->report, type, o);
	pthread_mutex_unlock(&l->lock);
}

/* In the publishing thread, under the bus lock: events come one at a time, in order. */
static void on_event(void *ctx, const struct event *ev, const struct cJSON *line)
{
	report_live_apply(ctx, (int)ev->type, line);
}

void report_live_attach(struct report_live *l, struct bus *b)
{
	if (l->bus)
		bus_unsubscribe_tree(l->bus, on_event, l);
	l->bus = b;
	if (b)
		bus_subscribe_tree(b, on_event, l);
}

bool report_live_write(struct report_live *l, const char *run_dir, char **err)
{
	bool ok;

	pthread_mutex_lock(&l->lock);
	ok = report_render_write(l->report, run_dir, err);
	pthread_mutex_unlock(&l->lock);
	return ok;
}
