/* handoff — fork, exec through /bin/sh, wait; curses and the mouse put back. */
#include "config.h"

#include "handoff.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mouse.h"
#include "xalloc.h"

int handoff_run(const char *program, const char *path)
{
	char *cmd = xasprintf("%s \"$1\"", program);
	int status = 0, e = 0;
	pid_t pid;

	def_prog_mode();
	mouse_suspend();
	endwin();
	pid = fork();
	if (pid == 0) {
		sigset_t set;

		/* The cockpit keeps SIGWINCH blocked outside poll(); the program needs it. */
		signal(SIGWINCH, SIG_DFL);
		/* pevtui ignores these (main.c); the editor or pager expects them as usual. */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, SIGWINCH);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		execl("/bin/sh", "sh", "-c", cmd, "sh", path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		e = errno;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	reset_prog_mode();
	refresh();
	mouse_resume(); /* the program may have turned SGR mouse reports off */
	free(cmd);
	if (pid < 0) {
		errno = e;
		return -1;
	}
	return status;
}
