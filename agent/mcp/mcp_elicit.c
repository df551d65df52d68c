/* mcp_elicit — a server's question as a form, and the answer as the content it asked for. */
#include "config.h"

#include "mcp_elicit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "mcp_schema.h"
#include "xalloc.h"

#define FIELDS_MAX 64

static const char *str_of(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* The default as the text a field shows ("" when none, or not of the field's type). */
static char *default_text(const cJSON *def, enum mcp_elicit_type t)
{
	if (cJSON_IsString(def) && t == MCP_ELICIT_STRING)
		return xstrdup(def->valuestring);
	if (cJSON_IsBool(def) && t == MCP_ELICIT_BOOLEAN)
		return xstrdup(cJSON_IsTrue(def) ? "true" : "false");
	if (cJSON_IsNumber(def) && (t == MCP_ELICIT_NUMBER || t == MCP_ELICIT_INTEGER)) {
		char *s;
		if (def->valuedouble == floor(def->valuedouble) && fabs(def->valuedouble) < 1e15)
			return xasprintf("%.0f", def->valuedouble); /* 30, not 3e+01 */
		s = xasprintf("%.17g", def->valuedouble);
		/* the shortest text that reads back the same */
		for (int p = 1; p < 17; p++) {
			char *t2 = xasprintf("%.*g", p, def->valuedouble);
			if (strtod(t2, NULL) == def->valuedouble) {
				free(s);
				return t2;
			}
			free(t2);
		}
		return s;
	}
	return xstrdup("");
}

/* An enum's values: `enum`, or oneOf/anyOf of {const} (SEP-1330's titled form). */
static void take_options(const cJSON *p, struct strvec *out)
{
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(p, "enum"), *it;
	const cJSON *one = cJSON_GetObjectItemCaseSensitive(p, "oneOf");

	if (!one)
		one = cJSON_GetObjectItemCaseSensitive(p, "anyOf");
	cJSON_ArrayForEach(it, (cJSON_IsArray(en) ? en : NULL)) if (cJSON_IsString(it))
	    strvec_push(out, it->valuestring);
	if (out->n)
		return;
	cJSON_ArrayForEach(it, (cJSON_IsArray(one) ? one : NULL))
	{
		const char *c = str_of(it, "const");
		if (c)
			strvec_push(out, c);
	}
}

bool mcp_elicit_parse(const char *schema_json, struct mcp_elicit_form *f, char **err)
{
	cJSON *s = schema_json ? cJSON_Parse(schema_json) : NULL;
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required"), *p;
	bool ok = true;

	memset(f, 0, sizeof(*f));
	if (!cJSON_IsObject(s) || (props && !cJSON_IsObject(props))) {
		*err = xstrdup("its requestedSchema is not an object schema");
		cJSON_Delete(s);
		return false;
	}
	f->schema_json = xstrdup(schema_json);
	f->v = xcalloc(FIELDS_MAX, sizeof(*f->v));
	cJSON_ArrayForEach(p, props)
	{
		const char *type = str_of(p, "type");
		struct mcp_elicit_field *fl;
		const cJSON *r;

		if (f->n == FIELDS_MAX) {
			*err = xasprintf("it asks for more than %d fields", FIELDS_MAX);
			ok = false;
			break;
		}
		fl = &f->v[f->n];
		if (!type || !strcmp(type, "string"))
			fl->type = MCP_ELICIT_STRING;
		else if (!strcmp(type, "number"))
			fl->type = MCP_ELICIT_NUMBER;
		else if (!strcmp(type, "integer"))
			fl->type = MCP_ELICIT_INTEGER;
		else if (!strcmp(type, "boolean"))
			fl->type = MCP_ELICIT_BOOLEAN;
		else {
			*err = xasprintf("its field \"%.60s\" is of type %.20s; a form holds "
			                 "strings, numbers and booleans only",
			                 p->string, type);
			ok = false;
			break;
		}
		f->n++;
		fl->name = xstrdup(p->string);
		fl->label = xstrdup(str_of(p, "title") ? str_of(p, "title") : p->string);
		fl->description = xstrdup(str_of(p, "description"));
		take_options(p, &fl->options);
		fl->value = default_text(cJSON_GetObjectItemCaseSensitive(p, "default"), fl->type);
		cJSON_ArrayForEach(
		    r, (cJSON_IsArray(req) ? req : NULL)) if (cJSON_IsString(r) &&
		                                              !strcmp(r->valuestring, p->string))
		    fl->required = true;
	}
	cJSON_Delete(s);
	if (!ok)
		mcp_elicit_release(f);
	return ok;
}

void mcp_elicit_release(struct mcp_elicit_form *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].name);
		free(f->v[i].label);
		free(f->v[i].description);
		free(f->v[i].value);
		strvec_clear(&f->v[i].options);
	}
	free(f->v);
	free(f->schema_json);
	memset(f, 0, sizeof(*f));
}

