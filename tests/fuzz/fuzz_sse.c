/* fuzz_sse — the SSE parser on arbitrary bytes, fed in two pieces split anywhere. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *ctx, const char *event, const char *d, size_t len)
{
	/* The contract: NUL-terminated data of the stated length. */
	if (strlen(d) > len || d[len] != '\0')
		__builtin_trap();
	*(size_t *)ctx += len + strlen(event);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t total = 0, split;
	struct sse_parser *p = sse_new(check, &total);

	split = size ? data[0] % (size + 1) : 0;
	sse_feed(p, (const char *)data, split);
	sse_feed(p, (const char *)data + split, size - split);
	sse_finish(p);
	sse_free(p);
	return 0;
}
