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
#include <sys/wait.h>
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
	char *gate_why, *gate_prefix, *gate_cwd; /* what the gate was shown besides */
	int gate_timeout_s;
};

static bool gate(void *ctx, char **command, const struct shell_ask *ask)
{
	struct fx *fx = ctx;
	fx->gate_calls++;
	free(fx->gate_saw);
	fx->gate_saw = xstrdup(*command);
	free(fx->gate_why);
	free(fx->gate_prefix);
	free(fx->gate_cwd);
	fx->gate_why = xstrdup(ask->allow_why);
	fx->gate_prefix = xstrdup(ask->allow_prefix);
	fx->gate_cwd = xstrdup(ask->cwd);
	fx->gate_timeout_s = ask->timeout_s;
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
	free(fx->gate_why);
	free(fx->gate_prefix);
	free(fx->gate_cwd);
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

/* Fails with the whole text when `want` is not in it. */
static void assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("wanted \"%s\" in:\n%s", want, text);
}

/* Runs {"command": cmd} (and "timeout_s" when > 0) built with cJSON, so cmd may hold any
 * bytes. */
static char *run_cmd(struct fx *fx, const char *cmd, int timeout_s, bool *ok)
{
	cJSON *in = cJSON_CreateObject();
	assert_non_null(cJSON_AddStringToObject(in, "command", cmd));
	if (timeout_s > 0)
		assert_non_null(cJSON_AddNumberToObject(in, "timeout_s", timeout_s));
	char *json = cJSON_PrintUnformatted(in);
	cJSON_Delete(in);
	char *out = run(fx, json, ok);
	cJSON_free(json);
	return out;
}

static void put_file(struct fx *fx, const char *name, const char *text)
{
	char *p = xasprintf("%s/%s", fx->ws, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	free(p);
}

static bool ws_exists(struct fx *fx, const char *name)
{
	char *p = xasprintf("%s/%s", fx->ws, name);
	bool there = access(p, F_OK) == 0;
	free(p);
	return there;
}

/* The pid a command wrote to a file in the workspace; 0 when there is none yet. */
static pid_t ws_pid(struct fx *fx, const char *name)
{
	char *p = xasprintf("%s/%s", fx->ws, name);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return 0;
	long v = 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = 0;
	fclose(f);
	return (pid_t)v;
}

/* Waits, at most 10 s, until a command has written a pid to the named file. */
static pid_t wait_ws_pid(struct fx *fx, const char *name)
{
	pid_t pid = 0;
	for (int tries = 0; tries < 1000 && (pid = ws_pid(fx, name)) <= 0; tries++)
		usleep(10000);
	return pid;
}

static bool pid_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
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
	/* The operator's agents and sessions are not handed over either. */
	setenv("SSH_AUTH_SOCK", "/tmp/ssh-agent-value-3", 1);
	setenv("TMUX", "/tmp/tmux-value-4,1,0", 1);
	bool ok;
	char *out = run(fx, "{\"command\":\"env\"}", &ok);
	unsetenv("PEVTUI_TEST_API_KEY");
	unsetenv("PEVTUI_TEST_PLAIN");
	unsetenv("SSH_AUTH_SOCK");
	unsetenv("TMUX");
	assert_true(ok);
	assert_null(strstr(out, "sekrit-value-1"));
	assert_null(strstr(out, "ssh-agent-value-3"));
	assert_null(strstr(out, "tmux-value-4"));
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
	/* and reaped too, by the keeper before run_shell returned: the group is gone */
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
	strvec_push(&fx->allow, "cat");
	put_file(fx, "words.txt", "allowed-word\n");
	bool ok;
	char *out = run(fx, "{\"command\":\"  cat words.txt\"}", &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, 0);
	assert_has(out, "exit status 0\nallowed-word");
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
		assert_has(out, "the operator refused to run: ");
		free(out);
	}
	char *p = xasprintf("%s/x", fx->ws);
	assert_int_not_equal(access(p, F_OK), 0);
	free(p);
}

