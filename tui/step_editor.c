/* step_editor — form ↔ step JSON, and the external editor loop with errors as comments. */
#include "config.h"

#include "step_editor.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "form.h"
#include "handoff.h"
#include "mouse.h"
#include "plan.h"
#include "strbuf.h"
#include "xalloc.h"

/* Form rows before the criteria. */
enum { F_NAME, F_DESCRIPTION, F_COMPLEXITY, F_CRITERIA };

static const char *jstr(const cJSON *o, const char *k)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

struct form *step_editor_form(const char *step_json)
{
	cJSON *o = step_json ? cJSON_Parse(step_json) : NULL;
	const cJSON *crit, *it;
	struct form *f;
	char *title;
	int n = 0;

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return NULL;
	}
	title = xasprintf("Edit step %s", jstr(o, "step_id") ? jstr(o, "step_id") : "");
	f = form_new(title, "Tab next  ^S save  Esc cancel");
	free(title);
	form_add(f, "Name", jstr(o, "name"));
	form_add(f, "Description", jstr(o, "description"));
	form_add(f, "Complexity", jstr(o, "estimated_complexity"));
	crit = cJSON_GetObjectItemCaseSensitive(o, "acceptance_criteria");
	if (!cJSON_IsArray(crit))
		crit = NULL;
	cJSON_ArrayForEach(it, crit)
	{
		char *label = xasprintf("Criterion %d", ++n);

		form_add(f, label, cJSON_IsString(it) ? it->valuestring : "");
		free(label);
	}
	form_add(f, "New criterion", "");
	cJSON_Delete(o);
	return f;
}

/* Checks a step with the engine's own parser; one sentence on failure (caller frees). */
static char *check_step(const cJSON *o)
{
	struct plan_step st;
	struct strvec errs = STRVEC_INIT;
	char *err = NULL;

	if (!plan_step_from_json(o, &st, &errs))
		err = errs.n ? strvec_join(&errs, "; ") : xstrdup("the step is not valid");
	else
		plan_step_free_fields(&st);
	strvec_clear(&errs);
	return err;
}

static char *check_plan(const cJSON *o)
{
	struct strvec errs = STRVEC_INIT;
	struct plan *p = plan_from_json(o, &errs);
	char *err = NULL;

	if (p && !plan_validate(p, &errs))
		err = strvec_join(&errs, "; ");
	else if (!p)
		err = errs.n ? strvec_join(&errs, "; ") : xstrdup("the plan is not valid");
	plan_free(p);
	strvec_clear(&errs);
	return err;
}

/* Sets a text field, leaving it alone (even absent) when the form did not change it. */
static void set_string(cJSON *o, const char *k, const char *v)
{
	const char *old = jstr(o, k);

	if (strcmp(old ? old : "", v) == 0)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(o, k);
	cJSON_AddStringToObject(o, k, v);
}

char *step_editor_apply(const char *step_json, const struct form *f, char **err)
{
	cJSON *o = cJSON_Parse(step_json), *before, *crit;
	char *after = NULL, *p, *bad;

	*err = NULL;
	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		*err = xstrdup("the step is not a JSON object");
		return NULL;
	}
	before = cJSON_Duplicate(o, true);
	set_string(o, "name", form_value(f, F_NAME));
	set_string(o, "description", form_value(f, F_DESCRIPTION));
	set_string(o, "estimated_complexity", form_value(f, F_COMPLEXITY));
	crit = cJSON_CreateArray();
	for (size_t i = F_CRITERIA; i < form_count(f); i++) {
		const char *c = form_value(f, i);

		while (*c == ' ')
			c++;
		if (*c)
			cJSON_AddItemToArray(crit, cJSON_CreateString(c));
	}
	if (cJSON_Compare(crit, cJSON_GetObjectItemCaseSensitive(o, "acceptance_criteria"), true)) {
		cJSON_Delete(crit);
		crit = cJSON_GetObjectItemCaseSensitive(o, "acceptance_criteria");
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(o, "acceptance_criteria");
		cJSON_AddItemToObject(o, "acceptance_criteria", crit);
	}
	if (complexity_from_name(form_value(f, F_COMPLEXITY)) < 0) {
		*err = xstrdup("complexity must be low, medium or high");
	} else if (cJSON_GetArraySize(crit) == 0) {
		*err = xstrdup("a step needs at least one acceptance criterion");
	} else if ((bad = check_step(o)) != NULL) {
		*err = bad;
	} else if (!cJSON_Compare(before, o, true)) {
		/* Only a real change is an edit (key order does not count). */
		p = cJSON_PrintUnformatted(o);
		after = xstrdup(p);
		cJSON_free(p);
	}
	cJSON_Delete(before);
	cJSON_Delete(o);
	return after;
}

