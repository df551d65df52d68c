/* pev — the Plan-Execute-Verify engine: runs a task in its own thread, publishing events. */
#ifndef PEVTUI_PEV_H
#define PEVTUI_PEV_H

#include <stdbool.h>

#include "gate.h"
#include "provider.h"

struct bus;
struct settings;

/* Exit status of a run (DESIGN.md). */
enum pev_exit { PEV_EXIT_OK = 0, PEV_EXIT_ERROR = 1, PEV_EXIT_PARTIAL = 2, PEV_EXIT_ABORTED = 3 };

struct pev;

/* How pev_new opens run_dir. */
enum pev_open {
	PEV_OPEN_NEW,      /* a new run */
	PEV_OPEN_RESUME,   /* the state rebuilt from run_dir/journal.jsonl, and the run goes on;
			    * a run that finished (passed, partial) is refused: nothing to do */
	PEV_OPEN_FINISHED, /* the same, but a finished run is opened at its end, to be
			    * reopened by an edit or a re-run (a cockpit's --resume): nothing
			    * is journaled until one comes, and quitting leaves it as it was */
};

/*
 * Prepares a run. `s` is copied; `providers[role]` are borrowed (the same provider may
 * serve several roles) and must outlive the run; `bus` and `gates` are borrowed.
 * `run_dir` is the run's directory (journal, plan.json, report.md, default workspace).
 * NULL + *err on a setup failure (workspace, journal) or a refused resume.
 */
struct pev *pev_new(const struct settings *s, struct provider *providers[ROLE__COUNT],
		    struct bus *bus, struct gatekeeper *gates, const char *run_dir,
		    enum pev_open open, char **err);
void pev_free(struct pev *e);
/*
 * When run_dir's journal ends with a run that finished (passed, partial): the one-line
 * sentence a front end without a cockpit refuses to resume it with, naming --replay and
 * the cockpit (caller frees). NULL otherwise: unfinished, aborted, error, or a journal
 * that cannot be read (pev_new says what is wrong with it).
 */
char *pev_finished_refusal(const char *run_dir);

/* Starts the engine thread (the event loop) and its workers. */
void pev_start(struct pev *e);
/* Waits for the engine thread; returns the exit status of the last run segment. */
enum pev_exit pev_join(struct pev *e);
/* Interactive runs stay open after run.end, so an edit or a re-run can reopen them, until
 * PEV_CMD_QUIT. Headless runs (the default) leave the loop at run.end. Before pev_start. */
void pev_set_linger(struct pev *e, bool linger);
/*
 * A detached run stays open after run.end only while someone watches it: while
 * `watched(ctx)` (any thread) says a cockpit is attached. It leaves the loop at a run.end
 * nobody watches, and when the last watcher goes after run.end (call pev_watchers_changed
 * then). Any thread, also while the engine runs (a cockpit that detaches); `ctx` is
 * borrowed and outlives the loop.
 */
void pev_linger_while(struct pev *e, bool (*watched)(void *ctx), void *ctx);
/* The watchers of pev_linger_while may be gone (any thread). */
void pev_watchers_changed(struct pev *e);

/* Operator commands (any thread). Each is a message to the engine's inbox, taken in
 * order, journaled as an operator.command event, then applied; none of them waits. */
enum pev_cmd {
	PEV_CMD_PAUSE,   /* no new step starts; running calls finish */
	PEV_CMD_RESUME,
	PEV_CMD_ABORT,   /* cancels in-flight calls, withdraws open gates, run.end, exit 3 */
	PEV_CMD_RERUN,   /* step_id: run it again, with every transitive dependent (stale) */
	PEV_CMD_RERUN_FORCE, /* the same, skipping the reuse of an identical passed result */
	PEV_CMD_SKIP,    /* step_id: mark skipped (its dependents run without its output) */
	PEV_CMD_EDIT,    /* step_id + json: replace the step's definition (in the proposal at
			  * a plan or replan gate); its dependents go stale; never answers a gate */
	PEV_CMD_EDIT_PLAN, /* json: replace the proposal waiting at the plan or replan gate */
	PEV_CMD_QUIT,    /* stop now without run.end, leaving the run resumable (exit 3) */
	PEV_CMD_CANCEL_RUNNING, /* pause, and cancel the calls in flight (the planner's too):
				 * those steps start over (a new attempt) when the run resumes */
	PEV_CMD_BUDGET,  /* json: {"budget_usd": N}: the new cap; blocked calls go on */
	PEV_CMD_REWIND,  /* json: {"checkpoint": ID, "what": "to before step S"}: the workspace
			  * goes back to that checkpoint (a checkpoint of it is taken first);
			  * only while the run is paused or ended and no step job is in flight */
};
/* true when the command is on its way: in the engine's inbox (or, for pev_new_remote,
 * written to the engine's socket); false when it cannot be delivered because the engine
 * has left its loop or decided to (the run ended and nobody reopened it, a quit) or the
 * connection is gone. PEV_CMD_QUIT after run.end only ends the loop: it is not journaled. */
bool pev_post(struct pev *e, enum pev_cmd cmd, const char *step_id, const char *json);

/*
 * Answers the open gate `gate_id` (any thread). `json` (copied, may be NULL) goes with
 * GATE_EDIT at a shell gate ({"command": "…"} or a JSON string: the command that
 * replaces the model's; the gate asks again showing it), with GATE_APPROVE at a shell gate ({"remember": true}: allow this exact
 * command for the rest of the run) and with GATE_APPROVE at a budget gate
 * ({"budget_usd": N}, the new cap; without it the cap grows by half). false when no
 * such gate is open (answered elsewhere, withdrawn, or never opened); the first answer
 * wins.
 */
bool pev_answer(struct pev *e, unsigned long gate_id, enum gate_decision d, const char *json);

/*
 * A stand-in for an engine running in another process (pevtui --attach): pev_post hands
 * each command to `post(ctx, …)`; pev_run_id answers `run_id`; pev_free frees it. Nothing
 * else may be called on it. `ctx` is borrowed.
 */
struct pev *pev_new_remote(const char *run_id,
			   bool (*post)(void *ctx, enum pev_cmd cmd, const char *step_id,
					const char *json),
			   void *ctx);

/* The run id (the run directory's last component). */
const char *pev_run_id(const struct pev *e);
/* Why the run ended when it did not pass (a sentence), or NULL. Valid after pev_join. */
const char *pev_end_reason(const struct pev *e);
/* RUNDIR/report.md once the run ended and it was written; NULL otherwise. */
const char *pev_report_path(const struct pev *e);
/* Why the report of the run's last end could not be written (NULL if it was, or the run has
 * not ended): the front end says it, since nothing is journaled after run.end. */
const char *pev_report_error(const struct pev *e);
/* A fresh run directory path RUNS_DIR/<run-id> (not created). Caller frees. */
char *pev_new_run_dir(const char *runs_dir);

#endif
