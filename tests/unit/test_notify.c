/* test_notify — which events signal, debounced; the OSC escape made safe; notify_cmd run
 * for real with its environment, in the background, within its time limit; the [ui]
 * settings. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "gate.h"
#include "notify.h"
#include "settings.h"
#include "testdir.h"
#include "xalloc.h"

#define ALL_GATES ((1u << GATE__COUNT) - 1)

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct event *ev(enum event_type t, const char *json)
{
	cJSON *f = cJSON_Parse(json);

	if (!f)
		fail_msg("bad test JSON: %s", json);
	return event_build(t, 1, f);
}

/* notify_consider on one event built from `json`; the signal goes to *out. */
static bool consider(struct notify *n, enum event_type t, const char *json, double now,
                     struct notify_signal *out)
{
	struct event *e = ev(t, json);
	bool yes = notify_consider(n, e, now, out);

	event_free(e);
	return yes;
}

static struct notify *cockpit(unsigned events, double debounce)
{
	struct notify_config c = {
	    .events = events,
	    .operator_gates = ALL_GATES,
	    .debounce_s = debounce,
	    .term_fd = -1,
	    .run_id = "r-test",
	    .run_dir = "/runs/r-test",
	};

	return notify_new(&c);
}

static const char gate_high[] =
    "{\"gate_id\":%d,\"gate\":\"high\",\"step_id\":\"s1\","
    "\"step\":{\"step_id\":\"s1\",\"name\":\"Draft \\u001b[31mthe\\u0007 memo\"}}";

static char *high(int id)
{
	return xasprintf(gate_high, id);
}

/* ---- names ---------------------------------------------------------------------------- */

static void test_parse_events(void **state)
{
	unsigned m = 99;
	char *err = NULL;

	(void)state;
	assert_true(notify_parse_events("gates,end", &m, &err));
	assert_int_equal(m, NOTIFY_GATES | NOTIFY_END);
	assert_true(notify_parse_events("end", &m, &err));
	assert_int_equal(m, NOTIFY_END);
	assert_true(notify_parse_events(" gates ", &m, &err));
	assert_int_equal(m, NOTIFY_GATES);
	assert_true(notify_parse_events("none", &m, &err));
	assert_int_equal(m, 0);
	assert_true(notify_parse_events("all", &m, &err));
	assert_int_equal(m, NOTIFY_GATES | NOTIFY_END);
	m = 7;
	assert_false(notify_parse_events("gates,bells", &m, &err));
	assert_int_equal(m, 7);
	assert_non_null(strstr(err, "\"bells\""));
	free(err);
	assert_int_equal(notify_osc_from_name("osc777"), NOTIFY_OSC_777);
	assert_int_equal(notify_osc_from_name("osc9"), NOTIFY_OSC_9);
	assert_int_equal(notify_osc_from_name("auto"), NOTIFY_OSC_AUTO);
	assert_int_equal(notify_osc_from_name("off"), NOTIFY_OSC_OFF);
	assert_int_equal(notify_osc_from_name("osc99"), -1);
}

/* ---- which terminal takes which escape -------------------------------------------------- */

static const char *const *fake_env;

static char *fake_get(const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = fake_env; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return (char *)*e + n + 1;
	return NULL;
}

static enum notify_osc resolve(enum notify_osc setting, const char *const *env, bool *wrap)
{
	fake_env = env;
	return notify_osc_resolve(setting, fake_get, wrap);
}

