/* take — a snapshot of the whole workspace: a walk that trusts a file whose stat is as
 * stored (and older than the last walk), reuses an unchanged folder's tree, leaves out what
 * .gitignore, [checkpoints] exclude and the size limits say, and records the commit. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "pack.h"
#include "sandbox.h"
#include "xalloc.h"

/* ------------------------------------------------------------------ taking */

struct take {
	struct checkpoints *cp;
	size_t hint; /* where in cp->cache the next file's entry likely is */
	struct strvec *warnings;
	struct strvec skipped;
	struct strvec excluded; /* the first CP_EXCLUDED_LISTED paths left out on purpose */
	size_t n_excluded;      /* all of them */
	uint64_t total;
	struct cache_ent *nv;
	size_t n, cap;
	struct tree_memo *trees; /* this snapshot's folders, in the order they end */
	size_t n_trees, cap_trees;
	/* The walk met something the tree lacks (left out, unreadable, an empty folder): a
	 * restore judges such a path by the checkpoint's time, so this walk's time counts. */
	bool partial;
	struct cp_meta meta; /* the rules, every path left out and why, the files' modes */
	char *err;
};

void cp_memo_free(struct tree_memo *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < m[i].n; j++)
			free(m[i].v[j].name);
		free(m[i].v);
		free(m[i].path);
	}
	free(m);
}

void cp_cache_free(struct cache_ent *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!c[i].moved)
			free(c[i].path);
	free(c);
}

static int memo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tree_memo *)a)->path, ((const struct tree_memo *)b)->path);
}

static const struct tree_memo *memo_in(const struct tree_memo *v, size_t n, const char *path)
{
	struct tree_memo key = {.path = (char *)path};

	return n ? bsearch(&key, v, n, sizeof(key), memo_cmp) : NULL;
}

static const struct tree_memo *memo_find(const struct checkpoints *cp, const char *path)
{
	return memo_in(cp->trees, cp->n_trees, path);
}

/* A folder's entries as git orders a tree's: by name, a folder's name as if it ended
 * in '/'. */
static int tree_order(const void *pa, const void *pb)
{
	const struct memo_ent *a = pa, *b = pb;
	size_t la = strlen(a->name), lb = strlen(b->name), n = la < lb ? la : lb;
	int c = memcmp(a->name, b->name, n);
	unsigned char ca, cb;

	if (c)
		return c;
	ca = la > n ? (unsigned char)a->name[n] : (a->mode == GIT_FILEMODE_TREE ? '/' : '\0');
	cb = lb > n ? (unsigned char)b->name[n] : (b->mode == GIT_FILEMODE_TREE ? '/' : '\0');
	return (int)ca - (int)cb;
}

/* Whether the folder's entries (in tree order) are those of its tree in the last
 * snapshot. */
static bool memo_same(const struct tree_memo *m, const struct memo_ent *v, size_t n)
{
	if (!m || m->n != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (m->v[i].mode != v[i].mode || !git_oid_equal(&m->v[i].oid, &v[i].oid) ||
		    strcmp(m->v[i].name, v[i].name))
			return false;
	return true;
}

/* Keeps the folder's entries (taken over: the caller's array is this memo's now). */
static void memo_keep(struct take *t, const char *rel, struct memo_ent *v, size_t n,
                      const git_oid *oid)
{
	struct tree_memo *m;

	t->trees = xgrow(t->trees, &t->cap_trees, t->n_trees + 1, sizeof(*t->trees));
	m = &t->trees[t->n_trees++];
	m->path = xstrdup(rel);
	m->oid = *oid;
	m->v = v;
	m->n = n;
}

/* Stores an object: in the store, or in memory for a preview (checkpoint_take_dry). */
static bool obj_write(struct checkpoints *cp, git_object_t type, const void *buf, size_t len,
                      git_oid *oid)
{
	if (!cp->dry_on)
		return pack_add(cp->pack, type, buf, len, oid);
	pack_hash(type, buf, len, oid);
	return pack_has(cp->pack, oid) || cp->dry->write(cp->dry, oid, buf, len, type) == 0;
}

/* The same for an object whose id is known (pack_hash). */
static bool obj_write_hashed(struct checkpoints *cp, git_object_t type, const void *buf,
                             size_t len, const git_oid *oid)
{
	if (!cp->dry_on)
		return pack_add_hashed(cp->pack, type, buf, len, oid);
	return pack_has(cp->pack, oid) || cp->dry->write(cp->dry, oid, buf, len, type) == 0;
}

/* Stores a tree of entries in tree order (git's format: "MODE NAME\0" and 20 bytes of
 * id for each). */
static bool write_tree(struct checkpoints *cp, const struct memo_ent *v, size_t n, git_oid *out)
{
	struct strbuf sb;
	bool ok;

	strbuf_init(&sb);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "%o %s", (unsigned)v[i].mode, v[i].name);
		strbuf_add(&sb, "", 1);
		strbuf_add(&sb, (const char *)v[i].oid.id, GIT_OID_RAWSZ);
	}
	ok = obj_write(cp, GIT_OBJECT_TREE, sb.buf, sb.len, out);
	strbuf_release(&sb);
	return ok;
}

