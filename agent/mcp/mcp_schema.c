/* mcp_schema — a result checked against its tool's outputSchema (a JSON Schema subset). */
#include "config.h"

#include "mcp_schema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

#define DEPTH_MAX 64 /* deeper than this, a value is not looked into */

struct check {
	struct strbuf path; /* $.a[2].b, where the check is */
	char *why;          /* the first mismatch */
};

static const cJSON *kw(const cJSON *schema, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(schema, name);
}

static bool fail(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first mismatch, said with where it is. Returns false. */
static bool fail(struct check *c, const char *fmt, ...)
{
	va_list ap;
	char *what;

	if (c->why)
		return false;
	va_start(ap, fmt);
	what = xvasprintf(fmt, ap);
	va_end(ap);
	c->why = xasprintf("at %s: %s", c->path.buf, what);
	free(what);
	return false;
}

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNumber(v))
		return "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsArray(v))
		return "array";
	return "object";
}

static bool is_type(const cJSON *v, const char *t)
{
	if (!strcmp(t, "integer"))
		return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
		       isfinite(v->valuedouble);
	return !strcmp(type_of(v), t);
}

static bool type_ok(const cJSON *type, const cJSON *v)
{
	const cJSON *t;

	if (cJSON_IsString(type))
		return is_type(v, type->valuestring);
	if (!cJSON_IsArray(type))
		return true; /* not a type the check understands */
	cJSON_ArrayForEach(t,
	                   type) if (cJSON_IsString(t) && is_type(v, t->valuestring)) return true;
	return false;
}

