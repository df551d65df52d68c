/* plan — the structured plan of DESIGN.md: model, JSON in and out, validation. */
#include "config.h"

#include "plan.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "strbuf.h"
#include "strindex.h"
#include "xalloc.h"

/*
 * Parsing policy: be liberal in what a model writes, refuse only what cannot be understood.
 * Tolerated, because a real model does it and the meaning is clear:
 *  - structure where text was asked: any free-text field (goal, context, name, description,
 *    rollback_strategy) and any item of a text list (acceptance_criteria, expected_outputs,
 *    success_criteria) may be an object, array, number or boolean; it is kept as its
 *    compact JSON text ({"key":"value"}, 3, true);
 *  - numeric ids: step_id and dependencies may be numbers (1 → "1", 2.5 → "2.5");
 *  - `null` for any optional field or list item (absent; null list items are dropped);
 *    missing optional lists (empty); a missing or empty `name` (the step_id is used); a
 *    missing description/context/rollback_strategy (""); a missing estimated_complexity
 *    (medium); complexity in any case with blanks around it (" HIGH " is high); missing
 *    action `params` ({}); a numeric action `tool`; unknown extra fields (ignored).
 * Refused, with the field path named: a missing or empty goal; a missing or empty step_id,
 * or one that is an object, array or boolean (and the same for a dependency); steps that
 * are not an array of objects; a list that is not an array; actions that are not
 * {tool, params} objects or whose params is not an object; an unknown complexity.
 * The readers live in jsonx.c, shared with result.c. Array indexes in paths are 0-based,
 * as in JSON tooling ("steps[0]" is the first step).
 */

/* A hostile plan could otherwise produce one sentence per bad element. */
#define MAX_ERRORS 25
#define SNIP 40

struct perr {
	struct strvec *errors;
	size_t n;
	size_t dropped;
};

static void perr_add(struct perr *pe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void perr_add(struct perr *pe, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb;

	pe->n++;
	if (pe->n > MAX_ERRORS) {
		pe->dropped++;
		return;
	}
	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push(pe->errors, sb.buf);
	strbuf_release(&sb);
}

static void perr_finish(struct perr *pe)
{
	if (pe->dropped)
		strvec_pushf(pe->errors, "%zu more problems were not listed.", pe->dropped);
}

const char *complexity_name(enum complexity c)
{
	switch (c) {
	case CX_LOW: return "low";
	case CX_MEDIUM: return "medium";
	case CX_HIGH: return "high";
	}
	return "medium";
}

int complexity_from_name(const char *s)
{
	static const char *const names[] = {"low", "medium", "high"};

	return jsonx_word(s, names, 3);
}

struct plan *plan_new(void)
{
	return xcalloc(1, sizeof(struct plan));
}

void plan_step_free_fields(struct plan_step *s)
{
	if (!s)
		return;
	free(s->id);
	free(s->name);
	free(s->description);
	for (size_t i = 0; i < s->n_actions; i++) {
		free(s->actions[i].tool);
		free(s->actions[i].params_json);
	}
	free(s->actions);
	strvec_clear(&s->criteria);
	strvec_clear(&s->expected_outputs);
	strvec_clear(&s->deps);
	memset(s, 0, sizeof(*s));
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	free(p->goal);
	free(p->context);
	for (size_t i = 0; i < p->n_steps; i++)
		plan_step_free_fields(&p->steps[i]);
	free(p->steps);
	strvec_clear(&p->success_criteria);
	free(p->rollback_strategy);
	free(p);
}

static void strvec_copy(struct strvec *dst, const struct strvec *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		strvec_push(dst, src->v[i]);
}

void plan_step_copy(struct plan_step *dst, const struct plan_step *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->id = xstrdup(src->id);
	dst->name = xstrdup(src->name);
	dst->description = xstrdup(src->description);
	if (src->n_actions) {
		dst->actions = xcalloc(src->n_actions, sizeof(*dst->actions));
		for (size_t i = 0; i < src->n_actions; i++) {
			dst->actions[i].tool = xstrdup(src->actions[i].tool);
			dst->actions[i].params_json = xstrdup(src->actions[i].params_json);
		}
	}
	dst->n_actions = src->n_actions;
	strvec_copy(&dst->criteria, &src->criteria);
	strvec_copy(&dst->expected_outputs, &src->expected_outputs);
	strvec_copy(&dst->deps, &src->deps);
	dst->complexity = src->complexity;
}

struct plan *plan_clone(const struct plan *p)
{
	struct plan *c;

	if (!p)
		return NULL;
	c = plan_new();
	c->goal = xstrdup(p->goal);
	c->context = xstrdup(p->context);
	if (p->n_steps) {
		c->steps = xcalloc(p->n_steps, sizeof(*c->steps));
		for (size_t i = 0; i < p->n_steps; i++)
			plan_step_copy(&c->steps[i], &p->steps[i]);
	}
	c->n_steps = p->n_steps;
	strvec_copy(&c->success_criteria, &p->success_criteria);
	c->rollback_strategy = xstrdup(p->rollback_strategy);
	return c;
}

/* NULL and "" are the same text: a fresh struct and a parsed one must compare equal. */
static bool text_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool strvec_eq(const struct strvec *a, const struct strvec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		if (!text_eq(a->v[i], b->v[i]))
			return false;
	}
	return true;
}