char *step_editor_replace_in_plan(const char *plan_json, const char *step_json)
{
	cJSON *plan = cJSON_Parse(plan_json), *step = cJSON_Parse(step_json), *steps, *it;
	const char *id = cJSON_IsObject(step) ? jstr(step, "step_id") : NULL;
	char *out = NULL, *p;
	int i = 0;

	steps = cJSON_IsObject(plan) ? cJSON_GetObjectItemCaseSensitive(plan, "steps") : NULL;
	if (id && cJSON_IsArray(steps)) {
		cJSON_ArrayForEach(it, steps)
		{
			const char *sid = jstr(it, "step_id");

			if (sid && strcmp(sid, id) == 0) {
				cJSON_ReplaceItemInArray(steps, i, step);
				step = NULL;
				p = cJSON_PrintUnformatted(plan);
				out = xstrdup(p);
				cJSON_free(p);
				break;
			}
			i++;
		}
	}
	cJSON_Delete(step);
	cJSON_Delete(plan);
	return out;
}

/* ---- external editor ---- */

static bool write_file(const char *path, const char *header, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	if (header)
		fputs(header, f);
	fputs(text, f);
	if (text[0] && text[strlen(text) - 1] != '\n')
		fputc('\n', f);
	ok = fclose(f) == 0;
	return ok;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb);
}

/* Drops the leading "//" comment lines we wrote (JSON itself has no comments). */
static const char *skip_comments(const char *s)
{
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		if (s[0] != '/' || s[1] != '/')
			return s;
		s = strchr(s, '\n');
		if (!s)
			return "";
	}
}

/* Runs the editor on `path` with the terminal handed over. false + *err on failure. */
static bool run_editor(const char *path, char **err)
{
	const char *ed = getenv("VISUAL");
	int status;

	if (!ed || !*ed)
		ed = getenv("EDITOR");
	if (!ed || !*ed)
		ed = "vi";
	status = handoff_run(ed, path);
	if (status < 0) {
		*err = xasprintf("cannot start the editor: %s", strerror(errno));
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*err = xasprintf("the editor \"%s\" failed (status %d); nothing was changed", ed,
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return false;
	}
	return true;
}

char *step_editor_external(const char *json, bool is_plan, char **err)
{
	const char *tmp = getenv("TMPDIR");
	char *path, *header = NULL, *last = NULL, *result = NULL, *pretty, *p;
	cJSON *orig = json ? cJSON_Parse(json) : NULL;
	int fd;

	*err = NULL;
	if (!orig) {
		*err = xstrdup("nothing to edit here");
		return NULL;
	}
	p = cJSON_Print(orig);
	pretty = xstrdup(p);
	cJSON_free(p);
	path = xasprintf("%s/pevtui-edit-XXXXXX.json", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0) {
		*err = xasprintf("cannot create a temporary file: %s", strerror(errno));
		goto out;
	}
	close(fd);
	if (!write_file(path, NULL, pretty)) {
		*err = xasprintf("cannot write %s", path);
		goto out;
	}
	last = read_all(path);
	for (;;) {
		char *text, *bad = NULL;
		cJSON *o;

		if (!run_editor(path, err))
			break;
		text = read_all(path);
		if (!text || strcmp(text, last) == 0) {
			/* Unchanged: no edit; after an error, the operator gave up. */
			if (header)
				*err = xstrdup("the edit was abandoned; nothing was changed");
			free(text);
			break;
		}
		free(last);
		last = text;
		o = cJSON_Parse(skip_comments(text));
		if (!o) {
			const char *at = cJSON_GetErrorPtr();

			bad = xasprintf("not valid JSON near: %.40s", at ? at : "?");
		} else {
			bad = is_plan ? check_plan(o) : check_step(o);
		}
		if (!bad) {
			p = cJSON_PrintUnformatted(o);
			result = xstrdup(p);
			cJSON_free(p);
			cJSON_Delete(o);
			break;
		}
		cJSON_Delete(o);
		/* Reopen with the errors on top, keeping what the operator wrote. */
		for (char *q = bad; *q; q++)
			if (*q == '\n')
				*q = ' ';
		free(header);
		header = xasprintf("// pevtui: %s\n// Fix it and save, or save unchanged to give up."
				   " These lines are ignored.\n", bad);
		free(bad);
		if (!write_file(path, header, skip_comments(text))) {
			*err = xasprintf("cannot write %s", path);
			break;
		}
		free(last);
		last = read_all(path);
		if (!last)
			break;
	}
	/* An edit that only reformatted the JSON changes nothing. */
	if (result) {
		cJSON *r = cJSON_Parse(result);

		if (cJSON_Compare(orig, r, true)) {
			free(result);
			result = NULL;
		}
		cJSON_Delete(r);
	}
out:
	unlink(path);
	free(path);
	free(header);
	free(last);
	free(pretty);
	cJSON_Delete(orig);
	return result;
}
