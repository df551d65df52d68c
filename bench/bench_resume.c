/* bench_resume — the time to rebuild a run from a 10,000-event journal: a synthesized
 * 200-step run cut off mid-step, rebuilt by pev_new(resume) and read by journal_load.
 * Run by hand: make bench-resume. Prints figures; asserts nothing about time. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "gate.h"
#include "journal.h"
#include "pev.h"
#include "plan.h"
#include "provider.h"
#include "provider_sim.h"
#include "settings.h"
#include "strbuf.h"
#include "xalloc.h"

#define EVENTS 10000
#define STEPS PLAN_MAX_STEPS /* the most a plan may have */
#define CHAINS 8             /* step i depends on step i - CHAINS */
#define ROUNDS 6             /* tool rounds per attempt */
#define REPS 9

/*
 * Per step: two attempts (the first sent back by the verifier) of ROUNDS tool rounds each,
 * a retry notice and step.end: 2 * (1 + 3 * ROUNDS + 5) + 2 = 50 events, so 200 steps
 * reach 10,000 events and the journal ends inside the last step, like a crashed run.
 */

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct writer {
	FILE *f;
	unsigned long seq;
};

/* Appends one event unless the journal is full. false once it is. */
static bool emit(struct writer *w, enum event_type t, cJSON *fields)
{
	struct event *ev;

	if (w->seq >= EVENTS) {
		cJSON_Delete(fields);
		return false;
	}
	ev = event_build(t, ++w->seq, fields);
	fputs(ev->json, w->f);
	fputc('\n', w->f);
	event_free(ev);
	return true;
}

static char *step_id(int i)
{
	return xasprintf("s%03d", i);
}

static struct plan *make_plan(void)
{
	cJSON *plan = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(plan, "steps");
	struct strvec errors = STRVEC_INIT;
	struct plan *p;
	char *text;

	cJSON_AddStringToObject(plan, "goal", "survey two hundred sources and write a digest");
	cJSON_AddStringToObject(plan, "context", "benchmark of --resume");
	for (int i = 1; i <= STEPS; i++) {
		cJSON *s = cJSON_CreateObject(), *a;
		cJSON *crit = cJSON_AddArrayToObject(s, "acceptance_criteria");
		cJSON *deps = cJSON_AddArrayToObject(s, "dependencies");
		char *id = step_id(i), *name = xasprintf("Summarise source %d", i);
		char *out = xasprintf("notes/source-%03d.md", i);

		cJSON_AddStringToObject(s, "step_id", id);
		cJSON_AddStringToObject(s, "name", name);
		cJSON_AddStringToObject(s, "description",
		                        "Read the source, extract its claims with page references "
		                        "and write a short summary with a verdict on reliability.");
		a = cJSON_AddArrayToObject(s, "actions");
		{
			cJSON *act = cJSON_CreateObject(), *params = cJSON_CreateObject();
			cJSON_AddStringToObject(act, "tool", "write_file");
			cJSON_AddStringToObject(params, "path", out);
			cJSON_AddItemToObject(act, "params", params);
			cJSON_AddItemToArray(a, act);
		}
		cJSON_AddItemToArray(crit, cJSON_CreateString("every claim has a page reference"));
		cJSON_AddItemToArray(crit, cJSON_CreateString("the summary is saved"));
		cJSON_AddItemToObject(s, "expected_outputs",
		                      cJSON_CreateStringArray((const char *const[]){out}, 1));
		if (i > CHAINS) {
			char *dep = step_id(i - CHAINS);
			cJSON_AddItemToArray(deps, cJSON_CreateString(dep));
			free(dep);
		}
		cJSON_AddStringToObject(s, "estimated_complexity", "low");
		cJSON_AddItemToArray(steps, s);
		free(id);
		free(name);
		free(out);
	}
	text = cJSON_PrintUnformatted(plan);
	cJSON_Delete(plan);
	p = plan_parse(text, &errors);
	if (!p || !plan_validate(p, &errors)) {
		char *joined = strvec_join(&errors, "; ");
		fatal("bench_resume: the synthesized plan is invalid: %s", joined);
	}
	cJSON_free(text);
	strvec_clear(&errors);
	return p;
}

