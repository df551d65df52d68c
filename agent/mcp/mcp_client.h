/* mcp_client — one MCP server: JSON-RPC 2.0 over stdio (one message a line; the server
 * started with only the environment its config names, plus PATH and HOME) or over
 * Streamable HTTP (mcp_http.h). Negotiates the protocol revision, lists its tools
 * (following pages and list_changed) and calls them with a time limit and cancellation.
 * A server that dies (or an HTTP session that is lost) is started again once. */
#ifndef PEVTUI_MCP_CLIENT_H
#define PEVTUI_MCP_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct mcp_server_conf;

/* The newest protocol revision pevtui speaks; it accepts the others down to the oldest. */
#define MCP_PROTOCOL_LATEST "2025-11-25"
#define MCP_PROTOCOL_OLDEST "2025-03-26"
/* A message larger than this ends the connection (a server is not trusted with memory). */
#define MCP_MAX_MESSAGE (32u * 1024 * 1024)

/* One tool as the server describes it (every string owned; NULL when absent). */
struct mcp_tool {
	char *name;
	char *description;
	char *schema_json;      /* inputSchema */
	char *annotations_json; /* readOnlyHint, destructiveHint, …: shown, never trusted */
	char *output_schema_json; /* outputSchema: a result must match it */
};

struct mcp_tools {
	struct mcp_tool *v;
	size_t n, cap;
};
void mcp_tools_release(struct mcp_tools *t);

enum mcp_status {
	MCP_OK,
	MCP_TOOL_ERROR, /* the tool ran and said it failed (isError) */
	MCP_FAILED,     /* the server could not answer: not started, died, timed out, bad reply */
	MCP_CANCELLED,  /* the caller's cancel flag: notifications/cancelled was sent */
};

struct mcp_client;

/* The operator's answer to a server's question (elicitation/create, form mode). */
enum mcp_elicit_action { MCP_ELICIT_ACCEPT, MCP_ELICIT_DECLINE, MCP_ELICIT_CANCEL };

/*
 * Who answers a server's questions during one call: fn is called on the calling thread,
 * with the server's name, its message and its requestedSchema (JSON text; all borrowed),
 * and may wait for a person (the call's time limit stops meanwhile). On accept it sets
 * *content_json (an object as JSON text, freed by the client).
 */
struct mcp_asker {
	enum mcp_elicit_action (*fn)(void *ctx, const char *server, const char *message,
	                             const char *schema_json, char **content_json);
	void *ctx;
};

/* `conf` is copied. The server's stderr goes to `log_path` (appended; NULL: nowhere).
 * `workspace` is where it starts unless its config names a cwd. Nothing starts yet. */
struct mcp_client *mcp_client_new(const struct mcp_server_conf *conf, const char *log_path,
                                  const char *workspace);
/* The run's sandbox (borrowed), for a stdio server whose config asks to be confined. */
struct confine_session;
void mcp_client_set_sandbox(struct mcp_client *c, const struct confine_session *sb);
/* Stops the server (and everything it started) and frees. NULL is fine. */
void mcp_client_free(struct mcp_client *c);

const char *mcp_client_name(const struct mcp_client *c);
const struct mcp_server_conf *mcp_client_conf(const struct mcp_client *c);
/* The revision agreed on at initialize (NULL before). */
const char *mcp_client_protocol(const struct mcp_client *c);

/* Before the start: whether this client tells servers it answers their questions (the
 * elicitation capability, form mode). Only where an asker will be there to answer. */
void mcp_client_offer_elicitation(struct mcp_client *c, bool yes);

/* Starts the server, initializes and lists its tools. false + *err (a sentence naming the
 * server; caller frees). */
bool mcp_client_start(struct mcp_client *c, char **err);
/* Closes its input, then TERM and KILL to its process group. */
void mcp_client_stop(struct mcp_client *c);

/* A copy of its tools (listed again first when the server said they changed). */
void mcp_client_tools(struct mcp_client *c, struct mcp_tools *out);

/*
 * Calls tool `name` with `args_json` (an object). The result, as text the model reads, in
 * *out: text content joined, other content saved beneath the workspace (ws_fd) as
 * mcp-files/… and named, structuredContent as JSON unless a text block is the same JSON,
 * cleaned of terminal controls and cut at `max_bytes`. On MCP_FAILED / MCP_CANCELLED
 * *out holds a sentence. When the tool declared an outputSchema, a result without
 * structuredContent or one that does not match it is MCP_TOOL_ERROR, *out saying why
 * before the result. `structured` (may be NULL): the structuredContent as JSON text
 * (caller frees), NULL when there was none. `asker` (may be NULL: questions are declined)
 * answers the server's questions during the call.
 */
enum mcp_status mcp_client_call(struct mcp_client *c, const char *name, const char *args_json,
                                const atomic_bool *cancel, int ws_fd, size_t max_bytes,
                                struct strbuf *out, char **structured,
                                const struct mcp_asker *asker);
/* A ping round trip; false + *err. */
bool mcp_client_ping(struct mcp_client *c, char **err);

#endif
