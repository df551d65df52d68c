/* oauth_session — the token of one server, in memory and in the store. */
#include "config.h"

#include "oauth_session.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcp_config.h"
#include "oauth_challenge.h"
#include "oauth_discovery.h"
#include "oauth_tokens.h"
#include "xalloc.h"

/* A token is refreshed this close to its expiry, or half its lifetime when that is less
 * (a server handing out short tokens is not asked for a new one at every request). */
#define REFRESH_AHEAD_S 60

struct oauth_session {
	pthread_mutex_t mu;
	char *name, *url;
	char *client_id, *client_secret, *client_metadata_url;
	bool may_sign_in;
	struct oauth_prompt prompt;
	bool loaded;
	struct oauth_grant grant; /* access_token NULL: none */
	unsigned gen;             /* bumped whenever the token changes */
};

static bool has_authorization(const struct strvec *headers)
{
	for (size_t i = 0; i < headers->n; i++)
		if (!strncasecmp(headers->v[i], "Authorization:", 14))
			return true;
	return false;
}

struct oauth_session *oauth_session_for(const struct mcp_server_conf *conf,
                                        const struct oauth_prompt *prompt)
{
	if (!conf->url || conf->command || has_authorization(&conf->headers))
		return NULL;
	struct oauth_session *s = xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->name = xstrdup(conf->name);
	s->url = xstrdup(conf->url);
	s->client_id = xstrdup(conf->client_id);
	s->client_secret = xstrdup(conf->client_secret);
	s->client_metadata_url = xstrdup(conf->client_metadata_url);
	s->may_sign_in = conf->sign_in;
	if (prompt)
		s->prompt = *prompt;
	else
		s->prompt.paste_fd = -1;
	return s;
}

void oauth_session_free(struct oauth_session *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->mu);
	free(s->name);
	free(s->url);
	free(s->client_id);
	free(s->client_secret);
	free(s->client_metadata_url);
	oauth_grant_release(&s->grant);
	free(s);
}

static bool expiring(const struct oauth_grant *g)
{
	long long ahead = REFRESH_AHEAD_S, life = g->expires_at - g->issued_at;
	if (g->issued_at && life >= 0 && life / 2 < ahead)
		ahead = life / 2;
	return g->expires_at && (long long)time(NULL) >= g->expires_at - ahead;
}

/* With s->mu held: refreshes under the store's lock. Another process may have refreshed
 * first (the refresh token we hold is then spent): its fresh token is taken instead. */
static bool refresh(struct oauth_session *s, char **err)
{
	int fd = oauth_tokens_lock(err);
	if (fd < 0)
		return false;
	struct oauth_grant stored = {0};
	bool ok = false, revoked = false;
	if (oauth_tokens_load(s->url, &stored) && stored.access_token &&
	    (!s->grant.access_token || strcmp(stored.access_token, s->grant.access_token)) &&
	    !expiring(&stored)) {
		oauth_grant_copy(&s->grant, &stored);
		ok = true;
	} else {
		if (stored.refresh_token) /* the newest we know of */
			oauth_grant_copy(&s->grant, &stored);
		ok = oauth_flow_refresh(&s->grant, &revoked, err) && oauth_tokens_save(&s->grant, err);
	}
	oauth_grant_release(&stored);
	oauth_tokens_unlock(fd);
	if (ok)
		s->gen++;
	else if (revoked) { /* spent or revoked: only a sign-in helps */
		free(s->grant.access_token);
		free(s->grant.refresh_token);
		s->grant.access_token = s->grant.refresh_token = NULL;
	}
	return ok;
}

static void load(struct oauth_session *s)
{
	char *err = NULL;
	int fd = oauth_tokens_lock(&err);
	if (fd >= 0) {
		oauth_tokens_load(s->url, &s->grant);
		oauth_tokens_unlock(fd);
	}
	free(err);
	s->loaded = true;
}

char *oauth_session_header(struct oauth_session *s, unsigned *gen)
{
	pthread_mutex_lock(&s->mu);
	if (!s->loaded)
		load(s);
	if (s->grant.access_token && expiring(&s->grant) && s->grant.refresh_token) {
		char *err = NULL;
		refresh(s, &err); /* failing here, the server's 401 decides what follows */
		free(err);
	}
	char *line = s->grant.access_token
	                 ? xasprintf("Authorization: Bearer %s", s->grant.access_token)
	                 : NULL;
	*gen = s->gen;
	pthread_mutex_unlock(&s->mu);
	return line;
}

