/* tool_shell — run_shell: one command in the workspace, time-limited, behind the shell gate. */
#include "config.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

extern char **environ;

/*
 * The policy, in one place:
 * - A command the operator refuses, one that cannot start and one that runs out of time
 *   or is cancelled are tool failures (false). A command that runs and exits non-zero is
 *   a result (true) stating "exit status N": a failing test or grep is information.
 * - An allow-listed prefix skips the gate only for a simple command (none of the
 *   characters in CHAIN_CHARS), so "git status; rm -rf ." still asks the operator.
 * - When the command ends, whatever it left running in its process group is stopped, so
 *   nothing outlives the call. (A process that starts its own session escapes this; only a
 *   cgroup could prevent it.)
 * - The child gets the environment without variables that look like credentials, so a
 *   command cannot echo an API key into the model's context or the journal.
 */
#define CHAIN_CHARS ";&|`$()<>\n\r"
#define KILL_GRACE_MS 1000
#define HALF_OUTPUT (TOOL_MAX_OUTPUT / 2)

/* ---- helpers -------------------------------------------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

static bool cancelled(const struct tool_env *env)
{
	return env->cancel && atomic_load(env->cancel);
}

/* The command as it may appear in a message: one clean line, bounded. Caller frees. */
static char *show(const char *s)
{
	size_t n = strlen(s);
	char *clean = textsan_clean(s, n > 300 ? 300 : n, 0);
	if (n <= 300)
		return clean;
	char *r = xasprintf("%s...", clean);
	free(clean);
	return r;
}

/* Whole-word prefix: "git" allows "git status" but not "gitx"; "git status" allows
 * "git status -s". Leading blanks of the command are ignored. */
static bool allowed(const struct strvec *allow, const char *cmd)
{
	if (!allow || strpbrk(cmd, CHAIN_CHARS))
		return false;
	cmd += strspn(cmd, " \t");
	for (size_t i = 0; i < allow->n; i++) {
		const char *p = allow->v[i];
		size_t n = strlen(p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0)
			continue;
		if (strncmp(cmd, p, n) == 0 && (cmd[n] == '\0' || cmd[n] == ' ' || cmd[n] == '\t'))
			return true;
	}
	return false;
}

static bool secret_name(const char *var)
{
	static const char *const marks[] = {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
					    "CREDENTIAL"};
	size_t n = strcspn(var, "=");
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		size_t m = strlen(marks[i]);
		for (size_t j = 0; j + m <= n; j++)
			if (strncasecmp(var + j, marks[i], m) == 0)
				return true;
	}
	return false;
}

/* ---- output capture: the head and the tail are kept, the middle is counted ---------- */

struct capture {
	char *head;
	size_t head_len;
	char *tail; /* a ring of HALF_OUTPUT bytes */
	size_t tail_pos, tail_len;
	unsigned long long total;
};

static void capture_add(struct capture *c, const char *data, size_t n)
{
	c->total += n;
	size_t h = HALF_OUTPUT - c->head_len;
	if (h > n)
		h = n;
	memcpy(c->head + c->head_len, data, h);
	c->head_len += h;
	data += h;
	n -= h;
	for (size_t i = 0; i < n; i++) {
		c->tail[c->tail_pos] = data[i];
		c->tail_pos = (c->tail_pos + 1) % HALF_OUTPUT;
		if (c->tail_len < HALF_OUTPUT)
			c->tail_len++;
	}
}

