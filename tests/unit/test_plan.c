/* test_plan — plan parsing from model text, validation, JSON round trips, order. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "plan.h"
#include "strbuf.h"
#include "xalloc.h"

/* A complete, valid plan using every field of DESIGN.md. */
static const char *FULL =
    "{\"goal\":\"Sum the invoices\",\"context\":\"Q3 books\",\"steps\":["
    "{\"step_id\":\"read\",\"name\":\"Read\",\"description\":\"Read files\","
    "\"actions\":[{\"tool\":\"read_file\",\"params\":{\"path\":\"a.csv\",\"n\":[1,2]}}],"
    "\"acceptance_criteria\":[\"all rows read\"],\"expected_outputs\":[\"rows\"],"
    "\"dependencies\":[],\"estimated_complexity\":\"low\"},"
    "{\"step_id\":\"sum\",\"name\":\"Sum\",\"description\":\"Add up\","
    "\"actions\":[],\"acceptance_criteria\":[\"total matches\",\"no rounding\"],"
    "\"expected_outputs\":[\"total.txt\"],\"dependencies\":[\"read\"],"
    "\"estimated_complexity\":\"high\"}],"
    "\"success_criteria\":[\"total is right\"],\"rollback_strategy\":\"delete total.txt\"}";

static bool has_error(const struct strvec *sv, const char *needle)
{
	for (size_t i = 0; i < sv->n; i++) {
		if (strstr(sv->v[i], needle))
			return true;
	}
	return false;
}

static void print_errors(const struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		fprintf(stderr, "  error: %s\n", sv->v[i]);
}

#define assert_error(sv, needle)                                                                   \
	do {                                                                                       \
		if (!has_error((sv), (needle))) {                                                  \
			print_errors(sv);                                                          \
			fail_msg("no error containing \"%s\"", (needle));                          \
		}                                                                                  \
	} while (0)

/* Parses and expects failure with an error containing `needle`. */
static void expect_parse_error(const char *text, const char *needle)
{
	struct strvec errs = STRVEC_INIT;
	struct plan *p = plan_parse(text, &errs);

	assert_null(p);
	assert_true(errs.n > 0);
	assert_error(&errs, needle);
	strvec_clear(&errs);
}

/* Parses and expects failure with exactly these sentences, in this order. */
static void expect_exact_errors(const char *text, const char *const *want, size_t n)
{
	struct strvec errs = STRVEC_INIT;
	struct plan *p = plan_parse(text, &errs);

	assert_null(p);
	if (errs.n != n)
		print_errors(&errs);
	assert_int_equal(errs.n, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(errs.v[i], want[i]);
	strvec_clear(&errs);
}

#define expect_exact(text, ...)                                                                    \
	do {                                                                                       \
		static const char *const want_[] = {__VA_ARGS__};                                  \
		expect_exact_errors((text), want_, sizeof(want_) / sizeof(want_[0]));              \
	} while (0)

static struct plan *parse_ok(const char *text)
{
	struct strvec errs = STRVEC_INIT;
	struct plan *p = plan_parse(text, &errs);

	if (!p)
		print_errors(&errs);
	assert_non_null(p);
	assert_int_equal(errs.n, 0);
	strvec_clear(&errs);
	return p;
}

/* Builds a plan of steps "id:dep,dep;id:dep" for validation tests. */
static struct plan *plan_of(const char *spec)
{
	struct strbuf sb;
	char *copy = xstrdup(spec), *save = NULL;
	struct plan *p;
	bool first = true;

	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"goal\":\"g\",\"steps\":[");
	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
		char *colon = strchr(tok, ':');
		char *deps = NULL, *s2 = NULL;
		bool fd = true;

		if (colon) {
			*colon = '\0';
			deps = colon + 1;
		}
		strbuf_addf(&sb, "%s{\"step_id\":\"%s\",\"dependencies\":[", first ? "" : ",", tok);
		for (char *d = deps ? strtok_r(deps, ",", &s2) : NULL; d;
		     d = strtok_r(NULL, ",", &s2)) {
			strbuf_addf(&sb, "%s\"%s\"", fd ? "" : ",", d);
			fd = false;
		}
		strbuf_adds(&sb, "]}");
		first = false;
	}
	strbuf_adds(&sb, "]}");
	p = parse_ok(sb.buf);
	strbuf_release(&sb);
	free(copy);
	return p;
}

static void expect_invalid(const char *spec, const char *needle)
{
	struct plan *p = plan_of(spec);
	struct strvec errs = STRVEC_INIT;

	assert_false(plan_validate(p, &errs));
	assert_error(&errs, needle);
	strvec_clear(&errs);
	plan_free(p);
}

/* ---- parsing ---------------------------------------------------------------------- */

static void test_parse_full(void **state)
{
	struct plan *p = parse_ok(FULL);
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_string_equal(p->goal, "Sum the invoices");
	assert_string_equal(p->context, "Q3 books");
	assert_int_equal(p->n_steps, 2);
	assert_string_equal(p->steps[0].id, "read");
	assert_string_equal(p->steps[0].name, "Read");
	assert_string_equal(p->steps[0].description, "Read files");
	assert_int_equal(p->steps[0].n_actions, 1);
	assert_string_equal(p->steps[0].actions[0].tool, "read_file");
	assert_string_equal(p->steps[0].actions[0].params_json, "{\"path\":\"a.csv\",\"n\":[1,2]}");
	assert_int_equal(p->steps[0].criteria.n, 1);
	assert_string_equal(p->steps[0].expected_outputs.v[0], "rows");
	assert_int_equal(p->steps[0].complexity, CX_LOW);
	assert_int_equal(p->steps[1].complexity, CX_HIGH);
	assert_int_equal(p->steps[1].criteria.n, 2);
	assert_string_equal(p->steps[1].criteria.v[1], "no rounding");
	assert_string_equal(p->steps[1].deps.v[0], "read");
	assert_string_equal(p->success_criteria.v[0], "total is right");
	assert_string_equal(p->rollback_strategy, "delete total.txt");
	assert_true(plan_validate(p, &errs));
	assert_int_equal(errs.n, 0);
	plan_free(p);
}

