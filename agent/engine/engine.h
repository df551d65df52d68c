/*
 * engine — what the engine's files share (private to agent/engine/). The engine is one
 * event loop (loop.c): worker results, operator commands, gate answers and budget notices
 * are messages in one inbox, taken one at a time by engine_step; nothing in it blocks.
 * Model calls run as jobs on a pool of worker threads that live as long as the run
 * (worker.c); a gate is a pending request with a continuation (gates.c).
 */
#ifndef PEVTUI_ENGINE_H
#define PEVTUI_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "fold.h"
#include "gate.h"
#include "mcp_client.h"
#include "pev.h"
#include "plan.h"
#include "prompts.h"
#include "provider.h"
#include "strbuf.h"
#include "strindex.h"
#include "strset.h"

struct confine_session;

struct attempts;
struct attempts_dir;
struct budget;
struct checkpoints;
struct cp_changes;
struct requests;
struct schemas;
struct series_rebuild;
struct cJSON;
struct journal;
struct report_live;
struct shell_ask;
struct verdict;

#define MAX_TOOL_ROUNDS 8
#define MAX_TOKENS_PLAN 8192
#define MAX_TOKENS_STEP 4096
#define SUMMARY_LEN 200

/* ------------------------------------------------------------------ state */

/* The engine's view of one step. Statuses are the fold's (FS_VERIFYING is the worker's
 * business: for the scheduler a verifying step is running). */
struct step_state {
	enum fstep_state status;
	int attempts;             /* across the whole run, for this step id */
	int round_attempts;       /* since the step was (re)planned, edited or made stale */
	struct strvec critiques;  /* feedback of failed attempts, oldest first */
	char *result_json;        /* last executor result (normalized), or NULL */
	char *output_json;        /* its step_output, handed to dependents */
	unsigned gen;             /* bumped by edits, re-runs, staleness: older results lapse */
	bool approved;            /* its step/high gate approved for this generation */
	bool force;               /* the next run skips the reuse of identical results */
	bool twin_wait;           /* an identical step is running: wait and reuse its result */
	bool skip_requested;      /* skip asked while it ran */
	bool job_live;            /* a job of this step has not come back yet: one at a time */
	unsigned long gate_id;    /* its open step/high gate, 0 when none */
};

/* A passed result that an identical step (same definition and inputs) may reuse. */
struct reuse_entry {
	char *key;
	char *result_json;
	char *output_json;
};

struct role_usage {
	int calls;
	long input, output, cached, cache_write;
	double cost;
	bool cost_unknown;
};

/* Where the run is. Steps run only in PH_EXECUTING. */
enum phase {
	PH_START,        /* before the first message */
	PH_PLANNING,     /* the planner drafts the first plan */
	PH_PLAN_GATE,    /* the first plan waits for approval */
	PH_EXECUTING,
	PH_REPLANNING,   /* the planner revises the plan (nothing else runs) */
	PH_REPLAN_GATE,
	PH_FINISHING,    /* whole-plan check and synthesis */
	PH_ENDING,       /* waiting for jobs to come back before run.end */
	PH_ENDED,        /* run.end written; an edit or a re-run reopens (linger) */
};

/* ------------------------------------------------------------------- jobs */

/* JOB_SETTLE: crashcut_settle on a pool thread (a resume's walk of the workspace). */
enum job_kind { JOB_STEP, JOB_PLAN, JOB_FINISH, JOB_SETTLE };

/* How one attempt ended; the engine routes it (retry, replan, pass). */
enum attempt_outcome { OUT_PASSED, OUT_RETRY, OUT_REPLAN, OUT_CANCELLED, OUT_ERROR };

/*
 * One unit of work for a pool thread. A step job owns a snapshot of everything it reads
 * (definition, dependency outputs, critiques), so the engine may change the plan meanwhile;
 * its results come back in a MSG_JOB_DONE message.
 */
struct job {
	enum job_kind kind;
	struct pev *e;
	atomic_bool cancel;   /* edit, staleness, pause-cancel, abort: stop the call in flight */
	struct job *next;     /* in the pool's queue, then in e->jobs (in flight) */
	struct job *next_live;

