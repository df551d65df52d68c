/* checkpoint — workspace snapshots in a private libgit2 store in the run folder, their
 * differences, and restoring paths beneath the workspace without following links. */
#include "config.h"
#include "checkpoint.h"

#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <git2/sys/odb_backend.h>

#include "sandbox.h"
#include "jsonx.h"
#include "loose.h"
#include "strbuf.h"
#include "xalloc.h"

/* A file's identity when it was last stored: same stat, same content (as git's index). */
struct cache_ent {
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	mode_t mode;
	git_oid oid;
};

/* A folder's tree in the last snapshot, with its entries, so that an unchanged folder
 * reuses its tree instead of writing it again (a write of an object the store holds
 * already still costs a lookup and a "freshen" of its file). */
struct memo_ent {
	char *name;
	git_oid oid;
	git_filemode_t mode;
};

struct tree_memo {
	char *path;
	git_oid oid;
	struct memo_ent *v;
	size_t n;
};

struct series_path {
	char *path;
	char base[CP_ID_LEN + 1]; /* the checkpoint before the series first changed it */
};

struct series {
	char *step_id;
	char after[CP_ID_LEN + 1]; /* after its latest attempt */
	struct series_path *v;
	size_t n, cap;
	bool orphan; /* its step left the plan: restored before the next attempt of any step */
};

struct checkpoints {
	pthread_mutex_t lock;
	git_repository *repo; /* the store, bare: nothing of the workspace's applies to it */
	git_odb *odb;
	/* The store again, with the workspace as its work folder (in memory only), for the
	 * workspace's .gitignore files — and for nothing else: a .gitattributes a step wrote
	 * must not change how the verifier is shown its diff. */
	git_repository *ign;
	struct loose *loose; /* where blobs and commits are written */
	struct strvec exclude; /* [checkpoints] exclude patterns */
	unsigned long seq;     /* checkpoints this process took: orders those of one tick */
	bool last_moved; /* refs/pevtui/last is behind `last` */
	char *ws_path;
	char *run_rel; /* the run folder's path in the workspace when it is inside */
	uint64_t max_file, max_total;
	struct cache_ent *cache; /* sorted by path */
	size_t n_cache;
	/* The coarse clock when the last snapshot began: a cached entry is trusted only when
	 * its ctime is older, since any later change to the file (content, mode, times) sets
	 * its ctime to the coarse clock at that moment, which is at least this. */
	struct timespec trust_before;
	struct tree_memo *trees; /* each folder's tree in the last snapshot, sorted by path */
	size_t n_trees;
	git_oid last;
	bool have_last;
	struct series *series;
	size_t n_series, cap_series;
	struct strvec active;    /* steps with an attempt between its two checkpoints */
	struct strvec ambiguous; /* "STEP\nPATH": changed while STEP ran beside another */
};

static pthread_once_t git_once = PTHREAD_ONCE_INIT;

/* The store is ours alone: no system, global or XDG git configuration applies to it (a
 * user's core.excludesFile, filters or hooks would make snapshots depend on the machine). */
static void git_setup(void)
{
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_PROGRAMDATA, "");
	/* Every object a tree names was written by us just before. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
}

static void set_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(char **err, const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	if (!err || *err)
		return;
	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	*err = strbuf_detach(&sb);
}

static const char *git_why(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

static void lock(struct checkpoints *cp)
{
	if (pthread_mutex_lock(&cp->lock))
		fatal("checkpoint: cannot lock the store");
}

static void unlock(struct checkpoints *cp)
{
	pthread_mutex_unlock(&cp->lock);
}

static const char *const stale_locks[] = {"refs/pevtui/last.lock", "packed-refs.lock",
                                          "config.lock", "HEAD.lock"};

/* run_dir's path relative to ws when it lies inside it (a workspace holding its runs
 * folder must not snapshot its own store and journal), else NULL. */
static char *inside(const char *ws, const char *run_dir)
{
	char *w = realpath(ws, NULL), *r = realpath(run_dir, NULL), *rel = NULL;
	size_t n = w ? strlen(w) : 0;

	if (w && r && !strncmp(w, r, n) && r[n] == '/' && r[n + 1])
		rel = xstrdup(r + n + 1);
	free(w);
	free(r);
	return rel;
}

/*
 * The store's objects are loose files only, and nothing ever packs them: with no pack
 * reader in the object database, writing a new object does not rescan objects/pack/ (as
 * libgit2 does when an object is not found), which was a third of a checkpoint's system
 * calls. Objects are stored without compression (zlib level 0, still git's format): the
 * first checkpoint of a 100 MB workspace takes 0.8 s instead of 2 s at level 1, for a store
 * about 1.5 times larger (make bench-checkpoint).
 */
static bool loose_odb(git_repository *repo, const char *dir, git_odb **out)
{
	char *objects = xasprintf("%s/objects", dir);
	git_odb_backend *be = NULL;
	git_odb *odb = NULL;
	bool ok = git_odb_new(&odb) == 0 && git_odb_backend_loose(&be, objects, -1, 0, 0, 0) == 0;

	if (ok && git_odb_add_backend(odb, be, 1) < 0) {
		be->free(be);
		ok = false;
	}
	ok = ok && git_repository_set_odb(repo, odb) == 0;
	free(objects);
	if (!ok) {
		git_odb_free(odb);
		return false;
	}
	*out = odb;
	return true;
}

struct checkpoints *checkpoint_open(const char *run_dir, const char *ws_path, char **err)
{
	struct checkpoints *cp;
	char *dir = xasprintf("%s/checkpoints.git", run_dir);
	git_repository *repo = NULL, *ign = NULL;
	git_odb *odb = NULL;
	struct loose *loose;
	char *objects;
	struct stat st;

