/* oauth_login — the terminal sign-in: `pevtui --mcp-login NAME` connects to the server
 * with sign-in allowed (the authorization URL opened with $BROWSER, else xdg-open when
 * there is a display, else only printed; the redirect taken on 127.0.0.1 or pasted on
 * stdin), and `pevtui --mcp-logout NAME` forgets the server's tokens. */
#ifndef PEVTUI_OAUTH_LOGIN_H
#define PEVTUI_OAUTH_LOGIN_H

#include <stdbool.h>
#include <stdio.h>

struct mcp_conf;
struct mcp_server_conf;
struct oauth_prompt;

/* How sign-in meets the operator for server `s`: NULL unless s->sign_in (in a run a
 * server that needs sign-in fails with a sentence naming --mcp-login instead). */
const struct oauth_prompt *oauth_login_prompt(const struct mcp_server_conf *s);

/* Opens url with $BROWSER (its first entry when it is a ':' list), else xdg-open when
 * DISPLAY or WAYLAND_DISPLAY is set; false when neither (the URL is already printed).
 * Does not wait for the browser. */
bool oauth_login_open_url(const char *url, FILE *tell);

/* --mcp-login NAME (logout false) or --mcp-logout NAME (true): the exit status; what
 * happened on out, why not on err. */
int oauth_login_main(const struct mcp_conf *conf, const char *name, bool logout,
                     const char *workspace, FILE *out, FILE *err);

#endif
