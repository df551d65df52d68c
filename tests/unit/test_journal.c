/* test_journal — journal.jsonl writing and loading, torn tails, plan.json replacement. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "journal.h"
#include "testdir.h"
#include "xalloc.h"

struct fixture {
	char dir[64];
	char *path; /* dir/journal.jsonl */
};

static int setup(void **state)
{
	struct fixture *fx = xcalloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/pevtui-test-journal-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->path = xasprintf("%s/journal.jsonl", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	assert_true(testdir_remove(fx->dir));
	free(fx->path);
	free(fx);
	return 0;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static cJSON *fields_str(const char *k, const char *v)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, k, v);
	return f;
}

/* A journal of n events (run.start then notices) written through a real bus. */
static void make_journal(const char *dir, int n)
{
	char *err = NULL;
	struct journal *j = journal_open(dir, &err);
	struct bus *b = bus_new();

	assert_non_null(j);
	bus_subscribe(b, journal_on_event, j);
	bus_publish(b, EV_RUN_START, fields_str("task", "count the lines"));
	for (int i = 1; i < n; i++)
		bus_notice(b, "info", NULL, "event number %d", i + 1);
	assert_null(journal_error(j));
	bus_free(b);
	journal_close(j);
}

/* Collects what a load visits. */
struct seen {
	int n;
	int stop_after; /* 0 = never */
	enum event_type types[16];
	unsigned long seqs[16];
	char *step_ids[16];
	char *jsons[16];
};

static bool collect(void *ctx, const struct event *ev)
{
	struct seen *s = ctx;

	if (s->n < 16) {
		s->types[s->n] = ev->type;
		s->seqs[s->n] = ev->seq;
		s->step_ids[s->n] = xstrdup(ev->step_id);
		s->jsons[s->n] = xstrdup(ev->json);
	}
	s->n++;
	return !(s->stop_after && s->n >= s->stop_after);
}

static void seen_free(struct seen *s)
{
	for (int i = 0; i < s->n && i < 16; i++) {
		free(s->step_ids[i]);
		free(s->jsons[i]);
	}
}

static void test_round_trip(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	struct seen seen = {0};
	char *err = NULL;
	struct journal *j = journal_open(fx->dir, &err);
	struct bus *b = bus_new();
	cJSON *f, *o;
	struct stat st;

	assert_non_null(j);
	bus_subscribe(b, journal_on_event, j);
	bus_publish(b, EV_RUN_START, fields_str("task", "Summarise \"this\"\nplease"));
	f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "revision", 0);
	cJSON_AddNullToObject(f, "estimate_usd");
	bus_publish(b, EV_PLAN_PROPOSED, f);
	f = fields_str("step_id", "s1");
	cJSON_AddStringToObject(f, "text", "streamed");
	assert_int_equal(bus_publish(b, EV_LLM_DELTA, f), 0);
	f = fields_str("step_id", "s1");
	cJSON_AddNumberToObject(f, "attempt", 1);
	bus_publish(b, EV_STEP_START, f);
	bus_notice(b, "warn", "s1", "slow %s", "tool");
	bus_free(b);
	journal_close(j);

	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_true(journal_load(fx->path, collect, &seen, &info, &err));
	assert_int_equal(seen.n, 4);
	assert_int_equal(info.events, 4);
	assert_int_equal(info.last_seq, 4);
	assert_false(info.torn_tail);
	assert_int_equal(info.torn_offset, -1);
	assert_int_equal(seen.types[0], EV_RUN_START);
	assert_int_equal(seen.types[1], EV_PLAN_PROPOSED);
	assert_int_equal(seen.types[2], EV_STEP_START);
	assert_int_equal(seen.types[3], EV_NOTICE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen.seqs[i], (unsigned long)i + 1);
	assert_null(seen.step_ids[0]);
	assert_string_equal(seen.step_ids[2], "s1");
	assert_string_equal(seen.step_ids[3], "s1");
	o = cJSON_Parse(seen.jsons[0]);
	assert_string_equal(cJSON_GetObjectItem(o, "task")->valuestring,
	                    "Summarise \"this\"\nplease");
	cJSON_Delete(o);
	o = cJSON_Parse(seen.jsons[1]);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(o, "estimate_usd")));
	cJSON_Delete(o);
	o = cJSON_Parse(seen.jsons[3]);
	assert_string_equal(cJSON_GetObjectItem(o, "message")->valuestring, "slow tool");
	assert_string_equal(cJSON_GetObjectItem(o, "level")->valuestring, "warn");
	cJSON_Delete(o);
	seen_free(&seen);
}

