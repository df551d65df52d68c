/* mcp_config — the operator's MCP servers: [mcp.NAME] sections of the config file, a
 * project's .mcp.json (the mcpServers object other agent tools write) and --mcp flags. */
#ifndef PEVTUI_MCP_CONFIG_H
#define PEVTUI_MCP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* Where a server's definition came from, weakest first: a later source replaces an
 * earlier one of the same name only when it is at least as strong. */
enum mcp_origin { MCP_FROM_PROJECT, MCP_FROM_CONFIG, MCP_FROM_FLAG };

/* One server, plain data (every string owned). */
struct mcp_server_conf {
	char *name;    /* [A-Za-z0-9_-], no "__": tools are offered as NAME__tool */
	char *command; /* stdio: the program (looked up in PATH) */
	struct strvec args;
	struct strvec env;     /* "KEY=VALUE": all the server sees besides PATH and HOME */
	char *cwd;             /* NULL: the workspace */
	char *url;             /* Streamable HTTP, used when there is no command */
	struct strvec headers; /* "Name: value" */
	/* OAuth sign-in (oauth_flow.h): a client registered for pevtui by hand, or the URL of
	 * a Client ID Metadata Document; NULL: dynamic registration. */
	char *client_id;
	char *client_secret;
	char *client_metadata_url;
	bool sign_in; /* not from the config: the browser sign-in may happen now
	               * (--mcp-login); in a run a server that needs it fails and says so */
	bool enabled;          /* default yes */
	int timeout_s;         /* per call and for start-up; default MCP_TIMEOUT_S */
	struct strvec allow;   /* tool-name globs that skip the mcp gate */
	int sandbox;           /* stdio: sandbox = workspace-write|read-only|off (enum
	                        * confine_mode, agent/confine/confine.h); default off */
	bool sandbox_network;  /* sandbox_network = yes|no; default no */
	enum mcp_origin origin;
};

struct mcp_conf {
	struct mcp_server_conf *v;
	size_t n, cap;
};

#define MCP_TIMEOUT_S 60
#define MCP_TIMEOUT_MAX_S 3600

void mcp_conf_release(struct mcp_conf *c);
/* A deep copy of `from` into `to` (which is released first). */
void mcp_conf_copy(struct mcp_conf *to, const struct mcp_conf *from);
/* The server named `name`, or NULL. */
const struct mcp_server_conf *mcp_conf_find(const struct mcp_conf *c, const char *name);
/* NULL when `name` may name a server, else why not (static). */
const char *mcp_conf_name_problem(const char *name);

/*
 * One key of a [mcp.NAME] config section (command, args, env, cwd, url, headers, enabled,
 * timeout, allow, client_id, client_secret, client_metadata_url). Lists are a JSON array (["-y", "pkg"]) or comma-separated; env and
 * headers a JSON object or "K=V, K2=V2". false + *err (a sentence; caller frees).
 */
bool mcp_conf_set_key(struct mcp_conf *c, const char *server, const char *key, const char *value,
                      char **err);
/* "NAME=COMMAND ARG…" of --mcp (words split on blanks, '…' and "…" quote). */
bool mcp_conf_add_flag(struct mcp_conf *c, const char *spec, char **err);
/* Reads the mcpServers object of a .mcp.json file; servers already defined (by the config
 * or a flag) are kept. A missing file is fine. false + *err naming the file. */
bool mcp_conf_load_json(struct mcp_conf *c, const char *path, char **err);
/* After everything is read: each enabled server has a command (false + *err otherwise). */
bool mcp_conf_check(const struct mcp_conf *c, char **err);

#endif
