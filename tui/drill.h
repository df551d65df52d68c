/*
 * drill — one log entry opened whole, as a page of lines (no curses): a tool call with its
 * arguments and full output, the executor's result as its fields, a verdict with every
 * criterion, any other event as readable JSON; and the pages of an artifact's diff
 * between attempts and of a request as sent. Every line is sanitized (textsan) and tagged
 * with a kind (enum vline_kind, or the DRILL_* kinds below) that the screen colours.
 */
#ifndef PEVTUI_DRILL_H
#define PEVTUI_DRILL_H

#include <stdbool.h>
#include <stddef.h>

#include "linestore.h"

struct cJSON;

/* Kinds beyond enum vline_kind (view.h). */
enum drill_kind {
	DRILL_KEY = 64, /* a field's name */
	DRILL_ADD,      /* a diff's added line */
	DRILL_DEL,      /* a diff's removed line */
	DRILL_HUNK,     /* a diff's hunk header */
	DRILL_DIM,      /* context: seq, time, where a file is kept */
};

/* What an event's page is made of, besides the event itself. */
struct drill_input {
	const char *json;          /* the whole event (seq, ts, type, fields); NULL: streamed text */
	const struct linestore *log; /* the log lines the entry added, as the pane shows them */
	size_t first, end;
	const char *output;        /* a tool's full output (kept in the run folder), or NULL */
	size_t output_len;
	bool output_cut;           /* the kept output ends before the tool's did */
	const char *pair_json;     /* tool.call ↔ its tool.result (same call_id), or NULL */
};

/* Appends the page of one log entry. */
void drill_event(struct linestore *page, const struct drill_input *in);

/* The executor's result object (step.output's `result`) as its fields: findings,
 * artifacts, meets_criteria (per criterion when given so), confidence, notes, reasoning,
 * actions taken. A result that is no object (an answer that could not be read) is shown
 * as its text. */
void drill_result(struct linestore *page, const struct cJSON *result);

/* A JSON value made readable at `indent` columns: an object field by field ("name: value"),
 * text with newlines as lines, nested values and text that holds JSON pretty-printed. */
void drill_value(struct linestore *page, const struct cJSON *v, int indent);

/* Text (a file, a tool's output) as lines at `indent`: pretty-printed when it is a JSON
 * object or array, tabs expanded. */
void drill_text(struct linestore *page, int kind, const char *text, size_t len, int indent);

/* A request body as sent to a model (Anthropic, OpenAI or pevtui's own shape for the
 * simulated provider), made readable: the system prompt and each message's text as lines,
 * tool calls and results as fields, the tools by name; other fields as drill_value. */
void drill_request(struct linestore *page, const char *body, size_t len);

/* A unified diff (linediff.h) as lines tagged DRILL_ADD, DRILL_DEL, DRILL_HUNK. */
void drill_diff(struct linestore *page, const char *unified);

#endif
