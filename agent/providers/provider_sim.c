/* provider_sim — the offline simulated provider: plays a JSON script (a built-in scenario or
 * --script FILE) as planner, executor and verifier, streaming like a real model. */
#include "config.h"

#include "provider_sim.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "provider.h"
#include "sim_embedded.h"
#include "strbuf.h"
#include "xalloc.h"

/* Bytes of streamed text per on_delta call, about what real APIs send. */
#define SIM_CHUNK 16
/* Longest sleep between two looks at the cancel flag. */
#define SIM_CANCEL_SLICE_MS 100
/* Scripts are small; a bigger file is a mistake, not a scenario. */
#define SIM_MAX_SCRIPT (4 * 1024 * 1024)

/* Step definitions the simulated provider remembers (see struct sim). */
#define SIM_STEP_CACHE 8

struct sim_seed {
	char *path;
	char *content;
};

/* What the default answers use of a step's definition (its step_json), read once. */
struct sim_step {
	char *json;             /* the step_json read (NULL: none was given) */
	char *name;             /* "name" if a non-empty string, else NULL */
	char *description;      /* "description" if a non-empty string, else NULL */
	int n_criteria;         /* entries of acceptance_criteria, of any type */
	struct strvec criteria; /* those that are strings */
};

struct sim {
	pthread_mutex_t mu;
	/* The validated script. Read and rendered only under mu, so no tree crosses threads
	 * while another one touches it. */
	cJSON *script;
	cJSON *last_plan; /* the latest plan answered, for default checks and synthesis */
	int planner_calls;
	long next_call_id;
	int delay_ms;
	/* The definitions the defaults last read, newest first: a step's calls (its tool
	 * round, its result, its verdict) come one after another with the same step_json,
	 * a few steps at once with --parallel. */
	struct sim_step *steps[SIM_STEP_CACHE];
	/* Copies taken at load, readable without the lock. */
	char *task;
	struct sim_seed *seeds;
	size_t n_seeds;
};

/* ---- substitution ------------------------------------------------------------------- */

struct sim_vars {
	const char *task;
	const char *step_id;
	int attempt;
	const char *tool_result;
};

static char *subst(const char *s, const struct sim_vars *v)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = s;

	strbuf_init(&sb);
	while (*p) {
		const char *open = strstr(p, "{{");
		const char *val = NULL;
		size_t skip = 0;
		char num[24];

		if (!open) {
			strbuf_adds(&sb, p);
			break;
		}
		strbuf_add(&sb, p, (size_t)(open - p));
		if (!strncmp(open, "{{task}}", 8)) {
			val = v->task ? v->task : "";
			skip = 8;
		} else if (!strncmp(open, "{{step_id}}", 11)) {
			val = v->step_id ? v->step_id : "";
			skip = 11;
		} else if (!strncmp(open, "{{attempt}}", 11)) {
			snprintf(num, sizeof(num), "%d", v->attempt);
			val = num;
			skip = 11;
		} else if (!strncmp(open, "{{tool_result}}", 15)) {
			val = v->tool_result ? v->tool_result : "(no tool result yet)";
			skip = 15;
		}
		if (val) {
			strbuf_adds(&sb, val);
			p = open + skip;
		} else {
			strbuf_add(&sb, "{{", 2);
			p = open + 2;
		}
	}
	return strbuf_detach(&sb);
}

static void subst_tree(cJSON *item, const struct sim_vars *v)
{
	cJSON *c;

	if (cJSON_IsString(item) && item->valuestring && strstr(item->valuestring, "{{")) {
		char *s = subst(item->valuestring, v);

		if (!cJSON_SetValuestring(item, s))
			fatal("out of memory in the simulated provider");
		free(s);
		return;
	}
	cJSON_ArrayForEach(c, item)
		subst_tree(c, v);
}

/* ---- rendering a TEXT of the script ------------------------------------------------- */

static bool is_wrapper(const cJSON *t)
{
	const cJSON *c;

	if (!cJSON_IsObject(t) || !cJSON_GetObjectItemCaseSensitive(t, "json"))
		return false;
	cJSON_ArrayForEach(c, t)
		if (strcmp(c->string, "before") && strcmp(c->string, "json") &&
		    strcmp(c->string, "after"))
			return false;
	return true;
}

static char *print_pretty(const cJSON *item)
{
	char *s = cJSON_Print(item);
	char *d;

	if (!s)
		fatal("out of memory printing JSON");
	d = xstrdup(s);
	cJSON_free(s);
	return d;
}

static bool has_placeholder(const cJSON *item)
{
	const cJSON *c;

	if (cJSON_IsString(item))
		return item->valuestring && strstr(item->valuestring, "{{");
	cJSON_ArrayForEach(c, item)
		if (has_placeholder(c))
			return true;
	return false;
}

