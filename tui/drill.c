/* drill — pages of whole log entries: tool calls, results, verdicts, JSON made readable. */
#include "config.h"

#include "drill.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "result.h"
#include "strbuf.h"
#include "textsan.h"
#include "view.h"
#include "jsonx.h"
#include "xalloc.h"

#define TAB_STOP 8

/* ---- untrusted JSON, read with care ---- */

/* ---- lines ---- */

/* One line of already clean text, tabs expanded, at `indent` columns. */
static void put_line(struct linestore *page, int kind, int indent, const char *s, size_t n)
{
	struct strbuf sb;
	int col = 0;

	strbuf_init(&sb);
	for (int i = 0; i < indent; i++)
		strbuf_addc(&sb, ' ');
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k;

		if (s[i] == '\t') {
			do
				strbuf_addc(&sb, ' ');
			while (++col % TAB_STOP);
			i++;
			continue;
		}
		k = textsan_decode(s + i, n - i, &cp);
		strbuf_add(&sb, s + i, k);
		col += textsan_cpwidth(cp);
		i += k;
	}
	linestore_add(page, kind, sb.buf);
	strbuf_release(&sb);
}

static void put_s(struct linestore *page, int kind, int indent, const char *s)
{
	put_line(page, kind, indent, s, strlen(s));
}

