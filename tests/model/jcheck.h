/*
 * jcheck — the journal checker of the model test: folds a run's events one at a time and
 * records every violation of the engine's invariants (DESIGN.md, doc/events.md). Pure: no
 * engine, no I/O but the printer, so it is unit-tested with hand-written journals and used
 * both live (on the bus) and after a run (on journal.jsonl).
 */
#ifndef PEVTUI_JCHECK_H
#define PEVTUI_JCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cJSON;

/* The invariants, each a family of checks (see jcheck.c for exactly what each checks). */
enum jcheck_inv {
	JC_DEPS,     /* a step starts only when every input is settled and still valid */
	JC_STALE,    /* no pass survives a change of its definition or of an input */
	JC_GATES,    /* a gate holds only its own step */
	JC_CRITERIA, /* a pass covers every acceptance criterion */
	JC_BUDGET,   /* spend stays within the cap plus the calls in flight */
	JC_SEGMENTS, /* one run.end per run segment */
	JC_RESUME,   /* a resumed run keeps what was settled; folds agree */
	JC_PAUSE,    /* no step starts while the run is paused */
	JC_SHAPE,    /* the journal itself: seq, known steps and gates */
	JC__COUNT
};

const char *jcheck_inv_name(enum jcheck_inv inv); /* "deps-settled" … */

struct jcheck_violation {
	enum jcheck_inv inv;
	char *msg;               /* one sentence */
	unsigned long seqs[4];   /* the offending events, most relevant first */
	int n_seqs;
};

/* The fold's step states: doc/events.md's names and its rule (the last of step.state,
 * step.start and step.end naming the step). */
enum jcheck_state {
	JS_PENDING,
	JS_WAITING,
	JS_RUNNING,
	JS_VERIFYING,
	JS_STALE,
	JS_PASSED,
	JS_FAIL_ACCEPTED,
	JS_SKIPPED,
	JS__COUNT
};
const char *jcheck_state_name(enum jcheck_state s);

/* A gate open now, as the checker saw it. */
struct jcheck_gate {
	unsigned long id;
	char *kind;    /* "plan" … */
	char *step_id; /* NULL for plan, replan and budget gates */
};

struct jcheck;

struct jcheck *jcheck_new(void);
void jcheck_free(struct jcheck *c); /* NULL ok */

/* Folds one event (borrowed; the checker keeps its own copy) and checks it. */
void jcheck_feed(struct jcheck *c, const struct cJSON *ev);
/* The journal is complete (the case is over): its last segment must be closed. */
void jcheck_finish(struct jcheck *c);

size_t jcheck_n_violations(const struct jcheck *c);
const struct jcheck_violation *jcheck_violation(const struct jcheck *c, size_t i);
/* Records a violation found outside the fold (the driver's live checks). */
void jcheck_report(struct jcheck *c, enum jcheck_inv inv, unsigned long seq, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prints up to `max` violations, each with its offending events (cut to a line). */
void jcheck_print(const struct jcheck *c, FILE *out, size_t max);
/* An event the checker holds, by seq; NULL if none. Borrowed. */
const struct cJSON *jcheck_event(const struct jcheck *c, unsigned long seq);

/* ---- what the fold knows now (for the driver) ---- */
unsigned long jcheck_last_seq(const struct jcheck *c);
size_t jcheck_n_events(const struct jcheck *c);
/* Step ids of the adopted plan in plan order ("" when no plan is adopted). Caller frees. */
char *jcheck_plan_ids(const struct jcheck *c);
/* "s1=passed s2=running …" over the adopted plan: the doc rule's states. Caller frees. */
char *jcheck_states(const struct jcheck *c);
/* A step's doc-rule state; -1 when the step is unknown. */
int jcheck_step_state(const struct jcheck *c, const char *id);
/* The current definition of a step: in the proposal waiting at its gate when there is one
 * and it holds the step, else in the adopted plan. NULL when unknown. Borrowed. */
const struct cJSON *jcheck_step_def(const struct jcheck *c, const char *id);
/* The proposal waiting to be adopted, or NULL. Borrowed. */
const struct cJSON *jcheck_proposal(const struct jcheck *c);
size_t jcheck_n_gates(const struct jcheck *c);
const struct jcheck_gate *jcheck_gate(const struct jcheck *c, size_t i);
/* Steps with an attempt in progress (started, no final verdict or end yet). */
int jcheck_busy(const struct jcheck *c);
/* The ids of the steps in progress or with a passing verdict awaiting their step.end,
 * but `except` (may be NULL); "" when none. Caller frees. */
char *jcheck_busy_ids(const struct jcheck *c, const char *except);
/* Some step has its passing verdict but not yet its step.end. */
bool jcheck_pass_pending(const struct jcheck *c);
bool jcheck_paused(const struct jcheck *c);
bool jcheck_started(const struct jcheck *c);     /* run.start seen */
bool jcheck_segment_open(const struct jcheck *c); /* run.start/run.reopen, no run.end since */
double jcheck_spent(const struct jcheck *c);
double jcheck_cap(const struct jcheck *c);       /* 0 = no budget */
/* The exit_code of the last run.end; -1 if none. */
int jcheck_last_exit(const struct jcheck *c);

#endif
