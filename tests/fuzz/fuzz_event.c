/* fuzz_event — libFuzzer target: a journal line from a crashed or tampered run never
 * crashes the loader, and an accepted event keeps its line as its JSON. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = xmalloc(size + 1), *err = NULL;
	struct event *ev;

	memcpy(line, data, size);
	line[size] = '\0';
	ev = event_from_line(line, &err);
	if (ev) {
		struct event *again;
		char *err2 = NULL;
		if ((int)ev->type < 0 || ev->type >= EV__COUNT || !ev->json)
			abort();
		again = event_from_line(ev->json, &err2);
		if (!again || again->seq != ev->seq || again->type != ev->type)
			abort();
		event_free(again);
		free(err2);
	}
	event_free(ev);
	free(err);
	free(line);
	return 0;
}
