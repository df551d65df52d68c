/* attach — the cockpit of another process's run: a local bus fed from the socket. */
#include "config.h"

#include "attach.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "bus.h"
#include "ctl_client.h"
#include "ctl_proto.h"
#include "events.h"
#include "gate.h"
#include "journal.h"
#include "pev.h"
#include "runlock.h"
#include "settings.h"
#include "xalloc.h"

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

int attach_run(const struct settings *s, const char *run_dir)
{
	const char *id = base_name(run_dir);
	struct bus *bus;
	struct gatekeeper *gates;
	struct ctl_client *client;
	struct app *app;
	struct pev *proxy;
	unsigned long since;
	char *err = NULL;
	bool gone;
	int fd = ctl_connect(run_dir);

	if (fd < 0) {
		char *why = attach_why_not(run_dir, errno);

		fprintf(stderr, "pevtui: %s\n", why);
		free(why);
		return PEV_EXIT_ERROR;
	}
	bus = bus_new();
	gates = gatekeeper_new(bus, s->gates, GATE_MODE_OPERATOR);
	app = app_new(s, bus, gates, &err);
	if (!app) {
		fprintf(stderr, "pevtui: %s\n", err);
		free(err);
		close(fd);
		gatekeeper_free(gates);
		bus_free(bus);
		return PEV_EXIT_ERROR;
	}
	app_set_attached(app);
	app_set_run_dir(app, run_dir);
	/* The journal first, as --resume shows it; the stream goes on after its last seq, and
	 * whatever was journaled meanwhile comes first in the stream (never twice). */
	since = app_preload_live(app, run_dir);
	client = ctl_client_new(fd, fd, bus, id);
	gatekeeper_attach(gates, ctl_client_answer, client);
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
		fprintf(stderr, "pevtui: left run %s; it goes on (attach again with pevtui --attach "
				"%s)\n",
			id, id);
	return 0;
}