	pthread_once(&git_once, git_setup);
	if (stat(ws_path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, "checkpoints: the workspace %s is not a folder", ws_path);
		free(dir);
		return NULL;
	}
	/* A run folder has one pevtui at a time (runlock.h): a lock file in the store is
	 * what a killed one left behind. */
	for (size_t i = 0; i < sizeof(stale_locks) / sizeof(*stale_locks); i++) {
		char *p = xasprintf("%s/%s", dir, stale_locks[i]);
		unlink(p);
		free(p);
	}
	if (git_repository_open_bare(&repo, dir) < 0 && git_repository_init(&repo, dir, 1) < 0) {
		set_err(err, "checkpoints: cannot create the store %s: %s", dir, git_why());
		free(dir);
		return NULL;
	}
	if (git_repository_open_bare(&ign, dir) < 0 ||
	    git_repository_set_workdir(ign, ws_path, 0) < 0 || !loose_odb(repo, dir, &odb)) {
		set_err(err, "checkpoints: cannot use the workspace %s: %s", ws_path, git_why());
		git_repository_free(ign);
		git_repository_free(repo);
		free(dir);
		return NULL;
	}
	objects = xasprintf("%s/objects", dir);
	loose = loose_open(objects);
	if (!loose) {
		set_err(err, "checkpoints: cannot open the store's objects %s: %s", objects,
		        strerror(errno));
		free(objects);
		git_odb_free(odb);
		git_repository_free(ign);
		git_repository_free(repo);
		free(dir);
		return NULL;
	}
	free(objects);
	cp = xcalloc(1, sizeof(*cp));
	pthread_mutex_init(&cp->lock, NULL);
	cp->loose = loose;
	cp->repo = repo;
	cp->ign = ign;
	cp->odb = odb;
	cp->ws_path = xstrdup(ws_path);
	cp->run_rel = inside(ws_path, run_dir);
	cp->max_file = CP_MAX_FILE_DEFAULT;
	cp->max_total = CP_MAX_TOTAL_DEFAULT;
	/* A store whose newest checkpoint was lost still takes checkpoints, unchained. */
	cp->have_last = git_reference_name_to_id(&cp->last, repo, "refs/pevtui/last") == 0 &&
	                git_odb_exists(odb, &cp->last);
	free(dir);
	return cp;
}

static void series_free(struct series *s)
{
	free(s->step_id);
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
}

static void memo_free(struct tree_memo *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < m[i].n; j++)
			free(m[i].v[j].name);
		free(m[i].v);
		free(m[i].path);
	}
	free(m);
}

static void cache_free(struct cache_ent *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].path);
	free(c);
}

void checkpoint_close(struct checkpoints *cp)
{
	if (!cp)
		return;
	if (cp->last_moved) {
		git_reference *ref = NULL;
		/* Best effort: the checkpoints are whole without the name (see write_commit). */
		if (git_reference_create(&ref, cp->repo, "refs/pevtui/last", &cp->last, 1,
		                         "checkpoint") == 0)
			git_reference_free(ref);
	}
	loose_close(cp->loose);
	strvec_clear(&cp->exclude);
	git_odb_free(cp->odb);
	git_repository_free(cp->ign);
	git_repository_free(cp->repo);
	cache_free(cp->cache, cp->n_cache);
	memo_free(cp->trees, cp->n_trees);
	for (size_t i = 0; i < cp->n_series; i++)
		series_free(&cp->series[i]);
	free(cp->series);
	strvec_clear(&cp->active);
	strvec_clear(&cp->ambiguous);
	free(cp->ws_path);
	free(cp->run_rel);
	pthread_mutex_destroy(&cp->lock);
	free(cp);
}

void checkpoint_set_limits(struct checkpoints *cp, uint64_t max_file, uint64_t max_total)
{
	lock(cp);
	if (max_file)
		cp->max_file = max_file;
	if (max_total)
		cp->max_total = max_total;
	unlock(cp);
}

void checkpoint_set_exclude(struct checkpoints *cp, const struct strvec *patterns)
{
	lock(cp);
	strvec_clear(&cp->exclude);
	for (size_t i = 0; patterns && i < patterns->n; i++)
		strvec_push(&cp->exclude, patterns->v[i]);
	unlock(cp);
}

/* ------------------------------------------------------------------ taking */

struct take {
	struct checkpoints *cp;
	struct strvec *warnings;
	struct strvec skipped;
	struct strvec excluded; /* the first CP_EXCLUDED_LISTED paths left out on purpose */
	size_t n_excluded;      /* all of them */
	uint64_t total;
	struct cache_ent *nv;
	size_t n, cap;
	struct tree_memo *trees; /* this snapshot's folders, in the order they end */
	size_t n_trees, cap_trees;
	char *err;
};

static int memo_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tree_memo *)a)->path, ((const struct tree_memo *)b)->path);
}

static const struct tree_memo *memo_find(const struct checkpoints *cp, const char *path)
{
	struct tree_memo key = {.path = (char *)path};

	return cp->n_trees ? bsearch(&key, cp->trees, cp->n_trees, sizeof(key), memo_cmp) : NULL;
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
	ok = loose_write(cp->loose, GIT_OBJECT_TREE, sb.buf, sb.len, out);
	strbuf_release(&sb);
	return ok;
}

static int cache_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cache_ent *)a)->path, ((const struct cache_ent *)b)->path);
}

static const struct cache_ent *cache_find(const struct checkpoints *cp, const char *path)
{
	struct cache_ent key = {.path = (char *)path};

	return cp->n_cache ? bsearch(&key, cp->cache, cp->n_cache, sizeof(key), cache_cmp) : NULL;
}

