/* fuzz_result — libFuzzer target: arbitrary bytes as executor or verifier output must never
 * crash, a result's normalized JSON must parse back to itself, and a per-criterion
 * meets_criteria must agree with its entries. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "result.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	char *err = NULL;
	struct exec_result *r;
	struct verdict *v;

	memcpy(text, data, size);
	text[size] = '\0';
	r = exec_result_parse(text, &err);
	if (r) {
		struct exec_result *again = exec_result_parse(r->json, &err);
		bool all = r->n_criteria_met > 0;

		if (!again || strcmp(again->json, r->json) != 0)
			abort(); /* normalization must be stable */
		if (again->meets_criteria != r->meets_criteria ||
		    again->n_criteria_met != r->n_criteria_met)
			abort(); /* the journal keeps what the executor claimed */
		for (size_t i = 0; i < r->n_criteria_met; i++) {
			if (!r->criteria_met[i].name || !*r->criteria_met[i].name)
				abort(); /* every criterion has a name to show */
			all = all && r->criteria_met[i].met;
		}
		if (r->n_criteria_met && r->meets_criteria != all)
			abort(); /* met means every criterion met */
		exec_result_free(again);
		exec_result_free(r);
	} else if (!err) {
		abort(); /* a failure always says why */
	}
	free(err);
	err = NULL;
	v = verdict_parse(text, &err);
	if (v) {
		cJSON *c = verdict_criteria_to_json(v);

		if (v->action != VERDICT_PASS && (!v->feedback || !*v->feedback))
			abort(); /* header promise: feedback when not pass */
		cJSON_Delete(c);
		verdict_free(v);
	} else if (!err) {
		abort();
	}
	free(err);
	free(text);
	return 0;
}
