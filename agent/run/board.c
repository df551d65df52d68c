/* board — one row per run folder, from one fold of its journal. */
#include "config.h"

#include "board.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fold.h"
#include "journal.h"
#include "run_list.h"
#include "runlock.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

static char *clean(const char *s)
{
	return textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);
}

static bool visit(void *ctx, const struct event *ev)
{
	fold_apply(ctx, ev);
	return true;
}

static void read_row(struct board_row *r, const char *runs_dir, const char *name)
{
	char *dir = xasprintf("%s/%s", runs_dir, name);
	char *path = xasprintf("%s/journal.jsonl", dir), *err = NULL;
	struct journal_load_info info = {0};
	struct run_state rs;

	memset(r, 0, sizeof(*r));
	r->id = clean(name);
	r->pid = runlock_holder(dir);
	fold_init(&rs);
	if (!journal_load(path, visit, &rs, &info, &err)) {
		r->state = xstrdup("unreadable");
		r->gates = xstrdup("");
		r->task = clean(err);
		free(err);
	} else {
		struct strbuf g = STRBUF_INIT;

		strbuf_init(&g);
		/* Open gates are asked by a live engine only: a stopped run's are gone. */
		for (size_t i = 0; r->pid && i < rs.n_gates; i++) {
			strbuf_addf(&g, "%s%s", g.len ? ", " : "",
			            gate_kind_name(rs.gates[i].kind));
			if (rs.gates[i].step_id)
				strbuf_addf(&g, " %s", rs.gates[i].step_id);
			r->n_gates++;
			if (rs.gates[i].json) {
				free(r->gate_json);
				r->gate_json = xstrdup(rs.gates[i].json);
			}
		}
		r->gates = clean(g.buf);
		strbuf_release(&g);
		if (r->pid)
			r->state = xstrdup(r->n_gates  ? "waiting"
			                   : rs.paused ? "paused"
			                               : "running");
		else
			r->state = clean(rs.ended && rs.end_status ? rs.end_status : "unfinished");
		r->spent_usd = fold_total_usd(&rs, &r->spent_unknown);
		r->budget_usd = rs.budget_usd;
		r->started = rs.started;
		r->task = clean(rs.task);
	}
	fold_release(&rs);
	free(path);
	free(dir);
}

bool board_scan(const char *runs_dir, struct board *b, char **err)
{
	struct strvec ids = STRVEC_INIT;

	board_release(b);
	if (!run_list_ids(runs_dir, &ids, err))
		return false;
	for (size_t i = 0; i < ids.n; i++) {
		b->rows = xgrow(b->rows, &b->cap, b->n + 1, sizeof(*b->rows));
		read_row(&b->rows[b->n++], runs_dir, ids.v[i]);
	}
	strvec_clear(&ids);
	return true;
}

void board_release(struct board *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->rows[i].id);
		free(b->rows[i].state);
		free(b->rows[i].gates);
		free(b->rows[i].gate_json);
		free(b->rows[i].task);
	}
	free(b->rows);
	memset(b, 0, sizeof(*b));
}

static const char *const sort_names[BOARD_SORT__COUNT] = {"state", "age", "spend", "id"};

const char *board_sort_name(enum board_sort key)
{
	return key < BOARD_SORT__COUNT ? sort_names[key] : "?";
}

/* Waiting for a decision first, then live, then the rest. */
static int rank(const struct board_row *r)
{
	return r->n_gates ? 0 : r->pid ? 1 : 2;
}

static enum board_sort sort_key;

static int by_key(const void *pa, const void *pb)
{
	const struct board_row *a = pa, *b = pb;
	int c = 0;

	switch (sort_key) {
	case BOARD_SORT_STATE: c = rank(a) - rank(b); break;
	case BOARD_SORT_SPEND:
		c = (a->spent_usd < b->spent_usd) - (a->spent_usd > b->spent_usd);
		break;
	case BOARD_SORT_ID: return strcmp(a->id, b->id);
	case BOARD_SORT_AGE:
	case BOARD_SORT__COUNT: break;
	}
	if (c)
		return c;
	c = (a->started < b->started) - (a->started > b->started); /* newest first */
	return c ? c : strcmp(a->id, b->id);
}

void board_sort(struct board *b, enum board_sort key)
{
	sort_key = key;
	if (b->n > 1)
		qsort(b->rows, b->n, sizeof(*b->rows), by_key);
}

static bool has(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (const char *p = hay; p && *p; p++)
		if (!strncasecmp(p, needle, n))
			return true;
	return false;
}

bool board_row_matches(const struct board_row *r, const char *filter)
{
	if (!filter || !*filter)
		return true;
	return has(r->id, filter) || has(r->state, filter) || has(r->gates, filter) ||
	       has(r->task, filter);
}

bool board_any_live(const char *runs_dir)
{
	struct strvec ids = STRVEC_INIT;
	char *err = NULL;
	bool live = false;

	if (!run_list_ids(runs_dir, &ids, &err)) {
		free(err);
		return false;
	}
	for (size_t i = 0; i < ids.n && !live; i++) {
		char *dir = xasprintf("%s/%s", runs_dir, ids.v[i]);

		live = runlock_holder(dir) > 0;
		free(dir);
	}
	strvec_clear(&ids);
	return live;
}

int board_gates_waiting(const struct board *b)
{
	int n = 0;

	for (size_t i = 0; i < b->n; i++)
		n += b->rows[i].n_gates;
	return n;
}