/* With an allow-listed "grep", only plain words over workspace files skip the gate. */
static void test_allow_list_plain_words_only(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = false;
	strvec_push(&fx->allow, "grep");
	put_file(fx, "notes.md", "foo in notes\n");
	char *sub = xasprintf("%s/sub", fx->ws);
	assert_int_equal(mkdir(sub, 0700), 0);
	free(sub);
	put_file(fx, "sub/notes.md", "foo in sub\n");
	const char *gated[] = {
		"grep -a -h -o OPENAI_API_KEY=[^[:cntrl:]]* /proc/self/../*/environ",
		"grep foo *.md",
		"grep foo note?.md",
		"grep foo [n]otes.md",
		"grep foo {notes,x}.md",
		"grep foo ~/notes.md",
		"grep 'foo' notes.md",
		"grep \"foo\" notes.md",
		"grep foo\\ in notes.md",
		"grep foo notes.md #",
		"grep ! notes.md",
		"grep foo notes.md ^x",
		"grep\tfoo notes.md",
		"grep foo notes.md\n",
		"grep foo /etc/passwd",
		"grep foo ../notes.md",
		"grep foo sub/../../notes.md",
		"grep -f/etc/passwd notes.md",
		"grep --file=/etc/passwd notes.md",
		"grep --file=sub/notes.md notes.md",
		"grep foo if=/etc/passwd",
		"grep foo host:/etc/passwd",
		"grep foo sub//notes.md",
	};
	bool ok;
	for (size_t i = 0; i < sizeof(gated) / sizeof(gated[0]); i++) {
		int before = fx->gate_calls;
		char *out = run_cmd(fx, gated[i], 0, &ok);
		assert_false(ok);
		if (fx->gate_calls != before + 1)
			fail_msg("the gate was not asked for: %s", gated[i]);
		assert_string_equal(fx->gate_saw, gated[i]);
		assert_has(out, "the operator refused to run: ");
		free(out);
	}
	int before = fx->gate_calls;
	char *out = run_cmd(fx, "grep foo notes.md", 0, &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, before);
	assert_has(out, "exit status 0\nfoo in notes");
	free(out);
	out = run_cmd(fx, "grep -n -e foo sub/notes.md ./notes.md", 0, &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, before);
	assert_has(out, "sub/notes.md:1:foo in sub");
	assert_has(out, "./notes.md:1:foo in notes");
	free(out);
}

/* The gate is told where the command runs, its time limit and why the allow list did not
 * let it through, in a few words. */
