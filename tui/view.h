/*
 * view — the cockpit's model of a run, built only from events (state + event → state).
 * No curses: the panes draw it, the unit tests drive it with hand-built events. Every
 * string in it has been through textsan, so it is safe to draw.
 */
#ifndef PEVTUI_VIEW_H
#define PEVTUI_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "linestore.h"
#include "strbuf.h"

struct event;

enum vstep_status {
	VS_PENDING,
	VS_READY,
	VS_RUNNING,
	VS_VERIFYING,
	VS_PASSED,
	VS_RETRYING,
	VS_FAIL_ACCEPTED,
	VS_SKIPPED,
	VS_GATE,
	VS__COUNT
};

/* Tags of log lines (the panes map them to colours). */
enum vline_kind {
	VL_TEXT,
	VL_HEADER,
	VL_TOOL,
	VL_TOOL_OK,
	VL_TOOL_FAIL,
	VL_CRITIQUE,
	VL_RETRY,
	VL_PASS,
	VL_NOTICE,
	VL_WARN,
	VL_ERROR,
};

/* Money and tokens for one role or one step. */
struct vcost {
	char *model;
	long calls;
	long tokens_in, tokens_out, tokens_cached;
	double usd;
	bool unknown; /* at least one call had no price: the sum is a lower bound */
};

struct vstep {
	char *id, *name, *description, *complexity;
	struct strvec criteria;
	struct strvec deps;
	char *json; /* the step as the plan holds it (compact JSON), raw: for editors only */
	enum vstep_status status;
	enum vstep_status before_gate; /* status to return to when its gate closes */
	int attempts;
	int depth;         /* longest dependency chain above it (tree indentation) */
	double started;    /* epoch seconds of the first step.start, 0 = never */
	double ended;      /* epoch seconds of step.end, 0 = not ended */
	bool edited;
	struct vcost cost; /* executor and verifier calls for this step */
	double *attempt_usd; /* spend per attempt, [0] = attempt 1 */
	int n_attempt_usd;
	struct linestore log;
	size_t carry_len;  /* bytes of an unfinished escape sequence kept from a delta */
	char *carry;
};

struct vcriterion {
	char *text, *evidence;
	bool passed;
	double confidence; /* < 0 when not given */
};

struct vverdict {
	char *step_id, *stage, *action, *severity, *feedback;
	int attempt;
	bool overall_pass;
	struct vcriterion *criteria;
	size_t n_criteria;
};

struct vgate {
	unsigned long id;
	char *kind;    /* plan, high, replan, shell, budget, step */
	char *step_id; /* NULL for plan gates */
	char *title;   /* one line for the dialog's frame */
	struct linestore body; /* what the dialog shows, tagged for colour */
	char *edit_json; /* what `E` edits here: the step or the proposed plan (raw JSON) */
	char *command;   /* shell gates: the command as one line of safe text, for the form */
	double spent_usd, budget_usd; /* budget gates (< 0 when not given) */
};

enum vrun_state { VR_STARTING, VR_PLANNING, VR_RUNNING, VR_PAUSED, VR_FINISHED };

enum vcost_role { VC_PLANNER, VC_EXECUTOR, VC_VERIFIER, VC__COUNT };

struct view {
	char *run_id, *task, *goal, *provider;
	bool simulated;
	int revision;        /* of the current (adopted or shown) plan */
	bool plan_adopted;   /* false while only a proposal is known */
	char *plan_json;     /* the current plan (raw JSON) */
	char *proposed_json; /* the latest proposed plan (raw JSON), for the plan gate */
	struct vstep *steps;
	size_t n_steps;

	struct linestore runlog; /* planning, notices, the final answer */
	size_t runlog_carry_len;
	char *runlog_carry;

	struct vverdict *verdicts; /* oldest first; the pane draws newest first */
	size_t n_verdicts, cap_verdicts;

	struct vgate *gates; /* open gates, in the order they opened */
	size_t n_gates, cap_gates;

	struct vcost cost[VC__COUNT];
	double estimate_usd; /* < 0 when unknown */
	double budget_usd;   /* 0 = none */

	enum vrun_state state;
	bool paused;        /* from the engine's "pause" / "resume_run" notices */
	bool aborting;      /* an "abort" notice came; run.end follows */
	char *end_status;   /* passed, partial, aborted, error (after run.end) */
	char *end_reason;
	int exit_code;
	char *answer;       /* run.final */
	double started;     /* epoch seconds of run.start */
	double ended;
	unsigned long events; /* applied so far */
	unsigned long last_seq;
};

struct view *view_new(void);
void view_free(struct view *v); /* NULL ok */

/* Applies one event. Unknown types and malformed fields are ignored (never fatal). */
void view_apply(struct view *v, const struct event *ev);

/* Index of the step with this id, or -1. */
int view_find_step(const struct view *v, const char *id);
/* True once a step is running, verifying or retrying (the spinner moves). */
bool view_busy(const struct view *v);
/* Steps running, verifying or retrying (not those waiting at a gate for the operator). */
int view_running(const struct view *v);

/* What the pause key does next: pause (running steps finish, no new ones start); while
 * paused with steps still in flight, cancel them (they start over on resume); else resume.
 * VP_NONE once the run is over. */
enum vpause_action { VP_NONE, VP_PAUSE, VP_CANCEL, VP_RESUME };
enum vpause_action view_pause_action(const struct view *v);

/* Replay jumps: a plan.proposed with reason "replan"; a failure is a verify.verdict whose
 * action is not "pass", a tool.result with ok false, or an llm.call with status "error". */
bool view_event_is_replan(const struct event *ev);
bool view_event_is_failure(const struct event *ev);

/* Seconds since run.start at `now` (or until run.end). */
double view_elapsed(const struct view *v, double now);
/* A step's elapsed seconds at `now` (0 before it starts). */
double view_step_elapsed(const struct vstep *s, double now);
/* Total spend of all roles; *unknown true when some call had no price. */
double view_total_usd(const struct view *v, bool *unknown);

const char *view_status_name(enum vstep_status s); /* "pending", "fail-accepted", … */
/* Short state for the status line: "planning", "running", "paused", "waiting for you",
 * "finished — passed" …; caller frees. */
char *view_state_text(const struct view *v);

/* Seconds since the epoch for an RFC 3339 UTC time ("2026-01-02T03:04:05.678Z"); 0 if bad. */
double view_parse_ts(const char *ts);

#endif
