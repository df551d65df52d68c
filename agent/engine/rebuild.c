/* rebuild — the engine's state from a journal, for --resume: the journal is folded by the
 * same fold as the screen, the report and the headless printer (agent/run/fold.c), and
 * the engine takes its plan, step states, results, critiques, spend and open proposal
 * from the run state. An attempt that was in flight starts over (crash_cut.c settles what
 * it changed). */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "budget.h"
#include "bus.h"
#include "events.h"
#include "journal.h"
#include "jsonx.h"
#include "report_live.h"
#include "series_rebuild.h"
#include "xalloc.h"

struct visit_ctx {
	struct run_state *rs;
	struct series_rebuild *series; /* NULL without checkpoints */
	struct report_live *report;    /* the run's report.md goes on from the journal's past */
};

static bool visit(void *ctx, const struct event *ev)
{
	struct visit_ctx *v = ctx;
	cJSON *o = cJSON_Parse(ev->json); /* once, for the fold and the report */

	fold_apply_json(v->rs, (int)ev->type, o);
	report_live_apply(v->report, (int)ev->type, o);
	cJSON_Delete(o);
	if (v->series)
		series_rebuild_event(v->series, ev);
	return true;
}

static struct plan *parse_plan(const char *json)
{
	struct strvec errors = STRVEC_INIT;
	struct plan *p = json ? plan_parse(json, &errors) : NULL;

	strvec_clear(&errors);
	return p;
}

/* The engine's state of step i from the folded step `fs`. */
static void take_step(struct pev *e, size_t i, const struct fstep *fs, struct strvec *kept,
		      struct strvec *again)
{
	struct step_state *s = &e->st[i];

	s->attempts = fs->attempts;
	s->round_attempts = fs->round_attempts;
	for (size_t c = 0; c < fs->critiques.n; c++)
		strvec_push(&s->critiques, fs->critiques.v[c]);
	s->result_json = xstrdup(fs->result_json);
	s->output_json = xstrdup(fs->output_json);
	switch (fs->state) {
	case FS_RUNNING:
	case FS_VERIFYING:
		/* The attempt in flight never got a verdict: it does not use up a retry. */
		if (s->round_attempts > 0)
			s->round_attempts--;
		s->status = FS_PENDING;
		strvec_push(again, fs->id);
		break;
	case FS_WAITING:
		s->status = FS_PENDING; /* its gate opens again when it is dispatched */
		break;
	case FS_PASSED:
	case FS_FAIL_ACCEPTED:
	case FS_SKIPPED:
		s->status = fs->state;
		strvec_push(kept, fs->id);
		if (fs->state == FS_PASSED)
			sched_reuse_add(e, sched_reuse_key(e, e->plan, i), s->result_json,
					s->output_json);
		break;
	default:
		s->status = fs->state;
		if (fs->state == FS_STALE)
			strvec_push(again, fs->id);
		break;
	}
}

static char *summary(const struct strvec *kept, const struct strvec *again, bool gate)
{
	struct strbuf sb = STRBUF_INIT;
	char *k = strvec_join(kept, ", "), *a = strvec_join(again, ", ");

	strbuf_init(&sb);
	strbuf_addf(&sb, "%zu step%s kept%s%s", kept->n, kept->n == 1 ? "" : "s",
		    kept->n ? " (" : "", kept->n ? k : "");
	if (kept->n)
		strbuf_addc(&sb, ')');
	if (again->n)
		strbuf_addf(&sb, "; starting over: %s", a);
	if (gate)
		strbuf_adds(&sb, "; the proposed plan waits at its gate again");
	free(k);
	free(a);
	return strbuf_detach(&sb);
}

/* Passed or partial: a run with nothing left to do unless the operator reopens it. */
static bool finished_status(const char *status)
{
	return status && (!strcmp(status, "passed") || !strcmp(status, "partial"));
}

static char *finished_refusal(const char *run_id, const char *status)
{
	return xasprintf("run %s already finished (%s): browse it with pevtui --replay %s, or "
			 "reopen it in the cockpit (pevtui --resume %s at a terminal, then r "
			 "re-runs a step, e edits one)",
			 run_id, status, run_id, run_id);
}

/* The status of the journal's last run.end, NULL when a run.reopen (or nothing) follows. */
static bool last_end(void *ctx, const struct event *ev)
{
	char **status = ctx;

	if (ev->type == EV_RUN_END || ev->type == EV_RUN_REOPEN) {
		cJSON *o = ev->type == EV_RUN_END ? cJSON_Parse(ev->json) : NULL;
		const char *s = jsonx_str(o, "status");
		free(*status);
		*status = s ? xstrdup(s) : NULL;
		cJSON_Delete(o);
	}
	return true;
}

char *pev_finished_refusal(const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *status = NULL, *err = NULL;
	struct journal_load_info info = {0};
	const char *slash;
	char *why = NULL, *id = xstrdup(run_dir);

	for (size_t n = strlen(id); n > 1 && id[n - 1] == '/'; n--)
		id[n - 1] = '\0';
	slash = strrchr(id, '/');
	if (!journal_load(path, last_end, &status, &info, &err))
		free(err); /* pev_new says what is wrong with it */
	else if (finished_status(status))
		why = finished_refusal(slash ? slash + 1 : id, status);
	free(status);
	free(path);
	free(id);
	return why;
}

