/* notify — a signal when the operator is needed (see notify.h for the contract). */
#include "config.h"

#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fdio.h"
#include "gate.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

extern char **environ;

/* After the time limit: SIGTERM to the command's process group, then this long before
 * SIGKILL. */
#define KILL_GRACE_S 1.0

struct job {
	struct notify_signal sig;
	char *term; /* bytes for term_fd, or NULL */
};

struct notify {
	/* The deciding side: one thread at a time (notify_consider). */
	unsigned events, operator_gates;
	double debounce_s;
	double last_gate; /* monotonic seconds of the last gate signal; < 0 never */
	char *run_id, *run_dir;
	int stopped_gate;    /* a gate the policy refused for want of an operator; -1 none */
	unsigned long *open; /* ids of the operator's gates open now */
	size_t n_open, cap_open;
	bool bell;
	enum notify_osc osc;
	bool osc_wrap;
	int term_fd;

	/* The notify thread and its queue. The thread reads only what never changes after
	 * notify_new (cmd, timeout_s, run_dir, term_fd) and the jobs it takes. */
	char *cmd;
	int timeout_s;
	bool has_thread;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *q;
	size_t qn, qcap;
	bool closing;
	double close_deadline; /* monotonic: every command left ends by then */
	unsigned long dropped;
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- names ---------------------------------------------------------------------------- */

bool notify_parse_events(const char *list, unsigned *mask, char **err)
{
	char *copy = xstrdup(list ? list : ""), *save = NULL, *tok;
	unsigned m = 0;
	bool ok = true;

	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (!strcmp(tok, "gates") || !strcmp(tok, "gate"))
			m |= NOTIFY_GATES;
		else if (!strcmp(tok, "end"))
			m |= NOTIFY_END;
		else if (!strcmp(tok, "all"))
			m |= NOTIFY_GATES | NOTIFY_END;
		else if (strcmp(tok, "none") != 0) {
			*err = xasprintf("unknown notify event \"%.40s\": use gates, end, both "
			                 "(gates,end) or none",
			                 tok);
			ok = false;
			break;
		}
	}
	free(copy);
	if (ok)
		*mask = m;
	return ok;
}

static const char *const osc_names[] = {
    [NOTIFY_OSC_AUTO] = "auto",
    [NOTIFY_OSC_OFF] = "off",
    [NOTIFY_OSC_9] = "osc9",
    [NOTIFY_OSC_777] = "osc777",
};

int notify_osc_from_name(const char *name)
{
	for (int i = 0; name && i < (int)(sizeof(osc_names) / sizeof(osc_names[0])); i++)
		if (!strcmp(name, osc_names[i]))
			return i;
	return -1;
}

static bool set_in(char *(*get)(const char *), const char *name)
{
	const char *v = get(name);

	return v && *v;
}

static bool is(char *(*get)(const char *), const char *name, const char *want)
{
	const char *v = get(name);

	return v && !strcmp(v, want);
}

enum notify_osc notify_osc_resolve(enum notify_osc setting, char *(*get)(const char *),
                                   bool *tmux_wrap)
{
	const char *term = get("TERM");
	bool tmux = set_in(get, "TMUX");

	*tmux_wrap = false;
	if (setting != NOTIFY_OSC_AUTO) {
		*tmux_wrap = tmux && setting != NOTIFY_OSC_OFF;
		return setting;
	}
	if (tmux || set_in(get, "STY") || (term && !strncmp(term, "screen", 6)) ||
	    (term && !strncmp(term, "tmux", 4)))
		return NOTIFY_OSC_OFF;
	if (is(get, "TERM_PROGRAM", "iTerm.app"))
		return NOTIFY_OSC_9;
	if (is(get, "TERM_PROGRAM", "WezTerm") || is(get, "TERM_PROGRAM", "ghostty"))
		return NOTIFY_OSC_777;
	if (term && (!strcmp(term, "xterm-ghostty") || !strcmp(term, "foot") ||
	             !strcmp(term, "foot-extra") || !strncmp(term, "rxvt-unicode", 12)))
		return NOTIFY_OSC_777;
	return NOTIFY_OSC_OFF;
}