static void test_osc_resolve(void **state)
{
	static const char *const iterm[] = {"TERM=xterm-256color", "TERM_PROGRAM=iTerm.app", NULL};
	static const char *const wezterm[] = {"TERM=xterm-256color", "TERM_PROGRAM=WezTerm", NULL};
	static const char *const foot[] = {"TERM=foot", NULL};
	static const char *const xterm[] = {"TERM=xterm-256color", NULL};
	static const char *const tmux[] = {"TERM=screen-256color", "TERM_PROGRAM=iTerm.app",
	                                   "TMUX=/tmp/tmux-0/default,1,0", NULL};
	static const char *const screen[] = {"TERM=screen", "STY=1.pts-0", NULL};
	bool wrap = true;

	(void)state;
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, iterm, &wrap), NOTIFY_OSC_9);
	assert_false(wrap);
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, wezterm, &wrap), NOTIFY_OSC_777);
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, foot, &wrap), NOTIFY_OSC_777);
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, xterm, &wrap), NOTIFY_OSC_OFF);
	/* tmux and screen drop unknown escapes: auto is off there, even in iTerm2 */
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, tmux, &wrap), NOTIFY_OSC_OFF);
	assert_false(wrap);
	assert_int_equal(resolve(NOTIFY_OSC_AUTO, screen, &wrap), NOTIFY_OSC_OFF);
	/* named by the operator: used, and wrapped for tmux's passthrough */
	assert_int_equal(resolve(NOTIFY_OSC_777, tmux, &wrap), NOTIFY_OSC_777);
	assert_true(wrap);
	assert_int_equal(resolve(NOTIFY_OSC_9, xterm, &wrap), NOTIFY_OSC_9);
	assert_false(wrap);
	assert_int_equal(resolve(NOTIFY_OSC_OFF, iterm, &wrap), NOTIFY_OSC_OFF);
}

/* ---- the escape's text ------------------------------------------------------------------ */

/* Between the introducer and ST: no ESC, BEL, C0/C1 control or DEL byte, and exactly
 * `semis` semicolons. */
static void clean_payload(const char *seq, const char *intro, int semis)
{
	size_t n = strlen(seq), in = strlen(intro);
	int count = 0;

	assert_true(n > in + 2);
	assert_memory_equal(seq, intro, in);
	assert_memory_equal(seq + n - 2, "\033\\", 2);
	for (size_t i = in; i < n - 2; i++) {
		unsigned char c = (unsigned char)seq[i];

		if (c < 0x20 || c == 0x7f)
			fail_msg("control byte 0x%02x at %zu in the escape", c, i);
		/* U+0080..U+009F as UTF-8 (C2 80..C2 9F) */
		if (c == 0xc2 && i + 1 < n && (unsigned char)seq[i + 1] < 0xa0)
			fail_msg("C1 control at %zu in the escape", i);
		count += c == ';';
	}
	assert_int_equal(count, semis);
}

static void test_osc_text_is_clean(void **state)
{
	const char *hostile = "Draft\033]0;pwned\007 memo\n; rm -rf /\xc2\x9c\x9c tail\033\\ end";
	char *s;

	(void)state;
	assert_null(notify_osc_text(NOTIFY_OSC_OFF, false, "t", "b"));
	assert_null(notify_osc_text(NOTIFY_OSC_AUTO, false, "t", "b"));

	s = notify_osc_text(NOTIFY_OSC_777, false, "pevtui; \033[2J", hostile);
	assert_non_null(s);
	/* "ESC ] 777 ; notify ; TITLE ; BODY ESC \": two separators, none from the text */
	clean_payload(s, "\033]777;notify;", 1);
	assert_null(strstr(s, "pwned"));
	assert_non_null(strstr(s, "Draft"));
	assert_non_null(strstr(s, ", rm -rf /"));
	free(s);

	s = notify_osc_text(NOTIFY_OSC_9, false, "pevtui", hostile);
	clean_payload(s, "\033]9;", 0);
	assert_true(!strncmp(s, "\033]9;pevtui: Draft", 17));
	free(s);
	/* "9;4;…" is a progress command in ConEmu and Windows Terminal: never a digit first */
	s = notify_osc_text(NOTIFY_OSC_9, false, "", "4;3 gates");
	clean_payload(s, "\033]9;", 0);
	assert_false(s[4] >= '0' && s[4] <= '9');
	free(s);

	/* long text is cut */
	{
		char *body = xmalloc(5001);

		memset(body, 'x', 5000);
		body[5000] = '\0';
		s = notify_osc_text(NOTIFY_OSC_777, false, "pevtui", body);
		assert_true(strlen(s) < NOTIFY_MESSAGE_COLS + 40);
		assert_non_null(strstr(s, "…"));
		free(s);
		free(body);
	}

	/* tmux passthrough: DCS tmux; with every ESC of the escape doubled */
	s = notify_osc_text(NOTIFY_OSC_777, true, "t", "b");
	assert_string_equal(s, "\033Ptmux;\033\033]777;notify;t;b\033\033\\\033\\");
	free(s);
}

