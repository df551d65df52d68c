/* mcp_hub — a run's MCP servers: started in parallel (while the planner works), their
 * tools offered as SERVER__tool beside the built-in ones, each call routed to its server,
 * the allow list that lets a call skip the mcp gate, and the end of every server. */
#ifndef PEVTUI_MCP_HUB_H
#define PEVTUI_MCP_HUB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp_client.h"
#include "strbuf.h"

struct mcp_conf;
struct tool_def;

/* Separates the server from its tool in the name the executor sees. */
#define MCP_SEP "__"

/* Told once per server when it is up (ok, with its tool count) or failed (err), on the
 * thread that started it; and when it stops (stopped = true). */
typedef void (*mcp_hub_event_fn)(void *ctx, const char *server, bool ok, bool stopped,
                                 size_t n_tools, const char *protocol, const char *err);

struct mcp_hub;

/* The enabled servers of `conf` (copied); their stderr goes to LOG_DIR/SERVER.log
 * (LOG_DIR NULL: nowhere); they start in `workspace` unless their config names a cwd.
 * NULL when no server is enabled. */
struct mcp_hub *mcp_hub_new(const struct mcp_conf *conf, const char *log_dir,
                            const char *workspace);
/* Stops every server and frees. NULL is fine. */
void mcp_hub_free(struct mcp_hub *h);
/* The run's sandbox, for the stdio servers whose config asks to be confined (sandbox =
 * …); borrowed, it must outlive the hub's servers. Before mcp_hub_start. */
struct confine_session;
void mcp_hub_set_sandbox(struct mcp_hub *h, const struct confine_session *sb);
/* Starts every server, each on a thread of its own; returns at once. fn may be NULL. */
void mcp_hub_start(struct mcp_hub *h, mcp_hub_event_fn fn, void *ctx);
/* Waits until every server is up or failed (each within its timeout). */
void mcp_hub_wait(struct mcp_hub *h);
/* Stops every server and everything it started (fn told for each that was up). */
void mcp_hub_stop(struct mcp_hub *h);

/* The tools offered now (after mcp_hub_wait), as tool_defs named SERVER__tool. */
struct mcp_offer {
	struct tool_def *v; /* strings owned by the offer */
	size_t n;
};
void mcp_hub_offer(struct mcp_hub *h, struct mcp_offer *out);
void mcp_offer_release(struct mcp_offer *o);

/* What a full name means: the server and the server's tool (static parts of `full`'s
 * copy: caller frees *server and *tool), and its annotations JSON (caller frees; may be
 * NULL). false when `full` is no MCP tool of a server of this hub. */
bool mcp_hub_lookup(struct mcp_hub *h, const char *full, char **server, char **tool,
                    char **annotations_json, char **description);
/* The tool matches one of its server's allow globs (fnmatch): no gate. `*pattern`
 * (static within the hub, may be NULL) names the glob that matched. */
bool mcp_hub_allowed(struct mcp_hub *h, const char *server, const char *tool, const char **pattern);
/* Before the start: whether the servers are told pevtui answers their questions
 * (mcp_client_offer_elicitation). NULL is fine. */
void mcp_hub_offer_elicitation(struct mcp_hub *h, bool yes);
/* Calls it (mcp_client_call's conventions). */
enum mcp_status mcp_hub_call(struct mcp_hub *h, const char *server, const char *tool,
                             const char *args_json, const atomic_bool *cancel, int ws_fd,
                             size_t max_bytes, struct strbuf *out, char **structured,
                             const struct mcp_asker *asker);
/* The planner's list: one line per tool, "- SERVER__tool: first line of its
 * description" (caller frees; "" when none). Waits up to wait_ms for servers still
 * starting; one that is not up by then is named as "- SERVER__*" (the executor, which
 * waits for every server, gets its tools). */
char *mcp_hub_describe(struct mcp_hub *h, int wait_ms);

#endif
