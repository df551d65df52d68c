/*
 * view — the cockpit's model of a run, built only from events (state + event → state).
 * The run state is the fold's (agent/run/fold.h), the same reading of events the report,
 * the headless printer and resume use; the view adds what the panes draw: sanitized names,
 * log lines, verdict rows, gate dialog bodies and the status each step shows. No curses:
 * the unit tests drive it with hand-built events. Every string it adds has been through
 * textsan, so it is safe to draw; the fold's strings (v->rs) are raw.
 */
#ifndef PEVTUI_VIEW_H
#define PEVTUI_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "fold.h"
#include "gate.h"
#include "linestore.h"
#include "plandiff.h"
#include "logref.h"
#include "strbuf.h"

struct event;

/* What the Plan pane shows for a step: the fold's state, refined for display (ready:
 * pending with every input done; retrying: sent back by its verifier). */
enum vstep_status {
	VS_PENDING,
	VS_READY,
	VS_WAITING, /* at its own gate (or a gate names it) */
	VS_RUNNING,
	VS_VERIFYING,
	VS_RETRYING,
	VS_STALE,
	VS_PASSED,
	VS_FAIL_ACCEPTED,
	VS_SKIPPED,
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
	VL_DIFF_ADD,    /* a plan diff: added, removed, changed (word diff) */
	VL_DIFF_DEL,
	VL_DIFF_CHANGE,
};

struct vstep {
	/* The fold's step at the same index: state, attempts, cost, time, definition JSON.
	 * Valid until the next view_apply. */
	const struct fstep *f;
	char *key; /* the raw id, to carry the log across a replan */
	char *id, *name, *description, *complexity;
	struct strvec criteria;
	struct strvec deps;
	enum vstep_status status;
	int depth; /* longest dependency chain above it (tree indentation) */
	struct linestore log;
	struct logref refs; /* the event behind each stretch of the log (drill-down) */
	size_t carry_len; /* bytes of an unfinished escape sequence kept from a delta */
	char *carry;
	/* For journals without step.state: the attempt whose result came in (verifying), that
	 * a verdict sent back (retrying) and whose call was cancelled (starts over); 0 = none. */
	int output_attempt, retry_attempt, cancelled_attempt;
};

struct vcriterion {
	char *text, *evidence;
	bool passed;
	bool not_judged;
	double confidence; /* < 0 when not given */
};

struct vverdict {
	char *step_id, *stage, *action, *severity, *feedback;
	int attempt;
	bool overall_pass;
	struct vcriterion *criteria;
	size_t n_criteria;
	char *changes; /* what the judged attempt changed in the workspace (sanitized), or NULL */
};

/* A step of the proposal waiting at a replan gate, for the Plan pane's other revision: its
 * drawable definition and how it differs from the plan in force. */
struct vpstep {
	char *key;                    /* the raw id */
	char *id, *name, *complexity; /* sanitized */
	int depth;
	enum plandiff_change change;
};

struct vgate {
	unsigned long id;
	enum gate_kind kind;
	char *step_id; /* raw, NULL for plan, replan and budget gates */
	char *title;   /* one line for the dialog's frame */
	struct linestore body; /* what the dialog shows, tagged for colour */
	char *edit_json; /* what `E` edits here: the step or the proposed plan (raw JSON) */
	char *orig_json; /* the same when the gate opened: edits since are marked */
	char *command;   /* shell gates: the command as one line of safe text, for the form */
	/* Budget gates (< 0 when not given): spent, held by calls in flight, asked for by the
	 * call that waits, and the cap. */
	double spent_usd, reserved_usd, needed_usd, budget_usd;
	bool show_diff; /* rewind gates: the diff of what a restore would write is shown */
};

enum vrun_state { VR_STARTING, VR_PLANNING, VR_RUNNING, VR_FINISHED };

enum vcost_role { VC_PLANNER, VC_EXECUTOR, VC_VERIFIER, VC__COUNT };

struct view {
	struct run_state rs; /* the fold: everything that is run state */

	char *run_id, *task, *goal, *provider; /* sanitized for drawing */
	int revision;        /* shown: of the adopted plan, or of the proposal before one */
	struct vstep *steps; /* one per rs.steps, same order */
	size_t n_steps;

	struct linestore runlog; /* planning, notices, the final answer */
	struct logref runlog_refs;
	size_t ref_budget; /* bytes of event JSON the refs may still keep (logref.h) */
	size_t runlog_carry_len;
	char *runlog_carry;
	/* The synthesis call's streamed text (llm.delta is ephemeral, so the fold never has
	 * it), kept until run.final: an answer the run log already shows whole under its
	 * "Final answer:" heading is not added a second time. */
	struct strbuf answer_stream;
	bool answer_streaming;

	struct vverdict *verdicts; /* one per rs.verdicts; the pane draws newest first */
	size_t n_verdicts, cap_verdicts;

	struct vgate *gates; /* one per rs.gates (the open gates), same order */
	size_t n_gates, cap_gates;

	char *model[VC__COUNT]; /* the model each role called last */
	enum vrun_state state;
	bool aborting; /* an "abort" notice came; run.end follows */

	/* While a plan or replan gate holds a proposal for an adopted plan: its steps. */
	struct vpstep *proposal;
	size_t n_proposal;
	char *logged_proposal; /* the proposal the run log last told (raw JSON), for edits */
};

struct view *view_new(void);
void view_free(struct view *v); /* NULL ok */

/* Applies one event. Unknown types and malformed fields are ignored (never fatal). */
void view_apply(struct view *v, const struct event *ev);

/* A budget gate's spend if it is continued: spent, in flight and asked for. */
double view_gate_committed(const struct vgate *g);
/* --resume, once the journal is applied: the gates it left open were asked by a process
 * that is gone; their dialogs go (the engine asks again). */
void view_forget_gates(struct view *v);
/* At a rewind gate: shows (or hides again) what a restore would write, as a diff. */
void view_gate_toggle_diff(struct view *v, struct vgate *g);

/* Index of the step with this (raw) id, or -1. */
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
/* Seconds a step has spent running or verifying at `now`. */
double view_step_elapsed(const struct vstep *s, double now);
/* Total spend of all roles; *unknown true when some call had no price. */
double view_total_usd(const struct view *v, bool *unknown);

const char *view_status_name(enum vstep_status s); /* "pending", "fail-accepted", … */
/* Short state for the status line: "planning", "running", "paused", "waiting for you",
 * "finished — passed" …; caller frees. */
char *view_state_text(const struct view *v);

#endif