/* The answer text for a TEXT value (NULL → ""). Caller frees. */
static char *render(const cJSON *t, const struct sim_vars *v)
{
	cJSON *copy = NULL;
	const cJSON *src = t;
	char *out;

	if (!t)
		return xstrdup("");
	if (cJSON_IsString(t))
		return subst(t->valuestring, v);
	/* Substitution works on a copy; a TEXT without placeholders prints as it is. */
	if (has_placeholder(t)) {
		copy = cJSON_Duplicate(t, 1);
		if (!copy)
			fatal("out of memory in the simulated provider");
		subst_tree(copy, v);
		src = copy;
	}
	if (is_wrapper(src)) {
		struct strbuf sb = STRBUF_INIT;
		const char *before = jsonx_str(src, "before");
		const char *after = jsonx_str(src, "after");
		char *body = print_pretty(cJSON_GetObjectItemCaseSensitive(src, "json"));

		strbuf_init(&sb);
		if (before && *before) {
			strbuf_adds(&sb, before);
			strbuf_adds(&sb, "\n\n");
		}
		strbuf_adds(&sb, "```json\n");
		strbuf_adds(&sb, body);
		strbuf_adds(&sb, "\n```");
		if (after && *after) {
			strbuf_adds(&sb, "\n\n");
			strbuf_adds(&sb, after);
		}
		free(body);
		out = strbuf_detach(&sb);
	} else {
		out = jsonx_print(src);
	}
	cJSON_Delete(copy);
	return out;
}

/* ---- validation ---------------------------------------------------------------------- */

static const char *const top_keys[] = {"task",     "about",    "seed",        "planner",
				       "executor", "verifier", "final_check", "synthesis",
				       NULL};

static bool key_in(const char *k, const char *const *keys)
{
	for (size_t i = 0; keys[i]; i++)
		if (!strcmp(k, keys[i]))
			return true;
	return false;
}

static bool is_text(const cJSON *t)
{
	return cJSON_IsString(t) || cJSON_IsObject(t) || cJSON_IsArray(t);
}

/* Sets *err to "ORIGIN: WHERE MSG" and returns false. */
static bool fail(char **err, const char *origin, const char *where, const char *msg)
{
	if (where && *where)
		*err = xasprintf("%s: %s %s", origin, where, msg);
	else
		*err = xasprintf("%s: %s", origin, msg);
	return false;
}

static bool seed_path_ok(const char *p)
{
	const char *seg = p;

	if (!*p || *p == '/')
		return false;
	for (;;) {
		const char *slash = strchr(seg, '/');
		size_t n = slash ? (size_t)(slash - seg) : strlen(seg);

		if (n == 0 || (n == 2 && !strncmp(seg, "..", 2)) || (n == 1 && *seg == '.'))
			return false;
		if (!slash)
			return true;
		seg = slash + 1;
	}
}

/* A list of TEXTs by attempt: an array of texts (a single TEXT object counts as one). */
static bool check_text_list(const cJSON *list, const char *origin, const char *where,
			    char **err)
{
	const cJSON *t;
	int i = 0;
	char *w;
	bool ok = true;

	if (!cJSON_IsArray(list))
		return fail(err, origin, where, "must be a list of answers (strings or objects)");
	if (!cJSON_GetArraySize(list))
		return fail(err, origin, where, "must hold at least one answer");
	cJSON_ArrayForEach(t, list) {
		if (!is_text(t)) {
			w = xasprintf("%s[%d]", where, i);
			ok = fail(err, origin, w, "must be a string, a JSON object or an array");
			free(w);
			return ok;
		}
		i++;
	}
	return true;
}

static bool check_attempt(const cJSON *a, const char *origin, const char *where, char **err)
{
	static const char *const attempt_keys[] = {"rounds", "final", NULL};
	static const char *const round_keys[] = {"text", "tool_calls", NULL};
	const cJSON *c, *rounds, *r;
	struct strbuf w = STRBUF_INIT;
	int ri = 0;

	if (!cJSON_IsObject(a))
		return fail(err, origin, where,
			    "must be an object with \"rounds\" and/or \"final\"");
	cJSON_ArrayForEach(c, a) {
		if (!key_in(c->string, attempt_keys)) {
			*err = xasprintf("%s: %s has an unknown key \"%s\" (expected rounds, "
					 "final)",
					 origin, where, c->string);
			return false;
		}
	}
	c = cJSON_GetObjectItemCaseSensitive(a, "final");
	if (c && !is_text(c))
		return fail(err, origin, where,
			    "\"final\" must be a string, a JSON object or an array");
	rounds = cJSON_GetObjectItemCaseSensitive(a, "rounds");
	if (!rounds)
		return true;
	if (!cJSON_IsArray(rounds))
		return fail(err, origin, where, "\"rounds\" must be a list");
	strbuf_init(&w);
	cJSON_ArrayForEach(r, rounds) {
		const cJSON *calls, *call, *text;
		int ci = 0;

		strbuf_reset(&w);
		strbuf_addf(&w, "%s.rounds[%d]", where, ri++);
		if (!cJSON_IsObject(r))
			goto bad_round;
		cJSON_ArrayForEach(c, r) {
			if (!key_in(c->string, round_keys)) {
				*err = xasprintf("%s: %s has an unknown key \"%s\" (expected "
						 "text, tool_calls)",
						 origin, w.buf, c->string);
				goto out;
			}
		}
		text = cJSON_GetObjectItemCaseSensitive(r, "text");
		if (text && !cJSON_IsString(text)) {
			fail(err, origin, w.buf, "\"text\" must be a string");
			goto out;
		}
		calls = cJSON_GetObjectItemCaseSensitive(r, "tool_calls");
		if (!cJSON_IsArray(calls) || !cJSON_GetArraySize(calls)) {
			fail(err, origin, w.buf,
			     "needs a non-empty \"tool_calls\" list (a round without tool calls "
			     "would end the attempt; put the closing answer in \"final\")");
			goto out;
		}
		cJSON_ArrayForEach(call, calls) {
			const cJSON *name = cJSON_GetObjectItemCaseSensitive(call, "name");
			const cJSON *input = cJSON_GetObjectItemCaseSensitive(call, "input");

			if (!cJSON_IsObject(call) || !cJSON_IsString(name) || !*name->valuestring ||
			    (input && !cJSON_IsObject(input))) {
				strbuf_addf(&w, ".tool_calls[%d]", ci);
				fail(err, origin, w.buf,
				     "must be {\"name\": \"tool\", \"input\": {...}} with a "
				     "non-empty name and an object input");
				goto out;
			}
			ci++;
		}
	}
	strbuf_release(&w);
	return true;
bad_round:
	fail(err, origin, w.buf, "must be an object with \"text\" and \"tool_calls\"");
out:
	strbuf_release(&w);
	return false;
}

