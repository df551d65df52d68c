/* Unit tests for the form widget's line editing and the step editor built on it. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "form.h"
#include "step_editor.h"

static void type(struct form *f, const char *s)
{
	/* ASCII and the few code points the tests use, one key each */
	while (*s) {
		unsigned int cp = (unsigned char)*s;

		if (cp == 0xE4 && (unsigned char)s[1] == 0xB8 && (unsigned char)s[2] == 0xAD) {
			cp = 0x4E2D;
			s += 2;
		}
		form_key(f, false, cp);
		s++;
	}
}

static void test_line_editing(void **state)
{
	struct form *f = form_new("t", NULL);

	form_add(f, "A", "hello");
	type(f, " world");
	assert_string_equal(form_value(f, 0), "hello world");
	form_key(f, true, KEY_HOME);
	type(f, ">");
	assert_string_equal(form_value(f, 0), ">hello world");
	form_key(f, true, KEY_END);
	form_key(f, false, 23); /* ^W deletes the last word */
	assert_string_equal(form_value(f, 0), ">hello ");
	form_key(f, true, KEY_LEFT);
	form_key(f, true, KEY_LEFT);
	form_key(f, false, 11); /* ^K kills to the end */
	assert_string_equal(form_value(f, 0), ">hell");
	form_key(f, false, 21); /* ^U kills to the start */
	assert_string_equal(form_value(f, 0), "");
	/* a wide character is inserted and deleted whole */
	type(f, "a\xe4\xb8\xad" "b");
	assert_string_equal(form_value(f, 0), "a\xe4\xb8\xad" "b");
	form_key(f, true, KEY_LEFT);
	form_key(f, true, KEY_BACKSPACE);
	assert_string_equal(form_value(f, 0), "ab");
	form_key(f, true, KEY_DC);
	assert_string_equal(form_value(f, 0), "a");
	/* control characters never get in */
	form_key(f, false, 0x9B); /* C1 CSI */
	form_key(f, false, 7);
	assert_string_equal(form_value(f, 0), "a");
	form_free(f);
}

static void test_focus_submit_cancel(void **state)
{
	struct form *f = form_new("t", NULL);

	form_add(f, "A", "");
	form_add(f, "B", "");
	assert_int_equal(form_key(f, false, '\r'), FORM_CONTINUE); /* Enter: next field */
	type(f, "x");
	assert_string_equal(form_value(f, 1), "x");
	assert_string_equal(form_value(f, 0), "");
	assert_int_equal(form_key(f, false, '\r'), FORM_SUBMIT); /* Enter on the last */
	assert_int_equal(form_key(f, false, 19), FORM_SUBMIT);   /* ^S anywhere */
	assert_int_equal(form_key(f, false, 27), FORM_CANCEL);
	form_key(f, true, KEY_BTAB);
	type(f, "y");
	assert_string_equal(form_value(f, 0), "y");
	form_free(f);
}

#define STEP                                                                                  \
	"{\"step_id\":\"memo\",\"name\":\"Write\",\"description\":\"d\",\"actions\":[],"      \
	"\"acceptance_criteria\":[\"c1\",\"c2\"],\"expected_outputs\":[\"memo.md\"],"          \
	"\"dependencies\":[\"a\"],\"estimated_complexity\":\"high\"}"

static void test_step_form_round_trip(void **state)
{
	struct form *f = step_editor_form(STEP);
	char *err = NULL, *out;
	cJSON *o, *crit;

	assert_non_null(f);
	/* name, description, complexity, two criteria, one empty for a new one */
	assert_int_equal(form_count(f), 6);
	assert_string_equal(form_value(f, 3), "c1");
	assert_string_equal(form_value(f, 5), "");
	/* unchanged: no edit */
	assert_null(step_editor_apply(STEP, f, &err));
	assert_null(err);
	/* rewrite criterion 2, add a third */
	for (int i = 0; i < 4; i++)
		form_key(f, false, '\t');
	form_key(f, false, 21);
	type(f, "c2 rewritten");
	form_key(f, false, '\t');
	type(f, "c3");
	out = step_editor_apply(STEP, f, &err);
	assert_null(err);
	assert_non_null(out);
	o = cJSON_Parse(out);
	crit = cJSON_GetObjectItem(o, "acceptance_criteria");
	assert_int_equal(cJSON_GetArraySize(crit), 3);
	assert_string_equal(cJSON_GetArrayItem(crit, 1)->valuestring, "c2 rewritten");
	/* fields the form does not show are kept */
	assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "dependencies"), 0)->valuestring,
			    "a");
	cJSON_Delete(o);
	free(out);
	form_free(f);
}

static void test_step_form_rejects_bad_edits(void **state)
{
	struct form *f = step_editor_form(STEP);
	char *err = NULL;

	form_key(f, false, '\t');
	form_key(f, false, '\t');
	form_key(f, false, 21);
	type(f, "enormous");
	assert_null(step_editor_apply(STEP, f, &err));
	assert_non_null(err);
	assert_non_null(strstr(err, "low, medium or high"));
	free(err);
	form_free(f);
	/* a step without a description stays without one when the form is untouched */
	f = step_editor_form("{\"step_id\":\"s\",\"name\":\"n\",\"acceptance_criteria\":[\"c\"],"
			     "\"estimated_complexity\":\"low\"}");
	assert_null(step_editor_apply("{\"step_id\":\"s\",\"name\":\"n\",\"acceptance_criteria\":"
				      "[\"c\"],\"estimated_complexity\":\"low\"}",
				      f, &err));
	assert_null(err);
	form_free(f);
	assert_null(step_editor_form("[1,2]"));
	assert_null(step_editor_form("not json"));
}

static void test_replace_in_plan(void **state)
{
	const char *plan = "{\"goal\":\"g\",\"steps\":[{\"step_id\":\"a\",\"name\":\"A\"},"
			   "{\"step_id\":\"memo\",\"name\":\"old\"}]}";
	char *out = step_editor_replace_in_plan(plan, STEP);
	cJSON *o = cJSON_Parse(out), *steps = cJSON_GetObjectItem(o, "steps");

	assert_int_equal(cJSON_GetArraySize(steps), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 1), "name")->valuestring,
			    "Write");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 0), "name")->valuestring,
			    "A");
	cJSON_Delete(o);
	free(out);
	assert_null(step_editor_replace_in_plan(plan, "{\"step_id\":\"zzz\"}"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_editing),
		cmocka_unit_test(test_focus_submit_cancel),
		cmocka_unit_test(test_step_form_round_trip),
		cmocka_unit_test(test_step_form_rejects_bad_edits),
		cmocka_unit_test(test_replace_in_plan),
	};

	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
