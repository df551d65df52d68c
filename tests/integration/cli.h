/* cli — running the real pevtui binary from C tests: output, exit status, run folders. */
#ifndef PEVTUI_TEST_CLI_H
#define PEVTUI_TEST_CLI_H

#include <stdbool.h>

struct cJSON;

struct cli_proc {
	int status; /* exit code, or -1 when killed by a signal */
	char *out;  /* stdout */
	char *err;  /* stderr */
};

/*
 * Runs $PEVTUI (or ./pevtui) with the arguments (NULL-terminated) and stdin from
 * /dev/null. The child never sees a real key or the user's config: API keys and base
 * URLs are unset and XDG_CONFIG_HOME points nowhere, then `env` ("NAME=value" entries,
 * NULL-terminated, may be NULL) is applied.
 */
struct cli_proc cli_run(const char *const *env, const char *first, ...);
void cli_proc_free(struct cli_proc *p);

/* Every later cli_run/cli_spawn child gets this file size limit (RLIMIT_FSIZE, bytes);
 * 0 = none. A full disk without a small filesystem. */
void cli_set_file_limit(long bytes);

/* The same, started in the background with stdout and stderr going to files. */
struct cli_bg {
	int pid;
	char *out_path, *err_path;
};
struct cli_bg cli_spawn(const char *const *env, const char *first, ...);
/* Waits for it to exit and collects what it printed; frees b's paths. */
struct cli_proc cli_wait(struct cli_bg *b);

char *cli_tmpdir(void);               /* a new /tmp folder; caller frees the name */
void cli_rm_rf(const char *dir);
char *cli_only_run(const char *runs_dir); /* the one run folder below runs_dir */
/* Every journaled event of RUNDIR as a cJSON array; fails the test if it does not load. */
struct cJSON *cli_load_journal(const char *run_dir);
/*
 * Waits, up to `seconds`, until `pred(ctx)` holds, checking every 20 ms: for a state a
 * test is about to rely on (a lock taken, an event journaled), never a fixed sleep.
 * false when time ran out.
 */
bool cli_wait_until(bool (*pred)(void *ctx), void *ctx, int seconds);

#endif
