/* loop — the engine's event loop: one inbox, one message at a time (engine_step). Operator
 * commands are journaled as operator.command before what they cause. Also the engine's
 * life cycle (pev_new … pev_free) and the end of a run segment. */
#include "config.h"

#include "engine.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "attempts.h"
#include "budget.h"
#include "bus.h"
#include "checkpoint.h"
#include "confine.h"
#include "journal.h"
#include "jsonx.h"
#include "report_live.h"
#include "requests.h"
#include "runlock.h"
#include "sandbox.h"
#include "schemas.h"
#include "mcp_hub.h"
#include "settings.h"
#include "xalloc.h"

long engine_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ------------------------------------------------------------------ inbox */

void engine_msg_free(struct msg *m)
{
	if (!m)
		return;
	free(m->step_id);
	free(m->json);
	free(m);
}

void engine_post(struct pev *e, struct msg *m)
{
	pthread_mutex_lock(&e->lock);
	m->next = NULL;
	*e->inbox_tail = m;
	e->inbox_tail = &m->next;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

/* The loop ends after this message: from now on pev_post refuses (engine thread). */
static void stop_loop(struct pev *e)
{
	e->stop_loop = true;
	pthread_mutex_lock(&e->lock);
	e->closed = true;
	pthread_mutex_unlock(&e->lock);
}

/* Whether the run stays open at run.end: a cockpit's, or a detached one while watched. */
static bool lingers(const struct pev *e)
{
	return e->linger && (!e->watched || e->watched(e->watched_ctx));
}

static struct msg *take(struct pev *e)
{
	struct msg *m;

	pthread_mutex_lock(&e->lock);
	while (!e->inbox)
		pthread_cond_wait(&e->cond, &e->lock);
	m = e->inbox;
	e->inbox = m->next;
	if (!e->inbox)
		e->inbox_tail = &e->inbox;
	pthread_mutex_unlock(&e->lock);
	return m;
}

bool pev_post(struct pev *e, enum pev_cmd cmd, const char *step_id, const char *json)
{
	struct msg *m;

	if (e->remote_post)
		return e->remote_post(e->remote_ctx, cmd, step_id, json);
	pthread_mutex_lock(&e->lock);
	if (e->closed) {
		pthread_mutex_unlock(&e->lock);
		return false;
	}
	pthread_mutex_unlock(&e->lock);
	m = xcalloc(1, sizeof(*m));
	m->kind = MSG_CMD;
	m->cmd = cmd;
	m->step_id = xstrdup(step_id);
	m->json = xstrdup(json);
	/* Workers stop asking for more once an abort is on its way; the loop does the rest. */
	if (cmd == PEV_CMD_ABORT || cmd == PEV_CMD_QUIT)
		atomic_store(&e->aborting, true);
	engine_post(e, m);
	return true;
}

bool pev_answer(struct pev *e, unsigned long gate_id, enum gate_decision d, const char *json)
{
	struct msg *m;
	bool open = false;

	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->n_open_ids; i++) {
		if (e->open_ids[i] == gate_id) {
			/* The first answer wins: a second one finds the id gone. */
			e->open_ids[i] = e->open_ids[--e->n_open_ids];
			open = true;
			break;
		}
	}
	pthread_mutex_unlock(&e->lock);
	if (!open)
		return false;
	m = xcalloc(1, sizeof(*m));
	m->kind = MSG_ANSWER;
	m->gate_id = gate_id;
	m->decision = d;
	m->json = xstrdup(json);
	engine_post(e, m);
	return true;
}

static bool answer_cb(void *ctx, unsigned long id, enum gate_decision d, const char *json)
{
	return pev_answer(ctx, id, d, json);
}

/* ------------------------------------------------------------- the end */

static const char *exit_status_name(enum pev_exit c)
{
	switch (c) {
	case PEV_EXIT_OK: return "passed";
	case PEV_EXIT_PARTIAL: return "partial";
	case PEV_EXIT_ABORTED: return "aborted";
	case PEV_EXIT_ERROR: break;
	}
	return "error";
}

/*
 * The journal cannot be written (a full disk, a file size limit). A run that is not
 * recorded cannot be resumed, so it stops at once with exit 1; the journal ends on its
 * last whole event, and once there is room again --resume continues from there.
 */
static void journal_failed(struct pev *e, const char *why)
{
	char *reason = xasprintf("%s; the run stopped so that nothing goes unrecorded: make "
				 "room, then continue it with pevtui --resume %s",
				 why, e->run_id);

	e->linger = false;
	e->watched = NULL;
	atomic_store(&e->aborting, true);
	engine_end(e, PEV_EXIT_ERROR, "%s", reason);
	/* Already ending or ended: the failure still decides how it ends. */
	e->exit_code = PEV_EXIT_ERROR;
	free(e->end_reason);
	e->end_reason = reason;
	if (e->phase == PH_ENDED)
		stop_loop(e);
}