static void test_ephemeral_not_journaled(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	struct journal *j = journal_open(fx->dir, &err);
	struct bus *b = bus_new();
	struct journal_load_info info;
	struct stat st;

	bus_subscribe(b, journal_on_event, j);
	for (int i = 0; i < 5; i++)
		assert_int_equal(bus_publish(b, EV_LLM_DELTA, fields_str("text", "x")), 0);
	bus_free(b);
	journal_close(j);
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_int_equal(info.events, 0);
}

/* Byte offsets where each line starts; returns the number of lines. */
static int line_starts(const char *buf, size_t len, long *starts, int max)
{
	int n = 0;

	for (size_t i = 0; i < len && n < max; i++)
		if (i == 0 || buf[i - 1] == '\n')
			starts[n++] = (long)i;
	return n;
}

static void test_torn_tail_at_many_offsets(void **state)
{
	struct fixture *fx = *state;
	size_t len;
	char *full;
	long starts[8];
	int lines;

	make_journal(fx->dir, 5);
	full = read_all(fx->path, &len);
	lines = line_starts(full, len, starts, 8);
	assert_int_equal(lines, 5);
	/* Cut inside line k (0-based) at several places: after one byte, in the middle,
	 * and just before its newline (a complete object without the newline). */
	for (int k = 0; k < lines; k++) {
		long end = (k + 1 < lines) ? starts[k + 1] : (long)len; /* after '\n' */
		long cuts[3] = {starts[k] + 1, (starts[k] + end) / 2, end - 1};

		for (int c = 0; c < 3; c++) {
			struct journal_load_info info;
			char *err = NULL;
			struct journal *j;
			struct bus *b;
			struct stat st;

			write_file(fx->path, full, (size_t)cuts[c]);
			assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
			assert_true(info.torn_tail);
			assert_int_equal(info.events, k);
			assert_int_equal(info.last_seq, k);
			assert_int_equal(info.torn_offset, starts[k]);

			assert_true(journal_repair(fx->path, &info, &err));
			assert_int_equal(stat(fx->path, &st), 0);
			assert_int_equal(st.st_size, starts[k]);

			j = journal_open(fx->dir, &err);
			b = bus_new();
			bus_subscribe(b, journal_on_event, j);
			bus_set_next_seq(b, info.last_seq + 1);
			bus_notice(b, "info", NULL, "after repair");
			bus_free(b);
			journal_close(j);
			assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
			assert_false(info.torn_tail);
			assert_int_equal(info.events, k + 1);
			assert_int_equal(info.last_seq, k + 1);
		}
	}
	/* A cut exactly at a line boundary is not torn. */
	{
		struct journal_load_info info;
		char *err = NULL;

		write_file(fx->path, full, (size_t)starts[3]);
		assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
		assert_false(info.torn_tail);
		assert_int_equal(info.events, 3);
		/* Repair of an intact journal changes nothing. */
		assert_true(journal_repair(fx->path, &info, &err));
		free(read_all(fx->path, &len));
		assert_int_equal(len, (size_t)starts[3]);
	}
	free(full);
}

static void test_unparsable_last_line_is_torn(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	char *err = NULL, *full, *withgarbage;
	size_t len;

	make_journal(fx->dir, 3);
	full = read_all(fx->path, &len);
	withgarbage = xasprintf("%s{\"seq\":4,\"ts\":\"2026\n\n", full);
	write_file(fx->path, withgarbage, strlen(withgarbage));
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_true(info.torn_tail);
	assert_int_equal(info.events, 3);
	assert_int_equal(info.torn_offset, (long)len);
	free(full);
	free(withgarbage);
}

static void expect_error(const char *path, const char *needle, unsigned long events_before)
{
	struct journal_load_info info;
	char *err = NULL;

	assert_false(journal_load(path, NULL, NULL, &info, &err));
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err, needle);
	assert_int_equal(info.events, events_before);
	free(err);
}

