/* attach — the cockpit of another process's run: a local bus fed from the socket. */
#include "config.h"

#include "attach.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "app.h"
#include "bus.h"
#include "ctl_client.h"
#include "ctl_proto.h"
#include "events.h"
#include "fdio.h"
#include "gate.h"
#include "journal.h"
#include "jsonx.h"
#include "pev.h"
#include "runlock.h"
#include "settings.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

extern char **environ;

/* What a run id, the start of one or "last" is made of. */
#define RUN_ID_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."

static const char *base_name(const char *dir)
{
	const char *slash = strrchr(dir, '/');

	return slash && slash[1] ? slash + 1 : dir;
}

static bool note_end(void *ctx, const struct event *ev)
{
	*(bool *)ctx = ev->type == EV_RUN_END;
	return true;
}

char *attach_why_not(const char *run_dir, int connect_errno)
{
	const char *id = base_name(run_dir);
	pid_t holder = runlock_holder(run_dir);
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	struct journal_load_info info = {0};
	bool ended = false;

	if (holder > 0) {
		free(path);
		return xasprintf("run %s is live (pid %ld) but its control socket cannot be "
		                 "reached (%s); was it started by an older pevtui?",
		                 id, (long)holder, strerror(connect_errno));
	}
	if (!journal_load(path, note_end, &ended, &info, &err))
		free(err);
	free(path);
	if (ended)
		return xasprintf("run %s has finished and no engine serves it; browse it with "
		                 "pevtui --replay %s (or reopen it with pevtui --resume %s)",
		                 id, id, id);
	return xasprintf("the engine of run %s is not running (it stopped, crashed or was "
	                 "killed); continue the run with pevtui --resume %s",
	                 id, id);
}

/* The cockpit on a stream of the protocol: rfd/wfd (taken). With run_dir, the journal is
 * read there first and the stream starts after it; without (over SSH), hello was said
 * already and the stream replays the whole journal. */
static int cockpit(const struct settings *s, int rfd, int wfd, const char *id,
		   const char *run_dir, struct notify *nt)
{
	struct bus *bus = bus_new();
	struct gatekeeper *gates = gatekeeper_new(bus, s->gates, GATE_MODE_OPERATOR);
	struct ctl_client *client;
	struct app *app;
	struct pev *proxy;
	unsigned long since = 0;
	char *err = NULL;
	bool gone;

	app = app_new(s, bus, gates, &err);
	if (!app) {
		fprintf(stderr, "pevtui: %s\n", err);
		free(err);
		close(rfd);
		if (wfd != rfd)
			close(wfd);
		gatekeeper_free(gates);
		bus_free(bus);
		return PEV_EXIT_ERROR;
	}
	app_set_attached(app);
	app_set_notify(app, nt);
	if (run_dir) {
		app_set_run_dir(app, run_dir);
		/* The journal first, as --resume shows it; the stream goes on after its last
		 * seq, and whatever was journaled meanwhile comes first in it (never twice). */
		since = app_preload_live(app, run_dir);
	}
	client = ctl_client_new(rfd, wfd, bus, id);
	gatekeeper_attach(gates, ctl_client_answer, client);
	if (run_dir)
		ctl_client_hello(client, since);
	proxy = pev_new_remote(id, ctl_client_post, client);
	app_run(app, proxy);
	gone = ctl_client_closed(client);
	ctl_client_free(client);
	gatekeeper_attach(gates, NULL, NULL);
	app_free(app);
	pev_free(proxy);
	gatekeeper_free(gates);
	bus_free(bus);
	if (!gone)
		fprintf(stderr,
		        "pevtui: left run %s; it goes on (attach again with pevtui --attach "
		        "%s)\n",
		        id, id);
	return 0;
}

int attach_run(const struct settings *s, const char *run_dir, struct notify *nt)
{
	int fd = ctl_connect(run_dir);

	if (fd < 0) {
		char *why = attach_why_not(run_dir, errno);

		fprintf(stderr, "pevtui: %s\n", why);
		free(why);
		return PEV_EXIT_ERROR;
	}
	return cockpit(s, fd, fd, base_name(run_dir), run_dir, nt);
}

/* ------------------------------------------------------------ --attach-stdio */

int attach_stdio(const char *run_dir)
{
	int fd = ctl_connect(run_dir);
	bool in_open = true;
	char buf[65536];

	if (fd < 0) {
		char *why = attach_why_not(run_dir, errno), *line = ctl_reply_error(NULL, why);

		/* The other end reads lines: the reason goes as one, and to stderr for ssh. */
		fprintf(stderr, "pevtui: %s\n", why);
		if (fd_write_all(STDOUT_FILENO, line, strlen(line))) {
			/* nobody reads */
		}
		free(line);
		free(why);
		return PEV_EXIT_ERROR;
	}
	for (;;) {
		struct pollfd p[2] = {{fd, POLLIN, 0}, {in_open ? STDIN_FILENO : -1, POLLIN, 0}};
		ssize_t n;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[0].revents) {
			n = read(fd, buf, sizeof(buf));
			if (n <= 0 || fd_write_all(STDOUT_FILENO, buf, (size_t)n))
				break; /* the engine left, or the other end did */
		}
		if (p[1].revents) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0) {
				/* The other end left: the engine sees the connection close. */
				in_open = false;
				break;
			} else if (fd_write_all(fd, buf, (size_t)n)) {
				break;
			}
		}
	}
	close(fd);
	return 0;
}

