/*
 * headless — readable progress lines (or JSON lines) from the run's events. The bus
 * subscriber folds each event (from the object the bus built, never parsing its text)
 * and puts the lines it makes into a bounded queue; a printer thread writes them, so a
 * reader of stdout that is slow (or stopped) never holds up the engine.
 */
#include "config.h"

#include "headless.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "provider.h"
#include "fold.h"
#include "journal.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* What one event prints: its lines, newlines included. */
struct qitem {
	struct qitem *next;
	size_t len;
	char text[];
};

struct headless {
	FILE *out;
	bool json;

	/* The fold, and the lines made from it, one event at a time (the bus subscriber,
	 * headless_print or headless_fold_journal). Never held while writing to `out`. */
	pthread_mutex_t fold_lock;
	struct run_state rs;
	unsigned long folded_seq; /* journaled events up to here are in rs already */

	/* One writer to `out` at a time (the printer thread, or headless_print). */
	pthread_mutex_t print_lock;

	/* The queue between the bus (any publishing thread) and the printer thread. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct qitem *head, *tail;
	size_t n, bytes;
	unsigned long dropped; /* events whose lines were not queued: said once, at the end */
	bool stop;
	pthread_t thread;
};

/* ---- the lines of one event (fold_lock held) ---- */

/* Model text is untrusted: nothing it holds may drive the terminal. */
static char *clean(const char *s, bool keep_nl)
{
	if (!s)
		return xstrdup("");
	return textsan_clean(s, strlen(s), keep_nl ? TEXTSAN_KEEP_NL : 0);
}

static const char *str(const cJSON *o, const char *k)
{
	const char *s = jsonx_str(o, k);

	return s ? s : "";
}

static int num(const cJSON *o, const char *k)
{
	double d = 0;

	if (!jsonx_num(o, k, &d) || d < -1e9 || d > 1e9)
		return 0;
	return (int)d;
}

static void line(struct strbuf *sb, const char *sid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One line into sb: "[STEP] " when sid names a step, then the message, both cleaned. */
static void line(struct strbuf *sb, const char *sid, const char *fmt, ...)
{
	va_list ap;
	char *msg, *c;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	c = clean(msg, true);
	if (sid && *sid) {
		char *s = clean(sid, false);

		strbuf_addc(sb, '[');
		strbuf_adds(sb, s);
		strbuf_adds(sb, "] ");
		free(s);
	}
	strbuf_adds(sb, c);
	strbuf_addc(sb, '\n');
	free(c);
	free(msg);
}

/* The one line that says the queue overflowed; the journal still has every event. */
static void print_dropped(struct headless *h, unsigned long n)
{
	char *msg = xasprintf("%lu event%s not printed: the reader of stdout is too slow; the "
			      "journal has them all",
			      n, n == 1 ? "" : "s");

	if (h->json) {
		cJSON *o = cJSON_CreateObject();
		char ts[40], *text;

		event_timestamp(ts, sizeof(ts));
		cJSON_AddNumberToObject(o, "seq", 0);
		cJSON_AddStringToObject(o, "ts", ts);
		cJSON_AddStringToObject(o, "type", "notice");
		cJSON_AddStringToObject(o, "level", "warn");
		cJSON_AddStringToObject(o, "kind", "events_dropped");
		cJSON_AddNumberToObject(o, "dropped", (double)n);
		cJSON_AddStringToObject(o, "message", msg);
		text = jsonx_print(o);
		fprintf(h->out, "%s\n", text);
		fflush(h->out);
		free(text);
		cJSON_Delete(o);
	} else {
		struct strbuf sb;

		strbuf_init(&sb);
		line(&sb, NULL, "pevtui: %s", msg);
		fputs(sb.buf, h->out);
		strbuf_release(&sb);
	}
	free(msg);
}

/* The step's name as the plan has it now, else the event's own. */
static const char *step_name(const struct headless *h, const char *sid, const cJSON *o)
{
	int i = fold_find_step(&h->rs, sid);

	if (i >= 0 && h->rs.steps[i].name)
		return h->rs.steps[i].name;
	return str(o, "name");
}

static void print_verdict(struct headless *h, struct strbuf *sb, const char *sid)
{
	const struct fverdict *v = &h->rs.verdicts[h->rs.n_verdicts - 1];
	struct strvec failing = STRVEC_INIT, unjudged = STRVEC_INIT;
	const char *action = v->action ? v->action : "";

	for (size_t i = 0; i < v->n_criteria; i++) {
		const char *c = v->criteria[i].text ? v->criteria[i].text : "";

		if (v->criteria[i].not_judged)
			strvec_pushf(&unjudged, "\"%s\"", c);
		else if (!v->criteria[i].passed)
			strvec_pushf(&failing, "\"%s\"", c);
	}
	if (!strcmp(action, "pass")) {
		line(sb, sid, "  verdict (%s, attempt %d): pass", v->stage ? v->stage : "",
		     v->attempt);
	} else {
		char *f = strvec_join(&failing, ", ");

		line(sb, sid, "  verdict (%s, attempt %d): %s, %s%s%s", v->stage ? v->stage : "",
		     v->attempt, action, v->severity ? v->severity : "",
		     failing.n ? " — failing: " : "", f);
		line(sb, sid, "  critique: %s", v->feedback ? v->feedback : "");
		free(f);
	}
	if (unjudged.n) {
		char *u = strvec_join(&unjudged, ", ");

		line(sb, sid, "  not judged: %s", u);
		free(u);
	}
	strvec_clear(&failing);
	strvec_clear(&unjudged);
}

static void print_final(struct strbuf *sb, const cJSON *o)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metrics");
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(m, "cost_usd");
	double total = 0;
	bool known = true;

	jsonx_num(cost, "total", &total);
	jsonx_bool(m, "cost_known", &known);
	line(sb, NULL, "answer:\n%s", str(o, "answer"));
	line(sb, NULL,
	     "metrics: %d/%d steps passed, %d fail-accepted, %d skipped, %d attempt%s, %d "
	     "replan%s, cost $%.4f%s",
	     num(m, "steps_passed"), num(m, "steps_total"), num(m, "steps_fail_accepted"),
	     num(m, "steps_skipped"), num(m, "total_attempts"),
	     num(m, "total_attempts") == 1 ? "" : "s", num(m, "replans"),
	     num(m, "replans") == 1 ? "" : "s", total,
	     known ? "" : " + unknown (a model's price is not in the table)");
}

