/* pev_worker — one step in its own thread: execute with tools, verify (deterministic
 * checks, then the verifier model), route; the shell gate and tool hooks it offers. */
#include "config.h"

#include "pev_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "gate.h"
#include "jsonx.h"
#include "result.h"
#include "sandbox.h"
#include "tool.h"
#include "xalloc.h"

/* xorshift: reproducible chaos from --chaos-seed. */
static double chaos_next(unsigned long *state)
{
	unsigned long x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return (double)(x >> 11) / (double)(1UL << 53);
}

/* Each worker draws from its own generator, seeded by --chaos-seed, the step id and the
 * attempt, so a rehearsal replays the same failures whatever the scheduling. */
static unsigned long chaos_seed_for(unsigned long seed, const char *step_id, int attempts)
{
	unsigned long h = 1469598103934665603UL ^ seed;

	for (const unsigned char *p = (const unsigned char *)step_id; *p; p++)
		h = (h ^ *p) * 1099511628211UL;
	h ^= (unsigned long)attempts * 0x9E3779B97F4A7C15UL;
	return h ? h : 1;
}

static char *summarize(const char *text)
{
	size_t n = strlen(text);

	if (n <= SUMMARY_LEN)
		return xstrdup(text);
	/* Cut on a UTF-8 boundary. */
	n = SUMMARY_LEN;
	while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
		n--;
	return xasprintf("%.*s…", (int)n, text);
}

static cJSON *parse_or_string(const char *json)
{
	cJSON *v = json ? cJSON_Parse(json) : NULL;

	return v ? v : cJSON_CreateString(json ? json : "");
}

struct tool_record {
	char *tool;
	bool ok;
	char *summary;
};

struct attempt_log {
	struct tool_record *v;
	size_t n, cap;
	struct strbuf text; /* for the verifier: what the tools did */
};

static void attempt_log_release(struct attempt_log *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].tool);
		free(l->v[i].summary);
	}
	free(l->v);
	strbuf_release(&l->text);
}

static const struct tool_def **offered_tools(struct pev *e, size_t *n)
{
	size_t total;
	const struct tool_def *const *all = tool_registry(&total);
	const struct tool_def **out = xcalloc(total ? total : 1, sizeof(*out));

	*n = 0;
	for (size_t i = 0; i < total; i++)
		if (!all[i]->demo_only || e->demo)
			out[(*n)++] = all[i];
	return out;
}

/* The shell gate, asked from the worker: other steps go on while the operator reads the
 * command. Approve runs it, edit runs the edited one ({"command": …} or a bare string),
 * skip refuses this command (the model is told), reject aborts the run. */
static bool confirm_shell(void *ctx, char **command)
{
	struct worker *w = ctx;
	struct pev *e = w->e;
	cJSON *payload = cJSON_CreateObject();
	char *edited = NULL;
	enum gate_decision d;

	cJSON_AddStringToObject(payload, "command", *command);
	cJSON_AddItemToObject(payload, "step", plan_step_to_json(&w->step));
	d = gatekeeper_ask(e->gates, GATE_SHELL, w->step.id, payload, &edited);
	if (d == GATE_EDIT && edited) {
		cJSON *o = cJSON_Parse(edited);
		const char *c = cJSON_IsString(o) ? o->valuestring : jsonx_str(o, "command");
		if (c && *c) {
			free(*command);
			*command = xstrdup(c);
		}
		cJSON_Delete(o);
	}
	free(edited);
	if (d == GATE_REJECT)
		pev_post(e, PEV_CMD_ABORT, NULL, NULL);
	return d == GATE_APPROVE || d == GATE_EDIT;
}

/* --chaos: a tool attempt fails (as a transient error, so retries and fallbacks are
 * rehearsed too) with probability P, from a seeded generator. */
static bool inject_chaos(void *ctx, const char *tool)
{
	struct worker *w = ctx;

	(void)tool;
	return chaos_next(&w->chaos_state) < w->e->chaos;
}

static void on_tool_retry(void *ctx, const char *tool, int attempt, int max, long wait_ms,
			  const char *reason)
{
	struct worker *w = ctx;
	cJSON *f = cJSON_CreateObject();
	char *msg = xasprintf("%s — retrying %s in %.1f s (%d/%d)",
			      reason ? reason : "transient error", tool, wait_ms / 1000.0, attempt,
			      max);

	cJSON_AddStringToObject(f, "level", "warn");
	cJSON_AddStringToObject(f, "kind", "tool_retry");
	cJSON_AddStringToObject(f, "step_id", w->step.id);
	cJSON_AddStringToObject(f, "tool", tool);
	cJSON_AddNumberToObject(f, "wait_ms", (double)wait_ms);
	cJSON_AddStringToObject(f, "message", msg);
	free(msg);
	bus_publish(w->e->bus, EV_NOTICE, f);
}