static void test_parse_tolerant_defaults(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"g\",\"context\":null,\"steps\":[{\"step_id\":\"s1\","
	                          "\"dependencies\":null,\"actions\":[{\"tool\":\"t\"}]}],"
	                          "\"extra\":42}");

	(void)state;
	assert_string_equal(p->context, "");
	assert_string_equal(p->steps[0].name, "s1");
	assert_string_equal(p->steps[0].description, "");
	assert_int_equal(p->steps[0].criteria.n, 0);
	assert_int_equal(p->steps[0].deps.n, 0);
	assert_int_equal(p->steps[0].complexity, CX_MEDIUM);
	assert_string_equal(p->steps[0].actions[0].params_json, "{}");
	assert_int_equal(p->success_criteria.n, 0);
	assert_string_equal(p->rollback_strategy, "");
	plan_free(p);
}

static void test_parse_complexity_case(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\","
	                          "\"estimated_complexity\":\" High \"},{\"step_id\":\"b\","
	                          "\"estimated_complexity\":\"LOW\"},{\"step_id\":\"c\","
	                          "\"estimated_complexity\":\"Medium\"},{\"step_id\":\"d\","
	                          "\"estimated_complexity\":\"HIGH\"},{\"step_id\":\"e\","
	                          "\"estimated_complexity\":\"\\thigh\\n\"}]}");

	(void)state;
	assert_int_equal(p->steps[0].complexity, CX_HIGH);
	assert_int_equal(p->steps[1].complexity, CX_LOW);
	assert_int_equal(p->steps[2].complexity, CX_MEDIUM);
	assert_int_equal(p->steps[3].complexity, CX_HIGH);
	assert_int_equal(p->steps[4].complexity, CX_HIGH);
	assert_int_equal(complexity_from_name("bogus"), -1);
	assert_int_equal(complexity_from_name(NULL), -1);
	assert_string_equal(complexity_name(CX_HIGH), "high");
	plan_free(p);
}

static void test_parse_bad_complexity(void **state)
{
	(void)state;
	expect_parse_error(
	    "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\","
	    "\"estimated_complexity\":\"huge\"}]}",
	    "steps[0].estimated_complexity must be low, medium or high, not \"huge\"");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\","
	             "\"estimated_complexity\":3}]}",
	             "steps[0].estimated_complexity must be one of the strings low, medium or "
	             "high, not a number.");
}

static void test_parse_steps_not_array(void **state)
{
	(void)state;
	expect_exact("{\"goal\":\"g\",\"steps\":{\"step_id\":\"a\"}}",
	             "steps must be an array of step objects, not an object.");
	expect_exact("{\"goal\":\"g\"}", "steps is missing (an array of step objects).");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"},\"b\"]}",
	             "steps[1] must be an object, not a string.");
}

static void test_parse_step_id(void **state)
{
	(void)state;
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"name\":\"x\"}]}",
	             "steps[0].step_id is missing.");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"\"}]}",
	             "steps[0].step_id must not be empty.");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":null}]}",
	             "steps[0].step_id is missing.");
	/* an id that is structure names nothing: refused, however liberal the rest is */
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"},{\"step_id\":{\"n\":7}}]}",
	             "steps[1].step_id must be a string or a number, not an object.");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":[1]}]}",
	             "steps[0].step_id must be a string or a number, not an array.");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":true}]}",
	             "steps[0].step_id must be a string or a number, not a boolean.");
}

static void test_parse_numeric_ids(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"g\",\"steps\":[{\"step_id\":1},"
	                          "{\"step_id\":2,\"name\":\"Two\",\"dependencies\":[1]},"
	                          "{\"step_id\":\"3\",\"dependencies\":[1.0,\"2\",null]},"
	                          "{\"step_id\":2.5,\"actions\":[{\"tool\":7}]}]}");
	struct strvec errs = STRVEC_INIT;
	char *json;
	struct plan *back;

	(void)state;
	assert_string_equal(p->steps[0].id, "1");
	assert_string_equal(p->steps[0].name, "1"); /* the id, as for a string id */
	assert_string_equal(p->steps[1].id, "2");
	assert_string_equal(p->steps[1].name, "Two");
	assert_int_equal(p->steps[1].deps.n, 1);
	assert_string_equal(p->steps[1].deps.v[0], "1");
	assert_int_equal(p->steps[2].deps.n, 2); /* a null entry is no dependency */
	assert_string_equal(p->steps[2].deps.v[0], "1");
	assert_string_equal(p->steps[2].deps.v[1], "2");
	assert_string_equal(p->steps[3].id, "2.5");
	assert_string_equal(p->steps[3].actions[0].tool, "7");
	/* the usual validation still holds: the ids are known, unique, acyclic */
	assert_true(plan_validate(p, &errs));
	assert_int_equal(errs.n, 0);
	/* written back as strings, read back the same */
	json = plan_to_string(p, false);
	assert_non_null(strstr(json, "\"step_id\":\"1\""));
	assert_non_null(strstr(json, "\"dependencies\":[\"1\"]"));
	back = parse_ok(json);
	assert_true(plan_equal(p, back));
	plan_free(back);
	free(json);
	plan_free(p);

	/* numeric ids are still checked like any other */
	p = parse_ok("{\"goal\":\"g\",\"steps\":[{\"step_id\":1,\"dependencies\":[2]},"
	             "{\"step_id\":2,\"dependencies\":[1]},{\"step_id\":1},"
	             "{\"step_id\":4,\"dependencies\":[9]}]}");
	assert_false(plan_validate(p, &errs));
	assert_error(&errs, "steps[2].step_id \"1\" repeats the id of steps[0].");
	assert_error(&errs, "Step \"4\" depends on unknown step \"9\" (steps[3].dependencies[0]).");
	assert_error(&errs, "dependency cycle: 1 -> 2 -> 1.");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_parse_bad_dependency(void **state)
{
	(void)state;
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"},{\"step_id\":\"b\","
	             "\"dependencies\":[\"a\",{\"step_id\":\"a\"},false]}]}",
	             "steps[1].dependencies[1] must be a step id (a string or a number), not an "
	             "object.",
	             "steps[1].dependencies[2] must be a step id (a string or a number), not a "
	             "boolean.");
	expect_exact("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"dependencies\":\"b\"}]}",
	             "steps[0].dependencies must be an array of step ids (strings or numbers).");
}

