/* alert — the cockpit's side of notify: the bell through curses and the desktop
 * notification written to the terminal between screen updates. UI thread only. */
#ifndef PEVTUI_ALERT_H
#define PEVTUI_ALERT_H

struct event;
struct notify;

/*
 * When `ev` calls for a signal (notify_consider): rings the bell (beep(), when the
 * notify_bell setting is on), writes the desktop-notification escape when the terminal
 * takes one, and hands the signal to notify for notify_cmd. `n` NULL: nothing.
 */
void alert_event(struct notify *n, const struct event *ev);

#endif
