/* detach — the waiter, the daemon, and the cockpit that lets go of its terminal. */
#include "config.h"

#include "detach.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_server.h"
#include "fdio.h"
#include "pev.h"
#include "secrets.h"
#include "xalloc.h"

/* The child's end of the pipe to the waiter; -1 when there is no waiter (any more). */
static int release_fd = -1;
static volatile pid_t waited_child;

static void pass_on(int sig)
{
	if (waited_child > 0)
		kill(waited_child, sig);
}

/* Prints `path` to stderr (the daemon's log, when it died before the run went on). */
static void print_log(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fd_write_all(STDERR_FILENO, buf, (size_t)n))
			break;
	close(fd);
}

/* The waiter: the child's message (it detached) or its end. Never returns. */
static void wait_for_child(pid_t pid, int rfd, const char *log)
{
	char buf[1024];
	size_t len = 0;
	int status;

	for (;;) {
		ssize_t n = read(rfd, buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == sizeof(buf) - 1 || memchr(buf, '\n', len))
			break;
	}
	if (len > 0) {
		/* The child goes on without a terminal: the shell comes back. */
		if (fd_write_all(STDERR_FILENO, buf, len)) {
			/* the terminal is gone (a hangup): nobody to tell */
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) != 0)
			print_log(log);
		_exit(WEXITSTATUS(status));
	}
	print_log(log);
	_exit(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

/* Forks with a pipe from child to parent; the parent waits and never returns. */
static void fork_waiter(const char *log)
{
	int p[2];
	pid_t pid;
	struct sigaction sa;

	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[0]);
		release_fd = p[1];
		return;
	}
	close(p[1]);
	/* The waiter needs no credential: it lets go of them now (the child reads its key
	 * later; fork gave it an environment of its own). Non-dumpable since main. */
	secrets_scrub_env();
	waited_child = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_on;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGWINCH, SIG_IGN);
	wait_for_child(pid, p[0], log);
}

void detach_launch(void)
{
	fork_waiter(NULL);
}

/* stdin and stdout on /dev/null, stderr appended to RUNDIR/engine.log. */
static void redirect(const char *run_dir)
{
	char *log = xasprintf("%s/engine.log", run_dir);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (fd < 0)
			dup2(null, STDERR_FILENO);
		close(null);
	}
	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	free(log);
}

/* A daemon keeps no descriptor of whoever started it (a pipe a caller waits on to end)
 * but the one to its waiter. */
static void close_inherited(void)
{
	if (release_fd > 3)
		close_range(3, (unsigned)release_fd - 1, 0);
	close_range(release_fd >= 3 ? (unsigned)release_fd + 1 : 3, ~0U, 0);
}

void detach_daemon_start(const char *run_dir)
{
	char *log = xasprintf("%s/engine.log", run_dir);

	fflush(NULL);
	fork_waiter(log); /* the parent never comes back from here */
	free(log);
	if (release_fd < 0) {
		fprintf(stderr, "pevtui: cannot start the run detached (fork failed: %s)\n",
		        strerror(errno));
		exit(PEV_EXIT_ERROR);
	}
	/* A new session: no controlling terminal, no hangup from anyone's terminal. */
	if (setsid() < 0)
		fprintf(stderr, "pevtui: warning: setsid failed: %s\n", strerror(errno));
	close_inherited();
	redirect(run_dir);
	signal(SIGHUP, SIG_IGN);
}

void detach_release(const char *message)
{
	char *line;

	if (release_fd < 0)
		return;
	line = xasprintf("%s\n", message);
	if (fd_write_all(release_fd, line, strlen(line))) {
		/* the waiter is gone (the terminal hung up): nobody to tell */
	}
	free(line);
	close(release_fd);
	release_fd = -1;
}

void detach_cockpit(struct pev *e, struct ctl_server *ctl, const char *run_dir)
{
	const char *id = pev_run_id(e);
	char *msg;

	msg = xasprintf("pevtui: detached; run %s goes on (pid %ld, log %s/engine.log).\n"
	                "pevtui: attach again with: pevtui --attach %s",
	                id, (long)getpid(), run_dir, id);
	signal(SIGHUP, SIG_IGN);
	redirect(run_dir);
	if (release_fd < 0)
		fprintf(stderr,
		        "pevtui: detached without a waiter: the shell gets its terminal back "
		        "only when the run ends\n");
	else if (setsid() < 0)
		fprintf(stderr, "pevtui: warning: setsid failed: %s\n", strerror(errno));
	fprintf(stderr, "%s\n", msg);
	detach_release(msg);
	free(msg);
	/* A run that has ended already leaves now, unless a cockpit is attached. */
	pev_linger_while(e, ctl_server_watched, ctl);
}
