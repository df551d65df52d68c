/* report_mcp — the "MCP servers" section of report.md: each server (started with how many
 * tools, failed and why, stopped) and its calls (how many, how many failed, refused at the
 * mcp gate). Read from the journal's events in order; renders markdown. */
#ifndef PEVTUI_REPORT_MCP_H
#define PEVTUI_REPORT_MCP_H

struct cJSON;
struct strbuf;

struct report_mcp;

struct report_mcp *report_mcp_new(void);
void report_mcp_free(struct report_mcp *m); /* NULL ok */
/* Takes one event (`o`, borrowed). */
void report_mcp_apply(struct report_mcp *m, int type, const struct cJSON *o);
/* "## MCP servers"; nothing when the run had none. */
void report_mcp_render(const struct report_mcp *m, struct strbuf *sb);

#endif
