/* test_bodies — the providers' request bodies, written straight into a buffer, are byte for
 * byte what the cJSON trees they replace printed: the old builders are kept here, and both
 * run over tricky conversations (escapes, control bytes, UTF-8 good and bad, empty and
 * huge strings, broken and nested tool arguments, every optional member present and
 * absent) and random ones. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "provider.h"
#include "provider_anthropic.h"
#include "provider_http.h"
#include "provider_openai.h"
#include "schemas.h"
#include "strbuf.h"
#include "tool.h"
#include "xalloc.h"

#define DEFAULT_MAX_TOKENS 8192 /* provider_anthropic.c's */

/* ---- the builders as they were: a cJSON tree, printed --------------------------------- */

static void old_oa_add_tools(cJSON *root, const struct llm_request *req)
{
	/* the schemas as printed once per run, inserted as raw text */
	struct schemas *own = NULL, *memo = req->schemas;
	cJSON *tools;

	if (!req->n_tools)
		return;
	if (!memo)
		memo = own = schemas_new();
	tools = cJSON_AddArrayToObject(root, "tools");
	for (size_t i = 0; i < req->n_tools; i++) {
		const struct tool_def *t = req->tools[i];
		cJSON *o = cJSON_CreateObject(), *fn;

		cJSON_AddStringToObject(o, "type", "function");
		fn = cJSON_AddObjectToObject(o, "function");
		cJSON_AddStringToObject(fn, "name", t->name);
		cJSON_AddStringToObject(fn, "description", t->description ? t->description : "");
		cJSON_AddItemToObject(fn, "parameters", cJSON_CreateRaw(schemas_object(memo, t->schema_json)));
		cJSON_AddItemToArray(tools, o);
	}
	schemas_free(own);
}

/* The call a tool result answers, among the assistant turns before message `before`. */
static const struct llm_tool_call *old_oa_call_of(const struct llm_request *req, size_t before,
					   const char *id)
{
	for (size_t i = before; id && i-- > 0;) {
		const struct llm_msg *m = &req->msgs[i];

		if (m->kind != LLM_MSG_ASSISTANT)
			continue;
		for (size_t k = 0; k < m->n_calls; k++)
			if (m->calls[k].id && !strcmp(m->calls[k].id, id))
				return &m->calls[k];
	}
	return NULL;
}

static char *old_oa_body(bool official, bool stream, const struct llm_request *req,
			 bool json_mode)
{
	cJSON *root = cJSON_CreateObject(), *msgs, *m;
	char *out;

	cJSON_AddStringToObject(root, "model", req->model ? req->model : "");
	msgs = cJSON_AddArrayToObject(root, "messages");
	if (req->system && *req->system) {
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "role", "system");
		cJSON_AddStringToObject(m, "content", req->system);
		cJSON_AddItemToArray(msgs, m);
	}
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *lm = &req->msgs[i];

		switch (lm->kind) {
		case LLM_MSG_USER:
			m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "role", "user");
			cJSON_AddStringToObject(m, "content", lm->text ? lm->text : "");
			cJSON_AddItemToArray(msgs, m);
			break;
		case LLM_MSG_ASSISTANT: {
			cJSON *calls;

			m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "role", "assistant");
			if (lm->text && *lm->text)
				cJSON_AddStringToObject(m, "content", lm->text);
			else
				cJSON_AddNullToObject(m, "content");
			if (lm->n_calls) {
				calls = cJSON_AddArrayToObject(m, "tool_calls");
				for (size_t k = 0; k < lm->n_calls; k++) {
					cJSON *tc = cJSON_CreateObject(), *fn;

					cJSON_AddStringToObject(
					    tc, "id", lm->calls[k].id ? lm->calls[k].id : "");
					cJSON_AddStringToObject(tc, "type", "function");
					fn = cJSON_AddObjectToObject(tc, "function");
					cJSON_AddStringToObject(
					    fn, "name", lm->calls[k].name ? lm->calls[k].name : "");
					/* Sent back as they came, they would make Ollama
					 * and vLLM refuse the request (HTTP 400). */
					bool bad;
					char *args = phttp_repair_args(lm->calls[k].input_json,
								       &bad);

					cJSON_AddStringToObject(fn, "arguments", args);
					free(args);
					cJSON_AddItemToArray(calls, tc);
				}
			}
			cJSON_AddItemToArray(msgs, m);
			break;
		}
		case LLM_MSG_TOOL_RESULTS:
			for (size_t k = 0; k < lm->n_results; k++) {
				const struct llm_tool_result *r = &lm->results[k];
				const struct llm_tool_call *tc = old_oa_call_of(req, i, r->call_id);
				char *content = r->is_error
							? xasprintf("ERROR: %s",
								    r->content ? r->content : "")
							: xstrdup(r->content ? r->content : "");
				bool bad = false;
				char *sent = phttp_repair_args(tc ? tc->input_json : NULL, &bad);

				if (tc && bad) {
					char *note = phttp_bad_args_note(tc->name, sent, content);

					free(content);
					content = note;
				}
				free(sent);

				m = cJSON_CreateObject();
				cJSON_AddStringToObject(m, "role", "tool");
				cJSON_AddStringToObject(m, "tool_call_id",
							r->call_id ? r->call_id : "");
				cJSON_AddStringToObject(m, "content", content);
				cJSON_AddItemToArray(msgs, m);
				free(content);
			}
			break;
		}
	}
	old_oa_add_tools(root, req);
	if (req->max_tokens > 0)
		cJSON_AddNumberToObject(root, official ? "max_completion_tokens" : "max_tokens",
					req->max_tokens);
	if (json_mode) {
		cJSON *rf = cJSON_AddObjectToObject(root, "response_format");

		cJSON_AddStringToObject(rf, "type", "json_object");
	}
	if (stream) {
		cJSON *so;

		cJSON_AddTrueToObject(root, "stream");
		so = cJSON_AddObjectToObject(root, "stream_options");
		cJSON_AddTrueToObject(so, "include_usage");
	}
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		fatal("cJSON_PrintUnformatted failed");
	return out;
}

