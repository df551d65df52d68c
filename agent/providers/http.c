/* http — libcurl transport with per-thread handle reuse, timeouts, cancellation and retries.
 *
 * Each thread keeps one multi handle holding one easy handle: the multi handle's
 * connection cache gives keep-alive across calls, and driving the transfer ourselves with
 * curl_multi_poll in 50 ms slices lets us honour the cancel flag and the idle timeout
 * promptly, which a progress callback alone cannot (it may run only once a second). */
#include "config.h"

#include "http.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>

#include "provider.h"
#include "xalloc.h"

#define POLL_SLICE_MS 50
#define ERROR_BODY_MAX (256 * 1024)

struct tls_handles {
	CURLM *multi;
	CURL *easy;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_key_t tls_key;
static _Thread_local unsigned int jitter_seed;

static void free_handles(void *arg)
{
	struct tls_handles *h = arg;

	if (!h)
		return;
	curl_easy_cleanup(h->easy);
	curl_multi_cleanup(h->multi);
	free(h);
}

static void global_init(void)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		fatal("libcurl initialisation failed");
	if (pthread_key_create(&tls_key, free_handles))
		fatal("pthread_key_create failed");
}

static struct tls_handles *thread_handles(void)
{
	struct tls_handles *h;

	pthread_once(&init_once, global_init);
	h = pthread_getspecific(tls_key);
	if (h)
		return h;
	h = xcalloc(1, sizeof(*h));
	h->multi = curl_multi_init();
	h->easy = curl_easy_init();
	if (!h->multi || !h->easy)
		fatal("libcurl handle creation failed");
	if (pthread_setspecific(tls_key, h))
		fatal("pthread_setspecific failed");
	return h;
}

