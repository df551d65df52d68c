/* oauth_pkce — PKCE (RFC 7636) with S256 only, and the random strings sign-in needs
 * (verifier, state), from the operating system's random source via OpenSSL. */
#ifndef PEVTUI_OAUTH_PKCE_H
#define PEVTUI_OAUTH_PKCE_H

#include <stddef.h>

/* `nbytes` random bytes as unpadded base64url (43 characters for 32). Caller frees. */
char *oauth_pkce_random(size_t nbytes);
/* BASE64URL(SHA256(verifier)), unpadded. Caller frees. */
char *oauth_pkce_challenge(const char *verifier);
/* Standard base64 (padded) of data, for HTTP Basic. Caller frees. */
char *oauth_pkce_base64(const void *data, size_t n);

#endif