/* ---- deciding --------------------------------------------------------------------------- */

static void test_debounce(void **state)
{
	struct notify *n = cockpit(NOTIFY_GATES | NOTIFY_END, 10);
	struct notify_signal s;
	char *g;

	(void)state;
	g = high(1);
	assert_true(consider(n, EV_GATE_OPEN, g, 100.0, &s));
	assert_string_equal(s.event, "gate");
	assert_string_equal(s.gate, "high");
	assert_string_equal(s.step_id, "s1");
	assert_null(s.status);
	/* the step's name, cleaned: no escape, no BEL */
	assert_string_equal(s.message,
	                    "high gate: step s1 \"Draft the memo\" (high complexity) waits for "
	                    "approval");
	notify_signal_release(&s);
	free(g);

	/* a burst: folded into the signal just given */
	g = high(2);
	assert_false(consider(n, EV_GATE_OPEN, g, 103.0, &s));
	assert_null(s.event);
	free(g);
	g = high(3);
	assert_false(consider(n, EV_GATE_OPEN, g, 109.9, &s));
	free(g);
	/* other events never signal */
	assert_false(consider(n, EV_STEP_START, "{\"step_id\":\"s1\",\"attempt\":1}", 110, &s));
	assert_false(consider(n, EV_NOTICE, "{\"level\":\"error\",\"message\":\"x\"}", 110, &s));
	/* past the window a gate signals again, and counts the gates still waiting */
	g = high(4);
	assert_true(consider(n, EV_GATE_OPEN, g, 110.5, &s));
	assert_non_null(strstr(s.message, "(4 gates waiting)"));
	notify_signal_release(&s);
	free(g);
	/* an answered gate no longer counts */
	assert_false(consider(n, EV_GATE_DECISION,
	                      "{\"gate_id\":4,\"gate\":\"high\",\"decision\":\"approve\","
	                      "\"by\":\"operator\"}",
	                      111, &s));
	/* the end is never held back by the window */
	assert_true(consider(n, EV_RUN_END,
	                     "{\"status\":\"partial\",\"exit_code\":2,\"reason\":\"1 step was "
	                     "fail-accepted\"}",
	                     111.5, &s));
	assert_string_equal(s.event, "end");
	assert_string_equal(s.status, "partial");
	assert_null(s.gate);
	assert_string_equal(s.message, "the run ended: partial — 1 step was fail-accepted");
	notify_signal_release(&s);
	notify_free(n);

	/* debounce 0: every gate signals */
	n = cockpit(NOTIFY_GATES, 0);
	g = high(1);
	assert_true(consider(n, EV_GATE_OPEN, g, 1, &s));
	notify_signal_release(&s);
	free(g);
	g = high(2);
	assert_true(consider(n, EV_GATE_OPEN, g, 1, &s));
	notify_signal_release(&s);
	free(g);
	/* gates only: the end does not signal */
	assert_false(consider(n, EV_RUN_END, "{\"status\":\"passed\",\"exit_code\":0}", 2, &s));
	notify_free(n);
}