/* ---- text ----------------------------------------------------------------------------- */

/* One clean line of at most `cols` columns: no control, no escape sequence; with
 * `no_semicolon`, ';' becomes ','. Caller frees. */
static char *clean_line(const char *s, int cols, bool no_semicolon)
{
	char *c = textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);
	char *t;

	if (no_semicolon)
		for (char *p = c; *p; p++)
			if (*p == ';')
				*p = ',';
	t = textsan_truncate(c, cols);
	free(c);
	return t;
}

char *notify_osc_text(enum notify_osc mode, bool tmux_wrap, const char *title, const char *body)
{
	struct strbuf seq = STRBUF_INIT, out = STRBUF_INIT;
	char *t, *b;

	if (mode != NOTIFY_OSC_9 && mode != NOTIFY_OSC_777)
		return NULL;
	t = clean_line(title && *title ? title : "pevtui", 60, true);
	b = clean_line(body, NOTIFY_MESSAGE_COLS, true);
	strbuf_init(&seq);
	if (mode == NOTIFY_OSC_777) {
		strbuf_addf(&seq, "\033]777;notify;%s;%s\033\\", t, b);
	} else {
		/* OSC 9 has no title: "title: body", which also never starts with a digit
		 * unless the title does. */
		bool digit = (*t >= '0' && *t <= '9') || (!*t && *b >= '0' && *b <= '9');

		strbuf_addf(&seq, "\033]9;%s%s%s%s\033\\", digit ? "pevtui " : "", t,
		            *t && *b ? ": " : "", b);
	}
	free(t);
	free(b);
	if (!tmux_wrap)
		return strbuf_detach(&seq);
	/* tmux's passthrough: DCS tmux; … ST, each ESC inside doubled. */
	strbuf_init(&out);
	strbuf_adds(&out, "\033Ptmux;");
	for (size_t i = 0; i < seq.len; i++) {
		if (seq.buf[i] == '\033')
			strbuf_addc(&out, '\033');
		strbuf_addc(&out, seq.buf[i]);
	}
	strbuf_adds(&out, "\033\\");
	strbuf_release(&seq);
	return strbuf_detach(&out);
}

void notify_signal_release(struct notify_signal *s)
{
	if (!s)
		return;
	free(s->event);
	free(s->gate);
	free(s->step_id);
	free(s->status);
	free(s->message);
	free(s->run_id);
	memset(s, 0, sizeof(*s));
}

/* ---- deciding ------------------------------------------------------------------------- */

