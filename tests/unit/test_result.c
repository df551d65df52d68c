/* test_result — executor results and verifier verdicts parsed from model text. */
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

#include "jsonx.h"
#include "plan.h"
#include "result.h"
#include "xalloc.h"

static const char *RESULT =
    "{\"reasoning\":\"read both files\",\"actions_taken\":[\"read a.csv\",\"wrote t.txt\"],"
    "\"step_output\":{\"findings\":\"total is 42\",\"artifacts\":[\"t.txt\"],"
    "\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"none\"}";

static struct exec_result *result_ok(const char *text)
{
	char *err = NULL;
	struct exec_result *r = exec_result_parse(text, &err);

	if (!r)
		fail_msg("unexpected error: %s", err);
	assert_null(err);
	return r;
}

static void result_err(const char *text, const char *needle)
{
	char *err = NULL;
	struct exec_result *r = exec_result_parse(text, &err);

	assert_null(r);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err, needle);
	free(err);
}

/* Expects failure with exactly this sentence. */
static void result_err_exact(const char *text, const char *want)
{
	char *err = NULL;
	struct exec_result *r = exec_result_parse(text, &err);

	assert_null(r);
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
}

static struct verdict *verdict_ok(const char *text)
{
	char *err = NULL;
	struct verdict *v = verdict_parse(text, &err);

	if (!v)
		fail_msg("unexpected error: %s", err);
	assert_null(err);
	return v;
}

static void verdict_err(const char *text, const char *needle)
{
	char *err = NULL;
	struct verdict *v = verdict_parse(text, &err);

	assert_null(v);
	assert_non_null(err);
	if (!strstr(err, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err, needle);
	free(err);
}

static void verdict_err_exact(const char *text, const char *want)
{
	char *err = NULL;
	struct verdict *v = verdict_parse(text, &err);

	assert_null(v);
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
}

/* The step_output.meets_criteria of a normalized result, parsed. Caller deletes *root. */
static const cJSON *journaled_meets(const struct exec_result *r, cJSON **root)
{
	*root = cJSON_Parse(r->json);
	assert_non_null(*root);
	return cJSON_GetObjectItem(cJSON_GetObjectItem(*root, "step_output"), "meets_criteria");
}

/* ---- executor result -------------------------------------------------------------- */

static void test_result_full(void **state)
{
	struct exec_result *r = result_ok(RESULT);
	cJSON *j;

	(void)state;
	assert_string_equal(r->reasoning, "read both files");
	assert_int_equal(r->actions_taken.n, 2);
	assert_string_equal(r->actions_taken.v[1], "wrote t.txt");
	assert_string_equal(r->findings, "total is 42");
	assert_int_equal(r->artifacts.n, 1);
	assert_string_equal(r->artifacts.v[0], "t.txt");
	assert_true(r->meets_criteria);
	assert_true(r->confidence > 0.899 && r->confidence < 0.901);
	assert_string_equal(r->notes, "none");
	j = cJSON_Parse(r->json);
	assert_non_null(j);
	assert_string_equal(jsonx_str(j, "reasoning"), "read both files");
	assert_true(cJSON_IsTrue(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "step_output"), "meets_criteria")));
	assert_null(strchr(r->json, '\n'));
	cJSON_Delete(j);
	exec_result_free(r);
}

static void test_result_normalized_is_stable(void **state)
{
	struct exec_result *r =
	    result_ok("Done.\n```json\n{\n  \"confidence\": \"0.75\",\n"
	              "  \"step_output\": {\"findings\": {\"total\": 42}}\n}\n```");
	struct exec_result *again = result_ok(r->json);

	(void)state;
	/* parsing the normalized text gives the same normalized text */
	assert_string_equal(r->json, again->json);
	assert_string_equal(r->reasoning, "");
	assert_int_equal(r->actions_taken.n, 0);
	assert_false(r->meets_criteria); /* missing: the executor did not claim success */
	exec_result_free(again);
	exec_result_free(r);
}

static void test_result_actions_objects(void **state)
{
	struct exec_result *r = result_ok(
	    "{\"actions_taken\":[\"plain\",{\"tool\":\"write_file\",\"params\":{\"path\":\"x\"}},"
	    "7],\"step_output\":{\"meets_criteria\":false},\"confidence\":0}");

	(void)state;
	assert_int_equal(r->actions_taken.n, 3);
	assert_string_equal(r->actions_taken.v[0], "plain");
	assert_string_equal(r->actions_taken.v[1],
	                    "{\"tool\":\"write_file\",\"params\":{\"path\":\"x\"}}");
	assert_string_equal(r->actions_taken.v[2], "7");
	exec_result_free(r);
	result_err("{\"actions_taken\":\"did it\",\"step_output\":{},\"confidence\":1}",
	           "actions_taken must be an array");
}

