/* ctl_server — the control socket's thread: accept, read command lines, write event lines. */
#include "config.h"

#include "ctl_server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bus.h"
#include "ctl_proto.h"
#include "events.h"
#include "gate.h"
#include "journal.h"
#include "pev.h"
#include "strbuf.h"
#include "xalloc.h"

#define READ_CHUNK 65536
/* Streamed text (llm.delta) goes to a client only while less than this waits for it:
 * deltas are never journaled and their text comes again whole in step.output, so a client
 * that falls behind loses some streaming, never an event, and is not dropped for it. */
#define DELTA_PENDING_MAX (256u * 1024)

struct conn {
	int fd;
	struct strbuf in; /* server thread only: bytes of a line not yet complete */
	bool skipping;    /* server thread only: the rest of an oversized line is dropped */
	/* under the server lock */
	struct strbuf out; /* lines to write */
	size_t out_off;    /* written so far */
	size_t out_limit;  /* drop past this many unwritten bytes */
	bool hello;        /* events flow (after the replay) */
	bool holding;      /* the replay is being read: live events wait in `held` */
	struct strbuf held;
	unsigned long sent_seq;
	bool dead; /* dropped or gone: the server thread closes it */
	struct conn *next;
};

struct ctl_server {
	char *run_dir, *run_id, *path;
	int dirfd; /* when the path is too long for sun_path; else -1 */
	struct sockaddr_un sa;
	int lfd;
	int wake[2];
	struct bus *bus;
	struct pev *e;
	struct gatekeeper *gates;
	pthread_t thread;
	pthread_mutex_t lock;
	struct conn *conns; /* under lock */
	size_t n_conns;
	bool stop; /* under lock */
	bool deltas_on; /* server thread: subscribed to streamed text (clients listen) */
};

static void wake(struct ctl_server *s)
{
	if (write(s->wake[1], "w", 1) < 0) {
		/* EAGAIN: a wake-up is pending already */
	}
}

static void set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		fatal("ctl: cannot set up descriptor %d: %s", fd, strerror(errno));
}

static size_t pending(const struct conn *c)
{
	return c->out.len - c->out_off;
}

/* Queues a line for c (lock held). A client that lets too much pile up is dropped. */
static void queue(struct conn *c, const char *line, size_t len)
{
	if (c->dead)
		return;
	if (pending(c) + len > c->out_limit) {
		c->dead = true;
		return;
	}
	strbuf_add(&c->out, line, len);
}

static void queue_owned(struct conn *c, char *line)
{
	queue(c, line, strlen(line));
	free(line);
}

/* Bus subscriber: in the publishing thread, under the bus lock. Copies and wakes only. */
static void on_event(void *ctx, const struct event *ev)
{
	struct ctl_server *s = ctx;
	size_t len = strlen(ev->json);
	bool any = false;

	pthread_mutex_lock(&s->lock);
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->dead || (!c->hello && !c->holding))
			continue;
		if (c->holding) {
			if (c->held.len + len + 1 > CTL_OUT_MAX) {
				c->dead = true;
			} else {
				strbuf_add(&c->held, ev->json, len);
				strbuf_addc(&c->held, '\n');
			}
			any = true;
			continue;
		}
		if (ev->seq && ev->seq <= c->sent_seq)
			continue;
		queue(c, ev->json, len);
		queue(c, "\n", 1);
		if (ev->seq)
			c->sent_seq = ev->seq;
		any = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (any)
		wake(s);
}

/* Bus subscriber for streamed text, while some client listens (the engine builds deltas
 * only for someone: bus_wants_ephemeral). Journaled events are on_event's. */
static void on_delta(void *ctx, const struct event *ev)
{
	struct ctl_server *s = ctx;
	size_t len;
	bool any = false;

	if (!event_type_is_ephemeral(ev->type) || !ev->json)
		return;
	len = strlen(ev->json);
	pthread_mutex_lock(&s->lock);
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->dead || !c->hello || pending(c) + len >= DELTA_PENDING_MAX)
			continue;
		queue(c, ev->json, len);
		queue(c, "\n", 1);
		any = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (any)
		wake(s);
}

/* Streamed text is built and sent only while a client listens (server thread, without the
 * server lock: the bus calls its subscribers with its own lock held, then takes ours). */
static void follow_deltas(struct ctl_server *s, bool want)
{
	if (want == s->deltas_on)
		return;
	if (want)
		bus_subscribe_all(s->bus, on_delta, s);
	else
		bus_unsubscribe(s->bus, on_delta, s);
	s->deltas_on = want;
}

/* ------------------------------------------------------------ the replay */

struct replay {
	unsigned long since, last;
	struct strbuf out;
};

