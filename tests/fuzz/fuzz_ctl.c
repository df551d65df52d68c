/* fuzz_ctl — libFuzzer target: a control-socket line from any client never crashes the
 * parser, and an accepted command written again by ctl_line_* parses to the same one. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const char *a, const char *b)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_cmd c, again;
	char *err = NULL, *line = NULL;

	if (!ctl_parse((const char *)data, size, &c, &err)) {
		if (!err || !*err)
			abort();
		free(err);
		return 0;
	}
	if (c.verb == CTL_ANSWER)
		line = ctl_line_answer(c.gate_id, c.decision, c.json);
	else if (c.verb == CTL_COMMAND)
		line = ctl_line_command(c.cmd, c.step_id, c.json);
	if (line) {
		if (!ctl_parse(line, strlen(line) - 1, &again, &err))
			abort();
		if (again.verb != c.verb || again.gate_id != c.gate_id || again.cmd != c.cmd)
			abort();
		same(again.step_id, c.step_id);
		same(again.json, c.json);
		ctl_cmd_release(&again);
		free(line);
	}
	ctl_cmd_release(&c);
	return 0;
}