/* Params compare as JSON values, so {"a": 1} equals {"a":1}. */
static bool params_eq(const char *a, const char *b)
{
	cJSON *ja, *jb;
	bool eq;

	if (text_eq(a, b))
		return true;
	ja = cJSON_Parse(a ? a : "{}");
	jb = cJSON_Parse(b ? b : "{}");
	eq = ja && jb && cJSON_Compare(ja, jb, 1);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return eq;
}

bool plan_step_equal(const struct plan_step *a, const struct plan_step *b)
{
	if (!text_eq(a->id, b->id) || !text_eq(a->name, b->name) ||
	    !text_eq(a->description, b->description) || a->n_actions != b->n_actions ||
	    a->complexity != b->complexity || !strvec_eq(&a->criteria, &b->criteria) ||
	    !strvec_eq(&a->expected_outputs, &b->expected_outputs) ||
	    !strvec_eq(&a->deps, &b->deps))
		return false;
	for (size_t i = 0; i < a->n_actions; i++) {
		if (!text_eq(a->actions[i].tool, b->actions[i].tool) ||
		    !params_eq(a->actions[i].params_json, b->actions[i].params_json))
			return false;
	}
	return true;
}

bool plan_equal(const struct plan *a, const struct plan *b)
{
	if (!a || !b)
		return a == b;
	if (!text_eq(a->goal, b->goal) || !text_eq(a->context, b->context) ||
	    !text_eq(a->rollback_strategy, b->rollback_strategy) || a->n_steps != b->n_steps ||
	    !strvec_eq(&a->success_criteria, &b->success_criteria))
		return false;
	for (size_t i = 0; i < a->n_steps; i++) {
		if (!plan_step_equal(&a->steps[i], &b->steps[i]))
			return false;
	}
	return true;
}

int plan_find(const struct plan *p, const char *id)
{
	if (!p || !id)
		return -1;
	for (size_t i = 0; i < p->n_steps; i++) {
		if (p->steps[i].id && strcmp(p->steps[i].id, id) == 0)
			return (int)i;
	}
	return -1;
}

struct plan_ids {
	const struct plan *p;
	struct strindex ix;
};

static const char *step_id_at(const void *ctx, size_t i)
{
	return ((const struct plan *)ctx)->steps[i].id;
}

struct plan_ids *plan_ids_new(const struct plan *p)
{
	struct plan_ids *ids = xcalloc(1, sizeof(*ids));

	ids->p = p;
	for (size_t i = 0; p && i < p->n_steps; i++)
		if (p->steps[i].id) /* plan_find never matches one without; a repeated id keeps
				       its first step */
			strindex_add(&ids->ix, p->steps[i].id, i, step_id_at, p);
	return ids;
}

void plan_ids_free(struct plan_ids *ids)
{
	if (!ids)
		return;
	strindex_free(&ids->ix);
	free(ids);
}

int plan_ids_find(const struct plan_ids *ids, const char *id)
{
	size_t i;

	if (!ids || !strindex_get(&ids->ix, id, step_id_at, ids->p, &i))
		return -1;
	return (int)i;
}

/* ---- JSON in ----------------------------------------------------------------------- */

static char *path_of(const char *prefix, const char *key)
{
	if (!prefix || !*prefix)
		return xstrdup(key);
	return xasprintf("%s.%s", prefix, key);
}

/* Free text: *out is set (never NULL on success). `def` NULL means required. Any value
 * is text (jsonx_as_text), so the only failure is a missing required field. */
static bool get_text(const cJSON *obj, const char *prefix, const char *key, const char *def,
                     char **out, struct perr *pe)
{
	char *path;

	*out = jsonx_as_text(jsonx_field(obj, key));
	if (*out)
		return true;
	if (def) {
		*out = xstrdup(def);
		return true;
	}
	path = path_of(prefix, key);
	perr_add(pe, "%s is missing.", path);
	free(path);
	return false;
}

/* An identifier (step_id, tool): a string or a number. Required. */
static bool get_id(const cJSON *obj, const char *prefix, const char *key, char **out,
                   struct perr *pe)
{
	const cJSON *it = jsonx_field(obj, key);
	char *path;