static int cache_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cache_ent *)a)->path, ((const struct cache_ent *)b)->path);
}

/* The cache entry of `path`: the walk meets files nearly in the cache's order, so the one
 * after the last found is tried first (*hint), then a binary search. */
static const struct cache_ent *cache_find(const struct checkpoints *cp, const char *path,
                                          size_t *hint)
{
	struct cache_ent key = {.path = (char *)path};
	const struct cache_ent *c;

	if (*hint < cp->n_cache && !strcmp(cp->cache[*hint].path, path)) {
		c = &cp->cache[*hint];
	} else {
		c = cp->n_cache ? bsearch(&key, cp->cache, cp->n_cache, sizeof(key), cache_cmp)
		                : NULL;
	}
	if (c)
		*hint = (size_t)(c - cp->cache) + 1;
	return c;
}

/* Sorts the new cache by path, unless the walk met its files in that order already. */
static void cache_sort(struct cache_ent *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (strcmp(v[i - 1].path, v[i].path) > 0) {
			qsort(v, n, sizeof(*v), cache_cmp);
			return;
		}
}

bool cp_older(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static bool same_stat(const struct cache_ent *c, const struct stat *st)
{
	return c->dev == st->st_dev && c->ino == st->st_ino && c->size == st->st_size &&
	       c->mode == st->st_mode && c->mtime.tv_sec == st->st_mtim.tv_sec &&
	       c->mtime.tv_nsec == st->st_mtim.tv_nsec && c->ctime.tv_sec == st->st_ctim.tv_sec &&
	       c->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void warn(struct take *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct take *t, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	if (!t->warnings)
		return;
	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strvec_push(t->warnings, sb.buf);
	strbuf_release(&sb);
}

/* Reads a whole regular file beneath dfd (no link followed), at most max + 1 bytes (a
 * file growing while it is read stops there); NULL + errno on failure. *st is the file's
 * stat before reading; *changed when it moved meanwhile. */
char *cp_read_file_at(int dfd, const char *name, uint64_t max, size_t *len, struct stat *st,
                      bool *changed)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat after;
	char *buf;
	size_t n = 0, cap;

	*changed = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	cap = (uint64_t)st->st_size < max ? (size_t)st->st_size + 1 : (size_t)max + 1;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t r;
		if (n == cap)
			buf = xgrow(buf, &cap, n + 4096, 1);
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			break;
	}
	if (fstat(fd, &after) == 0 &&
	    (after.st_size != st->st_size || after.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	     after.st_mtim.tv_nsec != st->st_mtim.tv_nsec || (off_t)n != st->st_size))
		*changed = true;
	close(fd);
	*len = n;
	return buf;
}

static bool is_ignored(struct take *t, const char *rel)
{
	int ignored = 0;

	return git_ignore_path_is_ignored(&ignored, t->cp->ign, rel) == 0 && ignored;
}

/* `old`: the last walk's entry of the same path, whose path string the new entry borrows
 * (both marked `moved`): when the walk succeeds the last cache is freed without it and the
 * new entries own theirs; when it fails the new cache is freed without it and the last
 * one owns it again. */
static void add_cache(struct take *t, const char *rel, const struct stat *st, const git_oid *oid,
                      struct cache_ent *old)
{
	struct cache_ent *c;

	t->nv = xgrow(t->nv, &t->cap, t->n + 1, sizeof(*t->nv));
	c = &t->nv[t->n++];
	c->moved = false;
	if (old && !old->moved) {
		c->path = old->path;
		old->moved = c->moved = true;
	} else {
		c->path = xstrdup(rel);
	}
	c->dev = st->st_dev;
	c->ino = st->st_ino;
	c->size = st->st_size;
	c->mode = st->st_mode;
	c->mtime = st->st_mtim;
	c->ctime = st->st_ctim;
	c->oid = *oid;
}