static void old_an_add_tools(cJSON *root, const struct llm_request *req)
{
	/* the schemas as printed once per run, inserted as raw text */
	struct schemas *own = NULL, *memo = req->schemas;
	cJSON *tools;

	if (!req->n_tools)
		return;
	if (!memo)
		memo = own = schemas_new();
	tools = cJSON_AddArrayToObject(root, "tools");
	for (size_t i = 0; i < req->n_tools; i++) {
		const struct tool_def *t = req->tools[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", t->name);
		cJSON_AddStringToObject(o, "description", t->description ? t->description : "");
		cJSON_AddItemToObject(o, "input_schema", cJSON_CreateRaw(schemas_object(memo, t->schema_json)));
		cJSON_AddItemToArray(tools, o);
	}
	schemas_free(own);
}

static cJSON *old_an_tool_input(const char *json)
{
	bool bad;
	char *fixed = phttp_repair_args(json, &bad);
	cJSON *v = cJSON_Parse(fixed);

	/* The API insists on an object; a model's broken arguments are sent back repaired. */
	free(fixed);
	if (!cJSON_IsObject(v)) {
		cJSON_Delete(v);
		v = cJSON_CreateObject();
	}
	return v;
}

/* The call a tool result answers, among the turns before message `before`. */
static const struct llm_tool_call *old_an_call_of(const struct llm_request *req, size_t before,
					   const char *id)
{
	for (size_t i = before; id && i-- > 0;) {
		const struct llm_msg *m = &req->msgs[i];

		if (m->kind != LLM_MSG_ASSISTANT)
			continue;
		for (size_t k = 0; k < m->n_calls; k++)
			if (m->calls[k].id && !strcmp(m->calls[k].id, id))
				return &m->calls[k];
	}
	return NULL;
}

static char *old_an_body(bool stream, const struct llm_request *req)
{
	cJSON *root = cJSON_CreateObject(), *msgs, *sys, *blk, *cc;
	char *out;

	cJSON_AddStringToObject(root, "model", req->model ? req->model : "");
	cJSON_AddNumberToObject(root, "max_tokens",
				req->max_tokens > 0 ? req->max_tokens : DEFAULT_MAX_TOKENS);
	if (req->system && *req->system) {
		/* One block marked for the prompt cache: the role's long static instructions. */
		sys = cJSON_AddArrayToObject(root, "system");
		blk = cJSON_CreateObject();
		cJSON_AddStringToObject(blk, "type", "text");
		cJSON_AddStringToObject(blk, "text", req->system);
		cc = cJSON_AddObjectToObject(blk, "cache_control");
		cJSON_AddStringToObject(cc, "type", "ephemeral");
		cJSON_AddItemToArray(sys, blk);
	}
	msgs = cJSON_AddArrayToObject(root, "messages");
	for (size_t i = 0; i < req->n_msgs; i++) {
		const struct llm_msg *m = &req->msgs[i];
		cJSON *o = cJSON_CreateObject(), *content;

		switch (m->kind) {
		case LLM_MSG_USER:
			cJSON_AddStringToObject(o, "role", "user");
			cJSON_AddStringToObject(o, "content", m->text ? m->text : "");
			break;
		case LLM_MSG_ASSISTANT:
			cJSON_AddStringToObject(o, "role", "assistant");
			content = cJSON_AddArrayToObject(o, "content");
			if (m->text && *m->text) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "text");
				cJSON_AddStringToObject(blk, "text", m->text);
				cJSON_AddItemToArray(content, blk);
			}
			for (size_t k = 0; k < m->n_calls; k++) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "tool_use");
				cJSON_AddStringToObject(blk, "id",
							m->calls[k].id ? m->calls[k].id : "");
				cJSON_AddStringToObject(blk, "name",
							m->calls[k].name ? m->calls[k].name : "");
				cJSON_AddItemToObject(blk, "input",
						      old_an_tool_input(m->calls[k].input_json));
				cJSON_AddItemToArray(content, blk);
			}
			if (!cJSON_GetArraySize(content)) {
				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "text");
				cJSON_AddStringToObject(blk, "text", "(no text)");
				cJSON_AddItemToArray(content, blk);
			}
			break;
		case LLM_MSG_TOOL_RESULTS:
			cJSON_AddStringToObject(o, "role", "user");
			content = cJSON_AddArrayToObject(o, "content");
			for (size_t k = 0; k < m->n_results; k++) {
				const struct llm_tool_result *r = &m->results[k];
				const struct llm_tool_call *tc = old_an_call_of(req, i, r->call_id);
				bool bad = false;
				char *sent = phttp_repair_args(tc ? tc->input_json : NULL, &bad);
				char *text = tc && bad ? phttp_bad_args_note(tc->name, sent, r->content)
						       : xstrdup(r->content ? r->content : "");

				blk = cJSON_CreateObject();
				cJSON_AddStringToObject(blk, "type", "tool_result");
				cJSON_AddStringToObject(blk, "tool_use_id",
							r->call_id ? r->call_id : "");
				cJSON_AddStringToObject(blk, "content", text);
				free(text);
				free(sent);
				if (r->is_error)
					cJSON_AddTrueToObject(blk, "is_error");
				cJSON_AddItemToArray(content, blk);
			}
			break;
		}
		cJSON_AddItemToArray(msgs, o);
	}
	old_an_add_tools(root, req);
	/* No JSON mode on this API: want_json relies on the prompt asking for JSON. */
	if (stream)
		cJSON_AddTrueToObject(root, "stream");
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		fatal("cJSON_PrintUnformatted failed");
	return out;
}