static bool replay_visit(void *ctx, const struct event *ev)
{
	struct replay *r = ctx;

	if (ev->seq > r->since) {
		strbuf_adds(&r->out, ev->json);
		strbuf_addc(&r->out, '\n');
	}
	if (ev->seq > r->last)
		r->last = ev->seq;
	return true;
}

/* The seq of an event line ({"seq":N,…}), 0 when it has none. */
static unsigned long line_seq(const char *line)
{
	if (strncmp(line, "{\"seq\":", 7))
		return 0;
	return strtoul(line + 7, NULL, 10);
}

/*
 * hello: the journal's events after `since`, then live ones, none twice. Live events are
 * held while the file is read (outside the lock: the engine never waits for it); every
 * event published before the hold began is in the file already, because the journal
 * writes it before this server's subscriber sees it.
 */
static void hello(struct ctl_server *s, struct conn *c, const struct ctl_cmd *cmd)
{
	struct replay r = {cmd->since, cmd->since, STRBUF_INIT};
	struct journal_load_info info;
	char *path = xasprintf("%s/journal.jsonl", s->run_dir), *err = NULL;

	strbuf_init(&r.out);
	pthread_mutex_lock(&s->lock);
	if (c->hello || c->holding) {
		queue_owned(c, ctl_reply_error(cmd->id, "hello was said already on this "
		                                        "connection: events are flowing"));
		pthread_mutex_unlock(&s->lock);
		free(path);
		strbuf_release(&r.out);
		return;
	}
	c->holding = true; /* c->held is empty: made so when c was accepted */
	pthread_mutex_unlock(&s->lock);

	if (!journal_load(path, replay_visit, &r, &info, &err)) {
		free(err); /* a run that has not journaled yet: live events only */
	}
	free(path);

	pthread_mutex_lock(&s->lock);
	/* The replay may be large: the bound is for what piles up after it. */
	c->out_limit = pending(c) + r.out.len + CTL_OUT_MAX;
	queue_owned(c, ctl_reply_hello(s->run_id, (long)getpid(), r.last));
	queue(c, r.out.buf, r.out.len);
	c->sent_seq = r.last;
	for (char *p = c->held.buf, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		unsigned long seq = line_seq(p);

		if (seq && seq <= c->sent_seq)
			continue;
		queue(c, p, (size_t)(nl - p) + 1);
		if (seq)
			c->sent_seq = seq;
	}
	strbuf_release(&c->held);
	c->holding = false;
	c->hello = true;
	pthread_mutex_unlock(&s->lock);
	strbuf_release(&r.out);
}

/* ------------------------------------------------------------ commands */

static void reply(struct ctl_server *s, struct conn *c, char *line)
{
	pthread_mutex_lock(&s->lock);
	queue_owned(c, line);
	pthread_mutex_unlock(&s->lock);
}

static void do_line(struct ctl_server *s, struct conn *c, const char *line, size_t len)
{
	struct ctl_cmd cmd;
	char *err = NULL;

	if (len == 0)
		return;
	if (!ctl_parse(line, len, &cmd, &err)) {
		reply(s, c, ctl_reply_error(NULL, err));
		free(err);
		return;
	}
	switch (cmd.verb) {
	case CTL_HELLO: hello(s, c, &cmd); break;
	case CTL_PING: reply(s, c, ctl_reply_pong(cmd.id)); break;
	case CTL_ANSWER:
		if (gatekeeper_answer(s->gates, cmd.gate_id, cmd.decision, cmd.json)) {
			reply(s, c, ctl_reply_ok(cmd.id));
		} else {
			char *m =
			    xasprintf("gate %lu is not open: it was answered already (the first "
			              "answer wins) or withdrawn",
			              cmd.gate_id);
			reply(s, c, ctl_reply_error(cmd.id, m));
			free(m);
		}
		break;
	case CTL_COMMAND:
		if (pev_post(s->e, cmd.cmd, cmd.step_id, cmd.json))
			reply(s, c, ctl_reply_ok(cmd.id));
		else
			reply(s, c, ctl_reply_error(cmd.id, "the run's engine is leaving (the run "
			                                    "ended and nobody reopened it): the "
			                                    "command was not delivered"));
		break;
	}
	ctl_cmd_release(&cmd);
}

