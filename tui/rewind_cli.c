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

static bool ask_yes(size_t n)
{
	char line[16];

	printf("Rewind %zu file%s? [y/N] ", n, n == 1 ? "" : "s");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return false;
	return line[0] == 'y' || line[0] == 'Y';
}

/* The plan, one line a path: "  remove      new.txt", "  keep        cache.tmp: why". */
static void print_plan(const struct cp_plan *plan)
{
	size_t shown = 0;

	for (size_t i = 0; i < plan->n && shown < LIST_MAX; i++, shown++) {
		const struct cp_plan_ent *e = &plan->v[i];
		char *p = clean(e->path);
		if (e->act == CP_ACT_KEEP) {
			char *w = clean(e->why ? e->why : "");
			printf("  %-10s  %s: %s\n", cp_act_verb(e->act), p, w);
			free(w);
		} else {
			printf("  %-10s  %s\n", cp_act_verb(e->act), p);
		}
		free(p);
	}
	if (plan->n > LIST_MAX)
		printf("  and %zu more\n", plan->n - LIST_MAX);
}

int rewind_cli_main(const char *run_dir, const char *run_ref, const char *to, const char *workspace,
                    const struct strvec *exclude, bool yes)
{
	struct rewind rw;
	char *err = NULL, *ref = clean(run_ref), *ws, *sum;
	size_t acts, kept;
	int code = 0;

	if (!rewind_prepare(run_dir, to, workspace, false, exclude, &rw, &err)) {
		fprintf(stderr, "pevtui: cannot rewind: %s\n", err);
		free(err);
		rewind_release(&rw);
		free(ref);
		return 1;
	}
	ws = clean(rw.workspace);
	acts = cp_plan_acts(&rw.plan);
	kept = rw.plan.n - acts;
	if (!acts) {
		printf("pevtui: nothing to rewind: the workspace %s is as it was %s (checkpoint "
		       "%.12s)%s\n",
		       ws, rw.what, rw.target, kept ? "; these are kept as they are:" : "");
		print_plan(&rw.plan);
		goto out;
	}
	printf("pevtui: rewinding the workspace %s of run %s %s (checkpoint %.12s): %zu file%s "
	       "change%s back",
	       ws, rw.run_id, rw.what, rw.target, acts, acts == 1 ? "" : "s", acts == 1 ? "s" : "");
	if (kept)
		printf(", %zu kept as %s", kept, kept == 1 ? "it is" : "they are");
	printf("\n");
	print_plan(&rw.plan);
	/* Asked first, done after: without a terminal to ask on, nothing is written (not
	 * even the undo checkpoint). */
	if (!yes && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "pevtui: nothing was changed: pass --yes to rewind without being "
		                "asked\n");
		code = 1;
		goto out;
	}
	if (!yes && !ask_yes(acts)) {
		printf("pevtui: nothing was changed\n");
		code = 3;
		goto out;
	}
	if (!rewind_apply(&rw, &err)) {
		fprintf(stderr, "pevtui: the rewind is incomplete: %s\n", err);
		code = 1;
		if (!rw.undo[0])
			goto out;
	}
	for (size_t i = 0, n = 0; i < rw.plan.n && n < LIST_MAX; i++) {
		const struct cp_plan_ent *e = &rw.plan.v[i];
		char *p, *w;
		if (e->act != CP_ACT_KEEP)
			continue;
		p = clean(e->path);
		w = clean(e->why ? e->why : "");
		printf("pevtui: kept: %s, %s\n", p, w);
		free(p);
		free(w);
		n++;
	}
	sum = cp_plan_counts(&rw.plan, true);
	/* By id: "last" may name another run by the time it is undone. */
	printf("pevtui: rewound %s: %s. To undo: pevtui --rewind %s:%s\n", rw.what, sum,
	       strchr(ref, '/') ? ref : rw.run_id, rw.undo);
	free(sum);
out:
	free(err);
	free(ws);
	free(ref);
	rewind_release(&rw);
	return code;
}
