/*
 * schemas — the tools' JSON schemas parsed and printed once per run rather than once per
 * model call: a tool's schema is the same text in every executor call. Likewise the
 * other texts every call repeats, written once as JSON strings. Shared by every
 * provider's request body (the wire bodies and the simulated one). Holds text only, no
 * cJSON tree, so any thread may use it.
 */
#ifndef PEVTUI_SCHEMAS_H
#define PEVTUI_SCHEMAS_H

#include <stdbool.h>

struct schemas;

struct schemas *schemas_new(void);
void schemas_free(struct schemas *s); /* NULL ok */

/*
 * The schema text `src` as cJSON_PrintUnformatted reprints it, or NULL when it is not
 * JSON (or `src` is NULL); *is_object tells whether it is a JSON object. Parsed the first
 * time `s` meets that text; the text returned lives as long as `s`. Any thread.
 */
const char *schemas_print(struct schemas *s, const char *src, bool *is_object);

/* The same for an API that insists on an object (both wire APIs): anything else goes as
 * the empty schema {"type":"object"}. Never NULL. */
const char *schemas_object(struct schemas *s, const char *src);

/*
 * `src` as a JSON string, quotes included, as cJSON prints it (strbuf_add_json): for the
 * texts every call repeats (a system prompt, a tool's name and description). Written the
 * first time `s` meets that text; the text returned lives as long as `s`. NULL when `src`
 * is NULL or the run keeps too many such texts already (the caller writes it itself).
 * Any thread.
 */
const char *schemas_string(struct schemas *s, const char *src);

#endif
