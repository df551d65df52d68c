/* result — the executor's result and the verifier's verdict, parsed from model text. */
#include "config.h"

#include "result.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "plan.h"
#include "strbuf.h"
#include "xalloc.h"

/*
 * Decisions (documented for operators in the README by the lead). Be liberal in what a
 * model writes, refuse only what cannot be understood; the readers live in jsonx.c,
 * shared with plan.c, so a shape means the same in a plan, a result and a verdict.
 * - Free text where structure was written: every text field (reasoning, notes, findings,
 *   criterion, evidence, feedback, feedback_for_executor) and every actions_taken item may
 *   be an object, array, number or boolean; it is kept as its compact JSON text. `null` is
 *   absent (""; null actions_taken items are dropped).
 * - Booleans (meets_criteria, overall_pass, passed) may be true/false or the strings
 *   "true"/"false"/"yes"/"no" in any case.
 * - Confidence values may be JSON numbers, numeric strings ("0.8") or percentage strings
 *   ("85%" is 0.85): models quote numbers often and the meaning is unambiguous. A bare
 *   number outside 0..1 (85) is refused: it may be a percentage or a different scale.
 * - meets_criteria may also be per criterion: a map {"criterion": true, …}, an array of
 *   booleans, or an array of {criterion, met} (or {criterion, passed}) objects. It counts
 *   as met when every entry is true; an empty map or array is not met. The entries are
 *   kept in criteria_met and the value itself, unchanged, in `json` (the journal).
 *   A value that is no boolean ("maybe", 1) is refused, naming the entry.
 * - Executor result: `step_output` and `confidence` are required; `reasoning`, `notes`,
 *   `actions_taken`, `findings`, `artifacts` are optional (empty); a missing
 *   `meets_criteria` counts as false (the executor did not claim success). A non-string
 *   `findings` is kept as JSON text in `findings` and as the original value in `json`.
 *   Artifacts must be strings: they are paths that stage 1 checks.
 * - Verdict: `overall_pass` and `action` are required; `criteria_results` is optional;
 *   `severity` defaults to "minor" on pass and to "major" otherwise (it is informational,
 *   routing follows `action`). `feedback_for_executor` must be non-empty when the action
 *   is retry or replan. Action and severity are words in any case with blanks around.
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

/* Optional free text: absent → "", anything else is text (jsonx_as_text). */
static char *opt_text(const cJSON *obj, const char *key)
{
	char *t = jsonx_as_text(jsonx_field(obj, key));

	return t ? t : xstrdup("");
}

/* 1 ok, 0 absent, -1 error (set). */
static int get_confidence(const cJSON *obj, const char *key, const char *path, double *out,
                          char **err)
{
	const cJSON *it = jsonx_field(obj, key);
	double v;

	if (!it)
		return 0;
	if (!jsonx_as_num(it, true, &v)) {
		if (cJSON_IsString(it)) {
			char *sn = jsonx_snippet(it->valuestring, SNIP);

			set_err(err, "%s must be a number from 0 to 1, not \"%s\".", path, sn);
			free(sn);
		} else {
			set_err(err, "%s must be a number from 0 to 1, not %s.", path,
			        jsonx_kind(it));
		}
		return -1;
	}
	if (!(v >= 0.0 && v <= 1.0)) {
		set_err(err, "%s must be between 0 and 1 (got %g).", path, v);
		return -1;
	}
	*out = v;
	return 1;
}

/* A required boolean (jsonx_as_bool); NULL is missing. Sets the error naming `path`. */
static bool get_bool(const cJSON *it, const char *path, bool *out, char **err)
{
	char *what;

	if (jsonx_as_bool(it, out))
		return true;
	if (!it) {
		set_err(err, "%s is missing (true or false).", path);
		return false;
	}
	what = jsonx_describe(it, SNIP);
	set_err(err, "%s must be true or false, not %s.", path, what);
	free(what);
	return false;
}

void exec_result_free(struct exec_result *r)
{
	if (!r)
		return;
	free(r->reasoning);
	strvec_clear(&r->actions_taken);
	free(r->findings);
	strvec_clear(&r->artifacts);
	strvec_clear(&r->read_only);
	for (size_t i = 0; i < r->n_criteria_met; i++)
		free(r->criteria_met[i].name);
	free(r->criteria_met);
	free(r->notes);
	free(r->json);
	free(r->output_json);
	free(r);
}

