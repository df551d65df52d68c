/* test_http — the transport's pure parts (retry rules, Retry-After, error sentences,
 * redaction, endpoints) and the providers' answer parsers, without a network. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "http.h"
#include "provider.h"
#include "provider_http.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "strbuf.h"
#include "xalloc.h"

static void test_status_retry_rules(void **state)
{
	struct http_result r = {.should_retry = -1};
	const int yes[] = {408, 409, 429, 500, 502, 503, 504, 529};
	const int no[] = {400, 401, 402, 403, 404, 413, 422};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		r.status = yes[i];
		assert_true(http_status_retryable(&r));
	}
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		r.status = no[i];
		assert_false(http_status_retryable(&r));
	}
	r.status = 400;
	r.should_retry = 1;
	assert_true(http_status_retryable(&r));
	r.status = 503;
	r.should_retry = 0;
	assert_false(http_status_retryable(&r));
}

static void test_retry_after_forms(void **state)
{
	/* 1994-11-06 08:49:37 UTC is 784111777 s after the epoch. */
	const long now = 784111777L;

	assert_int_equal(http_parse_retry_after("3", now), 3000);
	assert_int_equal(http_parse_retry_after("0.5", now), 500);
	assert_int_equal(http_parse_retry_after("Sun, 06 Nov 1994 08:49:40 GMT", now), 3000);
	assert_int_equal(http_parse_retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now), 0);
	assert_int_equal(http_parse_retry_after("-4", now), -1);
	assert_int_equal(http_parse_retry_after("soon", now), -1);
	assert_int_equal(http_parse_retry_after("", now), -1);
	assert_int_equal(http_parse_retry_after(NULL, now), -1);
}

static void check_error(int status, const char *body, const char *want, const char *want_kind)
{
	char *kind = NULL, *got = http_describe_error(status, body, strlen(body), &kind);

	assert_string_equal(got, want);
	if (want_kind)
		assert_string_equal(kind, want_kind);
	else
		assert_null(kind);
	free(got);
	free(kind);
}

static void test_error_sentences_of_every_server(void **state)
{
	check_error(401,
		    "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":"
		    "\"invalid x-api-key\"},\"request_id\":\"req_1\"}",
		    "HTTP 401 authentication_error: invalid x-api-key", "authentication_error");
	check_error(429,
		    "{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":"
		    "\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}",
		    "HTTP 429 insufficient_quota: You exceeded your current quota",
		    "insufficient_quota");
	/* llama.cpp: integer code, a type string. */
	check_error(500,
		    "{\"error\":{\"code\":500,\"message\":\"boom\",\"type\":\"server_error\"}}",
		    "HTTP 500 server_error: boom", "server_error");
	/* Integer code only. */
	check_error(503, "{\"error\":{\"code\":503,\"message\":\"loading model\"}}",
		    "HTTP 503: loading model", "503");
	/* vLLM's flat form. */
	check_error(400,
		    "{\"object\":\"error\",\"message\":\"bad\",\"type\":\"BadRequestError\","
		    "\"param\":null,\"code\":400}",
		    "HTTP 400 BadRequestError: bad", "BadRequestError");
	/* Ollama's string. */
	check_error(404, "{\"error\":\"model 'llama9' not found\"}",
		    "HTTP 404: model 'llama9' not found", NULL);
	/* 413 from a proxy: not JSON, shown on one line. */
	check_error(413, "<html>\r\n<b>Too large</b>\n</html>\n",
		    "HTTP 413: <html>  <b>Too large</b> </html>", NULL);
	check_error(502, "", "HTTP 502 (no error message)", NULL);
	check_error(500, "[1,2]", "HTTP 500: [1,2]", NULL);
}

static void test_error_text_is_bounded_and_clean(void **state)
{
	struct strbuf body;
	char *got, *clean;

	strbuf_init(&body);
	strbuf_adds(&body, "{\"error\":{\"type\":\"x\",\"message\":\"");
	for (int i = 0; i < 2000; i++)
		strbuf_addc(&body, 'a');
	strbuf_adds(&body, "\"}}");
	got = http_describe_error(500, body.buf, body.len, NULL);
	assert_true(strlen(got) < 340);
	assert_non_null(strstr(got, "…"));
	free(got);
	strbuf_release(&body);
	clean = http_clean_text("a\x1b[31mred\nline");
	assert_string_equal(clean, "a?[31mred line");
	free(clean);
}

