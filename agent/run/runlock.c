/* runlock — flock on RUNDIR/lock, with the holder's pid inside for messages. */
#include "config.h"

#include "runlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "xalloc.h"

/* The pid written in the lock file, 0 when it holds none. */
static pid_t read_pid(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid;
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, &end, 10);
	return pid > 0 && (*end == '\n' || *end == '\0') ? (pid_t)pid : 0;
}

/* A run's id is its folder's last component. */
static const char *run_id(const char *run_dir)
{
	const char *slash = strrchr(run_dir, '/');

	return slash && slash[1] ? slash + 1 : run_dir;
}

int runlock_take(const char *run_dir, char **err)
{
	char *path = xasprintf("%s/lock", run_dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	char pid[24];
	int n;

	if (fd < 0) {
		*err = xasprintf("cannot open %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	/* --list-runs looks with a shared lock for a moment: a lock held without a pid is
	 * that, or a holder between taking it and writing its pid. Try a little longer. */
	for (int tries = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; tries++) {
		int e = errno;
		struct timespec pause = {0, 10 * 1000000L};

		if (e == EWOULDBLOCK && tries < 50 && !read_pid(fd)) {
			nanosleep(&pause, NULL);
			continue;
		}
		pid_t holder = e == EWOULDBLOCK ? read_pid(fd) : 0;

		if (e != EWOULDBLOCK)
			*err = xasprintf("cannot lock %s: %s", path, strerror(e));
		else if (holder)
			*err = xasprintf("the run %s is in use by pid %ld (another pevtui); let it "
					 "finish or stop it, then try again",
					 run_id(run_dir), (long)holder);
		else
			*err = xasprintf("the run %s is in use by another pevtui; let it finish or "
					 "stop it, then try again",
					 run_id(run_dir));
		close(fd);
		free(path);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
		/* The lock holds without the pid; a second process just cannot name us. */
	}
	free(path);
	return fd;
}

void runlock_release(int fd)
{
	if (fd < 0)
		return;
	/* The pid goes first, so a reader never finds a stale one with the lock free. */
	if (ftruncate(fd, 0) != 0) {
		/* closing still releases the lock */
	}
	close(fd);
}

pid_t runlock_holder(const char *run_dir)
{
	char *path = xasprintf("%s/lock", run_dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	pid_t pid = 0;

	free(path);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
		pid = read_pid(fd);
	close(fd);
	return pid;
}