	*out = jsonx_as_id(it);
	if (*out && **out)
		return true;
	path = path_of(prefix, key);
	if (!it)
		perr_add(pe, "%s is missing.", path);
	else if (*out)
		perr_add(pe, "%s must not be empty.", path);
	else
		perr_add(pe, "%s must be a string or a number, not %s.", path, jsonx_kind(it));
	free(path);
	free(*out);
	*out = NULL;
	return false;
}

/* A list of texts, or of ids when `ids`. Items that cannot be read are each named. */
static bool get_list(const cJSON *obj, const char *prefix, const char *key, bool ids,
                     struct strvec *out, struct perr *pe)
{
	const cJSON *it = jsonx_field(obj, key);
	const cJSON *el;
	size_t i = 0;
	bool ok = true;
	char *path;

	memset(out, 0, sizeof(*out));
	if (!it)
		return true;
	path = path_of(prefix, key);
	if (!cJSON_IsArray(it)) {
		perr_add(pe, "%s must be an array of %s.", path,
		         ids ? "step ids (strings or numbers)" : "strings");
		free(path);
		return false;
	}
	for (el = it->child; el; el = el->next, i++) {
		char *v;

		if (cJSON_IsNull(el))
			continue;
		v = ids ? jsonx_as_id(el) : jsonx_as_text(el);
		if (!v) {
			perr_add(pe, "%s[%zu] must be a step id (a string or a number), not %s.",
			         path, i, jsonx_kind(el));
			ok = false;
			continue;
		}
		strvec_push(out, v);
		free(v);
	}
	free(path);
	if (!ok)
		strvec_clear(out);
	return ok;
}

static bool parse_actions(const cJSON *obj, const char *prefix, struct plan_step *s,
                          struct perr *pe)
{
	const cJSON *it = jsonx_field(obj, "actions");
	const cJSON *el;
	size_t cap = 0, i = 0;
	bool ok = true;

	if (!it)
		return true;
	if (!cJSON_IsArray(it)) {
		char *path = path_of(prefix, "actions");

		perr_add(pe, "%s must be an array of {tool, params} objects.", path);
		free(path);
		return false;
	}
	for (el = it->child; el; el = el->next) {
		char *ap = xasprintf("%s%sactions[%zu]", prefix, *prefix ? "." : "", i++);
		const cJSON *params;
		struct plan_action act = {NULL, NULL};

		if (!cJSON_IsObject(el)) {
			perr_add(pe, "%s must be an object with \"tool\" and \"params\".", ap);
			ok = false;
			free(ap);
			continue;
		}
		if (!get_id(el, ap, "tool", &act.tool, pe)) {
			ok = false;
			free(ap);
			continue;
		}
		params = jsonx_field(el, "params");
		if (params && !cJSON_IsObject(params)) {
			perr_add(pe, "%s.params must be an object, not %s.", ap,
			         jsonx_kind(params));
			free(act.tool);
			ok = false;
			free(ap);
			continue;
		}
		act.params_json = params ? jsonx_print(params) : xstrdup("{}");
		s->actions = xgrow(s->actions, &cap, s->n_actions + 1, sizeof(*s->actions));
		s->actions[s->n_actions++] = act;
		free(ap);
	}
	return ok;
}

static bool parse_step(const cJSON *obj, const char *prefix, struct plan_step *s, struct perr *pe)
{
	size_t before = pe->n;
	const cJSON *cx;

	memset(s, 0, sizeof(*s));
	get_id(obj, prefix, "step_id", &s->id, pe);
	get_text(obj, prefix, "name", "", &s->name, pe);
	if (!*s->name) {
		free(s->name);
		s->name = xstrdup(s->id ? s->id : "");
	}
	get_text(obj, prefix, "description", "", &s->description, pe);
	parse_actions(obj, prefix, s, pe);
	get_list(obj, prefix, "acceptance_criteria", false, &s->criteria, pe);
	get_list(obj, prefix, "expected_outputs", false, &s->expected_outputs, pe);
	get_list(obj, prefix, "dependencies", true, &s->deps, pe);
	s->complexity = CX_MEDIUM;
	cx = jsonx_field(obj, "estimated_complexity");
	if (cx) {
		int c = cJSON_IsString(cx) ? complexity_from_name(cx->valuestring) : -1;
		char *path = path_of(prefix, "estimated_complexity");

		if (c < 0 && cJSON_IsString(cx)) {
			char *sn = jsonx_snippet(cx->valuestring, SNIP);

			perr_add(pe, "%s must be low, medium or high, not \"%s\".", path, sn);
			free(sn);
		} else if (c < 0) {
			perr_add(pe, "%s must be one of the strings low, medium or high, not %s.",
			         path, jsonx_kind(cx));
		} else {
			s->complexity = (enum complexity)c;
		}
		free(path);
	}
	if (pe->n != before) {
		plan_step_free_fields(s);
		return false;
	}
	return true;
}

