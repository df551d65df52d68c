/* schemas — tools' schemas (and texts every call repeats) printed once per run, looked up
 * by their text. */
#include "config.h"

#include "schemas.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

struct entry {
	size_t len; /* of src, to pass over the others without comparing them */
	char *src;
	char *text; /* NULL: src is not JSON */
	bool object;
};

/* A run offers a few dozen tools at most (MCP servers' included), each with one schema,
 * and its roles' system prompts: a linear search over their lengths is all it takes
 * (a hash would read the whole text, as the comparison of the one that matches does). */
struct schemas {
	pthread_mutex_t lock;
	struct entry *v;      /* schemas */
	size_t n, cap;
	struct entry *str;    /* texts as JSON strings (schemas_string) */
	size_t n_str, cap_str;
};

/* Past this many texts a run keeps, schemas_string keeps no more (a text that is not the
 * same in every call should not be given to it, but nothing grows without a bound). */
#define STRINGS_MAX 256

struct schemas *schemas_new(void)
{
	struct schemas *s = xcalloc(1, sizeof(*s));

	if (pthread_mutex_init(&s->lock, NULL))
		fatal("schemas: cannot create a mutex");
	return s;
}

void schemas_free(struct schemas *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].src);
		free(s->v[i].text);
	}
	free(s->v);
	for (size_t i = 0; i < s->n_str; i++) {
		free(s->str[i].src);
		free(s->str[i].text);
	}
	free(s->str);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Under the lock: the entry of v[0..n) for src (len bytes), or NULL. Its text (not the
 * entry: the array may move) outlives the lock. */
static const struct entry *find(const struct entry *v, size_t n, size_t len, const char *src)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].len == len && !memcmp(v[i].src, src, len))
			return &v[i];
	return NULL;
}

const char *schemas_print(struct schemas *s, const char *src, bool *is_object)
{
	struct entry made = {0};
	const struct entry *e;
	const char *text = NULL;
	cJSON *v;

	*is_object = false;
	if (!src)
		return NULL;
	made.len = strlen(src);
	if (pthread_mutex_lock(&s->lock))
		fatal("schemas: cannot lock");
	e = find(s->v, s->n, made.len, src);
	if (e) {
		text = e->text;
		*is_object = e->object;
	}
	pthread_mutex_unlock(&s->lock);
	if (e)
		return text;
	/* Parsed outside the lock: two threads meeting a new schema at once both parse it,
	 * and the first to come back keeps its text. */
	v = cJSON_Parse(src);
	made.object = cJSON_IsObject(v);
	if (v) {
		char *p = cJSON_PrintUnformatted(v);

		if (!p)
			fatal("schemas: out of memory");
		made.text = xstrdup(p); /* cJSON's allocator may not be ours */
		cJSON_free(p);
		cJSON_Delete(v);
	}
	if (pthread_mutex_lock(&s->lock))
		fatal("schemas: cannot lock");
	e = find(s->v, s->n, made.len, src);
	if (e) {
		text = e->text;
		*is_object = e->object;
	} else {
		made.src = xstrdup(src);
		s->v = xgrow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
		s->v[s->n++] = made;
		text = made.text;
		*is_object = made.object;
		made.text = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(made.text);
	return text;
}

const char *schemas_object(struct schemas *s, const char *src)
{
	bool object;
	const char *text = schemas_print(s, src, &object);

	return object ? text : "{\"type\":\"object\"}";
}

const char *schemas_string(struct schemas *s, const char *src)
{
	struct entry made = {0};
	const struct entry *e;
	const char *text = NULL;
	struct strbuf sb;

	if (!src)
		return NULL;
	made.len = strlen(src);
	if (pthread_mutex_lock(&s->lock))
		fatal("schemas: cannot lock");
	e = find(s->str, s->n_str, made.len, src);
	if (e)
		text = e->text;
	pthread_mutex_unlock(&s->lock);
	if (text)
		return text;
	strbuf_init(&sb);
	strbuf_add_json(&sb, src, made.len, 0);
	made.text = strbuf_detach(&sb);
	if (pthread_mutex_lock(&s->lock))
		fatal("schemas: cannot lock");
	e = find(s->str, s->n_str, made.len, src);
	if (e) {
		text = e->text;
	} else if (s->n_str < STRINGS_MAX) {
		made.src = xstrndup(src, made.len);
		s->str = xgrow(s->str, &s->cap_str, s->n_str + 1, sizeof(*s->str));
		s->str[s->n_str++] = made;
		text = made.text;
		made.text = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(made.text);
	return text;
}
