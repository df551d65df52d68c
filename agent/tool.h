/* tool — the registry of workspace tools the executor may call. One file per tool. */
#ifndef PEVTUI_TOOL_H
#define PEVTUI_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

struct cJSON;

/* What a tool may touch. */
struct tool_env {
	int ws_fd;              /* O_PATH/O_DIRECTORY descriptor of the workspace root */
	const char *ws_path;    /* for messages only; never used to open files */
	bool demo;              /* demo-only tools are offered (simulated provider) */
};

struct tool_def {
	const char *name;
	const char *description;
	const char *schema_json; /* JSON Schema of the input object */
	bool demo_only;          /* offered only in demo/simulated runs */
	/* Runs the tool. Returns true on success with the result text in *out; false with a
	 * sentence the model can read and act on in *out. Never crashes on bad input. */
	bool (*run)(const struct tool_env *env, const struct cJSON *input, struct strbuf *out);
};

/* Every tool, in a fixed order. */
const struct tool_def *const *tool_registry(size_t *n);
const struct tool_def *tool_find(const char *name);

/* Output longer than this is cut, with a note saying how much was cut. */
#define TOOL_MAX_OUTPUT (64 * 1024)

#endif
