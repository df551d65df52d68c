/*
 * requests — the request bodies sent to the models, kept in RUNDIR/requests/ (one file per
 * call, SEQ-ROLE-STEP-ATTEMPT.json, mode 0600) so an operator can read exactly what a role
 * was sent for an attempt. Only bodies are kept: API keys travel in HTTP headers
 * (x-api-key, Authorization), never in a body. [policy] keep_requests = off turns it off.
 */
#ifndef PEVTUI_REQUESTS_H
#define PEVTUI_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>

struct llm_request;

/* Per run folder (all segments of a resumed run): past it no more requests are kept. */
#define REQUESTS_MAX_BYTES (256ul << 20)
#define REQUESTS_DIR "requests"

struct requests;

/* Keeps requests in RUN_DIR/requests when `keep` (the folder is made on the first one),
 * up to `max_bytes` in all (0: REQUESTS_MAX_BYTES). Numbers go on after those a resumed
 * run kept already, whose bytes count too. Never NULL. */
struct requests *requests_open(const char *run_dir, bool keep, size_t max_bytes);
void requests_close(struct requests *rq); /* NULL ok */

/*
 * A name for one call's request, relative to the run folder:
 * "requests/000012-executor-STEP-2.json" (STEP as attempts_id_component writes it, "~"
 * outside a step, attempt 0 then). NULL when requests are not kept or the cap is reached.
 * Any thread. Caller frees.
 */
char *requests_name(struct requests *rq, const char *role, const char *step_id, int attempt);

/* Writes (replaces) the body of the request `name`. false + *err (a sentence; caller
 * frees). Any thread. */
bool requests_write(struct requests *rq, const char *name, const char *body, size_t len,
		    char **err);

/* True once the cap stopped keeping requests. */
bool requests_capped(const struct requests *rq);
/* Once per run: why requests stopped being kept (the cap, a failed write), for a notice;
 * NULL when nothing is to be said (again). Any thread. Caller frees. */
char *requests_take_notice(struct requests *rq);

/* The request as the engine built it, for a provider that sends no body (the simulated
 * one): model, max_tokens, system, tools, messages; tagged so that nobody takes it for a
 * wire body. The tools' schemas are printed through req->schemas (schemas.h) when set.
 * Any thread. Caller frees. */
char *requests_body_of(const struct llm_request *req);

/* A kept request, read back from its name. */
struct request_ref {
	unsigned long seq;
	char *role;    /* "planner", "executor", "verifier" */
	char *step;    /* the file name's STEP component ("~" outside a step) */
	int attempt;
	char *name;    /* relative to the run folder */
};

/*
 * The requests kept in RUN_DIR for `step_id` (NULL: those outside a step) and `attempt`
 * (0: every attempt), oldest first, into *out (caller frees with requests_list_free).
 * Returns how many.
 */
size_t requests_list(const char *run_dir, const char *step_id, int attempt,
		     struct request_ref **out);
void requests_list_free(struct request_ref *v, size_t n);

/* Parses a file name "SEQ-ROLE-STEP-ATTEMPT.json" (no folder). false when it is not one. */
bool requests_parse_name(const char *file, struct request_ref *out);

#endif
