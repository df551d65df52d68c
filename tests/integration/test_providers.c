/* test_providers — both real providers through libcurl against the mock server: the wire
 * format of requests, streamed and whole answers, and the fault matrix of issue 3. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cost.h"
#include "http.h"
#include "mock_llm.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

#define ANT_KEY "sk-ant-api03-SECRETSECRET-abcdefghijklmnop"
#define OAI_KEY "sk-proj-TOPSECRET-0123456789abcdefghij"
#define FIX(name) TOP_SRCDIR "/tests/mock/fixtures/" name

/* ---- what the operator would see ------------------------------------------------------ */

struct retry_seen {
	int status;
	long wait_ms;
	int attempt, max;
	char *reason;
};

struct obs {
	struct strbuf deltas;
	struct retry_seen retries[16];
	int n_retries;
	atomic_bool cancel;
};

static void on_delta(void *ctx, const char *text, size_t len)
{
	struct obs *o = ctx;

	strbuf_add(&o->deltas, text, len);
}

static void on_retry(void *ctx, int status, long wait_ms, int attempt, int max, const char *reason)
{
	struct obs *o = ctx;

	if (o->n_retries < 16) {
		struct retry_seen *r = &o->retries[o->n_retries];

		r->status = status;
		r->wait_ms = wait_ms;
		r->attempt = attempt;
		r->max = max;
		r->reason = xstrdup(reason);
	}
	o->n_retries++;
}

static void obs_init(struct obs *o, struct llm_hooks *h)
{
	memset(o, 0, sizeof(*o));
	memset(h, 0, sizeof(*h)); /* hooks not set here stay NULL (on_request) */
	strbuf_init(&o->deltas);
	atomic_init(&o->cancel, false);
	h->ctx = o;
	h->on_delta = on_delta;
	h->on_retry = on_retry;
	h->cancel = &o->cancel;
}

static void obs_release(struct obs *o)
{
	strbuf_release(&o->deltas);
	for (int i = 0; i < o->n_retries && i < 16; i++)
		free(o->retries[i].reason);
}

/* ---- fixtures ------------------------------------------------------------------------- */

struct fx {
	struct mock *m;
	struct provider *ant;
	struct provider *oai;
};

static const struct http_options fast = {
	.connect_timeout_ms = 2000,
	.idle_timeout_ms = 400,
	.max_retries = 4,
	.backoff_base_ms = 10,
	.backoff_cap_ms = 40,
	.retry_after_max_ms = 5000,
};

static int setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	char *url, *err = NULL;

	f->m = mock_start();
	url = mock_url(f->m, "");
	f->ant = provider_anthropic_new(url, ANT_KEY, &err);
	assert_non_null(f->ant);
	free(url);
	provider_anthropic_set_http(f->ant, &fast);
	url = mock_url(f->m, "/v1");
	f->oai = provider_openai_new(url, OAI_KEY, &err);
	assert_non_null(f->oai);
	free(url);
	provider_openai_set_http(f->oai, &fast);
	cost_reset();
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	provider_free(f->ant);
	provider_free(f->oai);
	mock_stop(f->m);
	free(f);
	http_thread_cleanup();
	return 0;
}

static struct llm_msg user_msg = {.kind = LLM_MSG_USER, .text = (char *)"Say hello."};

static struct llm_request basic_req(const char *model)
{
	struct llm_request r = {
		.role = ROLE_EXECUTOR,
		.purpose = PURPOSE_EXECUTE,
		.model = model,
		.system = "You are the executor. Long static instructions.",
		.msgs = &user_msg,
		.n_msgs = 1,
		.max_tokens = 1024,
	};
	return r;
}

static void push_body(struct mock *m, int status, const char *headers, const char *body)
{
	struct mock_reply r = {.status = status, .headers = headers, .body = body};

	mock_push(m, &r);
}

static void push_file(struct mock *m, const char *path, size_t chunk)
{
	char *body = mock_read_file(path);
	struct mock_reply r = {.status = 200, .body = body, .chunk = chunk};

	mock_push(m, &r);
	free(body);
}

static cJSON *request_json(struct mock *m, size_t i)
{
	struct mock_request *q = mock_request_get(m, i);
	cJSON *j;

	assert_non_null(q);
	j = cJSON_Parse(q->body);
	assert_non_null(j);
	mock_request_free(q);
	return j;
}

static const cJSON *path_get(const cJSON *j, const char *path)
{
	char *copy = xstrdup(path), *save = NULL;

	for (char *tok = strtok_r(copy, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save)) {
		if (*tok >= '0' && *tok <= '9')
			j = cJSON_GetArrayItem(j, atoi(tok));
		else
			j = cJSON_GetObjectItemCaseSensitive(j, tok);
	}
	free(copy);
	return j;
}

