/* mcp_errlog — a stdio MCP server's stderr, copied to its log up to a cap. */
#include "config.h"

#include "mcp_errlog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "xalloc.h"

struct mcp_errlog {
	int from_fd; /* the server's stderr, non-blocking */
	int stop[2]; /* a byte on stop[1]: copy what is left and end */
	int log_fd;  /* -1: nothing is kept */
	size_t size; /* the log's size */
	size_t cap;
	bool cut;       /* past the cap: the line saying so is in the log */
	char last;      /* the last byte kept, for the cut line to start a line of its own */
	char *cut_line; /* what the log says at the cap */
	pthread_t thread;
};

static void keep(struct mcp_errlog *l, const char *buf, size_t n)
{
	size_t room = l->size < l->cap ? l->cap - l->size : 0, take = n < room ? n : room;

	if (l->log_fd < 0 || l->cut)
		return;
	if (take && fd_write_all(l->log_fd, buf, take) == 0) {
		l->size += take;
		l->last = buf[take - 1];
	}
	if (take < n) {
		if (l->last != '\n')
			fd_write_all(l->log_fd, "\n", 1);
		fd_write_all(l->log_fd, l->cut_line, strlen(l->cut_line));
		l->cut = true;
	}
}

/* Reads what the pipe holds now, at most `reads` times; false at its end (EOF or an
 * error). */
static bool pump(struct mcp_errlog *l, int reads)
{
	char buf[16384];

	while (reads-- > 0) {
		ssize_t n = read(l->from_fd, buf, sizeof(buf));

		if (n > 0)
			keep(l, buf, (size_t)n);
		else if (n < 0 && errno == EINTR)
			continue;
		else
			return n < 0 && errno == EAGAIN;
	}
	return true;
}

static void *run(void *arg)
{
	struct mcp_errlog *l = arg;
	struct pollfd p[2] = {{l->from_fd, POLLIN, 0}, {l->stop[0], POLLIN, 0}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		/* At its end the pipe is left out of the poll; the stop byte still comes. */
		if (p[0].revents && !pump(l, 64))
			p[0].fd = -1;
	}
	/* What the ended server left in the pipe; bounded, for a writer that escaped its
	 * process group and goes on. */
	if (p[0].fd >= 0)
		pump(l, 64);
	return NULL;
}

struct mcp_errlog *mcp_errlog_start(int fd, const char *path, size_t cap)
{
	struct mcp_errlog *l = xcalloc(1, sizeof(*l));
	struct stat st;

	l->from_fd = fd;
	l->cap = cap;
	l->last = '\n';
	l->cut_line = xasprintf("[pevtui: this server's stderr went on; its log stops here, at "
	                        "its cap of %zu %s for the run]\n",
	                        cap % ((size_t)1 << 20) ? cap : cap >> 20,
	                        cap % ((size_t)1 << 20) ? "bytes" : "MiB");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	l->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (l->log_fd >= 0 && fstat(l->log_fd, &st) == 0) {
		l->size = (size_t)st.st_size;
		/* Only the cut line takes a log past its cap: an earlier start of the server
		 * in this run was cut already. */
		l->cut = l->size > cap;
	}
	if (pipe2(l->stop, O_CLOEXEC))
		fatal("cannot make a pipe for an MCP server's stderr");
	if (pthread_create(&l->thread, NULL, run, l))
		fatal("cannot start the thread of an MCP server's stderr");
	return l;
}

void mcp_errlog_stop(struct mcp_errlog *l)
{
	if (!l)
		return;
	if (fd_write_all(l->stop[1], "x", 1))
		fatal("cannot stop the thread of an MCP server's stderr");
	pthread_join(l->thread, NULL);
	close(l->stop[0]);
	close(l->stop[1]);
	close(l->from_fd);
	if (l->log_fd >= 0)
		close(l->log_fd);
	free(l->cut_line);
	free(l);
}