static void test_result_findings_json(void **state)
{
	struct exec_result *r = result_ok("{\"step_output\":{\"findings\":{\"rows\":[1,2],"
	                                  "\"ok\":true}},\"confidence\":1}");
	cJSON *j;

	(void)state;
	assert_string_equal(r->findings, "{\"rows\":[1,2],\"ok\":true}");
	j = cJSON_Parse(r->json);
	/* the normalized object keeps the value itself, not a string of it */
	assert_true(
	    cJSON_IsObject(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "step_output"), "findings")));
	cJSON_Delete(j);
	exec_result_free(r);
}

static void test_result_confidence_string(void **state)
{
	struct exec_result *r = result_ok("{\"step_output\":{},\"confidence\":\" 0.8 \"}");

	(void)state;
	assert_true(r->confidence > 0.799 && r->confidence < 0.801);
	exec_result_free(r);
	result_err("{\"step_output\":{},\"confidence\":\"high\"}",
	           "confidence must be a number from 0 to 1, not \"high\"");
	result_err("{\"step_output\":{},\"confidence\":\"0.8x\"}", "not \"0.8x\"");
	result_err("{\"step_output\":{},\"confidence\":\"nan\"}", "confidence must be");
}

static void test_result_confidence_percent(void **state)
{
	struct exec_result *r = result_ok("{\"step_output\":{},\"confidence\":\"85%\"}");

	(void)state;
	assert_true(r->confidence > 0.849 && r->confidence < 0.851);
	/* the normalized result holds the number */
	assert_non_null(strstr(r->json, "\"confidence\":0.85"));
	exec_result_free(r);
	r = result_ok("{\"step_output\":{},\"confidence\":\" 100 % \"}");
	assert_true(r->confidence > 0.999);
	exec_result_free(r);
	result_err_exact("{\"step_output\":{},\"confidence\":\"150%\"}",
	                 "confidence must be between 0 and 1 (got 1.5).");
	result_err_exact("{\"step_output\":{},\"confidence\":\"85%%\"}",
	                 "confidence must be a number from 0 to 1, not \"85%%\".");
	result_err_exact("{\"step_output\":{},\"confidence\":\"%\"}",
	                 "confidence must be a number from 0 to 1, not \"%\".");
	/* a bare 85 is refused: it may be a percentage or another scale */
	result_err_exact("{\"step_output\":{},\"confidence\":85}",
	                 "confidence must be between 0 and 1 (got 85).");
}

static void test_result_confidence_range(void **state)
{
	(void)state;
	result_err("{\"step_output\":{},\"confidence\":1.5}",
	           "confidence must be between 0 and 1 (got 1.5).");
	result_err("{\"step_output\":{},\"confidence\":85}", "(got 85)");
	result_err("{\"step_output\":{},\"confidence\":-0.1}", "(got -0.1)");
	result_err_exact("{\"step_output\":{},\"confidence\":true}",
	                 "confidence must be a number from 0 to 1, not a boolean.");
	result_err("{\"step_output\":{}}", "confidence is missing");
	/* the edges are allowed */
	exec_result_free(result_ok("{\"step_output\":{},\"confidence\":0}"));
	exec_result_free(result_ok("{\"step_output\":{},\"confidence\":1.0}"));
}

static void test_result_step_output_required(void **state)
{
	(void)state;
	result_err("{\"confidence\":0.9}", "step_output is missing");
	result_err("{\"step_output\":\"done\",\"confidence\":0.9}",
	           "step_output must be an object");
}

static void test_result_artifacts_and_flags(void **state)
{
	(void)state;
	result_err("{\"step_output\":{\"artifacts\":[\"a\",3]},\"confidence\":0.9}",
	           "step_output.artifacts[1] must be a string");
	result_err("{\"step_output\":{\"artifacts\":\"a.txt\"},\"confidence\":0.9}",
	           "step_output.artifacts must be an array of strings");
	result_err_exact("{\"step_output\":{\"meets_criteria\":\"maybe\"},\"confidence\":0.9}",
	                 "step_output.meets_criteria must be true or false, or a map of each "
	                 "criterion to true or false, not \"maybe\".");
	result_err_exact("{\"step_output\":{\"meets_criteria\":1},\"confidence\":0.9}",
	                 "step_output.meets_criteria must be true or false, or a map of each "
	                 "criterion to true or false, not a number.");
}

