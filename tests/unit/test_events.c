/* test_events — event types, building and parsing event lines, and the bus's ordering. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "strbuf.h"
#include "xalloc.h"

static void test_type_names_round_trip(void **state)
{
	(void)state;
	for (int t = 0; t < EV__COUNT; t++) {
		const char *name = event_type_name((enum event_type)t);

		assert_non_null(name);
		assert_string_not_equal(name, "unknown");
		assert_int_equal(event_type_from_name(name), t);
		for (int u = 0; u < t; u++)
			assert_string_not_equal(name, event_type_name((enum event_type)u));
	}
	assert_string_equal(event_type_name(EV_RUN_START), "run.start");
	assert_string_equal(event_type_name(EV_VERIFY_VERDICT), "verify.verdict");
	assert_string_equal(event_type_name(EV_RUN_END), "run.end");
	assert_string_equal(event_type_name(EV__COUNT), "unknown");
	assert_int_equal(event_type_from_name("run.begin"), -1);
	assert_int_equal(event_type_from_name(""), -1);
	assert_int_equal(event_type_from_name(NULL), -1);
}

static void test_only_deltas_are_ephemeral(void **state)
{
	(void)state;
	for (int t = 0; t < EV__COUNT; t++)
		assert_int_equal(event_type_is_ephemeral((enum event_type)t), t == EV_LLM_DELTA);
}

/* True when s is "YYYY-MM-DDTHH:MM:SS.mmmZ" and within a minute of now. */
static bool is_rfc3339_utc_now(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	struct tm tm;
	time_t t;

	if (strlen(s) != strlen(pat))
		return false;
	for (size_t i = 0; pat[i]; i++) {
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	}
	memset(&tm, 0, sizeof(tm));
	if (!strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return false;
	t = timegm(&tm);
	return labs((long)(t - time(NULL))) <= 60;
}

/* The same for the first 24 bytes of s. */
static bool is_rfc3339_utc_now_prefix(const char *s)
{
	char buf[25];

	if (strnlen(s, 24) < 24)
		return false;
	memcpy(buf, s, 24);
	buf[24] = '\0';
	return is_rfc3339_utc_now(buf);
}

static void test_timestamp_format(void **state)
{
	char buf[40];

	(void)state;
	event_timestamp(buf, sizeof(buf));
	assert_true(is_rfc3339_utc_now(buf));
}

/* Names of an object's members, in order, joined with ','. */
static char *keys_of(const char *json)
{
	cJSON *o = cJSON_Parse(json);
	const cJSON *it;
	char *out = xstrdup("");

	assert_non_null(o);
	cJSON_ArrayForEach(it, o)
	{
		char *n = xasprintf("%s%s%s", out, *out ? "," : "", it->string);

		free(out);
		out = n;
	}
	cJSON_Delete(o);
	return out;
}

static void test_build_header_first_and_not_overridden(void **state)
{
	cJSON *f = cJSON_CreateObject();
	struct event *ev;
	cJSON *o;
	char *keys;

	(void)state;
	cJSON_AddNumberToObject(f, "b", 1);
	cJSON_AddNumberToObject(f, "seq", 99);
	cJSON_AddStringToObject(f, "ts", "1999-01-01T00:00:00.000Z");
	cJSON_AddStringToObject(f, "type", "run.end");
	cJSON_AddStringToObject(f, "a", "x");
	cJSON_AddStringToObject(f, "step_id", "s2");
	ev = event_build(EV_STEP_START, 7, f);
	assert_non_null(ev);
	assert_int_equal(ev->type, EV_STEP_START);
	assert_int_equal(ev->seq, 7);
	assert_string_equal(ev->step_id, "s2");
	assert_null(strchr(ev->json, '\n'));
	assert_true(strncmp(ev->json, "{\"seq\":7,\"ts\":\"", 15) == 0);
	keys = keys_of(ev->json);
	assert_string_equal(keys, "seq,ts,type,b,a,step_id");
	free(keys);
	o = cJSON_Parse(ev->json);
	assert_string_equal(cJSON_GetObjectItem(o, "type")->valuestring, "step.start");
	assert_true(is_rfc3339_utc_now(cJSON_GetObjectItem(o, "ts")->valuestring));
	assert_int_equal(cJSON_GetObjectItem(o, "b")->valueint, 1);
	cJSON_Delete(o);
	event_free(ev);

	ev = event_build(EV_RUN_END, 0, NULL);
	keys = keys_of(ev->json);
	assert_string_equal(keys, "seq,ts,type");
	assert_null(ev->step_id);
	free(keys);
	event_free(ev);
	event_free(NULL);
}

/* Characters a terminal or editor acts on are escaped in the journal's JSON, and read
 * back as the same text; harmless characters of the same first byte pass as they are. */
static void test_build_escapes_what_terminals_act_on(void **state)
{
	/* DEL, C1 CSI U+009B, RLO U+202E, isolate U+2066, line separator U+2028; then
	 * "é" (c3 a9), NBSP U+00A0 (c2 a0), "–" U+2013 (e2 80 93), "…" (e2 80 a6) */
	const char *text = "a\x7f" "b\xc2\x9b" "31m\xe2\x80\xae" "cba\xe2\x81\xa6" "x\xe2\x80\xa8"
			   "y \xc3\xa9\xc2\xa0\xe2\x80\x93\xe2\x80\xa6";
	cJSON *f = cJSON_CreateObject(), *o;
	struct event *ev;

	(void)state;
	cJSON_AddStringToObject(f, "message", text);
	ev = event_build(EV_NOTICE, 1, f);
	assert_non_null(strstr(ev->json, "a\\u007fb\\u009b31m\\u202ecba\\u2066x\\u2028y "
					 "\xc3\xa9\xc2\xa0\xe2\x80\x93\xe2\x80\xa6\""));
	for (const char *p = ev->json; *p; p++)
		assert_false(*p == 0x7f || (unsigned char)*p == 0x9b);
	o = cJSON_Parse(ev->json);
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItem(o, "message")->valuestring, text);
	cJSON_Delete(o);
	event_free(ev);
}