static char *line_of(enum event_type t, unsigned long seq)
{
	struct event *ev = event_build(t, seq, fields_str("message", "m"));
	char *s = xasprintf("%s\n", ev->json);

	event_free(ev);
	return s;
}

static void test_bad_middle_line(void **state)
{
	struct fixture *fx = *state;
	char *l1 = line_of(EV_RUN_START, 1), *l2 = line_of(EV_NOTICE, 2);
	char *l3 = line_of(EV_NOTICE, 3);
	char *data;

	/* Line 2 is blank (skipped, but counted), line 4 is broken, line 5 follows it. */
	data = xasprintf("%s\n%s{\"seq\": 3, oops\n%s", l1, l2, l3);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:4: not an event (", 2);
	free(data);

	data = xasprintf("%s{\"seq\":2,\"ts\":\"x\",\"type\":\"no.such\"}\n%s", l1, l3);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:2: not an event (unknown event type", 1);
	free(data);

	/* A NUL byte would hide the rest of the line from the parser. */
	{
		size_t n1 = strlen(l1), n2 = strlen(l2), n3 = strlen(l3);

		data = xmalloc(n1 + n2 + 2 + n3);
		memcpy(data, l1, n1);
		memcpy(data + n1, l2, n2 - 1);          /* line 2 without its newline … */
		memcpy(data + n1 + n2 - 1, "\0x\n", 3); /* … then NUL, junk, newline */
		memcpy(data + n1 + n2 + 2, l3, n3);
		write_file(fx->path, data, n1 + n2 + 2 + n3);
		expect_error(fx->path, "journal.jsonl:2: not an event (a NUL byte", 1);
		free(data);
	}

	/* A bad line followed by a torn line is still a bad middle line. */
	data = xasprintf("%s[1,2]\n{\"seq\":3", l1);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:2: not an event", 1);
	free(data);
	free(l1);
	free(l2);
	free(l3);
}

static void test_seq_gap_and_repeat(void **state)
{
	struct fixture *fx = *state;
	char *l1 = line_of(EV_RUN_START, 1), *l2 = line_of(EV_NOTICE, 2);
	char *l4 = line_of(EV_NOTICE, 4), *l0 = line_of(EV_NOTICE, 0);
	char *data;

	data = xasprintf("%s%s%s", l1, l2, l4);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:3: event seq 4 where 3 was expected (a gap)", 2);
	free(data);

	data = xasprintf("%s%s%s", l1, l2, l2);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:3: event seq 2 where 3 was expected (a repeat)", 2);
	free(data);

	data = xasprintf("%s%s", l2, l1);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:1:", 0);
	free(data);

	/* An ephemeral event (seq 0) has no place in a journal. */
	data = xasprintf("%s%s", l1, l0);
	write_file(fx->path, data, strlen(data));
	expect_error(fx->path, "journal.jsonl:2:", 1);
	free(data);
	free(l0);
	free(l1);
	free(l2);
	free(l4);
}

static void test_empty_and_blank(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	char *err = NULL;
	char *l1 = line_of(EV_RUN_START, 1), *l2 = line_of(EV_NOTICE, 2);
	char *data;

	write_file(fx->path, "", 0);
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_int_equal(info.events, 0);
	assert_int_equal(info.last_seq, 0);
	assert_false(info.torn_tail);

	data = xasprintf("\n%s  \r\n\n%s\n", l1, l2);
	write_file(fx->path, data, strlen(data));
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_int_equal(info.events, 2);
	assert_false(info.torn_tail);
	free(data);
	free(l1);
	free(l2);
}

static void test_missing_file(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	char *err = NULL;

	assert_false(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, strerror(ENOENT)));
	free(err);
	err = NULL;
	/* journal_open in a folder that does not exist says so too. */
	{
		char *nodir = xasprintf("%s/nope", fx->dir);

		assert_null(journal_open(nodir, &err));
		assert_non_null(err);
		assert_non_null(strstr(err, nodir));
		free(err);
		free(nodir);
	}
}

static void test_visitor_stops_early(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	struct seen seen = {0};
	char *err = NULL;

	make_journal(fx->dir, 6);
	seen.stop_after = 2;
	assert_true(journal_load(fx->path, collect, &seen, &info, &err));
	assert_int_equal(seen.n, 2);
	assert_int_equal(info.events, 2);
	assert_int_equal(info.last_seq, 2);
	seen_free(&seen);
	/* NULL info is accepted. */
	assert_true(journal_load(fx->path, NULL, NULL, NULL, &err));
}

static void test_large_journal_streams(void **state)
{
	struct fixture *fx = *state;
	struct journal_load_info info;
	char *err = NULL;
	struct journal *j = journal_open(fx->dir, &err);
	struct bus *b = bus_new();
	size_t big = 1 << 20;
	char *text = xmalloc(big + 1);

	memset(text, 'a', big);
	text[big] = '\0';
	bus_subscribe(b, journal_on_event, j);
	for (int i = 0; i < 12000; i++)
		bus_notice(b, "info", NULL, "event %d", i);
	bus_publish(b, EV_NOTICE, fields_str("message", text)); /* a 1 MiB line */
	bus_notice(b, "info", NULL, "after the big one");
	bus_free(b);
	journal_close(j);
	free(text);
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_int_equal(info.events, 12002);
	assert_int_equal(info.last_seq, 12002);
	assert_false(info.torn_tail);
}

/* A symbolic link planted at plan.json.tmp is not written through. */
static void test_write_plan_not_through_a_link(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	char *victim = xasprintf("%s/victim.txt", fx->dir);
	char *tmp = xasprintf("%s/plan.json.tmp", fx->dir);
	char *text;
	FILE *f = fopen(victim, "w");

	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_true(journal_write_plan(fx->dir, "{\"goal\":\"g\"}", &err));
	text = read_all(victim, NULL);
	assert_string_equal(text, "keep me\n");
	free(text);
	free(victim);
	free(tmp);
}

/* journal.jsonl is a link planted in the run folder: the journal refuses it, with a
 * sentence naming the file, and the link's target is untouched. */
static void test_open_not_through_a_link(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	char *victim = xasprintf("%s/victim.txt", fx->dir);
	char *link = xasprintf("%s/journal.jsonl", fx->dir);
	struct journal *j;
	char *text;
	FILE *f = fopen(victim, "w");

	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, link), 0);
	j = journal_open(fx->dir, &err);
	assert_null(j);
	assert_non_null(err);
	assert_non_null(strstr(err, "journal.jsonl is a link or a pipe"));
	text = read_all(victim, NULL);
	assert_string_equal(text, "keep me\n");
	free(text);
	free(err);
	free(victim);
	free(link);
}

