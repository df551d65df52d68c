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
	for (const char *a = first; a && n < 62; a = va_arg(ap, const char *))
		argv[n++] = a;
	argv[n] = NULL;
}

/* In the forked child: the environment and limits every run gets, then exec. */
static void exec_child(const char **argv, const char *const *env, int out, int err)
{
	int devnull = open("/dev/null", O_RDONLY);

	/* A session of its own: no controlling terminal, so nothing it runs can ask on the
	 * terminal make check was started from (and wait for an answer there), and it sets
	 * XDG_DATA_HOME below so that it writes nothing in the tester's home. */
	setsid();
	dup2(devnull, 0);
	dup2(out, 1);
	dup2(err, 2);
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENAI_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	unsetenv("ANTHROPIC_BASE_URL");
	setenv("XDG_CONFIG_HOME", "/nonexistent-pevtui-test", 1);
	setenv("XDG_DATA_HOME", "/nonexistent-pevtui-test", 1);
	for (int i = 0; env && env[i]; i++)
		putenv((char *)env[i]);
	if (file_limit > 0) {
		struct rlimit rl = {(rlim_t)file_limit, (rlim_t)file_limit};
		setrlimit(RLIMIT_FSIZE, &rl);
	}
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

struct cli_proc cli_run(const char *const *env, const char *first, ...)
{
	const char *argv[64];
	int out[2], err[2], st;
	struct cli_proc p = {-1, NULL, NULL};
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	build_argv(argv, first, ap);
	va_end(ap);
	assert_int_equal(pipe(out), 0);
	assert_int_equal(pipe(err), 0);
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