static void journal_failure_cb(void *ctx, const char *error)
{
	struct pev *e = ctx;
	struct msg *m = xcalloc(1, sizeof(*m));

	atomic_store(&e->aborting, true);
	m->kind = MSG_JOURNAL_FAILED;
	m->json = xstrdup(error);
	engine_post(e, m);
}

/* What the last run.end said of report.md no longer holds: the run goes on, or its end
 * wrote no report. */
static void report_forget(struct pev *e)
{
	free(e->report_path);
	free(e->report_error);
	e->report_path = NULL;
	e->report_error = NULL;
}

/* run.end once every job is back, so nothing of this segment is published after it. */
static void maybe_finish_ending(struct pev *e)
{
	cJSON *f;
	char *err = NULL;

	if (e->phase != PH_ENDING || e->n_jobs > 0)
		return;
	if (e->quit) {
		stop_loop(e);
		return;
	}
	/* The loop stops at run.end: the servers end first, so that their stop is in the
	 * run's record before its end and nothing follows run.end. (A lingering cockpit's
	 * servers stay up for a re-run; they end with the loop, unannounced: mcp_calls.c.) */
	if (!lingers(e))
		mcpcalls_stop(e);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "status", exit_status_name(e->exit_code));
	cJSON_AddNumberToObject(f, "exit_code", e->exit_code);
	if (e->end_reason)
		cJSON_AddStringToObject(f, "reason", e->end_reason);
	mcpcalls_run_ended(e);
	bus_publish(e->bus, EV_RUN_END, f);
	e->phase = PH_ENDED;
	report_forget(e); /* a lingering cockpit's earlier end wrote one */
	/* The report tells what the journal has: none when the journal stopped short. */
	if (journal_error(e->journal)) {
		journal_failed(e, journal_error(e->journal));
		return;
	}
	/* The journal has everything, the report is a convenience: one that cannot be written
	 * is said by the front end (pev_report_error), not journaled after run.end. */
	if (report_live_write(e->report, e->run_dir, &err))
		e->report_path = xasprintf("%s/report.md", e->run_dir);
	else
		e->report_error = err;
	if (!lingers(e))
		stop_loop(e);
}

void engine_end(struct pev *e, enum pev_exit code, const char *fmt, ...)
{
	va_list ap;

	if (e->phase == PH_ENDING || e->phase == PH_ENDED)
		return;
	e->exit_code = code;
	free(e->end_reason);
	e->end_reason = NULL;
	if (fmt) {
		va_start(ap, fmt);
		e->end_reason = xvasprintf(fmt, ap);
		va_end(ap);
	}
	e->phase = PH_ENDING;
	pool_cancel_all(e, false);
	gates_withdraw_all(e, e->quit ? "the operator quit" : "the run is ending");
	/* A step waiting at its gate is pending again: a reopened or resumed run asks anew.
	 * Running ones follow when their cancelled jobs come back. */
	for (size_t i = 0; e->plan && i < e->plan->n_steps; i++) {
		e->st[i].approved = false;
		if (e->st[i].status == FS_WAITING && !e->st[i].job_live)
			sched_set_state(e, i, FS_PENDING, NULL, "the run stopped");
	}
	/* Steps that were running or waiting are simply not settled: resume runs them. */
	maybe_finish_ending(e);
}

void engine_control(struct pev *e, const char *kind, const char *step_id, bool cancel,
		    const char *message)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "level", "info");
	cJSON_AddStringToObject(f, "kind", kind);
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	if (cancel)
		cJSON_AddBoolToObject(f, "cancel", true);
	cJSON_AddStringToObject(f, "message", message);
	bus_publish(e->bus, EV_NOTICE, f);
}

void engine_write_plan(struct pev *e)
{
	char *pj, *err = NULL;

	if (!e->plan)
		return;
	pj = plan_to_string(e->plan, true);
	if (!journal_write_plan(e->run_dir, pj, &err)) {
		bus_notice(e->bus, "warn", NULL, "cannot write plan.json: %s", err);
		free(err);
	}
	free(pj);
}

/* ------------------------------------------------------------ commands */

static const char *const cmd_names[] = {
	[PEV_CMD_PAUSE] = "pause",       [PEV_CMD_RESUME] = "resume",
	[PEV_CMD_ABORT] = "abort",       [PEV_CMD_RERUN] = "rerun",
	[PEV_CMD_RERUN_FORCE] = "rerun", [PEV_CMD_SKIP] = "skip",
	[PEV_CMD_EDIT] = "edit",         [PEV_CMD_EDIT_PLAN] = "edit_plan",
	[PEV_CMD_QUIT] = "quit",         [PEV_CMD_CANCEL_RUNNING] = "cancel_running",
	[PEV_CMD_BUDGET] = "budget",     [PEV_CMD_REWIND] = "rewind",
};

static double json_budget(const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	double v = -1;

	if (cJSON_IsNumber(o))
		v = o->valuedouble;
	else
		jsonx_num(o, "budget_usd", &v);
	cJSON_Delete(o);
	return v;
}

