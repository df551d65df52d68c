/* requests — request bodies kept per call in RUNDIR/requests/, and read back by name. */
#include "config.h"

#include "requests.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "attempts.h"
#include "fdio.h"
#include "provider.h"
#include "sandbox.h"
#include "schemas.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

struct requests {
	char *dir; /* RUN_DIR/requests, NULL when not kept */
	char *run_dir;
	pthread_mutex_t lock;
	unsigned long next; /* the next SEQ */
	size_t bytes;       /* written so far, this and earlier segments */
	size_t max;
	bool made;          /* the folder exists */
	bool capped;
	char *trouble;      /* the first reason requests were not kept, until told */
	bool told;
};

/* The highest SEQ and the bytes of the requests a resumed run kept already. */
static void scan(struct requests *rq)
{
	int dfd = open(rq->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strvec names = STRVEC_INIT;

	if (dfd < 0)
		return;
	rq->made = true;
	if (sandbox_read_dir(dfd, &names)) {
		for (size_t i = 0; i < names.n; i++) {
			struct request_ref r;
			struct stat st;

			if (!requests_parse_name(names.v[i], &r))
				continue;
			if (r.seq >= rq->next)
				rq->next = r.seq + 1;
			if (fstatat(dfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
				rq->bytes += (size_t)st.st_size;
			free(r.role);
			free(r.step);
			free(r.name);
		}
	}
	strvec_clear(&names);
	close(dfd);
}

struct requests *requests_open(const char *run_dir, bool keep, size_t max_bytes)
{
	struct requests *rq = xcalloc(1, sizeof(*rq));

	rq->max = max_bytes ? max_bytes : REQUESTS_MAX_BYTES;

	if (pthread_mutex_init(&rq->lock, NULL))
		fatal("requests: cannot create a mutex");
	rq->next = 1;
	if (keep && run_dir) {
		rq->run_dir = xstrdup(run_dir);
		rq->dir = xasprintf("%s/" REQUESTS_DIR, run_dir);
		scan(rq);
	}
	return rq;
}

void requests_close(struct requests *rq)
{
	if (!rq)
		return;
	pthread_mutex_destroy(&rq->lock);
	free(rq->trouble);
	free(rq->dir);
	free(rq->run_dir);
	free(rq);
}

bool requests_capped(const struct requests *rq)
{
	return rq && rq->capped;
}

/* Keeps the first trouble for requests_take_notice (under the lock). */
static void trouble(struct requests *rq, const char *why)
{
	if (!rq->trouble && !rq->told)
		rq->trouble = xstrdup(why);
}

char *requests_take_notice(struct requests *rq)
{
	char *t;

	if (!rq)
		return NULL;
	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	t = rq->trouble;
	rq->trouble = NULL;
	if (t)
		rq->told = true;
	pthread_mutex_unlock(&rq->lock);
	return t;
}

char *requests_name(struct requests *rq, const char *role, const char *step_id, int attempt)
{
	char *step, *name = NULL;

	if (!rq || !rq->dir)
		return NULL;
	step = step_id ? attempts_id_component(step_id) : xstrdup("~");
	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	if (!rq->capped)
		name = xasprintf(REQUESTS_DIR "/%06lu-%s-%s-%d.json", rq->next++, role, step,
				 step_id ? attempt : 0);
	pthread_mutex_unlock(&rq->lock);
	free(step);
	return name;
}

bool requests_write(struct requests *rq, const char *name, const char *body, size_t len,
		    char **err)
{
	char *path;
	int fd;
	bool ok = true;

	*err = NULL;
	if (!rq || !rq->dir || !name || strncmp(name, REQUESTS_DIR "/", sizeof(REQUESTS_DIR)) ||
	    strchr(name + sizeof(REQUESTS_DIR), '/')) {
		*err = xstrdup("not a request of this run");
		return false;
	}
	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	if (rq->bytes + len > rq->max) {
		rq->capped = true;
		*err = xasprintf("the requests sent to the models are no longer kept in the run "
				 "folder: they reached the cap of %zu MiB",
				 rq->max >> 20);
		trouble(rq, *err);
		pthread_mutex_unlock(&rq->lock);
		return false;
	}
	rq->bytes += len;
	if (!rq->made) {
		if (mkdir(rq->dir, 0700) < 0 && errno != EEXIST)
			ok = false;
		rq->made = ok;
	}
	pthread_mutex_unlock(&rq->lock);
	path = xasprintf("%s/%s", rq->run_dir, name);
	fd = ok ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
	if (fd < 0) {
		*err = xasprintf("cannot keep the request sent to the model in %s: %s", path,
				 strerror(errno));
		free(path);
		pthread_mutex_lock(&rq->lock);
		trouble(rq, *err);
		pthread_mutex_unlock(&rq->lock);
		return false;
	}
	{
		int e = fd_write_all(fd, body, len);

		if (e) {
			ok = false;
			errno = e;
		}
	}
	if (close(fd) != 0)
		ok = false;
	if (!ok) {
		*err = xasprintf("cannot keep the request sent to the model in %s: %s", path,
				 strerror(errno));
		pthread_mutex_lock(&rq->lock);
		trouble(rq, *err);
		pthread_mutex_unlock(&rq->lock);
	}
	free(path);
	return ok;
}

/* ---- a body for providers that send none ---- */

/*
 * The body is written straight into one buffer, byte for byte what cJSON_PrintUnformatted
 * printed of the tree this used to build (the kept files do not change), without building
 * and freeing that tree for every call. A tool's schema is parsed and printed once per
 * run: it is the same text in every executor call.
 */

/* A string as cJSON prints it: '"', '\\' and the C0 controls escaped, nothing else. */
static void put_str(struct strbuf *sb, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	strbuf_addc(sb, '"');
	for (;;) {
		const unsigned char *run = p;
		char esc[6] = {'\\'};
		size_t n = 2;

		while (*p > 31 && *p != '"' && *p != '\\')
			p++;
		if (p > run)
			strbuf_add(sb, run, (size_t)(p - run));
		if (!*p)
			break;
		switch (*p) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[*p >> 4];
			esc[5] = hex[*p & 15];
			n = 6;
			break;
		}
		strbuf_add(sb, esc, n);
		p++;
	}
	strbuf_addc(sb, '"');
}

/* ,"key":"value" (or without the comma); a NULL value leaves the member out, as
 * cJSON_AddStringToObject did. */
static void put_member(struct strbuf *sb, bool comma, const char *key, const char *value)
{
	if (!value)
		return;
	if (comma)
		strbuf_addc(sb, ',');
	put_str(sb, key);
	strbuf_addc(sb, ':');
	put_str(sb, value);
}

/* JSON text as cJSON reprints it, or, when it does not parse, as a string. Caller frees. */
static char *json_or_string(const char *s)
{
	cJSON *v = s ? cJSON_Parse(s) : NULL;
	struct strbuf sb;
	char *p;

	if (!v) {
		strbuf_init(&sb);
		put_str(&sb, s);
		return strbuf_detach(&sb);
	}
	p = cJSON_PrintUnformatted(v);
	cJSON_Delete(v);
	if (!p)
		fatal("requests: out of memory");
	/* cJSON's allocator may not be ours: hand back memory free() takes. */
	{
		char *q = xstrdup(p);

		cJSON_free(p);
		return q;
	}
}

/* A tool's schema as printed: once per run through the run's memo (schemas.h), else for
 * this call. */
static void put_schema(struct schemas *memo, struct strbuf *sb, const char *schema)
{
	bool object;
	const char *text;
	char *made;

	if (memo) {
		text = schemas_print(memo, schema, &object);
		if (text)
			strbuf_adds(sb, text);
		else
			put_str(sb, schema);
		return;
	}
	made = json_or_string(schema);
	strbuf_adds(sb, made);
	free(made);
}

static void put_message(struct strbuf *sb, const struct llm_msg *m)
{
	char *v;

	switch (m->kind) {
	case LLM_MSG_USER:
		strbuf_adds(sb, "{\"role\":\"user\"");
		put_member(sb, true, "content", m->text ? m->text : "");
		break;
	case LLM_MSG_ASSISTANT:
		strbuf_adds(sb, "{\"role\":\"assistant\"");
		put_member(sb, true, "content", m->text ? m->text : "");
		if (m->n_calls) {
			strbuf_adds(sb, ",\"tool_calls\":[");
			for (size_t c = 0; c < m->n_calls; c++) {
				strbuf_adds(sb, c ? ",{" : "{");
				put_member(sb, false, "id", m->calls[c].id ? m->calls[c].id : "");
				put_member(sb, true, "name",
					   m->calls[c].name ? m->calls[c].name : "");
				strbuf_adds(sb, ",\"input\":");
				v = json_or_string(m->calls[c].input_json);
				strbuf_adds(sb, v);
				free(v);
				strbuf_addc(sb, '}');
			}
			strbuf_addc(sb, ']');
		}
		break;
	case LLM_MSG_TOOL_RESULTS:
		strbuf_adds(sb, "{\"role\":\"tool\",\"results\":[");
		for (size_t r = 0; r < m->n_results; r++) {
			strbuf_adds(sb, r ? ",{" : "{");
			put_member(sb, false, "call_id",
				   m->results[r].call_id ? m->results[r].call_id : "");
			put_member(sb, true, "content",
				   m->results[r].content ? m->results[r].content : "");
			strbuf_adds(sb, m->results[r].is_error ? ",\"is_error\":true}"
							       : ",\"is_error\":false}");
		}
		strbuf_addc(sb, ']');
		break;
	default:
		strbuf_addc(sb, '{');
		break;
	}
	strbuf_addc(sb, '}');
}

char *requests_body_of(const struct llm_request *req)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"pevtui_note\":\"nothing went over the wire (simulated provider): "
			 "this is the request as the engine built it\"");
	put_member(&sb, true, "model", req->model ? req->model : "");
	strbuf_addf(&sb, ",\"max_tokens\":%d", req->max_tokens);
	if (req->want_json)
		strbuf_adds(&sb, ",\"want_json\":true");
	put_member(&sb, true, "system", req->system ? req->system : "");
	strbuf_adds(&sb, ",\"tools\":[");
	for (size_t t = 0; t < req->n_tools; t++) {
		strbuf_adds(&sb, t ? ",{" : "{");
		/* cJSON_AddStringToObject left a NULL name or description out */
		put_member(&sb, false, "name", req->tools[t]->name);
		put_member(&sb, req->tools[t]->name != NULL, "description",
			   req->tools[t]->description);
		if (req->tools[t]->name || req->tools[t]->description)
			strbuf_addc(&sb, ',');
		strbuf_adds(&sb, "\"input_schema\":");
		put_schema(req->schemas, &sb, req->tools[t]->schema_json);
		strbuf_addc(&sb, '}');
	}
	strbuf_adds(&sb, "],\"messages\":[");
	for (size_t m = 0; m < req->n_msgs; m++) {
		if (m)
			strbuf_addc(&sb, ',');
		put_message(&sb, &req->msgs[m]);
	}
	strbuf_adds(&sb, "]}");
	return strbuf_detach(&sb);
}

