/* place — where a workspace's checkpoint store lives, and how a run folder names it:
 * $XDG_DATA_HOME/pevtui/stores/NAME-KEY, NAME the workspace folder's name and KEY a hash
 * of its real path and device (the same folder reached by another path is the same store;
 * another folder of the same name is not). The run folder's `store` file holds the
 * store's path; a run from before shared stores has its own RUN/checkpoints.git. */
#include "config.h"
#include "checkpoint_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "fdio.h"
#include "settings.h"
#include "strindex.h"
#include "xalloc.h"

#define NAME_MAX_KEPT 40

char *cp_stores_root(void)
{
	return settings_data_path("pevtui/stores");
}

/* mkdir -p, each new folder 0700. */
static bool make_dirs(const char *path)
{
	char *p = xstrdup(path);
	bool ok = true;

	for (char *s = p + 1; ok; s++) {
		bool end = *s == '\0';
		if (*s != '/' && !end)
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			ok = false;
		if (end)
			break;
		*s = '/';
	}
	free(p);
	return ok;
}

char *cp_store_for(const char *ws_path, char **err)
{
	char *real = realpath(ws_path, NULL), *root, *key, *dir;
	const char *base;
	char name[NAME_MAX_KEPT + 1];
	struct stat st;
	size_t n = 0;

	if (!real || stat(real, &st) < 0) {
		cp_set_err(err, "checkpoints: cannot find the workspace %s: %s", ws_path,
		           strerror(errno));
		free(real);
		return NULL;
	}
	root = cp_stores_root();
	if (!root) {
		cp_set_err(err, "checkpoints: no place for the store: set XDG_DATA_HOME or HOME");
		free(real);
		return NULL;
	}
	base = strrchr(real, '/') && strrchr(real, '/')[1] ? strrchr(real, '/') + 1 : "root";
	for (; base[n] && n < NAME_MAX_KEPT; n++) {
		char c = base[n];
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		             (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
		name[n] = plain && !(n == 0 && c == '.') ? c : '_';
	}
	name[n] = '\0';
	key = xasprintf("%llx:%s", (unsigned long long)st.st_dev, real);
	dir = xasprintf("%s/%s-%016llx", root, name, (unsigned long long)str_hash(key));
	free(key);
	free(root);
	free(real);
	return dir;
}

bool cp_make_store_dir(const char *dir, char **err)
{
	if (make_dirs(dir))
		return true;
	cp_set_err(err, "checkpoints: cannot create the store %s: %s", dir, strerror(errno));
	return false;
}

char *checkpoint_run_store(const char *run_dir, bool *legacy)
{
	char *path = xasprintf("%s/store", run_dir), buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	struct stat st;

	if (fd >= 0)
		close(fd);
	free(path);
	*legacy = false;
	if (n > 1 && buf[0] == '/') {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		return xstrdup(buf);
	}
	path = xasprintf("%s/checkpoints.git", run_dir);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		*legacy = true;
		return path;
	}
	free(path);
	return NULL;
}

bool cp_name_run_store(const char *run_dir, const char *store, char **err)
{
	char *path = xasprintf("%s/store", run_dir), *tmp = xasprintf("%s/.store.tmp", run_dir);
	char *line = xasprintf("%s\n", store);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), e = 0;
	bool ok = fd >= 0;

	if (ok && (e = fd_write_all(fd, line, strlen(line))) != 0)
		ok = false;
	if (ok && fsync(fd) < 0)
		ok = false;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	if (ok && rename(tmp, path) < 0)
		ok = false;
	if (!ok) {
		cp_set_err(err, "checkpoints: cannot write %s: %s", path,
		           strerror(e ? e : errno));
		unlink(tmp);
	}
	free(line);
	free(tmp);
	free(path);
	return ok;
}

char *cp_run_ref(const char *run_dir)
{
	char *real = realpath(run_dir, NULL);
	const char *base = real ? real : run_dir, *slash = strrchr(base, '/');
	char *ref;

	base = slash && slash[1] ? slash + 1 : base;
	ref = xasprintf("refs/pevtui/runs/%s", base);
	/* a run id is letters, digits and '-' (run_list.c); anything else is made plain */
	for (char *c = ref + strlen("refs/pevtui/runs/"); *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
			*c = '_';
	free(real);
	return ref;
}

int cp_store_lock(const char *dir, int how)
{
	char *path = xasprintf("%s/pevtui.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc;

	free(path);
	if (fd < 0)
		return -1;
	do
		rc = flock(fd, how);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static uint64_t dir_bytes(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	uint64_t sum = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sum += (uint64_t)st.st_blocks * 512u;
		if (S_ISDIR(st.st_mode)) {
			int sfd = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sfd >= 0)
				sum += dir_bytes(sfd);
		}
	}
	closedir(d);
	return sum;
}

uint64_t checkpoint_store_bytes(const char *store_dir)
{
	int fd = open(store_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? 0 : dir_bytes(fd);
}

uint64_t checkpoint_stores_bytes(void)
{
	char *root = cp_stores_root();
	uint64_t n = root ? checkpoint_store_bytes(root) : 0;

	free(root);
	return n;
}

char *checkpoint_bytes_text(uint64_t bytes)
{
	if (bytes < 1024u * 1024u)
		return xasprintf("%llu KB", (unsigned long long)((bytes + 1023) / 1024));
	if (bytes < 1024ull * 1024u * 1024u)
		return xasprintf("%.1f MB", (double)bytes / (1024.0 * 1024.0));
	return xasprintf("%.2f GB", (double)bytes / (1024.0 * 1024.0 * 1024.0));
}
