/* ctl_server — the control socket of a live run (RUNDIR/ctl.sock, doc/protocol.md): it
 * streams the run's events to attached clients and hands their commands and gate answers
 * to the engine's inbox. Its own thread; publishing never waits on a client. */
#ifndef PEVTUI_CTL_SERVER_H
#define PEVTUI_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct bus;
struct gatekeeper;
struct pev;
struct ctl_server;

/* Per client: bytes of event lines queued for a client that does not read them; past this
 * the client is dropped (closed), never waited for. */
#define CTL_OUT_MAX (8u * 1024 * 1024)
/* Clients served at once; one more is told so and closed. */
#define CTL_MAX_CLIENTS 64

/*
 * Listens on RUNDIR/ctl.sock (a stale socket left by a dead engine is replaced: the
 * caller holds the run lock) and starts the server thread. The run folder is made 0700
 * and the socket 0600; a client of another uid (SO_PEERCRED) is refused. Subscribes to
 * `bus` (journaled events), which has no unsubscribe: free the server only after the last
 * publish (pev_join). `bus`, `e` and `gates` are borrowed and outlive the server.
 * NULL + *err (a sentence) when the socket cannot be made.
 */
struct ctl_server *ctl_server_start(const char *run_dir, const char *run_id, struct bus *bus,
                                    struct pev *e, struct gatekeeper *gates, char **err);
/* Stops the thread, closes every client and removes the socket. NULL ok. */
void ctl_server_free(struct ctl_server *s);
/* Clients connected now (tests, the board). */
size_t ctl_server_clients(struct ctl_server *s);
/*
 * Whether a cockpit watches the run: a client that said hello is connected (`server` is a
 * struct ctl_server *, or NULL: nobody). Any thread. For pev_linger_while: when the last
 * such client goes, the server calls pev_watchers_changed on its engine.
 */
bool ctl_server_watched(void *server);

#endif