static void parse_actions_taken(const cJSON *obj, struct exec_result *r, char **err)
{
	const cJSON *it = jsonx_field(obj, "actions_taken");
	const cJSON *el;

	if (!it)
		return;
	if (!cJSON_IsArray(it)) {
		set_err(err, "actions_taken must be an array, not %s.", jsonx_kind(it));
		return;
	}
	for (el = it->child; el; el = el->next) {
		char *s = jsonx_as_text(el);

		if (s)
			strvec_push(&r->actions_taken, s);
		free(s);
	}
}

static void add_met(struct exec_result *r, size_t *cap, char *name, bool met)
{
	r->criteria_met =
	    xgrow(r->criteria_met, cap, r->n_criteria_met + 1, sizeof(*r->criteria_met));
	r->criteria_met[r->n_criteria_met].name = name;
	r->criteria_met[r->n_criteria_met++].met = met;
}

/* One criterion's answer: a boolean, or an object whose `met` (or `passed`) is one. */
static bool read_met(const cJSON *v, const char *path, bool *met, char **err)
{
	const char *key;
	char *kp;
	bool ok;

	if (!cJSON_IsObject(v))
		return get_bool(v, path, met, err);
	key = jsonx_field(v, "met") || !jsonx_field(v, "passed") ? "met" : "passed";
	kp = xasprintf("%s.%s", path, key);
	ok = get_bool(jsonx_field(v, key), kp, met, err);
	free(kp);
	return ok;
}

/*
 * meets_criteria: one boolean, or per criterion (a map of name → answer, or an array of
 * answers named by their `criterion` or their position). Per criterion, it is met when
 * there is at least one entry and every entry is met.
 */
static void parse_meets(const cJSON *it, struct exec_result *r, char **err)
{
	const cJSON *el;
	size_t cap = 0, i = 0;
	bool all = true;

	if (!it)
		return;
	if (!cJSON_IsObject(it) && !cJSON_IsArray(it)) {
		if (!jsonx_as_bool(it, &r->meets_criteria)) {
			char *what = jsonx_describe(it, SNIP);

			set_err(
			    err,
			    "step_output.meets_criteria must be true or false, or a map of each "
			    "criterion to true or false, not %s.",
			    what);
			free(what);
		}
		return;
	}
	for (el = it->child; el; el = el->next, i++) {
		char *path, *name = NULL;
		bool met;

		if (cJSON_IsObject(it)) {
			char *key = jsonx_snippet(el->string, SNIP);

			path = xasprintf("step_output.meets_criteria[\"%s\"]", key);
			free(key);
		} else {
			path = xasprintf("step_output.meets_criteria[%zu]", i);
		}
		if (!read_met(el, path, &met, err)) {
			free(path);
			return;
		}
		free(path);
		if (cJSON_IsObject(it))
			name = xstrdup(el->string);
		else if (cJSON_IsObject(el))
			name = jsonx_as_text(jsonx_field(el, "criterion"));
		if (!name || !*name) {
			free(name);
			name = xasprintf("%zu", i + 1);
		}
		add_met(r, &cap, name, met);
		all = all && met;
	}
	r->meets_criteria = r->n_criteria_met > 0 && all;
}

/* Sets *findings and *meets to the values `json` keeps as they were written. */
static void parse_step_output(const cJSON *obj, struct exec_result *r, const cJSON **findings,
                              const cJSON **meets, char **err)
{
	const cJSON *so = jsonx_field(obj, "step_output");
	const cJSON *it, *el;
	size_t i = 0;

	if (!so) {
		set_err(err, "step_output is missing (an object with findings, artifacts and "
		             "meets_criteria).");
		return;
	}
	if (!cJSON_IsObject(so)) {
		set_err(err, "step_output must be an object, not %s.", jsonx_kind(so));
		return;
	}
	it = jsonx_field(so, "findings");
	*findings = it;
	r->findings = opt_text(so, "findings");
	it = jsonx_field(so, "artifacts");
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
	it = jsonx_field(so, "read_only");
	if (it && !cJSON_IsArray(it)) {
		set_err(err, "step_output.read_only must be an array of strings (paths).");
	} else if (it) {
		i = 0;
		for (el = it->child; el; el = el->next, i++) {
			if (!cJSON_IsString(el)) {
				set_err(err,
				        "step_output.read_only[%zu] must be a string (a path).", i);
				break;
			}
			strvec_push(&r->read_only, el->valuestring);
		}
	}
	it = jsonx_field(so, "meets_criteria");
	parse_meets(it, r, err);
	*meets = cJSON_IsObject(it) || cJSON_IsArray(it) ? it : NULL;
}

