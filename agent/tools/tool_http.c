/* tool_http — http_get: fetches one http(s) URL with size and time limits, returns text.
 * It never reaches the operator's own machine or network (see netguard.h) unless the
 * operator allowed the host by name. */
#include "config.h"
#include "tool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "netguard.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/*
 * Results: a 2xx/3xx answer is a result (true) with its status line and text; a 4xx is a
 * failure the model can read (false, permanent); connection errors, time-outs, 5xx and
 * 429 are failures marked transient so tool_invoke retries them. A body over the size
 * limit is a result cut at the limit, with a note. A destination on a local or private
 * address is a permanent failure that says why and how the operator can allow it.
 *
 * The guard: curl resolves every spelling of a host (2130706433, 0x7f000001, 127.1,
 * localhost…) and hands each address it is about to connect to to on_open_socket, which
 * refuses the local and private ones — after DNS, for every connection. Redirects are
 * followed here, not by curl, so that each hop's host name is known and checked against
 * the allow list before its connection is made. Proxies from the environment are not
 * used: through a proxy the address checked would be the proxy's, not the destination's.
 */
#define ERR_BODY_SHOWN 2048
#define MAX_REDIRECTS 5

struct fetch {
	struct strbuf body;
	size_t limit;
	bool over;
	const atomic_bool *cancel;
	bool host_allowed; /* this hop's host is on the operator's allow list */
	bool refused;      /* on_open_socket refused an address during this hop */
	enum netguard_kind refused_kind;
	char refused_addr[INET6_ADDRSTRLEN];
};

static size_t on_data(char *data, size_t size, size_t nmemb, void *user)
{
	struct fetch *f = user;
	size_t n = size * nmemb;
	size_t room = f->limit - f->body.len;
	if (n > room) {
		strbuf_add(&f->body, data, room);
		f->over = true;
		return 0; /* stops the transfer: CURLE_WRITE_ERROR, told apart by f->over */
	}
	strbuf_add(&f->body, data, n);
	return n;
}

static int on_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	struct fetch *f = user;
	return f->cancel && atomic_load(f->cancel) ? 1 : 0;
}

static void address_text(const struct sockaddr *sa, size_t len, char *buf, size_t size)
{
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;

	snprintf(buf, size, "?");
	if (sa->sa_family == AF_INET && len >= sizeof(in4)) {
		memcpy(&in4, sa, sizeof(in4));
		inet_ntop(AF_INET, &in4.sin_addr, buf, (socklen_t)size);
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(in6)) {
		memcpy(&in6, sa, sizeof(in6));
		inet_ntop(AF_INET6, &in6.sin6_addr, buf, (socklen_t)size);
	}
}

/* curl calls this instead of socket(2) for every connection it makes, with the address
 * it resolved: the one place that sees where a request really goes. */
static curl_socket_t on_open_socket(void *user, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct fetch *f = user;
	enum netguard_kind k = netguard_classify(&a->addr, a->addrlen);

	if (purpose == CURLSOCKTYPE_IPCXN &&
	    (k == NETGUARD_PUBLIC || (f->host_allowed && k != NETGUARD_UNKNOWN))) {
#ifdef SOCK_CLOEXEC
		/* Not inherited by the commands run_shell starts meanwhile. */
		return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
#else
		return socket(a->family, a->socktype, a->protocol);
#endif
	}
	if (!f->refused) {
		f->refused = true;
		f->refused_kind = k;
		address_text(&a->addr, a->addrlen, f->refused_addr, sizeof(f->refused_addr));
	}
	return CURL_SOCKET_BAD;
}

/* The host of a URL as curl reads it (brackets kept for IPv6); NULL when it has none.
 * Caller frees. */
static char *url_host(const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *copy = NULL;

	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host)
		copy = xstrdup(host);
	curl_free(host);
	curl_url_cleanup(u);
	return copy;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char *show(const char *s)
{
	size_t n = strlen(s);
	char *clean = textsan_clean(s, n > 300 ? 300 : n, 0);
	if (n <= 300)
		return clean;
	char *r = xasprintf("%s...", clean);
	free(clean);
	return r;
}

static bool binary_type(const char *ct)
{
	static const char *const kinds[] = {"image/", "audio/", "video/", "font/",
					    "application/octet-stream", "application/pdf",
					    "application/zip", "application/gzip"};
	if (!ct)
		return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncasecmp(ct, kinds[i], strlen(kinds[i])) == 0)
			return true;
	return false;
}

