/* test_mcp_schema — a tool's result against its outputSchema: each keyword checked, where
 * a mismatch is said, keywords outside the subset never refuse a value; a server's
 * question as a form (mcp_elicit): its fields, defaults, and the typed answer. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "mcp_elicit.h"
#include "mcp_schema.h"

/* Checks `value` against `schema` (both JSON text); the sentence, or NULL when it fits. */
static char *verdict(const char *schema, const char *value)
{
	cJSON *s = cJSON_Parse(schema), *v = cJSON_Parse(value);
	char *why = NULL;
	bool ok;

	assert_non_null(s);
	assert_non_null(v);
	ok = mcp_schema_check(s, v, &why);
	cJSON_Delete(s);
	cJSON_Delete(v);
	if (ok)
		assert_null(why);
	return ok ? NULL : why;
}

static void fits(const char *schema, const char *value)
{
	char *why = verdict(schema, value);
	if (why)
		fail_msg("%s should fit %s: %s", value, schema, why);
}

static void refused(const char *schema, const char *value, const char *said)
{
	char *why = verdict(schema, value);
	if (!why)
		fail_msg("%s should not fit %s", value, schema);
	if (!strstr(why, said))
		fail_msg("%s against %s: \"%s\" does not say \"%s\"", value, schema, why, said);
	free(why);
}

static void test_types(void **state)
{
	(void)state;
	fits("{\"type\":\"number\"}", "4.5");
	fits("{\"type\":\"integer\"}", "4");
	refused("{\"type\":\"integer\"}", "4.5", "at $: expected type \"integer\", got number");
	refused("{\"type\":\"string\"}", "4", "got number");
	fits("{\"type\":[\"string\",\"null\"]}", "null");
	refused("{\"type\":[\"string\",\"null\"]}", "true", "got boolean");
	fits("{\"type\":\"array\"}", "[]");
	refused("{\"type\":\"object\"}", "[]", "got array");
	refused("{\"type\":\"wobbly\"}", "{}", "got object"); /* a type no value has */
}

static void test_objects(void **state)
{
	const char *s = "{\"type\":\"object\",\"properties\":{\"total\":{\"type\":\"number\"},"
	                "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
	                "\"required\":[\"total\"]}";

	(void)state;
	fits(s, "{\"total\":42,\"items\":[\"a\",\"b\"],\"other\":true}");
	refused(s, "{\"items\":[]}", "at $: the required member \"total\" is missing");
	refused(s, "{\"total\":\"many\"}", "at $.total: expected type \"number\", got string");
	refused(s, "{\"total\":1,\"items\":[\"a\",2]}", "at $.items[1]: expected type");
	refused("{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}",
	        "{\"x\":1}", "the member \"x\" is not allowed");
	refused("{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}",
	        "{\"x\":1}", "at $.x: expected type");
}

static void test_values_and_bounds(void **state)
{
	(void)state;
	fits("{\"enum\":[\"a\",\"b\"]}", "\"b\"");
	refused("{\"enum\":[\"a\",\"b\"]}", "\"c\"", "not one of the enum's");
	refused("{\"const\":{\"k\":1}}", "{\"k\":2}", "not the const");
	refused("{\"minimum\":0}", "-1", "-1 is below the minimum");
	refused("{\"maximum\":10}", "11", "above the maximum");
	refused("{\"exclusiveMinimum\":0}", "0", "not above");
	refused("{\"minLength\":2}", "\"\xc3\xa9\"", "1 characters is shorter"); /* é is one */
	fits("{\"maxLength\":1}", "\"\xc3\xa9\"");
	refused("{\"maxItems\":1}", "[1,2]", "2 items are more");
	refused("{\"minItems\":1}", "[]", "0 items are fewer");
}

static void test_combinators(void **state)
{
	(void)state;
	fits("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"number\"}]}", "3");
	refused("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"number\"}]}", "true", "none of anyOf");
	refused("{\"oneOf\":[{\"type\":\"number\"},{\"minimum\":0}]}", "3", "matches 2 of oneOf");
	refused("{\"allOf\":[{\"type\":\"number\"},{\"minimum\":5}]}", "3", "below the minimum");
	refused("{\"not\":{\"type\":\"string\"}}", "\"s\"", "under not");
}

