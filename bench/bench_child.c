/* bench_child — one measured run of a program (bench_child.h). */
#include "config.h"

#include "bench_child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xalloc.h"

static double ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

/* Private_Clean + Private_Dirty of the process, in kB; -1 once it is gone. */
static long private_kb(const char *path)
{
	char buf[2048];
	long kb = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "Private_Clean:", 14))
			kb += strtol(p + 14, NULL, 10);
		else if (!strncmp(p, "Private_Dirty:", 14))
			kb += strtol(p + 14, NULL, 10);
	}
	return kb;
}

struct bench_child bench_child_run(const char *const argv[], const char *const envp[],
				   const char *cwd, const char *log, int sample_ms)
{
	struct bench_child f = {0};
	struct rusage ru;
	long peak = 0;
	int st = 0, out, in;
	char smaps[64];
	pid_t pid, got;

	out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (out < 0 || in < 0)
		fatal("bench: cannot open %s or /dev/null", log);
	/* Everything the child needs is built before fork (the mock runs threads). */
	pid = fork();
	if (pid < 0)
		fatal("bench: fork failed");
	if (pid == 0) {
		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		if (cwd && chdir(cwd))
			_exit(126);
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	close(out);
	close(in);
	snprintf(smaps, sizeof(smaps), "/proc/%d/smaps_rollup", (int)pid);
	if (sample_ms <= 0) {
		got = wait4(pid, &st, 0, &ru);
	} else {
		const struct timespec gap = {sample_ms / 1000, (long)(sample_ms % 1000) * 1000000L};

		while ((got = wait4(pid, &st, WNOHANG, &ru)) == 0) {
			long kb = private_kb(smaps);

			if (kb > peak)
				peak = kb;
			f.samples++;
			nanosleep(&gap, NULL);
		}
	}
	if (got != pid)
		fatal("bench: wait4 failed: %s", strerror(errno));
	f.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	f.user_ms = ms(ru.ru_utime);
	f.sys_ms = ms(ru.ru_stime);
	f.cpu_ms = f.user_ms + f.sys_ms;
	f.rss_mb = (double)ru.ru_maxrss / 1024.0;
	f.private_mb = (double)peak / 1024.0;
	return f;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
