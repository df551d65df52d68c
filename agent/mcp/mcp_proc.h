/* mcp_proc — a stdio MCP server's process: started with posix_spawnp in a process group
 * of its own, in its folder, with only PATH, HOME and the environment its config names,
 * its stderr to a log (capped: mcp_errlog); ended politely (input closed), then with
 * TERM and KILL to the whole group, so nothing it started outlives it. */
#ifndef PEVTUI_MCP_PROC_H
#define PEVTUI_MCP_PROC_H

#include <stdbool.h>
#include <sys/types.h>

struct mcp_errlog;
struct mcp_server_conf;

/* Plain data, owned by its client. */
struct mcp_proc {
	pid_t pid;                 /* 0: not running */
	int to_fd;                 /* its stdin (-1 when closed) */
	int from_fd;               /* its stdout, non-blocking (-1 when closed) */
	char *last_exit;           /* how it last ended ("exit status 1", "signal 9"), or NULL */
	struct mcp_errlog *errlog; /* copies its stderr to the log while it runs, or NULL */
};
#define MCP_PROC_INIT                                                                              \
	{                                                                                          \
		0, -1, -1, NULL, NULL                                                              \
	}

/* Starts server `s` in `s->cwd` or `workspace`, its stderr appended to `log_path` (NULL:
 * nowhere) until the log holds MCP_ERRLOG_CAP bytes. false + *err (a sentence naming the
 * server; caller frees). */
struct confine_session;
/* A server whose config says `sandbox = MODE` runs under `sb`'s layers in that mode (and
 * does not start, saying why, where no layer holds). */
bool mcp_proc_start(struct mcp_proc *p, const struct mcp_server_conf *s, const char *log_path,
                    const char *workspace, const struct confine_session *sb, char **err);
/* Ends it (polite: its input closed first, 0.3 s to exit) and its process group, reaped,
 * then the copying of its stderr; last_exit says how it ended. Nothing when it is not
 * running. */
void mcp_proc_stop(struct mcp_proc *p, bool polite);
void mcp_proc_release(struct mcp_proc *p); /* frees last_exit */

#endif
