/* requests — request bodies kept per call in RUNDIR/requests.jsonl (older runs:
 * RUNDIR/requests/), and read back. */
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
#include "jsonx.h"
#include "provider.h"
#include "sandbox.h"
#include "schemas.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

#define SPARE_MAX 4                   /* buffers kept: about one per worker */
#define SPARE_BYTES ((size_t)1 << 20) /* a larger one is freed, not kept */

struct requests {
	char *path;         /* RUN_DIR/requests.jsonl, NULL when not kept */
	pthread_mutex_t lock;
	int fd;             /* open for appending once the first request came, else -1 */
	unsigned long next; /* the next SEQ */
	size_t bytes;       /* kept so far, this and earlier segments, in both layouts */
	size_t max;
	bool torn;          /* the file does not end with a newline (a crash cut a line) */
	bool capped;
	char *trouble;      /* the first reason requests were not kept, until told */
	bool told;
	/* Buffers records were built in, for the next ones: a large block malloc'd and freed
	 * for every call costs thousands of instructions (glibc consolidates its small free
	 * chunks before it hands out a large one). */
	struct strbuf spare[SPARE_MAX];
	size_t n_spare;
};

static void put_str(struct strbuf *sb, const char *s);
static void put_strn(struct strbuf *sb, const char *s, size_t n);
static size_t scan_file(int root, void (*fn)(void *ctx, struct request_ref *r), void *ctx,
			bool *torn);
static void ref_release(struct request_ref *r);

/* ---- keeping ---- */

static void seen(void *ctx, struct request_ref *r)
{
	struct requests *rq = ctx;

	if (r->seq >= rq->next)
		rq->next = r->seq + 1;
	ref_release(r);
}

/* The highest SEQ and the bytes of the requests a resumed run kept already: in
 * requests.jsonl, and in requests/ when an older pevtui began the run. */