static void test_from_line(void **state)
{
	char *err = NULL;
	struct event *ev;

	(void)state;
	ev = event_from_line("{\"seq\":5,\"ts\":\"t\",\"type\":\"step.end\",\"step_id\":\"s9\","
	                     "\"status\":\"passed\"}",
	                     &err);
	assert_non_null(ev);
	assert_int_equal(ev->type, EV_STEP_END);
	assert_int_equal(ev->seq, 5);
	assert_string_equal(ev->step_id, "s9");
	assert_non_null(strstr(ev->json, "\"status\":\"passed\""));
	event_free(ev);

	/* A built event parses back to the same thing. */
	{
		struct event *a = event_build(EV_NOTICE, 12, NULL), *b;

		b = event_from_line(a->json, &err);
		assert_non_null(b);
		assert_int_equal(b->type, a->type);
		assert_int_equal(b->seq, a->seq);
		assert_string_equal(b->json, a->json);
		event_free(a);
		event_free(b);
	}
}

static void expect_bad(const char *line, const char *needle)
{
	char *err = NULL;
	struct event *ev = event_from_line(line, &err);

	if (ev)
		fail_msg("accepted \"%s\"", line);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" for \"%s\" lacks \"%s\"", err, line, needle);
	free(err);
}

static void test_from_line_errors(void **state)
{
	(void)state;
	expect_bad("", "not a JSON object");
	expect_bad("not json", "not a JSON object");
	expect_bad("[1,2]", "not a JSON object");
	expect_bad("\"run.start\"", "not a JSON object");
	expect_bad("{\"seq\":1,\"ts\":\"x\"", "not a JSON object");
	expect_bad("{\"seq\":1,\"ts\":\"x\"}", "unknown event type \"(missing)\"");
	expect_bad("{\"seq\":1,\"type\":\"no.such\"}", "unknown event type \"no.such\"");
	expect_bad("{\"seq\":1,\"type\":7}", "unknown event type");
	expect_bad("{\"type\":\"notice\"}", "seq");
	expect_bad("{\"seq\":-1,\"type\":\"notice\"}", "seq");
	expect_bad("{\"seq\":\"1\",\"type\":\"notice\"}", "seq");
}

/*
 * A journal line with something after the object is not one event (it is what two
 * writes glued together look like).
 */