/* A regular file: from the cache when its stat is unchanged and old enough, else read. */
static bool take_file(struct take *t, int dfd, const char *name, const char *rel,
                      const struct stat *lst, git_oid *oid)
{
	struct checkpoints *cp = t->cp;
	const struct cache_ent *c = cache_find(cp, rel, &t->hint);
	struct stat st;
	size_t len;
	bool changed = false;
	char *buf = NULL;

	if (c && same_stat(c, lst) && cp_older(&lst->st_ctim, &cp->trust_before)) {
		*oid = c->oid;
		add_cache(t, rel, lst, oid, (struct cache_ent *)c);
		t->total += (size_t)lst->st_size; /* the per-checkpoint limit counts it too */
		return true;
	}
	for (int tries = 0; tries < 3; tries++) {
		free(buf);
		buf = cp_read_file_at(dfd, name, cp->max_file, &len, &st, &changed);
		if (!buf || !changed)
			break;
	}
	if (!buf) {
		warn(t, "%s was left out of the checkpoint: %s", rel, strerror(errno));
		cp_meta_left(&t->meta, rel, false, "as it could not be read (%s)", strerror(errno));
		return false;
	}
	if (len > cp->max_file) {
		warn(t, "%s grew past the size limit while it was stored and was left out", rel);
		strvec_push(&t->skipped, rel);
		cp_meta_left(&t->meta, rel, false, "for its size (max_file = %llu)",
		             (unsigned long long)cp->max_file);
		free(buf);
		return false;
	}
	/* Read again for its stat alone (touched, or too new to trust): the same content
	 * needs no write. */
	pack_hash(GIT_OBJECT_BLOB, buf, len, oid);
	if (!c || !git_oid_equal(oid, &c->oid)) {
		if (!obj_write_hashed(cp, GIT_OBJECT_BLOB, buf, len, oid)) {
			cp_set_err(&t->err, "checkpoints: cannot store %s: %s", rel,
			           strerror(errno));
			free(buf);
			return false;
		}
	}
	free(buf);
	t->total += len;
	if (changed)
		warn(t, "%s changed while it was stored: the checkpoint holds one reading of it",
		     rel);
	else
		add_cache(t, rel, &st, oid, NULL);
	return true;
}

/* write_file's temporary file of this very process, between its write and its rename
 * (".pevtui-tmp-PID-N", tool_fs.c): a parallel step's checkpoint must not take it for a
 * file of the workspace. Another process's file of that name is the workspace's. */
static bool own_temp(const char *name)
{
	static const char prefix[] = ".pevtui-tmp-";
	long pid;
	unsigned n;
	char end;

	return !strncmp(name, prefix, sizeof(prefix) - 1) &&
	       sscanf(name + sizeof(prefix) - 1, "%ld-%u%c", &pid, &n, &end) == 2 &&
	       pid == (long)getpid();
}

/* Whether one [checkpoints] exclude pattern matches: "NAME" (globs allowed) matches that
 * name at any depth, a pattern with a '/' inside matches the whole path from the
 * workspace's root ("/build" the top one only), a trailing '/' matches folders only. */
static bool pattern_matches(const char *pat, const char *path, const char *name, bool is_dir)
{
	size_t n = strlen(pat);
	char *p;
	bool hit;

	if (n && pat[n - 1] == '/') {
		if (!is_dir)
			return false;
		n--;
	}
	if (pat[0] == '/' && n == 0)
		return false; /* "/" alone: nothing */
	p = xstrndup(pat[0] == '/' ? pat + 1 : pat, pat[0] == '/' ? n - 1 : n);
	if (!*p)
		hit = false;
	else if (pat[0] == '/' || strchr(p, '/'))
		hit = fnmatch(p, path, FNM_PATHNAME) == 0;
	else
		hit = fnmatch(p, name, 0) == 0;
	free(p);
	return hit;
}

/* An entry the operator's exclude list or a .gitignore leaves out: noted, not walked. */
static bool left_out_on_purpose(struct take *t, const char *path, const char *name,
                                bool is_dir, bool ignores)
{
	bool out = false;
	size_t i;

	for (i = 0; i < t->cp->exclude.n && !out; i++)
		out = pattern_matches(t->cp->exclude.v[i], path, name, is_dir);
	if (out) {
		cp_meta_left(&t->meta, path, is_dir, "by exclude = %s", t->cp->exclude.v[i - 1]);
	} else if (ignores) {
		char *q = is_dir ? xasprintf("%s/", path) : xstrdup(path);
		out = is_ignored(t, q);
		free(q);
		if (out)
			cp_meta_left(&t->meta, path, is_dir, "by .gitignore");
	}
	if (!out)
		return false;
	if (t->excluded.n < CP_EXCLUDED_LISTED) {
		char *q = is_dir ? xasprintf("%s/", path) : xstrdup(path);
		strvec_push(&t->excluded, q);
		free(q);
	}
	t->n_excluded++;
	return true;
}

