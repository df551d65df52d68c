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
                        const char *to, size_t max_diff, struct cp_changes *out, char **err);

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
	ok = diff_locked(cp, step_id, from, to, max_diff, out, err);
	cp_unlock(cp);
	return ok;
}

static bool diff_locked(struct checkpoints *cp, const char *step_id, const char *from,
                        const char *to, size_t max_diff, struct cp_changes *out, char **err)
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

		if (git_patch_from_diff(&patch, diff, i) < 0 || !patch)
			continue;
		d = git_patch_get_delta(patch);
		path = d->new_file.path ? d->new_file.path : d->old_file.path;
		if (cp_in_vec(&a.left_out, path) || cp_in_vec(&b.left_out, path) ||
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
