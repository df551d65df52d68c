/* test_tools_shell — run_shell: the gate, the allow-list, limits, and no stray processes. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sandbox.h"
#include "strbuf.h"
#include "tool.h"
#include "testdir.h"
#include "xalloc.h"

struct fx {
	char top[64];
	char *ws;
	struct tool_env env;
	struct strvec allow;
	atomic_bool cancel;
	/* the gate hook's record */
	int gate_calls;
	char *gate_saw;
	bool gate_answer;
	const char *gate_replace; /* non-NULL: the operator's edit */
};

static bool gate(void *ctx, char **command)
{
	struct fx *fx = ctx;
	fx->gate_calls++;
	free(fx->gate_saw);
	fx->gate_saw = xstrdup(*command);
	if (fx->gate_replace) {
		free(*command);
		*command = xstrdup(fx->gate_replace);
	}
	return fx->gate_answer;
}

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	strcpy(fx->top, "/tmp/pevtui-test-shell-XXXXXX");
	if (!mkdtemp(fx->top))
		return -1;
	fx->ws = xasprintf("%s/ws", fx->top);
	char *err = NULL;
	fx->env.ws_fd = sandbox_open_root(fx->ws, &err);
	fx->env.ws_path = fx->ws;
	fx->env.hook_ctx = fx;
	fx->env.shell_allow = &fx->allow;
	atomic_init(&fx->cancel, false);
	fx->env.cancel = &fx->cancel;
	if (fx->env.ws_fd < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	close(fx->env.ws_fd);
	assert_true(testdir_remove(fx->top));
	free(fx->ws);
	free(fx->gate_saw);
	strvec_clear(&fx->allow);
	free(fx);
	return 0;
}

static char *run(struct fx *fx, const char *json, bool *ok)
{
	const struct tool_def *t = tool_find("run_shell");
	assert_non_null(t);
	cJSON *in = cJSON_Parse(json);
	assert_non_null(in);
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	*ok = t->run(&fx->env, in, &out);
	cJSON_Delete(in);
	return strbuf_detach(&out);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

/* Processes in group pgid that are still running (zombies waiting for a reaper are dead). */
static int live_in_group(pid_t pgid)
{
	DIR *d = opendir("/proc");
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		char line[1024];
		size_t got = fread(line, 1, sizeof(line) - 1, f);
		fclose(f);
		line[got] = '\0';
		char *rp = strrchr(line, ')');
		char st;
		int ppid, pgrp;
		if (rp && sscanf(rp + 1, " %c %d %d", &st, &ppid, &pgrp) == 3 && pgrp == pgid &&
		    st != 'Z' && st != 'X')
			n++;
	}
	closedir(d);
	return n;
}

/* The shell prints "PGID=N"; N, its pid, is its process group (it leads its own session).
 * The command text itself, quoted in the result, holds "PGID=$$", which is skipped. */
static pid_t pid_from(const char *out)
{
	const char *p = out;
	while ((p = strstr(p, "PGID=")) != NULL && !(p[5] >= '0' && p[5] <= '9'))
		p += 5;
	assert_non_null(p);
	long v = strtol(p + 5, NULL, 10);
	assert_true(v > 1);
	return (pid_t)v;
}

static void test_exit_status_and_output(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run(fx,
			"{\"command\":\"echo to-\\\"\\\"out; echo to-\\\"\\\"err >&2; exit 3\"}",
			&ok);
	assert_true(ok); /* a failing command is information, not a tool error */
	assert_non_null(strstr(out, "exit status 3"));
	assert_non_null(strstr(out, "to-out"));
	assert_non_null(strstr(out, "to-err"));
	free(out);
	out = run(fx, "{\"command\":\"true\"}", &ok);
	assert_true(ok);
	assert_non_null(strstr(out, "exit status 0"));
	assert_non_null(strstr(out, "(no output)"));
	free(out);
	out = run(fx, "{\"command\":\"kill -9 $$\"}", &ok);
	assert_true(ok);
	assert_non_null(strstr(out, "killed by signal 9"));
	free(out);
}

static void test_cwd_is_workspace(void **state)
{
	struct fx *fx = *state;
	bool ok;
	/* the test's own cwd is elsewhere; the command must still run in the workspace */
	char *out = run(fx, "{\"command\":\"pwd -P; echo data > made-here.txt\"}", &ok);
	assert_true(ok);
	char real[PATH_MAX];
	assert_non_null(realpath(fx->ws, real));
	assert_non_null(strstr(out, real));
	free(out);
	char *p = xasprintf("%s/made-here.txt", fx->ws);
	assert_int_equal(access(p, F_OK), 0);
	free(p);
}