/* A text as cJSON prints a string (strbuf_add_json writes what it writes). */
static void put_str(struct strbuf *sb, const char *s)
{
	strbuf_add_json(sb, s, strlen(s), 0);
}

static void put_strs(struct strbuf *sb, const struct strvec *sv)
{
	strbuf_addc(sb, '[');
	for (size_t i = 0; i < sv->n; i++) {
		if (i)
			strbuf_addc(sb, ',');
		put_str(sb, sv->v[i]);
	}
	strbuf_addc(sb, ']');
}

/* A value of the model's answer as cJSON prints it: a string directly, anything else
 * by cJSON. */
static void put_value(struct strbuf *sb, const cJSON *v)
{
	char *p;

	if (cJSON_IsString(v)) {
		put_str(sb, v->valuestring ? v->valuestring : "");
		return;
	}
	p = cJSON_PrintUnformatted(v);
	if (!p)
		fatal("out of memory printing JSON");
	strbuf_adds(sb, p);
	cJSON_free(p);
}

/* A number as cJSON prints it: one that is its own int ("%d") here, any other by cJSON
 * (its 15 or 17 digits, "null" for NaN and the infinities). */
static void put_number(struct strbuf *sb, double d)
{
	cJSON *n;

	if (d > -1e9 && d < 1e9 && d == (double)(int)d) {
		strbuf_addi(sb, (int)d);
		return;
	}
	n = cJSON_CreateNumber(d);
	if (!n)
		fatal("out of memory building JSON");
	put_value(sb, n);
	cJSON_Delete(n);
}

/*
 * The step_output object of a result (n bytes at s) as its readers had it: what cJSON
 * prints of the object it reads back from the result. Strings, arrays of them and
 * booleans print again as they were, so that is the text itself; a value of the model's
 * (`tree`: a non-string findings, a per-criterion meets_criteria) is read and printed
 * again, for cJSON may print a number it read so that it reads back as another
 * (1.7976931348623157e308 prints as 1.79769313486232e+308, which reads back as an
 * infinity, printed null).
 */
static char *output_as_read(const char *s, size_t n, bool findings_tree, bool meets_tree)
{
	cJSON *v;
	char *out;

	if (!findings_tree && !meets_tree)
		return xstrndup(s, n);
	v = cJSON_ParseWithLength(s, n);
	out = v ? jsonx_print(v) : xstrndup(s, n);
	cJSON_Delete(v);
	return out;
}

/*
 * The normalized result, written directly as cJSON_PrintUnformatted printed the object it
 * was once built as: {reasoning, actions_taken, step_output {findings, artifacts,
 * meets_criteria}, confidence, notes}. *output: its step_output as it stands in it.
 */
static char *result_normalized(const struct exec_result *r, const cJSON *findings,
                               const cJSON *meets, char **output)
{
	struct strbuf sb = STRBUF_INIT;
	size_t so;

	strbuf_grow(&sb, 256 + strlen(r->reasoning) + strlen(r->findings) + strlen(r->notes));
	strbuf_adds(&sb, "{\"reasoning\":");
	put_str(&sb, r->reasoning);
	strbuf_adds(&sb, ",\"actions_taken\":");
	put_strs(&sb, &r->actions_taken);
	strbuf_adds(&sb, ",\"step_output\":");
	so = sb.len;
	strbuf_adds(&sb, "{\"findings\":");
	if (findings)
		put_value(&sb, findings);
	else
		put_str(&sb, "");
	strbuf_adds(&sb, ",\"artifacts\":");
	put_strs(&sb, &r->artifacts);
	if (r->read_only.n) {
		strbuf_adds(&sb, ",\"read_only\":");
		put_strs(&sb, &r->read_only);
	}
	/* A per-criterion answer goes to the journal as written, so it can be shown per
	 * criterion later; a single boolean in its normal spelling. */
	strbuf_adds(&sb, ",\"meets_criteria\":");
	if (meets)
		put_value(&sb, meets);
	else
		strbuf_adds(&sb, r->meets_criteria ? "true" : "false");
	strbuf_addc(&sb, '}');
	*output = output_as_read(sb.buf + so, sb.len - so, findings && !cJSON_IsString(findings),
				 meets != NULL);
	strbuf_adds(&sb, ",\"confidence\":");
	put_number(&sb, r->confidence);
	strbuf_adds(&sb, ",\"notes\":");
	put_str(&sb, r->notes);
	strbuf_addc(&sb, '}');
	return strbuf_detach(&sb);
}

