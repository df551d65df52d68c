/* meta — what a checkpoint records beside git's tree, in its commit message: the rules it
 * was taken by ([checkpoints] exclude, max_file, max_total), every path it left out and
 * why, and each file's permission bits (git's tree keeps only the exec bit). A rewind
 * takes the rules from the checkpoint it goes back to, never from today's config; a path
 * the checkpoint left out is never removed or overwritten; modes come back exactly. */
#include "config.h"
#include "checkpoint_store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "xalloc.h"

#define CP_LEFT_MAX 20000 /* paths left out named one by one; past that, "left_cut" */

void cp_meta_release(struct cp_meta *m)
{
	strvec_clear(&m->exclude);
	for (size_t i = 0; i < m->n_left; i++) {
		free(m->left[i].path);
		free(m->left[i].why);
	}
	free(m->left);
	for (size_t i = 0; i < m->n_perms; i++)
		free(m->perms[i].path);
	free(m->perms);
	memset(m, 0, sizeof(*m));
}

void cp_meta_left(struct cp_meta *m, const char *path, bool dir, const char *fmt, ...)
{
	va_list ap;
	struct cp_left *l;

	m->left_known = true;
	if (m->n_left >= CP_LEFT_MAX) {
		m->left_cut = true;
		return;
	}
	m->left = xgrow(m->left, &m->cap_left, m->n_left + 1, sizeof(*m->left));
	l = &m->left[m->n_left++];
	l->path = dir ? xasprintf("%s/", path) : xstrdup(path);
	va_start(ap, fmt);
	l->why = xvasprintf(fmt, ap);
	va_end(ap);
}

void cp_meta_perm(struct cp_meta *m, const char *path, unsigned perm, bool exec)
{
	struct cp_perm *p;

	m->perms_known = true;
	m->perms = xgrow(m->perms, &m->cap_perms, m->n_perms + 1, sizeof(*m->perms));
	p = &m->perms[m->n_perms++];
	p->path = xstrdup(path);
	p->perm = (perm & 07777) | (exec ? CP_PERM_EXEC_TAG : 0);
}

/* The permission bits most files of a kind (exec or not) have: written once, the rest
 * as exceptions, so a workspace under any umask costs a few bytes per checkpoint. */
static unsigned most_common(const struct cp_meta *m, bool exec, unsigned fallback)
{
	unsigned counts[8] = {0}, vals[8] = {0}, best = fallback, best_n = 0;
	size_t used = 0;

	for (size_t i = 0; i < m->n_perms; i++) {
		unsigned p = m->perms[i].perm;
		size_t k;
		if (((p & CP_PERM_EXEC_TAG) != 0) != exec)
			continue;
		p &= 07777;
		for (k = 0; k < used && vals[k] != p; k++)
			;
		if (k == used) {
			if (used == 8)
				continue; /* the eight first kinds are enough to find the usual one */
			vals[used++] = p;
		}
		if (++counts[k] > best_n) {
			best_n = counts[k];
			best = p;
		}
	}
	return best;
}

static cJSON *octal(unsigned v)
{
	char s[16];

	snprintf(s, sizeof(s), "%o", v & 07777);
	return cJSON_CreateString(s);
}

void cp_meta_to_json(const struct cp_meta *m, cJSON *o)
{
	cJSON *r = cJSON_AddObjectToObject(o, "rules"), *a, *perm, *other;
	unsigned pf = most_common(m, false, 0644), px = most_common(m, true, 0755);

	a = cJSON_AddArrayToObject(r, "exclude");
	for (size_t i = 0; i < m->exclude.n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(m->exclude.v[i]));
	cJSON_AddNumberToObject(r, "max_file", (double)m->max_file);
	cJSON_AddNumberToObject(r, "max_total", (double)m->max_total);
	a = cJSON_AddArrayToObject(o, "left");
	for (size_t i = 0; i < m->n_left; i++) {
		cJSON *e = cJSON_CreateArray();
		cJSON_AddItemToArray(e, cJSON_CreateString(m->left[i].path));
		cJSON_AddItemToArray(e, cJSON_CreateString(m->left[i].why));
		cJSON_AddItemToArray(a, e);
	}
	if (m->left_cut)
		cJSON_AddBoolToObject(o, "left_cut", true);
	perm = cJSON_AddObjectToObject(o, "perm");
	cJSON_AddItemToObject(perm, "file", octal(pf));
	cJSON_AddItemToObject(perm, "exec", octal(px));
	other = cJSON_AddObjectToObject(perm, "other");
	for (size_t i = 0; i < m->n_perms; i++) {
		unsigned p = m->perms[i].perm;
		if ((p & 07777) != ((p & CP_PERM_EXEC_TAG) ? px : pf))
			cJSON_AddItemToObject(other, m->perms[i].path, octal(p));
	}
}

static bool parse_octal(const cJSON *v, unsigned *out)
{
	char *end;
	unsigned long n;

	if (!cJSON_IsString(v) || !*v->valuestring)
		return false;
	n = strtoul(v->valuestring, &end, 8);
	if (*end || n > 07777)
		return false;
	*out = (unsigned)n;
	return true;
}

static int left_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cp_left *)a)->path, ((const struct cp_left *)b)->path);
}

static int perm_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cp_perm *)a)->path, ((const struct cp_perm *)b)->path);
}

