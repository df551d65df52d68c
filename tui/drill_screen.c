/*
 * drill_screen — a stack of full-screen pages over the cockpit: the entry, then what it
 * leads to (a diff, the requests). Everything is read when a page opens and kept as
 * sanitized lines; the view is looked up again by step id at each key, so a replan or a
 * replay that rebuilt it does not leave the screen pointing at freed memory.
 */
#include "config.h"

#include "drill_screen.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attempts.h"
#include "draw.h"
#include "drill.h"
#include "drill_changes.h"
#include "events.h"
#include "linediff.h"
#include "logview.h"
#include "pager.h"
#include "rect.h"
#include "requests.h"
#include "result.h"
#include "statusbar.h"
#include "strbuf.h"
#include "textsan.h"
#include "view.h"
#include "xalloc.h"

#define MAX_PAGES 4
/* Reads of what the run folder and the workspace hold, for a page or the pager. */
#define REQUEST_MAX (64u << 20)
#define OPEN_MAX (16u << 20)

enum page_kind { PG_ENTRY, PG_DIFF, PG_REQUEST, PG_CHANGES };

struct page {
	enum page_kind kind;
	char *title;
	struct linestore lines;
	struct logview lv;
};

struct drill_screen {
	struct page pages[MAX_PAGES];
	int depth;
	char *step_id;     /* raw; NULL: the run log */
	long entry;        /* index into the log's refs; -1: a line no event is known for */
	int attempt;       /* the attempt the entry belongs to; 0 unknown */
	struct strvec artifacts; /* that attempt's, as its result declared them */
	size_t art;        /* the one o and d act on */
	struct request_ref *reqs;
	size_t n_reqs, req;
	char *message;
};

/* ---- what the view holds ---- */

static const struct vstep *step_of(const struct drill_source *src, const char *id)
{
	int i = id ? view_find_step(src->v, id) : -1;

	return i >= 0 ? &src->v->steps[i] : NULL;
}

static const struct linestore *log_of(const struct drill_source *src, const char *id)
{
	const struct vstep *s = step_of(src, id);

	return id ? (s ? &s->log : NULL) : &src->v->runlog;
}

static const struct logref *refs_of(const struct drill_source *src, const char *id)
{
	const struct vstep *s = step_of(src, id);

	return id ? (s ? &s->refs : NULL) : &src->v->runlog_refs;
}

/* Entry i's event, from the view or (past its budget) the journal. Caller frees. */
static char *entry_json(const struct drill_source *src, const struct logref *r, size_t i)
{
	if (i >= r->n)
		return NULL;
	if (r->v[i].json)
		return xstrdup(r->v[i].json);
	return r->v[i].seq && src->fetch ? src->fetch(src->ctx, r->v[i].seq) : NULL;
}

static int json_attempt(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "attempt");
	int n = cJSON_IsNumber(a) && a->valuedouble > 0 && a->valuedouble < 1e6 ? (int)a->valuedouble
										: 0;

	cJSON_Delete(o);
	return n;
}

/* A field of an event (a string), or NULL. Caller frees. */
static char *json_field(const char *json, const char *key)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char *s = cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;

	cJSON_Delete(o);
	return s;
}

/* The attempt entry i belongs to: its own, else the last one named before it, else the
 * step's latest. */
static int attempt_at(const struct drill_source *src, const char *id, const struct logref *r,
		      long i)
{
	const struct vstep *s = step_of(src, id);

	if (!id)
		return 0;
	for (long k = i; k >= 0 && r; k--) {
		char *j;
		int n;

		if (r->v[k].type == EV_LLM_DELTA)
			continue;
		j = entry_json(src, r, (size_t)k);
		n = json_attempt(j);
		free(j);
		if (n > 0)
			return n;
	}
	return s ? s->f->attempts : 0;
}

