/* oauth_test_server — an MCP server that wants sign-in and its authorization server, in
 * one process on 127.0.0.1, for tests/mcp/oauth_signin.sh. It approves every
 * authorization request at once (302 to the redirect URI), checks PKCE S256, issues
 * tokens that expire after --expires seconds (default 3600) and rotates refresh tokens;
 * a spent refresh token used again is counted (a lost rotation) and refused.
 *
 *   oauth_test_server [--expires N]  serve; prints the port; ends when stdin closes
 *   oauth_test_server --get URL      a GET, the body on stdout (the admin endpoints)
 *   oauth_test_server --approve URL  a "browser" that does not follow the redirect: the
 *                                    Location to $PASTE_FILE (the paste-the-URL path)
 * Admin: /admin/stats (JSON counts), /admin/revoke (every token), /admin/tamper (the
 * next redirects carry a wrong state), /admin/nopkce (metadata without S256). Tokens
 * start with SECRET- so a test can look for them where they must not be. */
#include "config.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "oauth_pkce.h"
#include "oauth_url.h"

#define MAXT 256

struct token {
	char *value;
	long long expires; /* access: epoch s */
	bool spent;        /* refresh: rotated away */
	bool revoked;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct token access_t[MAXT], refresh_t[MAXT];
static int n_access, n_refresh;
static char *codes[MAXT], *challenges[MAXT];
static int n_codes;
static int expires_s = 3600, port;
static int authorizations, refreshes, reused_refresh, registrations;
static bool tamper, nopkce;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ct,
                             const char *body, const char *hname, const char *hvalue)
{
	struct MHD_Response *r =
	    MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	if (ct)
		MHD_add_response_header(r, "Content-Type", ct);
	if (hname)
		MHD_add_response_header(r, hname, hvalue);
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status, cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	enum MHD_Result ret = reply(c, status, "application/json", s, NULL, NULL);
	free(s);
	cJSON_Delete(j);
	return ret;
}

static char *issue(struct token *set, int *n, const char *kind, long long expires)
{
	char *rnd = oauth_pkce_random(18);
	char *v = NULL;
	if (asprintf(&v, "SECRET-%s-%d-%s", kind, *n, rnd) < 0)
		abort();
	free(rnd);
	if (*n < MAXT)
		set[(*n)++] = (struct token){v, expires, false, false};
	return v;
}

static struct token *find(struct token *set, int n, const char *v)
{
	for (int i = 0; v && i < n; i++)
		if (!strcmp(set[i].value, v))
			return &set[i];
	return NULL;
}

static enum MHD_Result tokens(struct MHD_Connection *c)
{
	cJSON *j = cJSON_CreateObject();
	long long now = time(NULL);
	cJSON_AddStringToObject(j, "access_token", issue(access_t, &n_access, "AT", now + expires_s));
	cJSON_AddStringToObject(j, "token_type", "Bearer");
	cJSON_AddNumberToObject(j, "expires_in", expires_s);
	cJSON_AddStringToObject(j, "refresh_token", issue(refresh_t, &n_refresh, "RT", 0));
	return reply_json(c, 200, j);
}

static enum MHD_Result oauth_err(struct MHD_Connection *c, const char *e)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "error", e);
	return reply_json(c, 400, j);
}

/* The form field `name` of a urlencoded body (decoded; caller frees). */
static char *form(const char *body, const char *name)
{
	char *u = NULL;
	if (asprintf(&u, "?%s", body ? body : "") < 0)
		abort();
	char *v = oauth_url_query_param(u, name);
	free(u);
	return v;
}

static enum MHD_Result on_token(struct MHD_Connection *c, const char *body)
{
	char *grant = form(body, "grant_type");
	enum MHD_Result ret;
	if (grant && !strcmp(grant, "authorization_code")) {
		char *code = form(body, "code"), *ver = form(body, "code_verifier");
		int i;
		for (i = 0; i < n_codes && (!code || strcmp(codes[i], code)); i++)
			;
		char *want = i < n_codes ? challenges[i] : NULL;
		char *got = ver ? oauth_pkce_challenge(ver) : NULL;
		if (!want || !got || strcmp(want, got))
			ret = oauth_err(c, "invalid_grant");
		else {
			free(codes[i]);
			codes[i] = strdup("(used)");
			ret = tokens(c);
		}
		free(code);
		free(ver);
		free(got);
	} else if (grant && !strcmp(grant, "refresh_token")) {
		char *rt = form(body, "refresh_token");
		struct token *t = find(refresh_t, n_refresh, rt);
		if (!t || t->revoked)
			ret = oauth_err(c, "invalid_grant");
		else if (t->spent) {
			reused_refresh++;
			ret = oauth_err(c, "invalid_grant");
		} else {
			t->spent = true;
			refreshes++;
			ret = tokens(c);
		}
		free(rt);
	} else
		ret = oauth_err(c, "unsupported_grant_type");
	free(grant);
	return ret;
}

