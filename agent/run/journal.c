/* journal — appends events to journal.jsonl, replaces plan.json, loads journals back. */
#include "config.h"

#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "events.h"
#include "fdio.h"
#include "strbuf.h"
#include "xalloc.h"

struct journal {
	int fd;
	char *path;
	char *error; /* first write error, as a sentence */
	off_t good;  /* the file's length after the last complete line */
	void (*on_fail)(void *ctx, const char *error);
	void *fail_ctx;
};

struct journal *journal_open(const char *run_dir, char **err)
{
	struct journal *j;
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	/* 0600: a journal holds the task and model text, which may be confidential.
	 * O_NOFOLLOW: never appended through a link planted in the run folder; O_NONBLOCK:
	 * a FIFO in its place fails at once (no reader) instead of hanging the run. */
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0600);
	struct stat st;

	if (fd < 0) {
		if (errno == ELOOP || errno == ENXIO)
			*err = xasprintf("the journal %s is a link or a pipe, not a file: "
					 "remove it, or use another run folder",
					 path);
		else
			*err = xasprintf("cannot open the journal %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*err = xasprintf("the journal %s is not a regular file: remove it, or use another "
				 "run folder",
				 path);
		close(fd);
		free(path);
		return NULL;
	}
	if (fcntl(fd, F_SETFL, O_APPEND) < 0) { /* writes block again, as a file's do */
		*err = xasprintf("cannot open the journal %s: %s", path, strerror(errno));
		close(fd);
		free(path);
		return NULL;
	}
	j = xcalloc(1, sizeof(*j));
	j->fd = fd;
	j->path = path;
	j->good = lseek(fd, 0, SEEK_END);
	if (j->good < 0)
		j->good = 0;
	return j;
}

void journal_on_failure(struct journal *j, void (*fn)(void *ctx, const char *error), void *ctx)
{
	j->on_fail = fn;
	j->fail_ctx = ctx;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0) {
		fsync(j->fd);
		close(j->fd);
	}
	free(j->path);
	free(j->error);
	free(j);
}

void journal_on_event(void *ctx, const struct event *ev)
{
	struct journal *j = ctx;
	size_t len;
	char *line;
	int e;

	if (event_type_is_ephemeral(ev->type) || !ev->json)
		return;
	/*
	 * After a failed write the file may end in a partial line; appending more would turn
	 * that torn tail into a bad line in the middle, which no longer loads. Stop instead:
	 * the journal stays loadable up to the last complete event.
	 */
	if (j->error)
		return;
	len = strlen(ev->json);
	line = xmalloc(len + 1);
	memcpy(line, ev->json, len);
	line[len] = '\n';
	/* One write(2) for the whole line, so that with O_APPEND concurrent writers and
	 * readers never see two lines mixed; the loop only continues a short write. */
	e = fd_write_all(j->fd, line, len + 1);
	free(line);
	if (!e) {
		j->good += (off_t)len + 1;
		return;
	}
	/* A short write left part of the line: cut it, so the journal ends on a whole
	 * event (if even that fails, loading still skips a torn last line). */
	if (ftruncate(j->fd, j->good) != 0) {
		/* nothing more to do: journal_load treats the torn tail as a crash's */
	}
	j->error = xasprintf("cannot write to the journal %s: %s", j->path, strerror(e));
	if (j->on_fail)
		j->on_fail(j->fail_ctx, j->error);
}

void journal_sync(struct journal *j)
{
	/* The fd is set once at open and closed only after the workers stopped. */
	if (j && j->fd >= 0 && fdatasync(j->fd) != 0) {
		/* the line is in the file for a crash of the process; only a power loss may
		 * lose it, as it may lose any event without this call */
	}
}

const char *journal_error(const struct journal *j)
{
	return j ? j->error : NULL;
}