/* The result object of the step's attempt n (step.output), parsed; NULL when unknown. */
static cJSON *result_of(const struct drill_source *src, const char *id, int n)
{
	const struct logref *r = refs_of(src, id);
	const struct vstep *s = step_of(src, id);

	for (size_t k = r ? r->n : 0; k-- > 0;) {
		char *j;
		cJSON *o, *res;

		if (r->v[k].type != EV_STEP_OUTPUT)
			continue;
		j = entry_json(src, r, k);
		if (json_attempt(j) != n) {
			free(j);
			continue;
		}
		o = cJSON_Parse(j);
		free(j);
		res = cJSON_DetachItemFromObjectCaseSensitive(o, "result");
		cJSON_Delete(o);
		return res;
	}
	/* A journal folded without the log lines (or trimmed): the fold's last result. */
	if (s && s->f->result_json && n == s->f->attempts)
		return cJSON_Parse(s->f->result_json);
	return NULL;
}

static void load_artifacts(struct drill_screen *ds, const struct drill_source *src)
{
	cJSON *res = ds->step_id && ds->attempt ? result_of(src, ds->step_id, ds->attempt) : NULL;
	char *text = res ? cJSON_PrintUnformatted(res) : NULL, *err = NULL;
	struct exec_result *r = text ? exec_result_parse(text, &err) : NULL;

	strvec_clear(&ds->artifacts);
	ds->art = 0;
	for (size_t i = 0; r && i < r->artifacts.n; i++)
		strvec_push(&ds->artifacts, r->artifacts.v[i]);
	exec_result_free(r);
	free(err);
	cJSON_free(text);
	cJSON_Delete(res);
}

/* The latest attempt before ds->attempt that produced a result, or 0. */
static int previous_attempt(const struct drill_screen *ds, const struct drill_source *src)
{
	const struct logref *r = refs_of(src, ds->step_id);
	int best = 0;

	for (size_t k = 0; r && k < r->n; k++) {
		char *j;
		int n;

		if (r->v[k].type != EV_STEP_OUTPUT)
			continue;
		j = entry_json(src, r, k);
		n = json_attempt(j);
		free(j);
		if (n < ds->attempt && n > best)
			best = n;
	}
	return best;
}

/* The tool.call ↔ tool.result of entry i (same call id and attempt), or NULL. */
static char *tool_pair(const struct drill_source *src, const struct logref *r, long i,
		       const char *json)
{
	int want = r->v[i].type == EV_TOOL_CALL ? EV_TOOL_RESULT : EV_TOOL_CALL;
	long step = want == EV_TOOL_RESULT ? 1 : -1;
	char *id = json_field(json, "call_id");
	int attempt = json_attempt(json);

	for (long k = i + step; k >= 0 && (size_t)k < r->n; k += step) {
		char *j, *kid;

		if (r->v[k].type != want)
			continue;
		j = entry_json(src, r, (size_t)k);
		kid = json_field(j, "call_id");
		/* Without ids, the call and its result are neighbours. */
		if (json_attempt(j) == attempt &&
		    ((id && *id && kid && !strcmp(id, kid)) || ((!id || !*id) && k == i + step))) {
			free(kid);
			free(id);
			return j;
		}
		free(kid);
		free(j);
	}
	free(id);
	return NULL;
}

/* ---- pages ---- */

static void page_release(struct page *p)
{
	free(p->title);
	linestore_release(&p->lines);
	memset(p, 0, sizeof(*p));
}

/* A new page on top (the top one is replaced when the stack is full). */
static struct page *page_push(struct drill_screen *ds, enum page_kind kind, char *title)
{
	struct page *p;

	if (ds->depth == MAX_PAGES)
		page_release(&ds->pages[--ds->depth]);
	p = &ds->pages[ds->depth++];
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->title = textsan_clean(title, strlen(title), 0);
	free(title);
	linestore_init(&p->lines);
	logview_init(&p->lv);
	logview_home(&p->lv);
	return p;
}

/* A line made of untrusted parts (paths a model wrote, file names): sanitized first. */
static void add_clean(struct linestore *ls, int kind, const char *s)
{
	char *c = textsan_clean(s, strlen(s), TEXTSAN_KEEP_NL);

	linestore_add(ls, kind, c);
	free(c);
}

