/* result — the executor's result and the verifier's verdict, parsed from model text. */
#include "config.h"

#include "result.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "plan.h"
#include "strbuf.h"
#include "xalloc.h"

/*
 * Decisions (documented for operators in the README by the lead):
 * - Confidence values may be JSON numbers or numeric strings ("0.8"): models quote numbers
 *   often and the meaning is unambiguous. Anything else, or a value outside 0..1 (e.g. 85
 *   meaning percent), is refused with a sentence.
 * - Executor result: `step_output` and `confidence` are required; `reasoning`, `notes`,
 *   `actions_taken`, `findings`, `artifacts` are optional (empty); a missing
 *   `meets_criteria` counts as false (the executor did not claim success). Objects in
 *   `actions_taken` are kept as compact JSON text. A non-string `findings` is kept as JSON
 *   text in `findings` and as the original value in `json`.
 * - Verdict: `overall_pass` and `action` are required; `criteria_results` is optional;
 *   `severity` defaults to "minor" on pass and to "major" otherwise (it is informational,
 *   routing follows `action`). `feedback_for_executor` must be a non-empty string when the
 *   action is retry or replan.
 * - A verdict that says "pass" while overall_pass is false or a criterion failed is not
 *   trusted: it becomes a retry (severity "major" unless one was given) whose feedback names
 *   the failed criteria. The opposite (overall_pass true, action retry) is kept as retry.
 */

#define SNIP 40

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (*err)
		return; /* the first problem is the one reported */
	va_start(ap, fmt);
	*err = xvasprintf(fmt, ap);
	va_end(ap);
}

const char *verdict_action_name(enum verdict_action a)
{
	switch (a) {
	case VERDICT_PASS: return "pass";
	case VERDICT_RETRY: return "retry";
	case VERDICT_REPLAN: return "replan";
	}
	return "retry";
}

const char *severity_name(enum severity s)
{
	switch (s) {
	case SEV_MINOR: return "minor";
	case SEV_MAJOR: return "major";
	case SEV_CRITICAL: return "critical";
	}
	return "major";
}

static const cJSON *field(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNull(it) ? NULL : it;
}

/* Optional string: absent → "", wrong type → error. */
static char *opt_text(const cJSON *obj, const char *key, const char *path, char **err)
{
	const cJSON *it = field(obj, key);

	if (!it)
		return xstrdup("");
	if (!cJSON_IsString(it)) {
		set_err(err, "%s must be a string.", path);
		return xstrdup("");
	}
	return xstrdup(it->valuestring);
}

/* Case-insensitive match of a trimmed word against names[0..n). -1 if none. */
static int match_word(const char *s, const char *const *names, int n)
{
	size_t len;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	for (int i = 0; i < n; i++) {
		size_t j = 0;

		if (strlen(names[i]) != len)
			continue;
		while (j < len && tolower((unsigned char)s[j]) == names[i][j])
			j++;
		if (j == len)
			return i;
	}
	return -1;
}

/* 1 ok, 0 absent, -1 error (set). */
static int get_confidence(const cJSON *obj, const char *key, const char *path, double *out,
                          char **err)
{
	const cJSON *it = field(obj, key);
	double v;

	if (!it)
		return 0;
	if (cJSON_IsNumber(it)) {
		v = it->valuedouble;
	} else if (cJSON_IsString(it)) {
		char *end;
		const char *s = it->valuestring;

		while (isspace((unsigned char)*s))
			s++;
		errno = 0;
		v = strtod(s, &end);
		while (isspace((unsigned char)*end))
			end++;
		if (end == s || *end || errno || !isfinite(v)) {
			char *sn = jsonx_snippet(it->valuestring, SNIP);

			set_err(err, "%s must be a number from 0 to 1, not \"%s\".", path, sn);
			free(sn);
			return -1;
		}
	} else {
		set_err(err, "%s must be a number from 0 to 1.", path);
		return -1;
	}
	if (!(v >= 0.0 && v <= 1.0)) {
		set_err(err, "%s must be between 0 and 1 (got %g).", path, v);
		return -1;
	}
	*out = v;
	return 1;
}

static cJSON *str_array(const struct strvec *sv)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < sv->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(sv->v[i]));
	return a;
}

void exec_result_free(struct exec_result *r)
{
	if (!r)
		return;
	free(r->reasoning);
	strvec_clear(&r->actions_taken);
	free(r->findings);
	strvec_clear(&r->artifacts);
	free(r->notes);
	free(r->json);
	free(r);
}

static void parse_actions_taken(const cJSON *obj, struct exec_result *r, char **err)
{
	const cJSON *it = field(obj, "actions_taken");
	const cJSON *el;

	if (!it)
		return;
	if (!cJSON_IsArray(it)) {
		set_err(err, "actions_taken must be an array.");
		return;
	}
	for (el = it->child; el; el = el->next) {
		if (cJSON_IsString(el)) {
			strvec_push(&r->actions_taken, el->valuestring);
		} else {
			char *s = jsonx_print(el);

			strvec_push(&r->actions_taken, s);
			free(s);
		}
	}
}

