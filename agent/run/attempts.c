/* attempts — copies of each attempt's artifacts and tool outputs in the run folder. */
#include "config.h"

#include "attempts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "sandbox.h"
#include "xalloc.h"

char *attempts_id_component(const char *id)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (const unsigned char *p = (const unsigned char *)(id ? id : ""); *p; p++) {
		bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
			    (*p == '.' && sb.len > 0);

		if (keep)
			strbuf_addc(&sb, (char)*p);
		else
			strbuf_addf(&sb, "%%%02X", *p);
	}
	if (!sb.len)
		strbuf_adds(&sb, "%00");
	return strbuf_detach(&sb);
}

struct attempts {
	int run_fd;
	atomic_int dir_fd; /* RUN_DIR/attempts once made and opened, else -1 */
};

struct attempts_dir {
	struct attempts *a;
	char *rel;       /* "attempts/STEP/N", as the journal names its files */
	char *step;      /* STEP, one component */
	const char *num; /* N, the end of rel */
	int fd;          /* the folder, once made and opened, else -1 */
	int files_fd;    /* its files/, likewise */
};

static char *attempt_rel(const char *step_id, int attempt)
{
	char *c = attempts_id_component(step_id), *d = xasprintf("attempts/%s/%d", c, attempt);

	free(c);
	return d;
}

char *attempts_artifact_path(const char *step_id, int attempt, const char *path)
{
	char *d = attempt_rel(step_id, attempt), *p = xasprintf("%s/files/%s", d, path);

	free(d);
	return p;
}

/* Makes the folder `name` beneath dfd unless it is there, and opens it: one component,
 * made before it is opened because it is new more often than not. A symbolic link in
 * its place is refused by O_NOFOLLOW. -1 with errno. */
