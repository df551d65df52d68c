/* oauth_url — the URL handling sign-in needs: an HTTP(S) URL's origin and path, the
 * canonical URI of an MCP server (RFC 8707 §2), form encoding, and the query of a
 * redirect. */
#ifndef PEVTUI_OAUTH_URL_H
#define PEVTUI_OAUTH_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

/* Splits "scheme://authority/path?query#frag": *origin "scheme://authority" (scheme and
 * host lower-cased), *path the path without a trailing '/' ("" for none); query and
 * fragment dropped. false for anything but http:// or https://. Caller frees both. */
bool oauth_url_split(const char *url, char **origin, char **path);
/* origin + path: the server's canonical URI (no query, no fragment). NULL when not
 * http(s). Caller frees. */
char *oauth_url_canonical(const char *url);
/* true for https://, and for http:// to a loopback host (tests, local servers). */
bool oauth_url_secure(const char *url);
/* Appends s percent-encoded for application/x-www-form-urlencoded (unreserved kept). */
void oauth_url_add_encoded(struct strbuf *sb, const char *s);
/* Appends "&name=value" (no '&' when sb is empty), value encoded; a NULL value: nothing. */
void oauth_url_add_param(struct strbuf *sb, const char *name, const char *value);
/* The decoded value of `name` in the query of `url` (after '?', before '#'); NULL when
 * absent. Caller frees. */
char *oauth_url_query_param(const char *url, const char *name);

#endif
