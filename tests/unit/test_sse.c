/* test_sse — the SSE parser: framing, comments, CRLF, splits at every byte. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sse.h"
#include "strbuf.h"

/* Every event rendered as "event|data\n" so a whole parse compares as one string. */
struct rec {
	struct strbuf out;
	int stop_after; /* stop the parse after this many events; 0 = never */
	int count;
};

static int record(void *ctx, const char *event, const char *data, size_t len)
{
	struct rec *r = ctx;

	assert_int_equal(strlen(data), len);
	strbuf_addf(&r->out, "%s|%s\n", event, data);
	r->count++;
	return (r->stop_after && r->count >= r->stop_after) ? 7 : 0;
}

static char *parse_in_pieces(const char *in, size_t piece)
{
	struct rec r = {.out = STRBUF_INIT};
	struct sse_parser *p;
	size_t n = strlen(in);

	strbuf_init(&r.out);
	p = sse_new(record, &r);
	for (size_t i = 0; i < n; i += piece)
		assert_int_equal(sse_feed(p, in + i, n - i < piece ? n - i : piece), 0);
	assert_int_equal(sse_finish(p), 0);
	sse_free(p);
	return strbuf_detach(&r.out);
}

static void check_all_splits(const char *in, const char *want)
{
	size_t n = strlen(in);

	for (size_t piece = 1; piece <= n; piece++) {
		char *got = parse_in_pieces(in, piece);

		if (strcmp(got, want))
			fail_msg("piece %zu: got\n%s\nwant\n%s", piece, got, want);
		free(got);
	}
}

static void test_basic_events(void **state)
{
	check_all_splits("event: a\ndata: {\"x\":1}\n\nevent: b\ndata: two\n\n",
			 "a|{\"x\":1}\nb|two\n");
}

static void test_multiline_data_joined_with_newline(void **state)
{
	check_all_splits("data: one\ndata: two\ndata:\ndata: four\n\n", "|one\ntwo\n\nfour\n");
}

static void test_comments_and_unknown_fields_skipped(void **state)
{
	check_all_splits(": OPENROUTER PROCESSING\n\nid: 7\nretry: 10\ndata: x\n: mid\n\n",
			 "|x\n");
}

static void test_space_after_colon_optional(void **state)
{
	check_all_splits("data:{\"a\":1}\n\ndata:  two spaces\n\n", "|{\"a\":1}\n| two spaces\n");
}

static void test_crlf_and_cr_line_ends(void **state)
{
	check_all_splits("event: e\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n", "e|1\n|2\n|3\n");
}

static void test_event_name_does_not_leak_to_next_event(void **state)
{
	check_all_splits("event: named\ndata: a\n\ndata: b\n\n", "named|a\n|b\n");
}

static void test_blank_lines_without_data_dispatch_nothing(void **state)
{
	check_all_splits("\n\n\nevent: lonely\n\n\ndata: z\n\n", "|z\n");
}

static void test_last_event_without_blank_line_taken_at_finish(void **state)
{
	/* The recorded fixtures end like this: no newline after the last data line. */
	check_all_splits("event: message_stop\ndata: {\"type\":\"message_stop\"}",
			 "message_stop|{\"type\":\"message_stop\"}\n");
}

/* ---- the WHATWG specification's own examples (HTML, "Server-sent events", 9.2.6) -------- */

static void test_whatwg_stock_ticker_multiline_data(void **state)
{
	check_all_splits("data: YHOO\ndata: +2\ndata: 10\n\n", "|YHOO\n+2\n10\n");
}

static void test_whatwg_comment_id_and_field_without_colon(void **state)
{
	/* "id" alone is a field with an empty value; only one space after the colon goes. */
	check_all_splits(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\n"
			 "data:  third event\n\n",
			 "|first event\n|second event\n| third event\n");
}

static void test_whatwg_empty_data_fields(void **state)
{
	/* Two events: "" and "\n". The spec discards the last block (no blank line after
	 * it); sse_finish delivers it on purpose (sse.h), so it shows as a third "". */
	check_all_splits("data\n\ndata\ndata\n\ndata:", "|\n|\n\n|\n");
}

static void test_whatwg_data_with_and_without_space(void **state)
{
	check_all_splits("data:test\n\ndata: test\n\n", "|test\n|test\n");
}

