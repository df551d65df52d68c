/* run_list — the table of runs: what a folder's journal says, safe to print. */
#include "config.h"

#include "run_list.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
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

char *run_list_age(double then)
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

/* The stores the listed runs use, each once: its path and how many runs name it. */
struct stores {
	struct strvec paths;
	size_t *runs;
};

static void note_store(struct stores *st, const char *path)
{
	for (size_t i = 0; i < st->paths.n; i++)
		if (!strcmp(st->paths.v[i], path)) {
			st->runs[i]++;
			return;
		}
	strvec_push(&st->paths, path);
	st->runs = xrealloc(st->runs, st->paths.n * sizeof(*st->runs));
	st->runs[st->paths.n - 1] = 1;
}

/* "  (checkpoints gone)" for a run whose store is gone or dropped its checkpoints. */
static void checkpoints_cell(struct strbuf *line, struct stores *st, const char *dir)
{
	bool legacy = false;
	char *store = checkpoint_run_store(dir, &legacy);

	if (!store)
		return;
	if (!checkpoint_run_has_store(dir))
		strbuf_adds(line, "  (checkpoints gone)");
	else if (!legacy)
		note_store(st, store);
	free(store);
}

static void print_run(FILE *out, const char *runs_dir, const char *name, struct stores *st)
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
		strbuf_addf(&line, "%-11s %6s %10s %-9s  (", "unreadable", "-", "-", "-");
		put_cell(&line, err, 100, 0);
		strbuf_addc(&line, ')');
		free(err);
	} else {
		bool unknown;
		double spent = fold_total_usd(&rs, &unknown);
		char *age = run_list_age(rs.started);
		char *cost = xasprintf(unknown ? "$%.4f+?" : "$%.4f", spent);
		char *state = holder ? xstrdup("running")
			      : xstrdup(rs.ended && rs.end_status ? rs.end_status : "unfinished");

		put_cell(&line, state, 11, 11);
		strbuf_addf(&line, " %6s %10s ", age, cost);
		/* A simulated run (--demo, the sim provider) says so: its cost is simulated. */
		put_cell(&line, rs.simulated ? "simulated" : rs.provider ? rs.provider : "?", 9, 9);
		strbuf_adds(&line, "  ");
		put_cell(&line, rs.task, TASK_COLS, 0);
		if (holder)
			strbuf_addf(&line, "  (pid %ld)", (long)holder);
		checkpoints_cell(&line, st, dir);
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
	struct stores st = {STRVEC_INIT, NULL};
	struct dirent *de;

	if (!d && errno != ENOENT) {
		*err = xasprintf("cannot read %s: %s", runs_dir, strerror(errno));
		return false;
	}
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			strvec_push(&names, de->d_name);
	if (d)
		closedir(d);
	if (!names.n) {
		/* Missing or empty: said, with where it looked (not a bare header). */
		char *clean = textsan_clean(runs_dir, strlen(runs_dir), 0);
		fprintf(out, "no runs yet in %s (another folder: --runs-dir DIR)\n", clean);
		free(clean);
		return true;
	}
	strvec_sort(&names);
	fprintf(out, "%-22s %-11s %6s %10s %-9s  %s\n", "RUN", "STATE", "AGE", "COST", "PROVIDER",
		"TASK");
	for (size_t i = 0; i < names.n; i++)
		print_run(out, runs_dir, names.v[i], &st);
	/* Each workspace's checkpoint store once, with the disk it takes. */
	for (size_t i = 0; i < st.paths.n; i++) {
		char *size = checkpoint_bytes_text(checkpoint_store_bytes(st.paths.v[i]));
		char *clean = textsan_clean(st.paths.v[i], strlen(st.paths.v[i]), 0);
		fprintf(out, "%scheckpoint store %s: %s (%zu run%s listed)\n", i ? "" : "\n", clean,
		        size, st.runs[i], st.runs[i] == 1 ? "" : "s");
		free(clean);
		free(size);
	}
	strvec_clear(&st.paths);
	free(st.runs);
	strvec_clear(&names);
	return true;
}

/* ---- RUN as --resume and --replay take it ---- */

/* Whether `s` begins as `shape` says: 'd' a digit, any other character itself. */
static bool shaped(const char *s, const char *shape)
{
	for (; *shape; s++, shape++)
		if (*shape == 'd' ? !(*s >= '0' && *s <= '9') : *s != *shape)
			return false;
	return true;
}

/* "YYYYMMDD-HHMMSS-": the shape of the ids pevtui gives runs (UTC start time first). */
static bool id_shaped(const char *name)
{
	return shaped(name, "dddddddd-dddddd-");
}

#define KEY_LEN 23 /* "YYYY-MM-DDTHH:MM:SS.mmm" */

