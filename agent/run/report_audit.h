/*
 * report_audit — the audit trail of report.md: when each step and attempt ran and what it
 * cost, every tool call in short, how long each gate waited, the operator's edits before
 * and after, the budget, and the criteria nobody judged. Read from the same journal events
 * as the rest of the report (report.c feeds them in order); renders markdown.
 */
#ifndef PEVTUI_REPORT_AUDIT_H
#define PEVTUI_REPORT_AUDIT_H

#include <stdbool.h>

struct cJSON;
struct run_state;
struct strbuf;

/* Longest values shown whole; longer ones are cut, with a note saying how much. */
#define AUDIT_PARAMS_COLS 160
#define AUDIT_TEXT_COLS 500

struct audit;

struct audit *audit_new(void);
void audit_free(struct audit *a); /* NULL ok */

/* Takes one journal event (`o`, the whole object, borrowed), in journal order. */
void audit_apply(struct audit *a, int type, const struct cJSON *o);

/* Story lines, written under the step the event names: */
/* tool.result: "- Attempt N: tool NAME `PARAMS` ok (B bytes, 0.1 s): SUMMARY" — with the
 * params of its tool.call (cut to AUDIT_PARAMS_COLS) when one was journaled. Call after
 * audit_apply. */
void audit_tool_line(const struct audit *a, struct strbuf *sb, const struct cJSON *result);
/* step.edit: the fields the operator changed, before and after, as nested lines. */
void audit_step_edit_lines(struct strbuf *sb, const char *indent, const struct cJSON *before,
                           const struct cJSON *after);
/* gate.decision: "  - opened HH:MM:SS, answered HH:MM:SS after 12.0 s" under its line.
 * Call after audit_apply. */
void audit_gate_line(const struct audit *a, struct strbuf *sb, const struct cJSON *decision);

/* Sections and parts of sections: */
/* "- Started: …", "- Finished: … (duration)" for the run's header list. */
void audit_render_times(const struct audit *a, struct strbuf *sb);
/* Under a step's heading: its first start, its end and a table of its attempts. */
void audit_render_step(const struct audit *a, struct strbuf *sb, const char *step_id);
/* "## Plan edits": each plan the operator edited at its gate, before and after. Nothing
 * when there was none. */
void audit_render_plan_edits(const struct audit *a, struct strbuf *sb);
/* "## Budget": the cap and its changes, spent, reserved at the end, estimates held. */
void audit_render_budget(const struct audit *a, struct strbuf *sb, const struct run_state *rs);
/* "## Criteria not judged": per step of the final plan, the criteria no verdict judged,
 * and how the plan's success criteria were checked. */
void audit_render_unjudged(const struct audit *a, struct strbuf *sb, const struct run_state *rs);

/* A time from the journal (epoch seconds) as "2026-11-22 10:00:01 UTC". */
void audit_add_time(struct strbuf *sb, double t);
/* A duration as "0.4 s", "12.3 s", "3 min 12 s", "2 h 05 min". */
void audit_add_duration(struct strbuf *sb, double seconds);
/* Text as inline code, cleaned to one line, cut at `cols` columns with a note
 * ("… [cut: 1234 more characters]"). */
void audit_add_code(struct strbuf *sb, const char *text, int cols);

#endif