/* operator.command: what was asked, journaled before what it causes. */
static void publish_command(struct pev *e, const char *command, const char *step_id,
			    unsigned long gate_id, const char *json, bool force)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "command", command);
	if (step_id)
		cJSON_AddStringToObject(f, "step_id", step_id);
	else
		cJSON_AddNullToObject(f, "step_id");
	if (gate_id)
		cJSON_AddNumberToObject(f, "gate_id", (double)gate_id);
	if (force)
		cJSON_AddBoolToObject(f, "force", true);
	if (json) {
		cJSON *j = jsonx_parse_for_event(json);
		double b = json_budget(json);
		if (b >= 0 && (!strcmp(command, "budget") || !strcmp(command, "approve")))
			cJSON_AddNumberToObject(f, "budget_usd", b);
		else if (!strcmp(command, "approve") && shellgate_wants_remember(json))
			cJSON_AddBoolToObject(f, "remember", true);
		else if (j)
			cJSON_AddItemToObject(f, "edited", j), j = NULL;
		else
			cJSON_AddStringToObject(f, "edited", json);
		cJSON_Delete(j);
	}
	e->cmd_seq = bus_publish(e->bus, EV_OPERATOR_COMMAND, f);
}

/* A finished run is reopened by an edit or a re-run: a new segment, a new run.end later. */
static void reopen(struct pev *e, const char *reason)
{
	cJSON *f;

	if (e->phase != PH_ENDED)
		return;
	f = cJSON_CreateObject();
	if (e->cmd_seq)
		cJSON_AddNumberToObject(f, "by_seq", (double)e->cmd_seq);
	else
		cJSON_AddNullToObject(f, "by_seq");
	cJSON_AddStringToObject(f, "reason", reason);
	bus_publish(e->bus, EV_RUN_REOPEN, f);
	mcpcalls_run_reopened(e);
	report_forget(e);
	e->phase = PH_EXECUTING;
	e->exit_code = PEV_EXIT_OK;
	free(e->end_reason);
	e->end_reason = NULL;
	e->final_done = false;
}

static void apply_command(struct pev *e, struct msg *m)
{
	int i = m->step_id ? sched_find(e, m->step_id) : -1;
	bool at_gate = e->phase == PH_PLAN_GATE || e->phase == PH_REPLAN_GATE;
	double b;

	if (m->cmd == PEV_CMD_QUIT && e->phase == PH_ENDED) {
		/* Nothing to stop: the run has its end in the journal already, and a quit
		 * after it is no part of the run's record. */
		e->quit = true;
		stop_loop(e);
		return;
	}
	publish_command(e, cmd_names[m->cmd], m->step_id, 0,
			m->cmd == PEV_CMD_EDIT || m->cmd == PEV_CMD_EDIT_PLAN ||
					m->cmd == PEV_CMD_BUDGET || m->cmd == PEV_CMD_REWIND
				? m->json
				: NULL,
			m->cmd == PEV_CMD_RERUN_FORCE);
	switch (m->cmd) {
	case PEV_CMD_ABORT:
		engine_control(e, "abort", NULL, false, "run aborted by the operator");
		engine_end(e, PEV_EXIT_ABORTED, "aborted by the operator");
		break;
	case PEV_CMD_QUIT:
		e->quit = true;
		engine_end(e, PEV_EXIT_ABORTED, "the operator quit; the run can be resumed");
		break;
	case PEV_CMD_PAUSE:
		e->paused = true;
		engine_control(e, "pause", NULL, false,
			       "paused: no new step starts; running steps finish");
		break;
	case PEV_CMD_CANCEL_RUNNING:
		e->paused = true;
		pool_cancel_all(e, false);
		engine_control(e, "pause", NULL, true,
			       "paused: calls in flight cancelled; those steps start over on resume");
		break;
	case PEV_CMD_RESUME:
		e->paused = false;
		engine_control(e, "resume_run", NULL, false, "resumed");
		planning_resubmit(e);
		if (e->phase == PH_FINISHING && !e->finish_job)
			finish_start(e); /* its calls were cancelled by the pause */
		break;
	case PEV_CMD_EDIT:
		if (at_gate && planning_edit_proposal_step(e, m->step_id, m->json))
			break;
		if (i < 0) {
			bus_notice(e->bus, "error", m->step_id, "cannot edit unknown step %s",
				   m->step_id ? m->step_id : "(none)");
			break;
		}
		reopen(e, "edit");
		sched_apply_edit(e, m->step_id, m->json);
		break;
	case PEV_CMD_EDIT_PLAN:
		planning_edit_plan(e, m->json);
		break;
	case PEV_CMD_REWIND:
		rewindcmd_apply(e, m->json);
		break;
	case PEV_CMD_RERUN:
	case PEV_CMD_RERUN_FORCE:
		if (i < 0) {
			bus_notice(e->bus, "error", m->step_id, "cannot re-run unknown step %s",
				   m->step_id ? m->step_id : "(none)");
			break;
		}
		reopen(e, "rerun");
		if (m->cmd == PEV_CMD_RERUN_FORCE)
			e->st[i].force = true;
		sched_invalidate(e, (size_t)i, false, "re-run by the operator");
		break;
	case PEV_CMD_SKIP:
		if (i < 0)
			break;
		if (!fold_state_settled(e->st[i].status))
			reopen(e, "skip"); /* an ended run goes on without the step */
		if (e->st[i].status == FS_PENDING || e->st[i].status == FS_STALE) {
			e->st[i].status = FS_SKIPPED;
			sched_publish_end(e, (size_t)i, false);
		} else if (e->st[i].status == FS_WAITING && e->st[i].gate_id) {
			gates_decide(e, e->st[i].gate_id, GATE_SKIP, "operator", NULL, NULL);
		} else if (e->st[i].status == FS_RUNNING || e->st[i].status == FS_WAITING) {
			/* Its job is cancelled; skipped when it comes back. */
			e->st[i].skip_requested = true;
			pool_cancel_step(e, m->step_id);
		}
		break;
	case PEV_CMD_BUDGET:
		b = json_budget(m->json);
		if (b < 0) {
			bus_notice(e->bus, "error", NULL, "a budget must be a number of USD");
			break;
		}
		budget_set_cap(e->budget, b);
		bus_notice(e->bus, "info", NULL, "budget set to $%.4f", b);
		break;
	}
}

