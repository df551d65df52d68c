/* budget — the spending cap: each call reserves its estimated cost before it is
 * dispatched and settles the real cost after, so parallel steps cannot overshoot the cap by
 * more than the calls already in flight. Thread-safe; a call that does not fit waits here
 * (only its own worker) until the cap is raised or the call is cancelled. */
#ifndef PEVTUI_BUDGET_H
#define PEVTUI_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>

struct budget;

/* `cap` in USD; 0 = no cap. `spent` is what earlier run segments spent already. */
struct budget *budget_new(double cap, double spent);
void budget_free(struct budget *b); /* NULL ok */

/* Reserves `est` if spent + reserved + est stays within the cap (always with no cap, and
 * always for a call that costs nothing). false when it does not fit: nothing is held, and
 * *gen (may be NULL) receives the cap's generation for budget_wait. */
bool budget_reserve(struct budget *b, double est, unsigned long *gen);
/* The call is over: its reservation `est` is released and its real cost `actual` spent. */
void budget_settle(struct budget *b, double est, double actual);
/* True when a reservation of `est` would not fit now. */
bool budget_would_block(struct budget *b, double est);
/*
 * Waits until the budget's generation differs from `gen` (from a failed budget_reserve,
 * so a change made meanwhile is not missed; it moves with a new cap and with every
 * settle) or `cancel` is set (then budget_wake must be called to wake the waiter).
 * Returns true when something changed (try again).
 */
bool budget_wait(struct budget *b, unsigned long gen, const atomic_bool *cancel);
/* Wakes every waiter (after setting a cancel flag). */
void budget_wake(struct budget *b);

void budget_set_cap(struct budget *b, double cap); /* wakes waiters */
double budget_cap(struct budget *b);
double budget_spent(struct budget *b);
double budget_reserved(struct budget *b);

#endif
