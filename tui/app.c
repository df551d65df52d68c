/*
 * app — the cockpit's loop (the cmus pattern): the engine thread's events are copied into
 * a queue and announced through a self-pipe; SIGWINCH writes to the same pipe; the UI
 * thread poll()s the keyboard and the pipe, folds events into the view and redraws.
 * Only this thread calls curses.
 */
#include "config.h"

#include "app.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <cjson/cJSON.h>

#include "alert.h"
#include "bus.h"
#include "draw.h"
#include "elicit_dialog.h"
#include "drill_screen.h"
#include "events.h"
#include "form.h"
#include "gate.h"
#include "gate_dialog.h"
#include "gate_list.h"
#include "help.h"
#include "journal.h"
#include "layout.h"
#include "modal.h"
#include "mouse.h"
#include "panes.h"
#include "pev.h"
#include "requests.h"
#include "rewind_key.h"
#include "settings.h"
#include "statusbar.h"
#include "step_editor.h"
#include "textsan.h"
#include "textview.h"
#include "theme.h"
#include "view.h"
#include "xalloc.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/pevtui"
#endif
/* The build tree and its source tree (Makefile.am): themes are found there when the
 * program runs uninstalled. */
#ifndef PEVTUI_BUILDDIR
#define PEVTUI_BUILDDIR NULL
#endif
#ifndef PEVTUI_SRCDIR
#define PEVTUI_SRCDIR NULL
#endif

/* The spinner's frame time; the loop sleeps without a timeout when nothing moves. */
#define TICK_MS 100
/* How long the status line keeps the last action's message (issue 29: it stayed for
 * minutes, read as news): one wake takes it away. */
#define MESSAGE_S 8

enum mode { MODE_NORMAL, MODE_CONFIRM, MODE_HELP, MODE_FORM, MODE_SEARCH, MODE_GATES, MODE_DRILL };

/* What a submitted form is for. */
enum form_use {
	FORM_TASK,
	FORM_STEP_EDIT,
	FORM_GATE_STEP,
	FORM_GATE_PLAN_STEP,
	FORM_GATE_COMMAND,
	FORM_GATE_BUDGET,
	FORM_GATE_ELICIT, /* the answer to an MCP server's question */
};

/* Replay speeds in events per second; 0 plays in real time (the journal's timestamps). */
static const double replay_speeds[] = {1, 2, 5, 10, 20, 50, 100, 500, 0};
#define N_SPEEDS (sizeof(replay_speeds) / sizeof(replay_speeds[0]))
#define DEFAULT_SPEED 3 /* 10 events per second */

struct app;
typedef void (*confirm_fn)(struct app *a);

struct app {
	const struct settings *s;
	struct bus *bus;
	struct gatekeeper *gates;
	struct pev *engine;
	struct view *view;
	struct notify *notify;   /* borrowed: the bell and notify_cmd (alert.h); NULL none */
	SCREEN *screen;

	/* Filled by the engine thread (under lock), drained by the UI thread. */
	pthread_mutex_t lock;
	struct event **q;
	size_t qn, qcap;
	size_t qdelta_bytes;     /* of streamed text queued (bounded, see on_event) */
	unsigned long qdropped;  /* streamed chunks dropped past that bound */
	int wake[2];
	unsigned long preload_seq; /* --resume: journaled events up to here are on screen */

	struct panes_state ps;
	enum mode mode;
	bool quit;
	bool dirty;
	int expect_paused; /* 1 / 0 sent to the engine, not yet confirmed by a notice; -1 none */
	bool cancel_sent;  /* since the last resume: the next p resumes whatever still runs */
	bool gate_hidden;  /* the dialog is put aside with Esc */
	int gate_scroll;
	int gate_more;     /* rows of the gate dialog's body that did not fit (last draw) */
	unsigned long gate_pick; /* the gate picked in the list (w) to show; 0: the oldest */
	size_t gate_sel;         /* MODE_GATES: the selected row */
	int help_scroll;
	unsigned long *answered; /* gate ids answered here, until their decision arrives */
	size_t n_answered, cap_answered;

	char *question;        /* MODE_CONFIRM */
	double message_at;     /* when `message` was set: it goes after MESSAGE_S */
	char *rerun_id;        /* the step `r` asks about */
	char *rewind_json;     /* the PEV_CMD_REWIND `u` asks about */
	confirm_fn on_yes;

	struct form *form;     /* MODE_FORM */
	enum form_use form_use;
	char *form_json;       /* the step being edited */
	char *form_step_id;
	unsigned long form_gate;
	bool form_done;        /* app_prompt_task: the form ended */
	char *form_result;

	struct strbuf search;  /* MODE_SEARCH input; the last search after */
	char *message;         /* one sentence in the status line until the next key */
	struct drill_screen *drill; /* MODE_DRILL: a log line opened whole */
	char *run_dir;         /* the run folder (kept requests, attempts' copies), or NULL */
	struct requests_index *requests; /* its requests as listed so far (drill-down), or NULL */

	bool auto_select;      /* the plan selection follows the running step */
	struct layout layout;  /* as last drawn (mouse clicks) */
	bool attached;         /* --attach: the engine is another process's (detach.h) */
	bool detached;         /* D or a hangup: the screen goes, the run goes on */

	/* --replay: the journal's events and how many of them the view has applied. */
	bool replay;
	struct event **events;
	size_t n_events, cap_events, pos;
	bool playing;      /* space: the position moves by itself */
	size_t speed;      /* index into replay_speeds */
	double play_next;  /* monotonic seconds when the next event is due */
};

/* SIGWINCH lands here; the handler only writes a byte. */
static volatile sig_atomic_t winch_pending;
static int winch_fd = -1;
static sigset_t winch_set;

/* SIGHUP (the terminal or the SSH connection went away): detach, without asking. */
static volatile sig_atomic_t hup_pending;

/* From a signal handler: sets *flag and wakes the poll loop (async-signal-safe). */
static void wake_loop(volatile sig_atomic_t *flag, const char *byte)
{
	int saved = errno;

	*flag = 1;
	if (winch_fd >= 0 && write(winch_fd, byte, 1) < 0) {
		/* the pipe is full: a wake-up is already pending */
	}
	errno = saved;
}

static void on_hup(int sig)
{
	(void)sig;
	wake_loop(&hup_pending, "h");
}

static void on_winch(int sig)
{
	(void)sig;
	wake_loop(&winch_pending, "w");
}

/* Bus subscriber: runs in the engine thread with the bus lock held. */
/* Streamed text the screen may hold back while its thread is busy (an $EDITOR open for
 * an hour): past this, deltas are dropped — their text comes again whole in step.output
 * — and journaled events, which the view needs every one of, are always kept. */
#define QUEUE_DELTA_BYTES (4u << 20)

