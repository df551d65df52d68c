/* sandbox — opening paths beneath the workspace without ever leaving it. */
#include "config.h"
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "strbuf.h"
#include "xalloc.h"

#define SANDBOX_MAX_PATH 4096

/* What can be wrong with a path before touching the disk. */
enum problem { P_NONE, P_EMPTY, P_LONG, P_ABS, P_DOTDOT, P_CTRL };

/* Each completes "path \"X\" …" (sandbox_open) or "the path …" (sandbox_check_path). */
static const char *const phrases[] = {
	[P_NONE] = NULL,
	[P_EMPTY] = "is empty; give a path relative to the workspace, such as \"notes.txt\"",
	[P_LONG] = "is longer than 4096 bytes",
	[P_ABS] = "is absolute; give a path relative to the workspace, such as \"notes.txt\"",
	[P_DOTDOT] = "leaves the workspace (\"..\" is not allowed)",
	[P_CTRL] = "contains a control character",
};

static const char *const sentences[] = {
	[P_NONE] = NULL,
	[P_EMPTY] = "the path is empty; give a path relative to the workspace, such as "
		    "\"notes.txt\"",
	[P_LONG] = "the path is longer than 4096 bytes",
	[P_ABS] = "the path is absolute; give a path relative to the workspace, such as "
		  "\"notes.txt\"",
	[P_DOTDOT] = "the path leaves the workspace (\"..\" is not allowed)",
	[P_CTRL] = "the path contains a control character",
};

static enum problem check(const char *rel)
{
	if (!rel || !*rel)
		return P_EMPTY;
	size_t len = strnlen(rel, SANDBOX_MAX_PATH + 1);
	if (len > SANDBOX_MAX_PATH)
		return P_LONG;
	if (rel[0] == '/')
		return P_ABS;
	for (const char *p = rel; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return P_CTRL;
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return P_DOTDOT;
		p += n;
		p += strspn(p, "/");
	}
	return P_NONE;
}

const char *sandbox_check_path(const char *rel)
{
	return sentences[check(rel)];
}

/* The path as it may appear in a message: quoted text is untrusted, so bounded. */
static char *show(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	strbuf_init(&sb);
	for (const char *p = s ? s : ""; *p; p++, n++) {
		if (n == 200) {
			strbuf_adds(&sb, "...");
			break;
		}
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f)
			strbuf_addc(&sb, '?');
		else if (c == '"' || c == '\\')
			strbuf_addf(&sb, "\\%c", c);
		else
			strbuf_addc(&sb, (char)c);
	}
	return strbuf_detach(&sb);
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	free(*err);
	*err = xvasprintf(fmt, ap);
	va_end(ap);
}

#ifdef SYS_openat2
/* 0 = untried, 1 = works, -1 = the kernel (or a seccomp filter) lacks it. */
static atomic_int have_openat2;

/* The fast path: the kernel resolves beneath root and refuses every link. -1 with errno. */
static int try_openat2(int root, const char *rel, int flags, mode_t mode)
{
	if (atomic_load(&have_openat2) < 0) {
		errno = ENOSYS;
		return -1;
	}
	struct open_how how;
	memset(&how, 0, sizeof(how));
	how.flags = (unsigned long long)flags;
	how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	long fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG)) {
		/* EPERM: some container seccomp profiles deny unknown syscalls that way. */
		if (errno != EPERM || atomic_load(&have_openat2) == 0)
			atomic_store(&have_openat2, -1);
		errno = ENOSYS;
		return -1;
	}
	if (fd >= 0)
		atomic_store(&have_openat2, 1);
	return (int)fd;
}
#endif