static void apply_answer(struct pev *e, struct msg *m)
{
	struct egate *g = gates_find(e, m->gate_id);

	if (!g)
		return; /* withdrawn meanwhile */
	publish_command(e, gate_decision_name(m->decision), g->step_id, m->gate_id, m->json,
			false);
	gates_decide(e, m->gate_id, m->decision, "operator", NULL, m->json);
}

/* ------------------------------------------------------------- the step */

/* policy.sandbox in run.start and run.resume: the mode, the network, the layers that
 * hold, and the line every surface shows. */
static void add_sandbox(struct pev *e, cJSON *policy)
{
	const struct confine_layers *l;
	cJSON *sb, *layers;

	if (!e->sandbox)
		return;
	l = confine_session_layers(e->sandbox);
	sb = cJSON_AddObjectToObject(policy, "sandbox");
	cJSON_AddStringToObject(sb, "mode", confine_mode_name(confine_session_mode(e->sandbox)));
	cJSON_AddBoolToObject(sb, "network", confine_session_network(e->sandbox));
	layers = cJSON_AddArrayToObject(sb, "layers");
	if (l->bwrap)
		cJSON_AddItemToArray(layers, cJSON_CreateString("bubblewrap"));
	if (l->landlock_abi > 0)
		cJSON_AddItemToArray(layers, cJSON_CreateString("landlock"));
	if (l->seccomp)
		cJSON_AddItemToArray(layers, cJSON_CreateString("seccomp"));
	if (l->landlock_abi > 0)
		cJSON_AddNumberToObject(sb, "landlock_abi", l->landlock_abi);
	cJSON_AddStringToObject(sb, "line", confine_session_line(e->sandbox));
}

static void publish_run_start(struct pev *e, enum event_type type)
{
	cJSON *f = cJSON_CreateObject(), *models, *policy, *gates;

	policy = cJSON_CreateObject();
	gates = cJSON_AddArrayToObject(policy, "gates");
	for (int k = 0; k < GATE__COUNT; k++)
		if (gates_enabled(e, k))
			cJSON_AddItemToArray(gates, cJSON_CreateString(gate_kind_name(k)));
	cJSON_AddBoolToObject(policy, "yes", e->yes);
	cJSON_AddNumberToObject(policy, "max_retries", e->max_retries);
	cJSON_AddNumberToObject(policy, "max_replans", e->max_replans);
	cJSON_AddNumberToObject(policy, "parallel", e->parallel);
	if (budget_cap(e->budget) > 0)
		cJSON_AddNumberToObject(policy, "budget_usd", budget_cap(e->budget));
	else
		cJSON_AddNullToObject(policy, "budget_usd");
	cJSON_AddNumberToObject(policy, "confidence_threshold", e->threshold);
	cJSON_AddNumberToObject(policy, "chaos", e->chaos);
	if (e->checkpoints) {
		/* The rules the run checkpoints by: --resume takes them back (restore.c). */
		struct strvec ex = STRVEC_INIT;
		uint64_t max_file, max_total;
		cJSON *c = cJSON_AddObjectToObject(policy, "checkpoints"), *a;
		checkpoint_rules(e->checkpoints, &ex, &max_file, &max_total);
		a = cJSON_AddArrayToObject(c, "exclude");
		for (size_t i = 0; i < ex.n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(ex.v[i]));
		cJSON_AddNumberToObject(c, "max_file", (double)max_file);
		cJSON_AddNumberToObject(c, "max_total", (double)max_total);
		strvec_clear(&ex);
	}
	add_sandbox(e, policy);
	if (type == EV_RUN_RESUME) {
		cJSON_AddItemToObject(f, "policy", policy);
		bus_publish(e->bus, type, f);
		return;
	}
	cJSON_AddStringToObject(f, "run_id", e->run_id);
	cJSON_AddStringToObject(f, "task", e->task);
	cJSON_AddStringToObject(f, "provider", e->prov[ROLE_PLANNER]->ops->name);
	cJSON_AddBoolToObject(f, "simulated", e->prov[ROLE_PLANNER]->simulated);
	if (e->scenario)
		cJSON_AddStringToObject(f, "scenario", e->scenario);
	models = cJSON_AddObjectToObject(f, "models");
	for (int r = 0; r < ROLE__COUNT; r++)
		cJSON_AddStringToObject(models, llm_role_name(r), e->models[r]);
	cJSON_AddItemToObject(f, "policy", policy);
	cJSON_AddStringToObject(f, "workspace", e->workspace);
	bus_publish(e->bus, type, f);
}

