/* cost — prices per model and the cost of a call. */
#ifndef PEVTUI_COST_H
#define PEVTUI_COST_H

#include <stdbool.h>

struct llm_usage;

/* USD per million tokens. */
struct price {
	double input;
	double output;
	double cache_read;
	double cache_write;
};

/* The date the built-in prices were read and where. */
extern const char cost_prices_source[];

/* Looks a model up (longest matching prefix). false when the model is unknown. */
bool cost_lookup(const char *model, struct price *out);
/* Cost of one call in USD; *known false (and 0 returned) when the model is unknown. */
double cost_of_call(const char *model, const struct llm_usage *u, bool *known);

#endif