static void print_plan_proposed(struct strbuf *sb, const cJSON *o)
{
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan");
	const cJSON *steps = cJSON_GetObjectItemCaseSensitive(plan, "steps"), *s;
	double est = 0;
	char *e = jsonx_num(o, "estimate_usd", &est) ? xasprintf("$%.4f", est) : xstrdup("unknown");

	line(sb, NULL, "plan revision %d (%s): %d steps, estimated cost %s — goal: %s",
	     num(o, "revision"), str(o, "reason"),
	     cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0, e, str(plan, "goal"));
	free(e);
	if (!cJSON_IsArray(steps))
		return;
	cJSON_ArrayForEach(s, steps)
	{
		char *d = jsonx_print(cJSON_GetObjectItemCaseSensitive(s, "dependencies"));

		line(sb, NULL, "  %s  %s  [%s] deps %s", str(s, "step_id"), str(s, "name"),
		     str(s, "estimated_complexity"), d);
		free(d);
	}
}

/* Folds `ev` (its object `o`), then puts the lines it says into sb. Text mode. */
static void render_event(struct headless *h, const struct event *ev, const cJSON *o,
			 struct strbuf *sb)
{
	const char *sid = ev->step_id;
	bool unknown, folded = !ev->seq || ev->seq > h->folded_seq;
	double spent;

