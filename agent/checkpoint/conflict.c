/* conflict — the rewind gate's side of the store: a series' conflicts with the checkpoint
 * each would go back to, the diff of one, and a restore over someone else's change. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

/* ------------------------------------------------ the rewind gate's restores */

bool checkpoint_series_restore_step(struct checkpoints *cp, const char *step_id,
                                    struct cp_restored *out, char **err)
{
	struct series *s;

	memset(out, 0, sizeof(*out));
	out->step_id = xstrdup(step_id);
	cp_lock(cp);
	s = cp_series_find(cp, step_id);
	if (!s || !s->n) {
		cp_unlock(cp);
		return false;
	}
	cp_series_restore_locked(cp, s, &out->restored, &out->conflicts, &out->bases, &out->shared,
	                         err);
	cp_unlock(cp);
	return true;
}

/* The content of path as the workspace holds it now (a link: its target); NULL when it is
 * absent or not a file or a link. *mode: its git mode. */
static char *current_content(struct checkpoints *cp, int root, const char *path, size_t *len,
                             unsigned *mode)
{
	const char *name;
	struct stat st;
	int pfd = cp_open_parent(root, path, false, &name);
	char *buf = NULL;

	*mode = 0;
	*len = 0;
	if (pfd < 0)
		return NULL;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(pfd, name, target, sizeof(target));
			if (n >= 0) {
				buf = xstrndup(target, (size_t)n);
				*len = (size_t)n;
				*mode = GIT_FILEMODE_LINK;
			}
		} else if (S_ISREG(st.st_mode)) {
			bool changed;
			struct stat fst;
			buf = cp_read_file_at(pfd, name, cp->max_file, len, &fst, &changed);
			*mode = (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE
			                               : GIT_FILEMODE_BLOB;
		}
	}
	close(pfd);
	return buf;
}

bool checkpoint_conflict_diff(struct checkpoints *cp, const char *base, const char *path,
                              size_t max, struct strbuf *out, bool *cut, char **err)
{
	struct snap t;
	unsigned mode_now, mode_then;
	git_oid oid;
	git_blob *blob = NULL;
	git_patch *patch = NULL;
	git_diff_options o;
	char *now = NULL;
	size_t len_now;
	bool ok = false;
	int root;

	if (!cp_path_ok(path)) {
		cp_set_err(err, "checkpoints: \"%s\" is not a workspace path", path);
		return false;
	}
	cp_lock(cp);
	if (!cp_snap_load(cp, base, &t, err)) {
		cp_unlock(cp);
		return false;
	}
	root = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		cp_set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		           strerror(errno));
		goto done;
	}
	now = current_content(cp, root, path, &len_now, &mode_now);
	close(root);
	cp_tree_state(t.tree, path, &mode_then, &oid);
	if (mode_then && mode_then != 040000 && git_blob_lookup(&blob, cp->repo, &oid) < 0) {
		cp_set_err(err, "checkpoints: the store lacks the content of %s: %s", path,
		           cp_git_why());
		goto done;
	}
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 3;
	/* From what is there now (theirs) to what a restore writes. */
	if (git_patch_from_buffers(&patch, now, now ? len_now : 0, now ? path : NULL,
	                           blob ? git_blob_rawcontent(blob) : NULL,
	                           blob ? (size_t)git_blob_rawsize(blob) : 0,
	                           blob ? path : NULL, &o) < 0) {
		cp_set_err(err, "checkpoints: cannot compare %s: %s", path, cp_git_why());
		goto done;
	}
	{
		git_buf pb = {0};
		if (git_patch_to_buf(&pb, patch) == 0) {
			if (pb.size)
				cp_diff_append(out, pb.ptr, pb.size, max, cut);
			else if (mode_now != mode_then) {
				char *line = xasprintf("%s: mode %o now, %o in the checkpoint\n",
				                       path, mode_now, mode_then);
				cp_diff_append(out, line, strlen(line), max, cut);
				free(line);
			}
		}
		git_buf_dispose(&pb);
	}
	ok = true;
done:
	git_patch_free(patch);
	git_blob_free(blob);
	free(now);
	cp_snap_release(&t);
	cp_unlock(cp);
	return ok;
}

bool checkpoint_restore_over(struct checkpoints *cp, const char *step_id, const char *base,
                             const char *path, struct strvec *restored, char **err)
{
	struct strvec one = STRVEC_INIT, done = STRVEC_INIT, conf = STRVEC_INIT;
	bool ok;

	strvec_push(&one, path);
	cp_lock(cp);
	ok = cp_restore_locked(cp, base, &one, NULL, &done, &conf, err);
	/* As any restore: a step running beside sees it as its own change. */
	for (size_t d = 0; restored && d < done.n; d++)
		strvec_push(restored, done.v[d]);
	cp_shared_beside(cp, step_id, &done);
	cp_unlock(cp);
	if (ok && conf.n)
		cp_set_err(
		    err,
		    "checkpoints: %s was there before the checkpoint and is not deleted: left "
		    "as it is",
		    path);
	ok = ok && !conf.n;
	strvec_clear(&one);
	strvec_clear(&done);
	strvec_clear(&conf);
	return ok;
}
