/* tool_shell — run_shell: one command in the workspace, time-limited, behind the shell gate. */
#include "config.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "confine.h"
#include "secrets.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

extern char **environ;

/*
 * The policy, in one place:
 * - A command the operator refuses, one that cannot start and one that runs out of time
 *   or is cancelled are tool failures (false). A command that runs and exits non-zero is
 *   a result (true) stating "exit status N": a failing test or grep is information.
 * - A command holding a character the gate could not show as it is (a control character,
 *   a bidirectional override, invalid UTF-8) is refused before the gate, and so is an
 *   operator's edit holding one: what the operator approves is what runs.
 * - An allow-listed prefix skips the gate only for a command of plain words (see
 *   plain_words), so "git status; rm -rf ." or "grep KEY /proc/self/../x*" still asks.
 * - Nothing the command started outlives the call, not even a process that starts its own
 *   session: the shell runs under a keeper process that is a child subreaper, so every
 *   orphan the command leaves is reparented to the keeper, which ends them all before it
 *   exits, and run_shell returns only after the keeper has exited. (A command that kills
 *   its own keeper with SIGKILL can escape, and the result then says so; work a command
 *   hands to a daemon that was already running, such as systemd-run or a tmux server, is
 *   not below the keeper at all.)
 * - The child gets the environment without variables that look like credentials or lead
 *   into the operator's sessions (secret_env_withheld in secrets.h), so a command cannot
 *   echo an API key into the model's context or the journal, or use the operator's SSH
 *   agent or terminal multiplexer.
 */
#define KILL_GRACE_MS 1000 /* SIGTERM, then this long before SIGKILL */
#define KILL_FORCE_MS 2000 /* how long the keeper keeps killing before it gives up */
#define KEEPER_WAIT_MS (KILL_GRACE_MS + KILL_FORCE_MS + 1000) /* then the keeper is killed */
#define FLUSH_MS 200 /* output still read after the shell has exited */
#define HALF_OUTPUT (TOOL_MAX_OUTPUT / 2)

/* ---- helpers -------------------------------------------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

static bool cancelled(const struct tool_env *env)
{
	return env->cancel && atomic_load(env->cancel);
}

/* The command as it may appear in a message: one clean line, bounded. Caller frees. */
static char *show(const char *s)
{
	size_t n = strlen(s);
	char *clean = textsan_clean(s, n > 300 ? 300 : n, 0);
	if (n <= 300)
		return clean;
	char *r = xasprintf("%s...", clean);
	free(clean);
	return r;
}

/* ---- what the gate could not show ----------------------------------------------------- */

static const char *bidi_name(uint32_t cp)
{
	static const char *const embed[] = {"LEFT-TO-RIGHT EMBEDDING", "RIGHT-TO-LEFT EMBEDDING",
					    "POP DIRECTIONAL FORMATTING",
					    "LEFT-TO-RIGHT OVERRIDE", "RIGHT-TO-LEFT OVERRIDE"};
	static const char *const isolate[] = {"LEFT-TO-RIGHT ISOLATE", "RIGHT-TO-LEFT ISOLATE",
					      "FIRST STRONG ISOLATE",
					      "POP DIRECTIONAL ISOLATE"};
	if (cp >= 0x202A && cp <= 0x202E)
		return embed[cp - 0x202A];
	if (cp >= 0x2066 && cp <= 0x2069)
		return isolate[cp - 0x2066];
	return NULL;
}

/*
 * The gate shows the operator a command cleaned of controls, so a command holding one
 * would run as something other than what was approved ("true\v; echo x" shows as
 * "true; echo x"). NULL when `cmd` holds none; otherwise a phrase naming the first one
 * visibly, with its byte position counted from 1, e.g. "a control character (^K, U+000B)
 * at byte 5", and *advice says how to write it. TAB and LF are ordinary. Caller frees.
 */
static char *unshowable(const char *cmd, const char **advice)
{
	size_t n = strlen(cmd);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = textsan_decode(cmd + i, n - i, &cp);
		size_t at = i + 1;
		i += len;
		if (cp == 0xFFFD && len == 1) {
			*advice = "write it as UTF-8 text";
			return xasprintf("a byte that is not UTF-8 (0x%02X) at byte %zu",
					 (unsigned)(unsigned char)cmd[at - 1], at);
		}
		if (cp == '\t' || cp == '\n')
			continue;
		if (cp < 0x20 || cp == 0x7F) {
			*advice = "write it without control characters";
			return xasprintf("a control character (^%c, U+%04X) at byte %zu",
					 cp == 0x7F ? '?' : (char)(cp + 0x40), (unsigned)cp, at);
		}
		if (cp >= 0x80 && cp <= 0x9F) {
			*advice = "write it without control characters";
			return xasprintf("a control character (U+%04X) at byte %zu", (unsigned)cp,
					 at);
		}
		const char *name = bidi_name(cp);
		if (name) {
			*advice = "write it without bidirectional formatting characters";
			return xasprintf("a bidirectional formatting character (U+%04X %s) at byte "
					 "%zu",
					 (unsigned)cp, name, at);
		}
	}
	return NULL;
}

