/* alert — the cockpit's bell and desktop notification (see alert.h). */
#include "config.h"

#include "alert.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "notify.h"

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Straight to the terminal: curses has flushed what it drew (beep() and doupdate() both
 * flush), and an OSC moves no cursor, so the screen curses knows stays true. */
static void write_terminal(const char *s)
{
	fflush(stdout);
	(void)fd_write_all(STDOUT_FILENO, s, strlen(s));
}

void alert_event(struct notify *n, const struct event *ev)
{
	struct notify_signal sig;
	char *osc;

	if (!n || !notify_consider(n, ev, mono_now(), &sig))
		return;
	if (notify_bell_on(n))
		beep();
	osc = notify_terminal_text(n, &sig, false);
	if (osc)
		write_terminal(osc);
	free(osc);
	notify_send(n, &sig);
}