static void test_redaction(void **state)
{
	char text[] = "key sk-ant-ABCDEFGHIJKL was wrong; prefix sk-ant-ABCD*** shown; ok";
	char short_key[] = "the key abcd leaked";
	char unrelated[] = "nothing to hide here";

	http_redact(text, "sk-ant-ABCDEFGHIJKL");
	assert_null(strstr(text, "ABCDEFGH"));
	assert_null(strstr(text, "sk-ant-ABCD"));
	assert_non_null(strstr(text, "was wrong"));
	http_redact(short_key, "abcd");
	assert_null(strstr(short_key, "abcd"));
	http_redact(unrelated, "sk-proj-zzzzzzzzzz");
	assert_string_equal(unrelated, "nothing to hide here");
}

static void test_endpoints(void **state)
{
	char *err = NULL, *u;

	u = http_endpoint(NULL, "https://api.anthropic.com", "/v1", "/v1/messages", &err);
	assert_string_equal(u, "https://api.anthropic.com/v1/messages");
	free(u);
	u = http_endpoint("http://127.0.0.1:8080/v1/", "x", "/v1", "/v1/messages", &err);
	assert_string_equal(u, "http://127.0.0.1:8080/v1/messages");
	free(u);
	u = http_endpoint("http://localhost:11434/v1", "x", NULL, "/chat/completions", &err);
	assert_string_equal(u, "http://localhost:11434/v1/chat/completions");
	free(u);
	assert_null(http_endpoint("localhost:11434", "x", NULL, "/c", &err));
	assert_non_null(strstr(err, "http://"));
	free(err);
	assert_null(http_endpoint("http://a b", "x", NULL, "/c", &err));
	free(err);
}

/* ---- the answer parsers --------------------------------------------------------------- */

static const char incomplete_tool[] =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4-5\","
	"\"usage\":{\"input_tokens\":450,\"cache_creation_input_tokens\":0,"
	"\"cache_read_input_tokens\":0,\"output_tokens\":1}}      }\n\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":"
	"\"tool_use\",\"id\":\"toolu_1\",\"name\":\"write_file\",\"input\":{}}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":"
	"\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"a.txt\"}}\n\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},"
	"\"usage\":{\"output_tokens\":124}}\n\n"
	"event: message_stop\n"
	"data: {\"type\":\"message_stop\" }";

static void test_anthropic_max_tokens_leaves_partial_arguments(void **state)
{
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_anthropic_parse(incomplete_tool, strlen(incomplete_tool), true,
						  &r, &err),
			 PROVIDER_OK);
	assert_string_equal(r.stop_reason, "max_tokens");
	assert_int_equal(r.n_calls, 1);
	/* Passed on as received: the engine sees it does not parse and tells the model. */
	assert_string_equal(r.calls[0].input_json, "{\"path\": \"a.txt");
	assert_int_equal(r.usage.input_tokens, 450);
	assert_int_equal(r.usage.output_tokens, 124);
	llm_response_release(&r);
}

static void test_anthropic_refusal_and_unknown_events(void **state)
{
	const char *s =
	    "event: message_start\r\n"
	    "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":"
	    "{\"input_tokens\":20,\"output_tokens\":1}}}\r\n\r\n"
	    "event: brand_new_event\r\ndata: {\"type\":\"brand_new_event\"}\r\n\r\n"
	    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\","
	    "\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\r\n\r\n"
	    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\","
	    "\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\r\n\r\n"
	    "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":"
	    "{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":0}}\r\n\r\n"
	    "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";
	struct llm_response r;
	char *err = NULL;

	/* No text, no tool use, stopped for refusal: not an answer to parse. */
	assert_int_equal(provider_anthropic_parse(s, strlen(s), true, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 200: the model refused to answer (stop reason "
				 "\"refusal\")");
	free(err);
}

static void test_parsers_refuse_incomplete_answers(void **state)
{
	const char *no_stop = "event: message_start\ndata: {\"type\":\"message_start\","
			      "\"message\":{\"model\":\"m\"}}\n\n";
	const char *no_done = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n";
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_anthropic_parse(no_stop, strlen(no_stop), true, &r, &err),
			 PROVIDER_ERROR);
	assert_non_null(strstr(err, "truncated"));
	free(err);
	assert_int_equal(provider_openai_parse(no_done, strlen(no_done), true, &r, &err),
			 PROVIDER_ERROR);
	assert_non_null(strstr(err, "openai: HTTP 200 stream ended before [DONE]"));
	free(err);
	assert_int_equal(provider_openai_parse("{\"choices\":", 11, false, &r, &err),
			 PROVIDER_ERROR);
	assert_non_null(strstr(err, "malformed JSON"));
	free(err);
}

