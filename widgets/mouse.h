/*
 * mouse — mouse reports on or off, and SGR (1006) encoding where the terminal
 * description leaves it out (tmux, screen), so that clicks past column 223 arrive.
 */
#ifndef PEVTUI_MOUSE_H
#define PEVTUI_MOUSE_H

#include <stdbool.h>

enum mouse_what { MOUSE_NONE, MOUSE_CLICK, MOUSE_WHEEL_UP, MOUSE_WHEEL_DOWN };

/* What a report means to the cockpit: a left click or a wheel turn at (y, x), from 0. */
struct mouse_event {
	enum mouse_what what;
	int y, x;
};

/*
 * After newterm and keypad: asks for clicks and wheel turns (`on`), or leaves the mouse
 * to the terminal (selection, its own scrolling). ncurses decodes SGR reports itself when
 * the terminal description names mode 1006 (its XM capability, as xterm's does); for a
 * description with the older "\e[M" reports only, mode 1006 is turned on here and its
 * reports decoded by mouse_event.
 */
void mouse_start(bool on);
/* Before the terminal is handed to another program (endwin, $EDITOR) and after it comes
 * back: mode 1006 off and on again. mouse_suspend also before the program exits. */
void mouse_suspend(void);
void mouse_resume(void);
/*
 * For a key from get_wch (`is_key`: KEY_CODE_YES): true when it is a mouse report, which
 * is then read whole (an SGR report's tail is taken from the input) and put in *ev
 * (what = MOUSE_NONE for reports the cockpit has no use for: releases, other buttons).
 */
bool mouse_event(bool is_key, int ch, struct mouse_event *ev);
/* Decodes the tail of an SGR report, after "\e[<": "B;X;YM" (press) or "B;X;Ym"
 * (release), X and Y from 1. false when it is not one. */
bool mouse_sgr_parse(const char *tail, struct mouse_event *ev);

#endif