/* Characters, not bytes (UTF-8). */
static double length(const char *s)
{
	double n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

static bool check(struct check *c, const cJSON *schema, const cJSON *v, int depth);

/* Checks `v` at path + `seg` (".name" or "[i]"). */
static bool check_at(struct check *c, const cJSON *schema, const cJSON *v, int depth,
                     const char *seg)
{
	size_t len = c->path.len;
	bool ok;

	strbuf_adds(&c->path, seg);
	ok = check(c, schema, v, depth + 1);
	c->path.len = len;
	c->path.buf[len] = '\0';
	return ok;
}

/* A sub-check whose failure is not the caller's verdict (anyOf, oneOf, not). */
static bool passes(struct check *c, const cJSON *schema, const cJSON *v, int depth)
{
	struct check sub = {.why = NULL};
	bool ok;

	strbuf_init(&sub.path);
	strbuf_adds(&sub.path, c->path.buf);
	ok = check(&sub, schema, v, depth + 1);
	strbuf_release(&sub.path);
	free(sub.why);
	return ok;
}

static bool check_number(struct check *c, const cJSON *s, const cJSON *v)
{
	const cJSON *b;
	double x = v->valuedouble;

	if (cJSON_IsNumber(b = kw(s, "minimum")) && x < b->valuedouble)
		return fail(c, "%g is below the minimum", x);
	if (cJSON_IsNumber(b = kw(s, "maximum")) && x > b->valuedouble)
		return fail(c, "%g is above the maximum", x);
	if (cJSON_IsNumber(b = kw(s, "exclusiveMinimum")) && x <= b->valuedouble)
		return fail(c, "%g is not above the exclusive minimum", x);
	if (cJSON_IsNumber(b = kw(s, "exclusiveMaximum")) && x >= b->valuedouble)
		return fail(c, "%g is not below the exclusive maximum", x);
	return true;
}

static bool check_object(struct check *c, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *props = kw(s, "properties"), *req = kw(s, "required");
	const cJSON *extra = kw(s, "additionalProperties"), *it;

	cJSON_ArrayForEach(it, (cJSON_IsArray(req) ? req : NULL))
	{
		if (cJSON_IsString(it) && !cJSON_GetObjectItemCaseSensitive(v, it->valuestring))
			return fail(c, "the required member \"%.60s\" is missing", it->valuestring);
	}
	cJSON_ArrayForEach(it, v)
	{
		const cJSON *ps = cJSON_IsObject(props)
		                      ? cJSON_GetObjectItemCaseSensitive(props, it->string)
		                      : NULL;
		char *seg;
		bool ok = true;

		if (!ps && cJSON_IsFalse(extra))
			return fail(c, "the member \"%.60s\" is not allowed", it->string);
		seg = xasprintf(".%.60s", it->string);
		if (ps)
			ok = check_at(c, ps, it, depth, seg);
		else if (cJSON_IsObject(extra))
			ok = check_at(c, extra, it, depth, seg);
		free(seg);
		if (!ok)
			return false;
	}
	return true;
}

static bool check_array(struct check *c, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *items = kw(s, "items"), *b, *it;
	double n = cJSON_GetArraySize(v);
	int i = 0;

	if (cJSON_IsNumber(b = kw(s, "minItems")) && n < b->valuedouble)
		return fail(c, "%g items are fewer than the minimum", n);
	if (cJSON_IsNumber(b = kw(s, "maxItems")) && n > b->valuedouble)
		return fail(c, "%g items are more than the maximum", n);
	if (!cJSON_IsObject(items))
		return true;
	cJSON_ArrayForEach(it, v)
	{
		char seg[32];
		snprintf(seg, sizeof(seg), "[%d]", i++);
		if (!check_at(c, items, it, depth, seg))
			return false;
	}
	return true;
}

static bool check_combinators(struct check *c, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *sub, *it;
	int n = 0;

	cJSON_ArrayForEach(it, (cJSON_IsArray(sub = kw(s, "allOf")) ? sub : NULL))
	{
		if (!check(c, it, v, depth + 1))
			return false;
	}
	if (cJSON_IsArray(sub = kw(s, "anyOf"))) {
		bool any = false;
		cJSON_ArrayForEach(it, sub) any = any || passes(c, it, v, depth);
		if (!any)
			return fail(c, "the value matches none of anyOf's schemas");
	}
	if (cJSON_IsArray(sub = kw(s, "oneOf"))) {
		cJSON_ArrayForEach(it, sub) n += passes(c, it, v, depth);
		if (n != 1)
			return fail(c, "the value matches %d of oneOf's schemas, not one", n);
	}
	if (cJSON_IsObject(sub = kw(s, "not")) && passes(c, sub, v, depth))
		return fail(c, "the value matches the schema under not");
	return true;
}

static bool check(struct check *c, const cJSON *s, const cJSON *v, int depth)
{
	const cJSON *type, *en, *b;

	if (cJSON_IsFalse(s))
		return fail(c, "no value is allowed here");
	if (!cJSON_IsObject(s) || depth > DEPTH_MAX)
		return true;
	type = kw(s, "type");
	if (type && !type_ok(type, v)) {
		char *want = cJSON_PrintUnformatted(type);
		fail(c, "expected type %s, got %s", want, type_of(v));
		free(want);
		return false;
	}
	if ((en = kw(s, "enum")) && cJSON_IsArray(en)) {
		bool found = false;
		cJSON_ArrayForEach(b, en) found = found || cJSON_Compare(b, v, true);
		if (!found)
			return fail(c, "the value is not one of the enum's");
	}
	if ((b = kw(s, "const")) && !cJSON_Compare(b, v, true))
		return fail(c, "the value is not the const");
	if (cJSON_IsNumber(v) && !check_number(c, s, v))
		return false;
	if (cJSON_IsString(v)) {
		double n = length(v->valuestring);
		if (cJSON_IsNumber(b = kw(s, "minLength")) && n < b->valuedouble)
			return fail(c, "a string of %g characters is shorter than the minimum", n);
		if (cJSON_IsNumber(b = kw(s, "maxLength")) && n > b->valuedouble)
			return fail(c, "a string of %g characters is longer than the maximum", n);
	}
	if (cJSON_IsObject(v) && !check_object(c, s, v, depth))
		return false;
	if (cJSON_IsArray(v) && !check_array(c, s, v, depth))
		return false;
	return check_combinators(c, s, v, depth);
}

bool mcp_schema_check(const cJSON *schema, const cJSON *value, char **why)
{
	struct check c = {.why = NULL};
	bool ok;

	strbuf_init(&c.path);
	strbuf_adds(&c.path, "$");
	ok = check(&c, schema, value, 0);
	strbuf_release(&c.path);
	if (ok) {
		free(c.why);
		return true;
	}
	*why = c.why ? c.why : xstrdup("the value does not match the schema");
	return false;
}
