/* test_settings — defaults, the INI config file and its messages, XDG default paths. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"
#include "settings.h"
#include "xalloc.h"

struct fx {
	char dir[64];
	char *path;
};

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	strcpy(fx->dir, "/tmp/pevtui-test-settings-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	fx->path = xasprintf("%s/config", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx->path);
	free(fx);
	return 0;
}

static void write_cfg(struct fx *fx, const char *text)
{
	FILE *f = fopen(fx->path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads text; returns the error (caller frees) or NULL when it loaded. */
static char *load(struct fx *fx, struct settings *s, const char *text)
{
	char *err = NULL;
	write_cfg(fx, text);
	bool ok = settings_load_file(s, fx->path, &err);
	assert_true(ok == (err == NULL));
	return err;
}

static void test_defaults(void **state)
{
	(void)state;
	struct settings s;
	settings_init(&s);
	assert_int_equal(s.max_retries, 2);
	assert_int_equal(s.max_replans, 2);
	assert_int_equal(s.parallel, 3);
	assert_true(s.confidence_threshold == 0.5);
	assert_int_equal(s.sim_delay_ms, 20);
	assert_int_equal(s.gates, GATES_DEFAULT);
	assert_int_equal(s.shell_timeout_s, 60);
	assert_int_equal(s.http_max_bytes, 1024 * 1024);
	assert_true(s.mouse);
	assert_true(s.checkpoints);
	assert_int_equal(s.shell_allow.n, 0);
	assert_true(s.budget_usd == 0);
	assert_null(s.provider);
	assert_null(s.api_key_cmd);
	for (int r = 0; r < ROLE__COUNT; r++)
		assert_null(s.model[r]);
	settings_release(&s);
}

static void test_checkpoints_off(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	char *err;

	settings_init(&s);
	assert_null(load(fx, &s, "[policy]\ncheckpoints = off\n"));
	assert_false(s.checkpoints);
	assert_null(load(fx, &s, "[policy]\ncheckpoints = on\n"));
	assert_true(s.checkpoints);
	err = load(fx, &s, "[policy]\ncheckpoints = maybe\n");
	assert_non_null(err);
	free(err);
	settings_release(&s);
}

static void test_checkpoints_section(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	char *err;

	settings_init(&s);
	assert_int_equal(s.checkpoint_max_file, 50 << 20);
	assert_int_equal(s.checkpoint_max_total, 1 << 30);
	assert_null(load(fx, &s,
	                 "[checkpoints]\nexclude = node_modules/, *.log ,/build\n"
	                 "max_file = 4096\nmax_total = 2097152\n"));
	assert_int_equal(s.checkpoint_exclude.n, 3);
	assert_string_equal(s.checkpoint_exclude.v[0], "node_modules/");
	assert_string_equal(s.checkpoint_exclude.v[1], "*.log");
	assert_string_equal(s.checkpoint_exclude.v[2], "/build");
	assert_int_equal(s.checkpoint_max_file, 4096);
	assert_int_equal(s.checkpoint_max_total, 2097152);
	err = load(fx, &s, "[checkpoints]\nmax_file = 12\n");
	assert_non_null(err);
	assert_non_null(strstr(err, "max_file"));
	assert_non_null(strstr(err, "1024"));
	free(err);
	settings_release(&s);
}

