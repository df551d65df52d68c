/* oauth_flow — the OAuth 2.1 authorization code flow with PKCE as MCP asks for it:
 * client registration (configured client, Client ID Metadata Document, or dynamic
 * registration, RFC 7591), the authorization request with `resource` (RFC 8707) and a
 * verified `state`, the token request with the server's client authentication (basic,
 * post or none), and refreshing. */
#ifndef PEVTUI_OAUTH_FLOW_H
#define PEVTUI_OAUTH_FLOW_H

#include <stdbool.h>
#include <stdio.h>

#include "oauth_discovery.h"
#include "oauth_tokens.h"

/* How pevtui is known to the authorization server (borrowed strings; NULL: unset). */
struct oauth_client_conf {
	const char *client_id;           /* [mcp.NAME] client_id */
	const char *client_secret;       /* [mcp.NAME] client_secret */
	const char *client_metadata_url; /* [mcp.NAME] client_metadata_url (https) */
};

/* How the operator takes part: the authorization URL is opened with open_url (NULL: only
 * told on `tell`), the redirect comes to a local listener or as a line on paste_fd. */
struct oauth_prompt {
	bool (*open_url)(const char *url, FILE *tell);
	FILE *tell;      /* where the operator reads what to do (never a token) */
	int paste_fd;    /* -1: no pasting */
	long timeout_ms; /* for the redirect; 0: 5 minutes */
};

/*
 * Signs in: registers (unless configured), sends the operator to the authorization
 * endpoint asking for `scope` (NULL: none) and exchanges the code. *g gets the client and
 * the tokens (server_url set to `server_url`). false + *err (a sentence without secrets).
 */
bool oauth_flow_authorize(const char *server_url, const struct oauth_meta *m,
                          const struct oauth_client_conf *cc, const char *scope,
                          const struct oauth_prompt *p, struct oauth_grant *g, char **err);

/* Exchanges g's refresh token for new tokens (kept in *g, with the rotated refresh token
 * when the server sends one). false + *err; *revoked when the server refused the refresh
 * token itself (invalid_grant): sign in again. */
bool oauth_flow_refresh(struct oauth_grant *g, bool *revoked, char **err);

/* The token endpoint authentication to use given what the server supports (an empty
 * list means client_secret_basic, RFC 8414) and whether there is a secret. */
const char *oauth_flow_auth_method(const struct strvec *supported, bool have_secret);

#endif