static cJSON *llm_call(const char *role, const char *purpose, const char *sid, int attempt)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "role", role);
	cJSON_AddStringToObject(f, "purpose", purpose);
	cJSON_AddStringToObject(f, "model", "claude-sonnet-4-5");
	cJSON_AddBoolToObject(f, "simulated", false);
	if (sid)
		cJSON_AddStringToObject(f, "step_id", sid);
	else
		cJSON_AddNullToObject(f, "step_id");
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddNumberToObject(f, "input_tokens", 3210);
	cJSON_AddNumberToObject(f, "output_tokens", 412);
	cJSON_AddNumberToObject(f, "cached_tokens", 2048);
	cJSON_AddNumberToObject(f, "cache_write_tokens", 0);
	cJSON_AddNumberToObject(f, "cost_usd", 0.0168);
	cJSON_AddNumberToObject(f, "latency_ms", 2380);
	cJSON_AddStringToObject(f, "status", "ok");
	cJSON_AddNumberToObject(f, "http_status", 200);
	return f;
}

static cJSON *verdict(const char *sid, int attempt, const char *stage, bool pass)
{
	cJSON *f = cJSON_CreateObject(), *crit = cJSON_CreateArray(), *c = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", sid);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "stage", stage);
	cJSON_AddStringToObject(f, "action", pass ? "pass" : "retry");
	cJSON_AddStringToObject(f, "severity", pass ? "minor" : "major");
	cJSON_AddBoolToObject(f, "overall_pass", pass);
	cJSON_AddStringToObject(c, "criterion", "every claim has a page reference");
	cJSON_AddBoolToObject(c, "passed", pass);
	cJSON_AddStringToObject(c, "evidence",
	                        pass ? "all 7 claims cite pages"
	                             : "claims 3 and 5 have no page reference");
	cJSON_AddNumberToObject(c, "confidence", 0.9);
	cJSON_AddStringToObject(c, "feedback", pass ? "" : "add the page references");
	cJSON_AddItemToArray(crit, c);
	cJSON_AddItemToObject(f, "criteria", crit);
	if (pass)
		cJSON_AddNullToObject(f, "feedback");
	else
		cJSON_AddStringToObject(f, "feedback",
		                        "Claims 3 and 5 have no page reference; add them from the "
		                        "source before claiming the criterion.");
	return f;
}

/* One attempt of step i. false once the journal is full. */
static bool attempt_events(struct writer *w, int i, int attempt, bool pass)
{
	char *sid = step_id(i), *out = xasprintf("notes/source-%03d.md", i);
	char summary[201];
	bool more = true;
	cJSON *f;

	memset(summary, 'x', 200);
	summary[200] = '\0';
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", sid);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "name", "Summarise a source");
	more = emit(w, EV_STEP_START, f);
	for (int r = 0; more && r < ROUNDS; r++) {
		char *call_id = xasprintf("toolu_%03d_%d_%d", i, attempt, r);
		cJSON *params = cJSON_CreateObject();

		more = emit(w, EV_LLM_CALL, llm_call("executor", "execute", sid, attempt));
		cJSON_AddStringToObject(params, "path", out);
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "step_id", sid);
		cJSON_AddNumberToObject(f, "attempt", attempt);
		cJSON_AddStringToObject(f, "call_id", call_id);
		cJSON_AddStringToObject(f, "tool", "read_file");
		cJSON_AddItemToObject(f, "params", params);
		more = more && emit(w, EV_TOOL_CALL, f);
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "step_id", sid);
		cJSON_AddNumberToObject(f, "attempt", attempt);
		cJSON_AddStringToObject(f, "call_id", call_id);
		cJSON_AddStringToObject(f, "tool", "read_file");
		cJSON_AddBoolToObject(f, "ok", true);
		cJSON_AddStringToObject(f, "summary", summary);
		cJSON_AddNumberToObject(f, "bytes", 4096);
		more = more && emit(w, EV_TOOL_RESULT, f);
		free(call_id);
	}
	more = more && emit(w, EV_LLM_CALL, llm_call("executor", "execute", sid, attempt));
	if (more) {
		cJSON *res = cJSON_CreateObject(), *so = cJSON_CreateObject();
		cJSON_AddStringToObject(
		    res, "reasoning",
		    "Read the source twice, listed its claims with their pages, "
		    "checked the dates against the appendix and wrote the summary.");
		cJSON_AddItemToObject(
		    res, "actions_taken",
		    cJSON_CreateStringArray((const char *const[]){"read_file", "write_file"}, 2));
		cJSON_AddStringToObject(so, "findings",
		                        "Seven claims; five with page references; the 2021 figure "
		                        "contradicts source 12 and is flagged.");
		cJSON_AddItemToObject(so, "artifacts",
		                      cJSON_CreateStringArray((const char *const[]){out}, 1));
		cJSON_AddBoolToObject(so, "meets_criteria", true);
		cJSON_AddItemToObject(res, "step_output", so);
		cJSON_AddNumberToObject(res, "confidence", 0.86);
		cJSON_AddStringToObject(res, "notes", "");
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "step_id", sid);
		cJSON_AddNumberToObject(f, "attempt", attempt);
		cJSON_AddItemToObject(f, "result", res);
		more = emit(w, EV_STEP_OUTPUT, f);
	}
	more = more && emit(w, EV_VERIFY_VERDICT, verdict(sid, attempt, "deterministic", true));
	more = more && emit(w, EV_LLM_CALL, llm_call("verifier", "verify", sid, attempt));
	more = more && emit(w, EV_VERIFY_VERDICT, verdict(sid, attempt, "model", pass));
	free(sid);
	free(out);
	return more;
}