bool rebuild_from_journal(struct pev *e, char **err)
{
	char *path = xasprintf("%s/journal.jsonl", e->run_dir);
	struct journal_load_info info = {0};
	struct run_state rs;
	struct strvec kept = STRVEC_INIT, again = STRVEC_INIT;
	struct visit_ctx vc = {&rs, e->checkpoints ? series_rebuild_new(e->checkpoints) : NULL,
			       e->report};
	bool ok, finished;

	fold_init(&rs);
	ok = journal_load(path, visit, &vc, &info, err);
	finished = ok && rs.ended && finished_status(rs.end_status);
	if (finished && e->open != PEV_OPEN_FINISHED) {
		*err = finished_refusal(e->run_id, rs.end_status);
		ok = false;
	}
	if (ok && info.torn_tail && !journal_repair(path, &info, err))
		ok = false;
	if (!ok)
		goto out;

	bus_set_next_seq(e->bus, info.last_seq + 1);
	e->next_gate_id = rs.max_gate_id + 1;
	if (rs.task) {
		free(e->task);
		e->task = xstrdup(rs.task);
	}
	e->replans = rs.replans;
	for (int r = 0; r < ROLE__COUNT; r++) {
		e->usage[r].calls = (int)rs.roles[r].calls;
		e->usage[r].input = rs.roles[r].tokens_in;
		e->usage[r].output = rs.roles[r].tokens_out;
		e->usage[r].cached = rs.roles[r].tokens_cached;
		e->usage[r].cost = rs.roles[r].usd;
		e->usage[r].cost_unknown = rs.roles[r].unknown;
	}
	budget_settle(e->budget, 0, rs.spent_usd);
	/* A cap raised at a budget gate stands unless a higher --budget is given now. */
	if (rs.budget_usd > budget_cap(e->budget))
		budget_set_cap(e->budget, rs.budget_usd);

	if (rs.plan_adopted && rs.plan_json) {
		e->plan = parse_plan(rs.plan_json);
		if (!e->plan) {
			*err = xasprintf("the journal's current plan cannot be read back");
			ok = false;
			goto out;
		}
		e->revision = rs.revision;
		e->st = xcalloc(e->plan->n_steps ? e->plan->n_steps : 1, sizeof(*e->st));
		sched_index_plan(e);
		/* In topological order, so reuse keys see their inputs' outputs. */
		{
			size_t *order = plan_topo_order(e->plan);
			for (size_t k = 0; k < e->plan->n_steps; k++) {
				size_t i = order[k];
				int f = fold_find_step(&rs, e->plan->steps[i].id);
				if (f >= 0)
					take_step(e, i, &rs.steps[f], &kept, &again);
			}
			free(order);
		}
	}
	if (rs.proposed_json) {
		e->proposal = parse_plan(rs.proposed_json);
		e->proposal_rev = rs.proposed_revision;
		e->proposal_reason = xstrdup(rs.proposed_reason);
		if (e->proposal && e->plan && rs.proposed_failed) {
			e->replan_step = xstrdup(rs.proposed_failed);
			e->replan_why = xstrdup(rs.proposed_failure);
		} else if (e->plan) {
			/* A proposal with nothing to replan is not waiting for anything. */
			plan_free(e->proposal);
			e->proposal = NULL;
		}
	}
	if (rs.final_seen && !rs.ended) {
		/* Killed between run.final and run.end: nothing is asked or paid again. */
		e->final_done = true;
		e->exit_code = rs.partial ? PEV_EXIT_PARTIAL : PEV_EXIT_OK;
	}
	/* A finished run opened to be reopened waits at its end (start in loop.c); one that
	 * ended otherwise (aborted, error) goes on at once, in a new segment. */
	e->open_at_end = finished;
	if (finished)
		e->exit_code = !strcmp(rs.end_status, "partial") ? PEV_EXIT_PARTIAL : PEV_EXIT_OK;
	e->reopen_on_start = rs.ended && !finished;
	/* Until that run.reopen the run is ended: its servers' start outcomes, which come
	 * from threads that start beside the engine's, wait for it (mcp_calls.c). */
	e->mcp_ended = rs.ended;
	e->resume_summary = summary(&kept, &again, e->proposal != NULL);
	/* Commands the operator allowed for the rest of the run are not allowed again from
	 * the journal: a run folder may come from elsewhere, and a journal never widens what
	 * a run may do (restore.h). They ask at the gate once more; the summary says so. */
	if (rs.shell_allowed.n) {
		char *with = xasprintf("%s; %zu shell command%s allowed for the run before the stop "
				       "ask%s at the gate again",
				       e->resume_summary, rs.shell_allowed.n,
				       rs.shell_allowed.n == 1 ? "" : "s",
				       rs.shell_allowed.n == 1 ? "s" : "");
		free(e->resume_summary);
		e->resume_summary = with;
	}
	if (vc.series) {
		const char *why;
		size_t missing = series_rebuild_missing(vc.series, &why);

		crashcut_collect(e, vc.series);
		if (missing) {
			char *with = xasprintf("%s; the checkpoint store lacks what %zu attempt%s "
					       "changed (%s): those files are not restored before a "
					       "step runs again",
					       e->resume_summary, missing, missing == 1 ? "" : "s",
					       why);
			free(e->resume_summary);
			e->resume_summary = with;
		}
	}
out:
	series_rebuild_free(vc.series);
	strvec_clear(&kept);
	strvec_clear(&again);
	fold_release(&rs);
	free(path);
	return ok;
}