static const char *path_str(const cJSON *j, const char *path)
{
	const cJSON *v = path_get(j, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* No 8-character run of the key may appear anywhere the operator can see. */
static void assert_no_key(const char *text, const char *key)
{
	size_t n = strlen(key);

	if (!text)
		return;
	for (size_t i = 0; i + 8 <= n; i++) {
		char frag[9];

		memcpy(frag, key + i, 8);
		frag[8] = '\0';
		if (strstr(text, frag))
			fail_msg("key fragment \"%s\" leaked into: %s", frag, text);
	}
}

static int call(struct provider *p, const struct llm_request *req, struct obs *o,
		struct llm_response *out, char **err)
{
	struct llm_hooks h;
	int rc;

	obs_init(o, &h);
	rc = provider_complete(p, req, &h, out, err);
	assert_no_key(*err, ANT_KEY);
	assert_no_key(*err, OAI_KEY);
	for (int i = 0; i < o->n_retries && i < 16; i++) {
		assert_no_key(o->retries[i].reason, ANT_KEY);
		assert_no_key(o->retries[i].reason, OAI_KEY);
	}
	return rc;
}

/* ---- Anthropic: the happy paths ------------------------------------------------------- */

static void test_anthropic_stream_text_usage_cost_and_request(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	struct mock_request *q;
	cJSON *j;
	bool known;

	push_file(f->m, FIX("anthropic-text.sse"), 7);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "Hello, world");
	assert_string_equal(o.deltas.buf, "Hello, world");
	assert_string_equal(out.stop_reason, "end_turn");
	assert_string_equal(out.model, "claude-sonnet-4-5-20250929");
	assert_int_equal(out.http_status, 200);
	assert_true(out.usage.reported);
	assert_int_equal(out.usage.input_tokens, 1200);
	assert_int_equal(out.usage.output_tokens, 400);
	assert_int_equal(out.usage.cache_write_tokens, 2000);
	assert_int_equal(out.usage.cache_read_tokens, 30000);
	/* Priced exactly by the table: 1200*3 + 400*15 + 30000*0.3 + 2000*3.75 µ$. */
	double c = cost_of_call(out.model, &out.usage, &known);
	assert_true(known);
	assert_true(c > 0.0260999 && c < 0.0261001);
	assert_int_equal(o.n_retries, 0);

	q = mock_request_get(f->m, 0);
	assert_string_equal(q->path, "/v1/messages");
	assert_string_equal(q->api_key, ANT_KEY);
	assert_string_equal(q->version, "2023-06-01");
	assert_string_equal(q->authorization, "");
	mock_request_free(q);
	j = request_json(f->m, 0);
	assert_string_equal(path_str(j, "model"), "claude-sonnet-4-5");
	assert_true(cJSON_IsTrue(path_get(j, "stream")));
	assert_int_equal(path_get(j, "max_tokens")->valueint, 1024);
	assert_string_equal(path_str(j, "system.0.type"), "text");
	assert_string_equal(path_str(j, "system.0.cache_control.type"), "ephemeral");
	assert_string_equal(path_str(j, "messages.0.role"), "user");
	assert_string_equal(path_str(j, "messages.0.content"), "Say hello.");
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
}

static bool fake_run(const struct tool_env *env, const struct cJSON *in, struct strbuf *out)
{
	return true;
}

static const struct tool_def read_tool = {
	.name = "read_file",
	.description = "Reads a file of the workspace.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},"
		       "\"required\":[\"path\"]}",
	.run = fake_run,
};

static void test_anthropic_tool_use_from_partial_json(void **state)
{
	struct fx *f = *state;
	const struct tool_def *tools[] = {&read_tool};
	struct llm_tool_call prev_call = {(char *)"toolu_prev", (char *)"read_file",
					  (char *)"{\"path\":\"a.txt\"}"};
	struct llm_tool_result prev_res = {(char *)"toolu_prev", (char *)"contents of a", false};
	struct llm_msg conv[3] = {
		{.kind = LLM_MSG_USER, .text = (char *)"Read notes."},
		{.kind = LLM_MSG_ASSISTANT, .text = NULL, .calls = &prev_call, .n_calls = 1},
		{.kind = LLM_MSG_TOOL_RESULTS, .results = &prev_res, .n_results = 1},
	};
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	cJSON *j, *args;

	req.msgs = conv;
	req.n_msgs = 3;
	req.tools = tools;
	req.n_tools = 1;
	push_file(f->m, FIX("anthropic-tool.sse"), 5);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.stop_reason, "tool_use");
	assert_string_equal(out.text, "Reading the file.");
	assert_int_equal(out.n_calls, 1);
	assert_string_equal(out.calls[0].id, "toolu_mock_01");
	assert_string_equal(out.calls[0].name, "read_file");
	args = cJSON_Parse(out.calls[0].input_json);
	assert_string_equal(path_str(args, "path"), "notes.txt");
	cJSON_Delete(args);

	j = request_json(f->m, 0);
	assert_string_equal(path_str(j, "tools.0.name"), "read_file");
	assert_string_equal(path_str(j, "tools.0.input_schema.type"), "object");
	assert_string_equal(path_str(j, "messages.1.role"), "assistant");
	assert_string_equal(path_str(j, "messages.1.content.0.type"), "tool_use");
	assert_string_equal(path_str(j, "messages.1.content.0.input.path"), "a.txt");
	assert_string_equal(path_str(j, "messages.2.role"), "user");
	assert_string_equal(path_str(j, "messages.2.content.0.type"), "tool_result");
	assert_string_equal(path_str(j, "messages.2.content.0.tool_use_id"), "toolu_prev");
	assert_string_equal(path_str(j, "messages.2.content.0.content"), "contents of a");
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
}

static void test_anthropic_whole_message(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-haiku-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	cJSON *j;

	provider_anthropic_set_stream(f->ant, false);
	push_body(f->m, 200, "request-id: req_1\n",
		  "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":"
		  "\"claude-haiku-4-5-20251001\",\"content\":[{\"type\":\"text\",\"text\":\"Hi\"},"
		  "{\"type\":\"tool_use\",\"id\":\"toolu_9\",\"name\":\"read_file\",\"input\":"
		  "{\"path\":\"x\"}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":10,"
		  "\"output_tokens\":5}}");
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "Hi");
	assert_int_equal(out.n_calls, 1);
	assert_string_equal(out.calls[0].input_json, "{\"path\":\"x\"}");
	assert_int_equal(out.usage.output_tokens, 5);
	j = request_json(f->m, 0);
	assert_null(path_get(j, "stream"));
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
}

/* ---- OpenAI: the happy paths ---------------------------------------------------------- */

static void test_openai_stream_text_usage_and_request(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	struct mock_request *q;
	cJSON *j;
	bool known;

	push_file(f->m, FIX("openai-text.sse"), 11);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "Hello, world");
	assert_string_equal(o.deltas.buf, "Hello, world");
	assert_string_equal(out.stop_reason, "stop");
	assert_string_equal(out.model, "gpt-5-mini-2025-08-07");
	assert_int_equal(out.usage.input_tokens, 5000 - 4096);
	assert_int_equal(out.usage.cache_read_tokens, 4096);
	assert_int_equal(out.usage.output_tokens, 700);
	/* 904*0.25 + 4096*0.025 + 700*2.00 µ$ */
	double c = cost_of_call(out.model, &out.usage, &known);
	assert_true(known);
	assert_true(c > 0.0017284 && c < 0.0017286);

	q = mock_request_get(f->m, 0);
	assert_string_equal(q->path, "/v1/chat/completions");
	assert_string_equal(q->authorization, "Bearer " OAI_KEY);
	assert_string_equal(q->api_key, "");
	mock_request_free(q);
	j = request_json(f->m, 0);
	assert_string_equal(path_str(j, "messages.0.role"), "system");
	assert_string_equal(path_str(j, "messages.1.role"), "user");
	assert_true(cJSON_IsTrue(path_get(j, "stream")));
	assert_true(cJSON_IsTrue(path_get(j, "stream_options.include_usage")));
	assert_int_equal(path_get(j, "max_tokens")->valueint, 1024);
	assert_null(path_get(j, "response_format"));
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
}