static void test_from_line_rejects_trailing_text(void **state)
{
	(void)state;
	expect_bad("{\"seq\":1,\"type\":\"notice\"} junk", "");
	expect_bad("{\"seq\":1,\"type\":\"notice\"}{\"seq\":2,\"type\":\"notice\"}", "");
}

static void test_dup(void **state)
{
	cJSON *f = cJSON_CreateObject();
	struct event *a, *b;

	(void)state;
	cJSON_AddStringToObject(f, "step_id", "s1");
	a = event_build(EV_TOOL_CALL, 3, f);
	b = event_dup(a);
	assert_ptr_not_equal(a->json, b->json);
	assert_ptr_not_equal(a->step_id, b->step_id);
	assert_string_equal(a->json, b->json);
	assert_string_equal(b->step_id, "s1");
	assert_int_equal(b->seq, 3);
	assert_int_equal(b->type, EV_TOOL_CALL);
	event_free(a);
	assert_string_equal(b->step_id, "s1"); /* still valid after the original is gone */
	event_free(b);
}

/* --- bus ---------------------------------------------------------------------------- */

struct record {
	int sub[64];
	unsigned long seq[64];
	enum event_type type[64];
	char *json[64];
	int n;
};

struct sub_ctx {
	int id;
	struct record *rec;
};

static void recorder(void *ctx, const struct event *ev)
{
	struct sub_ctx *c = ctx;
	struct record *r = c->rec;

	if (r->n >= 64)
		return;
	r->sub[r->n] = c->id;
	r->seq[r->n] = ev->seq;
	r->type[r->n] = ev->type;
	r->json[r->n] = xstrdup(ev->json);
	r->n++;
}

static void record_free(struct record *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->json[i]);
}

static void test_bus_order_several_subscribers(void **state)
{
	struct bus *b = bus_new();
	struct record rec = {0};
	struct sub_ctx subs[3] = {{0, &rec}, {1, &rec}, {2, &rec}};
	unsigned long want[5] = {1, 2, 0, 3, 4};
	enum event_type types[5] = {EV_RUN_START, EV_STEP_START, EV_LLM_DELTA, EV_STEP_END,
	                            EV_RUN_END};

	(void)state;
	for (int i = 0; i < 3; i++)
		bus_subscribe_all(b, recorder, &subs[i]);
	for (int i = 0; i < 5; i++)
		assert_int_equal(bus_publish(b, types[i], cJSON_CreateObject()), want[i]);
	assert_int_equal(rec.n, 15);
	for (int e = 0; e < 5; e++) {
		for (int s = 0; s < 3; s++) {
			int k = e * 3 + s;

			assert_int_equal(rec.sub[k], s);
			assert_int_equal(rec.seq[k], want[e]);
			assert_int_equal(rec.type[k], types[e]);
			/* every subscriber sees the very same event */
			assert_string_equal(rec.json[k], rec.json[e * 3]);
		}
	}
	/* The ephemeral event says seq 0 in its JSON too. */
	assert_true(strncmp(rec.json[6], "{\"seq\":0,", 9) == 0);
	record_free(&rec);
	bus_free(b);
	bus_free(NULL);
}

static void test_bus_set_next_seq(void **state)
{
	struct bus *b = bus_new();
	struct record rec = {0};
	struct sub_ctx sub = {0, &rec};

	(void)state;
	bus_subscribe_all(b, recorder, &sub);
	bus_set_next_seq(b, 42);
	assert_int_equal(bus_publish(b, EV_NOTICE, NULL), 42);
	assert_int_equal(bus_publish(b, EV_LLM_DELTA, NULL), 0);
	assert_int_equal(bus_publish(b, EV_NOTICE, NULL), 43);
	assert_int_equal(rec.n, 3);
	assert_true(strncmp(rec.json[0], "{\"seq\":42,", 10) == 0);
	assert_true(strncmp(rec.json[2], "{\"seq\":43,", 10) == 0);
	record_free(&rec);
	bus_free(b);
}

/* Streaming deltas go only to subscribers that asked for them, and are not even built
 * when nobody did. */
