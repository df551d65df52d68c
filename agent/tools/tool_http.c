/* tool_http — http_get: fetches one http(s) URL with size and time limits, returns text. */
#include "config.h"
#include "tool.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/*
 * Results: a 2xx/3xx answer is a result (true) with its status line and text; a 4xx is a
 * failure the model can read (false, permanent); connection errors, time-outs, 5xx and
 * 429 are failures marked transient so tool_invoke retries them. A body over the size
 * limit is a result cut at the limit, with a note.
 */
#define ERR_BODY_SHOWN 2048
#define MAX_REDIRECTS 5L

struct fetch {
	struct strbuf body;
	size_t limit;
	bool over;
	const atomic_bool *cancel;
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
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0) {
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
	curl_easy_setopt(h, CURLOPT_URL, url);
	/* Only http and https, also after redirects: never file://, ftp://, gopher://… */
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, MAX_REDIRECTS);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, timeout < 10 ? timeout : 10L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "pevtui/" PACKAGE_VERSION);
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, &f);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);

	CURLcode rc = curl_easy_perform(h);
	long status = 0;
	char *ct = NULL;
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	char *type = ct ? textsan_clean(ct, strlen(ct), 0) : NULL;
	bool ok = false;

	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		strbuf_addf(out, "fetching \"%s\" was stopped because the step was cancelled", s);
	} else if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && f.over)) {
		const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
		char *w = textsan_clean(why, strlen(why), 0);
		switch (rc) {
		case CURLE_UNSUPPORTED_PROTOCOL:
			strbuf_addf(out, "cannot fetch \"%s\": %s (only http and https are "
					 "followed, also in redirects)",
				    s, w);
			break;
		case CURLE_TOO_MANY_REDIRECTS:
			strbuf_addf(out, "cannot fetch \"%s\": more than %ld redirects", s,
				    MAX_REDIRECTS);
			break;
		case CURLE_OPERATION_TIMEDOUT:
			strbuf_addf(out, "fetching \"%s\" took longer than %ld s: %s", s, timeout,
				    w);
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
	free(s);
	return ok;
}

const struct tool_def tool_http_get = {
	.name = "http_get",
	.description = "Fetch an http:// or https:// URL with GET and return the status and "
		       "the body as text (up to 1 MB is fetched, 64 KiB shown; binary bodies are "
		       "not shown). Redirects are followed (at most 5).",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\","
		       "\"description\":\"The address, e.g. https://example.org/page\"}},"
		       "\"required\":[\"url\"],\"additionalProperties\":false}",
	.run = http_get_run,
};