static void test_whatwg_event_fields(void **state)
{
	check_all_splits("event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\n"
			 "event: add\ndata: 113411\n\n",
			 "add|73857293\nremove|2153\nadd|113411\n");
}

static void test_whatwg_line_ends_cr_crlf_lf_mixed(void **state)
{
	check_all_splits("data: a\rdata: b\r\ndata: c\n\r\n"
			 "event: e\r\rdata: d\n\n",
			 "|a\nb\nc\n|d\n");
}

/* ---- byte-order mark, and the two departures for failing servers ------------------------ */

static void test_bom_at_start_is_dropped(void **state)
{
	/* Split at every byte, so the mark also arrives one byte per feed. */
	check_all_splits("\xEF\xBB\xBF"
			 "data: {\"first\":1}\n\ndata: 2\n\n",
			 "|{\"first\":1}\n|2\n");
	/* Only at the very start: a later one is text. */
	check_all_splits("data: 1\n\n\xEF\xBB\xBF"
			 "data: 2\n\n",
			 "|1\n");
}

static void test_bom_prefix_that_is_not_a_bom_is_kept(void **state)
{
	check_all_splits("\xEF"
			 "data: 1\n\n",
			 "");
	check_all_splits("data: x\n\n", "|x\n");
}

static void test_reset_expects_a_bom_again(void **state)
{
	struct rec r = {.out = STRBUF_INIT};
	struct sse_parser *p;

	strbuf_init(&r.out);
	p = sse_new(record, &r);
	assert_int_equal(sse_feed(p, "\xEF\xBB\xBF" "data: 1\n\n", 12), 0);
	sse_reset(p);
	assert_int_equal(sse_feed(p, "\xEF\xBB\xBF" "data: 2\n\n", 12), 0);
	assert_string_equal(r.out.buf, "|1\n|2\n");
	sse_free(p);
	strbuf_release(&r.out);
}

static void test_llamacpp_error_field_is_an_error_event(void **state)
{
	check_all_splits("data: {\"a\":1}\n\nerror: {\"code\":400,\"message\":\"too long\"}\n\n"
			 "data: [DONE]\n\n",
			 "|{\"a\":1}\nerror|{\"code\":400,\"message\":\"too long\"}\n|[DONE]\n");
}

static void test_raw_json_line_is_handed_over(void **state)
{
	check_all_splits("data: {\"a\":1}\n\n{\"error\":\"model 'x' not found\"}\n",
			 "|{\"a\":1}\nraw|{\"error\":\"model 'x' not found\"}\n");
}

static void test_callback_can_stop_parse(void **state)
{
	struct rec r = {.stop_after = 1};
	struct sse_parser *p;
	const char *in = "data: 1\n\ndata: 2\n\n";

	strbuf_init(&r.out);
	p = sse_new(record, &r);
	assert_int_equal(sse_feed(p, in, strlen(in)), 7);
	assert_string_equal(r.out.buf, "|1\n");
	sse_free(p);
	strbuf_release(&r.out);
}

static void test_reset_forgets_partial_event(void **state)
{
	struct rec r = {0};
	struct sse_parser *p;

	strbuf_init(&r.out);
	p = sse_new(record, &r);
	assert_int_equal(sse_feed(p, "event: x\ndata: half", 19), 0);
	sse_reset(p);
	assert_int_equal(sse_feed(p, "data: whole\n\n", 13), 0);
	assert_int_equal(sse_finish(p), 0);
	assert_string_equal(r.out.buf, "|whole\n");
	sse_free(p);
	strbuf_release(&r.out);
}

static void test_oversized_line_refused(void **state)
{
	struct rec r = {0};
	struct sse_parser *p;
	size_t chunk = 1024 * 1024;
	char *big = malloc(chunk);
	int rc = 0;

	memset(big, 'a', chunk);
	strbuf_init(&r.out);
	p = sse_new(record, &r);
	rc = sse_feed(p, "data: ", 6);
	for (size_t sent = 0; rc == 0 && sent <= SSE_MAX_EVENT; sent += chunk)
		rc = sse_feed(p, big, chunk);
	assert_int_equal(rc, SSE_TOO_LARGE);
	assert_int_equal(r.count, 0);
	sse_free(p);
	strbuf_release(&r.out);
	free(big);
}

/* The stream's position for a resumption: the last id: and retry: seen; a retry: that is
 * not all digits, and an id holding NUL, are ignored; reset forgets both. */