struct exec_result *exec_result_parse(const char *text, char **err)
{
	cJSON *obj;
	struct exec_result *r;
	const cJSON *findings = NULL, *meets = NULL;
	char *e = NULL;

	*err = NULL;
	obj = jsonx_extract(text, PLAN_MAX_JSON_DEPTH, &e);
	if (!obj) {
		*err = xasprintf("%s.", e);
		free(e);
		return NULL;
	}
	r = xcalloc(1, sizeof(*r));
	r->reasoning = opt_text(obj, "reasoning");
	parse_actions_taken(obj, r, &e);
	parse_step_output(obj, r, &findings, &meets, &e);
	if (get_confidence(obj, "confidence", "confidence", &r->confidence, &e) == 0)
		set_err(&e, "confidence is missing (a number from 0 to 1).");
	r->notes = opt_text(obj, "notes");
	if (!e)
		r->json = result_normalized(r, findings, meets, &r->output_json);
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

/* "criteria_results[I]" and `suffix` (".passed", ".confidence" or ""), into out: the
 * name an error gives, made for every criterion without printf's cost. */
#define CRIT_PATH_MAX (sizeof("criteria_results[]") + 20 + sizeof(".confidence"))

static const char *crit_path(char out[CRIT_PATH_MAX], size_t i, const char *suffix)
{
	char digits[20], *d = digits + sizeof(digits);
	char *o = out;
	size_t n;

	do
		*--d = (char)('0' + i % 10);
	while ((i /= 10));
	memcpy(o, "criteria_results[", 17);
	o += 17;
	n = (size_t)(digits + sizeof(digits) - d);
	memcpy(o, d, n);
	o += n;
	*o++ = ']';
	n = strlen(suffix);
	memcpy(o, suffix, n + 1);
	return out;
}

static void parse_criteria(const cJSON *obj, struct verdict *v, char **err)
{
	const cJSON *arr = jsonx_field(obj, "criteria_results");
	const cJSON *el;
	size_t i = 0, cap = 0;

	if (!arr)
		return;
	if (!cJSON_IsArray(arr)) {
		set_err(err, "criteria_results must be an array of objects, not %s.",
		        jsonx_kind(arr));
		return;
	}
	for (el = arr->child; el; el = el->next) {
		struct criterion_result c;
		char path[CRIT_PATH_MAX];

		if (!cJSON_IsObject(el)) {
			set_err(err, "%s must be an object, not %s.", crit_path(path, i, ""),
			        jsonx_kind(el));
			return;
		}
		memset(&c, 0, sizeof(c));
		c.criterion = opt_text(el, "criterion");
		get_bool(jsonx_field(el, "passed"), crit_path(path, i, ".passed"), &c.passed, err);
		c.evidence = opt_text(el, "evidence");
		get_confidence(el, "confidence", crit_path(path, i, ".confidence"), &c.confidence,
		               err);
		c.feedback = opt_text(el, "feedback");
		i++;
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
	get_bool(jsonx_field(obj, "overall_pass"), "overall_pass", &v->overall_pass, &e);
	parse_criteria(obj, v, &e);
	it = jsonx_field(obj, "action");
	if (!it) {
		set_err(&e, "action is missing (pass, retry or replan).");
	} else if (!cJSON_IsString(it) || jsonx_word(it->valuestring, actions, 3) < 0) {
		char *sn = jsonx_snippet(cJSON_IsString(it) ? it->valuestring : "", SNIP);

		if (cJSON_IsString(it))
			set_err(&e, "action must be pass, retry or replan, not \"%s\".", sn);
		else
			set_err(&e,
			        "action must be one of the strings pass, retry or replan, "
			        "not %s.",
			        jsonx_kind(it));
		free(sn);
	} else {
		v->action = (enum verdict_action)jsonx_word(it->valuestring, actions, 3);
	}
	v->feedback = opt_text(obj, "feedback_for_executor");
	if (!e && v->action != VERDICT_PASS) {
		const char *f = v->feedback;

		while (isspace((unsigned char)*f))
			f++;
		if (!*f)
			set_err(&e, "feedback_for_executor is required when action is %s.",
			        verdict_action_name(v->action));
	}
	it = jsonx_field(obj, "severity");
	v->severity = v->action == VERDICT_PASS ? SEV_MINOR : SEV_MAJOR;
	if (it) {
		int s = cJSON_IsString(it) ? jsonx_word(it->valuestring, sevs, 3) : -1;

		if (s < 0) {
			char *what = jsonx_describe(it, SNIP);

			set_err(&e, "severity must be minor, major or critical, not %s.", what);
			free(what);
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
