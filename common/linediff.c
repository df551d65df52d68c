/*
 * linediff — Myers' greedy O((N+M)D) diff over lines, after trimming the common head and
 * tail, with the V vector of every round kept for the walk back; then hunks with context,
 * written the way GNU diff -u writes them.
 */
#include "config.h"

#include "linediff.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "xalloc.h"

struct dline {
	const char *s;
	size_t len;  /* without the '\n' */
	bool nl;     /* ends with '\n' (only the last line may not) */
	uint32_t h;
};

enum op { OP_SAME, OP_DEL, OP_ADD };

struct edit {
	enum op op;
	size_t ai, bi; /* line in a (SAME, DEL) and in b (SAME, ADD) */
};

struct script {
	struct edit *v;
	size_t n, cap;
};

static uint32_t hash(const char *s, size_t n, bool nl)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return nl ? h : h ^ 0x5bd1e995u;
}

static struct dline *split(const char *t, size_t len, size_t *n)
{
	struct dline *v = NULL;
	size_t cap = 0, k = 0, i = 0;

	while (i < len) {
		const char *nl = memchr(t + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - t) : len;

		v = xgrow(v, &cap, k + 1, sizeof(*v));
		v[k].s = t + i;
		v[k].len = end - i;
		v[k].nl = nl != NULL;
		v[k].h = hash(v[k].s, v[k].len, v[k].nl);
		k++;
		i = nl ? end + 1 : len;
	}
	*n = k;
	return v;
}

static bool same(const struct dline *x, const struct dline *y)
{
	return x->h == y->h && x->len == y->len && x->nl == y->nl && !memcmp(x->s, y->s, x->len);
}

static void push(struct script *sc, enum op op, size_t ai, size_t bi)
{
	sc->v = xgrow(sc->v, &sc->cap, sc->n + 1, sizeof(*sc->v));
	sc->v[sc->n].op = op;
	sc->v[sc->n].ai = ai;
	sc->v[sc->n].bi = bi;
	sc->n++;
}

/*
 * The middle a[0..n) → b[0..m) (no common head or tail), appended to `sc` in order, with
 * line numbers offset by `ao`/`bo`. false when more than `max` edits are needed.
 */
