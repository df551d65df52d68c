/* oauth_pkce — S256 code challenges: SHA-256 and random bytes come from OpenSSL's
 * libcrypto (Debian's libssl-dev; the README says why). */
#include "config.h"

#include "oauth_pkce.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "xalloc.h"

char *oauth_pkce_base64(const void *data, size_t n)
{
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, data, (int)n);
	return out;
}

static char *base64url(const unsigned char *data, size_t n)
{
	char *s = oauth_pkce_base64(data, n);
	size_t len = strlen(s);
	while (len > 0 && s[len - 1] == '=')
		s[--len] = '\0';
	for (char *c = s; *c; c++)
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	return s;
}

char *oauth_pkce_random(size_t nbytes)
{
	unsigned char *buf = xmalloc(nbytes ? nbytes : 1);
	if (RAND_bytes(buf, (int)nbytes) != 1)
		fatal("no random bytes for sign-in (OpenSSL RAND_bytes failed)");
	char *s = base64url(buf, nbytes);
	free(buf);
	return s;
}

char *oauth_pkce_challenge(const char *verifier)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)verifier, strlen(verifier), md);
	return base64url(md, sizeof(md));
}
