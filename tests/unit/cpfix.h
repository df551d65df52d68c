/* cpfix — the checkpoint store fixture the checkpoint unit tests share: a run folder and
 * a workspace in a new temporary folder, a store opened on them, and file helpers. */
#ifndef PEVTUI_TEST_CPFIX_H
#define PEVTUI_TEST_CPFIX_H

#include <stdbool.h>

#include "checkpoint.h"

struct cpfix {
	char *top; /* holds run/, ws/ and outside/ */
	char *run, *ws, *outside;
	char *data; /* XDG_DATA_HOME: the workspace's store is below it */
	struct checkpoints *cp;
};

/* cmocka setup and teardown: *state is a new struct cpfix, then freed with its folder. */
int cpfix_setup(void **state);
int cpfix_teardown(void **state);
/* A cmocka test run with the fixture. */
#define CPFIX_TEST(f) cmocka_unit_test_setup_teardown(f, cpfix_setup, cpfix_teardown)

/* REL's path in the workspace; caller frees. */
char *cpfix_at(const struct cpfix *fx, const char *rel);
/* Writes TEXT to workspace file REL (its folder must exist). */
void cpfix_put(const struct cpfix *fx, const char *rel, const char *text);
/* Workspace file REL as a string, or NULL if it cannot be read; caller frees. */
char *cpfix_get(const struct cpfix *fx, const char *rel);
/* Whether REL exists in the workspace (a link counts, not followed). */
bool cpfix_exists(const struct cpfix *fx, const char *rel);
/* Takes a checkpoint into ID (warnings, may be NULL, collects what was left out). */
void cpfix_take(struct cpfix *fx, char id[CP_ID_LEN + 1], struct strvec *warnings);
/* One attempt of STEP writing REL = TEXT, between its two checkpoints, noted in the
 * step's series; the checkpoint ids out in BEFORE and AFTER. */
void cpfix_attempt(struct cpfix *fx, const char *step, const char *rel, const char *text,
                   char before[CP_ID_LEN + 1], char after[CP_ID_LEN + 1]);

/* The store the run folder names (below fx->data); caller frees. */
char *cpfix_store(const struct cpfix *fx);
/* The store again, as a new process opens it: what it knew in memory is gone. */
void cpfix_reopen(struct cpfix *fx);

struct series_rebuild;
/* Feeds one journal line (printf format) to the rebuilder; CPFIX_EV(type) starts one. */
void cpfix_feed(struct series_rebuild *sr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define CPFIX_EV(type) "{\"seq\":1,\"ts\":\"2026-01-01T00:00:00.000Z\",\"type\":\"" type "\""

#endif