/* With the sandbox off, commands reach what the operator reaches: said on the screen
 * once per run. (Every other state is in run.start, on each shell gate and in the
 * report; a run where no layer holds asks at the gate for every command, saying why.) */
static void tell_sandbox(struct pev *e)
{
	if (e->sandbox && confine_session_mode(e->sandbox) == CONFINE_OFF)
		bus_notice(e->bus, "warn", NULL, "%s", confine_session_line(e->sandbox));
}

static void start(struct pev *e)
{
	if (e->open_at_end) {
		/* A finished run, opened to be reopened: it waits at its end for an edit or a
		 * re-run, and says nothing until one comes (the journal stays as it was). */
		e->phase = PH_ENDED;
		if (!lingers(e))
			stop_loop(e);
		return;
	}
	if (!e->resume) {
		publish_run_start(e, EV_RUN_START);
		tell_sandbox(e);
		planning_start(e);
		return;
	}
	if (e->final_done) {
		/* Killed between run.final and run.end: only run.end is written, so run.final
		 * stays the event before it. */
		e->phase = PH_ENDING;
		maybe_finish_ending(e);
		return;
	}
	if (e->reopen_on_start) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddNullToObject(f, "by_seq");
		cJSON_AddStringToObject(f, "reason", "resume");
		bus_publish(e->bus, EV_RUN_REOPEN, f);
		mcpcalls_run_reopened(e);
	}
	publish_run_start(e, EV_RUN_RESUME);
	tell_sandbox(e);
	bus_notice(e->bus, "info", NULL, "resuming run %s from its journal: %s", e->run_id,
		   e->resume_summary ? e->resume_summary : "nothing was settled yet");
	/* Before any step runs again: what the attempts the stop cut off changed (on a pool
	 * thread; planning starts when it comes back). */
	if (!crashcut_start(e))
		planning_start(e);
}