/* The union of two space-separated scope lists, in order of first appearance. */
static char *scope_union(const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	const char *lists[2] = {a, b};
	for (int i = 0; i < 2; i++) {
		const char *p = lists[i];
		while (p && *p) {
			p += strspn(p, " ");
			size_t n = strcspn(p, " ");
			if (!n)
				break;
			bool dup = false;
			for (const char *q = sb.buf; *q && !dup;) {
				size_t m = strcspn(q, " ");
				dup = m == n && !strncmp(q, p, n);
				q += m + strspn(q + m, " ");
			}
			if (!dup) {
				if (sb.len)
					strbuf_addc(&sb, ' ');
				strbuf_add(&sb, p, n);
			}
			p += n;
		}
	}
	if (!sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* With s->mu held: a sign-in asking for `scope`. */
static bool sign_in(struct oauth_session *s, const struct oauth_challenge *ch, bool step_up,
                    char **err)
{
	struct oauth_meta m = {0};
	char *why = NULL;
	if (!oauth_discover(s->url, ch->resource_metadata, &m, &why)) {
		*err = xasprintf("MCP server %s: %s", s->name, why);
		free(why);
		return false;
	}
	char *scope;
	if (step_up)
		scope = scope_union(s->grant.scope, ch->scope);
	else if (ch->scope)
		scope = xstrdup(ch->scope);
	else
		scope = m.scopes_supported.n ? strvec_join(&m.scopes_supported, " ") : NULL;
	struct oauth_client_conf cc = {s->client_id, s->client_secret, s->client_metadata_url};
	struct oauth_grant g = {0};
	bool ok = oauth_flow_authorize(s->url, &m, &cc, scope, &s->prompt, &g, &why);
	if (ok) {
		oauth_grant_copy(&s->grant, &g);
		int fd = oauth_tokens_lock(&why);
		ok = fd >= 0 && oauth_tokens_save(&g, &why);
		oauth_tokens_unlock(fd);
		s->gen++;
	}
	if (!ok) {
		*err = xasprintf("MCP server %s: sign-in failed: %s", s->name, why);
		free(why);
	}
	oauth_grant_release(&g);
	free(scope);
	oauth_meta_release(&m);
	return ok;
}

bool oauth_session_challenged(struct oauth_session *s, unsigned gen, long status,
                              const char *www_authenticate, int *signins, char **err)
{
	struct oauth_challenge ch = {0};
	oauth_challenge_parse(www_authenticate, &ch);
	bool step_up = status == 403 && ch.error && !strcmp(ch.error, "insufficient_scope");
	bool again = false;
	pthread_mutex_lock(&s->mu);
	if (status == 403 && !step_up) {
		*err = xasprintf("MCP server %s refused pevtui (HTTP 403%s%s)", s->name,
		                 ch.error ? ": " : "", ch.error ? ch.error : "");
	} else if (gen != s->gen) {
		again = true; /* the token changed meanwhile: try the new one */
	} else if (status == 401 && s->grant.refresh_token && refresh(s, err)) {
		again = true;
	} else if (!s->may_sign_in) {
		free(*err);
		if (step_up)
			*err = xasprintf("MCP server %s needs more access (scope %s): run `pevtui "
			                 "--mcp-login %s`",
			                 s->name, ch.scope ? ch.scope : "unsaid", s->name);
		else
			*err = xasprintf("MCP server %s needs sign-in: run `pevtui --mcp-login %s`",
			                 s->name, s->name);
	} else if (*signins >= OAUTH_SIGNINS_MAX) {
		free(*err);
		*err = xasprintf("MCP server %s still refuses after %d sign-ins%s%s", s->name,
		                 *signins, ch.scope ? "; it asks for scope " : "",
		                 ch.scope ? ch.scope : "");
	} else {
		free(*err);
		*err = NULL;
		(*signins)++;
		again = sign_in(s, &ch, step_up, err);
	}
	pthread_mutex_unlock(&s->mu);
	oauth_challenge_release(&ch);
	return again;
}
