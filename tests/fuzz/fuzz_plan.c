/* fuzz_plan — libFuzzer target: arbitrary bytes as planner output must never crash, and a
 * plan that parses must survive JSON out and back in unchanged. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "strbuf.h"
#include "xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Model text reaches the parser as a C string: an embedded NUL simply ends it. */
	char *text = xmalloc(size + 1);
	struct strvec errs = STRVEC_INIT;
	struct plan *p, *back, *copy;
	char *json;

	memcpy(text, data, size);
	text[size] = '\0';
	p = plan_parse(text, &errs);
	if (p) {
		if (plan_validate(p, &errs)) {
			size_t *order = plan_topo_order(p);
			unsigned char *seen = xcalloc(p->n_steps + 1, 1);

			for (size_t i = 0; i < p->n_steps; i++) {
				if (order[i] >= p->n_steps || seen[order[i]])
					abort(); /* not a permutation */
				seen[order[i]] = 1;
			}
			free(seen);
			free(order);
		}
		json = plan_to_string(p, (size & 1) != 0);
		strvec_clear(&errs);
		back = plan_parse(json, &errs);
		if (!back || !plan_equal(p, back))
			abort(); /* to_json must round-trip */
		copy = plan_clone(p);
		if (!plan_equal(p, copy))
			abort();
		plan_free(copy);
		plan_free(back);
		free(json);
		plan_free(p);
	}
	strvec_clear(&errs);
	free(text);
	return 0;
}