static void test_good_file(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	s.theme = xstrdup("from-flags-before");
	char *err = load(fx, &s,
			 "; pevtui config\n"
			 "[provider]\n"
			 "name = openai\n"
			 "base_url = http://localhost:11434/v1\n"
			 "api_key_cmd = pass show openai\n"
			 "\n"
			 "[models]\n"
			 "all = small-model\n"
			 "verifier = \"big-model\"\n"
			 "[policy]\n"
			 "  max_retries = 4\n"
			 "max_replans = 0\n"
			 "parallel = 8\n"
			 "budget = 1.25\n"
			 "confidence_threshold = 0.75\n"
			 "chaos = 0.1\n"
			 "# comment\n"
			 "[gates]\n"
			 "list = plan,step\n"
			 "[ui]\n"
			 "theme = mono\n"
			 "mouse = off\n");
	assert_null(err);
	assert_false(s.mouse);
	assert_string_equal(s.provider, "openai");
	assert_string_equal(s.base_url, "http://localhost:11434/v1");
	assert_string_equal(s.api_key_cmd, "pass show openai");
	assert_string_equal(s.model[ROLE_PLANNER], "small-model");
	assert_string_equal(s.model[ROLE_EXECUTOR], "small-model");
	assert_string_equal(s.model[ROLE_VERIFIER], "big-model");
	assert_int_equal(s.max_retries, 4);
	assert_int_equal(s.max_replans, 0);
	assert_int_equal(s.parallel, 8);
	assert_true(s.budget_usd == 1.25);
	assert_true(s.confidence_threshold == 0.75);
	assert_true(s.chaos == 0.1);
	assert_int_equal(s.gates, GATE_MASK(GATE_PLAN) | GATE_MASK(GATE_STEP));
	assert_string_equal(s.theme, "mono");
	assert_int_equal(s.sim_delay_ms, 20); /* not in the file: unchanged */
	settings_release(&s);
	assert_null(s.theme);
	assert_null(s.model[ROLE_VERIFIER]);
}

static void test_only_present_keys_change(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	s.max_retries = 7;
	s.model[ROLE_PLANNER] = xstrdup("kept");
	char *err = load(fx, &s, "[policy]\nparallel = 1\n[ui]\ntheme =\n");
	assert_null(err);
	assert_int_equal(s.max_retries, 7);
	assert_int_equal(s.parallel, 1);
	assert_string_equal(s.model[ROLE_PLANNER], "kept");
	assert_null(s.theme); /* empty means "the default" */
	settings_release(&s);
}

static void test_missing_file(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	char *err = NULL;
	char *p = xasprintf("%s/nope", fx->dir);
	assert_true(settings_load_file(&s, p, &err));
	assert_null(err);
	assert_int_equal(s.max_retries, 2);
	free(p);
	settings_release(&s);
}

