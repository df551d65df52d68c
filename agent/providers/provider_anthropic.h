/* provider_anthropic — the Anthropic Messages API over http.c, streamed by default. */
#ifndef PEVTUI_PROVIDER_ANTHROPIC_H
#define PEVTUI_PROVIDER_ANTHROPIC_H

#include <stdbool.h>
#include <stddef.h>

#include "provider.h"

struct http_options;

#define ANTHROPIC_DEFAULT_BASE_URL "https://api.anthropic.com"
#define ANTHROPIC_VERSION "2023-06-01"

/*
 * A provider for POST {base_url}/v1/messages. base_url NULL or "" means the public API; a
 * trailing "/" or "/v1" is tolerated. api_key is copied and only ever sent as x-api-key.
 * Returns NULL with *err (caller frees) when the arguments are unusable (no key, a URL
 * that is not http(s)). Free with provider_free.
 */
struct provider *provider_anthropic_new(const char *base_url, const char *api_key, char **err);

/* Strong model to plan, balanced to execute, fast and cheap to verify. */
const char *provider_anthropic_default_model(enum llm_role role);

/* Transport settings (timeouts, retries); call before the first call. opt is copied. */
void provider_anthropic_set_http(struct provider *p, const struct http_options *opt);
/* Non-streamed requests instead of SSE (used by the tests; no deltas are reported). */
void provider_anthropic_set_stream(struct provider *p, bool stream);

/* The body a call would send for req; for tests. Caller frees. */
char *provider_anthropic_body(struct provider *p, const struct llm_request *req);
/*
 * Parses a complete response body (SSE when `stream`, else one JSON message) into *out the
 * way a call would. Returns PROVIDER_OK, or PROVIDER_ERROR with *err. For tests and fuzzing.
 */
int provider_anthropic_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			     char **err);

#endif