/* Structure where text was asked is kept as compact JSON text; null is absent. */
static void test_result_text_from_anything(void **state)
{
	struct exec_result *r =
	    result_ok("{\"reasoning\":{\"method\": \"wc\", \"files\": [\"a\", \"b\"]},"
	              "\"actions_taken\":[null,\"read\",false],"
	              "\"step_output\":{\"findings\":null,\"meets_criteria\":\" TRUE \"},"
	              "\"confidence\":\"0.85\",\"notes\":3}");
	struct exec_result *again;

	(void)state;
	assert_string_equal(r->reasoning, "{\"method\":\"wc\",\"files\":[\"a\",\"b\"]}");
	assert_int_equal(r->actions_taken.n, 2);
	assert_string_equal(r->actions_taken.v[0], "read");
	assert_string_equal(r->actions_taken.v[1], "false");
	assert_string_equal(r->findings, "");
	assert_true(r->meets_criteria);
	assert_null(r->criteria_met);
	assert_int_equal(r->n_criteria_met, 0);
	assert_true(r->confidence > 0.849 && r->confidence < 0.851);
	assert_string_equal(r->notes, "3");
	/* normalized: the texts as strings, the boolean spelled as one */
	assert_non_null(strstr(r->json, "\"meets_criteria\":true"));
	assert_non_null(strstr(r->json, "\"reasoning\":\"{\\\"method\\\""));
	again = result_ok(r->json);
	assert_string_equal(again->json, r->json);
	assert_string_equal(again->reasoning, r->reasoning);
	exec_result_free(again);
	exec_result_free(r);

	r = result_ok("{\"reasoning\":null,\"step_output\":{\"meets_criteria\":\"no\"},"
	              "\"confidence\":1,\"notes\":null}");
	assert_string_equal(r->reasoning, "");
	assert_string_equal(r->notes, "");
	assert_false(r->meets_criteria);
	exec_result_free(r);
}

static void test_result_meets_map(void **state)
{
	struct exec_result *r = result_ok(
	    "{\"step_output\":{\"findings\":\"ok\",\"meets_criteria\":{\"criterion_1\": true,"
	    " \"criterion_2\": \"yes\", \"all rows read\": \"True\"}},\"confidence\":0.9}");
	cJSON *root, *want;
	struct exec_result *again;

	(void)state;
	assert_true(r->meets_criteria);
	assert_int_equal(r->n_criteria_met, 3);
	assert_string_equal(r->criteria_met[0].name, "criterion_1");
	assert_true(r->criteria_met[0].met);
	assert_string_equal(r->criteria_met[1].name, "criterion_2");
	assert_true(r->criteria_met[1].met);
	assert_string_equal(r->criteria_met[2].name, "all rows read");
	assert_true(r->criteria_met[2].met);
	/* the journal keeps the map as the model wrote it */
	want = cJSON_Parse("{\"criterion_1\":true,\"criterion_2\":\"yes\","
	                   "\"all rows read\":\"True\"}");
	assert_true(cJSON_Compare(journaled_meets(r, &root), want, 1));
	cJSON_Delete(want);
	cJSON_Delete(root);
	/* and reading the journaled result gives the same result */
	again = result_ok(r->json);
	assert_string_equal(again->json, r->json);
	assert_int_equal(again->n_criteria_met, 3);
	assert_true(again->meets_criteria);
	exec_result_free(again);
	exec_result_free(r);

	/* one criterion not met: not met, and shown as such */
	r = result_ok("{\"step_output\":{\"meets_criteria\":{\"a\":true,\"b\":\"NO\","
	              "\"c\":false}},\"confidence\":0.9}");
	assert_false(r->meets_criteria);
	assert_int_equal(r->n_criteria_met, 3);
	assert_true(r->criteria_met[0].met);
	assert_false(r->criteria_met[1].met);
	assert_false(r->criteria_met[2].met);
	exec_result_free(r);

	/* an empty map claims nothing */
	r = result_ok("{\"step_output\":{\"meets_criteria\":{}},\"confidence\":0.9}");
	assert_false(r->meets_criteria);
	assert_int_equal(r->n_criteria_met, 0);
	assert_non_null(strstr(r->json, "\"meets_criteria\":{}"));
	exec_result_free(r);

	/* an answer per criterion may be an object with met (or passed) */
	r = result_ok("{\"step_output\":{\"meets_criteria\":{\"a\":{\"met\":true,"
	              "\"why\":\"checked\"}}},\"confidence\":0.9}");
	assert_true(r->meets_criteria);
	assert_string_equal(r->criteria_met[0].name, "a");
	exec_result_free(r);
}

