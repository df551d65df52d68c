/* mcp_errlog — a stdio MCP server's stderr, copied to its log by a thread of its own up to
 * a cap on the log's size, so that a chatty server cannot fill the disk; what comes after
 * the cap is read and dropped (the server never blocks on a full pipe), and one line in
 * the log says so. */
#ifndef PEVTUI_MCP_ERRLOG_H
#define PEVTUI_MCP_ERRLOG_H

#include <stddef.h>

/* The cap of a server's log in a run: its restarts and a --resume append to the same
 * file, and the bytes already there count. */
#define MCP_ERRLOG_CAP ((size_t)1 << 20)

struct mcp_errlog;

/* Starts copying what `fd` (the read end of the server's stderr; taken) gives to the
 * file at `path` (appended to, made 0600 if missing) while the file holds fewer than `cap`
 * bytes. A file that cannot be opened keeps nothing, and the stderr is still read. */
struct mcp_errlog *mcp_errlog_start(int fd, const char *path, size_t cap);
/* Copies what is still in the pipe (the server has ended), ends the thread, closes and
 * frees all. NULL: nothing. */
void mcp_errlog_stop(struct mcp_errlog *l);

#endif