/* The `ts` of the journal's first event (run.start), to the millisecond, into key. */
static bool journal_start(const char *path, char key[KEY_LEN + 1])
{
	/* A run folder is data: a FIFO or a device in it must not hang or be read. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char head[512], *ts;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return false;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof(head) - 1) : -1;
	close(fd);
	if (n < 0)
		return false;
	head[n] = '\0';
	head[strcspn(head, "\n")] = '\0'; /* the first line only */
	ts = strstr(head, "\"ts\":\"");
	if (!ts)
		return false;
	ts += 6;
	/* 2026-11-25T13:20:37, then .738 (or more digits, or none) */
	if (!shaped(ts, "dddd-dd-ddTdd:dd:dd"))
		return false;
	memcpy(key, ts, 19);
	memcpy(key + 19, ".000", 5);
	for (int i = 0; i < 3 && ts[19] == '.' && ts[20 + i] >= '0' && ts[20 + i] <= '9'; i++)
		key[20 + i] = ts[20 + i];
	return true;
}

/* When the run started, as "YYYY-MM-DDTHH:MM:SS.mmm" (UTC): from its journal's first
 * event, else from its id, else when its folder was last changed. */
static void start_key(const char *dir, const char *name, char key[KEY_LEN + 1])
{
	char *path = xasprintf("%s/%s/journal.jsonl", dir, name);
	struct stat st;
	struct tm tm;
	bool ok = journal_start(path, key);

	free(path);
	if (ok)
		return;
	if (id_shaped(name)) {
		snprintf(key, KEY_LEN + 1, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s.000", name, name + 4,
			 name + 6, name + 9, name + 11, name + 13);
		return;
	}
	path = xasprintf("%s/%s", dir, name);
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	free(path);
	gmtime_r(&st.st_mtime, &tm);
	strftime(key, KEY_LEN + 1, "%Y-%m-%dT%H:%M:%S.000", &tm);
	for (unsigned ms = (unsigned)(st.st_mtim.tv_nsec / 1000000) % 1000, i = 3; i > 0; i--) {
		key[19 + i] = (char)('0' + ms % 10);
		ms /= 10;
	}
}

bool run_list_ids(const char *runs_dir, struct strvec *ids, char **err)
{
	DIR *d = opendir(runs_dir);
	struct strvec keyed = STRVEC_INIT;
	struct dirent *de;

	if (!d) {
		*err = errno == ENOENT ? xasprintf("no runs yet in %s", runs_dir)
				       : xasprintf("cannot read %s: %s", runs_dir, strerror(errno));
		return false;
	}
	while ((de = readdir(d))) {
		char *path, key[KEY_LEN + 1];
		struct stat st;
		bool dir;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", runs_dir, de->d_name);
		dir = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		free(path);
		if (!dir)
			continue;
		start_key(runs_dir, de->d_name, key);
		/* The key has a fixed width: sorting "KEY NAME" sorts by start, then by name. */
		strvec_pushf(&keyed, "%s %s", key, de->d_name);
	}
	closedir(d);
	strvec_sort(&keyed);
	for (size_t i = 0; i < keyed.n; i++)
		strvec_push(ids, keyed.v[i] + KEY_LEN + 1);
	strvec_clear(&keyed);
	return true;
}

char *run_list_pick(const struct strvec *ids, const char *ref, const char *where, char **err)
{
	size_t n = 0, len = strlen(ref), last = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ids->n; i++)
		if (!strcmp(ids->v[i], ref))
			return xstrdup(ids->v[i]);
	if (!strcmp(ref, "last")) {
		if (ids->n)
			return xstrdup(ids->v[ids->n - 1]);
		*err = xasprintf("no run yet%s%s, so no last one", where ? " in " : "",
				 where ? where : "");
		return NULL;
	}
	for (size_t i = 0; len && i < ids->n; i++) {
		if (!strncmp(ids->v[i], ref, len)) {
			n++;
			last = i;
		}
	}
	if (n == 1)
		return xstrdup(ids->v[last]);
	strbuf_init(&sb);
	if (n == 0) {
		strbuf_addf(&sb, "no run \"%s\"%s%s: give its id, the start of one, \"last\" or "
				 "its folder; see pevtui --list-runs",
			    ref, where ? " in " : "", where ? where : "");
	} else {
		/* As git says of a short id: which ones it could be, newest last. */
		size_t shown = 0, skipped = n > 10 ? n - 10 : 0;

		strbuf_addf(&sb, "run \"%s\" is ambiguous: %zu runs start with it", ref, n);
		if (skipped)
			strbuf_addf(&sb, " (the newest 10 below)");
		for (size_t i = 0; i < ids->n; i++) {
			if (strncmp(ids->v[i], ref, len))
				continue;
			if (shown++ >= skipped)
				strbuf_addf(&sb, "\n  %s", ids->v[i]);
		}
	}
	*err = strbuf_detach(&sb);
	return NULL;
}

char *run_list_resolve(const char *runs_dir, const char *ref, char **err)
{
	struct strvec ids = STRVEC_INIT;
	char *id;

	if (!run_list_ids(runs_dir, &ids, err))
		return NULL;
	id = run_list_pick(&ids, ref, runs_dir, err);
	strvec_clear(&ids);
	return id;
}
