/* test_shell_reach — the real binary: what run_shell starts does not outlive the call or
 * pevtui, and a command the gate could not show as it is never runs. The simulated provider
 * plays the model (--script). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonx.h"
#include "xalloc.h"

/* A one-step plan whose executor runs `command` with run_shell, then reports the tool
 * result as its findings. */
static char *script_running(const char *dir, const char *command)
{
	cJSON *cmd = cJSON_CreateString(command);
	char *quoted = cJSON_PrintUnformatted(cmd);
	char *text = xasprintf(
		"{\"task\": \"Run a command\",\n"
		" \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"run\",\n"
		"   \"name\": \"Run\", \"description\": \"Run it.\",\n"
		"   \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
		"   \"estimated_complexity\": \"low\"}]}],\n"
		" \"executor\": {\"run\": [{\"rounds\": [{\"text\": \"Running.\", \"tool_calls\":\n"
		"   [{\"name\": \"run_shell\", \"input\": {\"command\": %s}}]}],\n"
		"   \"final\": {\"reasoning\": \"ran\", \"actions_taken\": [\"run_shell\"],\n"
		"     \"step_output\": {\"findings\": \"{{tool_result}}\", \"artifacts\": [],\n"
		"       \"meets_criteria\": true}, \"confidence\": 0.9}}]}\n"
		"}\n",
		quoted);
	char *path = xasprintf("%s/script.json", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
	cJSON_free(quoted);
	cJSON_Delete(cmd);
	free(text);
	return path;
}

/* The one run folder below runs; NULL while there is none yet. Caller frees. */
static char *run_folder(const char *runs)
{
	DIR *d = opendir(runs);
	char *found = NULL;
	struct dirent *de;
	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' && !found)
			found = xasprintf("%s/%s", runs, de->d_name);
	closedir(d);
	return found;
}

/* The pid a command wrote to p.txt in the run's workspace; 0 when there is none yet. */
static pid_t escapee_pid(const char *runs)
{
	char *run = run_folder(runs);
	if (!run)
		return 0;
	char *path = xasprintf("%s/workspace/p.txt", run);
	FILE *f = fopen(path, "r");
	long v = 0;
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	free(path);
	free(run);
	return (pid_t)v;
}

static bool pid_gone(pid_t pid)
{
	return kill(pid, 0) == -1 && errno == ESRCH;
}

/* These tests are about the keeper, which ends what a command leaves behind in every
 * mode: they read the escapee's pid from the host, and in the sandbox's PID namespace
 * (tests/sandbox/escape.sh) a command sees other pids; so they run unconfined. */
#define SANDBOX_OFF "--sandbox", "off"

/* Starts a process in a session of its own and waits until it has written its pid. */
#define ESCAPE                                                                             \
	"setsid sh -c 'echo $$ > p.tmp; mv p.tmp p.txt; exec sleep 60' & "                 \
	"until [ -s p.txt ]; do sleep 0.01; done; "

/* `setsid … &` used to outlive the run (issue 13): now it ends with the command. */
static void test_own_session_ends_with_the_command(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	char *script = script_running(tmp, ESCAPE "echo started");
	(void)state;
	struct cli_proc p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script",
				    script, "--sim-delay", "0", "--runs-dir", runs, SANDBOX_OFF,
				    NULL);
	if (p.status != 0)
		fail_msg("exit %d, want 0\nstderr:\n%s", p.status, p.err);
	pid_t pid = escapee_pid(runs);
	assert_true(pid > 1);
	assert_true(pid_gone(pid));
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(script);
	free(runs);
	free(tmp);
}

struct watch {
	const char *runs;
	pid_t pid;
};

static bool escapee_started(void *ctx)
{
	struct watch *w = ctx;
	return (w->pid = escapee_pid(w->runs)) > 0;
}

static bool escapee_gone(void *ctx)
{
	return pid_gone(((struct watch *)ctx)->pid);
}

/* pevtui killed outright while the command runs: its keeper still ends everything. */
static void test_own_session_ends_when_pevtui_is_killed(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	char *script = script_running(tmp, ESCAPE "sleep 60");
	(void)state;
	struct cli_bg b = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script",
				    script, "--sim-delay", "0", "--runs-dir", runs, SANDBOX_OFF,
				    NULL);
	assert_true(b.pid > 0);
	struct watch w = {runs, 0};
	assert_true(cli_wait_until(escapee_started, &w, 20));
	assert_true(w.pid > 1);
	assert_int_equal(kill(b.pid, SIGKILL), 0);
	struct cli_proc p = cli_wait(&b);
	assert_int_equal(p.status, -1);
	assert_true(cli_wait_until(escapee_gone, &w, 10));
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(script);
	free(runs);
	free(tmp);
}

/* The gate showed "true; echo VT" for "true\v; echo VT" (issue 13): such a command is
 * refused before the gate now, with a message the model can act on, and nothing runs. */
static void test_control_character_refused_before_the_gate(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp);
	char *script = script_running(tmp, "touch made.txt\v; echo VT");
	(void)state;
	/* --gate shell without --yes: a shell gate would end the run (exit 3) */
	struct cli_proc p = cli_run(NULL, "--headless", "--gate", "shell", "--provider", "sim",
				    "--script", script, "--sim-delay", "0", "--runs-dir", runs,
				    NULL);
	char *run = cli_only_run(runs);
	cJSON *ev = cli_load_journal(run);
	const cJSON *e;
	int shell_gates = 0;
	bool told = false;
	cJSON_ArrayForEach(e, ev)
	{
		const char *type = jsonx_str(e, "type");
		if (!strcmp(type, "gate.open") && !strcmp(jsonx_str(e, "gate"), "shell"))
			shell_gates++;
		const cJSON *out = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "result"),
						       "step_output");
		const char *findings = jsonx_str(out, "findings");
		if (!strcmp(type, "step.output") && findings &&
		    strstr(findings, "the command contains a control character (^K, U+000B) at "
				     "byte 15; write it without control characters"))
			told = true;
	}
	if (shell_gates != 0 || !told)
		fail_msg("shell gates %d (want 0), refusal in the findings: %d\nexit %d\nstderr:\n%s",
			 shell_gates, told, p.status, p.err);
	char *made = xasprintf("%s/workspace/made.txt", run);
	assert_int_not_equal(access(made, F_OK), 0);
	free(made);
	cJSON_Delete(ev);
	free(run);
	cli_proc_free(&p);
	cli_rm_rf(tmp);
	free(script);
	free(runs);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_session_ends_with_the_command),
		cmocka_unit_test(test_own_session_ends_when_pevtui_is_killed),
		cmocka_unit_test(test_control_character_refused_before_the_gate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
