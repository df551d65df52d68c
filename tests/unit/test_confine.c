/* test_confine — the sandbox's pure parts: modes, the layers line, the policy built for a
 * run (what is hidden, writable, protected), bubblewrap's argv (mounts parents first) and
 * the reading of denials from a command's output. The kernel side is tests/sandbox/. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "testdir.h"
#include "xalloc.h"

static void test_modes_and_line(void **state)
{
	struct confine_layers l = {.bwrap = true, .landlock_abi = 6, .seccomp = true};
	char *line;

	(void)state;
	assert_int_equal(confine_mode_parse("workspace-write"), CONFINE_WORKSPACE_WRITE);
	assert_int_equal(confine_mode_parse("read-only"), CONFINE_READ_ONLY);
	assert_int_equal(confine_mode_parse("off"), CONFINE_OFF);
	assert_int_equal(confine_mode_parse("jail"), -1);
	line = confine_layers_line(CONFINE_WORKSPACE_WRITE, false, &l);
	assert_string_equal(line, "sandbox: workspace-write, network off \xe2\x80\x94 bubblewrap + "
				  "Landlock v6 + seccomp");
	free(line);
	l = (struct confine_layers){.seccomp = true};
	assert_false(confine_layers_any(&l));
	line = confine_layers_line(CONFINE_READ_ONLY, true, &l);
	assert_non_null(strstr(line, "read-only, network on"));
	assert_non_null(strstr(line, "no layer confines files here, only seccomp"));
	assert_non_null(strstr(line, "every command asks at the shell gate"));
	free(line);
	line = confine_layers_line(CONFINE_OFF, false, NULL);
	assert_non_null(strstr(line, "sandbox: off"));
	free(line);
}

static size_t index_of(const struct strvec *v, const char *a, const char *b)
{
	for (size_t i = 0; i + 1 < v->n; i++)
		if (!strcmp(v->v[i], a) && !strcmp(v->v[i + 1], b))
			return i;
	fail_msg("no \"%s %s\" in the argv", a, b);
	return 0;
}

static bool listed(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

static void mk(const char *path)
{
	assert_int_equal(mkdir(path, 0700), 0);
}

/* The default workspace lies in the runs folder: hidden, but the workspace bound back in
 * after it; .git/hooks read-only; what does not exist gets no mount. */
static void test_policy_and_argv(void **state)
{
	char *made = testdir_new("confine"), *tmp = realpath(made, NULL);
	char *home = xasprintf("%s/home", tmp);
	char *runs = xasprintf("%s/runs", tmp), *run = xasprintf("%s/r1", runs);
	char *ws = xasprintf("%s/workspace", run), *git = xasprintf("%s/.git", ws);
	char *hooks = xasprintf("%s/hooks", git), *ssh = xasprintf("%s/.ssh", home);
	char *tmpdir = xasprintf("%s/tmp", tmp);
	struct strvec dirs = STRVEC_INIT, argv = STRVEC_INIT;
	struct confine_policy p;
	struct confine_layers l = {.bwrap = true, .landlock_abi = 4, .seccomp = true,
				   .bwrap_path = "/usr/bin/bwrap", .helper = "/x/pevtui-confine"};
	char *cmd[] = {"/bin/sh", "-c", "true", NULL};

	(void)state;
	mk(home);
	mk(ssh);
	mk(runs);
	mk(run);
	mk(ws);
	mk(git);
	mk(hooks);
	mk(tmpdir);
	strvec_push(&dirs, runs);
	confine_policy_init(&p, CONFINE_WORKSPACE_WRITE, false, ws, tmpdir, run, home, &dirs,
			    NULL, NULL);
	assert_true(listed(&p.writable, ws));
	assert_true(listed(&p.writable, tmpdir));
	assert_true(listed(&p.hidden, ssh));
	assert_true(listed(&p.hidden, runs));
	assert_true(listed(&p.protected, hooks));
	/* no .git/config, no .mcp.json: nothing to protect (a mount would make them) */
	assert_int_equal(p.protected.n, 1);
	confine_argv(&p, &l, cmd, &argv);
	assert_string_equal(argv.v[0], "/usr/bin/bwrap");
	assert_true(index_of(&argv, "--tmpfs", runs) < index_of(&argv, "--bind", ws));
	assert_true(index_of(&argv, "--bind", ws) < index_of(&argv, "--ro-bind", hooks));
	/* the hidden folder is made read-only only once the workspace is bound into it */
	assert_true(index_of(&argv, "--bind", ws) < index_of(&argv, "--remount-ro", runs));
	assert_true(listed(&argv, "--unshare-net"));
	index_of(&argv, "--write", ws);
	index_of(&argv, "--hide", ssh);
	assert_true(listed(&argv, "--seccomp"));
	assert_string_equal(argv.v[argv.n - 1], "true");
	confine_policy_release(&p);

	/* read-only, network on: the workspace is not writable, the network not cut */
	confine_policy_init(&p, CONFINE_READ_ONLY, true, ws, tmpdir, run, home, &dirs, NULL,
			    NULL);
	assert_false(listed(&p.writable, ws));
	confine_argv(&p, &l, cmd, &argv);
	assert_false(listed(&argv, "--unshare-net"));
	assert_true(listed(&argv, "--network"));
	confine_policy_release(&p);

	/* off: the command as it is */
	confine_policy_init(&p, CONFINE_OFF, false, ws, NULL, run, home, &dirs, NULL, NULL);
	confine_argv(&p, &l, cmd, &argv);
	assert_int_equal(argv.n, 3);
	assert_string_equal(argv.v[0], "/bin/sh");
	confine_policy_release(&p);

	strvec_clear(&argv);
	strvec_clear(&dirs);
	testdir_remove(tmp);
	free(made);
	free(tmpdir);
	free(ssh);
	free(hooks);
	free(git);
	free(ws);
	free(run);
	free(runs);
	free(home);
	free(tmp);
}

static void test_denials(void **state)
{
	struct strbuf note = STRBUF_INIT;

	(void)state;
	strbuf_init(&note);
	assert_false(confine_denial("all good\nexit 0\n", &note));
	assert_int_equal(note.len, 0);
	assert_true(confine_denial("/bin/sh: 1: cannot create /etc/x: Permission denied\n"
				   "touch: cannot touch '/usr/y': Read-only file system\n"
				   "PermissionError: [Errno 1] Operation not permitted: '/srv/z'\n"
				   "/bin/sh: 1: cannot create /etc/x: Permission denied\n",
				   &note));
	assert_string_equal(note.buf, "sandbox denied: /etc/x (Permission denied)\n"
				      "sandbox denied: /usr/y (Read-only file system)\n"
				      "sandbox denied: /srv/z (Operation not permitted)");
	strbuf_reset(&note);
	assert_true(confine_denial("ptrace: Operation not permitted\n", &note));
	assert_string_equal(note.buf, "sandbox denied: an operation (Operation not permitted)");
	strbuf_release(&note);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes_and_line),
		cmocka_unit_test(test_policy_and_argv),
		cmocka_unit_test(test_denials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
