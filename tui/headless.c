/* headless — readable progress lines (or JSON lines) from the run's events. */
#include "config.h"

#include "headless.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "jsonx.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

struct headless {
	FILE *out;
	bool json;
	double cost;        /* spent so far, known prices only */
	bool cost_unknown;  /* some call had no known price */
};

struct headless *headless_new(FILE *out, bool json)
{
	struct headless *h = xcalloc(1, sizeof(*h));

	h->out = out;
	h->json = json;
	return h;
}

void headless_free(struct headless *h)
{
	free(h);
}

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

	jsonx_num(o, k, &d);
	return (int)d;
}

static void line(struct headless *h, const char *sid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(struct headless *h, const char *sid, const char *fmt, ...)
{
	va_list ap;
	char *msg, *c;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	c = clean(msg, true);
	if (sid && *sid) {
		char *s = clean(sid, false);
		fprintf(h->out, "[%s] %s\n", s, c);
		free(s);
	} else {
		fprintf(h->out, "%s\n", c);
	}
	fflush(h->out);
	free(c);
	free(msg);
}

static void print_verdict(struct headless *h, const char *sid, const cJSON *o)
{
	const cJSON *crit = cJSON_GetObjectItemCaseSensitive(o, "criteria"), *c;
	const char *action = str(o, "action");
	struct strvec failing = STRVEC_INIT;

	cJSON_ArrayForEach(c, crit)
	{
		bool passed = true;
		jsonx_bool(c, "passed", &passed);
		if (!passed)
			strvec_pushf(&failing, "\"%s\"", str(c, "criterion"));
	}
	if (!strcmp(action, "pass")) {
		line(h, sid, "  verdict (%s, attempt %d): pass", str(o, "stage"), num(o, "attempt"));
	} else {
		char *f = strvec_join(&failing, ", ");
		line(h, sid, "  verdict (%s, attempt %d): %s, %s%s%s", str(o, "stage"),
		     num(o, "attempt"), action, str(o, "severity"), failing.n ? " — failing: " : "",
		     f);
		line(h, sid, "  critique: %s", str(o, "feedback"));
		free(f);
	}
	strvec_clear(&failing);
}

static void print_final(struct headless *h, const cJSON *o)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metrics");
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(m, "cost_usd");
	double total = 0;
	bool known = true;

	jsonx_num(cost, "total", &total);
	jsonx_bool(m, "cost_known", &known);
	line(h, NULL, "answer:\n%s", str(o, "answer"));
	line(h, NULL,
	     "metrics: %d/%d steps passed, %d fail-accepted, %d skipped, %d attempts, %d "
	     "replans, cost $%.4f%s",
	     num(m, "steps_passed"), num(m, "steps_total"), num(m, "steps_fail_accepted"),
	     num(m, "steps_skipped"), num(m, "total_attempts"), num(m, "replans"), total,
	     known ? "" : " + unknown (a model's price is not in the table)");
}

