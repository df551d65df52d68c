/* run_list — `pevtui --list-runs`: one line per run folder, from one fold of its journal. */
#ifndef PEVTUI_RUN_LIST_H
#define PEVTUI_RUN_LIST_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Prints a header and, for each folder below runs_dir (sorted by name), its id, state
 * ("running" while a pevtui holds it, else how it ended or "unfinished", or
 * "unreadable" with the reason), age, cost, provider ("simulated" for the sim provider)
 * and task. Everything taken from the folder —
 * names, tasks, load errors — is cleaned of terminal controls and cut to its column
 * without splitting a character. A missing runs_dir prints "no runs yet". false + *err
 * when runs_dir cannot be read.
 */
bool run_list_print(FILE *out, const char *runs_dir, char **err);

struct strvec;

/*
 * The run folders below runs_dir (names not starting with '.'), oldest first: by when
 * they started — the `ts` of the journal's first event (to the millisecond), else the
 * time in a pevtui id (YYYYMMDD-HHMMSS-…), else when the folder last changed — then by
 * name. Appended to *ids. false + *err when runs_dir cannot be read ("no runs yet in …"
 * when it does not exist).
 */
bool run_list_ids(const char *runs_dir, struct strvec *ids, char **err);
/*
 * RUN as --resume and --replay take it, among `ids` (oldest first): an id, "last" (the
 * newest), or the start of exactly one id (as git takes a short commit id). The id
 * (caller frees), or NULL + *err: no such run (in `where`, may be NULL), or an ambiguous
 * start with the runs it could be, one a line (the newest 10).
 */
char *run_list_pick(const struct strvec *ids, const char *ref, const char *where, char **err);
/* How long ago `then` (seconds since the epoch) was: "42s", "7m", "3h", "2d"; "?" when
 * unknown (0 or less). Caller frees. */
char *run_list_age(double then);
/* run_list_pick over run_list_ids(runs_dir). */
char *run_list_resolve(const char *runs_dir, const char *ref, char **err);

#endif