/* One field's text as its JSON value; NULL + *err. */
static cJSON *typed(const struct mcp_elicit_field *fl, const char *text, char **err)
{
	char *end;
	double d;

	switch (fl->type) {
	case MCP_ELICIT_BOOLEAN:
		if (!strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcmp(text, "y"))
			return cJSON_CreateTrue();
		if (!strcasecmp(text, "false") || !strcasecmp(text, "no") || !strcmp(text, "n"))
			return cJSON_CreateFalse();
		*err = xasprintf("%s: type true or false", fl->label);
		return NULL;
	case MCP_ELICIT_NUMBER:
	case MCP_ELICIT_INTEGER:
		errno = 0;
		d = strtod(text, &end);
		if (end == text || *end || errno || !isfinite(d)) {
			*err = xasprintf("%s: type a number", fl->label);
			return NULL;
		}
		if (fl->type == MCP_ELICIT_INTEGER && d != floor(d)) {
			*err = xasprintf("%s: type a whole number", fl->label);
			return NULL;
		}
		return cJSON_CreateNumber(d);
	case MCP_ELICIT_STRING: break;
	}
	for (size_t i = 0; i < fl->options.n; i++)
		if (!strcmp(fl->options.v[i], text))
			return cJSON_CreateString(text);
	if (fl->options.n) {
		*err = xasprintf("%s: type one of the choices shown", fl->label);
		return NULL;
	}
	return cJSON_CreateString(text);
}

bool mcp_elicit_content(const struct mcp_elicit_form *f, const char *const *values, char **json,
                        char **err)
{
	cJSON *o = cJSON_CreateObject(), *schema;
	char *why = NULL;

	for (size_t i = 0; i < f->n; i++) {
		const struct mcp_elicit_field *fl = &f->v[i];
		cJSON *v;

		if (!values[i] || !*values[i]) {
			if (fl->required) {
				*err = xasprintf("%s is required", fl->label);
				cJSON_Delete(o);
				return false;
			}
			continue;
		}
		if (!(v = typed(fl, values[i], err))) {
			cJSON_Delete(o);
			return false;
		}
		cJSON_AddItemToObject(o, fl->name, v);
	}
	/* The bounds the schema sets (lengths, minimum, …) as the server will check them. */
	schema = cJSON_Parse(f->schema_json);
	if (!mcp_schema_check(schema, o, &why)) {
		*err = xasprintf("the answer does not fit the server's form: %s", why);
		free(why);
		cJSON_Delete(schema);
		cJSON_Delete(o);
		return false;
	}
	cJSON_Delete(schema);
	*json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return true;
}

char *mcp_elicit_defaults(const struct mcp_elicit_form *f, char **err)
{
	const char **vals = xcalloc(f->n ? f->n : 1, sizeof(*vals));
	char *json = NULL;

	for (size_t i = 0; i < f->n; i++)
		vals[i] = f->v[i].value;
	if (!mcp_elicit_content(f, vals, &json, err))
		json = NULL;
	free(vals);
	return json;
}
