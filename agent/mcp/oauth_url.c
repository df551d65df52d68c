/* oauth_url — small URL helpers for sign-in (no general URL parser: what RFC 9728 and
 * RFC 8414 need to build well-known addresses, and a redirect's query). */
#include "config.h"

#include "oauth_url.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

bool oauth_url_split(const char *url, char **origin, char **path)
{
	*origin = *path = NULL;
	size_t skip;
	if (!url)
		return false;
	if (!strncasecmp(url, "https://", 8))
		skip = 8;
	else if (!strncasecmp(url, "http://", 7))
		skip = 7;
	else
		return false;
	size_t auth = strcspn(url + skip, "/?#");
	if (auth == 0)
		return false;
	char *o = xstrndup(url, skip + auth);
	for (char *c = o; *c && *c != '@'; c++) /* scheme and host; userinfo is not there */
		*c = (char)tolower((unsigned char)*c);
	const char *p = url + skip + auth;
	size_t plen = *p == '/' ? strcspn(p, "?#") : 0;
	while (plen > 0 && p[plen - 1] == '/')
		plen--;
	*origin = o;
	*path = xstrndup(p, plen);
	return true;
}

char *oauth_url_canonical(const char *url)
{
	char *o, *p;
	if (!oauth_url_split(url, &o, &p))
		return NULL;
	char *c = xasprintf("%s%s", o, p);
	free(o);
	free(p);
	return c;
}

bool oauth_url_secure(const char *url)
{
	if (url && !strncasecmp(url, "https://", 8))
		return true;
	if (!url || strncasecmp(url, "http://", 7))
		return false;
	const char *h = url + 7;
	static const char *const loop[] = {"127.0.0.1", "localhost", "[::1]"};
	for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++) {
		size_t n = strlen(loop[i]);
		if (!strncasecmp(h, loop[i], n) && strchr(":/?#", h[n] ? h[n] : '/'))
			return true;
	}
	return false;
}

void oauth_url_add_encoded(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (isalnum(*c) || strchr("-._~", *c))
			strbuf_addc(sb, (char)*c);
		else {
			strbuf_addc(sb, '%');
			strbuf_addc(sb, hex[*c >> 4]);
			strbuf_addc(sb, hex[*c & 15]);
		}
	}
}

void oauth_url_add_param(struct strbuf *sb, const char *name, const char *value)
{
	if (!value)
		return;
	if (sb->len)
		strbuf_addc(sb, '&');
	oauth_url_add_encoded(sb, name);
	strbuf_addc(sb, '=');
	oauth_url_add_encoded(sb, value);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static char *decode(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+')
			strbuf_addc(&sb, ' ');
		else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			strbuf_addc(&sb, (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2])));
			i += 2;
		} else
			strbuf_addc(&sb, s[i]);
	}
	return strbuf_detach(&sb);
}

char *oauth_url_query_param(const char *url, const char *name)
{
	const char *q = url ? strchr(url, '?') : NULL;
	if (!q)
		return NULL;
	q++;
	size_t qlen = strcspn(q, "#");
	size_t nlen = strlen(name);
	while (qlen > 0) {
		size_t plen = strcspn(q, "&");
		if (plen > qlen)
			plen = qlen;
		if (plen > nlen && !strncmp(q, name, nlen) && q[nlen] == '=')
			return decode(q + nlen + 1, plen - nlen - 1);
		if (plen == nlen && !strncmp(q, name, nlen))
			return xstrdup("");
		q += plen;
		qlen -= plen;
		if (qlen > 0) {
			q++;
			qlen--;
		}
	}
	return NULL;
}
