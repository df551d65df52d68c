/* oauth_challenge — WWW-Authenticate: Bearer k=v, k="v". The grammar (RFC 9110 §11.6.1):
 * challenges separated by commas, each a scheme then auth-params; a token followed by
 * something other than '=' starts the next challenge. */
#include "config.h"

#include "oauth_challenge.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strbuf.h"
#include "xalloc.h"

void oauth_challenge_release(struct oauth_challenge *ch)
{
	free(ch->resource_metadata);
	free(ch->scope);
	free(ch->error);
	memset(ch, 0, sizeof(*ch));
}

static bool tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~/", c));
}

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == ',')
		p++;
	return p;
}

static const char *token_end(const char *p)
{
	while (tchar(*p))
		p++;
	return p;
}

/* A value after '=': a quoted string (unescaped) or a token (token68 '=' padding too).
 * NULL at bad syntax. */
static char *read_value(const char **pp)
{
	const char *p = *pp;
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			strbuf_addc(&sb, *p);
		}
		if (*p != '"') {
			strbuf_release(&sb);
			return NULL;
		}
		p++;
	} else {
		const char *e = token_end(p);
		while (*e == '=')
			e++;
		strbuf_add(&sb, p, (size_t)(e - p));
		p = e;
	}
	*pp = p;
	return strbuf_detach(&sb);
}

static void keep(char **slot, char *value)
{
	if (*slot) /* the first of a repeated parameter counts */
		free(value);
	else
		*slot = value;
}

void oauth_challenge_parse(const char *value, struct oauth_challenge *ch)
{
	oauth_challenge_release(ch);
	if (!value)
		return;
	bool in_bearer = false;
	const char *p = skip_ows(value);
	while (*p) {
		const char *name = p, *ne = token_end(p);
		if (ne == name)
			return;
		const char *q = ne;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '=') { /* a scheme: the next challenge starts */
			in_bearer = (size_t)(ne - name) == 6 && !strncasecmp(name, "Bearer", 6);
			ch->bearer = ch->bearer || in_bearer;
			p = skip_ows(q);
			continue;
		}
		q++;
		while (*q == ' ' || *q == '\t')
			q++;
		char *v = read_value(&q);
		if (!v)
			return;
		size_t n = (size_t)(ne - name);
		if (!in_bearer)
			free(v);
		else if (n == 17 && !strncasecmp(name, "resource_metadata", n))
			keep(&ch->resource_metadata, v);
		else if (n == 5 && !strncasecmp(name, "scope", n))
			keep(&ch->scope, v);
		else if (n == 5 && !strncasecmp(name, "error", n))
			keep(&ch->error, v);
		else
			free(v);
		p = skip_ows(q);
	}
}