static void test_bus_ephemeral_only_to_all_subscribers(void **state)
{
	struct bus *b = bus_new();
	struct record plain = {0}, all = {0};
	struct sub_ctx sp = {0, &plain}, sa = {1, &all};

	(void)state;
	bus_subscribe(b, recorder, &sp);
	assert_false(bus_wants_ephemeral(b));
	assert_int_equal(bus_publish(b, EV_LLM_DELTA, NULL), 0);
	assert_int_equal(plain.n, 0);
	bus_subscribe_all(b, recorder, &sa);
	assert_true(bus_wants_ephemeral(b));
	bus_publish(b, EV_LLM_DELTA, NULL);
	bus_publish(b, EV_NOTICE, NULL);
	assert_int_equal(plain.n, 1);
	assert_int_equal(plain.type[0], EV_NOTICE);
	assert_int_equal(all.n, 2);
	assert_int_equal(all.type[0], EV_LLM_DELTA);
	record_free(&plain);
	record_free(&all);
	bus_free(b);
}

/* Exactly the same tree: types, keys, strings, and numbers to the bit. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
	if ((a->type & 0xFF) != (b->type & 0xFF) || !a->string != !b->string ||
	    (a->string && strcmp(a->string, b->string)))
		return false;
	switch (a->type & 0xFF) {
	case cJSON_Number:
		return !memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) &&
		       a->valueint == b->valueint;
	case cJSON_String: return !strcmp(a->valuestring, b->valuestring);
	case cJSON_Array:
	case cJSON_Object:
		for (a = a->child, b = b->child; a && b; a = a->next, b = b->next)
			if (!same_tree(a, b))
				return false;
		return !a && !b;
	default: return true;
	}
}

struct tree_rec {
	int calls, same;
	unsigned long seq[8];
};

/* A tree subscriber: its tree must be what parsing the event's text gives. */
static void tree_sub(void *ctx, const struct event *ev, const cJSON *line)
{
	struct tree_rec *t = ctx;
	cJSON *parsed = cJSON_Parse(ev->json);

	if (t->calls < 8)
		t->seq[t->calls] = ev->seq;
	t->calls++;
	if (parsed && same_tree(line, parsed))
		t->same++;
	else
		fprintf(stderr, "tree %s\n  vs line %s\n", cJSON_PrintUnformatted(line), ev->json);
	cJSON_Delete(parsed);
}

/* The header the bus and event_print write without a printf: for seqs of every length
 * around where put_number stops writing digits, the line is {"seq":N,"ts":"…", with the
 * same text after the time as cJSON prints (event_print: %1.15g past 1e15, as put_number;
 * the bus: digits always, as its snprintf did). */
static void test_header_as_printf(void **state)
{
	static const unsigned long seqs[] = {0, 1, 9, 10, 99, 12345, 999999999999999UL,
					     1000000000000000UL, 1234567890123456789UL,
					     (unsigned long)-1};
	struct record rec = {0};
	struct sub_ctx sub = {0, &rec};
	struct bus *b = bus_new();

	(void)state;
	bus_subscribe(b, recorder, &sub);
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		cJSON *f = cJSON_CreateObject(), *o;
		struct event *ev;
		char want[128], *num;
		const char *after;

		cJSON_AddStringToObject(f, "step_id", "s\"1");
		cJSON_AddNumberToObject(f, "n", 2);
		ev = event_print(EV_STEP_START, seqs[i], f);
		/* event_print: the seq as cJSON prints a number (whole up to 15 digits) */
		o = cJSON_CreateNumber((double)seqs[i]);
		num = cJSON_PrintUnformatted(o);
		snprintf(want, sizeof(want), "{\"seq\":%s,\"ts\":\"", num);
		assert_true(strncmp(ev->json, want, strlen(want)) == 0);
		after = ev->json + strlen(want);
		assert_true(is_rfc3339_utc_now_prefix(after));
		assert_string_equal(after + 24, "\",\"type\":\"step.start\",\"step_id\":"
						"\"s\\\"1\",\"n\":2}");
		assert_int_equal(ev->seq, seqs[i]);
		assert_string_equal(ev->step_id, "s\"1");
		cJSON_free(num);
		cJSON_Delete(o);
		event_free(ev);

		/* the bus: %lu */
		bus_set_next_seq(b, seqs[i]);
		assert_int_equal(bus_publish(b, EV_STEP_START, f), seqs[i]);
		snprintf(want, sizeof(want), "{\"seq\":%lu,\"ts\":\"", seqs[i]);
		assert_true(strncmp(rec.json[rec.n - 1], want, strlen(want)) == 0);
		after = rec.json[rec.n - 1] + strlen(want);
		assert_true(is_rfc3339_utc_now_prefix(after));
		assert_string_equal(after + 24, "\",\"type\":\"step.start\",\"step_id\":"
						"\"s\\\"1\",\"n\":2}");
	}
	bus_free(b);
	record_free(&rec);
}

