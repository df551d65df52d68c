/* mcp_result — a tools/call result as text the model reads: text content joined, images,
 * audio and binary resources saved beneath the workspace (mcp-files/SERVER-TOOL-N.EXT, names
 * pevtui makes) and named, structuredContent as JSON unless a text block is the same
 * JSON; then cleaned of terminal controls and bounded. */
#ifndef PEVTUI_MCP_RESULT_H
#define PEVTUI_MCP_RESULT_H

#include <stddef.h>

#include "strbuf.h"

struct cJSON;

/* Appends the result `res` (borrowed) of `server`'s `tool` to out; *files counts the
 * files saved for the server (their names). ws_fd < 0: nothing is saved (said so). */
void mcp_result_render(const struct cJSON *res, const char *server, const char *tool,
                       unsigned long *files, int ws_fd, struct strbuf *out);
/* Cleans out (terminal controls out, lines and tabs kept) and cuts it at max bytes with a
 * note (0: no cut). */
void mcp_result_bound(struct strbuf *out, size_t max);

#endif