/* Appends up to `max` bytes of the body as clean text, with a note when cut. */
static void add_body(struct strbuf *out, const struct strbuf *body, size_t max)
{
	size_t n = body->len < max ? body->len : max;
	/* Back off to a character boundary so the cut does not leave a broken character. */
	while (n > 0 && n < body->len && ((unsigned char)body->buf[n] & 0xc0) == 0x80)
		n--;
	char *clean = textsan_clean(body->buf, n, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	strbuf_adds(out, clean);
	free(clean);
	if (n < body->len)
		strbuf_addf(out, "\n[cut: %zu more bytes not shown]", body->len - n);
}

static void set_transient(const struct tool_env *env)
{
	if (env->transient)
		*env->transient = true;
}

/* "(127.0.0.1 for \"localhost\": loopback)", or "(127.0.0.1: loopback)" when the URL
 * names the address itself. */
static void add_refused_address(struct strbuf *out, const struct fetch *f, const char *host)
{
	size_t n = host ? strlen(host) : 0;
	const char *h = host;

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		h = host + 1;
		n -= 2;
	}
	if (!host || (strlen(f->refused_addr) == n && !strncasecmp(h, f->refused_addr, n))) {
		strbuf_addf(out, "(%s: %s)", f->refused_addr, netguard_kind_name(f->refused_kind));
		return;
	}
	char *s = show(host);
	strbuf_addf(out, "(%s for \"%s\": %s)", f->refused_addr, s,
		    netguard_kind_name(f->refused_kind));
	free(s);
}

static void add_refused(struct strbuf *out, const struct fetch *f, const char *from,
			const char *hop, const char *host)
{
	strbuf_adds(out, "refused: ");
	if (from) {
		char *a = show(from), *b = show(hop);
		strbuf_addf(out, "\"%s\" redirected to \"%s\", and ", a, b);
		free(a);
		free(b);
	}
	strbuf_adds(out, "http_get does not reach local or private network addresses ");
	add_refused_address(out, f, host);
	strbuf_adds(out, "; the operator can allow a host with http_allow_hosts in the [tools] "
			 "section of the config");
}

static bool http_scheme(const char *url)
{
	return strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0;
}

static void setup_handle(CURL *h, struct fetch *f, long timeout_s, char *errbuf)
{
	/* Only http and https: never file://, ftp://, gopher://… */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/* Redirects are followed by http_get_run, one checked hop at a time. */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	/* "" turns off http_proxy, https_proxy, all_proxy from the environment. */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, f);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout_s < 10 ? timeout_s : 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "pevtui/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, f);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
}

/* Why the transfer failed, for a curl error other than a refused address. */
static void add_curl_error(struct strbuf *out, const struct tool_env *env, CURLcode rc,
			   const char *errbuf, const char *s, long timeout)
{
	const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
	char *w = textsan_clean(why, strlen(why), 0);
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
		strbuf_addf(out, "cannot fetch \"%s\": %s (only http and https are followed, also "
				 "in redirects)",
			    s, w);
		break;
	case CURLE_OPERATION_TIMEDOUT:
		strbuf_addf(out, "fetching \"%s\" took longer than %ld s: %s", s, timeout, w);
		set_transient(env);
		break;
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		strbuf_addf(out, "cannot fetch \"%s\": %s", s, w);
		set_transient(env);
		break;
	default:
		strbuf_addf(out, "cannot fetch \"%s\": %s", s, w);
		break;
	}
	free(w);
}

static bool http_get_run(const struct tool_env *env, const struct cJSON *input,
			 struct strbuf *out)
{
	const cJSON *u = input && cJSON_IsObject(input)
				 ? cJSON_GetObjectItemCaseSensitive(input, "url")
				 : NULL;
	if (!u || !cJSON_IsString(u) || !u->valuestring || !*u->valuestring) {
		strbuf_adds(out, "the input needs \"url\": an http:// or https:// address, such as "
				 "{\"url\": \"https://example.org/\"}");
		return false;
	}
	const char *url = u->valuestring;
	char *s = show(url);
	if (!http_scheme(url)) {
		strbuf_addf(out, "\"%s\" is not an http:// or https:// address; only those are "
				 "fetched",
			    s);
		free(s);
		return false;
	}
	if (strpbrk(url, " \t\r\n")) {
		strbuf_addf(out, "\"%s\" contains white space; encode it as %%20", s);
		free(s);
		return false;
	}

	struct fetch f = {.limit = env->http_max_bytes ? env->http_max_bytes
						       : (size_t)TOOL_HTTP_MAX_BYTES,
			  .cancel = env->cancel};
	strbuf_init(&f.body);
	long timeout = env->http_timeout_s > 0 ? env->http_timeout_s : TOOL_HTTP_TIMEOUT_S;
	char errbuf[CURL_ERROR_SIZE] = "";
	CURL *h = curl_easy_init();
	if (!h) {
		strbuf_adds(out, "could not set up the HTTP client");
		free(s);
		strbuf_release(&f.body);
		return false;
	}
	setup_handle(h, &f, timeout, errbuf);

