/* oauth_flow — registration, authorization and token requests. The tokens pass through
 * here and into oauth_tokens only: errors quote the server's `error` code and
 * description, never a request. */
#include "config.h"

#include "oauth_flow.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oauth_fetch.h"
#include "oauth_pkce.h"
#include "oauth_redirect.h"
#include "oauth_url.h"
#include "textsan.h"
#include "xalloc.h"

static bool listed(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

const char *oauth_flow_auth_method(const struct strvec *supported, bool have_secret)
{
	if (!have_secret)
		return "none";
	if (!supported || !supported->n || listed(supported, "client_secret_basic"))
		return "client_secret_basic";
	if (listed(supported, "client_secret_post"))
		return "client_secret_post";
	return listed(supported, "none") ? "none" : "client_secret_basic";
}

/* "error: description" of an OAuth error answer, cleaned for the screen (caller frees). */
static char *oauth_error(long status, const char *body)
{
	cJSON *j = cJSON_Parse(body);
	const char *e = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error"));
	const char *d = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "error_description"));
	char *raw = e ? xasprintf("%s%s%s", e, d ? ": " : "", d ? d : "")
	              : xasprintf("HTTP %ld", status);
	cJSON_Delete(j);
	char *clean = textsan_clean(raw, strlen(raw) > 200 ? 200 : strlen(raw), 0);
	free(raw);
	return clean;
}

/* RFC 7591: registers pevtui as a client with the given redirect URI. */
static bool register_client(const struct oauth_meta *m, const char *redirect_uri,
                            struct oauth_grant *g, char **err)
{
	const char *method = listed(&m->auth_methods, "none") || !m->auth_methods.n
	                         ? "none"
	                         : oauth_flow_auth_method(&m->auth_methods, true);
	cJSON *req = cJSON_CreateObject();
	cJSON_AddStringToObject(req, "client_name", "pevtui");
	cJSON *uris = cJSON_AddArrayToObject(req, "redirect_uris");
	cJSON_AddItemToArray(uris, cJSON_CreateString(redirect_uri));
	const char *grants[] = {"authorization_code", "refresh_token"};
	cJSON_AddItemToObject(req, "grant_types", cJSON_CreateStringArray(grants, 2));
	const char *types[] = {"code"};
	cJSON_AddItemToObject(req, "response_types", cJSON_CreateStringArray(types, 1));
	cJSON_AddStringToObject(req, "token_endpoint_auth_method", method);
	char *body = cJSON_PrintUnformatted(req);
	cJSON_Delete(req);
	struct strbuf ans = STRBUF_INIT;
	strbuf_init(&ans);
	struct oauth_request r = {.url = m->registration_endpoint, .body = body,
	                          .content_type = "application/json"};
	char *ferr = NULL;
	long st = oauth_fetch(&r, &ans, &ferr);
	free(body);
	bool ok = false;
	cJSON *j = st / 100 == 2 ? cJSON_Parse(ans.buf) : NULL;
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "client_id"));
	if (id && *id) {
		g->client_id = xstrdup(id);
		g->client_secret =
		    xstrdup(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "client_secret")));
		const char *am = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(j, "token_endpoint_auth_method"));
		g->auth_method = xstrdup(g->client_secret ? (am ? am : method) : "none");
		ok = true;
	} else {
		char *why = st ? oauth_error(st, ans.buf) : xstrdup(ferr ? ferr : "no answer");
		*err = xasprintf("registering with %s failed (%s); set client_id in the server's "
		                 "[mcp.NAME] section if you registered pevtui there yourself",
		                 m->registration_endpoint, why);
		free(why);
	}
	cJSON_Delete(j);
	free(ferr);
	strbuf_release(&ans);
	return ok;
}

/* Who pevtui is: the configured client, a metadata document URL, or a registration. */
static bool choose_client(const struct oauth_meta *m, const struct oauth_client_conf *cc,
                          const char *redirect_uri, struct oauth_grant *g, char **err)
{
	if (cc && cc->client_id) {
		g->client_id = xstrdup(cc->client_id);
		g->client_secret = xstrdup(cc->client_secret);
		g->auth_method = xstrdup(oauth_flow_auth_method(&m->auth_methods, cc->client_secret));
		return true;
	}
	if (cc && cc->client_metadata_url && m->cimd) {
		g->client_id = xstrdup(cc->client_metadata_url);
		g->auth_method = xstrdup("none");
		return true;
	}
	if (m->registration_endpoint)
		return register_client(m, redirect_uri, g, err);
	*err = xasprintf("the authorization server %s takes no registrations: register pevtui "
	                 "there and set client_id (and client_secret) in the server's [mcp.NAME] "
	                 "section",
	                 m->issuer);
	return false;
}

