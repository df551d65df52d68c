/*
 * test_requests — what the run folder keeps for the drill-down: the request bodies sent to
 * the models (never a key: a fake one is sent through the real providers and looked for),
 * and each attempt's copies of its artifacts and tools' outputs (beneath the run folder
 * only, whatever the paths say).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "jsonx.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "requests.h"
#include "schemas.h"
#include "strbuf.h"
#include "testdir.h"
#include "tool.h"
#include "xalloc.h"

#define FAKE_KEY "sk-ant-FAKE-7d1f09c2e4b8a6"

static void put(const char *dir, const char *rel, const char *text)
{
	assert_true(testdir_put(dir, rel, text));
}

/* ---- the request store ---- */

/* The body of the request `name` as it is read back; NULL when there is none. */
static char *read_back(const char *dir, const char *name)
{
	struct request_ref r;
	char *err = NULL, *body;
	size_t len = 0;

	if (!requests_find(dir, name, &r))
		return NULL;
	body = requests_read(dir, &r, REQUESTS_MAX_BYTES, &len, NULL, &err);
	assert_non_null(body);
	assert_null(err);
	assert_int_equal(strlen(body), len);
	requests_ref_release(&r);
	return body;
}

/* Every line of the file is one JSON object (jq can read it): how many. */
static int whole_lines(const char *dir)
{
	char *text = testdir_slurp_in(dir, REQUESTS_FILE), *line, *save = NULL;
	int n = 0;

	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *o = cJSON_Parse(line);

		assert_true(cJSON_IsObject(o));
		cJSON_Delete(o);
		n++;
	}
	free(text);
	return n;
}

static void test_names_and_listing(void **state)
{
	/* not JSON, and JSON that is not on one line: kept as strings, read back the same */
	static const char text[] = "plain \"text\"\n\twith \x01 controls \xc3\xa9";
	static const char lines[] = "{\"a\":\n 1}";
	char *dir = testdir_new("requests"), *err = NULL, *name, *body, *path;
	struct requests *rq = requests_open(dir, true, 0);
	struct request_ref *v;
	unsigned long s1, s2, s3, s4, s5, s6;
	size_t n, len;
	bool cut;
	struct stat st;

	(void)state;
	s1 = requests_next(rq);
	s2 = requests_next(rq);
	s3 = requests_next(rq);
	s4 = requests_next(rq);
	s5 = requests_next(rq);
	s6 = requests_next(rq);
	assert_int_equal(s1, 1);
	assert_int_equal(s6, 6);
	name = requests_name(s2);
	assert_string_equal(name, "requests.jsonl#2");
	free(name);
	/* written in any order: the file is in the order of the writes */
	assert_true(requests_write(rq, s1, "planner", NULL, 5, "{\"p\":1}", 7, &err));
	assert_true(requests_write(rq, s3, "verifier", "review-1", 2, "{\"v\":3}", 7, &err));
	assert_true(requests_write(rq, s2, "executor", "review-1", 2, " [1, \"x\"] ", 10, &err));
	assert_true(requests_write(rq, s4, "executor", "odd id/..\"", 1, "{}", 2, &err));
	assert_true(requests_write(rq, s5, "executor", "review-1", 3, text, strlen(text), &err));
	assert_true(requests_write(rq, s6, "executor", "review-1", 3, lines, strlen(lines), &err));
	/* the same request built again: the later body is the one read back */
	assert_true(requests_write(rq, s3, "verifier", "review-1", 2, "{\"v\":33}", 8, &err));
	/* only this run's numbers */
	assert_false(requests_write(rq, 99, "executor", "s", 1, "{}", 2, &err));
	free(err);
	err = NULL;
	assert_false(requests_write(rq, 0, "executor", "s", 1, "{}", 2, &err));
	free(err);
	err = NULL;
	/* one private file, one line per write, each a JSON object */
	path = xasprintf("%s/" REQUESTS_FILE, dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(path);
	path = xasprintf("%s/" REQUESTS_DIR, dir);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
	assert_int_equal(whole_lines(dir), 7);
	body = testdir_slurp_in(dir, REQUESTS_FILE);
	assert_non_null(strstr(body, "{\"seq\":1,\"role\":\"planner\",\"step_id\":null,"
				     "\"attempt\":0,\"bytes\":7,\"body\":{\"p\":1}}\n"));
	assert_non_null(strstr(body, "\"bytes\":10,\"body\": [1, \"x\"] }\n"));
	assert_non_null(strstr(body, "\"step_id\":\"review-1\",\"attempt\":3,\"bytes\":9,"
				     "\"body_text\":\"{\\\"a\\\":\\n 1}\"}\n"));
	free(body);

	n = requests_list(dir, "review-1", 2, &v);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].seq, 2);
	assert_string_equal(v[0].role, "executor");
	assert_string_equal(v[0].step, "review-1");
	assert_int_equal(v[0].attempt, 2);
	assert_string_equal(v[0].name, "requests.jsonl#2");
	assert_string_equal(v[1].role, "verifier");
	/* byte for byte, blanks around included */
	body = requests_read(dir, &v[0], 1024, &len, &cut, &err);
	assert_string_equal(body, " [1, \"x\"] ");
	assert_int_equal(len, 10);
	assert_false(cut);
	free(body);
	body = requests_read(dir, &v[1], 1024, &len, &cut, &err);
	assert_string_equal(body, "{\"v\":33}");
	free(body);
	/* a read stops at its bound and says so */
	body = requests_read(dir, &v[0], 4, &len, &cut, &err);
	assert_int_equal(len, 4);
	assert_memory_equal(body, " [1,", 4);
	assert_true(cut);
	free(body);
	name = requests_file_name(&v[0]);
	assert_string_equal(name, "000002-executor-review-1-2.json");
	free(name);
	requests_list_free(v, n);
	assert_int_equal(requests_list(dir, "review-1", 1, &v), 0);
	requests_list_free(v, 0);
	n = requests_list(dir, "review-1", 0, &v); /* every attempt */
	assert_int_equal(n, 4);
	requests_list_free(v, n);
	n = requests_list(dir, NULL, 0, &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].role, "planner");
	assert_int_equal(v[0].attempt, 0);
	assert_string_equal(v[0].step, "~");
	requests_list_free(v, n);
	n = requests_list(dir, "odd id/..\"", 1, &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].step, "odd%20id%2F..%22");
	requests_list_free(v, n);
	body = read_back(dir, "requests.jsonl#5");
	assert_string_equal(body, text);
	free(body);
	body = read_back(dir, "requests.jsonl#6");
	assert_string_equal(body, lines);
	free(body);
	assert_null(read_back(dir, "requests.jsonl#7"));
	requests_close(rq);

	/* a resumed run numbers on */
	rq = requests_open(dir, true, 0);
	assert_int_equal(requests_next(rq), 7);
	requests_close(rq);
	assert_true(testdir_remove(dir));
	free(dir);
}