static void test_last_id_and_retry(void **state)
{
	struct rec r = {.out = STRBUF_INIT};
	struct sse_parser *p;
	static const char in[] = "id: a-1\nretry: 300\ndata: \n\nid: a-2\nretry: 4x\n\n";
	static const char nul[] = "id: b\0c\n\n";

	(void)state;
	strbuf_init(&r.out);
	p = sse_new(record, &r);
	assert_null(sse_last_id(p));
	assert_int_equal(sse_retry_ms(p), -1);
	for (size_t i = 0; i < sizeof(in) - 1; i++) /* split at every byte */
		assert_int_equal(sse_feed(p, in + i, 1), 0);
	assert_string_equal(sse_last_id(p), "a-2");
	assert_int_equal(sse_retry_ms(p), 300);
	assert_int_equal(sse_feed(p, nul, sizeof(nul) - 1), 0);
	assert_string_equal(sse_last_id(p), "a-2");
	assert_int_equal(sse_feed(p, "id\n\n", 4), 0); /* an empty id: no position */
	assert_null(sse_last_id(p));
	assert_int_equal(sse_feed(p, "id: z\nretry: 5\n", 16), 0);
	sse_reset(p);
	assert_null(sse_last_id(p));
	assert_int_equal(sse_retry_ms(p), -1);
	sse_free(p);
	strbuf_release(&r.out);
}

static void test_recorded_anthropic_fixture(void **state)
{
	char path[4096];
	FILE *f;
	struct strbuf in = STRBUF_INIT, types = STRBUF_INIT;
	char buf[4096];
	size_t n;
	char *got;

	snprintf(path, sizeof(path), "%s/tests/mock/fixtures/anthropic-tool.sse", TOP_SRCDIR);
	f = fopen(path, "r");
	assert_non_null(f);
	strbuf_init(&in);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&in, buf, n);
	fclose(f);
	got = parse_in_pieces(in.buf, 3);
	/* Only the event names, in order. */
	strbuf_init(&types);
	for (char *line = strtok(got, "\n"); line; line = strtok(NULL, "\n")) {
		char *bar = strchr(line, '|');
		if (bar && bar != line) {
			*bar = '\0';
			strbuf_addf(&types, "%s,", line);
		}
	}
	assert_string_equal(types.buf,
			    "message_start,content_block_start,ping,content_block_delta,"
			    "content_block_stop,content_block_start,content_block_delta,"
			    "content_block_delta,content_block_delta,content_block_stop,"
			    "message_delta,message_stop,");
	free(got);
	strbuf_release(&in);
	strbuf_release(&types);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_events),
		cmocka_unit_test(test_last_id_and_retry),
		cmocka_unit_test(test_multiline_data_joined_with_newline),
		cmocka_unit_test(test_comments_and_unknown_fields_skipped),
		cmocka_unit_test(test_space_after_colon_optional),
		cmocka_unit_test(test_crlf_and_cr_line_ends),
		cmocka_unit_test(test_event_name_does_not_leak_to_next_event),
		cmocka_unit_test(test_blank_lines_without_data_dispatch_nothing),
		cmocka_unit_test(test_last_event_without_blank_line_taken_at_finish),
		cmocka_unit_test(test_whatwg_stock_ticker_multiline_data),
		cmocka_unit_test(test_whatwg_comment_id_and_field_without_colon),
		cmocka_unit_test(test_whatwg_empty_data_fields),
		cmocka_unit_test(test_whatwg_data_with_and_without_space),
		cmocka_unit_test(test_whatwg_event_fields),
		cmocka_unit_test(test_whatwg_line_ends_cr_crlf_lf_mixed),
		cmocka_unit_test(test_bom_at_start_is_dropped),
		cmocka_unit_test(test_bom_prefix_that_is_not_a_bom_is_kept),
		cmocka_unit_test(test_reset_expects_a_bom_again),
		cmocka_unit_test(test_llamacpp_error_field_is_an_error_event),
		cmocka_unit_test(test_raw_json_line_is_handed_over),
		cmocka_unit_test(test_callback_can_stop_parse),
		cmocka_unit_test(test_reset_forgets_partial_event),
		cmocka_unit_test(test_oversized_line_refused),
		cmocka_unit_test(test_recorded_anthropic_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
