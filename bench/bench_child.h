/* bench_child — one run of a program as the benches measure it: started with its own
 * argv and environment, output to a log file, stdin from /dev/null; its CPU time and peak
 * RSS from wait4, and (when asked) its private memory sampled while it runs. */
#ifndef PEVTUI_BENCH_CHILD_H
#define PEVTUI_BENCH_CHILD_H

struct bench_child {
	int status;            /* exit status, -1 when killed by a signal */
	double cpu_ms, user_ms, sys_ms;
	double rss_mb;         /* peak RSS (ru_maxrss) */
	double private_mb;     /* peak of smaps_rollup's Private_Clean + Private_Dirty; 0 unsampled */
	int samples;
};

/* Runs argv[0] (a path) with envp in folder `cwd` (NULL: this one), stdout and stderr to
 * `log`. sample_ms > 0 reads /proc/PID/smaps_rollup every sample_ms while it runs.
 * Aborts the bench when the program cannot be started. */
struct bench_child bench_child_run(const char *const argv[], const char *const envp[],
				   const char *cwd, const char *log, int sample_ms);

/* The median of n values (sorts them). */
double bench_median(double *v, int n);

#endif
