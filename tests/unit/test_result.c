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

static void test_result_confidence_range(void **state)
{
	(void)state;
	result_err("{\"step_output\":{},\"confidence\":1.5}",
	           "confidence must be between 0 and 1 (got 1.5).");
	result_err("{\"step_output\":{},\"confidence\":85}", "(got 85)");
	result_err("{\"step_output\":{},\"confidence\":-0.1}", "(got -0.1)");
	result_err("{\"step_output\":{},\"confidence\":true}", "confidence must be a number");
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
	result_err("{\"step_output\":{\"meets_criteria\":\"yes\"},\"confidence\":0.9}",
	           "step_output.meets_criteria must be true or false");
	result_err("{\"reasoning\":[],\"step_output\":{},\"confidence\":0.9}",
	           "reasoning must be a string");
	result_err("{\"notes\":1,\"step_output\":{},\"confidence\":0.9}", "notes must be a string");
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
	verdict_err("{\"overall_pass\":false,\"action\":\"retry\",\"feedback_for_executor\":5}",
	            "feedback_for_executor must be a string");
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
	verdict_err("{\"overall_pass\":true,\"action\":\"pass\",\"severity\":2}",
	            "severity must be minor, major or critical");
}

static void test_verdict_bad_action(void **state)
{
	(void)state;
	verdict_err("{\"overall_pass\":true,\"action\":\"approve\"}",
	            "action must be pass, retry or replan, not \"approve\"");
	verdict_err("{\"overall_pass\":true,\"action\":1}", "action must be one of the strings");
	verdict_err("{\"overall_pass\":true}", "action is missing");
}

static void test_verdict_overall_pass_required(void **state)
{
	(void)state;
	verdict_err("{\"action\":\"pass\"}", "overall_pass is missing");
	verdict_err("{\"overall_pass\":\"yes\",\"action\":\"pass\"}",
	            "overall_pass must be true or false");
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
	verdict_err(
	    "{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a\","
	    "\"passed\":true},{\"criterion\":\"b\",\"passed\":\"no\"}],\"action\":\"pass\"}",
	    "criteria_results[1].passed must be true or false");
	verdict_err("{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":\"a\","
	            "\"passed\":true,\"confidence\":2}],\"action\":\"pass\"}",
	            "criteria_results[0].confidence must be between 0 and 1 (got 2)");
	verdict_err("{\"overall_pass\":true,\"criteria_results\":[{\"criterion\":[],"
	            "\"passed\":true}],\"action\":\"pass\"}",
	            "criteria_results[0].criterion must be a string");
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
	    cmocka_unit_test(test_result_malformed),
	    cmocka_unit_test(test_verdict_pass),
	    cmocka_unit_test(test_verdict_retry_needs_feedback),
	    cmocka_unit_test(test_verdict_case_and_severity),
	    cmocka_unit_test(test_verdict_bad_action),
	    cmocka_unit_test(test_verdict_overall_pass_required),
	    cmocka_unit_test(test_verdict_pass_with_failed_criteria),
	    cmocka_unit_test(test_verdict_pass_with_overall_false),
	    cmocka_unit_test(test_verdict_criteria_types),
	    cmocka_unit_test(test_verdict_criteria_to_json),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_verdict_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