/* Client authentication for the token endpoint: the Authorization header (basic) or form
 * fields (post; client_id alone for none). Returns the header value or NULL. */
static char *client_auth(const struct oauth_grant *g, struct strbuf *form)
{
	if (g->auth_method && !strcmp(g->auth_method, "client_secret_basic") && g->client_secret) {
		struct strbuf up = STRBUF_INIT;
		strbuf_init(&up);
		oauth_url_add_encoded(&up, g->client_id);
		strbuf_addc(&up, ':');
		oauth_url_add_encoded(&up, g->client_secret);
		char *b64 = oauth_pkce_base64(up.buf, up.len);
		char *h = xasprintf("Basic %s", b64);
		free(b64);
		strbuf_release(&up);
		return h;
	}
	oauth_url_add_param(form, "client_id", g->client_id);
	if (g->auth_method && !strcmp(g->auth_method, "client_secret_post"))
		oauth_url_add_param(form, "client_secret", g->client_secret);
	return NULL;
}

/* POSTs a token request; the answer's tokens go into *g. */
static bool token_request(struct oauth_grant *g, struct strbuf *form, bool *revoked, char **err)
{
	char *auth = client_auth(g, form);
	struct strbuf ans = STRBUF_INIT;
	strbuf_init(&ans);
	struct oauth_request r = {.url = g->token_endpoint, .body = form->buf, .authorization = auth};
	char *ferr = NULL;
	long st = oauth_fetch(&r, &ans, &ferr);
	free(auth);
	cJSON *j = st == 200 ? cJSON_Parse(ans.buf) : NULL;
	const char *at = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "access_token"));
	bool ok = at && *at;
	if (ok) {
		free(g->access_token);
		g->access_token = xstrdup(at);
		const char *rt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "refresh_token"));
		if (rt && *rt) { /* rotated: the old one is spent */
			free(g->refresh_token);
			g->refresh_token = xstrdup(rt);
		}
		const char *sc = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "scope"));
		if (sc) {
			free(g->scope);
			g->scope = xstrdup(sc);
		}
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "expires_in");
		g->issued_at = (long long)time(NULL);
		g->expires_at = cJSON_IsNumber(ex) && ex->valuedouble > 0
		                    ? (long long)time(NULL) + (long long)ex->valuedouble
		                    : 0;
	} else {
		char *why = st ? oauth_error(st, ans.buf) : xstrdup(ferr ? ferr : "no answer");
		if (revoked)
			*revoked = st == 400 || st == 401;
		*err = xasprintf("the token endpoint %s refused (%s)", g->token_endpoint, why);
		free(why);
	}
	cJSON_Delete(j);
	free(ferr);
	strbuf_release(&ans);
	return ok;
}

static char *authorization_url(const struct oauth_meta *m, const struct oauth_grant *g,
                               const char *redirect_uri, const char *challenge,
                               const char *state, const char *scope)
{
	struct strbuf q = STRBUF_INIT;
	strbuf_init(&q);
	oauth_url_add_param(&q, "response_type", "code");
	oauth_url_add_param(&q, "client_id", g->client_id);
	oauth_url_add_param(&q, "redirect_uri", redirect_uri);
	oauth_url_add_param(&q, "code_challenge", challenge);
	oauth_url_add_param(&q, "code_challenge_method", "S256");
	oauth_url_add_param(&q, "state", state);
	oauth_url_add_param(&q, "resource", m->resource);
	if (scope && *scope)
		oauth_url_add_param(&q, "scope", scope);
	char *u = xasprintf("%s%c%s", m->authorization_endpoint,
	                    strchr(m->authorization_endpoint, '?') ? '&' : '?', q.buf);
	strbuf_release(&q);
	return u;
}

