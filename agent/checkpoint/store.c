/* store — opening and closing the checkpoint store (the workspace's shared bare repository,
 * place.c; an older run's own RUNDIR/checkpoints.git), reading a checkpoint back, ordering
 * two, resolving an id prefix. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <git2/sys/repository.h>

#include "jsonx.h"
#include "pack.h"
#include "xalloc.h"

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

void cp_git_setup(void)
{
	pthread_once(&git_once, git_setup);
}

void cp_set_err(char **err, const char *fmt, ...)
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

const char *cp_git_why(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "unknown libgit2 error";
}

void cp_lock(struct checkpoints *cp)
{
	if (pthread_mutex_lock(&cp->lock))
		fatal("checkpoint: cannot lock the store");
}

void cp_unlock(struct checkpoints *cp)
{
	pthread_mutex_unlock(&cp->lock);
}

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

/* Opens (creating it when missing) the bare repository `dir`, under the store's lock. A
 * store being made is made under the exclusive lock, so that two runs starting together
 * on one workspace do not both write its HEAD and config. */
static git_repository *open_or_init(const char *dir, int lock_fd, char **err)
{
	git_repository *repo = NULL;
	char *head = xasprintf("%s/HEAD", dir);
	struct stat st;

	if (stat(head, &st) < 0) {
		if (lock_fd >= 0)
			flock(lock_fd, LOCK_EX);
		if (stat(head, &st) < 0 && git_repository_init(&repo, dir, 1) < 0)
			cp_set_err(err, "checkpoints: cannot create the store %s: %s", dir,
			           cp_git_why());
		if (lock_fd >= 0)
			flock(lock_fd, LOCK_SH);
	}
	free(head);
	if (!repo && !(err && *err) && git_repository_open_bare(&repo, dir) < 0)
		cp_set_err(err, "checkpoints: cannot open the store %s: %s", dir, cp_git_why());
	return repo;
}

/* The newest checkpoint of the run: its ref, or an older per-run store's refs/pevtui/last.
 * Its parent chain is the run's own, so that pruning another run frees that run's. */
static void find_last(struct checkpoints *cp, bool legacy)
{
	git_odb *odb = NULL;

	cp->have_last = git_reference_name_to_id(&cp->last, cp->repo, cp->run_ref) == 0 ||
	                (legacy &&
	                 git_reference_name_to_id(&cp->last, cp->repo, "refs/pevtui/last") == 0);
	/* A store whose newest checkpoint was lost still takes checkpoints, unchained. */
	if (cp->have_last && (git_repository_odb(&odb, cp->repo) < 0 ||
	                      !git_odb_exists(odb, &cp->last)))
		cp->have_last = false;
	git_odb_free(odb);
}

/* Everything of an open store but the workspace's side; false + *err. */
static bool store_attach(struct checkpoints *cp, const char *dir, bool legacy, char **err)
{
	char *objects, *lock;

	if (!legacy && !cp_make_store_dir(dir, err))
		return false;
	/* Shared by every run on the workspace; --prune takes it exclusive. */
	cp->lock_fd = cp_store_lock(dir, LOCK_SH);
	if (cp->lock_fd < 0) {
		cp_set_err(err, "checkpoints: cannot lock the store %s: %s", dir, strerror(errno));
		return false;
	}
	/* A run folder has one pevtui at a time (runlock.h): its ref's lock file is what a
	 * killed one left behind. */
	lock = xasprintf("%s/%s.lock", dir, cp->run_ref);
	unlink(lock);
	free(lock);
	cp->repo = open_or_init(dir, cp->lock_fd, err);
	if (!cp->repo)
		return false;
	objects = xasprintf("%s/objects", dir);
	cp->pack = pack_open(objects);
	if (!cp->pack) {
		cp_set_err(err, "checkpoints: cannot open the store's objects %s: %s", objects,
		           strerror(errno));
		free(objects);
		return false;
	}
	free(objects);
	cp->store_dir = xstrdup(dir);
	find_last(cp, legacy);
	cp_statcache_load(cp);
	return true;
}

static struct checkpoints *cp_new(void)
{
	struct checkpoints *cp = xcalloc(1, sizeof(*cp));

	pthread_mutex_init(&cp->lock, NULL);
	cp->lock_fd = -1;
	cp->max_file = CP_MAX_FILE_DEFAULT;
	cp->max_total = CP_MAX_TOTAL_DEFAULT;
	return cp;
}

struct checkpoints *checkpoint_open(const char *run_dir, const char *ws_path, char **err)
{
	struct checkpoints *cp;
	struct stat st;
	bool legacy = false;
	char *dir;

