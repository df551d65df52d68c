/*
 * mgen — seeded random cases for the model test: a plan (a random DAG), the simulated
 * models' --script (planner revisions, verdicts and executor attempts per step and attempt),
 * a run policy and an operator schedule. The same seed always gives the same case.
 */
#ifndef PEVTUI_MGEN_H
#define PEVTUI_MGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate.h"

struct cJSON;

/* xorshift64*: small, fast and good enough to pick shapes; never zero-seeded. */
struct mgen_rng {
	uint64_t s;
};
void mgen_rng_seed(struct mgen_rng *r, uint64_t seed);
uint64_t mgen_rng_next(struct mgen_rng *r);
unsigned mgen_rng_below(struct mgen_rng *r, unsigned n); /* 0 ≤ x < n; n > 0 */
bool mgen_rng_chance(struct mgen_rng *r, unsigned percent);
/* The seed of case `i` of a series starting at `base` (splitmix64, so neighbours differ). */
uint64_t mgen_case_seed(uint64_t base, unsigned i);

enum mgen_trigger {
	MGEN_AFTER_EVENTS, /* once the journal holds `after` events (or the run is idle) */
	MGEN_AT_GATE,      /* when a gate of kind `gate` opens (or the run is idle) */
};

enum mgen_action {
	MGEN_APPROVE,        /* answer the gate (budget: with a new cap) */
	MGEN_REJECT,
	MGEN_SKIP_GATE,
	MGEN_EDIT_AT_GATE,   /* edit the gate's step (or the proposal), then approve */
	MGEN_EDIT,           /* PEV_CMD_EDIT of step `step`: description changed */
	MGEN_RERUN,
	MGEN_RERUN_FORCE,
	MGEN_SKIP_STEP,
	MGEN_PAUSE,
	MGEN_RESUME,
	MGEN_CANCEL_RUNNING,
	MGEN_BUDGET,         /* PEV_CMD_BUDGET with `budget_usd` */
	MGEN_QUIT_RESUME,    /* PEV_CMD_QUIT, then a new engine resumes the run dir */
	MGEN__COUNT
};
const char *mgen_action_name(enum mgen_action a);

struct mgen_entry {
	enum mgen_trigger trigger;
	unsigned long after;   /* MGEN_AFTER_EVENTS */
	enum gate_kind gate;   /* MGEN_AT_GATE */
	enum mgen_action action;
	int step;              /* 1-based step number for step actions */
	double budget_usd;     /* MGEN_BUDGET, MGEN_APPROVE at a budget gate */
	bool add_criterion;    /* edits: also add an acceptance criterion */
};

struct mgen_case {
	uint64_t seed;
	int n_steps;
	unsigned gates;        /* GATE_MASK bits */
	int parallel, max_retries, max_replans;
	double budget_usd;     /* 0 = none */
	bool linger;           /* pev_set_linger: stays open after run.end until quit */
	bool resume_keeps_cap; /* a resume passes the cap in force, not the first one */
	struct cJSON *script;  /* the sim --script (owned) */
	struct mgen_entry *schedule;
	size_t n_schedule;
};

/* Builds the case of `seed`. Release with mgen_case_release. */
void mgen_case_make(struct mgen_case *c, uint64_t seed);
void mgen_case_release(struct mgen_case *c);
/* A few lines describing the case (policy, plan shape, scripted outcomes, schedule), for
 * failure reports. Caller frees. */
char *mgen_case_describe(const struct mgen_case *c);

#endif