/* Structure written where text was asked is kept as compact JSON text. */
static void test_parse_structure_as_text(void **state)
{
	struct plan *p = parse_ok(
	    "{\"goal\":{\"task\":\"sum\",\"year\":2024},"
	    "\"context\":{\"key\": \"value\", \"list\": [1, 2]},"
	    "\"steps\":[{\"step_id\":\"a\",\"name\":{\"short\":\"A\"},"
	    "\"description\":[\"read\",\"sum\"],"
	    "\"acceptance_criteria\":[\"plain\",{\"metric\":\"rows\",\"min\":3},42,true,null],"
	    "\"expected_outputs\":[{\"file\":\"t.txt\"}],\"estimated_complexity\":null},"
	    "{\"step_id\":\"b\",\"name\":null,\"description\":7.5}],"
	    "\"success_criteria\":[{\"total\":\"right\"},\"fast\"],"
	    "\"rollback_strategy\":{\"delete\":[\"t.txt\"]}}");
	char *json;
	struct plan *back;

	(void)state;
	assert_string_equal(p->goal, "{\"task\":\"sum\",\"year\":2024}");
	assert_string_equal(p->context, "{\"key\":\"value\",\"list\":[1,2]}");
	assert_string_equal(p->steps[0].name, "{\"short\":\"A\"}");
	assert_string_equal(p->steps[0].description, "[\"read\",\"sum\"]");
	assert_int_equal(p->steps[0].criteria.n, 4); /* the null entry is dropped */
	assert_string_equal(p->steps[0].criteria.v[0], "plain");
	assert_string_equal(p->steps[0].criteria.v[1], "{\"metric\":\"rows\",\"min\":3}");
	assert_string_equal(p->steps[0].criteria.v[2], "42");
	assert_string_equal(p->steps[0].criteria.v[3], "true");
	assert_string_equal(p->steps[0].expected_outputs.v[0], "{\"file\":\"t.txt\"}");
	assert_int_equal(p->steps[0].complexity, CX_MEDIUM);
	assert_string_equal(p->steps[1].name, "b");
	assert_string_equal(p->steps[1].description, "7.5");
	assert_int_equal(p->success_criteria.n, 2);
	assert_string_equal(p->success_criteria.v[0], "{\"total\":\"right\"}");
	assert_string_equal(p->rollback_strategy, "{\"delete\":[\"t.txt\"]}");
	assert_true(plan_validate(p, NULL));
	/* the text survives a round trip as text */
	json = plan_to_string(p, true);
	back = parse_ok(json);
	assert_true(plan_equal(p, back));
	assert_string_equal(back->context, p->context);
	plan_free(back);
	free(json);
	plan_free(p);
}

static void test_parse_wrong_types_everywhere(void **state)
{
	struct strvec errs = STRVEC_INIT;
	/* Free text takes any value, so what is left to refuse is structure that cannot be
	 * understood: lists that are not arrays, ids and actions of the wrong shape. */
	struct plan *p = plan_parse(
	    "{\"goal\":5,\"context\":[],\"steps\":[{\"step_id\":\"a\"},{\"step_id\":\"b\"},"
	    "{\"step_id\":\"c\",\"dependencies\":\"a\",\"acceptance_criteria\":{\"x\":1},"
	    "\"expected_outputs\":{},\"name\":false,\"description\":2,"
	    "\"actions\":[{\"tool\":\"t\",\"params\":[1]},{\"params\":{}},3,"
	    "{\"tool\":{\"name\":\"t\"}}]},"
	    "{\"step_id\":\"d\",\"actions\":\"run\"}],"
	    "\"success_criteria\":{\"a\":1},\"rollback_strategy\":[\"x\"]}",
	    &errs);
	static const char *const want[] = {
	    "steps[2].actions[0].params must be an object, not an array.",
	    "steps[2].actions[1].tool is missing.",
	    "steps[2].actions[2] must be an object with \"tool\" and \"params\".",
	    "steps[2].actions[3].tool must be a string or a number, not an object.",
	    "steps[2].acceptance_criteria must be an array of strings.",
	    "steps[2].expected_outputs must be an array of strings.",
	    "steps[2].dependencies must be an array of step ids (strings or numbers).",
	    "steps[3].actions must be an array of {tool, params} objects.",
	    "success_criteria must be an array of strings.",
	};

	(void)state;
	assert_null(p);
	if (errs.n != sizeof(want) / sizeof(want[0]))
		print_errors(&errs);
	assert_int_equal(errs.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < errs.n; i++)
		assert_string_equal(errs.v[i], want[i]);
	strvec_clear(&errs);
}

static void test_parse_goal_missing(void **state)
{
	(void)state;
	expect_parse_error("{\"steps\":[{\"step_id\":\"a\"}]}", "goal is missing");
	expect_parse_error("{\"goal\":\"\",\"steps\":[{\"step_id\":\"a\"}]}",
	                   "goal must not be empty");
}

static void test_parse_no_json(void **state)
{
	struct strvec errs = STRVEC_INIT;

	(void)state;
	expect_parse_error("I could not make a plan, sorry.", "no JSON object found");
	expect_parse_error("", "no JSON object found");
	expect_parse_error("[1,2,3]", "no JSON object found");
	assert_null(plan_parse(NULL, &errs));
	assert_true(errs.n == 1);
	strvec_clear(&errs);
	/* a NULL error list is allowed */
	assert_null(plan_parse("nothing", NULL));
}

static void test_parse_fenced_with_prose(void **state)
{
	char *text = xasprintf("Sure! Here is the plan you asked for:\n\n```json\n%s\n```\n\n"
	                       "Let me know if you want {changes}.",
	                       FULL);
	struct plan *p = parse_ok(text);

	(void)state;
	assert_string_equal(p->goal, "Sum the invoices");
	assert_int_equal(p->n_steps, 2);
	plan_free(p);
	free(text);
	/* a bare fence without a language works too, and blanks before the fence */
	text = xasprintf("Plan:\n  ```\n%s\n  ```\n", FULL);
	p = parse_ok(text);
	assert_int_equal(p->n_steps, 2);
	plan_free(p);
	free(text);
}

static void test_parse_prose_braces_skipped(void **state)
{
	char *text = xasprintf("I will use {curly} notes and {x: 1} here. %s Done {ok}.", FULL);
	struct plan *p = parse_ok(text);

	(void)state;
	assert_string_equal(p->goal, "Sum the invoices");
	plan_free(p);
	free(text);
}