static void test_parse_names(void **state)
{
	struct request_ref r;

	(void)state;
	assert_true(requests_parse_name("000012-executor-a-b-c-7.json", &r));
	assert_int_equal(r.seq, 12);
	assert_string_equal(r.role, "executor");
	assert_string_equal(r.step, "a-b-c");
	assert_int_equal(r.attempt, 7);
	requests_ref_release(&r);
	assert_false(requests_parse_name("x-executor-a-1.json", &r));
	assert_false(requests_parse_name("1-executor--1.json", &r));
	assert_false(requests_parse_name("1-executor-a-1.txt", &r));
	assert_false(requests_parse_name("1-executor-a-.json", &r));
	assert_false(requests_parse_name(".json", &r));
}

static void test_off_keeps_nothing(void **state)
{
	char *dir = testdir_new("requests-off"), *p, *err = NULL;
	struct requests *rq = requests_open(dir, false, 0);

	(void)state;
	assert_int_equal(requests_next(rq), 0);
	assert_false(requests_write(rq, 1, "planner", NULL, 0, "{}", 2, &err));
	free(err);
	requests_close(rq);
	p = xasprintf("%s/" REQUESTS_FILE, dir);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
	p = xasprintf("%s/" REQUESTS_DIR, dir);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
	assert_true(testdir_remove(dir));
	free(dir);
}

static void test_cap(void **state)
{
	char *dir = testdir_new("requests-cap"), *err = NULL, *why, *big = xmalloc(301);
	struct requests *rq = requests_open(dir, true, 300);
	struct request_ref *v;
	unsigned long s;
	size_t n;

	(void)state;
	memset(big, 'x', 300);
	big[300] = 0;
	s = requests_next(rq);
	assert_true(requests_write(rq, s, "executor", "s", 1, "[0,1,2,3,4,5,6,7,8,9]", 21, &err));
	s = requests_next(rq);
	assert_false(requests_write(rq, s, "executor", "s", 1, big, 200, &err)); /* past the cap */
	assert_non_null(strstr(err, "no longer kept"));
	free(err);
	err = NULL;
	assert_true(requests_capped(rq));
	assert_int_equal(requests_next(rq), 0);
	why = requests_take_notice(rq);
	assert_non_null(why);
	free(why);
	assert_null(requests_take_notice(rq)); /* said once */
	requests_close(rq);
	/* a resumed run counts what was kept before (one line of 94 bytes): a second one
	 * passes a cap of 150 (the number left unwritten is used again) */
	rq = requests_open(dir, true, 150);
	s = requests_next(rq);
	assert_int_equal(s, 2);
	assert_false(requests_write(rq, s, "executor", "s", 2, "[0,1,2,3,4,5,6,7,8,9]", 21, &err));
	free(err);
	requests_close(rq);
	n = requests_list(dir, "s", 0, &v);
	assert_int_equal(n, 1);
	requests_list_free(v, n);
	free(big);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- several workers at once ---- */

#define WRITERS 4
#define PER_WRITER 150

struct writer {
	struct requests *rq;
	int id;
};

/* Writer w's k-th body: JSON, sometimes large (past a pipe's or a page's size), and every
 * fifth one not JSON. */
static char *body_for(int w, int k, size_t *len)
{
	struct strbuf sb;
	size_t fill = (size_t)((k * 7919 + w * 104729) % 70000);

	strbuf_init(&sb);
	if (k % 5 == 4)
		strbuf_addf(&sb, "not json %d/%d\n", w, k);
	else
		strbuf_addf(&sb, "{\"w\":%d,\"k\":%d,\"fill\":\"", w, k);
	for (size_t i = 0; i < fill; i++)
		strbuf_addc(&sb, (char)('a' + (i + (size_t)k) % 26));
	if (k % 5 != 4)
		strbuf_adds(&sb, "\"}");
	*len = sb.len;
	return strbuf_detach(&sb);
}

static void *write_many(void *arg)
{
	struct writer *wr = arg;

	for (int k = 0; k < PER_WRITER; k++) {
		unsigned long s = requests_next(wr->rq);
		char *step = xasprintf("w%d", wr->id), *err = NULL, *body;
		size_t len;

		body = body_for(wr->id, k, &len);
		if (!requests_write(wr->rq, s, "executor", step, k + 1, body, len, &err))
			fail_msg("%s", err);
		free(body);
		free(step);
	}
	return NULL;
}

static void test_writers_do_not_interleave(void **state)
{
	char *dir = testdir_new("requests-threads");
	struct requests *rq = requests_open(dir, true, 0);
	struct writer wr[WRITERS];
	pthread_t t[WRITERS];

	(void)state;
	for (int i = 0; i < WRITERS; i++) {
		wr[i] = (struct writer){rq, i};
		assert_int_equal(pthread_create(&t[i], NULL, write_many, &wr[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	requests_close(rq);
	assert_int_equal(whole_lines(dir), WRITERS * PER_WRITER);
	for (int i = 0; i < WRITERS; i++) {
		char *step = xasprintf("w%d", i);
		struct request_ref *v;
		size_t n = requests_list(dir, step, 0, &v);
		unsigned long last = 0;

		assert_int_equal(n, PER_WRITER);
		for (size_t k = 0; k < n; k++) {
			char *err = NULL, *got, *want;
			size_t len, wlen;

			assert_true(v[k].seq > last); /* oldest first */
			last = v[k].seq;
			assert_int_equal(v[k].attempt, (int)k + 1);
			want = body_for(i, (int)k, &wlen);
			got = requests_read(dir, &v[k], REQUESTS_MAX_BYTES, &len, NULL, &err);
			assert_non_null(got);
			assert_int_equal(len, wlen);
			assert_memory_equal(got, want, wlen);
			assert_int_equal(v[k].as_text, k % 5 == 4);
			free(got);
			free(want);
		}
		requests_list_free(v, n);
		free(step);
	}
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- a crash, and a line that is not ours ---- */

static void append_raw(const char *dir, const char *text)
{
	char *p = xasprintf("%s/" REQUESTS_FILE, dir);
	FILE *f = fopen(p, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static void test_torn_last_line(void **state)
{
	char *dir = testdir_new("requests-torn"), *err = NULL, *body, *path;
	struct requests *rq = requests_open(dir, true, 0);
	struct request_ref *v;
	struct stat st;
	size_t n;

	(void)state;
	assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, "{\"a\":1}", 7,
				   &err));
	assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, "{\"b\":2}", 7,
				   &err));
	requests_close(rq);
	/* lines that are not whole records: a foreign one, one whose body is not as long as
	 * it says, and, last, one a kill -9 cut in the middle of its body */
	append_raw(dir, "garbage\n{\"seq\":7,\"role\":\"executor\",\"step_id\":\"s\","
			"\"attempt\":1,\"bytes\":99,\"body\":{\"c\":3}}\n");
	/* a length no body has (out of size_t's range: never converted) */
	append_raw(dir, "{\"seq\":8,\"role\":\"executor\",\"step_id\":\"s\","
			"\"attempt\":1,\"bytes\":1e30,\"body_text\":\"x\"}\n");
	append_raw(dir, "{\"seq\":3,\"role\":\"executor\",\"step_id\":\"s\",\"attempt\":1,"
			"\"bytes\":40,\"body\":{\"d\":\"cut her");
	n = requests_list(dir, "s", 1, &v);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].seq, 1);
	assert_int_equal(v[1].seq, 2);
	requests_list_free(v, n);

	/* resumed: the next record starts on a line of its own; the torn one stays out */
	path = xasprintf("%s/" REQUESTS_FILE, dir);
	assert_int_equal(stat(path, &st), 0);
	rq = requests_open(dir, true, 0);
	assert_int_equal(requests_next(rq), 3);
	assert_true(requests_write(rq, 3, "verifier", "s", 1, "{\"e\":5}", 7, &err));
	requests_close(rq);
	n = requests_list(dir, "s", 1, &v);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].seq, 3);
	assert_string_equal(v[2].role, "verifier");
	requests_list_free(v, n);
	body = read_back(dir, "requests.jsonl#3");
	assert_string_equal(body, "{\"e\":5}");
	free(body);
	body = testdir_slurp_in(dir, REQUESTS_FILE);
	assert_non_null(strstr(body, "cut her\n{\"seq\":3,\"role\":\"verifier\""));
	free(body);
	free(path);

	/* a file that is nothing but a torn line lists nothing, and says no more */
	assert_true(testdir_remove(dir));
	free(dir);
	dir = testdir_new("requests-torn-only");
	append_raw(dir, "{\"seq\":1,\"role\":\"planner\",\"step_id\":null,\"attempt\":0,\"bytes\"");
	assert_int_equal(requests_list(dir, NULL, 0, &v), 0);
	requests_list_free(v, 0);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- a listing kept between openings ---- */

static size_t file_size(const char *dir)
{
	char *p = xasprintf("%s/" REQUESTS_FILE, dir);
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	free(p);
	return (size_t)st.st_size;
}

/* The index lists what a fresh listing of the whole file lists (same records, same
 * places): how many. */
static size_t list_both(struct requests_index *ix, const char *dir)
{
	struct request_ref *a, *b;
	size_t n = requests_index_list(ix, "s", 0, &a), m = requests_list(dir, "s", 0, &b);

	assert_int_equal(n, m);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(a[i].seq, b[i].seq);
		assert_int_equal(a[i].body_off, b[i].body_off);
		assert_int_equal(a[i].body_len, b[i].body_len);
		assert_int_equal(a[i].as_text, b[i].as_text);
		assert_int_equal(a[i].attempt, b[i].attempt);
		assert_string_equal(a[i].role, b[i].role);
		assert_string_equal(a[i].name, b[i].name);
	}
	requests_list_free(a, n);
	requests_list_free(b, m);
	return n;
}