void headless_print(struct headless *h, const struct event *ev)
{
	cJSON *o;
	const char *sid = ev->step_id;

	if (h->json) {
		if (!event_type_is_ephemeral(ev->type)) {
			fprintf(h->out, "%s\n", ev->json);
			fflush(h->out);
		}
		return;
	}
	o = cJSON_Parse(ev->json);
	if (!o)
		return;
	switch (ev->type) {
	case EV_RUN_START: {
		const cJSON *models = cJSON_GetObjectItemCaseSensitive(o, "models");
		bool sim = false;
		jsonx_bool(o, "simulated", &sim);
		line(h, NULL, "run %s — provider %s%s — planner %s, executor %s, verifier %s",
		     str(o, "run_id"), str(o, "provider"), sim ? " (simulated)" : "",
		     str(models, "planner"), str(models, "executor"), str(models, "verifier"));
		line(h, NULL, "task: %s", str(o, "task"));
		break;
	}
	case EV_PLAN_PROPOSED: {
		const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan");
		const cJSON *steps = cJSON_GetObjectItemCaseSensitive(plan, "steps"), *s;
		double est = 0;
		char *e = jsonx_num(o, "estimate_usd", &est) ? xasprintf("$%.4f", est)
							     : xstrdup("unknown");
		line(h, NULL, "plan revision %d (%s): %d steps, estimated cost %s — goal: %s",
		     num(o, "revision"), str(o, "reason"), cJSON_GetArraySize(steps), e,
		     str(plan, "goal"));
		free(e);
		cJSON_ArrayForEach(s, steps)
		{
			const cJSON *deps = cJSON_GetObjectItemCaseSensitive(s, "dependencies");
			char *d = jsonx_print(deps);
			line(h, NULL, "  %s  %s  [%s] deps %s", str(s, "step_id"), str(s, "name"),
			     str(s, "estimated_complexity"), d);
			free(d);
		}
		break;
	}
	case EV_PLAN_ADOPTED: {
		const cJSON *kept = cJSON_GetObjectItemCaseSensitive(o, "kept");
		char *k = jsonx_print(kept);
		line(h, NULL, "plan revision %d adopted%s%s", num(o, "revision"),
		     cJSON_GetArraySize(kept) ? ", keeping passed steps " : "",
		     cJSON_GetArraySize(kept) ? k : "");
		free(k);
		break;
	}
	case EV_GATE_OPEN:
		line(h, sid, "gate %s opened", str(o, "gate"));
		break;
	case EV_GATE_DECISION:
		line(h, sid, "gate %s: %s (by %s)%s%s", str(o, "gate"), str(o, "decision"),
		     str(o, "by"), jsonx_str(o, "reason") ? " — " : "", str(o, "reason"));
		break;
	case EV_STEP_START:
		line(h, sid, "attempt %d: %s", num(o, "attempt"), str(o, "name"));
		break;
	case EV_TOOL_CALL: {
		char *p = jsonx_print(cJSON_GetObjectItemCaseSensitive(o, "params"));
		if (strlen(p) > 120)
			strcpy(p + 117, "...");
		line(h, sid, "  tool %s %s", str(o, "tool"), p);
		free(p);
		break;
	}
	case EV_TOOL_RESULT: {
		bool ok = false;
		jsonx_bool(o, "ok", &ok);
		if (!ok)
			line(h, sid, "  tool %s returned an error: %s", str(o, "tool"),
			     str(o, "summary"));
		break;
	}
	case EV_VERIFY_VERDICT:
		print_verdict(h, sid, o);
		break;
	case EV_STEP_END: {
		bool reused = false;
		jsonx_bool(o, "reused", &reused);
		line(h, sid, "%s after %d attempt%s%s — cost so far $%.4f%s", str(o, "status"),
		     num(o, "attempts"), num(o, "attempts") == 1 ? "" : "s",
		     reused ? " (reused an identical step's result)" : "", h->cost,
		     h->cost_unknown ? " + unknown" : "");
		break;
	}
	case EV_STEP_EDIT:
		line(h, sid, "step edited by %s", str(o, "by"));
		break;
	case EV_LLM_CALL: {
		double c = 0;
		const char *status = str(o, "status");
		if (jsonx_num(o, "cost_usd", &c))
			h->cost += c;
		else if (!strcmp(status, "ok"))
			h->cost_unknown = true;
		if (!strcmp(status, "error"))
			line(h, sid, "  %s call failed: %s", str(o, "role"), str(o, "error"));
		break;
	}
	case EV_LLM_RETRY:
		line(h, sid, "  %s: HTTP %d — retrying in %.1f s (%d/%d): %s", str(o, "role"),
		     num(o, "http_status"), num(o, "wait_ms") / 1000.0, num(o, "attempt"),
		     num(o, "max"), str(o, "reason"));
		break;
	case EV_NOTICE: {
		bool info = !strcmp(str(o, "level"), "info");
		line(h, sid, "%s%s%s", info ? "" : str(o, "level"), info ? "" : ": ",
		     str(o, "message"));
		break;
	}
	case EV_RUN_FINAL:
		print_final(h, o);
		break;
	case EV_RUN_END:
		line(h, NULL, "run %s (exit %d)%s%s", str(o, "status"), num(o, "exit_code"),
		     jsonx_str(o, "reason") ? ": " : "", str(o, "reason"));
		break;
	default:
		break;
	}
	cJSON_Delete(o);
}

void headless_on_event(void *ctx, const struct event *ev)
{
	headless_print(ctx, ev);
}
