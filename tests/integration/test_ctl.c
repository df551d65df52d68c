/* test_ctl — the control socket of a live run against hostile clients, through the real
 * binary: a run started with --detach waits at its gates while clients send garbage,
 * lines far too long, answers to gates that are not open, connect as another user, or
 * stop reading. The engine must answer each with an error line, refuse the stranger, drop
 * the client that does not read, and go on serving everyone else to the end of the run. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "ctl_proto.h"
#include "jsonx.h"
#include "run_list.h"
#include "runlock.h"
#include "strbuf.h"
#include "xalloc.h"

/* ------------------------------------------------------------------ helpers */

struct line_reader {
	int fd;
	struct strbuf buf;
};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The next line (caller frees), or NULL at the end of the stream or after `ms`. */
static char *read_line(struct line_reader *r, int ms)
{
	long end = now_ms() + ms;

	for (;;) {
		char *nl = memchr(r->buf.buf, '\n', r->buf.len), chunk[65536];
		struct pollfd p = {r->fd, POLLIN, 0};
		ssize_t n;
		long left;

		if (nl) {
			char *line = xstrndup(r->buf.buf, (size_t)(nl - r->buf.buf));
			size_t rest = r->buf.len - (size_t)(nl - r->buf.buf) - 1;

			memmove(r->buf.buf, nl + 1, rest);
			r->buf.len = rest;
			r->buf.buf[rest] = '\0';
			return line;
		}
		left = end - now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return NULL;
		n = read(r->fd, chunk, sizeof(chunk));
		if (n <= 0)
			return NULL;
		strbuf_add(&r->buf, chunk, (size_t)n);
	}
}

/* Reads lines until one holds `needle`; that line (caller frees), or NULL. */
static char *read_until(struct line_reader *r, const char *needle, int ms)
{
	long end = now_ms() + ms;
	char *line;

	while (now_ms() < end && (line = read_line(r, (int)(end - now_ms())))) {
		if (strstr(line, needle))
			return line;
		free(line);
	}
	return NULL;
}