static void test_result_meets_arrays(void **state)
{
	struct exec_result *r =
	    result_ok("{\"step_output\":{\"meets_criteria\":[true,\"yes\"]},\"confidence\":0.9}");
	cJSON *root;

	(void)state;
	assert_true(r->meets_criteria);
	assert_int_equal(r->n_criteria_met, 2);
	assert_string_equal(r->criteria_met[0].name, "1"); /* unnamed: by position */
	assert_string_equal(r->criteria_met[1].name, "2");
	assert_true(cJSON_IsArray(journaled_meets(r, &root)));
	cJSON_Delete(root);
	exec_result_free(r);

	r = result_ok("{\"step_output\":{\"meets_criteria\":[true,false]},\"confidence\":0.9}");
	assert_false(r->meets_criteria);
	assert_false(r->criteria_met[1].met);
	exec_result_free(r);

	r = result_ok("{\"step_output\":{\"meets_criteria\":[{\"criterion\":\"total matches\","
	              "\"met\":true},{\"criterion\":{\"id\":2},\"passed\":\"true\"},"
	              "{\"passed\":true}]},\"confidence\":0.9}");
	assert_true(r->meets_criteria);
	assert_int_equal(r->n_criteria_met, 3);
	assert_string_equal(r->criteria_met[0].name, "total matches");
	assert_string_equal(r->criteria_met[1].name, "{\"id\":2}");
	assert_string_equal(r->criteria_met[2].name, "3");
	exec_result_free(r);

	r = result_ok("{\"step_output\":{\"meets_criteria\":[]},\"confidence\":0.9}");
	assert_false(r->meets_criteria);
	exec_result_free(r);
}

static void test_result_meets_refused(void **state)
{
	(void)state;
	result_err_exact("{\"step_output\":{\"meets_criteria\":{\"criterion_1\":true,"
	                 "\"criterion_2\":\"maybe\"}},\"confidence\":0.9}",
	                 "step_output.meets_criteria[\"criterion_2\"] must be true or false, not "
	                 "\"maybe\".");
	result_err_exact("{\"step_output\":{\"meets_criteria\":{\"a\":null}},\"confidence\":0.9}",
	                 "step_output.meets_criteria[\"a\"] must be true or false, not null.");
	result_err_exact("{\"step_output\":{\"meets_criteria\":{\"a\":1}},\"confidence\":0.9}",
	                 "step_output.meets_criteria[\"a\"] must be true or false, not a number.");
	result_err_exact("{\"step_output\":{\"meets_criteria\":[true,3]},\"confidence\":0.9}",
	                 "step_output.meets_criteria[1] must be true or false, not a number.");
	result_err_exact("{\"step_output\":{\"meets_criteria\":[{\"criterion\":\"a\"}]},"
	                 "\"confidence\":0.9}",
	                 "step_output.meets_criteria[0].met is missing (true or false).");
	result_err_exact("{\"step_output\":{\"meets_criteria\":[{\"criterion\":\"a\","
	                 "\"passed\":\"sort of\"}]},\"confidence\":0.9}",
	                 "step_output.meets_criteria[0].passed must be true or false, not "
	                 "\"sort of\".");
}

static void test_result_malformed(void **state)
{
	char *err = NULL;

	(void)state;
	result_err("I did the work.", "no JSON object found");
	result_err("{\n\"step_output\": {},\n\"confidence\": 0.5,\n}",
	           "trailing comma before '}' at line 3, column 18");
	assert_null(exec_result_parse(NULL, &err));
	assert_non_null(err);
	free(err);
}

/* ---- the normalized result, written directly: as the tree it was once printed from ---- */

static cJSON *ref_strs(const struct strvec *sv)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < sv->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(sv->v[i]));
	return a;
}

/* What result.json was: the object built and printed by cJSON (the old way). */
static char *ref_normalized(const char *text, const struct exec_result *r)
{
	char *e = NULL, *s;
	cJSON *obj = jsonx_extract(text, PLAN_MAX_JSON_DEPTH, &e);
	const cJSON *so = jsonx_field(obj, "step_output");
	const cJSON *findings = jsonx_field(so, "findings");
	const cJSON *meets = jsonx_field(so, "meets_criteria");
	cJSON *o = cJSON_CreateObject(), *out = cJSON_CreateObject();

	assert_non_null(obj);
	if (!cJSON_IsObject(meets) && !cJSON_IsArray(meets))
		meets = NULL;
	cJSON_AddStringToObject(o, "reasoning", r->reasoning);
	cJSON_AddItemToObject(o, "actions_taken", ref_strs(&r->actions_taken));
	if (findings)
		cJSON_AddItemToObject(out, "findings", cJSON_Duplicate(findings, 1));
	else
		cJSON_AddStringToObject(out, "findings", "");
	cJSON_AddItemToObject(out, "artifacts", ref_strs(&r->artifacts));
	if (meets)
		cJSON_AddItemToObject(out, "meets_criteria", cJSON_Duplicate(meets, 1));
	else
		cJSON_AddBoolToObject(out, "meets_criteria", r->meets_criteria);
	cJSON_AddItemToObject(o, "step_output", out);
	cJSON_AddNumberToObject(o, "confidence", r->confidence);
	cJSON_AddStringToObject(o, "notes", r->notes);
	s = jsonx_print(o);
	cJSON_Delete(o);
	cJSON_Delete(obj);
	return s;
}

/* result.json and result.output_json are what the tree's print and the step_output of
 * that print read back and printed again were, on tricky answers. */