/* Whether an exclude pattern leaves out `path` or a folder on its way (for a restore,
 * which must not touch what no checkpoint holds). */
bool cp_path_excluded(const struct checkpoints *cp, const char *path)
{
	char *copy = xstrdup(path);
	bool out = false;

	for (char *slash = copy;; slash++) {
		char *end = strchr(slash, '/');
		const char *name;
		if (end)
			*end = '\0';
		name = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
		for (size_t i = 0; i < cp->exclude.n && !out; i++)
			out = pattern_matches(cp->exclude.v[i], copy, name, end != NULL);
		if (out || !end)
			break;
		*end = '/';
		slash = end;
	}
	free(copy);
	return out;
}

/* The tree of the folder dfd (rel: its path, "" for the root); *empty when nothing in it
 * was kept (git keeps no empty folders). false on an error that stops the checkpoint. */
static bool take_dir(struct take *t, int dfd, const char *rel, bool ignores, git_oid *out,
                     bool *empty)
{
	struct strvec names = STRVEC_INIT;
	struct memo_ent *ents = NULL;
	size_t n_ents = 0, cap_ents = 0;
	bool ok = true;

	*empty = true;
	if (!sandbox_read_dir(dfd, &names)) {
		if (!*rel) {
			cp_set_err(&t->err, "checkpoints: cannot read the workspace: %s",
			           strerror(errno));
			return false;
		}
		warn(t, "%s/ could not be read and was left out of the checkpoint", rel);
		cp_meta_left(&t->meta, rel, true, "as it could not be read (%s)", strerror(errno));
		return true;
	}
	for (size_t i = 0; i < names.n && !ignores; i++)
		ignores = !strcmp(names.v[i], ".gitignore");
	for (size_t i = 0; i < names.n && ok; i++) {
		const char *name = names.v[i];
		char *path = *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		struct stat st;
		git_oid oid;
		git_filemode_t mode = 0;

		if (!strcmp(name, ".git") || (t->cp->run_rel && !strcmp(path, t->cp->run_rel)) ||
		    own_temp(name)) {
			free(path);
			continue;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    left_out_on_purpose(t, path, name, S_ISDIR(st.st_mode), ignores)) {
			t->partial = true;
			free(path);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			bool sub_empty = true;
			int sfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sfd >= 0) {
				ok = take_dir(t, sfd, path, ignores, &oid, &sub_empty);
				close(sfd);
			} else {
				cp_meta_left(&t->meta, path, true, "as it could not be read (%s)",
				             strerror(errno));
			}
			if (ok && !sub_empty)
				mode = GIT_FILEMODE_TREE;
		} else if (S_ISLNK(st.st_mode) || S_ISREG(st.st_mode)) {
			if (S_ISLNK(st.st_mode)) {
				char target[4096];
				ssize_t n = readlinkat(dfd, name, target, sizeof(target));
				if (n >= 0 && (size_t)n < sizeof(target) &&
				    obj_write(t->cp, GIT_OBJECT_BLOB, target, (size_t)n, &oid))
					mode = GIT_FILEMODE_LINK;
				else {
					warn(t, "the link %s could not be read and was left out",
					     path);
					cp_meta_left(&t->meta, path, false,
					             "as the link could not be read");
				}
			} else if ((uint64_t)st.st_size > t->cp->max_file) {
				warn(t,
				     "%s (%lld bytes) is over the %llu-byte limit per file and was "
				     "left out of the checkpoint",
				     path, (long long)st.st_size,
				     (unsigned long long)t->cp->max_file);
				strvec_push(&t->skipped, path);
				cp_meta_left(&t->meta, path, false, "for its size (max_file = %llu)",
				             (unsigned long long)t->cp->max_file);
			} else if (t->total + (uint64_t)st.st_size > t->cp->max_total) {
				warn(t,
				     "%s was left out: the checkpoint reached its %llu-byte limit",
				     path, (unsigned long long)t->cp->max_total);
				strvec_push(&t->skipped, path);
				cp_meta_left(&t->meta, path, false,
				             "as the checkpoint was full (max_total = %llu)",
				             (unsigned long long)t->cp->max_total);
			} else if (take_file(t, dfd, name, path, &st, &oid)) {
				mode = (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE
				                              : GIT_FILEMODE_BLOB;
				cp_meta_perm(&t->meta, path, st.st_mode & 07777,
				             mode == GIT_FILEMODE_BLOB_EXECUTABLE);
			} else if (t->err) {
				ok = false;
			}
		} else {
			warn(t, "%s is not a file, a link or a folder and was left out", path);
			cp_meta_left(&t->meta, path, false,
			             "as it is not a file, a link or a folder");
		}
		if (ok && !mode)
			t->partial = true;
		if (ok && mode) {
			ents = xgrow(ents, &cap_ents, n_ents + 1, sizeof(*ents));
			ents[n_ents].name = xstrdup(name);
			ents[n_ents].oid = oid;
			ents[n_ents].mode = mode;
			n_ents++;
		}
		free(path);
	}
	if (ok && (n_ents > 0 || !*rel)) {
		const struct tree_memo *m = memo_find(t->cp, rel);
		if (n_ents)
			qsort(ents, n_ents, sizeof(*ents), tree_order);
		if (memo_same(m, ents, n_ents)) {
			*out = m->oid;
		} else if (!write_tree(t->cp, ents, n_ents, out)) {
			cp_set_err(&t->err, "checkpoints: cannot write a tree: %s",
			           strerror(errno));
			ok = false;
		}
		if (ok) {
			*empty = n_ents == 0;
			memo_keep(t, rel, ents, n_ents, out);
			ents = NULL;
			n_ents = 0;
		}
	}
	for (size_t i = 0; i < n_ents; i++)
		free(ents[i].name);
	free(ents);
	strvec_clear(&names);
	return ok;
}