static void on_event(void *ctx, const struct event *ev)
{
	struct app *a = ctx;
	struct event *d;

	if (pthread_mutex_lock(&a->lock))
		fatal("app: cannot lock the event queue");
	if (ev->type == EV_LLM_DELTA && a->qdelta_bytes > QUEUE_DELTA_BYTES) {
		a->qdropped++;
		pthread_mutex_unlock(&a->lock);
		return;
	}
	d = event_dup(ev);
	if (ev->type == EV_LLM_DELTA)
		a->qdelta_bytes += strlen(d->json);
	a->q = xgrow(a->q, &a->qcap, a->qn + 1, sizeof(*a->q));
	a->q[a->qn++] = d;
	pthread_mutex_unlock(&a->lock);
	if (write(a->wake[1], "e", 1) < 0) {
		/* EAGAIN: the UI has a wake-up pending already */
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_message(struct app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_message(struct app *a, const char *fmt, ...)
{
	va_list ap;
	char *m;

	va_start(ap, fmt);
	m = xvasprintf(fmt, ap);
	va_end(ap);
	free(a->message);
	a->message = textsan_clean(m, strlen(m), 0);
	a->message_at = now_s();
	free(m);
	a->dirty = true;
}

/* ---- gates ---- */

static bool answered(const struct app *a, unsigned long id)
{
	for (size_t i = 0; i < a->n_answered; i++)
		if (a->answered[i] == id)
			return true;
	return false;
}

/* The gate picked in the list while it waits, else the first open gate this operator has
 * not answered yet, or NULL. */
static struct vgate *head_gate(struct app *a)
{
	for (size_t i = 0; a->gate_pick && i < a->view->n_gates; i++)
		if (a->view->gates[i].id == a->gate_pick && !answered(a, a->gate_pick))
			return &a->view->gates[i];
	for (size_t i = 0; i < a->view->n_gates; i++)
		if (!answered(a, a->view->gates[i].id))
			return &a->view->gates[i];
	return NULL;
}

static size_t gates_waiting(struct app *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->view->n_gates; i++)
		n += !answered(a, a->view->gates[i].id);
	return n;
}

/* Where the gate shown stands among those waiting (0 = the oldest). */
static size_t gate_pos(struct app *a)
{
	struct vgate *g = head_gate(a);
	size_t n = 0;

	for (size_t i = 0; g && i < a->view->n_gates && a->view->gates[i].id != g->id; i++)
		n += !answered(a, a->view->gates[i].id);
	return n;
}

static bool gate_shown(struct app *a)
{
	return !a->gate_hidden && head_gate(a) != NULL;
}

static void answer(struct app *a, struct vgate *g, enum gate_decision d, const char *json)
{
	if (!gatekeeper_answer(a->gates, g->id, d, json)) {
		set_message(a, "that gate is no longer open");
	} else {
		a->answered = xgrow(a->answered, &a->cap_answered, a->n_answered + 1,
				    sizeof(*a->answered));
		a->answered[a->n_answered++] = g->id;
		if (g->kind == GATE_SHELL && d == GATE_SKIP)
			set_message(a, "command refused; the step goes on without it");
		else if (g->kind == GATE_MCP && d == GATE_SKIP)
			set_message(a, "MCP call refused; the step goes on without it");
		else if (g->kind == GATE_ELICIT)
			set_message(a, "%s", d == GATE_APPROVE ? "the answer went to the MCP server"
					     : d == GATE_SKIP  ? "the MCP server's question was declined"
							       : "the MCP server's question was cancelled");
		else if (g->kind == GATE_SHELL && d == GATE_EDIT)
			set_message(a, "command edited: the gate shows it again (a runs it)");
		else
			set_message(a, "gate %s: %s", gate_kind_name(g->kind),
				    gate_decision_word(gate_kind_name(g->kind),
						       gate_decision_name(d)));
	}
	a->gate_scroll = 0;
	a->dirty = true;
}

/* Forgets answered ids whose gate is gone from the view. */
static void prune_answered(struct app *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n_answered; i++) {
		bool open = false;

		for (size_t j = 0; j < a->view->n_gates && !open; j++)
			open = a->view->gates[j].id == a->answered[i];
		if (open)
			a->answered[k++] = a->answered[i];
	}
	a->n_answered = k;
}

static bool run_live(const struct app *a)
{
	return a->view->state != VR_FINISHED;
}

/* Posts a command to the engine; when it cannot take it (gone: an attached cockpit's
 * connection closed, or the engine left its loop), the status line says so instead of
 * the caller's "sent". */
static bool post(struct app *a, enum pev_cmd cmd, const char *step_id, const char *json)
{
	if (pev_post(a->engine, cmd, step_id, json))
		return true;
	set_message(a, "not sent: the engine of run %s is gone (the run ended or stopped); "
		       "pevtui --resume %s opens it again",
		    pev_run_id(a->engine), pev_run_id(a->engine));
	return false;
}

/* ---- confirmations ---- */

static void ask(struct app *a, const char *question, confirm_fn on_yes)
{
	free(a->question);
	a->question = xstrdup(question);
	a->on_yes = on_yes;
	a->mode = MODE_CONFIRM;
	a->dirty = true;
}

static void do_quit(struct app *a)
{
	if (a->engine && run_live(a))
		pev_post(a->engine, PEV_CMD_QUIT, NULL, NULL);
	a->quit = true;
}

static void do_reject_gate(struct app *a)
{
	struct vgate *g = head_gate(a);

	if (g)
		answer(a, g, GATE_REJECT, NULL);
}

static void do_abort(struct app *a)
{
	if (a->engine && post(a, PEV_CMD_ABORT, NULL, NULL))
		set_message(a, "aborting the run");
}

/* ---- editing ---- */

static void open_form(struct app *a, struct form *f, enum form_use use, const char *json,
		      const char *step_id, unsigned long gate)
{
	form_free(a->form);
	a->form = f;
	a->form_use = use;
	free(a->form_json);
	a->form_json = xstrdup(json);
	free(a->form_step_id);
	a->form_step_id = xstrdup(step_id);
	a->form_gate = gate;
	a->mode = MODE_FORM;
	curs_set(1);
	a->dirty = true;
}

static void close_form(struct app *a)
{
	form_free(a->form);
	a->form = NULL;
	a->mode = MODE_NORMAL;
	curs_set(0);
	a->dirty = true;
}

/* The JSON of a step of the proposed plan (plan gate), or NULL. Before adoption the view's
 * steps are the proposal's. */
static char *proposed_step_json(struct app *a, const char *id)
{
	int i = view_find_step(a->view, id);

	return i >= 0 && a->view->steps[i].f->json ? xstrdup(a->view->steps[i].f->json) : NULL;
}

/* The shell gate's one-line form: the edited command goes back as {"command": …}. */
static void submit_command(struct app *a)
{
	const char *cmd = form_value(a->form, 0);
	struct vgate *g = head_gate(a);
	cJSON *o;
	char *json;

	if (!*cmd) {
		form_set_error(a->form, "the command is empty: refuse it with s at the gate");
		a->dirty = true;
		return;
	}
	if (!g || g->id != a->form_gate) {
		set_message(a, "the gate closed meanwhile; the edit was not sent");
		close_form(a);
		return;
	}
	if (g->command && strcmp(cmd, g->command) == 0) {
		close_form(a);
		set_message(a, "the command is unchanged: approve it with a");
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "command", cmd);
	json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!json)
		fatal("app: out of memory");
	answer(a, g, GATE_EDIT, json);
	cJSON_free(json);
	close_form(a);
}

static void edit_command(struct app *a, struct vgate *g)
{
	struct form *f = form_new("Edit the shell command",
				  "Enter back to the gate with it  Esc cancel");

	form_add(f, "Command", g->command ? g->command : "");
	open_form(a, f, FORM_GATE_COMMAND, NULL, g->step_id, g->id);
}

/* The budget gate's answer: go on under a new cap (USD). */
static void approve_budget(struct app *a, struct vgate *g, double cap)
{
	char json[64];

	snprintf(json, sizeof(json), "{\"budget_usd\": %.6f}", cap);
	answer(a, g, GATE_APPROVE, json);
	set_message(a, "budget raised to $%.4f", cap);
}

static void submit_budget(struct app *a)
{
	const char *v = form_value(a->form, 0);
	struct vgate *g = head_gate(a);
	char *end = NULL;
	double cap;

	while (*v == ' ' || *v == '$')
		v++;
	cap = strtod(v, &end);
	while (end && *end == ' ')
		end++;
	if (!end || end == v || *end || !(cap > 0) || cap > 1e9) {
		form_set_error(a->form, "a figure in USD, such as 2.50");
		a->dirty = true;
		return;
	}
	if (!g || g->id != a->form_gate || g->kind != GATE_BUDGET) {
		set_message(a, "the budget gate closed meanwhile; nothing was sent");
		close_form(a);
		return;
	}
	if (g->budget_usd > 0 && cap <= view_gate_committed(g)) {
		form_set_error(a->form, "that is not above what is spent and held: the run would "
					"stop again at once");
		a->dirty = true;
		return;
	}
	approve_budget(a, g, cap);
	close_form(a);
}

/* The elicit gate's form: the typed answer goes back, or the form says what to fix. */
static void submit_elicit(struct app *a)
{
	struct vgate *g = head_gate(a);
	char *err = NULL, *json = NULL;

	if (!elicit_dialog_content(a->form_json, a->form, &json, &err)) {
		form_set_error(a->form, err);
		free(err);
		a->dirty = true;
		return;
	}
	if (!g || g->id != a->form_gate || g->kind != GATE_ELICIT)
		set_message(a, "the question was withdrawn meanwhile; nothing was sent");
	else
		answer(a, g, GATE_APPROVE, json);
	free(json);
	close_form(a);
}

/* a at the elicit gate: the server's form, its defaults filled in. */
static void open_elicit_form(struct app *a, struct vgate *g)
{
	const struct fgate *fg = fold_find_gate(&a->view->rs, g->id);
	char *err = NULL;
	struct form *f = fg ? elicit_dialog_form(fg->json, &err) : NULL;

	if (!f) {
		set_message(a, "this question's form cannot be shown (%s): s declines it",
			    err ? err : "gone");
		free(err);
		return;
	}
	open_form(a, f, FORM_GATE_ELICIT, fg->json, g->step_id, g->id);
}

static void submit_form(struct app *a)
{
	char *err = NULL, *json;
	struct vgate *g;

	if (a->form_use == FORM_TASK) {
		a->form_result = xstrdup(form_value(a->form, 0));
		a->form_done = true;
		close_form(a);
		return;
	}
	if (a->form_use == FORM_GATE_COMMAND) {
		submit_command(a);
		return;
	}
	if (a->form_use == FORM_GATE_BUDGET) {
		submit_budget(a);
		return;
	}
	if (a->form_use == FORM_GATE_ELICIT) {
		submit_elicit(a);
		return;
	}
	json = step_editor_apply(a->form_json, a->form, &err);
	if (err) {
		form_set_error(a->form, err);
		free(err);
		a->dirty = true;
		return;
	}
	if (!json) {
		close_form(a);
		set_message(a, "nothing changed");
		return;
	}
	g = head_gate(a);
	/* When it cannot be sent, the status line says why (post). */
	if (post(a, PEV_CMD_EDIT, a->form_step_id, json)) {
		if (a->form_use == FORM_GATE_PLAN_STEP || a->form_use == FORM_GATE_STEP)
			/* An edit is not an answer: the same gate comes back with the new text. */
			set_message(a, "step %s edited; the gate shows it, changes marked: a "
				       "approves",
				    a->form_step_id);
		else
			set_message(a, "step %s edited", a->form_step_id);
	}
	(void)g;
	free(json);
	close_form(a);
}

static void form_keys(struct app *a, bool is_key, unsigned int ch)
{
	switch (form_key(a->form, is_key, ch)) {
	case FORM_SUBMIT: submit_form(a); break;
	case FORM_CANCEL:
		if (a->form_use == FORM_TASK)
			a->form_done = true;
		close_form(a);
		break;
	case FORM_CONTINUE: a->dirty = true; break;
	}
}

static void edit_external(struct app *a, const char *json, bool is_plan, struct vgate *g,
			  const char *step_id)
{
	char *err = NULL, *out;
	unsigned long gid = g ? g->id : 0;

	out = step_editor_external(json, is_plan, &err);
	clearok(stdscr, TRUE);
	a->dirty = true;
	if (err) {
		set_message(a, "%s", err);
		free(err);
		return;
	}
	if (!out) {
		set_message(a, "unchanged; nothing was edited");
		return;
	}
	(void)gid;
	if (g && is_plan) {
		/* The proposal waiting at the gate changes; the gate stays open. */
		if (post(a, PEV_CMD_EDIT_PLAN, NULL, out))
			set_message(a, "plan edited; the gate shows it, changes marked: a approves");
	} else if (g) {
		if (post(a, PEV_CMD_EDIT, g->step_id, out))
			set_message(a, "step %s edited; the gate shows it, changes marked: a approves",
				    g->step_id);
	} else if (post(a, PEV_CMD_EDIT, step_id, out)) {
		set_message(a, "step %s edited", step_id);
	}
	free(out);
}

/* ---- actions (the key table) ---- */

static struct vstep *selected(struct app *a)
{
	return panes_selected_step(a->view, &a->ps);
}

static void act_quit(struct app *a)
{
	if (a->attached)
		a->quit = true; /* leaving an attached run leaves it going */
	else if (a->engine && run_live(a))
		ask(a, "Quit now? The run stops and can be resumed later with pevtui --resume. "
		       "(Q instead leaves it running: pevtui --attach comes back to it.)",
		    do_quit);
	else
		a->quit = true;
}

