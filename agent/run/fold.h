/*
 * fold — events → run state. The one reading of a journal: the engine's rebuild for
 * --resume, the cockpit's view model (live, --resume and --replay), report.md and the
 * headless printer all fold events through fold_apply, so the journal is read one way.
 * Pure: no I/O, no curses, no threads. Every getter checks types: a journal is outside
 * input, and a malformed field is ignored, never fatal.
 */
#ifndef PEVTUI_FOLD_H
#define PEVTUI_FOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "gate.h"
#include "strbuf.h"
#include "strindex.h"

struct cJSON;
struct event;

/* DESIGN.md's step states; the names are those of the `step.state` event. */
enum fstep_state {
	FS_PENDING,
	FS_WAITING,   /* at its own gate: its clock stops */
	FS_RUNNING,
	FS_VERIFYING,
	FS_STALE,     /* its definition or an input changed: runs again when inputs pass */
	FS_PASSED,
	FS_FAIL_ACCEPTED,
	FS_SKIPPED,
	FS__COUNT
};

const char *fold_state_name(enum fstep_state s);  /* "pending" … "fail_accepted" */
int fold_state_from_name(const char *name);       /* -1 if unknown */
bool fold_state_settled(enum fstep_state s);      /* passed, fail_accepted, skipped */

/* Tokens and money, for one role or one step. */
struct fusage {
	long calls;
	long tokens_in, tokens_out, tokens_cached;
	double usd;
	bool unknown; /* some call had no price: usd is a lower bound */
};

struct fcriterion {
	char *text, *evidence, *feedback; /* raw (not sanitized) */
	bool passed;
	bool not_judged; /* the verifier left it out (see verify.verdict) */
	double confidence; /* < 0 when not given */
};

struct fverdict {
	unsigned long seq;
	char *step_id, *stage, *action, *severity, *feedback;
	int attempt;
	bool overall_pass;
	struct fcriterion *criteria;
	size_t n_criteria;
};

struct fstep {
	char *id, *name, *description, *complexity;
	struct strvec criteria, deps, outputs;
	char *json;           /* the definition as the current plan holds it (compact JSON) */
	enum fstep_state state;
	char *state_reason;   /* of the last step.state, or NULL */
	int attempts;         /* the highest attempt number started, over the whole run */
	int round_attempts;   /* attempts since the step was (re)planned, edited or made stale */
	struct strvec critiques; /* feedback of failed verdicts since then, oldest first */
	char *result_json;    /* the last executor result (compact JSON), or NULL */
	char *output_json;    /* its step_output (what dependents receive), or NULL */
	bool reused;          /* passed by reusing an identical step's result */
	bool edited;          /* the operator changed it in this revision (a step.edit, or an
			       * edit of the proposal at its gate) */
	double first_start;   /* epoch seconds of its first step.start, 0 = never */
	double ended;         /* epoch seconds of its last step.end, 0 = not settled */
	double run_seconds;   /* time spent running or verifying, closed periods only */
	double run_since;     /* start of the open running period, 0 when none */
	struct fusage cost;   /* executor and verifier calls for this step */
	double *attempt_usd;  /* spend per attempt, [0] = attempt 1 */
	int n_attempt_usd;
};

/* What one attempt changed in the workspace (step.changes), as the journal says. */
struct fchange {
	unsigned long seq;
	char *step_id;
	int attempt;
	char before[41], after[41]; /* checkpoint ids (40 hex digits), "" when not given */
	long plus, minus;           /* lines, over every file */
	long n_files;               /* files changed, those past the event's list included */
	struct strvec paths;        /* the paths listed, in the event's order */
	char *kinds;                /* one letter per listed path: A added, M modified, D deleted */
	struct strvec shared;       /* the listed paths marked shared (another step's attempt
	                             * ran too and could have changed them) */
	char *stat;                 /* "1 file changed, +1 -0" */
	bool cut;                   /* a stop cut the attempt off; found on --resume */
};

struct fgate {
	unsigned long id;
	enum gate_kind kind;
	char *step_id;        /* NULL for plan, replan and budget gates */
	char *json;           /* the whole gate.open event (compact JSON), for dialogs */
	unsigned long seq;
};

