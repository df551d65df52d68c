/* budget — reservations against the spending cap (see budget.h). */
#include "config.h"

#include "budget.h"

#include <pthread.h>
#include <stdlib.h>

#include "xalloc.h"

struct budget {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	double cap, spent, reserved;
	unsigned long generation; /* bumped when room may have been made: a new cap, a settle */
};

struct budget *budget_new(double cap, double spent)
{
	struct budget *b = xcalloc(1, sizeof(*b));

	if (pthread_mutex_init(&b->lock, NULL) || pthread_cond_init(&b->cond, NULL))
		fatal("budget: cannot initialise its lock");
	b->cap = cap > 0 ? cap : 0;
	b->spent = spent > 0 ? spent : 0;
	return b;
}

void budget_free(struct budget *b)
{
	if (!b)
		return;
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static bool fits_locked(const struct budget *b, double est)
{
	/* A small tolerance: estimates are sums of doubles. */
	return b->cap <= 0 || est <= 0 || b->spent + b->reserved + est <= b->cap + 1e-12;
}

bool budget_reserve(struct budget *b, double est, unsigned long *gen)
{
	bool ok;

	pthread_mutex_lock(&b->lock);
	ok = fits_locked(b, est);
	if (ok && est > 0)
		b->reserved += est;
	if (gen)
		*gen = b->generation;
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void budget_settle(struct budget *b, double est, double actual)
{
	pthread_mutex_lock(&b->lock);
	if (est > 0)
		b->reserved -= est;
	if (b->reserved < 1e-12)
		b->reserved = 0;
	if (actual > 0)
		b->spent += actual;
	/* A reservation larger than the real cost leaves room: a held call may fit now. */
	b->generation++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

bool budget_would_block(struct budget *b, double est)
{
	bool block;

	pthread_mutex_lock(&b->lock);
	block = !fits_locked(b, est);
	pthread_mutex_unlock(&b->lock);
	return block;
}

bool budget_wait(struct budget *b, unsigned long gen, const atomic_bool *cancel)
{
	bool changed;

	pthread_mutex_lock(&b->lock);
	while (b->generation == gen && !(cancel && atomic_load(cancel)))
		pthread_cond_wait(&b->cond, &b->lock);
	changed = b->generation != gen && !(cancel && atomic_load(cancel));
	pthread_mutex_unlock(&b->lock);
	return changed;
}

void budget_wake(struct budget *b)
{
	pthread_mutex_lock(&b->lock);
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void budget_set_cap(struct budget *b, double cap)
{
	pthread_mutex_lock(&b->lock);
	b->cap = cap > 0 ? cap : 0;
	b->generation++;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static double read_locked(struct budget *b, const double *field)
{
	double v;

	pthread_mutex_lock(&b->lock);
	v = *field;
	pthread_mutex_unlock(&b->lock);
	return v;
}

double budget_cap(struct budget *b) { return read_locked(b, &b->cap); }
double budget_spent(struct budget *b) { return read_locked(b, &b->spent); }
double budget_reserved(struct budget *b) { return read_locked(b, &b->reserved); }