/* D: the screen goes and the shell comes back; the run goes on (README: Detach). */
static void act_detach(struct app *a)
{
	if (a->replay)
		return;
	a->detached = true;
	a->quit = true;
}

static void act_approve(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;

	if (g && g->kind == GATE_BUDGET && g->budget_usd > 0)
		approve_budget(a, g, g->budget_usd * 1.5);
	else if (g && g->kind == GATE_ELICIT)
		open_elicit_form(a, g);
	else if (g)
		answer(a, g, GATE_APPROVE, NULL);
	else
		set_message(a, "no gate is waiting");
}

/* At the budget gate: double the cap. */
static void act_double_budget(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;

	if (g && g->kind == GATE_BUDGET && g->budget_usd > 0)
		approve_budget(a, g, g->budget_usd * 2);
	else if (g && g->kind == GATE_REWIND)
		view_gate_toggle_diff(a->view, g);
	else
		set_message(a, "d doubles the budget at the budget gate");
}

/* The engine stays after run.end in the cockpit: edits and re-runs reopen the run. */
static bool can_command(struct app *a, const struct vstep *s, const char *what)
{
	if (!a->engine) {
		set_message(a, "replay is read-only");
		return false;
	}
	if (!s) {
		set_message(a, "select a step to %s", what);
		return false;
	}
	if (a->view->aborting) {
		set_message(a, "the run is stopping");
		return false;
	}
	return true;
}

static void act_edit(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;
	struct vstep *s = selected(a);
	struct form *f;

	if (g && g->kind == GATE_PLAN) {
		char *json;

		if (!s) {
			set_message(a, "select a step in the plan pane to edit it (E edits the plan)");
			return;
		}
		json = proposed_step_json(a, s->f->id);
		f = json ? step_editor_form(json) : NULL;
		if (f)
			open_form(a, f, FORM_GATE_PLAN_STEP, json, s->f->id, g->id);
		free(json);
		return;
	}
	if (g && g->kind == GATE_SHELL) {
		edit_command(a, g);
		return;
	}
	if (g && g->kind == GATE_BUDGET) {
		struct form *bf = form_new("New budget (USD)",
					   "Enter go on under this cap  Esc back to the gate");
		char cur[32];

		snprintf(cur, sizeof(cur), "%.2f", g->budget_usd > 0 ? g->budget_usd * 2 : 1.0);
		form_add(bf, "Budget", cur);
		open_form(a, bf, FORM_GATE_BUDGET, NULL, NULL, g->id);
		return;
	}
	if (g && g->edit_json && (g->kind == GATE_HIGH || g->kind == GATE_STEP)) {
		f = step_editor_form(g->edit_json);
		if (f)
			open_form(a, f, FORM_GATE_STEP, g->edit_json, g->step_id, g->id);
		return;
	}
	if (g) {
		set_message(a, "this gate is edited with E");
		return;
	}
	if (!can_command(a, s, "edit"))
		return;
	f = step_editor_form(s->f->json);
	if (f)
		open_form(a, f, FORM_STEP_EDIT, s->f->json, s->f->id, 0);
}

static void act_edit_external(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;
	struct vstep *s = selected(a);

	if (g && g->kind == GATE_SHELL) {
		/* The engine reads only {"command"} here: the step's JSON is not what it edits. */
		edit_command(a, g);
		return;
	}
	if (g) {
		bool is_plan = g->kind == GATE_PLAN || g->kind == GATE_REPLAN;

		if (!g->edit_json) {
			set_message(a, "this gate has nothing to edit");
			return;
		}
		edit_external(a, g->edit_json, is_plan, g, NULL);
		return;
	}
	if (!can_command(a, s, "edit"))
		return;
	edit_external(a, s->f->json, false, NULL, s->f->id);
}

static void act_skip(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;
	struct vstep *s = selected(a);

	if (g) {
		if (!gate_kind_can_skip(g->kind))
			set_message(a, "this gate cannot be skipped: approve (a) or reject (x)");
		else
			answer(a, g, GATE_SKIP, NULL);
		return;
	}
	if (!can_command(a, s, "skip"))
		return;
	if (post(a, PEV_CMD_SKIP, s->f->id, NULL))
		set_message(a, "skipping step %s", s->id);
}

static void act_reject(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;

	if (g && g->kind == GATE_ELICIT)
		answer(a, g, GATE_REJECT, NULL); /* cancels the question only */
	else if (g && g->kind == GATE_BUDGET)
		ask(a, "Stop the run at the budget? It ends as aborted.", do_reject_gate);
	else if (g)
		ask(a, "Reject this gate? The run is aborted.", do_reject_gate);
	else if (a->engine && run_live(a))
		ask(a, "Abort the run? Running calls are cancelled.", do_abort);
	else
		set_message(a, "the run is over");
}

static void do_rerun(struct app *a)
{
	if (a->rerun_id && post(a, PEV_CMD_RERUN_FORCE, a->rerun_id, NULL))
		set_message(a, "re-run sent");
}

/* Step i and every step that depends on it, transitively, in plan order: what a re-run
 * makes run again. Names are sanitized (they go on screen). */
static char *rerun_list(const struct view *v, size_t i)
{
	const struct run_state *rs = &v->rs;
	bool *mark = xcalloc(rs->n_steps ? rs->n_steps : 1, sizeof(*mark));
	struct strbuf sb = STRBUF_INIT;
	bool changed = true;

	mark[i] = true;
	while (changed) {
		changed = false;
		for (size_t k = 0; k < rs->n_steps; k++) {
			for (size_t d = 0; !mark[k] && d < rs->steps[k].deps.n; d++) {
				int di = fold_find_step(rs, rs->steps[k].deps.v[d]);
				if (di >= 0 && mark[di])
					mark[k] = changed = true;
			}
		}
	}
	strbuf_init(&sb);
	for (size_t k = 0; k < rs->n_steps && k < v->n_steps; k++)
		if (mark[k])
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", v->steps[k].id);
	free(mark);
	return strbuf_detach(&sb);
}

/* r: a forced re-run (no reuse of an earlier result) of the selected step and everything
 * that depends on it; it asks first, naming them. A finished run is reopened. */
static void act_rerun(struct app *a)
{
	struct vstep *s = selected(a);
	int i;
	char *list, *q;

	if (!can_command(a, s, "run again"))
		return;
	i = view_find_step(a->view, s->f->id);
	if (i < 0)
		return;
	free(a->rerun_id);
	a->rerun_id = xstrdup(s->f->id);
	list = rerun_list(a->view, (size_t)i);
	q = xasprintf("Run again: %s? %s", list,
		      run_live(a) ? "Their results are set aside." : "This reopens the finished run.");
	ask(a, q, do_rerun);
	free(q);
	free(list);
}

static void do_rewind(struct app *a)
{
	if (a->rewind_json && post(a, PEV_CMD_REWIND, NULL, a->rewind_json))
		set_message(a, "rewind sent");
}

/* u: the workspace back to before the selected step (the goal line: before the run). It
 * says what changes back and asks; never beside running steps: pause first. */
static void act_rewind(struct app *a)
{
	struct vstep *s = selected(a);
	char *q = NULL, *json = NULL, *err = NULL;

	if (!a->engine) {
		set_message(a, "replay is read-only");
		return;
	}
	if (a->view->aborting) {
		set_message(a, "the run is stopping");
		return;
	}
	if (run_live(a) && !a->view->rs.paused) {
		set_message(a, "pause the run first (p): a rewind never runs beside steps");
		return;
	}
	if (view_running(a->view) > 0) {
		set_message(a, "wait until the running steps stop, then rewind");
		return;
	}
	if (!rewind_key_preview(a->run_dir, a->view->rs.workspace, s ? s->f->id : NULL,
				&a->s->checkpoint_exclude, &q, &json, &err)) {
		set_message(a, "%s", err);
		free(err);
		return;
	}
	free(a->rewind_json);
	a->rewind_json = json;
	ask(a, q, do_rewind);
	free(q);
}

/* What `p` does now: the view's answer, unless a command sent from here is still on its
 * way to the engine (a quick second press must not repeat the first). */
static enum vpause_action pause_action(const struct app *a)
{
	if (!run_live(a) || a->view->aborting)
		return view_pause_action(a->view);
	if (a->cancel_sent && a->expect_paused != 0)
		return VP_RESUME;
	if (a->expect_paused < 0)
		return view_pause_action(a->view);
	if (!a->expect_paused)
		return VP_PAUSE;
	return view_running(a->view) > 0 ? VP_CANCEL : VP_RESUME;
}

static void act_pause(struct app *a)
{
	if (!a->engine || !run_live(a)) {
		set_message(a, "the run is over");
		return;
	}
	switch (pause_action(a)) {
	case VP_PAUSE:
		if (!post(a, PEV_CMD_PAUSE, NULL, NULL))
			break;
		a->expect_paused = 1;
		set_message(a, "pause sent");
		break;
	case VP_CANCEL:
		if (!post(a, PEV_CMD_CANCEL_RUNNING, NULL, NULL))
			break;
		a->expect_paused = 1;
		a->cancel_sent = true;
		set_message(a, "cancel sent");
		break;
	case VP_RESUME:
		if (!post(a, PEV_CMD_RESUME, NULL, NULL))
			break;
		a->expect_paused = 0;
		a->cancel_sent = false;
		set_message(a, "resume sent");
		break;
	case VP_NONE: set_message(a, "the run is stopping"); break;
	}
}

static void act_focus_next(struct app *a)
{
	a->ps.focus = (enum pane_id)((a->ps.focus + 1) % PANE__COUNT);
}

static void act_focus_prev(struct app *a)
{
	a->ps.focus = (enum pane_id)((a->ps.focus + PANE__COUNT - 1) % PANE__COUNT);
}

static void scroll_focused(struct app *a, long delta)
{
	switch (a->ps.focus) {
	case PANE_PLAN:
		listview_move(&a->ps.plan, panes_plan_rows(a->view, &a->ps), (int)delta);
		a->auto_select = false;
		break;
	case PANE_LOG:
		/* The selected line moves (Enter opens it); the log scrolls to keep it shown. */
		logview_select(&a->ps.log, panes_log_store(a->view, &a->ps), delta);
		break;
	case PANE_VERDICTS:
		a->ps.verdict_skip += (int)delta;
		if (a->ps.verdict_skip < 0)
			a->ps.verdict_skip = 0;
		break;
	default: break;
	}
}