void engine_step(struct pev *e, struct msg *m)
{
	e->cmd_seq = 0;
	switch (m->kind) {
	case MSG_START: start(e); break;
	case MSG_CMD: apply_command(e, m); break;
	case MSG_ANSWER: apply_answer(e, m); break;
	case MSG_JOURNAL_FAILED: journal_failed(e, m->json); break;
	case MSG_LINGER:
		/* A journal that failed ended the lingering for good (journal_failed). */
		if (!journal_error(e->journal)) {
			e->linger = true;
			e->watched = m->watched;
			e->watched_ctx = m->watched_ctx;
		}
		/* At run.end already, nobody may be watching. */
		if (e->phase == PH_ENDED && !lingers(e))
			stop_loop(e);
		break;
	case MSG_WATCHERS:
		if (e->phase == PH_ENDED && !lingers(e))
			stop_loop(e);
		break;
	case MSG_JOB_DONE: {
		struct job *j = m->job;
		e->n_jobs--;
		/* A shell gate it was waiting at (until it was cancelled) goes with it. */
		for (size_t g = e->n_gates; g-- > 0;)
			if (e->gates[g].job == j)
				gates_withdraw(e, e->gates[g].id, "its step stopped");
		if (j->kind == JOB_STEP)
			sched_job_done(e, j);
		else if (j->kind == JOB_PLAN)
			planning_job_done(e, j);
		else if (j->kind == JOB_SETTLE && e->phase == PH_START)
			planning_start(e); /* unless an abort or a quit came meanwhile */
		else
			finish_job_done(e, j);
		job_free(j);
		break;
	}
	case MSG_SHELL_ASK: {
		struct job *j = m->job;
		int i = sched_find(e, j->step.id);
		cJSON *payload;

		if (j->ask_kind == GATE_MCP) {
			mcpcalls_ask(e, j);
			break;
		}
		if (j->ask_kind == GATE_REWIND) {
			rewindgate_open(e, j);
			break;
		}
		if (j->ask_kind == GATE_ELICIT) {
			elicitgate_open(e, j);
			break;
		}
		if (atomic_load(&j->cancel) || e->phase == PH_ENDING || e->phase == PH_ENDED) {
			job_shell_reply(e, j, GATE_REJECT, NULL, "cancelled");
			break;
		}
		/* With the shell gate off, commands run in the sandbox unasked; one asking to
		 * run outside it has no one to approve it, and is refused. */
		if (!gates_enabled(e, GATE_SHELL)) {
			if (shellgate_outside(e, j))
				job_shell_reply(e, j, GATE_REJECT, NULL, "refused");
			else
				job_shell_reply(e, j, GATE_APPROVE, NULL, "gate_off");
			break;
		}
		payload = shellgate_payload(e, j);
		if (!payload) {
			job_shell_reply(e, j, GATE_APPROVE, NULL, "allowed_for_run");
			break;
		}
		cJSON_AddItemToObject(payload, "step", plan_step_to_json(&j->step));
		/* Its clock stops while the operator reads the command. */
		if (i >= 0 && e->st[i].gen == j->gen)
			sched_set_state(e, (size_t)i, FS_WAITING, NULL, "waits at its shell gate");
		gates_open(e, GATE_SHELL, j->step.id, j->gen, j, payload);
		break;
	}
	case MSG_BUDGET_BLOCKED:
		if (e->budget_gate_open || e->phase == PH_ENDING || e->phase == PH_ENDED)
			break;
		if (!budget_would_block(e->budget, m->amount)) {
			budget_wake(e->budget); /* the cap moved meanwhile: try again */
			break;
		}
		if (!gates_enabled(e, GATE_BUDGET) || e->gate_mode != GATE_MODE_OPERATOR) {
			double cap = budget_cap(e->budget), spent = budget_spent(e->budget);
			bus_notice(e->bus, "error", NULL,
				   "the budget of $%.4f is reached ($%.4f spent, the next call needs "
				   "about $%.4f): resume with a higher --budget",
				   cap, spent, m->amount);
			engine_end(e, PEV_EXIT_ABORTED,
				   "budget of $%.4f reached with no operator to raise it; resume with "
				   "a higher --budget",
				   cap);
		} else {
			cJSON *p = cJSON_CreateObject();
			cJSON_AddNumberToObject(p, "spent_usd", budget_spent(e->budget));
			cJSON_AddNumberToObject(p, "reserved_usd", budget_reserved(e->budget));
			cJSON_AddNumberToObject(p, "budget_usd", budget_cap(e->budget));
			cJSON_AddNumberToObject(p, "needed_usd", m->amount);
			e->budget_gate_open = true;
			gates_open(e, GATE_BUDGET, NULL, 0, NULL, p);
		}
		break;
	}
	if (e->phase != PH_ENDING && e->phase != PH_ENDED)
		sched_run(e);
	maybe_finish_ending(e);
}

static void *engine_main(void *arg)
{
	struct pev *e = arg;

	while (!e->stop_loop) {
		struct msg *m = take(e);
		engine_step(e, m);
		engine_msg_free(m);
	}
	stop_loop(e); /* pev_post refuses from here on, whatever ended the loop */
	pool_stop(e);
	mcpcalls_stop(e); /* no step calls a tool any more: every server ends with the run */
	return NULL;
}

/* ------------------------------------------------------------- lifecycle */

static char *make_run_id(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
	return xasprintf("%s-%04lx", buf,
			 ((unsigned long)ts.tv_nsec ^ (unsigned long)getpid()) & 0xffff);
}

/* The commands' sandbox: probed once for the run; pevtui's own folders are hidden. */
static struct confine_session *sandbox_for_run(struct pev *e, const struct settings *s)
{
	struct strvec dirs = STRVEC_INIT;
	char *config = settings_default_config_path(), *data = settings_data_path("pevtui");
	char *runs = xstrdup(e->run_dir), *slash = strrchr(runs, '/');
	struct confine_session *sb;

	if (config && (slash = strrchr(config, '/')) != NULL) {
		*slash = '\0';
		strvec_push(&dirs, config);
	}
	if (data)
		strvec_push(&dirs, data);
	slash = strrchr(runs, '/');
	if (slash && slash != runs) {
		*slash = '\0';
		strvec_push(&dirs, runs);
	}
	struct confine_setup setup = {.mode = (enum confine_mode)s->sandbox_mode,
				      .network = s->sandbox_network,
				      .workspace = e->workspace,
				      .run_dir = e->run_dir,
				      .run_id = e->run_id,
				      .helper = s->sandbox_helper,
				      .home = getenv("HOME"),
				      .pevtui_dirs = &dirs,
				      .writable = &s->sandbox_writable,
				      .deny_read = &s->sandbox_deny_read};
	sb = confine_session_new(&setup);
	if (confine_session_problem(sb))
		bus_notice(e->bus, "warn", NULL, "%s", confine_session_problem(sb));
	strvec_clear(&dirs);
	free(config);
	free(data);
	free(runs);
	return sb;
}

