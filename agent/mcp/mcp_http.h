/* mcp_http — the Streamable HTTP transport of MCP: each message POSTed to the server's
 * endpoint; the answer is one JSON message or an event stream of them. A stream that ends
 * before the answer is resumed with GET and Last-Event-ID after the server's retry delay.
 * The standalone GET stream carries messages the server starts on its own. The session
 * id the server gives at initialize goes with every later request; the session is ended
 * with DELETE. Transfers may run at once from several threads (each takes its own
 * connection); a reply can be POSTed from inside on_msg. */
#ifndef PEVTUI_MCP_HTTP_H
#define PEVTUI_MCP_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "strbuf.h"

struct mcp_http;

/* `url` and `headers` ("Name: value") are copied. */
struct mcp_http *mcp_http_new(const char *url, const struct strvec *headers);
struct oauth_session;
/* Sign-in for this server (oauth_session.h; taken, freed with h; NULL: none): its bearer
 * token goes with every request, and a 401 or 403 insufficient_scope is handed to it
 * before the request is sent again or fails with its sentence. */
void mcp_http_set_auth(struct mcp_http *h, struct oauth_session *s);
/* Ends the session (DELETE, when the server gave one) and frees. NULL is fine. No transfer
 * may be running (stop the listener first). */
void mcp_http_free(struct mcp_http *h);
/* The revision agreed at initialize: sent as MCP-Protocol-Version from then on. */
void mcp_http_set_protocol(struct mcp_http *h, const char *revision);
/* Forgets the session (the server said it is gone: initialize again). */
void mcp_http_forget_session(struct mcp_http *h);

enum mcp_http_end {
	MCP_HTTP_OK,
	MCP_HTTP_TIMEOUT,
	MCP_HTTP_CANCELLED,
	MCP_HTTP_FAILED,
	MCP_HTTP_NONE, /* mcp_http_listen: the server offers no GET stream (405) */
};

/* How one transfer's messages are read. */
struct mcp_http_reader {
	/* Each message (the JSON body, or the data of each event), NUL-terminated and
	 * borrowed; returns true once it has what it waited for (the rest is not read). */
	bool (*on_msg)(void *ctx, const char *text);
	/* Optional: the HTTP status, once the answer's headers are in (each connection). */
	void (*on_open)(void *ctx, long status);
	void *ctx;
	const atomic_bool *stop; /* set: the transfer ends (MCP_HTTP_CANCELLED); may be NULL */
	/* set: what on_msg waited for came another way (a response the server put on its GET
	 * stream): the transfer ends as if on_msg had it; may be NULL */
	const atomic_bool *answered;
	/* The longest wait for the answer, in ms, not counting time spent inside on_msg (an
	 * operator answering a server's question); 0: no limit. */
	long max_ms;
};

/*
 * POSTs `body` (one JSON-RPC message) and reads its answer with `r`. When the answer is a
 * stream that ends before on_msg had what it waited for, and the stream gave event ids,
 * it is resumed: GET with Last-Event-ID after the server's `retry:` delay (1 s without
 * one), a few times. MCP_HTTP_FAILED + *err (a sentence; caller frees) for a refused
 * connection or an HTTP error; *gone is set when the server answered 404 to a request in
 * a session (the session ended).
 */
enum mcp_http_end mcp_http_post(struct mcp_http *h, const char *body,
                                const struct mcp_http_reader *r, bool *gone, char **err);

/*
 * The standalone GET stream: reads the server's own messages with `r` (on_msg's answer is
 * ignored) until r->stop is set, reconnecting (with Last-Event-ID and the server's delay)
 * when the server ends it. MCP_HTTP_NONE when the server has no such stream (405);
 * MCP_HTTP_CANCELLED when stopped; MCP_HTTP_FAILED + *err otherwise. Blocks: run it on a
 * thread of its own.
 */
enum mcp_http_end mcp_http_listen(struct mcp_http *h, const struct mcp_http_reader *r,
                                  char **err);

#endif