/* While the operator has not picked a step, the selection follows the running one (and
 * returns to the run, with its final answer, at the end). */
static void follow_running(struct app *a)
{
	const struct view *v = a->view;
	double best_t = -1;
	int best = -1;

	if (!a->auto_select || panes_showing_proposal(v, &a->ps))
		return;
	for (size_t i = 0; i < v->n_steps; i++) {
		enum vstep_status st = v->steps[i].status;
		const struct fstep *f = v->steps[i].f;
		double t = f->run_since > 0 ? f->run_since : f->first_start;

		if ((st == VS_RUNNING || st == VS_VERIFYING || st == VS_RETRYING) && t >= best_t) {
			best_t = t;
			best = (int)i;
		}
	}
	if (best >= 0)
		a->ps.plan.sel = best + 1;
	else if (v->state == VR_FINISHED)
		a->ps.plan.sel = 0;
}

static bool inside(struct rect r, int y, int x)
{
	return y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w;
}

/* A click focuses a pane (or a tab) and selects a plan row; the wheel scrolls. */
static void on_mouse(struct app *a, const struct mouse_event *me)
{
	const struct layout *l = &a->layout;

	if (me->what == MOUSE_NONE)
		return;
	if (l->tabbar && inside(l->tabs, me->y, me->x)) {
		int x = l->tabs.x;

		for (int p = 0; p < PANE__COUNT; p++) {
			int w = 5 + textsan_width(layout_pane_title((enum pane_id)p));

			if (me->x >= x && me->x < x + w)
				a->ps.focus = (enum pane_id)p;
			x += w;
		}
		return;
	}
	for (int p = 0; p < PANE__COUNT; p++) {
		if (!l->visible[p] || !inside(l->pane[p], me->y, me->x))
			continue;
		a->ps.focus = (enum pane_id)p;
		if (me->what == MOUSE_WHEEL_UP) {
			scroll_focused(a, -3);
		} else if (me->what == MOUSE_WHEEL_DOWN) {
			scroll_focused(a, 3);
		} else if (p == PANE_PLAN) {
			int row = me->y - l->pane[p].y - 1;

			if (row >= 0 && row < l->pane[p].h - 2) {
				a->ps.plan.sel = a->ps.plan.top + row;
				a->auto_select = false;
			}
		}
		return;
	}
}


static int page(void)
{
	return LINES > 8 ? LINES / 2 : 1;
}

static void act_down(struct app *a) { scroll_focused(a, 1); }
static void act_up(struct app *a) { scroll_focused(a, -1); }

/* The arrows scroll the gate dialog while it has more than it shows (j and k still move
 * in the focused pane: at the plan gate they pick the step e edits). */
static void act_arrow_down(struct app *a)
{
	if (gate_shown(a) && a->gate_more > 0)
		a->gate_scroll++;
	else
		scroll_focused(a, 1);
}

static void act_arrow_up(struct app *a)
{
	if (gate_shown(a) && a->gate_more > 0)
		a->gate_scroll--;
	else
		scroll_focused(a, -1);
}
static void act_page_down(struct app *a)
{
	if (gate_shown(a))
		a->gate_scroll += page();
	else
		scroll_focused(a, page());
}
static void act_page_up(struct app *a)
{
	if (gate_shown(a))
		a->gate_scroll -= page();
	else
		scroll_focused(a, -page());
}

static void act_home(struct app *a)
{
	if (a->ps.focus == PANE_PLAN) {
		a->ps.plan.sel = 0;
		a->auto_select = false;
	} else if (a->ps.focus == PANE_VERDICTS)
		a->ps.verdict_skip = 0;
	else
		logview_home(&a->ps.log);
}

static void act_end(struct app *a)
{
	if (a->ps.focus == PANE_PLAN) {
		/* The last row, as in every pager (issue 29: G went to the top when no step ran). */
		int n = panes_plan_rows(a->view, &a->ps);

		a->ps.plan.sel = n > 0 ? n - 1 : 0;
		a->auto_select = false;
	} else if (a->ps.focus == PANE_LOG)
		logview_end(&a->ps.log);
}

static void act_zoom(struct app *a) { a->ps.zoom = !a->ps.zoom; }

/* While a replan gate holds a proposal: the Plan pane switches between the plan in force
 * and the proposed revision (its pane title says which). */
static void act_plan_revision(struct app *a)
{
	const struct view *v = a->view;

	if (!v->n_proposal) {
		set_message(a, v->rs.proposed_json && !v->rs.plan_adopted
				       ? "no plan is in force yet: the Plan pane shows the proposal"
				       : "c shows the proposed plan while a replan gate is open");
		return;
	}
	a->ps.show_proposal = !a->ps.show_proposal;
	a->ps.plan.sel = 0;
	a->ps.plan.top = 0;
	if (a->ps.show_proposal)
		set_message(a, "Plan pane: proposed revision %d (c: back to revision %d)",
			    v->rs.proposed_revision, v->rs.revision);
	else
		set_message(a, "Plan pane: revision %d, the plan in force", v->rs.revision);
}

static void act_search(struct app *a)
{
	strbuf_reset(&a->search);
	a->mode = MODE_SEARCH;
}

static void search_again(struct app *a, bool forward)
{
	if (a->search.len == 0) {
		set_message(a, "no search yet: press /");
		return;
	}
	if (!logview_search(&a->ps.log, panes_log_store(a->view, &a->ps), a->search.buf,
			    forward))
		set_message(a, "not found: %s", a->search.buf);
	else
		set_message(a, "match %zu/%zu: %s", a->ps.log.match_no,
			    a->ps.log.matches, a->search.buf);
	if (a->ps.log.hit != (size_t)-1)
		a->ps.log.sel = a->ps.log.hit; /* Enter opens the match */
	a->ps.focus = PANE_LOG;
}

static void act_search_next(struct app *a) { search_again(a, true); }
static void act_search_prev(struct app *a) { search_again(a, false); }

static void act_help(struct app *a)
{
	a->help_scroll = 0;
	a->mode = MODE_HELP;
}

static void act_hide_gate(struct app *a)
{
	if (head_gate(a) && !a->gate_hidden) {
		a->gate_hidden = true;
		set_message(a, "gate put aside: Enter shows it again");
	}
}

/* The gates waiting for this operator, as the list shows them. */
static struct gate_waiting waiting(const struct app *a)
{
	return (struct gate_waiting){a->view, a->answered, a->n_answered};
}

/* w: the waiting gates, one line each, to pick which one the dialog shows. */
static void act_gate_list(struct app *a)
{
	struct gate_waiting w = waiting(a);
	struct vgate *g = head_gate(a);
	long at = g ? gate_list_index(&w, g->id) : -1;

	if (gate_list_count(&w) == 0) {
		set_message(a, "no gate is waiting");
		return;
	}
	a->gate_sel = at > 0 ? (size_t)at : 0;
	a->mode = MODE_GATES;
}

static void gate_list_keys(struct app *a, bool is_key, unsigned int ch)
{
	struct gate_waiting w = waiting(a);
	struct vgate *g;

	switch (gate_list_key(&a->gate_sel, gate_list_count(&w), is_key, ch)) {
	case GATE_LIST_PICK:
		a->mode = MODE_NORMAL;
		g = gate_list_nth(&w, a->gate_sel);
		if (g) {
			a->gate_pick = g->id;
			a->gate_hidden = false;
			a->gate_scroll = 0;
		}
		break;
	case GATE_LIST_CLOSE: a->mode = MODE_NORMAL; break;
	case GATE_LIST_CONTINUE: break;
	}
}

/* A at a shell gate: approve, and let this exact command skip the gate for the rest of
 * the run (the engine keeps it, and --resume takes it back from the journal). */
static void act_allow_for_run(struct app *a)
{
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;

	if (g && g->kind == GATE_MCP) {
		answer(a, g, GATE_APPROVE, "{\"remember\":true}");
		set_message(a, "gate mcp: approved; this tool runs without asking for the rest of "
			       "the run");
		return;
	}
	if (!g || g->kind != GATE_SHELL) {
		set_message(a, "A works at a shell gate: approve, and allow that exact command "
			       "for the rest of the run");
		return;
	}
	answer(a, g, GATE_APPROVE, "{\"remember\":true}");
	set_message(a, "gate shell: approved; this exact command runs without asking for the "
		       "rest of the run");
}

static void act_show_gate(struct app *a)
{
	if (head_gate(a))
		a->gate_hidden = false;
	else if (a->ps.focus == PANE_PLAN)
		a->ps.focus = PANE_LOG;
}

static void act_redraw(struct app *a) { clearok(stdscr, TRUE); }
static void act_pane1(struct app *a) { a->ps.focus = PANE_PLAN; }
static void act_pane2(struct app *a) { a->ps.focus = PANE_LOG; }
static void act_pane3(struct app *a) { a->ps.focus = PANE_VERDICTS; }
static void act_pane4(struct app *a) { a->ps.focus = PANE_COST; }

/* ---- drill-down (drill_screen.h) ---- */

/* An event by seq when the view kept only the seq: the replay's own list, else the
 * journal. Caller frees. */
struct seq_find {
	unsigned long seq;
	char *json;
};

static bool find_seq(void *ctx, const struct event *ev)
{
	struct seq_find *f = ctx;

	if (ev->seq != f->seq)
		return ev->seq < f->seq;
	f->json = xstrdup(ev->json);
	return false;
}

static char *fetch_event(void *ctx, unsigned long seq)
{
	struct app *a = ctx;
	struct seq_find f = {seq, NULL};
	struct journal_load_info info;
	char *path, *err = NULL;

	for (size_t i = 0; a->replay && i < a->n_events; i++)
		if (a->events[i]->seq == seq)
			return xstrdup(a->events[i]->json);
	if (a->replay || !a->run_dir)
		return NULL;
	path = xasprintf("%s/journal.jsonl", a->run_dir);
	journal_load(path, find_seq, &f, &info, &err);
	free(err);
	free(path);
	return f.json;
}