static void test_openai_tool_calls_assembled_by_index(void **state)
{
	struct fx *f = *state;
	const struct tool_def *tools[] = {&read_tool};
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	cJSON *j;

	req.tools = tools;
	req.n_tools = 1;
	push_file(f->m, FIX("openai-tool.sse"), 0);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.stop_reason, "tool_calls");
	assert_int_equal(out.n_calls, 2);
	assert_string_equal(out.calls[0].id, "call_mock_a");
	assert_string_equal(out.calls[0].name, "read_file");
	assert_string_equal(out.calls[0].input_json, "{\"path\":\"notes.txt\"}");
	assert_string_equal(out.calls[1].id, "call_mock_b");
	assert_string_equal(out.calls[1].name, "list_dir");
	assert_string_equal(out.calls[1].input_json, "{\"path\":\".\"}");
	assert_int_equal(out.usage.input_tokens, 44);
	j = request_json(f->m, 0);
	assert_string_equal(path_str(j, "tools.0.type"), "function");
	assert_string_equal(path_str(j, "tools.0.function.name"), "read_file");
	assert_string_equal(path_str(j, "tools.0.function.parameters.type"), "object");
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
}

static void test_openai_local_server_without_key_ollama_style(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("llama3.1");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *url = mock_url(f->m, "/v1/");
	struct provider *p = provider_openai_new(url, NULL, &err);
	struct mock_request *q;
	bool known;

	assert_non_null(p);
	provider_openai_set_http(p, &fast);
	/* Ollama: no usage, a whole tool call in one delta without index. */
	push_body(f->m, 200, NULL,
		  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":"
		  "\"llama3.1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
		  "\"content\":\"ok\"},\"finish_reason\":null}]}\n\n"
		  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":"
		  "\"llama3.1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
		  "\"content\":\"\",\"tool_calls\":[{\"id\":\"call_x\",\"function\":{\"name\":"
		  "\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"r.md\\\"}\"}}]},"
		  "\"finish_reason\":null}]}\n\n"
		  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"model\":"
		  "\"llama3.1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
		  "\"content\":\"\"},\"finish_reason\":\"tool_calls\"}]}\n\n"
		  "data: [DONE]\n\n");
	assert_int_equal(call(p, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "ok");
	assert_false(out.usage.reported);
	assert_int_equal(out.n_calls, 1);
	assert_string_equal(out.calls[0].input_json, "{\"path\":\"r.md\"}");
	/* Unknown model: cost unknown, never zero-as-known. */
	cost_of_call(out.model, &out.usage, &known);
	assert_false(known);
	q = mock_request_get(f->m, 0);
	assert_string_equal(q->authorization, "");
	assert_string_equal(q->path, "/v1/chat/completions");
	mock_request_free(q);
	llm_response_release(&out);
	obs_release(&o);
	provider_free(p);
	free(url);
}

static void test_openai_whole_answer(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-4o");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	provider_openai_set_stream(f->oai, false);
	push_body(f->m, 200, NULL,
		  "{\"id\":\"x\",\"object\":\"chat.completion\",\"model\":\"gpt-4o-2024-08-06\","
		  "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
		  "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":"
		  "\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"z\\\"}\"}}]},\"finish_reason\":"
		  "\"tool_calls\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3},"
		  "\"timings\":{\"predicted_ms\":1}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "");
	assert_int_equal(out.n_calls, 1);
	assert_string_equal(out.calls[0].input_json, "{\"path\":\"z\"}");
	assert_int_equal(out.usage.input_tokens, 9);
	llm_response_release(&out);
	obs_release(&o);
}

static void test_whole_json_answer_to_a_stream_request(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("some-model");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	/* A server that ignores "stream": true answers with one JSON object. */
	push_body(f->m, 200, NULL,
		  "\n{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
		  "\"whole\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":4,"
		  "\"completion_tokens\":2}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "whole");
	assert_int_equal(out.usage.output_tokens, 2);
	llm_response_release(&out);
	obs_release(&o);

	push_body(f->m, 200, NULL,
		  "{\"type\":\"message\",\"model\":\"claude-haiku-4-5\",\"content\":[{\"type\":"
		  "\"text\",\"text\":\"entire\"}],\"stop_reason\":\"end_turn\",\"usage\":"
		  "{\"input_tokens\":3,\"output_tokens\":1}}");
	req.model = "claude-haiku-4-5";
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "entire");
	llm_response_release(&out);
	obs_release(&o);
}

static void test_openrouter_comment_lines(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_body(f->m, 200, NULL,
		  ": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n"
		  "data:{\"id\":\"gen-1\",\"model\":\"openai/gpt-5\",\"choices\":[{\"index\":0,"
		  "\"delta\":{\"content\":\"A\"},\"finish_reason\":null}]}\r\n\r\n"
		  ": OPENROUTER PROCESSING\n\n"
		  "data: {\"id\":\"gen-1\",\"model\":\"openai/gpt-5\",\"choices\":[{\"index\":0,"
		  "\"delta\":{\"content\":\"B\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n"
		  "data: [DONE]\n\n");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "AB");
	assert_false(out.usage.reported);
	llm_response_release(&out);
	obs_release(&o);
}

/* ---- what real OpenAI-compatible servers send (WIRE.md, last section) ------------------- */

/* Calls once and expects a failure with exactly `want` and no retry. */
static void expect_failure_no_retry(struct fx *f, const char *want)
{
	struct llm_request req = basic_req("m");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	size_t before = mock_request_count(f->m);

	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	if (!err || strcmp(err, want))
		fail_msg("got  %s\nwant %s", err ? err : "(null)", want);
	assert_int_equal(o.n_retries, 0);
	assert_int_equal(mock_request_count(f->m), before + 1);
	free(err);
	obs_release(&o);
}

static void test_ollama_raw_error_line_after_stream_began(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("llama3.1");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("llama3.1", "fine", 1, 1);

	/* An error, not a truncated stream: the server's words, retried as a runner crash. */
	push_file(f->m, FIX("ollama-stream-error.sse"), 7);
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason,
			    "HTTP 200 then error: an error was encountered while running the "
			    "model: unexpected EOF; partial text discarded");
	assert_string_equal(out.text, "fine");
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
	/* Before the first token: a whole JSON body, also the server's words. */
	push_body(f->m, 200, NULL, "{\"error\":\"model 'llama9' not found\"}");
	push_body(f->m, 200, NULL, "{\"error\":\"model 'llama9' not found\"}");
	push_body(f->m, 200, NULL, "{\"error\":\"model 'llama9' not found\"}");
	push_body(f->m, 200, NULL, "{\"error\":\"model 'llama9' not found\"}");
	push_body(f->m, 200, NULL, "{\"error\":\"model 'llama9' not found\"}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 200 then error: model 'llama9' not found (gave up "
				 "after 5 attempts)");
	free(err);
	obs_release(&o);
}