static void test_index_reads_what_was_added(void **state)
{
	static const char torn[] = "{\"seq\":9,\"role\":\"executor\",\"step_id\":\"s\","
				   "\"attempt\":1,\"bytes\":40,\"body\":{\"d\":\"cut";
	char *dir = testdir_new("requests-index"), *err = NULL, *body, *p, *q;
	struct requests *rq = requests_open(dir, true, 0);
	struct requests_index *ix = requests_index_new(dir);
	struct request_ref r;
	size_t size, len;

	(void)state;
	assert_int_equal(list_both(ix, dir), 0); /* no file yet */
	assert_int_equal(requests_index_last_read(ix), 0);
	for (int k = 0; k < 3; k++)
		assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, "{\"a\":1}",
					   7, &err));
	assert_int_equal(list_both(ix, dir), 3);
	assert_int_equal(requests_index_last_read(ix), file_size(dir));
	/* opened again with nothing new: nothing is read */
	assert_int_equal(list_both(ix, dir), 3);
	assert_int_equal(requests_index_last_read(ix), 0);
	/* one more: only its line is read */
	size = file_size(dir);
	assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, "not json", 8, &err));
	assert_int_equal(list_both(ix, dir), 4);
	assert_int_equal(requests_index_last_read(ix), file_size(dir) - size);
	requests_close(rq);
	/* a line a crash tore is left out, and read again until it is whole */
	size = file_size(dir);
	append_raw(dir, torn);
	assert_int_equal(list_both(ix, dir), 4);
	assert_int_equal(requests_index_last_read(ix), strlen(torn));
	assert_int_equal(list_both(ix, dir), 4);
	assert_int_equal(requests_index_last_read(ix), strlen(torn));
	/* resumed: the next record starts a line of its own; the torn one stays out */
	rq = requests_open(dir, true, 0);
	assert_int_equal(requests_next(rq), 5);
	assert_true(requests_write(rq, 5, "verifier", "s", 1, "{\"e\":5}", 7, &err));
	requests_close(rq);
	assert_int_equal(list_both(ix, dir), 5);
	assert_int_equal(requests_index_last_read(ix), file_size(dir) - size);
	assert_true(requests_index_find(ix, "requests.jsonl#5", &r));
	body = requests_read(dir, &r, 1024, &len, NULL, &err);
	assert_string_equal(body, "{\"e\":5}");
	free(body);
	requests_ref_release(&r);
	assert_true(requests_index_find(ix, "requests.jsonl#4", &r));
	body = requests_read(dir, &r, 1024, &len, NULL, &err);
	assert_string_equal(body, "not json");
	free(body);
	requests_ref_release(&r);
	assert_false(requests_index_find(ix, "requests.jsonl#9", &r));
	assert_int_equal(requests_index_last_read(ix), 0);
	/* a file put in its place is read from its start */
	p = xasprintf("%s/" REQUESTS_FILE, dir);
	q = xasprintf("%s/other.jsonl", dir);
	assert_int_equal(rename(p, q), 0);
	rq = requests_open(dir, true, 0);
	assert_true(requests_write(rq, requests_next(rq), "planner", "s", 1, "{}", 2, &err));
	requests_close(rq);
	assert_int_equal(list_both(ix, dir), 1);
	assert_int_equal(requests_index_last_read(ix), file_size(dir));
	/* and so is one cut short, or gone */
	assert_int_equal(truncate(p, 0), 0);
	assert_int_equal(list_both(ix, dir), 0);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(list_both(ix, dir), 0);
	free(p);
	free(q);
	requests_index_free(ix);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- a body kept as a string, read back to a bound ---- */

/* Reads request `seq` of step s, up to max. */
static char *read_seq(const char *dir, unsigned long seq, size_t max, size_t *len, bool *cut,
		      char **err)
{
	struct request_ref r;
	char *name = requests_name(seq), *body;

	assert_true(requests_find(dir, name, &r));
	free(name);
	body = requests_read(dir, &r, max, len, cut, err);
	requests_ref_release(&r);
	return body;
}