static void test_openai_usage_and_cached_tokens(void **state)
{
	const char *s =
	    "{\"model\":\"gpt-4.1\",\"choices\":[{\"message\":{\"content\":\"hi\"},"
	    "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":100,"
	    "\"completion_tokens\":7,\"prompt_tokens_details\":{\"cached_tokens\":64}}}";
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_openai_parse(s, strlen(s), false, &r, &err), PROVIDER_OK);
	assert_true(r.usage.reported);
	assert_int_equal(r.usage.input_tokens, 36);
	assert_int_equal(r.usage.cache_read_tokens, 64);
	assert_int_equal(r.usage.output_tokens, 7);
	assert_string_equal(r.stop_reason, "length");
	llm_response_release(&r);
}

static void test_error_bodies_that_lost_their_message(void **state)
{
	/* Gateways: the kind in `error`, the words in `message`. */
	check_error(400, "{\"error\":\"Bad Request\",\"message\":\"max_tokens must be positive\"}",
		    "HTTP 400 Bad Request: max_tokens must be positive", "Bad Request");
	/* FastAPI on a wrong path (vLLM, LiteLLM). */
	check_error(404, "{\"detail\":\"Not Found\"}", "HTTP 404: Not Found", NULL);
	/* FastAPI validation errors: the `msg` of each. */
	check_error(422,
		    "{\"detail\":[{\"loc\":[\"body\",\"messages\"],\"msg\":\"field required\","
		    "\"type\":\"value_error.missing\"},{\"loc\":[\"body\",\"model\"],\"msg\":"
		    "\"str type expected\"}]}",
		    "HTTP 422: field required; str type expected", NULL);
	/* RFC 7807: title and detail, never the type URI. */
	check_error(429,
		    "{\"type\":\"https://example.com/probs/rate-limit\",\"title\":\"Too Many "
		    "Requests\",\"status\":429,\"detail\":\"Try again in 20 seconds.\"}",
		    "HTTP 429: Too Many Requests: Try again in 20 seconds.", NULL);
	check_error(503, "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\"}",
		    "HTTP 503: Service Unavailable", NULL);
	/* An HTML page is cut to its title. */
	check_error(502,
		    "<!DOCTYPE html><html><head><TITLE>502 Bad Gateway</TITLE></head><body>"
		    "<h1>Bad Gateway</h1>...</body></html>",
		    "HTTP 502: 502 Bad Gateway", NULL);
	/* LM Studio's plain string. */
	check_error(400, "{\"error\":\"'response_format.type' must be 'json_schema' or 'text'\"}",
		    "HTTP 400: 'response_format.type' must be 'json_schema' or 'text'", NULL);
	/* A byte-order mark before the JSON. */
	check_error(401, "\xEF\xBB\xBF{\"error\":{\"message\":\"bad key\",\"type\":\"auth\"}}",
		    "HTTP 401 auth: bad key", "auth");
}