static void test_llamacpp_old_error_field_then_done(void **state)
{
	struct fx *f = *state;

	/* Once journaled as an ok call with an empty answer; a 400: no retry. */
	push_file(f->m, FIX("llamacpp-old-error.sse"), 0);
	expect_failure_no_retry(f, "openai: HTTP 200 then error invalid_request_error: the request "
				   "exceeds the available context size. try increasing the "
				   "context size or enable context shift; partial text "
				   "discarded");
	/* The Sep–Oct 2025 builds: the context error as data, then [DONE]. */
	push_file(f->m, FIX("llamacpp-context-error.sse"), 0);
	expect_failure_no_retry(f, "openai: HTTP 200 then error exceed_context_size_error: the "
				   "request exceeds the available context size, try increasing "
				   "it");
	/* Newer: a plain HTTP status before the first token. */
	push_body(f->m, 400, NULL,
		  "{\"error\":{\"code\":400,\"message\":\"request (9000 tokens) exceeds the "
		  "available context size (8192 tokens), try increasing it\",\"type\":"
		  "\"exceed_context_size_error\",\"n_prompt_tokens\":9000,\"n_ctx\":8192}}");
	expect_failure_no_retry(f, "openai: HTTP 400 exceed_context_size_error: request (9000 "
				   "tokens) exceeds the available context size (8192 tokens), "
				   "try increasing it");
}

static void test_llamacpp_reasoning_and_timings(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("qwen3-8b");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_file(f->m, FIX("llamacpp-reasoning.sse"), 13);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	/* Reasoning is kept apart from the answer; timings are ignored. */
	assert_string_equal(out.text, "Hello there.");
	assert_string_equal(o.deltas.buf, "Hello there.");
	assert_string_equal(out.stop_reason, "stop");
	assert_string_equal(out.model, "qwen3-8b");
	assert_int_equal(out.usage.input_tokens, 30);
	assert_int_equal(out.usage.output_tokens, 12);
	llm_response_release(&out);
	obs_release(&o);
}

static void test_vllm_error_chunk_then_done_not_retried(void **state)
{
	struct fx *f = *state;

	push_file(f->m, FIX("vllm-error-done.sse"), 0);
	expect_failure_no_retry(f, "openai: HTTP 200 then error BadRequestError: This model's "
				   "maximum context length is 32768 tokens. However, you "
				   "requested 40000 tokens. Please reduce the length of the "
				   "messages or completion.");
	/* The flag vLLM needs for tools, named by its own sentence. */
	push_body(f->m, 400, NULL,
		  "{\"error\":{\"message\":\"\\\"auto\\\" tool choice requires "
		  "--enable-auto-tool-choice and --tool-call-parser to be set\",\"type\":"
		  "\"BadRequestError\",\"param\":null,\"code\":400}}");
	expect_failure_no_retry(f, "openai: HTTP 400 BadRequestError: \"auto\" tool choice "
				   "requires --enable-auto-tool-choice and --tool-call-parser to "
				   "be set");
}

static void test_openrouter_midstream_errors_int_and_string_codes(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("meta-llama/llama-3.3-70b-instruct");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("m", "Sure.", 1, 1);

	/* 502 from the upstream provider: transient, retried (no [DONE] after it). */
	push_file(f->m, FIX("openrouter-error-int.sse"), 16);
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason, "HTTP 200 then error 502: Provider returned "
						 "error; partial text discarded");
	assert_string_equal(out.text, "Sure.");
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
	/* A code "400" as a string: the request's fault, not retried. */
	push_file(f->m, FIX("openrouter-error-str.sse"), 0);
	expect_failure_no_retry(f, "openai: HTTP 200 then error 400: Input validation failed: "
				   "messages[2].content is empty");
}

static void test_lmstudio_rejects_json_object_response_format(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("qwen2.5-7b-instruct");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("qwen2.5-7b-instruct", "{\"ok\":true}", 1, 1);
	cJSON *j;

	req.want_json = true;
	push_body(f->m, 400, NULL,
		  "{\"error\":\"'response_format.type' must be 'json_schema' or 'text'\"}");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "{\"ok\":true}");
	assert_true(provider_openai_json_mode_disabled(f->oai));
	assert_int_equal(mock_request_count(f->m), 2);
	j = request_json(f->m, 1);
	assert_null(path_get(j, "response_format"));
	cJSON_Delete(j);
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_api_openai_usage_chunk_extra_fields_and_length(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_file(f->m, FIX("openai-extra-fields.sse"), 64);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "Forty-two words.");
	/* Cut off at the token limit: an answer, and the reason goes with it. */
	assert_string_equal(out.stop_reason, "length");
	assert_true(out.usage.reported);
	assert_int_equal(out.usage.input_tokens, 120);
	assert_int_equal(out.usage.output_tokens, 64);
	assert_string_equal(out.model, "gpt-5-mini-2025-08-07");
	llm_response_release(&out);
	obs_release(&o);
}

