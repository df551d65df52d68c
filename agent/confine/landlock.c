/* landlock — pevtui-confine's Landlock ruleset: read everything but the hidden secrets,
 * write only beneath the writable roots, no TCP, no abstract sockets or signals outside. */
#include "config.h"

#include "confine_exec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock_abi.h"
#include "xalloc.h"

#define LL_READ (CONFINE_LL_FS_READ_FILE | CONFINE_LL_FS_READ_DIR | CONFINE_LL_FS_EXECUTE)
/* The rights that mean something on a file that is not a folder. */
#define LL_FILE_RIGHTS                                                                     \
	(CONFINE_LL_FS_EXECUTE | CONFINE_LL_FS_WRITE_FILE | CONFINE_LL_FS_READ_FILE |      \
	 CONFINE_LL_FS_TRUNCATE | CONFINE_LL_FS_IOCTL_DEV)

struct ruleset {
	int fd;
	uint64_t handled;
	const struct strvec *hidden;
	char *err;
};

/* Allows `rights` beneath `path` (on it, for a file); a path that is gone is no error. */
static void allow(struct ruleset *r, const char *path, uint64_t rights)
{
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
		close(fd); /* a link gets no rule: what it points to has its own */
		return;
	}
	if (!S_ISDIR(st.st_mode))
		rights &= LL_FILE_RIGHTS;
	struct confine_ll_path_beneath pb = {.allowed_access = rights & r->handled,
					     .parent_fd = fd};
	if (pb.allowed_access &&
	    syscall(__NR_landlock_add_rule, r->fd, CONFINE_LL_RULE_PATH_BENEATH, &pb, 0) < 0 &&
	    !r->err)
		r->err = xasprintf("cannot add a Landlock rule for %s: %s", path,
				   strerror(errno));
	close(fd);
}

static bool is_hidden(const struct ruleset *r, const char *path)
{
	for (size_t i = 0; i < r->hidden->n; i++)
		if (strcmp(r->hidden->v[i], path) == 0)
			return true;
	return false;
}

/* Does a hidden path lie strictly beneath `dir`? */
static bool holds_hidden(const struct ruleset *r, const char *dir)
{
	size_t n = strlen(dir);
	for (size_t i = 0; i < r->hidden->n; i++) {
		const char *h = r->hidden->v[i];
		if (n == 1 && dir[0] == '/' && h[1])
			return true;
		if (strncmp(h, dir, n) == 0 && h[n] == '/')
			return true;
	}
	return false;
}

/*
 * Landlock only allows, so to read all but a secret, each sibling on the way down to it
 * gets the read rights, never a folder that holds it. (Entries made there later are not
 * readable; listing names stays allowed everywhere.)
 */
static void allow_around(struct ruleset *r, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *path = strcmp(dir, "/") ? xasprintf("%s/%s", dir, de->d_name)
					      : xasprintf("/%s", de->d_name);
		struct stat st;
		if (is_hidden(r, path))
			;
		else if (holds_hidden(r, path) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			allow_around(r, path);
		else
			allow(r, path, LL_READ);
		free(path);
	}
	closedir(d);
}

bool confine_landlock_apply(const struct strvec *writable, const struct strvec *hidden,
			    bool network, char **err)
{
	static const char *const devices[] = {"/dev/null", "/dev/zero", "/dev/full",
					      "/dev/random", "/dev/urandom", "/dev/tty"};
	int abi = confine_ll_abi();
	if (abi <= 0) {
		*err = xstrdup("Landlock is not available in this kernel");
		return false;
	}
	struct confine_ll_ruleset_attr attr = {0};
	attr.handled_access_fs = (1ULL << 13) - 1; /* EXECUTE … MAKE_SYM: ABI 1 */
	if (abi >= 2)
		attr.handled_access_fs |= CONFINE_LL_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= CONFINE_LL_FS_TRUNCATE;
	if (abi >= 5)
		attr.handled_access_fs |= CONFINE_LL_FS_IOCTL_DEV;
	if (abi >= 4 && !network)
		attr.handled_access_net = CONFINE_LL_NET_BIND_TCP | CONFINE_LL_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = CONFINE_LL_SCOPE_ABSTRACT_UNIX | CONFINE_LL_SCOPE_SIGNAL;
	struct ruleset r = {.handled = attr.handled_access_fs, .hidden = hidden};
	r.fd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (r.fd < 0) {
		*err = xasprintf("cannot create a Landlock ruleset: %s", strerror(errno));
		return false;
	}
	if (hidden->n == 0) {
		allow(&r, "/", LL_READ);
	} else {
		allow(&r, "/", CONFINE_LL_FS_READ_DIR);
		allow_around(&r, "/");
	}
	for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
		allow(&r, devices[i],
		      CONFINE_LL_FS_READ_FILE | CONFINE_LL_FS_WRITE_FILE | CONFINE_LL_FS_TRUNCATE |
			      CONFINE_LL_FS_IOCTL_DEV);
	for (size_t i = 0; i < writable->n; i++)
		allow(&r, writable->v[i], attr.handled_access_fs);
	if (!r.err && syscall(__NR_landlock_restrict_self, r.fd, 0) < 0)
		r.err = xasprintf("cannot restrict this process with Landlock: %s",
				  strerror(errno));
	close(r.fd);
	*err = r.err;
	return r.err == NULL;
}
