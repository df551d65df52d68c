/*
 * requests — the request bodies sent to the models, kept in RUNDIR/requests.jsonl (one
 * line per call, appended, mode 0600) so an operator can read exactly what a role was sent
 * for an attempt. Runs written before it kept one file per call in RUNDIR/requests/; those
 * are still listed and read. Only bodies are kept: API keys travel in HTTP headers
 * (x-api-key, Authorization), never in a body. [policy] keep_requests = off turns it off.
 */
#ifndef PEVTUI_REQUESTS_H
#define PEVTUI_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>

struct llm_request;

/* Per run folder (all segments of a resumed run): past it no more requests are kept. */
#define REQUESTS_MAX_BYTES (256ul << 20)
#define REQUESTS_FILE "requests.jsonl"
/* Where runs before requests.jsonl kept theirs: SEQ-ROLE-STEP-ATTEMPT.json, one per call. */
#define REQUESTS_DIR "requests"

struct requests;

/* Keeps requests in RUN_DIR/requests.jsonl when `keep` (the file is made on the first
 * one), up to `max_bytes` in all (0: REQUESTS_MAX_BYTES). Numbers go on after those a
 * resumed run kept already (in either layout), whose bytes count too. Never NULL. */
struct requests *requests_open(const char *run_dir, bool keep, size_t max_bytes);
void requests_close(struct requests *rq); /* NULL ok */

/* The SEQ for one call's request (1, 2, …), or 0 when requests are not kept or the cap
 * is reached. Any thread. */
unsigned long requests_next(struct requests *rq);

/* The name of request `seq` relative to the run folder, as llm.call's `request` gives it:
 * "requests.jsonl#12". Caller frees. */
char *requests_name(unsigned long seq);

/*
 * Appends the body of request `seq` (from requests_next) for `role`, `step_id` (NULL
 * outside a step) and `attempt`, as one line written with one write(2): {"seq", "role",
 * "step_id", "attempt", "bytes" (the body's length), then "body": the body as it is when
 * it is JSON on one line, else "body_text": the body as a JSON string}. Written again for
 * the same seq, the later line is the one read back. false + *err (a sentence; caller
 * frees). Any thread.
 */
bool requests_write(struct requests *rq, unsigned long seq, const char *role,
		    const char *step_id, int attempt, const char *body, size_t len, char **err);
/* The same for a body the caller printed itself as compact JSON (cJSON_PrintUnformatted,
 * requests_body_of): JSON on one line by construction, so it is not checked token by
 * token again. Only its nesting can be more than a record takes (cJSON reads and prints
 * deeper): that is bounded by counting its '{' and '[', and a body with too many is
 * checked as any other. The line written is the same as requests_write's. */
bool requests_write_printed(struct requests *rq, unsigned long seq, const char *role,
			    const char *step_id, int attempt, const char *body, size_t len,
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
/* requests_write_printed of requests_body_of(req), the line the same byte for byte, built
 * without a copy of the body. */
bool requests_write_body_of(struct requests *rq, unsigned long seq, const char *role,
			    const char *step_id, int attempt, const struct llm_request *req,
			    char **err);

/* A kept request, read back. */
struct request_ref {
	unsigned long seq;
	char *role;    /* "planner", "executor", "verifier" */
	char *step;    /* STEP as attempts_id_component writes it ("~" outside a step) */
	int attempt;
	char *name;    /* relative to the run folder: "requests.jsonl#12", or an older run's
		        * "requests/000012-executor-STEP-2.json" */
	/* In requests.jsonl: where the body's value starts and how long it is there. */
	long long body_off;
	size_t body_len;
	bool as_text;  /* the value is "body_text", a JSON string to decode */
};

/*
 * The requests kept in RUN_DIR for `step_id` (NULL: those outside a step) and `attempt`
 * (0: every attempt), in either layout, oldest first, into *out (caller frees with
 * requests_list_free). A torn or foreign line of requests.jsonl is left out. Returns how
 * many.
 */
size_t requests_list(const char *run_dir, const char *step_id, int attempt,
		     struct request_ref **out);
void requests_list_free(struct request_ref *v, size_t n);

/* The kept request named `name` (llm.call's `request`), in either layout, into *out
 * (release with requests_ref_release). false when there is none. */
bool requests_find(const char *run_dir, const char *name, struct request_ref *out);
void requests_ref_release(struct request_ref *r);

/*
 * The same listings, from what a listing before read of requests.jsonl: the file is only
 * appended to, so each listing reads only the lines added since (a view that opens again
 * and again keeps one; requests_list and requests_find read the whole file each time).
 * For one run folder; one thread at a time.
 */
struct requests_index;
struct requests_index *requests_index_new(const char *run_dir);
void requests_index_free(struct requests_index *ix); /* NULL ok */
size_t requests_index_list(struct requests_index *ix, const char *step_id, int attempt,
			   struct request_ref **out);
bool requests_index_find(struct requests_index *ix, const char *name, struct request_ref *out);
/* How many bytes of requests.jsonl the last listing read (what it cost). */
size_t requests_index_last_read(const struct requests_index *ix);

/*
 * The body of a kept request, byte for byte as it was kept, up to `max` bytes (*cut tells
 * whether there was more; may be NULL). A body kept as "body_text" is decoded only as far
 * as the bound. Reads beneath RUN_DIR only. Returns the bytes (NUL-terminated; *len
 * without it: a body may hold a NUL), or NULL + *err (a sentence; caller frees).
 */
char *requests_read(const char *run_dir, const struct request_ref *r, size_t max, size_t *len,
		    bool *cut, char **err);

/* A file name for the request, "000012-executor-STEP-2.json" (a pager's temporary copy is
 * named after it). Caller frees. */
char *requests_file_name(const struct request_ref *r);

/* Parses an older run's file name "SEQ-ROLE-STEP-ATTEMPT.json" (no folder). false when it
 * is not one. */
bool requests_parse_name(const char *file, struct request_ref *out);

#endif
