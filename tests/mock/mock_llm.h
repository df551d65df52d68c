/* mock_llm — a scripted LLM server for tests and benchmarks: libmicrohttpd on an ephemeral
 * 127.0.0.1 port, answering each POST with the next scripted reply (byte-for-byte what the
 * script says), with injectable faults. Speaks whatever the script holds, so one server
 * serves both the Anthropic and the OpenAI wire formats. */
#ifndef PEVTUI_MOCK_LLM_H
#define PEVTUI_MOCK_LLM_H

#include <stdbool.h>
#include <stddef.h>

enum mock_fault {
	MOCK_NONE,
	MOCK_TRUNCATE, /* send cut_at bytes of the body, then end the response cleanly */
	MOCK_CUT,      /* send cut_at bytes, then drop the connection mid-body */
	MOCK_STALL,    /* send cut_at bytes, then go silent (until the client leaves) */
	MOCK_RESET,    /* reset the connection (RST) without answering */
};

/* mock_reply.chunk: one chunk per SSE event (up to and with its blank line), the body sent
 * with chunked transfer encoding on a kept-alive connection, as the real APIs stream. */
#define MOCK_CHUNK_EVENTS ((size_t)-1)

struct mock_reply {
	int status;               /* 0 means 200 */
	const char *headers;      /* extra "Name: value\n" lines, or NULL */
	const char *content_type; /* NULL: guessed (SSE when the body starts like SSE) */
	const char *body;         /* copied */
	enum mock_fault fault;
	size_t cut_at;
	size_t chunk;             /* bytes per write (streamed); 0: one write; MOCK_CHUNK_EVENTS */
	int delay_ms;             /* pause before each chunk */
};

/* What the server received; strings are NUL-terminated copies ("" when absent). */
struct mock_request {
	char *path;
	char *api_key;       /* x-api-key */
	char *authorization;
	char *version;       /* anthropic-version */
	char *body;
};

struct mock;

/* Starts the server; aborts the test program if it cannot. */
struct mock *mock_start(void);
void mock_stop(struct mock *m); /* NULL ok; frees everything */
int mock_port(const struct mock *m);
/* "http://127.0.0.1:PORT" + suffix; caller frees. */
char *mock_url(const struct mock *m, const char *suffix);

/* Appends a reply to the script (copied). */
void mock_push(struct mock *m, const struct mock_reply *r);
/* Appends a reply used only for a request whose body contains `needle` (e.g. the
 * "model":"…" of one role), so concurrent or reordered callers each get theirs. */
void mock_push_for(struct mock *m, const char *needle, const struct mock_reply *r);
/* The reply used when the script is empty (copied); without one: 500 "script empty". */
void mock_set_default(struct mock *m, const struct mock_reply *r);
/* Replies still waiting in the script. */
size_t mock_pending(struct mock *m);

size_t mock_request_count(struct mock *m);
/* A copy of request i (0-based); free with mock_request_free. */
struct mock_request *mock_request_get(struct mock *m, size_t i);
void mock_request_free(struct mock_request *r);
/* TCP connections accepted so far. */
size_t mock_connections(struct mock *m);

/* Reads a whole file (caller frees); aborts when it cannot. */
char *mock_read_file(const char *path);

/* Well-formed streamed answers with one text block and the given usage; caller frees. */
char *mock_anthropic_text_sse(const char *model, const char *text, long in, long out);
char *mock_openai_text_sse(const char *model, const char *text, long prompt, long completion);

#endif
