/*
 * step_editor — editing a step (or, at a plan gate, the plan): the inline form and the
 * round trip through $VISUAL / $EDITOR with validation.
 */
#ifndef PEVTUI_STEP_EDITOR_H
#define PEVTUI_STEP_EDITOR_H

#include <stdbool.h>

struct form;

/* The inline form for a step given as JSON: name, description, complexity, one field per
 * acceptance criterion and an empty one to add a criterion. NULL if the JSON is not a step
 * object. Caller frees with form_free. */
struct form *step_editor_form(const char *step_json);
/*
 * Applies the form to the step. Returns the edited step as compact JSON (caller frees);
 * NULL with *err NULL when nothing changed; NULL + *err (a sentence) when the edit is
 * invalid.
 */
char *step_editor_apply(const char *step_json, const struct form *f, char **err);
/* Replaces the step with the same step_id inside a plan's JSON; NULL if not found. */
char *step_editor_replace_in_plan(const char *plan_json, const char *step_json);

/*
 * Opens `json` (pretty-printed) in $VISUAL, $EDITOR or vi with curses suspended. Invalid
 * JSON or an invalid step / plan (`is_plan`) reopens the editor with the errors as comment
 * lines at the top. Returns the edited JSON (compact, caller frees); NULL with *err NULL
 * when the file was left unchanged; NULL + *err when the editor cannot run or the operator
 * saved the same invalid text twice.
 */
char *step_editor_external(const char *json, bool is_plan, char **err);

#endif
