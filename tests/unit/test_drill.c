/*
 * test_drill — a log entry opened whole, without a terminal: the executor's result by its
 * fields, tool calls with their arguments and full output, requests as sent, diffs; every
 * line sanitized. And logref, which remembers the event behind each stretch of a log.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "drill.h"
#include "events.h"
#include "linestore.h"
#include "logref.h"
#include "view.h"
#include "xalloc.h"

/* The first line holding `s`, or -1. */
static long find(const struct linestore *ls, const char *s)
{
	for (size_t i = 0; i < ls->n; i++)
		if (strstr(ls->v[i].text, s))
			return (long)i;
	return -1;
}

static void dump(const struct linestore *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		fprintf(stderr, "%3d|%s\n", ls->v[i].kind, ls->v[i].text);
}

static void expect_line(const struct linestore *ls, const char *s)
{
	if (find(ls, s) < 0) {
		dump(ls);
		fail_msg("no line holds \"%s\"", s);
	}
}

/* No escape, control or bidi override reaches a page. */
static void expect_clean(const struct linestore *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		for (const unsigned char *p = (const unsigned char *)ls->v[i].text; *p; p++)
			if (*p < 0x20 || *p == 0x7f || (p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xae))
				fail_msg("line %zu is not clean: %s", i, ls->v[i].text);
}

static void test_result_by_fields(void **state)
{
	cJSON *r = cJSON_Parse(
	    "{\"reasoning\":\"read it twice\",\"actions_taken\":[\"read_file a.txt\"],"
	    "\"step_output\":{\"findings\":\"line one\\nline two \\u001b[2Jcleared\","
	    "\"artifacts\":[\"out/review.md\",\"memo.md\"],"
	    "\"meets_criteria\":{\"cites sources\":true,\"has a date\":false}},"
	    "\"confidence\":0.8,\"notes\":\"\\u202egnp.exe\"}");
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_result(&ls, r);
	expect_line(&ls, "Findings");
	assert_int_equal(ls.v[find(&ls, "Findings")].kind, VL_HEADER);
	/* text with newlines as lines, the escape sequence gone */
	expect_line(&ls, "  line one");
	expect_line(&ls, "  line two cleared");
	expect_line(&ls, "  1. out/review.md");
	expect_line(&ls, "  2. memo.md");
	expect_line(&ls, "Meets criteria: no (per criterion)");
	expect_line(&ls, "\xe2\x9c\x93 cites sources");
	expect_line(&ls, "\xe2\x9c\x97 has a date");
	assert_int_equal(ls.v[find(&ls, "has a date")].kind, VL_CRITIQUE);
	expect_line(&ls, "Confidence: 0.80");
	expect_line(&ls, "Notes");
	expect_line(&ls, "gnp.exe");
	expect_line(&ls, "Reasoning");
	expect_line(&ls, "\xe2\x80\xa2 read_file a.txt");
	/* fields, not the raw JSON */
	assert_int_equal(find(&ls, "step_output"), -1);
	assert_int_equal(find(&ls, "{"), -1);
	expect_clean(&ls);
	linestore_release(&ls);
	cJSON_Delete(r);
}

static void test_result_not_an_object(void **state)
{
	cJSON *r = cJSON_CreateString("I could not finish.\nSorry.");
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_result(&ls, r);
	expect_line(&ls, "could not be read as a result");
	expect_line(&ls, "  I could not finish.");
	expect_line(&ls, "  Sorry.");
	linestore_release(&ls);
	cJSON_Delete(r);
}

/* A tool call with its result: arguments field by field, text content as lines, the full
 * output (JSON pretty-printed). */
static void test_tool_call_whole(void **state)
{
	const char *call = "{\"seq\":7,\"ts\":\"2026-01-01T00:00:00.000Z\",\"type\":\"tool.call\","
			   "\"step_id\":\"s1\",\"attempt\":2,\"call_id\":\"c9\",\"tool\":\"write_file\","
			   "\"params\":{\"path\":\"notes.md\",\"content\":\"# Title\\n\\tindented\\nend\","
			   "\"opts\":{\"mode\":\"w\",\"n\":[1,2]}}}";
	const char *result = "{\"seq\":8,\"type\":\"tool.result\",\"step_id\":\"s1\",\"attempt\":2,"
			     "\"call_id\":\"c9\",\"tool\":\"write_file\",\"ok\":true,\"summary\":\"sh\","
			     "\"bytes\":20,\"output_file\":\"attempts/s1/2/tools/1.txt\"}";
	const char *out = "{\"written\": 20, \"path\": \"notes.md\"}";
	struct drill_input in = {.json = call, .output = out, .output_len = strlen(out),
				 .pair_json = result};
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_event(&ls, &in);
	expect_line(&ls, "tool.call \xc2\xb7 step s1 \xc2\xb7 attempt 2 \xc2\xb7 journal seq 7");
	expect_line(&ls, "\xe2\x86\x92 write_file  (call c9)");
	expect_line(&ls, "  path: notes.md");
	expect_line(&ls, "  content:");
	expect_line(&ls, "    # Title");
	expect_line(&ls, "            indented"); /* a tab to the next stop of 8 */
	expect_line(&ls, "    end");
	expect_line(&ls, "  opts:");
	expect_line(&ls, "\"mode\": \"w\"");
	expect_line(&ls, "\xe2\x86\x90 write_file ok \xc2\xb7 20 bytes");
	expect_line(&ls, "\"written\": 20");
	expect_line(&ls, "Kept in the run folder: attempts/s1/2/tools/1.txt");
	expect_clean(&ls);
	linestore_release(&ls);
}