static bool open_has(const struct notify *n, unsigned long id, size_t *at)
{
	for (size_t i = 0; i < n->n_open; i++)
		if (n->open[i] == id) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

/* The step's name from a gate's "step" object, quoted, or "". */
static void add_step(struct strbuf *sb, const char *sid, const cJSON *step)
{
	const char *name = jsonx_str(step, "name");

	strbuf_adds(sb, "step ");
	strbuf_adds(sb, sid ? sid : "?");
	if (name && *name)
		strbuf_addf(sb, " \"%s\"", name);
}

static char *gate_message(const struct notify *n, int kind, const char *sid, const cJSON *o)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *step = cJSON_GetObjectItemCaseSensitive(o, "step");
	double v, cap;
	char *line, *head, *tail;

	strbuf_init(&sb);
	strbuf_addf(&sb, "%s gate: ", gate_kind_name((enum gate_kind)kind));
	switch (kind) {
	case GATE_PLAN:
		strbuf_adds(&sb, "the plan");
		if (jsonx_num(o, "revision", &v))
			strbuf_addf(&sb, " (revision %.0f)", v);
		strbuf_adds(&sb, " waits for approval");
		if (jsonx_num(o, "estimate_usd", &v))
			strbuf_addf(&sb, ", estimate $%.4f", v);
		break;
	case GATE_HIGH:
		add_step(&sb, sid, step);
		strbuf_adds(&sb, " (high complexity) waits for approval");
		break;
	case GATE_STEP:
		add_step(&sb, sid, step);
		strbuf_adds(&sb, " waits for approval");
		break;
	case GATE_SHELL:
		add_step(&sb, sid, step);
		strbuf_adds(&sb, " asks to run: ");
		strbuf_adds(&sb, jsonx_str(o, "command") ? jsonx_str(o, "command") : "?");
		break;
	case GATE_MCP:
		add_step(&sb, sid, step);
		strbuf_adds(&sb, " asks to call the MCP tool ");
		strbuf_adds(&sb, jsonx_str(o, "tool") ? jsonx_str(o, "tool") : "?");
		break;
	case GATE_REPLAN:
		strbuf_adds(&sb, "step ");
		strbuf_adds(&sb, jsonx_str(o, "failed_step") ? jsonx_str(o, "failed_step") : "?");
		strbuf_adds(&sb, " failed; a new plan");
		if (jsonx_num(o, "revision", &v))
			strbuf_addf(&sb, " (revision %.0f)", v);
		strbuf_adds(&sb, " waits for approval");
		break;
	case GATE_BUDGET:
		if (jsonx_num(o, "spent_usd", &v) && jsonx_num(o, "budget_usd", &cap))
			strbuf_addf(&sb, "$%.4f spent of a $%.4f budget; ", v, cap);
		strbuf_adds(&sb, "the run waits for a higher budget");
		break;
	default: strbuf_adds(&sb, "waits for the operator"); break;
	}
	/* The count stays whole when a long command is cut. */
	tail = n->n_open > 1 ? xasprintf(" (%zu gates waiting)", n->n_open) : xstrdup("");
	head = clean_line(sb.buf, NOTIFY_MESSAGE_COLS - (int)strlen(tail), false);
	line = xasprintf("%s%s", head, tail);
	free(head);
	free(tail);
	strbuf_release(&sb);
	return line;
}

static char *end_message(const cJSON *o)
{
	const char *status = jsonx_str(o, "status");
	char *reason = clean_line(jsonx_str(o, "reason"), NOTIFY_MESSAGE_COLS, false);
	char *m = xasprintf("the run ended: %s%s%s", status ? status : "unknown",
	                    *reason ? " — " : "", reason);
	char *line = clean_line(m, NOTIFY_MESSAGE_COLS, false);

	free(reason);
	free(m);
	return line;
}

/* Identifiers go into the environment and the escape too: cleaned like the message. */
static char *clean_id(const char *s)
{
	return s ? clean_line(s, 120, false) : NULL;
}

static bool on_gate_open(struct notify *n, const cJSON *o, double now, struct notify_signal *out)
{
	int kind = gate_kind_from_name(jsonx_str(o, "gate"));
	double id = 0;
	const char *sid = jsonx_str(o, "step_id");

	if (kind < 0 || !(n->operator_gates & GATE_MASK(kind)))
		return false; /* the policy answers it: nobody is needed */
	jsonx_num(o, "gate_id", &id);
	if (!open_has(n, (unsigned long)id, NULL)) {
		n->open = xgrow(n->open, &n->cap_open, n->n_open + 1, sizeof(*n->open));
		n->open[n->n_open++] = (unsigned long)id;
	}
	if (!(n->events & NOTIFY_GATES))
		return false;
	if (n->last_gate >= 0 && now - n->last_gate < n->debounce_s)
		return false; /* folded into the signal just given */
	n->last_gate = now;
	out->event = xstrdup("gate");
	out->gate = xstrdup(gate_kind_name((enum gate_kind)kind));
	out->step_id = clean_id(sid);
	out->message = gate_message(n, kind, sid, o);
	return true;
}

static void on_gate_decision(struct notify *n, const cJSON *o)
{
	double id = 0;
	size_t at;
	const char *by = jsonx_str(o, "by"), *d = jsonx_str(o, "decision");

	jsonx_num(o, "gate_id", &id);
	if (open_has(n, (unsigned long)id, &at))
		n->open[at] = n->open[--n->n_open];
	/* Refused for want of an operator: the run is about to end at this gate. */
	if (by && d && !strcmp(by, "policy") && !strcmp(d, "reject"))
		n->stopped_gate = gate_kind_from_name(jsonx_str(o, "gate"));
}

