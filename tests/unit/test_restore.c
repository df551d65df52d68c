/* test_restore — a resumed run's settings from its journal: checked, never widened. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "restore.h"
#include "settings.h"
#include "testdir.h"
#include "xalloc.h"

#define RUN_DIR "/nonexistent-runs/20260101-000000-abcd"

static const char *START =
	"{\"seq\":1,\"ts\":\"2026-01-01T00:00:00.000Z\",\"type\":\"run.start\","
	"\"run_id\":\"20260101-000000-abcd\",\"task\":\"Summarise notes\",\"provider\":\"openai\","
	"\"simulated\":false,\"models\":{\"planner\":\"p-model\",\"executor\":\"e-model\","
	"\"verifier\":\"v-model\"},\"policy\":{\"gates\":[\"plan\",\"step\"],\"yes\":true,"
	"\"max_retries\":4,\"max_replans\":1,\"parallel\":5,\"budget_usd\":0.75,"
	"\"confidence_threshold\":0.6,\"chaos\":0},"
	"\"workspace\":\"" RUN_DIR "/workspace\"}";

/* Restores START with `replace` ("old" -> "new" once, when given) into fresh settings. */
static bool restore(struct settings *s, const char *old, const char *new, unsigned given,
		    char **said, char **err)
{
	char *json = xstrdup(START);
	bool ok;

	if (old) {
		char *at = strstr(json, old);
		assert_non_null(at);
		char *edited = xasprintf("%.*s%s%s", (int)(at - json), json, new, at + strlen(old));
		free(json);
		json = edited;
	}
	ok = restore_settings(s, json, RUN_DIR, given, said, err);
	free(json);
	return ok;
}

static void test_restores_what_the_run_had(void **state)
{
	struct settings s;
	char *said = NULL, *err = NULL;

	(void)state;
	settings_init(&s);
	assert_true(restore(&s, NULL, NULL, 0, &said, &err));
	assert_string_equal(s.task, "Summarise notes");
	assert_string_equal(s.provider, "openai");
	assert_string_equal(s.model[ROLE_EXECUTOR], "e-model");
	assert_int_equal(s.max_retries, 4);
	assert_int_equal(s.max_replans, 1);
	assert_int_equal(s.parallel, 5);
	assert_true(s.budget_usd == 0.75);
	assert_true(s.confidence_threshold == 0.6);
	assert_null(s.workspace); /* the run's own: RUNDIR/workspace */
	/* Gates: the journal's, and this machine's defaults stay. */
	assert_int_equal(s.gates, GATES_DEFAULT | GATE_MASK(GATE_STEP));
	/* --yes is not taken from a journal. */
	assert_false(s.yes);
	assert_non_null(strstr(said, "provider openai"));
	assert_non_null(strstr(said, "parallel 5"));
	assert_non_null(strstr(said, "not carried over: --yes"));
	free(said);
	settings_release(&s);
}

static void test_flags_win_and_are_not_checked_against_the_journal(void **state)
{
	struct settings s;
	char *said = NULL, *err = NULL;
	unsigned given = RESTORE_GIVEN(RESTORE_PARALLEL) | RESTORE_GIVEN(RESTORE_GATES) |
			 RESTORE_GIVEN(RESTORE_MODEL_PLANNER);

	(void)state;
	settings_init(&s);
	s.parallel = 2;
	s.gates = 0;
	s.model[ROLE_PLANNER] = xstrdup("flag-model");
	assert_true(restore(&s, "\"parallel\":5", "\"parallel\":1e300", given, &said, &err));
	assert_int_equal(s.parallel, 2);
	assert_int_equal(s.gates, 0); /* --gate none said so */
	assert_string_equal(s.model[ROLE_PLANNER], "flag-model");
	assert_string_equal(s.model[ROLE_VERIFIER], "v-model");
	free(said);
	settings_release(&s);
}

