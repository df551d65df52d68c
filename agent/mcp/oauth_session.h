/* oauth_session — one MCP server's sign-in as its HTTP transport sees it: the bearer
 * token for each request (loaded from the token store, refreshed shortly before it
 * expires), and what to do when the server answers 401 or 403 insufficient_scope:
 * refresh, sign in (only where the operator takes part: `pevtui --mcp-login NAME`), or
 * give up with a sentence that names the command. Thread-safe (one lock per session;
 * the store's lock around refreshes, across processes too). */
#ifndef PEVTUI_OAUTH_SESSION_H
#define PEVTUI_OAUTH_SESSION_H

#include <stdbool.h>

#include "oauth_flow.h"

struct mcp_server_conf;
struct oauth_session;

/* A session for an HTTP server (NULL for a stdio server, or when its configured headers
 * already carry an Authorization). `conf` is copied as needed. Sign-in may happen only
 * when conf->sign_in is set; `prompt` (copied; NULL: none) is how. */
struct oauth_session *oauth_session_for(const struct mcp_server_conf *conf,
                                        const struct oauth_prompt *prompt);
void oauth_session_free(struct oauth_session *s);

/* The Authorization header line for the next request ("Authorization: Bearer …";
 * caller frees) or NULL before any sign-in; *gen identifies the token for
 * oauth_session_challenged. */
char *oauth_session_header(struct oauth_session *s, unsigned *gen);

/*
 * The server refused a request made with token `gen`: `status` 401 or 403,
 * `www_authenticate` its header (NULL: none). true: send the request again (the token
 * changed: refreshed, another request's sign-in, or a new sign-in, which counts in
 * *signins — at most three per request). false + *err (a sentence; caller frees).
 */
bool oauth_session_challenged(struct oauth_session *s, unsigned gen, long status,
                              const char *www_authenticate, int *signins, char **err);

/* The most sign-ins one request may cause (403 insufficient_scope asks again). */
#define OAUTH_SIGNINS_MAX 3

#endif