static void test_result_written_as_printed(void **state)
{
	static const char *const answers[] = {
	    "{\"reasoning\":\"read both files\",\"actions_taken\":[\"read a.csv\",\"wrote t.txt\"],"
	    "\"step_output\":{\"findings\":\"total is 42\",\"artifacts\":[\"t.txt\"],"
	    "\"meets_criteria\":true},\"confidence\":0.9,\"notes\":\"none\"}",
	    /* escapes, UTF-8 raw and escaped, surrogates, control bytes, a solidus */
	    "{\"reasoning\":\"q\\\" b\\\\ \\/ \\b\\f\\n\\r\\t \\u0001\\u001f \\u007f \\u00e9 "
	    "\xc3\xa9 \\ud83d\\ude00 \\u2028 \xe2\x80\xae \xff bad\",\"actions_taken\":[\"\",{\"a\":"
	    "[1,\"\\n\"]},3.5,true],\"step_output\":{\"findings\":\"\\u0000cut\",\"artifacts\":"
	    "[\"dir/\\u00e9 \\\"q\\\".txt\"],\"meets_criteria\":\"yes\"},\"confidence\":\"85%\","
	    "\"notes\":\"tab\\there\"}",
	    /* findings a tree of every kind of number; meets per criterion */
	    "prose first ```json\n{\"reasoning\":null,\"step_output\":{\"findings\":{\"n\":[0,-0,1,"
	    "-1,2.5,1e400,-1e400,1e-7,123456789012,2147483647,2147483648,-2147483649,0.1,"
	    "0.30000000000000004,1.7976931348623157e308,5e-324],\"k\\\"ey\":{\"c\":null,\"d\":true,"
	    "\"e\":[],\"f\":{}},\"k\\\"ey\":\"dup\"},\"artifacts\":[],\"meets_criteria\":"
	    "{\"crit \\\"a\\\"\":true,\"b\":\"yes\"}},\"confidence\":0.30000000000000004}\n```",
	    "{\"step_output\":{\"findings\":42,\"meets_criteria\":[true,{\"criterion\":\"x\","
	    "\"met\":true},{\"criterion\":\"y\",\"passed\":\"no\"}]},\"confidence\":1}",
	    "{\"step_output\":{\"findings\":null,\"meets_criteria\":false},\"confidence\":0,"
	    "\"notes\":{\"why\":[null]}}",
	    "{\"step_output\":{\"findings\":[\"a\",[\"b\"]]},\"confidence\":1e-300}",
	    "{\"step_output\":{},\"confidence\":0.123456789012345678,\"reasoning\":\"\"}",
	    "{\"step_output\":{\"findings\":true},\"confidence\":\"0.3\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		struct exec_result *r = result_ok(answers[i]);
		char *want = ref_normalized(answers[i], r), *out;
		cJSON *back = cJSON_Parse(r->json);

		assert_string_equal(r->json, want);
		assert_non_null(back);
		out = jsonx_print(cJSON_GetObjectItemCaseSensitive(back, "step_output"));
		assert_string_equal(r->output_json, out);
		free(out);
		free(want);
		cJSON_Delete(back);
		exec_result_free(r);
	}
}

/* ---- verdict ---------------------------------------------------------------------- */

static void test_verdict_pass(void **state)
{
	struct verdict *v =
	    verdict_ok("Verdict:\n```json\n{\"overall_pass\":true,\"criteria_results\":["
	               "{\"criterion\":\"total matches\",\"passed\":true,\"evidence\":\"42 = 42\","
	               "\"confidence\":0.95,\"feedback\":\"\"}],\"action\":\"pass\"}\n```");

	(void)state;
	assert_true(v->overall_pass);
	assert_int_equal(v->action, VERDICT_PASS);
	assert_int_equal(v->severity, SEV_MINOR);
	assert_int_equal(v->n_criteria, 1);
	assert_string_equal(v->criteria[0].criterion, "total matches");
	assert_true(v->criteria[0].passed);
	assert_string_equal(v->criteria[0].evidence, "42 = 42");
	assert_true(v->criteria[0].confidence > 0.94);
	assert_non_null(v->feedback);
	verdict_free(v);
}

static void test_verdict_retry_needs_feedback(void **state)
{
	struct verdict *v;

	(void)state;
	verdict_err("{\"overall_pass\":false,\"action\":\"retry\"}",
	            "feedback_for_executor is required when action is retry");
	verdict_err(
	    "{\"overall_pass\":false,\"action\":\"replan\",\"feedback_for_executor\":\"  \"}",
	    "feedback_for_executor is required when action is replan");
	v = verdict_ok("{\"overall_pass\":false,\"action\":\"retry\","
	               "\"feedback_for_executor\":{\"fix\":\"cite the source\"}}");
	assert_string_equal(v->feedback, "{\"fix\":\"cite the source\"}");
	verdict_free(v);
	verdict_err_exact("{\"overall_pass\":false,\"action\":\"retry\","
	                  "\"feedback_for_executor\":null}",
	                  "feedback_for_executor is required when action is retry.");
	v = verdict_ok("{\"overall_pass\":false,\"action\":\"retry\","
	               "\"feedback_for_executor\":\"cite the source\"}");
	assert_int_equal(v->action, VERDICT_RETRY);
	assert_int_equal(v->severity, SEV_MAJOR); /* default when not pass */
	assert_string_equal(v->feedback, "cite the source");
	verdict_free(v);
}