/* The engine may hold the workspace as an O_PATH descriptor; fchdir must still work. */
static void test_o_path_root(void **state)
{
	struct fx *fx = *state;
	int saved = fx->env.ws_fd;
	fx->env.ws_fd = open(fx->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fx->env.ws_fd >= 0);
	bool ok;
	char *out = run(fx, "{\"command\":\"pwd -P\"}", &ok);
	close(fx->env.ws_fd);
	fx->env.ws_fd = saved;
	assert_true(ok);
	char real[PATH_MAX];
	assert_non_null(realpath(fx->ws, real));
	assert_non_null(strstr(out, real));
	free(out);
	/* and a descriptor that is not a directory at all is a failure, not a crash */
	fx->env.ws_fd = -1;
	out = run(fx, "{\"command\":\"true\"}", &ok);
	fx->env.ws_fd = saved;
	assert_false(ok);
	assert_non_null(strstr(out, "could not start"));
	free(out);
}

static void test_stdin_is_null(void **state)
{
	struct fx *fx = *state;
	bool ok;
	long t0 = now_ms();
	char *out = run(fx, "{\"command\":\"cat; echo after-\\\"\\\"cat\"}", &ok);
	assert_true(ok);
	assert_true(now_ms() - t0 < 5000);
	assert_non_null(strstr(out, "after-cat"));
	free(out);
}

static void test_fds_not_inherited(void **state)
{
	struct fx *fx = *state;
	int fd = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 77), 77);
	bool ok;
	char *out = run(fx, "{\"command\":\"test -e /proc/$$/fd/77 && echo LEA\\\"\\\"KED || echo "
			    "clo\\\"\\\"sed\"}",
			&ok);
	close(77);
	close(fd);
	assert_true(ok);
	assert_null(strstr(out, "LEAKED"));
	assert_non_null(strstr(out, "closed"));
	free(out);
}

/* With stdin closed, the next descriptors opened are 0: the child's set-up must cope. */
static void test_std_stream_closed(void **state)
{
	struct fx *fx = *state;
	int saved = dup(0);
	assert_true(saved >= 0);
	close(0);
	bool ok;
	char *out = run(fx, "{\"command\":\"echo still-\\\"\\\"works; cat\"}", &ok);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	assert_true(ok);
	assert_non_null(strstr(out, "still-works"));
	assert_non_null(strstr(out, "exit status 0"));
	free(out);
}

static void test_secrets_not_passed(void **state)
{
	struct fx *fx = *state;
	setenv("PEVTUI_TEST_API_KEY", "sekrit-value-1", 1);
	setenv("PEVTUI_TEST_PLAIN", "plain-value-2", 1);
	bool ok;
	char *out = run(fx, "{\"command\":\"env\"}", &ok);
	unsetenv("PEVTUI_TEST_API_KEY");
	unsetenv("PEVTUI_TEST_PLAIN");
	assert_true(ok);
	assert_null(strstr(out, "sekrit-value-1"));
	assert_non_null(strstr(out, "plain-value-2"));
	free(out);
}

static void test_timeout_kills_group(void **state)
{
	struct fx *fx = *state;
	bool ok;
	long t0 = now_ms();
	char *out = run(fx, "{\"command\":\"echo PGID=$$; sleep 30 & sleep 30\",\"timeout_s\":1}",
			&ok);
	long took = now_ms() - t0;
	assert_false(ok);
	assert_non_null(strstr(out, "ran out of time after 1 s"));
	assert_true(took >= 1000 && took < 5000);
	pid_t pgid = pid_from(out);
	assert_int_equal(live_in_group(pgid), 0);
	/* and once the orphans' reaper has run, the group is gone altogether */
	int tries = 0;
	while (kill(-pgid, 0) == 0 && tries++ < 100)
		usleep(10000);
	assert_int_equal(kill(-pgid, 0), -1);
	assert_int_equal(errno, ESRCH);
	free(out);
}

static void test_env_timeout_and_input_cannot_raise(void **state)
{
	struct fx *fx = *state;
	fx->env.shell_timeout_s = 1;
	bool ok;
	long t0 = now_ms();
	char *out = run(fx, "{\"command\":\"echo PGID=$$; sleep 30\",\"timeout_s\":100}", &ok);
	assert_false(ok);
	assert_true(now_ms() - t0 < 5000);
	assert_non_null(strstr(out, "after 1 s"));
	assert_int_equal(live_in_group(pid_from(out)), 0);
	free(out);
	out = run(fx, "{\"command\":\"true\",\"timeout_s\":0}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "timeout_s"));
	free(out);
}

static void *cancel_later(void *arg)
{
	struct fx *fx = arg;
	struct timespec ts = {0, 300 * 1000000L};
	nanosleep(&ts, NULL);
	atomic_store(&fx->cancel, true);
	return NULL;
}

static void test_cancel_kills_group(void **state)
{
	struct fx *fx = *state;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cancel_later, fx), 0);
	bool ok;
	long t0 = now_ms();
	char *out = run(fx, "{\"command\":\"echo PGID=$$; sleep 30 & sleep 30\"}", &ok);
	long took = now_ms() - t0;
	pthread_join(th, NULL);
	assert_false(ok);
	assert_non_null(strstr(out, "cancelled"));
	assert_true(took >= 300 && took < 4000);
	assert_int_equal(live_in_group(pid_from(out)), 0);
	free(out);
}