static void test_parse_fence_wins_over_bare(void **state)
{
	char *text = xasprintf("An example shape: {\"goal\":\"example\",\"steps\":[]}\n"
	                       "```bash\nls {a,b}\n```\n```json\n%s\n```\n",
	                       FULL);
	struct plan *p = parse_ok(text);

	(void)state;
	assert_string_equal(p->goal, "Sum the invoices");
	plan_free(p);
	free(text);
}

static void test_parse_json_fence_preferred(void **state)
{
	/* a shell example holding JSON comes first, but the ```json block is the answer */
	char *text = xasprintf("Run this:\n```bash\ncurl -d '{\"goal\":\"curl\",\"steps\":[]}'\n"
	                       "```\nPlan:\n```JSON\n%s\n```\n```json\n{\"goal\":\"later\"}\n```\n",
	                       FULL);
	struct plan *p = parse_ok(text);

	(void)state;
	assert_string_equal(p->goal, "Sum the invoices");
	plan_free(p);
	free(text);
	/* without a json tag, the first fenced object wins over bare text */
	p = parse_ok("{\"goal\":\"bare\",\"steps\":[]} then\n```\n"
	             "{\"goal\":\"fenced\",\"steps\":[{\"step_id\":\"a\"}]}\n```");
	assert_string_equal(p->goal, "fenced");
	plan_free(p);
}

static void test_parse_two_objects_first_wins(void **state)
{
	struct plan *p =
	    parse_ok("{\"goal\":\"first\",\"steps\":[{\"step_id\":\"a\"}]}\n"
	             "and also\n{\"goal\":\"second\",\"steps\":[{\"step_id\":\"b\"}]}");

	(void)state;
	assert_string_equal(p->goal, "first");
	assert_string_equal(p->steps[0].id, "a");
	plan_free(p);
	/* the first object is authoritative: its error is reported, not skipped */
	expect_parse_error(
	    "{\"goal\":\"first\",}\n{\"goal\":\"second\",\"steps\":[{\"step_id\":\"b\"}]}",
	    "trailing comma");
}

static void test_parse_trailing_comma_object(void **state)
{
	/* the comma after "x" is on line 4, column 13 (1-based, counting the prose line) */
	const char *text = "Here you go:\n"
	                   "{\n"
	                   "  \"goal\": \"g\",\n"
	                   "  \"ctx\": \"x\",\n"
	                   "}\n";
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_null(plan_parse(text, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "trailing comma before '}' at line 4, column 13.");
	strvec_clear(&errs);
}

static void test_parse_trailing_comma_array(void **state)
{
	(void)state;
	expect_parse_error("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"},\n]}",
	                   "trailing comma before ']' at line 1, column 37");
	/* a comma inside a string is not a trailing comma */
	struct plan *p =
	    parse_ok("{\"goal\":\"a,}\",\"steps\":[{\"step_id\":\"a\",\"name\":\",]\"}]}");
	assert_string_equal(p->goal, "a,}");
	plan_free(p);
}

static void test_parse_malformed_position(void **state)
{
	(void)state;
	/* missing ':' after "context" on line 3 */
	expect_parse_error("{\n\"goal\": \"g\",\n\"context\" \"c\",\n\"steps\": []\n}",
	                   "malformed JSON at line 3, column 11");
	expect_parse_error("{\"goal\": tru}", "malformed JSON at line 1, column 10");
}

static void test_parse_unclosed(void **state)
{
	(void)state;
	expect_parse_error("Plan:\n{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\"",
	                   "starting at line 2, column 1 is never closed");
}

static void test_parse_deep_nesting(void **state)
{
	struct strbuf sb;
	size_t depth = 200000;

	(void)state;
	strbuf_init(&sb);
	strbuf_adds(&sb,
	            "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"actions\":[{\"tool\":\"t\","
	            "\"params\":{\"x\":");
	for (size_t i = 0; i < depth; i++)
		strbuf_addc(&sb, '[');
	for (size_t i = 0; i < depth; i++)
		strbuf_addc(&sb, ']');
	strbuf_adds(&sb, "}}]}]}");
	expect_parse_error(sb.buf, "nested deeper than 32 levels");
	strbuf_release(&sb);

	/* exactly at the limit is fine: 32 levels in all */
	strbuf_init(&sb);
	strbuf_adds(&sb,
	            "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"actions\":[{\"tool\":\"t\","
	            "\"params\":{\"x\":");
	for (size_t i = 0; i < 32 - 6; i++)
		strbuf_addc(&sb, '[');
	for (size_t i = 0; i < 32 - 6; i++)
		strbuf_addc(&sb, ']');
	strbuf_adds(&sb, "}}]}]}");
	struct plan *p = parse_ok(sb.buf);
	plan_free(p);
	strbuf_release(&sb);
}

static void test_parse_megabyte_string(void **state)
{
	size_t n = 1024 * 1024;
	struct strbuf sb;
	struct strvec errs = STRVEC_INIT;
	struct plan *p;
	char *want;

	(void)state;
	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"description\":\"");
	for (size_t i = 0; i < n; i++)
		strbuf_addc(&sb, (char)('a' + i % 26));
	strbuf_adds(&sb, "\"}]}");
	p = parse_ok(sb.buf);
	assert_int_equal(strlen(p->steps[0].description), n);
	assert_false(plan_validate(p, &errs));
	want =
	    xasprintf("steps[0].description is %zu bytes long; the limit is %d.", n, PLAN_MAX_TEXT);
	assert_error(&errs, want);
	free(want);
	strvec_clear(&errs);
	plan_free(p);
	strbuf_release(&sb);
}

static void test_parse_huge_prose_is_linear(void **state)
{
	size_t n = 8 * 1024 * 1024;
	char *text = xmalloc(n + 1);
	clock_t t0 = clock();

	(void)state;
	/* many '{' and "```" that never become an object: a quadratic scan would crawl */
	for (size_t i = 0; i < n; i++)
		text[i] = "{ x```\n"[i % 7];
	text[n] = '\0';
	expect_parse_error(text, "no JSON object found");
	assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	free(text);
}

