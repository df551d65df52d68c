/* mcp_proc — a stdio MCP server's process: started with posix_spawnp in a process group
 * of its own, in its folder, with only PATH, HOME and the environment its config names,
 * its stderr to a log (capped: mcp_errlog); ended politely (input closed), then with
 * TERM and KILL to the whole group, so nothing it started outlives it. */
#include "config.h"

#include "mcp_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "mcp_config.h"
#include "mcp_errlog.h"
#include "xalloc.h"

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void describe_exit(struct mcp_proc *c, int status)
{
	free(c->last_exit);
	if (WIFEXITED(status))
		c->last_exit = xasprintf("exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		c->last_exit = xasprintf("signal %d", WTERMSIG(status));
	else
		c->last_exit = xstrdup("an unknown end");
}

/* Waits up to ms for the leader to exit; true when it was reaped. */
static bool reap(struct mcp_proc *c, int ms)
{
	long end = now_ms() + ms;
	int status;

	for (;;) {
		pid_t r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {
			if (r == c->pid)
				describe_exit(c, status);
			return true;
		}
		if (now_ms() >= end)
			return false;
		struct timespec slice = {0, 10 * 1000000L};
		nanosleep(&slice, NULL);
	}
}

/* PATH and HOME of pevtui, then what the config names: never pevtui's API keys. */
static char **build_env(const struct mcp_server_conf *s)
{
	char **envp = xcalloc(s->env.n + 3, sizeof(*envp));
	size_t n = 0;
	const char *path = getenv("PATH"), *home = getenv("HOME");

	envp[n++] = xasprintf("PATH=%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (home)
		envp[n++] = xasprintf("HOME=%s", home);
	for (size_t i = 0; i < s->env.n; i++)
		envp[n++] = xstrdup(s->env.v[i]);
	return envp;
}

static void free_vec(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Whether cmd can be started: a path that is executable, or a name found in PATH. Said
 * before the spawn, so a missing program is named the same whatever posix_spawnp does. */
static bool findable(const char *cmd)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	for (const char *p = path ? path : "/usr/bin:/bin"; p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char *full = xasprintf("%.*s/%s", (int)n, n ? p : ".", cmd);
		bool ok = access(full, X_OK) == 0;
		free(full);
		if (ok)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* The server's argv, confined when its config asks (see mcp_proc_start). Caller frees
 * with free_vec; NULL with *err when it cannot be confined here. */
static char **server_argv(const struct mcp_server_conf *s, const char *workspace,
                          const struct confine_session *sb, char **err)
{
	struct strvec out = STRVEC_INIT;
	char **plain = xcalloc(s->args.n + 2, sizeof(*plain)), **argv, *why = NULL;

	plain[0] = s->command;
	for (size_t i = 0; i < s->args.n; i++)
		plain[i + 1] = s->args.v[i];
	if (!confine_session_argv_as(sb, (enum confine_mode)s->sandbox, s->sandbox_network,
	                             s->cwd ? s->cwd : workspace, plain, &out, &why)) {
		*err = xasprintf("MCP server %s asks for sandbox = %s, but %s; not started (set "
		                 "its sandbox = off to run it unconfined)",
		                 s->name, confine_mode_name((enum confine_mode)s->sandbox), why);
		free(why);
		free(plain);
		return NULL;
	}
	argv = xcalloc(out.n + 1, sizeof(*argv));
	for (size_t i = 0; i < out.n; i++)
		argv[i] = xstrdup(out.v[i]);
	free(plain);
	strvec_clear(&out);
	return argv;
}

bool mcp_proc_start(struct mcp_proc *c, const struct mcp_server_conf *s, const char *log_path,
                    const char *workspace, const struct confine_session *sb, char **err)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1};
	char **argv, **envp;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	pid_t pid;
	int rc;

	if (!s->command || !findable(s->command)) {
		*err = xasprintf("MCP server %s: command \"%s\" not found (looked in PATH) or not "
		                 "executable; fix its command in the config or .mcp.json",
		                 s->name, s->command ? s->command : "");
		return false;
	}
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || (log_path && pipe2(errp, O_CLOEXEC))) {
		*err = xasprintf("MCP server %s: cannot make a pipe: %s", s->name, strerror(errno));
		for (int k = 0; k < 2; k++) {
			if (in[k] >= 0)
				close(in[k]);
			if (out[k] >= 0)
				close(out[k]);
		}
		return false;
	}
	argv = server_argv(s, workspace, sb, err);
	if (!argv) {
		for (int k = 0; k < 2; k++) {
			close(in[k]);
			close(out[k]);
			if (errp[k] >= 0)
				close(errp[k]);
		}
		return false;
	}
	envp = build_env(s);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	if (log_path)
		posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (s->cwd || workspace)
		posix_spawn_file_actions_addchdir_np(&fa, s->cwd ? s->cwd : workspace);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	/* Its own process group: the run ends everything the server started. */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
	                                  POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free_vec(argv);
	free_vec(envp);
	close(in[0]);
	close(out[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (rc) {
		close(in[1]);
		close(out[0]);
		if (errp[0] >= 0)
			close(errp[0]);
		if (rc == ENOENT)
			*err =
			    xasprintf("MCP server %s: command \"%s\" not found (looked in PATH); "
			              "fix its command in the config or .mcp.json",
			              s->name, s->command);
		else
			*err = xasprintf("MCP server %s: cannot start \"%s\": %s", s->name,
			                 s->command, strerror(rc));
		return false;
	}
	c->pid = pid;
	if (log_path)
		c->errlog = mcp_errlog_start(errp[0], log_path, MCP_ERRLOG_CAP);
	c->to_fd = in[1];
	c->from_fd = out[0];
	fcntl(c->from_fd, F_SETFL, fcntl(c->from_fd, F_GETFL) | O_NONBLOCK);
	return true;
}

void mcp_proc_stop(struct mcp_proc *c, bool polite)
{
	if (c->to_fd >= 0)
		close(c->to_fd);
	c->to_fd = -1;
	if (c->pid > 0) {
		if (!polite || !reap(c, 300)) {
			kill(-c->pid, SIGTERM);
			if (!reap(c, 500)) {
				kill(-c->pid, SIGKILL);
				reap(c, 2000);
			}
		}
		kill(-c->pid, SIGKILL); /* grandchildren left in its group */
	}
	if (c->from_fd >= 0)
		close(c->from_fd);
	c->from_fd = -1;
	c->pid = 0;
	mcp_errlog_stop(c->errlog);
	c->errlog = NULL;
}

void mcp_proc_release(struct mcp_proc *c)
{
	mcp_errlog_stop(c->errlog);
	c->errlog = NULL;
	free(c->last_exit);
	c->last_exit = NULL;
}
