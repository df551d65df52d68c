/* elicit_dialog — the form the operator fills in after `a` at the elicit gate, built from
 * the server's schema with its defaults filled (SEP-1034), whose answer goes back as the
 * typed content the server asked for (the dialog's lines: elicit_view.h). */
#ifndef PEVTUI_ELICIT_DIALOG_H
#define PEVTUI_ELICIT_DIALOG_H

#include <stdbool.h>

struct form;

/* The form for gate fields `gate_json` (caller frees), or NULL + *err. */
struct form *elicit_dialog_form(const char *gate_json, char **err);
/* The form's answer as content JSON (*json, caller frees); false + *err (a sentence for
 * the form's error line) when a field does not fit. */
bool elicit_dialog_content(const char *gate_json, const struct form *f, char **json, char **err);

#endif