static void scan(struct requests *rq, const char *run_dir)
{
	int root = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;
	struct strvec names = STRVEC_INIT;

	if (root < 0)
		return;
	rq->bytes += scan_file(root, seen, rq, &rq->torn);
	dfd = openat(root, REQUESTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && sandbox_read_dir(dfd, &names)) {
		for (size_t i = 0; i < names.n; i++) {
			struct request_ref r;
			struct stat st;

			if (!requests_parse_name(names.v[i], &r))
				continue;
			if (fstatat(dfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
				rq->bytes += (size_t)st.st_size;
			seen(rq, &r);
		}
	}
	strvec_clear(&names);
	if (dfd >= 0)
		close(dfd);
	close(root);
}

struct requests *requests_open(const char *run_dir, bool keep, size_t max_bytes)
{
	struct requests *rq = xcalloc(1, sizeof(*rq));

	rq->max = max_bytes ? max_bytes : REQUESTS_MAX_BYTES;
	rq->fd = -1;
	if (pthread_mutex_init(&rq->lock, NULL))
		fatal("requests: cannot create a mutex");
	rq->next = 1;
	if (keep && run_dir) {
		rq->path = xasprintf("%s/" REQUESTS_FILE, run_dir);
		scan(rq, run_dir);
	}
	return rq;
}

void requests_close(struct requests *rq)
{
	if (!rq)
		return;
	if (rq->fd >= 0)
		close(rq->fd);
	for (size_t i = 0; i < rq->n_spare; i++)
		strbuf_release(&rq->spare[i]);
	pthread_mutex_destroy(&rq->lock);
	free(rq->trouble);
	free(rq->path);
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

unsigned long requests_next(struct requests *rq)
{
	unsigned long seq = 0;

	if (!rq || !rq->path)
		return 0;
	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	if (!rq->capped)
		seq = rq->next++;
	pthread_mutex_unlock(&rq->lock);
	return seq;
}

char *requests_name(unsigned long seq)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_grow(&sb, sizeof(REQUESTS_FILE "#") + 20);
	strbuf_adds(&sb, REQUESTS_FILE "#");
	strbuf_addu(&sb, seq);
	return strbuf_detach(&sb);
}

/* Whether a body the caller printed as compact JSON nests no deeper than a record takes:
 * it nests at most as deep as it has '{' and '[' (counted in strings too: a bound). */
static bool printed_fits(const char *body, size_t len)
{
	const char *end = body + len;
	size_t opens = 0;

	for (const char *c = "{["; *c; c++)
		for (const char *p = body; (p = memchr(p, *c, (size_t)(end - p))); p++)
			if (++opens > JSONX_LINE_DEPTH)
				return false;
	return true;
}

/* A record's members before its body, the body's name last: with a newline before them
 * (written only after a torn line). `len`: the body's length. */
static void record_head(struct strbuf *sb, unsigned long seq, const char *role,
			const char *step_id, int attempt, size_t len, bool as_json)
{
	strbuf_adds(sb, "\n{\"seq\":");
	strbuf_addu(sb, seq);
	strbuf_adds(sb, ",\"role\":");
	put_str(sb, role);
	strbuf_adds(sb, ",\"step_id\":");
	if (step_id)
		put_str(sb, step_id);
	else
		strbuf_adds(sb, "null");
	strbuf_adds(sb, ",\"attempt\":");
	strbuf_addi(sb, step_id ? attempt : 0);
	strbuf_adds(sb, ",\"bytes\":");
	strbuf_addu(sb, len);
	/* The body is last, so that a reader finds it from the members before it and takes
	 * it back byte for byte without parsing it. */
	strbuf_adds(sb, as_json ? ",\"body\":" : ",\"body_text\":");
}

/* One record, with a newline before it (written only after a torn line) and after it.
 * `printed`: the body is compact JSON the caller printed (requests_write_printed). */
static void record(struct strbuf *sb, unsigned long seq, const char *role, const char *step_id,
		   int attempt, const char *body, size_t len, bool printed)
{
	bool as_json = (printed && printed_fits(body, len)) || jsonx_valid_line(body, len);

	strbuf_grow(sb, len + strlen(role) + (step_id ? strlen(step_id) : 0) + 128);
	record_head(sb, seq, role, step_id, attempt, len, as_json);
	if (as_json)
		strbuf_add(sb, body, len);
	else
		put_strn(sb, body, len);
	strbuf_adds(sb, "}\n");
}

/* Appends a record `rec` (len bytes, from its leading newline) under the cap. */
static bool write_line(struct requests *rq, unsigned long seq, const char *rec, size_t len,
		       char **err)
{
	const char *p;
	size_t n;
	int e = 0;

	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	p = rec + !rq->torn;
	n = len - !rq->torn;
	if (seq >= rq->next) {
		*err = xstrdup("not a request of this run");
	} else if (rq->bytes + n > rq->max) {
		rq->capped = true;
		*err = xasprintf("the requests sent to the models are no longer kept in the run "
				 "folder: they reached the cap of %zu MiB",
				 rq->max >> 20);
		trouble(rq, *err);
	} else {
		if (rq->fd < 0)
			rq->fd = open(rq->path,
				      O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		/* One write(2) for the record under the lock: the workers' lines never mix,
		 * and O_APPEND puts each at the end. */
		e = rq->fd < 0 ? errno : fd_write_all(rq->fd, p, n);
		if (e) {
			/* a short write leaves a torn line: the next record starts a new one */
			rq->torn = rq->fd >= 0;
			*err = xasprintf("cannot keep the request sent to the model in %s: %s",
					 rq->path, strerror(e));
			trouble(rq, *err);
		} else {
			rq->bytes += n;
			rq->torn = false;
		}
	}
	pthread_mutex_unlock(&rq->lock);
	return !*err;
}

static bool write_record(struct requests *rq, unsigned long seq, const char *role,
			 const char *step_id, int attempt, const char *body, size_t len,
			 bool printed, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	bool ok;

	*err = NULL;
	if (!rq || !rq->path || !seq || !body) {
		*err = xstrdup("not a request of this run");
		return false;
	}
	record(&sb, seq, role ? role : "", step_id, attempt, body, len, printed);
	ok = write_line(rq, seq, sb.buf, sb.len, err);
	strbuf_release(&sb);
	return ok;
}

bool requests_write(struct requests *rq, unsigned long seq, const char *role,
		    const char *step_id, int attempt, const char *body, size_t len, char **err)
{
	return write_record(rq, seq, role, step_id, attempt, body, len, false, err);
}

bool requests_write_printed(struct requests *rq, unsigned long seq, const char *role,
			    const char *step_id, int attempt, const char *body, size_t len,
			    char **err)
{
	return write_record(rq, seq, role, step_id, attempt, body, len, true, err);
}

/* ---- a body for providers that send none ---- */

/*
 * The body is written straight into one buffer, byte for byte what cJSON_PrintUnformatted
 * printed of the tree this used to build (the kept files do not change), without building
 * and freeing that tree for every call. A tool's schema is parsed and printed once per
 * run: it is the same text in every executor call.
 */

/* A string as cJSON prints it: '"', '\\' and the C0 controls escaped, nothing else. */
static void put_strn(struct strbuf *sb, const char *s, size_t len)
{
	strbuf_add_json(sb, s, len, 0);
}

static void put_str(struct strbuf *sb, const char *s)
{
	put_strn(sb, s ? s : "", s ? strlen(s) : 0);
}

/* ,"key":"value" (or without the comma): `lead` is what goes before the value, written
 * as it is (MEMBER("key") or FIRST("key")); a NULL value leaves the member out, as
 * cJSON_AddStringToObject did. */
#define MEMBER(key) ",\"" key "\":"
#define FIRST(key) "\"" key "\":"

static void put_member(struct strbuf *sb, const char *lead, const char *value)
{
	if (!value)
		return;
	strbuf_adds(sb, lead);
	put_str(sb, value);
}

/* The same for a text every call repeats (a system prompt, a tool's name or description):
 * written as a JSON string once per run, through the run's memo (schemas.h) when set. */
static void put_member_kept(struct schemas *memo, struct strbuf *sb, const char *lead,
			    const char *value)
{
	const char *text = memo && value ? schemas_string(memo, value) : NULL;

	if (!text) {
		put_member(sb, lead, value);
		return;
	}
	strbuf_adds(sb, lead);
	strbuf_adds(sb, text);
}

/*
 * Whether s, from *p on, is a value that cJSON reads and prints back byte for byte as it
 * is: no blanks; strings of bytes from 0x20 up but '"' and '\\', and the escapes cJSON
 * writes (\" \\ \b \f \n \r \t, \u00XX for the other controls but NUL); integers
 * of at most 9 digits (printed with "%d"), not -0; true, false, null; at most `depth`
 * levels. Anything else is left to cJSON: false says only "not sure". *p: past it.
 */
static bool printed_value(const char **p, int depth)
{
	static const char hex[] = "0123456789abcdef";
	const char *c = *p;

	switch (*c) {
	case '{':
	case '[': {
		char close = *c == '{' ? '}' : ']';

		if (!depth--)
			return false;
		c++;
		if (*c == close) {
			*p = c + 1;
			return true;
		}
		for (;;) {
			if (close == '}') {
				if (*c != '"' || !printed_value(&c, 0) || *c++ != ':')
					return false;
			}
			if (!printed_value(&c, depth))
				return false;
			if (*c == close) {
				*p = c + 1;
				return true;
			}
			if (*c++ != ',')
				return false;
		}
	}
	case '"':
		for (c++;; c++) {
			unsigned char u = (unsigned char)*c;

			if (u == '"') {
				*p = c + 1;
				return true;
			}
			if (u < 0x20)
				return false; /* the end of s too */
			if (u != '\\')
				continue;
			c++;
			if (*c && strchr("\"\\bfnrt", *c)) /* as cJSON writes them */
				continue;
			if (c[0] != 'u' || c[1] != '0' || c[2] != '0' || (c[3] != '0' && c[3] != '1') ||
			    !c[4] || !strchr(hex, c[4]))
				return false;
			u = (unsigned char)((c[3] - '0') * 16 + (strchr(hex, c[4]) - hex));
			if (!u || strchr("\b\f\n\r\t", u))
				return false; /* NUL ends the string; the others have short forms */
			c += 4;
		}
	case 't':
	case 'f':
	case 'n': {
		const char *w = *c == 't' ? "true" : *c == 'f' ? "false" : "null";
		size_t n = strlen(w);

		if (strncmp(c, w, n))
			return false;
		*p = c + n;
		return true;
	}
	default: {
		const char *d;

		if (*c == '-')
			c++;
		d = c;
		if (*c == '0') {
			c++;
			if (d != *p) /* -0 */
				return false;
		} else {
			while (*c >= '0' && *c <= '9' && c - d < 10)
				c++;
			if (c == d || *d == '0' || c - d > 9)
				return false;
		}
		if (*c == '.' || *c == 'e' || *c == 'E' || (*c >= '0' && *c <= '9'))
			return false;
		*p = c;
		return true;
	}
	}
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

/* json_or_string's text, appended: a text cJSON would print back as it is (a tool call's
 * input mostly is: it was printed by a provider or the simulator) without parsing it. */
static void put_json_or_string(struct strbuf *sb, const char *s)
{
	const char *end = s;
	char *made;

	if (s && printed_value(&end, 64) && !*end) {
		strbuf_adds(sb, s);
		return;
	}
	made = json_or_string(s);
	strbuf_adds(sb, made);
	free(made);
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
	switch (m->kind) {
	case LLM_MSG_USER:
		strbuf_adds(sb, "{\"role\":\"user\"");
		put_member(sb, MEMBER("content"), m->text ? m->text : "");
		break;
	case LLM_MSG_ASSISTANT:
		strbuf_adds(sb, "{\"role\":\"assistant\"");
		put_member(sb, MEMBER("content"), m->text ? m->text : "");
		if (m->n_calls) {
			strbuf_adds(sb, ",\"tool_calls\":[");
			for (size_t c = 0; c < m->n_calls; c++) {
				strbuf_adds(sb, c ? ",{" : "{");
				put_member(sb, FIRST("id"), m->calls[c].id ? m->calls[c].id : "");
				put_member(sb, MEMBER("name"),
					   m->calls[c].name ? m->calls[c].name : "");
				strbuf_adds(sb, ",\"input\":");
				put_json_or_string(sb, m->calls[c].input_json);
				strbuf_addc(sb, '}');
			}
			strbuf_addc(sb, ']');
		}
		break;
	case LLM_MSG_TOOL_RESULTS:
		strbuf_adds(sb, "{\"role\":\"tool\",\"results\":[");
		for (size_t r = 0; r < m->n_results; r++) {
			strbuf_adds(sb, r ? ",{" : "{");
			put_member(sb, FIRST("call_id"),
				   m->results[r].call_id ? m->results[r].call_id : "");
			put_member(sb, MEMBER("content"),
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

/* About how long the body will be: the texts in it, and a tool's name, description and
 * schema at some 600 bytes (room made once rather than by doublings). */
static size_t body_guess(const struct llm_request *req)
{
	size_t n = 256 + 600 * req->n_tools + (req->system ? strlen(req->system) : 0);

	for (size_t m = 0; m < req->n_msgs; m++) {
		const struct llm_msg *msg = &req->msgs[m];

		n += 64 + (msg->text ? strlen(msg->text) : 0);
		for (size_t c = 0; c < msg->n_calls; c++)
			n += 64 + (msg->calls[c].input_json ? strlen(msg->calls[c].input_json) : 0);
		for (size_t r = 0; r < msg->n_results; r++)
			n += 64 + (msg->results[r].content ? strlen(msg->results[r].content) : 0);
	}
	return n;
}

/* The body of requests_body_of, appended to sb. */
static void put_body(struct strbuf *sb, const struct llm_request *req)
{
	strbuf_adds(sb, "{\"pevtui_note\":\"nothing went over the wire (simulated provider): "
			"this is the request as the engine built it\"");
	put_member(sb, MEMBER("model"), req->model ? req->model : "");
	strbuf_adds(sb, ",\"max_tokens\":");
	strbuf_addi(sb, req->max_tokens);
	if (req->want_json)
		strbuf_adds(sb, ",\"want_json\":true");
	put_member_kept(req->schemas, sb, MEMBER("system"), req->system ? req->system : "");
	strbuf_adds(sb, ",\"tools\":[");
	for (size_t t = 0; t < req->n_tools; t++) {
		strbuf_adds(sb, t ? ",{" : "{");
		/* cJSON_AddStringToObject left a NULL name or description out */
		put_member_kept(req->schemas, sb, FIRST("name"), req->tools[t]->name);
		put_member_kept(req->schemas, sb,
				req->tools[t]->name ? MEMBER("description") : FIRST("description"),
				req->tools[t]->description);
		if (req->tools[t]->name || req->tools[t]->description)
			strbuf_addc(sb, ',');
		strbuf_adds(sb, "\"input_schema\":");
		put_schema(req->schemas, sb, req->tools[t]->schema_json);
		strbuf_addc(sb, '}');
	}
	strbuf_adds(sb, "],\"messages\":[");
	for (size_t m = 0; m < req->n_msgs; m++) {
		if (m)
			strbuf_addc(sb, ',');
		put_message(sb, &req->msgs[m]);
	}
	strbuf_adds(sb, "]}");
}

char *requests_body_of(const struct llm_request *req)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_grow(&sb, body_guess(req));
	put_body(&sb, req);
	return strbuf_detach(&sb);
}

/* An empty buffer, one a record was built in before when there is one. */
static struct strbuf take_spare(struct requests *rq)
{
	struct strbuf sb = STRBUF_INIT;

	if (pthread_mutex_lock(&rq->lock))
		fatal("requests: cannot lock");
	if (rq->n_spare)
		sb = rq->spare[--rq->n_spare];
	pthread_mutex_unlock(&rq->lock);
	strbuf_reset(&sb);
	return sb;
}

static void give_spare(struct requests *rq, struct strbuf *sb)
{
	if (sb->cap <= SPARE_BYTES) {
		if (pthread_mutex_lock(&rq->lock))
			fatal("requests: cannot lock");
		if (rq->n_spare < SPARE_MAX) {
			rq->spare[rq->n_spare++] = *sb;
			*sb = (struct strbuf)STRBUF_INIT;
		}
		pthread_mutex_unlock(&rq->lock);
	}
	strbuf_release(sb);
}

/*
 * The record is built around the body in one buffer: the body is written after room for
 * the members before it (their length is known but for the digits of the body's), which
 * are then written just before it. No copy of the body, no second buffer.
 */
bool requests_write_body_of(struct requests *rq, unsigned long seq, const char *role,
			    const char *step_id, int attempt, const struct llm_request *req,
			    char **err)
{
	struct strbuf head = STRBUF_INIT, sb;
	size_t room, len, start;
	bool ok;

	*err = NULL;
	if (!rq || !rq->path || !seq) {
		*err = xstrdup("not a request of this run");
		return false;
	}
	role = role ? role : "";
	strbuf_grow(&head, 128 + strlen(role) + (step_id ? strlen(step_id) : 0));
	record_head(&head, seq, role, step_id, attempt, 0, true);
	sb = take_spare(rq);
	room = head.len + 20; /* "bytes": 0 is one digit of at most 20 */
	strbuf_grow(&sb, room + body_guess(req) + 2);
	sb.len = room;
	put_body(&sb, req);
	len = sb.len - room;
	if (!printed_fits(sb.buf + room, len)) {
		/* Nested deeper than a record takes, maybe: checked as any other body. */
		ok = write_record(rq, seq, role, step_id, attempt, sb.buf + room, len, true, err);
	} else {
		strbuf_reset(&head);
		record_head(&head, seq, role, step_id, attempt, len, true);
		start = room - head.len;
		memcpy(sb.buf + start, head.buf, head.len);
		strbuf_adds(&sb, "}\n");
		ok = write_line(rq, seq, sb.buf + start, sb.len - start, err);
	}
	strbuf_release(&head);
	give_spare(rq, &sb);
	return ok;
}

/* ---- reading back ---- */

static void ref_release(struct request_ref *r)
{
	free(r->role);
	free(r->step);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

void requests_ref_release(struct request_ref *r)
{
	if (r)
		ref_release(r);
}

bool requests_parse_name(const char *file, struct request_ref *out)
{
	const char *d1, *d2, *dl, *end;
	char *stop;
	unsigned long seq;
	long attempt;
	size_t n = strlen(file);

	memset(out, 0, sizeof(*out));
	out->body_off = -1;
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

char *requests_file_name(const struct request_ref *r)
{
	return xasprintf("%06lu-%s-%s-%d.json", r->seq, r->role ? r->role : "",
			 r->step ? r->step : "~", r->attempt);
}

/* A record's members before its body are short (a step id is at most 64 bytes, escaped
 * at most 6 for 1): a line whose body does not start within this is not one of ours. */
#define HEAD_MAX 2048

/*
 * A line of requests.jsonl (without its newline) at file offset `off`, `len` bytes long,
 * of which the first `n_head` are in `head`; `last` holds its last two bytes. Checked
 * against what the record says of itself: a line cut short (a crash, a full disk) does
 * not end where its "bytes" say, and is not a request.
 */
static bool parse_record(const char *head, size_t n_head, long long off, size_t len,
			 const unsigned char last[2], struct request_ref *out)
{
	static const char k_json[] = ",\"body\":", k_text[] = ",\"body_text\":";
	const char *at_json = memmem(head, n_head, k_json, sizeof(k_json) - 1);
	const char *at_text = memmem(head, n_head, k_text, sizeof(k_text) - 1);
	const char *at = at_json && (!at_text || at_json < at_text) ? at_json : at_text;
	size_t key = at == at_json ? sizeof(k_json) - 1 : sizeof(k_text) - 1, value;
	const cJSON *step_id;
	double seq, attempt, bytes;
	char *members;
	cJSON *o;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!at || last[1] != '}')
		return false;
	value = (size_t)(at - head) + key;
	if (len < value + 1)
		return false;
	/* The members before the body, closed: a small object to parse. */
	members = xmalloc((size_t)(at - head) + 2);
	memcpy(members, head, (size_t)(at - head));
	members[at - head] = '}';
	members[at - head + 1] = 0;
	o = cJSON_Parse(members);
	free(members);
	step_id = cJSON_GetObjectItemCaseSensitive(o, "step_id");
	ok = cJSON_IsObject(o) && jsonx_num(o, "seq", &seq) && seq >= 1 && seq < 1e15 &&
	     jsonx_str(o, "role") && jsonx_num(o, "attempt", &attempt) && attempt >= 0 &&
	     attempt <= 1000000 && jsonx_num(o, "bytes", &bytes) && bytes >= 0 && bytes < 1e15 &&
	     (cJSON_IsString(step_id) || cJSON_IsNull(step_id));
	if (ok) {
		size_t n = len - value - 1;

		out->as_text = at == at_text;
		ok = out->as_text ? last[0] == '"' && n >= (size_t)bytes + 2 : n == (size_t)bytes;
		out->body_off = off + (long long)value;
		out->body_len = n;
	}
	if (ok) {
		out->seq = (unsigned long)seq;
		out->attempt = cJSON_IsString(step_id) ? (int)attempt : 0;
		out->role = xstrdup(jsonx_str(o, "role"));
		out->step = cJSON_IsString(step_id) ? attempts_id_component(step_id->valuestring)
						    : xstrdup("~");
		out->name = requests_name(out->seq);
	}
	cJSON_Delete(o);
	return ok;
}

/*
 * Walks requests.jsonl, open as fd, from offset `from` (the start of a line) to its end,
 * handing each whole record to fn (which owns it). Only the first HEAD_MAX bytes of a line
 * are kept while it is read, so a file of any size walks in constant memory. *eof: where
 * the file ended. Returns the offset past its last newline: a line after it has none yet
 * (torn by a crash, or still being written), and a later walk starts there.
 */
static long long scan_fd(int fd, long long from, void (*fn)(void *ctx, struct request_ref *r),
			 void *ctx, long long *eof)
{
	char buf[65536], head[HEAD_MAX];
	unsigned char last[2] = {0, 0};
	long long off = from, at = from;
	size_t n_head = 0, len = 0;
	ssize_t r;

	*eof = from;
	if (lseek(fd, (off_t)from, SEEK_SET) < 0)
		return from;
	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (const char *p = buf, *end = buf + r; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)((nl ? nl : end) - p);
			struct request_ref ref;

			if (n_head < HEAD_MAX) {
				size_t take = n < HEAD_MAX - n_head ? n : HEAD_MAX - n_head;

				memcpy(head + n_head, p, take);
				n_head += take;
			}
			if (n >= 2) {
				last[0] = (unsigned char)p[n - 2];
				last[1] = (unsigned char)p[n - 1];
			} else if (n == 1) {
				last[0] = last[1];
				last[1] = (unsigned char)p[0];
			}
			len += n;
			at += (long long)n;
			if (!nl)
				break;
			if (parse_record(head, n_head, off, len, last, &ref))
				fn(ctx, &ref);
			at++;
			off = at;
			n_head = len = 0;
			last[0] = last[1] = 0;
			p = nl + 1;
		}
	}
	*eof = at;
	return off;
}

/* scan_fd over the whole of requests.jsonl beneath the run folder `root`. *torn: its last
 * line has no newline. Returns the file's size (0 when there is none). */
static size_t scan_file(int root, void (*fn)(void *ctx, struct request_ref *r), void *ctx,
			bool *torn)
{
	char *err = NULL;
	int fd = sandbox_open(root, REQUESTS_FILE, O_RDONLY, 0, false, &err);
	long long whole, end;

	free(err);
	*torn = false;
	if (fd < 0)
		return 0;
	whole = scan_fd(fd, 0, fn, ctx, &end);
	close(fd);
	*torn = end > whole;
	return (size_t)end;
}

/*
 * What the records of requests.jsonl read so far say, kept between listings: the file is
 * only ever appended to, so a listing reads only what came after the last whole line read
 * before (the line a crash tore, or one being written, is read again until it is whole:
 * then it is a record, or a foreign line left out). A file that is not the one read
 * before (another inode, shorter, no newline where the last read line ended) is read
 * from its start.
 */
struct requests_index {
	char *run_dir;
	struct request_ref *v; /* in the order of the file; a later one of a seq wins */
	size_t n, cap;
	long long done;        /* read up to here: the end of its last whole line */
	dev_t dev;
	ino_t ino;
	size_t last_read;      /* bytes the last listing read */
};

struct requests_index *requests_index_new(const char *run_dir)
{
	struct requests_index *ix = xcalloc(1, sizeof(*ix));

	ix->run_dir = xstrdup(run_dir ? run_dir : ".");
	return ix;
}

static void index_forget(struct requests_index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		ref_release(&ix->v[i]);
	ix->n = 0;
	ix->done = 0;
}

void requests_index_free(struct requests_index *ix)
{
	if (!ix)
		return;
	index_forget(ix);
	free(ix->v);
	free(ix->run_dir);
	free(ix);
}

size_t requests_index_last_read(const struct requests_index *ix)
{
	return ix ? ix->last_read : 0;
}

static void index_add(void *ctx, struct request_ref *r)
{
	struct requests_index *ix = ctx;

	ix->v = xgrow(ix->v, &ix->cap, ix->n + 1, sizeof(*ix->v));
	ix->v[ix->n++] = *r;
}

/* Reads what was appended to requests.jsonl since the last time. */
static void index_refresh(struct requests_index *ix)
{
	int root = open(ix->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	char *err = NULL, nl = 0;
	long long end;
	struct stat st;

	ix->last_read = 0;
	if (root >= 0) {
		fd = sandbox_open(root, REQUESTS_FILE, O_RDONLY, 0, false, &err);
		free(err);
		close(root);
	}
	if (fd < 0 || fstat(fd, &st)) {
		index_forget(ix);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (st.st_dev != ix->dev || st.st_ino != ix->ino || (long long)st.st_size < ix->done ||
	    (ix->done > 0 && (pread(fd, &nl, 1, (off_t)(ix->done - 1)) != 1 || nl != '\n'))) {
		index_forget(ix);
		ix->dev = st.st_dev;
		ix->ino = st.st_ino;
	}
	if ((long long)st.st_size > ix->done) {
		long long from = ix->done;

		ix->done = scan_fd(fd, from, index_add, ix, &end);
		ix->last_read = (size_t)(end - from);
	}
	close(fd);
}

/* What a listing gathers: every request of both layouts, in the order they were kept. */
struct gather {
	struct request_ref *v;
	size_t n, cap;
	const char *want; /* the STEP component; NULL: every one */
	int attempt;
};

static void gather(void *ctx, struct request_ref *r)
{
	struct gather *g = ctx;

	if (g->want && (strcmp(r->step, g->want) || (g->attempt > 0 && r->attempt != g->attempt))) {
		ref_release(r);
		return;
	}
	g->v = xgrow(g->v, &g->cap, g->n + 1, sizeof(*g->v));
	g->v[g->n++] = *r;
}

/* By seq, then by where it was kept: the later of two records of one seq wins. */
static int by_seq(const void *x, const void *y)
{
	const struct request_ref *a = x, *b = y;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->body_off < b->body_off ? -1 : a->body_off > b->body_off;
}

static void ref_copy(struct request_ref *to, const struct request_ref *from)
{
	*to = *from;
	to->role = xstrdup(from->role);
	to->step = xstrdup(from->step);
	to->name = xstrdup(from->name);
}

static void gather_all(struct requests_index *ix, struct gather *g)
{
	int root = open(ix->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), dfd;
	struct strvec names = STRVEC_INIT;
	size_t kept = 0;

	index_refresh(ix);
	if (root < 0)
		return;
	/* An older run's files (body_off -1: before any record of the same seq). */
	dfd = openat(root, REQUESTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0 && sandbox_read_dir(dfd, &names)) {
		for (size_t i = 0; i < names.n; i++) {
			struct request_ref r;

			if (requests_parse_name(names.v[i], &r))
				gather(g, &r);
		}
	}
	if (dfd >= 0)
		close(dfd);
	strvec_clear(&names);
	close(root);
	for (size_t i = 0; i < ix->n; i++) {
		struct request_ref r;

		ref_copy(&r, &ix->v[i]);
		gather(g, &r);
	}
	if (g->n > 1)
		qsort(g->v, g->n, sizeof(*g->v), by_seq);
	for (size_t i = 0; i < g->n; i++) {
		if (i + 1 < g->n && g->v[i + 1].seq == g->v[i].seq)
			ref_release(&g->v[i]);
		else
			g->v[kept++] = g->v[i];
	}
	g->n = kept;
}

size_t requests_index_list(struct requests_index *ix, const char *step_id, int attempt,
			   struct request_ref **out)
{
	char *want = step_id ? attempts_id_component(step_id) : xstrdup("~");
	struct gather g = {NULL, 0, 0, want, attempt};

	gather_all(ix, &g);
	free(want);
	*out = g.v;
	return g.n;
}

size_t requests_list(const char *run_dir, const char *step_id, int attempt,
		     struct request_ref **out)
{
	struct requests_index *ix = requests_index_new(run_dir);
	size_t n = requests_index_list(ix, step_id, attempt, out);

	requests_index_free(ix);
	return n;
}

void requests_list_free(struct request_ref *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ref_release(&v[i]);
	free(v);
}

bool requests_index_find(struct requests_index *ix, const char *name, struct request_ref *out)
{
	struct gather g = {0};
	bool found = false;

	memset(out, 0, sizeof(*out));
	if (!name)
		return false;
	gather_all(ix, &g);
	for (size_t i = 0; i < g.n && !found; i++)
		if (!strcmp(g.v[i].name, name)) {
			*out = g.v[i];
			memset(&g.v[i], 0, sizeof(g.v[i]));
			found = true;
		}
	requests_list_free(g.v, g.n);
	return found;
}

bool requests_find(const char *run_dir, const char *name, struct request_ref *out)
{
	struct requests_index *ix = requests_index_new(run_dir);
	bool found = requests_index_find(ix, name, out);

	requests_index_free(ix);
	return found;
}

/* requests.jsonl beneath run_dir, open for reading; -1 + *err. */
static int open_kept(const char *run_dir, char **err)
{
	int root = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	char *e = NULL;

	if (root < 0) {
		*err = xasprintf("cannot open the run folder: %s", strerror(errno));
		return -1;
	}
	fd = sandbox_open(root, REQUESTS_FILE, O_RDONLY, 0, false, &e);
	close(root);
	if (fd < 0)
		*err = e ? e : xstrdup("cannot open it");
	else
		free(e);
	return fd;
}

/* `n` bytes at `off` of fd into buf; false + *err when they are not all there. */
static bool read_at(int fd, char *buf, size_t n, long long off, char **err)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + (long long)got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*err = r < 0 ? xasprintf("cannot read it: %s", strerror(errno))
				     : xstrdup("it is shorter than its listing said");
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

/* `n` bytes at `off` of requests.jsonl beneath run_dir. */
static char *read_span(const char *run_dir, long long off, size_t n, char **err)
{
	int fd = open_kept(run_dir, err);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = xmalloc(n + 1);
	if (!read_at(fd, buf, n, off, err)) {
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	buf[n] = 0;
	return buf;
}

/*
 * One escape at p (a backslash; `n` bytes there, 12 when there are that many) as the bytes
 * it stands for, into u: how many (1 to 4), 0 when it is not a JSON escape. *used: its
 * length. As cJSON reads them: a \u of a high surrogate needs its low one after it.
 */
static size_t unescape(const char *p, size_t n, unsigned char u[4], size_t *used)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *k = n >= 2 && p[1] ? strchr(from, p[1]) : NULL;
	long c, lo;

	*used = 2;
	if (k) {
		u[0] = (unsigned char)to[k - from];
		return 1;
	}
	if (n < 6 || p[1] != 'u' || (c = jsonx_hex4(p + 2)) < 0 || (c >= 0xDC00 && c <= 0xDFFF))
		return 0;
	*used = 6;
	if (c >= 0xD800 && c <= 0xDBFF) {
		if (n < 12 || p[6] != '\\' || p[7] != 'u' || (lo = jsonx_hex4(p + 8)) < 0xDC00 ||
		    lo > 0xDFFF)
			return 0;
		*used = 12;
		c = 0x10000 + (((c & 0x3FF) << 10) | (lo & 0x3FF));
	}
	if (c < 0x80) {
		u[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		u[0] = (unsigned char)(0xC0 | (c >> 6));
		u[1] = (unsigned char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		u[0] = (unsigned char)(0xE0 | (c >> 12));
		u[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		u[2] = (unsigned char)(0x80 | (c & 0x3F));
		return 3;
	}
	u[0] = (unsigned char)(0xF0 | (c >> 18));
	u[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
	u[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
	u[3] = (unsigned char)(0x80 | (c & 0x3F));
	return 4;
}

#define ESCAPE_MAX 12 /* the longest escape: a surrogate pair, \uD83D\uDE00 */

/* A body_text value being read: `n` bytes at `off` of fd, a piece at a time. */
struct text_in {
	int fd;
	long long off;
	size_t n, pos; /* of the value: its length, and how much of it was read */
	size_t have, at; /* of the piece: what it holds, and where the reading is */
	char piece[65536];
};

/* Tops the piece up while fewer than ESCAPE_MAX bytes of it are left, so that an escape
 * never straddles two pieces. false + *err when the file is short. */
static bool top_up(struct text_in *in, char **err)
{
	size_t want;

	if (in->have - in->at >= ESCAPE_MAX || in->pos == in->n)
		return true;
	memmove(in->piece, in->piece + in->at, in->have - in->at);
	in->have -= in->at;
	in->at = 0;
	want = sizeof(in->piece) - in->have;
	if (want > in->n - in->pos)
		want = in->n - in->pos;
	if (!read_at(in->fd, in->piece + in->have, want, in->off + (long long)in->pos, err))
		return false;
	in->have += want;
	in->pos += want;
	return true;
}

/*
 * A body kept as "body_text": the JSON string of `n` bytes (its quotes included) at `off`
 * of fd, decoded up to `max` bytes of what it says and no further: what lies past the
 * bound is neither read nor checked, but for the byte that tells whether the string goes
 * on (*cut). A bound inside a character cuts it, as a byte bound does.
 */
static char *read_text(int fd, long long off, size_t n, size_t max, size_t *len, bool *cut,
		       char **err)
{
	struct text_in *in = xmalloc(sizeof(*in));
	char *out = xmalloc((n < max ? n : max) + 1);
	size_t o = 0;
	bool closed = false, more = false;

	*in = (struct text_in){.fd = fd, .off = off, .n = n};
	if (!top_up(in, err))
		goto fail;
	if (!in->have || in->piece[0] != '"')
		goto bad;
	in->at = 1;
	while (o < max) {
		const char *q;
		size_t k;

		if (!top_up(in, err))
			goto fail;
		if (in->at == in->have)
			goto bad; /* no closing quote */
		q = in->piece + in->at;
		if (*q == '"') {
			closed = true;
			break;
		}
		if (*q == '\\') {
			unsigned char u[4];
			size_t used;

			k = unescape(q, in->have - in->at, u, &used);
			if (!k)
				goto bad;
			if (k > max - o) {
				k = max - o;
				more = true;
			}
			memcpy(out + o, u, k);
			o += k;
			in->at += used;
			continue;
		}
		/* plain bytes, as far as the piece and the bound go */
		for (k = 1; in->at + k < in->have && k < max - o && q[k] != '"' && q[k] != '\\';
		     k++)
			;
		memcpy(out + o, q, k);
		o += k;
		in->at += k;
	}
	if (!closed && !more) {
		if (!top_up(in, err))
			goto fail;
		if (in->at == in->have)
			goto bad;
		more = in->piece[in->at] != '"';
	}
	free(in);
	out[o] = 0;
	*len = o;
	if (cut)
		*cut = more;
	return out;
bad:
	*err = xstrdup("its body_text is not a JSON string");
fail:
	free(in);
	free(out);
	return NULL;
}

char *requests_read(const char *run_dir, const struct request_ref *r, size_t max, size_t *len,
		    bool *cut, char **err)
{
	char *span;
	int fd;

	*err = NULL;
	*len = 0;
	if (cut)
		*cut = false;
	if (!run_dir || !r || !r->name) {
		*err = xstrdup("no such request");
		return NULL;
	}
	if (r->body_off < 0) /* an older run's file */
		return attempts_read_beneath(run_dir, r->name, max, len, cut, err);
	if (!r->as_text) {
		size_t n = r->body_len < max ? r->body_len : max;

		span = read_span(run_dir, r->body_off, n, err);
		if (span) {
			*len = n;
			if (cut)
				*cut = n < r->body_len;
		}
		return span;
	}
	/* A body that was not JSON, kept as a JSON string: decoded only up to the bound. */
	fd = open_kept(run_dir, err);
	if (fd < 0)
		return NULL;
	span = read_text(fd, r->body_off, r->body_len, max, len, cut, err);
	close(fd);
	return span;
}