	/* One hop per pass: its host is checked against the allow list before curl connects;
	 * the time limit covers all hops together. */
	long long deadline = now_ms() + timeout * 1000;
	char *hop = xstrdup(url), *from = NULL, *host = NULL, *bad_redirect = NULL;
	int redirects = 0;
	long status = 0;
	CURLcode rc;
	for (;;) {
		free(host);
		host = url_host(hop);
		f.host_allowed = netguard_host_allowed(env->http_allow_hosts, host);
		f.refused = false;
		f.over = false;
		strbuf_reset(&f.body);
		errbuf[0] = '\0';
		long long left = deadline - now_ms();
		if (f.cancel && atomic_load(f.cancel)) {
			rc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if (left <= 0) {
			rc = CURLE_OPERATION_TIMEDOUT;
			break;
		}
		curl_easy_setopt(h, CURLOPT_URL, hop);
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)left);
		rc = curl_easy_perform(h);
		char *next = NULL;
		status = 0;
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next);
		bool answered = rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && f.over);
		if (!answered || !next || status < 300 || status >= 400)
			break;
		if (redirects == MAX_REDIRECTS) {
			rc = CURLE_TOO_MANY_REDIRECTS;
			break;
		}
		if (!http_scheme(next)) {
			bad_redirect = xstrdup(next);
			break;
		}
		free(from);
		from = hop;
		hop = xstrdup(next);
		redirects++;
	}

	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	char *type = ct ? textsan_clean(ct, strlen(ct), 0) : NULL;
	bool ok = false;

	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		strbuf_addf(out, "fetching \"%s\" was stopped because the step was cancelled", s);
	} else if (f.refused && rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && f.over)) {
		add_refused(out, &f, from, hop, host);
	} else if (bad_redirect) {
		char *b = show(bad_redirect);
		strbuf_addf(out, "cannot fetch \"%s\": it redirects to \"%s\" (only http and https "
				 "are followed, also in redirects)",
			    s, b);
		free(b);
	} else if (rc == CURLE_TOO_MANY_REDIRECTS) {
		strbuf_addf(out, "cannot fetch \"%s\": more than %d redirects", s, MAX_REDIRECTS);
	} else if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && f.over)) {
		add_curl_error(out, env, rc, errbuf, s, timeout);
	} else if (status >= 400) {
		strbuf_addf(out, "fetching \"%s\" failed: HTTP %ld", s, status);
		if (status >= 500 || status == 429) {
			strbuf_adds(out, " (the server may recover; worth another try later)");
			set_transient(env);
		}
		if (f.body.len > 0 && !memchr(f.body.buf, '\0', f.body.len) &&
		    !binary_type(type)) {
			strbuf_adds(out, "\n");
			add_body(out, &f.body, ERR_BODY_SHOWN);
		}
	} else {
		ok = true;
		strbuf_addf(out, "HTTP %ld", status);
		if (type)
			strbuf_addf(out, " (%s)", type);
		if (f.over)
			strbuf_addf(out, ", the body is larger than the %zu-byte limit; only the "
					 "first %zu bytes were fetched",
				    f.limit, f.body.len);
		else
			strbuf_addf(out, ", %zu bytes", f.body.len);
		if (binary_type(type) || memchr(f.body.buf, '\0', f.body.len)) {
			strbuf_adds(out,
				    "\nThe body is binary data, not text, so it is not shown.");
		} else {
			strbuf_adds(out, "\n");
			add_body(out, &f.body, TOOL_MAX_OUTPUT);
		}
	}
	free(type);
	curl_easy_cleanup(h);
	strbuf_release(&f.body);
	free(hop);
	free(from);
	free(host);
	free(bad_redirect);
	free(s);
	return ok;
}

const struct tool_def tool_http_get = {
	.name = "http_get",
	.writes = TOOL_WRITES_NOTHING,
	.description = "Fetch an http:// or https:// URL with GET and return the status and "
		       "the body as text (up to 1 MB is fetched, 64 KiB shown; binary bodies are "
		       "not shown). Redirects are followed (at most 5). Addresses on the local "
		       "machine or a private network are refused unless the operator allowed "
		       "the host.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\","
		       "\"description\":\"The address, e.g. https://example.org/page\"}},"
		       "\"required\":[\"url\"],\"additionalProperties\":false}",
	.run = http_get_run,
};