struct run_state {
	/* run.start, then run.resume (the policy in force) */
	char *run_id, *task, *provider, *workspace, *scenario;
	bool simulated;
	char *models[3];          /* planner, executor, verifier */
	double budget_usd;        /* 0 = none; gate.decision / operator.command may raise it */
	int max_retries, max_replans, parallel;
	char *sandbox;            /* policy.sandbox.line: the commands' sandbox, or NULL */
	unsigned gates_on;        /* GATE_MASK of the policy's gates (0 until a policy says) */
	bool gates_known;         /* a policy listed its gates */
	bool yes;                 /* --yes: the policy approves what it may */

	/* the plan */
	char *goal;
	int revision;             /* of the adopted plan */
	bool plan_adopted;
	char *plan_json;          /* the adopted plan with every edit applied (compact JSON) */
	struct fstep *steps;      /* of the adopted plan, or of the first proposal before */
	size_t n_steps;
	int replans;              /* plan.proposed with reason replan */

	/* the latest proposal not yet adopted (at its gate), else NULL */
	char *proposed_json;
	int proposed_revision;
	char *proposed_reason;    /* initial, replan, edit */
	char *proposed_failed;    /* replan: the step that failed, and why */
	char *proposed_failure;
	double estimate_usd;      /* of the latest proposal; < 0 unknown */

	struct fverdict *verdicts; /* oldest first */
	size_t n_verdicts, cap_verdicts;

	struct fgate *gates;      /* open now, in the order they opened */
	size_t n_gates, cap_gates;
	unsigned long max_gate_id;
	int gates_opened[GATE__COUNT]; /* gate.open seen per kind, over the whole run */
	/* Exact shell commands the operator allowed for the rest of the run (gate.decision
	 * approve with `remember`), oldest first, each once: --resume allows them again. */
	struct strvec shell_allowed;

	struct fusage roles[3];   /* planner, executor, verifier */
	double spent_usd;         /* known prices only */
	bool spent_unknown;       /* some call had no price: spent_usd is a lower bound */

	bool paused;              /* notice kind pause / resume_run */
	bool final_seen;          /* run.final in the current segment */
	bool partial;
	char *answer;
	bool ended;               /* the current segment ended (run.end) */
	char *end_status, *end_reason;
	int exit_code;
	int segments;             /* run.start / run.reopen seen */

	double started;           /* epoch seconds of run.start */
	double ended_at;          /* of the last run.end, 0 while live */
	unsigned long last_seq;
	unsigned long events;     /* events applied */

	struct fchange *changes;  /* every step.changes, oldest first */
	size_t n_changes, cap_changes;

	size_t step_hint;         /* fold.c's own: where the last event's step was found */
	/* fold.c's own: the steps by id, for the steps array it was built for */
	struct strindex step_ix;
	const struct fstep *step_indexed;
	size_t n_step_indexed;
};

void fold_init(struct run_state *rs);
void fold_release(struct run_state *rs);

/* Applies one event (its JSON is parsed here). Unknown types are counted and ignored. */
void fold_apply(struct run_state *rs, const struct event *ev);
/* The same for an event already parsed (`o` is the whole event object, borrowed). */
void fold_apply_json(struct run_state *rs, int type, const struct cJSON *o);

/* The process that asked the open gates is gone (--resume reads a journal that a quit or
 * a crash cut short): they are closed, and the engine asks again with new ids. */
void fold_forget_gates(struct run_state *rs);

int fold_find_step(const struct run_state *rs, const char *id);     /* -1 if absent */
const struct fgate *fold_find_gate(const struct run_state *rs, unsigned long id);
/* Seconds a step has run at `now` (epoch seconds): closed periods plus the open one. */
double fold_step_seconds(const struct fstep *s, double now);
double fold_total_usd(const struct run_state *rs, bool *unknown);
/* The latest step.changes of attempt `attempt` of step `id` (0: of its latest attempt
 * that has one), or NULL. */
const struct fchange *fold_find_change(const struct run_state *rs, const char *id, int attempt);

/* Seconds since the epoch for an RFC 3339 UTC time ("2026-01-02T03:04:05.678Z"); 0 if bad.
 * The one parser of event timestamps. */
double fold_parse_ts(const char *ts);

#endif