static void test_error_bodies_keep_their_message(void **state)
{
	struct fx *f = *state;
	char *url = mock_url(f->m, "/v1/chat/completions"), *want;

	push_body(f->m, 404, NULL, "{\"detail\":\"Not Found\"}");
	want = xasprintf("openai: HTTP 404: Not Found (POST %s: is the base URL right? often a "
			 "missing /v1)",
			 url);
	expect_failure_no_retry(f, want);
	free(want);
	free(url);
	push_body(f->m, 400, NULL,
		  "{\"error\":\"Bad Request\",\"message\":\"messages: at least one message is "
		  "required\"}");
	expect_failure_no_retry(f, "openai: HTTP 400 Bad Request: messages: at least one "
				   "message is required");
	push_body(f->m, 403, "content-type: application/problem+json\n",
		  "{\"type\":\"https://gateway.example/problems/forbidden-model\",\"title\":"
		  "\"Forbidden\",\"status\":403,\"detail\":\"Model gpt-5 is not enabled for this "
		  "team.\"}");
	expect_failure_no_retry(f, "openai: HTTP 403: Forbidden: Model gpt-5 is not enabled for "
				   "this team.");
	push_body(f->m, 422, NULL,
		  "{\"detail\":[{\"type\":\"missing\",\"loc\":[\"body\",\"model\"],\"msg\":"
		  "\"Field required\",\"input\":{}}]}");
	expect_failure_no_retry(f, "openai: HTTP 422: Field required");
}

static void test_bom_before_stream_and_before_json(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("m");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *sse = mock_openai_text_sse("m", "first chunk kept", 1, 1);
	char *bom_sse = xasprintf("\xEF\xBB\xBF%s", sse);
	struct mock_reply r = {.status = 200, .body = bom_sse, .chunk = 1};

	mock_push(f->m, &r); /* one byte per write: the mark arrives split */
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "first chunk kept");
	llm_response_release(&out);
	obs_release(&o);
	push_body(f->m, 200, "content-type: application/json\n",
		  "\xEF\xBB\xBF{\"model\":\"m\",\"choices\":[{\"message\":{\"content\":\"whole\"},"
		  "\"finish_reason\":\"stop\"}]}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "whole");
	llm_response_release(&out);
	obs_release(&o);
	free(bom_sse);
	free(sse);
}

/* A model's broken arguments: passed to the engine as written, sent back repaired, and the
 * model is told in the tool result. Ollama and vLLM refuse the raw text with HTTP 400. */
static void test_broken_tool_arguments_sent_back_repaired(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("Qwen/Qwen2.5-7B-Instruct");
	struct llm_response out, second;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("m", "done", 1, 1);
	struct llm_msg msgs[3] = {{0}};
	struct llm_tool_result res = {0};
	cJSON *j;
	const char *content;

	push_file(f->m, FIX("vllm-tool-fragments.sse"), 32);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(out.n_calls, 1);
	assert_string_equal(out.calls[0].name, "write_file");
	assert_string_equal(out.calls[0].input_json,
			    "{\"path\": \"notes.txt\", \"content\": 'hello', }");
	assert_string_equal(out.stop_reason, "tool_calls");
	obs_release(&o);

	msgs[0] = user_msg;
	msgs[1].kind = LLM_MSG_ASSISTANT;
	msgs[1].calls = out.calls;
	msgs[1].n_calls = out.n_calls;
	res.call_id = out.calls[0].id;
	res.content = (char *)"the arguments of write_file are not a JSON object";
	res.is_error = true;
	msgs[2].kind = LLM_MSG_TOOL_RESULTS;
	msgs[2].results = &res;
	msgs[2].n_results = 1;
	req.msgs = msgs;
	req.n_msgs = 3;
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &second, &err), PROVIDER_OK);
	llm_response_release(&second);
	obs_release(&o);
	/* The same turns to Anthropic: a repaired `input` object, and the same note. */
	push_file(f->m, FIX("anthropic-text.sse"), 0);
	req.model = "claude-sonnet-4-5";
	assert_int_equal(call(f->ant, &req, &o, &second, &err), PROVIDER_OK);
	llm_response_release(&second);
	llm_response_release(&out);
	obs_release(&o);
	j = request_json(f->m, 2);
	assert_string_equal(path_str(j, "messages.1.content.0.input.content"), "hello");
	assert_non_null(path_str(j, "messages.2.content.0.content"));
	assert_true(strncmp(path_str(j, "messages.2.content.0.content"),
			    "Your arguments for write_file were not valid JSON;", 50) == 0);
	cJSON_Delete(j);
	j = request_json(f->m, 1);
	assert_string_equal(path_str(j, "messages.2.tool_calls.0.function.arguments"),
			    "{\"path\":\"notes.txt\",\"content\":\"hello\"}");
	content = path_str(j, "messages.3.content");
	assert_non_null(content);
	assert_string_equal(content,
			    "Your arguments for write_file were not valid JSON; they were "
			    "replaced by {\"path\":\"notes.txt\",\"content\":\"hello\"}. Call the "
			    "tool again with a valid JSON object.\n"
			    "ERROR: the arguments of write_file are not a JSON object");
	cJSON_Delete(j);
	free(ok);
}

/* ---- the fault matrix ----------------------------------------------------------------- */