static void parse_step_output(const cJSON *obj, struct exec_result *r, const cJSON **findings,
                              char **err)
{
	const cJSON *so = field(obj, "step_output");
	const cJSON *it, *el;
	size_t i = 0;

	if (!so) {
		set_err(err, "step_output is missing (an object with findings, artifacts and "
		             "meets_criteria).");
		return;
	}
	if (!cJSON_IsObject(so)) {
		set_err(err, "step_output must be an object.");
		return;
	}
	it = field(so, "findings");
	*findings = it;
	if (!it)
		r->findings = xstrdup("");
	else if (cJSON_IsString(it))
		r->findings = xstrdup(it->valuestring);
	else
		r->findings = jsonx_print(it);
	it = field(so, "artifacts");
	if (it && !cJSON_IsArray(it)) {
		set_err(err, "step_output.artifacts must be an array of strings.");
	} else if (it) {
		for (el = it->child; el; el = el->next) {
			if (!cJSON_IsString(el)) {
				set_err(err,
				        "step_output.artifacts[%zu] must be a string (a path).", i);
				break;
			}
			strvec_push(&r->artifacts, el->valuestring);
			i++;
		}
	}
	it = field(so, "meets_criteria");
	if (it && !cJSON_IsBool(it))
		set_err(err, "step_output.meets_criteria must be true or false.");
	r->meets_criteria = cJSON_IsTrue(it);
}

static char *result_normalized(const struct exec_result *r, const cJSON *findings)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *so = cJSON_CreateObject();
	char *s;

	cJSON_AddStringToObject(o, "reasoning", r->reasoning);
	cJSON_AddItemToObject(o, "actions_taken", str_array(&r->actions_taken));
	if (findings)
		cJSON_AddItemToObject(so, "findings", cJSON_Duplicate(findings, 1));
	else
		cJSON_AddStringToObject(so, "findings", "");
	cJSON_AddItemToObject(so, "artifacts", str_array(&r->artifacts));
	cJSON_AddBoolToObject(so, "meets_criteria", r->meets_criteria);
	cJSON_AddItemToObject(o, "step_output", so);
	cJSON_AddNumberToObject(o, "confidence", r->confidence);
	cJSON_AddStringToObject(o, "notes", r->notes);
	s = jsonx_print(o);
	cJSON_Delete(o);
	return s;
}

struct exec_result *exec_result_parse(const char *text, char **err)
{
	cJSON *obj;
	struct exec_result *r;
	const cJSON *findings = NULL;
	char *e = NULL;

	*err = NULL;
	obj = jsonx_extract(text, PLAN_MAX_JSON_DEPTH, &e);
	if (!obj) {
		*err = xasprintf("%s.", e);
		free(e);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->reasoning = opt_text(obj, "reasoning", "reasoning", &e);
	parse_actions_taken(obj, r, &e);
	parse_step_output(obj, r, &findings, &e);
	if (get_confidence(obj, "confidence", "confidence", &r->confidence, &e) == 0)
		set_err(&e, "confidence is missing (a number from 0 to 1).");
	r->notes = opt_text(obj, "notes", "notes", &e);
	if (!e)
		r->json = result_normalized(r, findings);
	cJSON_Delete(obj);
	if (e) {
		exec_result_free(r);
		*err = e;
		return NULL;
	}
	return r;
}

/* ---- verdict ---------------------------------------------------------------------- */

void verdict_free(struct verdict *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n_criteria; i++) {
		free(v->criteria[i].criterion);
		free(v->criteria[i].evidence);
		free(v->criteria[i].feedback);
	}
	free(v->criteria);
	free(v->feedback);
	free(v);
}

static void parse_criteria(const cJSON *obj, struct verdict *v, char **err)
{
	const cJSON *arr = field(obj, "criteria_results");
	const cJSON *el;
	size_t i = 0, cap = 0;

	if (!arr)
		return;
	if (!cJSON_IsArray(arr)) {
		set_err(err, "criteria_results must be an array of objects.");
		return;
	}
	for (el = arr->child; el; el = el->next) {
		struct criterion_result c;
		char *path = xasprintf("criteria_results[%zu]", i);
		char *fp;
		const cJSON *passed;

		i++;
		if (!cJSON_IsObject(el)) {
			set_err(err, "%s must be an object.", path);
			free(path);
			return;
		}
		memset(&c, 0, sizeof(c));
		fp = xasprintf("%s.criterion", path);
		c.criterion = opt_text(el, "criterion", fp, err);
		free(fp);
		passed = field(el, "passed");
		if (!cJSON_IsBool(passed))
			set_err(err, "%s.passed must be true or false.", path);
		c.passed = cJSON_IsTrue(passed);
		fp = xasprintf("%s.evidence", path);
		c.evidence = opt_text(el, "evidence", fp, err);
		free(fp);
		fp = xasprintf("%s.confidence", path);
		get_confidence(el, "confidence", fp, &c.confidence, err);
		free(fp);
		fp = xasprintf("%s.feedback", path);
		c.feedback = opt_text(el, "feedback", fp, err);
		free(fp);
		free(path);
		v->criteria = xgrow(v->criteria, &cap, v->n_criteria + 1, sizeof(*v->criteria));
		v->criteria[v->n_criteria++] = c;
		if (*err)
			return;
	}
}