/* Without the kept output: run_shell's fields and its journaled output; else the summary,
 * saying so. */
static void test_tool_result_fallbacks(void **state)
{
	const char *shell = "{\"seq\":8,\"type\":\"tool.result\",\"tool\":\"run_shell\",\"ok\":false,"
			    "\"summary\":\"x\",\"bytes\":9,\"command\":\"make test\","
			    "\"exit_status\":2,\"duration_ms\":1500,\"approval\":\"operator\","
			    "\"output\":\"cc -c a.c\\nerror: boom\\n\"}";
	const char *plain = "{\"seq\":9,\"type\":\"tool.result\",\"tool\":\"read_file\",\"ok\":true,"
			    "\"summary\":\"the first 200 characters\",\"bytes\":9000}";
	struct drill_input in = {.json = shell};
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_event(&ls, &in);
	expect_line(&ls, "Command");
	expect_line(&ls, "  make test");
	expect_line(&ls, "exit status 2 \xc2\xb7 1.5 s \xc2\xb7 approval: operator");
	expect_line(&ls, "  error: boom");
	linestore_release(&ls);
	linestore_init(&ls);
	in.json = plain;
	drill_event(&ls, &in);
	expect_line(&ls, "summary: the full output was not kept");
	expect_line(&ls, "  the first 200 characters");
	linestore_release(&ls);
}

static void test_verdict_whole(void **state)
{
	const char *v = "{\"seq\":3,\"type\":\"verify.verdict\",\"step_id\":\"s\",\"attempt\":1,"
			"\"stage\":\"model\",\"action\":\"retry\",\"severity\":\"major\","
			"\"overall_pass\":false,\"criteria\":[{\"criterion\":\"cites\",\"passed\":false,"
			"\"evidence\":\"no clause\",\"confidence\":0.7,\"feedback\":\"cite cl. 3\"},"
			"{\"criterion\":\"dated\",\"passed\":false,\"not_judged\":true}],"
			"\"feedback\":\"add the clause\"}";
	struct drill_input in = {.json = v};
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_event(&ls, &in);
	expect_line(&ls, "Verdict: retry, major \xc2\xb7 model stage \xc2\xb7 not passed");
	expect_line(&ls, "\xe2\x9c\x97 cites (0.70)");
	expect_line(&ls, "evidence:");
	expect_line(&ls, "no clause");
	expect_line(&ls, "cite cl. 3");
	expect_line(&ls, "? dated (not judged)");
	expect_line(&ls, "Feedback for the next attempt");
	expect_line(&ls, "  add the clause");
	linestore_release(&ls);
}

/* Any other event: the lines the log showed, then its fields. Streamed text: its lines. */
static void test_other_events(void **state)
{
	struct linestore log, ls;
	struct drill_input in = {0};

	(void)state;
	linestore_init(&log);
	linestore_init(&ls);
	linestore_add(&log, VL_TEXT, "before");
	linestore_add(&log, VL_NOTICE, "Now stale \xe2\x80\x94 input a changed");
	in.json = "{\"seq\":4,\"type\":\"step.state\",\"step_id\":\"b\",\"state\":\"stale\","
		  "\"reason\":\"input a changed\"}";
	in.log = &log;
	in.first = 1;
	in.end = 2;
	drill_event(&ls, &in);
	expect_line(&ls, "Now stale");
	assert_int_equal(find(&ls, "before"), -1);
	expect_line(&ls, "  state: stale");
	expect_line(&ls, "  reason: input a changed");
	assert_int_equal(find(&ls, "seq:"), -1);
	linestore_release(&ls);
	linestore_init(&ls);
	in.json = NULL;
	in.first = 0;
	in.end = 1;
	drill_event(&ls, &in);
	expect_line(&ls, "before");
	expect_line(&ls, "not journaled");
	linestore_release(&ls);
	linestore_release(&log);
}