	if (folded)
		fold_apply_json(&h->rs, (int)ev->type, o);
	switch (ev->type) {
	case EV_RUN_START:
		line(sb, NULL, "run %s — provider %s%s — planner %s, executor %s, verifier %s",
		     str(o, "run_id"), str(o, "provider"), h->rs.simulated ? " (simulated)" : "",
		     h->rs.models[0] ? h->rs.models[0] : "", h->rs.models[1] ? h->rs.models[1] : "",
		     h->rs.models[2] ? h->rs.models[2] : "");
		line(sb, NULL, "task: %s", str(o, "task"));
		break;
	case EV_RUN_RESUME: line(sb, NULL, "run resumed from its journal"); break;
	case EV_RUN_REOPEN: line(sb, NULL, "run reopened (%s)", str(o, "reason")); break;
	case EV_PLAN_PROPOSED: print_plan_proposed(sb, o); break;
	case EV_PLAN_ADOPTED: {
		const cJSON *kept = cJSON_GetObjectItemCaseSensitive(o, "kept");
		char *k = jsonx_print(kept);
		bool any = cJSON_IsArray(kept) && cJSON_GetArraySize(kept) > 0;

		line(sb, NULL, "plan revision %d adopted%s%s", num(o, "revision"),
		     any ? ", keeping passed steps " : "", any ? k : "");
		free(k);
		break;
	}
	case EV_GATE_OPEN: line(sb, sid, "gate %s opened", str(o, "gate")); break;
	case EV_GATE_DECISION:
		line(sb, sid, "gate %s: %s (by %s)%s%s", str(o, "gate"),
		     gate_decision_word(str(o, "gate"), str(o, "decision")),
		     str(o, "by"), jsonx_str(o, "reason") ? " — " : "", str(o, "reason"));
		break;
	case EV_STEP_START:
		line(sb, sid, "attempt %d: %s", num(o, "attempt"), step_name(h, sid, o));
		break;
	case EV_STEP_STATE:
		line(sb, sid, "%s%s%s", str(o, "state"), jsonx_str(o, "reason") ? " — " : "",
		     str(o, "reason"));
		break;
	case EV_OPERATOR_COMMAND:
		line(sb, sid, "operator: %s", str(o, "command"));
		break;
	case EV_TOOL_CALL: {
		char *p = jsonx_print(cJSON_GetObjectItemCaseSensitive(o, "params"));
		if (strlen(p) > 120)
			strcpy(p + 117, "...");
		line(sb, sid, "  tool %s %s", str(o, "tool"), p);
		free(p);
		break;
	}
	case EV_TOOL_RESULT: {
		bool ok = false;
		jsonx_bool(o, "ok", &ok);
		if (!ok)
			line(sb, sid, "  tool %s returned an error: %s", str(o, "tool"),
			     str(o, "summary"));
		break;
	}
	case EV_STEP_CHANGES: {
		char *sum = event_changes_summary(o, 5);

		line(sb, sid, "  %s", sum);
		free(sum);
		break;
	}
	case EV_VERIFY_VERDICT:
		if (folded && h->rs.n_verdicts)
			print_verdict(h, sb, sid);
		break;
	case EV_STEP_END: {
		bool reused = false;

		jsonx_bool(o, "reused", &reused);
		spent = fold_total_usd(&h->rs, &unknown);
		line(sb, sid, "%s after %d attempt%s%s — cost so far $%.4f%s", str(o, "status"),
		     num(o, "attempts"), num(o, "attempts") == 1 ? "" : "s",
		     reused ? " (reused an identical step's result)" : "", spent,
		     unknown ? " + unknown" : "");
		break;
	}
	case EV_STEP_EDIT: line(sb, sid, "step edited by %s", str(o, "by")); break;
	case EV_LLM_CALL:
		if (!strcmp(str(o, "status"), "error"))
			line(sb, sid, "  %s call failed: %s", str(o, "role"), str(o, "error"));
		else if (llm_stop_notable(jsonx_str(o, "stop_reason")))
			line(sb, sid, "  %s answer %s (stop reason \"%s\")", str(o, "role"),
			     llm_stop_is_cutoff(str(o, "stop_reason")) ? "cut off at the token limit"
								     : "stopped by the server",
			     str(o, "stop_reason"));
		break;
	case EV_LLM_RETRY:
		line(sb, sid, "  %s: HTTP %d — retrying in %.1f s (%d/%d): %s", str(o, "role"),
		     num(o, "http_status"), num(o, "wait_ms") / 1000.0, num(o, "attempt"),
		     num(o, "max"), str(o, "reason"));
		break;
	case EV_NOTICE: {
		bool info = !strcmp(str(o, "level"), "info");
		line(sb, sid, "%s%s%s", info ? "" : str(o, "level"), info ? "" : ": ",
		     str(o, "message"));
		break;
	}
	case EV_RUN_FINAL: print_final(sb, o); break;
	case EV_RUN_END:
		line(sb, NULL, "run %s (exit %d)%s%s", str(o, "status"), num(o, "exit_code"),
		     jsonx_str(o, "reason") ? ": " : "", str(o, "reason"));
		break;
	default: break;
	}
}

static void lock(pthread_mutex_t *m, const char *what)
{
	if (pthread_mutex_lock(m))
		fatal("headless: cannot lock the %s", what);
}

/* The lines `ev` prints into sb: its own line in JSON mode (nothing for a streaming
 * event), else what render_event makes of its object `o` (parsed here when NULL). */
static void lines_of(struct headless *h, const struct event *ev, const cJSON *o,
		     struct strbuf *sb)
{
	cJSON *parsed = NULL;

	if (event_type_is_ephemeral(ev->type))
		return;
	if (h->json) {
		strbuf_adds(sb, ev->json);
		strbuf_addc(sb, '\n');
		return;
	}
	if (!o)
		o = parsed = cJSON_Parse(ev->json);
	if (!o)
		return;
	lock(&h->fold_lock, "fold");
	render_event(h, ev, o, sb);
	pthread_mutex_unlock(&h->fold_lock);
	cJSON_Delete(parsed);
}

void headless_print(struct headless *h, const struct event *ev)
{
	struct strbuf sb;

	strbuf_init(&sb);
	lines_of(h, ev, NULL, &sb);
	lock(&h->print_lock, "printer");
	fwrite(sb.buf, 1, sb.len, h->out);
	fflush(h->out);
	pthread_mutex_unlock(&h->print_lock);
	strbuf_release(&sb);
}