/* ---- the allow-list -------------------------------------------------------------------- */

/*
 * Whether the allow-list may skip the gate for `cmd`: only when the command is plain words
 * the operator could have foreseen when allowing its prefix. "grep" was allowed to search
 * named workspace files, not to do whatever else the shell can make of the line: a model
 * read the API key with `grep -a -h -o OPENAI_API_KEY=[^[:cntrl:]]* /proc/self/../x/environ`
 * with a glob in place of the x. So every byte must be a letter, a digit, one of
 * "-_.,:=+@%/", a space, or part of a UTF-8 character (already checked by unshowable).
 * That leaves out chaining, pipes and redirection (; & | < > newline), expansion ($ ` ( )),
 * globs, brackets, braces and tildes (* ? [ ] { } ~), quotes and escapes (' " \, which
 * would hide the rest from this check), ! and #, and every control character.
 * And each argument after the allowed prefix must name nothing outside the workspace: no
 * "..", no word starting with '/', no option holding a '/' ("-f/etc/x", "--file=src/x"),
 * and elsewhere a '/' only inside a relative path ("src/a.c", not "if=/etc/x" or
 * "host:/etc/x"). (Links inside the workspace are not followed here; see the README.)
 */
/* A byte that may come before '/' in a relative path: the end of a component. */
static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || (unsigned char)c >= 0x80;
}

/* Why byte c, which plain_words refuses, makes the gate ask, in a few words. */
static const char *byte_why(unsigned char c)
{
	switch (c) {
	case '*':
	case '?': return "holds a glob (* or ?)";
	case '[':
	case ']': return "holds a bracket";
	case '{':
	case '}': return "holds a brace";
	case '~': return "holds a tilde";
	case '\'':
	case '"': return "holds a quote";
	case '\\': return "holds a backslash";
	case '$': return "holds a $ expansion";
	case '`': return "holds a backtick";
	case '(':
	case ')': return "holds a parenthesis";
	case ';':
	case '&':
	case '\n': return "chains commands";
	case '|': return "holds a pipe";
	case '<':
	case '>': return "holds a redirection";
	case '!': return "holds a !";
	case '#': return "holds a #";
	case '\t': return "holds a tab";
	default: return "holds a character other than letters, digits and -_.,:=+@%/";
	}
}