static bool older(const struct timespec *a, const struct timespec *b)
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
static char *read_file_at(int dfd, const char *name, uint64_t max, size_t *len, struct stat *st,
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

static void add_cache(struct take *t, const char *rel, const struct stat *st, const git_oid *oid)
{
	struct cache_ent *c;

	t->nv = xgrow(t->nv, &t->cap, t->n + 1, sizeof(*t->nv));
	c = &t->nv[t->n++];
	c->path = xstrdup(rel);
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
	const struct cache_ent *c = cache_find(cp, rel);
	struct stat st;
	size_t len;
	bool changed = false;
	char *buf = NULL;

	if (c && same_stat(c, lst) && older(&lst->st_ctim, &cp->trust_before)) {
		*oid = c->oid;
		add_cache(t, rel, lst, oid);
		t->total += (size_t)lst->st_size; /* the per-checkpoint limit counts it too */
		return true;
	}
	for (int tries = 0; tries < 3; tries++) {
		free(buf);
		buf = read_file_at(dfd, name, cp->max_file, &len, &st, &changed);
		if (!buf || !changed)
			break;
	}
	if (!buf) {
		warn(t, "%s was left out of the checkpoint: %s", rel, strerror(errno));
		return false;
	}
	if (len > cp->max_file) {
		warn(t, "%s grew past the size limit while it was stored and was left out", rel);
		strvec_push(&t->skipped, rel);
		free(buf);
		return false;
	}
	/* Read again for its stat alone (touched, or too new to trust): the same content
	 * needs no write. */
	if (!c || git_odb_hash(oid, buf, len, GIT_OBJECT_BLOB) < 0 || !git_oid_equal(oid, &c->oid)) {
		if (!loose_write(cp->loose, GIT_OBJECT_BLOB, buf, len, oid)) {
			set_err(&t->err, "checkpoints: cannot store %s: %s", rel, strerror(errno));
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
		add_cache(t, rel, &st, oid);
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

	for (size_t i = 0; i < t->cp->exclude.n && !out; i++)
		out = pattern_matches(t->cp->exclude.v[i], path, name, is_dir);
	if (!out && ignores) {
		char *q = is_dir ? xasprintf("%s/", path) : xstrdup(path);
		out = is_ignored(t, q);
		free(q);
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
static bool path_excluded(const struct checkpoints *cp, const char *path)
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
			set_err(&t->err, "checkpoints: cannot read the workspace: %s",
			        strerror(errno));
			return false;
		}
		warn(t, "%s/ could not be read and was left out of the checkpoint", rel);
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
		    own_temp(name) ||
		    fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			free(path);
			continue;
		}
		if (left_out_on_purpose(t, path, name, S_ISDIR(st.st_mode), ignores)) {
			free(path);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			bool sub_empty = true;
			int sfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sfd >= 0) {
				ok = take_dir(t, sfd, path, ignores, &oid, &sub_empty);
				close(sfd);
			}
			if (ok && !sub_empty)
				mode = GIT_FILEMODE_TREE;
		} else if (S_ISLNK(st.st_mode) || S_ISREG(st.st_mode)) {
			if (S_ISLNK(st.st_mode)) {
				char target[4096];
				ssize_t n = readlinkat(dfd, name, target, sizeof(target));
				if (n >= 0 && (size_t)n < sizeof(target) &&
				    loose_write(t->cp->loose, GIT_OBJECT_BLOB, target, (size_t)n,
				                &oid))
					mode = GIT_FILEMODE_LINK;
				else
					warn(t, "the link %s could not be read and was left out",
					     path);
			} else if ((uint64_t)st.st_size > t->cp->max_file) {
				warn(t,
				     "%s (%lld bytes) is over the %llu-byte limit per file and was "
				     "left out of the checkpoint",
				     path, (long long)st.st_size,
				     (unsigned long long)t->cp->max_file);
				strvec_push(&t->skipped, path);
			} else if (t->total + (uint64_t)st.st_size > t->cp->max_total) {
				warn(t,
				     "%s was left out: the checkpoint reached its %llu-byte limit",
				     path, (unsigned long long)t->cp->max_total);
				strvec_push(&t->skipped, path);
			} else if (take_file(t, dfd, name, path, &st, &oid)) {
				mode = (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE
				                              : GIT_FILEMODE_BLOB;
			} else if (t->err) {
				ok = false;
			}
		} else {
			warn(t, "%s is not a file, a link or a folder and was left out", path);
		}
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
			set_err(&t->err, "checkpoints: cannot write a tree: %s", strerror(errno));
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

/* The commit message: a title, then the paths left out for their size as JSON. */
/* The message: "pevtui checkpoint", then {"left_out": [...], "taken_s": S, "taken_ns": N,
 * "seq": K, "excluded": [...], "excluded_n": N} (when the walk began, to the nanosecond:
 * there_before compares file times with it; the how-many-th checkpoint of the process that
 * took it, which orders those of one clock tick; the paths left out on purpose). */
static char *commit_message(const struct take *t, const struct timespec *taken)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "left_out");
	char *js, *msg;

	cJSON_AddNumberToObject(o, "taken_s", (double)taken->tv_sec);
	cJSON_AddNumberToObject(o, "taken_ns", (double)taken->tv_nsec);
	cJSON_AddNumberToObject(o, "seq", (double)++t->cp->seq);
	for (size_t i = 0; i < t->skipped.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(t->skipped.v[i]));
	if (t->n_excluded) {
		a = cJSON_AddArrayToObject(o, "excluded");
		for (size_t i = 0; i < t->excluded.n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(t->excluded.v[i]));
		cJSON_AddNumberToObject(o, "excluded_n", (double)t->n_excluded);
	}
	js = cJSON_PrintUnformatted(o);
	msg = xasprintf("pevtui checkpoint\n\n%s\n", js ? js : "{}");
	cJSON_free(js);
	cJSON_Delete(o);
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
	ok = loose_write(cp->loose, GIT_OBJECT_COMMIT, sb.buf, sb.len, out);
	strbuf_release(&sb);
	if (ok)
		cp->last_moved = true;
	return ok;
}

static bool take_locked(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                        char **err)
{
	struct take t = {.cp = cp, .warnings = warnings};
	struct timespec start, coarse;
	git_oid tree_id, cid;
	char *msg = NULL;
	bool empty, ok = false;
	int fd;

	out_id[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &start);
	/* The clock file times come from (coarse): what there_before compares with. */
	clock_gettime(CLOCK_REALTIME_COARSE, &coarse);
	fd = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		        strerror(errno));
		return false;
	}
	ok = take_dir(&t, fd, "", false, &tree_id, &empty);
	close(fd);
	if (ok) {
		msg = commit_message(&t, &coarse);
		if (!write_commit(cp, &tree_id, msg, start.tv_sec, &cid)) {
			set_err(&t.err, "checkpoints: cannot record the checkpoint: %s",
			        strerror(errno));
			ok = false;
		}
	}
	if (ok) {
		git_oid_tostr(out_id, CP_ID_LEN + 1, &cid);
		cp->last = cid;
		cp->have_last = true;
		if (t.n)
			qsort(t.nv, t.n, sizeof(*t.nv), cache_cmp);
		cache_free(cp->cache, cp->n_cache);
		cp->cache = t.nv;
		cp->n_cache = t.n;
		t.nv = NULL;
		t.n = 0;
		if (t.n_trees)
			qsort(t.trees, t.n_trees, sizeof(*t.trees), memo_cmp);
		memo_free(cp->trees, cp->n_trees);
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
	free(t.err);
	cache_free(t.nv, t.n);
	memo_free(t.trees, t.n_trees);
	strvec_clear(&t.skipped);
	strvec_clear(&t.excluded);
	return ok;
}