bool plan_step_from_json(const cJSON *obj, struct plan_step *out, struct strvec *errors)
{
	struct strvec local = STRVEC_INIT;
	struct perr pe = {errors ? errors : &local, 0, 0};
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(obj)) {
		perr_add(&pe, "The step must be a JSON object.");
		ok = false;
	} else {
		ok = parse_step(obj, "", out, &pe);
	}
	perr_finish(&pe);
	strvec_clear(&local);
	return ok;
}

struct plan *plan_from_json(const cJSON *obj, struct strvec *errors)
{
	struct strvec local = STRVEC_INIT;
	struct perr pe = {errors ? errors : &local, 0, 0};
	struct plan *p;
	const cJSON *steps, *el;
	size_t cap = 0, i = 0;

	if (!cJSON_IsObject(obj)) {
		perr_add(&pe, "The plan must be a JSON object.");
		strvec_clear(&local);
		return NULL;
	}
	p = plan_new();
	if (get_text(obj, "", "goal", NULL, &p->goal, &pe) && !*p->goal)
		perr_add(&pe, "goal must not be empty.");
	get_text(obj, "", "context", "", &p->context, &pe);
	steps = jsonx_field(obj, "steps");
	if (!steps) {
		perr_add(&pe, "steps is missing (an array of step objects).");
	} else if (!cJSON_IsArray(steps)) {
		perr_add(&pe, "steps must be an array of step objects, not %s.", jsonx_kind(steps));
	} else {
		for (el = steps->child; el; el = el->next) {
			char *sp = xasprintf("steps[%zu]", i++);
			struct plan_step s;

			if (!cJSON_IsObject(el))
				perr_add(&pe, "%s must be an object, not %s.", sp, jsonx_kind(el));
			else if (parse_step(el, sp, &s, &pe)) {
				p->steps = xgrow(p->steps, &cap, p->n_steps + 1, sizeof(*p->steps));
				p->steps[p->n_steps++] = s;
			}
			free(sp);
		}
	}
	get_list(obj, "", "success_criteria", false, &p->success_criteria, &pe);
	get_text(obj, "", "rollback_strategy", "", &p->rollback_strategy, &pe);
	perr_finish(&pe);
	strvec_clear(&local);
	if (pe.n) {
		plan_free(p);
		return NULL;
	}
	return p;
}

struct plan *plan_parse(const char *text, struct strvec *errors)
{
	char *err = NULL;
	cJSON *obj = jsonx_extract(text, PLAN_MAX_JSON_DEPTH, &err);
	struct plan *p;

	if (!obj) {
		if (errors)
			strvec_pushf(errors, "%s.", err);
		free(err);
		return NULL;
	}
	p = plan_from_json(obj, errors);
	cJSON_Delete(obj);
	return p;
}

/* ---- validation ------------------------------------------------------------------- */

static bool id_well_formed(const char *id)
{
	if (!id || !*id)
		return false;
	for (const char *c = id; *c; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
			return false;
	}
	return true;
}

/* Ids sorted once, so lookups stay O(log n) even for a hostile plan with many steps. */
struct id_index {
	const struct plan *p;
	size_t *order; /* step indexes sorted by id, then by index */
	size_t n;
};

/* A stable merge sort: qsort has no context argument in C11 and a global would not be
 * thread-safe. */