static void test_gate_is_told_why(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = false;
	fx->env.shell_timeout_s = 30;
	bool ok;
	char *out = run_cmd(fx, "ls", 0, &ok);
	assert_int_equal(fx->gate_calls, 1);
	assert_string_equal(fx->gate_why, "the allow list is empty");
	assert_null(fx->gate_prefix);
	assert_string_equal(fx->gate_cwd, fx->ws);
	assert_int_equal(fx->gate_timeout_s, 30);
	free(out);
	strvec_push(&fx->allow, "grep ");
	strvec_push(&fx->allow, "git status");
	const struct {
		const char *cmd, *prefix, *why;
		int timeout_s;
	} cases[] = {
		{"ls -l", NULL, "not on the allow list", 0},
		{"grep foo *.md", "grep", "holds a glob (* or ?)", 5},
		{"grep foo a.md; rm -rf .", "grep", "chains commands", 0},
		{"grep foo a.md | sh", "grep", "holds a pipe", 0},
		{"grep foo a.md > b", "grep", "holds a redirection", 0},
		{"grep 'foo' a.md", "grep", "holds a quote", 0},
		{"grep $HOME a.md", "grep", "holds a $ expansion", 0},
		{"grep foo /etc/passwd", "grep", "an argument starts with /", 0},
		{"grep foo ../a.md", "grep", "an argument holds ..", 0},
		{"grep --file=/etc/x a.md", "grep", "an option carries a path", 0},
		{"grep foo if=/etc/x", "grep", "an argument names a path outside the workspace", 0},
		{"git status ~", "git status", "holds a tilde", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = run_cmd(fx, cases[i].cmd, cases[i].timeout_s, &ok);
		assert_false(ok);
		assert_string_equal(fx->gate_saw, cases[i].cmd);
		assert_string_equal(fx->gate_why, cases[i].why);
		if (cases[i].prefix)
			assert_string_equal(fx->gate_prefix, cases[i].prefix);
		else
			assert_null(fx->gate_prefix);
		assert_int_equal(fx->gate_timeout_s, cases[i].timeout_s ? cases[i].timeout_s : 30);
		free(out);
	}
}

/* What ran is recorded apart from the text: the command (as edited), how the gate let it
 * through, its exit status, duration and output. */
static void test_run_record(void **state)
{
	struct fx *fx = *state;
	struct shell_run rec = {.exit_status = -1};
	fx->env.shell_run = &rec;
	fx->env.confirm_shell = gate;
	fx->gate_answer = true;
	fx->gate_replace = "printf 'one\ntwo\n'; sleep 0.2; exit 3";
	bool ok;
	char *out = run_cmd(fx, "echo from-model", 0, &ok);
	assert_true(ok);
	assert_string_equal(rec.command, fx->gate_replace);
	assert_false(rec.allow_listed);
	assert_true(rec.ran);
	assert_int_equal(rec.exit_status, 3);
	assert_int_equal(rec.signal, 0);
	assert_false(rec.timed_out);
	assert_true(rec.duration_ms >= 150 && rec.duration_ms < 5000);
	assert_string_equal(rec.output, "one\ntwo\n");
	assert_has(out, "exit status 3\none\ntwo");
	free(out);

	/* allow-listed, killed by a signal */
	fx->gate_replace = NULL;
	strvec_push(&fx->allow, "kill");
	int calls = fx->gate_calls;
	out = run_cmd(fx, "kill -9 0", 0, &ok);
	assert_int_equal(fx->gate_calls, calls);
	assert_true(rec.allow_listed);
	assert_string_equal(rec.command, "kill -9 0");
	assert_int_equal(rec.exit_status, -1);
	assert_int_equal(rec.signal, 9);
	free(out);

	/* out of time */
	out = run_cmd(fx, "sleep 5", 1, &ok);
	assert_false(ok);
	assert_true(rec.ran);
	assert_true(rec.timed_out);
	assert_int_equal(rec.exit_status, -1);
	assert_true(rec.duration_ms >= 900);
	free(out);

	/* refused: the command asked, nothing ran */
	fx->gate_answer = false;
	out = run_cmd(fx, "touch x", 0, &ok);
	assert_false(ok);
	assert_string_equal(rec.command, "touch x");
	assert_false(rec.ran);
	assert_null(rec.output);
	free(out);
	tool_shell_run_release(&rec);
	fx->env.shell_run = NULL;
}

/* What the gate cannot show is refused before it, with a message that names it. */
static void test_control_characters_refused(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = true;
	const struct {
		const char *cmd, *msg;
	} cases[] = {
		{"touch made.txt\v; echo VT",
		 "the command contains a control character (^K, U+000B) at byte 15; write it "
		 "without control characters"},
		{"touch made.txt \033[8m",
		 "the command contains a control character (^[, U+001B) at byte 16; write it "
		 "without control characters"},
		{"touch made.txt\r",
		 "the command contains a control character (^M, U+000D) at byte 15; write it "
		 "without control characters"},
		{"\x7ftouch made.txt",
		 "the command contains a control character (^?, U+007F) at byte 1; write it "
		 "without control characters"},
		{"touch made.txt \xc2\x9b",
		 "the command contains a control character (U+009B) at byte 16; write it without "
		 "control characters"},
		{"touch made.txt # \xe2\x80\xae",
		 "the command contains a bidirectional formatting character (U+202E RIGHT-TO-LEFT "
		 "OVERRIDE) at byte 18; write it without bidirectional formatting characters"},
		{"touch made.txt # \xe2\x81\xa6",
		 "the command contains a bidirectional formatting character (U+2066 LEFT-TO-RIGHT "
		 "ISOLATE) at byte 18; write it without bidirectional formatting characters"},
		{"touch made.txt # \xff",
		 "the command contains a byte that is not UTF-8 (0xFF) at byte 18; write it as "
		 "UTF-8 text"},
	};
	bool ok;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = run_cmd(fx, cases[i].cmd, 0, &ok);
		assert_false(ok);
		assert_string_equal(out, cases[i].msg);
		free(out);
	}
	assert_int_equal(fx->gate_calls, 0);
	assert_false(ws_exists(fx, "made.txt"));
	/* TAB and LF are ordinary, and so is text that is merely not ASCII */
	char *out = run_cmd(fx, "echo a\tb\necho \xc3\xa9t\xc3\xa9 > made.txt", 0, &ok);
	assert_true(ok);
	assert_int_equal(fx->gate_calls, 1);
	assert_has(out, "exit status 0\na b");
	assert_true(ws_exists(fx, "made.txt"));
	free(out);
}

static void test_operator_edit_with_control_refused(void **state)
{
	struct fx *fx = *state;
	fx->env.confirm_shell = gate;
	fx->gate_answer = true;
	fx->gate_replace = "touch made.txt\v; echo VT";
	bool ok;
	char *out = run_cmd(fx, "echo from-model", 0, &ok);
	assert_false(ok);
	assert_int_equal(fx->gate_calls, 1);
	assert_string_equal(out, "the command as edited by the operator contains a control "
				 "character (^K, U+000B) at byte 15; nothing was run");
	assert_false(ws_exists(fx, "made.txt"));
	free(out);
}

