/* mouse — mousemask, mode 1006 where ncurses does not ask for it, and decoding reports. */
#include "config.h"

#include "mouse.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>

/* The key code ncurses returns for "\e[<", the start of an SGR report, when it is ours to
 * decode; 0 when ncurses decodes SGR itself or the mouse is off. */
static int sgr_key;
static bool sgr_on;

/* Whether ncurses itself asks for and decodes SGR reports: it does when the terminal
 * description's XM names mode 1006 (ncurses' lib_mouse.c, init_xterm_mouse). */
static bool ncurses_does_sgr(void)
{
	char *xm = tigetstr("XM");
	const char *p;

	if (xm && xm != (char *)-1 && (p = strstr(xm, "[?")) != NULL) {
		for (p += 2; *p;) {
			if (!strncmp(p, "1006", 4) && (p[4] < '0' || p[4] > '9'))
				return true;
			p += strspn(p, "0123456789");
			if (*p != ';')
				break;
			p++;
		}
	}
	return tigetnum("XM") == 1006;
}

void mouse_start(bool on)
{
	const char *kmous;

	sgr_key = 0;
	if (!on) {
		mousemask(0, NULL);
		return;
	}
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	kmous = tigetstr("kmous");
	if (!has_mouse() || ncurses_does_sgr() || !kmous || kmous == (char *)-1 ||
	    strcmp(kmous, "\033[M"))
		return;
	/* An xterm-style mouse described with the 3-byte reports only (tmux, screen): ask for
	 * SGR reports, which have no column limit, and have ncurses hand us their start. */
	for (int code = KEY_MAX + 1; code < KEY_MAX + 1000 && !sgr_key; code++)
		if (!keybound(code, 0))
			sgr_key = code;
	if (!sgr_key || define_key("\033[<", sgr_key) != OK) {
		sgr_key = 0;
		return;
	}
	mouse_resume();
}

void mouse_suspend(void)
{
	if (!sgr_on)
		return;
	fputs("\033[?1006l", stdout);
	fflush(stdout);
	sgr_on = false;
}

void mouse_resume(void)
{
	if (!sgr_key || sgr_on)
		return;
	/* Past curses' output, which is flushed between updates. */
	fputs("\033[?1006h", stdout);
	fflush(stdout);
	sgr_on = true;
}

bool mouse_sgr_parse(const char *tail, struct mouse_event *ev)
{
	long v[3];
	const char *p = tail;
	char *end;

	for (int i = 0; i < 3; i++) {
		if (*p < '0' || *p > '9')
			return false;
		v[i] = strtol(p, &end, 10);
		p = end;
		if (i < 2 && *p++ != ';')
			return false;
	}
	if ((*p != 'M' && *p != 'm') || p[1] || v[1] < 1 || v[2] < 1 || v[1] > 100000 ||
	    v[2] > 100000)
		return false;
	ev->x = (int)v[1] - 1;
	ev->y = (int)v[2] - 1;
	ev->what = MOUSE_NONE;
	/* Low bits: the button; 4, 8, 16: shift, meta, control; 32: motion; 64: the wheel. */
	if (*p == 'M') {
		long b = v[0] & ~(4L | 8 | 16);

		if (b == 0)
			ev->what = MOUSE_CLICK;
		else if (b == 64)
			ev->what = MOUSE_WHEEL_UP;
		else if (b == 65)
			ev->what = MOUSE_WHEEL_DOWN;
	}
	return true;
}

/* The rest of an SGR report after "\e[<": it came in the same write, but wait a little
 * for a slow link. */
static bool read_sgr(struct mouse_event *ev)
{
	char tail[32];
	size_t n = 0;
	int delay = wgetdelay(stdscr);
	bool ok = false;
	wint_t ch;

	wtimeout(stdscr, 100);
	while (n + 1 < sizeof(tail)) {
		int r = get_wch(&ch);

		if (r == ERR)
			break;
		if (r == KEY_CODE_YES ||
		    !(ch == ';' || ch == 'M' || ch == 'm' || (ch >= '0' && ch <= '9'))) {
			if (r == KEY_CODE_YES)
				ungetch((int)ch);
			else
				unget_wch((wchar_t)ch);
			break;
		}
		tail[n++] = (char)ch;
		if (ch == 'M' || ch == 'm') {
			tail[n] = '\0';
			ok = mouse_sgr_parse(tail, ev);
			break;
		}
	}
	wtimeout(stdscr, delay);
	return ok;
}

bool mouse_event(bool is_key, int ch, struct mouse_event *ev)
{
	MEVENT me;

	ev->what = MOUSE_NONE;
	ev->y = ev->x = -1;
	if (!is_key)
		return false;
	if (sgr_key && ch == sgr_key) {
		read_sgr(ev);
		return true;
	}
	if (ch != KEY_MOUSE)
		return false;
	if (getmouse(&me) != OK)
		return true;
	ev->y = me.y;
	ev->x = me.x;
	if (me.bstate & BUTTON4_PRESSED)
		ev->what = MOUSE_WHEEL_UP;
	else if (me.bstate & BUTTON5_PRESSED)
		ev->what = MOUSE_WHEEL_DOWN;
	else if (me.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		ev->what = MOUSE_CLICK;
	return true;
}