/* The verifier said pass but its own answer disagrees: make it a retry that says why. */
static void distrust_pass(struct verdict *v, bool severity_given)
{
	struct strbuf sb;
	size_t failed = 0;

	for (size_t i = 0; i < v->n_criteria; i++)
		failed += !v->criteria[i].passed;
	if (!failed && v->overall_pass)
		return;
	failed = 0;
	strbuf_init(&sb);
	for (size_t i = 0; i < v->n_criteria; i++) {
		if (v->criteria[i].passed)
			continue;
		strbuf_adds(&sb, failed ? "; "
		                        : "The verifier answered pass, but these criteria "
		                          "failed: ");
		strbuf_adds(&sb, *v->criteria[i].criterion ? v->criteria[i].criterion
		                                           : "(unnamed criterion)");
		failed++;
	}
	if (!failed && !v->overall_pass)
		strbuf_adds(&sb, "The verifier answered pass, but overall_pass is false");
	strbuf_adds(&sb, ".");
	if (v->feedback && *v->feedback)
		strbuf_addf(&sb, " %s", v->feedback);
	free(v->feedback);
	v->feedback = strbuf_detach(&sb);
	v->action = VERDICT_RETRY;
	if (!severity_given)
		v->severity = SEV_MAJOR;
}

struct verdict *verdict_parse(const char *text, char **err)
{
	static const char *const actions[] = {"pass", "retry", "replan"};
	static const char *const sevs[] = {"minor", "major", "critical"};
	cJSON *obj;
	struct verdict *v;
	const cJSON *it;
	bool severity_given = false;
	char *e = NULL;

	*err = NULL;
	obj = jsonx_extract(text, PLAN_MAX_JSON_DEPTH, &e);
	if (!obj) {
		*err = xasprintf("%s.", e);
		free(e);
		return NULL;
	}
	v = xcalloc(1, sizeof(*v));
	it = field(obj, "overall_pass");
	if (!it)
		set_err(&e, "overall_pass is missing (true or false).");
	else if (!cJSON_IsBool(it))
		set_err(&e, "overall_pass must be true or false.");
	v->overall_pass = cJSON_IsTrue(it);
	parse_criteria(obj, v, &e);
	it = field(obj, "action");
	if (!it) {
		set_err(&e, "action is missing (pass, retry or replan).");
	} else if (!cJSON_IsString(it) || match_word(it->valuestring, actions, 3) < 0) {
		char *sn = jsonx_snippet(cJSON_IsString(it) ? it->valuestring : "", SNIP);

		if (cJSON_IsString(it))
			set_err(&e, "action must be pass, retry or replan, not \"%s\".", sn);
		else
			set_err(&e, "action must be one of the strings pass, retry or replan.");
		free(sn);
	} else {
		v->action = (enum verdict_action)match_word(it->valuestring, actions, 3);
	}
	it = field(obj, "feedback_for_executor");
	if (it && !cJSON_IsString(it))
		set_err(&e, "feedback_for_executor must be a string.");
	v->feedback = xstrdup(cJSON_IsString(it) ? it->valuestring : "");
	if (!e && v->action != VERDICT_PASS) {
		const char *f = v->feedback;

		while (isspace((unsigned char)*f))
			f++;
		if (!*f)
			set_err(&e, "feedback_for_executor is required when action is %s.",
			        verdict_action_name(v->action));
	}
	it = field(obj, "severity");
	v->severity = v->action == VERDICT_PASS ? SEV_MINOR : SEV_MAJOR;
	if (it) {
		int s = cJSON_IsString(it) ? match_word(it->valuestring, sevs, 3) : -1;

		if (s < 0) {
			set_err(&e, "severity must be minor, major or critical.");
		} else {
			v->severity = (enum severity)s;
			severity_given = true;
		}
	}
	cJSON_Delete(obj);
	if (e) {
		verdict_free(v);
		*err = e;
		return NULL;
	}
	if (v->action == VERDICT_PASS)
		distrust_pass(v, severity_given);
	return v;
}

cJSON *verdict_criteria_to_json(const struct verdict *v)
{
	cJSON *a = cJSON_CreateArray();

	if (!a)
		fatal("out of memory building JSON");
	for (size_t i = 0; v && i < v->n_criteria; i++) {
		const struct criterion_result *c = &v->criteria[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "criterion", c->criterion ? c->criterion : "");
		cJSON_AddBoolToObject(o, "passed", c->passed);
		cJSON_AddStringToObject(o, "evidence", c->evidence ? c->evidence : "");
		cJSON_AddNumberToObject(o, "confidence", c->confidence);
		cJSON_AddStringToObject(o, "feedback", c->feedback ? c->feedback : "");
		cJSON_AddItemToArray(a, o);
	}
	return a;
}