static void merge_sort(size_t *a, size_t *tmp, size_t n, const struct plan *p)
{
	if (n < 2)
		return;
	merge_sort(a, tmp, n / 2, p);
	merge_sort(a + n / 2, tmp, n - n / 2, p);
	size_t i = 0, j = n / 2, k = 0;

	while (i < n / 2 && j < n) {
		const char *x = p->steps[a[i]].id ? p->steps[a[i]].id : "";
		const char *y = p->steps[a[j]].id ? p->steps[a[j]].id : "";

		tmp[k++] = strcmp(x, y) <= 0 ? a[i++] : a[j++];
	}
	while (i < n / 2)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

static void index_build(struct id_index *ix, const struct plan *p)
{
	size_t *tmp;

	ix->p = p;
	ix->n = p->n_steps;
	ix->order = xcalloc(p->n_steps ? p->n_steps : 1, sizeof(size_t));
	tmp = xcalloc(p->n_steps ? p->n_steps : 1, sizeof(size_t));
	for (size_t i = 0; i < p->n_steps; i++)
		ix->order[i] = i;
	/* Stable, so the first step with a given id comes first. */
	merge_sort(ix->order, tmp, p->n_steps, p);
	free(tmp);
}

/* First step (in plan order) with this id, or -1. */
static long index_find(const struct id_index *ix, const char *id)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = ix->p->steps[ix->order[mid]].id;

		if (strcmp(m ? m : "", id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && text_eq(ix->p->steps[ix->order[lo]].id, id))
		return (long)ix->order[lo];
	return -1;
}

/* The checks below name a field by a path ("steps[3].name") only when it breaks a
 * bound: a valid plan, the common case, formats none. */

static void check_text_at(struct perr *pe, const char *path, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	if (len > PLAN_MAX_TEXT)
		perr_add(pe, "%s is %zu bytes long; the limit is %d.", path, len, PLAN_MAX_TEXT);
}

char *plan_task_error(const char *task)
{
	size_t len = task ? strlen(task) : 0;

	if (len <= PLAN_MAX_TEXT)
		return NULL;
	return xasprintf("the task is %zu bytes long; the limit is %d. Put a long brief in a "
			 "file in the workspace (--workspace DIR) and give a short task that "
			 "names it, e.g. \"Follow the brief in brief.md\": the planner reads it "
			 "there",
			 len, PLAN_MAX_TEXT);
}

static bool text_too_long(const char *s)
{
	return s && strlen(s) > PLAN_MAX_TEXT;
}

static void check_text(struct perr *pe, const char *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void check_text(struct perr *pe, const char *s, const char *fmt, ...)
{
	va_list ap;
	char *path;

	if (!text_too_long(s))
		return;
	va_start(ap, fmt);
	path = xvasprintf(fmt, ap);
	va_end(ap);
	check_text_at(pe, path, s);
	free(path);
}

static void check_list(struct perr *pe, const struct strvec *sv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void check_list(struct perr *pe, const struct strvec *sv, const char *fmt, ...)
{
	bool bad = sv->n > PLAN_MAX_LIST;
	va_list ap;
	char *path;

	for (size_t i = 0; !bad && i < sv->n; i++)
		bad = text_too_long(sv->v[i]);
	if (!bad)
		return;
	va_start(ap, fmt);
	path = xvasprintf(fmt, ap);
	va_end(ap);
	if (sv->n > PLAN_MAX_LIST)
		perr_add(pe, "%s has %zu entries; the limit is %d.", path, sv->n, PLAN_MAX_LIST);
	for (size_t i = 0; i < sv->n && i < PLAN_MAX_LIST; i++) {
		char *ep;

		if (!text_too_long(sv->v[i]))
			continue;
		ep = xasprintf("%s[%zu]", path, i);
		check_text_at(pe, ep, sv->v[i]);
		free(ep);
	}
	free(path);
}

/* The snippet of `id` for an error sentence, made on first use into *cache. */
static const char *id_snip(char **cache, const char *id)
{
	if (!*cache)
		*cache = jsonx_snippet(id, SNIP);
	return *cache;
}

static void check_step(struct perr *pe, const struct plan *p, size_t i, const struct id_index *ix)
{
	const struct plan_step *s = &p->steps[i];
	char *id = NULL; /* its snippet, made for the first sentence that names it */
	long first;

	if (!s->id || !*s->id) {
		perr_add(pe, "steps[%zu].step_id is empty.", i);
	} else if (strlen(s->id) > PLAN_MAX_ID) {
		perr_add(pe, "steps[%zu].step_id \"%s\" is longer than %d bytes.", i,
		         id_snip(&id, s->id), PLAN_MAX_ID);
	} else if (!id_well_formed(s->id)) {
		perr_add(pe,
		         "steps[%zu].step_id \"%s\" may only hold letters, digits, '_', '-' and "
		         "'.'.",
		         i, id_snip(&id, s->id));
	}
	if (s->id && *s->id) {
		first = index_find(ix, s->id);
		if (first >= 0 && (size_t)first != i)
			perr_add(pe, "steps[%zu].step_id \"%s\" repeats the id of steps[%ld].", i,
			         id_snip(&id, s->id), first);
	}
	check_text(pe, s->name, "steps[%zu].name", i);
	check_text(pe, s->description, "steps[%zu].description", i);
	if (s->n_actions > PLAN_MAX_LIST)
		perr_add(pe, "steps[%zu].actions has %zu entries; the limit is %d.", i,
		         s->n_actions, PLAN_MAX_LIST);
	for (size_t a = 0; a < s->n_actions && a < PLAN_MAX_LIST; a++) {
		check_text(pe, s->actions[a].tool, "steps[%zu].actions[%zu].tool", i, a);
		check_text(pe, s->actions[a].params_json, "steps[%zu].actions[%zu].params", i, a);
	}
	check_list(pe, &s->criteria, "steps[%zu].acceptance_criteria", i);
	check_list(pe, &s->expected_outputs, "steps[%zu].expected_outputs", i);
	check_list(pe, &s->deps, "steps[%zu].dependencies", i);
	for (size_t d = 0; d < s->deps.n; d++) {
		if (text_eq(s->deps.v[d], s->id)) {
			perr_add(pe,
			         "Step \"%s\" depends on itself (steps[%zu].dependencies[%zu]).",
			         id_snip(&id, s->id), i, d);
		} else if (index_find(ix, s->deps.v[d]) < 0) {
			char *dep = jsonx_snippet(s->deps.v[d], SNIP);

			perr_add(pe,
			         "Step \"%s\" depends on unknown step \"%s\" "
			         "(steps[%zu].dependencies[%zu]).",
			         id_snip(&id, s->id), dep, i, d);
			free(dep);
		}
	}
	free(id);
}

/*
 * Cycles, by an iterative depth-first search in plan order (dependencies in listed order),
 * so the same plan always gives the same sentences. An edge a -> b means "a depends on b".
 * Each cycle is named starting from its earliest step in plan order. Self-dependencies are
 * reported by check_step and skipped here.
 */
static void check_cycles(struct perr *pe, const struct plan *p, const struct id_index *ix)
{
	size_t n = p->n_steps;
	unsigned char *color = xcalloc(n ? n : 1, 1); /* 0 new, 1 on stack, 2 done */
	size_t *stack = xcalloc(n ? n : 1, sizeof(size_t));
	size_t *next = xcalloc(n ? n : 1, sizeof(size_t)); /* next dependency to follow */
	long *pos = xcalloc(n ? n : 1, sizeof(long));      /* place on the stack */

	for (size_t root = 0; root < n; root++) {
		size_t top = 0;

		if (color[root])
			continue;
		stack[top++] = root;
		color[root] = 1;
		pos[root] = 0;
		next[root] = 0;
		while (top) {
			size_t v = stack[top - 1];
			const struct plan_step *s = &p->steps[v];
			long w;

			if (next[v] >= s->deps.n) {
				color[v] = 2;
				top--;
				continue;
			}
			w = index_find(ix, s->deps.v[next[v]++]);
			if (w < 0 || (size_t)w == v)
				continue;
			if (color[w] == 0) {
				color[w] = 1;
				next[w] = 0;
				pos[w] = (long)top;
				stack[top++] = (size_t)w;
			} else if (color[w] == 1) {
				size_t from = (size_t)pos[w], len = top - from, start = 0;
				struct strbuf sb;

				for (size_t k = 1; k < len; k++) {
					if (stack[from + k] < stack[from + start])
						start = k;
				}
				strbuf_init(&sb);
				for (size_t k = 0; k <= len; k++) {
					size_t sidx = stack[from + (start + k) % len];
					char *sn = jsonx_snippet(p->steps[sidx].id, SNIP);

					strbuf_addf(&sb, "%s%s", k ? " -> " : "", sn);
					free(sn);
				}
				perr_add(pe, "dependency cycle: %s.", sb.buf);
				strbuf_release(&sb);
			}
		}
	}
	free(color);
	free(stack);
	free(next);
	free(pos);
}

bool plan_validate(const struct plan *p, struct strvec *errors)
{
	struct strvec local = STRVEC_INIT;
	struct perr pe = {errors ? errors : &local, 0, 0};
	struct id_index ix;

	if (!p) {
		perr_add(&pe, "There is no plan.");
		perr_finish(&pe);
		strvec_clear(&local);
		return false;
	}
	if (!p->goal || !*p->goal)
		perr_add(&pe, "goal must not be empty.");
	check_text_at(&pe, "goal", p->goal);
	check_text_at(&pe, "context", p->context);
	check_list(&pe, &p->success_criteria, "success_criteria");
	check_text_at(&pe, "rollback_strategy", p->rollback_strategy);
	if (p->n_steps == 0)
		perr_add(&pe, "The plan has no steps; it needs at least one.");
	if (p->n_steps > PLAN_MAX_STEPS)
		perr_add(&pe, "The plan has %zu steps; the limit is %d.", p->n_steps,
		         PLAN_MAX_STEPS);
	index_build(&ix, p);
	for (size_t i = 0; i < p->n_steps; i++)
		check_step(&pe, p, i, &ix);
	check_cycles(&pe, p, &ix);
	free(ix.order);
	perr_finish(&pe);
	strvec_clear(&local);
	return pe.n == 0;
}

/* ---- JSON out --------------------------------------------------------------------- */

static cJSON *str_array(const struct strvec *sv)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < sv->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(sv->v[i] ? sv->v[i] : ""));
	return a;
}

static void add_text(cJSON *o, const char *key, const char *s)
{
	cJSON_AddItemToObject(o, key, cJSON_CreateString(s ? s : ""));
}

cJSON *plan_step_to_json(const struct plan_step *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *acts = cJSON_CreateArray();

	if (!o || !acts)
		fatal("out of memory building JSON");
	add_text(o, "step_id", s->id);
	add_text(o, "name", s->name);
	add_text(o, "description", s->description);
	for (size_t i = 0; i < s->n_actions; i++) {
		cJSON *a = cJSON_CreateObject();
		cJSON *params =
		    cJSON_Parse(s->actions[i].params_json ? s->actions[i].params_json : "{}");

		add_text(a, "tool", s->actions[i].tool);
		/* Text that is not an object (an editor slip) stays visible as a string rather
		 * than vanishing; parsing it back then names the problem. */
		if (!cJSON_IsObject(params)) {
			cJSON_Delete(params);
			params = cJSON_CreateString(s->actions[i].params_json);
		}
		cJSON_AddItemToObject(a, "params", params);
		cJSON_AddItemToArray(acts, a);
	}
	cJSON_AddItemToObject(o, "actions", acts);
	cJSON_AddItemToObject(o, "acceptance_criteria", str_array(&s->criteria));
	cJSON_AddItemToObject(o, "expected_outputs", str_array(&s->expected_outputs));
	cJSON_AddItemToObject(o, "dependencies", str_array(&s->deps));
	add_text(o, "estimated_complexity", complexity_name(s->complexity));
	return o;
}

cJSON *plan_to_json(const struct plan *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *steps = cJSON_CreateArray();

	if (!o || !steps)
		fatal("out of memory building JSON");
	add_text(o, "goal", p->goal);
	add_text(o, "context", p->context);
	for (size_t i = 0; i < p->n_steps; i++)
		cJSON_AddItemToArray(steps, plan_step_to_json(&p->steps[i]));
	cJSON_AddItemToObject(o, "steps", steps);
	cJSON_AddItemToObject(o, "success_criteria", str_array(&p->success_criteria));
	add_text(o, "rollback_strategy", p->rollback_strategy);
	return o;
}

/*
 * The same bytes, written directly: every step's prompt, verifier request and reuse key
 * goes through plan_step_to_string, and building a cJSON tree to print it cost more than
 * the rest of the step's bookkeeping. The layout is cJSON's (compact, or cJSON_Print's
 * tabs); tests/unit/test_plan.c compares both against printing plan_to_json.
 */
struct jw {
	struct strbuf *sb;
	bool pretty;
	unsigned depth;
};

static void jw_tabs(struct jw *w, unsigned n)
{
	static const char tabs[] = "\t\t\t\t\t\t\t\t";

	for (; n > 8; n -= 8)
		strbuf_add(w->sb, tabs, 8);
	strbuf_add(w->sb, tabs, n);
}

static void jw_str(struct jw *w, const char *s)
{
	s = s ? s : "";
	strbuf_add_json(w->sb, s, strlen(s), 0);
}

static void jw_open(struct jw *w)
{
	strbuf_addc(w->sb, '{');
	w->depth++;
	if (w->pretty)
		strbuf_addc(w->sb, '\n');
}

/* Starts a member of the object being written; `key` is its name quoted, with the colon
 * ("\"goal\":"): the names are ours and need no escape. */
static void jw_key(struct jw *w, const char *key, bool first)
{
	if (!w->pretty) {
		if (!first)
			strbuf_addc(w->sb, ',');
		strbuf_adds(w->sb, key);
		return;
	}
	if (!first)
		strbuf_add(w->sb, ",\n", 2);
	jw_tabs(w, w->depth);
	strbuf_adds(w->sb, key);
	strbuf_addc(w->sb, '\t');
}

static void jw_close(struct jw *w, bool empty)
{
	if (w->pretty && !empty)
		strbuf_addc(w->sb, '\n');
	w->depth--;
	if (w->pretty)
		jw_tabs(w, w->depth);
	strbuf_addc(w->sb, '}');
}

static void jw_sep(struct jw *w)
{
	strbuf_addc(w->sb, ',');
	if (w->pretty)
		strbuf_addc(w->sb, ' ');
}

static void jw_strvec(struct jw *w, const struct strvec *sv)
{
	strbuf_addc(w->sb, '[');
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			jw_sep(w);
		jw_str(w, sv->v[i]);
	}
	strbuf_addc(w->sb, ']');
}

