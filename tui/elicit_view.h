/* elicit_view — an MCP server's question at the elicit gate as the dialog's lines: the
 * server, its message, the form's fields with the schema's defaults (SEP-1034). */
#ifndef PEVTUI_ELICIT_VIEW_H
#define PEVTUI_ELICIT_VIEW_H

#include <stdbool.h>

#include "mcp_elicit.h"

struct cJSON;
struct linestore;

/* The dialog's body for the gate's fields `o` (server, message, schema). */
void elicit_view_body(struct linestore *body, const struct cJSON *o);
/* The form of gate fields `o` (its schema); false + *err when pevtui cannot show it. */
bool elicit_view_parse(const struct cJSON *o, struct mcp_elicit_form *f, char **err);

#endif
