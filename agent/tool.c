/* tool — the registry of workspace tools the executor may call. One file per tool. */
#include "config.h"
#include "tool.h"

#include <string.h>

/* Each tool lives in its own file; adding one is a new file plus one line below. */
extern const struct tool_def tool_read_file;
extern const struct tool_def tool_write_file;
extern const struct tool_def tool_list_files;
extern const struct tool_def tool_lookup;

/* The order is the order the model sees them in. */
static const struct tool_def *const registry[] = {
	&tool_read_file,
	&tool_write_file,
	&tool_list_files,
	&tool_lookup,
};

const struct tool_def *const *tool_registry(size_t *n)
{
	if (n)
		*n = sizeof(registry) / sizeof(registry[0]);
	return registry;
}

const struct tool_def *tool_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}
