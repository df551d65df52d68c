/* mcp_elicit — a server's question (elicitation/create, form mode) as a form: the fields
 * its requestedSchema names (flat: string, number, integer, boolean, enum), each with the
 * schema's default filled in (SEP-1034), and the operator's text turned back into the
 * typed content the server asked for. */
#ifndef PEVTUI_MCP_ELICIT_H
#define PEVTUI_MCP_ELICIT_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

enum mcp_elicit_type { MCP_ELICIT_STRING, MCP_ELICIT_NUMBER, MCP_ELICIT_INTEGER, MCP_ELICIT_BOOLEAN };

struct mcp_elicit_field {
	char *name;        /* the property */
	char *label;       /* its title, else its name */
	char *description; /* NULL when none */
	enum mcp_elicit_type type;
	struct strvec options; /* an enum's values (empty: any text) */
	char *value;           /* the default as text ("" when none) */
	bool required;
};

struct mcp_elicit_form {
	struct mcp_elicit_field *v;
	size_t n;
	char *schema_json; /* the requestedSchema, for the final check */
};

/* Reads a requestedSchema (JSON text). false + *err (a sentence; caller frees) when it is
 * not a flat object of the kinds above. */
bool mcp_elicit_parse(const char *schema_json, struct mcp_elicit_form *f, char **err);
void mcp_elicit_release(struct mcp_elicit_form *f);

/* The content for `values` (one text a field, in order; "" leaves an optional field out)
 * as JSON text in *json (caller frees). false + *err naming the field and what to type. */
bool mcp_elicit_content(const struct mcp_elicit_form *f, const char *const *values, char **json,
                        char **err);
/* The content of the form as shown: every default filled in (caller frees), or NULL +
 * *err when a required field has no default. */
char *mcp_elicit_defaults(const struct mcp_elicit_form *f, char **err);

#endif
