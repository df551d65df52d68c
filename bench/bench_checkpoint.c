/* bench_checkpoint — workspace checkpoints at scale: a workspace of FILES files in DIRS
 * folders (MB megabytes in all) is snapshotted by a first run (the first checkpoint reads
 * and stores everything, then REPS with nothing changed), then by a second run sharing the
 * store (its first checkpoint, then REPS after one file changed each), then by more runs
 * up to RUNS, each changing one file; wall and CPU time of each kind (median), the disk
 * the workspace's one store takes against the workspace's, and `git fsck` of the store.
 *
 * Usage: bench_checkpoint [-f FILES] [-m MB] [-n REPS] [-r RUNS]
 * (defaults 10000 files, 100 MB, 9, 20). The folders go in $TMPDIR, else /var/tmp (the
 * ordinary disk, not a tmpfs). Run by hand: make bench-checkpoint. Prints figures;
 * asserts nothing about time. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "checkpoint.h"
#include "strbuf.h"
#include "xalloc.h"

#define DIRS 100

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void write_file(const char *path, size_t size, unsigned seed)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char *buf = xmalloc(size + 1);

	if (fd < 0)
		fatal("bench: cannot create %s: %s", path, strerror(errno));
	uint32_t x = seed * 2654435761u + 1;

	/* Lines of pseudo-random letters, different in every file: compressed about as
	 * much as source text is. */
	for (size_t i = 0; i < size; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (i % 64 == 63) ? '\n' : (char)('a' + x % 16);
	}
	if (write(fd, buf, size) != (ssize_t)size)
		fatal("bench: cannot write %s", path);
	close(fd);
	free(buf);
}

struct timing {
	double wall, cpu;
};

static struct timing take(struct checkpoints *cp, char id[CP_ID_LEN + 1])
{
	struct strvec warnings = STRVEC_INIT;
	double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
	char *err = NULL;
	struct timing t;

	if (!checkpoint_take(cp, id, &warnings, &err))
		fatal("bench: checkpoint failed: %s", err ? err : "?");
	t.wall = now_ms(CLOCK_MONOTONIC) - w0;
	t.cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (warnings.n)
		fatal("bench: unexpected warning: %s", warnings.v[0]);
	strvec_clear(&warnings);
	return t;
}

static void report(const char *what, struct timing *t, int n)
{
	double wall[64], cpu[64];

	for (int i = 0; i < n; i++) {
		wall[i] = t[i].wall;
		cpu[i] = t[i].cpu;
	}
	qsort(wall, (size_t)n, sizeof(double), cmp_double);
	qsort(cpu, (size_t)n, sizeof(double), cmp_double);
	printf("  %-28s %8.1f ms wall, %8.1f ms cpu  (median of %d; wall min %.1f, max %.1f)\n",
	       what, wall[n / 2], cpu[n / 2], n, wall[0], wall[n - 1]);
}

static struct checkpoints *open_run(const char *top, int n, const char *ws, int mb)
{
	char *run = xasprintf("%s/runs/run-%02d", top, n), *err = NULL;
	struct checkpoints *cp;

	if (mkdir(run, 0700))
		fatal("bench: cannot create %s", run);
	cp = checkpoint_open(run, ws, &err);
	if (!cp)
		fatal("bench: %s", err);
	checkpoint_set_limits(cp, 0, (uint64_t)mb << 21);
	free(run);
	return cp;
}

/* The bytes a folder takes on the disk (du). */
static double du_mb(const char *dir)
{
	char *cmd = xasprintf("du -sk '%s'", dir);
	FILE *f = popen(cmd, "r");
	long kb = 0;

	if (!f || fscanf(f, "%ld", &kb) != 1)
		kb = 0;
	if (f)
		pclose(f);
	free(cmd);
	return (double)kb / 1024.0;
}

static void change_one(const char *ws, int files, size_t each, int i)
{
	char *p = xasprintf("%s/d%03d/f%05d.txt", ws, (i * 37) % DIRS, (i * 37) % files);

	write_file(p, each, (unsigned)(files + 1000 + i));
	free(p);
}

