/* diff — what changed between two checkpoints: files, line counts, and the unified diff
 * (bounded) that the step log, the verifier and --diff show. */
#include "config.h"
#include "checkpoint_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ------------------------------------------------------------------ diffing */

void cp_changes_release(struct cp_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	free(c->diff);
	strvec_clear(&c->excluded);
	memset(c, 0, sizeof(*c));
}

const char *cp_change_name(enum cp_change c)
{
	return c == CP_ADDED ? "added" : c == CP_DELETED ? "deleted" : "modified";
}

char *cp_changes_stat(const struct cp_changes *c)
{
	if (!c->n)
		return xstrdup("no files changed");
	return xasprintf("%zu file%s changed, +%ld -%ld", c->n, c->n == 1 ? "" : "s", c->plus,
	                 c->minus);
}

/* A side's size: known once its patch loaded it, else read from the store. */
static uint64_t file_size(git_repository *repo, const git_diff_file *f)
{
	git_blob *b = NULL;
	uint64_t n = 0;

	if (!f->mode || git_oid_is_zero(&f->id))
		return 0;
	if (f->flags & GIT_DIFF_FLAG_VALID_SIZE)
		return (uint64_t)f->size;
	if (git_blob_lookup(&b, repo, &f->id) < 0)
		return 0;
	n = (uint64_t)git_blob_rawsize(b);
	git_blob_free(b);
	return n;
}

/* Appends text to the bounded diff, cutting on a line end when it does not fit. */
void cp_diff_append(struct strbuf *sb, const char *text, size_t len, size_t max, bool *cut)
{
	if (*cut)
		return;
	if (sb->len + len > max) {
		size_t room = max > sb->len ? max - sb->len : 0;
		while (room > 0 && text[room - 1] != '\n')
			room--;
		strbuf_add(sb, text, room);
		*cut = true;
		return;
	}
	strbuf_add(sb, text, len);
}

static bool diff_locked(struct checkpoints *cp, const char *step_id, const char *from,
                        const char *to, const struct strset *only, size_t max_diff,
                        struct cp_changes *out, char **err);

/* ---- permission bits: git's trees keep the exec bit only; the rest is in the meta */

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cp_file *)a)->path, ((const struct cp_file *)b)->path);
}

struct blob_walk {
	struct strvec *paths;
};

static int collect_blob(const char *root, const git_tree_entry *e, void *payload)
{
	struct blob_walk *w = payload;
	git_filemode_t m = git_tree_entry_filemode(e);

	if (m == GIT_FILEMODE_BLOB || m == GIT_FILEMODE_BLOB_EXECUTABLE)
		strvec_pushf(w->paths, "%s%s", root, git_tree_entry_name(e));
	return 0;
}

/* Files whose content and exec bit are the same in both checkpoints but whose permission
 * bits are not: each a change of its own ("mode 644 -> 600"). And the bits of every
 * change the tree diff found. */
static void perm_changes(struct checkpoints *cp, const char *step_id, const struct snap *a,
                         const struct snap *b, const struct strset *only, size_t max_diff,
                         struct strbuf *text, struct cp_changes *out)
{
	struct strvec cand = STRVEC_INIT;
	size_t n_tree = out->n;

	for (size_t i = 0; i < out->n; i++) {
		struct cp_file *f = &out->v[i];
		f->old_perm = cp_meta_perm_of(&a->meta, f->path, f->old_mode);
		f->new_perm = cp_meta_perm_of(&b->meta, f->path, f->new_mode);
	}
	if (!a->meta.perms_known || !b->meta.perms_known)
		return;
	if (a->meta.perm_file != b->meta.perm_file || a->meta.perm_exec != b->meta.perm_exec) {
		struct blob_walk w = {&cand};
		git_tree_walk(b->tree, GIT_TREEWALK_PRE, collect_blob, &w);
	} else {
		for (size_t i = 0; i < a->meta.n_perms; i++)
			strvec_push(&cand, a->meta.perms[i].path);
		for (size_t i = 0; i < b->meta.n_perms; i++)
			strvec_push(&cand, b->meta.perms[i].path);
		strvec_sort(&cand);
	}
	for (size_t i = 0; i < cand.n; i++) {
		unsigned ma, mb, pa, pb;
		git_oid oa, ob;
		struct cp_file *f;
		bool seen = false;
		char *line;

		if (i && !strcmp(cand.v[i], cand.v[i - 1]))
			continue;
		for (size_t k = 0; k < n_tree && !seen; k++)
			seen = !strcmp(out->v[k].path, cand.v[i]);
		if (seen || (only && !strset_has(only, cand.v[i])) ||
		    cp_in_vec(&a->left_out, cand.v[i]) || cp_in_vec(&b->left_out, cand.v[i]) ||
		    (step_id && cp_is_foreign(cp, step_id, cand.v[i])))
			continue;
		cp_tree_state(a->tree, cand.v[i], &ma, &oa);
		cp_tree_state(b->tree, cand.v[i], &mb, &ob);
		if (!ma || ma != mb || !git_oid_equal(&oa, &ob))
			continue;
		pa = cp_meta_perm_of(&a->meta, cand.v[i], ma);
		pb = cp_meta_perm_of(&b->meta, cand.v[i], mb);
		if (!pa || !pb || pa == pb)
			continue;
		out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof(*out->v));
		f = &out->v[out->n++];
		memset(f, 0, sizeof(*f));
		f->path = xstrdup(cand.v[i]);
		f->change = CP_MODIFIED;
		f->old_mode = ma;
		f->new_mode = mb;
		f->old_perm = pa;
		f->new_perm = pb;
		line = xasprintf("diff --git a/%s b/%s\nmode %o -> %o\n", f->path, f->path, pa, pb);
		cp_diff_append(text, line, strlen(line), max_diff, &out->diff_cut);
		free(line);
	}
	if (out->n > n_tree)
		qsort(out->v, out->n, sizeof(*out->v), file_cmp);
	strvec_clear(&cand);
}