static void test_text_body_decoded_to_its_bound(void **state)
{
	/* escapes as a foreign writer may use them: \/, \u of 1 to 4 bytes, a pair */
	static const char line[] =
	    "{\"seq\":2,\"role\":\"executor\",\"step_id\":\"s\",\"attempt\":1,\"bytes\":15,"
	    "\"body_text\":\"a\\/\\u00e9\\u20ac\\ud83d\\ude00\\n\\u0041\"}\n";
	static const char decoded[] = "a/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\nA";
	char *dir = testdir_new("requests-text"), *err = NULL, *body, *big;
	struct requests *rq;
	size_t len, n = 200000;
	bool cut;

	(void)state;
	/* 1: past its fourth byte, an escape no JSON reader takes: never looked at */
	append_raw(dir, "{\"seq\":1,\"role\":\"executor\",\"step_id\":\"s\",\"attempt\":1,"
			"\"bytes\":6,\"body_text\":\"abcd\\qz\"}\n");
	body = read_seq(dir, 1, 4, &len, &cut, &err);
	assert_non_null(body);
	assert_int_equal(len, 4);
	assert_string_equal(body, "abcd");
	assert_true(cut);
	free(body);
	assert_null(read_seq(dir, 1, 1024, &len, &cut, &err)); /* read whole, it is refused */
	assert_string_equal(err, "its body_text is not a JSON string");
	free(err);
	err = NULL;
	/* 2: every bound gives the decoded bytes up to it, a character cut where it falls */
	append_raw(dir, line);
	for (size_t max = 0; max <= sizeof(decoded); max++) {
		size_t want = max < sizeof(decoded) - 1 ? max : sizeof(decoded) - 1;

		body = read_seq(dir, 2, max, &len, &cut, &err);
		assert_non_null(body);
		assert_int_equal(len, want);
		assert_memory_equal(body, decoded, want);
		assert_int_equal(body[len], 0);
		assert_int_equal(cut, want < sizeof(decoded) - 1);
		free(body);
	}
	/* 3: a body with a NUL is read back whole, NUL included */
	rq = requests_open(dir, true, 0);
	assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, "a\0b", 3, &err));
	body = read_seq(dir, 3, 1024, &len, &cut, &err);
	assert_int_equal(len, 3);
	assert_memory_equal(body, "a\0b", 3);
	assert_false(cut);
	free(body);
	/* 4: a long body (pieces of 64 KiB), escapes at every alignment */
	big = xmalloc(n);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 7 == 3 ? "\n\"\\\x01"[i % 4] : (char)('a' + i % 26);
	assert_true(requests_write(rq, requests_next(rq), "executor", "s", 1, big, n, &err));
	requests_close(rq);
	body = read_seq(dir, 4, n, &len, &cut, &err);
	assert_int_equal(len, n);
	assert_memory_equal(body, big, n);
	assert_false(cut);
	free(body);
	for (size_t max = 65520; max < 65560; max++) {
		body = read_seq(dir, 4, max, &len, &cut, &err);
		assert_int_equal(len, max);
		assert_memory_equal(body, big, max);
		assert_true(cut);
		free(body);
	}
	free(big);
	/* 5: 12-byte escapes (surrogate pairs) across the pieces' edges */
	{
		struct strbuf sb;
		size_t pairs = 20000;

		strbuf_init(&sb);
		strbuf_addf(&sb, "{\"seq\":5,\"role\":\"executor\",\"step_id\":\"s\","
				 "\"attempt\":1,\"bytes\":%zu,\"body_text\":\"",
			    pairs * 4);
		for (size_t i = 0; i < pairs; i++)
			strbuf_adds(&sb, i % 3 ? "\\ud83d\\ude00" : "x\\ud83d\\ude00");
		strbuf_adds(&sb, "\"}\n");
		append_raw(dir, sb.buf);
		strbuf_release(&sb);
		body = read_seq(dir, 5, REQUESTS_MAX_BYTES, &len, &cut, &err);
		assert_non_null(body);
		assert_int_equal(len, pairs * 4 + (pairs + 2) / 3);
		for (size_t i = 0, at = 0; i < pairs; i++) {
			if (!(i % 3))
				assert_int_equal(body[at++], 'x');
			assert_memory_equal(body + at, "\xf0\x9f\x98\x80", 4);
			at += 4;
		}
		assert_false(cut);
		free(body);
	}
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- runs kept by an older pevtui ---- */

static void test_old_layout_still_read(void **state)
{
	char *dir = testdir_new("requests-old"), *err = NULL, *body, *p;
	struct requests *rq;
	struct request_ref *v, r;
	size_t n, len;

	(void)state;
	p = xasprintf("%s/" REQUESTS_DIR, dir);
	assert_int_equal(mkdir(p, 0700), 0);
	free(p);
	put(dir, "requests/000001-planner-~-0.json", "{\"old\":\"planner\"}");
	put(dir, "requests/000002-executor-s1-1.json", "{\"old\":\"executor\"}");
	put(dir, "requests/000003-verifier-s1-1.json", "{\"old\":\"verifier\"}");
	put(dir, "requests/notes.txt", "not a request");
	n = requests_list(dir, "s1", 1, &v);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "requests/000002-executor-s1-1.json");
	assert_string_equal(v[1].role, "verifier");
	body = requests_read(dir, &v[0], 1024, &len, NULL, &err);
	assert_string_equal(body, "{\"old\":\"executor\"}");
	free(body);
	p = requests_file_name(&v[0]);
	assert_string_equal(p, "000002-executor-s1-1.json");
	free(p);
	requests_list_free(v, n);

	/* resumed by this pevtui: numbers go on, new ones go in requests.jsonl, both list */
	rq = requests_open(dir, true, 0);
	assert_int_equal(requests_next(rq), 4);
	assert_true(requests_write(rq, 4, "executor", "s1", 1, "{\"new\":1}", 9, &err));
	requests_close(rq);
	n = requests_list(dir, "s1", 1, &v);
	assert_int_equal(n, 3);
	assert_int_equal(v[2].seq, 4);
	assert_string_equal(v[2].name, "requests.jsonl#4");
	requests_list_free(v, n);
	assert_true(requests_find(dir, "requests/000001-planner-~-0.json", &r));
	requests_ref_release(&r);
	body = read_back(dir, "requests/000001-planner-~-0.json");
	assert_string_equal(body, "{\"old\":\"planner\"}");
	free(body);
	body = read_back(dir, "requests.jsonl#4");
	assert_string_equal(body, "{\"new\":1}");
	free(body);
	assert_false(requests_find(dir, "requests/../journal.jsonl", &r));
	assert_true(testdir_remove(dir));
	free(dir);
}

/* What is kept as JSON, as it is, and what as a string. */
static void test_valid_line(void **state)
{
	static const char *const good[] = {
	    "{}", "[]", " {\"a\": [1, -0.5e+3, true, false, null, \"\\u00e9\\ud83d\\ude00\"]} ",
	    "\"s\"", "0", "-1", "1E9", "{\"a\":{\"b\":[[]]}}", "\"\xc3\xa9\"", NULL};
	static const char *const bad[] = {
	    "", " ", "{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-",
	    "1e", "tru", "nul", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
	    "\"a\tb\"", "{\"a\":\n1}", "{\"a\":1}\r", "[1] [2]", "{\"a\":1}x", "\"open", NULL};
	char deep[1100];

	(void)state;
	for (int i = 0; good[i]; i++)
		if (!jsonx_valid_line(good[i], strlen(good[i])))
			fail_msg("refused: %s", good[i]);
	for (int i = 0; bad[i]; i++)
		if (jsonx_valid_line(bad[i], strlen(bad[i])))
			fail_msg("taken: %s", bad[i]);
	assert_false(jsonx_valid_line("{}\0", 3)); /* a NUL after it */
	memset(deep, '[', 520);
	memset(deep + 520, ']', 520);
	assert_false(jsonx_valid_line(deep, 1040)); /* deeper than 512 */
	assert_true(jsonx_valid_line(deep + 20, 1000));
}

/* ---- no key in a kept body ---- */