/* Names what went wrong with component `shown` of `rel` after openat failed with `e`. */
static void explain(int dfd, const char *name, const char *rel, size_t prefix_len, int e,
		    bool want_dir, char **err)
{
	char *whole = show(rel);
	char *part_raw = xstrndup(rel, prefix_len);
	char *part = show(part_raw);
	struct stat st;
	bool is_last = strspn(rel + prefix_len, "/") == strlen(rel + prefix_len);
	char *where = is_last ? xasprintf("path \"%s\"", whole)
			      : xasprintf("\"%s\" (in path \"%s\")", part, whole);

	if ((e == ELOOP || e == ENOTDIR || e == EEXIST || e == EMLINK) &&
	    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		set_err(err, "%s is a symbolic link; links are not followed in the workspace",
			where);
	else if (e == ENOENT && !is_last)
		set_err(err, "path \"%s\" does not exist (there is no folder \"%s\")", whole,
			part);
	else if (e == ENOENT)
		set_err(err, "path \"%s\" does not exist", whole);
	else if (e == ENOTDIR || (want_dir && e == ELOOP))
		set_err(err, "%s is not a folder", where);
	else if (e == EISDIR)
		set_err(err, "path \"%s\" is a folder, not a file", whole);
	else if (e == EEXIST)
		set_err(err, "path \"%s\" already exists", whole);
	else
		set_err(err, "cannot open %s: %s", where, strerror(e));
	free(where);
	free(part);
	free(part_raw);
	free(whole);
}

/* Opens (or with `create`, makes then opens) the directory `name` beneath dfd. */
static int open_dir_step(int dfd, const char *name, bool create)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
			return -1;
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

/* A regular file or a directory; FIFOs and devices could block or surprise a tool. What
 * fstat said stays in *st for the caller, who then need not ask again. */
static int check_kind(int fd, const char *rel, struct stat *st, char **err)
{
	if (fstat(fd, st) < 0) {
		char *s = show(rel);
		set_err(err, "cannot examine path \"%s\": %s", s, strerror(errno));
		free(s);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		char *s = show(rel);
		set_err(err, "path \"%s\" is not a regular file or folder", s);
		free(s);
		close(fd);
		return -1;
	}
	return fd;
}

/* O_NONBLOCK (set on every open, so that a FIFO put in a file's place cannot hang us)
 * stays set: it has no effect on regular files and folders, the only kinds let through
 * (open(2)), and clearing it cost two system calls per file. */
static int finish(int fd, const char *rel, struct stat *st, char **err)
{
	return check_kind(fd, rel, st, err);
}

/*
 * The careful walk: each directory opened with O_NOFOLLOW|O_DIRECTORY beneath the previous
 * one, so no link and no ".." is ever resolved. `mkdirs` creates missing directories on the
 * way, and the last one too when O_DIRECTORY is asked for without O_CREAT.
 */
static int walk(int root, const char *rel, int flags, mode_t mode, bool mkdirs, struct stat *st,
		char **err)
{
	int dfd = root;
	const char *p = rel;
	bool want_dir = (flags & O_DIRECTORY) && !(flags & O_CREAT);

	for (;;) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		const char *rest = p + n;
		while (*rest == '/')
			rest++;
		bool last = *rest == '\0';
		char *name = xstrndup(p, n);

		if (n == 0) {
			/* Nothing left but slashes: rel named a directory we already hold. */
			free(name);
			int fd = openat(dfd, ".", (flags & ~O_CREAT) | O_NOFOLLOW | O_CLOEXEC, 0);
			if (fd < 0)
				explain(dfd, ".", rel, (size_t)(p - rel), errno, want_dir, err);
			if (dfd != root)
				close(dfd);
			return fd < 0 ? -1 : finish(fd, rel, st, err);
		}
		if (strcmp(name, ".") == 0 && !last) {
			free(name);
			p = rest;
			continue;
		}
		if (last) {
			int fd;
			if (want_dir)
				fd = open_dir_step(dfd, name, mkdirs);
			else
				fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
					    mode);
			if (fd < 0)
				explain(dfd, name, rel, (size_t)(p - rel) + n, errno, want_dir,
					err);
			free(name);
			if (dfd != root)
				close(dfd);
			return fd < 0 ? -1 : finish(fd, rel, st, err);
		}
		int nfd = open_dir_step(dfd, name, mkdirs);
		if (nfd < 0) {
			explain(dfd, name, rel, (size_t)(p - rel) + n, errno, true, err);
			free(name);
			if (dfd != root)
				close(dfd);
			return -1;
		}
		free(name);
		if (dfd != root)
			close(dfd);
		dfd = nfd;
		p = rest;
	}
}

int sandbox_open(int root, const char *rel, int flags, mode_t mode, bool mkdirs, char **err)
{
	struct stat st;

	return sandbox_open_stat(root, rel, flags, mode, mkdirs, &st, err);
}

int sandbox_open_stat(int root, const char *rel, int flags, mode_t mode, bool mkdirs,
		      struct stat *st, char **err)
{
	enum problem pb = check(rel);
	if (pb != P_NONE) {
		char *s = show(rel);
		set_err(err, "path \"%s\" %s", s, phrases[pb]);
		free(s);
		return -1;
	}
#ifdef SYS_openat2
	int fd = try_openat2(root, rel, flags | O_NONBLOCK | O_CLOEXEC, mode);
	if (fd >= 0)
		return finish(fd, rel, st, err);
	/*
	 * Any failure goes through the walk: it is just as strict, creates missing
	 * directories, and says exactly which component was the problem.
	 */
#endif
	return walk(root, rel, flags, mode, mkdirs, st, err);
}

int sandbox_open_root(const char *path, char **err)
{
	if (!path || !*path) {
		set_err(err, "the workspace path is empty");
		return -1;
	}
	/* The operator chose this path, so plain mkdir of each missing parent is right here. */
	char *copy = xstrdup(path);
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST) {
			char *s = show(copy);
			set_err(err, "cannot create the workspace folder \"%s\": %s", s,
				strerror(errno));
			free(s);
			free(copy);
			return -1;
		}
		*p = '/';
	}
	if (mkdir(copy, 0755) < 0 && errno != EEXIST) {
		char *s = show(copy);
		set_err(err, "cannot create the workspace folder \"%s\": %s", s, strerror(errno));
		free(s);
		free(copy);
		return -1;
	}
	free(copy);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		char *s = show(path);
		set_err(err, "cannot open the workspace folder \"%s\": %s", s, strerror(errno));
		free(s);
	}
	return fd;
}

bool sandbox_file_nonempty(int root, const char *rel)
{
	struct stat st;
	int fd = sandbox_open_stat(root, rel, O_RDONLY, 0, false, &st, NULL);
	if (fd < 0)
		return false;
	close(fd);
	return S_ISREG(st.st_mode) && st.st_size > 0;
}

bool sandbox_read_dir(int dfd, struct strvec *names)
{
	/* fdopendir takes over the descriptor it is given: hand it a duplicate. */
	int fd = dup(dfd);
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			strvec_push(names, de->d_name);
	closedir(d);
	strvec_sort(names);
	return true;
}
