/* cli — running the real pevtui binary from C tests. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "journal.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

static char *slurp_fd(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	ssize_t n;

	strbuf_init(&sb);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	return strbuf_detach(&sb);
}

static long file_limit;

void cli_set_file_limit(long bytes)
{
	file_limit = bytes;
}

/* argv for the binary and the arguments (NULL-terminated) */
static void build_argv(const char **argv, const char *first, va_list ap)
{
	int n = 0;

	argv[n++] = getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui";
	for (const char *a = first; a && n < 60; a = va_arg(ap, const char *))
		argv[n++] = a;
	argv[n] = NULL;
}

static char *data_home;

static void remove_data_home(void)
{
	if (data_home)
		testdir_remove(data_home);
	free(data_home);
	data_home = NULL;
}

const char *cli_data_home(void)
{
	if (!data_home) {
		data_home = xstrdup("/tmp/pevtui-test-data-XXXXXX");
		assert_non_null(mkdtemp(data_home));
		atexit(remove_data_home);
	}
	return data_home;
}

/* In the forked child: the environment and limits every run gets, then exec. */
static void exec_child(const char **argv, const char *const *env, int out, int err)
{
	int devnull = open("/dev/null", O_RDONLY);

	/* A session of its own: no controlling terminal, so nothing it runs can ask on the
	 * terminal make check was started from (and wait for an answer there), and it sets
	 * XDG_DATA_HOME below so that it writes nothing in the tester's home (the workspaces'
	 * checkpoint stores go to the test binary's own folder, cli_data_home). */
	setsid();
	dup2(devnull, 0);
	dup2(out, 1);
	dup2(err, 2);
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("ANTHROPIC_BASE_URL");
	setenv("XDG_CONFIG_HOME", "/nonexistent-pevtui-test", 1);
	setenv("XDG_DATA_HOME", data_home, 1);
	for (int i = 0; env && env[i]; i++)
		putenv((char *)env[i]);
	if (file_limit > 0) {
		struct rlimit rl = {(rlim_t)file_limit, (rlim_t)file_limit};
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

/* Runs argv (argv[0] the binary) and collects what it printed. */
static struct cli_proc run_argv(const char **argv, const char *const *env)
{
	int out[2], err[2], st;
	struct cli_proc p = {-1, NULL, NULL};
	pid_t pid;

	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
	cli_data_home();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(out[0]);
		close(err[0]);
		exec_child(argv, env, out[1], err[1]);
	}
	close(out[1]);
	close(err[1]);
	/* stderr stays small (a few lines), so reading stdout first cannot deadlock. */
	p.out = slurp_fd(out[0]);
	p.err = slurp_fd(err[0]);
	close(out[0]);
	close(err[0]);
	waitpid(pid, &st, 0);
	p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return p;
}

struct cli_proc cli_run(const char *const *env, const char *first, ...)
{
	const char *argv[64];
	va_list ap;

	va_start(ap, first);
	build_argv(argv, first, ap);
	va_end(ap);
	return run_argv(argv, env);
}

struct cli_bg cli_spawn(const char *const *env, const char *first, ...)
{
	const char *argv[64];
	struct cli_bg b;
	char *dir = cli_tmpdir();
	int out, err;
	va_list ap;

	va_start(ap, first);
	build_argv(argv, first, ap);
	va_end(ap);
	b.out_path = xasprintf("%s/stdout", dir);
	b.err_path = xasprintf("%s/stderr", dir);
	free(dir);
	out = open(b.out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = open(b.err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(out >= 0 && err >= 0);
	cli_data_home();
	b.pid = fork();
	assert_true(b.pid >= 0);
	if (b.pid == 0)
		exec_child(argv, env, out, err);
	close(out);
	close(err);
	return b;
}

struct cli_proc cli_wait(struct cli_bg *b)
{
	struct cli_proc p = {-1, NULL, NULL};
	char *dir = xstrdup(b->out_path);
	int st;

	assert_int_equal(waitpid(b->pid, &st, 0), b->pid);
	p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	p.out = testdir_slurp(b->out_path);
	p.err = testdir_slurp(b->err_path);
	assert_non_null(p.out);
	assert_non_null(p.err);
	*strrchr(dir, '/') = '\0';
	cli_rm_rf(dir);
	free(dir);
	free(b->out_path);
	free(b->err_path);
	return p;
}

bool cli_wait_until(bool (*pred)(void *ctx), void *ctx, int seconds)
{
	struct timespec slice = {0, 20 * 1000000L};
	long tries = (long)seconds * 50;

	for (long i = 0; i < tries; i++) {
		if (pred(ctx))
			return true;
		nanosleep(&slice, NULL);
	}
	return pred(ctx);
}

void cli_proc_free(struct cli_proc *p)
{
	free(p->out);
	free(p->err);
}

char *cli_tmpdir(void)
{
	char *d = xstrdup("/tmp/pevtui-test-cli-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

void cli_rm_rf(const char *dir)
{
	assert_true(testdir_remove(dir));
}

char *cli_only_run(const char *runs_dir)
{
	DIR *d = opendir(runs_dir);
	struct dirent *de;
	char *found = NULL;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		free(found);
		found = xasprintf("%s/%s", runs_dir, de->d_name);
		n++;
	}
	closedir(d);
	assert_int_equal(n, 1);
	return found;
}

static bool collect(void *ctx, const struct event *ev)
{
	cJSON_AddItemToArray(ctx, cJSON_Parse(ev->json));
	return true;
}

cJSON *cli_load_journal(const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	cJSON *arr = cJSON_CreateArray();
	struct journal_load_info info = {0};

	if (!journal_load(path, collect, arr, &info, &err))
		fail_msg("journal: %s", err);
	assert_false(info.torn_tail);
	free(path);
	return arr;
}

char *cli_put(const char *dir, const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	return path;
}

char *cli_slurp_in(const char *dir, const char *rel)
{
	char *path = xasprintf("%s/%s", dir, rel), *s = testdir_slurp(path);

	free(path);
	return s;
}

void cli_expect_status(const struct cli_proc *p, int want)
{
	if (want != CLI_ANY_STATUS && p->status != want)
		fail_msg("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", p->status, want, p->out,
		         p->err);
}

bool cli_journal_has(const char *run_dir, const char *needle)
{
	char *s = cli_slurp_in(run_dir, "journal.jsonl");
	bool found = s && strstr(s, needle);

	free(s);
	return found;
}

/* For cli_wait_run: ctx[0] becomes the first run folder below ctx[1]. */
static bool has_run(void *ctx)
{
	char **found = ctx;
	DIR *d = opendir(found[1]);
	struct dirent *de;

	while (d && !found[0] && (de = readdir(d)))
		if (de->d_name[0] != '.')
			found[0] = xasprintf("%s/%s", found[1], de->d_name);
	if (d)
		closedir(d);
	return found[0] != NULL;
}

char *cli_wait_run(const char *runs_dir, int seconds)
{
	char *found[2] = {NULL, (char *)runs_dir};

	if (!cli_wait_until(has_run, found, seconds))
		fail_msg("no run folder below %s within %d s", runs_dir, seconds);
	return found[0];
}

struct journal_wait {
	const char *run, *needle;
};

static bool journal_has(void *ctx)
{
	const struct journal_wait *w = ctx;

	return cli_journal_has(w->run, w->needle);
}

void cli_wait_journal(const char *run_dir, const char *needle, int seconds)
{
	struct journal_wait w = {run_dir, needle};

	if (!cli_wait_until(journal_has, &w, seconds))
		fail_msg("the journal of %s never held %s within %d s", run_dir, needle, seconds);
}

void cli_fx_init(struct cli_fx *fx)
{
	memset(fx, 0, sizeof(*fx));
	fx->tmp = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->tmp);
}

/* What the last run left, before another. */
static void fx_forget_run(struct cli_fx *fx)
{
	cli_proc_free(&fx->p);
	memset(&fx->p, 0, sizeof(fx->p));
	cJSON_Delete(fx->events);
	fx->events = NULL;
	free(fx->run);
	fx->run = NULL;
}

/* The status of the run just ended, then its folder and journal. */
static void fx_check_run(struct cli_fx *fx, int want)
{
	cli_expect_status(&fx->p, want);
	fx->run = cli_only_run(fx->runs);
	fx->events = cli_load_journal(fx->run);
}

void cli_fx_run(struct cli_fx *fx, int want, const char *const *env, const char *first, ...)
{
	const char *argv[64];
	va_list ap;
	int n;

	fx_forget_run(fx);
	va_start(ap, first);
	build_argv(argv, first, ap);
	va_end(ap);
	for (n = 0; argv[n]; n++)
		;
	/* --runs-dir DIR goes first: the rest, with its NULL, moves two places on. */
	memmove(argv + 3, argv + 1, (size_t)n * sizeof(*argv));
	argv[1] = "--runs-dir";
	argv[2] = fx->runs;
	fx->p = run_argv(argv, env);
	fx_check_run(fx, want);
}

void cli_fx_wait(struct cli_fx *fx, struct cli_bg *b, int want)
{
	fx_forget_run(fx);
	fx->p = cli_wait(b);
	fx_check_run(fx, want);
}

void cli_fx_release(struct cli_fx *fx)
{
	fx_forget_run(fx);
	cli_rm_rf(fx->tmp);
	free(fx->tmp);
	free(fx->runs);
}

char *cli_run_store(const char *run_dir)
{
	char *s = cli_slurp_in(run_dir, "store");

	if (s)
		s[strcspn(s, "\n")] = '\0';
	return s;
}