static void test_verdict_case_and_severity(void **state)
{
	struct verdict *v = verdict_ok("{\"overall_pass\":false,\"action\":\" REPLAN\","
	                               "\"feedback_for_executor\":\"wrong data\","
	                               "\"severity\":\"Critical\"}");

	(void)state;
	assert_int_equal(v->action, VERDICT_REPLAN);
	assert_int_equal(v->severity, SEV_CRITICAL);
	verdict_free(v);
	verdict_err("{\"overall_pass\":true,\"action\":\"pass\",\"severity\":\"tiny\"}",
	            "severity must be minor, major or critical");
	verdict_err_exact("{\"overall_pass\":true,\"action\":\"pass\",\"severity\":2}",
	                  "severity must be minor, major or critical, not a number.");
}

static void test_verdict_bad_action(void **state)
{
	(void)state;
	verdict_err("{\"overall_pass\":true,\"action\":\"approve\"}",
	            "action must be pass, retry or replan, not \"approve\"");
	verdict_err_exact("{\"overall_pass\":true,\"action\":1}",
	                  "action must be one of the strings pass, retry or replan, not a number.");
	verdict_err("{\"overall_pass\":true}", "action is missing");
}

static void test_verdict_overall_pass_required(void **state)
{
	(void)state;
	verdict_err("{\"action\":\"pass\"}", "overall_pass is missing");
	verdict_err_exact("{\"overall_pass\":\"maybe\",\"action\":\"pass\"}",
	                  "overall_pass must be true or false, not \"maybe\".");
	verdict_err_exact("{\"overall_pass\":{},\"action\":\"pass\"}",
	                  "overall_pass must be true or false, not an object.");
	verdict_err_exact("{\"overall_pass\":null,\"action\":\"pass\"}",
	                  "overall_pass is missing (true or false).");
}

/* Booleans and numbers written as strings, structure where text was asked. */
static void test_verdict_tolerant(void **state)
{
	struct verdict *v =
	    verdict_ok("{\"overall_pass\":\"true\",\"criteria_results\":[{\"criterion\":{\"id\":1},"
	               "\"passed\":\"Yes\",\"evidence\":{\"rows\":3},\"confidence\":\"90%\","
	               "\"feedback\":null},{\"criterion\":\"b\",\"passed\":true,\"evidence\":[1,2],"
	               "\"confidence\":\"0.5\",\"feedback\":7}],\"action\":\" Pass \","
	               "\"feedback_for_executor\":null,\"severity\":\"MINOR\"}");

	(void)state;
	assert_true(v->overall_pass);
	assert_int_equal(v->action, VERDICT_PASS);
	assert_int_equal(v->n_criteria, 2);
	assert_string_equal(v->criteria[0].criterion, "{\"id\":1}");
	assert_true(v->criteria[0].passed);
	assert_string_equal(v->criteria[0].evidence, "{\"rows\":3}");
	assert_true(v->criteria[0].confidence > 0.899 && v->criteria[0].confidence < 0.901);
	assert_string_equal(v->criteria[0].feedback, "");
	assert_string_equal(v->criteria[1].evidence, "[1,2]");
	assert_string_equal(v->criteria[1].feedback, "7");
	assert_string_equal(v->feedback, "");
	verdict_free(v);

	v = verdict_ok("{\"overall_pass\":\"FALSE\",\"criteria_results\":[{\"criterion\":\"a\","
	               "\"passed\":\"no\"}],\"action\":\"retry\","
	               "\"feedback_for_executor\":[\"add the total\"]}");
	assert_false(v->overall_pass);
	assert_false(v->criteria[0].passed);
	assert_int_equal(v->action, VERDICT_RETRY);
	assert_string_equal(v->feedback, "[\"add the total\"]");
	verdict_free(v);
}

static void test_verdict_pass_with_failed_criteria(void **state)
{
	struct verdict *v =
	    verdict_ok("{\"overall_pass\":true,\"criteria_results\":["
	               "{\"criterion\":\"has citations\",\"passed\":false},"
	               "{\"criterion\":\"under 200 words\",\"passed\":true},"
	               "{\"criterion\":\"names the parties\",\"passed\":false}],"
	               "\"action\":\"pass\",\"feedback_for_executor\":\"mostly fine\"}");

	(void)state;
	assert_int_equal(v->action, VERDICT_RETRY);
	assert_int_equal(v->severity, SEV_MAJOR);
	assert_string_equal(v->feedback, "The verifier answered pass, but these criteria failed: "
	                                 "has citations; names the parties. mostly fine");
	verdict_free(v);
}

