/* rundiff — a run's or a step's workspace changes, from the journal's checkpoints. */
#include "config.h"

#include "rundiff.h"

#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "xalloc.h"

/* The id among the records' befores (`first`) or afters that was taken first or last;
 * when the store cannot tell, the journal's order decides. NULL + *err when a named
 * checkpoint is unknown. */
static const char *pick(struct checkpoints *cp, const struct run_state *rs, bool first,
                        char **err)
{
	const char *best = NULL;

	for (size_t i = 0; i < rs->n_changes; i++) {
		const char *id = first ? rs->changes[i].before : rs->changes[i].after;
		int order;

		if (!id[0])
			continue;
		if (!best) {
			/* Known to the store, or no diff can be made from it. */
			if (!checkpoint_compare(cp, id, id, &order, err))
				return NULL;
			best = id;
			continue;
		}
		if (!checkpoint_compare(cp, id, best, &order, err))
			return NULL;
		if (first ? order < 0 : order >= 0)
			best = id;
	}
	return best;
}

bool rundiff_run(struct checkpoints *cp, const struct run_state *rs, size_t max_diff,
                 struct cp_changes *out, char **err)
{
	const char *from, *to;

	memset(out, 0, sizeof(*out));
	from = pick(cp, rs, true, err);
	if (!from) {
		if (err && !*err)
			*err = xstrdup("the journal names no checkpoint: the run took none "
			               "(checkpoints = off, or it never ran a step)");
		return false;
	}
	to = pick(cp, rs, false, err);
	if (!to) {
		if (err && !*err)
			*err = xstrdup("the journal names no checkpoint after an attempt");
		return false;
	}
	return checkpoint_diff(cp, from, to, max_diff, out, err);
}

bool rundiff_attempt(struct checkpoints *cp, const struct fchange *fc, size_t max_diff,
                     struct cp_changes *out, char **err)
{
	return checkpoint_diff_listed(cp, fc->before, fc->after, &fc->paths, max_diff, out, err);
}

bool rundiff_step(struct checkpoints *cp, const struct run_state *rs, const char *step_id,
                  int attempt, size_t max_diff, struct strbuf *out, char **err)
{
	size_t found = 0;

	for (size_t i = 0; i < rs->n_changes; i++) {
		const struct fchange *fc = &rs->changes[i];
		struct cp_changes ch;
		char *stat;

		if (strcmp(fc->step_id, step_id) || (attempt > 0 && fc->attempt != attempt))
			continue;
		found++;
		if (!fc->before[0] || !fc->after[0]) {
			strbuf_addf(out,
			            "# step %s, attempt %d: no checkpoint ids in the journal\n",
			            step_id, fc->attempt);
			continue;
		}
		/* What the journal attributes to the attempt, not the raw checkpoints: under
		 * --parallel, other steps' files changed in the same window. */
		if (!rundiff_attempt(cp, fc, max_diff, &ch, err))
			return false;
		stat = cp_changes_stat(&ch);
		strbuf_addf(out, "# step %s, attempt %d%s: %s (checkpoint %.7s..%.7s)\n", step_id,
		            fc->attempt, fc->cut ? ", cut off by a stop" : "", stat, fc->before,
		            fc->after);
		free(stat);
		for (size_t k = 0; k < fc->shared.n; k++)
			strbuf_addf(out, "# shared: %s (changed while another step's attempt ran too: "
			                 "which of them changed it is not known)\n",
			            fc->shared.v[k]);
		if ((long)fc->paths.n < fc->n_files)
			strbuf_addf(out, "# and %ld more files the journal does not list\n",
			            fc->n_files - (long)fc->paths.n);
		strbuf_adds(out, ch.diff ? ch.diff : "");
		if (ch.diff_cut)
			strbuf_addf(out, "# (the diff is cut here, at %zu bytes)\n", max_diff);
		cp_changes_release(&ch);
	}
	if (!found && err && !*err) {
		if (attempt > 0)
			*err = xasprintf("the journal has no changes for attempt %d of step %s",
			                 attempt, step_id);
		else
			*err =
			    xasprintf("the journal has no changes for step %s (it never ran with "
			              "checkpoints on)",
			              step_id);
	}
	return found > 0;
}

char *rundiff_summary(const struct fchange *fc, int max_names)
{
	struct strbuf sb;
	size_t shown = 0;

	if (fc->n_files <= 0)
		return xstrdup("no files changed");
	strbuf_init(&sb);
	strbuf_adds(&sb, fc->stat && *fc->stat ? fc->stat : "changed");
	for (size_t i = 0; i < fc->paths.n && shown < (size_t)max_names; i++, shown++) {
		char k = fc->kinds && i < strlen(fc->kinds) ? fc->kinds[i] : 'M';

		strbuf_addf(&sb, "%s%s%s", i ? ", " : ": ",
		            k == 'A'   ? "+"
		            : k == 'D' ? "-"
		                       : "",
		            fc->paths.v[i]);
	}
	if ((long)shown < fc->n_files)
		strbuf_addf(&sb, ", and %ld more", fc->n_files - (long)shown);
	return strbuf_detach(&sb);
}
