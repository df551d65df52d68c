/* prune — retention of the checkpoint stores: a run whose newest checkpoint is older than
 * the age asked loses its name in its store (refs/pevtui/runs/RUN), then the objects no
 * remaining run's checkpoint reaches are dropped (the ones still needed written again as
 * one pack, the old packs removed), and a store no run names any more is removed whole.
 * A store of many packs is compacted into one, compressed (zlib level 1; checkpoints
 * write theirs uncompressed). A store a running run holds (pevtui.lock, shared) is left
 * as it is. */
#include "config.h"
#include "checkpoint_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pack.h"
#include "strset.h"
#include "xalloc.h"

/* A store of more packs than this (one per checkpoint) is compacted into one, compressed,
 * even when nothing in it is dropped. */
#define COMPACT_PACKS 16

bool checkpoint_parse_age(const char *s, double *sec)
{
	char *end = NULL;
	double n;

	if (!s || !*s)
		return false;
	n = strtod(s, &end);
	if (end == s || n < 0)
		return false;
	if (!strcmp(end, "d"))
		n *= 86400;
	else if (!strcmp(end, "h"))
		n *= 3600;
	else if (!strcmp(end, "m"))
		n *= 60;
	else if (!strcmp(end, "w"))
		n *= 7 * 86400;
	else if (strcmp(end, "s") && *end)
		return false;
	*sec = n;
	return true;
}

/* rm -rf beneath dfd's entry `name` (no link followed). */
static void remove_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		unlinkat(dfd, name, 0);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			remove_tree_at(dirfd(d), de->d_name);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

struct prune {
	const struct cp_prune_opts *o;
	FILE *out;
	const char *dir;
	git_repository *repo;
	struct strset keep; /* hex ids the remaining runs reach */
	size_t runs_dropped, runs_kept;
};

static void keep_tree(struct prune *p, const git_oid *id);

static bool keep_id(struct prune *p, const git_oid *id)
{
	char hex[GIT_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	return strset_add(&p->keep, hex);
}

static void keep_tree(struct prune *p, const git_oid *id)
{
	git_tree *t = NULL;

	if (!keep_id(p, id) || git_tree_lookup(&t, p->repo, id) < 0)
		return;
	for (size_t i = 0; i < git_tree_entrycount(t); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
			keep_tree(p, git_tree_entry_id(e));
		else
			keep_id(p, git_tree_entry_id(e));
	}
	git_tree_free(t);
}

/* Every checkpoint of a run: the newest and its parents. */
static void keep_run(struct prune *p, const git_oid *newest)
{
	git_oid id = *newest;

	for (;;) {
		git_commit *c = NULL;
		if (!keep_id(p, &id) || git_commit_lookup(&c, p->repo, &id) < 0)
			return;
		keep_tree(p, git_commit_tree_id(c));
		if (git_commit_parentcount(c) == 0) {
			git_commit_free(c);
			return;
		}
		id = *git_commit_parent_id(c, 0);
		git_commit_free(c);
	}
}

/* The runs the store names: those to keep walked, the others dropped (unless dry). */
static void judge_runs(struct prune *p, const char *name)
{
	git_reference_iterator *it = NULL;
	git_reference *ref;
	double now = (double)time(NULL);

	if (git_reference_iterator_glob_new(&it, p->repo, "refs/pevtui/*") < 0)
		return;
	while (git_reference_next(&ref, it) == 0) {
		const git_oid *id = git_reference_target(ref);
		git_commit *c = NULL;
		double when = 0;
		char *file = xasprintf("%s/%s", p->dir, git_reference_name(ref));
		struct stat st;
		/* When the run last took a checkpoint: its ref was written then (a ref git
		 * packed has its newest checkpoint's time). */
		if (id && stat(file, &st) == 0)
			when = (double)st.st_mtime;
		else if (id && git_commit_lookup(&c, p->repo, id) == 0)
			when = (double)git_commit_time(c);
		free(file);
		git_commit_free(c);
		/* Newer than asked (strictly: "--older-than 0s" drops a checkpoint of this very
		 * second too). */
		if (id && when > 0 && now - when < p->o->older_than_s) {
			keep_run(p, id);
			p->runs_kept++;
		} else {
			const char *rn = git_reference_name(ref), *slash = strrchr(rn, '/');
			fprintf(p->out, "%s %s: %s's checkpoints (%s)\n",
			        p->o->dry_run ? "would drop" : "dropped", name,
			        slash ? slash + 1 : rn, when > 0 ? "older than asked" : "unreadable");
			if (!p->o->dry_run)
				git_reference_delete(ref);
			p->runs_dropped++;
		}
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
}

/* The .idx files of objects/pack/, and how many objects they hold that nothing keeps. */
static size_t unneeded(struct prune *p, const char *pack_dir, struct strvec *idx_files)
{
	DIR *d = opendir(pack_dir);
	struct dirent *de;
	size_t n = 0;

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name), k = 0;
		unsigned char *ids;
		char *path;
		if (len < 5 || strcmp(de->d_name + len - 4, ".idx") || strncmp(de->d_name, "pack-", 5))
			continue;
		path = xasprintf("%s/%s", pack_dir, de->d_name);
		ids = pack_idx_read(path, &k);
		for (size_t i = 0; ids && i < k; i++) {
			char hex[GIT_OID_HEXSZ + 1];
			git_oid id;
			git_oid_fromraw(&id, ids + i * GIT_OID_RAWSZ);
			git_oid_tostr(hex, sizeof(hex), &id);
			if (!strset_has(&p->keep, hex))
				n++;
		}
		free(ids);
		strvec_take(idx_files, path);
	}
	if (d)
		closedir(d);
	return n;
}

