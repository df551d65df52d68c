/* jsonx — finding and parsing the one JSON object in untrusted model text, and reading its
 * values as tolerantly as their meaning allows. */
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

/* The member `key` of obj as cJSON_GetObjectItemCaseSensitive finds it (the first of that
 * name), or NULL; faster on objects read often. */
const struct cJSON *jsonx_get(const struct cJSON *obj, const char *key);

/* Typed getters for untrusted objects: NULL / false when absent or of another type (and
 * jsonx_num for a number that is not finite). */
const char *jsonx_str(const struct cJSON *obj, const char *key);
bool jsonx_num(const struct cJSON *obj, const char *key, double *out);
bool jsonx_bool(const struct cJSON *obj, const char *key, bool *out);

/*
 * Tolerant readers of values a model wrote, shared by every parser of model answers so a
 * shape is accepted (or refused) the same way everywhere. Each takes the value itself;
 * NULL and a JSON null both mean "absent".
 */

/* The member `key` of `obj`; NULL when absent or null (both mean "not given"). */
const struct cJSON *jsonx_field(const struct cJSON *obj, const char *key);

/* Free text from any value: a string as it is, anything else as its compact JSON text
 * ({"k":"v"}, [1,2], 3, true), because a model that writes structure where prose was asked
 * still said something worth keeping. NULL when absent. Caller frees. */
char *jsonx_as_text(const struct cJSON *it);

/* An identifier (step id, dependency, tool): a string as it is or a number in its JSON
 * spelling (1 → "1"). NULL for anything else: an object, array or boolean names nothing.
 * Caller frees. */
char *jsonx_as_id(const struct cJSON *it);

/* A boolean: true/false, or a string "true"/"false"/"yes"/"no" (any case, blanks around).
 * false, *out untouched, for anything else (including absent). */
bool jsonx_as_bool(const struct cJSON *it, bool *out);

/* A finite number: a JSON number, or a string holding exactly one ("0.85", blanks around).
 * With `percent`, a string ending in '%' is a percentage ("85%" → 0.85). false, *out
 * untouched, for anything else (including absent). */
bool jsonx_as_num(const struct cJSON *it, bool percent, double *out);

/* Index in names[0..n) of the lowercase word `s` is, ignoring case and blanks around it
 * (" High " is "high"); -1 when none or `s` is NULL. */
int jsonx_word(const char *s, const char *const *names, int n);

/* What a value is, for error sentences: "an object", "an array", "a string", "a number",
 * "a boolean", "null" (also for NULL). */
const char *jsonx_kind(const struct cJSON *it);

/* A value as an error sentence names it: a string quoted and cut like jsonx_snippet
 * ("\"maybe\""), anything else by its kind ("an object"). Caller frees. */
char *jsonx_describe(const struct cJSON *it, size_t max);

/* How deep jsonx_valid_line lets containers nest. */
#define JSONX_LINE_DEPTH 512

/* True when `it` holds containers nested more than `depth` deep (an object or array is
 * one level; a scalar none). cJSON reads JSON nested up to 1000 levels, and a journal line
 * that holds such a value one level down no longer loads. */
bool jsonx_deeper_than(const struct cJSON *it, int depth);

/* The JSON text an operator or a peer wrote, parsed to go into an event one level down:
 * NULL when it does not parse or nests deeper than a journal line may hold there (the
 * caller keeps it as a string then). Caller deletes. */
struct cJSON *jsonx_parse_for_event(const char *text);

/* True when s[0..n) is exactly one JSON value (RFC 8259: strings checked escape by escape,
 * \u surrogates paired; nesting up to JSONX_LINE_DEPTH) held on one line: no newline or carriage
 * return, not even as blank space between tokens, so that it can be embedded in a JSON
 * Lines record as it is. No allocation; linear in n. */
bool jsonx_valid_line(const char *s, size_t n);
/* The value of the four hex digits at p (as after "\\u"); -1 when they are not four hex
 * digits (p is read no further than the first that is not). */
long jsonx_hex4(const char *p);

/* Compact serialization; caller frees. NULL in → "null". */
char *jsonx_print(const struct cJSON *item);

/* At most `max` bytes of `s` fit for an error sentence: control characters become '?',
 * "..." marks a cut (never inside a UTF-8 character). NULL gives "". Caller frees. */
char *jsonx_snippet(const char *s, size_t max);

#endif
