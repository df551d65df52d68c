/* test_ctl_proto — the control protocol's lines (doc/protocol.md): what a client may send,
 * what is refused and with which sentence, and the lines pevtui writes read back. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "xalloc.h"

static void parse_ok(const char *line, struct ctl_cmd *c)
{
	char *err = NULL;

	if (!ctl_parse(line, strlen(line), c, &err))
		fail_msg("refused %s: %s", line, err);
}

/* Refused, with a sentence holding `words`. */
static void parse_refused(const char *line, size_t len, const char *words)
{
	struct ctl_cmd c;
	char *err = NULL;

	assert_false(ctl_parse(line, len, &c, &err));
	assert_non_null(err);
	if (!strstr(err, words))
		fail_msg("for %s: \"%s\" lacks \"%s\"", line, err, words);
	free(err);
}

static void test_commands(void **state)
{
	struct ctl_cmd c;

	(void)state;
	parse_ok("{\"v\":1,\"cmd\":\"hello\",\"since\":42}", &c);
	assert_int_equal(c.verb, CTL_HELLO);
	assert_int_equal(c.since, 42);
	ctl_cmd_release(&c);
	parse_ok("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":3,\"decision\":\"skip\",\"id\":\"x\"}", &c);
	assert_int_equal(c.verb, CTL_ANSWER);
	assert_int_equal(c.gate_id, 3);
	assert_int_equal(c.decision, GATE_SKIP);
	assert_string_equal(c.id, "x");
	assert_null(c.json);
	ctl_cmd_release(&c);
	/* arg: a string is the JSON text itself; anything else is printed */
	parse_ok("{\"v\":1,\"cmd\":\"budget\",\"arg\":{\"budget_usd\":2}}", &c);
	assert_int_equal(c.cmd, PEV_CMD_BUDGET);
	assert_string_equal(c.json, "{\"budget_usd\":2}");
	ctl_cmd_release(&c);
	parse_ok("{\"v\":1,\"cmd\":\"edit\",\"step_id\":\"s1\",\"arg\":\"{\\\"name\\\":\\\"n\\\"}\"}",
		 &c);
	assert_int_equal(c.cmd, PEV_CMD_EDIT);
	assert_string_equal(c.step_id, "s1");
	assert_string_equal(c.json, "{\"name\":\"n\"}");
	ctl_cmd_release(&c);
}

static void test_refusals(void **state)
{
	char *huge;

	(void)state;
	parse_refused("nope", 4, "not a JSON object");
	parse_refused("[1]", 3, "not a JSON object");
	parse_refused("{\"cmd\":\"ping\"}", 14, "\"v\":1");
	parse_refused("{\"v\":2,\"cmd\":\"ping\"}", 20, "version 1");
	parse_refused("{\"v\":1}", 7, "no \"cmd\"");
	parse_refused("{\"v\":1,\"cmd\":\"quit\"}", 20, "unknown command \"quit\"");
	parse_refused("{\"v\":1,\"cmd\":\"rerun\"}", 21, "needs \"step_id\"");
	parse_refused("{\"v\":1,\"cmd\":\"edit\",\"step_id\":\"a\"}", 34, "needs \"arg\"");
	parse_refused("{\"v\":1,\"cmd\":\"answer\",\"decision\":\"approve\"}", 43, "gate_id");
	parse_refused("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":1,\"decision\":\"maybe\"}", 53,
		      "approve, reject, skip or edit");
	parse_refused("{\"v\":1,\"cmd\":\"hello\",\"since\":-1}", 32, "since");
	parse_refused("{\"v\":1,\0\"cmd\":\"ping\"}", 21, "NUL");
	huge = xmalloc(CTL_MAX_LINE + 2);
	memset(huge, ' ', CTL_MAX_LINE + 1);
	huge[CTL_MAX_LINE + 1] = '\0';
	parse_refused(huge, CTL_MAX_LINE + 1, "longer than 1048576 bytes");
	free(huge);
}

static void test_lines_read_back(void **state)
{
	struct ctl_cmd c;
	char *line;

	(void)state;
	line = ctl_line_answer(7, GATE_EDIT, "{\"command\":\"ls\"}");
	assert_int_equal(line[strlen(line) - 1], '\n');
	line[strlen(line) - 1] = '\0';
	parse_ok(line, &c);
	assert_int_equal(c.gate_id, 7);
	assert_int_equal(c.decision, GATE_EDIT);
	assert_string_equal(c.json, "{\"command\":\"ls\"}");
	ctl_cmd_release(&c);
	free(line);
	/* quit is never written: a cockpit that leaves does not stop the engine */
	assert_null(ctl_line_command(PEV_CMD_QUIT, NULL, NULL));
	line = ctl_line_command(PEV_CMD_RERUN_FORCE, "b", NULL);
	line[strlen(line) - 1] = '\0';
	parse_ok(line, &c);
	assert_int_equal(c.cmd, PEV_CMD_RERUN_FORCE);
	assert_string_equal(c.step_id, "b");
	ctl_cmd_release(&c);
	free(line);
	line = ctl_reply_error("i", "bad \"thing\"");
	assert_string_equal(line, "{\"type\":\"ctl.error\",\"id\":\"i\",\"error\":\"bad \\\"thing\\\"\"}\n");
	free(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_lines_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