static void test_429_retry_after_seconds(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_anthropic_text_sse("claude-sonnet-4-5", "fine", 10, 2);
	long long t0 = now_ms();

	push_body(f->m, 429, "retry-after: 1\n",
		  "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":"
		  "\"Number of request tokens has exceeded your per-minute rate limit\"}}");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_true(now_ms() - t0 >= 950);
	assert_string_equal(out.text, "fine");
	assert_int_equal(o.n_retries, 1);
	assert_int_equal(o.retries[0].status, 429);
	assert_int_equal(o.retries[0].wait_ms, 1000);
	assert_int_equal(o.retries[0].attempt, 2);
	assert_int_equal(o.retries[0].max, 5);
	assert_non_null(
	    strstr(o.retries[0].reason, "HTTP 429 rate_limit_error: Number of request"));
	assert_int_equal(mock_request_count(f->m), 2);
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_500_then_success_with_backoff(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("gpt-5-mini", "done", 10, 2);

	push_body(f->m, 500, NULL,
		  "{\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\","
		  "\"param\":null,\"code\":null}}");
	push_body(f->m, 502, NULL, "<html>Bad gateway</html>");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "done");
	assert_int_equal(o.n_retries, 2);
	assert_int_equal(o.retries[0].status, 500);
	assert_non_null(
	    strstr(o.retries[0].reason, "HTTP 500 server_error: The server had an error"));
	/* No retry-after: full-jitter backoff within [0, base·2^(n-1)]. */
	assert_true(o.retries[0].wait_ms >= 0 && o.retries[0].wait_ms <= 10);
	assert_true(o.retries[1].wait_ms >= 0 && o.retries[1].wait_ms <= 20);
	assert_int_equal(o.retries[1].status, 502);
	assert_non_null(strstr(o.retries[1].reason, "HTTP 502: <html>Bad gateway</html>"));
	assert_int_equal(o.retries[1].attempt, 3);
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_529_overloaded_retry_after_ms(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-opus-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_anthropic_text_sse("claude-opus-4-5", "x", 1, 1);

	push_body(f->m, 529, "retry-after-ms: 120\nretry-after: 9\n",
		  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":"
		  "\"Overloaded\"},\"request_id\":\"req_1\"}");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_int_equal(o.retries[0].status, 529);
	assert_int_equal(o.retries[0].wait_ms, 120);
	assert_string_equal(o.retries[0].reason, "HTTP 529 overloaded_error: Overloaded");
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_x_should_retry_overrides_status(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_anthropic_text_sse("claude-sonnet-4-5", "y", 1, 1);

	push_body(f->m, 400, "x-should-retry: true\n",
		  "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":"
		  "\"transient\"}}");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	llm_response_release(&out);
	obs_release(&o);

	push_body(f->m, 503, "x-should-retry: false\n",
		  "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"no\"}}");
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_int_equal(o.n_retries, 0);
	assert_string_equal(err, "anthropic: HTTP 503 api_error: no");
	free(err);
	obs_release(&o);
	free(ok);
}

static void test_error_event_after_200_is_retried(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_anthropic_text_sse("claude-sonnet-4-5", " again", 1, 1);

	push_body(
	    f->m, 200, NULL,
	    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":"
	    "\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
	    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
	    "\"delta\":{\"type\":\"text_delta\",\"text\":\"partial\"}}\n\n"
	    "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
	    "\"message\":\"Over\\u001b[2Jloaded\"}}\n\n");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, " again");
	/* The operator saw the partial text, then was told it was discarded. */
	assert_string_equal(o.deltas.buf, "partial again");
	assert_int_equal(o.n_retries, 1);
	assert_int_equal(o.retries[0].status, 200);
	assert_string_equal(
	    o.retries[0].reason,
	    "HTTP 200 then error event overloaded_error: Over?[2Jloaded; partial text "
	    "discarded");
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_truncated_stream_is_retried(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	char *full = mock_read_file(FIX("anthropic-text.sse"));
	const char *stop = strstr(full, "event: message_delta");
	struct mock_reply cut = {.body = full, .fault = MOCK_TRUNCATE,
				 .cut_at = (size_t)(stop - full), .chunk = 64};

	mock_push(f->m, &cut);
	push_body(f->m, 200, NULL, full);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "Hello, world");
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason,
			    "HTTP 200 stream ended before message_stop (truncated); partial text "
			    "discarded");
	llm_response_release(&out);
	obs_release(&o);

	/* Ollama: a raw {"error":…} line instead of an event: its words, not "truncated". */
	push_body(f->m, 200, NULL,
		  "data: {\"model\":\"llama3.1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
		  "\"so\"}}]}\n\n{\"error\":\"model runner crashed\"}\n");
	push_body(f->m, 200, NULL, "data: [DONE]\n\n");
	req.model = "llama3.1";
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason, "HTTP 200 then error: model runner crashed; "
						 "partial text discarded");
	llm_response_release(&out);
	obs_release(&o);
	free(full);
}

static void test_stream_cut_mid_body_is_retried(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	char *full = mock_read_file(FIX("openai-text.sse"));
	struct mock_reply cut = {.body = full, .fault = MOCK_CUT, .cut_at = 500, .chunk = 100};

	mock_push(f->m, &cut);
	push_body(f->m, 200, NULL, full);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_int_equal(o.retries[0].status, 200);
	assert_non_null(strstr(o.retries[0].reason, "HTTP 200 stream cut"));
	llm_response_release(&out);
	obs_release(&o);
	free(full);
}

static void test_stalled_stream_cut_by_idle_timeout(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	char *full = mock_read_file(FIX("anthropic-text.sse"));
	struct mock_reply stall = {.body = full, .fault = MOCK_STALL, .cut_at = 300};
	long long t0 = now_ms();

	mock_push(f->m, &stall);
	push_body(f->m, 200, NULL, full);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_true(now_ms() - t0 < 3000);
	assert_int_equal(o.n_retries, 1);
	assert_non_null(strstr(o.retries[0].reason, "no data for 0.4 s (idle timeout)"));
	llm_response_release(&out);
	obs_release(&o);
	free(full);
}

