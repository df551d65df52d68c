/*
 * mcp_trust — which servers of a project's .mcp.json the operator approved. Starting a
 * server runs its command, and a .mcp.json sits in a folder a model may write to (the
 * workspace): a server from one starts only once the operator has seen its command and
 * said yes, or for one run under --yes. Approvals are kept, one JSON line per server, in
 * $XDG_DATA_HOME/pevtui/trusted-mcp.jsonl (mode 0600): the file's absolute path, the
 * server's name and its whole definition — any change to the command, arguments,
 * environment, folder, URL or headers makes it a new server that asks again.
 */
#ifndef PEVTUI_MCP_TRUST_H
#define PEVTUI_MCP_TRUST_H

#include <stdbool.h>

struct mcp_server_conf;

/* The approvals file (caller frees); NULL without XDG_DATA_HOME or HOME. */
char *mcp_trust_store_path(void);

/* Whether `sv`, read from the .mcp.json at `file` (absolute), was approved as it is. A
 * missing or unreadable store approves nothing. */
bool mcp_trust_known(const char *store, const char *file, const struct mcp_server_conf *sv);

/* Records the approval (folders made as needed). false + *err (a sentence; caller frees). */
bool mcp_trust_add(const char *store, const char *file, const struct mcp_server_conf *sv,
                   char **err);

/* What the operator approves, on one line, cleaned of control characters: the command
 * and its arguments (shell-quoted where needed), then the folder, the environment's
 * names and the header names; or the URL. Caller frees. */
char *mcp_trust_describe(const struct mcp_server_conf *sv);

#endif