/* Untrusted text as lines at `indent`; a trailing newline makes no empty last line. */
static void put_text(struct linestore *page, int kind, int indent, const char *text, size_t len)
{
	char *c = textsan_clean(text, len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	const char *p = c;
	size_t n = strlen(c);

	if (n && c[n - 1] == '\n')
		n--;
	for (;;) {
		const char *nl = memchr(p, '\n', n - (size_t)(p - c));
		size_t k = nl ? (size_t)(nl - p) : n - (size_t)(p - c);

		put_line(page, kind, indent, p, k);
		if (!nl)
			break;
		p = nl + 1;
	}
	free(c);
}

static void putf(struct linestore *page, int kind, int indent, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void putf(struct linestore *page, int kind, int indent, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	put_text(page, kind, indent, s, strlen(s));
	free(s);
}

static cJSON *json_in_text(const char *text, size_t len);

/* Strings that hold a JSON object or array (tool arguments as OpenAI sends them, tool
 * outputs) become that value, so that they are pretty-printed too. */
static void expand_strings(cJSON *v, int depth)
{
	cJSON *it;

	if (depth > 32)
		return;
	for (it = v ? v->child : NULL; it; it = it->next) {
		cJSON *inner = cJSON_IsString(it) ? json_in_text(it->valuestring,
								 strlen(it->valuestring))
						  : NULL;

		if (inner) {
			/* replaced in place, by pointer: a repeated key names another item */
			if (it->string) {
				size_t n = strlen(it->string) + 1;

				inner->string = cJSON_malloc(n);
				if (!inner->string)
					fatal("drill: out of memory");
				memcpy(inner->string, it->string, n);
			}
			cJSON_ReplaceItemViaPointer(v, it, inner);
			it = inner;
		}
		expand_strings(it, depth + 1);
	}
}

/* cJSON's pretty print, its tab indentation as two spaces. */
static void put_pretty(struct linestore *page, int kind, int indent, const cJSON *v)
{
	cJSON *copy = cJSON_Duplicate(v, 1);
	char *p = copy ? (expand_strings(copy, 0), cJSON_Print(copy)) : NULL, *line, *save = NULL;

	cJSON_Delete(copy);
	if (!p)
		return;
	for (line = strtok_r(p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int tabs = 0;

		while (line[tabs] == '\t')
			tabs++;
		{
			char *c = textsan_clean(line + tabs, strlen(line + tabs), 0);

			put_line(page, kind, indent + 2 * tabs, c, strlen(c));
			free(c);
		}
	}
	cJSON_free(p);
}

/* The text parsed when it is a JSON object or array (as tools often answer), else NULL. */
static cJSON *json_in_text(const char *text, size_t len)
{
	size_t i = 0;
	char *copy;
	cJSON *v;

	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
		i++;
	if (i >= len || (text[i] != '{' && text[i] != '['))
		return NULL;
	copy = xstrndup(text, len);
	v = cJSON_Parse(copy);
	free(copy);
	if (v && !cJSON_IsObject(v) && !cJSON_IsArray(v)) {
		cJSON_Delete(v);
		v = NULL;
	}
	return v;
}

void drill_text(struct linestore *page, int kind, const char *text, size_t len, int indent)
{
	cJSON *v;

	if (!text || !len) {
		put_line(page, DRILL_DIM, indent, "(empty)", 7);
		return;
	}
	v = json_in_text(text, len);
	if (v) {
		put_pretty(page, kind, indent, v);
		cJSON_Delete(v);
		return;
	}
	put_text(page, kind, indent, text, len);
}

/* A scalar as one line of text ("" around no string: it is a field's value). */
static char *scalar(const cJSON *v)
{
	char *p, *r;

	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	p = cJSON_PrintUnformatted(v);
	r = xstrdup(p ? p : "null");
	cJSON_free(p);
	return r;
}

void drill_value(struct linestore *page, const cJSON *v, int indent)
{
	const cJSON *m;

	if (!v)
		return;
	if (cJSON_IsString(v)) {
		drill_text(page, VL_TEXT, v->valuestring, strlen(v->valuestring), indent);
		return;
	}
	if (!cJSON_IsObject(v) || !v->child) {
		put_pretty(page, VL_TEXT, indent, v);
		return;
	}
	cJSON_ArrayForEach(m, v)
	{
		const char *name = m->string ? m->string : "?";
		cJSON *inner = cJSON_IsString(m) ? json_in_text(m->valuestring,
								strlen(m->valuestring))
						 : NULL;
		bool block = inner || (cJSON_IsString(m) && strchr(m->valuestring, '\n')) ||
			     ((cJSON_IsObject(m) || cJSON_IsArray(m)) && m->child);

		if (!block) {
			char *s = scalar(m);

			putf(page, VL_TEXT, indent, "%s: %s", name, s);
			free(s);
		} else {
			putf(page, DRILL_KEY, indent, "%s:", name);
			if (inner)
				put_pretty(page, VL_TEXT, indent + 2, inner);
			else if (cJSON_IsString(m))
				put_text(page, VL_TEXT, indent + 2, m->valuestring,
					 strlen(m->valuestring));
			else
				put_pretty(page, VL_TEXT, indent + 2, m);
		}
		cJSON_Delete(inner);
	}
}

/* ---- the executor's result ---- */

static void section(struct linestore *page, const char *title)
{
	put_text(page, VL_HEADER, 0, title, strlen(title));
}

void drill_result(struct linestore *page, const cJSON *result)
{
	const cJSON *so = jsonx_field(result, "step_output"),
	            *findings = jsonx_field(so, "findings");
	struct exec_result *r = NULL;
	char *text, *err = NULL;

	if (cJSON_IsString(result)) {
		section(page, "The executor's answer could not be read as a result; as it was "
			      "written:");
		drill_text(page, VL_TEXT, result->valuestring, strlen(result->valuestring), 2);
		return;
	}
	text = result ? cJSON_PrintUnformatted(result) : NULL;
	if (text)
		r = exec_result_parse(text, &err);
	cJSON_free(text);
	if (!r) {
		/* Not the shape a result has: every field, readable. */
		free(err);
		drill_value(page, result, 0);
		return;
	}
	section(page, "Findings");
	if (findings && !cJSON_IsString(findings))
		put_pretty(page, VL_TEXT, 2, findings);
	else
		drill_text(page, VL_TEXT, r->findings ? r->findings : "",
			   r->findings ? strlen(r->findings) : 0, 2);
	section(page, r->artifacts.n ? "Artifacts (o opens one, d shows its diff against the "
				       "previous attempt, Tab picks)"
				     : "Artifacts");
	if (!r->artifacts.n)
		put_s(page, DRILL_DIM, 2, "(none declared)");
	for (size_t i = 0; i < r->artifacts.n; i++)
		putf(page, VL_TEXT, 2, "%zu. %s", i + 1, r->artifacts.v[i]);
	if (r->n_criteria_met) {
		putf(page, r->meets_criteria ? VL_PASS : VL_CRITIQUE, 0,
		     "Meets criteria: %s (per criterion)", r->meets_criteria ? "yes" : "no");
		for (size_t i = 0; i < r->n_criteria_met; i++)
			putf(page, r->criteria_met[i].met ? VL_TEXT : VL_CRITIQUE, 2, "%s %s",
			     r->criteria_met[i].met ? "\xe2\x9c\x93" : "\xe2\x9c\x97",
			     r->criteria_met[i].name);
	} else {
		putf(page, r->meets_criteria ? VL_PASS : VL_CRITIQUE, 0, "Meets criteria: %s",
		     r->meets_criteria ? "yes" : "no");
	}
	putf(page, VL_HEADER, 0, "Confidence: %.2f", r->confidence);
	if (r->notes && *r->notes) {
		section(page, "Notes");
		drill_text(page, VL_TEXT, r->notes, strlen(r->notes), 2);
	}
	if (r->reasoning && *r->reasoning) {
		section(page, "Reasoning");
		drill_text(page, VL_TEXT, r->reasoning, strlen(r->reasoning), 2);
	}
	if (r->actions_taken.n) {
		section(page, "Actions taken");
		for (size_t i = 0; i < r->actions_taken.n; i++)
			putf(page, VL_TEXT, 2, "\xe2\x80\xa2 %s", r->actions_taken.v[i]);
	}
	exec_result_free(r);
}

/* ---- events ---- */

static void verdict(struct linestore *page, const cJSON *o)
{
	const cJSON *crit = jsonx_field(o, "criteria"), *c;
	const char *sev = jsonx_str(o, "severity"), *fb = jsonx_str(o, "feedback");
	bool pass = cJSON_IsTrue(jsonx_field(o, "overall_pass"));
	double d = 0;

	putf(page, pass ? VL_PASS : VL_CRITIQUE, 0, "Verdict: %s%s%s \xc2\xb7 %s stage \xc2\xb7 %s",
	     jsonx_str(o, "action") ? jsonx_str(o, "action") : "?", sev ? ", " : "", sev ? sev : "",
	     jsonx_str(o, "stage") ? jsonx_str(o, "stage") : "?", pass ? "passed" : "not passed");
	if (cJSON_IsArray(crit) && cJSON_GetArraySize(crit) > 0) {
		section(page, "Criteria");
		cJSON_ArrayForEach(c, crit)
		{
			bool nj = cJSON_IsTrue(jsonx_field(c, "not_judged")),
			     ok = cJSON_IsTrue(jsonx_field(c, "passed"));
			char conf[32] = "";

			if (jsonx_num(c, "confidence", &d))
				snprintf(conf, sizeof(conf), " (%.2f)", d);
			putf(page, nj ? DRILL_DIM : ok ? VL_TEXT : VL_CRITIQUE, 2, "%s %s%s%s",
			     nj ? "?" : ok ? "\xe2\x9c\x93" : "\xe2\x9c\x97",
			     jsonx_str(c, "criterion") ? jsonx_str(c, "criterion") : "", nj ? " (not judged)" : "",
			     conf);
			if (jsonx_str(c, "evidence") && *jsonx_str(c, "evidence")) {
				put_s(page, DRILL_KEY, 4, "evidence:");
				drill_text(page, VL_TEXT, jsonx_str(c, "evidence"), strlen(jsonx_str(c, "evidence")),
					   6);
			}
			if (jsonx_str(c, "feedback") && *jsonx_str(c, "feedback")) {
				put_s(page, DRILL_KEY, 4, "feedback:");
				drill_text(page, VL_TEXT, jsonx_str(c, "feedback"), strlen(jsonx_str(c, "feedback")),
					   6);
			}
		}
	}
	if (fb && *fb) {
		section(page, pass ? "Feedback" : "Feedback for the next attempt");
		drill_text(page, VL_CRITIQUE, fb, strlen(fb), 2);
	}
}

static void tool_call(struct linestore *page, const cJSON *o)
{
	const cJSON *params = jsonx_field(o, "params");

	putf(page, VL_TOOL, 0, "\xe2\x86\x92 %s  (call %s)", jsonx_str(o, "tool") ? jsonx_str(o, "tool") : "?",
	     jsonx_str(o, "call_id") && *jsonx_str(o, "call_id") ? jsonx_str(o, "call_id") : "without an id");
	section(page, "Arguments");
	if (cJSON_IsObject(params) && !params->child)
		put_s(page, DRILL_DIM, 2, "(none)");
	else
		drill_value(page, params, 2);
}

static void tool_result(struct linestore *page, const cJSON *o, const struct drill_input *in)
{
	bool ok = cJSON_IsTrue(jsonx_field(o, "ok"));
	const char *cmd = jsonx_str(o, "command"), *out = jsonx_str(o, "output"), *file = jsonx_str(o, "output_file");
	double d = 0;
	struct strbuf sb;

	putf(page, ok ? VL_TOOL_OK : VL_TOOL_FAIL, 0, "\xe2\x86\x90 %s %s \xc2\xb7 %.0f bytes",
	     jsonx_str(o, "tool") ? jsonx_str(o, "tool") : "?", ok ? "ok" : "failed",
	     jsonx_num(o, "bytes", &d) ? d : 0);
	if (cmd) {
		/* run_shell: the command as it ran, how it ended and how long it took */
		section(page, "Command");
		drill_text(page, VL_TEXT, cmd, strlen(cmd), 2);
		strbuf_init(&sb);
		if (jsonx_field(o, "ran") && !cJSON_IsTrue(jsonx_field(o, "ran")))
			strbuf_adds(&sb, "did not run");
		else if (jsonx_num(o, "exit_status", &d))
			strbuf_addf(&sb, "exit status %.0f", d);
		else if (jsonx_num(o, "signal", &d))
			strbuf_addf(&sb, "ended by signal %.0f", d);
		if (cJSON_IsTrue(jsonx_field(o, "timed_out")))
			strbuf_adds(&sb, sb.len ? ", timed out" : "timed out");
		if (jsonx_num(o, "duration_ms", &d))
			strbuf_addf(&sb, "%s%.1f s", sb.len ? " \xc2\xb7 " : "", d / 1000.0);
		if (jsonx_str(o, "approval"))
			strbuf_addf(&sb, "%sapproval: %s", sb.len ? " \xc2\xb7 " : "",
				    jsonx_str(o, "approval"));
		if (sb.len)
			put_text(page, VL_NOTICE, 2, sb.buf, sb.len);
		strbuf_release(&sb);
	}
	if (in->output) {
		section(page, in->output_cut ? "Output (kept up to 1 MiB; the rest is not shown)"
					     : "Output");
		drill_text(page, ok ? VL_TEXT : VL_TOOL_FAIL, in->output, in->output_len, 2);
	} else if (out) {
		section(page, "Output");
		drill_text(page, ok ? VL_TEXT : VL_TOOL_FAIL, out, strlen(out), 2);
	} else {
		section(page, "Output (summary: the full output was not kept)");
		drill_text(page, ok ? VL_TEXT : VL_TOOL_FAIL, jsonx_str(o, "summary") ? jsonx_str(o, "summary") : "",
			   jsonx_str(o, "summary") ? strlen(jsonx_str(o, "summary")) : 0, 2);
	}
	if (file)
		putf(page, DRILL_DIM, 0, "Kept in the run folder: %s", file);
}

/* Every field but the envelope. */
static void fields(struct linestore *page, const cJSON *o)
{
	cJSON *copy = cJSON_Duplicate(o, 1);

	cJSON_DeleteItemFromObjectCaseSensitive(copy, "seq");
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "ts");
	cJSON_DeleteItemFromObjectCaseSensitive(copy, "type");
	drill_value(page, copy, 2);
	cJSON_Delete(copy);
}

static void log_lines(struct linestore *page, const struct drill_input *in)
{
	for (size_t i = in->first; in->log && i < in->end && i < in->log->n; i++)
		linestore_add(page, in->log->v[i].kind, in->log->v[i].text);
}

void drill_event(struct linestore *page, const struct drill_input *in)
{
	cJSON *o = in->json ? cJSON_Parse(in->json) : NULL, *pair;
	const char *type = jsonx_str(o, "type"), *ts = jsonx_str(o, "ts");
	double seq = 0, att = 0;

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		log_lines(page, in);
		put_s(page, DRILL_DIM, 0, "Streamed text: shown as it came, not journaled.");
		return;
	}
	jsonx_num(o, "seq", &seq);
	jsonx_num(o, "attempt", &att);
	{
		struct strbuf sb;

		strbuf_init(&sb);
		strbuf_adds(&sb, type ? type : "event");
		if (jsonx_str(o, "step_id"))
			strbuf_addf(&sb, " \xc2\xb7 step %s", jsonx_str(o, "step_id"));
		if (att > 0)
			strbuf_addf(&sb, " \xc2\xb7 attempt %.0f", att);
		strbuf_addf(&sb, " \xc2\xb7 journal seq %.0f%s%s", seq, ts ? " \xc2\xb7 " : "",
			    ts ? ts : "");
		put_text(page, DRILL_DIM, 0, sb.buf, sb.len);
		strbuf_release(&sb);
	}
	pair = in->pair_json ? cJSON_Parse(in->pair_json) : NULL;
	if (type && !strcmp(type, "tool.call")) {
		tool_call(page, o);
		if (cJSON_IsObject(pair))
			tool_result(page, pair, in);
		else
			put_s(page, DRILL_DIM, 0, "(no result yet)");
	} else if (type && !strcmp(type, "tool.result")) {
		if (cJSON_IsObject(pair))
			tool_call(page, pair);
		tool_result(page, o, in);
	} else if (type && !strcmp(type, "step.output")) {
		putf(page, VL_HEADER, 0, "Result of attempt %.0f", att);
		drill_result(page, jsonx_field(o, "result"));
	} else if (type && !strcmp(type, "verify.verdict")) {
		verdict(page, o);
	} else if (type && (!strcmp(type, "plan.proposed") || !strcmp(type, "plan.adopted"))) {
		log_lines(page, in);
		section(page, "Plan");
		drill_value(page, jsonx_field(o, "plan"), 2);
	} else {
		log_lines(page, in);
		section(page, "Event");
		fields(page, o);
	}
	cJSON_Delete(pair);
	cJSON_Delete(o);
}

void drill_diff(struct linestore *page, const char *unified)
{
	const char *p = unified;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int kind = VL_TEXT;

		if (!strncmp(p, "+++ ", 4) || !strncmp(p, "--- ", 4))
			kind = VL_HEADER;
		else if (*p == '+')
			kind = DRILL_ADD;
		else if (*p == '-')
			kind = DRILL_DEL;
		else if (*p == '@')
			kind = DRILL_HUNK;
		else if (*p == '\\')
			kind = DRILL_DIM;
		put_text(page, kind, 0, p, n);
		p = nl ? nl + 1 : p + n;
	}
}