/* A tree subscriber gets, without a parse, the object a reader of the line parses:
 * numbers as written (15 digits when they read back closely, null for NaN), the header
 * first and fields that would shadow it left out, raw JSON as values. */
static void test_bus_tree_is_the_parsed_line(void **state)
{
	struct bus *b = bus_new();
	struct tree_rec t = {0};
	struct record rec = {0};
	struct sub_ctx sub = {0, &rec};
	cJSON *f = cJSON_CreateObject(), *nested = cJSON_CreateObject();
	cJSON *arr = cJSON_CreateArray();
	const double numbers[] = {0.1 + 0.2, 1.0 / 3, 1e300,  -0.0,         NAN,  INFINITY,
	                          1e15,      -5,      3.5,    2147483648.0, 1e-7, 123456789012345678.0};
	struct event *remote;

	(void)state;
	bus_subscribe(b, recorder, &sub);
	bus_subscribe_tree(b, tree_sub, &t);
	cJSON_AddStringToObject(f, "step_id", "s1");
	cJSON_AddNumberToObject(f, "seq", 99);
	cJSON_AddNumberToObject(f, "cost_usd", 0.1 + 0.2);
	cJSON_AddStringToObject(f, "type", "shadow");
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(numbers[i]));
	cJSON_AddItemToObject(nested, "numbers", arr);
	cJSON_AddStringToObject(nested, "text", "tab\there \x1b[31m \xc2\x9b \xe2\x80\xae \xff\"q\"\\");
	cJSON_AddItemToObject(f, "nested", nested);
	cJSON_AddStringToObject(f, "ts", "shadow");
	cJSON_AddRawToObject(f, "raw", "{\"x\":[1,2.5,null,0.30000000000000004]}");
	cJSON_AddBoolToObject(f, "ok", true);
	cJSON_AddNullToObject(f, "none");
	cJSON_AddNumberToObject(f, "cost_usd", 7); /* a second key of the same name */
	assert_int_equal(bus_publish(b, EV_TOOL_RESULT, f), 1);
	assert_int_equal(bus_publish(b, EV_NOTICE, NULL), 2);
	assert_int_equal(bus_publish(b, EV_LLM_DELTA, cJSON_CreateObject()), 0);
	assert_int_equal(t.calls, 2); /* not the ephemeral one */
	assert_int_equal(t.same, 2);
	assert_int_equal(t.seq[0], 1);
	assert_int_equal(t.seq[1], 2);
	/* Text from elsewhere (bus_deliver) is parsed for them. */
	remote = event_from_line("{\"seq\":7,\"ts\":\"x\",\"type\":\"notice\",\"n\":0.5}", &(char *){NULL});
	assert_non_null(remote);
	bus_deliver(b, remote);
	assert_int_equal(t.calls, 3);
	assert_int_equal(t.same, 3);
	event_free(remote);
	/* The text subscriber saw each event as before, in the same order. */
	assert_int_equal(rec.n, 3);
	assert_int_equal(rec.seq[0], 1);
	bus_unsubscribe_tree(b, tree_sub, &t);
	bus_publish(b, EV_NOTICE, cJSON_CreateObject());
	assert_int_equal(t.calls, 3);
	record_free(&rec);
	bus_free(b);
}