/* The code of the redirect, after checking its state. */
static char *code_of(const char *url, const char *state, char **err)
{
	char *e = oauth_url_query_param(url, "error");
	char *st = oauth_url_query_param(url, "state");
	char *code = oauth_url_query_param(url, "code");
	if (e) {
		char *d = oauth_url_query_param(url, "error_description");
		char *raw = xasprintf("%s%s%s", e, d ? ": " : "", d ? d : "");
		char *clean = textsan_clean(raw, strlen(raw) > 200 ? 200 : strlen(raw), 0);
		*err = xasprintf("the authorization server said no (%s)", clean);
		free(clean);
		free(raw);
		free(d);
	} else if (!st || strcmp(st, state)) {
		*err = xstrdup("the redirect's state does not match the one pevtui sent: not "
		               "signing in (a stale or forged redirect)");
	} else if (!code || !*code) {
		*err = xstrdup("the redirect carries no authorization code");
	}
	free(e);
	free(st);
	if (*err) {
		free(code);
		return NULL;
	}
	return code;
}

bool oauth_flow_authorize(const char *server_url, const struct oauth_meta *m,
                          const struct oauth_client_conf *cc, const char *scope,
                          const struct oauth_prompt *p, struct oauth_grant *g, char **err)
{
	oauth_grant_release(g);
	struct oauth_redirect *r = oauth_redirect_new(err);
	if (!r)
		return false;
	const char *redirect_uri = oauth_redirect_uri(r);
	bool ok = false;
	char *verifier = NULL, *challenge = NULL, *state = NULL, *url = NULL, *back = NULL,
	     *code = NULL;
	if (!choose_client(m, cc, redirect_uri, g, err))
		goto out;
	g->server_url = xstrdup(server_url);
	g->issuer = xstrdup(m->issuer);
	g->resource = xstrdup(m->resource);
	g->token_endpoint = xstrdup(m->token_endpoint);
	g->scope = xstrdup(scope && *scope ? scope : NULL);
	verifier = oauth_pkce_random(32);
	challenge = oauth_pkce_challenge(verifier);
	state = oauth_pkce_random(24);
	url = authorization_url(m, g, redirect_uri, challenge, state, scope);
	if (p->tell) {
		fprintf(p->tell, "Sign in to %s in a browser:\n  %s\n", server_url, url);
		if (p->paste_fd >= 0)
			fprintf(p->tell, "On another machine (SSH)? Open it there, then paste the "
			                 "address the browser ends on (http://127.0.0.1…/callback?…) here "
			                 "and press Enter.\n");
		fflush(p->tell);
	}
	if (p->open_url)
		p->open_url(url, p->tell);
	if (!oauth_redirect_wait(r, p->paste_fd, p->timeout_ms > 0 ? p->timeout_ms : 300000, &back,
	                         err))
		goto out;
	code = code_of(back, state, err);
	if (!code)
		goto out;
	struct strbuf form = STRBUF_INIT;
	strbuf_init(&form);
	oauth_url_add_param(&form, "grant_type", "authorization_code");
	oauth_url_add_param(&form, "code", code);
	oauth_url_add_param(&form, "redirect_uri", redirect_uri);
	oauth_url_add_param(&form, "code_verifier", verifier);
	oauth_url_add_param(&form, "resource", m->resource);
	ok = token_request(g, &form, NULL, err);
	strbuf_release(&form);
out:
	free(verifier);
	free(challenge);
	free(state);
	free(url);
	free(back);
	free(code);
	oauth_redirect_free(r);
	if (!ok)
		oauth_grant_release(g);
	return ok;
}

bool oauth_flow_refresh(struct oauth_grant *g, bool *revoked, char **err)
{
	*revoked = false;
	if (!g->refresh_token || !g->token_endpoint) {
		*revoked = true;
		*err = xstrdup("there is no refresh token");
		return false;
	}
	struct strbuf form = STRBUF_INIT;
	strbuf_init(&form);
	oauth_url_add_param(&form, "grant_type", "refresh_token");
	oauth_url_add_param(&form, "refresh_token", g->refresh_token);
	oauth_url_add_param(&form, "resource", g->resource);
	bool ok = token_request(g, &form, revoked, err);
	strbuf_release(&form);
	return ok;
}