/* Writes RUNDIR/journal.jsonl with exactly EVENTS events. Returns its size in bytes. */
static long write_journal(const char *run_dir)
{
	char *path = xasprintf("%s/journal.jsonl", run_dir);
	struct writer w = {fopen(path, "w"), 0};
	struct plan *p = make_plan();
	cJSON *f, *m, *pol;
	bool more = true;
	long size;

	if (!w.f)
		fatal("bench_resume: cannot write %s", path);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "run_id", strrchr(run_dir, '/') + 1);
	cJSON_AddStringToObject(f, "task", "Survey two hundred sources and write a digest");
	cJSON_AddStringToObject(f, "provider", "anthropic");
	cJSON_AddBoolToObject(f, "simulated", false);
	m = cJSON_AddObjectToObject(f, "models");
	cJSON_AddStringToObject(m, "planner", "claude-sonnet-4-5");
	cJSON_AddStringToObject(m, "executor", "claude-sonnet-4-5");
	cJSON_AddStringToObject(m, "verifier", "claude-sonnet-4-5");
	pol = cJSON_AddObjectToObject(f, "policy");
	cJSON_AddItemToObject(pol, "gates", cJSON_CreateArray());
	cJSON_AddBoolToObject(pol, "yes", true);
	cJSON_AddNumberToObject(pol, "max_retries", 2);
	cJSON_AddNumberToObject(pol, "max_replans", 2);
	cJSON_AddNumberToObject(pol, "parallel", 3);
	cJSON_AddNullToObject(pol, "budget_usd");
	cJSON_AddNumberToObject(pol, "confidence_threshold", 0.7);
	cJSON_AddNumberToObject(pol, "chaos", 0);
	cJSON_AddStringToObject(f, "workspace", "workspace");
	emit(&w, EV_RUN_START, f);
	emit(&w, EV_LLM_CALL, llm_call("planner", "plan", NULL, 0));
	f = cJSON_CreateObject();
	cJSON_AddItemToObject(f, "plan", plan_to_json(p));
	cJSON_AddNumberToObject(f, "revision", 0);
	cJSON_AddNumberToObject(f, "estimate_usd", 14.2);
	cJSON_AddStringToObject(f, "reason", "initial");
	emit(&w, EV_PLAN_PROPOSED, f);
	f = cJSON_CreateObject();
	cJSON_AddItemToObject(f, "plan", plan_to_json(p));
	cJSON_AddNumberToObject(f, "revision", 0);
	cJSON_AddItemToObject(f, "kept", cJSON_CreateArray());
	emit(&w, EV_PLAN_ADOPTED, f);

	for (int i = 1; more && i <= STEPS; i++) {
		char *sid = step_id(i);
		more = attempt_events(&w, i, 1, false);
		if (more) {
			f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "level", "info");
			cJSON_AddStringToObject(f, "message", "retrying (attempt 2 of 3)");
			cJSON_AddStringToObject(f, "step_id", sid);
			more = emit(&w, EV_NOTICE, f);
		}
		more = more && attempt_events(&w, i, 2, true);
		if (more) {
			f = cJSON_CreateObject();
			cJSON_AddStringToObject(f, "step_id", sid);
			cJSON_AddStringToObject(f, "status", "passed");
			cJSON_AddNumberToObject(f, "attempts", 2);
			cJSON_AddBoolToObject(f, "reused", false);
			more = emit(&w, EV_STEP_END, f);
		}
		free(sid);
	}
	if (w.seq != EVENTS)
		fatal("bench_resume: wrote %lu events, not %d", w.seq, EVENTS);
	size = ftell(w.f);
	if (fclose(w.f) != 0)
		fatal("bench_resume: cannot write %s", path);
	plan_free(p);
	free(path);
	return size;
}

