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
 * URLs are unset, XDG_CONFIG_HOME points nowhere and XDG_DATA_HOME to cli_data_home(), then `env` ("NAME=value" entries,
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

/* XDG_DATA_HOME of every child: a folder of the test binary's own, removed when it exits
 * (the checkpoint stores are below it). */
const char *cli_data_home(void);
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

/* Writes TEXT to DIR/REL (made or emptied first); returns the path, which the caller
 * frees. Fails the test if it cannot. */
char *cli_put(const char *dir, const char *rel, const char *text);
/* The checkpoint store RUN_DIR's `store` file names, or NULL; caller frees. */
char *cli_run_store(const char *run_dir);
/* DIR/REL's content, or NULL if it cannot be read; caller frees. */
char *cli_slurp_in(const char *dir, const char *rel);

/* For cli_expect_status and cli_fx_run: any exit status will do (the test looks). */
#define CLI_ANY_STATUS (-2)
/* Fails the test, showing what the binary printed, unless it exited with `want`. */
void cli_expect_status(const struct cli_proc *p, int want);

/* Whether the journal of RUN_DIR holds NEEDLE (its text, as journaled). */
bool cli_journal_has(const char *run_dir, const char *needle);
/* Waits up to `seconds` for a run folder below RUNS_DIR (a run started in the
 * background) and returns it (caller frees); fails the test when none came. */
char *cli_wait_run(const char *runs_dir, int seconds);
/* Waits up to `seconds` until the journal of RUN_DIR holds NEEDLE; fails the test if it
 * does not. */
void cli_wait_journal(const char *run_dir, const char *needle, int seconds);

/*
 * A test's run of the binary in a folder of its own and what it left behind: the
 * arrange-run-check frame the integration tests share. cli_fx_init makes the folder;
 * cli_fx_run runs the binary with the arguments (NULL-terminated) and --runs-dir
 * fx->runs, fails the test (with the output) unless the exit status is `want`, and loads
 * the one run folder and its journal; cli_fx_release removes the folder and frees all.
 * cli_fx_run may be called again (a --resume): it forgets the earlier run first.
 * cli_fx_wait does what cli_fx_run does after it ran, for a run started with cli_spawn
 * (with --runs-dir fx->runs): waits for it (as cli_wait) and checks and loads.
 */
struct cli_fx {
	char *tmp;            /* the test's folder */
	char *runs;           /* tmp/runs */
	struct cli_proc p;    /* the last run's output and status */
	char *run;            /* its run folder */
	struct cJSON *events; /* its journal */
};
void cli_fx_init(struct cli_fx *fx);
void cli_fx_run(struct cli_fx *fx, int want, const char *const *env, const char *first, ...);
void cli_fx_wait(struct cli_fx *fx, struct cli_bg *b, int want);
void cli_fx_release(struct cli_fx *fx);

#endif