	/* JOB_STEP */
	char *goal;
	struct plan_step step;
	struct prompt_dep *deps; /* strings owned by the job */
	size_t n_deps;
	struct strvec critiques; /* snapshot of earlier attempts' critiques */
	int attempt;             /* the attempt this job makes (1-based, over the run) */
	struct attempts_dir *adir; /* its folder in the run folder, made on its first copy */
	unsigned gen;            /* the step's generation when dispatched */
	int revision;            /* the plan's revision when dispatched */
	char *reuse_key;         /* the identity of its work (engine_reuse_key) */
	unsigned long chaos_state;
	enum attempt_outcome outcome;
	char *result_json;
	char *output_json;
	char *failure;           /* RETRY/REPLAN: the critique; ERROR: the provider's sentence */
	/* the shell gate round trip (under e->pool_lock) */
	bool shell_waiting, shell_answered;
	enum gate_decision shell_decision;
	char *shell_command;     /* in: asked; out: the command to run (maybe edited) */
	char *shell_edited_from; /* the command the model asked for, once the operator edited
				  * it at the gate (the gate comes back showing the edit) */
	struct shell_ask_copy {  /* in: what the gate shows besides the command */
		char *cwd, *allow_prefix, *allow_why;
		char *sandbox, *reason; /* the sandbox's line; why outside (or NULL) */
		bool outside;           /* asks to run outside the sandbox */
		int timeout_s;
	} shell_ask;
	const char *shell_how;   /* out: how the gate let it through (tool.result approval) */
	/* the mcp and rewind gates ride the same round trip: ask_kind GATE_MCP or
	 * GATE_REWIND, what the gate shows (gate.open fields as JSON text, under
	 * e->pool_lock) in mcp_ask or rewind_ask; rewind_ask is set only while its job waits */
	enum gate_kind ask_kind;
	char *mcp_ask;
	char *rewind_ask;
	/* the elicit gate too: what it shows in elicit_ask, the operator's content (JSON text,
	 * on accept) in elicit_answer */
	char *elicit_ask;
	char *elicit_answer;

	/* JOB_PLAN */
	enum llm_purpose purpose;
	char *prompt;            /* taken by the job */
	struct plan *plan;       /* out: a valid plan, or NULL */
	char *why;               /* out: still invalid after the re-ask */
	char *err;               /* out: the call failed */

	/* JOB_FINISH */
	struct strvec results, gaps;
	bool check_done, check_passed;
	char *check_feedback;
	char *answer;            /* out: NULL when cancelled or failed (then err) */
};

/* ---------------------------------------------------------------- messages */

enum msg_kind {
	MSG_START,          /* begin (or resume) the run */
	MSG_CMD,            /* an operator command (pev_post) */
	MSG_ANSWER,         /* a gate answer (pev_answer) */
	MSG_JOB_DONE,       /* a job came back */
	MSG_SHELL_ASK,      /* a step job asks the shell, mcp or rewind gate (job->ask_kind) */
	MSG_BUDGET_BLOCKED, /* a call's reservation did not fit under the cap */
	MSG_JOURNAL_FAILED, /* the journal cannot be written (json: why) */
	MSG_LINGER,         /* pev_linger_while (watched, watched_ctx) */
	MSG_WATCHERS,       /* pev_watchers_changed */
};

struct msg {
	enum msg_kind kind;
	enum pev_cmd cmd;
	char *step_id;
	char *json;
	unsigned long gate_id;
	enum gate_decision decision;
	struct job *job;
	double amount;
	bool (*watched)(void *ctx); /* MSG_LINGER */
	void *watched_ctx;
	struct msg *next;
};

/* An open gate: what it is about and how the answer continues the run. */
struct egate {
	unsigned long id;
	enum gate_kind kind;
	char *step_id;        /* its step (step/high/shell/replan), or NULL */
	unsigned gen;         /* step gates: the step's generation when asked */
	struct job *job;      /* shell gates: the job waiting for the answer */
};