static bool check_by_step(const cJSON *obj, const char *key, const char *origin, char **err)
{
	const cJSON *step, *a;
	char *w;
	bool ok = true;

	if (!obj)
		return true;
	if (!cJSON_IsObject(obj)) {
		w = xasprintf("\"%s\"", key);
		ok = fail(err, origin, w, "must be an object keyed by step_id");
		free(w);
		return ok;
	}
	cJSON_ArrayForEach(step, obj) {
		int i = 0;

		w = xasprintf("\"%s\".\"%s\"", key, step->string);
		if (!strcmp(key, "verifier")) {
			ok = check_text_list(step, origin, w, err);
		} else if (!cJSON_IsArray(step) || !cJSON_GetArraySize(step)) {
			ok = fail(err, origin, w, "must be a non-empty list of attempts");
		} else {
			cJSON_ArrayForEach(a, step) {
				char *wa = xasprintf("%s[%d]", w, i++);

				ok = check_attempt(a, origin, wa, err);
				free(wa);
				if (!ok)
					break;
			}
		}
		free(w);
		if (!ok)
			return false;
	}
	return true;
}

static bool check_script(const cJSON *s, const char *origin, char **err)
{
	const cJSON *c;

	if (!cJSON_IsObject(s))
		return fail(err, origin, NULL, "the script must be one JSON object");
	cJSON_ArrayForEach(c, s) {
		if (!key_in(c->string, top_keys)) {
			*err = xasprintf("%s: unknown key \"%s\" at the top level of the script "
					 "(expected task, about, seed, planner, executor, "
					 "verifier, final_check, synthesis)",
					 origin, c->string);
			return false;
		}
	}
	c = cJSON_GetObjectItemCaseSensitive(s, "task");
	if (c && !cJSON_IsString(c))
		return fail(err, origin, "\"task\"", "must be a string");
	c = cJSON_GetObjectItemCaseSensitive(s, "about");
	if (c && !cJSON_IsString(c))
		return fail(err, origin, "\"about\"", "must be a string");
	c = cJSON_GetObjectItemCaseSensitive(s, "seed");
	if (c) {
		const cJSON *f;

		if (!cJSON_IsObject(c))
			return fail(err, origin, "\"seed\"",
				    "must be an object of {\"relative/path\": \"content\"}");
		cJSON_ArrayForEach(f, c) {
			if (!cJSON_IsString(f)) {
				*err = xasprintf("%s: seed file \"%s\" must have a string as "
						 "content",
						 origin, f->string);
				return false;
			}
			if (!seed_path_ok(f->string)) {
				*err = xasprintf("%s: seed path \"%s\" must be relative and stay "
						 "inside the workspace (no \"..\", no leading /)",
						 origin, f->string);
				return false;
			}
		}
	}
	c = cJSON_GetObjectItemCaseSensitive(s, "planner");
	if (c && !check_text_list(c, origin, "\"planner\"", err))
		return false;
	if (!check_by_step(cJSON_GetObjectItemCaseSensitive(s, "executor"), "executor", origin,
			   err))
		return false;
	if (!check_by_step(cJSON_GetObjectItemCaseSensitive(s, "verifier"), "verifier", origin,
			   err))
		return false;
	c = cJSON_GetObjectItemCaseSensitive(s, "final_check");
	if (c && !is_text(c))
		return fail(err, origin, "\"final_check\"",
			    "must be a string, a JSON object or an array");
	c = cJSON_GetObjectItemCaseSensitive(s, "synthesis");
	if (c && !is_text(c))
		return fail(err, origin, "\"synthesis\"",
			    "must be a string, a JSON object or an array");
	return true;
}

