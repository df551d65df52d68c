/* rewind_cli — pevtui --rewind RUN[:STEP]: says what it will restore, asks (or --yes),
 * rewinds, and says how to undo it. */
#ifndef PEVTUI_REWIND_CLI_H
#define PEVTUI_REWIND_CLI_H

#include <stdbool.h>

struct strvec;

/*
 * Rewinds the workspace of the run in `run_dir` (`run_ref`: how the operator named it, for
 * the undo line) to before the run (`to` NULL), before step `to`, or to the checkpoint `to`
 * names. `workspace`: --workspace, or NULL. Returns the exit status: 0 done (or nothing to
 * do), 1 an error (one line on stderr), 3 the operator said no.
 */
int rewind_cli_main(const char *run_dir, const char *run_ref, const char *to, const char *workspace,
                    const struct strvec *exclude, bool yes);

#endif
