/* test_secrets — credentials out of the environment (the block /proc/PID/environ shows
 * included), the process closed to others: agent/secrets.h. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "secrets.h"

#define EXEC_TOKEN "tok-unit-55e1c9"

static void test_names(void **state)
{
	(void)state;
	assert_true(secret_env_name("ANTHROPIC_API_KEY=x"));
	assert_true(secret_env_name("github_token"));
	assert_true(secret_env_name("DB_PASSWD=y"));
	assert_false(secret_env_name("PATH=/bin"));
	assert_false(secret_env_name("KE=Y")); /* only the name counts */
	assert_true(secret_env_withheld("SSH_AUTH_SOCK=/tmp/a"));
	assert_false(secret_env_withheld("SSH_AUTH_SOCKET=/tmp/a"));
}

/* Variables set at run time: removed, their text blanked where it lay, others kept. */
static void test_scrub_setenv(void **state)
{
	char *v;

	(void)state;
	assert_int_equal(setenv("PEVTEST_API_KEY", "sk-unit-secret", 1), 0);
	assert_int_equal(setenv("PEVTEST_PLAIN", "kept", 1), 0);
	v = getenv("PEVTEST_API_KEY");
	assert_non_null(v);
	assert_true(secrets_scrub_env() >= 1);
	assert_null(getenv("PEVTEST_API_KEY"));
	assert_string_equal(v, ""); /* glibc keeps setenv's strings: blanked, not freed */
	assert_string_equal(getenv("PEVTEST_PLAIN"), "kept");
	assert_int_equal(secrets_scrub_env(), 0); /* nothing left to remove */
}

/* The child of test_scrub_exec: scrubs, then looks for the token where the kernel keeps
 * the environment it was started with. Exit 0: gone; 1: still there; 2: cannot tell. */
static int exec_child(void)
{
	char buf[65536];
	ssize_t n, len = 0;
	int fd;

	if (!getenv("PEVTEST_SERVICE_TOKEN"))
		return 2;
	secrets_scrub_env();
	if (getenv("PEVTEST_SERVICE_TOKEN"))
		return 1;
	fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 2;
	while (len < (ssize_t)sizeof(buf) &&
	       (n = read(fd, buf + len, sizeof(buf) - (size_t)len)) > 0)
		len += n;
	close(fd);
	return memmem(buf, (size_t)len, EXEC_TOKEN, strlen(EXEC_TOKEN)) ? 1 : 0;
}

/* A variable the process was started with: gone from /proc/self/environ too. */
static void test_scrub_exec(void **state)
{
	char *argv[] = {"test_secrets", "--exec-child", NULL};
	char *envp[] = {"PEVTEST_SERVICE_TOKEN=" EXEC_TOKEN, "PATH=/usr/bin:/bin", NULL};
	int status;
	pid_t pid;

	(void)state;
	if (access("/proc/self/environ", R_OK) != 0)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execve("/proc/self/exe", argv, envp);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_harden(void **state)
{
	struct rlimit core;
	char *warning = (char *)"unset";

	(void)state;
	secrets_harden(&warning);
	assert_null(warning);
	assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	assert_int_equal(getrlimit(RLIMIT_CORE, &core), 0);
	assert_int_equal(core.rlim_cur, 0);
	assert_int_equal(core.rlim_max, 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_scrub_setenv),
		cmocka_unit_test(test_scrub_exec),
		cmocka_unit_test(test_harden),
	};

	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return exec_child();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