static void run_tool(struct worker *w, int attempt, const struct llm_tool_call *call,
		     struct llm_tool_result *res, struct attempt_log *log)
{
	struct pev *e = w->e;
	const char *step_id = w->step.id;
	const struct tool_def *t = tool_find(call->name);
	struct tool_env env = {.ws_fd = e->ws_fd,
			       .ws_path = e->workspace,
			       .demo = e->demo,
			       .hook_ctx = w,
			       .confirm_shell = confirm_shell,
			       .on_tool_retry = on_tool_retry,
			       .shell_allow = &e->shell_allow,
			       .inject_failure = e->chaos > 0 ? inject_chaos : NULL,
			       .cancel = &w->cancel,
			       .shell_timeout_s = e->shell_timeout_s,
			       .http_max_bytes = e->http_max_bytes};
	struct strbuf out = STRBUF_INIT;
	cJSON *input = cJSON_Parse(call->input_json ? call->input_json : "{}");
	cJSON *f = cJSON_CreateObject();
	bool ok = false;
	char *summary;

	strbuf_init(&out);
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "call_id", call->id ? call->id : "");
	cJSON_AddStringToObject(f, "tool", call->name ? call->name : "");
	cJSON_AddItemToObject(f, "params", input ? cJSON_Duplicate(input, 1) : cJSON_CreateObject());
	bus_publish(e->bus, EV_TOOL_CALL, f);

	if (!t || (t->demo_only && !e->demo)) {
		strbuf_addf(&out, "unknown tool \"%s\"", call->name ? call->name : "");
	} else if (!input || !cJSON_IsObject(input)) {
		strbuf_addf(&out, "the arguments of %s are not a JSON object", call->name);
	} else {
		ok = tool_invoke(t, &env, input, &out);
	}
	cJSON_Delete(input);

	summary = summarize(out.buf);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "call_id", call->id ? call->id : "");
	cJSON_AddStringToObject(f, "tool", call->name ? call->name : "");
	cJSON_AddBoolToObject(f, "ok", ok);
	cJSON_AddStringToObject(f, "summary", summary);
	cJSON_AddNumberToObject(f, "bytes", (double)out.len);
	bus_publish(e->bus, EV_TOOL_RESULT, f);

	log->v = xgrow(log->v, &log->cap, log->n + 1, sizeof(*log->v));
	log->v[log->n].tool = xstrdup(call->name ? call->name : "");
	log->v[log->n].ok = ok;
	log->v[log->n].summary = xstrdup(summary);
	log->n++;
	strbuf_addf(&log->text, "- %s %s → %s: %s\n", call->name ? call->name : "?",
		    call->input_json ? call->input_json : "{}", ok ? "ok" : "ERROR", summary);
	free(summary);

	res->call_id = xstrdup(call->id);
	res->content = strbuf_detach(&out);
	res->is_error = !ok;
}

void pev_worker_free(struct worker *w)
{
	plan_step_free_fields(&w->step);
	for (size_t d = 0; d < w->n_deps; d++) {
		free((char *)w->deps[d].step_id);
		free((char *)w->deps[d].output_json);
	}
	free(w->deps);
	strvec_clear(&w->critiques);
	free(w->goal);
	free(w->reuse_key);
	free(w->result_json);
	free(w->output_json);
	free(w->failure);
	free(w);
}

/* Snapshot of step i for a worker: definition, dependency outputs only, critiques. */
struct worker *pev_worker_new(struct pev *e, size_t i)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	const struct plan_step *s = &e->plan->steps[i];

	w->e = e;
	w->goal = xstrdup(e->plan->goal ? e->plan->goal : "");
	plan_step_copy(&w->step, s);
	w->deps = xcalloc(s->deps.n ? s->deps.n : 1, sizeof(*w->deps));
	for (size_t d = 0; d < s->deps.n; d++) {
		int di = plan_find(e->plan, s->deps.v[d]);
		const char *out;
		if (di < 0)
			continue;
		if (e->st[di].status == SS_SKIPPED)
			out = "(skipped by the operator: no output)";
		else
			out = e->st[di].output_json ? e->st[di].output_json : "(no output)";
		w->deps[w->n_deps].step_id = xstrdup(e->plan->steps[di].id);
		w->deps[w->n_deps++].output_json = xstrdup(out);
	}
	for (size_t c = 0; c < e->st[i].critiques.n; c++)
		strvec_push(&w->critiques, e->st[i].critiques.v[c]);
	w->attempts = e->st[i].attempts;
	w->round_attempts = e->st[i].round_attempts;
	w->gen = e->st[i].gen;
	w->chaos_state = chaos_seed_for(e->chaos_seed, s->id, w->attempts);
	atomic_init(&w->cancel, atomic_load(&e->aborting));
	return w;
}

