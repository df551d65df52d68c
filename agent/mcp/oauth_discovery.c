/* oauth_discovery — the order of the MCP authorization specification (2025-11-25):
 * protected resource metadata from the challenge's URL, else
 * /.well-known/oauth-protected-resource/<path>, then /.well-known/oauth-protected-resource;
 * its first authorization server's metadata at, for an issuer with path /p,
 * /.well-known/oauth-authorization-server/p, /.well-known/openid-configuration/p,
 * /p/.well-known/openid-configuration (without a path: the first two at the root). No
 * protected resource metadata (a 2025-03-26 server): the MCP server's origin is the
 * authorization server; no metadata there either: /authorize, /token, /register. */
#include "config.h"

#include "oauth_discovery.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "oauth_fetch.h"
#include "oauth_url.h"
#include "xalloc.h"

void oauth_meta_release(struct oauth_meta *m)
{
	free(m->resource);
	strvec_clear(&m->scopes_supported);
	free(m->issuer);
	free(m->authorization_endpoint);
	free(m->token_endpoint);
	free(m->registration_endpoint);
	strvec_clear(&m->auth_methods);
	memset(m, 0, sizeof(*m));
}

/* GETs url; the JSON object it answers with 200, else NULL. */
static cJSON *get_json(const char *url)
{
	struct strbuf body = STRBUF_INIT;
	strbuf_init(&body);
	char *err = NULL;
	struct oauth_request req = {.url = url};
	long st = oauth_fetch(&req, &body, &err);
	free(err);
	cJSON *j = st == 200 ? cJSON_Parse(body.buf) : NULL;
	strbuf_release(&body);
	if (j && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

static char *str_of(const cJSON *o, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	return s && *s ? xstrdup(s) : NULL;
}

static void strings_of(const cJSON *o, const char *key, struct strvec *out)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, key))
	{
		if (cJSON_IsString(it) && *it->valuestring)
			strvec_push(out, it->valuestring);
	}
}

static bool has(const cJSON *o, const char *key, const char *value)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, key))
	{
		if (cJSON_IsString(it) && !strcmp(it->valuestring, value))
			return true;
	}
	return false;
}

/* The protected resource metadata, in the specified order. */
static cJSON *resource_metadata(const char *origin, const char *path, const char *hinted)
{
	cJSON *j = hinted && oauth_url_secure(hinted) ? get_json(hinted) : NULL;
	if (!j && *path) {
		char *u = xasprintf("%s/.well-known/oauth-protected-resource%s", origin, path);
		j = get_json(u);
		free(u);
	}
	if (!j) {
		char *u = xasprintf("%s/.well-known/oauth-protected-resource", origin);
		j = get_json(u);
		free(u);
	}
	return j;
}

/* The authorization server's metadata for `issuer`, in the specified order. */
static cJSON *server_metadata(const char *issuer)
{
	char *origin, *path;
	if (!oauth_url_split(issuer, &origin, &path))
		return NULL;
	char *urls[3] = {0};
	if (*path) {
		urls[0] = xasprintf("%s/.well-known/oauth-authorization-server%s", origin, path);
		urls[1] = xasprintf("%s/.well-known/openid-configuration%s", origin, path);
		urls[2] = xasprintf("%s%s/.well-known/openid-configuration", origin, path);
	} else {
		urls[0] = xasprintf("%s/.well-known/oauth-authorization-server", origin);
		urls[1] = xasprintf("%s/.well-known/openid-configuration", origin);
	}
	cJSON *j = NULL;
	for (size_t i = 0; i < 3 && urls[i] && !j; i++)
		j = get_json(urls[i]);
	for (size_t i = 0; i < 3; i++)
		free(urls[i]);
	free(origin);
	free(path);
	return j;
}

/* RFC 9728 §3.3: the metadata's resource is the server's URL or a parent of it. */
static bool resource_covers(const char *resource, const char *mcp_url)
{
	char *r = oauth_url_canonical(resource), *u = oauth_url_canonical(mcp_url);
	size_t n = r ? strlen(r) : 0;
	bool ok = r && u && !strncmp(r, u, n) && (u[n] == '\0' || u[n] == '/');
	free(r);
	free(u);
	return ok;
}

static bool endpoint_ok(const char *what, const char *url, char **err)
{
	if (url && oauth_url_secure(url))
		return true;
	*err = xasprintf("the authorization server's %s (%s) is not an https URL", what,
	                 url ? url : "missing");
	return false;
}

bool oauth_discover(const char *mcp_url, const char *hinted, struct oauth_meta *m, char **err)
{
	oauth_meta_release(m);
	char *origin, *path;
	if (!oauth_url_split(mcp_url, &origin, &path)) {
		*err = xasprintf("%s is not an http(s) URL", mcp_url);
		return false;
	}
	bool ok = false;
	cJSON *as = NULL, *prm = resource_metadata(origin, path, hinted);
	if (prm) {
		m->resource = str_of(prm, "resource");
		strings_of(prm, "scopes_supported", &m->scopes_supported);
		const cJSON *servers = cJSON_GetObjectItemCaseSensitive(prm, "authorization_servers");
		m->issuer = xstrdup(cJSON_GetStringValue(cJSON_GetArrayItem(servers, 0)));
		if (!m->issuer) {
			*err = xasprintf("the protected resource metadata of %s names no authorization "
			                 "server",
			                 mcp_url);
			goto out;
		}
	} else
		m->issuer = xstrdup(origin);
	if (m->resource && !resource_covers(m->resource, mcp_url)) {
		*err = xasprintf("the protected resource metadata of %s is for another resource (%s)",
		                 mcp_url, m->resource);
		goto out;
	}
	if (!m->resource)
		m->resource = oauth_url_canonical(mcp_url);
	as = server_metadata(m->issuer);
	if (!as && prm) {
		*err = xasprintf("the authorization server %s publishes no metadata", m->issuer);
		goto out;
	}
	if (!as) {
		m->defaults = true;
		m->authorization_endpoint = xasprintf("%s/authorize", origin);
		m->token_endpoint = xasprintf("%s/token", origin);
		m->registration_endpoint = xasprintf("%s/register", origin);
		ok = true;
		goto out;
	}
	if (!has(as, "code_challenge_methods_supported", "S256")) {
		*err = xasprintf("the authorization server %s does not support PKCE with S256, which "
		                 "MCP requires; pevtui will not sign in there",
		                 m->issuer);
		goto out;
	}
	m->authorization_endpoint = str_of(as, "authorization_endpoint");
	m->token_endpoint = str_of(as, "token_endpoint");
	m->registration_endpoint = str_of(as, "registration_endpoint");
	strings_of(as, "token_endpoint_auth_methods_supported", &m->auth_methods);
	m->cimd = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(as, "client_id_metadata_document_supported"));
	ok = endpoint_ok("authorization endpoint", m->authorization_endpoint, err) &&
	     endpoint_ok("token endpoint", m->token_endpoint, err) &&
	     (!m->registration_endpoint ||
	      endpoint_ok("registration endpoint", m->registration_endpoint, err));
out:
	cJSON_Delete(prm);
	cJSON_Delete(as);
	free(origin);
	free(path);
	if (!ok)
		oauth_meta_release(m);
	return ok;
}