void http_thread_cleanup(void)
{
	struct tls_handles *h;

	pthread_once(&init_once, global_init);
	h = pthread_getspecific(tls_key);
	if (h) {
		pthread_setspecific(tls_key, NULL);
		free_handles(h);
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool cancelled(const struct llm_hooks *hooks)
{
	return hooks && hooks->cancel && atomic_load(hooks->cancel);
}

/* ---- one attempt ---------------------------------------------------------------------- */

struct attempt {
	const struct http_call *call;
	struct http_result *res;
	CURL *easy;
	bool status_known;
	bool is_2xx;
	bool body_refused; /* on_body returned false */
	long long last_rx;
};

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct attempt *a = userdata;
	size_t n = size * nmemb;

	a->last_rx = now_ms();
	if (!a->status_known) {
		long code = 0;

		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
		a->res->status = (int)code;
		a->is_2xx = code >= 200 && code < 300;
		a->status_known = true;
	}
	if (a->is_2xx) {
		if (!a->call->on_body(a->call->ctx, ptr, n)) {
			a->body_refused = true;
			return 0;
		}
		return n;
	}
	if (a->res->body.len < ERROR_BODY_MAX)
		strbuf_add(
		    &a->res->body, ptr,
		    n < ERROR_BODY_MAX - a->res->body.len ? n : ERROR_BODY_MAX - a->res->body.len);
	return n;
}

/* Matches "Name:" case-insensitively at the start of a header line; returns the value. */
static const char *header_value(const char *line, size_t n, const char *name, size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return NULL;
	line += k + 1;
	n -= k + 1;
	while (n && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	*vlen = n;
	return line;
}

long http_parse_retry_after(const char *value, long now_epoch_s)
{
	char *end;
	double secs;
	time_t when;

	if (!value || !*value)
		return -1;
	secs = strtod(value, &end);
	if (end != value && *end == '\0') {
		if (secs < 0 || secs > 86400.0)
			return -1;
		return (long)(secs * 1000.0);
	}
	when = curl_getdate(value, NULL);
	if (when == (time_t)-1)
		return -1;
	if ((long)when <= now_epoch_s)
		return 0;
	if ((long)when - now_epoch_s > 86400)
		return -1;
	return ((long)when - now_epoch_s) * 1000;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct attempt *a = userdata;
	size_t n = size * nmemb, vlen;
	const char *v;
	char *copy;

	a->last_rx = now_ms();
	if (n >= 5 && !strncmp(ptr, "HTTP/", 5)) {
		/* A new response (after 100 Continue or a redirect): forget the last one's. */
		a->res->should_retry = -1;
		a->res->retry_after_ms = -1;
		return n;
	}
	if ((v = header_value(ptr, n, "retry-after-ms", &vlen))) {
		copy = xstrndup(v, vlen);
		char *end;
		double ms = strtod(copy, &end);
		if (end != copy && *end == '\0' && ms >= 0 && ms < 86400000.0)
			a->res->retry_after_ms = (long)ms;
		free(copy);
	} else if ((v = header_value(ptr, n, "retry-after", &vlen))) {
		/* retry-after-ms wins when both are sent, whatever their order. */
		if (a->res->retry_after_ms < 0) {
			copy = xstrndup(v, vlen);
			a->res->retry_after_ms = http_parse_retry_after(copy, (long)time(NULL));
			free(copy);
		}
	} else if ((v = header_value(ptr, n, "x-should-retry", &vlen))) {
		if (vlen == 4 && !strncasecmp(v, "true", 4))
			a->res->should_retry = 1;
		else if (vlen == 5 && !strncasecmp(v, "false", 5))
			a->res->should_retry = 0;
	}
	return n;
}

static void result_reset(struct http_result *res)
{
	free(res->transport_msg);
	strbuf_release(&res->body);
	memset(res, 0, sizeof(*res));
	strbuf_init(&res->body);
	res->should_retry = -1;
	res->retry_after_ms = -1;
}

/* Returns false when cancelled. */
static bool run_attempt(struct tls_handles *h, const struct http_call *call,
			const struct http_options *opt, const struct llm_hooks *hooks,
			struct curl_slist *headers, struct http_result *res)
{
	struct attempt a = {.call = call, .res = res, .easy = h->easy};
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode code = CURLE_OK;
	bool was_cancelled = false, idle = false;
	int running = 1, queued;
	CURLMsg *m;

	curl_easy_reset(h->easy);
	curl_easy_setopt(h->easy, CURLOPT_URL, call->url);
	curl_easy_setopt(h->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, call->body);
	curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)call->body_len);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(h->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h->easy, CURLOPT_HEADERDATA, &a);
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h->easy, CURLOPT_CONNECTTIMEOUT_MS, opt->connect_timeout_ms);
	curl_easy_setopt(h->easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h->easy, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h->easy, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif

	a.last_rx = now_ms();
	if (curl_multi_add_handle(h->multi, h->easy) != CURLM_OK)
		fatal("curl_multi_add_handle failed");
	for (;;) {
		if (curl_multi_perform(h->multi, &running) != CURLM_OK || !running)
			break;
		if (cancelled(hooks)) {
			was_cancelled = true;
			break;
		}
		if (now_ms() - a.last_rx > opt->idle_timeout_ms) {
			idle = true;
			break;
		}
		curl_multi_poll(h->multi, NULL, 0, POLL_SLICE_MS, NULL);
	}
	while ((m = curl_multi_info_read(h->multi, &queued)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == h->easy)
			code = m->data.result;
	if (!a.status_known) {
		long status = 0;

		curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &status);
		res->status = (int)status;
	}
	curl_easy_getinfo(h->easy, CURLINFO_NUM_CONNECTS, &res->connects);
	curl_multi_remove_handle(h->multi, h->easy);
	/* The handle outlives this frame and the header list: leave it no pointers to them. */
	curl_easy_setopt(h->easy, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, NULL);
	if (was_cancelled)
		return false;
	if (idle) {
		res->transport_error = true;
		res->idle_timeout = true;
		res->transport_msg = xasprintf("no data for %.1f s (idle timeout)",
					       (double)opt->idle_timeout_ms / 1000.0);
	} else if (code != CURLE_OK && !a.body_refused) {
		res->transport_error = true;
		res->transport_msg = xasprintf("%s%s%s", curl_easy_strerror(code),
					       *errbuf ? ": " : "", errbuf);
		/* curl's messages end with a newline now and then. */
		size_t k = strlen(res->transport_msg);
		while (k && isspace((unsigned char)res->transport_msg[k - 1]))
			res->transport_msg[--k] = '\0';
	}
	return true;
}

/* ---- retries ------------------------------------------------------------------------ */

bool http_status_retryable(const struct http_result *res)
{
	if (res->should_retry >= 0)
		return res->should_retry == 1;
	return res->status == 408 || res->status == 409 || res->status == 429 ||
	       res->status >= 500;
}