static void test_bad_values_are_refused_with_the_flag_to_use(void **state)
{
	static const char *const cases[][3] = {
		{"\"parallel\":5", "\"parallel\":1e300", "--parallel"},
		{"\"parallel\":5", "\"parallel\":2.5", "a whole number from 1 to 32"},
		{"\"max_retries\":4", "\"max_retries\":1000000000", "--max-retries"},
		{"\"max_replans\":1", "\"max_replans\":\"many\"", "not a number"},
		{"\"budget_usd\":0.75", "\"budget_usd\":-1", "--budget"},
		{"\"chaos\":0", "\"chaos\":2", "a probability from 0 to 1"},
		{"\"confidence_threshold\":0.6", "\"confidence_threshold\":7", "from 0 to 1"},
		{"\"provider\":\"openai\"", "\"provider\":\"evil\\u001b[2J\"", "--provider"},
		{"\"task\":\"Summarise notes\"", "\"task\":\"\"", "no task"},
		{"\"workspace\":\"" RUN_DIR "/workspace\"", "\"workspace\":\"/etc\"",
		 "--workspace /etc"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct settings s;
		char *said = NULL, *err = NULL;

		settings_init(&s);
		if (restore(&s, cases[i][0], cases[i][1], 0, &said, &err))
			fail_msg("accepted %s", cases[i][1]);
		if (!strstr(err, cases[i][2]))
			fail_msg("%s: said \"%s\", want \"%s\"", cases[i][1], err, cases[i][2]);
		assert_null(strchr(err, '\x1b'));
		free(err);
		settings_release(&s);
	}
}

static void test_a_named_workspace_is_taken_when_given(void **state)
{
	struct settings s;
	char *said = NULL, *err = NULL;

	(void)state;
	settings_init(&s);
	s.workspace = xstrdup("/srv/project");
	assert_true(restore(&s, "\"workspace\":\"" RUN_DIR "/workspace\"",
			    "\"workspace\":\"/srv/project\"", RESTORE_GIVEN(RESTORE_WORKSPACE),
			    &said, &err));
	assert_string_equal(s.workspace, "/srv/project");
	free(said);
	settings_release(&s);
}

/* A run folder from elsewhere whose workspace is a link (to the operator's home, say) is
 * not the run's own folder: refused until the operator names a workspace. */
static void test_a_linked_workspace_is_refused(void **state)
{
	char *dir = testdir_new("restore"), *ws, *json, *said = NULL, *err = NULL;
	struct settings s;

	(void)state;
	assert_non_null(dir);
	ws = xasprintf("%s/workspace", dir);
	assert_int_equal(symlink("/", ws), 0);
	json = xasprintf("{\"type\":\"run.start\",\"task\":\"t\",\"provider\":\"sim\","
			 "\"policy\":{},\"workspace\":\"%s\"}",
			 ws);
	settings_init(&s);
	assert_false(restore_settings(&s, json, dir, 0, &said, &err));
	assert_non_null(strstr(err, "is a symbolic link"));
	assert_non_null(strstr(err, "--workspace"));
	free(err);
	err = NULL;
	/* Named on the command line: the operator said so. */
	assert_true(restore_settings(&s, json, dir, RESTORE_GIVEN(RESTORE_WORKSPACE), &said,
				     &err));
	free(said);
	settings_release(&s);
	free(json);
	free(ws);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* Issue 25: the rules the run checkpointed by come back from run.start, whatever today's
 * config says (a config's exclude list is replaced, its limits too). */
static void test_checkpoint_rules_are_the_runs(void **state)
{
	struct settings s;
	char *said = NULL, *err = NULL;

	(void)state;
	settings_init(&s);
	strvec_push(&s.checkpoint_exclude, "today/");
	assert_true(restore(&s, "\"chaos\":0}",
	                    "\"chaos\":0,\"checkpoints\":{\"exclude\":[\"*.tmp\",\"build/\"],"
	                    "\"max_file\":4096,\"max_total\":2097152}}",
	                    0, &said, &err));
	assert_int_equal(s.checkpoint_exclude.n, 2);
	assert_string_equal(s.checkpoint_exclude.v[0], "*.tmp");
	assert_string_equal(s.checkpoint_exclude.v[1], "build/");
	assert_int_equal(s.checkpoint_max_file, 4096);
	assert_int_equal(s.checkpoint_max_total, 2097152);
	assert_non_null(strstr(said, "checkpoint rules"));
	free(said);
	settings_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_restores_what_the_run_had),
		cmocka_unit_test(test_checkpoint_rules_are_the_runs),
		cmocka_unit_test(test_flags_win_and_are_not_checked_against_the_journal),
		cmocka_unit_test(test_bad_values_are_refused_with_the_flag_to_use),
		cmocka_unit_test(test_a_named_workspace_is_taken_when_given),
		cmocka_unit_test(test_a_linked_workspace_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