struct pev {
	/* configuration, fixed after pev_new */
	char *task;
	char *scenario;
	char *models[ROLE__COUNT];
	struct provider *prov[ROLE__COUNT];
	int max_retries, max_replans;
	double threshold, chaos;
	struct strvec shell_allow;
	struct strvec shell_run_allow; /* exact commands the operator allowed for the run */
	struct strvec mcp_run_allow;   /* MCP tools (SERVER__tool) allowed for the run
					* (pool_lock: steps read it) */
	struct strvec http_allow_hosts;
	struct confine_session *sandbox; /* the commands' sandbox (agent/confine/) */
	int shell_timeout_s;
	size_t http_max_bytes;
	bool demo, yes, linger;
	bool (*watched)(void *ctx); /* pev_linger_while: linger only while this says so */
	void *watched_ctx;
	int parallel;
	unsigned gate_mask;
	enum gate_mode gate_mode;
	struct bus *bus;
	struct gatekeeper *gatekeeper;
	char *run_dir, *run_id, *workspace;
	int ws_fd;
	struct journal *journal;
	bool resume;
	enum pev_open open;
	unsigned long chaos_seed;

	/* engine state (engine thread only) */
	enum phase phase;
	struct plan *plan;
	struct step_state *st;
	int *dep_idx;       /* dependency indexes of every step, flattened */
	size_t *dep_off;    /* step i's are dep_idx[dep_off[i] .. dep_off[i + 1]) */
	struct plan_ids *ids; /* the plan's step ids (sched_find) */
	int revision;
	int replans;
	struct reuse_entry *reuse;
	size_t n_reuse, cap_reuse;
	struct strindex reuse_of; /* key -> its entry in reuse */
	struct plan *proposal;   /* at the plan or replan gate */
	int proposal_rev;
	char *proposal_reason;   /* initial, replan, edit */
	char *replan_step;       /* a failure that asks for a replan once steps finish */
	char *replan_why;
	struct egate *gates;
	size_t n_gates, cap_gates;
	unsigned long next_gate_id;
	bool budget_gate_open;
	bool paused;
	struct job *plan_job, *finish_job; /* the current ones; others that return are stale */
	int n_step_jobs;         /* step jobs in flight */
	int n_jobs;              /* all jobs in flight */
	enum pev_exit exit_code;
	char *end_reason;
	int lock_fd;             /* RUNDIR/lock, held for the engine's life (runlock.h) */
	char *report_path;       /* RUNDIR/report.md once written, else NULL */
	char *report_error;      /* why the last report could not be written, else NULL */
	struct report_live *report; /* report.md's events so far (report_live.h) */
	bool quit;               /* no run.end: leave the run resumable */
	bool stop_loop;          /* leave the event loop */
	bool final_done;         /* resume: run.final is in the journal already */
	bool reopen_on_start;    /* resume of a run whose last segment ended */
	bool open_at_end;        /* PEV_OPEN_FINISHED of a finished run: start at run.end */
	unsigned long cmd_seq;   /* seq of the operator.command being applied, 0 none */
	char *resume_summary;    /* what was kept and what starts over */

	/* accounting (acct lock), shared by every worker */
	pthread_mutex_t acct;
	struct role_usage usage[ROLE__COUNT];
	struct budget *budget;
	struct requests *requests; /* the request bodies kept in the run folder (any thread) */
	struct attempts *attempts; /* the run folder, held for the attempts' copies (any thread) */
	struct schemas *schemas;   /* the tools' schemas as printed, for every call (any thread) */
	struct mcp_hub *mcp;     /* the operator's MCP servers, NULL when none (mcp_calls.c) */
	pthread_mutex_t mcp_told_lock; /* the two below; held while a server's notice is published */
	bool mcp_ended;          /* run.end is out: servers' news is held (mcp_calls.c) */
	struct cJSON *mcp_held;  /* start outcomes held until a run.reopen */
	struct checkpoints *checkpoints; /* workspace snapshots (any thread: its own mutex);
					  * NULL with [policy] checkpoints = off or when the
					  * store could not be opened (checkpoint_err says why) */
	char *checkpoint_err;
	atomic_bool checkpoint_err_told;
	struct strset checkpoint_told; /* checkpoint warnings already published (acct lock) */
	struct cut_attempt *cut; /* resume: attempts the stop cut off (crash_cut.c); the
				  * list is the engine thread's, `told` is under acct */
	size_t n_cut;

