/* provider_openai — OpenAI Chat Completions and compatible servers (Ollama, vLLM,
 * llama.cpp, LM Studio, OpenRouter) over http.c, streamed by default. */
#ifndef PEVTUI_PROVIDER_OPENAI_H
#define PEVTUI_PROVIDER_OPENAI_H

#include <stdbool.h>
#include <stddef.h>

#include "provider.h"

struct http_options;

#define OPENAI_DEFAULT_BASE_URL "https://api.openai.com/v1"

/*
 * A provider for POST {base_url}/chat/completions (base_url includes the "/v1" when the
 * server wants it; NULL or "" means the public API). api_key NULL or "" sends no
 * Authorization header, for local servers. Returns NULL with *err (caller frees) on
 * unusable arguments. Free with provider_free.
 */
struct provider *provider_openai_new(const char *base_url, const char *api_key, char **err);

/* Strong model to plan, balanced to execute, fast and cheap to verify. */
const char *provider_openai_default_model(enum llm_role role);

/* Transport settings (timeouts, retries); call before the first call. opt is copied. */
void provider_openai_set_http(struct provider *p, const struct http_options *opt);
/* Non-streamed requests instead of SSE (used by the tests; no deltas are reported). */
void provider_openai_set_stream(struct provider *p, bool stream);
/* The body a call would send for req, response_format included when json_mode; for
 * tests. Caller frees. */
char *provider_openai_body(struct provider *p, const struct llm_request *req, bool json_mode);
/* True once the server rejected response_format and JSON is asked for in prose only. */
bool provider_openai_json_mode_disabled(const struct provider *p);

/* Parses a complete response body like a call would; for tests and fuzzing. */
int provider_openai_parse(const char *body, size_t len, bool stream, struct llm_response *out,
			  char **err);

#endif