static void test_parse_unicode(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"Prüfung ✓ 日本語\",\"steps\":[{\"step_id\":\"a\","
	                          "\"name\":\"caf\\u00e9 \\ud83d\\ude00\"}]}");

	(void)state;
	assert_string_equal(p->goal, "Prüfung ✓ 日本語");
	assert_string_equal(p->steps[0].name, "caf\xc3\xa9 \xf0\x9f\x98\x80");
	plan_free(p);
	/* a non-ASCII id is malformed by the id rule */
	p = parse_ok("{\"goal\":\"g\",\"steps\":[{\"step_id\":\"schritt-ü\"}]}");
	struct strvec errs = STRVEC_INIT;
	assert_false(plan_validate(p, &errs));
	assert_error(&errs, "may only hold letters, digits");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_parse_escapes_and_nul(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"line1\\nline2 \\\"q\\\" \\\\ \\t\",\"steps\":["
	                          "{\"step_id\":\"a\",\"description\":\"before\\u0000after\"}]}");
	char *s;

	(void)state;
	assert_string_equal(p->goal, "line1\nline2 \"q\" \\ \t");
	/* cJSON strings end at an escaped NUL: the text is cut there, never overread */
	assert_string_equal(p->steps[0].description, "before");
	s = plan_to_string(p, false);
	assert_non_null(strstr(s, "line1\\nline2 \\\"q\\\""));
	free(s);
	plan_free(p);
	/* an invalid escape is malformed JSON with a position */
	expect_parse_error("{\"goal\":\"bad \\x escape\",\"steps\":[]}",
	                   "malformed JSON at line 1");
}

static void test_parse_error_cap(void **state)
{
	struct strbuf sb;
	struct strvec errs = STRVEC_INIT;

	(void)state;
	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"goal\":\"g\",\"steps\":[");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%s{\"step_id\":{\"n\":%d}}", i ? "," : "", i);
	strbuf_adds(&sb, "]}");
	assert_null(plan_parse(sb.buf, &errs));
	assert_int_equal(errs.n, 26);
	assert_string_equal(errs.v[25], "975 more problems were not listed.");
	strvec_clear(&errs);
	strbuf_release(&sb);
}

static void test_step_from_json(void **state)
{
	struct strvec errs = STRVEC_INIT;
	struct plan_step s;
	cJSON *o = cJSON_Parse("{\"step_id\":\"x\",\"dependencies\":[\"a\"],"
	                       "\"estimated_complexity\":\"high\"}");

	(void)state;
	assert_true(plan_step_from_json(o, &s, &errs));
	assert_string_equal(s.id, "x");
	assert_string_equal(s.name, "x");
	assert_int_equal(s.complexity, CX_HIGH);
	plan_step_free_fields(&s);
	cJSON_Delete(o);

	o = cJSON_Parse("{\"step_id\":\"x\",\"dependencies\":\"a\"}");
	assert_false(plan_step_from_json(o, &s, &errs));
	assert_string_equal(errs.v[0],
	                    "dependencies must be an array of step ids (strings or numbers).");
	assert_null(s.id);
	cJSON_Delete(o);
	o = cJSON_CreateArray();
	assert_false(plan_step_from_json(o, &s, &errs));
	assert_error(&errs, "The step must be a JSON object");
	cJSON_Delete(o);
	strvec_clear(&errs);
}

/* ---- validation ------------------------------------------------------------------- */

static void test_validate_zero_steps(void **state)
{
	struct plan *p = parse_ok("{\"goal\":\"g\",\"steps\":[]}");
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "The plan has no steps; it needs at least one.");
	strvec_clear(&errs);
	plan_free(p);
	assert_false(plan_validate(NULL, NULL));
}

static void test_validate_too_many_steps(void **state)
{
	struct strbuf sb;
	struct plan *p;
	struct strvec errs = STRVEC_INIT;

	(void)state;
	strbuf_init(&sb);
	for (int i = 0; i < PLAN_MAX_STEPS + 1; i++)
		strbuf_addf(&sb, "%ss%d", i ? ";" : "", i);
	p = plan_of(sb.buf);
	assert_int_equal(p->n_steps, PLAN_MAX_STEPS + 1);
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "The plan has 201 steps; the limit is 200.");
	strvec_clear(&errs);
	plan_free(p);
	strbuf_release(&sb);

	/* exactly the limit is fine */
	strbuf_init(&sb);
	for (int i = 0; i < PLAN_MAX_STEPS; i++)
		if (i)
			strbuf_addf(&sb, ";s%d:s%d", i, i - 1);
		else
			strbuf_adds(&sb, "s0");
	p = plan_of(sb.buf);
	assert_true(plan_validate(p, &errs));
	plan_free(p);
	strbuf_release(&sb);
}

static void test_validate_duplicate_ids(void **state)
{
	(void)state;
	expect_invalid("a;b;a", "steps[2].step_id \"a\" repeats the id of steps[0].");
}

static void test_validate_unknown_dep(void **state)
{
	(void)state;
	expect_invalid("a;b:a,zz", "Step \"b\" depends on unknown step \"zz\" "
	                           "(steps[1].dependencies[1]).");
}

static void test_validate_self_dependency(void **state)
{
	struct plan *p = plan_of("a;b:b");
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &errs));
	/* a cycle of length 1 is one sentence, not also a "dependency cycle" */
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "Step \"b\" depends on itself (steps[1].dependencies[0]).");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_validate_cycle_two(void **state)
{
	struct plan *p = plan_of("x;a:b;b:a");
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "dependency cycle: a -> b -> a.");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_validate_cycle_three(void **state)
{
	struct plan *p = plan_of("a:b;b:c;c:a;d:a");
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "dependency cycle: a -> b -> c -> a.");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_validate_cycle_named_from_earliest(void **state)
{
	/* the search enters the cycle at c (via d), but the name starts at a, the earliest */
	struct plan *p = plan_of("d:c;a:b;b:c;c:a");
	struct strvec errs = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0], "dependency cycle: a -> b -> c -> a.");
	strvec_clear(&errs);
	plan_free(p);
}

static void test_validate_bad_ids(void **state)
{
	char *long_id = xmalloc(PLAN_MAX_ID + 2);
	char *spec;

	(void)state;
	expect_invalid("ok_1-2.3;a b", "steps[1].step_id \"a b\" may only hold letters");
	expect_invalid("a/b", "steps[0].step_id \"a/b\" may only hold");
	memset(long_id, 'x', PLAN_MAX_ID + 1);
	long_id[PLAN_MAX_ID + 1] = '\0';
	spec = xasprintf("a;%s", long_id);
	expect_invalid(spec, "is longer than 64 bytes");
	free(spec);
	long_id[PLAN_MAX_ID] = '\0';
	{
		struct plan *p = plan_of(long_id); /* 64 bytes: allowed */

		assert_true(plan_validate(p, NULL));
		plan_free(p);
	}
	free(long_id);
}

