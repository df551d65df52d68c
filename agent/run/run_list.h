/* run_list — `pevtui --list-runs`: one line per run folder, from one fold of its journal. */
#ifndef PEVTUI_RUN_LIST_H
#define PEVTUI_RUN_LIST_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Prints a header and, for each folder below runs_dir (sorted by name), its id, state
 * ("running" while a pevtui holds it, else how it ended or "unfinished", or
 * "unreadable" with the reason), age, cost and task. Everything taken from the folder —
 * names, tasks, load errors — is cleaned of terminal controls and cut to its column
 * without splitting a character. A missing runs_dir prints "no runs yet". false + *err
 * when runs_dir cannot be read.
 */
bool run_list_print(FILE *out, const char *runs_dir, char **err);

#endif