/* Parses and validates script text. NULL + *err. Caller owns the tree. */
static cJSON *script_parse(const char *text, size_t len, const char *origin, char **err)
{
	const char *end = NULL;
	cJSON *s = cJSON_ParseWithLengthOpts(text, len, &end, 0);

	if (!s) {
		size_t off = end && end >= text ? (size_t)(end - text) : 0;
		int line = 1, col = 1;

		for (size_t i = 0; i < off && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		*err = xasprintf("%s: not valid JSON near line %d, column %d", origin, line, col);
		return NULL;
	}
	if (!check_script(s, origin, err)) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

static const char *embedded_json(const char *name)
{
	for (size_t i = 0; sim_embedded[i].name; i++)
		if (!strcmp(sim_embedded[i].name, name))
			return sim_embedded[i].json;
	return NULL;
}

/* The built-in script `name`, parsed; NULL when there is none (or it is broken, which
 * the unit tests rule out). */
static cJSON *embedded_parse(const char *name)
{
	const char *json = embedded_json(name);
	char *err = NULL;
	cJSON *s;

	if (!json)
		return NULL;
	s = script_parse(json, strlen(json), name, &err);
	free(err);
	return s;
}

/* ---- built-in scenario table (static, built once) ----------------------------------- */

static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static const char **table_names;
static char **table_tasks;
static char **table_abouts;

static void table_build(void)
{
	size_t n = 0;

	while (sim_embedded[n].name)
		n++;
	table_names = xcalloc(n + 1, sizeof(*table_names));
	table_tasks = xcalloc(n + 1, sizeof(*table_tasks));
	table_abouts = xcalloc(n + 1, sizeof(*table_abouts));
	for (size_t i = 0; i < n; i++) {
		cJSON *s = embedded_parse(sim_embedded[i].name);

		table_names[i] = sim_embedded[i].name;
		table_tasks[i] = xstrdup(jsonx_str(s, "task"));
		table_abouts[i] = xstrdup(jsonx_str(s, "about"));
		cJSON_Delete(s);
	}
}

const char *const *sim_scenario_names(void)
{
	pthread_once(&table_once, table_build);
	return table_names;
}

static int table_index(const char *name)
{
	pthread_once(&table_once, table_build);
	for (int i = 0; name && table_names[i]; i++)
		if (!strcmp(table_names[i], name))
			return i;
	return -1;
}

const char *sim_scenario_task(const char *name)
{
	int i = table_index(name);

	return i < 0 ? NULL : table_tasks[i];
}

const char *sim_scenario_about(const char *name)
{
	int i = table_index(name);

	return i < 0 ? NULL : table_abouts[i];
}

static void seed_each(const cJSON *script, sim_seed_fn fn, void *ctx)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(script, "seed"))
		fn(ctx, f->string, f->valuestring);
}

void sim_scenario_seed(const char *name, sim_seed_fn fn, void *ctx)
{
	cJSON *s = name ? embedded_parse(name) : NULL;

	seed_each(s, fn, ctx);
	cJSON_Delete(s);
}

/* ---- defaults for what a script leaves out ------------------------------------------ */

static void sim_step_free(struct sim_step *st)
{
	if (!st)
		return;
	free(st->json);
	free(st->name);
	free(st->description);
	strvec_clear(&st->criteria);
	free(st);
}

static char *nonempty_str(const cJSON *obj, const char *key)
{
	const char *s = jsonx_str(obj, key);

	return s && *s ? xstrdup(s) : NULL;
}

/* The definition in req->step_json, read on its first call and remembered (under s->mu).
 * The whole text is the key: an edited step under the same id is read afresh. */
static const struct sim_step *step_of(struct sim *s, const struct llm_request *req)
{
	const char *json = req->step_json;
	struct sim_step *st;
	cJSON *step, *c;
	size_t k;

	for (k = 0; k < SIM_STEP_CACHE && s->steps[k]; k++) {
		st = s->steps[k];
		if (json ? st->json && !strcmp(st->json, json) : !st->json) {
			/* newest first */
			memmove(&s->steps[1], &s->steps[0], k * sizeof(*s->steps));
			s->steps[0] = st;
			return st;
		}
	}
	st = xcalloc(1, sizeof(*st));
	st->json = json ? xstrdup(json) : NULL;
	step = json ? cJSON_Parse(json) : NULL;
	if (cJSON_IsObject(step)) {
		const cJSON *crit = cJSON_GetObjectItemCaseSensitive(step, "acceptance_criteria");

		st->name = nonempty_str(step, "name");
		st->description = nonempty_str(step, "description");
		/* Any children count, as cJSON counts them; the strings among them are used. */
		st->n_criteria = cJSON_GetArraySize(crit);
		cJSON_ArrayForEach(c, crit)
			if (cJSON_IsString(c))
				strvec_push(&st->criteria, c->valuestring);
	}
	cJSON_Delete(step);
	sim_step_free(s->steps[SIM_STEP_CACHE - 1]);
	memmove(&s->steps[1], &s->steps[0], (SIM_STEP_CACHE - 1) * sizeof(*s->steps));
	s->steps[0] = st;
	return st;
}

static void add_json_str(struct strbuf *sb, const char *s)
{
	strbuf_add_json(sb, s, strlen(s), 0);
}

/* s, placeholders replaced, as a JSON string. */
static void add_json_subst(struct strbuf *sb, const char *s, const struct sim_vars *v)
{
	char *t;

	if (!strstr(s, "{{")) {
		add_json_str(sb, s);
		return;
	}
	t = subst(s, v);
	add_json_str(sb, t);
	free(t);
}

/*
 * The default attempt writes <step_id>.md from the step's definition and claims it: one
 * round with a write_file call, then default_final's result. Written directly, as render
 * would print it from the script form (placeholders replaced in the round's strings).
 */