/* An action's params as plan_step_to_json holds them: the object parsed and printed again
 * by cJSON (numbers and blanks in its spelling), or the text as a string if it is not an
 * object. Pretty output nested at depth d is cJSON_Print's shifted right by d tabs. */
static void jw_params(struct jw *w, const char *params_json)
{
	cJSON *params;
	char *s;

	if (!params_json || !strcmp(params_json, "{}")) {
		if (w->pretty) {
			strbuf_adds(w->sb, "{\n");
			jw_tabs(w, w->depth);
			strbuf_addc(w->sb, '}');
		} else {
			strbuf_adds(w->sb, "{}");
		}
		return;
	}
	params = cJSON_Parse(params_json);
	if (!cJSON_IsObject(params)) {
		cJSON_Delete(params);
		jw_str(w, params_json);
		return;
	}
	s = w->pretty ? cJSON_Print(params) : cJSON_PrintUnformatted(params);
	cJSON_Delete(params);
	if (!s)
		fatal("out of memory printing JSON");
	for (const char *c = s; *c; c++) {
		strbuf_addc(w->sb, *c);
		if (*c == '\n')
			jw_tabs(w, w->depth);
	}
	cJSON_free(s);
}

static void jw_step(struct jw *w, const struct plan_step *s)
{
	jw_open(w);
	jw_key(w, "\"step_id\":", true);
	jw_str(w, s->id);
	jw_key(w, "\"name\":", false);
	jw_str(w, s->name);
	jw_key(w, "\"description\":", false);
	jw_str(w, s->description);
	jw_key(w, "\"actions\":", false);
	strbuf_addc(w->sb, '[');
	w->depth++;
	for (size_t i = 0; i < s->n_actions; i++) {
		if (i)
			jw_sep(w);
		jw_open(w);
		jw_key(w, "\"tool\":", true);
		jw_str(w, s->actions[i].tool);
		jw_key(w, "\"params\":", false);
		jw_params(w, s->actions[i].params_json);
		jw_close(w, false);
	}
	w->depth--;
	strbuf_addc(w->sb, ']');
	jw_key(w, "\"acceptance_criteria\":", false);
	jw_strvec(w, &s->criteria);
	jw_key(w, "\"expected_outputs\":", false);
	jw_strvec(w, &s->expected_outputs);
	jw_key(w, "\"dependencies\":", false);
	jw_strvec(w, &s->deps);
	jw_key(w, "\"estimated_complexity\":", false);
	jw_str(w, complexity_name(s->complexity));
	jw_close(w, false);
}