/* ------------------------------------------------------------ --attach HOST:RUN */

bool attach_is_remote(const char *ref, char **host, char **run)
{
	const char *colon = strrchr(ref, ':');

	if (!colon || colon == ref || !colon[1] || strchr(colon, '/'))
		return false;
	*host = xstrndup(ref, (size_t)(colon - ref));
	if (**host == '[' && (*host)[strlen(*host) - 1] == ']') {
		char *bare = xstrndup(*host + 1, strlen(*host) - 2);
		free(*host);
		*host = bare;
	}
	*run = xstrdup(colon + 1);
	return true;
}

/* The ssh command: $PEVTUI_SSH split on blanks (e.g. "ssh -F ~/.ssh/other"), or ssh. */
static void ssh_words(struct strvec *argv)
{
	const char *env = getenv("PEVTUI_SSH");
	char *copy = xstrdup(env && *env ? env : "ssh"), *save = NULL;

	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		strvec_push(argv, w);
	free(copy);
}

/* Reads one line, byte by byte (what follows it stays in the pipe for the client). */
static char *first_line(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	char c;

	strbuf_init(&sb);
	while (sb.len < CTL_MAX_LINE) {
		ssize_t n = read(fd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			strbuf_release(&sb);
			return NULL;
		}
		if (c == '\n')
			return strbuf_detach(&sb);
		strbuf_addc(&sb, c);
	}
	strbuf_release(&sb);
	return NULL;
}

int attach_remote(const struct settings *s, const char *host, const char *run,
		  struct notify *nt)
{
	struct strvec argv = STRVEC_INIT;
	posix_spawn_file_actions_t fa;
	int to[2], from[2], status, code;
	pid_t pid;
	char *line, *id = NULL;
	cJSON *hello;

	/* RUN goes through the remote shell: a run id, a start of one or last, nothing else. */
	if (strspn(run, RUN_ID_CHARS) != strlen(run) || *run == '-' || *host == '-') {
		fprintf(stderr,
		        "pevtui: --attach HOST:RUN takes a run id (letters, digits, - _ .) "
		        "and a host, not \"%s:%s\"\n",
		        host, run);
		return PEV_EXIT_ERROR;
	}
	ssh_words(&argv);
	strvec_push(&argv, host);
	strvec_push(&argv, "pevtui");
	strvec_push(&argv, "--attach-stdio");
	strvec_push(&argv, run);
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		fatal("attach: cannot create a pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
	{
		char **av = xcalloc(argv.n + 1, sizeof(*av));
		int e;

		for (size_t i = 0; i < argv.n; i++)
			av[i] = argv.v[i];
		e = posix_spawnp(&pid, av[0], &fa, NULL, av, environ);
		free(av);
		posix_spawn_file_actions_destroy(&fa);
		close(to[0]);
		close(from[1]);
		if (e) {
			fprintf(stderr,
			        "pevtui: cannot run %s: %s (set PEVTUI_SSH to the ssh "
			        "command)\n",
			        argv.v[0], strerror(e));
			strvec_clear(&argv);
			close(to[1]);
			close(from[0]);
			return PEV_EXIT_ERROR;
		}
	}
	strvec_clear(&argv);
	/* Before the screen: ssh may ask for a password on the terminal, and a run that
	 * cannot be attached is said plainly. The whole journal comes after the answer. */
	{
		char *hello_line = ctl_line_hello(0);
		if (fd_write_all(to[1], hello_line, strlen(hello_line))) {
			/* ssh is gone already: its end of the pipe says so below */
		}
		free(hello_line);
	}
	line = first_line(from[0]);
	hello = line ? cJSON_Parse(line) : NULL;
	if (hello && jsonx_str(hello, "type") && !strcmp(jsonx_str(hello, "type"), "ctl.hello")) {
		const char *said = jsonx_str(hello, "run_id");

		/* The far end's word for the run is printed and shown: a run id, or the one
		 * asked for. */
		id = xstrdup(said && *said && strspn(said, RUN_ID_CHARS) == strlen(said) ? said
		                                                                         : run);
	}
	if (!id) {
		const char *why = jsonx_str(hello, "error");

		if (why) {
			/* Text from the far end: no terminal controls reach this one. */
			char *clean = textsan_clean(why, strlen(why), 0);

			fprintf(stderr, "pevtui: %s: %s\n", host, clean);
			free(clean);
		} else
			fprintf(stderr,
			        "pevtui: no pevtui answered on %s (see the lines above, if "
			        "any): ssh %s pevtui --attach-stdio %s must work\n",
			        host, host, run);
		cJSON_Delete(hello);
		free(line);
		close(to[1]);
		close(from[0]);
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		return PEV_EXIT_ERROR;
	}
	cJSON_Delete(hello);
	free(line);
	code = cockpit(s, from[0], to[1], id, NULL, nt);
	free(id);
	kill(pid, SIGTERM);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return code;
}