/* What the subset does not know never refuses; `true` takes all, `false` nothing. */
static void test_unknown_keywords_and_boolean_schemas(void **state)
{
	(void)state;
	fits("{\"type\":\"string\",\"pattern\":\"^x$\",\"format\":\"email\"}", "\"y\"");
	fits("{\"$ref\":\"#/$defs/t\"}", "1");
	fits("true", "{\"a\":[1]}");
	refused("false", "1", "no value is allowed");
	refused("{\"properties\":{\"a\":false}}", "{\"a\":1}", "at $.a: no value");
}

static void test_elicit_form(void **state)
{
	const char *schema =
	    "{\"type\":\"object\",\"properties\":{"
	    "\"name\":{\"type\":\"string\",\"title\":\"Your name\",\"default\":\"John Doe\","
	    "\"minLength\":2},"
	    "\"age\":{\"type\":\"integer\",\"default\":30},"
	    "\"score\":{\"type\":\"number\",\"default\":95.5},"
	    "\"status\":{\"type\":\"string\",\"enum\":[\"active\",\"inactive\"],"
	    "\"default\":\"active\"},"
	    "\"verified\":{\"type\":\"boolean\",\"default\":true},"
	    "\"plan\":{\"type\":\"string\",\"oneOf\":[{\"const\":\"a\",\"title\":\"A\"}]},"
	    "\"note\":{\"type\":\"string\"}},\"required\":[\"name\"]}";
	struct mcp_elicit_form f;
	char *err = NULL, *json = NULL;
	const char *vals[7] = {"Jo", "31", "1e2", "inactive", "no", "a", ""};

	(void)state;
	assert_true(mcp_elicit_parse(schema, &f, &err));
	assert_int_equal(f.n, 7);
	assert_string_equal(f.v[0].label, "Your name");
	assert_true(f.v[0].required);
	assert_string_equal(f.v[1].value, "30");
	assert_string_equal(f.v[2].value, "95.5");
	assert_string_equal(f.v[4].value, "true");
	assert_int_equal(f.v[5].options.n, 1);
	json = mcp_elicit_defaults(&f, &err);
	assert_string_equal(json, "{\"name\":\"John Doe\",\"age\":30,\"score\":95.5,"
	                          "\"status\":\"active\",\"verified\":true}");
	free(json);
	assert_true(mcp_elicit_content(&f, vals, &json, &err));
	assert_string_equal(json, "{\"name\":\"Jo\",\"age\":31,\"score\":100,"
	                          "\"status\":\"inactive\",\"verified\":false,\"plan\":\"a\"}");
	free(json);
	vals[1] = "3.5";
	assert_false(mcp_elicit_content(&f, vals, &json, &err));
	assert_string_equal(err, "age: type a whole number");
	free(err);
	vals[1] = "3";
	vals[3] = "gone";
	assert_false(mcp_elicit_content(&f, vals, &json, &err));
	assert_string_equal(err, "status: type one of the choices shown");
	free(err);
	vals[3] = "";
	vals[0] = "J";
	assert_false(mcp_elicit_content(&f, vals, &json, &err));
	assert_non_null(strstr(err, "at $.name: a string of 1 characters is shorter"));
	free(err);
	vals[0] = "";
	assert_false(mcp_elicit_content(&f, vals, &json, &err));
	assert_string_equal(err, "Your name is required");
	free(err);
	mcp_elicit_release(&f);
	assert_false(mcp_elicit_parse("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":"
	                              "\"array\"}}}",
	                              &f, &err));
	assert_non_null(strstr(err, "\"x\" is of type array"));
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_types),
	    cmocka_unit_test(test_objects),
	    cmocka_unit_test(test_values_and_bounds),
	    cmocka_unit_test(test_combinators),
	    cmocka_unit_test(test_unknown_keywords_and_boolean_schemas),
	    cmocka_unit_test(test_elicit_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