static long backoff_ms(const struct http_options *opt, int retry)
{
	long ceiling = opt->backoff_base_ms;

	for (int i = 1; i < retry && ceiling < opt->backoff_cap_ms; i++)
		ceiling *= 2;
	if (ceiling > opt->backoff_cap_ms)
		ceiling = opt->backoff_cap_ms;
	if (!jitter_seed)
		jitter_seed = (unsigned int)now_ms() ^ (unsigned int)(uintptr_t)&jitter_seed;
	/* Full jitter: a uniform draw in [0, ceiling], so synchronised clients spread out. */
	return ceiling > 0 ? (long)(rand_r(&jitter_seed) % (ceiling + 1)) : 0;
}

/* Sleeps in short slices; false when cancelled meanwhile. */
static bool wait_ms(long ms, const struct llm_hooks *hooks)
{
	long long end = now_ms() + ms;

	for (;;) {
		long long left = end - now_ms();
		struct timespec ts;

		if (cancelled(hooks))
			return false;
		if (left <= 0)
			return true;
		if (left > POLL_SLICE_MS)
			left = POLL_SLICE_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
	}
}

static void fill_defaults(struct http_options *o, const struct http_options *in)
{
	if (in)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->connect_timeout_ms <= 0)
		o->connect_timeout_ms = HTTP_DEFAULT_CONNECT_MS;
	if (o->idle_timeout_ms <= 0)
		o->idle_timeout_ms = HTTP_DEFAULT_IDLE_MS;
	if (o->max_retries == 0)
		o->max_retries = HTTP_DEFAULT_RETRIES;
	else if (o->max_retries < 0)
		o->max_retries = 0;
	if (o->backoff_base_ms <= 0)
		o->backoff_base_ms = HTTP_DEFAULT_BACKOFF_MS;
	if (o->backoff_cap_ms <= 0)
		o->backoff_cap_ms = HTTP_DEFAULT_BACKOFF_CAP_MS;
	if (o->retry_after_max_ms <= 0)
		o->retry_after_max_ms = HTTP_DEFAULT_RETRY_AFTER_MAX_MS;
}

int http_perform(const struct http_call *call, const struct http_options *opt_in,
		 const struct llm_hooks *hooks, struct http_stats *stats, char **err)
{
	struct tls_handles *h = thread_handles();
	struct http_options opt;
	struct http_result res = {0};
	struct curl_slist *headers = NULL;
	struct http_stats st = {0};
	int max_attempts, rc = PROVIDER_ERROR;

	*err = NULL;
	fill_defaults(&opt, opt_in);
	max_attempts = 1 + opt.max_retries;
	for (size_t i = 0; call->headers && i < call->headers->n; i++)
		headers = curl_slist_append(headers, call->headers->v[i]);
	/* No "Expect: 100-continue" round trip before large bodies. */
	headers = curl_slist_append(headers, "Expect:");
	if (!headers)
		fatal("curl_slist_append failed");
	strbuf_init(&res.body);

	for (int attempt = 1;; attempt++) {
		enum http_verdict v;
		char *msg = NULL;
		long wait;

		result_reset(&res);
		if (cancelled(hooks)) {
			rc = PROVIDER_CANCELLED;
			break;
		}
		if (call->begin)
			call->begin(call->ctx, attempt);
		st.attempts = attempt;
		if (!run_attempt(h, call, &opt, hooks, headers, &res)) {
			rc = PROVIDER_CANCELLED;
			break;
		}
		st.final_status = res.status;
		st.connects += res.connects;
		v = call->judge(call->ctx, &res, &msg);
		if (v == HTTP_DONE) {
			free(msg);
			rc = PROVIDER_OK;
			break;
		}
		if (!msg)
			msg = xstrdup("request failed");
		if (v == HTTP_FAIL || attempt >= max_attempts) {
			if (attempt > 1)
				*err = xasprintf("%s (gave up after %d attempts)", msg, attempt);
			else
				*err = xstrdup(msg);
			free(msg);
			rc = PROVIDER_ERROR;
			break;
		}
		if (res.retry_after_ms >= 0 && res.retry_after_ms <= opt.retry_after_max_ms)
			wait = res.retry_after_ms;
		else
			wait = backoff_ms(&opt, attempt);
		if (hooks && hooks->on_retry)
			hooks->on_retry(hooks->ctx, res.status, wait, attempt + 1, max_attempts,
					msg);
		free(msg);
		if (!wait_ms(wait, hooks)) {
			rc = PROVIDER_CANCELLED;
			break;
		}
	}
	result_reset(&res);
	strbuf_release(&res.body);
	curl_slist_free_all(headers);
	if (stats)
		*stats = st;
	return rc;
}

