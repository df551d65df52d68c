/* test_oauth — the parsers and small pieces of MCP sign-in: WWW-Authenticate challenges,
 * URL splitting and canonical URIs, a redirect's query, form encoding, PKCE S256 (the
 * expected values computed apart, with Python's hashlib), the choice of token endpoint
 * authentication, and the token store (mode 0600, one entry per URL and issuer). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oauth_challenge.h"
#include "oauth_flow.h"
#include "oauth_pkce.h"
#include "oauth_tokens.h"
#include "oauth_url.h"
#include "strbuf.h"
#include "testdir.h"

static void challenge_bearer(void **state)
{
	(void)state;
	struct oauth_challenge ch = {0};
	oauth_challenge_parse("Bearer resource_metadata=\"https://a.example/.well-known/"
	                      "oauth-protected-resource/mcp\", scope=\"mcp:read mcp:write\"",
	                      &ch);
	assert_true(ch.bearer);
	assert_string_equal(ch.resource_metadata,
	                    "https://a.example/.well-known/oauth-protected-resource/mcp");
	assert_string_equal(ch.scope, "mcp:read mcp:write");
	assert_null(ch.error);
	/* another scheme first, a token value, an escaped quote, names without case */
	oauth_challenge_parse("Basic realm=\"x, y\", Bearer ERROR=insufficient_scope, "
	                      "Scope=\"a \\\"b\\\"\"",
	                      &ch);
	assert_true(ch.bearer);
	assert_string_equal(ch.error, "insufficient_scope");
	assert_string_equal(ch.scope, "a \"b\"");
	assert_null(ch.resource_metadata);
	/* the parameters of another scheme are not the Bearer's */
	oauth_challenge_parse("Basic scope=\"no\"", &ch);
	assert_false(ch.bearer);
	assert_null(ch.scope);
	/* an unterminated quote stops the reading, keeping what came before */
	oauth_challenge_parse("Bearer error=\"invalid_token\", scope=\"open", &ch);
	assert_string_equal(ch.error, "invalid_token");
	assert_null(ch.scope);
	oauth_challenge_parse(NULL, &ch);
	assert_false(ch.bearer);
	oauth_challenge_release(&ch);
}

static void url_split(void **state)
{
	(void)state;
	char *o, *p;
	assert_true(oauth_url_split("HTTPS://Example.COM:8443/a/mcp/?x=1#f", &o, &p));
	assert_string_equal(o, "https://example.com:8443");
	assert_string_equal(p, "/a/mcp");
	free(o);
	free(p);
	assert_true(oauth_url_split("http://127.0.0.1:9", &o, &p));
	assert_string_equal(o, "http://127.0.0.1:9");
	assert_string_equal(p, "");
	free(o);
	free(p);
	assert_false(oauth_url_split("ftp://x/y", &o, &p));
	assert_false(oauth_url_split("https:///nohost", &o, &p));
	char *c = oauth_url_canonical("https://Example.com/mcp/#frag");
	assert_string_equal(c, "https://example.com/mcp");
	free(c);
	assert_true(oauth_url_secure("https://x.example/t"));
	assert_true(oauth_url_secure("http://127.0.0.1:80/t"));
	assert_true(oauth_url_secure("http://localhost/t"));
	assert_false(oauth_url_secure("http://localhost.evil.example/t"));
	assert_false(oauth_url_secure("http://x.example/t"));
}

static void url_query(void **state)
{
	(void)state;
	const char *u = "http://127.0.0.1:5/callback?code=a%2Fb+c&state=s1&empty&x=1#code=no";
	char *v = oauth_url_query_param(u, "code");
	assert_string_equal(v, "a/b c");
	free(v);
	v = oauth_url_query_param(u, "state");
	assert_string_equal(v, "s1");
	free(v);
	v = oauth_url_query_param(u, "empty");
	assert_string_equal(v, "");
	free(v);
	assert_null(oauth_url_query_param(u, "stat"));
	assert_null(oauth_url_query_param("no-query", "code"));
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	oauth_url_add_param(&sb, "redirect_uri", "http://127.0.0.1:5/cb");
	oauth_url_add_param(&sb, "scope", "a b~");
	oauth_url_add_param(&sb, "none", NULL);
	assert_string_equal(sb.buf, "redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcb&scope=a%20b~");
	strbuf_release(&sb);
}

static void pkce(void **state)
{
	(void)state;
	char *c = oauth_pkce_challenge("pevtui-test-verifier-0123456789abcdefghijklmnop");
	assert_string_equal(c, "RMBccrl5fh7ofLtGRe-8PryvgJH8tYtr65TTMkpR908");
	free(c);
	char *a = oauth_pkce_random(32), *b = oauth_pkce_random(32);
	assert_int_equal(strlen(a), 43); /* RFC 7636: 43 to 128 characters */
	assert_string_not_equal(a, b);
	assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
	                 43);
	free(a);
	free(b);
	char *s = oauth_pkce_base64("a%3Ab:c%20d", 11);
	assert_string_equal(s, "YSUzQWI6YyUyMGQ=");
	free(s);
}

static void auth_method(void **state)
{
	(void)state;
	struct strvec v = STRVEC_INIT;
	assert_string_equal(oauth_flow_auth_method(&v, true), "client_secret_basic"); /* RFC 8414 */
	assert_string_equal(oauth_flow_auth_method(&v, false), "none");
	strvec_push(&v, "none");
	strvec_push(&v, "client_secret_post");
	assert_string_equal(oauth_flow_auth_method(&v, true), "client_secret_post");
	strvec_push(&v, "client_secret_basic");
	assert_string_equal(oauth_flow_auth_method(&v, true), "client_secret_basic");
	strvec_clear(&v);
}

static void store(void **state)
{
	(void)state;
	char *dir = testdir_new("oauth-store");
	setenv("XDG_DATA_HOME", dir, 1);
	char *err = NULL;
	int fd = oauth_tokens_lock(&err);
	assert_true(fd >= 0);
	struct oauth_grant g = {.server_url = "https://m.example/mcp", .issuer = "https://as.one",
	                        .access_token = "A1", .refresh_token = "R1", .expires_at = 42};
	assert_true(oauth_tokens_save(&g, &err));
	g.issuer = "https://as.two";
	g.access_token = "A2";
	assert_true(oauth_tokens_save(&g, &err));
	g.access_token = "A3"; /* the same URL and issuer: replaced */
	assert_true(oauth_tokens_save(&g, &err));
	struct oauth_grant got = {0};
	assert_true(oauth_tokens_load("https://m.example/mcp", &got));
	assert_string_equal(got.access_token, "A3");
	assert_string_equal(got.refresh_token, "R1");
	assert_int_equal(got.expires_at, 42);
	assert_false(oauth_tokens_load("https://other.example/mcp", &got));
	char *path = oauth_tokens_path();
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	int removed = 0;
	assert_true(oauth_tokens_remove("https://m.example/mcp", &removed, &err));
	assert_int_equal(removed, 2);
	assert_false(oauth_tokens_load("https://m.example/mcp", &got));
	oauth_tokens_unlock(fd);
	oauth_grant_release(&got);
	free(path);
	testdir_remove(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(challenge_bearer), cmocka_unit_test(url_split),
	    cmocka_unit_test(url_query),        cmocka_unit_test(pkce),
	    cmocka_unit_test(auth_method),      cmocka_unit_test(store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
