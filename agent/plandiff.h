/*
 * plandiff — what changed between two revisions of a plan: steps added (shown whole),
 * removed, and for each changed step a word diff of its fields in the style of
 * `git diff --word-diff` (`[-old-]{+new+}`). Plain C, no curses: the gate dialogs, the run
 * log and report.md print the same lines. Every text in a diff has been through textsan.
 */
#ifndef PEVTUI_PLANDIFF_H
#define PEVTUI_PLANDIFF_H

#include <stdbool.h>
#include <stddef.h>

struct plan;

/* Past this many cells (words of one side times words of the other, once the common
 * start and end are set aside) a text is not searched for common words: the old text is
 * shown removed whole and the new one added whole. Bounds time and memory on any input. */
#define PLANDIFF_MAX_CELLS (1u << 20)

/* What a line of a diff says, for colour. */
enum plandiff_kind {
	PDL_SAME_STEP,    /* "= id  name": the step is unchanged */
	PDL_ADDED_STEP,   /* "+ id  name": a new step; its fields follow as PDL_ADDED */
	PDL_ADDED,        /* a field of an added step, or a list item added whole */
	PDL_REMOVED_STEP, /* "- id  name": the step is gone */
	PDL_REMOVED,      /* a list item removed whole */
	PDL_CHANGED_STEP, /* "~ id  name", or "~ plan" for the plan's own fields */
	PDL_CHANGED,      /* a field (or list item) holding [-…-] and {+…+} marks */
	PDL_CONTEXT,      /* an unchanged item of a changed list, or a list's heading */
};

/* How a step of the new plan compares with the old plan. */
enum plandiff_change { PDC_SAME, PDC_ADDED, PDC_CHANGED };

struct plandiff_line {
	enum plandiff_kind kind;
	char *text; /* one line, no '\n', safe to draw */
};

struct plandiff_step {
	char *id; /* raw, as the new plan has it */
	enum plandiff_change change;
};

struct plandiff {
	struct plandiff_line *lines;
	size_t n_lines, cap_lines;
	struct plandiff_step *steps; /* one per step of the new plan, in its order */
	size_t n_steps;
	size_t added, removed, changed, same; /* steps */
	bool plan_changed; /* goal, context, success criteria or rollback strategy */
};

/*
 * The diff that turns `old` into `np`: steps in the new plan's order, each removed step
 * just before the first step that followed it in the old plan. Steps are matched by id.
 * Caller frees with plandiff_free.
 */
struct plandiff *plandiff_new(const struct plan *old, const struct plan *np);
/* The same from two plans as JSON text (plan.proposed / plan.adopted `plan` objects);
 * NULL when either is not a plan. */
struct plandiff *plandiff_from_json(const char *old_json, const char *new_json);
void plandiff_free(struct plandiff *d); /* NULL ok */

/* True when nothing differs (no step added, removed or changed, no plan field). */
bool plandiff_empty(const struct plandiff *d);

/* The lines joined, each ending in '\n' ("" for an empty diff). Caller frees. */
char *plandiff_text(const struct plandiff *d);

/*
 * The word diff of two texts, `git diff --word-diff` style: words are runs of anything
 * but blanks; unchanged words and the new text's blanks stay, a run of changed words
 * becomes "[-old words-]{+new words+}". Both texts are sanitized first (newlines kept).
 * *changed (may be NULL) says whether any word differs. Caller frees.
 */
char *plandiff_words(const char *old, const char *np, bool *changed);

#endif
