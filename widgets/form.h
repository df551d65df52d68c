/*
 * form — a modal form of labelled single-line fields with line editing (insert, delete,
 * cursor keys, Home/End, ^A ^E ^U ^K ^W). Tab/Enter/arrows move between fields; Enter on
 * the last field or ^S / F2 submits; Esc cancels.
 */
#ifndef PEVTUI_FORM_H
#define PEVTUI_FORM_H

#include <stdbool.h>
#include <stddef.h>

struct form;

enum form_result { FORM_CONTINUE, FORM_SUBMIT, FORM_CANCEL };

/* `title` and `hint` are copied. Caller frees with form_free. */
struct form *form_new(const char *title, const char *hint);
void form_free(struct form *f); /* NULL ok */
/* Adds a field (label and initial value copied). */
void form_add(struct form *f, const char *label, const char *value);
size_t form_count(const struct form *f);
/* The field's current text (owned by the form). */
const char *form_value(const struct form *f, size_t i);
/* Shows a sentence under the fields (e.g. a validation error); NULL clears. Copied. */
void form_set_error(struct form *f, const char *msg);
/* One key from get_wch: `is_key` true for KEY_* codes. */
enum form_result form_key(struct form *f, bool is_key, unsigned int ch);
/* Draws the form centred on a rows × cols screen and places the cursor, made visible, at
 * the caret of the focused field: draw the form last, and curs_set(0) once it closes. */
void form_draw(struct form *f, int rows, int cols);

#endif