void cp_meta_from_json(struct cp_meta *m, const cJSON *o)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rules"), *it;
	const cJSON *left = cJSON_GetObjectItemCaseSensitive(o, "left");
	const cJSON *perm = cJSON_GetObjectItemCaseSensitive(o, "perm");
	double n;

	memset(m, 0, sizeof(*m));
	if (cJSON_IsObject(r)) {
		m->has_rules = true;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(r, "exclude"))
			if (cJSON_IsString(it))
				strvec_push(&m->exclude, it->valuestring);
		if (jsonx_num(r, "max_file", &n) && n > 0)
			m->max_file = (uint64_t)n;
		if (jsonx_num(r, "max_total", &n) && n > 0)
			m->max_total = (uint64_t)n;
	}
	if (cJSON_IsArray(left)) {
		m->left_known = true;
		m->left_cut = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "left_cut"));
		cJSON_ArrayForEach(it, left)
		{
			const cJSON *p = cJSON_GetArrayItem(it, 0), *w = cJSON_GetArrayItem(it, 1);
			if (!cJSON_IsString(p))
				continue;
			m->left = xgrow(m->left, &m->cap_left, m->n_left + 1, sizeof(*m->left));
			m->left[m->n_left].path = xstrdup(p->valuestring);
			m->left[m->n_left].why =
			    xstrdup(cJSON_IsString(w) ? w->valuestring : "on purpose");
			m->n_left++;
		}
		if (m->n_left > 1)
			qsort(m->left, m->n_left, sizeof(*m->left), left_cmp);
	}
	if (cJSON_IsObject(perm) &&
	    parse_octal(cJSON_GetObjectItemCaseSensitive(perm, "file"), &m->perm_file) &&
	    parse_octal(cJSON_GetObjectItemCaseSensitive(perm, "exec"), &m->perm_exec)) {
		m->perms_known = true;
		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(perm, "other"))
		{
			unsigned v;
			if (!it->string || !parse_octal(it, &v))
				continue;
			m->perms = xgrow(m->perms, &m->cap_perms, m->n_perms + 1, sizeof(*m->perms));
			m->perms[m->n_perms].path = xstrdup(it->string);
			m->perms[m->n_perms].perm = v;
			m->n_perms++;
		}
		if (m->n_perms > 1)
			qsort(m->perms, m->n_perms, sizeof(*m->perms), perm_cmp);
	}
}

static const struct cp_left *left_find(const struct cp_meta *m, const char *path)
{
	struct cp_left key = {.path = (char *)path};

	return m->n_left ? bsearch(&key, m->left, m->n_left, sizeof(key), left_cmp) : NULL;
}

const char *cp_meta_left_why(const struct cp_meta *m, const char *path)
{
	const struct cp_left *l = left_find(m, path);
	char *copy;
	const char *why = NULL;

	if (l)
		return l->why;
	/* A folder on the way, named "dir/". */
	copy = xstrdup(path);
	for (char *s = strchr(copy, '/'); s && !why; s = strchr(s + 1, '/')) {
		char c = s[1];
		s[1] = '\0';
		l = left_find(m, copy);
		if (l)
			why = l->why;
		s[1] = c;
	}
	free(copy);
	return why;
}

unsigned cp_meta_perm_of(const struct cp_meta *m, const char *path, unsigned git_mode)
{
	struct cp_perm key = {.path = (char *)path}, *p;

	if (!m->perms_known ||
	    (git_mode != GIT_FILEMODE_BLOB && git_mode != GIT_FILEMODE_BLOB_EXECUTABLE))
		return 0;
	p = m->n_perms ? bsearch(&key, m->perms, m->n_perms, sizeof(key), perm_cmp) : NULL;
	if (p)
		return p->perm & 07777;
	return git_mode == GIT_FILEMODE_BLOB_EXECUTABLE ? m->perm_exec : m->perm_file;
}

void cp_rules_from(struct cp_meta *m, const struct checkpoints *cp)
{
	strvec_clear(&m->exclude);
	for (size_t i = 0; i < cp->exclude.n; i++)
		strvec_push(&m->exclude, cp->exclude.v[i]);
	m->max_file = cp->max_file;
	m->max_total = cp->max_total;
	m->has_rules = true;
}

bool checkpoint_use_rules(struct checkpoints *cp, const char *id, const struct strvec *also,
                          char **err)
{
	struct snap s;
	bool had;

	cp_lock(cp);
	if (!cp_snap_load(cp, id, &s, err)) {
		cp_unlock(cp);
		return false;
	}
	had = s.meta.has_rules;
	if (had) {
		strvec_clear(&cp->exclude);
		for (size_t i = 0; i < s.meta.exclude.n; i++)
			strvec_push(&cp->exclude, s.meta.exclude.v[i]);
		for (size_t i = 0; also && i < also->n; i++)
			if (!cp_in_vec(&cp->exclude, also->v[i]))
				strvec_push(&cp->exclude, also->v[i]);
		if (s.meta.max_file)
			cp->max_file = s.meta.max_file;
		if (s.meta.max_total)
			cp->max_total = s.meta.max_total;
	}
	cp_snap_release(&s);
	cp_unlock(cp);
	return true;
}

void checkpoint_rules(struct checkpoints *cp, struct strvec *exclude, uint64_t *max_file,
                      uint64_t *max_total)
{
	cp_lock(cp);
	for (size_t i = 0; i < cp->exclude.n; i++)
		strvec_push(exclude, cp->exclude.v[i]);
	*max_file = cp->max_file;
	*max_total = cp->max_total;
	cp_unlock(cp);
}