static void test_verdict_pass_with_overall_false(void **state)
{
	struct verdict *v = verdict_ok("{\"overall_pass\":false,\"action\":\"pass\","
	                               "\"severity\":\"minor\"}");

	(void)state;
	assert_int_equal(v->action, VERDICT_RETRY);
	assert_int_equal(v->severity, SEV_MINOR); /* a given severity is kept */
	assert_string_equal(v->feedback, "The verifier answered pass, but overall_pass is false.");
	verdict_free(v);
	/* the other disagreement is not overridden: retry stays retry */
	v = verdict_ok("{\"overall_pass\":true,\"action\":\"retry\","
	               "\"feedback_for_executor\":\"recheck\"}");
	assert_int_equal(v->action, VERDICT_RETRY);
	verdict_free(v);
}

static void test_verdict_criteria_types(void **state)
{
	(void)state;
	verdict_err("{\"overall_pass\":true,\"criteria_results\":{},\"action\":\"pass\"}",
	            "criteria_results must be an array of objects");
	verdict_err("{\"overall_pass\":true,\"criteria_results\":[{\"passed\":true},\"x\"],"
	            "\"action\":\"pass\"}",
	            "criteria_results[1] must be an object");
	verdict_err_exact(
	    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a\","
	    "\"passed\":true},{\"criterion\":\"b\",\"passed\":\"perhaps\"}],\"action\":\"pass\"}",
	    "criteria_results[1].passed must be true or false, not \"perhaps\".");
	verdict_err_exact("{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a\"}],"
	                  "\"action\":\"pass\"}",
	                  "criteria_results[0].passed is missing (true or false).");
	verdict_err("{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a\","
	            "\"passed\":true,\"confidence\":2}],\"action\":\"pass\"}",
	            "criteria_results[0].confidence must be between 0 and 1 (got 2)");
	verdict_err_exact("{\"overall_pass\":true,\"criteria_results\":{},\"action\":\"pass\"}",
	                  "criteria_results must be an array of objects, not an object.");
	/* past the tenth: every digit named */
	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_adds(&sb, "{\"overall_pass\":true,\"criteria_results\":[");
		for (int i = 0; i < 123; i++)
			strbuf_adds(&sb, "{\"criterion\":\"c\",\"passed\":true},");
		strbuf_adds(&sb, "{\"criterion\":\"c\",\"passed\":true,\"confidence\":-1}],"
		                 "\"action\":\"pass\"}");
		verdict_err_exact(sb.buf, "criteria_results[123].confidence must be between 0 and 1 "
		                          "(got -1).");
		strbuf_release(&sb);
	}
}

static void test_verdict_criteria_to_json(void **state)
{
	struct verdict *v = verdict_ok(
	    "{\"overall_pass\":false,\"criteria_results\":["
	    "{\"criterion\":\"c1\",\"passed\":false,\"evidence\":\"e1\",\"confidence\":\"0.5\","
	    "\"feedback\":\"f1\"},{\"criterion\":\"c2\",\"passed\":true}],"
	    "\"action\":\"retry\",\"feedback_for_executor\":\"fix c1\"}");
	cJSON *a = verdict_criteria_to_json(v);
	cJSON *c0 = cJSON_GetArrayItem(a, 0);
	double conf = -1;

	(void)state;
	assert_int_equal(cJSON_GetArraySize(a), 2);
	assert_string_equal(jsonx_str(c0, "criterion"), "c1");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(c0, "passed")));
	assert_string_equal(jsonx_str(c0, "evidence"), "e1");
	assert_true(jsonx_num(c0, "confidence", &conf));
	assert_true(conf > 0.49 && conf < 0.51);
	assert_string_equal(jsonx_str(c0, "feedback"), "f1");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "passed")));
	cJSON_Delete(a);
	verdict_free(v);
	a = verdict_criteria_to_json(NULL);
	assert_int_equal(cJSON_GetArraySize(a), 0);
	cJSON_Delete(a);
}