bool checkpoint_take(struct checkpoints *cp, char out_id[CP_ID_LEN + 1], struct strvec *warnings,
                     char **err)
{
	bool ok;

	lock(cp);
	ok = take_locked(cp, out_id, warnings, err);
	unlock(cp);
	return ok;
}

/* --------------------------------------------------------------- reading back */

struct snap {
	git_commit *commit;
	git_tree *tree;
	struct strvec left_out;
	struct strvec excluded;
	size_t n_excluded;
	/* When its walk began, on the kernel's coarse clock (file times come from it); the
	 * commit's second for a store from before that field. */
	struct timespec taken;
	unsigned long seq; /* its count in the process that took it; 0: a store from before */
};

static void snap_release(struct snap *s)
{
	git_tree_free(s->tree);
	git_commit_free(s->commit);
	strvec_clear(&s->left_out);
	strvec_clear(&s->excluded);
	memset(s, 0, sizeof(*s));
}

static bool snap_load(struct checkpoints *cp, const char *id, struct snap *s, char **err)
{
	git_oid oid;
	const char *msg, *js;

	memset(s, 0, sizeof(*s));
	if (!id || strlen(id) != CP_ID_LEN || git_oid_fromstr(&oid, id) < 0 ||
	    git_commit_lookup(&s->commit, cp->repo, &oid) < 0 ||
	    git_commit_tree(&s->tree, s->commit) < 0) {
		set_err(err, "checkpoints: no checkpoint %.40s in the store", id ? id : "(none)");
		snap_release(s);
		return false;
	}
	s->taken.tv_sec = (time_t)git_commit_time(s->commit);
	msg = git_commit_message(s->commit);
	js = msg ? strchr(msg, '{') : NULL;
	if (js) {
		cJSON *o = cJSON_Parse(js), *a = cJSON_GetObjectItemCaseSensitive(o, "left_out"),
		      *it;
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "excluded_n");
		double sec, ns, q;
		if (jsonx_num(o, "taken_s", &sec) && jsonx_num(o, "taken_ns", &ns)) {
			s->taken.tv_sec = (time_t)sec;
			s->taken.tv_nsec = (long)ns;
		}
		if (jsonx_num(o, "seq", &q) && q > 0)
			s->seq = (unsigned long)q;
		cJSON_ArrayForEach(it, a) if (cJSON_IsString(it))
		    strvec_push(&s->left_out, it->valuestring);
		a = cJSON_GetObjectItemCaseSensitive(o, "excluded");
		cJSON_ArrayForEach(it, a) if (cJSON_IsString(it))
		    strvec_push(&s->excluded, it->valuestring);
		s->n_excluded = cJSON_IsNumber(n) && n->valuedouble >= (double)s->excluded.n
		                    ? (size_t)n->valuedouble
		                    : s->excluded.n;
		cJSON_Delete(o);
	}
	return true;
}

