/* pev_impl — what the engine's files share: its state, its workers, and the helpers the
 * scheduler (pev.c), the workers (pev_worker.c) and resume (pev_resume.c) call across
 * files. Private to the engine: nothing outside agent/pev*.c includes it. */
#ifndef PEVTUI_PEV_IMPL_H
#define PEVTUI_PEV_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "pev.h"
#include "plan.h"
#include "prompts.h"
#include "provider.h"
#include "strbuf.h"

struct cJSON;
struct journal;
struct verdict;

#define MAX_TOOL_ROUNDS 8
#define MAX_TOKENS_PLAN 8192
#define MAX_TOKENS_STEP 4096
#define SUMMARY_LEN 200

enum step_status { SS_PENDING, SS_RUNNING, SS_PASSED, SS_FAIL_ACCEPTED, SS_SKIPPED };

struct step_state {
	enum step_status status;
	int attempts;             /* across the whole run, for this step id */
	int round_attempts;       /* attempts since the step was last (re)planned */
	struct strvec critiques;  /* feedback of failed attempts, oldest first */
	char *result_json;        /* last executor result (normalized), or NULL */
	char *output_json;        /* its step_output, handed to dependents */
	bool skip_requested;      /* skip asked while it ran: skip when its worker returns */
	unsigned gen;             /* bumped by edits and re-runs: older workers' results lapse */
	bool twin_wait;           /* an identical step is running: wait and reuse its result */
};

/* A passed result that an identical step (same definition and inputs) may reuse. */
struct reuse_entry {
	char *key;
	char *result_json;
	char *output_json;
};

struct cmd {
	enum pev_cmd cmd;
	char *step_id;
	char *json;
	struct cmd *next;
};

struct role_usage {
	int calls;
	long input, output, cached, cache_write;
	double cost;
	bool cost_unknown;
};

/* Why a worker's attempt loop ended. */
enum attempt_outcome { OUT_PASSED, OUT_REPLAN, OUT_CANCELLED, OUT_ERROR };

/*
 * One step running in its own thread. The worker owns a snapshot of everything it reads
 * (definition, dependency outputs, critiques), so the engine thread may change the plan
 * meanwhile; results go back through the `done` list.
 */
struct worker {
	struct pev *e;
	pthread_t thread;
	char *goal;
	struct plan_step step;
	struct prompt_dep *deps; /* strings owned by the worker */
	size_t n_deps;
	struct strvec critiques; /* snapshot; the worker appends new ones */
	int attempts;            /* attempts of the step so far (the worker increments) */
	int round_attempts;
	unsigned gen;            /* the step's generation when dispatched */
	char *reuse_key;         /* the identity of its work (pev_reuse_key) */
	unsigned long chaos_state; /* --chaos draws: seeded per step and attempt */
	atomic_bool cancel;      /* edit, skip, abort: stop the call in flight */
	/* results, read by the engine thread after the worker is done */
	enum attempt_outcome outcome;
	char *result_json;
	char *output_json;
	char *failure;           /* REPLAN: why; ERROR: the provider's sentence */
	struct worker *next;     /* in e->running, then in e->done */
};

struct pev {
	/* configuration, fixed after pev_new */
	char *task;
	char *scenario; /* simulated provider's scenario, journaled so --resume can replay it */
	char *models[ROLE__COUNT];
	struct provider *prov[ROLE__COUNT];
	int max_retries, max_replans;
	double budget, threshold, chaos;
	struct strvec shell_allow; /* command prefixes that skip the shell gate */
	int shell_timeout_s;
	size_t http_max_bytes;
	bool demo;
	bool yes;
	int parallel;
	struct bus *bus;
	struct gatekeeper *gates;
	char *run_dir, *run_id, *workspace;
	int ws_fd;
	struct journal *journal;
	bool resume;