struct pev *pev_new(const struct settings *s, struct provider *providers[ROLE__COUNT],
		    struct bus *bus, struct gatekeeper *gates, const char *run_dir,
		    enum pev_open open, char **err)
{
	struct pev *e = xcalloc(1, sizeof(*e));
	const char *slash;

	e->task = xstrdup(s->task ? s->task : "");
	if (providers[ROLE_PLANNER]->simulated && !s->script)
		e->scenario = xstrdup(s->scenario);
	for (int r = 0; r < ROLE__COUNT; r++) {
		e->prov[r] = providers[r];
		e->models[r] = xstrdup(s->model[r] ? s->model[r] : "unknown");
	}
	e->max_retries = s->max_retries;
	e->max_replans = s->max_replans;
	e->threshold = s->confidence_threshold;
	e->chaos = s->chaos;
	for (size_t k = 0; k < s->shell_allow.n; k++)
		strvec_push(&e->shell_allow, s->shell_allow.v[k]);
	for (size_t k = 0; k < s->http_allow_hosts.n; k++)
		strvec_push(&e->http_allow_hosts, s->http_allow_hosts.v[k]);
	e->shell_timeout_s = s->shell_timeout_s;
	e->http_max_bytes = s->http_max_bytes > 0 ? (size_t)s->http_max_bytes : 0;
	e->chaos_seed = s->chaos_seed;
	e->demo = providers[ROLE_EXECUTOR]->simulated;
	e->yes = s->yes;
	e->parallel = s->parallel > 0 ? s->parallel : 1;
	e->bus = bus;
	e->gatekeeper = gates;
	e->gate_mask = gatekeeper_mask(gates);
	e->gate_mode = gatekeeper_mode(gates);
	e->run_dir = xstrdup(run_dir);
	/* "runs/ID/" names the same run as "runs/ID": its id is the last component. */
	for (size_t n = strlen(e->run_dir); n > 1 && e->run_dir[n - 1] == '/'; n--)
		e->run_dir[n - 1] = '\0';
	slash = strrchr(e->run_dir, '/');
	e->run_id = xstrdup(slash ? slash + 1 : e->run_dir);
	e->workspace = s->workspace ? xstrdup(s->workspace) : xasprintf("%s/workspace", run_dir);
	e->resume = open != PEV_OPEN_NEW;
	e->open = open;
	e->ws_fd = -1;
	e->lock_fd = -1;
	e->next_gate_id = 1;
	e->inbox_tail = &e->inbox;
	e->queue_tail = &e->queue;
	e->budget = budget_new(s->budget_usd, 0);
	e->requests = requests_open(e->run_dir, s->keep_requests, 0);
	e->schemas = schemas_new();
	if (s->mcp.n) {
		char *logs = xasprintf("%s/mcp", e->run_dir);
		e->mcp = mcp_hub_new(&s->mcp, logs, e->workspace);
		/* Questions come to the elicit gate, which answers in every mode (--yes and
		 * headless decline): offered when the gate is on. */
		mcp_hub_offer_elicitation(e->mcp, (e->gate_mask & GATE_MASK(GATE_ELICIT)) != 0);
		free(logs);
	}
	atomic_init(&e->aborting, false);
	atomic_init(&e->checkpoint_err_told, false);
	if (pthread_mutex_init(&e->lock, NULL) || pthread_cond_init(&e->cond, NULL) ||
	    pthread_mutex_init(&e->acct, NULL) || pthread_mutex_init(&e->pool_lock, NULL) ||
	    pthread_cond_init(&e->pool_cond, NULL) || pthread_cond_init(&e->queue_cond, NULL) ||
	    pthread_mutex_init(&e->mcp_told_lock, NULL))
		fatal("cannot initialise engine locks");

	if (mkdir(run_dir, 0700) && errno != EEXIST) {
		*err = xasprintf("cannot create run directory %s: %s", run_dir, strerror(errno));
		goto fail;
	}
	/* Before anything reads or repairs the journal: one process per run folder. */
	e->lock_fd = runlock_take(run_dir, err);
	if (e->lock_fd < 0)
		goto fail;
	e->attempts = attempts_open(run_dir, err);
	if (!e->attempts)
		goto fail;
	e->ws_fd = sandbox_open_root(e->workspace, err);
	if (e->ws_fd < 0)
		goto fail;
	e->sandbox = sandbox_for_run(e, s);
	mcp_hub_set_sandbox(e->mcp, e->sandbox);
	if (e->mcp) {
		/* Each server's stderr goes to RUNDIR/mcp/NAME.log. */
		char *logs = xasprintf("%s/mcp", run_dir);
		if (mkdir(logs, 0700) && errno != EEXIST)
			bus_notice(bus, "warn", NULL, "cannot create %s for the MCP servers' logs: %s",
				   logs, strerror(errno));
		free(logs);
	}
	/* Without a store the run goes on unprotected; the first attempt says so. */
	if (s->checkpoints) {
		char *cerr = NULL;
		e->checkpoints = checkpoint_open(run_dir, e->workspace, &cerr);
		if (!e->checkpoints) {
			e->checkpoint_err = cerr;
		} else {
			checkpoint_set_limits(e->checkpoints, (uint64_t)s->checkpoint_max_file,
			                      (uint64_t)s->checkpoint_max_total);
			checkpoint_set_exclude(e->checkpoints, &s->checkpoint_exclude);
		}
	}
	/* The report takes what the journal takes: the journal's past (resume), then, from
	 * the same moment as the journal, every event published. */
	e->report = report_live_new();
	if (e->resume && !rebuild_from_journal(e, err))
		goto fail;
	e->journal = journal_open(run_dir, err);
	if (!e->journal)
		goto fail;
	journal_on_failure(e->journal, journal_failure_cb, e);
	bus_subscribe(bus, journal_on_event, e->journal);
	report_live_attach(e->report, bus);
	gatekeeper_attach(gates, answer_cb, e);
	return e;
fail:
	pev_free(e);
	return NULL;
}