static void set_message(struct drill_screen *ds, char *m)
{
	free(ds->message);
	ds->message = m ? textsan_clean(m, strlen(m), 0) : NULL;
	free(m);
}

static const char *type_words(int type)
{
	switch (type) {
	case EV_TOOL_CALL: return "tool call";
	case EV_TOOL_RESULT: return "tool result";
	case EV_STEP_OUTPUT: return "result";
	case EV_VERIFY_VERDICT: return "verdict";
	case EV_LLM_DELTA: return "streamed text";
	default: return event_type_name((enum event_type)type);
	}
}

/* "WHAT · step ID · attempt N" (or "· the run"). Caller frees. */
static char *title_for(const struct drill_screen *ds, const struct drill_source *src,
		       const char *what)
{
	const struct vstep *s = step_of(src, ds->step_id);
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, what);
	if (s)
		strbuf_addf(&sb, " \xc2\xb7 step %s", s->id);
	else if (!ds->step_id)
		strbuf_adds(&sb, " \xc2\xb7 the run");
	if (ds->attempt)
		strbuf_addf(&sb, " \xc2\xb7 attempt %d", ds->attempt);
	return strbuf_detach(&sb);
}

/* The tool's full output, kept in the run folder (tool.result's output_file). */
static char *kept_output(const struct drill_source *src, const char *result_json, size_t *len,
			 bool *cut)
{
	char *rel = json_field(result_json, "output_file"), *err = NULL, *out = NULL;

	if (rel && src->run_dir)
		out = attempts_read(src->run_dir, rel, ATTEMPTS_MAX_FILE, len, cut, &err);
	free(err);
	free(rel);
	return out;
}

/* Builds the first page: entry i of the log (or only the line, when no event is known). */
static bool load_entry(struct drill_screen *ds, const struct drill_source *src, long i,
		       size_t line, char **msg)
{
	const struct linestore *ls = log_of(src, ds->step_id);
	const struct logref *r = refs_of(src, ds->step_id);
	struct drill_input in = {0};
	char *json = NULL, *pair = NULL, *out = NULL;
	struct page *p;
	size_t first = line, end = line + 1;

	if (!ls || line >= ls->n) {
		*msg = xstrdup("nothing to open there");
		return false;
	}
	if (i >= 0 && r) {
		json = entry_json(src, r, (size_t)i);
		logref_span(r, (size_t)i, ls->n, &first, &end);
		if (r->v[i].type == EV_TOOL_CALL || r->v[i].type == EV_TOOL_RESULT) {
			pair = tool_pair(src, r, i, json);
			out = kept_output(src, r->v[i].type == EV_TOOL_RESULT ? json : pair,
					  &in.output_len, &in.output_cut);
		}
	}
	while (ds->depth > 0)
		page_release(&ds->pages[--ds->depth]);
	ds->entry = i;
	ds->attempt = attempt_at(src, ds->step_id, r, i);
	p = page_push(ds, PG_ENTRY,
		      title_for(ds, src, i >= 0 && r ? type_words(r->v[i].type) : "log line"));
	in.json = json;
	in.log = ls;
	in.first = first;
	in.end = end;
	in.output = out;
	in.pair_json = pair;
	if (i < 0 || !r)
		linestore_add(&p->lines, ls->v[line].kind, ls->v[line].text);
	else
		drill_event(&p->lines, &in);
	if (i >= 0 && r && !json && r->v[i].seq)
		linestore_add(&p->lines, DRILL_DIM,
			      "(the event itself could not be read back from the journal)");
	free(json);
	free(pair);
	free(out);
	load_artifacts(ds, src);
	return true;
}

static bool open_changes(struct drill_screen *ds, const struct drill_source *src, bool all);

