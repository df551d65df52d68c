/* plandiff — steps added, removed and changed between two plans, fields as word diffs. */
#include "config.h"

#include "plandiff.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plan.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

#define BULLET "\xe2\x80\xa2" /* • */

/* ---- tokens and edit scripts ---- */

/* A word of a text (with the blanks after it), or an item of a list (with ", "). */
struct tok {
	const char *s, *sep;
	size_t len, sep_len;
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

enum op { OP_EQ, OP_DEL, OP_INS };

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void toks_push(struct toks *t, const char *s, size_t len, const char *sep, size_t sep_len)
{
	t->v = xgrow(t->v, &t->cap, t->n + 1, sizeof(*t->v));
	t->v[t->n++] = (struct tok){s, sep, len, sep_len};
}

/* Words of `s`; blanks before the first and after the last are not part of any. */
static void toks_words(struct toks *t, const char *s)
{
	const char *p = s;

	while (*p && is_blank(*p))
		p++;
	while (*p) {
		const char *w = p, *sp;

		while (*p && !is_blank(*p))
			p++;
		sp = p;
		while (*p && is_blank(*p))
			p++;
		toks_push(t, w, (size_t)(sp - w), sp, *p ? (size_t)(p - sp) : 0);
	}
}

/* Items of a list, each followed by ", " but the last. */
static void toks_items(struct toks *t, char *const *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		toks_push(t, items[i], strlen(items[i]), i + 1 < n ? ", " : "", i + 1 < n ? 2 : 0);
}

static bool tok_eq(const struct tok *a, const struct tok *b)
{
	return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/*
 * The shortest way from a to b, as one op per token kept, removed or added. The common
 * start and end are set aside first (an edit is usually local); the middle is a longest
 * common subsequence when it is small enough (PLANDIFF_MAX_CELLS), else replaced whole.
 * Within a change, removals come before additions. Caller frees; *n_ops gets the count.
 */
static unsigned char *script(const struct toks *a, const struct toks *b, size_t *n_ops)
{
	size_t na = a->n, nb = b->n, pre = 0, suf = 0, ma, mb, k = 0;
	unsigned char *ops = xmalloc(na + nb + 1);

	while (pre < na && pre < nb && tok_eq(&a->v[pre], &b->v[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre && tok_eq(&a->v[na - 1 - suf], &b->v[nb - 1 - suf]))
		suf++;
	ma = na - pre - suf;
	mb = nb - pre - suf;
	for (size_t i = 0; i < pre; i++)
		ops[k++] = OP_EQ;
	if (ma && mb && (double)(ma + 1) * (double)(mb + 1) <= (double)PLANDIFF_MAX_CELLS) {
		const struct tok *x = a->v + pre, *y = b->v + pre;
		size_t w = mb + 1, i = 0, j = 0;
		/* L[i*w + j]: the longest common subsequence of x[i..] and y[j..]. */
		uint32_t *L = xcalloc((ma + 1) * w, sizeof(*L));

		for (size_t r = ma; r-- > 0;) {
			for (size_t c = mb; c-- > 0;) {
				uint32_t down = L[(r + 1) * w + c], right = L[r * w + c + 1];

				L[r * w + c] = tok_eq(&x[r], &y[c]) ? L[(r + 1) * w + c + 1] + 1
								  : (down > right ? down : right);
			}
		}
		while (i < ma || j < mb) {
			if (i < ma && j < mb && tok_eq(&x[i], &y[j])) {
				ops[k++] = OP_EQ;
				i++;
				j++;
			} else if (j >= mb || (i < ma && L[(i + 1) * w + j] >= L[i * w + j + 1])) {
				ops[k++] = OP_DEL;
				i++;
			} else {
				ops[k++] = OP_INS;
				j++;
			}
		}
		free(L);
	} else {
		for (size_t i = 0; i < ma; i++)
			ops[k++] = OP_DEL;
		for (size_t j = 0; j < mb; j++)
			ops[k++] = OP_INS;
	}
	for (size_t i = 0; i < suf; i++)
		ops[k++] = OP_EQ;
	*n_ops = k;
	return ops;
}

/* Tokens [from, to) as they were written, with the separators between them. */
static void add_span(struct strbuf *out, const struct toks *t, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		strbuf_add(out, t->v[i].s, t->v[i].len);
		if (i + 1 < to)
			strbuf_add(out, t->v[i].sep, t->v[i].sep_len);
	}
}

/*
 * Renders b against a: kept tokens as b has them, each run of changes as
 * "[-removed-]{+added+}" followed by the separator b (else a) has there. `gap` goes before
 * a change that would otherwise touch the token before it. Returns how many tokens were
 * kept; *changed is set when any was removed or added.
 */
static size_t render(struct strbuf *out, const struct toks *a, const struct toks *b,
		     const char *gap, bool *changed)
{
	size_t n_ops, i = 0, j = 0, k = 0, kept = 0;
	unsigned char *ops = script(a, b, &n_ops);

	while (k < n_ops) {
		size_t i0 = i, j0 = j;
		const struct tok *last;

		if (ops[k] == OP_EQ) {
			strbuf_add(out, b->v[j].s, b->v[j].len);
			strbuf_add(out, b->v[j].sep, b->v[j].sep_len);
			i++, j++, k++, kept++;
			continue;
		}
		for (; k < n_ops && ops[k] != OP_EQ; k++) {
			if (ops[k] == OP_DEL)
				i++;
			else
				j++;
		}
		*changed = true;
		if (out->len && !is_blank(out->buf[out->len - 1]))
			strbuf_adds(out, gap);
		if (i > i0) {
			strbuf_adds(out, "[-");
			add_span(out, a, i0, i);
			strbuf_adds(out, "-]");
		}
		if (j > j0) {
			strbuf_adds(out, "{+");
			add_span(out, b, j0, j);
			strbuf_adds(out, "+}");
		}
		last = j > j0 ? &b->v[j - 1] : &a->v[i - 1];
		if (k < n_ops)
			strbuf_add(out, last->sep, last->sep_len);
	}
	free(ops);
	return kept;
}

/* The word diff of two texts already sanitized. Caller frees. */
static char *words(const char *a, const char *b, bool *changed, size_t *kept)
{
	struct toks ta = {NULL, 0, 0}, tb = {NULL, 0, 0};
	struct strbuf out = STRBUF_INIT;
	bool ch = false;
	size_t k;

	strbuf_init(&out);
	toks_words(&ta, a);
	toks_words(&tb, b);
	k = render(&out, &ta, &tb, " ", &ch);
	if (changed)
		*changed = ch;
	if (kept)
		*kept = k;
	free(ta.v);
	free(tb.v);
	return strbuf_detach(&out);
}

static char *san(const char *s, bool multiline)
{
	return textsan_clean(s ? s : "", s ? strlen(s) : 0, multiline ? TEXTSAN_KEEP_NL : 0);
}

char *plandiff_words(const char *old, const char *np, bool *changed)
{
	char *a = san(old, true), *b = san(np, true), *r = words(a, b, changed, NULL);

	free(a);
	free(b);
	return r;
}

/* ---- lines ---- */

static void add_line(struct plandiff *d, enum plandiff_kind kind, char *text)
{
	d->lines = xgrow(d->lines, &d->cap_lines, d->n_lines + 1, sizeof(*d->lines));
	d->lines[d->n_lines].kind = kind;
	d->lines[d->n_lines++].text = text;
}

/* `head` then `text`, one line per '\n' in it, the lines after the first indented. */
static void add_lines(struct plandiff *d, enum plandiff_kind kind, const char *head,
		      const char *text)
{
	const char *p = text, *nl;
	bool first = true;

	do {
		nl = strchr(p, '\n');
		add_line(d, kind,
			 xasprintf("%s%.*s", first ? head : "      ",
				   (int)(nl ? (size_t)(nl - p) : strlen(p)), p));
		first = false;
		p = nl ? nl + 1 : NULL;
	} while (p);
}

static void step_head(struct plandiff *d, enum plandiff_kind kind, char mark,
		      const struct plan_step *s)
{
	char *id = san(s->id, false), *name = san(s->name, false);

	add_line(d, kind, xasprintf("%c %s  %s", mark, id, name));
	free(id);
	free(name);
}

/* A text field that differs: its word diff. Returns whether a line was written. */
static bool field_text(struct plandiff *d, const char *label, const char *old, const char *np,
		       bool multiline)
{
	char *a = san(old, multiline), *b = san(np, multiline), *w, *head;
	bool changed = false;

	if (strcmp(a, b) == 0) {
		free(a);
		free(b);
		return false;
	}
	w = words(a, b, &changed, NULL);
	head = xasprintf("    %s: ", label);
	if (!changed) {
		/* Only the blanks between the words differ. */
		char *t = xasprintf("%s (blanks changed)", w);

		free(w);
		w = t;
	}
	add_lines(d, PDL_CHANGED, head, w);
	free(head);
	free(w);
	free(a);
	free(b);
	return true;
}

static void san_items(struct strvec *out, const struct strvec *in)
{
	for (size_t i = 0; i < in->n; i++) {
		char *s = san(in->v[i], false);

		strvec_push(out, s);
		free(s);
	}
}

static bool same_items(const struct strvec *a, const struct strvec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

/* Two items are one item rewritten when a third of their words or more are kept. */
static char *rewritten(const char *a, const char *b)
{
	struct toks ta = {NULL, 0, 0}, tb = {NULL, 0, 0};
	size_t kept, most;
	char *w;

	toks_words(&ta, a);
	toks_words(&tb, b);
	most = ta.n > tb.n ? ta.n : tb.n;
	free(ta.v);
	free(tb.v);
	w = words(a, b, NULL, &kept);
	if (kept > 0 && kept * 3 >= most)
		return w;
	free(w);
	return NULL;
}

/*
 * A list of texts that differs, one line per item: kept items as they are, an item
 * rewritten as its word diff, others removed or added whole.
 */
static bool field_list(struct plandiff *d, const char *label, const struct strvec *old,
		       const struct strvec *np)
{
	struct strvec a = STRVEC_INIT, b = STRVEC_INIT;
	struct toks ta = {NULL, 0, 0}, tb = {NULL, 0, 0};
	size_t n_ops, i = 0, j = 0, k = 0;
	unsigned char *ops;

	san_items(&a, old);
	san_items(&b, np);
	if (same_items(&a, &b)) {
		strvec_clear(&a);
		strvec_clear(&b);
		return false;
	}
	add_line(d, PDL_CHANGED, xasprintf("    %s:", label));
	toks_items(&ta, a.v, a.n);
	toks_items(&tb, b.v, b.n);
	ops = script(&ta, &tb, &n_ops);
	while (k < n_ops) {
		size_t i0 = i, j0 = j, nd, ni;

		if (ops[k] == OP_EQ) {
			add_line(d, PDL_CONTEXT, xasprintf("      " BULLET " %s", b.v[j]));
			i++, j++, k++;
			continue;
		}
		for (; k < n_ops && ops[k] != OP_EQ; k++) {
			if (ops[k] == OP_DEL)
				i++;
			else
				j++;
		}
		nd = i - i0;
		ni = j - j0;
		for (size_t p = 0; p < nd || p < ni; p++) {
			char *w = p < nd && p < ni ? rewritten(a.v[i0 + p], b.v[j0 + p]) : NULL;

			if (w) {
				add_line(d, PDL_CHANGED, xasprintf("      " BULLET " %s", w));
				free(w);
				continue;
			}
			if (p < nd)
				add_line(d, PDL_REMOVED,
					 xasprintf("      " BULLET " [-%s-]", a.v[i0 + p]));
			if (p < ni)
				add_line(d, PDL_ADDED,
					 xasprintf("      " BULLET " {+%s+}", b.v[j0 + p]));
		}
	}
	free(ops);
	free(ta.v);
	free(tb.v);
	strvec_clear(&a);
	strvec_clear(&b);
	return true;
}

/* Step ids on one line, changed ones marked in it: "a, [-b-]{+c+}". */
static bool field_ids(struct plandiff *d, const char *label, const struct strvec *old,
		      const struct strvec *np)
{
	struct strvec a = STRVEC_INIT, b = STRVEC_INIT;
	struct toks ta = {NULL, 0, 0}, tb = {NULL, 0, 0};
	struct strbuf out = STRBUF_INIT;
	bool changed = false;

	san_items(&a, old);
	san_items(&b, np);
	if (!same_items(&a, &b)) {
		strbuf_init(&out);
		strbuf_addf(&out, "    %s: ", label);
		toks_items(&ta, a.v, a.n);
		toks_items(&tb, b.v, b.n);
		render(&out, &ta, &tb, ", ", &changed);
		add_line(d, PDL_CHANGED, strbuf_detach(&out));
		free(ta.v);
		free(tb.v);
		changed = true;
	}
	strvec_clear(&a);
	strvec_clear(&b);
	return changed;
}

/* The actions of a step as list items: "tool {params}". */
static void action_items(struct strvec *out, const struct plan_step *s)
{
	for (size_t i = 0; i < s->n_actions; i++)
		strvec_pushf(out, "%s %s", s->actions[i].tool ? s->actions[i].tool : "",
			     s->actions[i].params_json ? s->actions[i].params_json : "{}");
}

static void step_changed(struct plandiff *d, const struct plan_step *o, const struct plan_step *s)
{
	struct strvec oa = STRVEC_INIT, na = STRVEC_INIT;
	bool any = false;

	step_head(d, PDL_CHANGED_STEP, '~', s);
	any |= field_text(d, "name", o->name, s->name, false);
	any |= field_text(d, "description", o->description, s->description, true);
	any |= field_list(d, "criteria", &o->criteria, &s->criteria);
	any |= field_list(d, "outputs", &o->expected_outputs, &s->expected_outputs);
	any |= field_ids(d, "depends on", &o->deps, &s->deps);
	any |= field_text(d, "complexity", complexity_name(o->complexity),
			  complexity_name(s->complexity), false);
	action_items(&oa, o);
	action_items(&na, s);
	any |= field_list(d, "actions", &oa, &na);
	strvec_clear(&oa);
	strvec_clear(&na);
	if (!any)
		add_line(d, PDL_CONTEXT,
			 xstrdup("    (only characters that are not shown changed)"));
}

static void items_whole(struct plandiff *d, enum plandiff_kind kind, const char *label,
			const struct strvec *sv)
{
	if (!sv->n)
		return;
	add_line(d, kind, xasprintf("    %s:", label));
	for (size_t i = 0; i < sv->n; i++) {
		char *s = san(sv->v[i], false);

		add_line(d, kind, xasprintf("      " BULLET " %s", s));
		free(s);
	}
}

/* A new step, every field of it. */
static void step_added(struct plandiff *d, const struct plan_step *s)
{
	struct strvec acts = STRVEC_INIT;

	step_head(d, PDL_ADDED_STEP, '+', s);
	if (s->description && *s->description) {
		char *t = san(s->description, true);

		add_lines(d, PDL_ADDED, "    description: ", t);
		free(t);
	}
	items_whole(d, PDL_ADDED, "criteria", &s->criteria);
	items_whole(d, PDL_ADDED, "outputs", &s->expected_outputs);
	if (s->deps.n) {
		struct strvec ids = STRVEC_INIT;
		char *j;

		san_items(&ids, &s->deps);
		j = strvec_join(&ids, ", ");
		add_line(d, PDL_ADDED, xasprintf("    depends on: %s", j));
		free(j);
		strvec_clear(&ids);
	}
	add_line(d, PDL_ADDED, xasprintf("    complexity: %s", complexity_name(s->complexity)));
	action_items(&acts, s);
	items_whole(d, PDL_ADDED, "actions", &acts);
	strvec_clear(&acts);
}

/* The plan's own fields, under "~ plan" when any differs. */
static void plan_fields(struct plandiff *d, const struct plan *o, const struct plan *p)
{
	size_t mark = d->n_lines;
	bool any = false;

	add_line(d, PDL_CHANGED_STEP, xstrdup("~ plan"));
	any |= field_text(d, "goal", o->goal, p->goal, false);
	any |= field_text(d, "context", o->context, p->context, true);
	any |= field_list(d, "success criteria", &o->success_criteria, &p->success_criteria);
	any |= field_text(d, "rollback", o->rollback_strategy, p->rollback_strategy, true);
	d->plan_changed = any;
	if (!any) {
		free(d->lines[mark].text);
		d->n_lines = mark;
	}
}

struct plandiff *plandiff_new(const struct plan *old, const struct plan *np)
{
	struct plandiff *d = xcalloc(1, sizeof(*d));
	size_t next_old = 0; /* old steps before this one are told (when removed) */

	plan_fields(d, old, np);
	d->steps = xcalloc(np->n_steps + 1, sizeof(*d->steps));
	d->n_steps = np->n_steps;
	for (size_t i = 0; i < np->n_steps; i++) {
		const struct plan_step *s = &np->steps[i];
		int o = plan_find(old, s->id);

		d->steps[i].id = xstrdup(s->id);
		if (o < 0) {
			d->steps[i].change = PDC_ADDED;
			d->added++;
			step_added(d, s);
			continue;
		}
		/* Steps the old plan had before this one and the new plan has not. */
		for (; next_old < (size_t)o; next_old++) {
			if (plan_find(np, old->steps[next_old].id) < 0) {
				step_head(d, PDL_REMOVED_STEP, '-', &old->steps[next_old]);
				d->removed++;
			}
		}
		if (next_old == (size_t)o)
			next_old++;
		if (plan_step_equal(&old->steps[o], s)) {
			d->steps[i].change = PDC_SAME;
			d->same++;
			step_head(d, PDL_SAME_STEP, '=', s);
		} else {
			d->steps[i].change = PDC_CHANGED;
			d->changed++;
			step_changed(d, &old->steps[o], s);
		}
	}
	for (; next_old < old->n_steps; next_old++) {
		if (plan_find(np, old->steps[next_old].id) < 0) {
			step_head(d, PDL_REMOVED_STEP, '-', &old->steps[next_old]);
			d->removed++;
		}
	}
	return d;
}

static struct plan *plan_of(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	struct plan *p = cJSON_IsObject(o) ? plan_from_json(o, NULL) : NULL;

	cJSON_Delete(o);
	return p;
}

struct plandiff *plandiff_from_json(const char *old_json, const char *new_json)
{
	struct plan *a = plan_of(old_json), *b = a ? plan_of(new_json) : NULL;
	struct plandiff *d = a && b ? plandiff_new(a, b) : NULL;

	plan_free(a);
	plan_free(b);
	return d;
}

void plandiff_free(struct plandiff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n_lines; i++)
		free(d->lines[i].text);
	free(d->lines);
	for (size_t i = 0; i < d->n_steps; i++)
		free(d->steps[i].id);
	free(d->steps);
	free(d);
}

bool plandiff_empty(const struct plandiff *d)
{
	return !d->added && !d->removed && !d->changed && !d->plan_changed;
}

char *plandiff_text(const struct plandiff *d)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	if (plandiff_empty(d))
		return strbuf_detach(&sb);
	for (size_t i = 0; i < d->n_lines; i++) {
		strbuf_adds(&sb, d->lines[i].text);
		strbuf_addc(&sb, '\n');
	}
	return strbuf_detach(&sb);
}