void plan_step_add_json(struct strbuf *sb, const struct plan_step *s, bool pretty)
{
	struct jw w = {sb, pretty, 0};

	jw_step(&w, s);
}

char *plan_to_string(const struct plan *p, bool pretty)
{
	struct strbuf sb;
	struct jw w = {&sb, pretty, 0};

	strbuf_init(&sb);
	strbuf_grow(&sb, 512 * (p->n_steps + 1));
	jw_open(&w);
	jw_key(&w, "\"goal\":", true);
	jw_str(&w, p->goal);
	jw_key(&w, "\"context\":", false);
	jw_str(&w, p->context);
	jw_key(&w, "\"steps\":", false);
	strbuf_addc(&sb, '[');
	w.depth++;
	for (size_t i = 0; i < p->n_steps; i++) {
		if (i)
			jw_sep(&w);
		jw_step(&w, &p->steps[i]);
	}
	w.depth--;
	strbuf_addc(&sb, ']');
	jw_key(&w, "\"success_criteria\":", false);
	jw_strvec(&w, &p->success_criteria);
	jw_key(&w, "\"rollback_strategy\":", false);
	jw_str(&w, p->rollback_strategy);
	jw_close(&w, false);
	return strbuf_detach(&sb);
}

char *plan_step_to_string(const struct plan_step *s, bool pretty)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_grow(&sb, 512);
	plan_step_add_json(&sb, s, pretty);
	return strbuf_detach(&sb);
}

