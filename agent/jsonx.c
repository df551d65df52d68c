/* jsonx — JSON helpers for untrusted model text. */
#include "config.h"

#include "jsonx.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "xalloc.h"

/* PLACEHOLDER: plan-parsing helper replaces this with the full extractor (fences, prose,
 * trailing-comma messages, depth limit). */
cJSON *jsonx_extract(const char *text, int max_depth, char **err)
{
	const char *start = strchr(text, '{');
	cJSON *obj;

	(void)max_depth;
	if (!start) {
		*err = xstrdup("no JSON object found in the answer");
		return NULL;
	}
	obj = cJSON_Parse(start);
	if (!obj) {
		*err = xstrdup("the JSON object in the answer is malformed");
		return NULL;
	}
	return obj;
}

const char *jsonx_str(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

bool jsonx_num(const cJSON *obj, const char *key, double *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(it))
		return false;
	*out = it->valuedouble;
	return true;
}

bool jsonx_bool(const cJSON *obj, const char *key, bool *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsBool(it))
		return false;
	*out = cJSON_IsTrue(it);
	return true;
}

char *jsonx_print(const cJSON *item)
{
	char *s, *d;

	if (!item)
		return xstrdup("null");
	s = cJSON_PrintUnformatted(item);
	if (!s)
		fatal("out of memory printing JSON");
	/* cJSON allocates with malloc by default; copy so callers can use free(). */
	d = xstrdup(s);
	cJSON_free(s);
	return d;
}