static void test_error_codes_as_statuses(void **state)
{
	const char *a = "{\"error\":{\"code\":400,\"message\":\"x\"}}";
	const char *b = "{\"error\":{\"code\":\"502\",\"message\":\"x\"}}";
	const char *c = "{\"object\":\"error\",\"code\":404}";
	const char *d = "{\"error\":{\"code\":\"rate_limit_exceeded\"}}";

	assert_int_equal(http_error_code(a, strlen(a)), 400);
	assert_int_equal(http_error_code(b, strlen(b)), 502);
	assert_int_equal(http_error_code(c, strlen(c)), 404);
	assert_int_equal(http_error_code(d, strlen(d)), 0);
	assert_int_equal(http_error_code("nope", 4), 0);
	assert_false(http_code_transient(400));
	assert_false(http_code_transient(404));
	assert_false(http_code_transient(402));
	assert_true(http_code_transient(408));
	assert_true(http_code_transient(409));
	assert_true(http_code_transient(429));
	assert_true(http_code_transient(502));
}

static void check_repair(const char *in, const char *want, bool want_bad)
{
	bool bad = !want_bad;
	char *got = phttp_repair_args(in, &bad);

	assert_string_equal(got, want);
	assert_int_equal(bad, want_bad);
	free(got);
}

static void test_broken_tool_arguments_repaired(void **state)
{
	check_repair("{\"path\": \"a.txt\"}", "{\"path\": \"a.txt\"}", false);
	check_repair(NULL, "{}", false);
	check_repair("", "{}", false);
	/* Cut off inside a string, inside an array, after a key. */
	check_repair("{\"path\": \"a.txt", "{\"path\":\"a.txt\"}", true);
	check_repair("{\"lines\": [\"a\", \"b", "{\"lines\":[\"a\",\"b\"]}", true);
	check_repair("{\"path\": \"a\", \"mode\":", "{\"path\":\"a\",\"mode\":null}", true);
	/* Trailing commas and single quotes. */
	check_repair("{\"a\": [1, 2,], \"b\": 3,}", "{\"a\":[1,2],\"b\":3}", true);
	check_repair("{'text': 'say \"hi\"'}", "{\"text\":\"say \\\"hi\\\"\"}", true);
	check_repair("{'cmd': 'ls -l'}", "{\"cmd\":\"ls -l\"}", true);
	/* Hopeless, or not an object: an empty object. */
	check_repair("path=a.txt", "{}", true);
	check_repair("[1,2]", "{}", true);
}

static const char bom_stream[] =
	"\xEF\xBB\xBF"
	"data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":"
	"\"stop\"}]}\n\n"
	"data: [DONE]\n\n";

static void test_bom_before_stream_and_json(void **state)
{
	const char *whole = "\xEF\xBB\xBF{\"model\":\"m\",\"choices\":[{\"message\":{\"content\":"
			    "\"hi\"},\"finish_reason\":\"stop\"}]}";
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_openai_parse(bom_stream, strlen(bom_stream), true, &r, &err),
			 PROVIDER_OK);
	assert_string_equal(r.text, "Hello"); /* the first chunk is not lost */
	llm_response_release(&r);
	/* Asked to stream, answered with one JSON object behind a BOM. */
	assert_int_equal(provider_openai_parse(whole, strlen(whole), true, &r, &err), PROVIDER_OK);
	assert_string_equal(r.text, "hi");
	llm_response_release(&r);
	assert_int_equal(provider_openai_parse(whole, strlen(whole), false, &r, &err),
			 PROVIDER_OK);
	assert_string_equal(r.text, "hi");
	llm_response_release(&r);
}

