/* report_changes — the run's total workspace change in report.md (see report_changes.h). */
#include "config.h"

#include "report_changes.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "fold.h"
#include "rundiff.h"
#include "textsan.h"
#include "xalloc.h"

#define FILES_LISTED 100 /* files named; the stat counts them all */

/* A path as a Markdown code span: one line, no escapes, no backtick to end it early. */
static void add_path(struct strbuf *sb, const char *path)
{
	char *c = textsan_clean(path, strlen(path), 0);

	strbuf_adds(sb, "`");
	for (char *p = c; *p; p++)
		strbuf_addc(sb, *p == '`' ? '\'' : *p);
	strbuf_adds(sb, "`");
	free(c);
}

void report_changes_render(struct strbuf *sb, const struct run_state *rs, const char *run_dir)
{
	struct checkpoints *cp;
	struct cp_changes ch;
	char *err = NULL, *stat;

	if (!rs->n_changes)
		return;
	strbuf_adds(sb, "## Workspace changes\n\n");
	cp = checkpoint_open_read(run_dir, &err);
	if (!cp || !rundiff_run(cp, rs, 0, &ch, &err)) {
		char *c = textsan_clean(err ? err : "?", err ? strlen(err) : 1, 0);

		strbuf_addf(sb, "The run's total change cannot be told: %s\n\n", c);
		free(c);
		free(err);
		checkpoint_close(cp);
		return;
	}
	checkpoint_close(cp);
	stat = cp_changes_stat(&ch);
	strbuf_addf(sb,
	            "From the first checkpoint to the last, the run changed the workspace: "
	            "%s.\n",
	            stat);
	free(stat);
	for (size_t i = 0; i < ch.n && i < FILES_LISTED; i++) {
		const struct cp_file *f = &ch.v[i];

		strbuf_adds(sb, "- ");
		add_path(sb, f->path);
		strbuf_addf(sb, " %s", cp_change_name(f->change));
		if (f->binary)
			strbuf_addf(sb, " (binary, %llu → %llu bytes)\n",
			            (unsigned long long)f->old_size,
			            (unsigned long long)f->new_size);
		else
			strbuf_addf(sb, " (+%ld −%ld)\n", f->plus, f->minus);
	}
	if (ch.n > FILES_LISTED)
		strbuf_addf(sb, "- and %zu more\n", ch.n - FILES_LISTED);
	strbuf_adds(sb, "\nThe diff: `pevtui --diff ");
	if (rs->run_id) {
		char *c = textsan_clean(rs->run_id, strlen(rs->run_id), 0);

		strbuf_adds(sb, c);
		free(c);
	} else {
		strbuf_adds(sb, "RUN");
	}
	strbuf_adds(sb, "` (one step: `RUN:STEP`).\n\n");
	if (ch.n_excluded) {
		strbuf_addf(sb,
		            "Left out of the checkpoints on purpose (`[checkpoints] exclude` or a "
		            "`.gitignore`), so neither compared nor restored: %zu path%s",
		            ch.n_excluded, ch.n_excluded == 1 ? "" : "s");
		for (size_t i = 0; i < ch.excluded.n && i < 20; i++) {
			strbuf_adds(sb, i ? ", " : ": ");
			add_path(sb, ch.excluded.v[i]);
		}
		if (ch.n_excluded > 20 && ch.excluded.n >= 20)
			strbuf_addf(sb, " and %zu more", ch.n_excluded - 20);
		strbuf_adds(sb, ".\n\n");
	}
	cp_changes_release(&ch);
}