/* Starts a process in a session of its own and waits until it has written its pid. */
#define ESCAPE                                                                             \
	"setsid sh -c 'echo $$ > p.tmp; mv p.tmp p.txt; exec sleep 30' & "                 \
	"until [ -s p.txt ]; do sleep 0.01; done; "

static void test_own_session_ended(void **state)
{
	struct fx *fx = *state;
	bool ok;
	long t0 = now_ms();
	char *out = run_cmd(fx, ESCAPE "echo started", 0, &ok);
	assert_true(ok);
	assert_true(now_ms() - t0 < 4000);
	assert_has(out, "exit status 0\nstarted");
	pid_t pid = ws_pid(fx, "p.txt");
	assert_true(pid > 1);
	assert_true(pid_gone(pid)); /* already: run_shell returns after the last is reaped */
	free(out);
}

/* A double fork into a new session that ignores SIGTERM and has a child of its own: after
 * the grace SIGKILL ends it, and then its child, orphaned to the keeper. */
static void test_stubborn_session_ended(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run_cmd(fx,
			    "(setsid sh -c 'trap \"\" TERM; sleep 30 & echo $! > g.tmp; "
			    "echo $$ > p.tmp; mv g.tmp g.txt; mv p.tmp p.txt; wait' &); "
			    "until [ -s p.txt ]; do sleep 0.01; done; echo started",
			    0, &ok);
	assert_true(ok);
	assert_has(out, "exit status 0\nstarted");
	assert_null(strstr(out, "could not be stopped"));
	pid_t pid = ws_pid(fx, "p.txt"), child = ws_pid(fx, "g.txt");
	assert_true(pid > 1 && child > 1);
	assert_true(pid_gone(pid));
	assert_true(pid_gone(child));
	free(out);
}

static void test_own_session_ended_on_timeout(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run_cmd(fx, ESCAPE "sleep 30", 1, &ok);
	assert_false(ok);
	assert_has(out, "ran out of time after 1 s");
	pid_t pid = ws_pid(fx, "p.txt");
	assert_true(pid > 1);
	assert_true(pid_gone(pid));
	free(out);
}

/* Cancels once the command has started its escapee. */
static void *cancel_when_started(void *arg)
{
	struct fx *fx = arg;
	wait_ws_pid(fx, "p.txt");
	atomic_store(&fx->cancel, true);
	return NULL;
}

static void test_own_session_ended_on_cancel(void **state)
{
	struct fx *fx = *state;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, cancel_when_started, fx), 0);
	bool ok;
	char *out = run_cmd(fx, ESCAPE "sleep 30", 0, &ok);
	pthread_join(th, NULL);
	assert_false(ok);
	assert_has(out, "cancelled");
	pid_t pid = ws_pid(fx, "p.txt");
	assert_true(pid > 1);
	assert_true(pid_gone(pid));
	free(out);
}

/* If pevtui itself dies, the keeper sees its control pipe close and ends everything. */
static void test_caller_death_ends_everything(void **state)
{
	struct fx *fx = *state;
	pid_t caller = fork();
	assert_true(caller >= 0);
	if (caller == 0) {
		bool ok;
		free(run_cmd(fx, ESCAPE "sleep 30", 0, &ok));
		_exit(0);
	}
	pid_t pid = wait_ws_pid(fx, "p.txt");
	assert_true(pid > 1);
	assert_int_equal(kill(caller, SIGKILL), 0);
	assert_int_equal(waitpid(caller, NULL, 0), caller);
	/* the keeper works on its own now: wait for it, bounded */
	for (int tries = 0; tries < 500 && !pid_gone(pid); tries++)
		usleep(10000);
	assert_true(pid_gone(pid));
}

/* A command that kills its keeper is told so; its own group is still stopped. */
static void test_killed_keeper_reported(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run_cmd(fx, "echo PGID=$$; kill -9 $PPID; sleep 30", 0, &ok);
	assert_false(ok);
	assert_has(out, "ended the process that supervises it (signal 9), so what "
				    "it started may still be running");
	/* With the keeper gone its group is sent SIGKILL, which takes effect when the kernel
	 * gets to it (no one is left to wait for it): wait for that state, bounded. */
	pid_t pgid = pid_from(out);
	for (int tries = 0; tries < 500 && live_in_group(pgid) > 0; tries++)
		usleep(10000);
	assert_int_equal(live_in_group(pgid), 0);
	free(out);
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
		cmocka_unit_test_setup_teardown(test_allow_list_plain_words_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gate_is_told_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_control_characters_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_operator_edit_with_control_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_own_session_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stubborn_session_ended, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_session_ended_on_timeout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_own_session_ended_on_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caller_death_ends_everything, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_killed_keeper_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