/* ---- requests ---- */

/* A message's content: text, or blocks (text, tool_use, tool_result, image …). */
static void content(struct linestore *page, const cJSON *c, int indent)
{
	const cJSON *b;

	if (cJSON_IsString(c)) {
		drill_text(page, VL_TEXT, c->valuestring, strlen(c->valuestring), indent);
		return;
	}
	if (!cJSON_IsArray(c)) {
		if (c && !cJSON_IsNull(c))
			drill_value(page, c, indent);
		return;
	}
	cJSON_ArrayForEach(b, c)
	{
		const char *type = jsonx_str(b, "type");

		if (type && !strcmp(type, "text") && jsonx_str(b, "text")) {
			drill_text(page, VL_TEXT, jsonx_str(b, "text"), strlen(jsonx_str(b, "text")), indent);
		} else if (type && !strcmp(type, "tool_use")) {
			putf(page, VL_TOOL, indent, "\xe2\x86\x92 %s  (call %s)",
			     jsonx_str(b, "name") ? jsonx_str(b, "name") : "?", jsonx_str(b, "id") ? jsonx_str(b, "id") : "?");
			drill_value(page, jsonx_field(b, "input"), indent + 2);
		} else if (type && !strcmp(type, "tool_result")) {
			putf(page, cJSON_IsTrue(jsonx_field(b, "is_error")) ? VL_TOOL_FAIL : VL_TOOL_OK, indent,
			     "\xe2\x86\x90 result of call %s%s",
			     jsonx_str(b, "tool_use_id") ? jsonx_str(b, "tool_use_id") : "?",
			     cJSON_IsTrue(jsonx_field(b, "is_error")) ? " (error)" : "");
			content(page, jsonx_field(b, "content"), indent + 2);
		} else {
			drill_value(page, b, indent);
		}
	}
}