/* What the message says beside the walk's time: {"left_out": [...], "excluded": [...],
 * "excluded_n": N, "rules": {...}, "left": [[PATH, WHY], ...], "perm": {...}} (the paths
 * left out for their size; the first CP_EXCLUDED_LISTED left out on purpose; meta.c's
 * rules, every path left out and why, and the files' modes). Two walks that print the
 * same meta found the same workspace. */
static cJSON *meta_object(struct take *t)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "left_out");

	for (size_t i = 0; i < t->skipped.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(t->skipped.v[i]));
	if (t->n_excluded) {
		a = cJSON_AddArrayToObject(o, "excluded");
		for (size_t i = 0; i < t->excluded.n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(t->excluded.v[i]));
		cJSON_AddNumberToObject(o, "excluded_n", (double)t->n_excluded);
	}
	cp_rules_from(&t->meta, t->cp);
	cp_meta_to_json(&t->meta, o);
	return o;
}

static char *print_json(const cJSON *o)
{
	char *js = cJSON_PrintUnformatted(o), *s = xstrdup(js ? js : "{}");

	cJSON_free(js);
	return s;
}

/* The message: "pevtui checkpoint", then the meta object with {"taken_s": S, "taken_ns":
 * N, "seq": K} (when the walk began, to the nanosecond: there_before compares file times
 * with it; the how-many-th checkpoint of the process that took it, which orders those of
 * one clock tick). */
static char *commit_message(struct checkpoints *cp, cJSON *meta, const struct timespec *taken)
{
	char *js, *msg;

	cJSON_AddNumberToObject(meta, "taken_s", (double)taken->tv_sec);
	cJSON_AddNumberToObject(meta, "taken_ns", (double)taken->tv_nsec);
	cJSON_AddNumberToObject(meta, "seq", (double)(cp->dry_on ? cp->seq + 1 : ++cp->seq));
	js = print_json(meta);
	msg = xasprintf("pevtui checkpoint\n\n%s\n", js);
	free(js);
	return msg;
}

/*
 * Writes the commit of a checkpoint straight to the object store, its parent the store's
 * newest checkpoint: the commit's text is fixed by git's format, and writing it from ids
 * spares reading back the tree just written and the parent commit. The name
 * refs/pevtui/last is moved when the store closes (it only chains a later run's
 * checkpoints to these; the journal names every checkpoint it needs).
 */