static enum MHD_Result on_authorize(struct MHD_Connection *c)
{
	const char *redirect = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "redirect_uri");
	const char *state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
	const char *ch = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "code_challenge");
	const char *m = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "code_challenge_method");
	if (!redirect || !ch || !m || strcmp(m, "S256") || n_codes >= MAXT)
		return reply(c, 400, "text/plain", "bad authorization request", NULL, NULL);
	authorizations++;
	char *code = oauth_pkce_random(12);
	codes[n_codes] = code;
	challenges[n_codes++] = strdup(ch);
	char *loc = NULL;
	if (asprintf(&loc, "%s?code=%s&state=%s", redirect, code,
	             tamper ? "forged-state" : state ? state : "") < 0)
		abort();
	enum MHD_Result ret = reply(c, 302, "text/plain", "", "Location", loc);
	free(loc);
	return ret;
}

static bool authorized(struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	if (!h || strncmp(h, "Bearer ", 7))
		return false;
	struct token *t = find(access_t, n_access, h + 7);
	return t && !t->revoked && t->expires > time(NULL);
}

static enum MHD_Result on_mcp(struct MHD_Connection *c, const char *body)
{
	if (!authorized(c)) {
		char *www = NULL;
		if (asprintf(&www, "Bearer resource_metadata=\"http://127.0.0.1:%d/.well-known/"
		                   "oauth-protected-resource/mcp\"",
		             port) < 0)
			abort();
		enum MHD_Result ret = reply(c, 401, "application/json", "{\"error\":\"invalid_token\"}",
		                            "WWW-Authenticate", www);
		free(www);
		return ret;
	}
	cJSON *m = cJSON_Parse(body ? body : "");
	const char *meth = cJSON_GetStringValue(cJSON_GetObjectItem(m, "method"));
	cJSON *id = cJSON_GetObjectItem(m, "id");
	if (!meth || !id) {
		cJSON_Delete(m);
		return reply(c, 202, NULL, "", NULL, NULL);
	}
	cJSON *ans = cJSON_CreateObject();
	cJSON_AddStringToObject(ans, "jsonrpc", "2.0");
	cJSON_AddItemToObject(ans, "id", cJSON_Duplicate(id, 1));
	cJSON *res = cJSON_AddObjectToObject(ans, "result");
	if (!strcmp(meth, "initialize")) {
		cJSON_AddStringToObject(res, "protocolVersion", "2025-11-25");
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(res, "capabilities"), "tools");
		cJSON *si = cJSON_AddObjectToObject(res, "serverInfo");
		cJSON_AddStringToObject(si, "name", "oauth-test");
		cJSON_AddStringToObject(si, "version", "1");
	} else if (!strcmp(meth, "tools/list")) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "name", "whoami");
		cJSON_AddStringToObject(t, "description", "Says who signed in.");
		cJSON_AddObjectToObject(t, "inputSchema");
		cJSON_AddStringToObject(cJSON_GetObjectItem(t, "inputSchema"), "type", "object");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(res, "tools"), t);
	} else if (!strcmp(meth, "tools/call")) {
		cJSON *t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "type", "text");
		cJSON_AddStringToObject(t, "text", "signed in as the operator");
		cJSON_AddItemToArray(cJSON_AddArrayToObject(res, "content"), t);
	}
	cJSON_Delete(m);
	return reply_json(c, 200, ans);
}