static void test_openai_answers_that_are_not_answers(void **state)
{
	const char *cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":"
			  "\"thinking...\"}}]}\n\n"
			  "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
			  "\"length\"}]}\n\ndata: [DONE]\n\n";
	const char *refused = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":null,"
			      "\"refusal\":\"I can't\"}}]}\n\n"
			      "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\" help with "
			      "that.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
	const char *filtered = "{\"choices\":[{\"message\":{\"content\":null},"
			       "\"finish_reason\":\"content_filter\"}]}";
	const char *some = "{\"choices\":[{\"message\":{\"content\":\"{\\\"a\\\":\"},"
			   "\"finish_reason\":\"length\"}]}";
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_openai_parse(cut, strlen(cut), true, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200: the answer was cut off at the token limit "
				 "(stop reason \"length\") before any text: raise max_tokens");
	free(err);
	assert_int_equal(provider_openai_parse(refused, strlen(refused), true, &r, &err),
			 PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200: the model refused: I can't help with that.");
	free(err);
	assert_int_equal(provider_openai_parse(filtered, strlen(filtered), false, &r, &err),
			 PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200: the server's content filter stopped the "
				 "answer (stop reason \"content_filter\") before any text");
	free(err);
	/* Some text: an answer, cut off; the stop reason travels with it to the journal. */
	assert_int_equal(provider_openai_parse(some, strlen(some), false, &r, &err), PROVIDER_OK);
	assert_string_equal(r.stop_reason, "length");
	assert_string_equal(r.text, "{\"a\":");
	llm_response_release(&r);
}

static void test_anthropic_max_tokens_before_any_text(void **state)
{
	const char *s = "{\"type\":\"message\",\"model\":\"m\",\"content\":[],\"stop_reason\":"
			"\"max_tokens\",\"usage\":{\"input_tokens\":1,\"output_tokens\":8}}";
	struct llm_response r;
	char *err = NULL;

	assert_int_equal(provider_anthropic_parse(s, strlen(s), false, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 200: the answer was cut off at the token limit "
				 "(stop reason \"max_tokens\") before any text: raise max_tokens");
	free(err);
}

static void test_anthropic_recorded_refusal_explained(void **state)
{
	char *path = xasprintf("%s/tests/mock/fixtures/anthropic-refusal.sse", TOP_SRCDIR);
	struct strbuf sb = STRBUF_INIT;
	struct llm_response r;
	char *err = NULL;
	FILE *f = fopen(path, "rb");
	char buf[4096];
	size_t n;

	assert_non_null(f);
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	assert_int_equal(provider_anthropic_parse(sb.buf, sb.len, true, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 200: the model refused: This request was "
				 "refused due to policy.");
	free(err);
	strbuf_release(&sb);
	free(path);
}

/* An answer over a size limit says so, and which limit, rather than "malformed JSON". */
static void test_answer_over_the_size_limit(void **state)
{
	struct llm_response r;
	char *err = NULL;
	/* one JSON answer just over 64 MiB (calloc: untouched pages cost nothing) */
	size_t big = 64u * 1024 * 1024 + 1;
	char *body = xcalloc(1, big);

	body[0] = '{';
	assert_int_equal(provider_openai_parse(body, big, false, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200 answer larger than the 64 MiB limit");
	free(err);
	assert_int_equal(provider_anthropic_parse(body, big, false, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 200 answer larger than the 64 MiB limit");
	free(err);
	free(body);

	/* one streamed event just over 16 MiB */
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	strbuf_adds(&sb, "data: {\"choices\":[{\"delta\":{\"content\":\"");
	while (sb.len <= SSE_MAX_EVENT)
		strbuf_adds(&sb, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	strbuf_adds(&sb, "\"}}]}\n\ndata: [DONE]\n\n");
	assert_int_equal(provider_openai_parse(sb.buf, sb.len, true, &r, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200 stream with an event larger than the 16 MiB "
				 "limit");
	free(err);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_retry_rules),
		cmocka_unit_test(test_retry_after_forms),
		cmocka_unit_test(test_error_sentences_of_every_server),
		cmocka_unit_test(test_error_text_is_bounded_and_clean),
		cmocka_unit_test(test_redaction),
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_anthropic_max_tokens_leaves_partial_arguments),
		cmocka_unit_test(test_anthropic_refusal_and_unknown_events),
		cmocka_unit_test(test_parsers_refuse_incomplete_answers),
		cmocka_unit_test(test_openai_usage_and_cached_tokens),
		cmocka_unit_test(test_error_bodies_that_lost_their_message),
		cmocka_unit_test(test_error_codes_as_statuses),
		cmocka_unit_test(test_broken_tool_arguments_repaired),
		cmocka_unit_test(test_bom_before_stream_and_json),
		cmocka_unit_test(test_openai_answers_that_are_not_answers),
		cmocka_unit_test(test_anthropic_max_tokens_before_any_text),
		cmocka_unit_test(test_anthropic_recorded_refusal_explained),
		cmocka_unit_test(test_answer_over_the_size_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