struct drill_screen *drill_screen_open(const struct drill_source *src, const char *step_id,
				       size_t line, char **msg)
{
	const struct logref *r = refs_of(src, step_id);
	struct drill_screen *ds = xcalloc(1, sizeof(*ds));

	*msg = NULL;
	ds->step_id = xstrdup(step_id);
	if (!load_entry(ds, src, r ? logref_find(r, line) : -1, line, msg)) {
		drill_screen_free(ds);
		return NULL;
	}
	/* A step.changes line means its diff; Esc goes back to the event. */
	if (ds->entry >= 0 && r && r->v[ds->entry].type == EV_STEP_CHANGES)
		open_changes(ds, src, false);
	return ds;
}

/* ---- the workspace changes page ---- */

/* What the screen's attempt (every attempt of the step when `all`) changed in the
 * workspace, from the run's checkpoints; false (+ message) when there is nothing. */
static bool open_changes(struct drill_screen *ds, const struct drill_source *src, bool all)
{
	struct linestore lines;
	struct page *p;
	char *msg = NULL;
	int attempt = all ? 0 : ds->attempt;

	if (!ds->step_id) {
		set_message(ds, xstrdup("select a step: workspace changes belong to its attempts"));
		return false;
	}
	linestore_init(&lines);
	if (!drill_changes(&lines, &src->v->rs, src->run_dir, ds->step_id, attempt, &msg)) {
		set_message(ds, msg);
		linestore_release(&lines);
		return false;
	}
	{
		int saved = ds->attempt;

		ds->attempt = attempt;
		p = page_push(ds, PG_CHANGES, title_for(ds, src, "workspace changes"));
		ds->attempt = saved;
	}
	linestore_release(&p->lines);
	p->lines = lines;
	return true;
}

/* ---- the requests page ---- */

static void show_request(struct drill_screen *ds, const struct drill_source *src)
{
	const struct request_ref *q = &ds->reqs[ds->req];
	char *err = NULL, *body;
	size_t len = 0;
	bool cut = false;
	struct page *p;

	if (ds->depth > 0 && ds->pages[ds->depth - 1].kind == PG_REQUEST)
		page_release(&ds->pages[--ds->depth]);
	{
		char *what = xasprintf("request %zu of %zu \xc2\xb7 %s", ds->req + 1, ds->n_reqs,
				       q->role);

		p = page_push(ds, PG_REQUEST, title_for(ds, src, what));
		free(what);
	}
	body = requests_read(src->run_dir, q, REQUEST_MAX, &len, &cut, &err);
	if (!body) {
		char *m = xasprintf("cannot read %s: %s", q->name, err ? err : "?");

		add_clean(&p->lines, VL_ERROR, m);
		free(m);
		free(err);
		return;
	}
	{
		char *head = xasprintf("As sent: %zu bytes%s, kept in %s/%s (o shows it whole in "
				       "$PAGER)",
				       len, cut ? " (cut here)" : "", src->run_dir, q->name);
		char *clean = textsan_clean(head, strlen(head), 0);

		linestore_add(&p->lines, DRILL_DIM, clean);
		free(clean);
		free(head);
	}
	drill_request(&p->lines, body, len);
	free(body);
}

/* Loads the requests of the screen's step and attempt; false (+ message) when none. */
static bool load_requests(struct drill_screen *ds, const struct drill_source *src)
{
	requests_list_free(ds->reqs, ds->n_reqs);
	ds->reqs = NULL;
	ds->n_reqs = ds->req = 0;
	if (!src->run_dir) {
		set_message(ds, xstrdup("no run folder: no request was kept"));
		return false;
	}
	ds->n_reqs = src->requests ? requests_index_list(src->requests, ds->step_id,
							 ds->step_id ? ds->attempt : 0, &ds->reqs)
				   : requests_list(src->run_dir, ds->step_id,
						   ds->step_id ? ds->attempt : 0, &ds->reqs);
	if (!ds->n_reqs) {
		set_message(ds, ds->step_id
					? xasprintf("no request was kept for attempt %d of step %s "
						    "([policy] keep_requests = off, or an older run)",
						    ds->attempt, ds->step_id)
					: xstrdup("no request of the planner was kept ([policy] "
						  "keep_requests = off, or an older run)"));
		return false;
	}
	return true;
}