static struct drill_source drill_source(struct app *a)
{
	if (!a->requests && a->run_dir)
		a->requests = requests_index_new(a->run_dir);
	return (struct drill_source){a->view, a->run_dir, a->requests, fetch_event, a};
}

/* Enter in the Step log: the selected line's entry, whole. */
static void open_drill(struct app *a)
{
	const struct linestore *ls = panes_log_store(a->view, &a->ps);
	struct vstep *s = selected(a);
	size_t line = logview_selected(&a->ps.log, ls);
	struct drill_source src = drill_source(a);
	char *msg = NULL;

	if (line == (size_t)-1) {
		set_message(a, "the log is empty: nothing to open");
		return;
	}
	a->drill = drill_screen_open(&src, s ? s->f->id : NULL, line, &msg);
	if (!a->drill) {
		set_message(a, "%s", msg ? msg : "nothing to open there");
		free(msg);
		return;
	}
	a->mode = MODE_DRILL;
}

/* Enter: a gate put aside comes back first (the status line says so); else, in the Step
 * log, the selected line opens whole. */
static void act_enter(struct app *a)
{
	if (a->ps.focus == PANE_LOG && !head_gate(a))
		open_drill(a);
	else
		act_show_gate(a);
}

/* i: the selected Step log line, whole, even while a gate waits. */
static void act_inspect(struct app *a)
{
	open_drill(a);
}

/* P: the requests the models were sent for the selected step's attempt (the attempt of
 * the selected log line when the log has the focus). */
static void act_requests(struct app *a)
{
	const struct linestore *ls = panes_log_store(a->view, &a->ps);
	struct vstep *s = selected(a);
	struct drill_source src = drill_source(a);
	size_t line = a->ps.focus == PANE_LOG ? logview_selected(&a->ps.log, ls) : (size_t)-1;
	char *msg = NULL;

	a->drill = drill_screen_requests(&src, s ? s->f->id : NULL, line, &msg);
	if (!a->drill) {
		set_message(a, "%s", msg ? msg : "no request was kept");
		free(msg);
		return;
	}
	a->mode = MODE_DRILL;
}

/* D: what the selected step changed in the workspace, as a diff: the attempt of the selected
 * log line when the log has the focus, else every attempt of the step. */
static void act_changes(struct app *a)
{
	const struct linestore *ls = panes_log_store(a->view, &a->ps);
	struct vstep *s = selected(a);
	struct drill_source src = drill_source(a);
	size_t line = a->ps.focus == PANE_LOG ? logview_selected(&a->ps.log, ls) : (size_t)-1;
	char *msg = NULL;

	if (!s) {
		set_message(a, "select a step: workspace changes belong to its attempts");
		return;
	}
	a->drill = drill_screen_changes(&src, s->f->id, line, &msg);
	if (!a->drill) {
		set_message(a, "%s", msg ? msg : "no workspace changes recorded");
		free(msg);
		return;
	}
	a->mode = MODE_DRILL;
}

static void drill_keys(struct app *a, bool is_key, unsigned int ch)
{
	struct drill_source src = drill_source(a);

	if (!a->drill || !drill_screen_key(a->drill, &src, is_key, ch)) {
		drill_screen_free(a->drill);
		a->drill = NULL;
		a->mode = MODE_NORMAL;
	}
}

/* t: the Verdicts pane shows every step's verdicts, or only the selected step's. */
static void act_verdict_scope(struct app *a)
{
	a->ps.verdicts_of_step = !a->ps.verdicts_of_step;
	a->ps.verdict_skip = 0;
	set_message(a, a->ps.verdicts_of_step ? "Verdicts: the selected step's (t: every step's)"
					      : "Verdicts: every step's (t: the selected step's)");
}

/* ---- replay ---- */

/* Rebuilds the view from the first `pos` events of the journal (backwards means again
 * from the start: the view model only moves forward). */
static void replay_seek(struct app *a, size_t pos)
{
	if (pos > a->n_events)
		pos = a->n_events;
	if (pos < a->pos) {
		view_free(a->view);
		a->view = view_new();
		a->pos = 0;
		logview_init(&a->ps.log);
		a->ps.log_of = NULL;
	}
	while (a->pos < pos)
		view_apply(a->view, a->events[a->pos++]);
	a->dirty = true;
}

static void act_replay_next(struct app *a) { replay_seek(a, a->pos + 1); }
static void act_replay_prev(struct app *a) { replay_seek(a, a->pos ? a->pos - 1 : 0); }
static void act_replay_start(struct app *a) { replay_seek(a, 0); }
static void act_replay_end(struct app *a) { replay_seek(a, a->n_events); }

/* Moves to just after the next (or previous) event of type t. */
static void replay_find(struct app *a, enum event_type t, bool forward, const char *what)
{
	if (forward) {
		for (size_t i = a->pos; i < a->n_events; i++) {
			if (a->events[i]->type == t) {
				replay_seek(a, i + 1);
				return;
			}
		}
	} else {
		for (size_t i = a->pos > 1 ? a->pos - 1 : 0; i-- > 0;) {
			if (a->events[i]->type == t) {
				replay_seek(a, i + 1);
				return;
			}
		}
	}
	set_message(a, "no %s %s", forward ? "later" : "earlier", what);
}

/* Moves to just after the next (or previous) event that `is` picks out. */
static void replay_find_if(struct app *a, bool (*is)(const struct event *), bool forward,
			   const char *what)
{
	if (forward) {
		for (size_t i = a->pos; i < a->n_events; i++) {
			if (is(a->events[i])) {
				replay_seek(a, i + 1);
				return;
			}
		}
	} else {
		for (size_t i = a->pos > 1 ? a->pos - 1 : 0; i-- > 0;) {
			if (is(a->events[i])) {
				replay_seek(a, i + 1);
				return;
			}
		}
	}
	set_message(a, "no %s %s", forward ? "later" : "earlier", what);
}

