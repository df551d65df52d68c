/* attempts — copies of each attempt's artifacts and tool outputs in the run folder's
 * attempts.pack. */
#include "config.h"

#include "attempts.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

/*
 * RUN_DIR/attempts.pack, one append-only file per run: one record per copy,
 *
 *     "attempt-file NAMELEN DATALEN\n" NAME "\n" DATA "\n"
 *
 * NAME being the path the copy had in the older layout ("attempts/STEP/N/tool-K.txt",
 * "attempts/STEP/N/files/PATH"), so that the journal names it as before. Each record is
 * written with one pwrite at the end of the last whole one, so a record is either whole
 * or the file's last, torn one (a crash mid-write), which readers leave out and the next
 * writer cuts off before it appends. The record headers are the pack's index: a reader
 * walks them (one pread each, the data skipped) to find a name, the last record of a
 * name counting.
 */
#define PACK_NAME "attempts.pack"
#define PACK_MAGIC "attempt-file "
#define HEAD_MAX 64
#define NAME_MAX_LEN 8192

struct attempts {
	int run_fd;
	pthread_mutex_t lock; /* the workers append one at a time */
	int pack_fd;          /* RUN_DIR/attempts.pack once opened, else -1 */
	off_t end;            /* the end of its last whole record */
};

struct attempts_dir {
	struct attempts *a;
	char *rel; /* "attempts/STEP/N", the prefix of the attempt's records' names */
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

/* The pack beneath dfd, for appending (made when it is not there) or reading: never
 * through a symbolic link (O_NOFOLLOW), never a FIFO or anything else that is not a
 * regular file (O_NONBLOCK keeps a FIFO from hanging the open, fstat refuses it). -1. */
static int open_pack(int dfd, bool append)
{
	int fd = openat(dfd, PACK_NAME,
			(append ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			0600);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct rec {
	size_t name_len, data_len;
	off_t name_at, data_at, next;
};

/* Decimal digits up to `stop`, at most max; advances *p past stop. */
static bool parse_size(const char **p, char stop, size_t max, size_t *out)
{
	const char *s = *p;
	size_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (size_t)(*s - '0');
		if (v > max)
			return false;
	}
	if (*s != stop)
		return false;
	*p = s + 1;
	*out = v;
	return true;
}

static bool byte_is(int fd, off_t at, char want)
{
	char c;

	return pread(fd, &c, 1, at) == 1 && c == want;
}

/* The whole record at `at` of a pack of `size` bytes; false at its end, or at a torn or
 * damaged record (everything from there on is left out). */
static bool rec_at(int fd, off_t at, off_t size, struct rec *r)
{
	char head[HEAD_MAX + 1];
	const char *p = head + strlen(PACK_MAGIC), *nl;
	ssize_t n = size - at < HEAD_MAX ? (ssize_t)(size - at) : HEAD_MAX;

	if (n <= (ssize_t)strlen(PACK_MAGIC) || pread(fd, head, (size_t)n, at) != n)
		return false;
	head[n] = '\0';
	nl = memchr(head, '\n', (size_t)n);
	if (!nl || strncmp(head, PACK_MAGIC, strlen(PACK_MAGIC)) ||
	    !parse_size(&p, ' ', NAME_MAX_LEN, &r->name_len) ||
	    !parse_size(&p, '\n', ATTEMPTS_MAX_FILE, &r->data_len) || p != nl + 1)
		return false;
	r->name_at = at + (nl + 1 - head);
	r->data_at = r->name_at + (off_t)r->name_len + 1;
	r->next = r->data_at + (off_t)r->data_len + 1;
	return r->next <= size && byte_is(fd, r->data_at - 1, '\n') &&
	       byte_is(fd, r->next - 1, '\n');
}

/* The end of the pack's last whole record. */
static off_t whole_end(int fd)
{
	struct stat st;
	struct rec r;
	off_t at = 0;

	if (fstat(fd, &st))
		return 0;
	while (rec_at(fd, at, st.st_size, &r))
		at = r.next;
	return at;
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
	a->pack_fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

void attempts_close(struct attempts *a)
{
	if (!a)
		return;
	if (a->pack_fd >= 0)
		close(a->pack_fd);
	close(a->run_fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* The pack, open for appending at a->end (under a->lock). Opened on the first record; a
 * torn record a crash left at its end is cut off first. Removed while the run goes on, it
 * is made again (within a removed run folder it cannot be: nothing more is kept). */
static bool pack_ready(struct attempts *a)
{
	struct stat st;

	if (a->pack_fd >= 0 && (fstat(a->pack_fd, &st) || st.st_nlink == 0)) {
		close(a->pack_fd);
		a->pack_fd = -1;
	}
	if (a->pack_fd >= 0)
		return true;
	a->pack_fd = open_pack(a->run_fd, true);
	if (a->pack_fd < 0)
		return false;
	a->end = whole_end(a->pack_fd);
	if (fstat(a->pack_fd, &st) == 0 && st.st_size > a->end &&
	    ftruncate(a->pack_fd, a->end) != 0) {
		close(a->pack_fd);
		a->pack_fd = -1;
		return false;
	}
	return true;
}

/* Appends the record NAME = DATA with one write; false when it is not whole in the pack. */
static bool pack_append(struct attempts *a, const char *name, const char *data, size_t len)
{
	struct strbuf sb;
	size_t done = 0;
	bool ok;

	strbuf_init(&sb);
	strbuf_addf(&sb, PACK_MAGIC "%zu %zu\n", strlen(name), len);
	strbuf_adds(&sb, name);
	strbuf_addc(&sb, '\n');
	strbuf_add(&sb, data, len);
	strbuf_addc(&sb, '\n');
	pthread_mutex_lock(&a->lock);
	ok = pack_ready(a);
	while (ok && done < sb.len) {
		ssize_t n = pwrite(a->pack_fd, sb.buf + done, sb.len - done, a->end + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ok = false;
		else
			done += (size_t)n;
	}
	if (ok) {
		a->end += (off_t)sb.len;
	} else if (a->pack_fd >= 0 && ftruncate(a->pack_fd, a->end) != 0) {
		/* the torn record stays the last: readers leave it out, the next open cuts it */
	}
	pthread_mutex_unlock(&a->lock);
	strbuf_release(&sb);
	return ok;
}

struct attempts_dir *attempts_dir_new(struct attempts *a, const char *step_id, int attempt)
{
	struct attempts_dir *d;

	if (!a)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->a = a;
	d->rel = attempt_rel(step_id, attempt);
	return d;
}

void attempts_dir_free(struct attempts_dir *d)
{
	if (!d)
		return;
	free(d->rel);
	free(d);
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
		char *err = NULL, *data, *name;
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
		/* The path is the model's, checked above: a record's name, never opened. */
		name = xasprintf("%s/files/%s", d->rel, paths->v[i]);
		kept += pack_append(d->a, name, data, len);
		free(name);
		free(data);
	}
	return kept;
}

char *attempts_keep_output(struct attempts_dir *d, int k, const char *text, size_t len)
{
	char *name;

	if (!d || !text)
		return NULL;
	if (len > ATTEMPTS_MAX_FILE) {
		len = ATTEMPTS_MAX_FILE; /* on a UTF-8 boundary */
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;
	}
	/* Named as in the older layout, where it was a file beside files/ (and before that
	 * tools/K.txt): tool.result's output_file names it. */
	name = xasprintf("%s/tool-%d.txt", d->rel, k + 1);
	if (pack_append(d->a, name, text, len))
		return name;
	free(name);
	return NULL;
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

/* The last whole record named `rel` in the pack beneath root, read up to max bytes;
 * NULL when the pack has none (or there is no pack). */
static char *pack_read(int root, const char *rel, size_t max, size_t *len, bool *cut)
{
	size_t want = strlen(rel);
	int fd = open_pack(root, false);
	struct rec r, found = {0};
	bool have = false;
	struct stat st;
	char *name, *data = NULL;
	off_t at = 0;

	if (fd < 0)
		return NULL;
	name = xmalloc(want + 1);
	if (fstat(fd, &st) == 0)
		for (; rec_at(fd, at, st.st_size, &r); at = r.next)
			if (r.name_len == want &&
			    pread(fd, name, want, r.name_at) == (ssize_t)want &&
			    !memcmp(name, rel, want)) {
				found = r;
				have = true;
			}
	if (have) {
		size_t n = found.data_len < max ? found.data_len : max;

		data = xmalloc(n + 1);
		if (pread(fd, data, n, found.data_at) == (ssize_t)n) {
			data[n] = '\0';
			*len = n;
			if (cut)
				*cut = found.data_len > max;
		} else {
			free(data);
			data = NULL;
		}
	}
	free(name);
	close(fd);
	return data;
}

char *attempts_read(const char *run_dir, const char *rel, size_t max, size_t *len, bool *cut,
		    char **err)
{
	char *data = NULL;
	int root;

	*err = NULL;
	root = run_dir && rel ? open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (root >= 0) {
		data = pack_read(root, rel, max, len, cut);
		close(root);
	}
	/* Runs written by older versions kept each copy as a file of that name. */
	return data ? data : attempts_read_beneath(run_dir, rel, max, len, cut, err);
}