struct drill_screen *drill_screen_requests(const struct drill_source *src, const char *step_id,
					   size_t line, char **msg)
{
	const struct logref *r = refs_of(src, step_id);
	const struct vstep *s = step_of(src, step_id);
	struct drill_screen *ds = xcalloc(1, sizeof(*ds));
	long i = r && line != (size_t)-1 ? logref_find(r, line) : -1;

	*msg = NULL;
	ds->step_id = xstrdup(step_id);
	ds->entry = i;
	ds->attempt = i >= 0 ? attempt_at(src, step_id, r, i) : s ? s->f->attempts : 0;
	if (!load_requests(ds, src)) {
		*msg = xstrdup(ds->message);
		drill_screen_free(ds);
		return NULL;
	}
	show_request(ds, src);
	return ds;
}

struct drill_screen *drill_screen_changes(const struct drill_source *src, const char *step_id,
					  size_t line, char **msg)
{
	const struct logref *r = refs_of(src, step_id);
	struct drill_screen *ds = xcalloc(1, sizeof(*ds));
	long i = r && line != (size_t)-1 ? logref_find(r, line) : -1;

	*msg = NULL;
	ds->step_id = xstrdup(step_id);
	ds->entry = i;
	ds->attempt = i >= 0 ? attempt_at(src, step_id, r, i) : 0;
	if (!open_changes(ds, src, i < 0)) {
		*msg = xstrdup(ds->message);
		drill_screen_free(ds);
		return NULL;
	}
	return ds;
}

void drill_screen_free(struct drill_screen *ds)
{
	if (!ds)
		return;
	while (ds->depth > 0)
		page_release(&ds->pages[--ds->depth]);
	free(ds->step_id);
	strvec_clear(&ds->artifacts);
	requests_list_free(ds->reqs, ds->n_reqs);
	free(ds->message);
	free(ds);
}

/* ---- artifacts ---- */

/* Attempt n's kept copy of path; NULL (+ *why) when none. */
static char *kept_copy(const struct drill_source *src, const char *step_id, int n,
		       const char *path, size_t *len, char **why)
{
	char *rel = attempts_artifact_path(step_id, n, path), *data;

	*why = NULL;
	data = src->run_dir ? attempts_read(src->run_dir, rel, ATTEMPTS_MAX_FILE, len, NULL, why)
			    : NULL;
	free(rel);
	return data;
}

static const char *chosen(const struct drill_screen *ds)
{
	return ds->art < ds->artifacts.n ? ds->artifacts.v[ds->art] : NULL;
}

static bool need_artifact(struct drill_screen *ds)
{
	if (chosen(ds))
		return true;
	set_message(ds, ds->step_id ? xasprintf("attempt %d declared no artifact", ds->attempt)
				    : xstrdup("select a step's line: artifacts belong to attempts"));
	return false;
}

static void open_artifact(struct drill_screen *ds, const struct drill_source *src)
{
	const char *path = chosen(ds);
	char *why = NULL, *data, *err = NULL, *ws;
	size_t len = 0;
	bool from_ws = false;

	if (!need_artifact(ds))
		return;
	data = kept_copy(src, ds->step_id, ds->attempt, path, &len, &why);
	free(why);
	if (!data) {
		/* No copy of this attempt (an older run, or over the cap): the workspace's. */
		ws = src->v->rs.workspace ? xstrdup(src->v->rs.workspace)
		     : src->run_dir	  ? xasprintf("%s/workspace", src->run_dir)
					  : NULL;
		data = attempts_read_beneath(ws, path, OPEN_MAX, &len, NULL, &err);
		free(ws);
		from_ws = true;
	}
	if (!data) {
		set_message(ds, xasprintf("cannot open %s: %s", path, err ? err : "not found"));
		free(err);
		return;
	}
	if (!pager_show(path, data, len, &err)) {
		set_message(ds, err);
		err = NULL;
	} else {
		set_message(ds, from_ws ? xasprintf("%s as the workspace holds it now (attempt %d "
						    "kept no copy)",
						    path, ds->attempt)
					: xasprintf("%s as attempt %d left it", path, ds->attempt));
	}
	free(err);
	free(data);
	clearok(stdscr, TRUE);
}