static void act_replay_next_replan(struct app *a)
{
	replay_find_if(a, view_event_is_replan, true, "replan");
}
static void act_replay_prev_replan(struct app *a)
{
	replay_find_if(a, view_event_is_replan, false, "replan");
}
static void act_replay_next_failure(struct app *a)
{
	replay_find_if(a, view_event_is_failure, true, "failure");
}
static void act_replay_prev_failure(struct app *a)
{
	replay_find_if(a, view_event_is_failure, false, "failure");
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double event_ts(const struct event *ev)
{
	const char *p = strstr(ev->json, "\"ts\":\"");

	return p ? fold_parse_ts(p + 6) : 0;
}

/* Seconds from event i - 1 to event i at the current speed. In real time the journal's
 * own gaps, capped so a run that sat at a gate for an hour does not stall the replay. */
static double replay_gap(const struct app *a, size_t i)
{
	double d;

	if (replay_speeds[a->speed] > 0)
		return 1.0 / replay_speeds[a->speed];
	if (i == 0 || i >= a->n_events)
		return 0;
	d = event_ts(a->events[i]) - event_ts(a->events[i - 1]);
	return d < 0 ? 0 : d > 5 ? 5 : d;
}

static void act_replay_play(struct app *a)
{
	if (a->playing) {
		a->playing = false;
		return;
	}
	if (a->pos >= a->n_events)
		replay_seek(a, 0); /* at the end, play starts over */
	a->playing = true;
	a->play_next = mono_s() + replay_gap(a, a->pos);
}

static void replay_speed(struct app *a, int delta)
{
	if (delta < 0 && a->speed > 0)
		a->speed--;
	else if (delta > 0 && a->speed + 1 < N_SPEEDS)
		a->speed++;
	else
		return;
	if (a->playing)
		a->play_next = mono_s() + replay_gap(a, a->pos);
}

static void act_replay_faster(struct app *a) { replay_speed(a, 1); }
static void act_replay_slower(struct app *a) { replay_speed(a, -1); }

/* Applies the events that are due. A late wake-up catches up, but never more than half a
 * second's worth of lag: the screen then moves on from now. */
static void replay_tick(struct app *a)
{
	double now = mono_s();

	if (!a->playing)
		return;
	if (now - a->play_next > 0.5)
		a->play_next = now;
	while (a->playing && a->play_next <= now && a->pos < a->n_events) {
		replay_seek(a, a->pos + 1);
		a->play_next += replay_gap(a, a->pos);
	}
	if (a->pos >= a->n_events) {
		a->playing = false;
		set_message(a, "end of the run");
	}
	follow_running(a);
}

/* Milliseconds until the next replay event is due (-1: not playing). */
static int replay_timeout(const struct app *a)
{
	double ms;

	if (!a->playing)
		return -1;
	ms = (a->play_next - mono_s()) * 1000.0;
	return ms <= 0 ? 0 : ms > 60000 ? 60000 : (int)ms + 1;
}

static void act_replay_next_gate(struct app *a) { replay_find(a, EV_GATE_OPEN, true, "gate"); }
static void act_replay_prev_gate(struct app *a) { replay_find(a, EV_GATE_OPEN, false, "gate"); }
static void act_replay_next_verdict(struct app *a)
{
	replay_find(a, EV_VERIFY_VERDICT, true, "verdict");
}
static void act_replay_prev_verdict(struct app *a)
{
	replay_find(a, EV_VERIFY_VERDICT, false, "verdict");
}


/* Where a binding works: everywhere, only with a live engine, or only in --replay. */
enum scope { ANY, LIVE, REPLAY };

struct binding {
	int key;      /* a character, or a KEY_* code when is_key */
	bool is_key;
	void (*fn)(struct app *a);
	const char *name, *help; /* name NULL: same help as the previous row */
	enum scope scope;
};

static const struct binding bindings[] = {
	{'a', false, act_approve, "a",
	 "approve the gate (at the budget gate: go on with the cap raised by half)", LIVE},
	{'d', false, act_double_budget, "d", "at the budget gate: go on with the cap doubled",
	 LIVE},
	{'e', false, act_edit, "e",
	 "edit the selected step (or the gate's step; at a shell gate: the command; at the "
	 "budget gate: type a new cap) in a form; an edit is not an approval: the gate comes "
	 "back showing it",
	 LIVE},
	{'E', false, act_edit_external, "E",
	 "edit the step (the plan at a plan gate) in $EDITOR; at a shell gate: as e", LIVE},
	{'s', false, act_skip, "s",
	 "skip the step (at a replan gate: keep the old plan; at a shell gate: refuse the "
	 "command, the step goes on)",
	 LIVE},
	{'x', false, act_reject, "x", "reject the gate / abort the run (asks)", LIVE},
	{'A', false, act_allow_for_run, "A",
	 "at a shell gate: approve, and run this exact command without asking for the rest of "
	 "the run (asked again after --resume)",
	 LIVE},
	{'r', false, act_rerun, "r",
	 "run the selected step again, with every step that depends on it (asks, naming them; "
	 "reopens a finished run)",
	 LIVE},
	{'u', false, act_rewind, "u",
	 "rewind the workspace to before the selected step (on the goal line: the run); asks",
	 LIVE},
	{'p', false, act_pause, "p",
	 "pause (running steps finish); again: cancel those still running (they start over); "
	 "again: resume",
	 LIVE},

	{'\t', false, act_focus_next, "Tab", "next pane", ANY},
	{KEY_BTAB, true, act_focus_prev, "S-Tab", "previous pane", ANY},
	{'1', false, act_pane1, "1-4", "focus Plan, Step log, Verdicts, Cost", ANY},
	{'2', false, act_pane2, NULL, NULL, ANY},
	{'3', false, act_pane3, NULL, NULL, ANY},
	{'4', false, act_pane4, NULL, NULL, ANY},
	{'j', false, act_down, "j/k \xe2\x86\x93\xe2\x86\x91",
	 "move / scroll (the arrows scroll the gate dialog while it has more to show)", ANY},
	{KEY_DOWN, true, act_arrow_down, NULL, NULL, ANY},
	{'k', false, act_up, NULL, NULL, ANY},
	{KEY_UP, true, act_arrow_up, NULL, NULL, ANY},
	{KEY_NPAGE, true, act_page_down, "PgDn/PgUp", "page (the gate dialog when shown)", ANY},
	{' ', false, act_page_down, NULL, NULL, ANY},
	{KEY_PPAGE, true, act_page_up, NULL, NULL, ANY},
	{'g', false, act_home, "g/G", "top / bottom (the Step log's G follows its tail)", ANY},
	{KEY_HOME, true, act_home, NULL, NULL, ANY},
	{'G', false, act_end, NULL, NULL, ANY},
	{KEY_END, true, act_end, NULL, NULL, ANY},
	{'z', false, act_zoom, "z", "zoom the focused pane", ANY},
	{'c', false, act_plan_revision, "c",
	 "at a replan gate: show the proposed plan / the plan in force", ANY},
	{'/', false, act_search, "/", "search the step log", ANY},
	{'n', false, act_search_next, "n/N", "next / previous match", ANY},
	{'N', false, act_search_prev, NULL, NULL, ANY},
	{27, false, act_hide_gate, "Esc", "put the gate dialog aside", ANY},
	{'w', false, act_gate_list, "w",
	 "the waiting gates, one line each: pick the one to answer (Enter or its number)", ANY},
	{'\n', false, act_enter, "Enter",
	 "show the gate dialog again; with no gate waiting, in the Step log: open the selected "
	 "line whole (as i)",
	 ANY},
	{'\r', false, act_enter, NULL, NULL, ANY},
	{KEY_ENTER, true, act_enter, NULL, NULL, ANY},
	{'i', false, act_inspect, "i",
	 "open the selected Step log line whole: a tool call with its arguments and output, a "
	 "result by its fields, a verdict; there d diffs an artifact against the previous "
	 "attempt, o opens it in $PAGER, p shows the requests, \xe2\x86\x90 \xe2\x86\x92 the "
	 "other entries",
	 ANY},
	{'P', false, act_requests, "P",
	 "the requests the models were sent for the selected step's attempt, as kept in the "
	 "run folder (the planner's with the run selected)",
	 ANY},
	{'D', false, act_changes, "D",
	 "what the selected step changed in the workspace, as a diff (every attempt; with the "
	 "Step log focused, the selected line's attempt); c does it from an opened line",
	 ANY},
	{'t', false, act_verdict_scope, "t",
	 "Verdicts pane: only the selected step's verdicts / every step's", ANY},
	{12, false, act_redraw, "^L", "redraw", ANY},
	{' ', false, act_replay_play, "space", "replay: play / stop", REPLAY},
	{'+', false, act_replay_faster, "+ -",
	 "replay: faster / slower (1 to 500 events per second, then real time)", REPLAY},
	{'=', false, act_replay_faster, NULL, NULL, REPLAY},
	{'-', false, act_replay_slower, NULL, NULL, REPLAY},
	{'.', false, act_replay_next, ". ,", "replay: one event forward / back", REPLAY},
	{KEY_RIGHT, true, act_replay_next, NULL, NULL, REPLAY},
	{',', false, act_replay_prev, NULL, NULL, REPLAY},
	{KEY_LEFT, true, act_replay_prev, NULL, NULL, REPLAY},
	{'>', false, act_replay_next_gate, "> <", "replay: next / previous gate", REPLAY},
	{'<', false, act_replay_prev_gate, NULL, NULL, REPLAY},
	{'v', false, act_replay_next_verdict, "v V", "replay: next / previous verdict", REPLAY},
	{'V', false, act_replay_prev_verdict, NULL, NULL, REPLAY},
	{'f', false, act_replay_next_failure, "f F",
	 "replay: next / previous failure (a verdict that is not pass, a tool or model error)",
	 REPLAY},
	{'F', false, act_replay_prev_failure, NULL, NULL, REPLAY},
	{'r', false, act_replay_next_replan, "r R", "replay: next / previous replan", REPLAY},
	{'R', false, act_replay_prev_replan, NULL, NULL, REPLAY},
	{'0', false, act_replay_start, "0 $", "replay: start / end of the run", REPLAY},
	{'$', false, act_replay_end, NULL, NULL, REPLAY},
	{'?', false, act_help, "?", "this help", ANY},
	{'q', false, act_quit, "q", "quit (asks while the run is live; it can be resumed)", ANY},
	{3, false, act_quit, NULL, NULL, ANY},
	{'Q', false, act_detach, "Q",
	 "detach: the screen goes, the run goes on (pevtui --attach RUN comes back to it)",
	 LIVE},
};

static const char *const *help_pairs(bool replay)
{
	static const char *pairs[2 * (sizeof(bindings) / sizeof(bindings[0])) + 1];
	size_t k = 0;

	/* In a replay its own keys come first: they are what the screen is for. */
	for (int pass = replay ? 0 : 1; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
			enum scope sc = bindings[i].scope;

			if (!bindings[i].name || sc == (replay ? LIVE : REPLAY) ||
			    (replay && (sc == REPLAY) != (pass == 0)))
				continue;
			pairs[k++] = bindings[i].name;
			pairs[k++] = bindings[i].help;
		}
	}
	pairs[k] = NULL;
	return pairs;
}

/* One row of the Markdown key table; a | in the text is escaped. */
static void print_key_row(FILE *out, const char *name, const char *help)
{
	fprintf(out, "| `%s` | ", name);
	for (const char *c = help; *c; c++) {
		if (*c == '|')
			fputc('\\', out);
		fputc(*c, out);
	}
	fputs(" |\n", out);
}

void app_print_keys(FILE *out)
{
	const char *const *live = help_pairs(false);

	fputs("| key | what it does |\n|---|---|\n", out);
	for (size_t i = 0; live[2 * i]; i++)
		print_key_row(out, live[2 * i], live[2 * i + 1]);
	/* A replay's own keys, after the live ones. */
	for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++)
		if (bindings[i].name && bindings[i].scope == REPLAY)
			print_key_row(out, bindings[i].name, bindings[i].help);
}

/* ---- keys ---- */

static void search_keys(struct app *a, bool is_key, unsigned int ch)
{
	if (!is_key && ch == 27) {
		strbuf_reset(&a->search);
		a->mode = MODE_NORMAL;
	} else if ((!is_key && (ch == '\n' || ch == '\r')) || (is_key && ch == KEY_ENTER)) {
		a->mode = MODE_NORMAL;
		logview_init(&a->ps.log);
		a->ps.log_of = panes_log_store(a->view, &a->ps);
		search_again(a, true);
	} else if ((is_key && ch == KEY_BACKSPACE) || (!is_key && (ch == 127 || ch == 8))) {
		while (a->search.len > 0 &&
		       ((unsigned char)a->search.buf[--a->search.len] & 0xC0) == 0x80)
			;
		a->search.buf[a->search.len] = '\0';
	} else if (!is_key && ch >= 0x20 && ch != 0x7F && a->search.len < 256) {
		wchar_t w[2] = {(wchar_t)ch, 0};
		char mb[16];
		size_t n = wcstombs(mb, w, sizeof(mb));

		if (n != (size_t)-1 && n > 0)
			strbuf_add(&a->search, mb, n);
	}
}

static void handle_key(struct app *a, bool is_key, unsigned int ch)
{
	struct mouse_event me;

	a->dirty = true;
	if (is_key && ch == KEY_RESIZE)
		return;
	/* A mouse report is read whole here, in any mode, so none of it is taken as keys. */
	if (mouse_event(is_key, (int)ch, &me)) {
		if (a->mode == MODE_NORMAL)
			on_mouse(a, &me);
		return;
	}
	switch (a->mode) {
	case MODE_FORM: form_keys(a, is_key, ch); return;
	case MODE_SEARCH: search_keys(a, is_key, ch); return;
	case MODE_GATES: gate_list_keys(a, is_key, ch); return;
	case MODE_DRILL: drill_keys(a, is_key, ch); return;
	case MODE_HELP:
		if (!is_key && (ch == 'j' || ch == ' '))
			a->help_scroll++;
		else if (!is_key && ch == 'k')
			a->help_scroll--;
		else if (is_key && (ch == KEY_DOWN || ch == KEY_NPAGE))
			a->help_scroll += ch == KEY_DOWN ? 1 : page();
		else if (is_key && (ch == KEY_UP || ch == KEY_PPAGE))
			a->help_scroll -= ch == KEY_UP ? 1 : page();
		else
			a->mode = MODE_NORMAL;
		return;
	case MODE_CONFIRM:
		a->mode = MODE_NORMAL;
		if (!is_key && (ch == 'y' || ch == 'Y') && a->on_yes)
			a->on_yes(a);
		else if (!is_key && ch == 'Q' && a->on_yes == do_quit)
			act_detach(a); /* the question offers it */
		else
			set_message(a, "cancelled");
		return;
	case MODE_NORMAL: break;
	}
	free(a->message);
	a->message = NULL;
	/* In a replay its own keys come first (space plays, r jumps to a replan). */
	for (size_t i = 0; a->replay && i < sizeof(bindings) / sizeof(bindings[0]); i++) {
		if (bindings[i].scope == REPLAY && bindings[i].is_key == is_key &&
		    (unsigned int)bindings[i].key == ch) {
			bindings[i].fn(a);
			return;
		}
	}
	for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
		if (bindings[i].is_key != is_key || (unsigned int)bindings[i].key != ch)
			continue;
		if (bindings[i].scope == LIVE && a->replay)
			set_message(a, "replay is read-only: nothing is sent to a run");
		else if (bindings[i].scope == REPLAY && !a->replay)
			continue;
		else
			bindings[i].fn(a);
		return;
	}
}