struct capture {
	struct requests *rq;
	unsigned long seq;
	int bodies;
};

static void on_request(void *ctx, const char *body, size_t len)
{
	struct capture *c = ctx;
	char *err = NULL;

	if (!c->seq)
		c->seq = requests_next(c->rq);
	assert_true(requests_write(c->rq, c->seq, "executor", "s1", 1, body, len, &err));
	c->bodies++;
}

/* A port on 127.0.0.1 that refuses connections: bound, never listening. */
static int closed_port(int *fd)
{
	struct sockaddr_in a = {0};
	socklen_t l = sizeof(a);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(*fd >= 0);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(*fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(*fd, (struct sockaddr *)&a, &l), 0);
	return ntohs(a.sin_port);
}

/* Sends one request through a real provider (it fails: nobody listens) and returns the
 * body the store kept. */
static char *kept_body(const char *dir, bool anthropic)
{
	struct http_options opt = {.connect_timeout_ms = 2000, .max_retries = -1};
	/* As if a tool result had read a .env: the key in the body itself. */
	struct llm_msg msg = {.kind = LLM_MSG_USER,
			      .text = "count the words; the .env says KEY=" FAKE_KEY};
	struct llm_request req = {.role = ROLE_EXECUTOR,
				  .purpose = PURPOSE_EXECUTE,
				  .model = "m",
				  .system = "you are a test",
				  .msgs = &msg,
				  .n_msgs = 1,
				  .max_tokens = 64};
	struct capture c = {requests_open(dir, true, 0), 0, 0};
	struct llm_hooks hooks = {.ctx = &c, .on_request = on_request};
	struct llm_response res = {0};
	char *err = NULL, *url, *body, *name;
	int fd, port = closed_port(&fd);
	struct provider *p;

	url = xasprintf("http://127.0.0.1:%d", port);
	p = anthropic ? provider_anthropic_new(url, FAKE_KEY, &err)
		      : provider_openai_new(url, FAKE_KEY, &err);
	assert_non_null(p);
	if (anthropic)
		provider_anthropic_set_http(p, &opt);
	else
		provider_openai_set_http(p, &opt);
	assert_int_equal(provider_complete(p, &req, &hooks, &res, &err), PROVIDER_ERROR);
	/* the error names no key either */
	assert_null(strstr(err, "FAKE"));
	free(err);
	assert_true(c.bodies >= 1);
	name = requests_name(c.seq);
	body = read_back(dir, name);
	assert_non_null(body);
	free(name);
	llm_response_release(&res);
	provider_free(p);
	close(fd);
	free(url);
	requests_close(c.rq);
	return body;
}

static void test_no_key_in_kept_bodies(void **state)
{
	char *dir = testdir_new("requests-key");

	(void)state;
	for (int anthropic = 0; anthropic < 2; anthropic++) {
		char *body = kept_body(dir, anthropic), *grep;
		cJSON *o = cJSON_Parse(body);

		/* the body as sent: the prompt is there, the key (a header) is not */
		assert_non_null(o);
		assert_non_null(strstr(body, "count the words"));
		assert_non_null(strstr(body, "you are a test"));
		assert_null(strstr(body, FAKE_KEY));
		assert_null(strstr(body, "FAKE"));
		cJSON_Delete(o);
		free(body);
		grep = xasprintf("grep -r -q FAKE '%s'", dir);
		assert_int_not_equal(system(grep), 0);
		free(grep);
	}
	assert_true(testdir_remove(dir));
	free(dir);
}

/* ---- bodies pevtui printed: kept without a second check ---- */

/* The request file of a folder where `body` alone was written, by requests_write or by
 * requests_write_printed. */
static char *one_record(const char *body, size_t len, bool printed)
{
	char *dir = testdir_new("requests-printed"), *err = NULL, *text;
	struct requests *rq = requests_open(dir, true, 0);
	unsigned long seq = requests_next(rq);

	assert_true(printed ? requests_write_printed(rq, seq, "executor", "s1", 2, body, len, &err)
			    : requests_write(rq, seq, "executor", "s1", 2, body, len, &err));
	assert_null(err);
	requests_close(rq);
	text = testdir_slurp_in(dir, REQUESTS_FILE);
	assert_non_null(text);
	assert_true(testdir_remove(dir));
	free(dir);
	return text;
}

/* A body printed as compact JSON is written as requests_write writes it, byte for byte:
 * one the simulated provider builds, one with more '{' in its strings than a record may
 * nest (counted, then checked), and ones nested as deep as a record takes and deeper
 * (cJSON prints those; they go as text). */
static void test_printed_bodies_written_alike(void **state)
{
	struct llm_msg msg = {.kind = LLM_MSG_USER, .text = "say \"hi\"\n\x01 {[ \xe2\x80\xa8"};
	size_t nt;
	const struct tool_def *const *all = tool_registry(&nt);
	struct llm_request req = {.model = "m", .system = "sys\tem", .msgs = &msg, .n_msgs = 1,
				  .tools = all, .n_tools = nt, .max_tokens = 10};
	char *bodies[4], braces[700], *deep[2];
	cJSON *o = cJSON_CreateObject();

	(void)state;
	bodies[0] = requests_body_of(&req);
	memset(braces, '{', sizeof(braces) - 1);
	braces[sizeof(braces) - 1] = '\0';
	cJSON_AddStringToObject(o, "text", braces);
	bodies[1] = jsonx_print(o);
	cJSON_Delete(o);
	for (int i = 0; i < 2; i++) {
		size_t depth = JSONX_LINE_DEPTH + (size_t)i;

		deep[i] = xcalloc(2 * depth + 1, 1);
		memset(deep[i], '[', depth);
		memset(deep[i] + depth, ']', depth);
		bodies[2 + i] = deep[i];
	}
	for (int i = 0; i < 4; i++) {
		char *checked = one_record(bodies[i], strlen(bodies[i]), false);
		char *printed = one_record(bodies[i], strlen(bodies[i]), true);

		assert_string_equal(printed, checked);
		/* as deep as a record takes: kept as JSON; deeper: as text */
		assert_non_null(strstr(printed, i == 3 ? "\"body_text\":\"[[[" : "\"body\":"));
		free(checked);
		free(printed);
	}
	for (int i = 0; i < 2; i++)
		free(bodies[i]);
	free(deep[0]);
	free(deep[1]);
}

/* The caller's word is taken: what requests_write checks and keeps as text,
 * requests_write_printed keeps as it is (so only pevtui's own prints are given to it). */
static void test_printed_is_not_checked_again(void **state)
{
	static const char body[] = "{\"a\":}";
	char *checked = one_record(body, strlen(body), false);
	char *printed = one_record(body, strlen(body), true);

	(void)state;
	assert_non_null(strstr(checked, ",\"body_text\":\"{\\\"a\\\":}\"}\n"));
	assert_non_null(strstr(printed, ",\"body\":{\"a\":}}\n"));
	free(checked);
	free(printed);
}

struct routed {
	int printed, other;
	char *body;
};

static void route_printed(void *ctx, const char *body, size_t len)
{
	struct routed *r = ctx;

	r->printed++;
	free(r->body);
	r->body = xstrndup(body, len);
}

