/* mcp_schema — checks a tool's result against the outputSchema it declared: the JSON Schema
 * keywords servers use for results (type, properties, required, additionalProperties,
 * items, enum, const, the numeric and length bounds, anyOf/oneOf/allOf/not). Keywords
 * outside that set ($ref, pattern, format, …) are not checked: a value is never refused
 * for them. */
#ifndef PEVTUI_MCP_SCHEMA_H
#define PEVTUI_MCP_SCHEMA_H

#include <stdbool.h>

struct cJSON;

/* Whether `value` satisfies `schema` (both borrowed). false + *why: one sentence naming
 * where (`$.a.b[2]`) and what was wrong (caller frees). A schema that is not an object
 * (true, or nonsense) accepts everything; `false` accepts nothing. */
bool mcp_schema_check(const struct cJSON *schema, const struct cJSON *value, char **why);

#endif
