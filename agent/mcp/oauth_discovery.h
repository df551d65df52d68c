/* oauth_discovery — where and how to sign in to an MCP server: its protected resource
 * metadata (RFC 9728), its authorization server's metadata (RFC 8414, OpenID Connect
 * discovery), or the 2025-03-26 default endpoints when there is none. */
#ifndef PEVTUI_OAUTH_DISCOVERY_H
#define PEVTUI_OAUTH_DISCOVERY_H

#include <stdbool.h>

#include "strbuf.h"

/* Plain data, every string owned. */
struct oauth_meta {
	char *resource; /* the `resource` sent (RFC 8707): the metadata's, else the canonical URL */
	struct strvec scopes_supported; /* the protected resource's, else the server's */
	char *issuer;
	char *authorization_endpoint;
	char *token_endpoint;
	char *registration_endpoint; /* NULL: no dynamic registration */
	struct strvec auth_methods;  /* token_endpoint_auth_methods_supported (empty: unsaid) */
	bool cimd;                   /* client_id_metadata_document_supported */
	bool defaults;               /* no metadata: the 2025-03-26 default endpoints */
};

void oauth_meta_release(struct oauth_meta *m);

/*
 * Discovers for the MCP server at `mcp_url`; `resource_metadata` is the challenge's URL
 * (NULL: the well-known ones, path-based first, then the root). Refuses (false + *err, a
 * sentence; caller frees) an authorization server that does not advertise PKCE S256, and
 * an endpoint that is neither https nor loopback http.
 */
bool oauth_discover(const char *mcp_url, const char *resource_metadata, struct oauth_meta *m,
                    char **err);

#endif