/*
 * Runs the executor's tool loop for one attempt. Returns the final text (caller frees),
 * or NULL when the call was cancelled or failed (then *err may hold the provider's
 * sentence).
 */
static char *execute_attempt(struct worker *w, int attempt, struct attempt_log *log, char **err)
{
	struct pev *e = w->e;
	const struct plan_step *step = &w->step;
	struct llm_msg *msgs = xcalloc(2 * MAX_TOOL_ROUNDS + 2, sizeof(*msgs));
	size_t n_msgs = 1, n_tools;
	const struct tool_def **tools = offered_tools(e, &n_tools);
	char *step_json = plan_step_to_string(step, false);
	char *final = NULL;

	msgs[0].kind = LLM_MSG_USER;
	msgs[0].text = prompt_execute(w->goal, step, w->deps, w->n_deps, &w->critiques, attempt);

	for (int round = 0; round <= MAX_TOOL_ROUNDS; round++) {
		/* The last round offers no tools: the executor must answer. */
		struct llm_request req = {.role = ROLE_EXECUTOR,
					  .purpose = PURPOSE_EXECUTE,
					  .step_id = step->id,
					  .attempt = attempt,
					  .step_json = step_json,
					  .system = prompt_system_executor(),
					  .msgs = msgs,
					  .n_msgs = n_msgs,
					  .tools = tools,
					  .n_tools = round < MAX_TOOL_ROUNDS ? n_tools : 0,
					  .max_tokens = MAX_TOKENS_STEP};
		struct llm_response res = {0};

		if (pev_call_model(e, &req, &res, &w->cancel, err) != PROVIDER_OK) {
			llm_response_release(&res);
			break;
		}
		if (!res.n_calls || round == MAX_TOOL_ROUNDS) {
			final = res.text ? res.text : xstrdup("");
			res.text = NULL;
			llm_response_release(&res);
			break;
		}
		/* The assistant turn keeps the calls; the next turn carries their results. */
		msgs[n_msgs].kind = LLM_MSG_ASSISTANT;
		msgs[n_msgs].text = res.text;
		msgs[n_msgs].calls = res.calls;
		msgs[n_msgs].n_calls = res.n_calls;
		res.text = NULL;
		res.calls = NULL;
		res.n_calls = 0;
		llm_response_release(&res);
		{
			struct llm_msg *am = &msgs[n_msgs++];
			struct llm_msg *rm = &msgs[n_msgs++];
			rm->kind = LLM_MSG_TOOL_RESULTS;
			rm->results = xcalloc(am->n_calls, sizeof(*rm->results));
			rm->n_results = am->n_calls;
			for (size_t c = 0; c < am->n_calls; c++)
				run_tool(w, attempt, &am->calls[c], &rm->results[c], log);
		}
		if (atomic_load(&w->cancel))
			break;
	}
	for (size_t m = 0; m < n_msgs; m++)
		llm_msg_release(&msgs[m]);
	free(msgs);
	free((void *)tools);
	free(step_json);
	return final;
}

static void add_check(struct verdict *v, const char *criterion, bool passed, const char *evidence)
{
	struct criterion_result *c;

	v->criteria = xrealloc(v->criteria, (v->n_criteria + 1) * sizeof(*v->criteria));
	c = &v->criteria[v->n_criteria++];
	memset(c, 0, sizeof(*c));
	c->criterion = xstrdup(criterion);
	c->passed = passed;
	c->evidence = xstrdup(evidence);
	c->confidence = 1.0;
}

/*
 * Stage 1, deterministic and free. Returns a verdict (action pass or retry with a concrete
 * critique). `r` may be NULL when the result did not parse (`parse_err` says why).
 */