static bool in_vec(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

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
static void diff_append(struct strbuf *sb, const char *text, size_t len, size_t max, bool *cut)
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

bool checkpoint_diff(struct checkpoints *cp, const char *from, const char *to, size_t max_diff,
                     struct cp_changes *out, char **err)
{
	struct snap a, b;
	git_diff_options o;
	git_diff *diff = NULL;
	struct strbuf text = STRBUF_INIT;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	strbuf_init(&text);
	lock(cp);
	if (!snap_load(cp, from, &a, err)) {
		unlock(cp);
		strbuf_release(&text);
		return false;
	}
	if (!snap_load(cp, to, &b, err)) {
		snap_release(&a);
		unlock(cp);
		strbuf_release(&text);
		return false;
	}
	for (size_t i = 0; i < b.excluded.n; i++)
		strvec_push(&out->excluded, b.excluded.v[i]);
	out->n_excluded = b.n_excluded;
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 3;
	if (git_diff_tree_to_tree(&diff, cp->repo, a.tree, b.tree, &o) < 0) {
		set_err(err, "checkpoints: cannot compare: %s", git_why());
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
		if (in_vec(&a.left_out, path) || in_vec(&b.left_out, path)) {
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
				diff_append(&text, pb.ptr, pb.size, max_diff, &out->diff_cut);
			git_buf_dispose(&pb);
		} else {
			char *line =
			    xasprintf("Binary file %s %s: %llu bytes -> %llu bytes\n", path,
			              cp_change_name(f->change), (unsigned long long)f->old_size,
			              (unsigned long long)f->new_size);
			diff_append(&text, line, strlen(line), max_diff, &out->diff_cut);
			free(line);
		}
		out->plus += f->plus;
		out->minus += f->minus;
		git_patch_free(patch);
	}
	ok = true;
done:
	git_diff_free(diff);
	snap_release(&a);
	snap_release(&b);
	unlock(cp);
	out->diff = strbuf_detach(&text);
	if (!ok)
		cp_changes_release(out);
	return ok;
}

/* ---------------------------------------------------------------- restoring */

/* Opens the folder holding `path` beneath root, one component at a time without following
 * a link (creating missing folders when `create`); *name points at the last component.
 * -1 with errno on failure (ENOENT: a folder on the way does not exist). */
static int open_parent(int root, const char *path, bool create, const char **name)
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
static void tree_state(git_tree *tree, const char *path, unsigned *mode, git_oid *oid)
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

/* Whether path in the workspace now is what `tree` holds (both absent counts). */
static bool matches(struct checkpoints *cp, int root, git_tree *tree, const char *path)
{
	unsigned mode;
	git_oid want, have;
	const char *name;
	struct stat st;
	int pfd = open_parent(root, path, false, &name);
	bool same = false;

	tree_state(tree, path, &mode, &want);
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
		char *buf = read_file_at(pfd, name, cp->max_file, &len, &fst, &changed);
		same = buf && git_odb_hash(&have, buf, len, GIT_OBJECT_BLOB) == 0 &&
		       git_oid_equal(&have, &want);
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
static bool there_before(int root, const char *path, const struct timespec *taken)
{
	struct stat st;

	if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return older(&st.st_ctim, taken);
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
		tree_state(tree, dir, &mode, &oid);
		if (mode)
			break;
		pfd = open_parent(root, dir, false, &name);
		if (pfd < 0)
			break;
		struct statx sx;
		if (statx(pfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) < 0 ||
		    !(sx.stx_mask & STATX_BTIME) ||
		    older(&(struct timespec){sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec}, taken) ||
		    unlinkat(pfd, name, AT_REMOVEDIR) < 0) {
			close(pfd);
			break;
		}
		close(pfd);
	}
	free(dir);
}

/* Writes path as `tree` holds it (or deletes it): a temporary entry renamed into place. */
static bool restore_one(struct checkpoints *cp, int root, git_tree *tree, const char *path,
                        const struct timespec *taken, char **err)
{
	unsigned mode;
	git_oid oid;
	const char *name;
	git_blob *blob = NULL;
	char *tmp = NULL;
	bool ok = false;
	int pfd;

	tree_state(tree, path, &mode, &oid);
	if (mode == 040000) {
		set_err(err, "checkpoints: %s is a folder in the checkpoint, not a file", path);
		return false;
	}
	pfd = open_parent(root, path, mode != 0, &name);
	if (pfd < 0) {
		if (!mode && (errno == ENOENT || errno == ENOTDIR))
			return true; /* already gone */
		set_err(err, "checkpoints: cannot restore %s: %s (a link or a file on the way?)",
		        path, strerror(errno));
		return false;
	}
	if (!mode) {
		if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT) {
			set_err(err, "checkpoints: cannot remove %s: %s", path, strerror(errno));
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
		set_err(err, "checkpoints: the store lacks the content of %s: %s", path, git_why());
		close(pfd);
		return false;
	}
	tmp = xasprintf(".pevtui-restore-%ld-%lx", (long)getpid(), (unsigned long)random());
	if (mode == GIT_FILEMODE_LINK) {
		char *target = xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		ok = symlinkat(target, pfd, tmp) == 0;
		free(target);
	} else {
		/* The permissions the file has now (a .env kept at 0600 stays so), with the
		 * checkpoint's exec bit; 0600 or 0700 for a file that is gone. */
		struct stat now;
		bool exec = mode == GIT_FILEMODE_BLOB_EXECUTABLE;
		mode_t perm = exec ? 0700 : 0600;
		if (fstatat(pfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(now.st_mode)) {
			perm = now.st_mode & 0777;
			perm = exec ? perm | ((perm & 0444) >> 2) : perm & ~(mode_t)0111;
		}
		int fd = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		                perm);
		if (fd >= 0 && fchmod(fd, perm) < 0) { /* the umask took some away */
		}
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
		if (fd >= 0 && close(fd) < 0)
			ok = false;
	}
	if (ok && renameat(pfd, tmp, pfd, name) < 0)
		ok = false;
	if (!ok) {
		set_err(err, "checkpoints: cannot restore %s: %s", path, strerror(errno));
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

	if (in_vec(&target->left_out, path) || path_excluded(cp, path))
		return true; /* never stored: nothing to restore it to, never deleted */
	if (matches(cp, root, target->tree, path))
		return true;
	tree_state(target->tree, path, &mode, &oid);
	if ((expect && !matches(cp, root, expect->tree, path)) ||
	    (!mode && there_before(root, path, &taken))) {
		if (conflicts)
			strvec_push(conflicts, path);
		return true;
	}
	if (!restore_one(cp, root, target->tree, path, &taken, err))
		return false;
	if (restored)
		strvec_push(restored, path);
	return true;
}

/* A path inside the workspace: relative, no empty, "." or ".." component. Unlike
 * sandbox_check_path, any other byte is allowed: a step may well create such names. */
static bool path_ok(const char *p)
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

static bool restore_locked(struct checkpoints *cp, const char *id, const struct strvec *paths,
                           const char *expect, struct strvec *restored, struct strvec *conflicts,
                           char **err)
{
	struct snap t, x;
	bool ok = true;
	int root;

	if (!snap_load(cp, id, &t, err))
		return false;
	if (expect && !snap_load(cp, expect, &x, err)) {
		snap_release(&t);
		return false;
	}
	root = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		        strerror(errno));
		ok = false;
	}
	for (size_t i = 0; root >= 0 && i < paths->n; i++) {
		if (!path_ok(paths->v[i])) {
			set_err(err, "checkpoints: will not restore \"%s\": not a workspace path",
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
	snap_release(&t);
	if (expect)
		snap_release(&x);
	return ok;
}

bool checkpoint_restore_paths(struct checkpoints *cp, const char *id, const struct strvec *paths,
                              const char *expect, struct strvec *restored, struct strvec *conflicts,
                              char **err)
{
	bool ok;

	lock(cp);
	ok = restore_locked(cp, id, paths, expect, restored, conflicts, err);
	unlock(cp);
	return ok;
}

/* ------------------------------------------------------------------ series */

static bool in_vec(const struct strvec *v, const char *s);

/* The paths that differ between two commits (no content read beyond the trees). */
static void changed_paths(struct checkpoints *cp, const git_oid *a, const git_oid *b,
                          struct strvec *out)
{
	git_commit *ca = NULL, *cb = NULL;
	git_tree *ta = NULL, *tb = NULL;
	git_diff *diff = NULL;

	if (git_commit_lookup(&ca, cp->repo, a) == 0 && git_commit_lookup(&cb, cp->repo, b) == 0 &&
	    git_commit_tree(&ta, ca) == 0 && git_commit_tree(&tb, cb) == 0 &&
	    git_diff_tree_to_tree(&diff, cp->repo, ta, tb, NULL) == 0) {
		for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
			const git_diff_delta *d = git_diff_get_delta(diff, i);
			strvec_push(out, d->new_file.path ? d->new_file.path : d->old_file.path);
		}
	}
	git_diff_free(diff);
	git_tree_free(ta);
	git_tree_free(tb);
	git_commit_free(ca);
	git_commit_free(cb);
}

bool checkpoint_take_step(struct checkpoints *cp, const char *step_id, bool starting,
                          char out_id[CP_ID_LEN + 1], struct strvec *warnings, char **err)
{
	git_oid prev;
	bool had_prev, ok;

	lock(cp);
	prev = cp->last;
	had_prev = cp->have_last;
	ok = take_locked(cp, out_id, warnings, err);
	/* What changed since the previous checkpoint, while several steps ran, belongs to
	 * none of them for sure. */
	if (ok && had_prev && cp->active.n > 1) {
		struct strvec paths = STRVEC_INIT;
		changed_paths(cp, &prev, &cp->last, &paths);
		for (size_t p = 0; p < paths.n; p++)
			for (size_t s = 0; s < cp->active.n; s++) {
				char *key = xasprintf("%s\n%s", cp->active.v[s], paths.v[p]);
				if (!in_vec(&cp->ambiguous, key))
					strvec_push(&cp->ambiguous, key);
				free(key);
			}
		strvec_clear(&paths);
	}
	if (starting && ok) {
		strvec_push(&cp->active, step_id);
	} else if (!starting) {
		for (size_t i = 0; i < cp->active.n; i++)
			if (!strcmp(cp->active.v[i], step_id)) {
				free(cp->active.v[i]);
				cp->active.v[i] = cp->active.v[--cp->active.n];
				break;
			}
	}
	unlock(cp);
	return ok;
}

static struct series *series_find(struct checkpoints *cp, const char *step_id)
{
	for (size_t i = 0; i < cp->n_series; i++)
		if (!strcmp(cp->series[i].step_id, step_id))
			return &cp->series[i];
	return NULL;
}

static struct series *series_get(struct checkpoints *cp, const char *step_id)
{
	struct series *s = series_find(cp, step_id);

	if (!s) {
		cp->series =
		    xgrow(cp->series, &cp->cap_series, cp->n_series + 1, sizeof(*cp->series));
		s = &cp->series[cp->n_series++];
		memset(s, 0, sizeof(*s));
		s->step_id = xstrdup(step_id);
	}
	return s;
}

/* Adds paths to step's series (a path known already keeps its older base). */
static void series_add(struct checkpoints *cp, const char *step_id, const char *before,
                       const char *after, const struct strvec *paths)
{
	struct series *s = series_get(cp, step_id);

	memcpy(s->after, after, CP_ID_LEN + 1);
	for (size_t i = 0; i < paths->n; i++) {
		bool known = false;
		for (size_t k = 0; k < s->n && !known; k++)
			known = !strcmp(s->v[k].path, paths->v[i]);
		if (known)
			continue;
		s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
		s->v[s->n].path = xstrdup(paths->v[i]);
		memcpy(s->v[s->n].base, before, CP_ID_LEN + 1);
		s->n++;
	}
}

void checkpoint_series_note(struct checkpoints *cp, const char *step_id, const char *before,
                            const char *after, const struct cp_changes *changes)
{
	struct strvec paths = STRVEC_INIT;

	if (!before || !after || strlen(before) != CP_ID_LEN || strlen(after) != CP_ID_LEN)
		return;
	for (size_t i = 0; changes && i < changes->n; i++)
		strvec_push(&paths, changes->v[i].path);
	lock(cp);
	series_add(cp, step_id, before, after, &paths);
	unlock(cp);
	strvec_clear(&paths);
}

/* Restores every path of series s to its base and empties the series: a path restored,
 * already as it was, or left to whoever changed it since (`conflicts`) is no longer the
 * series' — the next attempt's changes start it again from the checkpoint before that
 * attempt, which holds the same content. */
static bool series_restore_locked(struct checkpoints *cp, struct series *s,
                                  struct strvec *restored, struct strvec *conflicts,
                                  struct strvec *bases, struct strvec *shared, char **err)
{
	bool ok = true;

	for (size_t i = 0; i < s->n; i++) {
		struct strvec one = STRVEC_INIT, conf = STRVEC_INIT, done = STRVEC_INIT;
		char *key = xasprintf("%s\n%s", s->step_id, s->v[i].path);

		strvec_push(&one, s->v[i].path);
		if (in_vec(&cp->ambiguous, key) && shared)
			strvec_push(shared, s->v[i].path); /* another step may have made it */
		else if (in_vec(&cp->ambiguous, key))
			strvec_push(&conf, s->v[i].path);
		else if (!restore_locked(cp, s->v[i].base, &one, s->after, &done, &conf, err))
			ok = false;
		free(key);
		/* A step running beside this one will see the restore as its own change: the
		 * path is not its to restore later (it would write back what was undone). */
		for (size_t d = 0; d < done.n; d++) {
			if (restored)
				strvec_push(restored, done.v[d]);
			for (size_t a = 0; a < cp->active.n; a++) {
				char *other;
				if (!strcmp(cp->active.v[a], s->step_id))
					continue;
				other = xasprintf("%s\n%s", cp->active.v[a], done.v[d]);
				if (!in_vec(&cp->ambiguous, other))
					strvec_push(&cp->ambiguous, other);
				free(other);
			}
		}
		/* Someone else changed it since: it is theirs now, not the series'. */
		if (conf.n && conflicts)
			strvec_push(conflicts, s->v[i].path);
		if (conf.n && bases)
			strvec_push(bases, s->v[i].base);
		strvec_clear(&done);
		strvec_clear(&one);
		strvec_clear(&conf);
		free(s->v[i].path);
	}
	s->n = 0;
	s->orphan = false;
	return ok;
}

bool checkpoint_series_restore(struct checkpoints *cp, const char *step_id, struct strvec *restored,
                               struct strvec *conflicts, char **err)
{
	struct series *s;
	bool ok;

	lock(cp);
	s = series_find(cp, step_id);
	if (!s || !s->n) {
		unlock(cp);
		return false;
	}
	ok = series_restore_locked(cp, s, restored, conflicts, NULL, NULL, err);
	unlock(cp);
	return ok;
}

void checkpoint_series_end(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	lock(cp);
	s = series_find(cp, step_id);
	if (s) {
		series_free(s);
		*s = cp->series[--cp->n_series];
	}
	for (size_t i = 0; i < cp->ambiguous.n;) {
		size_t n = strlen(step_id);
		if (!strncmp(cp->ambiguous.v[i], step_id, n) && cp->ambiguous.v[i][n] == '\n') {
			free(cp->ambiguous.v[i]);
			cp->ambiguous.v[i] = cp->ambiguous.v[--cp->ambiguous.n];
		} else {
			i++;
		}
	}
	unlock(cp);
}

/* ------------------------------------------------------------ reading only */

struct checkpoints *checkpoint_open_read(const char *run_dir, char **err)
{
	struct checkpoints *cp;
	char *dir = xasprintf("%s/checkpoints.git", run_dir);
	git_repository *repo = NULL;
	struct stat st;

	pthread_once(&git_once, git_setup);
	/* Nothing is created, nothing unlocked: the run may be live in another pevtui. */
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, "the run has no checkpoint store (%s is missing)", dir);
		free(dir);
		return NULL;
	}
	if (git_repository_open_ext(&repo, dir,
	                            GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
	                            NULL) < 0) {
		set_err(err, "the checkpoint store %s cannot be read: %s", dir, git_why());
		free(dir);
		return NULL;
	}
	cp = xcalloc(1, sizeof(*cp));
	pthread_mutex_init(&cp->lock, NULL);
	cp->repo = repo;
	cp->max_file = CP_MAX_FILE_DEFAULT;
	cp->max_total = CP_MAX_TOTAL_DEFAULT;
	free(dir);
	return cp;
}

