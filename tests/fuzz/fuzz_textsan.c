/* fuzz_textsan — libFuzzer target: whatever bytes a model sends, the cleaned text is valid
 * UTF-8 with no escape or control byte left, and cleaning it again changes nothing. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "textsan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *clean = textsan_clean((const char *)data, size, TEXTSAN_KEEP_NL);
	size_t n = strlen(clean), off = 0;
	char *again;

	while (off < n) {
		uint32_t cp;
		size_t used = textsan_decode(clean + off, n - off, &cp);
		/* No C0 control but newline, no DEL, no C1 control survives. */
		if ((cp < 0x20 && cp != '\n') || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			abort();
		off += used;
	}
	again = textsan_clean(clean, n, TEXTSAN_KEEP_NL);
	if (strcmp(again, clean) != 0)
		abort();
	(void)textsan_width(clean);
	free(again);
	free(clean);
	return 0;
}