static bool fold_visit(void *ctx, const struct event *ev)
{
	struct headless *h = ctx;

	fold_apply(&h->rs, ev);
	if (ev->seq > h->folded_seq)
		h->folded_seq = ev->seq;
	return true;
}

bool headless_fold_journal(struct headless *h, const char *run_dir, char **err)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	struct journal_load_info info = {0};
	bool ok;

	lock(&h->fold_lock, "fold");
	ok = journal_load(path, fold_visit, h, &info, err);
	pthread_mutex_unlock(&h->fold_lock);
	free(path);
	return ok;
}

/* ---- the queue and its printer thread ---- */

static void qlock(struct headless *h)
{
	if (pthread_mutex_lock(&h->lock))
		fatal("headless: cannot lock the queue");
}

/* Queues the lines of one event for the printer, within the bound; the end of a run
 * (what a reader waits for) whatever the bound. */
static void enqueue(struct headless *h, enum event_type type, const struct strbuf *sb)
{
	bool keep = type == EV_RUN_FINAL || type == EV_RUN_END;
	struct qitem *it;

	qlock(h);
	if (!keep && (h->n >= HEADLESS_QUEUE_EVENTS || h->bytes + sb->len > HEADLESS_QUEUE_BYTES)) {
		h->dropped++;
		pthread_mutex_unlock(&h->lock);
		return;
	}
	it = xmalloc(sizeof(*it) + sb->len);
	it->next = NULL;
	it->len = sb->len;
	memcpy(it->text, sb->buf, sb->len);
	/* The printer waits only on an empty queue, and empties it before it waits again:
	 * the first event of a burst wakes it, the rest of the burst need not. */
	if (!h->head)
		pthread_cond_signal(&h->cond);
	if (h->tail)
		h->tail->next = it;
	else
		h->head = it;
	h->tail = it;
	h->n++;
	h->bytes += sb->len;
	pthread_mutex_unlock(&h->lock);
}

void headless_on_tree(void *ctx, const struct event *ev, const cJSON *line)
{
	struct headless *h = ctx;
	struct strbuf sb;

	strbuf_init(&sb);
	lines_of(h, ev, line, &sb);
	if (sb.len)
		enqueue(h, ev->type, &sb);
	strbuf_release(&sb);
}

void headless_on_event(void *ctx, const struct event *ev)
{
	headless_on_tree(ctx, ev, NULL);
}

static void *printer(void *arg)
{
	struct headless *h = arg;
	unsigned long left;

	qlock(h);
	for (;;) {
		struct qitem *it;

		while (!h->head && !h->stop)
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->head)
			break; /* stopping, and everything queued is printed */
		it = h->head;
		h->head = it->next;
		if (!h->head)
			h->tail = NULL;
		h->n--;
		h->bytes -= it->len;
		/* Printing may wait on the reader: never with the queue locked. */
		pthread_mutex_unlock(&h->lock);
		lock(&h->print_lock, "printer");
		fwrite(it->text, 1, it->len, h->out);
		pthread_mutex_unlock(&h->print_lock);
		free(it);
		qlock(h);
		/* Lines go out when the queue is empty: one write for a burst of events,
		 * and nothing held back while the printer waits for more. */
		if (!h->head) {
			pthread_mutex_unlock(&h->lock);
			lock(&h->print_lock, "printer");
			fflush(h->out);
			pthread_mutex_unlock(&h->print_lock);
			qlock(h);
		}
	}
	/* One line for all of them, after the last event printed. */
	left = h->dropped;
	h->dropped = 0;
	pthread_mutex_unlock(&h->lock);
	if (left) {
		lock(&h->print_lock, "printer");
		print_dropped(h, left);
		pthread_mutex_unlock(&h->print_lock);
	}
	return NULL;
}

struct headless *headless_new(FILE *out, bool json)
{
	struct headless *h = xcalloc(1, sizeof(*h));
	sigset_t all, old;

	h->out = out;
	h->json = json;
	fold_init(&h->rs);
	if (pthread_mutex_init(&h->lock, NULL) || pthread_mutex_init(&h->print_lock, NULL) ||
	    pthread_mutex_init(&h->fold_lock, NULL) || pthread_cond_init(&h->cond, NULL))
		fatal("headless: cannot create a lock");
	/* Signals are for the threads that wait for them, never for the printer. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&h->thread, NULL, printer, h))
		fatal("headless: cannot start the printer thread");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return h;
}

void headless_free(struct headless *h)
{
	if (!h)
		return;
	qlock(h);
	h->stop = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->print_lock);
	pthread_mutex_destroy(&h->fold_lock);
	fold_release(&h->rs);
	free(h);
}
