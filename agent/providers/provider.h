/* provider — one interface to every model: Anthropic, OpenAI-compatible, simulated. */
#ifndef PEVTUI_PROVIDER_H
#define PEVTUI_PROVIDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct tool_def;
struct schemas;

enum llm_role { ROLE_PLANNER, ROLE_EXECUTOR, ROLE_VERIFIER, ROLE__COUNT };

/* Why the engine is calling. Real providers ignore it; the journal and the simulated
 * provider use it. */
enum llm_purpose {
	PURPOSE_PLAN,
	PURPOSE_REPLAN,
	PURPOSE_EXECUTE,
	PURPOSE_VERIFY,
	PURPOSE_FINAL_CHECK,
	PURPOSE_SYNTHESIZE,
};

const char *llm_role_name(enum llm_role r);       /* "planner" "executor" "verifier" */
/* True when a stop reason says the answer was cut off at the output token limit
 * ("length", "max_tokens", …): text that cannot be read is then cut, not malformed. */
bool llm_stop_is_cutoff(const char *stop_reason);
/* True for a stop reason worth telling the operator: a cut-off, or a server's refusal or
 * content filter — not the normal end of an answer or a tool call. */
bool llm_stop_notable(const char *stop_reason);
int llm_role_from_name(const char *s);
const char *llm_purpose_name(enum llm_purpose p); /* "plan" "replan" "execute" … */

struct llm_tool_call {
	char *id;
	char *name;
	char *input_json; /* the arguments object as JSON text */
};

struct llm_tool_result {
	char *call_id;
	char *content;
	bool is_error;
};

enum llm_msg_kind { LLM_MSG_USER, LLM_MSG_ASSISTANT, LLM_MSG_TOOL_RESULTS };

/* One conversation turn. USER: text. ASSISTANT: text (may be NULL) and calls.
 * TOOL_RESULTS: results (sent as the user turn that answers the calls). */
struct llm_msg {
	enum llm_msg_kind kind;
	char *text;
	struct llm_tool_call *calls;
	size_t n_calls;
	struct llm_tool_result *results;
	size_t n_results;
};

struct llm_request {
	/* metadata (not sent on the wire) */
	enum llm_role role;
	enum llm_purpose purpose;
	const char *step_id; /* NULL outside a step */
	int attempt;         /* 1-based attempt of the step, 0 outside a step */
	const char *task;    /* the operator's task */
	const char *step_json; /* the step's definition (JSON), NULL outside a step */
	/* the tools' schemas as printed, kept for the run (schemas.h; the engine's); NULL:
	 * each call parses its own */
	struct schemas *schemas;
	/* the call */
	const char *model;
	const char *system;  /* static, cacheable part of the prompt */
	const struct llm_msg *msgs;
	size_t n_msgs;
	const struct tool_def *const *tools;
	size_t n_tools;
	bool want_json;      /* ask for a JSON object where the API supports it */
	int max_tokens;
};

struct llm_usage {
	long input_tokens;       /* not counting cached tokens */
	long output_tokens;
	long cache_write_tokens;
	long cache_read_tokens;
	bool reported;           /* false when the server sent no usage */
};

struct llm_response {
	char *text;              /* all text blocks joined; "" when none */
	struct llm_tool_call *calls;
	size_t n_calls;
	char *stop_reason;       /* as the server named it; NULL when none was sent */
	struct llm_usage usage;
	int http_status;         /* 0 for the simulated provider */
	long latency_ms;
	char *model;             /* the model that answered, as the server names it */
};

/* Callbacks during a call, in the calling thread. All may be NULL. */
struct llm_hooks {
	void *ctx;
	void (*on_delta)(void *ctx, const char *text, size_t len);
	/* A provider retry is about to wait `wait_ms` before attempt `attempt` of `max`. */
	void (*on_retry)(void *ctx, int http_status, long wait_ms, int attempt, int max,
			 const char *reason);
	/* Set by the engine to cancel the call (abort, edit); checked at least every 200 ms. */
	const atomic_bool *cancel;
	/* The request body about to be sent (again for each body built; the last is what went
	 * out). Never given headers, so never a key. Providers that send nothing never call
	 * it. */
	void (*on_request)(void *ctx, const char *body, size_t len);
	/* When set, takes instead of on_request each body the provider wrote whole as
	 * compact JSON (the bytes cJSON_PrintUnformatted would print; tests/unit/test_bodies
	 * holds them equal): JSON on one line by construction, so it need not be checked
	 * again. A body changed after printing (a key hidden in it) still
	 * goes to on_request. */
	void (*on_request_printed)(void *ctx, const char *body, size_t len);
};

enum { PROVIDER_OK = 0, PROVIDER_ERROR = -1, PROVIDER_CANCELLED = -2 };

struct provider;

struct provider_ops {
	const char *name; /* "anthropic" "openai" "sim" */
	/*
	 * Performs one call. Must be safe to call from several threads at once. On
	 * PROVIDER_OK fills *out (caller releases it with llm_response_release). On error
	 * sets *err to one sentence naming the provider, the HTTP status and the provider's
	 * own message, never a key (caller frees).
	 */
	int (*complete)(struct provider *p, const struct llm_request *req,
			const struct llm_hooks *hooks, struct llm_response *out, char **err);
	void (*destroy)(struct provider *p);
};

struct provider {
	const struct provider_ops *ops;
	bool simulated; /* shown as "(simulated)" next to every model name */
	void *impl;
};

int provider_complete(struct provider *p, const struct llm_request *req,
		      const struct llm_hooks *hooks, struct llm_response *out, char **err);
void provider_free(struct provider *p); /* NULL ok */

void llm_response_release(struct llm_response *r); /* frees members, zeroes *r */
void llm_msg_release(struct llm_msg *m);
void llm_tool_call_release(struct llm_tool_call *c);

#endif