/* NULL when cmd is plain words (above); otherwise why not, in a few words. */
static const char *not_plain(const char *cmd, size_t args_from)
{
	for (const unsigned char *p = (const unsigned char *)cmd; *p; p++)
		if (*p < 0x80 && !(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9') && !strchr("-_.,:=+@%/ ", *p))
			return byte_why(*p);
	const char *w = cmd + args_from;
	while (*w) {
		size_t n = strcspn(w, " ");
		for (size_t i = 0; i < n; i++) {
			if (w[i] == '.' && i + 1 < n && w[i + 1] == '.')
				return "an argument holds ..";
			if (w[i] == '/' && i == 0)
				return "an argument starts with /";
			if (w[i] == '/' && w[0] == '-')
				return "an option carries a path";
			if (w[i] == '/' && !path_char(w[i - 1]))
				return "an argument names a path outside the workspace";
		}
		w += n;
		w += strspn(w, " ");
	}
	return NULL;
}

/*
 * Whole-word prefix: "git" allows "git status" but not "gitx"; "git status" allows
 * "git status -s". Leading spaces of the command are ignored. NULL when an entry lets
 * cmd skip the gate; otherwise why not, in a few words, with *prefix (caller frees) the
 * entry it starts with when one does (its words were not plain), else NULL.
 */
static const char *allow_check(const struct strvec *allow, const char *cmd, char **prefix)
{
	const char *why = NULL;
	bool any = false;

	*prefix = NULL;
	size_t lead = strspn(cmd, " ");
	for (size_t i = 0; allow && i < allow->n; i++) {
		const char *p = allow->v[i];
		size_t n = strlen(p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0)
			continue;
		any = true;
		const char *c = cmd + lead;
		if (strncmp(c, p, n) != 0 || (c[n] != '\0' && c[n] != ' '))
			continue;
		const char *np = not_plain(cmd, lead + n);
		if (!np) {
			free(*prefix);
			*prefix = NULL;
			return NULL;
		}
		if (!why) {
			why = np;
			*prefix = xstrndup(p, n);
		}
	}
	if (why)
		return why;
	return any ? "not on the allow list" : "the allow list is empty";
}

/* ---- output capture: the head and the tail are kept, the middle is counted ---------- */

struct capture {
	char *head;
	size_t head_len;
	char *tail; /* a ring of HALF_OUTPUT bytes */
	size_t tail_pos, tail_len;
	unsigned long long total;
};

static void capture_add(struct capture *c, const char *data, size_t n)
{
	c->total += n;
	size_t h = HALF_OUTPUT - c->head_len;
	if (h > n)
		h = n;
	memcpy(c->head + c->head_len, data, h);
	c->head_len += h;
	data += h;
	n -= h;
	for (size_t i = 0; i < n; i++) {
		c->tail[c->tail_pos] = data[i];
		c->tail_pos = (c->tail_pos + 1) % HALF_OUTPUT;
		if (c->tail_len < HALF_OUTPUT)
			c->tail_len++;
	}
}

static void capture_render(const struct capture *c, struct strbuf *out)
{
	struct strbuf raw = STRBUF_INIT;
	strbuf_init(&raw);
	strbuf_add(&raw, c->head, c->head_len);
	unsigned long long cut = c->total - c->head_len - c->tail_len;
	char *clean = textsan_clean(raw.buf, raw.len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	strbuf_adds(out, clean);
	free(clean);
	strbuf_reset(&raw);
	size_t start = (c->tail_pos + HALF_OUTPUT - c->tail_len) % HALF_OUTPUT;
	for (size_t i = 0; i < c->tail_len; i++)
		strbuf_addc(&raw, c->tail[(start + i) % HALF_OUTPUT]);
	if (cut > 0)
		strbuf_addf(out, "\n[cut: %llu bytes of output from the middle; %llu bytes in "
				 "all]\n",
			    cut, c->total);
	clean = textsan_clean(raw.buf, raw.len, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	strbuf_adds(out, clean);
	free(clean);
	strbuf_release(&raw);
}

/* ---- the processes ---------------------------------------------------------------------
 *
 * run_shell (the parent) forks a keeper; the keeper makes itself a child subreaper and
 * forks the shell, which starts its own session and execs /bin/sh. The keeper reports on
 * a pipe (started, or why not; then the shell's wait status) and watches a control pipe:
 * when the parent closes it (the command is done, timed out or cancelled) or dies, the
 * keeper ends everything below it and exits. Both children are forks of a multi-threaded
 * process, so they make only async-signal-safe calls: system calls, no malloc, no stdio.
 */

/* What both children need, all made before the fork. */
struct spawn {
	int ws_fd;   /* the workspace, for fchdir */
	int devnull; /* the shell's stdin */
	int out_fd;  /* write end of the output pipe: the shell's stdout and stderr */
	int rep_fd;  /* write end of the report pipe: keeper to parent */
	int ctl_fd;  /* read end of the control pipe: end of file means "end it all" */
	const char *path; /* what to exec: /bin/sh, or the sandbox's outermost layer */
	char *const *argv;
	char *const *envp;
};

/* The keeper's reports, in order: STARTED or START_FAILED; EXITED once the shell has
 * ended; ENDED (1: nothing is left; 0: something would not die) just before it exits. */
/* FORKED (the shell's pid) comes before the shell may run anything, so the parent can stop
 * the shell's group even if the command kills its keeper at once; then STARTED or
 * START_FAILED, EXITED and ENDED. */
enum report_kind {
	REPORT_FORKED = 1, REPORT_STARTED, REPORT_START_FAILED, REPORT_EXITED, REPORT_ENDED
};

/* One message on the report pipe; smaller than PIPE_BUF, so written and read whole. */
struct report {
	int kind;
	int value; /* the shell's pid, an errno, the shell's wait status, or 1/0 */
};

static void close_fds(unsigned lo, unsigned hi)
{
	if (lo > hi)
		return;
	if (close_range(lo, hi, 0) < 0) {
		/* kernels before 5.9: close them one by one */
		for (unsigned fd = lo; fd <= hi && fd < 4096; fd++)
			close((int)fd);
	}
}

/* Closes every descriptor from 3 up except those in keep[] (any order; negatives and
 * 0..2 are ignored). Async-signal-safe. */
static void close_others(int *keep, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	unsigned lo = 3;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)lo)
			continue;
		close_fds(lo, (unsigned)keep[i] - 1);
		lo = (unsigned)keep[i] + 1;
	}
	close_fds(lo, ~0u);
}

/* Default dispositions and an empty mask, as a freshly started program expects. */
static void reset_signals(void)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* fork() runs atfork handlers, which are not async-signal-safe; _Fork does not. */
static pid_t fork_raw(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	return _Fork();
#else
	return fork();
#endif
}

/* The shell: its own session (no controlling terminal), the workspace as its directory,
 * /dev/null as stdin, the output pipe as stdout and stderr, no other inherited descriptor.
 * On failure the errno goes to the keeper through `errfd` (close-on-exec). */
_Noreturn static void shell_main(const struct spawn *sp, int errfd, int gofd)
{
	reset_signals();
	/* Nothing runs before the keeper has told the parent this process's pid. */
	char go;
	while (read(gofd, &go, 1) < 0 && errno == EINTR)
		;
	close(gofd);
	int e = 0;
	if (setsid() < 0 || fchdir(sp->ws_fd) < 0 || dup2(sp->devnull, 0) < 0 ||
	    dup2(sp->out_fd, 1) < 0 || dup2(sp->out_fd, 2) < 0)
		e = errno;
	if (!e) {
		close_others(&errfd, 1);
		execve(sp->path, sp->argv, sp->envp);
		e = errno;
	}
	ssize_t w = write(errfd, &e, sizeof(e));
	(void)w;
	_exit(127);
}

struct keeper {
	pid_t self, shell;
	bool shell_reaped;
	int rep_fd, ctl_fd, sig_fd, proc_fd;
};

static void keeper_report(const struct keeper *k, int kind, int value)
{
	struct report r = {kind, value};
	ssize_t w;
	do
		w = write(k->rep_fd, &r, sizeof(r));
	while (w < 0 && errno == EINTR);
}

/* Reaps every child that has ended and reports the shell's status. Returns how many were
 * reaped, or -1 when the keeper has no child left at all. */
static int keeper_reap(struct keeper *k)
{
	int n = 0;
	for (;;) {
		int st;
		pid_t w = waitpid(-1, &st, WNOHANG);
		if (w > 0) {
			n++;
			if (w == k->shell) {
				k->shell_reaped = true;
				keeper_report(k, REPORT_EXITED, st);
			}
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else {
			return w < 0 && errno == ECHILD ? -1 : n;
		}
	}
}

/* Waits up to ms for a SIGCHLD, and consumes the ones pending. */
static void keeper_wait_chld(const struct keeper *k, int ms)
{
	struct pollfd p = {k->sig_fd, POLLIN, 0};
	if (poll(&p, 1, ms) <= 0)
		return;
	struct signalfd_siginfo si;
	while (read(k->sig_fd, &si, sizeof(si)) > 0)
		;
}

/* The ppid field of /proc/<pid>/stat ("pid (comm) S ppid ..."; comm may hold anything). */
static pid_t stat_ppid(int proc_fd, const char *pid)
{
	char path[64];
	size_t n = strlen(pid);
	if (n > sizeof(path) - 6)
		return -1;
	memcpy(path, pid, n);
	memcpy(path + n, "/stat", 6);
	int fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[512];
	ssize_t got = read(fd, buf, sizeof(buf));
	close(fd);
	if (got <= 0)
		return -1;
	const char *p = NULL;
	for (ssize_t i = 0; i < got; i++)
		if (buf[i] == ')')
			p = buf + i;
	const char *end = buf + got;
	if (!p || end - p < 5) /* ") S 1" */
		return -1;
	p += 4;
	pid_t v = 0;
	while (p < end && *p >= '0' && *p <= '9' && v < 100000000)
		v = v * 10 + (*p++ - '0');
	return v;
}

/* Sends sig to every child of the keeper (found in /proc: ppid == keeper), and to the
 * shell's process group while the shell lives (its pid cannot be reused until then). */
static void keeper_signal_all(const struct keeper *k, int sig)
{
	if (!k->shell_reaped)
		kill(-k->shell, sig);
	_Alignas(8) char buf[4096];
	if (lseek(k->proc_fd, 0, SEEK_SET) < 0)
		return;
	for (;;) {
		long got = syscall(SYS_getdents64, k->proc_fd, buf, sizeof(buf));
		if (got <= 0)
			return;
		for (long off = 0; off < got;) {
			/* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			const char *name = buf + off + 19;
			off += reclen;
			if (name[0] < '1' || name[0] > '9')
				continue;
			if (stat_ppid(k->proc_fd, name) != k->self)
				continue;
			pid_t pid = 0;
			for (const char *c = name; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			kill(pid, sig);
		}
	}
}

/*
 * Signals everything left (again whenever something ended, since its orphans are new
 * children; every round for SIGKILL) and reaps, for at most ms. true when nothing is
 * left: a subreaper with no child has no descendant either.
 */
static bool keeper_sweep(struct keeper *k, int sig, long ms)
{
	long until = now_ms() + ms;
	bool resend = true;
	for (;;) {
		int reaped = keeper_reap(k);
		if (reaped < 0)
			return true;
		if (reaped > 0 || resend) {
			keeper_signal_all(k, sig);
			resend = sig == SIGKILL;
		}
		long left = until - now_ms();
		if (left <= 0)
			return false;
		keeper_wait_chld(k, left < 50 ? (int)left : 50);
	}
}

/* Until the parent closes the control pipe (or dies): reap, and report the shell's end. */
static void keeper_watch(struct keeper *k)
{
	for (;;) {
		struct pollfd p[2] = {{k->ctl_fd, POLLIN, 0}, {k->sig_fd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents) {
			keeper_wait_chld(k, 0);
			keeper_reap(k);
		}
		if (p[0].revents)
			return;
	}
}

/* Starts the shell below the keeper. Returns 0, or the errno of what failed. */
static int keeper_start_shell(struct keeper *k, const struct spawn *sp)
{
	int errpipe[2], gopipe[2];
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return errno;
	if (pipe2(gopipe, O_CLOEXEC) < 0) {
		int e = errno;
		close(errpipe[0]);
		close(errpipe[1]);
		return e;
	}
	k->shell = fork_raw();
	if (k->shell == 0) {
		close(gopipe[1]);
		shell_main(sp, errpipe[1], gopipe[0]);
	}
	int e = k->shell < 0 ? errno : 0;
	close(gopipe[0]);
	if (k->shell > 0) {
		keeper_report(k, REPORT_FORKED, k->shell);
		ssize_t w;
		do
			w = write(gopipe[1], "g", 1);
		while (w < 0 && errno == EINTR);
	}
	close(gopipe[1]);
	close(errpipe[1]);
	close(sp->out_fd); /* from now on, only the command holds the output pipe */
	close(sp->devnull);
	close(sp->ws_fd);
	if (k->shell > 0) {
		/* End of file: the exec happened. */
		ssize_t r;
		do
			r = read(errpipe[0], &e, sizeof(e));
		while (r < 0 && errno == EINTR);
		if (r != (ssize_t)sizeof(e))
			e = 0;
		if (e) {
			while (waitpid(k->shell, NULL, 0) < 0 && errno == EINTR)
				;
			k->shell_reaped = true;
		}
	}
	close(errpipe[0]);
	return e;
}

/*
 * The keeper. Only the control pipe ends it: it ignores the signals a terminal or a stray
 * kill would send (Ctrl-C reaches pevtui's whole process group, the keeper included),
 * since its death would set the command's processes free.
 */
_Noreturn static void keeper_main(struct spawn *sp)
{
	struct keeper k = {.self = getpid(), .rep_fd = sp->rep_fd, .ctl_fd = sp->ctl_fd,
			   .sig_fd = -1, .proc_fd = -1};
	int keep[] = {sp->ws_fd, sp->devnull, sp->out_fd, sp->rep_fd, sp->ctl_fd};
	close_others(keep, sizeof(keep) / sizeof(keep[0]));
	reset_signals();
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	static const int ignored[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1,
				      SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU};
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		sigaction(ignored[i], &ign, NULL);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	int e = 0;
	/* A workspace descriptor among 0..2 would be lost to the dup2s below. */
	if (sp->ws_fd >= 0 && sp->ws_fd <= 2 && (sp->ws_fd = fcntl(sp->ws_fd, F_DUPFD, 3)) < 0)
		e = errno;
	/* It holds a copy of pevtui's memory (keys included): closed to ptrace and /proc. */
	if (!e && (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
		   prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0))
		e = errno;
	if (!e && (k.sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		e = errno;
	if (!e && (k.proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		e = errno;
	/* pevtui's standard streams (a terminal) are no business of the keeper's. */
	for (int fd = 0; !e && fd <= 2; fd++)
		if (dup2(sp->devnull, fd) < 0)
			e = errno;
	if (!e)
		e = keeper_start_shell(&k, sp);
	if (e) {
		keeper_report(&k, REPORT_START_FAILED, e);
		_exit(0);
	}
	keeper_report(&k, REPORT_STARTED, k.shell);
	keeper_watch(&k);
	bool ended = keeper_sweep(&k, SIGTERM, KILL_GRACE_MS) ||
		     keeper_sweep(&k, SIGKILL, KILL_FORCE_MS);
	keeper_report(&k, REPORT_ENDED, ended);
	_exit(0);
}

/* ---- the parent ------------------------------------------------------------------------ */

struct proc {
	pid_t keeper, shell;
	int out_fd;      /* the command's output */
	int rep_fd;      /* the keeper's reports */
	int ctl_fd;      /* closing it asks the keeper to end everything */
	bool exited;     /* the keeper reported the shell's end, */
	int status;      /* its wait status */
	long exited_at;  /* and when */
	bool ended;      /* the keeper reported that nothing is left running */
	int keeper_died; /* the signal that killed the keeper, or 0 */
};

/* Moves fd above 2, so the child's dup2 onto 0, 1 and 2 can never clobber it (or be a
 * no-op that keeps close-on-exec) when the program runs with a standard stream closed. */
static int above_std(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return moved;
}

/* Reads one report; false at end of file (the keeper is gone) or on error. */
static bool read_report(int fd, struct report *r)
{
	ssize_t n;
	do
		n = read(fd, r, sizeof(*r));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*r);
}

/* Takes in the next report of a running command; false when the keeper is gone. */
static bool proc_read_report(struct proc *p)
{
	struct report r;
	if (!read_report(p->rep_fd, &r))
		return false;
	if (r.kind == REPORT_EXITED && !p->exited) {
		p->exited = true;
		p->status = r.value;
		p->exited_at = now_ms();
	} else if (r.kind == REPORT_ENDED) {
		p->ended = r.value == 1;
	}
	return true;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Asks the keeper to end everything the command started and waits until it has exited
 * (bounded: a keeper that does not finish in KEEPER_WAIT_MS is killed). Afterwards
 * p->ended says whether it ended everything, p->keeper_died whether it was killed.
 */
static void proc_end(struct proc *p)
{
	close_fd(&p->out_fd);
	close_fd(&p->ctl_fd);
	kill(p->keeper, SIGCONT); /* a keeper the command stopped could not hear */
	long until = now_ms() + KEEPER_WAIT_MS;
	/* The report pipe reaches end of file when the keeper exits. */
	while (p->rep_fd >= 0) {
		long left = until - now_ms();
		struct pollfd pfd = {p->rep_fd, POLLIN, 0};
		if (left <= 0) {
			kill(p->keeper, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) > 0 && !proc_read_report(p))
			break;
	}
	close_fd(&p->rep_fd);
	int kst = 0;
	while (waitpid(p->keeper, &kst, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(kst)) {
		p->keeper_died = WTERMSIG(kst);
		p->ended = false;
		/* It was killed before it could finish: stop the shell's group at least. */
		if (p->shell > 0)
			kill(-p->shell, SIGKILL);
	}
}

/*
 * Starts the keeper and, below it, the shell running argv. true with *p filled; false with
 * *why (a static sentence) when the command did not start, and then nothing is left
 * running and no descriptor open.
 */
static bool proc_start(int ws_fd, char *const argv[], char *const envp[], struct proc *p,
		       const char **why)
{
	int out[2] = {-1, -1}, rep[2] = {-1, -1}, ctl[2] = {-1, -1};
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int e = 0;
	if (devnull < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 ||
	    pipe2(ctl, O_CLOEXEC) < 0)
		e = errno;
	struct spawn sp = {.ws_fd = ws_fd, .devnull = above_std(devnull),
			   .out_fd = above_std(out[1]), .rep_fd = above_std(rep[1]),
			   .ctl_fd = above_std(ctl[0]), .path = argv[0], .argv = argv,
			   .envp = envp};
	if (!e && (sp.devnull < 0 || sp.out_fd < 0 || sp.rep_fd < 0 || sp.ctl_fd < 0))
		e = errno;
	*p = (struct proc){.keeper = -1, .shell = -1, .out_fd = out[0], .rep_fd = rep[0],
			   .ctl_fd = ctl[1]};
	if (!e && (p->keeper = fork()) == 0)
		keeper_main(&sp);
	if (!e && p->keeper < 0)
		e = errno;
	close_fd(&sp.devnull);
	close_fd(&sp.out_fd);
	close_fd(&sp.rep_fd);
	close_fd(&sp.ctl_fd);

	struct report r = {0, 0};
	if (!e && read_report(p->rep_fd, &r) && r.kind == REPORT_FORKED) {
		p->shell = r.value;
		/* A keeper gone before it said more was killed by the command it let run:
		 * that is a started command, which the caller ends and reports. */
		if (!read_report(p->rep_fd, &r) || r.kind == REPORT_STARTED)
			return true;
	}
	*why = e ? strerror(e)
		 : r.kind == REPORT_START_FAILED ? strerror(r.value)
						 : "the process that was to run it ended early";
	if (p->keeper > 0)
		proc_end(p);
	close_fd(&p->out_fd);
	close_fd(&p->rep_fd);
	close_fd(&p->ctl_fd);
	return false;
}

enum ending { END_EXIT, END_TIMEOUT, END_CANCEL, END_LOST };

/*
 * Reads the command's output into cap until the shell has exited and the output is done
 * (or FLUSH_MS after the exit: whatever it left behind may hold the pipe), the deadline
 * passes, the step is cancelled, or the keeper is lost.
 */
static enum ending proc_collect(struct proc *p, const struct tool_env *env, long deadline,
				struct capture *cap)
{
	char *buf = xmalloc(16384);
	bool eof = false;
	enum ending how = END_EXIT;
	for (;;) {
		if (cancelled(env)) {
			how = END_CANCEL;
			break;
		}
		if (now_ms() >= deadline) {
			how = END_TIMEOUT;
			break;
		}
		if (p->exited && (eof || now_ms() - p->exited_at > FLUSH_MS))
			break;
		struct pollfd pfd[2] = {{eof ? -1 : p->out_fd, POLLIN, 0}, {p->rep_fd, POLLIN, 0}};
		if (poll(pfd, 2, 50) <= 0)
			continue;
		if (pfd[0].revents) {
			ssize_t r = read(p->out_fd, buf, 16384);
			if (r > 0)
				capture_add(cap, buf, (size_t)r);
			else if (r == 0 || errno != EINTR)
				eof = true;
		}
		if (pfd[1].revents && !proc_read_report(p)) {
			close_fd(&p->rep_fd);
			if (!p->exited) {
				how = END_LOST;
				break;
			}
		}
	}
	free(buf);
	return how;
}

/* "outside_sandbox": true with a "reason": the model asks to run one command
 * unconfined. false with the complaint in out when the input is wrong. */
static bool outside_input(const struct tool_env *env, const struct cJSON *input,
			  bool *outside, const char **reason, struct strbuf *out)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(input, "outside_sandbox");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(input, "reason");
	(void)env;
	if (!o || cJSON_IsNull(o) || cJSON_IsFalse(o))
		return true;
	if (!cJSON_IsTrue(o)) {
		strbuf_adds(out, "\"outside_sandbox\" must be true or false");
		return false;
	}
	if (!r || !cJSON_IsString(r) || !r->valuestring || !*r->valuestring) {
		strbuf_adds(out, "\"outside_sandbox\": true needs \"reason\": why the command must "
				 "run outside the sandbox, for the operator to judge");
		return false;
	}
	*outside = true;
	*reason = r->valuestring;
	return true;
}

/* After a confined command's output: the kernel's refusals by name, and what to do. */
static void tell_denials(const char *text, struct strbuf *out)
{
	struct strbuf note = STRBUF_INIT;
	strbuf_init(&note);
	if (confine_denial(text, &note)) {
		strbuf_adds(out, "\n[");
		strbuf_add(out, note.buf, note.len);
		strbuf_adds(out, "\nThe command runs in a sandbox: it writes only beneath the "
				 "workspace and $TMPDIR, cannot read the operator's secrets, and has "
				 "no network unless the operator allows it. If the task truly needs "
				 "more, call run_shell again with \"outside_sandbox\": true and a "
				 "\"reason\"; the operator decides.]");
	}
	strbuf_release(&note);
}

static bool run_shell_run(const struct tool_env *env, const struct cJSON *input,
			  struct strbuf *out)
{
	if (!input || !cJSON_IsObject(input)) {
		strbuf_adds(out,
			    "the input must be a JSON object, such as {\"command\": \"ls -l\"}");
		return false;
	}
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(input, "command");
	if (!c || !cJSON_IsString(c) || !c->valuestring || !*c->valuestring) {
		strbuf_adds(out, "the input needs \"command\": the shell command to run, as a "
				 "non-empty string");
		return false;
	}
	if (strlen(c->valuestring) > 64 * 1024) {
		strbuf_adds(out, "the command is longer than 64 KiB");
		return false;
	}
	int limit = env->shell_timeout_s > 0 ? env->shell_timeout_s : TOOL_SHELL_TIMEOUT_S;
	const cJSON *ts = cJSON_GetObjectItemCaseSensitive(input, "timeout_s");
	if (ts && !cJSON_IsNull(ts)) {
		if (!cJSON_IsNumber(ts) || !(ts->valuedouble >= 1)) {
			strbuf_addf(out, "\"timeout_s\" must be a number of seconds from 1 to %d",
				    limit);
			return false;
		}
		if (ts->valuedouble < limit)
			limit = (int)ts->valuedouble;
	}
	bool outside = false;
	const char *reason = NULL;
	if (!outside_input(env, input, &outside, &reason, out))
		return false;
	if (env->shell_run) {
		tool_shell_run_release(env->shell_run);
		env->shell_run->exit_status = -1;
	}
	const char *advice;
	char *hidden = unshowable(c->valuestring, &advice);
	if (hidden) {
		strbuf_addf(out, "the command contains %s; %s", hidden, advice);
		free(hidden);
		return false;
	}

	char *cmd = xstrdup(c->valuestring), *prefix = NULL;
	const char *gate_why = allow_check(env->shell_allow, cmd, &prefix);
	/* Where nothing confines a command, the allow list cannot vouch for it; and a
	 * command outside the sandbox is always a decision. */
	const char *unconfined = env->sandbox ? confine_session_gate_why(env->sandbox) : NULL;
	if (outside)
		gate_why = "it asks to run outside the sandbox";
	else if (!gate_why && unconfined)
		gate_why = unconfined;
	struct shell_run *rec = env->shell_run;
	if (rec) {
		rec->command = xstrdup(cmd);
		rec->allow_listed = gate_why == NULL;
		rec->outside = outside;
	}
	if (outside && !env->confirm_shell) {
		strbuf_adds(out, "a command outside the sandbox needs the operator's approval, and "
				 "there is no shell gate to ask; nothing was run");
		free(cmd);
		free(prefix);
		return false;
	}
	if (gate_why && env->confirm_shell) {
		struct shell_ask ask = {.cwd = env->ws_path, .timeout_s = limit,
					.allow_prefix = prefix, .allow_why = gate_why,
					.sandbox = env->sandbox ? confine_session_line(env->sandbox)
								: NULL,
					.outside = outside, .reason = reason};
		bool yes = env->confirm_shell(env->hook_ctx, &cmd, &ask);
		if (rec && cmd) {
			free(rec->command);
			rec->command = xstrdup(cmd);
		}
		if (!yes) {
			char *s = show(cmd ? cmd : c->valuestring);
			strbuf_addf(out, "the operator refused to run: %s", s);
			free(s);
			free(cmd);
			free(prefix);
			return false;
		}
	}
	free(prefix);
	if (!cmd || !*cmd) {
		strbuf_adds(out, "the operator's edit left the command empty; nothing was run");
		free(cmd);
		return false;
	}
	if ((hidden = unshowable(cmd, &advice)) != NULL) {
		strbuf_addf(out, "the command as edited by the operator contains %s; nothing was "
				 "run",
			    hidden);
		free(hidden);
		free(cmd);
		return false;
	}

	/* Everything the children need is built before fork: no allocation after it. */
	const char *tmpdir = env->sandbox ? confine_session_tmpdir(env->sandbox) : NULL;
	struct strvec envv = STRVEC_INIT;
	for (char **e = environ; e && *e; e++)
		if (!secret_env_withheld(*e) && !(tmpdir && strncmp(*e, "TMPDIR=", 7) == 0))
			strvec_push(&envv, *e);
	if (tmpdir)
		strvec_pushf(&envv, "TMPDIR=%s", tmpdir);
	char **envp = xcalloc(envv.n + 1, sizeof(*envp));
	for (size_t i = 0; i < envv.n; i++)
		envp[i] = envv.v[i];
	char *sh[] = {"/bin/sh", "-c", cmd, NULL};
	struct strvec argvv = STRVEC_INIT;
	bool confined = env->sandbox && !outside && !confine_session_gate_why(env->sandbox) &&
			confine_session_mode(env->sandbox) != CONFINE_OFF;
	if (confined)
		confine_session_argv(env->sandbox, sh, &argvv);
	else
		for (size_t i = 0; sh[i]; i++)
			strvec_push(&argvv, sh[i]);
	char **argv = xcalloc(argvv.n + 1, sizeof(*argv));
	for (size_t i = 0; i < argvv.n; i++)
		argv[i] = argvv.v[i];
	if (rec)
		rec->confined = confined;
	struct proc p;
	const char *why = NULL;
	bool started = proc_start(env->ws_fd, argv, envp, &p, &why);
	free(envp);
	strvec_clear(&envv);
	free(argv);
	strvec_clear(&argvv);
	if (!started) {
		char *s = show(cmd);
		strbuf_addf(out, "could not start the command \"%s\": %s", s, why);
		free(s);
		free(cmd);
		return false;
	}

	long t0 = now_ms();
	struct capture cap = {.head = xmalloc(HALF_OUTPUT), .tail = xmalloc(HALF_OUTPUT)};
	enum ending how = proc_collect(&p, env, t0 + (long)limit * 1000, &cap);
	long t1 = how == END_EXIT && p.exited ? p.exited_at : now_ms();
	/* Nothing outlives the call, however it ended. */
	proc_end(&p);
	int status = p.status;
	if (rec) {
		rec->ran = true;
		rec->duration_ms = t1 > t0 ? t1 - t0 : 0;
		rec->timed_out = how == END_TIMEOUT;
		if (how == END_EXIT && WIFEXITED(status))
			rec->exit_status = WEXITSTATUS(status);
		else if (how == END_EXIT && WIFSIGNALED(status))
			rec->signal = WTERMSIG(status);
	}

	char *s = show(cmd);
	bool ok = true;
	if (how == END_TIMEOUT) {
		strbuf_addf(out, "the command \"%s\" ran out of time after %d s and was stopped", s,
			    limit);
		ok = false;
	} else if (how == END_CANCEL) {
		strbuf_addf(out, "the command \"%s\" was stopped because the step was cancelled",
			    s);
		ok = false;
	} else if (how == END_LOST) {
		strbuf_addf(out, "the command \"%s\" ended the process that supervises it", s);
		if (p.keeper_died)
			strbuf_addf(out, " (signal %d)", p.keeper_died);
		strbuf_adds(out, ", so what it started may still be running");
		ok = false;
	} else if (WIFEXITED(status)) {
		strbuf_addf(out, "$ %s\nexit status %d", s, WEXITSTATUS(status));
		if (WEXITSTATUS(status) == 127)
			strbuf_adds(out, " (command not found?)");
	} else if (WIFSIGNALED(status)) {
		strbuf_addf(out, "$ %s\nkilled by signal %d (%s)", s, WTERMSIG(status),
			    strsignal(WTERMSIG(status)));
	}
	free(s);
	if (cap.total == 0) {
		strbuf_adds(out, ok ? "\n(no output)" : "; it printed nothing");
		if (rec)
			rec->output = xstrdup("");
	} else {
		struct strbuf text = STRBUF_INIT;
		strbuf_init(&text);
		capture_render(&cap, &text);
		strbuf_adds(out, ok ? "\n" : "; its output so far:\n");
		strbuf_add(out, text.buf, text.len);
		if (confined)
			tell_denials(text.buf, out);
		if (rec)
			rec->output = strbuf_detach(&text);
		else
			strbuf_release(&text);
	}
	if (how != END_LOST && !p.ended)
		strbuf_adds(out, "\n[some processes the command started could not be stopped]");
	free(cap.head);
	free(cap.tail);
	free(cmd);
	return ok;
}

void tool_shell_run_release(struct shell_run *r)
{
	if (!r)
		return;
	free(r->command);
	free(r->output);
	memset(r, 0, sizeof(*r));
	r->exit_status = -1;
}

const struct tool_def tool_run_shell = {
	.name = "run_shell",
	.description = "Run a shell command (/bin/sh -c) in the workspace folder and return its "
		       "exit status and output (stdout and stderr together, long output cut in "
		       "the middle). The operator may be asked to approve or edit the command "
		       "first. It runs in a sandbox: it may write only beneath the workspace and "
		       "$TMPDIR, cannot read the operator's secrets, and has no network unless "
		       "the operator allows it. No input is given; the command is stopped after its time limit, "
		       "and anything it started, in the background too, is stopped when it "
		       "ends.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\","
		       "\"description\":\"The command line, e.g. make test\"},"
		       "\"timeout_s\":{\"type\":\"number\",\"description\":\"Seconds before the "
		       "command is stopped; can only lower the configured limit (default 60)\"},"
		       "\"outside_sandbox\":{\"type\":\"boolean\",\"description\":\"Ask to run "
		       "this one command outside the sandbox (the operator always decides)\"},"
		       "\"reason\":{\"type\":\"string\",\"description\":\"Why it must run "
		       "outside the sandbox (with outside_sandbox)\"}"
		       "},\"required\":[\"command\"],\"additionalProperties\":false}",
	.run = run_shell_run,
};