/* ---- order ------------------------------------------------------------------------ */

/*
 * Kahn's algorithm, taking the earliest ready step in plan order each time, so the order
 * is stable and readable. Unknown dependencies are ignored; steps caught in a cycle (an
 * invalid plan) are appended in plan order so every index still appears exactly once.
 */
size_t *plan_topo_order(const struct plan *p)
{
	size_t n = p->n_steps;
	size_t *out = xcalloc(n ? n : 1, sizeof(size_t));
	bool *done = xcalloc(n ? n : 1, sizeof(bool));
	struct id_index ix;
	size_t k = 0;

	index_build(&ix, p);
	while (k < n) {
		size_t pick = n;

		for (size_t i = 0; i < n && pick == n; i++) {
			bool ready = !done[i];

			for (size_t d = 0; ready && d < p->steps[i].deps.n; d++) {
				long w = index_find(&ix, p->steps[i].deps.v[d]);

				if (w >= 0 && (size_t)w != i && !done[w])
					ready = false;
			}
			if (ready)
				pick = i;
		}
		if (pick == n) {
			for (size_t i = 0; i < n; i++) {
				if (!done[i]) {
					done[i] = true;
					out[k++] = i;
				}
			}
			break;
		}
		done[pick] = true;
		out[k++] = pick;
	}
	free(ix.order);
	free(done);
	return out;
}
