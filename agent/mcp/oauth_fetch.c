/* oauth_fetch — libcurl, one easy handle per request (sign-in makes few of them). */
#include "config.h"

#include "oauth_fetch.h"

#include <stdbool.h>
#include <stdlib.h>

#include <curl/curl.h>

#include "xalloc.h"

#define OAUTH_FETCH_MAX (1024u * 1024)

struct sink {
	struct strbuf *body;
	bool too_big;
};

static size_t on_body(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;
	if (s->body->len + n > OAUTH_FETCH_MAX) {
		s->too_big = true;
		return 0;
	}
	strbuf_add(s->body, buf, n);
	return n;
}

long oauth_fetch(const struct oauth_request *req, struct strbuf *body, char **err)
{
	strbuf_reset(body);
	CURL *c = curl_easy_init();
	if (!c)
		fatal("cannot initialise libcurl for sign-in");
	struct sink s = {body, false};
	struct curl_slist *hl = NULL;
	char *line = NULL;
	hl = curl_slist_append(hl, "Accept: application/json");
	if (req->body) {
		line = xasprintf("Content-Type: %s", req->content_type
		                                         ? req->content_type
		                                         : "application/x-www-form-urlencoded");
		hl = curl_slist_append(hl, line);
		free(line);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
	}
	if (req->authorization) {
		line = xasprintf("Authorization: %s", req->authorization);
		hl = curl_slist_append(hl, line);
		free(line);
	}
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : 30000L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	else if (err)
		*err = xasprintf("%s: %s", req->url,
		                 s.too_big ? "the answer is larger than 1 MiB" : curl_easy_strerror(rc));
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	return status;
}