static struct verdict *verify_deterministic(struct pev *e, const struct exec_result *r,
					    const char *parse_err, const struct attempt_log *log)
{
	struct verdict *v = xcalloc(1, sizeof(*v));
	struct strvec problems = STRVEC_INIT;

	if (!r) {
		char *ev = xasprintf("the answer is not a usable result object: %s", parse_err);
		add_check(v, "result JSON is well-formed", false, ev);
		strvec_pushf(&problems,
			     "Your answer was not a usable result: %s. End with exactly one JSON "
			     "object with reasoning, actions_taken, step_output {findings, artifacts, "
			     "meets_criteria}, confidence and notes.",
			     parse_err);
		free(ev);
	} else {
		struct strbuf miss = STRBUF_INIT;
		bool tools_ok = true;

		add_check(v, "result JSON is well-formed", true, "parsed and complete");
		strbuf_init(&miss);
		for (size_t a = 0; a < r->artifacts.n; a++) {
			const char *path = r->artifacts.v[a];
			const char *bad = sandbox_check_path(path);
			if (bad)
				strvec_pushf(&problems, "Artifact \"%s\" is not a workspace path (%s).",
					     path, bad);
			else if (!sandbox_file_nonempty(e->ws_fd, path))
				strvec_pushf(&problems,
					     "Artifact \"%s\" is missing or empty in the workspace: "
					     "write it with write_file before claiming it.",
					     path);
			else
				continue;
			strbuf_addf(&miss, "%s%s", miss.len ? ", " : "", path);
		}
		if (miss.len) {
			char *ev = xasprintf("missing or empty: %s", miss.buf);
			add_check(v, "declared artifacts exist and are not empty", false, ev);
			free(ev);
		} else {
			add_check(v, "declared artifacts exist and are not empty", true,
				  r->artifacts.n ? "all present" : "none declared");
		}
		strbuf_release(&miss);

		for (size_t t = 0; t < log->n; t++) {
			bool addressed = false;
			if (log->v[t].ok)
				continue;
			for (size_t u = t + 1; u < log->n && !addressed; u++)
				addressed = log->v[u].ok && !strcmp(log->v[u].tool, log->v[t].tool);
			if (!addressed && r->notes && strstr(r->notes, log->v[t].tool))
				addressed = true;
			if (!addressed) {
				tools_ok = false;
				strvec_pushf(&problems,
					     "Tool %s failed (%s) and the result does not address it: "
					     "retry the call, use another route, or explain in notes "
					     "why the result holds without it.",
					     log->v[t].tool, log->v[t].summary);
			}
		}
		add_check(v, "no tool error left unaddressed", tools_ok,
			  tools_ok ? "every failed call was retried or explained" : "see feedback");

		if (r->confidence < e->threshold) {
			char *ev = xasprintf("confidence %.2f is below the threshold %.2f",
					     r->confidence, e->threshold);
			add_check(v, "confidence at or above the threshold", false, ev);
			strvec_pushf(&problems,
				     "Your confidence %.2f is below the required %.2f: resolve what "
				     "makes you unsure, or say precisely what is missing.",
				     r->confidence, e->threshold);
			free(ev);
		} else {
			add_check(v, "confidence at or above the threshold", true, "ok");
		}
	}
	v->overall_pass = problems.n == 0;
	v->action = v->overall_pass ? VERDICT_PASS : VERDICT_RETRY;
	v->severity = v->overall_pass ? SEV_MINOR : SEV_MAJOR;
	if (problems.n)
		v->feedback = strvec_join(&problems, " ");
	strvec_clear(&problems);
	return v;
}

static void *read_verdict(struct pev *e, const char *text, char **why)
{
	(void)e;
	return verdict_parse(text, why);
}

static char *fix_verdict(struct pev *e, const char *why)
{
	(void)e;
	return prompt_verdict_fix(why);
}

/* Stage 2: the verifier model. NULL when the call failed (*err) or was cancelled. */
static struct verdict *verify_model(struct worker *w, int attempt, const char *result_json,
				    const struct attempt_log *log, char **err)
{
	char *step_json = plan_step_to_string(&w->step, false), *why = NULL;
	struct llm_request req = {.role = ROLE_VERIFIER,
				  .purpose = PURPOSE_VERIFY,
				  .step_id = w->step.id,
				  .attempt = attempt,
				  .step_json = step_json,
				  .system = prompt_system_verifier(),
				  .want_json = true,
				  .max_tokens = MAX_TOKENS_STEP};
	struct verdict *v = pev_ask_and_read(w->e, &req,
					 prompt_verify(w->goal, &w->step, result_json, log->text.buf),
					 &w->cancel, read_verdict, fix_verdict, &why, err);

	if (!v && why) {
		/* Not the executor's fault, but the step cannot pass unverified. */
		v = xcalloc(1, sizeof(*v));
		v->action = VERDICT_RETRY;
		v->severity = SEV_MAJOR;
		v->feedback = xasprintf("The verifier's answer could not be read (%s); the attempt "
					"is repeated.",
					why);
	}
	free(why);
	free(step_json);
	return v;
}

