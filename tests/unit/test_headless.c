/* Unit tests for the headless printer: a reader of stdout that does not keep up never
 * holds up the publisher; what is printed, and the one line that says what was not. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "headless.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

/* A pipe nobody reads until start_reader: writes to it block once it is full. */
struct sink {
	int fd[2];
	FILE *out;
	pthread_t reader;
	struct strbuf got;
};

static void sink_open(struct sink *s)
{
	assert_int_equal(pipe(s->fd), 0);
	s->out = fdopen(s->fd[1], "w");
	assert_non_null(s->out);
	strbuf_init(&s->got);
}

static void *read_all(void *arg)
{
	struct sink *s = arg;
	char buf[65536];
	ssize_t n;

	while ((n = read(s->fd[0], buf, sizeof(buf))) > 0)
		strbuf_add(&s->got, buf, (size_t)n);
	return NULL;
}

static void start_reader(struct sink *s)
{
	assert_int_equal(pthread_create(&s->reader, NULL, read_all, s), 0);
}

/* Frees the printer (it drains into the pipe), closes the write end, waits for EOF. */
static void finish(struct sink *s, struct headless *h)
{
	headless_free(h);
	fclose(s->out);
	pthread_join(s->reader, NULL);
	close(s->fd[0]);
}

static size_t pipe_bytes(const struct sink *s)
{
	int n = 0;

	assert_int_equal(ioctl(s->fd[0], FIONREAD, &n), 0);
	return (size_t)n;
}

/* Waits (bounded) until the printer has filled the pipe: it is then stuck in write(2). */
static void wait_full(const struct sink *s)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 3000 && pipe_bytes(s) < 60000; i++)
		nanosleep(&tick, NULL);
	assert_true(pipe_bytes(s) >= 60000);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void publish(struct headless *h, const char *line)
{
	char *err = NULL;
	struct event *ev = event_from_line(line, &err);

	if (!ev)
		fail_msg("bad test event: %s: %s", err, line);
	headless_on_event(h, ev);
	event_free(ev);
}

/* n notices with seq from, from + 1, …; caller frees with free_events. */
static struct event **notices(unsigned long from, unsigned long n)
{
	struct event **v = xcalloc(n, sizeof(*v));

	for (unsigned long i = 0; i < n; i++) {
		char *err = NULL;
		char *line = xasprintf("{\"seq\":%lu,\"ts\":\"2026-01-01T10:00:00.000Z\","
				       "\"type\":\"notice\",\"level\":\"warn\",\"message\":\"m%lu "
				       "padding padding padding\"}",
				       from + i, from + i);

		v[i] = event_from_line(line, &err);
		assert_non_null(v[i]);
		free(line);
	}
	return v;
}

static void free_events(struct event **v, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		event_free(v[i]);
	free(v);
}

static void publish_notices(struct headless *h, unsigned long from, unsigned long n)
{
	struct event **v = notices(from, n);

	for (unsigned long i = 0; i < n; i++)
		headless_on_event(h, v[i]);
	free_events(v, n);
}