/* Writes the objects kept as one new pack, then removes the old packs and any loose
 * object. false + *err when the new pack could not be written (nothing removed). */
static bool rewrite(struct prune *p, const char *dir, const struct strvec *old_idx, char **err)
{
	char *objects = xasprintf("%s/objects", dir);
	struct pack *pk = pack_open_fresh(objects);
	git_odb *odb = NULL;
	bool ok = pk && git_repository_odb(&odb, p->repo) == 0;

	for (size_t i = 0; ok && i < p->keep.cap; i++) {
		const char *hex = p->keep.slot[i];
		git_odb_object *obj = NULL;
		git_oid id;
		if (!hex)
			continue;
		if (git_oid_fromstr(&id, hex) < 0 || git_odb_read(&obj, odb, &id) < 0)
			continue; /* named but never stored: nothing to keep */
		ok = pack_add_hashed(pk, git_odb_object_type(obj), git_odb_object_data(obj),
		                     git_odb_object_size(obj), &id);
		git_odb_object_free(obj);
	}
	ok = ok && pack_finish(pk);
	if (!ok)
		cp_set_err(err, "cannot write the store %s again: %s", dir, strerror(errno));
	git_odb_free(odb);
	pack_close(pk);
	if (ok) {
		int ofd = open(objects, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = ofd >= 0 ? fdopendir(ofd) : NULL;
		struct dirent *de;
		for (size_t i = 0; i < old_idx->n; i++) {
			char *pack = xstrdup(old_idx->v[i]);
			memcpy(pack + strlen(pack) - 4, ".pack", 5);
			unlink(old_idx->v[i]); /* the index first: a pack without one is unseen */
			unlink(pack);
			free(pack);
		}
		while (d && (de = readdir(d)))
			if (strlen(de->d_name) == 2 && de->d_name[0] != '.')
				remove_tree_at(dirfd(d), de->d_name);
		if (d)
			closedir(d);
		else if (ofd >= 0)
			close(ofd);
	}
	free(objects);
	return ok;
}

static bool prune_store(const struct cp_prune_opts *o, FILE *out, const char *root,
                        const char *name, uint64_t *freed, char **err)
{
	char *dir = xasprintf("%s/%s", root, name), *pack_dir;
	struct prune p = {.o = o, .out = out, .dir = dir};
	struct strvec idx = STRVEC_INIT;
	uint64_t before = checkpoint_store_bytes(dir);
	int lock = cp_store_lock(dir, LOCK_EX | LOCK_NB);
	size_t n_unneeded;
	bool ok = true;

	if (lock < 0) {
		if (errno == EWOULDBLOCK)
			fprintf(out, "left %s: a running run uses it\n", name);
		else
			fprintf(out, "left %s: cannot lock it: %s\n", name, strerror(errno));
		free(dir);
		return true;
	}
	if (git_repository_open_ext(&p.repo, dir,
	                            GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
	                            NULL) < 0) {
		fprintf(out, "left %s: not a checkpoint store (%s)\n", name, cp_git_why());
		close(lock);
		free(dir);
		return true;
	}
	judge_runs(&p, name);
	pack_dir = xasprintf("%s/objects/pack", dir);
	n_unneeded = unneeded(&p, pack_dir, &idx);
	if (!p.runs_kept) {
		char *text = checkpoint_bytes_text(before);
		fprintf(out, "%s %s: no run needs it (%s)\n", o->dry_run ? "would remove" : "removed",
		        name, text);
		free(text);
	}
	if (!o->dry_run && !p.runs_kept) {
		git_repository_free(p.repo);
		p.repo = NULL;
		remove_tree_at(AT_FDCWD, dir);
		*freed += before;
	} else if (!o->dry_run && (n_unneeded || idx.n > COMPACT_PACKS)) {
		ok = rewrite(&p, dir, &idx, err);
		if (ok) {
			uint64_t after = checkpoint_store_bytes(dir);
			*freed += before > after ? before - after : 0;
		}
	}
	if (p.runs_kept && n_unneeded)
		fprintf(out, "%s %s: %zu objects no kept run needs\n",
		        o->dry_run ? "would drop from" : "dropped from", name, n_unneeded);
	else if (p.runs_kept && idx.n > COMPACT_PACKS)
		fprintf(out, "%s %s: %zu packs into one\n", o->dry_run ? "would compact" : "compacted",
		        name, idx.n);
	git_repository_free(p.repo);
	strset_clear(&p.keep);
	strvec_clear(&idx);
	close(lock);
	free(pack_dir);
	free(dir);
	return ok;
}

bool checkpoint_prune(const struct cp_prune_opts *o, FILE *out, char **err)
{
	char *root = cp_stores_root();
	struct strvec names = STRVEC_INIT;
	uint64_t freed = 0;
	struct dirent *de;
	DIR *d;
	bool ok = true;

	if (!root) {
		cp_set_err(err, "no checkpoint stores: set XDG_DATA_HOME or HOME");
		return false;
	}
	d = opendir(root);
	if (!d) {
		if (errno != ENOENT)
			cp_set_err(err, "cannot read %s: %s", root, strerror(errno));
		else
			fprintf(out, "no checkpoint stores yet (%s)\n", root);
		free(root);
		return errno == ENOENT;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			strvec_push(&names, de->d_name);
	closedir(d);
	strvec_sort(&names);
	cp_git_setup();
	for (size_t i = 0; i < names.n; i++)
		ok = prune_store(o, out, root, names.v[i], &freed, err) && ok;
	if (!o->dry_run) {
		char *text = checkpoint_bytes_text(freed);
		fprintf(out, "pruned the checkpoint stores in %s: %s freed\n", root, text);
		free(text);
	}
	strvec_clear(&names);
	free(root);
	return ok;
}

void checkpoint_auto_prune(double keep_s)
{
	char *root = cp_stores_root(), *stamp;
	struct cp_prune_opts o = {.older_than_s = keep_s};
	struct stat st;
	FILE *sink;
	char *err = NULL;
	int fd;

	if (!root)
		return;
	stamp = xasprintf("%s/.pruned", root);
	if (stat(root, &st) < 0 ||
	    (stat(stamp, &st) == 0 && (double)time(NULL) - (double)st.st_mtime < 86400)) {
		free(stamp);
		free(root);
		return;
	}
	/* The stamp first: two pevtuis starting together prune once. */
	fd = open(stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	sink = fopen("/dev/null", "w");
	if (sink) {
		checkpoint_prune(&o, sink, &err);
		fclose(sink);
	}
	free(err);
	free(stamp);
	free(root);
}