bool journal_write_plan(const char *run_dir, const char *plan_json, char **err)
{
	char *tmp = xasprintf("%s/plan.json.tmp", run_dir);
	char *dst = xasprintf("%s/plan.json", run_dir);
	size_t len = strlen(plan_json);
	char *buf = xmalloc(len + 1);
	bool ok = false;
	int fd, e;

	memcpy(buf, plan_json, len);
	buf[len] = '\n';
	/* A fresh file of our own: never through a link planted in its place. */
	(void)unlink(tmp); /* mostly ENOENT; whatever else, open says below */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		*err = xasprintf("cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	e = fd_write_all(fd, buf, len + 1);
	if (!e && fsync(fd) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (e) {
		*err = xasprintf("cannot write %s: %s", tmp, strerror(e));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, dst) < 0) {
		*err = xasprintf("cannot replace %s: %s", dst, strerror(errno));
		unlink(tmp);
		goto out;
	}
	ok = true;
out:
	free(buf);
	free(tmp);
	free(dst);
	return ok;
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * A line that fails to parse is held back until the next non-blank line shows it was not
 * the last one: only the end of the file may be torn.
 */
struct pending_bad {
	bool set;
	unsigned long lineno;
	long offset;
	char *reason;
};

bool journal_load(const char *path, journal_visit_fn fn, void *ctx, struct journal_load_info *info,
                  char **err)
{
	struct journal_load_info local;
	struct pending_bad bad = {false, 0, -1, NULL};
	const char *name = base_name(path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = 0;
	long offset = 0;
	unsigned long lineno = 0;
	bool ok = true, stop = false;
	FILE *f;

	if (!info)
		info = &local;
	*info = (struct journal_load_info){0, 0, false, -1};
	f = fopen(path, "re");
	if (!f) {
		*err = xasprintf("cannot open the journal %s: %s", path, strerror(errno));
		return false;
	}
	while (!stop && (n = getline(&line, &cap, f)) >= 0) {
		long start = offset;
		size_t len = (size_t)n;
		bool has_nl = len > 0 && line[len - 1] == '\n';
		struct event *ev;
		char *why = NULL;

		offset += n;
		lineno++;
		if (!has_nl) {
			/* getline only returns a line without '\n' at end of file: a write that was
			 * cut off. Ignored even when it happens to parse. */
			if (bad.set)
				break; /* the held-back bad line is not last: reported below */
			info->torn_tail = true;
			info->torn_offset = start;
			break;
		}
		if (is_blank(line, len))
			continue;
		if (bad.set)
			break;
		line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if (strlen(line) != len) {
			why = xstrdup("a NUL byte inside the line");
			ev = NULL;
		} else {
			ev = event_from_line(line, &why);
		}
		if (!ev) {
			bad = (struct pending_bad){true, lineno, start, why};
			continue;
		}
		if (ev->seq != info->last_seq + 1) {
			*err = xasprintf("%s:%lu: event seq %lu where %lu was expected (%s)", name,
			                 lineno, ev->seq, info->last_seq + 1,
			                 ev->seq <= info->last_seq ? "a repeat" : "a gap");
			event_free(ev);
			ok = false;
			break;
		}
		info->events++;
		info->last_seq = ev->seq;
		if (fn && !fn(ctx, ev))
			stop = true;
		event_free(ev);
	}
	if (ok && ferror(f)) {
		*err = xasprintf("cannot read the journal %s: %s", path, strerror(errno));
		ok = false;
	} else if (ok && bad.set) {
		if (n < 0 && !info->torn_tail) {
			/* The bad line was the last one: torn, not corrupt. */
			info->torn_tail = true;
			info->torn_offset = bad.offset;
		} else {
			*err = xasprintf("%s:%lu: not an event (%s)", name, bad.lineno, bad.reason);
			ok = false;
		}
	}
	free(bad.reason);
	free(line);
	fclose(f);
	return ok;
}

bool journal_repair(const char *path, const struct journal_load_info *info, char **err)
{
	if (!info->torn_tail || info->torn_offset < 0)
		return true;
	if (truncate(path, (off_t)info->torn_offset) < 0) {
		*err = xasprintf("cannot cut the torn last line of %s: %s", path, strerror(errno));
		return false;
	}
	return true;
}