static void capture_render(const struct capture *c, struct strbuf *out)
{
	struct strbuf raw = STRBUF_INIT;
	strbuf_init(&raw);
	strbuf_add(&raw, c->head, c->head_len);
	unsigned long long cut = c->total - c->head_len - c->tail_len;
	char *clean = textsan_clean(raw.buf, raw.len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	strbuf_adds(out, clean);
	free(clean);
	strbuf_reset(&raw);
	size_t start = (c->tail_pos + HALF_OUTPUT - c->tail_len) % HALF_OUTPUT;
	for (size_t i = 0; i < c->tail_len; i++)
		strbuf_addc(&raw, c->tail[(start + i) % HALF_OUTPUT]);
	if (cut > 0)
		strbuf_addf(out, "\n[cut: %llu bytes of output from the middle; %llu bytes in "
				 "all]\n",
			    cut, c->total);
	clean = textsan_clean(raw.buf, raw.len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	strbuf_adds(out, clean);
	free(clean);
	strbuf_release(&raw);
}

/* ---- the child ------------------------------------------------------------------------- */

/*
 * Runs in the forked child of a possibly multi-threaded process: only async-signal-safe
 * calls until exec. On failure the errno goes to the parent through `errfd`.
 */
static void child(int ws_fd, int devnull, int outfd, int errfd, char *const argv[],
		  char *const envp[])
{
	sigset_t all;
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	int e = 0;
	/* A new session: its own process group to kill, and no controlling terminal. */
	if (setsid() < 0 || fchdir(ws_fd) < 0 || dup2(devnull, 0) < 0 || dup2(outfd, 1) < 0 ||
	    dup2(outfd, 2) < 0)
		e = errno;
	if (!e) {
		/* errfd is close-on-exec and must live until exec; every other descriptor
		 * the process holds (the engine's sockets, journal, other tools' pipes)
		 * goes now. */
		for (int fd = 3; fd < errfd; fd++)
			close(fd);
		if (close_range((unsigned)errfd + 1, ~0u, 0) < 0) {
			/* kernels before 5.9: close them one by one */
			for (int fd = errfd + 1; fd < 4096; fd++)
				close(fd);
		}
		execve("/bin/sh", argv, envp);
		e = errno;
	}
	ssize_t w = write(errfd, &e, sizeof(e));
	(void)w;
	_exit(127);
}

/* ---- the parent ------------------------------------------------------------------------ */

static bool group_alive(pid_t pgid)
{
	return kill(-pgid, 0) == 0 || errno == EPERM;
}

/* Stops the whole group: SIGTERM, then SIGKILL after the grace. Reaps the shell. */
static void stop_group(pid_t pid, int *status, bool *reaped)
{
	kill(-pid, SIGTERM);
	long until = now_ms() + KILL_GRACE_MS;
	while (now_ms() < until) {
		if (!*reaped && waitpid(pid, status, WNOHANG) == pid)
			*reaped = true;
		if (*reaped && !group_alive(pid))
			return;
		struct timespec slice = {0, 10 * 1000000L};
		nanosleep(&slice, NULL);
	}
	kill(-pid, SIGKILL);
	while (!*reaped) {
		if (waitpid(pid, status, 0) == pid || errno != EINTR)
			*reaped = true;
	}
}

enum ending { END_EXIT, END_TIMEOUT, END_CANCEL };

/* Moves fd above 2, so the child's dup2 onto 0, 1 and 2 can never clobber it (or be a
 * no-op that keeps close-on-exec) when the program runs with a standard stream closed. */
static int above_std(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

static bool run_shell_run(const struct tool_env *env, const struct cJSON *input,
			  struct strbuf *out)
{
	if (!input || !cJSON_IsObject(input)) {
		strbuf_adds(out,
			    "the input must be a JSON object, such as {\"command\": \"ls -l\"}");
		return false;
	}
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(input, "command");
	if (!c || !cJSON_IsString(c) || !c->valuestring || !*c->valuestring) {
		strbuf_adds(out, "the input needs \"command\": the shell command to run, as a "
				 "non-empty string");
		return false;
	}
	if (strlen(c->valuestring) > 64 * 1024) {
		strbuf_adds(out, "the command is longer than 64 KiB");
		return false;
	}
	int limit = env->shell_timeout_s > 0 ? env->shell_timeout_s : TOOL_SHELL_TIMEOUT_S;
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(input, "timeout_s");
	if (ts && !cJSON_IsNull(ts)) {
		if (!cJSON_IsNumber(ts) || !(ts->valuedouble >= 1)) {
			strbuf_addf(out, "\"timeout_s\" must be a number of seconds from 1 to %d",
				    limit);
			return false;
		}
		if (ts->valuedouble < limit)
			limit = (int)ts->valuedouble;
	}

	char *cmd = xstrdup(c->valuestring);
	if (!allowed(env->shell_allow, cmd) && env->confirm_shell &&
	    !env->confirm_shell(env->hook_ctx, &cmd)) {
		char *s = show(cmd ? cmd : c->valuestring);
		strbuf_addf(out, "the operator refused to run: %s", s);
		free(s);
		free(cmd);
		return false;
	}
	if (!cmd || !*cmd) {
		strbuf_adds(out, "the operator's edit left the command empty; nothing was run");
		free(cmd);
		return false;
	}

	/* Everything the child needs is built before fork: no allocation after it. */
	struct strvec envv = STRVEC_INIT;
	for (char **e = environ; e && *e; e++)
		if (!secret_name(*e))
			strvec_push(&envv, *e);
	char **envp = xcalloc(envv.n + 1, sizeof(*envp));
	for (size_t i = 0; i < envv.n; i++)
		envp[i] = envv.v[i];
	char *argv[] = {"sh", "-c", cmd, NULL};

	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int pipefd[2] = {-1, -1}, errpipe[2] = {-1, -1};
	pid_t pid = -1;
	int start_err = 0;
	if (devnull < 0 || pipe2(pipefd, O_CLOEXEC) < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
		start_err = errno;
	} else {
		devnull = above_std(devnull);
		pipefd[1] = above_std(pipefd[1]);
		errpipe[1] = above_std(errpipe[1]);
		if (devnull < 0 || pipefd[1] < 0 || errpipe[1] < 0)
			start_err = errno;
	}
	if (!start_err) {
		pid = fork();
		if (pid < 0)
			start_err = errno;
		else if (pid == 0)
			child(env->ws_fd, devnull, pipefd[1], errpipe[1], argv, envp);
	}
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (errpipe[1] >= 0)
		close(errpipe[1]);
	if (devnull >= 0)
		close(devnull);
	free(envp);
	strvec_clear(&envv);

	/* EOF on errpipe: exec happened (so setsid did too, and the group can be killed). */
	if (pid > 0) {
		int e = 0;
		ssize_t r;
		do
			r = read(errpipe[0], &e, sizeof(e));
		while (r < 0 && errno == EINTR);
		if (r == (ssize_t)sizeof(e)) {
			start_err = e;
			waitpid(pid, NULL, 0);
			pid = -1;
		}
	}
	if (errpipe[0] >= 0)
		close(errpipe[0]);
	if (pid <= 0) {
		if (pipefd[0] >= 0)
			close(pipefd[0]);
		char *s = show(cmd);
		strbuf_addf(out, "could not start the command \"%s\": %s", s, strerror(start_err));
		free(s);
		free(cmd);
		return false;
	}

	struct capture cap = {.head = xmalloc(HALF_OUTPUT), .tail = xmalloc(HALF_OUTPUT)};
	char *buf = xmalloc(16384);
	long deadline = now_ms() + (long)limit * 1000;
	enum ending how = END_EXIT;
	int status = 0;
	bool reaped = false, eof = false;
	long exited_at = 0;
	for (;;) {
		if (cancelled(env)) {
			how = END_CANCEL;
			break;
		}
		if (now_ms() >= deadline) {
			how = END_TIMEOUT;
			break;
		}
		if (!reaped && waitpid(pid, &status, WNOHANG) == pid) {
			reaped = true;
			exited_at = now_ms();
		}
		/* The shell is gone: whatever it left behind may still hold the pipe; give
		 * it a moment to flush, then stop waiting for it. */
		if (reaped && (eof || now_ms() - exited_at > 200))
			break;
		if (eof) {
			struct timespec slice = {0, 10 * 1000000L};
			nanosleep(&slice, NULL);
			continue;
		}
		struct pollfd pfd = {pipefd[0], POLLIN, 0};
		int pr = poll(&pfd, 1, 50);
		if (pr <= 0)
			continue;
		ssize_t r = read(pipefd[0], buf, 16384);
		if (r > 0)
			capture_add(&cap, buf, (size_t)r);
		else if (r == 0 || errno != EINTR)
			eof = true;
	}
	close(pipefd[0]);
	free(buf);
	/* Nothing outlives the call, however it ended. */
	if (!reaped || group_alive(pid))
		stop_group(pid, &status, &reaped);

	char *s = show(cmd);
	bool ok = true;
	if (how == END_TIMEOUT) {
		strbuf_addf(out, "the command \"%s\" ran out of time after %d s and was stopped", s,
			    limit);
		ok = false;
	} else if (how == END_CANCEL) {
		strbuf_addf(out, "the command \"%s\" was stopped because the step was cancelled",
			    s);
		ok = false;
	} else if (WIFEXITED(status)) {
		strbuf_addf(out, "$ %s\nexit status %d", s, WEXITSTATUS(status));
		if (WEXITSTATUS(status) == 127)
			strbuf_adds(out, " (command not found?)");
	} else if (WIFSIGNALED(status)) {
		strbuf_addf(out, "$ %s\nkilled by signal %d (%s)", s, WTERMSIG(status),
			    strsignal(WTERMSIG(status)));
	}
	free(s);
	if (cap.total == 0) {
		strbuf_adds(out, ok ? "\n(no output)" : "; it printed nothing");
	} else {
		strbuf_adds(out, ok ? "\n" : "; its output so far:\n");
		capture_render(&cap, out);
	}
	free(cap.head);
	free(cap.tail);
	free(cmd);
	return ok;
}

const struct tool_def tool_run_shell = {
	.name = "run_shell",
	.description = "Run a shell command (/bin/sh -c) in the workspace folder and return its "
		       "exit status and output (stdout and stderr together, long output cut in "
		       "the middle). The operator may be asked to approve or edit the command "
		       "first. No input is given; the command is stopped after its time limit.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\","
		       "\"description\":\"The command line, e.g. make test\"},"
		       "\"timeout_s\":{\"type\":\"number\",\"description\":\"Seconds before the "
		       "command is stopped; can only lower the configured limit (default 60)\"}"
		       "},\"required\":[\"command\"],\"additionalProperties\":false}",
	.run = run_shell_run,
};