/* Reads what c sent and acts on each complete line. false when the client is gone. */
static bool do_read(struct ctl_server *s, struct conn *c)
{
	char buf[READ_CHUNK];
	ssize_t n = read(c->fd, buf, sizeof(buf));
	size_t start = 0;

	if (n == 0)
		return false;
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
	for (size_t i = 0; i < (size_t)n; i++) {
		if (buf[i] != '\n')
			continue;
		if (c->skipping) {
			c->skipping = false;
		} else if (c->in.len) {
			strbuf_add(&c->in, buf + start, i - start);
			do_line(s, c, c->in.buf, c->in.len);
			strbuf_reset(&c->in);
		} else {
			do_line(s, c, buf + start, i - start);
		}
		start = i + 1;
	}
	if (!c->skipping && start < (size_t)n) {
		strbuf_add(&c->in, buf + start, (size_t)n - start);
		if (c->in.len > CTL_MAX_LINE) {
			/* Said once; the rest of the line up to its newline is dropped. */
			strbuf_release(&c->in);
			strbuf_init(&c->in);
			c->skipping = true;
			reply(s, c,
			      ctl_reply_error(NULL, "the line is longer than 1048576 bytes and "
			                            "was dropped: send less"));
		}
	}
	return true;
}

/* Writes what is queued for c without blocking. false when the client is gone. */
static bool do_write(struct ctl_server *s, struct conn *c)
{
	bool ok = true;

	pthread_mutex_lock(&s->lock);
	while (pending(c) > 0) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off, pending(c), MSG_NOSIGNAL);

		if (n < 0) {
			ok = errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
			break;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len) {
		strbuf_reset(&c->out);
		c->out_off = 0;
	} else if (c->out_off > 1024 * 1024) {
		memmove(c->out.buf, c->out.buf + c->out_off, pending(c));
		c->out.len -= c->out_off;
		c->out.buf[c->out.len] = '\0';
		c->out_off = 0;
	}
	if (c->out_limit > CTL_OUT_MAX && pending(c) + CTL_OUT_MAX < c->out_limit)
		c->out_limit = pending(c) + CTL_OUT_MAX; /* the replay went out */
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* ------------------------------------------------------------ connections */

static void conn_free(struct conn *c)
{
	close(c->fd);
	strbuf_release(&c->in);
	strbuf_release(&c->out);
	strbuf_release(&c->held);
	free(c);
}

/* Tells a refused client why, without waiting for it, and closes it. */
static void refuse(int fd, const char *why)
{
	char *line = ctl_reply_error(NULL, why);

	if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* it will see the connection close */
	}
	free(line);
	close(fd);
}

static void do_accept(struct ctl_server *s)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *c;
	int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
		refuse(fd, "cannot tell who is connecting (SO_PEERCRED failed): refused");
		return;
	}
	if (cred.uid != geteuid()) {
		char *m = xasprintf("this run belongs to uid %lu; uid %lu may not control it",
		                    (unsigned long)geteuid(), (unsigned long)cred.uid);
		refuse(fd, m);
		free(m);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (s->n_conns >= CTL_MAX_CLIENTS) {
		pthread_mutex_unlock(&s->lock);
		refuse(fd, "too many clients are attached to this run (64): detach one first");
		return;
	}
	c = xcalloc(1, sizeof(*c));
	c->fd = fd;
	strbuf_init(&c->in);
	strbuf_init(&c->out);
	strbuf_init(&c->held);
	c->out_limit = CTL_OUT_MAX;
	c->next = s->conns;
	s->conns = c;
	s->n_conns++;
	pthread_mutex_unlock(&s->lock);
}

/* A client that said hello (its replay may still be on its way) and is not gone. */
static bool watching(const struct conn *c)
{
	return (c->hello || c->holding) && !c->dead;
}

/* Closes dead clients (lock held). True when one of them watched (had said hello). */
static bool reap(struct ctl_server *s)
{
	bool watcher_gone = false;

	for (struct conn **pp = &s->conns; *pp;) {
		struct conn *c = *pp;

		if (c->dead) {
			*pp = c->next;
			s->n_conns--;
			watcher_gone |= c->hello || c->holding;
			conn_free(c);
		} else {
			pp = &c->next;
		}
	}
	return watcher_gone;
}

