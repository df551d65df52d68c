/* ctl_client — reads a live run's lines into a local bus; writes command lines. */
#include "config.h"

#include "ctl_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "ctl_proto.h"
#include "events.h"
#include "fdio.h"
#include "jsonx.h"
#include "strbuf.h"
#include "xalloc.h"

/* An event line longer than this is not an event this engine wrote: the stream is cut. */
#define CLIENT_MAX_LINE (64u * 1024 * 1024)

struct ctl_client {
	int rfd, wfd;
	int stop[2]; /* a byte here ends the reader */
	struct bus *bus;
	char *run_id;
	pthread_t thread;
	pthread_mutex_t wlock; /* one writer at a time */
	atomic_bool ready, closed;
};

/* A notice for the local screen only (seq 0: it is no event of the run's journal). */
static void local_notice(struct ctl_client *c, const char *level, const char *message)
{
	cJSON *f = cJSON_CreateObject();
	struct event *ev;

	cJSON_AddStringToObject(f, "level", level);
	cJSON_AddStringToObject(f, "message", message);
	ev = event_build(EV_NOTICE, 0, f);
	bus_deliver(c->bus, ev);
	event_free(ev);
}

static void on_line(struct ctl_client *c, const char *line)
{
	struct event *ev;
	char *err = NULL;

	if (!strncmp(line, "{\"type\":\"ctl.", 13)) {
		cJSON *o = cJSON_Parse(line);
		const char *type = jsonx_str(o, "type");

		if (type && !strcmp(type, "ctl.hello")) {
			atomic_store(&c->ready, true);
		} else if (type && !strcmp(type, "ctl.error")) {
			const char *m = jsonx_str(o, "error");
			char *say = xasprintf("the engine of run %s refused: %s", c->run_id,
			                      m ? m : "(no reason given)");
			local_notice(c, "warn", say);
			free(say);
		}
		cJSON_Delete(o);
		return;
	}
	ev = event_from_line(line, &err);
	if (!ev) {
		free(err); /* not an event of this protocol version: left out */
		return;
	}
	bus_deliver(c->bus, ev);
	event_free(ev);
}

static void *reader(void *arg)
{
	struct ctl_client *c = arg;
	struct strbuf in = STRBUF_INIT;
	char buf[65536];
	const char *why = "the engine closed the connection (the run ended or its process "
	                  "stopped)";

	strbuf_init(&in);
	for (;;) {
		struct pollfd fds[2] = {{c->rfd, POLLIN, 0}, {c->stop[0], POLLIN, 0}};
		ssize_t n;
		size_t start = 0;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[1].revents) {
			why = NULL; /* we left: nothing to say */
			break;
		}
		n = read(c->rfd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		for (size_t i = 0; i < (size_t)n; i++) {
			if (buf[i] != '\n')
				continue;
			strbuf_add(&in, buf + start, i - start);
			on_line(c, in.buf);
			strbuf_reset(&in);
			start = i + 1;
		}
		strbuf_add(&in, buf + start, (size_t)n - start);
		if (in.len > CLIENT_MAX_LINE) {
			why = "the engine sent a line too long to be an event: disconnected";
			break;
		}
	}
	strbuf_release(&in);
	atomic_store(&c->closed, true);
	if (why) {
		char *m = xasprintf("detached from run %s: %s; q leaves", c->run_id, why);
		local_notice(c, "warn", m);
		free(m);
	}
	return NULL;
}

struct ctl_client *ctl_client_new(int rfd, int wfd, struct bus *bus, const char *run_id)
{
	struct ctl_client *c = xcalloc(1, sizeof(*c));

	c->rfd = rfd;
	c->wfd = wfd;
	c->bus = bus;
	c->run_id = xstrdup(run_id);
	atomic_init(&c->ready, false);
	atomic_init(&c->closed, false);
	if (pipe2(c->stop, O_CLOEXEC))
		fatal("ctl: cannot create a pipe: %s", strerror(errno));
	if (pthread_mutex_init(&c->wlock, NULL))
		fatal("ctl: cannot create a mutex");
	if (pthread_create(&c->thread, NULL, reader, c))
		fatal("ctl: cannot start the reader thread");
	return c;
}

void ctl_client_free(struct ctl_client *c)
{
	if (!c)
		return;
	if (write(c->stop[1], "s", 1) < 0)
		fatal("ctl: cannot stop the reader: %s", strerror(errno));
	pthread_join(c->thread, NULL);
	close(c->stop[0]);
	close(c->stop[1]);
	close(c->rfd);
	if (c->wfd != c->rfd)
		close(c->wfd);
	pthread_mutex_destroy(&c->wlock);
	free(c->run_id);
	free(c);
}

bool ctl_client_send(struct ctl_client *c, const char *line)
{
	int e;

	if (atomic_load(&c->closed))
		return false;
	pthread_mutex_lock(&c->wlock);
	e = fd_write_all(c->wfd, line, strlen(line));
	pthread_mutex_unlock(&c->wlock);
	return e == 0;
}

static bool send_owned(struct ctl_client *c, char *line)
{
	bool ok = line && ctl_client_send(c, line);

	free(line);
	return ok;
}

void ctl_client_hello(struct ctl_client *c, unsigned long since)
{
	send_owned(c, ctl_line_hello(since));
}

bool ctl_client_ready(struct ctl_client *c)
{
	return atomic_load(&c->ready);
}

bool ctl_client_closed(struct ctl_client *c)
{
	return atomic_load(&c->closed);
}

bool ctl_client_post(void *client, enum pev_cmd cmd, const char *step_id, const char *json)
{
	if (cmd == PEV_CMD_QUIT)
		return true;
	return send_owned(client, ctl_line_command(cmd, step_id, json));
}

bool ctl_client_answer(void *client, unsigned long gate_id, enum gate_decision d, const char *json)
{
	return send_owned(client, ctl_line_answer(gate_id, d, json));
}