static unsigned long count(const char *text, const char *needle)
{
	unsigned long n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Many more events than the queue holds, into a pipe nobody reads: every call returns at
 * once; later every journaled event is printed or counted in the one drop line. */
static void test_slow_reader_never_blocks_publisher(void **state)
{
	const unsigned long n = 3 * HEADLESS_QUEUE_EVENTS;
	struct sink s;
	struct headless *h;
	struct event **v = notices(1, n);
	double t0, took;
	unsigned long printed, dropped = 0, last = 0;
	const char *p;

	(void)state;
	sink_open(&s);
	h = headless_new(s.out, true);
	for (unsigned long i = 0; i < 1000; i++)
		headless_on_event(h, v[i]);
	wait_full(&s);
	/* The printer is stuck on a full pipe the whole time; the publisher is not. About a
	 * microsecond an event: the bound leaves room for sanitizers and valgrind. */
	t0 = mono();
	for (unsigned long i = 1000; i < n; i++)
		headless_on_event(h, v[i]);
	took = mono() - t0;
	assert_true(pipe_bytes(&s) >= 60000);
	assert_true(took < 5.0);
	free_events(v, n);
	/* The end of the run is queued whatever the bound. */
	publish(h, "{\"seq\":99999,\"ts\":\"2026-01-01T10:00:01.000Z\",\"type\":\"run.end\","
		   "\"status\":\"passed\",\"exit_code\":0}");
	start_reader(&s);
	finish(&s, h);

	printed = count(s.got.buf, "\"type\":\"notice\",\"level\":\"warn\",\"message\":\"m");
	p = strstr(s.got.buf, "\"kind\":\"events_dropped\",\"dropped\":");
	assert_non_null(p);
	dropped = strtoul(p + strlen("\"kind\":\"events_dropped\",\"dropped\":"), NULL, 10);
	assert_int_equal(count(s.got.buf, "events_dropped"), 1);
	assert_non_null(strstr(s.got.buf, "the reader of stdout is too slow; the journal has "
					  "them all"));
	assert_true(dropped > 0);
	assert_int_equal(printed + dropped, n);
	assert_true(printed >= HEADLESS_QUEUE_EVENTS);
	assert_non_null(strstr(s.got.buf, "\"type\":\"run.end\""));
	/* What is printed is in order. */
	for (p = s.got.buf; (p = strstr(p, "\"seq\":")); p++) {
		unsigned long seq = strtoul(p + 6, NULL, 10);

		if (seq == 0)
			continue; /* the drop line */
		assert_true(seq > last);
		last = seq;
	}
	assert_int_equal(last, 99999);
	strbuf_release(&s.got);
}

/* Within the bound a late reader gets everything, in order, and no drop line. */
static void test_late_reader_gets_everything(void **state)
{
	const unsigned long n = HEADLESS_QUEUE_EVENTS / 2;
	struct sink s;
	struct headless *h;

	(void)state;
	sink_open(&s);
	h = headless_new(s.out, true);
	publish_notices(h, 1, n);
	start_reader(&s);
	finish(&s, h);
	assert_int_equal(count(s.got.buf, "\n"), n);
	assert_null(strstr(s.got.buf, "events_dropped"));
	assert_non_null(strstr(s.got.buf, "{\"seq\":1,"));
	assert_true(strstr(s.got.buf, "\"message\":\"m1 ") <
		    strstr(s.got.buf, "\"message\":\"m2 "));
	strbuf_release(&s.got);
}

/* Readable lines: step names come from the fold (the plan), the drop line is one line. */
static void test_text_lines(void **state)
{
	struct sink s;
	struct headless *h;

	(void)state;
	sink_open(&s);
	h = headless_new(s.out, false);
	publish(h, "{\"seq\":1,\"ts\":\"2026-01-01T10:00:00.000Z\",\"type\":\"plan.adopted\","
		   "\"revision\":0,\"kept\":[],\"plan\":{\"goal\":\"g\",\"steps\":[{\"step_id\":"
		   "\"s1\",\"name\":\"Read the \\u001b[31mcontract\"}]}}");
	publish(h, "{\"seq\":2,\"ts\":\"2026-01-01T10:00:01.000Z\",\"type\":\"step.start\","
		   "\"step_id\":\"s1\",\"attempt\":1}");
	publish(h, "{\"seq\":3,\"ts\":\"2026-01-01T10:00:02.000Z\",\"type\":\"llm.call\","
		   "\"role\":\"executor\",\"step_id\":\"s1\",\"attempt\":1,\"cost_usd\":0.25,"
		   "\"status\":\"ok\"}");
	publish(h, "{\"seq\":4,\"ts\":\"2026-01-01T10:00:03.000Z\",\"type\":\"verify.verdict\","
		   "\"step_id\":\"s1\",\"attempt\":1,\"stage\":\"model\",\"action\":\"pass\","
		   "\"criteria\":[{\"criterion\":\"c1\",\"passed\":false,\"not_judged\":true}]}");
	publish(h, "{\"seq\":5,\"ts\":\"2026-01-01T10:00:04.000Z\",\"type\":\"step.end\","
		   "\"step_id\":\"s1\",\"status\":\"passed\",\"attempts\":1}");
	publish(h, "{\"seq\":6,\"ts\":\"2026-01-01T10:00:05.000Z\",\"type\":\"step.state\","
		   "\"step_id\":\"s1\",\"state\":\"stale\",\"reason\":\"an input changed\"}");
	publish_notices(h, 7, 3 * HEADLESS_QUEUE_EVENTS);
	start_reader(&s);
	finish(&s, h);
	assert_non_null(strstr(s.got.buf, "[s1] attempt 1: Read the contract\n"));
	assert_non_null(strstr(s.got.buf, "[s1]   not judged: \"c1\"\n"));
	assert_non_null(strstr(s.got.buf, "[s1] passed after 1 attempt — cost so far $0.2500\n"));
	assert_non_null(strstr(s.got.buf, "[s1] stale — an input changed\n"));
	assert_int_equal(count(s.got.buf, " not printed: the reader of stdout is too slow; the "
					  "journal has them all\n"),
			 1);
	assert_non_null(strstr(s.got.buf, "\npevtui: "));
	assert_null(strstr(s.got.buf, "\x1b"));
	strbuf_release(&s.got);
}

/* Reads the pipe in this thread until `needle` has come (bounded by the printer: it
 * writes what is queued, so the wait ends once the line is out). */
static void read_until(struct sink *s, const char *needle)
{
	char buf[65536];
	ssize_t n;

	while (!s->got.buf || !strstr(s->got.buf, needle)) {
		n = read(s->fd[0], buf, sizeof(buf));
		assert_true(n > 0);
		strbuf_add(&s->got, buf, (size_t)n);
	}
}

/* Events whose lines a full queue leaves out are folded all the same: the spend of a call
 * published while the reader was stuck counts in a later line. */
static void test_dropped_events_still_fold(void **state)
{
	struct sink s;
	struct headless *h;

	(void)state;
	sink_open(&s);
	h = headless_new(s.out, false);
	publish(h, "{\"seq\":1,\"ts\":\"2026-01-01T10:00:00.000Z\",\"type\":\"plan.adopted\","
		   "\"revision\":0,\"kept\":[],\"plan\":{\"goal\":\"g\",\"steps\":[{\"step_id\":"
		   "\"s1\",\"name\":\"Read\"}]}}");
	publish_notices(h, 2, 3 * HEADLESS_QUEUE_EVENTS); /* the queue overflows */
	publish(h, "{\"seq\":40000,\"ts\":\"2026-01-01T10:00:02.000Z\",\"type\":\"llm.call\","
		   "\"role\":\"executor\",\"step_id\":\"s1\",\"cost_usd\":0.25,\"status\":\"ok\"}");
	publish(h, "{\"seq\":40001,\"ts\":\"2026-01-01T10:00:03.000Z\",\"type\":\"run.end\","
		   "\"status\":\"passed\",\"exit_code\":0}");
	read_until(&s, "run passed (exit 0)\n"); /* kept whatever the bound; the queue is empty */
	publish(h, "{\"seq\":40002,\"ts\":\"2026-01-01T10:00:04.000Z\",\"type\":\"step.end\","
		   "\"step_id\":\"s1\",\"status\":\"passed\",\"attempts\":1}");
	read_until(&s, "[s1] passed after 1 attempt");
	start_reader(&s);
	finish(&s, h);
	assert_non_null(strstr(s.got.buf, "[s1] passed after 1 attempt — cost so far $0.2500\n"));
	assert_non_null(strstr(s.got.buf, " not printed: the reader of stdout is too slow"));
	strbuf_release(&s.got);
}

/* --headless --resume: the journal is folded first, so names and the spend so far count
 * the whole run, and nothing of it is printed again. */
static void test_resume_folds_the_journal(void **state)
{
	char *dir = testdir_new("headless"), *path, *err = NULL;
	struct sink s;
	struct headless *h;
	FILE *j;

	(void)state;
	assert_non_null(dir);
	path = xasprintf("%s/journal.jsonl", dir);
	j = fopen(path, "w");
	assert_non_null(j);
	fputs("{\"seq\":1,\"ts\":\"2026-01-01T10:00:00.000Z\",\"type\":\"plan.adopted\","
	      "\"revision\":0,\"kept\":[],\"plan\":{\"steps\":[{\"step_id\":\"s1\","
	      "\"name\":\"Read\"}]}}\n"
	      "{\"seq\":2,\"ts\":\"2026-01-01T10:00:01.000Z\",\"type\":\"llm.call\","
	      "\"role\":\"planner\",\"cost_usd\":0.5,\"status\":\"ok\"}\n",
	      j);
	fclose(j);
	sink_open(&s);
	h = headless_new(s.out, false);
	assert_true(headless_fold_journal(h, dir, &err));
	publish(h, "{\"seq\":3,\"ts\":\"2026-01-01T10:00:02.000Z\",\"type\":\"step.start\","
		   "\"step_id\":\"s1\",\"attempt\":1}");
	publish(h, "{\"seq\":4,\"ts\":\"2026-01-01T10:00:03.000Z\",\"type\":\"llm.call\","
		   "\"role\":\"executor\",\"step_id\":\"s1\",\"cost_usd\":0.25,"
		   "\"status\":\"ok\"}");
	publish(h, "{\"seq\":5,\"ts\":\"2026-01-01T10:00:04.000Z\",\"type\":\"step.end\","
		   "\"step_id\":\"s1\",\"status\":\"passed\",\"attempts\":1}");
	start_reader(&s);
	finish(&s, h);
	assert_string_equal(s.got.buf, "[s1] attempt 1: Read\n"
				       "[s1] passed after 1 attempt — cost so far $0.7500\n");
	assert_false(headless_fold_journal(h = headless_new(stdout, false), "/nonexistent", &err));
	assert_non_null(err);
	free(err);
	headless_free(h);
	strbuf_release(&s.got);
	assert_true(testdir_remove(dir));
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_reader_never_blocks_publisher),
		cmocka_unit_test(test_late_reader_gets_everything),
		cmocka_unit_test(test_text_lines),
		cmocka_unit_test(test_dropped_events_still_fold),
		cmocka_unit_test(test_resume_folds_the_journal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
