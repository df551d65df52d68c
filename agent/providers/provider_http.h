/* provider_http — what the Anthropic and OpenAI-compatible providers share over http.c and
 * sse.c: the per-call parse state, the http_call callbacks, and the "complete" driver. */
#ifndef PEVTUI_PROVIDER_HTTP_H
#define PEVTUI_PROVIDER_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "provider.h"
#include "sse.h"
#include "strbuf.h"

/*
 * The settings both providers hold: embedded in each provider's struct, filled by
 * phttp_conf_init, released by phttp_conf_release. Strings are owned.
 */
struct phttp_conf {
	char *url;
	char *api_key;           /* NULL: none sent, none to redact */
	struct http_options opt; /* zeros: http.c's defaults */
	bool stream;             /* SSE (the default) or one JSON answer */
};

/* Takes `url` (owned from now on) and a copy of api_key (NULL or "": none); streams. */
void phttp_conf_init(struct phttp_conf *cf, char *url, const char *api_key);
/* Frees the URL, and the key after wiping it so that it does not linger in freed memory. */
void phttp_conf_release(struct phttp_conf *cf);

/*
 * What differs between wire formats. Every callback gets the `ctx` given to phttp_init
 * (the provider's own call state, which embeds the struct phttp).
 */
struct phttp_wire {
	const char *name;       /* "anthropic": the prefix of every error */
	const char *end_marker; /* "message_stop", "[DONE]": named when a stream is cut */
	sse_event_fn on_event;  /* one SSE event of a streamed answer */
	/* Forgets (and frees) the wire's part of a parse: before each attempt and at the end. */
	void (*clear)(void *ctx);
	/* A 2xx body has fully arrived: end the SSE parse or parse the whole JSON. */
	void (*finish)(void *ctx);
	/* An error the 2xx body carried: true with *msg (caller frees) and *verdict. */
	bool (*body_error)(void *ctx, int status, char **msg, enum http_verdict *verdict);
	/* A non-2xx answer judged `v` by the SDK rules: the verdict, given its error kind
	 * (NULL when none). */
	enum http_verdict (*status_verdict)(void *ctx, const struct http_result *res,
					    const char *kind, enum http_verdict v);
	/* Adds the tool calls to *out (text, stop reason, usage and model are done). */
	void (*fill_calls)(void *ctx, struct llm_response *out);
	/* The request body of the next round (the driver frees it): compact JSON, the bytes
	 * cJSON_PrintUnformatted would print (kept as written, llm_hooks.on_request_printed). */
	char *(*build_body)(void *ctx);
	/* After a round that returned rc: true to build the body again and send once more
	 * (OpenAI's JSON-mode fallback). NULL: never. */
	bool (*again)(void *ctx, int rc);
};

/*
 * The parse state both wire formats keep, embedded by value in each provider's call state
 * (plain data shared on purpose). Set up by phttp_init; released by phttp_complete and
 * phttp_parse. Strings are owned.
 */
struct phttp {
	const struct phttp_wire *wire;
	void *ctx;
	const struct phttp_conf *cf;   /* borrowed */
	const struct llm_hooks *hooks; /* borrowed; may be NULL */
	struct strvec headers;  /* "Name: value"; wiped on release, as they may hold the key */
	struct timespec t0;     /* when the call began, for latency_ms */
	bool want_stream;       /* what was asked for */
	bool stream;            /* what is being parsed (a server may answer whole JSON) */
	bool sniffed;           /* the first non-blank byte of this attempt was seen */
	unsigned bom;           /* bytes of a leading UTF-8 BOM skipped; 3: done */
	struct sse_parser *sse; /* NULL when not asked to stream */
	struct strbuf raw;      /* non-streamed body */
	struct strbuf text;
	char *model;
	char *stop_reason;
	struct llm_usage usage;
	bool complete, bad_json;
	size_t over_limit;      /* the limit the body passed (then refused), or 0 */
	size_t shown;           /* bytes of text already passed to on_delta */
};

/* A whole (not streamed) answer larger than this is refused; a streamed one is bounded
 * per event by SSE_MAX_EVENT. */