/* ---- reading back ---- */

bool requests_parse_name(const char *file, struct request_ref *out)
{
	const char *d1, *d2, *dl, *end;
	char *stop;
	unsigned long seq;
	long attempt;
	size_t n = strlen(file);

	memset(out, 0, sizeof(*out));
	if (n < 5 || strcmp(file + n - 5, ".json"))
		return false;
	end = file + n - 5;
	d1 = strchr(file, '-');
	d2 = d1 ? strchr(d1 + 1, '-') : NULL;
	for (dl = end; dl > file && dl[-1] != '-'; dl--)
		;
	if (!d1 || !d2 || dl <= d2 + 2 || d1 == file || d2 == d1 + 1 || dl == end)
		return false;
	seq = strtoul(file, &stop, 10);
	if (stop != d1 || *file < '0' || *file > '9')
		return false;
	attempt = strtol(dl, &stop, 10);
	if (stop != end || *dl < '0' || *dl > '9' || attempt > 1000000)
		return false;
	out->seq = seq;
	out->attempt = (int)attempt;
	out->role = xstrndup(d1 + 1, (size_t)(d2 - d1 - 1));
	out->step = xstrndup(d2 + 1, (size_t)(dl - 1 - d2 - 1));
	out->name = xasprintf(REQUESTS_DIR "/%s", file);
	return true;
}