static bool write_commit(struct checkpoints *cp, const git_oid *tree, const char *msg,
                         time_t when, git_oid *out)
{
	char tree_hex[GIT_OID_HEXSZ + 1], parent_hex[GIT_OID_HEXSZ + 1];
	struct strbuf sb;
	bool ok;

	strbuf_init(&sb);
	git_oid_tostr(tree_hex, sizeof(tree_hex), tree);
	strbuf_addf(&sb, "tree %s\n", tree_hex);
	if (cp->have_last) {
		git_oid_tostr(parent_hex, sizeof(parent_hex), &cp->last);
		strbuf_addf(&sb, "parent %s\n", parent_hex);
	}
	strbuf_addf(&sb,
	            "author pevtui <pevtui@localhost> %lld +0000\n"
	            "committer pevtui <pevtui@localhost> %lld +0000\n\n%s",
	            (long long)when, (long long)when, msg);
	ok = obj_write(cp, GIT_OBJECT_COMMIT, sb.buf, sb.len, out);
	strbuf_release(&sb);
	return ok;
}

/* ---- what changed since the last snapshot, from the two snapshots' folder memos */

/* Two snapshots' folders, each sorted by path (memo_cmp). */
struct memos {
	const struct tree_memo *v;
	size_t n;
};

static char *child_path(const char *dir, const char *name)
{
	return *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

/* Every file and link at or beneath entry `e` of folder `dir` in snapshot `m`. */
static void memo_all(const struct memos *m, const char *dir, const struct memo_ent *e,
                     struct strvec *out)
{
	char *path = child_path(dir, e->name);

	if (e->mode == GIT_FILEMODE_TREE) {
		const struct tree_memo *t = memo_in(m->v, m->n, path);
		for (size_t i = 0; t && i < t->n; i++)
			memo_all(m, path, &t->v[i], out);
		free(path);
	} else {
		strvec_take(out, path);
	}
}

static int ent_name_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct memo_ent *const *)a)->name,
	              (*(const struct memo_ent *const *)b)->name);
}

/* A folder's entries by name alone (a tree orders a folder as if its name ended in '/'). */
static const struct memo_ent **by_name(const struct tree_memo *t)
{
	const struct memo_ent **v = xcalloc(t && t->n ? t->n : 1, sizeof(*v));

	for (size_t i = 0; t && i < t->n; i++)
		v[i] = &t->v[i];
	if (t && t->n > 1)
		qsort(v, t->n, sizeof(*v), ent_name_cmp);
	return v;
}

/* The paths that differ beneath folder `dir` from snapshot `a` to `b`, as a tree diff
 * names them: a file's path, a link's, every file of a folder that came or went. */
static void memo_diff(const struct memos *a, const struct memos *b, const char *dir,
                      struct strvec *out)
{
	const struct tree_memo *ta = memo_in(a->v, a->n, dir), *tb = memo_in(b->v, b->n, dir);
	const struct memo_ent **va, **vb;
	size_t na = ta ? ta->n : 0, nb = tb ? tb->n : 0, i = 0, j = 0;

	if (ta && tb && git_oid_equal(&ta->oid, &tb->oid))
		return;
	va = by_name(ta);
	vb = by_name(tb);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(va[i]->name, vb[j]->name);
		if (c < 0) {
			memo_all(a, dir, va[i++], out);
		} else if (c > 0) {
			memo_all(b, dir, vb[j++], out);
		} else {
			const struct memo_ent *x = va[i++], *y = vb[j++];
			if (x->mode == y->mode && git_oid_equal(&x->oid, &y->oid))
				continue;
			if (x->mode == GIT_FILEMODE_TREE && y->mode == GIT_FILEMODE_TREE) {
				char *sub = child_path(dir, x->name);
				memo_diff(a, b, sub, out);
				free(sub);
			} else if (x->mode != GIT_FILEMODE_TREE && y->mode != GIT_FILEMODE_TREE) {
				strvec_take(out, child_path(dir, x->name));
			} else {
				memo_all(a, dir, x, out);
				memo_all(b, dir, y, out);
			}
		}
	}
	free(va);
	free(vb);
}

static bool same_list(const struct strvec *a, const struct strvec *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return false;
	return true;
}

/* Whether the walk found the workspace as the last checkpoint holds it, that checkpoint
 * being this process's own: same tree, same paths left out. Then it serves again, and a
 * checkpoint costs no write — but only when the walk met nothing the tree lacks. A restore
 * keeps a path the checkpoint lacks if it was there when the checkpoint was taken
 * (there_before), and an empty folder born before it (prune_parents): an ignored file or an
 * empty folder made since the last walk was there before this one, so the older time
 * would have them deleted. With nothing left out, every path older than this walk is in
 * the tree, and the two times judge alike. */