static void test_validate_list_bounds(void **state)
{
	struct strbuf sb;
	struct plan *p;
	struct strvec errs = STRVEC_INIT;

	(void)state;
	strbuf_init(&sb);
	strbuf_adds(&sb, "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"acceptance_criteria\":[");
	for (int i = 0; i < PLAN_MAX_LIST + 1; i++)
		strbuf_addf(&sb, "%s\"c%d\"", i ? "," : "", i);
	strbuf_adds(&sb, "]}]}");
	p = parse_ok(sb.buf);
	assert_false(plan_validate(p, &errs));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.v[0],
	                    "steps[0].acceptance_criteria has 65 entries; the limit is 64.");
	strvec_clear(&errs);
	plan_free(p);
	strbuf_release(&sb);
}

static void test_validate_deterministic_order(void **state)
{
	struct plan *p = plan_of("b:q;a b;b;c:c;d:e;e:d");
	struct strvec e1 = STRVEC_INIT, e2 = STRVEC_INIT;

	(void)state;
	assert_false(plan_validate(p, &e1));
	assert_false(plan_validate(p, &e2));
	assert_int_equal(e1.n, e2.n);
	for (size_t i = 0; i < e1.n; i++)
		assert_string_equal(e1.v[i], e2.v[i]);
	/* steps in plan order, then cycles */
	assert_int_equal(e1.n, 5);
	assert_non_null(strstr(e1.v[0], "unknown step \"q\""));
	assert_non_null(strstr(e1.v[1], "\"a b\" may only hold"));
	assert_non_null(strstr(e1.v[2], "steps[2].step_id \"b\" repeats"));
	assert_non_null(strstr(e1.v[3], "\"c\" depends on itself"));
	assert_string_equal(e1.v[4], "dependency cycle: d -> e -> d.");
	strvec_clear(&e1);
	strvec_clear(&e2);
	plan_free(p);
}

/* ---- JSON out, copies, order ------------------------------------------------------ */

static void test_round_trip(void **state)
{
	struct plan *p = parse_ok(FULL);
	char *compact = plan_to_string(p, false);
	char *pretty = plan_to_string(p, true);
	struct plan *q = parse_ok(compact);
	struct plan *r = parse_ok(pretty);
	char *again = plan_to_string(q, false);

	(void)state;
	assert_true(plan_equal(p, q));
	assert_true(plan_equal(p, r));
	assert_string_equal(compact, again);
	assert_non_null(strchr(pretty, '\n'));
	assert_null(strchr(compact, '\n'));
	free(compact);
	free(pretty);
	free(again);
	plan_free(q);
	plan_free(r);
	plan_free(p);
}

static void test_to_json_field_names(void **state)
{
	static const char *const top[] = {"goal", "context", "steps", "success_criteria",
	                                  "rollback_strategy"};
	static const char *const step[] = {"step_id",
	                                   "name",
	                                   "description",
	                                   "actions",
	                                   "acceptance_criteria",
	                                   "expected_outputs",
	                                   "dependencies",
	                                   "estimated_complexity"};
	struct plan *p = parse_ok(FULL);
	cJSON *j = plan_to_json(p);
	cJSON *s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "steps"), 1);
	cJSON *act;

	(void)state;
	assert_int_equal(cJSON_GetArraySize(j), 5);
	for (size_t i = 0; i < 5; i++)
		assert_non_null(cJSON_GetObjectItemCaseSensitive(j, top[i]));
	assert_int_equal(cJSON_GetArraySize(s1), 8);
	for (size_t i = 0; i < 8; i++)
		assert_non_null(cJSON_GetObjectItemCaseSensitive(s1, step[i]));
	assert_string_equal(jsonx_str(s1, "estimated_complexity"), "high");
	act = cJSON_GetArrayItem(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "steps"), 0), "actions"),
	    0);
	assert_string_equal(jsonx_str(act, "tool"), "read_file");
	assert_string_equal(jsonx_str(cJSON_GetObjectItem(act, "params"), "path"), "a.csv");
	cJSON_Delete(j);
	plan_free(p);
}

static void test_clone_and_step_equal(void **state)
{
	struct plan *p = parse_ok(FULL);
	struct plan *c = plan_clone(p);
	struct plan_step s;

	(void)state;
	assert_true(plan_equal(p, c));
	assert_ptr_not_equal(c->steps[0].id, p->steps[0].id);
	free(c->steps[1].criteria.v[1]);
	c->steps[1].criteria.v[1] = xstrdup("rounding allowed");
	assert_false(plan_step_equal(&p->steps[1], &c->steps[1]));
	assert_false(plan_equal(p, c));
	assert_string_equal(p->steps[1].criteria.v[1], "no rounding");

	plan_step_copy(&s, &p->steps[0]);
	assert_true(plan_step_equal(&s, &p->steps[0]));
	/* params compare as JSON, not as bytes */
	free(s.actions[0].params_json);
	s.actions[0].params_json = xstrdup("{ \"path\" : \"a.csv\", \"n\": [1, 2] }");
	assert_true(plan_step_equal(&s, &p->steps[0]));
	free(s.actions[0].params_json);
	s.actions[0].params_json = xstrdup("{\"path\":\"b.csv\",\"n\":[1,2]}");
	assert_false(plan_step_equal(&s, &p->steps[0]));
	s.complexity = CX_HIGH;
	plan_step_free_fields(&s);
	plan_step_copy(&s, &p->steps[0]);
	s.complexity = CX_HIGH;
	assert_false(plan_step_equal(&s, &p->steps[0]));
	plan_step_free_fields(&s);
	plan_free(c);
	plan_free(p);
}

static void test_step_to_string_bad_params(void **state)
{
	struct plan *p = parse_ok(FULL);
	char *s;
	struct strvec errs = STRVEC_INIT;
	cJSON *j;
	struct plan_step st;

	(void)state;
	free(p->steps[0].actions[0].params_json);
	p->steps[0].actions[0].params_json = xstrdup("not json");
	s = plan_step_to_string(&p->steps[0], false);
	assert_non_null(strstr(s, "\"params\":\"not json\""));
	j = cJSON_Parse(s);
	assert_false(plan_step_from_json(j, &st, &errs));
	assert_error(&errs, "actions[0].params must be an object");
	cJSON_Delete(j);
	strvec_clear(&errs);
	free(s);
	plan_free(p);
}