static void route_other(void *ctx, const char *body, size_t len)
{
	struct routed *r = ctx;

	r->other++;
	free(r->body);
	r->body = xstrndup(body, len);
}

/* A wire body goes to on_request_printed as the provider printed it; one with the key
 * hidden in it is no longer that print and goes to on_request, to be checked. */
static void test_wire_bodies_routed_by_origin(void **state)
{
	struct http_options opt = {.connect_timeout_ms = 2000, .max_retries = -1};
	struct llm_msg plain = {.kind = LLM_MSG_USER, .text = "count the words"};
	struct llm_msg leaky = {.kind = LLM_MSG_USER,
				.text = "count the words; the .env says KEY=" FAKE_KEY};

	(void)state;
	for (int anthropic = 0; anthropic < 2; anthropic++)
		for (int leak = 0; leak < 2; leak++) {
			struct llm_request req = {.role = ROLE_EXECUTOR, .model = "m",
						  .system = "s", .msgs = leak ? &leaky : &plain,
						  .n_msgs = 1, .max_tokens = 64};
			struct routed r = {0, 0, NULL};
			struct llm_hooks hooks = {.ctx = &r, .on_request = route_other,
						  .on_request_printed = route_printed};
			struct llm_response res = {0};
			char *err = NULL, *url;
			int fd, port = closed_port(&fd);
			struct provider *p;

			url = xasprintf("http://127.0.0.1:%d", port);
			p = anthropic ? provider_anthropic_new(url, FAKE_KEY, &err)
				      : provider_openai_new(url, FAKE_KEY, &err);
			assert_non_null(p);
			if (anthropic)
				provider_anthropic_set_http(p, &opt);
			else
				provider_openai_set_http(p, &opt);
			assert_int_equal(provider_complete(p, &req, &hooks, &res, &err),
					 PROVIDER_ERROR);
			free(err);
			assert_int_equal(leak ? r.other : r.printed, 1);
			assert_int_equal(leak ? r.printed : r.other, 0);
			assert_non_null(r.body);
			assert_null(strstr(r.body, FAKE_KEY));
			assert_non_null(strstr(r.body, "count the words"));
			free(r.body);
			llm_response_release(&res);
			provider_free(p);
			close(fd);
			free(url);
		}
}

/* The simulated provider sends nothing: the request as the engine built it. */
static void test_body_of(void **state)
{
	struct llm_tool_call call = {"c1", "read_file", "{\"path\":\"a.txt\"}"};
	struct llm_tool_result tr = {"c1", "line 1\nline 2", false};
	struct llm_msg msgs[3] = {{.kind = LLM_MSG_USER, .text = "do it"},
				  {.kind = LLM_MSG_ASSISTANT, .calls = &call, .n_calls = 1},
				  {.kind = LLM_MSG_TOOL_RESULTS, .results = &tr, .n_results = 1}};
	size_t nt;
	const struct tool_def *const *all = tool_registry(&nt);
	struct llm_request req = {.model = "sim-executor", .system = "sys", .msgs = msgs,
				  .n_msgs = 3, .tools = all, .n_tools = 1, .max_tokens = 10};
	char *b = requests_body_of(&req);
	cJSON *o = cJSON_Parse(b), *m;

	(void)state;
	assert_non_null(o);
	assert_non_null(cJSON_GetObjectItem(o, "pevtui_note"));
	assert_string_equal(cJSON_GetObjectItem(o, "system")->valuestring, "sys");
	m = cJSON_GetObjectItem(o, "messages");
	assert_int_equal(cJSON_GetArraySize(m), 3);
	assert_string_equal(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 1),
								       "tool_calls"),
						   0),
				"name")
		->valuestring,
	    "read_file");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "tools")), 1);
	cJSON_Delete(o);
	free(b);
}

/* The body is written by hand: byte for byte what cJSON prints of the same tree, tricky
 * text, a schema cJSON reprints differently, input that is not JSON and a kept schema
 * (the second call) included. */
static void test_body_of_as_cjson(void **state)
{
	static const char odd[] =
	    "q\" b\\ \b\f\n\r\t \x01\x1f \x7f \xc3\xa9 \xe2\x80\xa8 end";
	struct tool_def tool = {
	    .name = "t",
	    .description = odd,
	    .schema_json = " { \"a\" : 1.0, \"b\":[ true ,null], \"c\":\"\\u00e9\" } "};
	struct tool_def bad = {.name = "u", .description = "d", .schema_json = "{not json"};
	const struct tool_def *tools[] = {&tool, &bad};
	struct llm_tool_call call = {"c1", "t", "{\"x\": 2e0}"}, call2 = {"c2", "t", "nope"};
	struct llm_tool_call calls[] = {call, call2};
	struct llm_tool_result tr[] = {{"c1", (char *)odd, true}, {"c2", "", false}};
	struct llm_msg msgs[3] = {
	    {.kind = LLM_MSG_USER, .text = (char *)odd},
	    {.kind = LLM_MSG_ASSISTANT, .text = "a", .calls = calls, .n_calls = 2},
	    {.kind = LLM_MSG_TOOL_RESULTS, .results = tr, .n_results = 2}};
	struct llm_request req = {.model = "m", .system = odd, .msgs = msgs, .n_msgs = 3,
				  .tools = tools, .n_tools = 2, .max_tokens = 77,
				  .want_json = true};
	struct schemas *memo = schemas_new();
	cJSON *o = cJSON_CreateObject(), *arr, *m, *x;
	char *want, *got;

	(void)state;
	cJSON_AddStringToObject(o, "pevtui_note",
				"nothing went over the wire (simulated provider): this is the "
				"request as the engine built it");
	cJSON_AddStringToObject(o, "model", "m");
	cJSON_AddNumberToObject(o, "max_tokens", 77);
	cJSON_AddBoolToObject(o, "want_json", true);
	cJSON_AddStringToObject(o, "system", odd);
	arr = cJSON_AddArrayToObject(o, "tools");
	for (int i = 0; i < 2; i++) {
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "name", tools[i]->name);
		cJSON_AddStringToObject(x, "description", tools[i]->description);
		m = cJSON_Parse(tools[i]->schema_json);
		cJSON_AddItemToObject(x, "input_schema",
				      m ? m : cJSON_CreateString(tools[i]->schema_json));
		cJSON_AddItemToArray(arr, x);
	}
	arr = cJSON_AddArrayToObject(o, "messages");
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "user");
	cJSON_AddStringToObject(m, "content", odd);
	cJSON_AddItemToArray(arr, m);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "assistant");
	cJSON_AddStringToObject(m, "content", "a");
	x = cJSON_AddArrayToObject(m, "tool_calls");
	for (int i = 0; i < 2; i++) {
		cJSON *c = cJSON_CreateObject(), *in = cJSON_Parse(calls[i].input_json);

		cJSON_AddStringToObject(c, "id", calls[i].id);
		cJSON_AddStringToObject(c, "name", calls[i].name);
		cJSON_AddItemToObject(c, "input",
				      in ? in : cJSON_CreateString(calls[i].input_json));
		cJSON_AddItemToArray(x, c);
	}
	cJSON_AddItemToArray(arr, m);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "role", "tool");
	x = cJSON_AddArrayToObject(m, "results");
	for (int i = 0; i < 2; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "call_id", tr[i].call_id);
		cJSON_AddStringToObject(r, "content", tr[i].content);
		cJSON_AddBoolToObject(r, "is_error", tr[i].is_error);
		cJSON_AddItemToArray(x, r);
	}
	cJSON_AddItemToArray(arr, m);
	want = cJSON_PrintUnformatted(o);
	for (int round = 0; round < 2; round++) {
		req.schemas = round ? memo : NULL;
		got = requests_body_of(&req);
		assert_string_equal(got, want);
		free(got);
	}
	got = requests_body_of(&req); /* the schemas kept by the call before */
	assert_string_equal(got, want);
	free(got);
	cJSON_free(want);
	cJSON_Delete(o);
	schemas_free(memo);
}