int main(int argc, char **argv)
{
	int files = 10000, mb = 100, reps = 9, runs = 20;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	char *top, *ws, *data, *runs_dir, *cmd, *store, id[CP_ID_LEN + 1];
	struct timing first, second, same[64], one[64], compact;
	struct checkpoints *cp;
	struct rusage ru;
	struct statfs sf;
	double ws_mb, store_mb, one_mb, compact_mb;
	bool legacy;
	size_t each;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") && i + 1 < argc)
			files = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			mb = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-r") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			fatal("usage: bench_checkpoint [-f FILES] [-m MB] [-n REPS] [-r RUNS]");
	}
	if (files < DIRS || mb < 1 || reps < 1 || reps > 64 || runs < 2)
		fatal("bench: -f at least %d, -m at least 1, -n 1 to 64, -r at least 2", DIRS);
	top = xasprintf("%s/pevtui-bench-cp-XXXXXX", tmp);
	if (!mkdtemp(top))
		fatal("bench: cannot create a folder in %s", tmp);
	ws = xasprintf("%s/ws", top);
	data = xasprintf("%s/data", top);
	runs_dir = xasprintf("%s/runs", top);
	if (mkdir(ws, 0700) || mkdir(data, 0700) || mkdir(runs_dir, 0700))
		fatal("bench: cannot create %s", top);
	setenv("XDG_DATA_HOME", data, 1); /* the workspace's store goes there */
	each = ((size_t)mb << 20) / (size_t)files;
	for (int d = 0; d < DIRS; d++) {
		char *dir = xasprintf("%s/d%03d", ws, d);
		if (mkdir(dir, 0700))
			fatal("bench: cannot create %s", dir);
		free(dir);
	}
	for (int f = 0; f < files; f++) {
		char *p = xasprintf("%s/d%03d/f%05d.txt", ws, f % DIRS, f);
		write_file(p, each, (unsigned)f);
		free(p);
	}
	/* File times must be older than the snapshot's start for the stat cache to trust
	 * them (as in a real workspace, written before the run). */
	sleep(1);

	/* Run 1: the workspace's first checkpoint ever, then nothing changed. */
	cp = open_run(top, 1, ws, mb);
	first = take(cp, id);
	for (int i = 0; i < reps; i++)
		same[i] = take(cp, id);
	checkpoint_close(cp);
	{
		char *r1 = xasprintf("%s/run-01", runs_dir);
		store = checkpoint_run_store(r1, &legacy);
		free(r1);
	}
	one_mb = du_mb(store);

	/* Run 2: its first checkpoint (a stat walk), then one file changed at a time. */
	cp = open_run(top, 2, ws, mb);
	second = take(cp, id);
	for (int i = 0; i < reps; i++) {
		sleep(0); /* the change is made, then checkpointed, as a step's would be */
		change_one(ws, files, each, i);
		one[i] = take(cp, id);
	}
	checkpoint_close(cp);

	/* Runs 3..RUNS: each changes one file. */
	for (int r = 3; r <= runs; r++) {
		cp = open_run(top, r, ws, mb);
		take(cp, id);
		change_one(ws, files, each, reps + r);
		take(cp, id);
		checkpoint_close(cp);
	}
	ws_mb = du_mb(ws);
	store_mb = du_mb(store);
	/* --prune with every run kept: the store's packs compacted into one, compressed */
	{
		struct cp_prune_opts o = {.older_than_s = 30 * 86400.0};
		FILE *sink = fopen("/dev/null", "w");
		char *perr = NULL;
		double w0 = now_ms(CLOCK_MONOTONIC), c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (!sink || !checkpoint_prune(&o, sink, &perr))
			fatal("bench: prune failed: %s", perr ? perr : "?");
		compact.wall = now_ms(CLOCK_MONOTONIC) - w0;
		compact.cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
		fclose(sink);
	}
	compact_mb = du_mb(store);
	getrusage(RUSAGE_SELF, &ru);
	printf("bench_checkpoint: %d files in %d folders, %d MB, in %s%s\n", files, DIRS, mb, tmp,
	       statfs(tmp, &sf) == 0 && sf.f_type == TMPFS_MAGIC ? " (tmpfs!)" : "");
	printf("  %-34s %8.1f ms wall, %8.1f ms cpu\n", "first checkpoint ever", first.wall,
	       first.cpu);
	report("nothing changed", same, reps);
	printf("  %-34s %8.1f ms wall, %8.1f ms cpu\n", "second run's first checkpoint",
	       second.wall, second.cpu);
	report("one file changed", one, reps);
	printf("  peak RSS %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	printf("  workspace %.1f MB on disk; store after run 1 %.1f MB (%.2fx)\n", ws_mb, one_mb,
	       one_mb / ws_mb);
	printf("  store after %d runs changing one file each: %.1f MB (%.2fx the workspace)\n",
	       runs, store_mb, store_mb / ws_mb);
	printf("  --prune compacting it into one pack (zlib level 1): %.1f ms wall, %.1f ms cpu, "
	       "then %.1f MB (%.2fx)\n",
	       compact.wall, compact.cpu, compact_mb, compact_mb / ws_mb);
	printf("aims (issue 25): second run's first <= 300 ms, one file changed <= 10 ms, "
	       "%d runs <= 1.2x\n",
	       runs);
	fflush(stdout);
	/* The store is git's: git checks every object and link of it. */
	cmd = xasprintf("command -v git >/dev/null && { git --git-dir='%s' fsck --no-dangling "
	                "--no-progress >/dev/null 2>&1 && echo '  git fsck: the store is sound' "
	                "|| echo '  git fsck: FAILED'; }; rm -rf '%s'",
	                store, top);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", top);
	free(cmd);
	free(store);
	free(top);
	free(ws);
	free(data);
	free(runs_dir);
	return 0;
}