/* What plan_to_string / plan_step_to_string wrote when they printed the cJSON tree; the
 * direct writers must give the same bytes (journal, prompts and reuse keys hold them). */
static char *cjson_text(cJSON *o, bool pretty)
{
	char *s = pretty ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
	char *d = xstrdup(s);

	cJSON_free(s);
	cJSON_Delete(o);
	return d;
}

static void expect_same_as_cjson(const struct plan *p)
{
	for (int pretty = 0; pretty < 2; pretty++) {
		char *want = cjson_text(plan_to_json(p), pretty);
		char *got = plan_to_string(p, pretty);

		assert_string_equal(got, want);
		free(want);
		free(got);
		for (size_t i = 0; i < p->n_steps; i++) {
			struct strbuf sb;

			want = cjson_text(plan_step_to_json(&p->steps[i]), pretty);
			got = plan_step_to_string(&p->steps[i], pretty);
			assert_string_equal(got, want);
			strbuf_init(&sb);
			strbuf_adds(&sb, "x");
			plan_step_add_json(&sb, &p->steps[i], pretty);
			assert_string_equal(sb.buf + 1, want);
			strbuf_release(&sb);
			free(want);
			free(got);
		}
	}
}

static char *random_text(unsigned *seed)
{
	size_t n = (size_t)(rand_r(seed) % 12);
	char *s = xcalloc(n + 1, 1);

	for (size_t i = 0; i < n; i++) {
		int r = rand_r(seed) % 8;

		/* controls, quotes and backslashes, ASCII, bytes above 0x7f */
		s[i] = (char)(r == 0 ? 1 + rand_r(seed) % 31
			      : r == 1 ? "\"\\/\x7f"[rand_r(seed) % 4]
			      : r < 6  ? 32 + rand_r(seed) % 95
				       : 128 + rand_r(seed) % 128);
	}
	return s;
}

static void test_to_string_same_as_cjson(void **state)
{
	static const char *const params[] = {
	    "{}", "{ }", "{\"path\":\"a.csv\",\"n\":[1,2.5,-3e7,true,null]}", "not json", "[1,2]",
	    "{\"a\":{\"b\":{},\"c\":[{\"d\":\"\\n\\t\"}, []]}}", "  {\"x\" : 1}  trailing", "\"s\"",
	    NULL};
	struct plan *p = parse_ok(FULL);
	struct plan *fresh = plan_new();
	unsigned seed = 7;

	(void)state;
	expect_same_as_cjson(p);
	/* A fresh struct: NULL texts are "" in both. */
	fresh->n_steps = 1;
	fresh->steps = xcalloc(1, sizeof(*fresh->steps));
	expect_same_as_cjson(fresh);
	plan_free(fresh);
	/* Every params shape, at both nesting depths. */
	for (size_t k = 0; k < sizeof(params) / sizeof(*params); k++) {
		free(p->steps[0].actions[0].params_json);
		p->steps[0].actions[0].params_json = params[k] ? xstrdup(params[k]) : NULL;
		expect_same_as_cjson(p);
	}
	/* Random texts in every field, lists of 0 to 3 entries, 0 to 2 actions. */
	for (int round = 0; round < 200; round++) {
		struct plan *r = plan_new();

		r->goal = random_text(&seed);
		r->context = round % 5 ? random_text(&seed) : NULL;
		r->rollback_strategy = random_text(&seed);
		for (int c = rand_r(&seed) % 3; c > 0; c--)
			strvec_take(&r->success_criteria, random_text(&seed));
		r->n_steps = (size_t)(rand_r(&seed) % 3);
		r->steps = xcalloc(r->n_steps + 1, sizeof(*r->steps));
		for (size_t i = 0; i < r->n_steps; i++) {
			struct plan_step *s = &r->steps[i];
			struct strvec *lists[] = {&s->criteria, &s->expected_outputs, &s->deps};

			s->id = random_text(&seed);
			s->name = random_text(&seed);
			s->description = rand_r(&seed) % 4 ? random_text(&seed) : NULL;
			s->complexity = (enum complexity)(rand_r(&seed) % 3);
			for (size_t l = 0; l < 3; l++)
				for (int c = rand_r(&seed) % 4; c > 0; c--)
					strvec_take(lists[l], random_text(&seed));
			s->n_actions = (size_t)(rand_r(&seed) % 3);
			s->actions = xcalloc(s->n_actions + 1, sizeof(*s->actions));
			for (size_t a = 0; a < s->n_actions; a++) {
				s->actions[a].tool = random_text(&seed);
				s->actions[a].params_json =
				    rand_r(&seed) % 2 ? xstrdup(params[rand_r(&seed) % 8])
						      : random_text(&seed);
			}
		}
		expect_same_as_cjson(r);
		plan_free(r);
	}
	plan_free(p);
}

static void test_find(void **state)
{
	struct plan *p = plan_of("a;b;c");

	(void)state;
	assert_int_equal(plan_find(p, "a"), 0);
	assert_int_equal(plan_find(p, "c"), 2);
	assert_int_equal(plan_find(p, "d"), -1);
	assert_int_equal(plan_find(p, NULL), -1);
	plan_free(p);
}

/* The id index answers as plan_find does: repeated ids give the first step, NULL ids are
 * never found, unknown ids and NULL give -1; small and large plans (its table grows). */
static void test_ids_index(void **state)
{
	static const char *const pool[] = {"a", "b", "", "s1", "s10", "s100", "x.y", "a-b", "q"};
	const size_t n_pool = sizeof(pool) / sizeof(*pool);
	unsigned seed = 11;

	(void)state;
	assert_int_equal(plan_ids_find(NULL, "a"), -1);
	for (int round = 0; round < 300; round++) {
		struct plan *p = plan_new();
		struct plan_ids *ix;
		size_t n = round < 250 ? (size_t)(rand_r(&seed) % 12) : 150 + (size_t)round;

		p->steps = xcalloc(n + 1, sizeof(*p->steps));
		p->n_steps = n;
		for (size_t i = 0; i < n; i++) {
			int r = rand_r(&seed) % 10;

			p->steps[i].id = round >= 250 ? xasprintf("s%zu", i)
					 : r == 0     ? NULL
						      : xstrdup(pool[(size_t)r % n_pool]);
		}
		ix = plan_ids_new(p);
		for (size_t k = 0; k < n_pool; k++)
			assert_int_equal(plan_ids_find(ix, pool[k]), plan_find(p, pool[k]));
		for (size_t i = 0; i < n; i++)
			assert_int_equal(plan_ids_find(ix, p->steps[i].id), plan_find(p, p->steps[i].id));
		assert_int_equal(plan_ids_find(ix, "zz"), -1);
		assert_int_equal(plan_ids_find(ix, NULL), -1);
		plan_ids_free(ix);
		plan_free(p);
	}
	plan_ids_free(NULL);
}