/* A tool call's input in the body: what cJSON printed of it parsed (or it as a string),
 * for inputs written back as they are without cJSON and for every kind it must leave to
 * cJSON (blanks, numbers it spells otherwise, escapes it writes otherwise, bad JSON,
 * trailing text, deep nesting). */
static void test_body_of_inputs_as_cjson(void **state)
{
	static const char *const inputs[] = {
	    "{}", "[]", "{\"path\":\"a.txt\",\"content\":\"x\"}", "0", "-1", "7", "123456789",
	    "-123456789", "1234567890", "2147483647", "2147483648", "-0", "01", "1.0", "1.5",
	    "1e2", "1E2", "-", "--1", "true", "false", "null", "tru", "nul", "truex", "\"\"",
	    "\"a\\\"b\\\\c\\/d\"", "\"\\b\\f\\n\\r\\t\"", "\"\\u0001\\u001f\\u0008\\u000a\"",
	    "\"\\u0000x\"", "\"\\u0041\"", "\"\\u00e9\"", "\"\\u00E9\"", "\"\\u001F\"",
	    "\"\\ud83d\\ude00\"", "\"\\x\"", "\"\\", "\"\\u00", "\"\\u001", "\"abc",
	    "\"caf\xc3\xa9 \xe2\x80\xa8 \x7f \xff\"", "\"tab\there\"", "{\"a\":1} ", " {\"a\":1}",
	    "{\"a\" :1}", "{\"a\":1,}", "[1,]", "[,1]", "{\"a\":1}{", "{\"a\"}", "{1:2}",
	    "{\"a\":[1,{\"b\":[true,false,null,\"\"]}],\"a\":\"dup\"}", "[[[[[[[[]]]]]]]]",
	    "{\"x\": 2e0}", "nope", "", "[\"\\u00010\"]", "{\"k\\n\":\"v\\u0002\"}",
	};
	struct strbuf deep = STRBUF_INIT, deeper = STRBUF_INIT;
	const char *all[sizeof(inputs) / sizeof(inputs[0]) + 3];
	size_t n = 0;

	(void)state;
	for (int i = 0; i < 64; i++)
		strbuf_addc(&deep, '[');
	for (int i = 0; i < 64; i++)
		strbuf_addc(&deep, ']');
	strbuf_addc(&deeper, '[');
	strbuf_adds(&deeper, deep.buf);
	strbuf_addc(&deeper, ']');
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		all[n++] = inputs[i];
	all[n++] = deep.buf;
	all[n++] = deeper.buf;
	all[n++] = NULL;
	for (size_t i = 0; i < n; i++) {
		struct llm_tool_call call = {"c1", "t", (char *)all[i]};
		struct llm_msg msg = {.kind = LLM_MSG_ASSISTANT, .text = "a", .calls = &call,
				      .n_calls = 1};
		struct llm_request req = {.model = "m", .system = "s", .msgs = &msg, .n_msgs = 1,
					  .max_tokens = 1};
		cJSON *in = all[i] ? cJSON_Parse(all[i]) : NULL;
		char *want, *got = requests_body_of(&req), *at;

		if (!in)
			in = cJSON_CreateString(all[i] ? all[i] : "");
		want = cJSON_PrintUnformatted(in);
		at = strstr(got, ",\"input\":");
		assert_non_null(at);
		at += strlen(",\"input\":");
		/* the input, then the ends of the call, tool_calls, message, messages, body */
		if (strlen(at) != strlen(want) + 5 || strncmp(at, want, strlen(want)) ||
		    strcmp(at + strlen(want), "}]}]}"))
			fail_msg("input %zu \"%s\": got %s, want %s", i, all[i] ? all[i] : "(null)",
				 at, want);
		cJSON_free(want);
		cJSON_Delete(in);
		free(got);
	}
	strbuf_release(&deep);
	strbuf_release(&deeper);
}

/* requests_write_body_of writes the line requests_write_printed writes of requests_body_of,
 * byte for byte: tricky texts, every kind of message, a step id to escape or none, after a
 * torn line, a body nested deeper than a record takes (kept as text), past the cap. */
static void test_write_body_of_as_printed(void **state)
{
	static const char odd[] =
	    "q\" b\\ \b\f\n\r\t \x01\x1f \x7f \xc3\xa9 \xe2\x80\xa8 {[ end";
	size_t depth = JSONX_LINE_DEPTH + 1;
	char *deep = xcalloc(2 * depth + 1, 1);
	struct tool_def tool = {.name = "t", .description = odd, .schema_json = "{\"a\":1.0}"};
	struct tool_def deep_tool = {.name = "d", .description = "d", .schema_json = deep};
	const struct tool_def *tools[] = {&tool, &deep_tool};
	struct llm_tool_call calls[] = {{"c1", "t", "{\"x\": 2e0}"}, {"c2", "t", "nope"}};
	struct llm_tool_result tr[] = {{"c1", (char *)odd, true}, {"c2", "", false}};
	struct llm_msg msgs[3] = {
	    {.kind = LLM_MSG_USER, .text = (char *)odd},
	    {.kind = LLM_MSG_ASSISTANT, .text = "a", .calls = calls, .n_calls = 2},
	    {.kind = LLM_MSG_TOOL_RESULTS, .results = tr, .n_results = 2}};
	struct llm_request req = {.model = "m", .system = odd, .msgs = msgs, .n_msgs = 3,
				  .tools = tools, .n_tools = 1, .max_tokens = -5};
	static const char *const steps[] = {"s1", NULL, "odd id/..\"\n\xc3\xa9"};
	char *dirs[2], *files[2];
	struct schemas *memo = schemas_new();

	(void)state;
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	for (int way = 0; way < 2; way++) {
		struct requests *rq;
		char *err = NULL;

		dirs[way] = testdir_new(way ? "requests-body-of-b" : "requests-body-of-a");
		append_raw(dirs[way], "{\"seq\":1,\"role\":\"exec"); /* torn by a crash */
		rq = requests_open(dirs[way], true, 0);
		for (int i = 0; i < 6; i++) {
			unsigned long seq = requests_next(rq);
			const char *step = steps[i % 3];
			int attempt = i * 7 - 3;

			req.n_msgs = (size_t)(i % 3) + 1;
			req.n_tools = i == 4 ? 2 : (size_t)(i % 2);
			req.want_json = i % 2;
			req.schemas = i >= 3 ? memo : NULL;
			if (way) {
				assert_true(requests_write_body_of(rq, seq, "executor", step,
								   attempt, &req, &err));
			} else {
				char *body = requests_body_of(&req);

				assert_true(requests_write_printed(rq, seq, "executor", step,
								   attempt, body, strlen(body),
								   &err));
				free(body);
			}
			assert_null(err);
		}
		/* not a seq of this run */
		assert_false(requests_write_body_of(rq, 99, "executor", "s", 1, &req, &err));
		assert_string_equal(err, "not a request of this run");
		free(err);
		requests_close(rq);
		files[way] = testdir_slurp_in(dirs[way], REQUESTS_FILE);
		assert_non_null(files[way]);
	}
	assert_string_equal(files[1], files[0]);
	assert_non_null(strstr(files[1], "\"body_text\":")); /* the deep one */
	for (int way = 0; way < 2; way++) {
		free(files[way]);
		assert_true(testdir_remove(dirs[way]));
		free(dirs[way]);
	}

	/* past the cap: not kept, and said so, as requests_write_printed does */
	{
		char *dir = testdir_new("requests-body-of-cap"), *err = NULL;
		struct requests *rq = requests_open(dir, true, 64);
		unsigned long seq = requests_next(rq);

		req.n_tools = 0;
		assert_false(requests_write_body_of(rq, seq, "executor", "s", 1, &req, &err));
		assert_non_null(strstr(err, "cap"));
		assert_true(requests_capped(rq));
		free(err);
		requests_close(rq);
		assert_true(testdir_remove(dir));
		free(dir);
	}
	schemas_free(memo);
	free(deep);
}