	/* engine state (engine thread only) */
	struct plan *plan;
	struct step_state *st;
	int *dep_idx;       /* dependency indexes of every step, flattened (see index_plan) */
	size_t *dep_off;    /* step i's are dep_idx[dep_off[i] .. dep_off[i + 1]) */
	int revision;
	int replans;
	struct reuse_entry *reuse;
	size_t n_reuse, cap_reuse;
	bool budget_asked;
	enum pev_exit exit_code;
	char *end_reason;
	bool stop;          /* leave the main loop (abort, quit, error) */
	bool quit;          /* no run.end: leave the run resumable */
	bool final_done;    /* resume: run.final is in the journal already */
	char *pending_plan; /* resume: a proposal that was waiting at its gate */
	char *pending_failed, *pending_failure; /* …and, for a replan, what failed and why */
	char *replan_step;  /* a step whose failure asks for a replan once workers finish */
	char *replan_why;

	/* accounting, shared by every worker (acct lock) */
	pthread_mutex_t acct;
	struct role_usage usage[ROLE__COUNT];
	double spent;
	unsigned long chaos_seed;

	/* shared with other threads (lock) */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cmd *cmds, **cmds_tail;
	bool paused;
	bool budget_crossed;      /* set by a call that crossed --budget */
	struct worker *running;   /* steps in flight */
	struct worker *done;      /* finished workers, for the engine thread to apply */
	int n_running;            /* workers started and not yet applied */
	int max_in_flight;        /* the most steps ever in flight at once (metrics, tests) */
	atomic_bool cancel_call;  /* stops the engine thread's own call (planner, checks) */
	atomic_bool aborting;
};

/* How an answer is read: the parsed object, or NULL with one sentence in *why. */
typedef void *(*pev_read_fn)(struct pev *e, const char *text, char **why);

/* pev.c */
/* One model call with its llm.call event and accounting, from any thread. Returns
 * PROVIDER_OK, PROVIDER_CANCELLED (`cancel` was set), or PROVIDER_ERROR with *err set to
 * the provider's sentence (caller frees). */
int pev_call_model(struct pev *e, struct llm_request *req, struct llm_response *out,
		   const atomic_bool *cancel, char **err);
/* One call, and when its answer cannot be read, one more with the correction fix(why).
 * Returns the parsed answer; NULL when a call failed (*err) or was cancelled (neither
 * set), or when the second answer could not be read either (*why). `prompt` is taken. */
void *pev_ask_and_read(struct pev *e, struct llm_request *req, char *prompt,
		       const atomic_bool *cancel, pev_read_fn read,
		       char *(*fix)(struct pev *e, const char *why), char **why, char **err);
void pev_publish_verdict(struct pev *e, const char *id, int attempt, const char *stage,
			 const struct verdict *v);
void pev_step_state_release(struct step_state *s);
/* Caches each step's dependency indexes; called whenever the plan's steps change. */
void pev_index_plan(struct pev *e);
/* Marks step i and its dependents (transitively) to run again. */
void pev_reset_with_dependents(struct pev *e, size_t i);
/* The identity of step i's work (definition without the id, and its inputs). Caller frees. */
char *pev_reuse_key(struct pev *e, const struct plan *p, size_t i);
/* Remembers a passed result for identical steps; `key` is taken. */
void pev_reuse_add(struct pev *e, char *key, const char *result, const char *output);

/* pev_worker.c */
/* A worker for step i: a snapshot of its definition, dependency outputs and critiques. */
struct worker *pev_worker_new(struct pev *e, size_t i);
void pev_worker_free(struct worker *w);
/* The worker thread: the attempt loop of one step, then hands itself back (e->done). */
void *pev_worker_main(void *arg);

/* pev_resume.c */
/* Rebuilds the engine's state from RUNDIR/journal.jsonl. false + *err when the run
 * cannot be resumed (missing, finished, unreadable). */
bool pev_rebuild(struct pev *e, char **err);

#endif