static bool as_last(const struct checkpoints *cp, const struct take *t, const git_oid *tree,
                    const char *meta)
{
	const struct tree_memo *root = memo_find(cp, "");

	return cp->last_known && !t->partial && root && git_oid_equal(&root->oid, tree) &&
	       same_list(&t->skipped, &cp->last_skipped) &&
	       same_list(&t->excluded, &cp->last_excluded) &&
	       t->n_excluded == cp->last_n_excluded && cp->last_meta &&
	       !strcmp(cp->last_meta, meta);
}

/* refs/pevtui/runs/RUN names the run's newest checkpoint (its parents the older ones),
 * which keeps them from --prune. Best effort: the journal names every checkpoint. */
static void name_run_checkpoint(struct checkpoints *cp, const git_oid *id, struct strvec *warnings)
{
	git_reference *ref = NULL;

	if (git_reference_create(&ref, cp->repo, cp->run_ref, id, 1, NULL) == 0) {
		git_reference_free(ref);
		return;
	}
	if (warnings && !cp->ref_warned)
		strvec_take(warnings, xasprintf("checkpoints: cannot name the run's checkpoints "
		                                "in the store (%s): --prune may drop them",
		                                cp_git_why()));
	cp->ref_warned = true;
}

/*
 * Takes a snapshot: the new checkpoint's id in out_id (the last one's again when nothing
 * changed). With `changed`, the paths that differ from the last checkpoint are appended
 * and *known set — when this process took the last one, from the folder memos alone.
 */
static bool take_once(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                      char **err, struct strvec *changed, bool *known)
{
	struct take t = {.cp = cp, .warnings = warnings};
	struct timespec start, coarse;
	git_oid tree_id, cid;
	char *msg = NULL, *meta_js = NULL;
	cJSON *meta = NULL;
	bool empty, ok = false, same = false;
	int fd;

	out_id[0] = '\0';
	if (known)
		*known = false;
	clock_gettime(CLOCK_REALTIME, &start);
	/* The clock file times come from (coarse): what there_before compares with. */
	clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
	fd = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		cp_set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		           strerror(errno));
		return false;
	}
	ok = take_dir(&t, fd, "", false, &tree_id, &empty);
	close(fd);
	if (ok && t.n_trees)
		qsort(t.trees, t.n_trees, sizeof(*t.trees), memo_cmp);
	if (ok) {
		meta = meta_object(&t);
		meta_js = print_json(meta);
	}
	same = ok && as_last(cp, &t, &tree_id, meta_js);
	if (ok && !same) {
		msg = commit_message(cp, meta, &coarse);
		if (!write_commit(cp, &tree_id, msg, start.tv_sec, &cid)) {
			cp_set_err(&t.err, "checkpoints: cannot record the checkpoint: %s",
			           strerror(errno));
			ok = false;
		}
	}
	/* Every object the checkpoint needs is on the disk before its id is handed out
	 * (and journaled): one pack, synced with its index. */
	if (ok && !cp->dry_on && !pack_finish(cp->pack)) {
		cp_set_err(&t.err, "checkpoints: cannot store the checkpoint in %s: %s",
		           cp->store_dir, strerror(errno));
		ok = false;
	}
	if (ok && !cp->dry_on && !same)
		name_run_checkpoint(cp, &cid, warnings);
	if (ok && cp->dry_on) {
		/* A preview: the id alone; the store's state stays as the last real one. */
		git_oid_tostr(out_id, CP_ID_LEN + 1, same ? &cp->last : &cid);
	} else if (ok) {
		if (changed && cp->last_known) {
			struct memos a = {cp->trees, cp->n_trees}, b = {t.trees, t.n_trees};
			if (!same)
				memo_diff(&a, &b, "", changed);
			*known = true;
		}
		if (!same) {
			cp->last = cid;
			cp->have_last = true;
			strvec_clear(&cp->last_skipped);
			strvec_clear(&cp->last_excluded);
			cp->last_skipped = t.skipped;
			cp->last_excluded = t.excluded;
			cp->last_n_excluded = t.n_excluded;
			t.skipped = (struct strvec)STRVEC_INIT;
			t.excluded = (struct strvec)STRVEC_INIT;
			free(cp->last_meta);
			cp->last_meta = meta_js;
			meta_js = NULL;
		}
		cp->last_known = true;
		git_oid_tostr(out_id, CP_ID_LEN + 1, &cp->last);
		if (t.n)
			cache_sort(t.nv, t.n);
		for (size_t i = 0; i < t.n; i++)
			t.nv[i].moved = false; /* the new cache owns its paths */
		cp_cache_free(cp->cache, cp->n_cache);
		cp->cache = t.nv;
		cp->n_cache = t.n;
		t.nv = NULL;
		t.n = 0;
		cp_memo_free(cp->trees, cp->n_trees);
		cp->trees = t.trees;
		cp->n_trees = t.n_trees;
		t.trees = NULL;
		t.n_trees = 0;
		cp->trust_before = coarse;
	} else if (err && !*err) {
		*err = t.err;
		t.err = NULL;
	}
	free(msg);
	free(meta_js);
	cJSON_Delete(meta);
	cp_meta_release(&t.meta);
	free(t.err);
	if (t.n) /* the walk failed: the paths borrowed go back to the last cache */
		for (size_t i = 0; i < cp->n_cache; i++)
			cp->cache[i].moved = false;
	cp_cache_free(t.nv, t.n);
	cp_memo_free(t.trees, t.n_trees);
	strvec_clear(&t.skipped);
	strvec_clear(&t.excluded);
	return ok;
}