#define PHTTP_MAX_BODY (64u * 1024 * 1024)

/*
 * Sets up *h for one call with the settings of *cf, and the first header (content-type);
 * the provider then adds its own to h->headers. `ctx` is handed to every wire callback.
 */
void phttp_init(struct phttp *h, const struct phttp_wire *wire, void *ctx,
		const struct llm_hooks *hooks, const struct phttp_conf *cf);

/*
 * Sends the call to cf->url (retries by http.c; an "accept: text/event-stream" header is
 * added when streaming), fills *out on PROVIDER_OK, sets *err ("name: …", redacted, caller
 * frees) on PROVIDER_ERROR, and releases *h.
 */
int phttp_complete(struct phttp *h, struct llm_response *out, char **err);

/*
 * Parses a complete 200 body as a call would (for the providers' *_parse, tests and
 * fuzzing): PROVIDER_OK with *out, or PROVIDER_ERROR with *err. Releases *h.
 */
int phttp_parse(struct phttp *h, const char *body, size_t len, struct llm_response *out,
		char **err);

/* Text of the answer: kept, and passed to hooks->on_delta. */
void phttp_add_text(struct phttp *h, const char *s);
/* "; partial text discarded" once text was shown, else "". */
const char *phttp_discarded(const struct phttp *h);
/* Replaces *dst (owned) by a copy of v when v is a string. */
void phttp_set_str(char **dst, const cJSON *v);
/* A token count in obj[key]; `fallback` when missing, negative or absurd. */
long phttp_num_field(const cJSON *obj, const char *key, long fallback);

/*
 * Why an answer with no text and no tool calls is no answer: a refusal (its words), a
 * cut-off at the token limit (`length`, `max_tokens`), a content filter, a full context.
 * One sentence (caller frees), or NULL when the stop reason explains nothing.
 */
char *phttp_empty_answer_reason(int status, const char *stop_reason, const char *refusal);

/*
 * Tool-call arguments to send back to the server, which insists on a JSON object (Ollama
 * and vLLM refuse the next request with HTTP 400 otherwise): `json` itself when it is an
 * object, else a repaired object (quotes, trailing commas, a cut-off end mended) or "{}".
 * *was_bad tells whether it had to be repaired. Caller frees.
 */
char *phttp_repair_args(const char *json, bool *was_bad);

/*
 * The tool result a model gets for a call whose arguments were repaired: it says that
 * they were not valid JSON and what was sent instead, then `content`. Caller frees.
 */
char *phttp_bad_args_note(const char *name, const char *sent, const char *content);

/* ---- request bodies, written as cJSON_PrintUnformatted would print their trees ---------- */

struct schemas;

/* Appends a literal (a constant piece of JSON: keys, punctuation). */
#define PHTTP_LIT(sb, lit) strbuf_add((sb), (lit), sizeof(lit) - 1)

/* Appends s (not NULL) as a JSON string, quotes included, as cJSON prints it. */
void phttp_add_str(struct strbuf *sb, const char *s);

/* The same for a text every call repeats (a system prompt, a tool's name or description):
 * escaped once per run through `memo` (schemas_string), written directly when memo is
 * NULL or keeps no more texts. */
void phttp_add_str_memo(struct strbuf *sb, struct schemas *memo, const char *s);

struct tool_def;
/* A tool's members as both providers describe it: "name" (left out when NULL, as cJSON
 * left it), "description", then `schema_key` (a literal with its quotes and colon, such
 * as "\"parameters\":") and the tool's input schema. No braces: the caller's wrapper. */
void phttp_add_tool_members(struct strbuf *sb, struct schemas *memo, const struct tool_def *t,
			    const char *schema_key);

/*
 * A guess at the size of the next body, from the bodies built before (*last, kept per
 * provider; any thread): the buffer grows once to about that size instead of doubling
 * its way there. phttp_body_done records the size of the body just built.
 */
void phttp_body_start(struct strbuf *sb, const atomic_size_t *last);
void phttp_body_done(const struct strbuf *sb, atomic_size_t *last);

#endif