static void default_round(const struct sim_step *st, const struct llm_request *req,
			  const struct sim_vars *v, char **text, char **input_json)
{
	const char *name = st->name ? st->name : req->step_id;
	struct strbuf sb, in;

	strbuf_init(&sb);
	strbuf_adds(&sb, "I will record the outcome of \"");
	strbuf_adds(&sb, name);
	strbuf_adds(&sb, "\" in ");
	strbuf_adds(&sb, req->step_id);
	strbuf_adds(&sb, ".md.");
	*text = subst(sb.buf, v);

	strbuf_init(&in);
	strbuf_adds(&in, "{\"path\":");
	strbuf_reset(&sb);
	strbuf_adds(&sb, req->step_id);
	strbuf_adds(&sb, ".md");
	add_json_subst(&in, sb.buf, v);
	strbuf_adds(&in, ",\"content\":");
	strbuf_reset(&sb);
	strbuf_adds(&sb, "# ");
	strbuf_adds(&sb, name);
	strbuf_adds(&sb, "\n\n");
	if (req->task && *req->task) {
		strbuf_adds(&sb, "Task: ");
		strbuf_adds(&sb, req->task);
		strbuf_adds(&sb, "\n\n");
	}
	if (st->description) {
		strbuf_adds(&sb, st->description);
		strbuf_adds(&sb, "\n\n");
	}
	if (st->n_criteria) {
		strbuf_adds(&sb, "## Acceptance criteria addressed\n\n");
		for (size_t i = 0; i < st->criteria.n; i++) {
			strbuf_adds(&sb, "- ");
			strbuf_adds(&sb, st->criteria.v[i]);
			strbuf_addc(&sb, '\n');
		}
	}
	add_json_subst(&in, sb.buf, v);
	strbuf_addc(&in, '}');
	*input_json = strbuf_detach(&in);
	strbuf_release(&sb);
}

/* The closing result of the default attempt: claims the file its round wrote (by the name
 * the step id gives, placeholders and all). */
static char *default_final(const struct llm_request *req)
{
	struct strbuf sb, t;

	strbuf_init(&sb);
	strbuf_init(&t);
	strbuf_adds(&sb, "{\"reasoning\":\"Followed the step description and recorded the "
			 "outcome in the workspace so it can be checked.\",\"actions_taken\":[");
	strbuf_adds(&t, "write_file ");
	strbuf_adds(&t, req->step_id);
	strbuf_adds(&t, ".md");
	add_json_str(&sb, t.buf);
	strbuf_adds(&sb, "],\"step_output\":{\"findings\":");
	strbuf_reset(&t);
	strbuf_adds(&t, "Wrote ");
	strbuf_adds(&t, req->step_id);
	strbuf_adds(&t, ".md.");
	add_json_str(&sb, t.buf);
	strbuf_adds(&sb, ",\"artifacts\":[");
	strbuf_reset(&t);
	strbuf_adds(&t, req->step_id);
	strbuf_adds(&t, ".md");
	add_json_str(&sb, t.buf);
	strbuf_adds(&sb, "],\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"\"}");
	strbuf_release(&t);
	return strbuf_detach(&sb);
}

/* The closing result of a scripted attempt without "final": claims what its rounds
 * wrote. */
static char *scripted_final(const cJSON *attempt, const struct llm_request *req)
{
	const cJSON *r, *call;
	cJSON *res = cJSON_CreateObject();
	cJSON *actions = cJSON_CreateArray();
	cJSON *artifacts = cJSON_CreateArray();
	cJSON *out;
	struct strbuf findings = STRBUF_INIT;
	char *text;

	strbuf_init(&findings);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(attempt, "rounds")) {
		cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(r, "tool_calls")) {
			const char *tool = jsonx_str(call, "name");
			const cJSON *in = cJSON_GetObjectItemCaseSensitive(call, "input");
			const char *path = jsonx_str(in, "path");
			char *act = xasprintf("%s %s", tool, path ? path : "");

			cJSON_AddItemToArray(actions, cJSON_CreateString(act));
			free(act);
			if (path && !strcmp(tool, "write_file")) {
				cJSON_AddItemToArray(artifacts, cJSON_CreateString(path));
				strbuf_addf(&findings, "%sWrote %s.", findings.len ? " " : "",
					    path);
			}
		}
	}
	if (!findings.len)
		strbuf_addf(&findings, "Step %s carried out as described.", req->step_id);
	cJSON_AddStringToObject(res, "reasoning",
				"Followed the step description and recorded the outcome in the "
				"workspace so it can be checked.");
	cJSON_AddItemToObject(res, "actions_taken", actions);
	out = cJSON_AddObjectToObject(res, "step_output");
	cJSON_AddStringToObject(out, "findings", findings.buf);
	cJSON_AddItemToObject(out, "artifacts", artifacts);
	cJSON_AddBoolToObject(out, "meets_criteria", 1);
	cJSON_AddNumberToObject(res, "confidence", 0.9);
	cJSON_AddStringToObject(res, "notes", "");
	text = jsonx_print(res);
	cJSON_Delete(res);
	strbuf_release(&findings);
	return text;
}

/* A verdict passing every criterion in crit[0..n). */
static char *passing_verdict(char *const *crit, size_t n, const char *evidence)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"overall_pass\":true,\"criteria_results\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addc(&sb, ',');
		strbuf_adds(&sb, "{\"criterion\":");
		add_json_str(&sb, crit[i]);
		strbuf_adds(&sb, ",\"passed\":true,\"evidence\":");
		add_json_str(&sb, evidence);
		strbuf_adds(&sb, ",\"confidence\":0.9,\"feedback\":\"\"}");
	}
	strbuf_adds(&sb, "],\"action\":\"pass\",\"feedback_for_executor\":\"\","
			 "\"severity\":\"minor\"}");
	return strbuf_detach(&sb);
}

static char *default_verdict(struct sim *s, const struct llm_request *req)
{
	const struct sim_step *st = step_of(s, req);
	struct strbuf ev;
	char *text;

	strbuf_init(&ev);
	strbuf_adds(&ev, "The result of step ");
	strbuf_adds(&ev, req->step_id);
	strbuf_adds(&ev, " addresses this directly and its declared artifacts are present in "
			 "the workspace.");
	text = passing_verdict(st->criteria.v, st->criteria.n, ev.buf);
	strbuf_release(&ev);
	return text;
}