static void test_topo_stable(void **state)
{
	/* c needs a; d needs b and c. Ready at first: a, b; plan order picks a, which frees c
	 * (earlier in plan order than b). */
	struct plan *p = plan_of("c:a;a;b;d:b,c");
	size_t *o = plan_topo_order(p);

	(void)state;
	assert_true(plan_validate(p, NULL));
	assert_int_equal(o[0], 1);
	assert_int_equal(o[1], 0);
	assert_int_equal(o[2], 2);
	assert_int_equal(o[3], 3);
	free(o);
	plan_free(p);
}

static void test_topo_keeps_plan_order_when_free(void **state)
{
	struct plan *p = plan_of("e;d;c;b;a");
	size_t *o = plan_topo_order(p);

	(void)state;
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(o[i], i);
	free(o);
	plan_free(p);
}

static void test_topo_chain_reversed(void **state)
{
	struct plan *p = plan_of("s3:s2;s2:s1;s1:s0;s0");
	size_t *o = plan_topo_order(p);

	(void)state;
	assert_int_equal(o[0], 3);
	assert_int_equal(o[1], 2);
	assert_int_equal(o[2], 1);
	assert_int_equal(o[3], 0);
	free(o);
	plan_free(p);
}

static void test_topo_cycle_still_lists_all(void **state)
{
	struct plan *p = plan_of("a:b;b:a;c");
	size_t *o = plan_topo_order(p);

	(void)state;
	/* c is the only ready step; the stuck cycle follows in plan order */
	assert_int_equal(o[0], 2);
	assert_int_equal(o[1], 0);
	assert_int_equal(o[2], 1);
	free(o);
	plan_free(p);
}

/* A task the goal could not restate is refused with its length, the limit and the way
 * to pass a long brief; one that fits, the limit included, is not. */
static void test_task_error(void **state)
{
	char *task = xmalloc(PLAN_MAX_TEXT + 2), *err;

	(void)state;
	assert_null(plan_task_error(NULL));
	assert_null(plan_task_error("short"));
	memset(task, 'x', PLAN_MAX_TEXT);
	task[PLAN_MAX_TEXT] = '\0';
	assert_null(plan_task_error(task));
	task[PLAN_MAX_TEXT] = 'x';
	task[PLAN_MAX_TEXT + 1] = '\0';
	err = plan_task_error(task);
	assert_non_null(err);
	assert_non_null(strstr(err, "the task is 8193 bytes long; the limit is 8192."));
	assert_non_null(strstr(err, "file in the workspace"));
	assert_null(strchr(err, '\n'));
	free(err);
	free(task);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_full),
	    cmocka_unit_test(test_parse_tolerant_defaults),
	    cmocka_unit_test(test_parse_complexity_case),
	    cmocka_unit_test(test_parse_bad_complexity),
	    cmocka_unit_test(test_parse_steps_not_array),
	    cmocka_unit_test(test_parse_step_id),
	    cmocka_unit_test(test_parse_numeric_ids),
	    cmocka_unit_test(test_parse_bad_dependency),
	    cmocka_unit_test(test_parse_structure_as_text),
	    cmocka_unit_test(test_parse_wrong_types_everywhere),
	    cmocka_unit_test(test_parse_goal_missing),
	    cmocka_unit_test(test_parse_no_json),
	    cmocka_unit_test(test_parse_fenced_with_prose),
	    cmocka_unit_test(test_parse_prose_braces_skipped),
	    cmocka_unit_test(test_parse_fence_wins_over_bare),
	    cmocka_unit_test(test_parse_json_fence_preferred),
	    cmocka_unit_test(test_parse_two_objects_first_wins),
	    cmocka_unit_test(test_parse_trailing_comma_object),
	    cmocka_unit_test(test_parse_trailing_comma_array),
	    cmocka_unit_test(test_parse_malformed_position),
	    cmocka_unit_test(test_parse_unclosed),
	    cmocka_unit_test(test_parse_deep_nesting),
	    cmocka_unit_test(test_parse_megabyte_string),
	    cmocka_unit_test(test_parse_huge_prose_is_linear),
	    cmocka_unit_test(test_parse_unicode),
	    cmocka_unit_test(test_parse_escapes_and_nul),
	    cmocka_unit_test(test_parse_error_cap),
	    cmocka_unit_test(test_step_from_json),
	    cmocka_unit_test(test_task_error),
	    cmocka_unit_test(test_validate_zero_steps),
	    cmocka_unit_test(test_validate_too_many_steps),
	    cmocka_unit_test(test_validate_duplicate_ids),
	    cmocka_unit_test(test_validate_unknown_dep),
	    cmocka_unit_test(test_validate_self_dependency),
	    cmocka_unit_test(test_validate_cycle_two),
	    cmocka_unit_test(test_validate_cycle_three),
	    cmocka_unit_test(test_validate_cycle_named_from_earliest),
	    cmocka_unit_test(test_validate_bad_ids),
	    cmocka_unit_test(test_validate_list_bounds),
	    cmocka_unit_test(test_validate_deterministic_order),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_to_json_field_names),
	    cmocka_unit_test(test_clone_and_step_equal),
	    cmocka_unit_test(test_step_to_string_bad_params),
	    cmocka_unit_test(test_to_string_same_as_cjson),
	    cmocka_unit_test(test_find),
	    cmocka_unit_test(test_ids_index),
	    cmocka_unit_test(test_topo_stable),
	    cmocka_unit_test(test_topo_keeps_plan_order_when_free),
	    cmocka_unit_test(test_topo_chain_reversed),
	    cmocka_unit_test(test_topo_cycle_still_lists_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
