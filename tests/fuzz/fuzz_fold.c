/* fuzz_fold — libFuzzer target: any sequence of journal lines (one per input line), as a
 * tampered or torn journal may hold, folds into run state without a crash, and the state
 * stays consistent enough for its readers (steps and gates found by what they hold). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "fold.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1), *line, *save = NULL;
	struct run_state rs;
	bool unknown;

	memcpy(text, data, size);
	text[size] = '\0';
	fold_init(&rs);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *err = NULL;
		struct event *ev = event_from_line(line, &err);
		if (ev)
			fold_apply(&rs, ev);
		event_free(ev);
		free(err);
	}
	for (size_t i = 0; i < rs.n_steps; i++) {
		if (fold_find_step(&rs, rs.steps[i].id) < 0 || rs.steps[i].state >= FS__COUNT)
			abort();
		(void)fold_step_seconds(&rs.steps[i], 1e9);
	}
	for (size_t g = 0; g < rs.n_gates; g++)
		if (!fold_find_gate(&rs, rs.gates[g].id))
			abort();
	(void)fold_total_usd(&rs, &unknown);
	fold_release(&rs);
	free(text);
	return 0;
}
