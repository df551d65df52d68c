/* restore_paths — puts paths back as a checkpoint holds them, beneath the workspace only:
 * folders are opened one by one without following links, files are written under a
 * temporary name and renamed into place, and a path someone changed since is left alone. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

/* ---------------------------------------------------------------- restoring */

/* Opens the folder holding `path` beneath root, one component at a time without following
 * a link (creating missing folders when `create`); *name points at the last component.
 * -1 with errno on failure (ENOENT: a folder on the way does not exist). */
int cp_open_parent(int root, const char *path, bool create, const char **name)
{
	int dfd = dup(root);
	const char *p = path;

	if (dfd < 0)
		return -1;
	for (;;) {
		const char *slash = strchr(p, '/');
		char *comp;
		int nfd;

		if (!slash) {
			*name = p;
			return dfd;
		}
		comp = xstrndup(p, (size_t)(slash - p));
		nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(dfd, comp, 0777) == 0 || errno == EEXIST)
				nfd = openat(dfd, comp,
				             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		free(comp);
		if (nfd < 0) {
			int e = errno;
			close(dfd);
			errno = e;
			return -1;
		}
		close(dfd);
		dfd = nfd;
		p = slash + 1;
	}
}

/* The state of path in a tree: *mode 0 when absent. */
void cp_tree_state(git_tree *tree, const char *path, unsigned *mode, git_oid *oid)
{
	git_tree_entry *te = NULL;

	*mode = 0;
	if (git_tree_entry_bypath(&te, tree, path) == 0) {
		*mode = (unsigned)git_tree_entry_filemode(te);
		*oid = *git_tree_entry_id(te);
		if (*mode == GIT_FILEMODE_TREE)
			*mode = 040000;
		git_tree_entry_free(te);
	}
}

/* Whether path in the workspace now is what `tree` holds (both absent counts), with the
 * permission bits `meta` records (when it does). */
static bool matches(struct checkpoints *cp, int root, git_tree *tree, const struct cp_meta *meta,
                    const char *path)
{
	unsigned mode;
	git_oid want, have;
	const char *name;
	struct stat st;
	int pfd = cp_open_parent(root, path, false, &name);
	bool same = false;

	cp_tree_state(tree, path, &mode, &want);
	if (pfd < 0)
		return mode == 0 && (errno == ENOENT || errno == ENOTDIR);
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		same = mode == 0 && errno == ENOENT;
	} else if (S_ISLNK(st.st_mode) && mode == GIT_FILEMODE_LINK) {
		char target[4096];
		ssize_t n = readlinkat(pfd, name, target, sizeof(target));
		same = n >= 0 && git_odb_hash(&have, target, (size_t)n, GIT_OBJECT_BLOB) == 0 &&
		       git_oid_equal(&have, &want);
	} else if (S_ISREG(st.st_mode) &&
	           (mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE) &&
	           ((st.st_mode & S_IXUSR) != 0) == (mode == GIT_FILEMODE_BLOB_EXECUTABLE)) {
		size_t len;
		bool changed;
		struct stat fst;
		char *buf = cp_read_file_at(pfd, name, cp->max_file, &len, &fst, &changed);
		unsigned perm = meta ? cp_meta_perm_of(meta, path, mode) : 0;
		same = buf && git_odb_hash(&have, buf, len, GIT_OBJECT_BLOB) == 0 &&
		       git_oid_equal(&have, &want) && (!perm || (st.st_mode & 07777) == perm);
		free(buf);
	}
	close(pfd);
	return same;
}

/*
 * Whether the file at path was already there when its checkpoint was taken: its inode last
 * changed before the walk began. A path the checkpoint lacks can still be an old file (the
 * step edited .gitignore, so an ignored file looked new): such a file is never deleted.
 */
bool cp_there_before(int root, const char *path, const struct timespec *taken)
{
	struct stat st;

	if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return cp_older(&st.st_ctim, taken);
}

/* Removes the folders a deleted path leaves empty, up to one the checkpoint holds — but
 * only folders born after the checkpoint was taken: git keeps no empty folder, so an empty
 * folder of the operator's looks absent too. Without a birth time, a folder is kept. */
static void prune_parents(int root, git_tree *tree, const char *path,
			  const struct timespec *taken)
{
	char *dir = xstrdup(path);
	char *slash;

	while ((slash = strrchr(dir, '/'))) {
		unsigned mode;
		git_oid oid;
		const char *name;
		int pfd;

		*slash = '\0';
		cp_tree_state(tree, dir, &mode, &oid);
		if (mode)
			break;
		pfd = cp_open_parent(root, dir, false, &name);
		if (pfd < 0)
			break;
		struct statx sx;
		if (statx(pfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) < 0 ||
		    !(sx.stx_mask & STATX_BTIME) ||
		    cp_older(&(struct timespec){sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec},
		             taken) ||
		    unlinkat(pfd, name, AT_REMOVEDIR) < 0) {
			close(pfd);
			break;
		}
		close(pfd);
	}
	free(dir);
}

/* Writes path as `tree` holds it (or deletes it): a temporary entry renamed into place; a
 * file with the permission bits `meta` records, when it does. */