static bool myers(const struct dline *a, size_t n, const struct dline *b, size_t m, size_t ao,
		  size_t bo, size_t max, struct script *sc)
{
	long N = (long)n, M = (long)m, D = -1, lim = (long)(n + m < max ? n + m : max);
	long *v = xcalloc((size_t)(2 * lim + 3), sizeof(*v)), off = lim + 1;
	/* trace[d] holds V[-d..d] after round d; the walk back reads round d - 1. */
	int **trace = xcalloc((size_t)lim + 1, sizeof(*trace));
	struct script rev = {NULL, 0, 0};
	long x, y;

	for (long d = 0; d <= lim && D < 0; d++) {
		for (long k = -d; k <= d; k += 2) {
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			y = x - k;
			while (x < N && y < M && same(&a[x], &b[y]))
				x++, y++;
			v[off + k] = x;
			if (x >= N && y >= M) {
				D = d;
				break;
			}
		}
		trace[d] = xmalloc((size_t)(2 * d + 1) * sizeof(int));
		for (long k = -d; k <= d; k++)
			trace[d][k + d] = (int)v[off + k];
	}
	if (D < 0) {
		for (long d = 0; d <= lim; d++)
			free(trace[d]);
		free(trace);
		free(v);
		return false;
	}
	x = N;
	y = M;
	for (long d = D; d >= 0; d--) {
		long k = x - y, pk, px, py;

		if (d == 0) {
			while (x > 0 && y > 0)
				push(&rev, OP_SAME, (size_t)--x, (size_t)--y);
			break;
		}
		/* V of round d - 1, indexed -(d-1)..d-1 */
#define PV(kk) trace[d - 1][(kk) + d - 1]
		if (k == -d || (k != d && PV(k - 1) < PV(k + 1)))
			pk = k + 1;
		else
			pk = k - 1;
		px = PV(pk);
#undef PV
		py = px - pk;
		while (x > px && y > py)
			push(&rev, OP_SAME, (size_t)--x, (size_t)--y);
		if (x == px)
			push(&rev, OP_ADD, 0, (size_t)--y);
		else
			push(&rev, OP_DEL, (size_t)--x, 0);
	}
	for (size_t i = rev.n; i-- > 0;)
		push(sc, rev.v[i].op, rev.v[i].ai + ao, rev.v[i].bi + bo);
	free(rev.v);
	for (long d = 0; d <= D; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return true;
}

/* GNU's range: "l" for one line, "l,n" else; an empty range names the line before it. */
static void range(struct strbuf *sb, size_t start, size_t count)
{
	if (count == 1)
		strbuf_addf(sb, "%zu", start + 1);
	else if (count == 0)
		strbuf_addf(sb, "%zu,0", start);
	else
		strbuf_addf(sb, "%zu,%zu", start + 1, count);
}

static void line(struct strbuf *sb, char mark, const struct dline *l)
{
	strbuf_addc(sb, mark);
	strbuf_add(sb, l->s, l->len);
	strbuf_addc(sb, '\n');
	if (!l->nl)
		strbuf_adds(sb, "\\ No newline at end of file\n");
}

/* Writes one run of changes: removals first, then additions, as diff -u does. */
static void changes(struct strbuf *sb, const struct script *sc, size_t from, size_t to,
		    const struct dline *a, const struct dline *b, struct linediff_stats *st)
{
	for (size_t k = from; k < to; k++)
		if (sc->v[k].op == OP_DEL) {
			line(sb, '-', &a[sc->v[k].ai]);
			st->removed++;
		}
	for (size_t k = from; k < to; k++)
		if (sc->v[k].op == OP_ADD) {
			line(sb, '+', &b[sc->v[k].bi]);
			st->added++;
		}
}

/* Hunks: each change with `ctx` lines of SAME around it; changes fewer than 2 * ctx + 1
 * SAME lines apart share a hunk. */
static void hunks(struct strbuf *sb, const struct script *sc, const struct dline *a,
		  const struct dline *b, size_t ctx, struct linediff_stats *st)
{
	size_t n = sc->n, i = 0;
	size_t *pa = xcalloc(n + 1, sizeof(*pa)), *pb = xcalloc(n + 1, sizeof(*pb));

	for (size_t k = 0; k < n; k++) {
		pa[k + 1] = pa[k] + (sc->v[k].op != OP_ADD);
		pb[k + 1] = pb[k] + (sc->v[k].op != OP_DEL);
	}
	while (i < n) {
		size_t h0, h1, last, k;

		while (i < n && sc->v[i].op == OP_SAME)
			i++;
		if (i >= n)
			break;
		h0 = i > ctx ? i - ctx : 0;
		last = i;
		for (k = i; k < n; k++) {
			if (sc->v[k].op != OP_SAME)
				last = k;
			else if (k - last > 2 * ctx)
				break;
		}
		h1 = last + ctx + 1 < n ? last + ctx + 1 : n;
		strbuf_adds(sb, "@@ -");
		range(sb, pa[h0], pa[h1] - pa[h0]);
		strbuf_adds(sb, " +");
		range(sb, pb[h0], pb[h1] - pb[h0]);
		strbuf_adds(sb, " @@\n");
		for (k = h0; k < h1;) {
			size_t run = k;

			if (sc->v[k].op == OP_SAME) {
				line(sb, ' ', &a[sc->v[k].ai]);
				k++;
				continue;
			}
			while (run < h1 && sc->v[run].op != OP_SAME)
				run++;
			changes(sb, sc, k, run, a, b, st);
			k = run;
		}
		st->hunks++;
		i = h1;
	}
	free(pa);
	free(pb);
}

char *linediff_unified(const char *a, size_t alen, const char *b, size_t blen,
		       const char *name_a, const char *name_b, int context, size_t max_edits,
		       struct linediff_stats *st)
{
	struct linediff_stats local;
	struct script sc = {NULL, 0, 0};
	struct strbuf sb;
	size_t na, nb, head = 0, tail = 0;
	struct dline *la = split(a, alen, &na), *lb = split(b, blen, &nb);

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->exact = 1;
	strbuf_init(&sb);
	while (head < na && head < nb && same(&la[head], &lb[head]))
		head++;
	while (tail < na - head && tail < nb - head &&
	       same(&la[na - 1 - tail], &lb[nb - 1 - tail]))
		tail++;
	if (head == na && head == nb)
		goto out;
	for (size_t k = 0; k < head; k++)
		push(&sc, OP_SAME, k, k);
	if (!myers(la + head, na - head - tail, lb + head, nb - head - tail, head, head,
		   max_edits ? max_edits : LINEDIFF_MAX_EDITS, &sc)) {
		st->exact = 0;
		for (size_t k = head; k < na - tail; k++)
			push(&sc, OP_DEL, k, 0);
		for (size_t k = head; k < nb - tail; k++)
			push(&sc, OP_ADD, 0, k);
	}
	for (size_t k = 0; k < tail; k++)
		push(&sc, OP_SAME, na - tail + k, nb - tail + k);
	strbuf_addf(&sb, "--- %s\n+++ %s\n", name_a ? name_a : "a", name_b ? name_b : "b");
	hunks(&sb, &sc, la, lb, context < 0 ? 0 : (size_t)context, st);
out:
	free(sc.v);
	free(la);
	free(lb);
	return strbuf_detach(&sb);
}