static bool disk_full(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

static bool take_locked(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                        char **err, struct strvec *changed, bool *known)
{
	char *why = NULL;
	bool ok;
	int e;

	out_id[0] = '\0';
	if (known)
		*known = false;
	if (cp->off) {
		cp_set_err(err, "%s", cp->off);
		return false;
	}
	ok = take_once(cp, out_id, warnings, &why, changed, known);
	if (!ok && cp_store_gone(cp)) {
		/* Someone deleted the store under the run: a new one, and on. */
		free(why);
		why = NULL;
		if (warnings)
			strvec_take(warnings,
			            xasprintf("the checkpoint store %s was deleted while the run "
			                      "used it: it was made again, and the checkpoints "
			                      "taken before are gone",
			                      cp->store_dir));
		ok = cp_store_reopen(cp, &why) &&
		     take_once(cp, out_id, warnings, &why, changed, known);
	}
	e = cp->pack ? pack_error(cp->pack) : 0;
	if (!ok && disk_full(e)) {
		free(why);
		why = xasprintf("the disk holding the checkpoint store %s is full (%s): this "
		                "run goes on without checkpoints",
		                cp->store_dir, strerror(e));
		cp->off = xstrdup(why);
	}
	if (!ok && cp->pack)
		pack_abort(cp->pack);
	if (why) {
		if (err && !*err)
			*err = why;
		else
			free(why);
	}
	return ok;
}

bool checkpoint_take(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                     char **err)
{
	bool ok;

	cp_lock(cp);
	ok = take_locked(cp, out_id, warnings, err, NULL, NULL);
	cp_unlock(cp);
	return ok;
}

bool checkpoint_take_dry(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], char **err)
{
	bool ok;

	cp_lock(cp);
	if (!cp->dry) {
		git_odb *odb = NULL;
		bool added = false;
		if (git_repository_odb(&odb, cp->repo) == 0 && git_mempack_new(&cp->dry) == 0)
			added = git_odb_add_backend(odb, cp->dry, 1000) == 0;
		if (!added && cp->dry)
			cp->dry->free(cp->dry);
		git_odb_free(odb);
		if (!added) {
			cp->dry = NULL;
			cp_set_err(err, "checkpoints: cannot hold a preview in memory: %s",
			           cp_git_why());
			cp_unlock(cp);
			return false;
		}
	}
	cp->dry_on = true;
	ok = take_locked(cp, out_id, NULL, err, NULL, NULL);
	cp->dry_on = false;
	cp_unlock(cp);
	return ok;
}

/* The paths that differ between two commits (no content read beyond the trees). */
bool checkpoint_take_step(struct checkpoints *cp, const char *step_id, bool starting,
                          char out_id[CP_ID_LEN + 1], struct strvec *warnings, char **err)
{
	struct strvec paths = STRVEC_INIT;
	bool known = false, ok;

	cp_lock(cp);
	ok = take_locked(cp, out_id, warnings, err, cp->active.n > 1 ? &paths : NULL, &known);
	/* What changed since the previous checkpoint, while several steps ran, belongs to
	 * none of them for sure. The previous one is always this process's own then: a step
	 * becomes active only through a checkpoint taken here. */
	if (ok && known)
		cp_attribute(cp, &paths);
	strvec_clear(&paths);
	if (starting && ok) {
		cp_attempt_begins(cp, step_id);
		strvec_push(&cp->active, step_id);
	} else if (!starting) {
		for (size_t i = 0; i < cp->active.n; i++)
			if (!strcmp(cp->active.v[i], step_id)) {
				free(cp->active.v[i]);
				cp->active.v[i] = cp->active.v[--cp->active.n];
				break;
			}
	}
	cp_unlock(cp);
	return ok;
}
