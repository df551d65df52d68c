/* report_mcp — the "MCP servers" section of report.md: each server (started with how many
 * tools, failed and why, stopped) and its calls (how many, how many failed, refused at the
 * mcp gate). Read from the journal's events in order; renders markdown. */
#include "config.h"

#include "report_mcp.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fold.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

struct server {
	char *name;
	struct strbuf story; /* "started (N tools, protocol P)", "failed: …", "stopped" */
	int calls, failed, refused;
};

struct report_mcp {
	struct server *v;
	size_t n, cap;
};

struct report_mcp *report_mcp_new(void)
{
	return xcalloc(1, sizeof(struct report_mcp));
}

void report_mcp_free(struct report_mcp *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].name);
		strbuf_release(&m->v[i].story);
	}
	free(m->v);
	free(m);
}

static struct server *server_get(struct report_mcp *m, const char *name)
{
	struct server *s;

	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->v[i].name, name))
			return &m->v[i];
	m->v = xgrow(m->v, &m->cap, m->n + 1, sizeof(*m->v));
	s = &m->v[m->n++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	strbuf_init(&s->story);
	return s;
}

static void add_clean(struct strbuf *sb, const char *s)
{
	char *c = textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);
	strbuf_adds(sb, c);
	free(c);
}

void report_mcp_apply(struct report_mcp *m, int type, const cJSON *o)
{
	const char *server, *kind;
	struct server *s;

	/* Only these two types name a server: the others are not searched for one. */
	if (type != EV_NOTICE && type != EV_TOOL_RESULT)
		return;
	server = jsonx_str(o, "server");
	kind = jsonx_str(o, "kind");
	if (!server)
		return;
	if (type == EV_NOTICE && kind && !strcmp(kind, "mcp_server")) {
		const char *state = jsonx_str(o, "state");
		double tools = 0;

		s = server_get(m, server);
		if (s->story.len)
			strbuf_adds(&s->story, "; ");
		if (state && !strcmp(state, "started")) {
			jsonx_num(o, "tools", &tools);
			strbuf_addf(&s->story, "started (%.0f tool%s, protocol ", tools,
			            tools == 1 ? "" : "s");
			add_clean(&s->story,
			          jsonx_str(o, "protocol") ? jsonx_str(o, "protocol") : "?");
			strbuf_adds(&s->story, ")");
		} else if (state && !strcmp(state, "failed")) {
			strbuf_adds(&s->story, "failed: ");
			add_clean(&s->story, jsonx_str(o, "message"));
		} else {
			add_clean(&s->story, state ? state : "?");
		}
	} else if (type == EV_TOOL_RESULT) {
		const char *approval = jsonx_str(o, "approval");
		bool ok = false, ran = true;

		s = server_get(m, server);
		jsonx_bool(o, "ok", &ok);
		jsonx_bool(o, "ran", &ran);
		s->calls++;
		if (!ran && approval && !strcmp(approval, "refused"))
			s->refused++;
		else if (!ok)
			s->failed++;
	}
}

void report_mcp_render(const struct report_mcp *m, struct strbuf *sb)
{
	if (!m || !m->n)
		return;
	strbuf_adds(sb, "## MCP servers\n\n");
	for (size_t i = 0; i < m->n; i++) {
		const struct server *s = &m->v[i];
		strbuf_adds(sb, "- ");
		add_clean(sb, s->name);
		strbuf_addf(sb, ": %s; %d call%s", s->story.len ? s->story.buf : "no notice",
		            s->calls, s->calls == 1 ? "" : "s");
		if (s->failed)
			strbuf_addf(sb, ", %d failed", s->failed);
		if (s->refused)
			strbuf_addf(sb, ", %d refused at the mcp gate", s->refused);
		strbuf_adds(sb, "\n");
	}
	strbuf_adds(sb, "\n");
}
