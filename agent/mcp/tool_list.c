/* tool_list — `pevtui --list-tools`: every tool the executor would be offered, built-in
 * and MCP, with its server and gate policy. */
#include "config.h"

#include "tool_list.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "mcp_hub.h"
#include "confine.h"
#include "settings.h"
#include "textsan.h"
#include "tool.h"
#include "xalloc.h"

#define DESC_COLS 48

struct row {
	char *tool, *server, *gate, *desc;
};

static void add_row(struct row **rows, size_t *n, size_t *cap, const char *tool, const char *server,
                    char *gate, const char *desc)
{
	char *clean = textsan_clean(desc ? desc : "", desc ? strlen(desc) : 0, 0);
	struct row *r;

	*rows = xgrow(*rows, cap, *n + 1, sizeof(**rows));
	r = &(*rows)[(*n)++];
	r->tool = xstrdup(tool);
	r->server = xstrdup(server);
	r->gate = gate;
	r->desc = textsan_truncate(clean, DESC_COLS);
	free(clean);
}

static void on_server(void *ctx, const char *server, bool ok, bool stopped, size_t n_tools,
                      const char *protocol, const char *err)
{
	int *failed = ctx;

	(void)server;
	(void)n_tools;
	(void)protocol;
	if (!ok && !stopped) {
		fprintf(stderr, "pevtui: %s\n", err ? err : "an MCP server failed");
		*failed = 1;
	}
}

int tool_list_print(FILE *out, const struct settings *s)
{
	size_t total, n = 0, cap = 0, wt = 4, ws = 6, wg = 4;
	const struct tool_def *const *all = tool_registry(&total);
	bool shell_gate = (s->gates & GATE_MASK(GATE_SHELL)) != 0;
	bool mcp_gate = (s->gates & GATE_MASK(GATE_MCP)) != 0;
	char *cwd = getcwd(NULL, 0);
	const char *where = s->workspace ? s->workspace : cwd;
	struct mcp_hub *hub = mcp_hub_new(&s->mcp, NULL, where);
	/* The sandbox as a run would have it: the line below the table, and the layers for
	 * the servers whose config asks to be confined. */
	struct confine_setup setup = {.mode = (enum confine_mode)s->sandbox_mode,
	                              .network = s->sandbox_network,
	                              .workspace = where,
	                              .run_id = "list-tools",
	                              .helper = s->sandbox_helper,
	                              .home = getenv("HOME"),
	                              .writable = &s->sandbox_writable,
	                              .deny_read = &s->sandbox_deny_read};
	struct confine_session *sb = confine_session_new(&setup);
	struct mcp_offer offer;
	struct row *rows = NULL;
	int failed = 0;

	for (size_t i = 0; i < total; i++) {
		char *gate;
		if (!strcmp(all[i]->name, "run_shell"))
			gate = !shell_gate        ? xstrdup("none (the shell gate is off)")
			       : s->shell_allow.n ? xstrdup("shell, unless on shell_allow")
			                          : xstrdup("shell");
		else
			gate = xstrdup("none");
		add_row(&rows, &n, &cap, all[i]->name,
		        all[i]->demo_only ? "built-in (demo only)" : "built-in", gate,
		        all[i]->description);
	}
	mcp_hub_set_sandbox(hub, sb);
	mcp_hub_start(hub, on_server, &failed);
	mcp_hub_offer(hub, &offer);
	for (size_t i = 0; i < offer.n; i++) {
		char *server = NULL, *tool = NULL, *gate;
		const char *pattern = NULL;

		mcp_hub_lookup(hub, offer.v[i].name, &server, &tool, NULL, NULL);
		if (!mcp_gate)
			gate = xstrdup("none (the mcp gate is off)");
		else if (mcp_hub_allowed(hub, server, tool, &pattern))
			gate = xasprintf("none (allow: %s)", pattern);
		else
			gate = xstrdup("mcp");
		/* The description as the model gets it starts with "[MCP server NAME] ". */
		add_row(&rows, &n, &cap, offer.v[i].name, server, gate,
		        offer.v[i].description + strlen("[MCP server ] ") + strlen(server));
		free(server);
		free(tool);
	}
	mcp_offer_release(&offer);
	mcp_hub_stop(hub);
	mcp_hub_free(hub);
	free(cwd);

	for (size_t i = 0; i < n; i++) {
		size_t a = strlen(rows[i].tool), b = strlen(rows[i].server),
		       c = strlen(rows[i].gate);
		wt = a > wt ? a : wt;
		ws = b > ws ? b : ws;
		wg = c > wg ? c : wg;
	}
	fprintf(out, "%-*s  %-*s  %-*s  %s\n", (int)wt, "TOOL", (int)ws, "SERVER", (int)wg, "GATE",
	        "DESCRIPTION");
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%-*s  %-*s  %-*s  %s\n", (int)wt, rows[i].tool, (int)ws,
		        rows[i].server, (int)wg, rows[i].gate, rows[i].desc);
		free(rows[i].tool);
		free(rows[i].server);
		free(rows[i].gate);
		free(rows[i].desc);
	}
	free(rows);
	fprintf(out, "\n%s\n", confine_session_line(sb));
	confine_session_free(sb);
	return failed;
}
