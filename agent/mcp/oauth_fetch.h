/* oauth_fetch — the plain HTTP requests of sign-in (metadata GETs, token and registration
 * POSTs): blocking, bounded in time and size, one libcurl handle per request. */
#ifndef PEVTUI_OAUTH_FETCH_H
#define PEVTUI_OAUTH_FETCH_H

#include "strbuf.h"

struct oauth_request {
	const char *url;
	const char *body;         /* NULL: GET; else POST */
	const char *content_type; /* of body: default application/x-www-form-urlencoded */
	const char *authorization; /* "Basic …" or NULL */
	long timeout_ms;           /* 0: 30 s */
};

/* The HTTP status (0 + *err, a sentence, when no answer came); the answer's body, at
 * most 1 MiB, in *body (reset first). Redirects are not followed. */
long oauth_fetch(const struct oauth_request *req, struct strbuf *body, char **err);

#endif