/* Reads every key waiting (stdin is non-blocking for curses: nodelay). */
static void read_keys(struct app *a)
{
	wint_t ch;
	int r;

	while ((r = get_wch(&ch)) != ERR && !a->quit) {
		handle_key(a, r == KEY_CODE_YES, (unsigned int)ch);
		if (a->form_done)
			break;
	}
}

/* ---- drawing ---- */

static const char *pause_hint(const struct app *a)
{
	switch (pause_action(a)) {
	case VP_PAUSE: return "pause";
	case VP_CANCEL: return "cancel running";
	case VP_RESUME: return "resume";
	default: return "-";
	}
}

/* The state as the operator needs it: what the run does and, live, what `p` does next. */
static void state_words(struct app *a, struct strbuf *sb, size_t waiting)
{
	char *st = view_state_text(a->view);
	const struct view *v = a->view;
	bool live = !a->replay && run_live(a) && !v->aborting;

	if (live && waiting)
		strbuf_adds(sb, "waiting for you");
	else if (live && a->expect_paused == 1 && !v->rs.paused)
		strbuf_adds(sb, "pausing");
	else if (live && a->expect_paused == 0 && v->rs.paused)
		strbuf_adds(sb, "resuming");
	else
		strbuf_adds(sb, st);
	free(st);
	if (!v->rs.paused || !run_live(a) || v->aborting)
		return;
	if (waiting)
		strbuf_adds(sb, " (paused)");
	if (!a->replay && a->expect_paused < 0)
		strbuf_adds(sb, pause_action(a) == VP_CANCEL ? " \xe2\x80\x94 p cancels them"
							     : " \xe2\x80\x94 p resumes");
}

static void draw_status(struct app *a, struct rect r)
{
	const char *const hints_run[] = {"p", pause_hint(a), "e", "edit", "r", "re-run",
					 "/", "search", "z", "zoom", "?", "help", "q", "quit",
					 NULL};
	static const char *const hints_end[] = {"q", "quit", "/", "search", "?", "help", NULL};
	static const char *const hints_replay[] = {"space", "play", "+ -", "speed", ". ,",
						   "step", "> <", "gate", "f F", "failure", "r R",
						   "replan", "?", "help", "q", "quit", NULL};
	struct strbuf sb = STRBUF_INIT;
	char dur[32], m[40];
	size_t waiting = gates_waiting(a);
	bool unknown;
	double total = view_total_usd(a->view, &unknown);
	struct vgate *g = gate_shown(a) ? head_gate(a) : NULL;
	/* The keys of the gate shown, as its dialog lists them: no s where it cannot skip. */
	const char *const *hints_g = g ? gate_dialog_keys(g) : NULL;

	strbuf_init(&sb);
	if (a->mode == MODE_SEARCH) {
		strbuf_addf(&sb, "/%s", a->search.buf);
		statusbar_draw(r, sb.buf, NULL);
		strbuf_release(&sb);
		move(r.y, 2 + textsan_width(a->search.buf));
		curs_set(1);
		return;
	}
	if (a->replay) {
		strbuf_addf(&sb, "replay %zu/%zu %s ", a->pos, a->n_events,
			    a->playing ? "\xe2\x96\xb6" : "stopped");
		if (replay_speeds[a->speed] > 0)
			strbuf_addf(&sb, "%g/s", replay_speeds[a->speed]);
		else
			strbuf_adds(&sb, "real time");
		strbuf_adds(&sb, " \xc2\xb7 ");
	}
	state_words(a, &sb, waiting);
	panes_duration(dur, sizeof(dur), view_elapsed(a->view, a->ps.now));
	panes_money(m, sizeof(m), total, unknown);
	strbuf_addf(&sb, " \xc2\xb7 %s \xc2\xb7 %s", dur, m);
	if (waiting)
		strbuf_addf(&sb, " \xc2\xb7 %zu gate%s waiting%s", waiting, waiting == 1 ? "" : "s",
			    a->gate_hidden ? " (Enter)" : "");
	if (a->message)
		strbuf_addf(&sb, " \xc2\xb7 %s", a->message);
	if (g && !a->replay && a->view->state != VR_FINISHED) {
		/* The keys that answer the gate stay on the row at any width (issue 29): whole
		 * beside the whole state and message, else the keys alone. */
		statusbar_draw_keys_first(r, sb.buf, hints_g, textsan_width(sb.buf) + 1);
	} else
		statusbar_draw(r, sb.buf,
			       a->replay ? hints_replay
			       : a->view->state == VR_FINISHED ? hints_end
							       : hints_run);
	strbuf_release(&sb);
}

static void draw_confirm(struct app *a)
{
	int w = textsan_width(a->question) + 6, rows;
	struct rect r, in;

	/* A question wider than the screen wraps: the dialog keeps to the screen. */
	if (w > COLS - 2)
		w = COLS - 2;
	if (w < 30)
		w = 30;
	rows = textview_rows(a->question, w - 6);
	r = modal_rect(LINES - 1, COLS, rows + 4, w);
	in = modal_draw(r, "Confirm",
			a->on_yes == do_quit ? "y yes  Q detach  any other key no"
					     : "y yes  any other key no");
	textview_draw(in.y + 1, in.x + 2, in.w - 4, in.h - 1, 0, a->question, THEME_DIALOG);
}

/* In a replay the clock is the time of the last event shown. */
static double replay_now(const struct app *a)
{
	double t = 0;

	if (a->pos > 0) {
		const char *p = strstr(a->events[a->pos - 1]->json, "\"ts\":\"");

		t = p ? fold_parse_ts(p + 6) : 0;
	}
	return t;
}

static void draw(struct app *a)
{
	struct layout l;

	a->ps.now = a->replay ? replay_now(a) : now_s();
	erase();
	if (a->mode == MODE_DRILL && a->drill) {
		/* The whole screen; the footer names the gates that wait meanwhile. */
		curs_set(0);
		drill_screen_draw(a->drill, LINES, COLS, gates_waiting(a));
		refresh();
		a->dirty = false;
		return;
	}
	/* The cursor shows only where text is typed (a form's caret, the search line), which
	 * draws it below; turning it off and on each frame would make it flicker. */
	if (a->mode != MODE_FORM && a->mode != MODE_SEARCH)
		curs_set(0);
	layout_compute(&l, LINES, COLS, a->ps.focus, a->ps.zoom);
	a->layout = l;
	panes_draw(a->view, &a->ps, &l);
	if (l.status.h > 0)
		draw_status(a, l.status);
	if (gate_shown(a) && a->mode != MODE_FORM)
		a->gate_more = gate_dialog_draw(head_gate(a), gate_pos(a), gates_waiting(a), LINES,
						COLS, &a->gate_scroll, a->replay);
	switch (a->mode) {
	case MODE_GATES: {
		struct gate_waiting w = waiting(a);
		struct vgate *shown = gate_shown(a) ? head_gate(a) : NULL;

		gate_list_draw(&w, &a->gate_sel, shown ? shown->id : 0, LINES, COLS);
		break;
	}
	case MODE_CONFIRM: draw_confirm(a); break;
	case MODE_HELP: help_draw(help_pairs(a->replay), LINES, COLS, &a->help_scroll); break;
	case MODE_FORM:
		if (a->form)
			form_draw(a->form, LINES, COLS);
		break;
	default: break;
	}
	if (a->mode == MODE_SEARCH)
		draw_status(a, l.status);
	refresh();
	a->dirty = false;
}

/* ---- loop ---- */

static void resize(struct app *a)
{
	struct winsize ws;

	winch_pending = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
	clearok(stdscr, TRUE);
	a->dirty = true;
}

static void drain_events(struct app *a)
{
	struct event **q;
	size_t n;
	unsigned long dropped;

	if (pthread_mutex_lock(&a->lock))
		fatal("app: cannot lock the event queue");
	q = a->q;
	n = a->qn;
	dropped = a->qdropped;
	a->q = NULL;
	a->qn = a->qcap = 0;
	a->qdelta_bytes = 0;
	a->qdropped = 0;
	pthread_mutex_unlock(&a->lock);
	if (dropped)
		set_message(a, "%lu streamed chunks not drawn while the screen was busy; the "
			       "results show in full",
			    dropped);
	for (size_t i = 0; i < n; i++) {
		/* Whatever the journal held before the engine started is on screen already. */
		if (!q[i]->seq || q[i]->seq > a->preload_seq) {
			view_apply(a->view, q[i]);
			alert_event(a->notify, q[i]);
		}
		event_free(q[i]);
	}
	free(q);
	if (n) {
		prune_answered(a);
		follow_running(a);
		if (a->view->n_gates == 0)
			a->gate_hidden = false;
		if (a->view->state == VR_FINISHED ||
		    (a->expect_paused >= 0 && a->view->rs.paused == (a->expect_paused == 1)))
			a->expect_paused = -1;
		a->dirty = true;
	}
}

/* Waits for a key, an event or a resize, or `timeout` ms (-1: no timeout) for a spinner
 * frame or a replay event. */
