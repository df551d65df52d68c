/* bench_rss_floor — the resident memory a process pays for pevtui's libraries alone, before
 * pevtui does anything: a program linked with exactly pevtui's libraries (ncurses, libcurl,
 * cJSON, inih, libgit2, pthreads) that calls one harmless function of each, so the loader
 * maps and relocates them all, and does nothing else. It prints its peak RSS and the
 * resident kilobytes of each mapped file, largest first (/proc/self/smaps); then the peak
 * once libcurl and libgit2 are started, as every HTTP run and every checkpoint starts them.
 *
 * Last, the CPU time a start of such a process costs (it runs itself 50 times, each run
 * ending as main begins): the loader relocating some 40 libraries and their constructors.
 *
 * This is the floor under `make bench-http-run`'s peak RSS and a part of its CPU time that
 * no change inside pevtui can take away. Run by hand: make bench-rss-floor. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <curses.h>
#include <git2.h>
#include <ini.h>
#include <pthread.h>

#include "xalloc.h"

struct mapped {
	char *path;
	long kb;
};

static int by_size(const void *a, const void *b)
{
	const struct mapped *x = a, *y = b;

	return (y->kb > x->kb) - (y->kb < x->kb);
}

static void *nothing(void *arg)
{
	return arg;
}

static int no_entry(void *user, const char *section, const char *name, const char *value)
{
	(void)user, (void)section, (void)name, (void)value;
	return 1;
}

/* Mean CPU time (user + system, ms) of a start of this program that ends as main begins. */
static double start_cpu_ms(int runs)
{
	double ms = 0;

	for (int i = 0; i < runs; i++) {
		struct rusage ru;
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			execl("/proc/self/exe", "bench_rss_floor", "--start-only", (char *)NULL);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return -1;
		ms += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	}
	return ms / runs;
}

int main(int argc, char **argv)
{
	struct mapped *m = NULL;
	size_t n = 0, cap = 0;
	char line[4096], *path = NULL;
	struct rusage ru;
	pthread_t t;
	int major, minor, rev;
	long total = 0;
	FILE *f;

	if (argc > 1 && !strcmp(argv[1], "--start-only"))
		return 0;
	/* One call into each library, none of which starts it up. */
	git_libgit2_version(&major, &minor, &rev);
	printf("bench_rss_floor: libcurl %s, libgit2 %d.%d.%d, cJSON %s, %s\n",
	       curl_version_info(CURLVERSION_NOW)->version, major, minor, rev, cJSON_Version(),
	       curses_version());
	ini_parse_string("", no_entry, NULL);
	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);

	f = fopen("/proc/self/smaps", "r");
	if (!f) {
		perror("bench_rss_floor: /proc/self/smaps");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long from, to;
		long kb;
		char name[4000];

		if (sscanf(line, "%lx-%lx", &from, &to) == 2) {
			/* a mapping's first line: the file's name comes after the inode, if any */
			free(path);
			path = xstrdup(sscanf(line, "%*s %*s %*s %*s %*s %3999s", name) == 1
					       ? name
					       : "(anonymous)");
		} else if (sscanf(line, "Rss: %ld kB", &kb) == 1) {
			size_t i;

			for (i = 0; i < n && strcmp(m[i].path, path ? path : "?"); i++)
				;
			if (i == n) {
				if (n == cap) {
					cap = cap ? 2 * cap : 64;
					m = xrealloc(m, cap * sizeof(*m));
				}
				m[n].path = xstrdup(path ? path : "?");
				m[n++].kb = 0;
			}
			m[i].kb += kb;
			total += kb;
		}
	}
	fclose(f);
	free(path);
	qsort(m, n, sizeof(*m), by_size);
	getrusage(RUSAGE_SELF, &ru);
	printf("  resident now: %.2f MB in %zu mappings; peak RSS %.2f MB\n", total / 1024.0, n,
	       ru.ru_maxrss / 1024.0);
	for (size_t i = 0; i < n; i++) {
		if (i < 12)
			printf("  %6ld kB  %s\n", m[i].kb, m[i].path);
		free(m[i].path);
	}
	free(m);
	/* What starting them costs: every HTTP run starts libcurl, every checkpoint libgit2. */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	getrusage(RUSAGE_SELF, &ru);
	printf("  after curl_global_init: peak RSS %.2f MB\n", ru.ru_maxrss / 1024.0);
	git_libgit2_init();
	getrusage(RUSAGE_SELF, &ru);
	printf("  after git_libgit2_init too: peak RSS %.2f MB\n", ru.ru_maxrss / 1024.0);
	git_libgit2_shutdown();
	curl_global_cleanup();
	printf("  (the issue's aim for the whole 50-step run is 8.5 MB peak RSS)\n");
	printf("  cpu time of a start with these libraries: %.2f ms (mean of 50; the loader and "
	       "the libraries' constructors, before main)\n",
	       start_cpu_ms(50));
	return 0;
}