static void send_str(int fd, const char *s)
{
	size_t len = strlen(s);

	assert_int_equal(send(fd, s, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void reader_open(struct line_reader *r, const char *run_dir)
{
	r->fd = ctl_connect(run_dir);
	assert_true(r->fd >= 0);
	strbuf_init(&r->buf);
}

static void reader_close(struct line_reader *r)
{
	close(r->fd);
	strbuf_release(&r->buf);
}

/* A run started with --detach (the demo's contracts review): it waits at its plan gate. */
static char *start_detached(const char *runs)
{
	struct cli_proc p = cli_run(NULL, "--detach", "--demo", "--sim-delay", "0", "--runs-dir",
				    runs, NULL);
	char *run_dir;

	if (p.status != 0)
		fail_msg("--detach exited %d: %s", p.status, p.err);
	assert_non_null(strstr(p.err, "started detached"));
	assert_non_null(strstr(p.err, "pevtui --attach"));
	cli_proc_free(&p);
	run_dir = cli_only_run(runs);
	assert_true(runlock_holder(run_dir) > 0);
	return run_dir;
}

static long gate_id_of(const char *line)
{
	cJSON *o = cJSON_Parse(line);
	double id = 0;

	assert_non_null(o);
	assert_true(jsonx_num(o, "gate_id", &id));
	cJSON_Delete(o);
	return (long)id;
}

/* Answers every gate that opens until the run ends; true when run.end came. *deltas
 * (may be NULL) counts the streamed-text lines seen. */
static bool drive_to_end(struct line_reader *r, int *deltas)
{
	char *line;

	while ((line = read_line(r, 60000))) {
		if (deltas && strstr(line, "\"type\":\"llm.delta\""))
			(*deltas)++;
		if (strstr(line, "\"type\":\"gate.open\"")) {
			char *a = xasprintf("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":%ld,"
					    "\"decision\":\"approve\"}\n",
					    gate_id_of(line));
			send_str(r->fd, a);
			free(a);
		}
		if (strstr(line, "\"type\":\"run.end\"")) {
			free(line);
			return true;
		}
		free(line);
	}
	return false;
}

struct gone {
	const char *run_dir;
};

static bool engine_gone(void *ctx)
{
	return runlock_holder(((struct gone *)ctx)->run_dir) == 0;
}

static void stop_engine(const char *run_dir)
{
	pid_t pid = runlock_holder(run_dir);
	struct gone g = {run_dir};

	if (pid > 0)
		kill(pid, SIGTERM);
	assert_true(cli_wait_until(engine_gone, &g, 30));
}

/* After each test, even one that failed half way: no engine of its runs outlives it. */
static int stop_leftovers(void **state)
{
	char *tmp = *state, *runs;
	struct strvec ids = STRVEC_INIT;
	char *err = NULL;

	if (!tmp)
		return 0;
	runs = xasprintf("%s/runs", tmp);
	if (run_list_ids(runs, &ids, &err)) {
		for (size_t i = 0; i < ids.n; i++) {
			char *dir = xasprintf("%s/%s", runs, ids.v[i]);
			pid_t pid = runlock_holder(dir);

			if (pid > 0) {
				struct gone g = {dir};
				kill(pid, SIGTERM);
				cli_wait_until(engine_gone, &g, 30);
			}
			free(dir);
		}
	}
	free(err);
	strvec_clear(&ids);
	if (access(tmp, F_OK) == 0)
		cli_rm_rf(tmp);
	free(runs);
	free(tmp);
	*state = NULL;
	return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_bad_lines_get_an_error_and_change_nothing(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir, *line, *huge;
	struct line_reader r;
	const size_t huge_len = 3 * 1024 * 1024;
	struct gone g;
	int deltas = 0;

	*state = tmp;
	run_dir = start_detached(runs);
	reader_open(&r, run_dir);

	send_str(r.fd, "this is not JSON\n");
	line = read_line(&r, 10000);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"type\":\"ctl.error\""));
	assert_non_null(strstr(line, "not a JSON object"));
	free(line);

	send_str(r.fd, "{\"v\":7,\"cmd\":\"ping\"}\n[1,2]\n{\"v\":1,\"cmd\":\"quit\"}\n");
	for (int i = 0; i < 3; i++) {
		line = read_line(&r, 10000);
		assert_non_null(line);
		assert_non_null(strstr(line, "ctl.error"));
		free(line);
	}
	/* quit is no client's to send: only the engine's own cockpit stops it */
	assert_true(runlock_holder(run_dir) > 0);

	/* A line far over the bound: one error, the rest of it dropped up to its newline. */
	huge = xmalloc(huge_len + 1);
	memset(huge, '{', huge_len);
	huge[huge_len - 1] = '\n';
	huge[huge_len] = '\0';
	send_str(r.fd, huge);
	free(huge);
	send_str(r.fd, "{\"v\":1,\"cmd\":\"ping\",\"id\":\"after\"}\n");
	line = read_line(&r, 10000);
	assert_non_null(line);
	assert_non_null(strstr(line, "longer than 1048576 bytes"));
	free(line);
	line = read_line(&r, 10000);
	assert_non_null(line);
	assert_string_equal(line, "{\"type\":\"ctl.pong\",\"id\":\"after\"}");
	free(line);

	/* A NUL in a line, and an answer to a gate that is not open. */
	assert_int_equal(send(r.fd, "{\"v\":1,\0\"cmd\":\"ping\"}\n", 22, MSG_NOSIGNAL), 22);
	line = read_line(&r, 10000);
	assert_non_null(strstr(line, "NUL"));
	free(line);
	send_str(r.fd, "{\"v\":1,\"cmd\":\"answer\",\"gate_id\":999,\"decision\":\"approve\","
		       "\"id\":\"g\"}\n");
	line = read_line(&r, 10000);
	assert_non_null(strstr(line, "gate 999 is not open"));
	free(line);

	/* The engine took none of it: the journal goes on from the plan gate, which a good
	 * line answers; the same answer again loses (the first answer wins). */
	send_str(r.fd, "{\"v\":1,\"cmd\":\"hello\",\"since\":0}\n");
	line = read_until(&r, "\"type\":\"ctl.hello\"", 10000);
	assert_non_null(line);
	free(line);
	line = read_until(&r, "\"type\":\"gate.open\"", 10000);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"gate\":\"plan\""));
	{
		char *a = xasprintf("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":%ld,\"decision\":"
				    "\"approve\",\"id\":\"first\"}\n",
				    gate_id_of(line));
		char *b = xasprintf("{\"v\":1,\"cmd\":\"answer\",\"gate_id\":%ld,\"decision\":"
				    "\"reject\",\"id\":\"second\"}\n",
				    gate_id_of(line));
		send_str(r.fd, a);
		send_str(r.fd, b);
		free(a);
		free(b);
	}
	free(line);
	line = read_until(&r, "\"id\":\"first\"", 10000);
	assert_non_null(strstr(line, "ctl.ok"));
	free(line);
	line = read_until(&r, "\"id\":\"second\"", 10000);
	assert_non_null(strstr(line, "ctl.error"));
	free(line);
	/* Streamed text flows to a listening client (the demo's models stream). */
	assert_true(drive_to_end(&r, &deltas));
	assert_true(deltas > 0);
	/* A detached run stays at its end while a client watches: a re-run from it is taken
	 * (ctl.ok) and reopens the run, which ends again. */
	{
		cJSON *ev = cli_load_journal(run_dir), *it;
		const char *step = NULL;
		char *cmd;
		cJSON_ArrayForEach(it, ev)
		{
			const char *t = jsonx_str(it, "type");
			if (!step && t && !strcmp(t, "step.end"))
				step = jsonx_str(it, "step_id");
		}
		assert_non_null(step);
		cmd = xasprintf("{\"v\":1,\"cmd\":\"rerun_force\",\"step_id\":\"%s\","
				"\"id\":\"again\"}\n",
				step);
		send_str(r.fd, cmd);
		free(cmd);
		cJSON_Delete(ev);
	}
	line = read_until(&r, "\"id\":\"again\"", 10000);
	assert_non_null(line);
	assert_non_null(strstr(line, "ctl.ok"));
	free(line);
	line = read_until(&r, "\"type\":\"run.reopen\"", 10000);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"reason\":\"rerun\""));
	free(line);
	assert_true(drive_to_end(&r, NULL));
	assert_true(runlock_holder(run_dir) > 0);
	/* The last watcher leaves: so does the engine, and its lock goes. */
	reader_close(&r);
	g.run_dir = run_dir;
	assert_true(cli_wait_until(engine_gone, &g, 30));
	{
		cJSON *ev = cli_load_journal(run_dir), *it;
		int decisions = 0, ends = 0;
		cJSON_ArrayForEach(it, ev)
		{
			const char *t = jsonx_str(it, "type");
			if (t && !strcmp(t, "gate.decision") && !ends)
				decisions++;
			if (t && !strcmp(t, "run.end")) {
				assert_string_equal(jsonx_str(it, "status"), "passed");
				ends++;
			}
		}
		/* plan and high before the first end: the second answer lost */
		assert_int_equal(decisions, 2);
		assert_int_equal(ends, 2);
		cJSON_Delete(ev);
	}
	free(run_dir);
	free(runs);
}