/*
 * A worker: the attempt loop of one step (execute, verify deterministic then model,
 * route), in its own thread. It touches only its snapshot, the bus and the accounting.
 */
void *pev_worker_main(void *arg)
{
	struct worker *w = arg;
	struct pev *e = w->e;
	const char *id = w->step.id;

	for (;;) {
		struct attempt_log log = {0};
		struct exec_result *r;
		struct verdict *v;
		char *text, *perr = NULL, *err = NULL;
		int attempt;
		cJSON *f;

		if (atomic_load(&w->cancel)) {
			w->outcome = OUT_CANCELLED;
			break;
		}
		attempt = ++w->attempts;
		w->round_attempts++;
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "step_id", id);
		cJSON_AddNumberToObject(f, "attempt", attempt);
		cJSON_AddStringToObject(f, "name", w->step.name ? w->step.name : id);
		bus_publish(e->bus, EV_STEP_START, f);

		strbuf_init(&log.text);
		text = execute_attempt(w, attempt, &log, &err);
		if (!text) {
			attempt_log_release(&log);
			w->outcome = err ? OUT_ERROR : OUT_CANCELLED;
			w->failure = err;
			break;
		}
		r = exec_result_parse(text, &perr);
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "step_id", id);
		cJSON_AddNumberToObject(f, "attempt", attempt);
		if (r)
			cJSON_AddItemToObject(f, "result", parse_or_string(r->json));
		else
			cJSON_AddStringToObject(f, "result", text);
		bus_publish(e->bus, EV_STEP_OUTPUT, f);
		if (r) {
			cJSON *ro = cJSON_Parse(r->json);
			cJSON *so = ro ? cJSON_GetObjectItemCaseSensitive(ro, "step_output") : NULL;
			free(w->result_json);
			free(w->output_json);
			w->result_json = xstrdup(r->json);
			w->output_json = so ? jsonx_print(so) : xstrdup(r->json);
			cJSON_Delete(ro);
		}
		free(text);

		v = verify_deterministic(e, r, perr, &log);
		if (v->action == VERDICT_PASS) {
			pev_publish_verdict(e, id, attempt, "deterministic", v);
			verdict_free(v);
			v = verify_model(w, attempt, r->json, &log, &err);
			if (!v) {
				exec_result_free(r);
				free(perr);
				attempt_log_release(&log);
				w->outcome = err ? OUT_ERROR : OUT_CANCELLED;
				w->failure = err;
				break;
			}
			pev_publish_verdict(e, id, attempt, "model", v);
		} else {
			pev_publish_verdict(e, id, attempt, "deterministic", v);
		}
		exec_result_free(r);
		free(perr);
		attempt_log_release(&log);

		if (v->action == VERDICT_PASS) {
			verdict_free(v);
			w->outcome = OUT_PASSED;
			break;
		}
		strvec_push(&w->critiques, v->feedback ? v->feedback : "verification failed");
		if (v->action == VERDICT_REPLAN) {
			w->failure = xasprintf("the verifier asked for a replan: %s",
					       v->feedback ? v->feedback : "");
			verdict_free(v);
			w->outcome = OUT_REPLAN;
			break;
		}
		if (w->round_attempts > e->max_retries) {
			w->failure = xasprintf("%d attempts failed verification; last critique: %s",
					       w->round_attempts, v->feedback ? v->feedback : "");
			verdict_free(v);
			w->outcome = OUT_REPLAN;
			break;
		}
		bus_notice(e->bus, "info", id, "retrying %s (attempt %d of %d): %s", id,
			   w->round_attempts + 1, e->max_retries + 1,
			   v->feedback ? v->feedback : "");
		verdict_free(v);
	}

	/* Hand the worker back to the engine thread. */
	pthread_mutex_lock(&e->lock);
	for (struct worker **pp = &e->running; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	w->next = e->done;
	e->done = w;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return NULL;
}