/* ---- what the requests are made of ---------------------------------------------------- */

static char *huge_text(size_t n)
{
	static const char piece[] = "plain words, then \"quotes\", \\ \n\t\x01 é 😀 \xff ";
	char *s = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++)
		s[i] = piece[i % (sizeof(piece) - 1)];
	s[n] = '\0';
	return s;
}

static char *huge;          /* 16 kB of everything */
static char *control_bytes; /* 0x01…0x1f and DEL */

static const char *texts(size_t i)
{
	static const char *const fixed[] = {
	    "",
	    "plain",
	    "quote \" backslash \\ slash / tab\t nl\n cr\r bs\b ff\f end",
	    "UTF-8: é ü 中文 😀, separators \xe2\x80\xa8\xe2\x80\xa9, override \xe2\x80\xae, "
	    "C1 \xc2\x85, BOM \xef\xbb\xbf",
	    "not UTF-8: \xff\xfe \xc0\x80 \xed\xa0\x80 cut \xe2\x82",
	    "{\"looks\":\"like JSON\",\"n\":1}",
	    "\\u0000 \\n written out",
	    "ERROR: already",
	};

	if (i < sizeof(fixed) / sizeof(fixed[0]))
		return fixed[i];
	return i == sizeof(fixed) / sizeof(fixed[0]) ? control_bytes : huge;
}
#define N_TEXTS 10

