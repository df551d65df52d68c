/* bench_checkpoint — workspace checkpoints at scale: a workspace of FILES files in DIRS
 * folders (MB megabytes in all) is snapshotted once (the first checkpoint reads and stores
 * everything), then again with nothing changed, then again after one file changed, REPS
 * times each; wall and CPU time of each kind (median), and the store's size.
 *
 * Usage: bench_checkpoint [-f FILES] [-m MB] [-n REPS]   (defaults 10000 files, 100 MB, 9)
 * The folders go in $TMPDIR (else /tmp). Run by hand: make bench-checkpoint. Prints
 * figures; asserts nothing about time. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

int main(int argc, char **argv)
{
	int files = 10000, mb = 100, reps = 9;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *top, *ws, *run, *cmd, id[CP_ID_LEN + 1];
	struct timing first, same[64], one[64];
	struct checkpoints *cp;
	struct rusage ru;
	char *err = NULL;
	size_t each;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f") && i + 1 < argc)
			files = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			mb = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else
			fatal("usage: bench_checkpoint [-f FILES] [-m MB] [-n REPS]");
	}
	if (files < DIRS || mb < 1 || reps < 1 || reps > 64)
		fatal("bench: -f at least %d, -m at least 1, -n 1 to 64", DIRS);
	top = xasprintf("%s/pevtui-bench-cp-XXXXXX", tmp);
	if (!mkdtemp(top))
		fatal("bench: cannot create a folder in %s", tmp);
	ws = xasprintf("%s/ws", top);
	run = xasprintf("%s/run", top);
	if (mkdir(ws, 0700) || mkdir(run, 0700))
		fatal("bench: cannot create %s", top);
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
	cp = checkpoint_open(run, ws, &err);
	if (!cp)
		fatal("bench: %s", err);
	checkpoint_set_limits(cp, 0, (uint64_t)mb << 21);
	first = take(cp, id);
	for (int i = 0; i < reps; i++)
		same[i] = take(cp, id);
	for (int i = 0; i < reps; i++) {
		char *p = xasprintf("%s/d%03d/f%05d.txt", ws, (i * 37) % DIRS, i * 37);
		write_file(p, each, (unsigned)(files + i));
		free(p);
		one[i] = take(cp, id);
	}
	checkpoint_close(cp);
	getrusage(RUSAGE_SELF, &ru);
	printf("bench_checkpoint: %d files in %d folders, %d MB, in %s\n", files, DIRS, mb, tmp);
	printf("  %-28s %8.1f ms wall, %8.1f ms cpu\n", "first checkpoint", first.wall,
	       first.cpu);
	report("nothing changed", same, reps);
	report("one file changed", one, reps);
	printf("  peak RSS %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	printf("aims (issue 18): first <= 1000 ms, one file changed <= 30 ms\n");
	fflush(stdout);
	cmd = xasprintf("du -sh '%s' | sed 's|\t.*| store|; s|^|  |'; rm -rf '%s'", run, top);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: could not remove %s\n", top);
	free(cmd);
	free(top);
	free(ws);
	free(run);
	return 0;
}