static bool on_run_end(struct notify *n, const cJSON *o, double now, struct notify_signal *out)
{
	int stopped = n->stopped_gate;

	n->stopped_gate = -1;
	n->n_open = 0;
	/* With only gates asked for, a run that stopped at a gate nobody could answer still
	 * needs its operator. */
	if (!(n->events & NOTIFY_END) && !((n->events & NOTIFY_GATES) && stopped >= 0))
		return false;
	n->last_gate = now;
	out->event = xstrdup("end");
	out->gate = stopped >= 0 ? xstrdup(gate_kind_name((enum gate_kind)stopped)) : NULL;
	out->status = clean_id(jsonx_str(o, "status"));
	out->message = end_message(o);
	return true;
}

bool notify_consider(struct notify *n, const struct event *ev, double now,
                     struct notify_signal *out)
{
	cJSON *o;
	bool yes = false;

	memset(out, 0, sizeof(*out));
	if (!n || !ev)
		return false;
	switch (ev->type) {
	case EV_RUN_START:
	case EV_RUN_REOPEN:
	case EV_GATE_OPEN:
	case EV_GATE_DECISION:
	case EV_RUN_END: break;
	default: return false;
	}
	o = cJSON_Parse(ev->json);
	if (!o)
		return false;
	switch (ev->type) {
	case EV_RUN_START:
		if (jsonx_str(o, "run_id")) {
			free(n->run_id);
			n->run_id = clean_id(jsonx_str(o, "run_id"));
		}
		break;
	case EV_RUN_REOPEN: n->stopped_gate = -1; break;
	case EV_GATE_OPEN: yes = on_gate_open(n, o, now, out); break;
	case EV_GATE_DECISION: on_gate_decision(n, o); break;
	case EV_RUN_END: yes = on_run_end(n, o, now, out); break;
	default: break;
	}
	cJSON_Delete(o);
	/* The notify thread reads the signal only: run_id travels with it. */
	if (yes)
		out->run_id = xstrdup(n->run_id);
	return yes;
}

