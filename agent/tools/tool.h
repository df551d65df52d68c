/* tool — the registry of workspace tools the executor may call. One file per tool. */
#ifndef PEVTUI_TOOL_H
#define PEVTUI_TOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct cJSON;
struct confine_session;

/* What the shell gate shows besides the command (run_shell hands it to confirm_shell). */
struct shell_ask {
	const char *cwd;          /* where the command runs: the workspace */
	int timeout_s;            /* its time limit */
	const char *allow_prefix; /* the shell_allow entry the command starts with, or NULL */
	const char *allow_why;    /* why the allow list does not let it skip the gate, in a
				   * few words ("not on the allow list", "holds a glob (* or ?)") */
	const char *sandbox;      /* the sandbox's layers line, or NULL (no sandbox given) */
	bool outside;             /* the model asked to run it outside the sandbox */
	const char *reason;       /* and why it says it must (NULL unless outside) */
};

/* What run_shell did, for the journal's tool.result (filled when env->shell_run is set;
 * release with tool_shell_run_release). */
struct shell_run {
	char *command;     /* what ran (the operator's edit, if any); the command asked when
			    * nothing ran; NULL when the input held no command */
	bool allow_listed; /* a shell_allow prefix let it skip the gate */
	bool outside;      /* the model asked to run it outside the sandbox */
	bool confined;     /* it ran in the sandbox */
	bool ran;          /* it started */
	int exit_status;   /* -1 unless it exited by itself */
	int signal;        /* the signal that ended it, 0 none */
	bool timed_out;    /* stopped at its time limit */
	long duration_ms;  /* from its start to its end */
	char *output;      /* its output as the model got it (clean text), NULL when none ran */
};
void tool_shell_run_release(struct shell_run *r);

/* What a tool may touch, and the engine's hooks around it. Hooks may be NULL. */
struct tool_env {
	int ws_fd;              /* O_PATH/O_DIRECTORY descriptor of the workspace root */
	const char *ws_path;    /* for messages only; never used to open files */
	bool demo;              /* demo-only tools are offered (simulated provider) */

	void *hook_ctx;
	/* The shell gate: called before run_shell runs *command (unless a prefix in
	 * shell_allow matches). Returns true to run it; the operator may have replaced the
	 * command (then the hook frees *command and stores a new heap string). false: refused.
	 * `ask` (valid during the call) says where, how long and why the gate asks.
	 * NULL hook: no gate. */
	bool (*confirm_shell)(void *hook_ctx, char **command, const struct shell_ask *ask);
	/* A transient tool failure will be retried after wait_ms (attempt of max). */
	void (*on_tool_retry)(void *hook_ctx, const char *tool, int attempt, int max,
			      long wait_ms, const char *reason);
	/* Hooks are called on the thread that runs the tool, while it runs. */
	/* Chaos rehearsal (--chaos P): asked before each attempt of tool_invoke; true makes
	 * that attempt fail as a transient failure without running the tool, so the retry
	 * and fallback paths can be rehearsed. NULL: no chaos. */
	bool (*inject_failure)(void *hook_ctx, const char *tool);
	const struct strvec *shell_allow; /* command prefixes that skip the shell gate */
	const atomic_bool *cancel;        /* step cancelled / run aborted: stop, kill children */
	int shell_timeout_s;              /* 0 = the tool's default */
	size_t http_max_bytes;            /* 0 = TOOL_HTTP_MAX_BYTES */
	int http_timeout_s;               /* 0 = TOOL_HTTP_TIMEOUT_S */
	/* Hosts http_get may reach on a local or private address (netguard.h); NULL = none */
	const struct strvec *http_allow_hosts;
	struct shell_run *shell_run;      /* out: what run_shell did; NULL = not wanted */
	/* The commands' sandbox (agent/confine/confine.h): run_shell runs every command in
	 * it, and asks at the gate for each when no layer holds. NULL: unconfined. */
	const struct confine_session *sandbox;
	/*
	 * Set by tool_invoke for one run (NULL when a tool is run directly, so tools check):
	 * a tool that fails for a reason that may go away on its own (timeout, refused
	 * connection, HTTP 5xx or 429) sets *transient = true and tool_invoke retries it.
	 */
	bool *transient;
};

/* What a tool may change in the workspace (the checkpoints tell parallel steps' changes
 * apart by it). The zero value is the safe one. */
enum tool_writes {
	TOOL_WRITES_ANY = 0, /* anything (a shell command) */
	TOOL_WRITES_NOTHING, /* reads only */
	TOOL_WRITES_PATH,    /* the one file its "path" argument names */
};

struct tool_def {
	const char *name;
	const char *description;
	const char *schema_json; /* JSON Schema of the input object */
	bool demo_only;          /* offered only in demo/simulated runs */
	enum tool_writes writes;
	/* Name of a tool tried with the same input when this one finally fails (not when
	 * cancelled); NULL = none. Only one level is followed. */
	const char *fallback;
	/* Runs the tool. Returns true on success with the result text in *out; false with a
	 * sentence the model can read and act on in *out. Never crashes on bad input. */
	bool (*run)(const struct tool_env *env, const struct cJSON *input, struct strbuf *out);
};

/*
 * Runs a tool with the policy around it (what the engine calls): a transient failure is
 * retried with backoff, each retry reported through env->on_tool_retry; a permanent one
 * may fall back to the tool's named fallback. Same result convention as tool_def.run.
 * Up to TOOL_RETRY_TRIES attempts; before attempt k+1 it waits a random time in
 * [d/2, d] where d = min(TOOL_RETRY_BASE_MS << (k-1), TOOL_RETRY_CAP_MS). The wait ends
 * early when env->cancel becomes true (then no more attempts and no fallback).
 * env->transient is ignored (tool_invoke supplies its own).
 */
bool tool_invoke(const struct tool_def *t, const struct tool_env *env,
		 const struct cJSON *input, struct strbuf *out);

/* Every tool, in a fixed order. */
const struct tool_def *const *tool_registry(size_t *n);
const struct tool_def *tool_find(const char *name);

/* Output longer than this is cut, with a note saying how much was cut. */
#define TOOL_MAX_OUTPUT (64 * 1024)

#define TOOL_RETRY_TRIES 3
#define TOOL_RETRY_BASE_MS 200
#define TOOL_RETRY_CAP_MS 2000

#define TOOL_SHELL_TIMEOUT_S 60           /* run_shell's limit when env gives none */
#define TOOL_HTTP_MAX_BYTES (1024 * 1024) /* http_get's body limit when env gives none */
#define TOOL_HTTP_TIMEOUT_S 20
#define TOOL_SEARCH_MAX_FILE (1024 * 1024) /* search_files skips larger files */

#endif