static void wait_input(struct app *a, int timeout)
{
	struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {a->wake[0], POLLIN, 0}};
	char buf[256];
	int r;

	pthread_sigmask(SIG_UNBLOCK, &winch_set, NULL);
	r = poll(fds, 2, timeout);
	pthread_sigmask(SIG_BLOCK, &winch_set, NULL);
	if (r == 0) {
		if (timeout == TICK_MS)
			a->ps.spin++;
		a->dirty = true;
		return;
	}
	if (r < 0)
		return; /* EINTR: a signal; the pipe says which */
	if (fds[1].revents & POLLIN) {
		while (read(a->wake[0], buf, sizeof(buf)) > 0)
			;
	}
	if (winch_pending)
		resize(a);
	/* The terminal went away: a signal, or a hangup seen on the keyboard first. */
	if (hup_pending || (fds[0].revents & POLLHUP)) {
		hup_pending = 0;
		a->detached = true;
		a->quit = true;
		return;
	}
	if (fds[0].revents & (POLLIN | POLLHUP | POLLERR))
		read_keys(a);
}

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* The theme of --theme or [ui] theme: from $PEVTUI_THEMES, the source tree when this
 * program runs from its build tree, or where it is installed. */
static struct theme *load_theme(const struct settings *s, char **err)
{
	struct strvec dirs = STRVEC_INIT;
	struct theme *t;

	theme_dirs(NULL, PEVTUI_BUILDDIR, PEVTUI_SRCDIR, PKGDATADIR "/themes", &dirs);
	t = theme_find(s && s->theme ? s->theme : "default", (const char *const *)dirs.v, dirs.n,
		       err);
	strvec_clear(&dirs);
	return t;
}

struct app *app_new(const struct settings *s, struct bus *bus, struct gatekeeper *gates,
		    char **err)
{
	struct app *a;
	struct theme *t;
	struct sigaction sa;
	SCREEN *scr;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		*err = xstrdup("the cockpit needs a terminal; use --headless for pipes and scripts");
		return NULL;
	}
	/* Before the screen is taken: a theme asked for and not found stops here, saying
	 * where it was looked for. */
	t = load_theme(s, err);
	if (!t)
		return NULL;
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		const char *term = getenv("TERM");

		theme_free(t);

		*err = xasprintf("cannot use the terminal \"%s\"; try TERM=xterm-256color or "
				 "--headless", term ? term : "");
		return NULL;
	}
	set_term(scr);
	a = xcalloc(1, sizeof(*a));
	a->s = s;
	a->bus = bus;
	a->gates = gates;
	a->screen = scr;
	a->view = view_new();
	strbuf_init(&a->search);
	panes_init(&a->ps);
	if (pthread_mutex_init(&a->lock, NULL))
		fatal("app: cannot create a mutex");
	if (pipe(a->wake))
		fatal("app: cannot create a pipe: %s", strerror(errno));
	set_nonblock(a->wake[0]);
	set_nonblock(a->wake[1]);

	raw(); /* ^S, ^C and ^Z reach the keys table (no flow control, no signals) */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	theme_activate(t);
	theme_free(t);

	winch_fd = a->wake[1];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	/* Threads started from now on (the engine) inherit SIGWINCH blocked, so the signal
	 * always lands in this thread; wait_input unblocks it around poll(). */
	sigemptyset(&winch_set);
	sigaddset(&winch_set, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &winch_set, NULL);

	/* Clicks and the wheel, unless [ui] mouse = off or --no-mouse leave the mouse to the
	 * terminal (selecting text). SGR reports where the terminal can send them. */
	mouse_start(!s || s->mouse);
	/* Every event, llm.delta included: the step log streams. NULL in --replay. */
	if (bus)
		bus_subscribe_all(bus, on_event, a);
	a->auto_select = true;
	a->expect_paused = -1;
	a->speed = DEFAULT_SPEED;
	a->dirty = true;
	return a;
}

char *app_prompt_task(struct app *a)
{
	struct form *f = form_new("What should the agents do?", "Enter start  Esc cancel");

	form_add(f, "Task", "");
	open_form(a, f, FORM_TASK, NULL, NULL, 0);
	a->form_done = false;
	free(a->form_result);
	a->form_result = NULL;
	while (!a->form_done) {
		if (a->dirty)
			draw(a);
		wait_input(a, -1);
	}
	return a->form_result && *a->form_result ? xstrdup(a->form_result) : NULL;
}

/* While a gate of a live run waits and nothing else moves, the status line's clock ticks
 * once a second, at the run time's next whole second (issue 29: it stood still at
 * "waiting for you · 5.7s"). -1 otherwise: a screen with nothing waiting or running
 * has no timer at all. */
static int clock_timeout(struct app *a)
{
	double el;

	if (a->replay || !run_live(a) || a->mode == MODE_FORM || !gates_waiting(a))
		return -1;
	el = view_elapsed(a->view, now_s());
	return 1000 - (int)((el - (double)(long)el) * 1000.0) + 5;
}

/* `timeout`, or sooner when the status line's message is due to go. */
static int message_timeout(struct app *a, int timeout)
{
	double left;
	int ms;

	if (!a->message || a->replay)
		return timeout;
	left = a->message_at + MESSAGE_S - now_s();
	if (left <= 0) {
		/* Gone now; the wait returns at once so the screen shows it gone. */
		free(a->message);
		a->message = NULL;
		a->dirty = true;
		return 0;
	}
	ms = (int)(left * 1000.0) + 5;
	return timeout < 0 || ms < timeout ? ms : timeout;
}

void app_run(struct app *a, struct pev *e)
{
	a->engine = e;
	a->quit = false;
	while (!a->quit) {
		int timeout;

		drain_events(a);
		replay_tick(a);
		if (a->dirty)
			draw(a);
		if (a->quit)
			break;
		/* No timer wakes an idle screen: only a moving spinner, a clock while a gate
		 * waits, or a playing replay. */
		if (a->replay)
			timeout = replay_timeout(a);
		else if (view_busy(a->view) && a->mode != MODE_FORM)
			timeout = TICK_MS;
		else
			timeout = clock_timeout(a);
		timeout = message_timeout(a, timeout);
		wait_input(a, timeout);
	}
	/* Events still queued (the engine ending) are dropped with the app. */
}

void app_free(struct app *a)
{
	struct sigaction sa;

	if (!a)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGWINCH, &sa, NULL);
	pthread_sigmask(SIG_UNBLOCK, &winch_set, NULL);
	winch_fd = -1;
	endwin();
	mouse_suspend(); /* the shell gets back the terminal's plain mouse reports */
	delscreen(a->screen);
	/* A detached run goes on publishing: nothing more comes here. */
	if (a->bus)
		bus_unsubscribe(a->bus, on_event, a);
	for (size_t i = 0; i < a->qn; i++)
		event_free(a->q[i]);
	free(a->q);
	for (size_t i = 0; i < a->n_events; i++)
		event_free(a->events[i]);
	free(a->events);
	pthread_mutex_destroy(&a->lock);
	close(a->wake[0]);
	close(a->wake[1]);
	view_free(a->view);
	form_free(a->form);
	free(a->form_json);
	free(a->form_step_id);
	free(a->form_result);
	free(a->rerun_id);
	free(a->rewind_json);
	free(a->question);
	free(a->message);
	free(a->answered);
	strbuf_release(&a->search);
	drill_screen_free(a->drill);
	requests_index_free(a->requests);
	free(a->run_dir);
	free(a);
}

static bool preload_visit(void *ctx, const struct event *ev)
{
	struct app *a = ctx;

	view_apply(a->view, ev);
	if (ev->seq > a->preload_seq)
		a->preload_seq = ev->seq;
	return true;
}

void app_set_notify(struct app *a, struct notify *n)
{
	a->notify = n;
}

void app_set_run_dir(struct app *a, const char *run_dir)
{
	requests_index_free(a->requests);
	a->requests = NULL;
	free(a->run_dir);
	a->run_dir = xstrdup(run_dir);
}

bool app_detached(const struct app *a)
{
	return a->detached;
}

void app_set_attached(struct app *a)
{
	a->attached = true;
}

unsigned long app_preload_live(struct app *a, const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	struct journal_load_info info = {0};

	if (!journal_load(path, preload_visit, a, &info, &err)) {
		set_message(a, "the journal could not be shown: %s", err ? err : "unreadable");
		free(err);
	}
	free(path);
	/* Its open gates are open: the live engine asks them (unlike a resumed one). */
	follow_running(a);
	a->dirty = true;
	return a->preload_seq;
}

void app_preload(struct app *a, const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	struct journal_load_info info = {0};

	if (!journal_load(path, preload_visit, a, &info, &err)) {
		set_message(a, "the journal could not be shown: %s", err ? err : "unreadable");
		free(err);
	}
	free(path);
	view_forget_gates(a->view);
	follow_running(a);
	/* --resume of a finished run: it waits at its end for what reopens it. */
	if (a->view->state == VR_FINISHED)
		set_message(a, "r (re-run) or e (edit) reopens the run");
	a->dirty = true;
}

struct loaded {
	struct event **v;
	size_t n, cap;
};

static bool collect(void *ctx, const struct event *ev)
{
	struct loaded *l = ctx;

	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = event_dup(ev);
	return true;
}

int app_replay(const struct settings *s, const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir), *err = NULL;
	struct journal_load_info info;
	struct loaded l = {NULL, 0, 0};
	struct app *a;

	if (!journal_load(path, collect, &l, &info, &err)) {
		fprintf(stderr, "pevtui: cannot replay %s: %s\n", path, err ? err : "unreadable");
		for (size_t i = 0; i < l.n; i++)
			event_free(l.v[i]);
		free(l.v);
		free(err);
		free(path);
		return 1;
	}
	free(path);
	a = app_new(s, NULL, NULL, &err);
	if (!a) {
		fprintf(stderr, "pevtui: %s\n", err);
		free(err);
		for (size_t i = 0; i < l.n; i++)
			event_free(l.v[i]);
		free(l.v);
		return 1;
	}
	a->replay = true;
	a->run_dir = xstrdup(run_dir);
	a->events = l.v;
	a->n_events = l.n;
	a->cap_events = l.cap;
	/* Open at the end of the run; , and < go back in time. */
	replay_seek(a, a->n_events);
	follow_running(a);
	if (info.torn_tail)
		set_message(a, "the journal's last line was cut off and is left out");
	app_run(a, NULL);
	app_free(a);
	return 0;
}