bool checkpoint_diff(struct checkpoints *cp, const char *from, const char *to, size_t max_diff,
                     struct cp_changes *out, char **err)
{
	return checkpoint_diff_step(cp, NULL, from, to, max_diff, out, err);
}

bool checkpoint_diff_step(struct checkpoints *cp, const char *step_id, const char *from,
                          const char *to, size_t max_diff, struct cp_changes *out, char **err)
{
	bool ok;

	cp_lock(cp);
	ok = diff_locked(cp, step_id, from, to, NULL, max_diff, out, err);
	cp_unlock(cp);
	return ok;
}

bool checkpoint_diff_listed(struct checkpoints *cp, const char *from, const char *to,
                            const struct strvec *paths, size_t max_diff, struct cp_changes *out,
                            char **err)
{
	struct strset only = STRSET_INIT;
	bool ok;

	for (size_t i = 0; i < paths->n; i++)
		strset_add(&only, paths->v[i]);
	cp_lock(cp);
	ok = diff_locked(cp, NULL, from, to, &only, max_diff, out, err);
	cp_unlock(cp);
	strset_clear(&only);
	return ok;
}

static bool diff_locked(struct checkpoints *cp, const char *step_id, const char *from,
                        const char *to, const struct strset *only, size_t max_diff,
                        struct cp_changes *out, char **err)
{
	struct snap a, b;
	git_diff_options o;
	git_diff *diff = NULL;
	struct strbuf text = STRBUF_INIT;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	strbuf_init(&text);
	if (!cp_snap_load(cp, from, &a, err)) {
		strbuf_release(&text);
		return false;
	}
	if (!cp_snap_load(cp, to, &b, err)) {
		cp_snap_release(&a);
		strbuf_release(&text);
		return false;
	}
	for (size_t i = 0; i < b.excluded.n; i++)
		strvec_push(&out->excluded, b.excluded.v[i]);
	out->n_excluded = b.n_excluded;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 3;
	if (git_diff_tree_to_tree(&diff, cp->repo, a.tree, b.tree, &o) < 0) {
		cp_set_err(err, "checkpoints: cannot compare: %s", cp_git_why());
		goto done;
	}
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		git_patch *patch = NULL;
		const git_diff_delta *d;
		struct cp_file *f;
		size_t adds = 0, dels = 0;
		const char *path;

		d = git_diff_get_delta(diff, i);
		path = d && d->new_file.path ? d->new_file.path : d ? d->old_file.path : NULL;
		if (!path || (only && !strset_has(only, path)) ||
		    git_patch_from_diff(&patch, diff, i) < 0 || !patch)
			continue;
		d = git_patch_get_delta(patch);
		path = d->new_file.path ? d->new_file.path : d->old_file.path;
		if (cp_in_vec(&a.left_out, path) ||
		    cp_in_vec(&b.left_out, path) ||
		    (step_id && cp_is_foreign(cp, step_id, path))) {
			git_patch_free(patch);
			continue;
		}
		out->v = xgrow(out->v, &out->cap, out->n + 1, sizeof(*out->v));
		f = &out->v[out->n++];
		memset(f, 0, sizeof(*f));
		f->path = xstrdup(path);
		f->change = d->status == GIT_DELTA_ADDED     ? CP_ADDED
		            : d->status == GIT_DELTA_DELETED ? CP_DELETED
		                                             : CP_MODIFIED;
		f->old_mode = d->old_file.mode;
		f->new_mode = d->new_file.mode;
		f->binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
		f->old_size = file_size(cp->repo, &d->old_file);
		f->new_size = file_size(cp->repo, &d->new_file);
		if (!f->binary) {
			git_buf pb = {0};
			git_patch_line_stats(NULL, &adds, &dels, patch);
			f->plus = (long)adds;
			f->minus = (long)dels;
			if (git_patch_to_buf(&pb, patch) == 0)
				cp_diff_append(&text, pb.ptr, pb.size, max_diff, &out->diff_cut);
			git_buf_dispose(&pb);
		} else {
			char *line =
			    xasprintf("Binary file %s %s: %llu bytes -> %llu bytes\n", path,
			              cp_change_name(f->change), (unsigned long long)f->old_size,
			              (unsigned long long)f->new_size);
			cp_diff_append(&text, line, strlen(line), max_diff, &out->diff_cut);
			free(line);
		}
		out->plus += f->plus;
		out->minus += f->minus;
		git_patch_free(patch);
	}
	perm_changes(cp, step_id, &a, &b, only, max_diff, &text, out);
	ok = true;
done:
	git_diff_free(diff);
	cp_snap_release(&a);
	cp_snap_release(&b);
	out->diff = strbuf_detach(&text);
	if (!ok)
		cp_changes_release(out);
	return ok;
}