/* ---- tools' schemas, printed once per run ---- */

static void keep_body(void *ctx, const char *body, size_t len)
{
	char **out = ctx;

	free(*out);
	*out = xstrndup(body, len);
}

/* The body a real provider builds for `req` (it is never answered: nobody listens). */
static char *wire_body(bool anthropic, const struct llm_request *req)
{
	struct http_options opt = {.connect_timeout_ms = 2000, .max_retries = -1};
	struct llm_response res = {0};
	char *err = NULL, *url, *body = NULL;
	struct llm_hooks hooks = {.ctx = &body, .on_request = keep_body};
	int fd, port = closed_port(&fd);
	struct provider *p;

	url = xasprintf("http://127.0.0.1:%d", port);
	p = anthropic ? provider_anthropic_new(url, "k", &err)
		      : provider_openai_new(url, "k", &err);
	assert_non_null(p);
	if (anthropic)
		provider_anthropic_set_http(p, &opt);
	else
		provider_openai_set_http(p, &opt);
	assert_int_equal(provider_complete(p, req, &hooks, &res, &err), PROVIDER_ERROR);
	free(err);
	llm_response_release(&res);
	provider_free(p);
	close(fd);
	free(url);
	assert_non_null(body);
	return body;
}

/* The wire bodies are the same, byte for byte, whether the schemas come from the run's
 * memo or are parsed for the call; a schema that is not an object goes as the empty one. */
static void test_schemas_once_per_run(void **state)
{
	struct tool_def tool = {.name = "t", .description = "d",
				.schema_json = " { \"type\" : \"object\", \"n\":1.0 } "};
	struct tool_def arr = {.name = "u", .description = "d", .schema_json = "[1]"};
	struct tool_def bad = {.name = "v", .description = "d", .schema_json = "{nope"};
	struct tool_def none = {.name = "w", .description = "d", .schema_json = NULL};
	const struct tool_def *tools[] = {&tool, &arr, &bad, &none};
	struct llm_msg msg = {.kind = LLM_MSG_USER, .text = "go"};
	struct llm_request req = {.role = ROLE_EXECUTOR, .model = "m", .system = "s",
				  .msgs = &msg, .n_msgs = 1, .tools = tools, .n_tools = 4,
				  .max_tokens = 64};
	struct schemas *memo = schemas_new();
	const char *a, *b;
	bool object;

	(void)state;
	for (int anthropic = 0; anthropic < 2; anthropic++) {
		char *plain, *kept, *again;

		req.schemas = NULL;
		plain = wire_body(anthropic, &req);
		req.schemas = memo;
		kept = wire_body(anthropic, &req);
		again = wire_body(anthropic, &req);
		assert_string_equal(kept, plain);
		assert_string_equal(again, plain);
		assert_non_null(strstr(plain, "{\"type\":\"object\",\"n\":1}"));
		assert_null(strstr(plain, "[1]"));
		free(plain);
		free(kept);
		free(again);
	}
	/* one text per schema, kept: the same pointer every time */
	a = schemas_print(memo, tool.schema_json, &object);
	assert_true(object);
	b = schemas_print(memo, tool.schema_json, &object);
	assert_ptr_equal(a, b);
	assert_string_equal(schemas_print(memo, "[1]", &object), "[1]");
	assert_false(object);
	assert_null(schemas_print(memo, "{nope", &object));
	assert_false(object);
	assert_null(schemas_print(memo, NULL, &object));
	schemas_free(memo);
}

/* A text every call repeats is written as a JSON string once per run: the same bytes as
 * written for the call, the same copy each time after; past a bound, none is kept. */
static void test_strings_once_per_run(void **state)
{
	static const char odd[] = "q\" b\\ \n\t \x01 \x7f \xc3\xa9 \xe2\x80\xa8 end";
	struct schemas *memo = schemas_new();
	struct strbuf sb = STRBUF_INIT;
	const char *first, *again;
	char *copy = xstrdup(odd);
	int i;

	(void)state;
	strbuf_init(&sb);
	strbuf_add_json(&sb, odd, strlen(odd), 0);
	first = schemas_string(memo, odd);
	assert_string_equal(first, sb.buf);
	again = schemas_string(memo, copy); /* found by its text, not its address */
	assert_ptr_equal(again, first);
	assert_null(schemas_string(memo, NULL));
	for (i = 0; i < 100000; i++) {
		char *text = xasprintf("text %d", i);
		const char *kept = schemas_string(memo, text);

		free(text);
		if (!kept)
			break;
	}
	assert_true(i < 100000);
	assert_ptr_equal(schemas_string(memo, odd), first);
	free(copy);
	strbuf_release(&sb);
	schemas_free(memo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_listing),
		cmocka_unit_test(test_parse_names),
		cmocka_unit_test(test_off_keeps_nothing),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_writers_do_not_interleave),
		cmocka_unit_test(test_torn_last_line),
		cmocka_unit_test(test_index_reads_what_was_added),
		cmocka_unit_test(test_text_body_decoded_to_its_bound),
		cmocka_unit_test(test_old_layout_still_read),
		cmocka_unit_test(test_valid_line),
		cmocka_unit_test(test_no_key_in_kept_bodies),
		cmocka_unit_test(test_printed_bodies_written_alike),
		cmocka_unit_test(test_printed_is_not_checked_again),
		cmocka_unit_test(test_wire_bodies_routed_by_origin),
		cmocka_unit_test(test_body_of),
		cmocka_unit_test(test_body_of_as_cjson),
		cmocka_unit_test(test_body_of_inputs_as_cjson),
		cmocka_unit_test(test_write_body_of_as_printed),
		cmocka_unit_test(test_schemas_once_per_run),
		cmocka_unit_test(test_strings_once_per_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
