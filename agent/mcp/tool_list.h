/* tool_list — `pevtui --list-tools`: every tool the executor would be offered, built-in
 * and MCP, with its server and gate policy. */
#ifndef PEVTUI_TOOL_LIST_H
#define PEVTUI_TOOL_LIST_H

#include <stdio.h>

struct settings;

/* Starts the MCP servers of `s` (and stops them), prints the table to `out`; a server
 * that fails is named on stderr. Returns the exit status: 0, or 1 when a server failed. */
int tool_list_print(FILE *out, const struct settings *s);

#endif
