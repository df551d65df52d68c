/* ctl_client — the cockpit's end of the control protocol (doc/protocol.md): event lines
 * from a live run are handed to a local bus as if published there; commands and gate
 * answers go back as command lines. */
#ifndef PEVTUI_CTL_CLIENT_H
#define PEVTUI_CTL_CLIENT_H

#include <stdbool.h>

#include "gate.h"
#include "pev.h"

struct bus;
struct ctl_client;

/*
 * Starts reading lines from `rfd` in a thread of its own: events go to `bus` (borrowed,
 * outlives the client) with bus_deliver; an error line from the engine and the end of the
 * stream become notices (seq 0) on the bus. Commands are written to `wfd`. Takes both
 * descriptors (they may be the same socket). Sends nothing: call ctl_client_hello.
 */
struct ctl_client *ctl_client_new(int rfd, int wfd, struct bus *bus, const char *run_id);
/* Stops the reader and closes the descriptors. NULL ok. */
void ctl_client_free(struct ctl_client *c);
/* Asks for the journal's events after `since`, then the live ones. */
void ctl_client_hello(struct ctl_client *c, unsigned long since);
/* The engine's answer to the hello has arrived (run id, pid). Any thread. */
bool ctl_client_ready(struct ctl_client *c);
/* The stream has ended (the engine stopped, or dropped this client). Any thread. */
bool ctl_client_closed(struct ctl_client *c);
/* A command (pev_post's arguments). PEV_CMD_QUIT is not sent: a cockpit that leaves an
 * attached run leaves the run going. false when the line could not be written. */
bool ctl_client_post(void *client, enum pev_cmd cmd, const char *step_id, const char *json);
/* A gate answer, as a gate_answer_fn for gatekeeper_attach: true once sent (whether it
 * won is told by the gate.decision event, or an error notice when it came too late). */
bool ctl_client_answer(void *client, unsigned long gate_id, enum gate_decision d, const char *json);
/* Sends a raw line (newline included); false when it could not be written. */
bool ctl_client_send(struct ctl_client *c, const char *line);

#endif