static char *default_final_check(struct sim *s)
{
	struct strvec crit = STRVEC_INIT;
	const cJSON *c;
	char *text;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(s->last_plan, "success_criteria"))
		if (cJSON_IsString(c))
			strvec_push(&crit, c->valuestring);
	text = passing_verdict(crit.v, crit.n,
			       "Every step of the plan passed verification and its result "
			       "contributes to this.");
	strvec_clear(&crit);
	return text;
}

static char *default_synthesis(struct sim *s, const struct llm_request *req)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *step;
	const char *goal = jsonx_str(s->last_plan, "goal");

	strbuf_init(&sb);
	strbuf_adds(&sb, goal ? goal : (req->task ? req->task : "Result"));
	strbuf_adds(&sb, "\n\nVerified results:\n");
	cJSON_ArrayForEach(step, cJSON_GetObjectItemCaseSensitive(s->last_plan, "steps")) {
		const char *id = jsonx_str(step, "step_id");
		const char *name = jsonx_str(step, "name");

		strbuf_adds(&sb, "- ");
		strbuf_adds(&sb, name ? name : "step");
		strbuf_adds(&sb, " (");
		strbuf_adds(&sb, id ? id : "?");
		strbuf_adds(&sb, "): done; see ");
		strbuf_adds(&sb, id ? id : "the step");
		strbuf_adds(&sb, ".md in the workspace.\n");
	}
	return strbuf_detach(&sb);
}

/* ---- answering -------------------------------------------------------------------------- */

/* The entry of a list by 1-based index; past the end, the last one. */
static const cJSON *nth_or_last(const cJSON *list, int idx1)
{
	int n = cJSON_GetArraySize(list);

	if (n <= 0)
		return NULL;
	if (idx1 < 1)
		idx1 = 1;
	return cJSON_GetArrayItem(list, idx1 > n ? n - 1 : idx1 - 1);
}

static size_t count_tool_rounds(const struct llm_request *req, const char **last_result)
{
	size_t n = 0;

	*last_result = NULL;
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *m = &req->msgs[i];

		if (m->kind != LLM_MSG_TOOL_RESULTS)
			continue;
		n++;
		if (m->n_results)
			*last_result = m->results[m->n_results - 1].content;
	}
	return n;
}

struct sim_answer {
	char *text;
	struct llm_tool_call *calls;
	size_t n_calls;
};

/* A new tool call of the answer, with the next id ("toolu_sim_N"). */
static struct llm_tool_call *add_call(struct sim *s, struct sim_answer *ans)
{
	struct llm_tool_call *c;
	size_t cap = ans->n_calls;
	char num[24], *p = num + sizeof(num);
	unsigned long id = (unsigned long)++s->next_call_id;

	ans->calls = xgrow(ans->calls, &cap, ans->n_calls + 1, sizeof(*ans->calls));
	c = &ans->calls[ans->n_calls++];
	*--p = '\0';
	do
		*--p = (char)('0' + id % 10);
	while (id /= 10);
	c->id = xmalloc(strlen("toolu_sim_") + (size_t)(num + sizeof(num) - p));
	strcpy(c->id, "toolu_sim_");
	strcat(c->id, p);
	return c;
}

static void answer_executor(struct sim *s, const struct llm_request *req,
			    const struct sim_vars *v, struct sim_answer *ans)
{
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(s->script, "executor");
	const cJSON *attempt = nth_or_last(cJSON_GetObjectItemCaseSensitive(steps, req->step_id),
					   req->attempt);
	const cJSON *rounds, *round, *call;
	const char *unused;
	size_t done = count_tool_rounds(req, &unused), n_rounds;

	if (!attempt) {
		/* The default attempt: one round, then its result. */
		struct llm_tool_call *c;

		if (done >= 1) {
			ans->text = default_final(req);
			return;
		}
		c = add_call(s, ans);
		c->name = xstrdup("write_file");
		default_round(step_of(s, req), req, v, &ans->text, &c->input_json);
		return;
	}
	rounds = cJSON_GetObjectItemCaseSensitive(attempt, "rounds");
	n_rounds = (size_t)cJSON_GetArraySize(rounds);
	if (done >= n_rounds) {
		const cJSON *final = cJSON_GetObjectItemCaseSensitive(attempt, "final");

		ans->text = final ? render(final, v) : scripted_final(attempt, req);
		return;
	}
	round = cJSON_GetArrayItem(rounds, (int)done);
	ans->text = render(cJSON_GetObjectItemCaseSensitive(round, "text"), v);
	cJSON_ArrayForEach(call, cJSON_GetObjectItemCaseSensitive(round, "tool_calls")) {
		const cJSON *input = cJSON_GetObjectItemCaseSensitive(call, "input");
		struct llm_tool_call *c = add_call(s, ans);

		c->name = xstrdup(jsonx_str(call, "name"));
		c->input_json = input ? render(input, v) : xstrdup("{}");
	}
}

static void remember_plan(struct sim *s, const char *text)
{
	char *err = NULL;
	cJSON *p = jsonx_extract(text, 64, &err);

	free(err);
	if (!cJSON_IsObject(p)) {
		cJSON_Delete(p);
		return;
	}
	cJSON_Delete(s->last_plan);
	s->last_plan = p;
}

/* Builds the answer to `req` (under s->mu). false + *err when the request cannot be
 * answered. */
