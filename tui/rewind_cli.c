/* rewind_cli — the shell's rewind: the plan printed first, a question on a terminal (or
 * --yes), the restore, and the undo line. */
#include "config.h"

#include "rewind_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewind.h"
#include "textsan.h"
#include "xalloc.h"

#define LIST_MAX 200 /* files listed before "and N more" */

static char *clean(const char *s)
{
	return textsan_clean(s, strlen(s), 0);
}

/* What the rewind does to each file (the change is from the target to now). */
static const char *verb(enum cp_change c)
{
	return c == CP_ADDED ? "remove" : c == CP_DELETED ? "bring back" : "put back";
}

static bool ask_yes(size_t n)
{
	char line[16];

	printf("Rewind %zu file%s? [y/N] ", n, n == 1 ? "" : "s");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return false;
	return line[0] == 'y' || line[0] == 'Y';
}

int rewind_cli_main(const char *run_dir, const char *run_ref, const char *to, const char *workspace,
                    const struct strvec *exclude, bool yes)
{
	struct rewind rw;
	struct strvec restored = STRVEC_INIT, kept = STRVEC_INIT;
	char *err = NULL, *ref = clean(run_ref), *ws;
	int code = 0;

	if (!rewind_prepare(run_dir, to, workspace, false, exclude, &rw, &err)) {
		fprintf(stderr, "pevtui: cannot rewind: %s\n", err);
		free(err);
		rewind_release(&rw);
		free(ref);
		return 1;
	}
	ws = clean(rw.workspace);
	if (!rw.changes.n) {
		printf("pevtui: nothing to rewind: the workspace %s is as it was %s (checkpoint "
		       "%.12s)\n",
		       ws, rw.what, rw.target);
		goto out;
	}
	printf("pevtui: rewinding the workspace %s of run %s %s (checkpoint %.12s): %zu file%s "
	       "change%s back\n",
	       ws, rw.run_id, rw.what, rw.target, rw.changes.n, rw.changes.n == 1 ? "" : "s",
	       rw.changes.n == 1 ? "s" : "");
	for (size_t i = 0; i < rw.changes.n && i < LIST_MAX; i++) {
		char *p = clean(rw.changes.v[i].path);
		printf("  %-10s  %s\n", verb(rw.changes.v[i].change), p);
		free(p);
	}
	if (rw.changes.n > LIST_MAX)
		printf("  and %zu more\n", rw.changes.n - LIST_MAX);
	printf("The workspace as it is now is kept as checkpoint %s.\n", rw.undo);
	if (!yes && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "pevtui: nothing was changed: pass --yes to rewind without being "
		                "asked\n");
		code = 1;
		goto out;
	}
	if (!yes && !ask_yes(rw.changes.n)) {
		printf("pevtui: nothing was changed\n");
		code = 3;
		goto out;
	}
	if (!rewind_apply(&rw, &restored, &kept, &err)) {
		fprintf(stderr, "pevtui: the rewind is incomplete: %s\n", err);
		code = 1;
	}
	for (size_t i = 0; i < kept.n; i++) {
		char *p = clean(kept.v[i]);
		printf("pevtui: %s was there before that checkpoint and is not deleted: left as it "
		       "is\n",
		       p);
		free(p);
	}
	/* By id: "last" may name another run by the time it is undone. */
	printf("pevtui: rewound %s: %zu file%s restored. To undo: pevtui --rewind %s:%s\n", rw.what,
	       restored.n, restored.n == 1 ? "" : "s", strchr(ref, '/') ? ref : rw.run_id, rw.undo);
out:
	free(err);
	free(ws);
	free(ref);
	strvec_clear(&restored);
	strvec_clear(&kept);
	rewind_release(&rw);
	return code;
}