static int make_dir_at(int dfd, const char *name)
{
	if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

struct attempts *attempts_open(const char *run_dir, char **err)
{
	int fd = run_dir ? open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	struct attempts *a;

	if (fd < 0) {
		*err = xasprintf("cannot open the run folder %s: %s", run_dir ? run_dir : "(none)",
				 run_dir ? strerror(errno) : "no path");
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->run_fd = fd;
	atomic_init(&a->dir_fd, -1);
	return a;
}

void attempts_close(struct attempts *a)
{
	if (!a)
		return;
	if (atomic_load(&a->dir_fd) >= 0)
		close(atomic_load(&a->dir_fd));
	close(a->run_fd);
	free(a);
}

/* RUN_DIR/attempts, made and opened by whichever worker needs it first. */
static int attempts_root(struct attempts *a)
{
	int fd = atomic_load(&a->dir_fd), none = -1;

	if (fd >= 0)
		return fd;
	fd = make_dir_at(a->run_fd, "attempts");
	if (fd < 0)
		return -1;
	if (!atomic_compare_exchange_strong(&a->dir_fd, &none, fd)) {
		close(fd); /* another worker was first: `none` is its descriptor */
		return none;
	}
	return fd;
}

struct attempts_dir *attempts_dir_new(struct attempts *a, const char *step_id, int attempt)
{
	struct attempts_dir *d;

	if (!a)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->a = a;
	d->step = attempts_id_component(step_id);
	d->rel = xasprintf("attempts/%s/%d", d->step, attempt);
	d->num = strrchr(d->rel, '/') + 1;
	d->fd = -1;
	d->files_fd = -1;
	return d;
}

void attempts_dir_free(struct attempts_dir *d)
{
	if (!d)
		return;
	if (d->files_fd >= 0)
		close(d->files_fd);
	if (d->fd >= 0)
		close(d->fd);
	free(d->rel);
	free(d->step);
	free(d);
}

/* Makes and opens the attempt's folder on first use; false when it cannot be. */
static bool dir_ready(struct attempts_dir *d)
{
	int root, step;

	if (d->fd >= 0)
		return true;
	root = attempts_root(d->a);
	if (root < 0)
		return false;
	step = make_dir_at(root, d->step);
	if (step < 0 && errno == ENOENT) {
		/* attempts/ was removed since it was opened: made again for this attempt. The
		 * shared descriptor stays as it is, since another worker may be using it. */
		int fresh = make_dir_at(d->a->run_fd, "attempts");

		if (fresh >= 0) {
			step = make_dir_at(fresh, d->step);
			close(fresh);
		}
	}
	if (step < 0)
		return false;
	d->fd = make_dir_at(step, d->num);
	close(step);
	return d->fd >= 0;
}

/* Writes n bytes to fd and closes it; false if either failed. */
static bool write_close(int fd, const char *buf, size_t n)
{
	bool ok = fd_write_all(fd, buf, n) == 0;

	return close(fd) == 0 && ok;
}

/* Reads up to max bytes of an open regular file, `st` being what fstat said of it. */
static char *slurp(int fd, const struct stat *st, size_t max, size_t *len, bool *cut,
		   char **err)
{
	struct strbuf sb;
	char buf[8192];
	ssize_t r;

	if (!S_ISREG(st->st_mode)) {
		*err = xstrdup("not a regular file");
		return NULL;
	}
	strbuf_init(&sb);
	while (sb.len < max) {
		size_t want = max - sb.len < sizeof(buf) ? max - sb.len : sizeof(buf);

		r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = xasprintf("cannot read it: %s", strerror(errno));
			strbuf_release(&sb);
			return NULL;
		}
		if (r == 0)
			break;
		strbuf_add(&sb, buf, (size_t)r);
	}
	if (cut) {
		char one;

		*cut = sb.len >= max && read(fd, &one, 1) == 1;
	}
	*len = sb.len;
	return strbuf_detach(&sb);
}

int attempts_keep_artifacts(struct attempts_dir *d, int ws_fd, const struct strvec *paths)
{
	int kept = 0;

	if (!d || ws_fd < 0 || !paths)
		return 0;
	for (size_t i = 0; i < paths->n; i++) {
		char *err = NULL, *data;
		size_t len = 0;
		bool cut = false;
		struct stat st;
		int fd;

		if (sandbox_check_path(paths->v[i]))
			continue;
		fd = sandbox_open_stat(ws_fd, paths->v[i], O_RDONLY, 0, false, &st, &err);
		free(err);
		err = NULL;
		if (fd < 0)
			continue;
		data = slurp(fd, &st, ATTEMPTS_MAX_FILE, &len, &cut, &err);
		close(fd);
		free(err);
		err = NULL;
		if (!data || cut) {
			free(data);
			continue;
		}
		if (d->files_fd < 0 && dir_ready(d))
			d->files_fd = make_dir_at(d->fd, "files");
		/* The path is the model's: beneath files/ as beneath the workspace. */
		fd = d->files_fd < 0 ? -1
				     : sandbox_open(d->files_fd, paths->v[i],
						    O_WRONLY | O_CREAT | O_TRUNC, 0600, true, &err);
		free(err);
		if (fd >= 0)
			kept += write_close(fd, data, len);
		free(data);
	}
	return kept;
}

char *attempts_keep_output(struct attempts_dir *d, int k, const char *text, size_t len)
{
	struct stat st;
	char name[32];
	int fd;

	if (!d || !text || !dir_ready(d))
		return NULL;
	if (len > ATTEMPTS_MAX_FILE) {
		len = ATTEMPTS_MAX_FILE; /* on a UTF-8 boundary */
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;
	}
	/* Beside files/, not in a folder of their own: one inode fewer per attempt. Older
	 * runs' tools/K.txt stay readable: tool.result's output_file names the path. The
	 * name is ours and one component: O_NOFOLLOW refuses a link, O_NONBLOCK keeps a
	 * FIFO put in its place from hanging the worker, and the fstat refuses a FIFO that
	 * has a reader (or any other file that is not a regular one). */
	snprintf(name, sizeof(name), "tool-%d.txt", k + 1);
	fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	if (!write_close(fd, text, len))
		return NULL;
	return xasprintf("%s/%s", d->rel, name);
}

char *attempts_read_beneath(const char *root_dir, const char *rel, size_t max, size_t *len,
			    bool *cut, char **err)
{
	struct stat st;
	int root, fd;
	char *data, *e = NULL;

	*err = NULL;
	if (!root_dir || !rel) {
		*err = xstrdup("no such file");
		return NULL;
	}
	root = open(root_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		*err = xasprintf("cannot open the folder: %s", strerror(errno));
		return NULL;
	}
	fd = sandbox_open_stat(root, rel, O_RDONLY, 0, false, &st, &e);
	close(root);
	if (fd < 0) {
		*err = e ? e : xstrdup("cannot open it");
		return NULL;
	}
	data = slurp(fd, &st, max, len, cut, err);
	close(fd);
	return data;
}