static enum MHD_Result on_get(struct MHD_Connection *c, const char *url)
{
	char base[64];
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", port);
	cJSON *j = cJSON_CreateObject();
	if (!strcmp(url, "/.well-known/oauth-protected-resource/mcp")) {
		char *r = NULL;
		if (asprintf(&r, "%s/mcp", base) < 0)
			abort();
		cJSON_AddStringToObject(j, "resource", r);
		free(r);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(j, "authorization_servers"),
		                     cJSON_CreateString(base));
		return reply_json(c, 200, j);
	}
	if (!strcmp(url, "/.well-known/oauth-authorization-server")) {
		char u[128];
		cJSON_AddStringToObject(j, "issuer", base);
		snprintf(u, sizeof(u), "%s/authorize", base);
		cJSON_AddStringToObject(j, "authorization_endpoint", u);
		snprintf(u, sizeof(u), "%s/token", base);
		cJSON_AddStringToObject(j, "token_endpoint", u);
		snprintf(u, sizeof(u), "%s/register", base);
		cJSON_AddStringToObject(j, "registration_endpoint", u);
		if (!nopkce)
			cJSON_AddItemToArray(cJSON_AddArrayToObject(j, "code_challenge_methods_supported"),
			                     cJSON_CreateString("S256"));
		cJSON_AddItemToArray(cJSON_AddArrayToObject(j, "token_endpoint_auth_methods_supported"),
		                     cJSON_CreateString("none"));
		return reply_json(c, 200, j);
	}
	cJSON_Delete(j);
	if (!strcmp(url, "/authorize"))
		return on_authorize(c);
	if (!strcmp(url, "/admin/stats")) {
		j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "authorizations", authorizations);
		cJSON_AddNumberToObject(j, "refreshes", refreshes);
		cJSON_AddNumberToObject(j, "reused_refresh", reused_refresh);
		cJSON_AddNumberToObject(j, "registrations", registrations);
		return reply_json(c, 200, j);
	}
	if (!strcmp(url, "/admin/revoke")) {
		for (int i = 0; i < n_access; i++)
			access_t[i].revoked = true;
		for (int i = 0; i < n_refresh; i++)
			refresh_t[i].revoked = true;
		return reply(c, 200, "text/plain", "revoked\n", NULL, NULL);
	}
	if (!strcmp(url, "/admin/tamper") || !strcmp(url, "/admin/nopkce")) {
		*(url[7] == 't' ? &tamper : &nopkce) = true;
		return reply(c, 200, "text/plain", "ok\n", NULL, NULL);
	}
	if (!strcmp(url, "/mcp"))
		return reply(c, 405, "text/plain", "no GET stream", NULL, NULL);
	return reply(c, 404, "text/plain", "not found", NULL, NULL);
}

struct upload {
	char *buf;
	size_t len;
};

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *ver, const char *data,
                                  size_t *size, void **con_cls)
{
	struct upload *u = *con_cls;
	(void)cls;
	(void)ver;
	if (!u) {
		*con_cls = calloc(1, sizeof(struct upload));
		return MHD_YES;
	}
	if (*size) {
		u->buf = realloc(u->buf, u->len + *size + 1);
		memcpy(u->buf + u->len, data, *size);
		u->len += *size;
		u->buf[u->len] = '\0';
		*size = 0;
		return MHD_YES;
	}
	enum MHD_Result ret;
	pthread_mutex_lock(&mu);
	if (!strcmp(method, "GET"))
		ret = on_get(c, url);
	else if (!strcmp(method, "POST") && !strcmp(url, "/token"))
		ret = on_token(c, u->buf);
	else if (!strcmp(method, "POST") && !strcmp(url, "/register")) {
		registrations++;
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "client_id", "registered-client");
		cJSON_AddStringToObject(j, "token_endpoint_auth_method", "none");
		ret = reply_json(c, 201, j);
	} else if (!strcmp(method, "POST") && !strcmp(url, "/mcp"))
		ret = on_mcp(c, u->buf);
	else if (!strcmp(method, "DELETE"))
		ret = reply(c, 405, "text/plain", "", NULL, NULL);
	else
		ret = reply(c, 404, "text/plain", "not found", NULL, NULL);
	pthread_mutex_unlock(&mu);
	return ret;
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
	struct upload *u = *con_cls;
	(void)cls;
	(void)c;
	(void)toe;
	if (u) {
		free(u->buf);
		free(u);
		*con_cls = NULL;
	}
}

static size_t to_stdout(char *b, size_t s, size_t n, void *arg)
{
	(void)arg;
	return fwrite(b, s, n, stdout);
}

/* --get URL / --approve URL. */
static int client(const char *url, bool approve)
{
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, to_stdout);
	CURLcode rc = curl_easy_perform(c);
	char *loc = NULL;
	curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc);
	int code = rc == CURLE_OK ? 0 : 1;
	if (approve) {
		const char *pf = getenv("PASTE_FILE");
		FILE *f = pf ? fopen(pf, "w") : NULL;
		if (f && loc) {
			fprintf(f, "%s\n", loc);
			fclose(f);
		} else
			code = 1;
	}
	curl_easy_cleanup(c);
	return code;
}

int main(int argc, char **argv)
{
	if (argc == 3 && (!strcmp(argv[1], "--get") || !strcmp(argv[1], "--approve")))
		return client(argv[2], argv[1][2] == 'a');
	if (argc == 3 && !strcmp(argv[1], "--expires"))
		expires_s = atoi(argv[2]);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct MHD_Daemon *d =
	    MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
	                     NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, &sa,
	                     MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
	if (!d)
		return 1;
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	port = info ? info->port : 0;
	printf("%d\n", port);
	fflush(stdout);
	char buf[256];
	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		;
	MHD_stop_daemon(d);
	return 0;
}