bool checkpoint_compare(struct checkpoints *cp, const char *a, const char *b, int *order,
                        char **err)
{
	struct snap sa, sb;
	struct timespec ta, tb;
	unsigned long qa, qb;

	*order = 0;
	lock(cp);
	if (!snap_load(cp, a, &sa, err)) {
		unlock(cp);
		return false;
	}
	if (!snap_load(cp, b, &sb, err)) {
		snap_release(&sa);
		unlock(cp);
		return false;
	}
	ta = sa.taken;
	tb = sb.taken;
	qa = sa.seq;
	qb = sb.seq;
	if (older(&ta, &tb))
		*order = -1;
	else if (older(&tb, &ta))
		*order = 1;
	/* Taken within one tick of the coarse clock, by one process: its count says. */
	else if (qa && qb && qa != qb)
		*order = qa < qb ? -1 : 1;
	/* A store from before the count: each checkpoint's parent is the one taken before
	 * it, so the older is the other's ancestor (a walk through the history). */
	else if (git_graph_descendant_of(cp->repo, git_commit_id(sb.commit),
	                                 git_commit_id(sa.commit)) == 1)
		*order = -1;
	else if (git_graph_descendant_of(cp->repo, git_commit_id(sa.commit),
	                                 git_commit_id(sb.commit)) == 1)
		*order = 1;
	snap_release(&sa);
	snap_release(&sb);
	unlock(cp);
	return true;
}