static void test_connection_reset_is_retried(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_anthropic_text_sse("claude-sonnet-4-5", "z", 1, 1);
	struct mock_reply reset = {.fault = MOCK_RESET};

	mock_push(f->m, &reset);
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_int_equal(o.retries[0].status, 0);
	assert_non_null(strstr(o.retries[0].reason, "connection error: "));
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_malformed_json_in_200(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-mini");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("gpt-5-mini", "k", 1, 1);

	push_body(f->m, 200, NULL, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}\n\n");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason, "HTTP 200 with malformed JSON in the response");
	llm_response_release(&out);
	obs_release(&o);

	provider_openai_set_stream(f->oai, false);
	push_body(f->m, 200, NULL, "{\"choices\": [tru");
	push_body(f->m, 200, NULL, "{\"choices\":[{\"message\":{\"content\":\"whole\"}}]}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "whole");
	assert_int_equal(o.n_retries, 1);
	llm_response_release(&out);
	obs_release(&o);
	free(ok);
}

static void test_401_fails_at_once_with_clear_message(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_body(f->m, 401, NULL,
		  "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":"
		  "\"invalid x-api-key\"},\"request_id\":\"req_011\"}");
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 401 authentication_error: invalid x-api-key");
	assert_int_equal(o.n_retries, 0);
	assert_int_equal(mock_request_count(f->m), 1);
	free(err);
	obs_release(&o);
}

static void test_key_echoed_by_server_is_redacted(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	/* OpenAI echoes part of a wrong key; a hostile proxy might echo all of it. */
	push_body(f->m, 401, NULL,
		  "{\"error\":{\"message\":\"Incorrect API key provided: " OAI_KEY
		  ". You can find your API key at https://platform.openai.com.\",\"type\":"
		  "\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_non_null(
	    strstr(err, "openai: HTTP 401 invalid_api_key: Incorrect API key provided: "));
	free(err);
	obs_release(&o);
	push_body(f->m, 500, NULL, "upstream said: " ANT_KEY);
	push_body(f->m, 401, NULL, "{\"error\":{\"type\":\"authentication_error\",\"message\":"
				   "\"key " ANT_KEY " revoked\"}}");
	req.model = "claude-sonnet-4-5";
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_int_equal(o.n_retries, 1);
	assert_non_null(strstr(err, "revoked"));
	free(err);
	obs_release(&o);
}

static void test_404_unknown_model(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-9");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_body(f->m, 404, NULL,
		  "{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have "
		  "access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":"
		  "\"model_not_found\"}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 404 model_not_found: The model `gpt-9` does not "
				 "exist or you do not have access to it.");
	assert_int_equal(o.n_retries, 0);
	free(err);
	obs_release(&o);

	push_body(f->m, 404, NULL,
		  "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":"
		  "\"model: claude-nope\"}}");
	req.model = "claude-nope";
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 404 not_found_error: model: claude-nope");
	free(err);
	obs_release(&o);
}

static void test_llamacpp_integer_codes_and_vllm_flat_errors(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("qwen");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("qwen", "fine", 1, 1);

	/* Mid-stream llama.cpp error with an integer code: transient, retried. */
	push_body(
	    f->m, 200, NULL,
	    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"timings\":{}}\n\n"
	    "data: {\"error\":{\"code\":500,\"message\":\"slot unavailable\",\"type\":"
	    "\"server_error\"}}\n\n");
	push_body(f->m, 200, NULL, ok);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_int_equal(o.n_retries, 1);
	assert_string_equal(o.retries[0].reason,
			    "HTTP 200 then error server_error: slot unavailable; partial text "
			    "discarded");
	llm_response_release(&out);
	obs_release(&o);

	push_body(f->m, 400, NULL,
		  "{\"error\":{\"code\":400,\"message\":\"context too long\",\"type\":"
		  "\"invalid_request_error\"}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 400 invalid_request_error: context too long");
	free(err);
	obs_release(&o);

	push_body(f->m, 400, NULL,
		  "{\"object\":\"error\",\"message\":\"tool_choice auto needs a flag\",\"type\":"
		  "\"BadRequestError\",\"param\":null,\"code\":400}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "openai: HTTP 400 BadRequestError: tool_choice auto needs a flag");
	free(err);
	obs_release(&o);
	free(ok);
}

static void test_insufficient_quota_not_retried(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;

	push_body(f->m, 429, "retry-after: 1\n",
		  "{\"error\":{\"message\":\"You exceeded your current quota.\",\"type\":"
		  "\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}");
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_int_equal(o.n_retries, 0);
	assert_string_equal(err, "openai: HTTP 429 insufficient_quota: You exceeded your current "
				 "quota.");
	free(err);
	obs_release(&o);
}

static void test_retries_are_bounded(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct llm_response out;
	struct obs o;
	char *err = NULL;
	struct http_options two = fast;
	const char *busy = "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":"
			   "\"busy\"}}";

	two.max_retries = 2;
	provider_anthropic_set_http(f->ant, &two);
	for (int i = 0; i < 4; i++)
		push_body(f->m, 503, NULL, busy);
	assert_int_equal(call(f->ant, &req, &o, &out, &err), PROVIDER_ERROR);
	assert_string_equal(err, "anthropic: HTTP 503 api_error: busy (gave up after 3 attempts)");
	assert_int_equal(o.n_retries, 2);
	assert_int_equal(o.retries[1].attempt, 3);
	assert_int_equal(o.retries[1].max, 3);
	assert_int_equal(mock_request_count(f->m), 3);
	free(err);
	obs_release(&o);
}

static void test_json_mode_fallback_remembered(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("local-model");
	struct llm_response out;
	struct obs o;
	char *err = NULL, *ok = mock_openai_text_sse("local-model", "{\"a\":1}", 1, 1);
	cJSON *j;

	req.role = ROLE_PLANNER;
	req.want_json = true;
	push_body(f->m, 400, NULL,
		  "{\"error\":{\"message\":\"'response_format' of type 'json_object' is not "
		  "supported with this model\",\"type\":\"invalid_request_error\",\"param\":"
		  "\"response_format\",\"code\":null}}");
	push_body(f->m, 200, NULL, ok);
	push_body(f->m, 200, NULL, ok);
	assert_false(provider_openai_json_mode_disabled(f->oai));
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	assert_string_equal(out.text, "{\"a\":1}");
	assert_true(provider_openai_json_mode_disabled(f->oai));
	llm_response_release(&out);
	obs_release(&o);
	assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
	llm_response_release(&out);
	obs_release(&o);
	assert_int_equal(mock_request_count(f->m), 3);
	j = request_json(f->m, 0);
	assert_string_equal(path_str(j, "response_format.type"), "json_object");
	cJSON_Delete(j);
	for (size_t i = 1; i < 3; i++) {
		j = request_json(f->m, i);
		assert_null(path_get(j, "response_format"));
		cJSON_Delete(j);
	}
	free(ok);
}

static void *cancel_later(void *arg)
{
	struct obs *o = arg;
	struct timespec ts = {0, 300 * 1000000L};

	nanosleep(&ts, NULL);
	atomic_store(&o->cancel, true);
	return NULL;
}

/* Cancels from another thread 300 ms into the call; returns how long the call took. */
static long long cancelled_call(struct provider *p, const struct llm_request *req, int *rc)
{
	struct llm_hooks h;
	struct obs o;
	struct llm_response out;
	char *err = NULL;
	pthread_t t;
	long long t0;

	obs_init(&o, &h);
	t0 = now_ms();
	pthread_create(&t, NULL, cancel_later, &o);
	*rc = provider_complete(p, req, &h, &out, &err);
	t0 = now_ms() - t0;
	pthread_join(t, NULL);
	if (err)
		fail_msg("cancelled call failed instead: %s", err);
	obs_release(&o);
	return t0;
}

static void test_cancel_within_200ms(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("claude-sonnet-4-5");
	struct http_options patient = fast;
	char *full = mock_read_file(FIX("anthropic-text.sse"));
	struct mock_reply stall = {.body = full, .fault = MOCK_STALL, .cut_at = 200};
	long long took;
	int rc;

	patient.idle_timeout_ms = 20000;
	provider_anthropic_set_http(f->ant, &patient);
	mock_push(f->m, &stall);
	took = cancelled_call(f->ant, &req, &rc);
	assert_int_equal(rc, PROVIDER_CANCELLED);
	assert_true(took < 300 + 200);

	/* Cancelled while waiting out a retry-after. */
	push_body(
	    f->m, 429, "retry-after: 4\n",
	    "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow\"}}");
	took = cancelled_call(f->ant, &req, &rc);
	assert_int_equal(rc, PROVIDER_CANCELLED);
	assert_true(took < 300 + 200);
	free(full);
}

static void test_keep_alive_one_connection(void **state)
{
	struct fx *f = *state;
	struct llm_request req = basic_req("gpt-5-nano");
	char *ok = mock_openai_text_sse("gpt-5-nano", "k", 1, 1);
	struct mock_reply r = {.body = ok};

	mock_set_default(f->m, &r);
	for (int i = 0; i < 10; i++) {
		struct llm_response out;
		struct obs o;
		char *err = NULL;

		assert_int_equal(call(f->oai, &req, &o, &out, &err), PROVIDER_OK);
		llm_response_release(&out);
		obs_release(&o);
	}
	assert_int_equal(mock_request_count(f->m), 10);
	assert_int_equal(mock_connections(f->m), 1);
	free(ok);
}

struct worker {
	struct provider *p;
	int ok;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct llm_request req = basic_req("gpt-5-nano");

	for (int i = 0; i < 5; i++) {
		struct llm_response out;
		char *err = NULL;

		if (provider_complete(w->p, &req, NULL, &out, &err) == PROVIDER_OK &&
		    !strcmp(out.text, "parallel"))
			w->ok++;
		free(err);
		llm_response_release(&out);
	}
	http_thread_cleanup();
	return NULL;
}

static void test_concurrent_calls_one_connection_per_thread(void **state)
{
	struct fx *f = *state;
	char *ok = mock_openai_text_sse("gpt-5-nano", "parallel", 1, 1);
	struct mock_reply r = {.body = ok, .chunk = 9};
	struct worker w[4];
	pthread_t t[4];

	mock_set_default(f->m, &r);
	for (int i = 0; i < 4; i++) {
		w[i].p = f->oai;
		w[i].ok = 0;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].ok, 5);
	}
	assert_int_equal(mock_request_count(f->m), 20);
	assert_int_equal(mock_connections(f->m), 4);
	free(ok);
}

