/* ctl_proto — the control protocol of a live run (doc/protocol.md): newline-delimited JSON
 * over the run folder's Unix socket or a pipe. Events go out as journal lines; a client
 * sends a small set of command lines. This module parses and writes those lines and finds
 * the socket; it owns no connection. */
#ifndef PEVTUI_CTL_PROTO_H
#define PEVTUI_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "gate.h"
#include "pev.h"

#define CTL_PROTO_VERSION 1
/* A command line longer than this (bytes, newline excluded) is refused whole. Edits carry
 * a step or a plan as JSON: 1 MiB holds any plan the planner may propose. */
#define CTL_MAX_LINE (1024 * 1024)
/* The socket's name in the run folder. */
#define CTL_SOCKET_NAME "ctl.sock"

enum ctl_verb {
	CTL_HELLO,   /* since: journaled events after this seq come first, then live ones */
	CTL_ANSWER,  /* gate_id, decision, json: answers an open gate (the first answer wins) */
	CTL_COMMAND, /* cmd (+ step_id, json): an operator command (pev_post) */
	CTL_PING,    /* answered by ctl.pong at once (latency, liveness) */
};

/* One parsed command line. Strings are owned (ctl_cmd_release). */
struct ctl_cmd {
	enum ctl_verb verb;
	char *id;              /* the client's tag, echoed in the reply; NULL none */
	unsigned long since;   /* CTL_HELLO */
	unsigned long gate_id; /* CTL_ANSWER */
	enum gate_decision decision;
	enum pev_cmd cmd; /* CTL_COMMAND */
	char *step_id;    /* CTL_COMMAND: rerun, skip, edit; NULL otherwise */
	char *json;       /* answer or command argument as JSON text, or NULL */
};

/*
 * Parses one line (no newline) from a client. true + *out (release it), or false + *err:
 * one sentence saying what was wrong with the line (caller frees). Commands a client may
 * not send (quit: only the engine's own cockpit stops an engine without run.end) are
 * refused here.
 */
bool ctl_parse(const char *line, size_t len, struct ctl_cmd *out, char **err);
void ctl_cmd_release(struct ctl_cmd *c);

/* Command lines, newline included (caller frees). `json` may be NULL. */
char *ctl_line_hello(unsigned long since);
char *ctl_line_answer(unsigned long gate_id, enum gate_decision d, const char *json);
char *ctl_line_command(enum pev_cmd cmd, const char *step_id, const char *json);
char *ctl_line_ping(const char *id);

/* Reply lines from the server, newline included (caller frees). `id` may be NULL. */
char *ctl_reply_hello(const char *run_id, long pid, unsigned long last_seq);
char *ctl_reply_ok(const char *id);
char *ctl_reply_pong(const char *id);
char *ctl_reply_error(const char *id, const char *message);

/* The protocol name of a command ("pause", "rerun", …) or NULL for one a client may not
 * send. */
const char *ctl_command_name(enum pev_cmd cmd);

/*
 * A Unix socket address for RUNDIR/ctl.sock. A path too long for sun_path is reached
 * through /proc/self/fd/N of the folder opened as *dirfd (close it after bind/connect;
 * -1 when not needed). false + *err when the folder cannot be opened.
 */
struct sockaddr_un;
bool ctl_socket_addr(const char *run_dir, struct sockaddr_un *sa, int *dirfd, char **err);

/* Connects to the control socket of RUNDIR: the descriptor (blocking, close-on-exec), or
 * -1 with errno set (ENOENT, ECONNREFUSED: no engine serves it). */
int ctl_connect(const char *run_dir);

#endif
