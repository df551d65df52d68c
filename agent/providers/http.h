/* http — the libcurl transport of the real providers: one reused handle per thread,
 * timeouts, cancellation, and the retry rules of both official SDKs (WIRE.md). */
#ifndef PEVTUI_HTTP_H
#define PEVTUI_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct llm_hooks;

/* Timeouts and retry policy; zeros mean the defaults below. */
struct http_options {
	long connect_timeout_ms; /* default 10 s */
	long idle_timeout_ms;    /* a response silent this long is cut; default 180 s */
	int max_retries;         /* default 4 (5 attempts); -1 means none */
	long backoff_base_ms;    /* default 500 ms, doubled per retry */
	long backoff_cap_ms;     /* default 8 s */
	long retry_after_max_ms; /* a server asking for longer is ignored; default 60 s */
};

#define HTTP_DEFAULT_CONNECT_MS 10000L
#define HTTP_DEFAULT_IDLE_MS 180000L
#define HTTP_DEFAULT_RETRIES 4
#define HTTP_DEFAULT_BACKOFF_MS 500L
#define HTTP_DEFAULT_BACKOFF_CAP_MS 8000L
#define HTTP_DEFAULT_RETRY_AFTER_MAX_MS 60000L

/* What one attempt produced, as seen by the provider's `judge` callback. */
struct http_result {
	int status;              /* HTTP status; 0 when no response arrived */
	bool transport_error;    /* connection refused/reset, timeout, cut mid-body … */
	bool idle_timeout;       /* cut because it went silent for idle_timeout_ms */
	char *transport_msg;     /* one sentence for transport errors (owned by http) */
	int should_retry;        /* x-should-retry: 1 true, 0 false, -1 absent */
	long retry_after_ms;     /* from retry-after-ms / retry-after; -1 when absent */
	struct strbuf body;      /* the body of a non-2xx answer (bounded) */
	long connects;           /* new TCP connections this attempt (CURLINFO_NUM_CONNECTS) */
};

enum http_verdict { HTTP_DONE, HTTP_RETRY, HTTP_FAIL };

/* One logical call, attempted up to 1 + max_retries times. */
struct http_call {
	const char *url;
	const struct strvec *headers; /* "Name: value" lines */
	const char *body;
	size_t body_len;
	void *ctx;
	/* Before each attempt (1-based): forget what an earlier attempt parsed. */
	void (*begin)(void *ctx, int attempt);
	/* Bytes of a 2xx body as they arrive; false aborts the transfer (then judged). */
	bool (*on_body)(void *ctx, const char *buf, size_t n);
	/* After each attempt: done, retry, or fail; for RETRY/FAIL sets *msg (one sentence
	 * without the provider name, caller-owned) used as the on_retry reason or error. */
	enum http_verdict (*judge)(void *ctx, const struct http_result *res, char **msg);
};

/* Totals of one http_perform, for latency and connection accounting. */
struct http_stats {
	int attempts;
	int final_status;
	long connects;
};

/*
 * Runs the call with retries. Calls hooks->on_retry before each wait; the wait and the
 * transfer stop within ~100 ms of *hooks->cancel becoming true. Returns PROVIDER_OK,
 * PROVIDER_ERROR (with *err: the last judge message, caller frees) or PROVIDER_CANCELLED.
 * `opt` may be NULL. Thread-safe: each thread uses its own curl handles.
 */
int http_perform(const struct http_call *call, const struct http_options *opt,
		 const struct llm_hooks *hooks, struct http_stats *stats, char **err);

/* The SDK rule for a non-2xx status: x-should-retry first, else 408/409/429/>=500. */
bool http_status_retryable(const struct http_result *res);

/* Parses a Retry-After value (seconds or an HTTP date); -1 when unusable. */
long http_parse_retry_after(const char *value, long now_epoch_s);

/*
 * One sentence for a non-2xx answer: "HTTP 401 authentication_error: invalid x-api-key".
 * Understands the error bodies of Anthropic, OpenAI and the compatible servers (nested or
 * flat, `code` as string, integer or null, `{"error":"text"}`, non-JSON bodies). When
 * `kind` is not NULL it receives the error type or code ("insufficient_quota"), or NULL.
 * Caller frees both.
 */
char *http_describe_error(int status, const char *body, size_t len, char **kind);

/* The HTTP-like status an error body carries in `error.code` or a flat `code` (an
 * integer, or a string of three digits as OpenRouter may send); 0 when none. */
int http_error_code(const char *body, size_t len);

/* The SDK rule for a status without headers: 408, 409, 429 and 5xx are worth a retry;
 * other 4xx are the request's fault and would fail again. */
bool http_code_transient(int code);

/* Outside text made fit for one line of an error: control characters replaced, at most
 * 300 bytes (then "…"). Caller frees. */
char *http_clean_text(const char *s);

/* Replaces any run of 8 or more characters of `secret` found in `text` by '*' (in place),
 * so servers that echo a key, even partly, cannot leak it into an error. */
void http_redact(char *text, const char *secret);

/*
 * The URL of an endpoint: `base` (or `fallback` when NULL/empty) without trailing '/' and
 * without a trailing `strip` ("/v1", so both spellings of a base URL work), then `path`.
 * NULL with *err (caller frees) when the base is not http:// or https://.
 */
char *http_endpoint(const char *base, const char *fallback, const char *strip, const char *path,
		    char **err);

/* Frees the calling thread's curl handles (they are also freed at thread exit). */
void http_thread_cleanup(void);

#endif
