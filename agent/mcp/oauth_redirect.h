/* oauth_redirect — where the browser comes back after sign-in: a listener on 127.0.0.1
 * on a free port (redirect URI http://127.0.0.1:PORT/callback), or, for SSH and machines
 * without a browser, the redirected URL pasted by the operator on a descriptor. */
#ifndef PEVTUI_OAUTH_REDIRECT_H
#define PEVTUI_OAUTH_REDIRECT_H

#include <stdbool.h>

struct oauth_redirect;

/* Listens on 127.0.0.1 on a port the kernel picks; NULL + *err. */
struct oauth_redirect *oauth_redirect_new(char **err);
void oauth_redirect_free(struct oauth_redirect *r);
/* "http://127.0.0.1:PORT/callback" (borrowed). */
const char *oauth_redirect_uri(const struct oauth_redirect *r);

/*
 * Waits up to timeout_ms for the redirect: a GET /callback?… on the listener (answered
 * with a page that says to go back to the terminal), or a line on paste_fd (-1: none)
 * holding the redirected URL (or only its query). The whole URL in *url (caller frees);
 * false + *err (a sentence) on timeout or when paste_fd ends with nothing.
 */
bool oauth_redirect_wait(struct oauth_redirect *r, int paste_fd, long timeout_ms, char **url,
                        char **err);

#endif
