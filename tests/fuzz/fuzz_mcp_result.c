/* fuzz_mcp_result — libFuzzer target: arbitrary bytes as an MCP server's tools/call result
 * must never crash, and what the model and the screen get is clean UTF-8 with no terminal
 * control, within its bound. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "mcp_result.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

#define BOUND 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	struct strbuf out = STRBUF_INIT;
	unsigned long files = 0;
	cJSON *res;

	memcpy(text, data, size);
	text[size] = '\0';
	res = cJSON_Parse(text);
	strbuf_init(&out);
	if (res) {
		mcp_result_render(res, "srv", "tool", &files, -1, &out); /* nothing is saved */
		mcp_result_bound(&out, BOUND);
		if (out.len > BOUND + 100)
			abort(); /* bounded, with a short note */
		for (size_t i = 0; i < out.len; i++)
			if (out.buf[i] == 0x1b || out.buf[i] == 0x07 || out.buf[i] == 0x7f)
				abort(); /* no terminal control survives */
		char *again = textsan_clean(out.buf, out.len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
		if (strcmp(again, out.buf))
			abort(); /* already clean: cleaning again changes nothing */
		free(again);
	}
	cJSON_Delete(res);
	strbuf_release(&out);
	free(text);
	return 0;
}