/* The shared readers plan.c and result.c both use. */
static void test_jsonx_readers(void **state)
{
	cJSON *o =
	    cJSON_Parse("{\"t\":true,\"y\":\" Yes \",\"n\":\"NO\",\"f\":\"false\",\"m\":\"maybe\","
	                "\"one\":1,\"s\":\" 0.85 \",\"p\":\"85%\",\"x\":\"0.8x\",\"big\":1e999,"
	                "\"int\":2.0,\"obj\":{\"a\": [1, 2]},\"nul\":null}");
	bool b = false;
	double d = -1;
	char *t;

	(void)state;
	assert_non_null(o);
	assert_true(jsonx_as_bool(jsonx_field(o, "t"), &b) && b);
	assert_true(jsonx_as_bool(jsonx_field(o, "y"), &b) && b);
	assert_true(jsonx_as_bool(jsonx_field(o, "n"), &b) && !b);
	assert_true(jsonx_as_bool(jsonx_field(o, "f"), &b) && !b);
	assert_false(jsonx_as_bool(jsonx_field(o, "m"), &b));
	assert_false(jsonx_as_bool(jsonx_field(o, "one"), &b)); /* 1 is no boolean */
	assert_false(jsonx_as_bool(jsonx_field(o, "nul"), &b));
	assert_null(jsonx_field(o, "nul"));
	assert_true(jsonx_as_num(jsonx_field(o, "s"), false, &d) && d > 0.849 && d < 0.851);
	assert_false(jsonx_as_num(jsonx_field(o, "p"), false, &d)); /* only when asked */
	assert_true(jsonx_as_num(jsonx_field(o, "p"), true, &d) && d > 0.849 && d < 0.851);
	assert_false(jsonx_as_num(jsonx_field(o, "x"), true, &d));
	assert_false(jsonx_as_num(jsonx_field(o, "big"), false, &d));
	assert_false(jsonx_as_num(jsonx_field(o, "t"), false, &d));
	t = jsonx_as_id(jsonx_field(o, "int"));
	assert_string_equal(t, "2");
	free(t);
	assert_null(jsonx_as_id(jsonx_field(o, "big")));
	assert_null(jsonx_as_id(jsonx_field(o, "obj")));
	assert_null(jsonx_as_id(jsonx_field(o, "t")));
	t = jsonx_as_text(jsonx_field(o, "obj"));
	assert_string_equal(t, "{\"a\":[1,2]}");
	free(t);
	t = jsonx_as_text(jsonx_field(o, "t"));
	assert_string_equal(t, "true");
	free(t);
	assert_null(jsonx_as_text(jsonx_field(o, "nul")));
	assert_null(jsonx_as_text(NULL));
	t = jsonx_describe(jsonx_field(o, "m"), 40);
	assert_string_equal(t, "\"maybe\"");
	free(t);
	assert_string_equal(jsonx_kind(jsonx_field(o, "obj")), "an object");
	assert_string_equal(jsonx_kind(NULL), "null");
	cJSON_Delete(o);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(verdict_action_name(VERDICT_PASS), "pass");
	assert_string_equal(verdict_action_name(VERDICT_RETRY), "retry");
	assert_string_equal(verdict_action_name(VERDICT_REPLAN), "replan");
	assert_string_equal(severity_name(SEV_MINOR), "minor");
	assert_string_equal(severity_name(SEV_MAJOR), "major");
	assert_string_equal(severity_name(SEV_CRITICAL), "critical");
}

static void test_verdict_hostile(void **state)
{
	char *err = NULL;

	(void)state;
	verdict_err("no verdict here", "no JSON object found");
	verdict_err("{\"overall_pass\": true, \"action\": \"pass\"", "never closed");
	assert_null(verdict_parse(NULL, &err));
	free(err);
	/* control characters in quoted model text are neutralised in the error */
	verdict_err("{\"overall_pass\":true,\"action\":\"pa\\u001bss\"}", "not \"pa?ss\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_result_full),
	    cmocka_unit_test(test_result_normalized_is_stable),
	    cmocka_unit_test(test_result_actions_objects),
	    cmocka_unit_test(test_result_findings_json),
	    cmocka_unit_test(test_result_confidence_string),
	    cmocka_unit_test(test_result_confidence_range),
	    cmocka_unit_test(test_result_step_output_required),
	    cmocka_unit_test(test_result_artifacts_and_flags),
	    cmocka_unit_test(test_result_text_from_anything),
	    cmocka_unit_test(test_result_meets_map),
	    cmocka_unit_test(test_result_meets_arrays),
	    cmocka_unit_test(test_result_meets_refused),
	    cmocka_unit_test(test_result_confidence_percent),
	    cmocka_unit_test(test_result_malformed),
	    cmocka_unit_test(test_result_written_as_printed),
	    cmocka_unit_test(test_verdict_pass),
	    cmocka_unit_test(test_verdict_retry_needs_feedback),
	    cmocka_unit_test(test_verdict_case_and_severity),
	    cmocka_unit_test(test_verdict_bad_action),
	    cmocka_unit_test(test_verdict_overall_pass_required),
	    cmocka_unit_test(test_verdict_tolerant),
	    cmocka_unit_test(test_verdict_pass_with_failed_criteria),
	    cmocka_unit_test(test_verdict_pass_with_overall_false),
	    cmocka_unit_test(test_verdict_criteria_types),
	    cmocka_unit_test(test_verdict_criteria_to_json),
	    cmocka_unit_test(test_jsonx_readers),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_verdict_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