void pev_set_linger(struct pev *e, bool linger)
{
	e->linger = linger;
}

void pev_linger_while(struct pev *e, bool (*watched)(void *ctx), void *ctx)
{
	struct msg *m = xcalloc(1, sizeof(*m));

	m->kind = MSG_LINGER;
	m->watched = watched;
	m->watched_ctx = ctx;
	engine_post(e, m);
}

void pev_watchers_changed(struct pev *e)
{
	struct msg *m = xcalloc(1, sizeof(*m));

	m->kind = MSG_WATCHERS;
	engine_post(e, m);
}

void pev_start(struct pev *e)
{
	struct msg *m = xcalloc(1, sizeof(*m));

	pool_start(e);
	mcpcalls_start(e); /* the servers start while the planner works */
	m->kind = MSG_START;
	engine_post(e, m);
	if (pthread_create(&e->thread, NULL, engine_main, e))
		fatal("cannot start the engine thread");
	e->started = true;
}

enum pev_exit pev_join(struct pev *e)
{
	if (e->started) {
		pthread_join(e->thread, NULL);
		e->started = false;
	}
	return e->exit_code;
}

const char *pev_run_id(const struct pev *e)
{
	return e->run_id;
}

const char *pev_end_reason(const struct pev *e)
{
	return e->end_reason;
}

const char *pev_report_path(const struct pev *e)
{
	return e->report_path;
}

const char *pev_report_error(const struct pev *e)
{
	return e->report_error;
}

void pev_free(struct pev *e)
{
	struct msg *m, *next;

	if (!e)
		return;
	if (e->remote_post) {
		free(e->run_id);
		free(e);
		return;
	}
	pev_join(e);
	if (e->gatekeeper)
		gatekeeper_attach(e->gatekeeper, NULL, NULL);
	for (m = e->inbox; m; m = next) {
		next = m->next;
		if (m->kind == MSG_JOB_DONE)
			job_free(m->job);
		engine_msg_free(m);
	}
	if (e->plan)
		for (size_t i = 0; i < e->plan->n_steps; i++)
			sched_release_state(&e->st[i]);
	free(e->st);
	free(e->dep_idx);
	free(e->dep_off);
	plan_ids_free(e->ids);
	plan_free(e->plan);
	plan_free(e->proposal);
	free(e->proposal_reason);
	sched_reuse_free(e);
	for (size_t g = 0; g < e->n_gates; g++)
		free(e->gates[g].step_id);
	free(e->gates);
	free(e->open_ids);
	for (int r = 0; r < ROLE__COUNT; r++)
		free(e->models[r]);
	strvec_clear(&e->shell_allow);
	strvec_clear(&e->shell_run_allow);
	strvec_clear(&e->mcp_run_allow);
	strvec_clear(&e->http_allow_hosts);
	report_live_free(e->report);
	journal_close(e->journal);
	runlock_release(e->lock_fd);
	attempts_close(e->attempts);
	if (e->ws_fd >= 0)
		close(e->ws_fd);
	budget_free(e->budget);
	mcp_hub_free(e->mcp);
	requests_close(e->requests);
	schemas_free(e->schemas);
	checkpoint_close(e->checkpoints);
	confine_session_free(e->sandbox);
	free(e->checkpoint_err);
	strset_clear(&e->checkpoint_told);
	crashcut_release(e);
	free(e->threads);
	free(e->task);
	free(e->scenario);
	free(e->run_dir);
	free(e->run_id);
	free(e->workspace);
	free(e->end_reason);
	free(e->report_path);
	free(e->report_error);
	free(e->replan_step);
	free(e->replan_why);
	free(e->resume_summary);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->acct);
	pthread_cond_destroy(&e->pool_cond);
	pthread_cond_destroy(&e->queue_cond);
	pthread_mutex_destroy(&e->pool_lock);
	pthread_mutex_destroy(&e->mcp_told_lock);
	free(e);
}

char *pev_new_run_dir(const char *runs_dir)
{
	char *id = make_run_id();
	char *dir = xasprintf("%s/%s", runs_dir, id);

	free(id);
	return dir;
}