	pthread_once(&git_once, git_setup);
	if (stat(ws_path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cp_set_err(err, "checkpoints: the workspace %s is not a folder", ws_path);
		return NULL;
	}
	/* A resumed run keeps its store (an older run its own checkpoints.git). */
	dir = checkpoint_run_store(run_dir, &legacy);
	if (!dir)
		dir = cp_store_for(ws_path, err);
	if (!dir)
		return NULL;
	cp = cp_new();
	cp->run_ref = cp_run_ref(run_dir);
	if (!store_attach(cp, dir, legacy, err) ||
	    (!legacy && !cp_name_run_store(run_dir, dir, err))) {
		free(dir);
		checkpoint_close(cp);
		return NULL;
	}
	free(dir);
	if (git_repository_open_bare(&cp->ign, cp->store_dir) < 0 ||
	    git_repository_set_workdir(cp->ign, ws_path, 0) < 0) {
		cp_set_err(err, "checkpoints: cannot use the workspace %s: %s", ws_path,
		           cp_git_why());
		checkpoint_close(cp);
		return NULL;
	}
	cp->ws_path = xstrdup(ws_path);
	cp->run_rel = inside(ws_path, run_dir);
	return cp;
}

bool cp_store_gone(const struct checkpoints *cp)
{
	char *objects = xasprintf("%s/objects", cp->store_dir);
	struct stat st;
	bool gone = stat(objects, &st) < 0 && errno == ENOENT;

	free(objects);
	return gone;
}

bool cp_store_reopen(struct checkpoints *cp, char **err)
{
	char *dir = cp->store_dir;

	pack_close(cp->pack);
	cp->pack = NULL;
	git_repository_free(cp->ign);
	git_repository_free(cp->repo);
	cp->ign = cp->repo = NULL;
	if (cp->lock_fd >= 0)
		close(cp->lock_fd);
	cp->lock_fd = -1;
	cp->store_dir = NULL;
	/* what the lost store held is unknown now: nothing of it is trusted */
	cp_cache_free(cp->cache, cp->n_cache);
	cp->cache = NULL;
	cp->n_cache = 0;
	cp_memo_free(cp->trees, cp->n_trees);
	cp->trees = NULL;
	cp->n_trees = 0;
	cp->have_last = cp->last_known = false;
	if (!store_attach(cp, dir, false, err)) {
		/* every later take fails the same way, with this */
		cp->off = xasprintf("the checkpoint store %s could not be made again: this run "
		                    "goes on without checkpoints",
		                    dir);
		if (!cp->store_dir)
			cp->store_dir = dir;
		else
			free(dir);
		return false;
	}
	free(dir);
	if (git_repository_open_bare(&cp->ign, cp->store_dir) < 0 ||
	    git_repository_set_workdir(cp->ign, cp->ws_path, 0) < 0) {
		cp_set_err(err, "checkpoints: cannot use the workspace %s: %s", cp->ws_path,
		           cp_git_why());
		return false;
	}
	return true;
}

void checkpoint_close(struct checkpoints *cp)
{
	if (!cp)
		return;
	/* Only a store this process took a checkpoint in has a cache worth keeping. */
	if (cp->pack && cp->last_known && !cp->off)
		cp_statcache_save(cp);
	pack_close(cp->pack);
	strvec_clear(&cp->exclude);
	git_repository_free(cp->ign);
	git_repository_free(cp->repo);
	if (cp->lock_fd >= 0)
		close(cp->lock_fd);
	cp_cache_free(cp->cache, cp->n_cache);
	cp_memo_free(cp->trees, cp->n_trees);
	for (size_t i = 0; i < cp->n_series; i++)
		cp_series_free(&cp->series[i]);
	free(cp->series);
	strvec_clear(&cp->active);
	strset_clear(&cp->shared);
	strset_clear(&cp->foreign);
	strset_clear(&cp->writes);
	strvec_clear(&cp->writes_any);
	strvec_clear(&cp->last_skipped);
	strvec_clear(&cp->last_excluded);
	free(cp->last_meta);
	free(cp->ws_path);
	free(cp->run_rel);
	free(cp->store_dir);
	free(cp->run_ref);
	free(cp->off);
	pthread_mutex_destroy(&cp->lock);
	free(cp);
}

bool checkpoint_is_off(struct checkpoints *cp)
{
	bool off;

	cp_lock(cp);
	off = cp->off != NULL;
	cp_unlock(cp);
	return off;
}

void checkpoint_set_limits(struct checkpoints *cp, uint64_t max_file, uint64_t max_total)
{
	cp_lock(cp);
	if (max_file)
		cp->max_file = max_file;
	if (max_total)
		cp->max_total = max_total;
	cp_unlock(cp);
}

void checkpoint_set_exclude(struct checkpoints *cp, const struct strvec *patterns)
{
	cp_lock(cp);
	strvec_clear(&cp->exclude);
	for (size_t i = 0; patterns && i < patterns->n; i++)
		strvec_push(&cp->exclude, patterns->v[i]);
	cp_unlock(cp);
}

void cp_snap_release(struct snap *s)
{
	git_tree_free(s->tree);
	git_commit_free(s->commit);
	strvec_clear(&s->left_out);
	strvec_clear(&s->excluded);
	cp_meta_release(&s->meta);
	memset(s, 0, sizeof(*s));
}

bool cp_snap_load(struct checkpoints *cp, const char *id, struct snap *s, char **err)
{
	git_oid oid;
	const char *msg, *js;

	memset(s, 0, sizeof(*s));
	if (!id || strlen(id) != CP_ID_LEN || git_oid_fromstr(&oid, id) < 0 ||
	    git_commit_lookup(&s->commit, cp->repo, &oid) < 0 ||
	    git_commit_tree(&s->tree, s->commit) < 0) {
		cp_set_err(err, "checkpoints: no checkpoint %.40s in the store",
		           id ? id : "(none)");
		cp_snap_release(s);
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
		cp_meta_from_json(&s->meta, o);
		cJSON_Delete(o);
	}
	return true;
}

bool cp_in_vec(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* ------------------------------------------------------------ reading only */

struct checkpoints *checkpoint_open_read(const char *run_dir, char **err)
{
	struct checkpoints *cp;
	bool legacy = false;
	char *dir = checkpoint_run_store(run_dir, &legacy), *ref;
	git_repository *repo = NULL;
	git_oid last;
	struct stat st;

	pthread_once(&git_once, git_setup);
	/* Nothing is created, nothing unlocked: the run may be live in another pevtui. */
	if (!dir) {
		cp_set_err(err, "the run has no checkpoint store (%s has no store file)", run_dir);
		return NULL;
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cp_set_err(err, "the run's checkpoints are gone (the store %s is missing)", dir);
		free(dir);
		return NULL;
	}
	if (git_repository_open_ext(
	        &repo, dir, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL) < 0) {
		cp_set_err(err, "the checkpoint store %s cannot be read: %s", dir, cp_git_why());
		free(dir);
		return NULL;
	}
	/* A shared store without the run's ref: --prune dropped its checkpoints. */
	ref = cp_run_ref(run_dir);
	if (!legacy && git_reference_name_to_id(&last, repo, ref) < 0) {
		cp_set_err(err, "the run's checkpoints are gone (pruned from the store %s)", dir);
		git_repository_free(repo);
		free(ref);
		free(dir);
		return NULL;
	}
	cp = cp_new();
	cp->repo = repo;
	cp->store_dir = dir;
	cp->run_ref = ref;
	return cp;
}

bool checkpoint_compare(struct checkpoints *cp, const char *a, const char *b, int *order,
                        char **err)
{
	struct snap sa, sb;
	struct timespec ta, tb;
	unsigned long qa, qb;

	*order = 0;
	cp_lock(cp);
	if (!cp_snap_load(cp, a, &sa, err)) {
		cp_unlock(cp);
		return false;
	}
	if (!cp_snap_load(cp, b, &sb, err)) {
		cp_snap_release(&sa);
		cp_unlock(cp);
		return false;
	}
	ta = sa.taken;
	tb = sb.taken;
	qa = sa.seq;
	qb = sb.seq;
	if (cp_older(&ta, &tb))
		*order = -1;
	else if (cp_older(&tb, &ta))
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
	cp_snap_release(&sa);
	cp_snap_release(&sb);
	cp_unlock(cp);
	return true;
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
		cp_set_err(err, "checkpoints: \"%s\" is not a checkpoint id (7 to 40 hex digits)",
		           prefix ? prefix : "");
		return false;
	}
	cp_lock(cp);
	rc = git_oid_fromstrn(&oid, prefix, n);
	if (rc == 0)
		rc = git_object_lookup_prefix(&obj, cp->repo, &oid, n, GIT_OBJECT_COMMIT);
	if (rc == 0)
		git_oid_tostr(out, CP_ID_LEN + 1, git_object_id(obj));
	else if (rc == GIT_EAMBIGUOUS)
		cp_set_err(err, "checkpoints: %s names more than one checkpoint: give more digits",
		           prefix);
	else
		cp_set_err(err, "checkpoints: no checkpoint %s in the store", prefix);
	git_object_free(obj);
	cp_unlock(cp);
	return rc == 0;
}

bool checkpoint_run_has_store(const char *run_dir)
{
	char *err = NULL;
	struct checkpoints *cp = checkpoint_open_read(run_dir, &err);

	free(err);
	checkpoint_close(cp);
	return cp != NULL;
}