void http_redact(char *text, const char *secret)
{
	size_t tn, sn;

	if (!text || !secret)
		return;
	tn = strlen(text);
	sn = strlen(secret);
	if (sn == 0)
		return;
	for (size_t i = 0; i < tn; i++) {
		size_t best = 0;

		for (size_t j = 0; j < sn; j++) {
			size_t k = 0;

			while (i + k < tn && j + k < sn && text[i + k] == secret[j + k])
				k++;
			if (k > best)
				best = k;
		}
		/* Short keys are hidden whole; long ones by any run of 8 of their bytes. */
		if (best >= 8 || (best == sn && sn >= 4)) {
			memset(text + i, '*', best);
			i += best - 1;
		}
	}
}

/* ---- error bodies --------------------------------------------------------------------- */

#define ERROR_MSG_MAX 300

/* Copies at most ERROR_MSG_MAX bytes of a one-line rendering of s. */
static void add_oneline(struct strbuf *sb, const char *s, size_t n)
{
	size_t start = sb->len;

	for (size_t i = 0; i < n && sb->len - start < ERROR_MSG_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		strbuf_addc(sb, (c == '\n' || c == '\r' || c == '\t') ? ' '
								      : (c < 0x20 ? '?' : (char)c));
	}
	if (sb->len - start >= ERROR_MSG_MAX)
		strbuf_adds(sb, "…");
	while (sb->len > start && sb->buf[sb->len - 1] == ' ')
		sb->buf[--sb->len] = '\0';
}

static char *code_text(const cJSON *code)
{
	if (cJSON_IsString(code) && code->valuestring[0])
		return xstrdup(code->valuestring);
	if (cJSON_IsNumber(code))
		return xasprintf("%d", code->valueint);
	return NULL;
}

char *http_clean_text(const char *s)
{
	struct strbuf sb;

	strbuf_init(&sb);
	if (s)
		add_oneline(&sb, s, strlen(s));
	return strbuf_detach(&sb);
}

/* FastAPI's `detail`: a string, or a list of validation objects whose `msg` we join. */
static void add_detail(struct strbuf *out, const cJSON *detail)
{
	const cJSON *it;

	if (cJSON_IsString(detail)) {
		strbuf_adds(out, detail->valuestring);
		return;
	}
	cJSON_ArrayForEach(it, detail)
	{
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "msg");

		if (!cJSON_IsString(m))
			continue;
		if (out->len)
			strbuf_adds(out, "; ");
		strbuf_adds(out, m->valuestring);
	}
}