static void *serve(void *arg)
{
	struct ctl_server *s = arg;
	struct pollfd *fds = NULL;
	struct conn **who = NULL;
	size_t cap = 0, cap_who = 0;

	for (;;) {
		size_t n = 2;
		char buf[256];
		bool listening = false, watched = false, watcher_gone;

		pthread_mutex_lock(&s->lock);
		if (s->stop) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		watcher_gone = reap(s);
		for (struct conn *c = s->conns; c; c = c->next) {
			listening |= c->hello;
			watched |= watching(c);
		}
		pthread_mutex_unlock(&s->lock);
		/* A detached run that ended may be waiting only for its last cockpit. */
		if (watcher_gone && !watched)
			pev_watchers_changed(s->e);
		follow_deltas(s, listening);
		pthread_mutex_lock(&s->lock);
		fds = xgrow(fds, &cap, s->n_conns + 2, sizeof(*fds));
		who = xgrow(who, &cap_who, s->n_conns + 2, sizeof(*who));
		fds[0] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
		fds[1] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
		for (struct conn *c = s->conns; c; c = c->next) {
			fds[n] = (struct pollfd){
			    .fd = c->fd, .events = (short)(POLLIN | (pending(c) ? POLLOUT : 0))};
			who[n++] = c;
		}
		pthread_mutex_unlock(&s->lock);

		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fatal("ctl: poll failed: %s", strerror(errno));
		}
		if (fds[0].revents & POLLIN)
			while (read(s->wake[0], buf, sizeof(buf)) > 0)
				;
		/* Every client's queue is written on each pass: a wake-up means lines to send. */
		for (size_t i = 2; i < n; i++) {
			struct conn *c = who[i];
			bool alive = true;

			if (fds[i].revents & (POLLIN | POLLHUP | POLLERR))
				alive = do_read(s, c);
			if (alive)
				alive = do_write(s, c);
			if (!alive) {
				pthread_mutex_lock(&s->lock);
				c->dead = true;
				pthread_mutex_unlock(&s->lock);
			}
		}
		if (fds[1].revents & POLLIN)
			do_accept(s);
	}
	free(fds);
	free(who);
	return NULL;
}

struct ctl_server *ctl_server_start(const char *run_dir, const char *run_id, struct bus *bus,
                                    struct pev *e, struct gatekeeper *gates, char **err)
{
	struct ctl_server *s = xcalloc(1, sizeof(*s));
	struct stat st;

	s->lfd = -1;
	s->dirfd = -1;
	s->run_dir = xstrdup(run_dir);
	s->run_id = xstrdup(run_id);
	s->path = xasprintf("%s/%s", run_dir, CTL_SOCKET_NAME);
	s->bus = bus;
	s->e = e;
	s->gates = gates;
	/* The folder is the socket's first guard: the owner only. */
	if (stat(run_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		*err = xasprintf("cannot serve run %s: its folder %s is missing", run_id, run_dir);
		goto fail;
	}
	if ((st.st_mode & 077) && chmod(run_dir, st.st_mode & 0700) != 0) {
		*err = xasprintf("cannot make the run folder %s private (chmod 0700): %s", run_dir,
		                 strerror(errno));
		goto fail;
	}
	if (!ctl_socket_addr(run_dir, &s->sa, &s->dirfd, err))
		goto fail;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0)
		fatal("ctl: cannot create a socket: %s", strerror(errno));
	/* A socket left by an engine that died: ours now (the caller holds the run lock). */
	unlink(s->path);
	if (bind(s->lfd, (struct sockaddr *)&s->sa, sizeof(s->sa)) != 0 ||
	    chmod(s->path, 0600) != 0 || listen(s->lfd, 16) != 0) {
		*err = xasprintf("cannot serve run %s on %s: %s", run_id, s->path, strerror(errno));
		unlink(s->path);
		goto fail;
	}
	if (pipe(s->wake))
		fatal("ctl: cannot create a pipe: %s", strerror(errno));
	set_flags(s->wake[0]);
	set_flags(s->wake[1]);
	if (pthread_mutex_init(&s->lock, NULL))
		fatal("ctl: cannot create a mutex");
	bus_subscribe(bus, on_event, s);
	if (pthread_create(&s->thread, NULL, serve, s))
		fatal("ctl: cannot start the server thread");
	return s;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->run_dir);
	free(s->run_id);
	free(s->path);
	free(s);
	return NULL;
}

size_t ctl_server_clients(struct ctl_server *s)
{
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n_conns;
	pthread_mutex_unlock(&s->lock);
	return n;
}

bool ctl_server_watched(void *server)
{
	struct ctl_server *s = server;
	bool watched = false;

	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	for (struct conn *c = s->conns; c && !watched; c = c->next)
		watched = watching(c);
	pthread_mutex_unlock(&s->lock);
	return watched;
}

void ctl_server_free(struct ctl_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_mutex_unlock(&s->lock);
	wake(s);
	pthread_join(s->thread, NULL);
	follow_deltas(s, false);
	/* What was queued still goes out, as far as each client takes it now. */
	for (struct conn *c = s->conns, *next; c; c = next) {
		next = c->next;
		do_write(s, c);
		conn_free(c);
	}
	unlink(s->path);
	close(s->lfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	close(s->wake[0]);
	close(s->wake[1]);
	pthread_mutex_destroy(&s->lock);
	free(s->run_dir);
	free(s->run_id);
	free(s->path);
	free(s);
}