static bool sim_answer_build(struct sim *s, const struct llm_request *req,
			     struct sim_answer *ans, char **err)
{
	const cJSON *sc = s->script;
	struct sim_vars v = {req->task ? req->task : s->task, req->step_id, req->attempt, NULL};
	const cJSON *t;

	count_tool_rounds(req, &v.tool_result);
	switch (req->purpose) {
	case PURPOSE_PLAN:
	case PURPOSE_REPLAN:
		/* A replan never gets the first plan back, even in a resumed run whose
		 * counter started again at zero. */
		if (++s->planner_calls < 2 && req->purpose == PURPOSE_REPLAN)
			s->planner_calls = 2;
		t = nth_or_last(cJSON_GetObjectItemCaseSensitive(sc, "planner"), s->planner_calls);
		ans->text = render(t, &v);
		remember_plan(s, ans->text);
		return true;
	case PURPOSE_EXECUTE:
	case PURPOSE_VERIFY:
		if (!req->step_id || !*req->step_id) {
			*err = xasprintf("simulated provider: a %s call needs a step_id",
					 llm_purpose_name(req->purpose));
			return false;
		}
		if (req->purpose == PURPOSE_EXECUTE) {
			answer_executor(s, req, &v, ans);
			return true;
		}
		t = nth_or_last(cJSON_GetObjectItemCaseSensitive(
					cJSON_GetObjectItemCaseSensitive(sc, "verifier"),
					req->step_id),
				req->attempt);
		ans->text = t ? render(t, &v) : default_verdict(s, req);
		return true;
	case PURPOSE_FINAL_CHECK:
		t = cJSON_GetObjectItemCaseSensitive(sc, "final_check");
		ans->text = t ? render(t, &v) : default_final_check(s);
		return true;
	case PURPOSE_SYNTHESIZE:
		t = cJSON_GetObjectItemCaseSensitive(sc, "synthesis");
		ans->text = t ? render(t, &v) : default_synthesis(s, req);
		return true;
	}
	*err = xasprintf("simulated provider: unknown call purpose %d", (int)req->purpose);
	return false;
}

/* ---- streaming ------------------------------------------------------------------------ */

static bool cancelled(const struct llm_hooks *h)
{
	return h && h->cancel && atomic_load(h->cancel);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps `ms`, waking to look at the cancel flag. false when cancelled. */
static bool pause_ms(int ms, const struct llm_hooks *h)
{
	while (ms > 0) {
		int slice = ms < SIM_CANCEL_SLICE_MS ? ms : SIM_CANCEL_SLICE_MS;
		struct timespec ts = {slice / 1000, (long)(slice % 1000) * 1000000L};

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		ms -= slice;
		if (cancelled(h))
			return false;
	}
	return true;
}

/* Length of the next chunk at `p` (of `left` bytes), ending on a UTF-8 boundary. */
static size_t chunk_len(const char *p, size_t left)
{
	size_t n = left < SIM_CHUNK ? left : SIM_CHUNK;

	while (n < left && n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
		n--;
	if (n == 0) {
		/* A 16-byte run of continuation bytes is not UTF-8; keep it whole. */
		n = left < SIM_CHUNK ? left : SIM_CHUNK;
	}
	return n;
}

static bool stream(const char *text, int delay_ms, const struct llm_hooks *h)
{
	size_t left = strlen(text), off = 0;

	if (cancelled(h))
		return false;
	while (left) {
		size_t n = chunk_len(text + off, left);

		if (off && !pause_ms(delay_ms, h))
			return false;
		if (cancelled(h))
			return false;
		if (h && h->on_delta)
			h->on_delta(h->ctx, text + off, n);
		off += n;
		left -= n;
	}
	return true;
}

static long input_bytes(const struct llm_request *req)
{
	size_t n = req->system ? strlen(req->system) : 0;

	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *m = &req->msgs[i];

		n += m->text ? strlen(m->text) : 0;
		for (size_t j = 0; j < m->n_calls; j++)
			n += m->calls[j].input_json ? strlen(m->calls[j].input_json) : 0;
		for (size_t j = 0; j < m->n_results; j++)
			n += m->results[j].content ? strlen(m->results[j].content) : 0;
	}
	return (long)n;
}

static const char *default_model(enum llm_role r)
{
	switch (r) {
	case ROLE_PLANNER: return "sim-planner";
	case ROLE_EXECUTOR: return "sim-executor";
	case ROLE_VERIFIER: return "sim-verifier";
	default: break;
	}
	return "sim";
}

static void answer_release(struct sim_answer *a)
{
	free(a->text);
	for (size_t i = 0; i < a->n_calls; i++)
		llm_tool_call_release(&a->calls[i]);
	free(a->calls);
	memset(a, 0, sizeof(*a));
}

static int sim_complete(struct provider *p, const struct llm_request *req,
			const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct sim *s = p->impl;
	struct sim_answer ans = {0};
	long start = now_ms(), out_bytes;
	bool ok;

	if (pthread_mutex_lock(&s->mu))
		fatal("simulated provider: cannot lock its mutex");
	ok = sim_answer_build(s, req, &ans, err);
	pthread_mutex_unlock(&s->mu);
	if (!ok)
		return PROVIDER_ERROR;
	if (!stream(ans.text, s->delay_ms, hooks)) {
		answer_release(&ans);
		return PROVIDER_CANCELLED;
	}
	out_bytes = (long)strlen(ans.text);
	for (size_t i = 0; i < ans.n_calls; i++)
		out_bytes += (long)(strlen(ans.calls[i].input_json) + strlen(ans.calls[i].name));
	memset(out, 0, sizeof(*out));
	out->text = ans.text;
	out->calls = ans.calls;
	out->n_calls = ans.n_calls;
	out->stop_reason = xstrdup(ans.n_calls ? "tool_use" : "end_turn");
	out->usage.input_tokens = input_bytes(req) / 4;
	out->usage.output_tokens = out_bytes / 4 > 0 ? out_bytes / 4 : 1;
	out->usage.reported = true;
	out->http_status = 0;
	out->model = xstrdup(req->model && *req->model ? req->model : default_model(req->role));
	out->latency_ms = now_ms() - start;
	return PROVIDER_OK;
}

static void sim_destroy(struct provider *p)
{
	struct sim *s = p->impl;

	pthread_mutex_destroy(&s->mu);
	cJSON_Delete(s->script);
	cJSON_Delete(s->last_plan);
	for (size_t k = 0; k < SIM_STEP_CACHE; k++)
		sim_step_free(s->steps[k]);
	free(s->task);
	for (size_t i = 0; i < s->n_seeds; i++) {
		free(s->seeds[i].path);
		free(s->seeds[i].content);
	}
	free(s->seeds);
	free(s);
	free(p);
}

static const struct provider_ops sim_ops = {
	.name = "sim",
	.complete = sim_complete,
	.destroy = sim_destroy,
};

/* ---- construction ------------------------------------------------------------------- */

static char *read_script(const char *path, size_t *len, char **err)
{
	FILE *f = fopen(path, "rb");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	if (!f) {
		*err = xasprintf("cannot open script \"%s\": %s", path, strerror(errno));
		return NULL;
	}
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		strbuf_add(&sb, buf, n);
		if (sb.len > SIM_MAX_SCRIPT) {
			fclose(f);
			strbuf_release(&sb);
			*err = xasprintf("script \"%s\" is larger than %d MiB; a scenario "
					 "script should be small",
					 path, SIM_MAX_SCRIPT / (1024 * 1024));
			return NULL;
		}
	}
	if (ferror(f)) {
		*err = xasprintf("cannot read script \"%s\": %s", path, strerror(errno));
		fclose(f);
		strbuf_release(&sb);
		return NULL;
	}
	fclose(f);
	*len = sb.len;
	return strbuf_detach(&sb);
}

