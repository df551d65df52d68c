/* jsonx — finding and parsing the one JSON object in untrusted model text. */
#ifndef PEVTUI_JSONX_H
#define PEVTUI_JSONX_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;

/*
 * Finds the JSON object in model text: a ```json (or bare ```) fenced block wins, else
 * the first balanced {...} outside strings. Parses it with cJSON, refusing nesting deeper
 * than `max_depth`. On failure returns NULL and sets *err to one sentence the model or
 * operator can act on, e.g. "trailing comma before '}' at line 4, column 3" or
 * "no JSON object found in the answer". Caller owns the tree and *err.
 */
struct cJSON *jsonx_extract(const char *text, int max_depth, char **err);

/* Typed getters for untrusted objects: NULL / false when absent or of another type. */
const char *jsonx_str(const struct cJSON *obj, const char *key);
bool jsonx_num(const struct cJSON *obj, const char *key, double *out);
bool jsonx_bool(const struct cJSON *obj, const char *key, bool *out);

/* Compact serialization; caller frees. NULL in → "null". */
char *jsonx_print(const struct cJSON *item);

/* At most `max` bytes of `s` fit for an error sentence: control characters become '?',
 * "..." marks a cut (never inside a UTF-8 character). NULL gives "". Caller frees. */
char *jsonx_snippet(const char *s, size_t max);

#endif
