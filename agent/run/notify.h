/*
 * notify — a signal for an operator who looked away: which events call for one (a gate
 * that waits for them, the end of the run), debounced; the desktop-notification escape
 * (OSC 9 / OSC 777), its text made safe; and the operator's own notify_cmd, run in the
 * background with a time limit. No curses: the cockpit rings its bell itself (tui/alert.c),
 * --headless subscribes notify_on_event to the bus.
 */
#ifndef PEVTUI_NOTIFY_H
#define PEVTUI_NOTIFY_H

#include <stdbool.h>

struct event;

/* Which events signal ([ui] notify = gates,end | gates | end | none). */
#define NOTIFY_GATES 1u /* a gate waits for the operator */
#define NOTIFY_END 2u   /* the run ended (passed, partial, aborted or error) */
#define NOTIFY_DEFAULT (NOTIFY_GATES | NOTIFY_END)

#define NOTIFY_DEBOUNCE_S 10    /* at most one gate signal per this many seconds */
#define NOTIFY_TIMEOUT_S 30     /* notify_cmd's time limit */
#define NOTIFY_MESSAGE_COLS 200 /* PEVTUI_MESSAGE and the notification body, at most */
#define NOTIFY_QUEUE_MAX 8      /* signals waiting for notify_cmd; more are dropped */

/* Desktop notification escape: auto picks one from the terminal (notify_osc_resolve). */
enum notify_osc { NOTIFY_OSC_AUTO, NOTIFY_OSC_OFF, NOTIFY_OSC_9, NOTIFY_OSC_777 };

/* "gates,end" / "gates" / "end" / "none" (or "all") into NOTIFY_* bits. false + *err
 * (a sentence naming the bad word; caller frees). */
bool notify_parse_events(const char *list, unsigned *mask, char **err);
/* "auto" "off" "osc9" "osc777" → enum notify_osc; -1 if unknown. */
int notify_osc_from_name(const char *name);

/*
 * What `auto` means in this terminal, read from the environment through `get` (getenv, or
 * a stand-in in tests). Inside tmux or screen, auto is off: they drop escapes they do not
 * know (tmux passes them on only with allow-passthrough on), and their own bell handling
 * turns the bell into the alert. A mode set by name inside tmux is wrapped for tmux's
 * passthrough (*tmux_wrap). Outside: iTerm2 → OSC 9; WezTerm, Ghostty, foot, rxvt-unicode
 * → OSC 777; anything else → off.
 */
enum notify_osc notify_osc_resolve(enum notify_osc setting, char *(*get)(const char *),
                                   bool *tmux_wrap);

/*
 * The escape sequence that shows TITLE and BODY as a desktop notification, or NULL when
 * `mode` is off (or auto: resolve it first). Both texts are cleaned: no control character,
 * no escape sequence, no ';' (a field separator in OSC 777 and a command separator in
 * OSC 9), at most NOTIFY_MESSAGE_COLS columns; an OSC 9 body never starts with a digit
 * (ConEmu and Windows Terminal read "9;4;…" as a command). Terminated by ESC \.
 * Caller frees.
 */
char *notify_osc_text(enum notify_osc mode, bool tmux_wrap, const char *title, const char *body);

/* One signal: what the operator is needed for. Strings owned, NULL when not applicable. */
struct notify_signal {
	char *event; /* "gate" or "end" */
	char *gate;  /* the gate's kind; at the end, the gate that stopped the run */
	char *step_id;
	char *status;  /* end: passed, partial, aborted, error */
	char *message; /* one clean line, at most NOTIFY_MESSAGE_COLS columns */
	char *run_id;  /* the run's id when the signal was given */
};
void notify_signal_release(struct notify_signal *s);

struct notify_config {
	unsigned events;         /* NOTIFY_* bits; 0 = no signal at all */
	unsigned operator_gates; /* GATE_MASK bits of the gates an operator answers here:
	                          * a gate the policy answers (--yes, --headless) is no call */
	double debounce_s;       /* gate signals at most once per this many seconds */
	bool bell;               /* ring the terminal bell (on term_fd, or the cockpit's) */
	enum notify_osc osc;     /* resolved: AUTO counts as off here */
	bool osc_tmux_wrap;
	int term_fd;                  /* --headless: a terminal for the bell and escape, else -1 */
	const char *cmd;              /* notify_cmd (run with /bin/sh -c), or NULL */
	int timeout_s;                /* notify_cmd's time limit; <= 0: NOTIFY_TIMEOUT_S */
	const char *run_id, *run_dir; /* for the environment; run.start overrides run_id */
};

struct notify;

/* Copies what it needs from `c`. Starts a thread of its own only when there is a command
 * to run or a terminal to write to (an idle one sleeps). */
struct notify *notify_new(const struct notify_config *c);
/*
 * Stops and frees. Signals still waiting get their command run first, but all of them
 * together within one time limit (timeout_s) from now: a run's last signal (its end) is
 * not lost when the program exits right after. NULL ok.
 */
void notify_free(struct notify *n);

/*
 * Whether `ev` calls for a signal, at monotonic time `now` (seconds). Fills *out (release
 * it, or hand it to notify_send) and returns true when it does. Gates that open within
 * debounce_s of the last gate signal are folded into it; the end of a run is never held
 * back. Call from one thread at a time (the cockpit's UI thread, or the bus).
 */
bool notify_consider(struct notify *n, const struct event *ev, double now,
                     struct notify_signal *out);
/* The bytes for the terminal: BEL when `bell`, then the desktop escape when one is set.
 * NULL when there is nothing to write. Caller frees. */
char *notify_terminal_text(const struct notify *n, const struct notify_signal *s, bool bell);
/*
 * Hands the signal (its strings taken, *s left empty) to the notify thread, which writes
 * the bell and escape to term_fd (when >= 0) and runs notify_cmd, so the caller never
 * waits. Never blocks on the command.
 */
void notify_send(struct notify *n, struct notify_signal *s);
/* Bus subscriber (ctx = struct notify *): notify_consider, then notify_send. */
void notify_on_event(void *ctx, const struct event *ev);
/* The bell setting: the cockpit rings its bell itself (beep()). */
bool notify_bell_on(const struct notify *n);
/* How many signals were dropped because NOTIFY_QUEUE_MAX were waiting. */
unsigned long notify_dropped(struct notify *n);

#endif