static int by_seq(const void *x, const void *y)
{
	const struct request_ref *a = x, *b = y;

	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

size_t requests_list(const char *run_dir, const char *step_id, int attempt,
		     struct request_ref **out)
{
	char *dir = xasprintf("%s/" REQUESTS_DIR, run_dir ? run_dir : ".");
	char *want = step_id ? attempts_id_component(step_id) : xstrdup("~");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strvec names = STRVEC_INIT;
	struct request_ref *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	free(dir);
	if (dfd >= 0 && sandbox_read_dir(dfd, &names)) {
		for (size_t i = 0; i < names.n; i++) {
			struct request_ref r;

			if (!requests_parse_name(names.v[i], &r))
				continue;
			if (strcmp(r.step, want) || (attempt > 0 && r.attempt != attempt)) {
				free(r.role);
				free(r.step);
				free(r.name);
				continue;
			}
			v = xgrow(v, &cap, n + 1, sizeof(*v));
			v[n++] = r;
		}
	}
	if (dfd >= 0)
		close(dfd);
	strvec_clear(&names);
	free(want);
	if (n > 1)
		qsort(v, n, sizeof(*v), by_seq);
	*out = v;
	return n;
}

void requests_list_free(struct request_ref *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].role);
		free(v[i].step);
		free(v[i].name);
	}
	free(v);
}