/* ------------------------------------------------- series: replaced steps, resume */

bool checkpoint_series_has(struct checkpoints *cp, const char *step_id)
{
	struct series *s;
	bool has;

	lock(cp);
	s = series_find(cp, step_id);
	has = s && s->n;
	unlock(cp);
	return has;
}

void checkpoint_series_orphan(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	lock(cp);
	s = series_find(cp, step_id);
	if (s && s->n)
		s->orphan = true;
	unlock(cp);
}

void cp_restored_release(struct cp_restored *r)
{
	free(r->step_id);
	strvec_clear(&r->restored);
	strvec_clear(&r->conflicts);
	strvec_clear(&r->bases);
	strvec_clear(&r->shared);
	memset(r, 0, sizeof(*r));
}

void cp_restored_free(struct cp_restored *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cp_restored_release(&v[i]);
	free(v);
}

size_t checkpoint_series_restore_orphans(struct checkpoints *cp, struct cp_restored **out,
                                         char **err)
{
	size_t n = 0, cap = 0;

	*out = NULL;
	lock(cp);
	for (size_t i = 0; i < cp->n_series; i++) {
		struct series *s = &cp->series[i];
		struct cp_restored *r;

		if (!s->orphan || !s->n || in_vec(&cp->active, s->step_id))
			continue;
		*out = xgrow(*out, &cap, n + 1, sizeof(**out));
		r = &(*out)[n++];
		memset(r, 0, sizeof(*r));
		r->step_id = xstrdup(s->step_id);
		series_restore_locked(cp, s, &r->restored, &r->conflicts, &r->bases, &r->shared,
		                      err);
	}
	unlock(cp);
	return n;
}

void checkpoint_series_clear(struct checkpoints *cp, const char *step_id)
{
	struct series *s;

	lock(cp);
	s = series_find(cp, step_id);
	if (s) {
		for (size_t i = 0; i < s->n; i++)
			free(s->v[i].path);
		s->n = 0;
		s->orphan = false;
	}
	unlock(cp);
}

bool checkpoint_series_note_ids(struct checkpoints *cp, const char *step_id, const char *before,
                                const char *after, bool overlapped, char **err)
{
	struct snap a, b;
	git_diff *diff = NULL;
	struct strvec paths = STRVEC_INIT;
	bool ok = false;

	lock(cp);
	if (!snap_load(cp, before, &a, err)) {
		unlock(cp);
		return false;
	}
	if (!snap_load(cp, after, &b, err)) {
		snap_release(&a);
		unlock(cp);
		return false;
	}
	if (git_diff_tree_to_tree(&diff, cp->repo, a.tree, b.tree, NULL) < 0) {
		set_err(err, "checkpoints: cannot compare %.12s and %.12s: %s", before, after,
		        git_why());
	} else {
		for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
			const git_diff_delta *d = git_diff_get_delta(diff, i);
			const char *p = d->new_file.path ? d->new_file.path : d->old_file.path;
			if (!in_vec(&a.left_out, p) && !in_vec(&b.left_out, p))
				strvec_push(&paths, p);
		}
		series_add(cp, step_id, before, after, &paths);
		/* Beside another step's attempt: which of them made a path is not known. */
		for (size_t i = 0; overlapped && i < paths.n; i++) {
			char *key = xasprintf("%s\n%s", step_id, paths.v[i]);
			if (!in_vec(&cp->ambiguous, key))
				strvec_push(&cp->ambiguous, key);
			free(key);
		}
		ok = true;
	}
	git_diff_free(diff);
	snap_release(&a);
	snap_release(&b);
	unlock(cp);
	strvec_clear(&paths);
	return ok;
}

