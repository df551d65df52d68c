/* cost — built-in prices (USD per million tokens) and the cost of one call. */
#include "config.h"

#include "cost.h"

#include <string.h>

#include "provider.h"

const char cost_prices_source[] =
	"Anthropic platform pricing page and secondary sources for OpenAI, read 2026 "
	"(see ../shared/WIRE.md); sim-* prices are simulated";

struct price_row {
	const char *prefix;
	struct price p;
};

/* Longest prefix wins, so "gpt-4o-mini" is matched before "gpt-4o". */
static const struct price_row prices[] = {
	{"claude-opus-4", {5.00, 25.00, 0.50, 6.25}},
	{"claude-sonnet-4", {3.00, 15.00, 0.30, 3.75}},
	{"claude-haiku-4", {1.00, 5.00, 0.10, 1.25}},
	{"gpt-4.1", {2.00, 8.00, 0.50, 0.0}},
	{"gpt-4o-mini", {0.15, 0.60, 0.075, 0.0}},
	{"gpt-4o", {2.50, 10.00, 1.25, 0.0}},
	{"o4-mini", {1.10, 4.40, 0.275, 0.0}},
	{"gpt-5-nano", {0.05, 0.40, 0.005, 0.0}},
	{"gpt-5-mini", {0.25, 2.00, 0.025, 0.0}},
	{"gpt-5", {1.25, 10.00, 0.125, 0.0}},
	/* The simulated provider's models, priced like their real counterparts so the demo's
	 * cost meter moves plausibly. Always labelled simulated on screen. */
	{"sim-planner", {3.00, 15.00, 0.30, 3.75}},
	{"sim-executor", {3.00, 15.00, 0.30, 3.75}},
	{"sim-verifier", {1.00, 5.00, 0.10, 1.25}},
};

bool cost_lookup(const char *model, struct price *out)
{
	size_t best_len = 0;
	const struct price_row *best = NULL;

	if (!model)
		return false;
	for (size_t i = 0; i < sizeof(prices) / sizeof(prices[0]); i++) {
		size_t n = strlen(prices[i].prefix);
		if (n > best_len && strncmp(model, prices[i].prefix, n) == 0) {
			best = &prices[i];
			best_len = n;
		}
	}
	if (!best)
		return false;
	*out = best->p;
	return true;
}

double cost_of_call(const char *model, const struct llm_usage *u, bool *known)
{
	struct price p;

	if (!cost_lookup(model, &p)) {
		*known = false;
		return 0.0;
	}
	*known = true;
	return ((double)u->input_tokens * p.input + (double)u->output_tokens * p.output +
		(double)u->cache_read_tokens * p.cache_read +
		(double)u->cache_write_tokens * p.cache_write) /
	       1e6;
}