static void test_request_readable(void **state)
{
	const char *body =
	    "{\"model\":\"claude-x\",\"max_tokens\":64,\"stream\":true,"
	    "\"system\":[{\"type\":\"text\",\"text\":\"You are the executor.\\nBe brief.\","
	    "\"cache_control\":{\"type\":\"ephemeral\"}}],"
	    "\"tools\":[{\"name\":\"read_file\",\"input_schema\":{}},{\"name\":\"write_file\"}],"
	    "\"messages\":[{\"role\":\"user\",\"content\":\"Step one:\\ndo it\"},"
	    "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\","
	    "\"name\":\"read_file\",\"input\":{\"path\":\"a.txt\"}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\","
	    "\"content\":\"file text\\nsecond line\"}]}]}";
	const char *openai = "{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,"
			     "\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":"
			     "{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"b\\\"}\"}}]}],"
			     "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"read_file\"}}]}";
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_request(&ls, body, strlen(body));
	expect_line(&ls, "model: claude-x");
	expect_line(&ls, "stream: true");
	expect_line(&ls, "system");
	expect_line(&ls, "  You are the executor.");
	expect_line(&ls, "  Be brief.");
	expect_line(&ls, "tools (2): read_file, write_file");
	expect_line(&ls, "messages (3)");
	expect_line(&ls, "1. user");
	expect_line(&ls, "  Step one:");
	expect_line(&ls, "\xe2\x86\x92 read_file  (call t1)");
	expect_line(&ls, "path: a.txt");
	expect_line(&ls, "\xe2\x86\x90 result of call t1");
	expect_line(&ls, "    second line");
	linestore_release(&ls);
	linestore_init(&ls);
	drill_request(&ls, openai, strlen(openai));
	expect_line(&ls, "tools (1): read_file");
	expect_line(&ls, "tool_calls:");
	expect_line(&ls, "\"path\": \"b\""); /* arguments: JSON in a string, pretty-printed */
	linestore_release(&ls);
}

static void test_diff_kinds(void **state)
{
	struct linestore ls;

	(void)state;
	linestore_init(&ls);
	drill_diff(&ls, "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new \x1b[31mred\n same\n");
	assert_int_equal(ls.n, 6);
	assert_int_equal(ls.v[0].kind, VL_HEADER);
	assert_int_equal(ls.v[2].kind, DRILL_HUNK);
	assert_int_equal(ls.v[3].kind, DRILL_DEL);
	assert_int_equal(ls.v[4].kind, DRILL_ADD);
	assert_string_equal(ls.v[4].text, "+new red");
	assert_int_equal(ls.v[5].kind, VL_TEXT);
	linestore_release(&ls);
}

static void test_logref(void **state)
{
	struct logref r;
	size_t budget = 30, first, end;

	(void)state;
	logref_init(&r);
	assert_int_equal(logref_find(&r, 0), -1);
	logref_add(&r, 2, EV_TOOL_CALL, 5, "{\"a\":1}", &budget);
	logref_add(&r, 4, EV_TOOL_RESULT, 6, "{\"b\":2}", &budget);
	logref_add(&r, 7, EV_STEP_OUTPUT, 9, "{\"this one is over the budget\":1}", &budget);
	assert_int_equal(budget, 16);
	assert_int_equal(logref_find(&r, 1), -1);
	assert_int_equal(logref_find(&r, 2), 0);
	assert_int_equal(logref_find(&r, 3), 0);
	assert_int_equal(logref_find(&r, 6), 1);
	assert_int_equal(logref_find(&r, 100), 2);
	/* over the budget: only the seq is kept (the journal has the event) */
	assert_null(r.v[2].json);
	assert_int_equal(r.v[2].seq, 9);
	logref_span(&r, 1, 10, &first, &end);
	assert_int_equal(first, 4);
	assert_int_equal(end, 7);
	logref_span(&r, 2, 10, &first, &end);
	assert_int_equal(first, 7);
	assert_int_equal(end, 10);
	logref_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_by_fields),
		cmocka_unit_test(test_result_not_an_object),
		cmocka_unit_test(test_tool_call_whole),
		cmocka_unit_test(test_tool_result_fallbacks),
		cmocka_unit_test(test_verdict_whole),
		cmocka_unit_test(test_other_events),
		cmocka_unit_test(test_request_readable),
		cmocka_unit_test(test_diff_kinds),
		cmocka_unit_test(test_logref),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