static void test_leftovers_stopped_after_exit(void **state)
{
	struct fx *fx = *state;
	bool ok;
	long t0 = now_ms();
	char *out = run(fx, "{\"command\":\"echo PGID=$$; sleep 30 & echo started\"}", &ok);
	assert_true(ok);
	assert_true(now_ms() - t0 < 4000);
	assert_non_null(strstr(out, "exit status 0"));
	assert_int_equal(live_in_group(pid_from(out)), 0);
	free(out);
}

static void test_output_cap(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run(fx, "{\"command\":\"echo FIRST; head -c 300000 /dev/zero | tr '\\\\0' a; "
			    "echo; echo LAST\"}",
			&ok);
	assert_true(ok);
	assert_true(strlen(out) < TOOL_MAX_OUTPUT + 1024);
	assert_non_null(strstr(out, "FIRST"));
	assert_non_null(strstr(out, "LAST"));
	const char *cut = strstr(out, "[cut: ");
	assert_non_null(cut);
	/* 6 + 300000 + 1 + 5 bytes printed; the note must say how many were cut */
	unsigned long long n = strtoull(cut + 6, NULL, 10);
	assert_int_equal(n, 6 + 300000 + 1 + 5 - TOOL_MAX_OUTPUT);
	free(out);
}

static void test_gate_refusal(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = false;
	bool ok;
	char *out = run(fx, "{\"command\":\"touch refused.txt\"}", &ok);
	assert_false(ok);
	assert_int_equal(fx->gate_calls, 1);
	assert_string_equal(fx->gate_saw, "touch refused.txt");
	assert_string_equal(out, "the operator refused to run: touch refused.txt");
	char *p = xasprintf("%s/refused.txt", fx->ws);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
	free(out);
}

static void test_gate_edit_replaces_command(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = true;
	fx->gate_replace = "echo edited-\"\"by-operator";
	bool ok;
	char *out = run(fx, "{\"command\":\"echo original-from-model\"}", &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, 1);
	assert_string_equal(fx->gate_saw, "echo original-from-model");
	assert_non_null(strstr(out, "edited-by-operator"));
	assert_null(strstr(out, "original-from-model"));
	free(out);
}

static void test_allow_list(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = false;
	strvec_push(&fx->allow, "echo");
	strvec_push(&fx->allow, "git status");
	bool ok;
	char *out = run(fx, "{\"command\":\"  echo allowed-\\\"\\\"word\"}", &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, 0);
	assert_non_null(strstr(out, "allowed-word"));
	free(out);
	/* whole words only */
	out = run(fx, "{\"command\":\"echox hi\"}", &ok);
	assert_false(ok);
	assert_int_equal(fx->gate_calls, 1);
	free(out);
	out = run(fx, "{\"command\":\"git statusx\"}", &ok);
	assert_false(ok);
	assert_int_equal(fx->gate_calls, 2);
	free(out);
	/* a prefix never lets a chained command through */
	const char *chained[] = {"{\"command\":\"echo a; touch x\"}",
				 "{\"command\":\"echo a && touch x\"}",
				 "{\"command\":\"echo a | sh\"}",
				 "{\"command\":\"echo $(touch x)\"}",
				 "{\"command\":\"echo `touch x`\"}",
				 "{\"command\":\"echo a > x\"}",
				 "{\"command\":\"echo a\\ntouch x\"}"};
	for (size_t i = 0; i < sizeof(chained) / sizeof(chained[0]); i++) {
		int before = fx->gate_calls;
		out = run(fx, chained[i], &ok);
		assert_false(ok);
		assert_int_equal(fx->gate_calls, before + 1);
		assert_non_null(strstr(out, "the operator refused to run: "));
		free(out);
	}
	char *p = xasprintf("%s/x", fx->ws);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
}

static void test_bad_input(void **state)
{
	struct fx *fx = *state;
	bool ok;
	const char *bad[] = {"{}", "{\"command\":\"\"}", "{\"command\":7}", "[1]",
			     "{\"command\":\"true\",\"timeout_s\":\"x\"}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = run(fx, bad[i], &ok);
		assert_false(ok);
		assert_true(strlen(out) > 10);
		free(out);
	}
	/* no input object at all */
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	assert_false(tool_find("run_shell")->run(&fx->env, NULL, &out));
	strbuf_release(&out);
}

int main(void)
{
	/* The tests send signals to process groups; a stray SIGPIPE must not end them. */
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit_status_and_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cwd_is_workspace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_o_path_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stdin_is_null, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fds_not_inherited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_std_stream_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_secrets_not_passed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_timeout_and_input_cannot_raise, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cancel_kills_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leftovers_stopped_after_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_refusal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_edit_replaces_command, setup, teardown),
		cmocka_unit_test_setup_teardown(test_allow_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