char *notify_terminal_text(const struct notify *n, const struct notify_signal *s, bool bell)
{
	struct strbuf sb = STRBUF_INIT;
	char *osc;

	strbuf_init(&sb);
	if (bell)
		strbuf_addc(&sb, '\a');
	osc = notify_osc_text(n->osc, n->osc_wrap,
	                      s->event && !strcmp(s->event, "end") ? "pevtui: run ended"
	                                                           : "pevtui: gate waiting",
	                      s->message);
	if (osc)
		strbuf_adds(&sb, osc);
	free(osc);
	if (!sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

/* ---- the notify thread: terminal bytes and notify_cmd ----------------------------------- */

/* fork() runs atfork handlers, which are not async-signal-safe; _Fork does not. */
static pid_t fork_raw(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	return _Fork();
#else
	return fork();
#endif
}

/* A descriptor moved above 0..2 (which the child replaces), close-on-exec. */
static int above_std(int fd)
{
	int moved;

	if (fd < 0 || fd > 2)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

/*
 * The command's environment: pevtui's own (the operator's, less the credentials that
 * secrets_scrub_env removed), any PEVTUI_* replaced by this signal's.
 */
static char **build_env(const struct notify *n, const struct notify_signal *s)
{
	struct strvec env = STRVEC_INIT;
	char **v;

	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "PEVTUI_", 7) != 0)
			strvec_push(&env, *e);
	strvec_pushf(&env, "PEVTUI_EVENT=%s", s->event ? s->event : "");
	strvec_pushf(&env, "PEVTUI_RUN_ID=%s", s->run_id ? s->run_id : "");
	strvec_pushf(&env, "PEVTUI_RUN_DIR=%s", n->run_dir ? n->run_dir : "");
	strvec_pushf(&env, "PEVTUI_GATE=%s", s->gate ? s->gate : "");
	strvec_pushf(&env, "PEVTUI_STEP=%s", s->step_id ? s->step_id : "");
	strvec_pushf(&env, "PEVTUI_STATUS=%s", s->status ? s->status : "");
	strvec_pushf(&env, "PEVTUI_MESSAGE=%s", s->message ? s->message : "");
	v = xcalloc(env.n + 1, sizeof(*v));
	for (size_t i = 0; i < env.n; i++)
		v[i] = env.v[i]; /* the strings move to v */
	free(env.v);
	return v;
}

static void free_env(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The child: its own session and process group (the time limit ends the whole group),
 * /dev/null for stdin, stdout and stderr, descriptor 3 the write end of `alive` (end of
 * file there tells the parent every process of the command is gone), nothing else open,
 * signals as a fresh program expects. Async-signal-safe calls only. */
_Noreturn static void child_main(int devnull, int alive_w, char *const *argv, char *const *envp)
{
	struct sigaction dfl;
	sigset_t none;

	setsid();
	if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
		_exit(127);
	if (alive_w != 3) {
		if (dup2(alive_w, 3) < 0)
			_exit(127);
	} else {
		fcntl(3, F_SETFD, 0);
	}
	if (close_range(4, ~0u, 0) < 0)
		for (int fd = 4; fd < 4096; fd++)
			close(fd);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve("/bin/sh", argv, envp);
	_exit(127);
}

/* Waits until end of file on `fd` (every holder closed it) or `deadline`. */
static bool wait_eof(int fd, double deadline)
{
	char buf[256];

	for (;;) {
		double left = deadline - mono_now();
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t k;
		int r;

		if (left <= 0)
			return false;
		r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		k = read(fd, buf, sizeof(buf)); /* output on descriptor 3 is discarded */
		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
			return true;
	}
}

/* Reaps `pid` by `deadline`. Normally it has exited already (it closed descriptor 3 by
 * ending); a shell that closed it itself is polled, briefly, up to the deadline. */
static bool reap_by(pid_t pid, double deadline)
{
	for (;;) {
		pid_t w = waitpid(pid, NULL, WNOHANG);
		struct timespec ts = {0, 20 * 1000 * 1000};

		if (w == pid || (w < 0 && errno == ECHILD))
			return true;
		if (w < 0 && errno == EINTR)
			continue;
		if (mono_now() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

static void run_command(struct notify *n, const struct notify_signal *s, double deadline)
{
	char *argv[] = {"sh", "-c", n->cmd, NULL};
	char **envp = build_env(n, s);
	int devnull = above_std(open("/dev/null", O_RDWR | O_CLOEXEC));
	int alive[2] = {-1, -1};
	pid_t pid = -1;

	if (devnull >= 0 && pipe2(alive, O_CLOEXEC) == 0) {
		alive[0] = above_std(alive[0]);
		alive[1] = above_std(alive[1]);
		if (alive[0] >= 0 && alive[1] >= 0)
			pid = fork_raw();
		if (pid == 0)
			child_main(devnull, alive[1], argv, envp);
	}
	if (alive[1] >= 0)
		close(alive[1]);
	if (pid > 0) {
		bool gone = wait_eof(alive[0], deadline);
		bool reaped = gone && reap_by(pid, deadline);

		if (!gone || !reaped) {
			/* The time limit: everything the command started goes with it. */
			kill(-pid, SIGTERM);
			if (!wait_eof(alive[0], mono_now() + KILL_GRACE_S) ||
			    !reap_by(pid, mono_now() + KILL_GRACE_S))
				kill(-pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	if (alive[0] >= 0)
		close(alive[0]);
	if (devnull >= 0)
		close(devnull);
	free_env(envp);
}

static void *notify_main(void *arg)
{
	struct notify *n = arg;

	for (;;) {
		struct job job;
		double deadline;

		if (pthread_mutex_lock(&n->lock))
			fatal("notify: cannot lock its queue");
		while (!n->qn && !n->closing)
			pthread_cond_wait(&n->cond, &n->lock);
		if (!n->qn) {
			pthread_mutex_unlock(&n->lock);
			break;
		}
		job = n->q[0];
		memmove(n->q, n->q + 1, (n->qn - 1) * sizeof(*n->q));
		n->qn--;
		deadline = mono_now() + n->timeout_s;
		if (n->closing && n->close_deadline < deadline)
			deadline = n->close_deadline;
		pthread_mutex_unlock(&n->lock);

		if (job.term && n->term_fd >= 0)
			(void)fd_write_all(n->term_fd, job.term, strlen(job.term));
		if (n->cmd && deadline > mono_now())
			run_command(n, &job.sig, deadline);
		notify_signal_release(&job.sig);
		free(job.term);
	}
	return NULL;
}

struct notify *notify_new(const struct notify_config *c)
{
	struct notify *n = xcalloc(1, sizeof(*n));

	n->events = c->events;
	n->operator_gates = c->operator_gates;
	n->debounce_s = c->debounce_s > 0 ? c->debounce_s : 0;
	n->last_gate = -1;
	n->run_id = clean_id(c->run_id);
	n->run_dir = xstrdup(c->run_dir);
	n->stopped_gate = -1;
	n->bell = c->bell;
	n->osc = c->osc == NOTIFY_OSC_9 || c->osc == NOTIFY_OSC_777 ? c->osc : NOTIFY_OSC_OFF;
	n->osc_wrap = c->osc_tmux_wrap;
	n->term_fd = c->term_fd;
	n->cmd = c->cmd && *c->cmd ? xstrdup(c->cmd) : NULL;
	n->timeout_s = c->timeout_s > 0 ? c->timeout_s : NOTIFY_TIMEOUT_S;
	if (pthread_mutex_init(&n->lock, NULL) || pthread_cond_init(&n->cond, NULL))
		fatal("notify: cannot create a lock");
	if (n->events && (n->cmd || n->term_fd >= 0)) {
		sigset_t all, old;

		/* No signal of the program's (SIGWINCH, the stop signals) lands here. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if (pthread_create(&n->thread, NULL, notify_main, n))
			fatal("notify: cannot start its thread");
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		n->has_thread = true;
	}
	return n;
}

void notify_free(struct notify *n)
{
	if (!n)
		return;
	if (n->has_thread) {
		if (pthread_mutex_lock(&n->lock))
			fatal("notify: cannot lock its queue");
		n->closing = true;
		n->close_deadline = mono_now() + n->timeout_s;
		pthread_cond_signal(&n->cond);
		pthread_mutex_unlock(&n->lock);
		pthread_join(n->thread, NULL);
	}
	for (size_t i = 0; i < n->qn; i++) {
		notify_signal_release(&n->q[i].sig);
		free(n->q[i].term);
	}
	free(n->q);
	pthread_mutex_destroy(&n->lock);
	pthread_cond_destroy(&n->cond);
	free(n->open);
	free(n->run_id);
	free(n->run_dir);
	free(n->cmd);
	free(n);
}

void notify_send(struct notify *n, struct notify_signal *s)
{
	struct job job;

	if (!n || !n->has_thread) {
		notify_signal_release(s);
		return;
	}
	job.sig = *s;
	memset(s, 0, sizeof(*s));
	job.term = n->term_fd >= 0 ? notify_terminal_text(n, &job.sig, n->bell) : NULL;
	if (pthread_mutex_lock(&n->lock))
		fatal("notify: cannot lock its queue");
	if (n->qn >= NOTIFY_QUEUE_MAX || n->closing) {
		n->dropped++;
		pthread_mutex_unlock(&n->lock);
		notify_signal_release(&job.sig);
		free(job.term);
		return;
	}
	n->q = xgrow(n->q, &n->qcap, n->qn + 1, sizeof(*n->q));
	n->q[n->qn++] = job;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
}

void notify_on_event(void *ctx, const struct event *ev)
{
	struct notify *n = ctx;
	struct notify_signal s;

	if (notify_consider(n, ev, mono_now(), &s))
		notify_send(n, &s);
}

bool notify_bell_on(const struct notify *n)
{
	return n && n->bell;
}

unsigned long notify_dropped(struct notify *n)
{
	unsigned long d;

	if (pthread_mutex_lock(&n->lock))
		fatal("notify: cannot lock its queue");
	d = n->dropped;
	pthread_mutex_unlock(&n->lock);
	return d;
}