static void test_constructor_errors(void **state)
{
	char *err = NULL;

	assert_null(provider_anthropic_new(NULL, "", &err));
	assert_non_null(strstr(err, "ANTHROPIC_API_KEY"));
	free(err);
	assert_null(provider_anthropic_new("ftp://x", "k", &err));
	assert_non_null(strstr(err, "http://"));
	free(err);
	assert_null(provider_openai_new("localhost:11434", NULL, &err));
	assert_non_null(strstr(err, "localhost:11434"));
	free(err);
	assert_string_equal(provider_anthropic_default_model(ROLE_PLANNER), "claude-opus-4-5");
	assert_string_equal(provider_anthropic_default_model(ROLE_VERIFIER), "claude-haiku-4-5");
	assert_string_equal(provider_openai_default_model(ROLE_EXECUTOR), "gpt-5-mini");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_anthropic_stream_text_usage_cost_and_request),
		T(test_anthropic_tool_use_from_partial_json),
		T(test_anthropic_whole_message),
		T(test_openai_stream_text_usage_and_request),
		T(test_openai_tool_calls_assembled_by_index),
		T(test_openai_local_server_without_key_ollama_style),
		T(test_openai_whole_answer),
		T(test_whole_json_answer_to_a_stream_request),
		T(test_openrouter_comment_lines),
		T(test_ollama_raw_error_line_after_stream_began),
		T(test_llamacpp_old_error_field_then_done),
		T(test_llamacpp_reasoning_and_timings),
		T(test_vllm_error_chunk_then_done_not_retried),
		T(test_openrouter_midstream_errors_int_and_string_codes),
		T(test_lmstudio_rejects_json_object_response_format),
		T(test_api_openai_usage_chunk_extra_fields_and_length),
		T(test_error_bodies_keep_their_message),
		T(test_bom_before_stream_and_before_json),
		T(test_broken_tool_arguments_sent_back_repaired),
		T(test_429_retry_after_seconds),
		T(test_500_then_success_with_backoff),
		T(test_529_overloaded_retry_after_ms),
		T(test_x_should_retry_overrides_status),
		T(test_error_event_after_200_is_retried),
		T(test_truncated_stream_is_retried),
		T(test_stream_cut_mid_body_is_retried),
		T(test_stalled_stream_cut_by_idle_timeout),
		T(test_connection_reset_is_retried),
		T(test_malformed_json_in_200),
		T(test_401_fails_at_once_with_clear_message),
		T(test_key_echoed_by_server_is_redacted),
		T(test_404_unknown_model),
		T(test_llamacpp_integer_codes_and_vllm_flat_errors),
		T(test_insufficient_quota_not_retried),
		T(test_retries_are_bounded),
		T(test_json_mode_fallback_remembered),
		T(test_cancel_within_200ms),
		T(test_keep_alive_one_connection),
		T(test_concurrent_calls_one_connection_per_thread),
		cmocka_unit_test(test_constructor_errors),
#undef T
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	cost_reset();
	return rc;
}