static void test_error_messages(void **state)
{
	struct fx *fx = *state;
	static const struct {
		const char *text;
		int line;
		const char *msg;
	} cases[] = {
		{"[policy]\nmax_retries = 1\nfoo = 2\n", 3, "unknown key \"foo\" in [policy]"},
		{"[policy]\nmax_retries = x\n", 2,
		 "max_retries must be a whole number from 0 to 10, not \"x\""},
		{"[policy]\n\nmax_retries = -1\n", 3,
		 "max_retries must be a whole number from 0 to 10, not \"-1\""},
		{"[policy]\nmax_retries = 11\n", 2,
		 "max_retries must be a whole number from 0 to 10, not \"11\""},
		{"[policy]\nmax_retries = 2.5\n", 2,
		 "max_retries must be a whole number from 0 to 10, not \"2.5\""},
		{"[policy]\nparallel = 0\n", 2,
		 "parallel must be a whole number from 1 to 32, not \"0\""},
		{"[policy]\nconfidence_threshold = 1.5\n", 2,
		 "confidence_threshold must be a number from 0 to 1, not \"1.5\""},
		{"[policy]\nconfidence_threshold = nan\n", 2,
		 "confidence_threshold must be a number from 0 to 1, not \"nan\""},
		{"[policy]\nbudget = -3\n", 2,
		 "budget must be a number of US dollars from 0 (no budget) to 1000000, not \"-3\""},
		{"[policy]\nchaos = lots\n", 2,
		 "chaos must be a probability from 0 to 1, not \"lots\""},
		{"[ui]\ntheme = x\n[colors]\nfg = red\n", 3,
		 "unknown section [colors]; the sections are [provider], [models], [policy], "
		 "[gates], [ui], [tools], [checkpoints] and [sandbox]"},
		{"theme = x\n", 1,
		 "key \"theme\" is outside any section; put it under [provider], [models], "
		 "[policy], [gates], [ui], [tools], [checkpoints] or [sandbox]"},
		{"[sandbox]\nmode = jail\n", 2,
		 "mode must be workspace-write, read-only or off, not \"jail\""},
		{"[tools]\nshell_timeout = 0\n", 2,
		 "shell_timeout must be a whole number of seconds from 1 to 3600, not \"0\""},
		{"[tools]\nshell_timeout = 5s\n", 2,
		 "shell_timeout must be a whole number of seconds from 1 to 3600, not \"5s\""},
		{"[tools]\nhttp_max_bytes = 100\n", 2,
		 "http_max_bytes must be a whole number of bytes from 1024 to 104857600, not "
		 "\"100\""},
		{"[tools]\nshell_deny = rm\n", 2, "unknown key \"shell_deny\" in [tools]"},
		{"[provider]\nname = gemini\n", 2,
		 "name must be anthropic, openai or sim, not \"gemini\""},
		{"[models]\nplanner = a\ncritic = b\n", 3, "unknown key \"critic\" in [models]"},
		{"[ui]\nthis line has no equals sign\n", 2,
		 "cannot read this line; expected \"[section]\" or \"key = value\""},
		/* the first problem is the one reported, whichever kind it is */
		{"[ui]\nbad line\n[policy]\nfoo = 1\n", 2,
		 "cannot read this line; expected \"[section]\" or \"key = value\""},
		{"[policy]\nfoo = 1\nbad line\n", 2, "unknown key \"foo\" in [policy]"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct settings s;
		settings_init(&s);
		char *err = load(fx, &s, cases[i].text);
		char *want = xasprintf("%s:%d: %s", fx->path, cases[i].line, cases[i].msg);
		if (!err || strcmp(err, want) != 0)
			fail_msg("case %zu: got \"%s\"\nwanted \"%s\"", i, err ? err : "(no error)",
				 want);
		free(want);
		free(err);
		settings_release(&s);
	}
}

static void test_bad_gate_list(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	char *err = load(fx, &s, "[gates]\nlist = plan,sometimes\n");
	assert_non_null(err);
	char *prefix = xasprintf("%s:2: ", fx->path);
	assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
	assert_non_null(strstr(err, "sometimes"));
	assert_int_equal(s.gates, GATES_DEFAULT);
	free(prefix);
	free(err);
	settings_release(&s);
}

static void test_api_key_refused(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	char *err = load(fx, &s, "[provider]\nname = anthropic\napi_key = sk-ant-SECRET123\n");
	assert_non_null(err);
	char *want = xasprintf("%s:3: an API key is never read from a file; set api_key_cmd to "
			       "a command that prints it, or use ANTHROPIC_API_KEY / "
			       "OPENAI_API_KEY",
			       fx->path);
	assert_string_equal(err, want);
	assert_null(strstr(err, "SECRET"));
	free(want);
	free(err);

	/* a pasted key is not echoed back as an "unknown key" either */
	err = load(fx, &s, "[provider]\nsk-ant-api03-SECRETSECRETSECRETSECRET = 1\n");
	assert_non_null(err);
	assert_null(strstr(err, "SECRET"));
	assert_non_null(strstr(err, ":2: unknown key in [provider]"));
	free(err);
	settings_release(&s);
}

static void test_long_line(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	char *text = xmalloc(2100);
	strcpy(text, "[provider]\nbase_url = http://x/");
	size_t n = strlen(text);
	memset(text + n, 'a', 2000);
	strcpy(text + n + 2000, "\n[policy]\nfoo = 1\n");
	char *err = load(fx, &s, text);
	assert_non_null(err);
	char *prefix = xasprintf("%s:2: the line is longer than", fx->path);
	assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
	assert_null(s.base_url);
	free(prefix);
	free(err);
	free(text);
	settings_release(&s);
}

static void test_xdg_paths(void **state)
{
	(void)state;
	char *p;
	setenv("HOME", "/home/tester", 1);

	setenv("XDG_CONFIG_HOME", "/xdg/cfg", 1);
	p = settings_default_config_path();
	assert_string_equal(p, "/xdg/cfg/pevtui/config");
	free(p);
	unsetenv("XDG_CONFIG_HOME");
	p = settings_default_config_path();
	assert_string_equal(p, "/home/tester/.config/pevtui/config");
	free(p);
	setenv("XDG_CONFIG_HOME", "relative/cfg", 1); /* ignored, as the XDG spec says */
	p = settings_default_config_path();
	assert_string_equal(p, "/home/tester/.config/pevtui/config");
	free(p);
	setenv("XDG_CONFIG_HOME", "", 1);
	p = settings_default_config_path();
	assert_string_equal(p, "/home/tester/.config/pevtui/config");
	free(p);

	setenv("XDG_DATA_HOME", "/xdg/data", 1);
	p = settings_default_runs_dir();
	assert_string_equal(p, "/xdg/data/pevtui/runs");
	free(p);
	unsetenv("XDG_DATA_HOME");
	p = settings_default_runs_dir();
	assert_string_equal(p, "/home/tester/.local/share/pevtui/runs");
	free(p);

	/* without HOME the password database still knows the home directory */
	unsetenv("HOME");
	p = settings_default_runs_dir();
	if (p)
		assert_true(p[0] == '/' && strstr(p, "/.local/share/pevtui/runs"));
	free(p);
}

static void test_tools_section(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	char *err = load(fx, &s,
			 "[tools]\n"
			 "shell_allow = git status,  make test , ,ls\n"
			 "shell_timeout = 120\n"
			 "http_max_bytes = 2048\n");
	assert_null(err);
	assert_int_equal(s.shell_allow.n, 3);
	assert_string_equal(s.shell_allow.v[0], "git status");
	assert_string_equal(s.shell_allow.v[1], "make test");
	assert_string_equal(s.shell_allow.v[2], "ls");
	assert_int_equal(s.shell_timeout_s, 120);
	assert_int_equal(s.http_max_bytes, 2048);
	/* a later file replaces the list; an empty value empties it */
	err = load(fx, &s, "[tools]\nshell_allow = \"cargo check\"\n");
	assert_null(err);
	assert_int_equal(s.shell_allow.n, 1);
	assert_string_equal(s.shell_allow.v[0], "cargo check");
	assert_int_equal(s.shell_timeout_s, 120);
	err = load(fx, &s, "[tools]\nshell_allow =\n");
	assert_null(err);
	assert_int_equal(s.shell_allow.n, 0);
	settings_release(&s);
	assert_null(s.shell_allow.v);
}

static void test_http_allow_hosts(void **state)
{
	struct fx *fx = *state;
	struct settings s;
	settings_init(&s);
	assert_int_equal(s.http_allow_hosts.n, 0);
	char *err = load(fx, &s,
			 "[tools]\n"
			 "http_allow_hosts = localhost, 192.168.1.10 ,[::1], nas.home.\n");
	assert_null(err);
	assert_int_equal(s.http_allow_hosts.n, 4);
	assert_string_equal(s.http_allow_hosts.v[0], "localhost");
	assert_string_equal(s.http_allow_hosts.v[1], "192.168.1.10");
	assert_string_equal(s.http_allow_hosts.v[2], "[::1]");
	assert_string_equal(s.http_allow_hosts.v[3], "nas.home.");

	/* A URL or host:port would never match: refused with the line, the list kept. */
	const char *bad[] = {"http://localhost:8080/", "localhost:8080", "*.lan", "a b"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = xasprintf("[tools]\n\nhttp_allow_hosts = ok.lan, %s\n", bad[i]);
		err = load(fx, &s, text);
		assert_non_null(err);
		assert_non_null(strstr(err, ":3: http_allow_hosts: \""));
		assert_non_null(strstr(err, "is not a host name or address"));
		free(err);
		free(text);
		assert_int_equal(s.http_allow_hosts.n, 4);
	}
	err = load(fx, &s, "[tools]\nhttp_allow_hosts =\n");
	assert_null(err);
	assert_int_equal(s.http_allow_hosts.n, 0);
	err = load(fx, &s, "[tools]\nhttp_allow_hosts = printer\n");
	assert_null(err);
	settings_release(&s);
	assert_null(s.http_allow_hosts.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test_setup_teardown(test_good_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoints_section, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_present_keys_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_messages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_gate_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_key_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_line, setup, teardown),
		cmocka_unit_test(test_xdg_paths),
		cmocka_unit_test_setup_teardown(test_tools_section, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_allow_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoints_off, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
