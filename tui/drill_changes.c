/* drill_changes — a step's workspace changes as a drill-down page (see drill_changes.h). */
#include "config.h"

#include "drill_changes.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "drill.h"
#include "fold.h"
#include "rundiff.h"
#include "textsan.h"
#include "view.h"
#include "xalloc.h"

/* Diff text kept per attempt for the page; a longer one ends with a note. */
#define DRILL_CHANGES_MAX ((size_t)4 << 20)

static void add_clean(struct linestore *page, int kind, char *s)
{
	char *c = textsan_clean(s, strlen(s), 0);

	linestore_add(page, kind, c);
	free(c);
	free(s);
}

static char *file_line(const struct cp_file *f)
{
	char mark = f->change == CP_ADDED ? 'A' : f->change == CP_DELETED ? 'D' : 'M';

	if (f->binary)
		return xasprintf("  %c %s  binary, %llu \xe2\x86\x92 %llu bytes", mark, f->path,
		                 (unsigned long long)f->old_size, (unsigned long long)f->new_size);
	if (f->old_mode && f->new_mode && f->old_mode != f->new_mode)
		return xasprintf("  %c %s  +%ld \xe2\x88\x92%ld  mode %o \xe2\x86\x92 %o", mark,
		                 f->path, f->plus, f->minus, f->old_mode, f->new_mode);
	return xasprintf("  %c %s  +%ld \xe2\x88\x92%ld", mark, f->path, f->plus, f->minus);
}

/* One attempt: its head line, its files, its diff. */
static bool one(struct linestore *page, struct checkpoints *cp, const struct fchange *fc,
                char **err)
{
	struct cp_changes ch;
	char *stat;

	if (!fc->before[0] || !fc->after[0]) {
		add_clean(
		    page, VL_WARN,
		    xasprintf("Attempt %d: the journal names no checkpoints for it.", fc->attempt));
		return true;
	}
	if (!rundiff_attempt(cp, fc, DRILL_CHANGES_MAX, &ch, err))
		return false;
	stat = cp_changes_stat(&ch);
	add_clean(page, VL_HEADER,
	          xasprintf("Attempt %d%s: %s", fc->attempt,
	                    fc->cut ? " (cut off by a stop; its changes found on --resume)" : "",
	                    stat));
	free(stat);
	add_clean(
	    page, DRILL_DIM,
	    xasprintf("  checkpoints %.12s \xe2\x86\x92 %.12s (pevtui --diff RUN:%s prints them "
	              "all)",
	              fc->before, fc->after, fc->step_id));
	for (size_t i = 0; i < ch.n; i++) {
		char *line = file_line(&ch.v[i]);
		bool shared = false;
		for (size_t k = 0; k < fc->shared.n && !shared; k++)
			shared = !strcmp(fc->shared.v[k], ch.v[i].path);
		if (shared) {
			char *l2 = xasprintf("%s  shared (another step's attempt ran too)", line);
			free(line);
			line = l2;
		}
		add_clean(page,
		          ch.v[i].change == CP_ADDED     ? DRILL_ADD
		          : ch.v[i].change == CP_DELETED ? DRILL_DEL
		                                         : VL_TEXT,
		          line);
	}
	if ((long)fc->paths.n < fc->n_files)
		add_clean(page, DRILL_DIM,
		          xasprintf("  and %ld more files the journal does not list",
		                    fc->n_files - (long)fc->paths.n));
	if (ch.n && ch.diff && *ch.diff) {
		linestore_add(page, VL_TEXT, " "); /* a blank line */
		drill_diff(page, ch.diff);
	}
	if (ch.diff_cut)
		add_clean(
		    page, VL_NOTICE,
		    xasprintf("(the diff is cut here, at %zu MiB: pevtui --diff shows it whole)",
		              DRILL_CHANGES_MAX >> 20));
	linestore_add(page, VL_TEXT, " "); /* a blank line */
	cp_changes_release(&ch);
	return true;
}

bool drill_changes(struct linestore *page, const struct run_state *rs, const char *run_dir,
                   const char *step_id, int attempt, char **msg)
{
	struct checkpoints *cp;
	struct linestore tmp;
	char *err = NULL;
	bool any = false, ok = true;

	*msg = NULL;
	if (!fold_find_change(rs, step_id, attempt)) {
		*msg = attempt > 0
		           ? xasprintf("attempt %d of step %s recorded no workspace changes "
		                       "(checkpoints = off, or it has not finished)",
		                       attempt, step_id)
		           : xasprintf("step %s recorded no workspace changes yet "
		                       "(checkpoints = off, or no attempt has finished)",
		                       step_id);
		return false;
	}
	if (!run_dir) {
		*msg = xstrdup("no run folder: no checkpoint store to read");
		return false;
	}
	cp = checkpoint_open_read(run_dir, &err);
	if (!cp) {
		*msg = err;
		return false;
	}
	linestore_init(&tmp);
	for (size_t i = 0; ok && i < rs->n_changes; i++) {
		const struct fchange *fc = &rs->changes[i];

		if (strcmp(fc->step_id, step_id) || (attempt > 0 && fc->attempt != attempt))
			continue;
		ok = one(&tmp, cp, fc, &err);
		any = true;
	}
	checkpoint_close(cp);
	if (!ok || !any) {
		*msg =
		    xasprintf("cannot show the changes: %s", err ? err : "the journal names none");
		free(err);
		linestore_release(&tmp);
		return false;
	}
	for (size_t i = 0; i < tmp.n; i++)
		linestore_add(page, tmp.v[i].kind, tmp.v[i].text);
	linestore_release(&tmp);
	return true;
}
