/* schemas — tools' schemas printed once per run, looked up by their text. */
#include "config.h"

#include "schemas.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "xalloc.h"

struct entry {
	uint64_t hash; /* of src, to pass over the others without comparing them */
	char *src;
	char *text; /* NULL: src is not JSON */
	bool object;
};

/* A run offers a few dozen tools at most (MCP servers' included), each with one schema:
 * a linear search over their hashes is all it takes. */
struct schemas {
	pthread_mutex_t lock;
	struct entry *v;
	size_t n, cap;
};

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
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static uint64_t fnv1a(const char *p)
{
	uint64_t h = 14695981039346656037ull;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

/* Under the lock. The entry's text (not the entry: the array may move) outlives it. */
static bool find(const struct schemas *s, uint64_t h, const char *src, const char **text,
		 bool *object)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].hash == h && !strcmp(s->v[i].src, src)) {
			*text = s->v[i].text;
			*object = s->v[i].object;
			return true;
		}
	return false;
}

const char *schemas_print(struct schemas *s, const char *src, bool *is_object)
{
	struct entry made = {0};
	const char *text = NULL;
	bool found;
	cJSON *v;

	*is_object = false;
	if (!src)
		return NULL;
	made.hash = fnv1a(src);
	if (pthread_mutex_lock(&s->lock))
		fatal("schemas: cannot lock");
	found = find(s, made.hash, src, &text, is_object);
	pthread_mutex_unlock(&s->lock);
	if (found)
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
	if (!find(s, made.hash, src, &text, is_object)) {
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
