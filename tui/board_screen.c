/* board_screen — the board's screen: a table over agent/run/board.h, keys, a timer. */
#include "config.h"

#include "board_screen.h"

#include <curses.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "alert.h"
#include "board.h"
#include "events.h"
#include "jsonx.h"
#include "checkpoint.h"
#include "run_list.h"
#include "settings.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

#define RESCAN_MS 1000
#define STORES_S 30 /* the stores' size is a walk of their folders: not every second */

struct board_screen {
	const struct settings *s;
	struct board b;
	char *err; /* why the runs folder cannot be read, or NULL */
	enum board_sort sort;
	struct strbuf filter;
	bool typing;      /* / : the filter is being typed */
	size_t sel;       /* index among the rows shown */
	int gates_before; /* gates waiting at the last scan (-1: none yet) */
	struct notify *notify; /* how a gate opening is signalled (may be NULL) */
	struct strvec seen;    /* "RUN\nGATE_ID" of the newest gates at the last scan */
	char *picked;
	bool quit;
	bool *want_new; /* n: a new run (NULL: not offered) */
	char *stores;   /* the checkpoint stores' size ("61.2 MB"), or NULL */
	time_t stores_at; /* when it was measured: again at most every STORES_S */
};

/* Feeds `json` (an event of `type`) to the notification settings. */
static void alert_json(struct notify *n, enum event_type type, const char *json)
{
	struct event ev = {.type = type, .json = (char *)json};

	alert_event(n, &ev);
}

/* Each run's newest open gate that was not there at the last scan is signalled (when
 * `tell`: not on the first look), as that run's cockpit would signal it. */
static void signal_new_gates(struct board_screen *bs, bool tell)
{
	struct strvec now = STRVEC_INIT;

	for (size_t i = 0; i < bs->b.n; i++) {
		const struct board_row *r = &bs->b.rows[i];
		cJSON *o = r->gate_json ? cJSON_Parse(r->gate_json) : NULL;
		double id = 0;
		char *key;
		bool known = false;

		if (!o)
			continue;
		jsonx_num(o, "gate_id", &id);
		key = xasprintf("%s\n%.0f", r->id, id);
		for (size_t k = 0; k < bs->seen.n && !known; k++)
			known = !strcmp(bs->seen.v[k], key);
		if (tell && !known && bs->notify) {
			cJSON *start = cJSON_CreateObject();
			char *js;
			cJSON_AddStringToObject(start, "run_id", r->id);
			js = jsonx_print(start);
			alert_json(bs->notify, EV_RUN_START, js); /* whose gate it is */
			alert_json(bs->notify, EV_GATE_OPEN, r->gate_json);
			free(js);
			cJSON_Delete(start);
		}
		strvec_push(&now, key);
		free(key);
		cJSON_Delete(o);
	}
	strvec_clear(&bs->seen);
	bs->seen = now;
}

static void scan(struct board_screen *bs)
{
	int gates;

	free(bs->err);
	bs->err = NULL;
	if (!board_scan(bs->s->runs_dir, &bs->b, &bs->err))
		board_release(&bs->b);
	board_sort(&bs->b, bs->sort);
	if (!bs->stores || time(NULL) - bs->stores_at >= STORES_S) {
		free(bs->stores);
		bs->stores = checkpoint_bytes_text(checkpoint_stores_bytes());
		bs->stores_at = time(NULL);
	}
	gates = board_gates_waiting(&bs->b);
	/* A gate opened somewhere since the last look: the operator is wanted, told as the
	 * notification settings say (bell, desktop notification, notify_cmd). */
	signal_new_gates(bs, bs->gates_before >= 0);
	bs->gates_before = gates;
}

/* The rows the filter lets through, in order; *n of them (caller frees the array). */
static const struct board_row **shown(struct board_screen *bs, size_t *n)
{
	const struct board_row **v = xcalloc(bs->b.n + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < bs->b.n; i++)
		if (board_row_matches(&bs->b.rows[i], bs->filter.buf))
			v[(*n)++] = &bs->b.rows[i];
	return v;
}

/* `text` (clean already) at (y, x) in at most `cols` columns. */
static void put(int y, int x, const char *text, int cols)
{
	char *cut;

	if (cols <= 0)
		return;
	cut = textsan_truncate(text ? text : "", cols);
	mvaddstr(y, x, cut);
	free(cut);
}