static bool restore_one(struct checkpoints *cp, int root, git_tree *tree,
                        const struct cp_meta *meta, const char *path,
                        const struct timespec *taken, char **err)
{
	unsigned mode;
	git_oid oid;
	const char *name;
	git_blob *blob = NULL;
	char *tmp = NULL;
	bool ok = false;
	int pfd;

	cp_tree_state(tree, path, &mode, &oid);
	if (mode == 040000) {
		cp_set_err(err, "checkpoints: %s is a folder in the checkpoint, not a file", path);
		return false;
	}
	pfd = cp_open_parent(root, path, mode != 0, &name);
	if (pfd < 0) {
		if (!mode && (errno == ENOENT || errno == ENOTDIR))
			return true; /* already gone */
		cp_set_err(err, "checkpoints: cannot restore %s: %s (a link or a file on the way?)",
		           path, strerror(errno));
		return false;
	}
	if (!mode) {
		if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT) {
			cp_set_err(err, "checkpoints: cannot remove %s: %s", path, strerror(errno));
		} else {
			ok = true;
			close(pfd);
			pfd = -1;
			prune_parents(root, tree, path, taken);
		}
		if (pfd >= 0)
			close(pfd);
		return ok;
	}
	if (git_blob_lookup(&blob, cp->repo, &oid) < 0) {
		cp_set_err(err, "checkpoints: the store lacks the content of %s: %s", path,
		           cp_git_why());
		close(pfd);
		return false;
	}
	tmp = xasprintf(".pevtui-restore-%ld-%lx", (long)getpid(), (unsigned long)random());
	if (mode == GIT_FILEMODE_LINK) {
		char *target = xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		ok = symlinkat(target, pfd, tmp) == 0;
		free(target);
	} else {
		/* The bits the checkpoint recorded, exactly. A checkpoint from before they
		 * were recorded: the permissions the file has now (a .env kept at 0600 stays
		 * so), with the checkpoint's exec bit; 0600 or 0700 for a file that is gone. */
		struct stat now;
		bool exec = mode == GIT_FILEMODE_BLOB_EXECUTABLE;
		mode_t perm = exec ? 0700 : 0600, want = meta ? cp_meta_perm_of(meta, path, mode) : 0;
		if (want) {
			perm = want;
		} else if (fstatat(pfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		           S_ISREG(now.st_mode)) {
			perm = now.st_mode & 0777;
			perm = exec ? perm | ((perm & 0444) >> 2) : perm & ~(mode_t)0111;
		}
		/* Written at 0600 and given its bits once whole: never more open than asked,
		 * and a set-id bit is not cleared by the write. */
		int fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                0600);
		const char *p = git_blob_rawcontent(blob);
		size_t left = (size_t)git_blob_rawsize(blob);
		ok = fd >= 0;
		while (ok && left) {
			ssize_t w = write(fd, p, left);
			if (w < 0 && errno == EINTR)
				continue;
			ok = w > 0;
			if (ok) {
				p += w;
				left -= (size_t)w;
			}
		}
		if (ok && fchmod(fd, perm) < 0)
			ok = false;
		if (fd >= 0 && close(fd) < 0)
			ok = false;
	}
	if (ok && renameat(pfd, tmp, pfd, name) < 0)
		ok = false;
	if (!ok) {
		cp_set_err(err, "checkpoints: cannot restore %s: %s", path, strerror(errno));
		unlinkat(pfd, tmp, 0);
	}
	free(tmp);
	git_blob_free(blob);
	close(pfd);
	return ok;
}

/* One path restored to `target` unless it differs from `expect` (a conflict). */
static bool restore_path(struct checkpoints *cp, int root, struct snap *target, struct snap *expect,
                         const char *path, struct strvec *restored, struct strvec *conflicts,
                         char **err)
{
	unsigned mode;
	git_oid oid;
	struct timespec taken = target->taken;

	if (cp_in_vec(&target->left_out, path) || cp_path_excluded(cp, path) ||
	    cp_meta_left_why(&target->meta, path))
		return true; /* never stored: nothing to restore it to, never deleted */
	if (matches(cp, root, target->tree, &target->meta, path))
		return true;
	cp_tree_state(target->tree, path, &mode, &oid);
	if ((expect && !matches(cp, root, expect->tree, &expect->meta, path)) ||
	    (!mode && cp_there_before(root, path, &taken))) {
		if (conflicts)
			strvec_push(conflicts, path);
		return true;
	}
	if (!restore_one(cp, root, target->tree, &target->meta, path, &taken, err))
		return false;
	if (restored)
		strvec_push(restored, path);
	return true;
}

/* A path inside the workspace: relative, no empty, "." or ".." component. Unlike
 * sandbox_check_path, any other byte is allowed: a step may well create such names. */
bool cp_path_ok(const char *p)
{
	if (!p || !*p || *p == '/')
		return false;
	for (;;) {
		size_t n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

bool cp_restore_locked(struct checkpoints *cp, const char *id, const struct strvec *paths,
                       const char *expect, struct strvec *restored, struct strvec *conflicts,
                       char **err)
{
	struct snap t, x;
	bool ok = true;
	int root;

	if (!cp_snap_load(cp, id, &t, err))
		return false;
	if (expect && !cp_snap_load(cp, expect, &x, err)) {
		cp_snap_release(&t);
		return false;
	}
	root = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		cp_set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		           strerror(errno));
		ok = false;
	}
	for (size_t i = 0; root >= 0 && i < paths->n; i++) {
		if (!cp_path_ok(paths->v[i])) {
			cp_set_err(err,
			           "checkpoints: will not restore \"%s\": not a workspace path",
			           paths->v[i]);
			ok = false;
			continue;
		}
		if (!restore_path(cp, root, &t, expect ? &x : NULL, paths->v[i], restored,
		                  conflicts, err))
			ok = false;
	}
	if (root >= 0)
		close(root);
	cp_snap_release(&t);
	if (expect)
		cp_snap_release(&x);
	return ok;
}

bool checkpoint_restore_paths(struct checkpoints *cp, const char *id, const struct strvec *paths,
                              const char *expect, struct strvec *restored, struct strvec *conflicts,
                              char **err)
{
	bool ok;

	cp_lock(cp);
	ok = cp_restore_locked(cp, id, paths, expect, restored, conflicts, err);
	cp_unlock(cp);
	return ok;
}
