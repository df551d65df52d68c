/* run_list — the table of runs: what a folder's journal says, safe to print. */
#include "config.h"

#include "run_list.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "fold.h"
#include "journal.h"
#include "runlock.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

#define RUN_COLS 22
#define TASK_COLS 60

static bool visit(void *ctx, const struct event *ev)
{
	fold_apply(ctx, ev);
	return true;
}

static char *age_of(double then)
{
	long sec = (long)((double)time(NULL) - then);

	if (then <= 0)
		return xstrdup("?");
	if (sec < 120)
		return xasprintf("%lds", sec);
	if (sec < 7200)
		return xasprintf("%ldm", sec / 60);
	if (sec < 172800)
		return xasprintf("%ldh", sec / 3600);
	return xasprintf("%ldd", sec / 86400);
}

/* Text from a run folder as one printable line of at most `cols` columns, padded to
 * `pad` columns (0: no padding). */
static void put_cell(struct strbuf *sb, const char *s, int cols, int pad)
{
	char *clean = textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);
	char *cut = textsan_truncate(clean, cols);
	int w = textsan_width(cut);

	strbuf_adds(sb, cut);
	for (; w < pad; w++)
		strbuf_addc(sb, ' ');
	free(cut);
	free(clean);
}

static void print_run(FILE *out, const char *runs_dir, const char *name)
{
	char *dir = xasprintf("%s/%s", runs_dir, name);
	char *path = xasprintf("%s/journal.jsonl", dir);
	struct strbuf line = STRBUF_INIT;
	struct journal_load_info info = {0};
	struct run_state rs;
	char *err = NULL;
	pid_t holder = runlock_holder(dir);

	strbuf_init(&line);
	put_cell(&line, name, 200, RUN_COLS); /* an id is never cut: it is typed back */
	strbuf_addc(&line, ' ');
	fold_init(&rs);
	if (!journal_load(path, visit, &rs, &info, &err)) {
		strbuf_addf(&line, "%-11s %6s %10s  (", "unreadable", "-", "-");
		put_cell(&line, err, 100, 0);
		strbuf_addc(&line, ')');
		free(err);
	} else {
		bool unknown;
		double spent = fold_total_usd(&rs, &unknown);
		char *age = age_of(rs.started);
		char *cost = xasprintf(unknown ? "$%.4f+?" : "$%.4f", spent);
		char *state = holder ? xstrdup("running")
			      : xstrdup(rs.ended && rs.end_status ? rs.end_status : "unfinished");

		put_cell(&line, state, 11, 11);
		strbuf_addf(&line, " %6s %10s  ", age, cost);
		put_cell(&line, rs.task, TASK_COLS, 0);
		if (holder)
			strbuf_addf(&line, "  (pid %ld)", (long)holder);
		free(state);
		free(age);
		free(cost);
	}
	fprintf(out, "%s\n", line.buf);
	strbuf_release(&line);
	fold_release(&rs);
	free(path);
	free(dir);
}

bool run_list_print(FILE *out, const char *runs_dir, char **err)
{
	DIR *d = opendir(runs_dir);
	struct strvec names = STRVEC_INIT;
	struct dirent *de;

	if (!d) {
		if (errno == ENOENT) {
			char *clean = textsan_clean(runs_dir, strlen(runs_dir), 0);
			fprintf(out, "no runs yet in %s\n", clean);
			free(clean);
			return true;
		}
		*err = xasprintf("cannot read %s: %s", runs_dir, strerror(errno));
		return false;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			strvec_push(&names, de->d_name);
	closedir(d);
	strvec_sort(&names);
	fprintf(out, "%-22s %-11s %6s %10s  %s\n", "RUN", "STATE", "AGE", "COST", "TASK");
	for (size_t i = 0; i < names.n; i++)
		print_run(out, runs_dir, names.v[i]);
	strvec_clear(&names);
	return true;
}
