/* diff_cmd — `pevtui --diff RUN[:STEP]`: a run's or a step's changes on stdout. */
#include "config.h"

#include "diff_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "fold.h"
#include "journal.h"
#include "pev.h"
#include "rundiff.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* Bytes of diff text printed at most, per attempt or for the whole run. */
#define DIFF_CMD_MAX ((size_t)256 << 20)

void diff_cmd_split(const char *ref, char **run, char **step)
{
	const char *colon = strrchr(ref, ':');
	struct stat st;

	if (!colon || (stat(ref, &st) == 0 && S_ISDIR(st.st_mode))) {
		*run = xstrdup(ref);
		*step = NULL;
		return;
	}
	*run = xstrndup(ref, (size_t)(colon - ref));
	*step = colon[1] ? xstrdup(colon + 1) : NULL;
}

static bool fold_visit(void *ctx, const struct event *ev)
{
	fold_apply(ctx, ev);
	return true;
}

/* One line on stderr, untrusted parts and all made safe to print; returns 1. */
static int fail(char *msg)
{
	char *clean = textsan_clean(msg, strlen(msg), 0);

	fprintf(stderr, "pevtui: %s\n", clean);
	free(clean);
	free(msg);
	return PEV_EXIT_ERROR;
}

/* "a, b, c" of the plan's step ids (caller frees). */
static char *step_ids(const struct run_state *rs)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (size_t i = 0; i < rs->n_steps; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", rs->steps[i].id);
	return strbuf_detach(&sb);
}

static bool step_known(const struct run_state *rs, const char *id)
{
	if (fold_find_step(rs, id) >= 0)
		return true;
	for (size_t i = 0; i < rs->n_changes; i++)
		if (!strcmp(rs->changes[i].step_id, id))
			return true; /* a step an earlier plan had */
	return false;
}

static int print_text(FILE *out, const char *text, size_t len)
{
	/* File contents are the operator's or a model's: no escape reaches a terminal. */
	if (isatty(fileno(out))) {
		char *clean = textsan_clean(text, len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);

		fputs(clean, out);
		free(clean);
	} else {
		fwrite(text, 1, len, out);
	}
	if (fflush(out) != 0 || ferror(out))
		return fail(xstrdup("cannot write the diff to standard output"));
	return PEV_EXIT_OK;
}

int diff_cmd_print(const char *run_dir, const char *step, FILE *out)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	struct journal_load_info info = {0};
	struct run_state rs;
	struct checkpoints *cp = NULL;
	char *store = NULL;
	bool legacy = false;
	struct strbuf text;
	int code;

	fold_init(&rs);
	strbuf_init(&text);
	if (!journal_load(path, fold_visit, &rs, &info, &err)) {
		code = fail(xasprintf("cannot read the run's journal: %s", err));
		goto done;
	}
	if (step && !step_known(&rs, step)) {
		char *ids = step_ids(&rs);

		code = fail(xasprintf("run %s has no step \"%s\" (its steps: %s)",
		                      rs.run_id ? rs.run_id : run_dir, step, *ids ? ids : "none"));
		free(ids);
		goto done;
	}
	if (!rs.n_changes) {
		code = fail(xasprintf("run %s has no checkpoints: it ran with checkpoints = off, "
		                      "or before any step ran",
		                      rs.run_id ? rs.run_id : run_dir));
		goto done;
	}
	if (step && !fold_find_change(&rs, step, 0)) {
		code = fail(xasprintf("step %s of run %s has no checkpoints: it has not run yet",
		                      step, rs.run_id ? rs.run_id : run_dir));
		goto done;
	}
	cp = checkpoint_open_read(run_dir, &err);
	if (!cp) {
		code = fail(xasprintf("cannot show the diff: %s", err));
		goto done;
	}
	store = checkpoint_run_store(run_dir, &legacy);
	if (step) {
		if (!rundiff_step(cp, &rs, step, 0, DIFF_CMD_MAX, &text, &err)) {
			code = fail(xasprintf("cannot show the diff of step %s: %s (is the "
			                      "checkpoint store %s damaged?)",
			                      step, err, store ? store : "?"));
			goto done;
		}
	} else {
		struct cp_changes ch;

		if (!rundiff_run(cp, &rs, DIFF_CMD_MAX, &ch, &err)) {
			code = fail(xasprintf("cannot show the diff of the run: %s (is the "
			                      "checkpoint store %s damaged?)",
			                      err, store ? store : "?"));
			goto done;
		}
		strbuf_adds(&text, ch.diff ? ch.diff : "");
		if (ch.diff_cut)
			strbuf_addf(&text, "# (the diff is cut here, at %zu bytes)\n",
			            DIFF_CMD_MAX);
		if (!ch.n)
			fprintf(stderr, "pevtui: the run left the workspace as it found it\n");
		cp_changes_release(&ch);
	}
	code = print_text(out, text.buf, text.len);
	if (code == PEV_EXIT_OK && info.torn_tail)
		fprintf(stderr, "pevtui: the journal's last line was cut off (a crash?) and was "
		                "skipped\n");
done:
	checkpoint_close(cp);
	free(store);
	strbuf_release(&text);
	fold_release(&rs);
	free(err);
	free(path);
	return code;
}