static void test_per_event_and_policy(void **state)
{
	struct notify_signal s;
	struct notify *n;
	struct notify_config c = {.events = NOTIFY_GATES | NOTIFY_END, .term_fd = -1};
	char *g = high(1);

	(void)state;
	/* none: nothing */
	n = cockpit(0, 0);
	assert_false(consider(n, EV_GATE_OPEN, g, 1, &s));
	assert_false(consider(n, EV_RUN_END, "{\"status\":\"passed\"}", 2, &s));
	notify_free(n);
	/* end only */
	n = cockpit(NOTIFY_END, 0);
	assert_false(consider(n, EV_GATE_OPEN, g, 1, &s));
	assert_true(consider(n, EV_RUN_END, "{\"status\":\"error\",\"reason\":\"x\"}", 2, &s));
	assert_string_equal(s.status, "error");
	notify_signal_release(&s);
	notify_free(n);

	/* --yes in the cockpit: the policy answers every gate but the budget gate */
	c.operator_gates = GATE_MASK(GATE_BUDGET);
	n = notify_new(&c);
	assert_false(consider(n, EV_GATE_OPEN, g, 1, &s));
	assert_true(consider(n, EV_GATE_OPEN,
	                     "{\"gate_id\":2,\"gate\":\"budget\",\"step_id\":null,"
	                     "\"spent_usd\":0.51,\"reserved_usd\":0.01,\"budget_usd\":0.5,"
	                     "\"needed_usd\":0.02}",
	                     2, &s));
	assert_string_equal(s.gate, "budget");
	assert_null(s.step_id);
	assert_string_equal(s.message, "budget gate: $0.5100 spent of a $0.5000 budget; the run "
	                               "waits for a higher budget");
	notify_signal_release(&s);
	notify_free(n);

	/* --headless: no gate has an operator; with gates only, a run that stopped at a gate
	 * still signals at its end, naming the gate */
	c.events = NOTIFY_GATES;
	c.operator_gates = 0;
	n = notify_new(&c);
	assert_false(
	    consider(n, EV_GATE_OPEN, "{\"gate_id\":1,\"gate\":\"plan\",\"revision\":0}", 1, &s));
	assert_false(consider(n, EV_GATE_DECISION,
	                      "{\"gate_id\":1,\"gate\":\"plan\",\"decision\":\"reject\","
	                      "\"by\":\"policy\",\"reason\":\"the plan gate needs an operator\"}",
	                      1, &s));
	assert_true(consider(n, EV_RUN_END,
	                     "{\"status\":\"aborted\",\"exit_code\":3,\"reason\":\"the plan gate "
	                     "needs an operator\"}",
	                     1, &s));
	assert_string_equal(s.event, "end");
	assert_string_equal(s.gate, "plan");
	notify_signal_release(&s);
	/* a run that ended by itself does not, with gates only */
	assert_false(consider(n, EV_RUN_REOPEN, "{\"reason\":\"rerun\"}", 2, &s));
	assert_false(consider(n, EV_RUN_END, "{\"status\":\"passed\",\"exit_code\":0}", 3, &s));
	notify_free(n);
	free(g);
}

static void test_messages(void **state)
{
	struct notify *n = cockpit(NOTIFY_GATES, 0);
	struct notify_signal s;
	struct strbuf cmd = STRBUF_INIT;
	char *json;

	(void)state;
	assert_true(consider(n, EV_GATE_OPEN,
	                     "{\"gate_id\":1,\"gate\":\"plan\",\"step_id\":null,\"revision\":2,"
	                     "\"estimate_usd\":0.0123}",
	                     1, &s));
	assert_string_equal(
	    s.message, "plan gate: the plan (revision 2) waits for approval, estimate $0.0123");
	notify_signal_release(&s);
	assert_true(consider(n, EV_GATE_OPEN,
	                     "{\"gate_id\":2,\"gate\":\"replan\",\"step_id\":\"s2\",\"revision\":1,"
	                     "\"failed_step\":\"s2\",\"reason\":\"r\"}",
	                     1, &s));
	assert_string_equal(s.message, "replan gate: step s2 failed; a new plan (revision 1) "
	                               "waits for approval (2 gates waiting)");
	notify_signal_release(&s);
	/* a shell command from the model: one clean line, cut, the count kept whole */
	strbuf_init(&cmd);
	strbuf_adds(&cmd, "echo \\u001b]777;notify;x;y\\u001b\\\\ ok\\nrm -rf ~ ");
	for (int i = 0; i < 60; i++)
		strbuf_adds(&cmd, "word ");
	json = xasprintf("{\"gate_id\":3,\"gate\":\"shell\",\"step_id\":\"s3\",\"command\":\"%s\","
	                 "\"step\":{\"name\":\"Clean up\"}}",
	                 cmd.buf);
	assert_true(consider(n, EV_GATE_OPEN, json, 1, &s));
	{
		static const char start[] = "shell gate: step s3 \"Clean up\" asks to run: echo ";

		assert_true(!strncmp(s.message, start, strlen(start)));
	}
	assert_null(strchr(s.message, '\033'));
	assert_null(strchr(s.message, '\n'));
	assert_null(strstr(s.message, "notify;x"));
	assert_non_null(strstr(s.message, "… (3 gates waiting)"));
	notify_signal_release(&s);
	free(json);
	strbuf_release(&cmd);
	notify_free(n);
}