	/* the inbox (lock) */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct msg *inbox, **inbox_tail;
	bool closed;              /* the loop has ended or will: pev_post refuses (under lock) */
	unsigned long *open_ids;  /* gate ids that pev_answer may answer (under lock) */
	size_t n_open_ids, cap_open_ids;
	atomic_bool aborting;     /* abort or quit posted: workers stop asking */

	/* the pool (pool_lock) */
	pthread_mutex_t pool_lock;
	pthread_cond_t pool_cond; /* shutdown, shell and rewind answers, cancellations */
	/* A new job or shutdown: only idle workers wait on it, so a job wakes one of them
	 * and not every thread of the pool. */
	pthread_cond_t queue_cond;
	pthread_t *threads;
	int n_threads;
	struct job *queue, **queue_tail;
	struct job *live;         /* every job not yet applied (for cancellation) */
	bool pool_stop;

	/* A stand-in for an engine in another process (remote_port.c): pev_post goes there,
	 * and nothing else of the struct is used. NULL for the engine itself. */
	bool (*remote_post)(void *ctx, enum pev_cmd cmd, const char *step_id, const char *json);
	void *remote_ctx;
};

/* loop.c */
void engine_post(struct pev *e, struct msg *m);   /* any thread; m taken */
/* Applies one message (engine thread; the unit tests call it directly). */
void engine_step(struct pev *e, struct msg *m);
void engine_msg_free(struct msg *m);
/* Ends the run segment: cancels jobs, withdraws gates, then (once jobs are back) run.end. */
void engine_end(struct pev *e, enum pev_exit code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A notice the screen acts on (`kind`: pause, resume_run, abort, step_cancelled, …). */
void engine_control(struct pev *e, const char *kind, const char *step_id, bool cancel,
		    const char *message);
void engine_write_plan(struct pev *e);
long engine_now_ms(void);

/* scheduler.c */
/* Indexes e->plan (dependencies, ids): called whenever e->plan is replaced. */
void sched_index_plan(struct pev *e);
/* Index of the step of e->plan with this id, or -1 (plan_find through the index). */
int sched_find(struct pev *e, const char *id);
void sched_release_state(struct step_state *s);
/* Publishes step.state for step i with a reason (and the command behind it). */
void sched_set_state(struct pev *e, size_t i, enum fstep_state s, const char *cause,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void sched_publish_end(struct pev *e, size_t i, bool reused);
/* Dispatches ready steps, replans, finishes: whatever the state allows now. */
void sched_run(struct pev *e);
/* A step job came back. */
void sched_job_done(struct pev *e, struct job *j);
/* Edit or re-run of step i: it and its transitive dependents go stale (see DESIGN.md). */
void sched_invalidate(struct pev *e, size_t i, bool edited, const char *why);
/* The step/high gate of step i was answered (continuation). */
void sched_gate_answered(struct pev *e, size_t i, enum gate_decision d);
void sched_fail_accept(struct pev *e, size_t i, const char *why);
char *sched_reuse_key(struct pev *e, const struct plan *p, size_t i);
/* sched_reuse_key of step i for its job `j` that came back: the job's own key while it
 * provably still names the same work, computed again otherwise. Caller frees. */
char *sched_job_reuse_key(struct pev *e, const struct job *j, size_t i);
void sched_reuse_add(struct pev *e, char *key, const char *result, const char *output);
/* The entry an identical step may reuse, or NULL. */
const struct reuse_entry *sched_reuse_find(struct pev *e, const char *key);
/* Frees the reuse table (pev_free). */
void sched_reuse_free(struct pev *e);
void sched_apply_edit(struct pev *e, const char *step_id, const char *json);

/* gates.c */
/* Opens a gate (publishes gate.open with `payload`'s members, taken). With nobody to ask
 * the policy answers at once (the continuation runs before this returns). Returns the
 * gate id, or 0 when the kind is not enabled (then nothing was published: go on). */
unsigned long gates_open(struct pev *e, enum gate_kind k, const char *step_id, unsigned gen,
			 struct job *job, struct cJSON *payload);
bool gates_enabled(const struct pev *e, enum gate_kind k);
/* An answer for gate `id` (operator or policy): publishes gate.decision and continues. */
void gates_decide(struct pev *e, unsigned long id, enum gate_decision d, const char *by,
		  const char *reason, const char *json);
/* The same, naming how a shell gate let its command through (tool.result's `approval`;
 * NULL: from d and by, as gates_decide does). */
void gates_decide_how(struct pev *e, unsigned long id, enum gate_decision d, const char *by,
		      const char *reason, const char *json, const char *how);
/* Withdraws an open gate (its question no longer stands). */
void gates_withdraw(struct pev *e, unsigned long id, const char *reason);
void gates_withdraw_all(struct pev *e, const char *reason);
struct egate *gates_find(struct pev *e, unsigned long id);

/* shell_gate.c */
/* The gate.open fields of a shell gate for job j's command (taken by the caller), or
 * NULL when the operator allowed that exact command for the rest of the run. */
struct cJSON *shellgate_payload(struct pev *e, struct job *j);
/* An answer's JSON asks to allow the command for the rest of the run ({"remember":true}). */
bool shellgate_wants_remember(const char *json);
/* Whether the command job j waits to run asks to run outside the sandbox. */
bool shellgate_outside(struct pev *e, struct job *j);
/* The command job j waits at its shell gate with (caller frees). */
char *shellgate_command(struct pev *e, struct job *j);
/* tool.result's `approval` for a shell gate answered d by `by` (static string). */
const char *shellgate_how(enum gate_decision d, const char *by);
/* Allows cmd for the rest of the run (no gate, no event; --resume uses it). */
void shellgate_allow_for_run(struct pev *e, const char *cmd);
/* The operator allowed cmd for the rest of the run: from now on it skips the gate, and
 * open shell gates for the same command are approved. */
void shellgate_remember(struct pev *e, const char *cmd);

/* rewind_gate.c */
/* Engine thread: job j asks the rewind gate (MSG_SHELL_ASK with ask_kind GATE_REWIND;
 * its gate.open fields in j->rewind_ask). It is answered with job_shell_reply, as the
 * shell and mcp gates are (a withdrawal is GATE_SKIP: keep theirs). */
void rewindgate_open(struct pev *e, struct job *j);
/* Worker thread: job j asks the rewind gate and waits for its own answer (only it
 * waits; job_ask_and_wait): GATE_APPROVE restore, GATE_SKIP keep theirs, GATE_REJECT
 * (the run ends). The fields are taken. Without the gate (not in --gate) the answer is
 * GATE_SKIP, as it is for a cancelled job; --yes answers GATE_SKIP too (a policy never
 * overwrites someone else's change). */
enum gate_decision rewindgate_ask(struct job *j, char *fields_json);

/* rewind_cmd.c */
/* PEV_CMD_REWIND: the workspace back to a checkpoint, if nothing runs (else a notice). */
void rewindcmd_apply(struct pev *e, const char *json);
/* mcp_calls.c: the operator's MCP servers in a run */
struct mcp_offer;
/* Starts the servers (each on its own thread, while the planner works); their start,
 * failure and stop are notices of kind mcp_server. */
void mcpcalls_start(struct pev *e);
/* Engine thread: ends the servers (again: nothing); after run.end without notices. */
void mcpcalls_stop(struct pev *e);
/* Engine thread, just before run.end is published: from here no server's start or stop
 * is journaled; a start outcome is held for mcpcalls_run_reopened. */
void mcpcalls_run_ended(struct pev *e);
/* Engine thread, just after run.reopen is published: the held start outcomes are told,
 * and what comes later is told as it comes. */
void mcpcalls_run_reopened(struct pev *e);
/* The planner's list of MCP tools (caller frees), NULL when there are none. */
char *mcpcalls_describe(struct pev *e);
/* True when `name` is a tool of one of the run's MCP servers. */
bool mcpcalls_owns(struct pev *e, const char *name);
/* tool.call fields of an MCP tool: server, mcp_tool. */
void mcpcalls_annotate(struct pev *e, const char *name, struct cJSON *f);
/* Pool thread: the mcp gate (unless allowed), then the call. The result text in *out;
 * tool.result fields (server, mcp_tool, approval, ran, is_error) added to f. */
bool mcpcalls_run(struct job *j, const char *name, const struct cJSON *input,
		  struct strbuf *out, struct cJSON *f);
/* Engine thread: a step job asks the elicit gate (MSG_SHELL_ASK with ask_kind
 * GATE_ELICIT; its gate.open fields in j->elicit_ask). */
void elicitgate_open(struct pev *e, struct job *j);
/* A step job's thread, inside an MCP call: the server's question, asked at the elicit gate
 * (struct mcp_asker's fn; ctx is the job). Only this job waits. */
enum mcp_elicit_action elicitgate_ask(void *ctx, const char *server, const char *message,
                                      const char *schema_json, char **content_json);

/* Engine thread: a step job asks the mcp gate (MSG_SHELL_ASK with ask_kind GATE_MCP). */
void mcpcalls_ask(struct pev *e, struct job *j);
/* The tool (SERVER__tool) job j waits at its mcp gate with (caller frees). */
char *mcpcalls_gate_tool(struct pev *e, struct job *j);
/* The operator allowed `tool` for the rest of the run (A at its gate): later calls skip
 * the gate, and open mcp gates for it are approved. Not taken back on --resume. */
void mcpcalls_remember(struct pev *e, const char *tool);

/* planning.c */
void planning_start(struct pev *e);        /* the first plan (or its gate on resume) */
void planning_job_done(struct pev *e, struct job *j);
void planning_replan(struct pev *e);        /* e->replan_step failed: revise the plan */
void planning_gate_answered(struct pev *e, enum gate_kind k, enum gate_decision d);
void planning_edit_plan(struct pev *e, const char *json);
/* A validated copy of `p` with step `step_id` replaced by the edited JSON (its id kept),
 * or NULL after a notice naming what is wrong. */
struct plan *planning_with_edit(struct pev *e, const struct plan *p, const char *step_id,
				const char *json);
/* An edit of one step of the proposal at a plan or replan gate; false if no proposal. */
bool planning_edit_proposal_step(struct pev *e, const char *step_id, const char *json);
void planning_adopt(struct pev *e, struct plan *np, int revision);
void planning_resubmit(struct pev *e);      /* after a pause cancelled the planner */
void planning_job_run(struct job *j);        /* pool thread: ask, validate, re-ask once */

/* calls.c */
typedef void *(*engine_read_fn)(void *ctx, const char *text, bool last, char **why);
int engine_call_model(struct pev *e, struct llm_request *req, struct llm_response *out,
		      const atomic_bool *cancel, char **err);
void *engine_ask_and_read(struct pev *e, struct llm_request *req, char *prompt,
			  const atomic_bool *cancel, engine_read_fn read, void *ctx,
			  char *(*fix)(void *ctx, const char *why), char **why, char **err);
void engine_publish_verdict(struct pev *e, const char *id, int attempt, const char *stage,
			    const struct verdict *v, size_t not_judged_from);

/* worker.c */
/* Any thread: true the first time a checkpoint warning (a file left out for its size, …)
 * is seen in the run, so it is published once, not at every checkpoint. */
bool engine_checkpoint_warning_new(struct pev *e, const char *warning);
/* step.changes' fields for what attempt `attempt` of step_id changed between checkpoints
 * `before` and `after` (`series`: restored before it, may be NULL); a file is `shared`
 * when checkpoint_path_shared says so. Caller owns the object. */
struct cJSON *worker_changes_fields(struct pev *e, const char *step_id, int attempt,
				    const char *before, const char *after,
				    const struct strvec *series, const struct cp_changes *ch);
void pool_start(struct pev *e);
void pool_stop(struct pev *e);
void pool_submit(struct pev *e, struct job *j);
struct job *job_new(struct pev *e, enum job_kind k);
void job_free(struct job *j);
void job_cancel(struct pev *e, struct job *j);
void pool_cancel_all(struct pev *e, bool steps_only);
void pool_cancel_step(struct pev *e, const char *step_id);
/* The engine's answer to a job waiting at its shell gate; `how` (static) is how the
 * gate let the command through or not, for tool.result's `approval`. */
void job_shell_reply(struct pev *e, struct job *j, enum gate_decision d, const char *json,
		     const char *how);
/* A job for the next attempt of step i (the engine has counted the attempt). */
struct job *job_new_step(struct pev *e, size_t i);
/* One attempt: execute with tools, verify (deterministic, then the model). */
void job_run_step(struct job *j);
/* A step job asks the shell gate and waits for its own answer (only it waits). */
bool job_confirm_shell(struct job *j, char **command, const struct shell_ask *ask);
/* Pool thread: job j asks its gate (MSG_SHELL_ASK; the caller set what the gate shows,
 * under e->pool_lock) and waits for the answer, or for its cancellation (then
 * GATE_REJECT). Returns the decision WITH e->pool_lock HELD, so that the caller reads
 * what came with the answer before unlocking. Shared by the shell and mcp gates. */
enum gate_decision job_ask_and_wait(struct job *j);

/* verify.c */
struct exec_result;

/* What the tools did in one attempt: stage 1 checks that every error was addressed. */
struct tool_record {
	char *tool;
	bool ok;
	char *summary;
	char *wrote; /* the path a successful write_file wrote (same bytes or not), or NULL */
};

struct attempt_log {
	struct tool_record *v;
	size_t n, cap;
	struct strbuf text; /* for the verifier: what the tools did */
	const struct cp_changes *changes; /* what the attempt changed, NULL without checkpoints */
	/* Paths the restore before the attempt left as they were (may be NULL). */
	const struct strvec *kept;
};

void attempt_log_release(struct attempt_log *l);
/* Stage 1 (deterministic, free) and stage 2 (the verifier model) for one attempt.
 * verify_model returns NULL when the call failed (*err) or was cancelled; criteria the
 * model left out, even after one re-ask, are appended from *not_judged_from on, failed. */
struct verdict *verify_deterministic(struct pev *e, const struct exec_result *r,
				     const char *parse_err, const struct attempt_log *log);
/* `diff` (may be NULL): the attempt's changes to the workspace, already bounded;
 * `step_json` and `step_text`: the step as plan_step_to_string prints it, compact and
 * pretty (made once for the attempt). */
struct verdict *verify_model(struct job *j, int attempt, const char *step_json,
			     const char *step_text, const char *result_json,
			     const char *tools_text, const char *diff, size_t *not_judged_from,
			     char **err);

/* finish.c */
void finish_start(struct pev *e);
void finish_job_run(struct job *j);
void finish_job_done(struct pev *e, struct job *j);

/* rebuild.c */
bool rebuild_from_journal(struct pev *e, char **err);

/* crash_cut.c — attempts a stop (kill -9, power loss) cut off between their two
 * checkpoints: --resume puts what they changed in their steps' series. */
struct cut_attempt {
	char *step_id;
	int attempt;
	char *before;    /* the checkpoint journaled before it (step.checkpoint) */
	bool overlapped; /* another step's attempt ran beside it */
	bool settled;    /* its step.changes was journaled on this resume */
	bool told;       /* the restore before its step's next attempt said so */
};
/* rebuild: the cut attempts the journal leaves unsettled, copied from `sr`. */
void crashcut_collect(struct pev *e, struct series_rebuild *sr);
/* A pool thread (a JOB_SETTLE job), on resume before any step runs: a checkpoint of the
 * workspace as the stop left it; each cut attempt's changes from its `before` to it noted
 * in its step's series and journaled as a step.changes marked `cut`. A checkpoint the
 * store lacks is a warning and the run goes on (those files stay as the stop left them).
 * The walk and the diffs take time on a large workspace: nothing in the engine's loop
 * waits for them; planning starts when the job comes back (crashcut_start). */
void crashcut_settle(struct pev *e);
/* Engine thread: submits the settle job and returns true, or false when no attempt was
 * cut off (nothing to settle). */
bool crashcut_start(struct pev *e);
/* Any thread: the attempt number of step_id's settled cut attempt, once (0: none, or
 * already told), for the notice of the restore before its next attempt. */
int crashcut_take_told(struct pev *e, const char *step_id);
void crashcut_release(struct pev *e);

#endif