/* A child that becomes `uid` and connects: 0 refused by the engine with its sentence,
 * 2 the socket could not even be reached, 1 anything else. */
static int try_as(const char *run_dir, uid_t uid)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct line_reader r;
		char *line, *rest;

		if (setgid(uid) != 0 || setuid(uid) != 0)
			_exit(1);
		r.fd = ctl_connect(run_dir);
		if (r.fd < 0)
			_exit(errno == EACCES ? 2 : 1);
		strbuf_init(&r.buf);
		/* The engine may have closed the connection already: then this fails, fine. */
		if (send(r.fd, "{\"v\":1,\"cmd\":\"abort\"}\n", 22, MSG_NOSIGNAL) < 0) {
			/* refused before the line went */
		}
		line = read_line(&r, 10000);
		rest = read_line(&r, 10000);
		_exit(line && strstr(line, "may not control it") && !rest ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_another_uid_is_refused(void **state)
{
	char *tmp, *runs, *run_dir, *sock, *line;
	struct stat st;
	struct line_reader r;

	if (geteuid() != 0)
		skip(); /* only root can become another user to try */
	tmp = cli_tmpdir();
	*state = tmp;
	runs = xasprintf("%s/runs", tmp);
	run_dir = start_detached(runs);
	assert_int_equal(chmod(tmp, 0755), 0);
	assert_int_equal(chmod(runs, 0755), 0);
	sock = xasprintf("%s/%s", run_dir, CTL_SOCKET_NAME);
	assert_int_equal(stat(run_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(sock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* The folder and the socket keep a stranger out... */
	assert_int_equal(try_as(run_dir, 65534), 2);
	/* ...and with both opened up on purpose, the engine itself refuses the peer's uid. */
	assert_int_equal(chmod(run_dir, 0711), 0);
	assert_int_equal(chmod(sock, 0666), 0);
	assert_int_equal(try_as(run_dir, 65534), 0);
	assert_int_equal(chmod(run_dir, 0700), 0);

	/* The stranger's abort was never taken: the run still waits at its plan gate. */
	reader_open(&r, run_dir);
	send_str(r.fd, "{\"v\":1,\"cmd\":\"hello\"}\n");
	line = read_until(&r, "\"type\":\"gate.open\"", 10000);
	assert_non_null(line);
	free(line);
	line = read_until(&r, "\"command\":\"abort\"", 1000);
	assert_null(line);
	reader_close(&r);
	stop_engine(run_dir);
	free(sock);
	free(run_dir);
	free(runs);
}

static void test_a_client_that_stops_reading_is_dropped(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir;
	struct line_reader good;
	int slow, sent = 0;
	const char ping[] = "{\"v\":1,\"cmd\":\"ping\",\"id\":\"a-slow-client\"}\n";
	char batch[sizeof(ping) * 256];
	bool dropped = false;
	struct gone g;

	*state = tmp;
	run_dir = start_detached(runs);
	slow = ctl_connect(run_dir);
	assert_true(slow >= 0);
	send_str(slow, "{\"v\":1,\"cmd\":\"hello\"}\n");
	for (int i = 0; i < 256; i++)
		memcpy(batch + i * (sizeof(ping) - 1), ping, sizeof(ping) - 1);
	/* Pongs pile up unread past the bound (8 MiB): the engine drops this client. Twice
	 * the bound in pings, at most. */
	while (sent < 2 * 8 * 1024 * 1024 / (int)(sizeof(ping) - 1)) {
		size_t len = 256 * (sizeof(ping) - 1);
		ssize_t n = send(slow, batch, len, MSG_NOSIGNAL);

		if (n < 0) {
			dropped = errno == EPIPE || errno == ECONNRESET;
			break;
		}
		sent += 256;
	}
	assert_true(dropped);

	/* Everyone else was served all along: the run goes to its end. */
	reader_open(&good, run_dir);
	send_str(good.fd, "{\"v\":1,\"cmd\":\"hello\"}\n");
	assert_true(drive_to_end(&good, NULL));
	/* It stays at its end while a client watches; the last one leaving ends it. */
	reader_close(&good);
	g.run_dir = run_dir;
	assert_true(cli_wait_until(engine_gone, &g, 30));
	close(slow);
	free(run_dir);
	free(runs);
}

static void test_attach_to_a_dead_engine_says_resume(void **state)
{
	char *tmp = cli_tmpdir(), *runs = xasprintf("%s/runs", tmp), *run_dir;
	struct cli_proc p;
	struct gone g;
	pid_t pid;

	*state = tmp;
	run_dir = start_detached(runs);
	pid = runlock_holder(run_dir);
	assert_int_equal(kill(pid, SIGKILL), 0);
	g.run_dir = run_dir;
	assert_true(cli_wait_until(engine_gone, &g, 30));
	p = cli_run(NULL, "--attach", "last", "--runs-dir", runs, NULL);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "is not running"));
	assert_non_null(strstr(p.err, "pevtui --resume "));
	cli_proc_free(&p);
	free(run_dir);
	free(runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_lines_get_an_error_and_change_nothing, stop_leftovers),
		cmocka_unit_test_teardown(test_another_uid_is_refused, stop_leftovers),
		cmocka_unit_test_teardown(test_a_client_that_stops_reading_is_dropped, stop_leftovers),
		cmocka_unit_test_teardown(test_attach_to_a_dead_engine_says_resume, stop_leftovers),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