static void draw(struct board_screen *bs)
{
	size_t n;
	const struct board_row **rows = shown(bs, &n);
	int w_id = 22, w_state = 11, w_gates = 22, w_spend = 19, w_age = 5;
	int x_task = w_id + w_state + w_gates + w_spend + w_age + 5;
	char *head;

	erase();
	if (bs->sel >= n)
		bs->sel = n ? n - 1 : 0;
	head = xasprintf("pevtui board · %zu run%s · %d gate%s waiting · sort: %s%s%s · "
	                 "checkpoints %s",
	                 bs->b.n, bs->b.n == 1 ? "" : "s", board_gates_waiting(&bs->b),
	                 board_gates_waiting(&bs->b) == 1 ? "" : "s", board_sort_name(bs->sort),
	                 bs->filter.len || bs->typing ? " · filter: " : "", bs->filter.buf,
	                 bs->stores ? bs->stores : "?");
	attron(A_BOLD);
	put(0, 0, head, COLS);
	attroff(A_BOLD);
	free(head);
	attron(A_UNDERLINE);
	mvhline(1, 0, ' ', COLS);
	put(1, 0, "RUN", w_id);
	put(1, w_id + 1, "STATE", w_state);
	put(1, w_id + w_state + 2, "GATES", w_gates);
	put(1, w_id + w_state + w_gates + 3, "SPENT / BUDGET", w_spend);
	put(1, w_id + w_state + w_gates + w_spend + 4, "AGE", w_age);
	put(1, x_task, "TASK", COLS - x_task);
	attroff(A_UNDERLINE);
	if (bs->err)
		put(3, 0, bs->err, COLS);
	for (size_t i = 0; i < n && (int)i < LINES - 3; i++) {
		const struct board_row *r = rows[i];
		int y = (int)i + 2;
		char *spend =
		    r->budget_usd > 0
		        ? xasprintf("$%.4f%s / $%.2f", r->spent_usd, r->spent_unknown ? "+?" : "",
		                    r->budget_usd)
		        : xasprintf("$%.4f%s", r->spent_usd, r->spent_unknown ? "+?" : "");
		char *age = run_list_age(r->started);

		if (i == bs->sel)
			attron(A_REVERSE);
		if (r->n_gates)
			attron(A_BOLD);
		mvhline(y, 0, ' ', COLS);
		put(y, 0, r->id, w_id);
		put(y, w_id + 1, r->state, w_state);
		put(y, w_id + w_state + 2, r->gates, w_gates);
		put(y, w_id + w_state + w_gates + 3, spend, w_spend);
		put(y, w_id + w_state + w_gates + w_spend + 4, age, w_age);
		put(y, x_task, r->task, COLS - x_task);
		attroff(A_REVERSE | A_BOLD);
		free(spend);
		free(age);
	}
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	put(LINES - 1, 0,
	    bs->typing ? " type to filter  Enter keep  Esc clear"
	    : bs->want_new
	        ? " Enter attach (a finished run: replay)  n new run  j/k move  s sort  "
	          "/ filter  q quit"
	        : " Enter attach (a finished run: replay)  j/k move  s sort  / filter  q quit",
	    COLS);
	attroff(A_REVERSE);
	refresh();
	free(rows);
}

static void pick(struct board_screen *bs)
{
	size_t n;
	const struct board_row **rows = shown(bs, &n);

	if (bs->sel < n) {
		bs->picked = xasprintf("%s/%s", bs->s->runs_dir, rows[bs->sel]->id);
		bs->quit = true;
	}
	free(rows);
}

static void key(struct board_screen *bs, int ch)
{
	if (bs->typing) {
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			bs->typing = false;
		} else if (ch == 27) {
			bs->typing = false;
			strbuf_reset(&bs->filter);
		} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
			if (bs->filter.len)
				bs->filter.buf[--bs->filter.len] = '\0';
		} else if (ch >= 32 && ch < 127 && bs->filter.len < 64) {
			strbuf_addc(&bs->filter, (char)ch);
		}
		bs->sel = 0;
		return;
	}
	switch (ch) {
	case 'q': bs->quit = true; break;
	case 'n':
		if (bs->want_new) {
			*bs->want_new = true;
			bs->quit = true;
		}
		break;
	case 'j':
	case KEY_DOWN: bs->sel++; break;
	case 'k':
	case KEY_UP: bs->sel = bs->sel ? bs->sel - 1 : 0; break;
	case 'g':
	case KEY_HOME: bs->sel = 0; break;
	case 's':
		bs->sort = (enum board_sort)((bs->sort + 1) % BOARD_SORT__COUNT);
		board_sort(&bs->b, bs->sort);
		break;
	case '/':
		bs->typing = true;
		strbuf_reset(&bs->filter);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER: pick(bs); break;
	default: break;
	}
}

char *board_screen_run(const struct settings *s, struct notify *notify, bool *want_new)
{
	struct board_screen bs = {
	    .s = s, .gates_before = -1, .want_new = want_new, .notify = notify};
	SCREEN *scr;
	long next = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "pevtui: the board needs a terminal; pevtui --list-runs prints the "
		                "runs\n");
		return NULL;
	}
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr, "pevtui: cannot use this terminal for the board; try "
		                "TERM=xterm-256color, or pevtui --list-runs\n");
		return NULL;
	}
	set_term(scr);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	strbuf_init(&bs.filter);
	while (!bs.quit) {
		struct pollfd p = {STDIN_FILENO, POLLIN, 0};
		struct timespec ts;
		long now;
		int ch;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
		if (now >= next) {
			scan(&bs);
			next = now + RESCAN_MS;
		}
		draw(&bs);
		if (poll(&p, 1, (int)(next - now > 0 ? next - now : 0)) > 0) {
			if (p.revents & (POLLHUP | POLLERR))
				break;
			while (!bs.quit && (ch = getch()) != ERR)
				key(&bs, ch);
		}
	}
	endwin();
	delscreen(scr);
	board_release(&bs.b);
	strbuf_release(&bs.filter);
	strvec_clear(&bs.seen);
	free(bs.err);
	free(bs.stores);
	return bs.picked;
}
