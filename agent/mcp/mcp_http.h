/* mcp_http — the Streamable HTTP transport of MCP: each message POSTed to the server's
 * endpoint; the answer is one JSON message or an event stream of them; the session id the
 * server gives at initialize goes with every later request, and the session is ended with
 * DELETE. Blocking, one transfer at a time (the client's lock). */
#ifndef PEVTUI_MCP_HTTP_H
#define PEVTUI_MCP_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "strbuf.h"

struct mcp_http;

/* `url` and `headers` ("Name: value") are copied. */
struct mcp_http *mcp_http_new(const char *url, const struct strvec *headers);
/* Ends the session (DELETE, when the server gave one) and frees. NULL is fine. */
void mcp_http_free(struct mcp_http *h);
/* The revision agreed at initialize: sent as MCP-Protocol-Version from then on. */
void mcp_http_set_protocol(struct mcp_http *h, const char *revision);
/* Forgets the session (the server said it is gone: initialize again). */
void mcp_http_forget_session(struct mcp_http *h);

enum mcp_http_end { MCP_HTTP_OK, MCP_HTTP_TIMEOUT, MCP_HTTP_CANCELLED, MCP_HTTP_FAILED };

/*
 * POSTs `body` (one JSON-RPC message). Each message of the answer (the JSON body, or the
 * data of each event of a stream), NUL-terminated and borrowed, goes to on_msg, which
 * returns true once it has what it waited for (the rest is not read). MCP_HTTP_FAILED +
 * *err (a sentence) for a refused connection or an HTTP error; *gone is set when the
 * server answered 404 to a request in a session (the session ended).
 */
enum mcp_http_end mcp_http_post(struct mcp_http *h, const char *body, long timeout_ms,
                                const atomic_bool *cancel,
                                bool (*on_msg)(void *ctx, const char *text), void *ctx, bool *gone,
                                char **err);

#endif