static bool binary(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

static void open_diff(struct drill_screen *ds, const struct drill_source *src)
{
	const char *path = chosen(ds);
	int prev;
	char *cur, *old, *why = NULL, *why2 = NULL, *a, *b, *u;
	size_t cl = 0, ol = 0;
	struct linediff_stats st;
	struct page *p;

	if (!need_artifact(ds))
		return;
	prev = previous_attempt(ds, src);
	if (!prev) {
		set_message(ds, xasprintf("attempt %d is the step's first with a result: nothing "
					  "to compare %s with",
					  ds->attempt, path));
		return;
	}
	cur = kept_copy(src, ds->step_id, ds->attempt, path, &cl, &why);
	if (!cur) {
		set_message(ds, xasprintf("attempt %d kept no copy of %s (missing, over %u MiB, or "
					  "an older run)",
					  ds->attempt, path, ATTEMPTS_MAX_FILE >> 20));
		free(why);
		return;
	}
	old = kept_copy(src, ds->step_id, prev, path, &ol, &why2);
	a = xasprintf("attempt %d/%s", prev, path);
	b = xasprintf("attempt %d/%s", ds->attempt, path);
	if (binary(cur, cl) || (old && binary(old, ol))) {
		p = page_push(ds, PG_DIFF, xasprintf("diff %s \xc2\xb7 attempt %d \xe2\x86\x92 %d", path,
						     prev, ds->attempt));
		u = xasprintf("Binary file: %zu bytes in attempt %d, %zu bytes in attempt %d; not "
			      "shown as text.",
			      old ? ol : 0, prev, cl, ds->attempt);
		add_clean(&p->lines, VL_NOTICE, u);
		free(u);
	} else {
		u = linediff_unified(old ? old : "", old ? ol : 0, cur, cl, a, b, 3, 0, &st);
		p = page_push(ds, PG_DIFF,
			      xasprintf("diff %s \xc2\xb7 attempt %d \xe2\x86\x92 %d \xc2\xb7 +%zu "
					"\xe2\x88\x92%zu",
					path, prev, ds->attempt, st.added, st.removed));
		if (!old) {
			char *m = xasprintf("Attempt %d kept no copy of %s (it did not write it, or it "
					    "was missing or over %u MiB): compared with nothing.",
					    prev, path, ATTEMPTS_MAX_FILE >> 20);

			add_clean(&p->lines, VL_NOTICE, m);
			free(m);
		}
		if (!*u) {
			char *m = xasprintf("No difference: attempt %d left %s as attempt %d did.",
					    ds->attempt, path, prev);

			add_clean(&p->lines, VL_PASS, m);
			free(m);
		} else if (!st.exact) {
			linestore_add(&p->lines, VL_NOTICE,
				      "(too many changes for the shortest diff: the middle is shown "
				      "as removed, then added)");
		}
		drill_diff(&p->lines, u);
		free(u);
	}
	free(a);
	free(b);
	free(why);
	free(why2);
	free(cur);
	free(old);
}

static void open_requests(struct drill_screen *ds, const struct drill_source *src)
{
	if (!load_requests(ds, src))
		return;
	show_request(ds, src);
}

/* The request shown, whole, in $PAGER (pretty-printed when it is JSON). */
static void request_in_pager(struct drill_screen *ds, const struct drill_source *src)
{
	const struct request_ref *q = ds->req < ds->n_reqs ? &ds->reqs[ds->req] : NULL;
	char *err = NULL, *body, *pretty = NULL, *file;
	size_t len = 0;
	cJSON *o;

	if (!q)
		return;
	body = requests_read(src->run_dir, q, REQUEST_MAX, &len, NULL, &err);
	if (!body) {
		set_message(ds, xasprintf("cannot read %s: %s", q->name, err ? err : "?"));
		free(err);
		return;
	}
	o = cJSON_Parse(body);
	if (o) {
		char *p = cJSON_Print(o);

		pretty = p ? xstrdup(p) : NULL;
		cJSON_free(p);
		cJSON_Delete(o);
	}
	/* the temporary copy is named after the request, in either layout */
	file = requests_file_name(q);
	if (!pager_show(file, pretty ? pretty : body, pretty ? strlen(pretty) : len, &err)) {
		set_message(ds, err);
		err = NULL;
	}
	free(file);
	free(err);
	free(pretty);
	free(body);
	clearok(stdscr, TRUE);
}

/* ---- drawing ---- */

static enum theme_role role_of(int kind)
{
	switch (kind) {
	case VL_HEADER: return THEME_ACCENT;
	case VL_TOOL:
	case VL_TOOL_OK: return THEME_TOOL;
	case VL_TOOL_FAIL: return THEME_BAD;
	case VL_CRITIQUE:
	case VL_RETRY:
	case VL_WARN: return THEME_WARN;
	case VL_PASS: return THEME_GOOD;
	case VL_NOTICE: return THEME_DIM;
	case VL_ERROR: return THEME_BAD;
	case DRILL_KEY: return THEME_ACCENT;
	case DRILL_ADD: return THEME_DIFF_ADD;
	case DRILL_DEL: return THEME_DIFF_DEL;
	case DRILL_HUNK: return THEME_DIFF_CHANGE;
	case DRILL_DIM: return THEME_DIM;
	default: return THEME_NORMAL;
	}
}

void drill_screen_draw(struct drill_screen *ds, int rows, int cols, size_t gates)
{
	static const char *const hints_entry[] = {
		"Esc", "back", "\xe2\x86\x91\xe2\x86\x93", "scroll", "\xe2\x86\x90\xe2\x86\x92", "entry",
		"o", "open", "d", "diff", "Tab", "artifact", "p", "requests", "c", "changes", NULL};
	static const char *const hints_diff[] = {"Esc", "back", "\xe2\x86\x91\xe2\x86\x93 PgUp PgDn",
						 "scroll", "o", "open artifact", NULL};
	static const char *const hints_changes[] = {"Esc", "back",
						    "\xe2\x86\x91\xe2\x86\x93 PgUp PgDn", "scroll",
						    "g G", "top / bottom", NULL};
	static const char *const hints_req[] = {"Esc", "back", "\xe2\x86\x91\xe2\x86\x93 PgUp PgDn",
						"scroll", "n N", "next / previous request", "o",
						"whole file in $PAGER", NULL};
	struct page *p = &ds->pages[ds->depth - 1];
	struct rect box = {0, 0, rows - 1, cols}, in = rect_inner(box), foot = {rows - 1, 0, 1, cols};
	char *left, pos[48];

	if (rows < 3 || cols < 10 || ds->depth == 0)
		return;
	draw_box(box, p->title, true);
	logview_draw(&p->lv, &p->lines, in, role_of);
	if (p->lines.n) {
		snprintf(pos, sizeof(pos), " %zu\xe2\x80\x93%zu of %zu ", p->lv.first_shown + 1,
			 p->lv.last_shown + 1, p->lines.n);
		if (textsan_width(pos) + 4 < cols - textsan_width(p->title) - 6)
			draw_text(0, cols - 2 - textsan_width(pos), textsan_width(pos), pos, THEME_DIM);
	}
	if (ds->message)
		left = xstrdup(ds->message);
	else if (gates)
		left = xasprintf("%zu gate%s waiting: Esc to the cockpit", gates, gates == 1 ? "" : "s");
	else if (p->kind == PG_ENTRY && chosen(ds))
		left = xasprintf("artifact %zu of %zu: %s", ds->art + 1, ds->artifacts.n, chosen(ds));
	else
		left = xstrdup("");
	{
		char *clean = textsan_clean(left, strlen(left), 0);

		statusbar_draw(foot, clean,
			       p->kind == PG_REQUEST   ? hints_req
			       : p->kind == PG_DIFF    ? hints_diff
			       : p->kind == PG_CHANGES ? hints_changes
						       : hints_entry);
		free(clean);
	}
	free(left);
}

/* ---- keys ---- */

static int page_rows(void)
{
	return LINES > 6 ? LINES - 4 : 1;
}

/* The previous or next entry of the same log that added lines. */
static void step_entry(struct drill_screen *ds, const struct drill_source *src, long delta)
{
	const struct logref *r = refs_of(src, ds->step_id);
	const struct linestore *ls = log_of(src, ds->step_id);
	long i = ds->entry + delta;
	char *msg = NULL;

	if (!r || !ls || ds->entry < 0 || i < 0 || (size_t)i >= r->n) {
		set_message(ds, xstrdup(delta < 0 ? "this is the log's first entry"
						  : "this is the log's last entry"));
		return;
	}
	if (!load_entry(ds, src, i, r->v[i].line, &msg))
		set_message(ds, msg);
	else
		free(msg);
}

bool drill_screen_key(struct drill_screen *ds, const struct drill_source *src, bool is_key,
		      unsigned int ch)
{
	struct page *p = &ds->pages[ds->depth - 1];

	set_message(ds, NULL);
	if (is_key) {
		switch (ch) {
		case KEY_DOWN: logview_scroll(&p->lv, &p->lines, 1); break;
		case KEY_UP: logview_scroll(&p->lv, &p->lines, -1); break;
		case KEY_NPAGE: logview_scroll(&p->lv, &p->lines, page_rows()); break;
		case KEY_PPAGE: logview_scroll(&p->lv, &p->lines, -page_rows()); break;
		case KEY_HOME: logview_home(&p->lv); break;
		case KEY_END: logview_end(&p->lv); break;
		case KEY_LEFT:
			if (p->kind == PG_ENTRY)
				step_entry(ds, src, -1);
			break;
		case KEY_RIGHT:
			if (p->kind == PG_ENTRY)
				step_entry(ds, src, 1);
			break;
		case KEY_BTAB:
			if (ds->artifacts.n)
				ds->art = (ds->art + ds->artifacts.n - 1) % ds->artifacts.n;
			break;
		default: break;
		}
		return true;
	}
	switch (ch) {
	case 27:
	case 'q':
		page_release(&ds->pages[--ds->depth]);
		return ds->depth > 0;
	case 'j': logview_scroll(&p->lv, &p->lines, 1); break;
	case 'k': logview_scroll(&p->lv, &p->lines, -1); break;
	case ' ': logview_scroll(&p->lv, &p->lines, page_rows()); break;
	case 'g': logview_home(&p->lv); break;
	case 'G': logview_end(&p->lv); break;
	case '[':
	case 'h':
		if (p->kind == PG_ENTRY)
			step_entry(ds, src, -1);
		break;
	case ']':
	case 'l':
		if (p->kind == PG_ENTRY)
			step_entry(ds, src, 1);
		break;
	case '\t':
		if (ds->artifacts.n)
			ds->art = (ds->art + 1) % ds->artifacts.n;
		else
			set_message(ds, xstrdup("this attempt declared no artifact"));
		break;
	case 'o':
		if (p->kind == PG_REQUEST)
			request_in_pager(ds, src);
		else
			open_artifact(ds, src);
		break;
	case 'd':
		if (p->kind == PG_ENTRY)
			open_diff(ds, src);
		break;
	case 'p':
	case 'P':
		if (p->kind == PG_ENTRY)
			open_requests(ds, src);
		break;
	case 'c':
		if (p->kind == PG_ENTRY)
			open_changes(ds, src, false);
		break;
	case 'n':
	case 'N':
		if (p->kind == PG_REQUEST && ds->n_reqs) {
			ds->req = ch == 'n' ? (ds->req + 1) % ds->n_reqs
					    : (ds->req + ds->n_reqs - 1) % ds->n_reqs;
			show_request(ds, src);
		}
		break;
	default: break;
	}
	return true;
}
