/* attribution — whose change a path is when several steps' attempts ran at once.
 *
 * A step tells the store, before each tool call, what the call may change: the path its
 * own file tool writes (write_file), or anything (a shell command, an MCP call, a tool it
 * does not know). A path that changes between two checkpoints while more than one attempt
 * is between its own two is the one step's that could have changed it: the other steps
 * whose windows saw it never take it for theirs (not in their step.changes, not restored
 * before their next attempt). When more than one could have, or none said it might (the
 * operator in an editor), the store cannot tell: it is shared by all of them. */
#include "config.h"
#include "checkpoint_store.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* Keys of the sets: "STEP\nPATH" (a step id has no newline; a path may, so STEP first). */
static char *key_of(const char *step_id, const char *path)
{
	return xasprintf("%s\n%s", step_id, path);
}

static void add(struct strset *set, const char *step_id, const char *path)
{
	char *key = key_of(step_id, path);

	strset_add(set, key);
	free(key);
}

static bool has(const struct strset *set, const char *step_id, const char *path)
{
	char *key = key_of(step_id, path);
	bool yes = strset_has(set, key);

	free(key);
	return yes;
}

static bool of_step(const char *key, void *step_id)
{
	size_t n = strlen(step_id);

	return !strncmp(key, step_id, n) && key[n] == '\n';
}

bool cp_is_shared(const struct checkpoints *cp, const char *step_id, const char *path)
{
	return has(&cp->shared, step_id, path);
}

bool cp_is_foreign(const struct checkpoints *cp, const char *step_id, const char *path)
{
	return has(&cp->foreign, step_id, path) && !has(&cp->shared, step_id, path);
}

void cp_shared_one(struct checkpoints *cp, const char *step_id, const char *path)
{
	add(&cp->shared, step_id, path);
}

void cp_shared_beside(struct checkpoints *cp, const char *step_id, const struct strvec *paths)
{
	for (size_t a = 0; a < cp->active.n; a++)
		if (!step_id || strcmp(cp->active.v[a], step_id))
			for (size_t p = 0; p < paths->n; p++)
				add(&cp->shared, cp->active.v[a], paths->v[p]);
}

/* Whether the active step may have changed `path` in its attempt, by what it said. */
static bool may_have(const struct checkpoints *cp, const char *step_id, const char *path)
{
	for (size_t i = 0; i < cp->writes_any.n; i++)
		if (!strcmp(cp->writes_any.v[i], step_id))
			return true;
	return has(&cp->writes, step_id, path);
}

void cp_attribute(struct checkpoints *cp, const struct strvec *paths)
{
	for (size_t p = 0; p < paths->n; p++) {
		const char *path = paths->v[p], *only = NULL;
		size_t n = 0;

		for (size_t a = 0; a < cp->active.n; a++)
			if (may_have(cp, cp->active.v[a], path)) {
				only = cp->active.v[a];
				n++;
			}
		for (size_t a = 0; a < cp->active.n; a++) {
			const char *s = cp->active.v[a];
			if (n != 1)
				add(&cp->shared, s, path);
			else if (strcmp(s, only))
				add(&cp->foreign, s, path);
		}
	}
}

void cp_attempt_begins(struct checkpoints *cp, const char *step_id)
{
	strset_remove_if(&cp->writes, of_step, (void *)step_id);
	strset_remove_if(&cp->foreign, of_step, (void *)step_id);
	for (size_t i = 0; i < cp->writes_any.n; i++)
		if (!strcmp(cp->writes_any.v[i], step_id)) {
			free(cp->writes_any.v[i]);
			cp->writes_any.v[i] = cp->writes_any.v[--cp->writes_any.n];
			break;
		}
}

void cp_step_forget(struct checkpoints *cp, const char *step_id)
{
	cp_attempt_begins(cp, step_id);
	strset_remove_if(&cp->shared, of_step, (void *)step_id);
}

/* The path as a snapshot names it: no empty or "." component. NULL for a path the
 * workspace cannot hold (absolute, "..", empty): nothing to tell. */
static char *snapshot_path(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = path;

	if (!path || *path == '/')
		return NULL;
	strbuf_init(&sb);
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 2 && !strncmp(p, "..", 2)) {
			strbuf_release(&sb);
			return NULL;
		}
		if (n && !(n == 1 && *p == '.')) {
			if (sb.len)
				strbuf_addc(&sb, '/');
			strbuf_add(&sb, p, n);
		}
		p += n;
		if (*p == '/')
			p++;
	}
	if (!sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* A path another step alone changed earlier in this attempt may be this step's too once
 * it says it writes it: from then on it is shared, never left out of this step's changes
 * (its own later write is there). */
struct to_shared {
	struct strset *shared;
	const char *step_id;
};

static bool foreign_to_shared(const char *key, void *arg)
{
	struct to_shared *t = arg;

	if (!of_step(key, (void *)t->step_id))
		return false;
	strset_add(t->shared, key);
	return true;
}

void checkpoint_step_writes(struct checkpoints *cp, const char *step_id, const char *path)
{
	char *rel = snapshot_path(path);

	if (!rel)
		return;
	cp_lock(cp);
	add(&cp->writes, step_id, rel);
	if (has(&cp->foreign, step_id, rel))
		add(&cp->shared, step_id, rel);
	cp_unlock(cp);
	free(rel);
}

void checkpoint_step_writes_any(struct checkpoints *cp, const char *step_id)
{
	struct to_shared t = {&cp->shared, step_id};

	cp_lock(cp);
	strset_remove_if(&cp->foreign, foreign_to_shared, &t);
	if (!cp_in_vec(&cp->writes_any, step_id))
		strvec_push(&cp->writes_any, step_id);
	cp_unlock(cp);
}

bool checkpoint_path_shared(struct checkpoints *cp, const char *step_id, const char *path)
{
	bool shared;

	cp_lock(cp);
	shared = cp_is_shared(cp, step_id, path);
	cp_unlock(cp);
	return shared;
}