static char *unknown_scenario(const char *name)
{
	const char *const *names = sim_scenario_names();
	struct strvec sv = STRVEC_INIT;
	char *list, *msg;

	for (size_t i = 0; names[i]; i++)
		strvec_push(&sv, names[i]);
	list = strvec_join(&sv, ", ");
	msg = xasprintf("unknown scenario \"%s\": choose one of %s", name, list);
	free(list);
	strvec_clear(&sv);
	return msg;
}

struct provider *provider_sim_new(const char *scenario, const char *script_path, int delay_ms,
				  char **err)
{
	cJSON *script;
	struct sim *s;
	struct provider *p;
	const cJSON *f;

	if (script_path) {
		size_t len = 0;
		char *text = read_script(script_path, &len, err);
		char *origin;

		if (!text)
			return NULL;
		origin = xasprintf("script \"%s\"", script_path);
		script = script_parse(text, len, origin, err);
		free(origin);
		free(text);
		if (!script)
			return NULL;
	} else {
		const char *name = scenario ? scenario : "generic";

		if (!embedded_json(name)) {
			*err = unknown_scenario(name);
			return NULL;
		}
		script = embedded_parse(name);
		if (!script) {
			char *e = NULL;
			const char *json = embedded_json(name);
			char *origin = xasprintf("built-in scenario \"%s\"", name);

			cJSON_Delete(script_parse(json, strlen(json), origin, &e));
			free(origin);
			*err = e ? e : xasprintf("built-in scenario \"%s\" is broken", name);
			return NULL;
		}
	}
	if (!cJSON_GetObjectItemCaseSensitive(script, "planner")) {
		/* A script about executors and verifiers alone still needs a plan. */
		cJSON *generic = embedded_parse("generic");
		cJSON *pl = cJSON_DetachItemFromObjectCaseSensitive(generic, "planner");

		if (pl)
			cJSON_AddItemToObject(script, "planner", pl);
		cJSON_Delete(generic);
	}
	s = xcalloc(1, sizeof(*s));
	if (pthread_mutex_init(&s->mu, NULL))
		fatal("simulated provider: cannot create a mutex");
	s->script = script;
	s->delay_ms = delay_ms > 0 ? delay_ms : 0;
	s->task = xstrdup(jsonx_str(script, "task"));
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(script, "seed")) {
		size_t cap = s->n_seeds;

		s->seeds = xgrow(s->seeds, &cap, s->n_seeds + 1, sizeof(*s->seeds));
		s->seeds[s->n_seeds].path = xstrdup(f->string);
		s->seeds[s->n_seeds].content = xstrdup(f->valuestring);
		s->n_seeds++;
	}
	p = xcalloc(1, sizeof(*p));
	p->ops = &sim_ops;
	p->simulated = true;
	p->impl = s;
	return p;
}

const char *provider_sim_task(const struct provider *p)
{
	const struct sim *s = p ? p->impl : NULL;

	return s ? s->task : NULL;
}

void provider_sim_seed(const struct provider *p, sim_seed_fn fn, void *ctx)
{
	const struct sim *s = p ? p->impl : NULL;

	for (size_t i = 0; s && i < s->n_seeds; i++)
		fn(ctx, s->seeds[i].path, s->seeds[i].content);
}