/* ------------------------------------------------ the rewind gate's restores */

bool checkpoint_series_restore_step(struct checkpoints *cp, const char *step_id,
                                    struct cp_restored *out, char **err)
{
	struct series *s;

	memset(out, 0, sizeof(*out));
	out->step_id = xstrdup(step_id);
	lock(cp);
	s = series_find(cp, step_id);
	if (!s || !s->n) {
		unlock(cp);
		return false;
	}
	series_restore_locked(cp, s, &out->restored, &out->conflicts, &out->bases, &out->shared,
	                      err);
	unlock(cp);
	return true;
}

/* The content of path as the workspace holds it now (a link: its target); NULL when it is
 * absent or not a file or a link. *mode: its git mode. */
static char *current_content(struct checkpoints *cp, int root, const char *path, size_t *len,
                             unsigned *mode)
{
	const char *name;
	struct stat st;
	int pfd = open_parent(root, path, false, &name);
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
			buf = read_file_at(pfd, name, cp->max_file, len, &fst, &changed);
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

	if (!path_ok(path)) {
		set_err(err, "checkpoints: \"%s\" is not a workspace path", path);
		return false;
	}
	lock(cp);
	if (!snap_load(cp, base, &t, err)) {
		unlock(cp);
		return false;
	}
	root = open(cp->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		set_err(err, "checkpoints: cannot open the workspace %s: %s", cp->ws_path,
		        strerror(errno));
		goto done;
	}
	now = current_content(cp, root, path, &len_now, &mode_now);
	close(root);
	tree_state(t.tree, path, &mode_then, &oid);
	if (mode_then && mode_then != 040000 && git_blob_lookup(&blob, cp->repo, &oid) < 0) {
		set_err(err, "checkpoints: the store lacks the content of %s: %s", path, git_why());
		goto done;
	}
	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 3;
	/* From what is there now (theirs) to what a restore writes. */
	if (git_patch_from_buffers(&patch, now, now ? len_now : 0, now ? path : NULL,
	                           blob ? git_blob_rawcontent(blob) : NULL,
	                           blob ? (size_t)git_blob_rawsize(blob) : 0,
	                           blob ? path : NULL, &o) < 0) {
		set_err(err, "checkpoints: cannot compare %s: %s", path, git_why());
		goto done;
	}
	{
		git_buf pb = {0};
		if (git_patch_to_buf(&pb, patch) == 0) {
			if (pb.size)
				diff_append(out, pb.ptr, pb.size, max, cut);
			else if (mode_now != mode_then) {
				char *line = xasprintf("%s: mode %o now, %o in the checkpoint\n", path,
				                       mode_now, mode_then);
				diff_append(out, line, strlen(line), max, cut);
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
	snap_release(&t);
	unlock(cp);
	return ok;
}

bool checkpoint_restore_over(struct checkpoints *cp, const char *step_id, const char *base,
                             const char *path, struct strvec *restored, char **err)
{
	struct strvec one = STRVEC_INIT, done = STRVEC_INIT, conf = STRVEC_INIT;
	bool ok;

	strvec_push(&one, path);
	lock(cp);
	ok = restore_locked(cp, base, &one, NULL, &done, &conf, err);
	/* As any restore: a step running beside sees it as its own change. */
	for (size_t d = 0; d < done.n; d++) {
		if (restored)
			strvec_push(restored, done.v[d]);
		for (size_t a = 0; a < cp->active.n; a++) {
			char *other;
			if (step_id && !strcmp(cp->active.v[a], step_id))
				continue;
			other = xasprintf("%s\n%s", cp->active.v[a], done.v[d]);
			if (!in_vec(&cp->ambiguous, other))
				strvec_push(&cp->ambiguous, other);
			free(other);
		}
	}
	unlock(cp);
	if (ok && conf.n)
		set_err(err,
		        "checkpoints: %s was there before the checkpoint and is not deleted: left "
		        "as it is",
		        path);
	ok = ok && !conf.n;
	strvec_clear(&one);
	strvec_clear(&done);
	strvec_clear(&conf);
	return ok;
}

/* ------------------------------------------------------------ rewind (rewind.c) */

bool checkpoint_resolve(struct checkpoints *cp, const char *prefix, char out[CP_ID_LEN + 1],
                        char **err)
{
	size_t n = prefix ? strlen(prefix) : 0;
	git_oid oid;
	git_object *obj = NULL;
	int rc;

	out[0] = '\0';
	if (n < 7 || n > CP_ID_LEN || strspn(prefix, "0123456789abcdef") != n) {
		set_err(err, "checkpoints: \"%s\" is not a checkpoint id (7 to 40 hex digits)",
		        prefix ? prefix : "");
		return false;
	}
	lock(cp);
	rc = git_oid_fromstrn(&oid, prefix, n);
	if (rc == 0)
		rc = git_object_lookup_prefix(&obj, cp->repo, &oid, n, GIT_OBJECT_COMMIT);
	if (rc == 0)
		git_oid_tostr(out, CP_ID_LEN + 1, git_object_id(obj));
	else if (rc == GIT_EAMBIGUOUS)
		set_err(err, "checkpoints: %s names more than one checkpoint: give more digits",
		        prefix);
	else
		set_err(err, "checkpoints: no checkpoint %s in the store", prefix);
	git_object_free(obj);
	unlock(cp);
	return rc == 0;
}

bool checkpoint_path_shared(struct checkpoints *cp, const char *step_id, const char *path)
{
	char *key = xasprintf("%s\n%s", step_id, path);
	bool shared;

	lock(cp);
	shared = in_vec(&cp->ambiguous, key);
	unlock(cp);
	free(key);
	return shared;
}