/* ---- notify_cmd, for real --------------------------------------------------------------- */

/* The value of NAME in an env(1) listing, or NULL. Caller frees. */
static char *env_value(const char *listing, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = listing; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, name, n) && p[n] == '=') {
			const char *e = strchr(p, '\n');

			return e ? xstrndup(p + n + 1, (size_t)(e - p - n - 1))
			         : xstrdup(p + n + 1);
		}
	}
	return NULL;
}

static void assert_env(const char *listing, const char *name, const char *want)
{
	char *v = env_value(listing, name);

	if (!v)
		fail_msg("%s is not in the command's environment:\n%s", name, listing);
	if (strcmp(v, want))
		fail_msg("%s=\"%s\", wanted \"%s\"", name, v, want);
	free(v);
}

static void test_cmd_environment(void **state)
{
	char *dir = testdir_new("notify");
	char *cmd, *path, *listing, *g;
	struct notify_config c = {
	    .events = NOTIFY_GATES | NOTIFY_END,
	    .operator_gates = ALL_GATES,
	    .term_fd = -1,
	    .timeout_s = 20,
	    .run_id = "20261122-abc",
	    .run_dir = "/runs/20261122-abc",
	};
	struct notify *n;
	struct notify_signal s;
	double t0;

	(void)state;
	assert_non_null(dir);
	/* Written whole, then renamed: the file appears complete or not at all. Its output
	 * goes nowhere (the echo must not reach this test's stdout). */
	cmd = xasprintf("echo on-stdout; env > '%s/env.tmp' && mv '%s/env.tmp' "
	                "\"%s/env.$PEVTUI_EVENT\"",
	                dir, dir, dir);
	c.cmd = cmd;
	/* a PEVTUI_ variable of the caller's is replaced, never passed on */
	setenv("PEVTUI_GATE", "stale", 1);
	setenv("PEVTUI_TEST_MARK", "kept?", 1);
	n = notify_new(&c);
	g = high(7);
	assert_true(consider(n, EV_GATE_OPEN, g, 1, &s));
	t0 = mono();
	notify_send(n, &s);
	/* taken, and handed on without waiting for the command */
	assert_null(s.message);
	assert_true(mono() - t0 < 0.5);
	assert_true(consider(n, EV_RUN_END,
	                     "{\"status\":\"aborted\",\"exit_code\":3,\"reason\":\"operator\"}", 2,
	                     &s));
	notify_send(n, &s);
	/* notify_free waits for the commands queued: no sleep needed to see their files */
	notify_free(n);

	path = xasprintf("%s/env.gate", dir);
	listing = testdir_slurp(path);
	assert_non_null(listing);
	assert_env(listing, "PEVTUI_EVENT", "gate");
	assert_env(listing, "PEVTUI_RUN_ID", "20261122-abc");
	assert_env(listing, "PEVTUI_RUN_DIR", "/runs/20261122-abc");
	assert_env(listing, "PEVTUI_GATE", "high");
	assert_env(listing, "PEVTUI_STEP", "s1");
	assert_env(listing, "PEVTUI_STATUS", "");
	assert_env(listing, "PEVTUI_MESSAGE",
	           "high gate: step s1 \"Draft the memo\" (high complexity) waits for approval");
	assert_null(env_value(listing, "PEVTUI_TEST_MARK"));
	/* the operator's own environment otherwise */
	{
		char *path_var = env_value(listing, "PATH");

		assert_non_null(path_var);
		free(path_var);
	}
	free(listing);
	free(path);

	path = xasprintf("%s/env.end", dir);
	listing = testdir_slurp(path);
	assert_non_null(listing);
	assert_env(listing, "PEVTUI_EVENT", "end");
	assert_env(listing, "PEVTUI_GATE", "");
	assert_env(listing, "PEVTUI_STEP", "");
	assert_env(listing, "PEVTUI_STATUS", "aborted");
	assert_env(listing, "PEVTUI_MESSAGE", "the run ended: aborted — operator");
	free(listing);
	free(path);

	unsetenv("PEVTUI_GATE");
	unsetenv("PEVTUI_TEST_MARK");
	free(g);
	free(cmd);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* Dead, or a zombie nobody reaped yet. */
static bool gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	char *p;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void test_cmd_time_limit(void **state)
{
	char *dir = testdir_new("notify");
	char *cmd, *path, *pid_text;
	struct notify_config c = {
	    .events = NOTIFY_GATES,
	    .operator_gates = ALL_GATES,
	    .term_fd = -1,
	    .timeout_s = 1,
	    .run_id = "r",
	};
	struct notify *n;
	struct notify_signal s;
	double t0;
	char *g = high(1);
	pid_t pid;

	(void)state;
	/* The shell waits on a child of its own: both outlive the limit unless ended. */
	cmd = xasprintf("sleep 60 & echo $! > '%s/pid.tmp' && mv '%s/pid.tmp' '%s/pid'; wait", dir,
	                dir, dir);
	c.cmd = cmd;
	n = notify_new(&c);
	assert_true(consider(n, EV_GATE_OPEN, g, 1, &s));
	t0 = mono();
	notify_send(n, &s);
	assert_true(mono() - t0 < 0.5);
	notify_free(n);
	/* the limit (1 s) and the grace before SIGKILL (1 s), not the command's 60 s */
	assert_true(mono() - t0 < 10);
	path = xasprintf("%s/pid", dir);
	pid_text = testdir_slurp(path);
	assert_non_null(pid_text);
	pid = (pid_t)atol(pid_text);
	assert_true(pid > 1);
	/* SIGKILL is sent by then, but another process dies when the kernel next runs it:
	 * wait for it to be gone (a loaded machine may take a moment), up to 10 s. */
	for (t0 = mono(); !gone(pid) && mono() - t0 < 10;)
		usleep(10000);
	assert_true(gone(pid));
	free(pid_text);
	free(path);
	free(cmd);
	free(g);
	assert_true(testdir_remove(dir));
	free(dir);
}

/* --headless: the bell and escape go to its terminal (here a pipe stands in for it). */
static void test_terminal_bytes(void **state)
{
	int fds[2];
	struct notify_config c = {
	    .events = NOTIFY_GATES | NOTIFY_END,
	    .operator_gates = 0,
	    .bell = true,
	    .osc = NOTIFY_OSC_777,
	    .run_id = "r",
	};
	struct notify *n;
	struct notify_signal s;
	char buf[1024];
	ssize_t k;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	c.term_fd = fds[1];
	n = notify_new(&c);
	assert_true(consider(n, EV_RUN_END,
	                     "{\"status\":\"passed\",\"exit_code\":0,\"reason\":\"\\u0007\"}", 1,
	                     &s));
	notify_send(n, &s);
	notify_free(n);
	close(fds[1]);
	k = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	assert_true(k > 0);
	buf[k] = '\0';
	assert_string_equal(buf, "\a\033]777;notify;pevtui: run ended;the run ended: passed\033\\");

	/* notify_terminal_text without the bell (the cockpit beeps through curses) */
	c.term_fd = -1;
	c.osc = NOTIFY_OSC_OFF;
	n = notify_new(&c);
	s.event = xstrdup("end");
	s.message = xstrdup("m");
	assert_null(notify_terminal_text(n, &s, false));
	{
		char *t = notify_terminal_text(n, &s, true);

		assert_string_equal(t, "\a");
		free(t);
	}
	notify_signal_release(&s);
	notify_free(n);
}

static void test_queue_bounded(void **state)
{
	struct notify_config c = {
	    .events = NOTIFY_GATES,
	    .operator_gates = ALL_GATES,
	    .term_fd = -1,
	    .timeout_s = 1,
	    .cmd = "sleep 30",
	    .run_id = "r",
	};
	struct notify *n = notify_new(&c);
	struct notify_signal s;
	double t0 = mono();

	(void)state;
	for (int i = 1; i <= NOTIFY_QUEUE_MAX + 4; i++) {
		char *g = high(i);

		assert_true(consider(n, EV_GATE_OPEN, g, i, &s));
		notify_send(n, &s);
		free(g);
	}
	/* never waits on the commands; those past the queue are counted */
	assert_true(mono() - t0 < 1.0);
	assert_true(notify_dropped(n) >= 3);
	/* every command left shares one time limit at the end */
	notify_free(n);
	assert_true(mono() - t0 < 10);
}

/* ---- settings --------------------------------------------------------------------------- */

static void test_settings(void **state)
{
	char *dir = testdir_new("notify");
	char *path = xasprintf("%s/config", dir);
	struct settings st;
	char *err = NULL;
	FILE *f;

	(void)state;
	settings_init(&st);
	assert_int_equal(st.notify, NOTIFY_GATES | NOTIFY_END);
	assert_true(st.notify_bell);
	assert_int_equal(st.notify_osc, NOTIFY_OSC_AUTO);
	assert_null(st.notify_cmd);
	assert_int_equal(st.notify_timeout_s, NOTIFY_TIMEOUT_S);
	assert_int_equal(st.notify_debounce_s, NOTIFY_DEBOUNCE_S);

	f = fopen(path, "w");
	fputs("[ui]\nnotify = end\nnotify_bell = no\nnotify_osc = osc9\n"
	      "notify_cmd = ntfy publish mytopic \"$PEVTUI_MESSAGE\"\nnotify_timeout = 5\n"
	      "notify_debounce = 0\n",
	      f);
	fclose(f);
	assert_true(settings_load_file(&st, path, &err));
	assert_int_equal(st.notify, NOTIFY_END);
	assert_false(st.notify_bell);
	assert_int_equal(st.notify_osc, NOTIFY_OSC_9);
	assert_string_equal(st.notify_cmd, "ntfy publish mytopic \"$PEVTUI_MESSAGE\"");
	assert_int_equal(st.notify_timeout_s, 5);
	assert_int_equal(st.notify_debounce_s, 0);

	f = fopen(path, "w");
	fputs("[ui]\nnotify = gates,mail\n", f);
	fclose(f);
	assert_false(settings_load_file(&st, path, &err));
	assert_non_null(strstr(err, ":2: unknown notify event \"mail\""));
	free(err);
	err = NULL;
	f = fopen(path, "w");
	fputs("[ui]\nnotify_osc = osc99\n", f);
	fclose(f);
	assert_false(settings_load_file(&st, path, &err));
	assert_non_null(strstr(err, "notify_osc must be auto, osc9, osc777 or off"));
	free(err);
	err = NULL;
	f = fopen(path, "w");
	fputs("[ui]\nnotify_bell = maybe\n", f);
	fclose(f);
	assert_false(settings_load_file(&st, path, &err));
	assert_non_null(strstr(err, "notify_bell must be yes or no"));
	free(err);
	err = NULL;
	f = fopen(path, "w");
	fputs("[ui]\nnotify_timeout = 0\n", f);
	fclose(f);
	assert_false(settings_load_file(&st, path, &err));
	assert_non_null(strstr(err, "notify_timeout must be a whole number of seconds from 1"));
	free(err);
	settings_release(&st);
	free(path);
	assert_true(testdir_remove(dir));
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_events),
	    cmocka_unit_test(test_osc_resolve),
	    cmocka_unit_test(test_osc_text_is_clean),
	    cmocka_unit_test(test_debounce),
	    cmocka_unit_test(test_per_event_and_policy),
	    cmocka_unit_test(test_messages),
	    cmocka_unit_test(test_cmd_environment),
	    cmocka_unit_test(test_cmd_time_limit),
	    cmocka_unit_test(test_terminal_bytes),
	    cmocka_unit_test(test_queue_bounded),
	    cmocka_unit_test(test_settings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