static void messages(struct linestore *page, const cJSON *msgs)
{
	const cJSON *m;
	int i = 0;

	putf(page, VL_HEADER, 0, "messages (%d)", cJSON_GetArraySize(msgs));
	cJSON_ArrayForEach(m, msgs)
	{
		cJSON *rest;

		putf(page, DRILL_KEY, 0, "\xe2\x94\x80\xe2\x94\x80 %d. %s \xe2\x94\x80\xe2\x94\x80", ++i,
		     jsonx_str(m, "role") ? jsonx_str(m, "role") : "?");
		content(page, jsonx_field(m, "content"), 2);
		/* Whatever else the message carries: OpenAI's tool_calls and tool_call_id, the
		 * simulated provider's tool_calls and results. */
		rest = cJSON_Duplicate(m, 1);
		cJSON_DeleteItemFromObjectCaseSensitive(rest, "role");
		cJSON_DeleteItemFromObjectCaseSensitive(rest, "content");
		if (cJSON_IsObject(rest) && rest->child)
			drill_value(page, rest, 2);
		cJSON_Delete(rest);
	}
}

static void tools(struct linestore *page, const cJSON *ts)
{
	const cJSON *t;
	struct strbuf sb;

	strbuf_init(&sb);
	cJSON_ArrayForEach(t, ts)
	{
		const char *name = jsonx_str(t, "name");

		if (!name)
			name = jsonx_str(jsonx_field(t, "function"), "name"); /* OpenAI */
		strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", name ? name : "?");
	}
	if (!sb.len) {
		put_s(page, VL_HEADER, 0, "tools: none");
	} else {
		putf(page, VL_HEADER, 0, "tools (%d): %s", cJSON_GetArraySize(ts), sb.buf);
		put_s(page, DRILL_DIM, 2, "(their schemas are in the file: o shows it whole)");
	}
	strbuf_release(&sb);
}

void drill_request(struct linestore *page, const char *body, size_t len)
{
	cJSON *o = json_in_text(body, len);
	const cJSON *m;

	if (!cJSON_IsObject(o)) {
		cJSON_Delete(o);
		drill_text(page, VL_TEXT, body, len, 0);
		return;
	}
	cJSON_ArrayForEach(m, o)
	{
		const char *k = m->string ? m->string : "?";

		if (!strcmp(k, "system") && (cJSON_IsString(m) || cJSON_IsArray(m))) {
			put_s(page, VL_HEADER, 0, "system");
			content(page, m, 2);
		} else if (!strcmp(k, "messages") && cJSON_IsArray(m)) {
			messages(page, m);
		} else if (!strcmp(k, "tools") && cJSON_IsArray(m)) {
			tools(page, m);
		} else {
			cJSON *one = cJSON_CreateObject();

			cJSON_AddItemToObject(one, k, cJSON_Duplicate(m, 1));
			drill_value(page, one, 0);
			cJSON_Delete(one);
		}
	}
	cJSON_Delete(o);
}