/* A FIFO at journal.jsonl with no reader: refused at once, not a run hung on open. */
static void test_open_refuses_a_fifo(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	char *fifo = xasprintf("%s/journal.jsonl", fx->dir);

	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_null(journal_open(fx->dir, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "journal.jsonl is a link or a pipe"));
	free(err);
	free(fifo);
}

static void test_write_plan_atomic(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	char *plan = xasprintf("%s/plan.json", fx->dir);
	char *tmp = xasprintf("%s/plan.json.tmp", fx->dir);
	char *text, *nodir;
	struct stat st;

	assert_true(journal_write_plan(fx->dir, "{\"goal\":\"first\"}", &err));
	text = read_all(plan, NULL);
	assert_non_null(strstr(text, "\"first\""));
	free(text);
	assert_true(journal_write_plan(fx->dir, "{\"goal\":\"second\"}", &err));
	text = read_all(plan, NULL);
	assert_non_null(strstr(text, "\"second\""));
	assert_null(strstr(text, "first"));
	free(text);
	assert_int_equal(stat(tmp, &st), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(stat(plan, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	nodir = xasprintf("%s/missing", fx->dir);
	assert_false(journal_write_plan(nodir, "{}", &err));
	assert_non_null(err);
	assert_non_null(strstr(err, nodir));
	free(err);
	free(nodir);
	free(plan);
	free(tmp);
}

static void test_write_error_is_reported(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	struct journal *j;
	struct bus *b;

	struct rlimit was, none;
	void (*was_handler)(int);

	j = journal_open(fx->dir, &err);
	assert_non_null(j);
	assert_null(journal_error(j));
	b = bus_new();
	bus_subscribe(b, journal_on_event, j);
	/* A file that may not grow (as on a full disk): the write fails with EFBIG. */
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
	none = was;
	none.rlim_cur = 0;
	was_handler = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
	bus_notice(b, "info", NULL, "lost");
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
	signal(SIGXFSZ, was_handler);
	assert_non_null(journal_error(j));
	assert_non_null(strstr(journal_error(j), strerror(EFBIG)));
	assert_non_null(strstr(journal_error(j), "journal"));
	bus_free(b);
	journal_close(j);
}

/* --- concurrency: lines never mix -------------------------------------------------- */

struct pub_arg {
	struct bus *bus;
	int writer;
	int count;
	size_t payload;
};

static void *publisher(void *p)
{
	struct pub_arg *a = p;
	char *text = xmalloc(a->payload + 1);

	memset(text, 'a' + a->writer, a->payload);
	text[a->payload] = '\0';
	for (int i = 0; i < a->count; i++) {
		cJSON *f = cJSON_CreateObject();

		cJSON_AddNumberToObject(f, "writer", a->writer);
		cJSON_AddNumberToObject(f, "i", i);
		cJSON_AddStringToObject(f, "message", text);
		bus_publish(a->bus, EV_NOTICE, f);
	}
	free(text);
	return NULL;
}

/* Every line of the file is one whole event; counts per writer and checks order. */
static void check_lines(const char *path, int writers, int count, size_t payload)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int per[2] = {0, 0};

	assert_non_null(f);
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *err = NULL;
		struct event *ev;
		cJSON *o;
		int w, i;

		assert_true(n > 0 && line[n - 1] == '\n');
		line[n - 1] = '\0';
		ev = event_from_line(line, &err);
		if (!ev)
			fail_msg("torn or mixed line: %s", err);
		o = cJSON_Parse(ev->json);
		w = cJSON_GetObjectItem(o, "writer")->valueint;
		i = cJSON_GetObjectItem(o, "i")->valueint;
		assert_true(w >= 0 && w < writers);
		assert_int_equal(i, per[w]); /* each writer's events in its own order */
		assert_int_equal(strlen(cJSON_GetObjectItem(o, "message")->valuestring), payload);
		per[w]++;
		cJSON_Delete(o);
		event_free(ev);
	}
	free(line);
	fclose(f);
	for (int w = 0; w < writers; w++)
		assert_int_equal(per[w], count);
}

static void test_two_threads_one_bus(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	struct journal *j = journal_open(fx->dir, &err);
	struct bus *b = bus_new();
	struct journal_load_info info;
	pthread_t t[2];
	struct pub_arg a[2] = {{b, 0, 1000, 300}, {b, 1, 1000, 300}};

	bus_subscribe(b, journal_on_event, j);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, publisher, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	bus_free(b);
	assert_null(journal_error(j));
	journal_close(j);
	check_lines(fx->path, 2, 1000, 300);
	assert_true(journal_load(fx->path, NULL, NULL, &info, &err));
	assert_int_equal(info.events, 2000);
	assert_int_equal(info.last_seq, 2000);
}

/*
 * Two journals open on one file, each behind its own bus: nothing serialises the writers
 * but O_APPEND and one write(2) per line, so a line split into several writes would show
 * up here as mixed lines.
 */
static void test_two_writers_one_file(void **state)
{
	struct fixture *fx = *state;
	char *err = NULL;
	struct journal *j[2];
	struct bus *b[2];
	pthread_t t[2];
	struct pub_arg a[2];

	for (int i = 0; i < 2; i++) {
		j[i] = journal_open(fx->dir, &err);
		assert_non_null(j[i]);
		b[i] = bus_new();
		bus_subscribe(b[i], journal_on_event, j[i]);
		a[i] = (struct pub_arg){b[i], i, 1000, 3000};
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, publisher, &a[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		bus_free(b[i]);
		assert_null(journal_error(j[i]));
		journal_close(j[i]);
	}
	check_lines(fx->path, 2, 1000, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ephemeral_not_journaled, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_torn_tail_at_many_offsets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unparsable_last_line_is_torn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_middle_line, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_seq_gap_and_repeat, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_empty_and_blank, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_visitor_stops_early, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_large_journal_streams, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_plan_atomic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_plan_not_through_a_link, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_not_through_a_link, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_refuses_a_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_error_is_reported, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_threads_one_bus, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_two_writers_one_file, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