/* Tool arguments as a model may send them. */
static const char *const args[] = {
    NULL,
    "",
    "{}",
    "{\"path\":\"a.txt\"}",
    "{\"a\":{\"b\":[1,2.5,-0,1e400,-1e400,true,false,null,\"x\\u00e9\\ud83d\\ude00\"]},"
    "\"c\":\"\\n\\t\\\"\",\"d\":{}}",
    "  { \"spaced\" : [ 1 , 2 ] , \"e\" : [ ] }  ",
    "{\"n\":0.1,\"big\":12345678901234567890,\"neg\":-1.5e-7,\"i\":3,\"x\":1e21,"
    "\"y\":123456789012,\"z\":0.30000000000000004,\"w\":2147483648,\"v\":-2147483649}",
    "{\"ctl\":\"\\u0001\\u001f\\u007f\\u2028\",\"raw\":\"é😀\"}",
    "{\"dup\":1,\"dup\":2}",
    "{\"a\":1} trailing words",
    "[1,2]",
    "\"a string\"",
    "42",
    "null",
    "{'a': 'b',}",
    "{\"a\": [1, 2",
    "{\"k\":\"unterminated",
    "{\"x\":1,}",
    "{\"q\": 'it''s',\n\"z\":}",
    "garbage",
    "{\"deep\":[[[[[[[[[[{\"e\":[]}]]]]]]]]]]}",
};
#define N_ARGS (sizeof(args) / sizeof(args[0]))

static const struct tool_def tools[] = {
    {.name = "read_file", .description = "Reads a file.",
     .schema_json = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},"
		    "\"required\":[\"path\"]}"},
    {.name = "odd \"tool\"\n", .description = NULL, .schema_json = NULL},
    {.name = NULL, .description = "a tool without a name: é\t\"", .schema_json = "[1,2]"},
    {.name = "spaced", .description = "",
     .schema_json = "  { \"type\" : \"object\", \"description\" : \"é \\u00e9 \\n\" }  "},
    {.name = "broken", .description = "schema is not JSON", .schema_json = "{nope"},
    {.name = "number", .description = "schema is a number", .schema_json = "3.25"},
};
#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

/* ---- both builders, compared ---------------------------------------------------------- */

struct providers {
	struct provider *official, *compat, *anthropic;
};

static struct providers make_providers(void)
{
	struct providers ps;
	char *err = NULL;

	ps.official = provider_openai_new(NULL, NULL, &err);
	assert_non_null(ps.official);
	ps.compat = provider_openai_new("http://127.0.0.1:9/v1", "sk-test", &err);
	assert_non_null(ps.compat);
	ps.anthropic = provider_anthropic_new("http://127.0.0.1:9", "sk-test", &err);
	assert_non_null(ps.anthropic);
	return ps;
}

static void free_providers(struct providers *ps)
{
	provider_free(ps->official);
	provider_free(ps->compat);
	provider_free(ps->anthropic);
}

static void same_bytes(const char *what, char *old, char *new)
{
	size_t i = 0;

	assert_non_null(old);
	assert_non_null(new);
	while (old[i] && old[i] == new[i])
		i++;
	if (old[i] != new[i]) {
		size_t from = i > 40 ? i - 40 : 0;

		print_error("%s: bodies differ at byte %zu (lengths %zu, %zu)\n"
			    "  old: …%.80s\n  new: …%.80s\n",
			    what, i, strlen(old), strlen(new), old + from, new + from);
		fail();
	}
	cJSON_free(old);
	free(new);
}

/* req under every setting: official or compatible server, streamed or not, JSON mode or
 * not, with the run's memo and without (each twice: the memo's texts written, then found). */
