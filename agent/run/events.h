/* events — the typed events of a run: one JSON object each, as journaled (DESIGN.md). */
#ifndef PEVTUI_EVENTS_H
#define PEVTUI_EVENTS_H

#include <stdbool.h>

struct cJSON;

enum event_type {
	EV_RUN_START,
	EV_PLAN_PROPOSED,
	EV_PLAN_ADOPTED,   /* a proposed plan became the current one (after its gate) */
	EV_GATE_OPEN,
	EV_GATE_DECISION,
	EV_STEP_START,
	EV_LLM_CALL,
	EV_LLM_DELTA,      /* streamed text; ephemeral, never journaled */
	EV_LLM_RETRY,      /* provider retry and its wait */
	EV_TOOL_CALL,
	EV_TOOL_RESULT,
	EV_STEP_OUTPUT,
	EV_VERIFY_VERDICT,
	EV_STEP_END,
	EV_STEP_EDIT,
	EV_NOTICE,         /* a sentence for the operator: warnings, errors, control */
	EV_RUN_FINAL,
	EV_RUN_END,
	EV_STEP_STATE,       /* a step's state changed in a way step.start/step.end do not say */
	EV_OPERATOR_COMMAND, /* what the operator asked, journaled before what it causes */
	EV_RUN_REOPEN,       /* a finished run starts a new segment (edit, re-run, resume) */
	EV_RUN_RESUME,       /* --resume: the policy in force from here */
	EV_STEP_CHANGES,     /* what one attempt changed in the workspace (checkpoints) */
	EV_STEP_CHECKPOINT,  /* the checkpoint before an attempt, before its tools run */
	EV__COUNT
};

/*
 * One event. `json` is the whole object as one compact line (no newline) with "seq"
 * (0 for ephemeral events), "ts" and "type" first, then the type's fields. Events are
 * immutable once published; each subscriber parses `json` in its own thread, so no
 * cJSON tree crosses threads.
 */
struct event {
	enum event_type type;
	unsigned long seq;
	char *step_id; /* copy of the "step_id" field, or NULL */
	char *json;
};

const char *event_type_name(enum event_type t);   /* "run.start" … */
int event_type_from_name(const char *name);       /* -1 if unknown */
bool event_type_is_ephemeral(enum event_type t);  /* not journaled, no seq */

/* Builds an event from `fields` (taken): prepends seq, ts (RFC 3339 UTC, now) and type. */
struct event *event_build(enum event_type t, unsigned long seq, struct cJSON *fields);
/* The same, `fields` (NULL ok) left to the caller. */
struct event *event_print(enum event_type t, unsigned long seq, const struct cJSON *fields);
/* For the bus, which prints an event outside its lock and numbers and stamps it under
 * the lock: the event printed but for its header (its text not yet a line), then given its
 * seq and the time now (into ts, >= 40 bytes). Together: what event_print gives. */
struct event *event_print_unstamped(enum event_type t, const struct cJSON *fields);
void event_stamp(struct event *ev, unsigned long seq, char *ts);
/* The text an event's line holds for the number d ("null" for NaN and infinities), so a
 * reader of the tree that was printed can see what a reader of the line sees. Caller frees. */
char *event_number_text(double d);
/* Parses one journal line. NULL + *err if it is not an event. */
struct event *event_from_line(const char *line, char **err);
struct event *event_dup(const struct event *ev);
void event_free(struct event *ev); /* NULL ok */

/* One line for a step.changes event (its parsed object): "workspace: 1 file changed, +1
 * -0 (notes.txt)", the first `max_names` paths named, or "workspace: unchanged"; an
 * attempt a stop cut off (`cut`) says so. Raw text from the journal: clean it before
 * drawing. Caller frees. */
char *event_changes_summary(const struct cJSON *changes, int max_names);

/* Current time as RFC 3339 UTC with milliseconds, into buf (>= 32 bytes). */
void event_timestamp(char *buf, unsigned long bufsize);

#endif