static void test_bus_notice(void **state)
{
	struct bus *b = bus_new();
	struct record rec = {0};
	struct sub_ctx sub = {0, &rec};
	cJSON *o;

	(void)state;
	bus_subscribe(b, recorder, &sub);
	bus_notice(b, "warn", "s3", "retry %d of %s", 2, "three");
	bus_notice(b, "info", NULL, "plain");
	assert_int_equal(rec.n, 2);
	assert_int_equal(rec.type[0], EV_NOTICE);
	o = cJSON_Parse(rec.json[0]);
	assert_string_equal(cJSON_GetObjectItem(o, "level")->valuestring, "warn");
	assert_string_equal(cJSON_GetObjectItem(o, "message")->valuestring, "retry 2 of three");
	assert_string_equal(cJSON_GetObjectItem(o, "step_id")->valuestring, "s3");
	cJSON_Delete(o);
	o = cJSON_Parse(rec.json[1]);
	assert_null(cJSON_GetObjectItem(o, "step_id"));
	cJSON_Delete(o);
	record_free(&rec);
	bus_free(b);
}

/* Many publishing threads: subscribers still see one total order, seq without gaps, and
 * timestamps that never go backwards. */
struct order_log {
	unsigned long *seq;
	char **ts;
	size_t n;
};

static void order_sub(void *ctx, const struct event *ev)
{
	struct order_log *l = ctx;
	cJSON *o = cJSON_Parse(ev->json);

	l->seq[l->n] = ev->seq;
	l->ts[l->n] = xstrdup(cJSON_GetObjectItem(o, "ts")->valuestring);
	l->n++;
	cJSON_Delete(o);
}

static void *pub_many(void *p)
{
	for (int i = 0; i < 500; i++)
		bus_publish(p, EV_NOTICE, cJSON_CreateObject());
	return NULL;
}

static void test_bus_total_order_across_threads(void **state)
{
	struct bus *b = bus_new();
	struct order_log l = {xcalloc(2000, sizeof(unsigned long)), xcalloc(2000, sizeof(char *)),
	                      0};
	pthread_t t[4];

	(void)state;
	bus_subscribe(b, order_sub, &l);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, pub_many, b), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(l.n, 2000);
	for (size_t i = 0; i < l.n; i++) {
		assert_int_equal(l.seq[i], i + 1);
		if (i)
			assert_true(strcmp(l.ts[i - 1], l.ts[i]) <= 0);
	}
	for (size_t i = 0; i < l.n; i++)
		free(l.ts[i]);
	free(l.ts);
	free(l.seq);
	bus_free(b);
}

/* The one line a step.changes becomes in the step log and the headless output. */
static void test_changes_summary(void **state)
{
	cJSON *o = cJSON_Parse(
	    "{\"files\": [{\"path\": \"a.md\", \"change\": \"added\"}, {\"path\": \"b.md\", "
	    "\"change\": \"modified\", \"shared\": true}, {\"path\": \"c.md\", \"change\": "
	    "\"deleted\"}], \"stat\": \"3 files changed, +2 -1\", \"shared\": 1}");
	char *s;

	(void)state;
	s = event_changes_summary(o, 2);
	assert_string_equal(s, "workspace: 3 files changed, +2 -1 (+a.md, b.md, and 1 more); 1 "
	                       "changed while another step ran too (which one changed it is "
	                       "not known)");
	free(s);
	cJSON_DeleteItemFromObject(o, "shared");
	s = event_changes_summary(o, 3);
	assert_string_equal(s, "workspace: 3 files changed, +2 -1 (+a.md, b.md, -c.md)");
	free(s);
	cJSON_Delete(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_type_names_round_trip),
	    cmocka_unit_test(test_only_deltas_are_ephemeral),
	    cmocka_unit_test(test_timestamp_format),
	    cmocka_unit_test(test_build_header_first_and_not_overridden),
	    cmocka_unit_test(test_build_escapes_what_terminals_act_on),
	    cmocka_unit_test(test_from_line),
	    cmocka_unit_test(test_from_line_errors),
	    cmocka_unit_test(test_from_line_rejects_trailing_text),
	    cmocka_unit_test(test_dup),
	    cmocka_unit_test(test_bus_order_several_subscribers),
	    cmocka_unit_test(test_bus_set_next_seq),
	    cmocka_unit_test(test_bus_ephemeral_only_to_all_subscribers),
	    cmocka_unit_test(test_bus_notice),
	    cmocka_unit_test(test_header_as_printf),
	    cmocka_unit_test(test_bus_tree_is_the_parsed_line),
	    cmocka_unit_test(test_bus_total_order_across_threads),
	    cmocka_unit_test(test_changes_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