/* What the continued run did: the steps it started and the seq it started from. */
struct after {
	int started;
	char *first_step;
	unsigned long first_seq;
};

static void on_event(void *ctx, const struct event *ev)
{
	struct after *a = ctx;

	if (!a->first_seq)
		a->first_seq = ev->seq;
	if (ev->type == EV_STEP_START) {
		if (!a->started++)
			a->first_step = xstrdup(ev->step_id);
	}
}

/* Continues the rebuilt run to its end: proof that the rebuild is the run (only the step
 * in flight runs again; numbering continues after the last event). */
static void continue_run(const struct settings *s, struct provider **roles, const char *run_dir)
{
	struct bus *bus = bus_new();
	struct gatekeeper *g = gatekeeper_new(bus, 0, GATE_MODE_YES);
	struct after a = {0, NULL, 0};
	char *err = NULL;
	struct pev *e = pev_new(s, roles, bus, g, run_dir, PEV_OPEN_RESUME, &err);
	int code;

	if (!e)
		fatal("bench_resume: %s", err);
	bus_subscribe(bus, on_event, &a);
	pev_start(e);
	code = pev_join(e);
	printf("  continued: exit %d, %d step(s) started again (%s), numbering from seq %lu\n",
	       code, a.started, a.first_step ? a.first_step : "none", a.first_seq);
	pev_free(e);
	gatekeeper_free(g);
	bus_free(bus);
	free(a.first_step);
}

int main(void)
{
	char dir[] = "/tmp/pevtui-bench-resume-XXXXXX";
	char *run_dir, *journal, *err = NULL, *cmd;
	struct provider *prov, *roles[ROLE__COUNT];
	struct settings s;
	double load_ms[REPS], rebuild_ms[REPS], med_load, med_rebuild;
	struct journal_load_info info = {0};
	long size;

	if (!mkdtemp(dir))
		fatal("bench_resume: mkdtemp failed");
	run_dir = xasprintf("%s/20261123-000000-beef", dir);
	if (mkdir(run_dir, 0700) != 0)
		fatal("bench_resume: cannot create %s", run_dir);
	journal = xasprintf("%s/journal.jsonl", run_dir);
	size = write_journal(run_dir);

	prov = provider_sim_new(NULL, NULL, 0, &err);
	if (!prov)
		fatal("bench_resume: %s", err);
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = prov;
	settings_init(&s);
	s.task = xstrdup("Survey two hundred sources and write a digest");
	s.yes = true;
	s.gates = 0;

	for (int k = 0; k < REPS; k++) {
		double t0 = wall_ms();
		if (!journal_load(journal, NULL, NULL, &info, &err))
			fatal("bench_resume: %s", err);
		load_ms[k] = wall_ms() - t0;
	}
	for (int k = 0; k < REPS; k++) {
		struct bus *bus = bus_new();
		struct gatekeeper *g = gatekeeper_new(bus, 0, GATE_MODE_YES);
		struct pev *e;
		double t0 = wall_ms();

		e = pev_new(&s, roles, bus, g, run_dir, PEV_OPEN_RESUME, &err);
		rebuild_ms[k] = wall_ms() - t0;
		if (!e)
			fatal("bench_resume: the journal does not rebuild: %s", err);
		pev_free(e);
		gatekeeper_free(g);
		bus_free(bus);
	}

	/* median() sorts, so min and max are read after it. */
	med_load = median(load_ms, REPS);
	med_rebuild = median(rebuild_ms, REPS);
	printf("bench_resume: a %d-step run cut off after %lu events (%.1f MB journal)\n", STEPS,
	       info.events, size / 1048576.0);
	printf("  journal_load alone:             median %7.2f ms of %d (min %.2f, max %.2f)\n",
	       med_load, REPS, load_ms[0], load_ms[REPS - 1]);
	printf("  pev_new(resume) full rebuild:   median %7.2f ms of %d (min %.2f, max %.2f)\n",
	       med_rebuild, REPS, rebuild_ms[0], rebuild_ms[REPS - 1]);
	printf("  aim: rebuild under 100 ms\n");
	continue_run(&s, roles, run_dir);

	provider_free(prov);
	settings_release(&s);
	cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_resume: could not remove %s\n", dir);
	free(cmd);
	free(journal);
	free(run_dir);
	return 0;
}
