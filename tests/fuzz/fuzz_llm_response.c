/* fuzz_llm_response — the Anthropic and OpenAI response parsers (streamed and whole) and the
 * error-body reader on arbitrary bytes. The first byte picks the parser. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llm_response out;
	char *err = NULL, *kind = NULL, *msg;
	int rc;

	if (size < 1)
		return 0;
	const char *body = (const char *)data + 1;
	size_t n = size - 1;

	switch (data[0] & 3) {
	case 0:
		rc = provider_anthropic_parse(body, n, true, &out, &err);
		break;
	case 1:
		rc = provider_anthropic_parse(body, n, false, &out, &err);
		break;
	case 2:
		rc = provider_openai_parse(body, n, true, &out, &err);
		break;
	default:
		rc = provider_openai_parse(body, n, false, &out, &err);
		break;
	}
	if (rc == PROVIDER_OK) {
		/* Every field of a good answer is a valid string. */
		if (!out.text || !out.stop_reason || !out.model)
			__builtin_trap();
		for (size_t i = 0; i < out.n_calls; i++)
			if (!out.calls[i].id || !out.calls[i].name || !out.calls[i].input_json)
				__builtin_trap();
		llm_response_release(&out);
	} else if (!err) {
		__builtin_trap();
	}
	free(err);
	msg = http_describe_error(400, body, n, &kind);
	if (!msg || strchr(msg, '\n'))
		__builtin_trap();
	free(msg);
	free(kind);
	return 0;
}