/* An HTML error page (a proxy, a web server on the wrong port) is cut to its <title>. */
static bool html_title(const char *body, size_t len, struct strbuf *out)
{
	char *copy = xstrndup(body, len), *t, *end;
	bool ok = false;

	for (char *p = copy; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	t = strstr(copy, "<title>");
	end = t ? strstr(t, "</title>") : NULL;
	if (t && end) {
		t += 7;
		strbuf_add(out, body + (t - copy), (size_t)(end - t));
		ok = out->len > 0;
	}
	free(copy);
	return ok;
}

char *http_describe_error(int status, const char *body, size_t len, char **kind)
{
	struct strbuf sb = STRBUF_INIT, words = STRBUF_INIT;
	cJSON *root;
	const cJSON *err = NULL, *obj = NULL;
	char *type = NULL;
	const char *message = NULL;

	strbuf_init(&sb);
	strbuf_init(&words);
	/* A JSON body may start with a UTF-8 byte-order mark. */
	if (body && len >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3)) {
		body += 3;
		len -= 3;
	}
	root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	if (status)
		strbuf_addf(&sb, "HTTP %d", status);
	else
		strbuf_adds(&sb, "error");
	if (root && !cJSON_IsObject(root)) {
		/* "42", "[…]": JSON, but no error object; shown as the text it is. */
		cJSON_Delete(root);
		root = NULL;
	}
	if (root) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
		const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
		const cJSON *detail = cJSON_GetObjectItemCaseSensitive(root, "detail");

		err = cJSON_GetObjectItemCaseSensitive(root, "error");
		if (cJSON_IsObject(err)) {
			obj = err; /* {"error":{…}} (Anthropic, OpenAI, llama.cpp) */
		} else if (cJSON_IsString(err) && cJSON_IsString(m) && m->valuestring[0]) {
			/* Gateways: {"error":"Bad Request","message":"…"}: the words are in
			 * `message`; `error` names the kind. */
			type = xstrdup(err->valuestring);
			message = m->valuestring;
		} else if (cJSON_IsString(err)) {
			message = err->valuestring; /* Ollama, LM Studio: {"error":"…"} */
		} else if (cJSON_IsString(title) && title->valuestring[0]) {
			/* RFC 7807 problem details: `type` is a URI nobody can act on; the
			 * title and the detail are the sentence. */
			strbuf_adds(&words, title->valuestring);
			if (cJSON_IsString(detail) && detail->valuestring[0]) {
				strbuf_adds(&words, ": ");
				strbuf_adds(&words, detail->valuestring);
			}
			message = words.buf;
		} else if (detail && !cJSON_IsString(m)) {
			add_detail(&words, detail); /* FastAPI: {"detail":"Not Found"} */
			if (words.len)
				message = words.buf;
		} else {
			obj = root; /* vLLM's flat {"object":"error","message",…} */
		}
	}
	if (obj) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(obj, "type");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "message");
		char *code = code_text(cJSON_GetObjectItemCaseSensitive(obj, "code"));

		if (cJSON_IsString(m))
			message = m->valuestring;
		/* OpenAI's `code` is the more specific ("insufficient_quota" under type
		 * "insufficient_quota" or "requests"); Anthropic has only `type`. */
		if (code && !(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(obj, "code"))))
			type = xstrdup(code);
		else if (cJSON_IsString(t) && t->valuestring[0] && obj != root)
			type = xstrdup(t->valuestring);
		else if (cJSON_IsString(t) && t->valuestring[0] && strcmp(t->valuestring, "error"))
			type = xstrdup(t->valuestring);
		else if (code)
			type = xstrdup(code);
		free(code);
	}
	/* llama.cpp's bare integer code repeats the status: say it once. */
	if (type && !(status && atoi(type) == status)) {
		strbuf_addc(&sb, ' ');
		add_oneline(&sb, type, strlen(type));
	}
	if (message && *message) {
		strbuf_adds(&sb, ": ");
		add_oneline(&sb, message, strlen(message));
	} else if (!root && body && len) {
		struct strbuf t = STRBUF_INIT;

		strbuf_init(&t);
		strbuf_adds(&sb, ": ");
		if (html_title(body, len, &t))
			add_oneline(&sb, t.buf, t.len);
		else
			add_oneline(&sb, body, len);
		strbuf_release(&t);
	} else if (!type) {
		strbuf_adds(&sb, " (no error message)");
	}
	cJSON_Delete(root);
	strbuf_release(&words);
	if (kind)
		*kind = type;
	else
		free(type);
	return strbuf_detach(&sb);
}

int http_error_code(const char *body, size_t len)
{
	cJSON *root;
	const cJSON *obj, *code;
	int n = 0;

	if (body && len >= 3 && !memcmp(body, "\xEF\xBB\xBF", 3)) {
		body += 3;
		len -= 3;
	}
	root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
	obj = cJSON_GetObjectItemCaseSensitive(root, "error");
	if (!cJSON_IsObject(obj))
		obj = root;
	code = cJSON_GetObjectItemCaseSensitive(obj, "code");
	if (cJSON_IsNumber(code) && code->valuedouble >= 100 && code->valuedouble < 600)
		n = (int)code->valuedouble;
	else if (cJSON_IsString(code) && strlen(code->valuestring) == 3 &&
		 strspn(code->valuestring, "0123456789") == 3)
		n = atoi(code->valuestring);
	if (n < 100 || n >= 600)
		n = 0;
	cJSON_Delete(root);
	return n;
}

bool http_code_transient(int code)
{
	return code == 408 || code == 409 || code == 429 || code >= 500;
}

char *http_endpoint(const char *base, const char *fallback, const char *strip, const char *path,
		    char **err)
{
	size_t n, k = strip ? strlen(strip) : 0;
	char *b, *url;

	*err = NULL;
	if (!base || !*base)
		base = fallback;
	if (strncasecmp(base, "http://", 7) && strncasecmp(base, "https://", 8)) {
		*err = xasprintf("base URL \"%s\" must start with http:// or https://", base);
		return NULL;
	}
	if (strpbrk(base, " \t\r\n")) {
		*err = xasprintf("base URL \"%s\" contains white space", base);
		return NULL;
	}
	b = xstrdup(base);
	n = strlen(b);
	while (n && b[n - 1] == '/')
		b[--n] = '\0';
	if (k && n >= k && !strcmp(b + n - k, strip))
		b[n - k] = '\0';
	url = xasprintf("%s%s", b, path);
	free(b);
	return url;
}