static void check_request(const struct providers *ps, struct llm_request *req, struct schemas *memo)
{
	struct schemas *const keep = req->schemas;

	for (int with_memo = 0; with_memo < 2; with_memo++)
		for (int stream = 0; stream < 2; stream++) {
			req->schemas = with_memo ? memo : NULL;
			provider_openai_set_stream(ps->official, stream);
			provider_openai_set_stream(ps->compat, stream);
			for (int json = 0; json < 2; json++)
				for (int again = 0; again < 1 + with_memo; again++) {
					same_bytes("openai", old_oa_body(true, stream, req, json),
						   provider_openai_body(ps->official, req, json));
					same_bytes("compatible", old_oa_body(false, stream, req, json),
						   provider_openai_body(ps->compat, req, json));
				}
			provider_anthropic_set_stream(ps->anthropic, stream);
			for (int again = 0; again < 1 + with_memo; again++)
				same_bytes("anthropic", old_an_body(stream, req),
					   provider_anthropic_body(ps->anthropic, req));
		}
	req->schemas = keep;
}

/* A conversation of every kind of turn, its texts and arguments picked from the lists
 * above by `seed`. */
struct convo {
	struct llm_msg msgs[8];
	struct llm_tool_call calls[4];
	struct llm_tool_result results[6];
	const struct tool_def *tools[N_TOOLS];
};

static void make_convo(struct convo *c, struct llm_request *req, size_t seed)
{
	memset(c, 0, sizeof(*c));
	for (size_t k = 0; k < 4; k++) {
		c->calls[k].id = k == 3 ? NULL : (char *)(k == 2 ? texts(seed + k) : (k ? "c2" : "c1"));
		c->calls[k].name = (char *)(k == 1 ? NULL : texts(seed + 2 * k));
		c->calls[k].input_json = (char *)args[(seed * 3 + k) % N_ARGS];
	}
	c->results[0] = (struct llm_tool_result){"c1", (char *)texts(seed + 1), false};
	c->results[1] = (struct llm_tool_result){"c2", (char *)texts(seed + 2), true};
	c->results[2] = (struct llm_tool_result){"nobody", NULL, seed & 1};
	c->results[3] = (struct llm_tool_result){NULL, (char *)texts(seed + 3), !(seed & 1)};
	c->results[4] = (struct llm_tool_result){(char *)texts(seed), "same id as call 3", false};
	c->results[5] = (struct llm_tool_result){"c1", NULL, true};
	c->msgs[0] = (struct llm_msg){.kind = LLM_MSG_USER, .text = (char *)texts(seed)};
	c->msgs[1] = (struct llm_msg){.kind = LLM_MSG_ASSISTANT,
				      .text = seed & 2 ? NULL : (char *)texts(seed + 4),
				      .calls = c->calls, .n_calls = 4};
	c->msgs[2] = (struct llm_msg){.kind = LLM_MSG_TOOL_RESULTS, .results = c->results,
				      .n_results = 6};
	c->msgs[3] = (struct llm_msg){.kind = LLM_MSG_ASSISTANT}; /* no text, no call */
	c->msgs[4] = (struct llm_msg){.kind = LLM_MSG_TOOL_RESULTS};  /* no result */
	c->msgs[5] = (struct llm_msg){.kind = LLM_MSG_USER, .text = NULL};
	c->msgs[6] = (struct llm_msg){.kind = LLM_MSG_ASSISTANT, .text = (char *)texts(seed + 5)};
	c->msgs[7] = (struct llm_msg){.kind = LLM_MSG_TOOL_RESULTS, .results = c->results + 4,
				      .n_results = 1};
	for (size_t k = 0; k < N_TOOLS; k++)
		c->tools[k] = &tools[(seed + k) % N_TOOLS];
	*req = (struct llm_request){.role = ROLE_EXECUTOR, .msgs = c->msgs, .n_msgs = 8,
				    .tools = c->tools, .n_tools = N_TOOLS};
}

static int setup(void **state)
{
	(void)state;
	huge = huge_text(16 * 1024);
	control_bytes = xmalloc(33);
	for (int i = 1; i < 32; i++)
		control_bytes[i - 1] = (char)i;
	control_bytes[31] = 0x7f;
	control_bytes[32] = '\0';
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(huge);
	free(control_bytes);
	return 0;
}

