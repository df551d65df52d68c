/* oauth_challenge — the Bearer challenge of a WWW-Authenticate header (RFC 6750 §3 and
 * RFC 9728 §5.1): where the protected resource metadata is, which scope the server wants,
 * and why it refused (invalid_token, insufficient_scope). */
#ifndef PEVTUI_OAUTH_CHALLENGE_H
#define PEVTUI_OAUTH_CHALLENGE_H

#include <stdbool.h>

/* Every string owned; NULL when the challenge did not say. */
struct oauth_challenge {
	bool bearer; /* a Bearer challenge was there */
	char *resource_metadata;
	char *scope;
	char *error;
};

/* Reads the Bearer challenge of `value` (one header's value; other schemes are skipped,
 * quoted strings unescaped, parameter names compared without case). `ch` is released
 * first. Bad syntax stops the reading; what was read stays. */
void oauth_challenge_parse(const char *value, struct oauth_challenge *ch);
void oauth_challenge_release(struct oauth_challenge *ch);

#endif