/* Every optional member present and absent: system, tools, max_tokens, model. */
static void test_optional_members(void **state)
{
	static const int max_tokens[] = {0, -5, 1, 4096, INT_MAX};
	struct providers ps = make_providers();
	struct schemas *memo = schemas_new();
	struct convo c;

	(void)state;
	for (size_t m = 0; m < sizeof(max_tokens) / sizeof(max_tokens[0]); m++)
		for (int shape = 0; shape < 8; shape++) {
			struct llm_request req;

			make_convo(&c, &req, m + (size_t)shape);
			req.max_tokens = max_tokens[m];
			req.model = shape & 1 ? "gpt-5 \"quoted\"" : NULL;
			req.system = shape & 2 ? texts(m + 2) : (shape & 4 ? "" : NULL);
			if (shape & 4)
				req.n_tools = 0;
			if (shape == 6)
				req.n_msgs = 0;
			check_request(&ps, &req, memo);
		}
	schemas_free(memo);
	free_providers(&ps);
}

/* Every text in every place, every argument in every call. */
static void test_tricky_texts(void **state)
{
	struct providers ps = make_providers();
	struct schemas *memo = schemas_new();
	struct convo c;

	(void)state;
	for (size_t seed = 0; seed < N_ARGS * 2; seed++) {
		struct llm_request req;

		make_convo(&c, &req, seed);
		req.model = texts(seed + 7);
		req.system = texts(seed + 1);
		req.max_tokens = (int)seed * 100;
		check_request(&ps, &req, memo);
	}
	schemas_free(memo);
	free_providers(&ps);
}

/* A deterministic generator: the same random cases every run. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random string of bytes 1..255, leaning to those that need a look. */
static char *random_text(uint64_t *s)
{
	static const char special[] = "\"\\\n\r\t\b\f\x01\x1f\x7f\xc2\x85\xe2\x80\xa8{}[],:' ";
	size_t n = rng_next(s) % 64 == 0 ? rng_next(s) % 3000 : rng_next(s) % 40;
	char *t = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++) {
		uint64_t r = rng_next(s);

		t[i] = r % 3 ? (char)(1 + (r >> 8) % 255) : special[(r >> 8) % (sizeof(special) - 1)];
	}
	t[n] = '\0';
	return t;
}

/* Random texts everywhere, random arguments (from the list, or random bytes, or random
 * JSON-ish text the repair mends or not), one memo for the whole test: filled up half-way,
 * so the texts it keeps no more are written directly. */
static void test_random_conversations(void **state)
{
	struct providers ps = make_providers();
	struct schemas *memo = schemas_new();
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int round = 0; round < 160; round++) {
		struct convo c;
		struct llm_request req;
		struct strvec own = STRVEC_INIT;

		for (int k = 0; round == 80 && k < 300; k++) {
			char filler[32];

			snprintf(filler, sizeof(filler), "filler %d", k);
			schemas_string(memo, filler);
		}

		make_convo(&c, &req, (size_t)round);
		for (size_t k = 0; k < 4; k++) {
			if (rng_next(&seed) % 2) {
				strvec_take(&own, random_text(&seed));
				c.calls[k].input_json = own.v[own.n - 1];
			}
			strvec_take(&own, random_text(&seed));
			c.calls[k].name = own.v[own.n - 1];
		}
		for (size_t k = 0; k < 6; k++)
			if (rng_next(&seed) % 2) {
				strvec_take(&own, random_text(&seed));
				c.results[k].content = own.v[own.n - 1];
			}
		strvec_take(&own, random_text(&seed));
		c.msgs[0].text = own.v[own.n - 1];
		strvec_take(&own, random_text(&seed));
		req.system = own.v[own.n - 1];
		strvec_take(&own, random_text(&seed));
		req.model = own.v[own.n - 1];
		req.n_msgs = rng_next(&seed) % 9;
		req.n_tools = rng_next(&seed) % (N_TOOLS + 1);
		req.max_tokens = (int)(rng_next(&seed) % 3 ? rng_next(&seed) % 100000 : 0);
		check_request(&ps, &req, memo);
		strvec_clear(&own);
	}
	schemas_free(memo);
	free_providers(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_optional_members),
		cmocka_unit_test(test_tricky_texts),
		cmocka_unit_test(test_random_conversations),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
