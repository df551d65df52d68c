/* worker — the pool of threads that run the engine's jobs (steps, planner, finish) and
 * live as long as the run, and a step's attempt loop: execute with tools, verify, route.
 * A job touches only its own snapshot, the bus and the accounting; it comes back to the
 * engine as a message. */
#include "config.h"

#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "attempts.h"
#include "budget.h"
#include "bus.h"
#include "checkpoint.h"
#include "journal.h"
#include "jsonx.h"
#include "mcp_hub.h"
#include "result.h"
#include "sandbox.h"
#include "tool.h"
#include "xalloc.h"

/* ------------------------------------------------------------------- jobs */

struct job *job_new(struct pev *e, enum job_kind k)
{
	struct job *j = xcalloc(1, sizeof(*j));

	j->kind = k;
	j->e = e;
	atomic_init(&j->cancel, false);
	return j;
}

void job_free(struct job *j)
{
	if (!j)
		return;
	plan_step_free_fields(&j->step);
	for (size_t d = 0; d < j->n_deps; d++) {
		free((char *)j->deps[d].step_id);
		free((char *)j->deps[d].output_json);
	}
	free(j->deps);
	strvec_clear(&j->critiques);
	attempts_dir_free(j->adir);
	free(j->goal);
	free(j->reuse_key);
	free(j->result_json);
	free(j->output_json);
	free(j->failure);
	free(j->shell_command);
	free(j->shell_edited_from);
	free(j->shell_ask.cwd);
	free(j->shell_ask.allow_prefix);
	free(j->shell_ask.allow_why);
	free(j->shell_ask.sandbox);
	free(j->shell_ask.reason);
	free(j->mcp_ask);
	free(j->elicit_ask);
	free(j->elicit_answer);
	free(j->prompt);
	plan_free(j->plan);
	free(j->why);
	free(j->err);
	strvec_clear(&j->results);
	strvec_clear(&j->gaps);
	free(j->check_feedback);
	free(j->answer);
	free(j);
}

/* Engine thread: the job is in flight until its MSG_JOB_DONE is applied. */
void pool_submit(struct pev *e, struct job *j)
{
	e->n_jobs++;
	pthread_mutex_lock(&e->pool_lock);
	j->next_live = e->live;
	e->live = j;
	j->next = NULL;
	*e->queue_tail = j;
	e->queue_tail = &j->next;
	pthread_cond_signal(&e->queue_cond);
	pthread_mutex_unlock(&e->pool_lock);
}

static void unlink_live(struct pev *e, struct job *j)
{
	pthread_mutex_lock(&e->pool_lock);
	for (struct job **pp = &e->live; *pp; pp = &(*pp)->next_live) {
		if (*pp == j) {
			*pp = j->next_live;
			break;
		}
	}
	pthread_mutex_unlock(&e->pool_lock);
}

/* Sets the flag and wakes whatever the job may be blocked in: its shell gate (the pool's
 * condition), a budget reservation, or a provider call (which polls the flag). */
void job_cancel(struct pev *e, struct job *j)
{
	atomic_store(&j->cancel, true);
	pthread_mutex_lock(&e->pool_lock);
	pthread_cond_broadcast(&e->pool_cond);
	pthread_mutex_unlock(&e->pool_lock);
	budget_wake(e->budget);
}

void pool_cancel_all(struct pev *e, bool steps_only)
{
	pthread_mutex_lock(&e->pool_lock);
	for (struct job *j = e->live; j; j = j->next_live)
		if (!steps_only || j->kind == JOB_STEP)
			atomic_store(&j->cancel, true);
	pthread_cond_broadcast(&e->pool_cond);
	pthread_mutex_unlock(&e->pool_lock);
	budget_wake(e->budget);
}

void pool_cancel_step(struct pev *e, const char *step_id)
{
	pthread_mutex_lock(&e->pool_lock);
	for (struct job *j = e->live; j; j = j->next_live)
		if (j->kind == JOB_STEP && !strcmp(j->step.id, step_id))
			atomic_store(&j->cancel, true);
	pthread_cond_broadcast(&e->pool_cond);
	pthread_mutex_unlock(&e->pool_lock);
	budget_wake(e->budget);
}

static void *pool_main(void *arg)
{
	struct pev *e = arg;

	for (;;) {
		struct job *j;
		struct msg *m;

		pthread_mutex_lock(&e->pool_lock);
		while (!e->queue && !e->pool_stop)
			pthread_cond_wait(&e->queue_cond, &e->pool_lock);
		if (!e->queue) {
			pthread_mutex_unlock(&e->pool_lock);
			return NULL;
		}
		j = e->queue;
		e->queue = j->next;
		if (!e->queue)
			e->queue_tail = &e->queue;
		pthread_mutex_unlock(&e->pool_lock);

		if (j->kind == JOB_STEP)
			job_run_step(j);
		else if (j->kind == JOB_FINISH)
			finish_job_run(j);
		else if (j->kind == JOB_SETTLE)
			crashcut_settle(j->e);
		else
			planning_job_run(j);
		unlink_live(e, j);
		m = xcalloc(1, sizeof(*m));
		m->kind = MSG_JOB_DONE;
		m->job = j;
		engine_post(e, m);
	}
}

/* One thread per parallel step, and one for the planner and the final check: the engine
 * never runs more step jobs than --parallel, so a planner job never waits behind them. */
void pool_start(struct pev *e)
{
	e->n_threads = e->parallel + 1;
	e->threads = xcalloc((size_t)e->n_threads, sizeof(*e->threads));
	for (int t = 0; t < e->n_threads; t++)
		if (pthread_create(&e->threads[t], NULL, pool_main, e))
			fatal("cannot start a worker thread");
}

void pool_stop(struct pev *e)
{
	pthread_mutex_lock(&e->pool_lock);
	e->pool_stop = true;
	pthread_cond_broadcast(&e->pool_cond);
	pthread_cond_broadcast(&e->queue_cond);
	pthread_mutex_unlock(&e->pool_lock);
	for (int t = 0; t < e->n_threads; t++)
		pthread_join(e->threads[t], NULL);
	e->n_threads = 0;
}

/* --------------------------------------------------------------- the shell */

void job_shell_reply(struct pev *e, struct job *j, enum gate_decision d, const char *json,
		     const char *how)
{
	pthread_mutex_lock(&e->pool_lock);
	if (j->shell_waiting && !j->shell_answered) {
		j->shell_answered = true;
		j->shell_decision = d;
		j->shell_how = how;
		if (j->ask_kind == GATE_ELICIT && d == GATE_APPROVE && json) {
			free(j->elicit_answer);
			j->elicit_answer = xstrdup(json);
		}
		if (d == GATE_EDIT && json) {
			cJSON *o = cJSON_Parse(json);
			const char *c = cJSON_IsString(o) ? o->valuestring : jsonx_str(o, "command");
			if (c && *c) {
				free(j->shell_command);
				j->shell_command = xstrdup(c);
			}
			cJSON_Delete(o);
		}
		pthread_cond_broadcast(&e->pool_cond);
	}
	pthread_mutex_unlock(&e->pool_lock);
}

enum gate_decision job_ask_and_wait(struct job *j)
{
	struct pev *e = j->e;
	struct msg *m = xcalloc(1, sizeof(*m));

	pthread_mutex_lock(&e->pool_lock);
	j->shell_how = NULL;
	j->shell_waiting = true;
	j->shell_answered = false;
	pthread_mutex_unlock(&e->pool_lock);
	m->kind = MSG_SHELL_ASK;
	m->job = j;
	engine_post(e, m);

	pthread_mutex_lock(&e->pool_lock);
	while (!j->shell_answered && !atomic_load(&j->cancel))
		pthread_cond_wait(&e->pool_cond, &e->pool_lock);
	j->shell_waiting = false;
	return j->shell_answered ? j->shell_decision : GATE_REJECT;
}

/* The shell gate, asked by the step's own job: only this job waits for the operator.
 * Approve runs the command, skip refuses it (the model is told), reject aborts the run; a
 * cancelled job runs nothing. An edit brings the gate back showing the edited command,
 * marked edited, as an edit of a step or a plan does (issue 29): only an approval runs
 * it (its tool.result says `edited`). */
bool job_confirm_shell(struct job *j, char **command, const struct shell_ask *ask)
{
	struct pev *e = j->e;
	enum gate_decision d;

	pthread_mutex_lock(&e->pool_lock);
	free(j->shell_command);
	j->shell_command = xstrdup(*command);
	free(j->shell_edited_from);
	j->shell_edited_from = NULL;
	free(j->shell_ask.cwd);
	free(j->shell_ask.allow_prefix);
	free(j->shell_ask.allow_why);
	free(j->shell_ask.sandbox);
	free(j->shell_ask.reason);
	j->shell_ask.cwd = xstrdup(ask ? ask->cwd : NULL);
	j->shell_ask.allow_prefix = xstrdup(ask ? ask->allow_prefix : NULL);
	j->shell_ask.allow_why = xstrdup(ask ? ask->allow_why : NULL);
	j->shell_ask.sandbox = xstrdup(ask ? ask->sandbox : NULL);
	j->shell_ask.reason = xstrdup(ask ? ask->reason : NULL);
	j->shell_ask.outside = ask && ask->outside;
	j->shell_ask.timeout_s = ask ? ask->timeout_s : 0;
	pthread_mutex_unlock(&e->pool_lock);
	for (;;) {
		d = job_ask_and_wait(j); /* returns holding pool_lock */
		if (d != GATE_EDIT || atomic_load(&j->cancel))
			break;
		if (!j->shell_edited_from)
			j->shell_edited_from = xstrdup(*command);
		/* Why the allow list did not take the model's command says nothing of this one. */
		free(j->shell_ask.allow_prefix);
		free(j->shell_ask.allow_why);
		j->shell_ask.allow_prefix = j->shell_ask.allow_why = NULL;
		pthread_mutex_unlock(&e->pool_lock);
	}
	if (d == GATE_APPROVE && j->shell_edited_from) {
		free(*command);
		*command = xstrdup(j->shell_command);
		if (j->shell_how && !strcmp(j->shell_how, "operator"))
			j->shell_how = "edited";
	}
	pthread_mutex_unlock(&e->pool_lock);
	return d == GATE_APPROVE && !atomic_load(&j->cancel);
}

static bool confirm_shell(void *ctx, char **command, const struct shell_ask *ask)
{
	return job_confirm_shell(ctx, command, ask);
}

/* ------------------------------------------------------------- step jobs */

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

/* Each job draws from its own generator, seeded by --chaos-seed, the step id and the
 * attempt, so a rehearsal replays the same failures whatever the scheduling. */
static unsigned long chaos_seed_for(unsigned long seed, const char *step_id, int attempts)
{
	unsigned long h = 1469598103934665603UL ^ seed;

	for (const unsigned char *p = (const unsigned char *)step_id; *p; p++)
		h = (h ^ *p) * 1099511628211UL;
	h ^= (unsigned long)attempts * 0x9E3779B97F4A7C15UL;
	return h ? h : 1;
}

static bool inject_chaos(void *ctx, const char *tool)
{
	struct job *j = ctx;

	(void)tool;
	return chaos_next(&j->chaos_state) < j->e->chaos;
}

static char *summarize(const char *text)
{
	size_t n = strlen(text);

	if (n <= SUMMARY_LEN)
		return xstrdup(text);
	n = SUMMARY_LEN; /* cut on a UTF-8 boundary */
	while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
		n--;
	return xasprintf("%.*s…", (int)n, text);
}

static cJSON *parse_or_string(const char *json)
{
	cJSON *v = json ? cJSON_Parse(json) : NULL;

	return v ? v : cJSON_CreateString(json ? json : "");
}

/* The built-in tools, then the MCP servers' (borrowed from `mcp`, which must outlive
 * the list). */
static const struct tool_def **offered_tools(struct pev *e, const struct mcp_offer *mcp,
					     size_t *n)
{
	size_t total;
	const struct tool_def *const *all = tool_registry(&total);
	const struct tool_def **out = xcalloc(total + mcp->n + 1, sizeof(*out));

	*n = 0;
	for (size_t i = 0; i < total; i++)
		if (!all[i]->demo_only || e->demo)
			out[(*n)++] = all[i];
	for (size_t i = 0; i < mcp->n; i++)
		out[(*n)++] = &mcp->v[i];
	return out;
}

static void on_tool_retry(void *ctx, const char *tool, int attempt, int max, long wait_ms,
			  const char *reason)
{
	struct job *j = ctx;
	cJSON *f = cJSON_CreateObject();
	char *msg = xasprintf("%s — retrying %s in %.1f s (%d/%d)",
			      reason ? reason : "transient error", tool, wait_ms / 1000.0, attempt,
			      max);

	cJSON_AddStringToObject(f, "level", "warn");
	cJSON_AddStringToObject(f, "kind", "tool_retry");
	cJSON_AddStringToObject(f, "step_id", j->step.id);
	cJSON_AddStringToObject(f, "tool", tool);
	cJSON_AddNumberToObject(f, "wait_ms", (double)wait_ms);
	cJSON_AddStringToObject(f, "message", msg);
	free(msg);
	bus_publish(j->e->bus, EV_NOTICE, f);
}

/* The output a tool.result keeps of a shell command: all of it up to this, else its
 * head and its tail (the model got up to TOOL_MAX_OUTPUT). */
#define SHELL_OUTPUT_JOURNAL (16 * 1024)

/* Where n bytes into s may be cut without splitting a UTF-8 character (backwards). */
static size_t utf8_floor(const char *s, size_t n)
{
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static cJSON *bounded_output(const char *text)
{
	size_t n = strlen(text), half = SHELL_OUTPUT_JOURNAL / 2, head, tail;
	cJSON *v;
	char *cut;

	if (n <= SHELL_OUTPUT_JOURNAL)
		return cJSON_CreateString(text);
	head = utf8_floor(text, half);
	tail = utf8_floor(text, n - half);
	cut = xasprintf("%.*s\n[… %zu bytes of output not journaled …]\n%s", (int)head, text,
			tail - head, text + tail);
	v = cJSON_CreateString(cut);
	free(cut);
	return v;
}

/* run_shell's own fields of tool.result: the command that ran, how the gate let it
 * through, its exit status (null unless it exited by itself), duration and output. */
static void add_shell_fields(cJSON *f, const struct shell_run *sr, const char *how)
{
	if (!sr->command)
		return;
	cJSON_AddStringToObject(f, "command", sr->command);
	if (sr->allow_listed)
		how = "allow_list";
	if (how)
		cJSON_AddStringToObject(f, "approval", how);
	cJSON_AddBoolToObject(f, "ran", sr->ran);
	if (sr->outside)
		cJSON_AddBoolToObject(f, "outside_sandbox", true);
	if (!sr->ran)
		return;
	if (sr->exit_status >= 0)
		cJSON_AddNumberToObject(f, "exit_status", sr->exit_status);
	else
		cJSON_AddNullToObject(f, "exit_status");
	if (sr->signal)
		cJSON_AddNumberToObject(f, "signal", sr->signal);
	if (sr->timed_out)
		cJSON_AddBoolToObject(f, "timed_out", true);
	cJSON_AddNumberToObject(f, "duration_ms", (double)sr->duration_ms);
	if (sr->output)
		cJSON_AddItemToObject(f, "output", bounded_output(sr->output));
	cJSON_AddBoolToObject(f, "sandboxed", sr->confined);
}

/* The whole output of tool call k, kept in the run folder for the operator (the event
 * holds a summary): tool.result's `output_file`. */
static void keep_output(struct job *j, int k, const struct strbuf *out, cJSON *f)
{
	char *rel = attempts_keep_output(j->adir, k, out->buf, out->len);

	if (rel)
		cJSON_AddStringToObject(f, "output_file", rel);
	free(rel);
}

/* Before a tool call: what it may change in the workspace, so that the checkpoints tell
 * this step's changes from those of the steps running beside it (attribution.c). */
static void tell_writes(struct pev *e, const char *step_id, const struct tool_def *t,
			const cJSON *input)
{
	const cJSON *path = cJSON_GetObjectItemCaseSensitive(input, "path");

	if (!e->checkpoints || (t && t->writes == TOOL_WRITES_NOTHING))
		return;
	if (t && t->writes == TOOL_WRITES_PATH && cJSON_IsString(path))
		checkpoint_step_writes(e->checkpoints, step_id, path->valuestring);
	else
		checkpoint_step_writes_any(e->checkpoints, step_id);
}

static void run_tool(struct job *j, int attempt, const struct llm_tool_call *call,
		     struct llm_tool_result *res, struct attempt_log *log)
{
	struct pev *e = j->e;
	const char *step_id = j->step.id;
	const struct tool_def *t = tool_find(call->name);
	struct tool_env env = {.ws_fd = e->ws_fd,
			       .ws_path = e->workspace,
			       .demo = e->demo,
			       .hook_ctx = j,
			       .confirm_shell = confirm_shell,
			       .on_tool_retry = on_tool_retry,
			       .shell_allow = &e->shell_allow,
			       .inject_failure = e->chaos > 0 ? inject_chaos : NULL,
			       .cancel = &j->cancel,
			       .shell_timeout_s = e->shell_timeout_s,
			       .http_max_bytes = e->http_max_bytes,
			       .http_allow_hosts = &e->http_allow_hosts,
			       .sandbox = e->sandbox};
	struct strbuf out = STRBUF_INIT;
	cJSON *input = cJSON_Parse(call->input_json ? call->input_json : "{}");
	/* Nested as deep as cJSON reads (1000 levels), the input would make tool.call's line
	 * (and an MCP gate's) deeper than the journal's readers take: the journal would stop
	 * loading. Refused as the call's error, the event holding no such tree. */
	bool too_deep = jsonx_deeper_than(input, JSONX_LINE_DEPTH);
	cJSON *f = cJSON_CreateObject();
	struct shell_run shell = {.exit_status = -1};
	bool ok = false, is_mcp = !t && mcpcalls_owns(e, call->name);
	cJSON *mcp_fields = cJSON_CreateObject();
	char *summary;

	env.shell_run = &shell;
	strbuf_init(&out);
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "call_id", call->id ? call->id : "");
	cJSON_AddStringToObject(f, "tool", call->name ? call->name : "");
	if (too_deep) {
		cJSON_Delete(input);
		input = NULL;
	}
	cJSON_AddItemToObject(f, "params", input ? cJSON_Duplicate(input, 1) : cJSON_CreateObject());
	if (is_mcp)
		mcpcalls_annotate(e, call->name, f);
	bus_publish(e->bus, EV_TOOL_CALL, f);

	if ((is_mcp || (t && (!t->demo_only || e->demo))) && input && cJSON_IsObject(input))
		tell_writes(e, step_id, t, input);
	if (is_mcp && input && cJSON_IsObject(input))
		ok = mcpcalls_run(j, call->name, input, &out, mcp_fields);
	else if (!is_mcp && (!t || (t->demo_only && !e->demo)))
		strbuf_addf(&out, "unknown tool \"%s\"", call->name ? call->name : "");
	else if (too_deep)
		strbuf_addf(&out, "the arguments of %s nest deeper than %d levels", call->name,
			    JSONX_LINE_DEPTH);
	else if (!input || !cJSON_IsObject(input))
		strbuf_addf(&out, "the arguments of %s are not a JSON object", call->name);
	else
		ok = tool_invoke(t, &env, input, &out);
	/* What write_file wrote, for the claims check: writing a file again with the bytes it
	 * already held is still this attempt's work, though no checkpoint sees a change. */
	const char *wrote = ok && t && !strcmp(t->name, "write_file") ? jsonx_str(input, "path")
								  : NULL;
	log->v = xgrow(log->v, &log->cap, log->n + 1, sizeof(*log->v));
	log->v[log->n].wrote = wrote ? xstrdup(wrote) : NULL;
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
	/* The job's reply fields were written under pool_lock before the tool woke. */
	add_shell_fields(f, &shell, j->shell_how);
	tool_shell_run_release(&shell);
	while (mcp_fields->child) {
		cJSON *it = cJSON_DetachItemViaPointer(mcp_fields, mcp_fields->child);
		cJSON_AddItemToObject(f, it->string, it);
	}
	cJSON_Delete(mcp_fields);
	keep_output(j, (int)log->n, &out, f);
	bus_publish(e->bus, EV_TOOL_RESULT, f);

	log->v[log->n].tool = xstrdup(call->name ? call->name : "");
	log->v[log->n].ok = ok;
	log->v[log->n].summary = xstrdup(summary);
	log->n++;
	/* "- NAME INPUT → ok|ERROR: SUMMARY\n", appended piece by piece: printf's cost grows
	 * with the input (a file's whole text, for write_file). */
	strbuf_adds(&log->text, "- ");
	strbuf_adds(&log->text, call->name ? call->name : "?");
	strbuf_addc(&log->text, ' ');
	strbuf_adds(&log->text, call->input_json ? call->input_json : "{}");
	strbuf_adds(&log->text, ok ? " → ok: " : " → ERROR: ");
	strbuf_adds(&log->text, summary);
	strbuf_addc(&log->text, '\n');
	free(summary);

	res->call_id = xstrdup(call->id);
	res->content = strbuf_detach(&out);
	res->is_error = !ok;
}

/* Snapshot of step i for a job: definition, dependency outputs only, critiques. */
struct job *job_new_step(struct pev *e, size_t i)
{
	struct job *j = job_new(e, JOB_STEP);
	const struct plan_step *s = &e->plan->steps[i];

	j->goal = xstrdup(e->plan->goal ? e->plan->goal : "");
	plan_step_copy(&j->step, s);
	j->deps = xcalloc(s->deps.n ? s->deps.n : 1, sizeof(*j->deps));
	for (size_t d = 0; d < s->deps.n; d++) {
		int di = plan_find(e->plan, s->deps.v[d]);
		const char *out;
		if (di < 0)
			continue;
		if (e->st[di].status == FS_SKIPPED)
			out = "(skipped by the operator: no output)";
		else
			out = e->st[di].output_json ? e->st[di].output_json : "(no output)";
		j->deps[j->n_deps].step_id = xstrdup(e->plan->steps[di].id);
		j->deps[j->n_deps++].output_json = xstrdup(out);
	}
	for (size_t c = 0; c < e->st[i].critiques.n; c++)
		strvec_push(&j->critiques, e->st[i].critiques.v[c]);
	j->attempt = e->st[i].attempts;
	j->gen = e->st[i].gen;
	j->revision = e->revision;
	j->chaos_state = chaos_seed_for(e->chaos_seed, s->id, j->attempt - 1);
	atomic_store(&j->cancel, atomic_load(&e->aborting));
	return j;
}

/* The executor's tool loop for one attempt. The final text (caller frees), or NULL when
 * the call was cancelled or failed (then *err may hold the provider's sentence). */
/* The executor's final answer (NULL when cancelled or failed: *err), and in *cut_off
 * whether the server said it was cut at the output token limit. */
static char *execute_attempt(struct job *j, int attempt, const char *step_json,
			     const char *step_text, struct attempt_log *log, bool *cut_off,
			     char **err)
{
	struct pev *e = j->e;
	const struct plan_step *step = &j->step;
	struct llm_msg *msgs = xcalloc(2 * MAX_TOOL_ROUNDS + 2, sizeof(*msgs));
	size_t n_msgs = 1, n_tools;
	struct mcp_offer mcp;
	const struct tool_def **tools;
	char *final = NULL;

	mcp_hub_offer(e->mcp, &mcp); /* waits for servers still starting */
	tools = offered_tools(e, &mcp, &n_tools);
	msgs[0].kind = LLM_MSG_USER;
	msgs[0].text = prompt_execute(j->goal, step_text, j->deps, j->n_deps, &j->critiques, attempt);
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

		if (engine_call_model(e, &req, &res, &j->cancel, err) != PROVIDER_OK) {
			llm_response_release(&res);
			break;
		}
		if (!res.n_calls || round == MAX_TOOL_ROUNDS) {
			*cut_off = llm_stop_is_cutoff(res.stop_reason);
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
				run_tool(j, attempt, &am->calls[c], &rm->results[c], log);
		}
		if (atomic_load(&j->cancel))
			break;
	}
	for (size_t m = 0; m < n_msgs; m++)
		llm_msg_release(&msgs[m]);
	free(msgs);
	free((void *)tools);
	mcp_offer_release(&mcp);
	if (final && atomic_load(&j->cancel)) {
		free(final);
		final = NULL;
	}
	return final;
}

static void publish_verifying(struct job *j, int attempt)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", j->step.id);
	cJSON_AddStringToObject(f, "state", fold_state_name(FS_VERIFYING));
	cJSON_AddStringToObject(f, "reason", "the verifier checks the attempt");
	cJSON_AddNumberToObject(f, "attempt", attempt);
	bus_publish(j->e->bus, EV_STEP_STATE, f);
}

/* --------------------------------------------------------- checkpoints */

#define CHANGES_DIFF_MAX (16 * 1024) /* of an attempt's diff, the verifier sees this much */
#define CHANGES_FILES_MAX 500        /* files listed in one step.changes */
#define CHANGES_TELL_MAX 20          /* paths named in one notice */

static void cp_notice(struct job *j, const char *level, const char *kind, const char *msg)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "level", level);
	cJSON_AddStringToObject(f, "kind", kind);
	cJSON_AddStringToObject(f, "step_id", j->step.id);
	cJSON_AddStringToObject(f, "message", msg);
	bus_publish(j->e->bus, EV_NOTICE, f);
}

bool engine_checkpoint_warning_new(struct pev *e, const char *warning)
{
	bool fresh;

	pthread_mutex_lock(&e->acct);
	fresh = strset_add(&e->checkpoint_told, warning);
	pthread_mutex_unlock(&e->acct);
	return fresh;
}

/* Warnings of a checkpoint (a file left out for its size, …), each told once a run. */
static void cp_tell_warnings(struct job *j, const struct strvec *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (engine_checkpoint_warning_new(j->e, w->v[i]))
			cp_notice(j, "warn", "checkpoint", w->v[i]);
}

static char *name_paths(const struct strvec *v)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	for (size_t i = 0; i < v->n && i < CHANGES_TELL_MAX; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", v->v[i]);
	if (v->n > CHANGES_TELL_MAX)
		strbuf_addf(&sb, " and %zu more", v->n - CHANGES_TELL_MAX);
	return strbuf_detach(&sb);
}

static void tell_restored(struct job *j, const char *step_id, const struct strvec *restored,
			  const char *why)
{
	char *names, *msg;
	cJSON *f, *a;

	if (!restored->n)
		return;
	names = name_paths(restored);
	msg = xasprintf("step %s %s: %zu file%s restored (%s)", step_id, why, restored->n,
			restored->n == 1 ? "" : "s", names);
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "level", "info");
	cJSON_AddStringToObject(f, "kind", "checkpoint_restore");
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddStringToObject(f, "message", msg);
	a = cJSON_AddArrayToObject(f, "paths");
	for (size_t i = 0; i < restored->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(restored->v[i]));
	bus_publish(j->e->bus, EV_NOTICE, f);
	free(msg);
	free(names);
}

static void tell_conflict(struct job *j, const char *step_id, const char *path, bool asked)
{
	char *msg = xasprintf("step %s: %s was changed by someone else since the step's last "
			      "attempt, or while another step ran beside it; it is left as it "
			      "is, not restored%s",
			      step_id, path, asked ? " (kept at the rewind gate)" : "");
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "level", "warn");
	cJSON_AddStringToObject(f, "kind", "checkpoint_conflict");
	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddStringToObject(f, "path", path);
	cJSON_AddStringToObject(f, "message", msg);
	bus_publish(j->e->bus, EV_NOTICE, f);
	free(msg);
}

#define REWIND_DIFF_MAX (16 * 1024) /* of the rewind gate's diff */

/* The rewind gate's fields: every conflicting path with the step whose it was and the
 * checkpoint it would go back to, the diff from now to that, and the asking step. */
static char *rewind_fields(struct job *j, const struct cp_restored *v, size_t n)
{
	cJSON *f = cJSON_CreateObject(), *paths = cJSON_AddArrayToObject(f, "paths");
	struct strbuf diff = STRBUF_INIT;
	bool cut = false;
	char *out;

	strbuf_init(&diff);
	for (size_t k = 0; k < n; k++) {
		for (size_t c = 0; c < v[k].conflicts.n; c++) {
			cJSON *o = cJSON_CreateObject();
			char *err = NULL;

			cJSON_AddStringToObject(o, "path", v[k].conflicts.v[c]);
			cJSON_AddStringToObject(o, "of_step", v[k].step_id);
			cJSON_AddStringToObject(o, "checkpoint", v[k].bases.v[c]);
			cJSON_AddItemToArray(paths, o);
			if (!checkpoint_conflict_diff(j->e->checkpoints, v[k].bases.v[c],
						      v[k].conflicts.v[c], REWIND_DIFF_MAX, &diff,
						      &cut, &err))
				strbuf_addf(&diff, "%s\n", err ? err : "no diff");
			free(err);
		}
	}
	cJSON_AddStringToObject(f, "diff", diff.buf ? diff.buf : "");
	cJSON_AddBoolToObject(f, "diff_cut", cut);
	cJSON_AddItemToObject(f, "step", plan_step_to_json(&j->step));
	out = cJSON_PrintUnformatted(f);
	cJSON_Delete(f);
	strbuf_release(&diff);
	return out;
}

/* Files a restore would write over someone else's change: the rewind gate decides
 * (restore, or keep theirs); without it they are kept and named, as before. */
static void resolve_conflicts(struct job *j, const struct cp_restored *v, size_t n)
{
	struct pev *e = j->e;
	enum gate_decision d = GATE_SKIP;
	size_t total = 0;
	bool asked = false;

	/* Changed beside another step's attempt: whose it is is not known, so it is never
	 * the step's to restore (nor to offer restoring); kept and named. */
	for (size_t k = 0; k < n; k++)
		for (size_t c = 0; c < v[k].shared.n; c++)
			tell_conflict(j, v[k].step_id, v[k].shared.v[c], false);
	for (size_t k = 0; k < n; k++)
		total += v[k].conflicts.n;
	if (!total)
		return;
	if (gates_enabled(e, GATE_REWIND)) {
		d = rewindgate_ask(j, rewind_fields(j, v, n));
		asked = true;
	}
	for (size_t k = 0; k < n; k++) {
		struct strvec restored = STRVEC_INIT;

		for (size_t c = 0; c < v[k].conflicts.n; c++) {
			char *err = NULL;

			if (d != GATE_APPROVE) {
				tell_conflict(j, v[k].step_id, v[k].conflicts.v[c], asked);
			} else if (!checkpoint_restore_over(e->checkpoints, j->step.id,
							    v[k].bases.v[c], v[k].conflicts.v[c],
							    &restored, &err)) {
				cp_notice(j, "warn", "checkpoint_conflict",
					  err ? err : "a file was not restored");
			}
			free(err);
		}
		tell_restored(j, v[k].step_id, &restored,
			      "had files restored over someone else's change at the rewind gate");
		strvec_clear(&restored);
	}
}

/*
 * The "before" checkpoint is journaled, and forced to the disk, before the attempt's tools
 * can change anything: if the process dies in the attempt, --resume knows what to compare
 * the workspace with (crash_cut.c). Every event is written by the publishing thread, so
 * the attempt's first tool.call can only come after this line.
 */
static void publish_before(struct job *j, int attempt, const char *before,
			   const struct strvec *series)
{
	cJSON *f = cJSON_CreateObject();

	cJSON_AddStringToObject(f, "step_id", j->step.id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "before", before);
	if (series->n) {
		cJSON *a = cJSON_AddArrayToObject(f, "restored_series");
		for (size_t i = 0; i < series->n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(series->v[i]));
	}
	bus_publish(j->e->bus, EV_STEP_CHECKPOINT, f);
	journal_sync(j->e->journal);
}

/* What to say of a step's files put back before its attempt: a step whose attempt a stop
 * cut off (crash_cut.c) is told so, once. Caller frees. */
static char *restored_why(struct job *j)
{
	int cut = crashcut_take_told(j->e, j->step.id);

	if (cut > 0)
		return xasprintf("starts again from where it first started, undoing its attempt "
				 "%d that the stop cut off",
				 cut);
	return xstrdup("starts again from where it first started");
}

/*
 * Before an attempt: the files that steps a replan removed changed are put back, then
 * those the step's own earlier attempts changed (a retry, or a re-run after a pass, an
 * edit, a stale input or a replan), as they were before the attempt that first changed
 * them, so the attempt starts clean; a file someone else changed since goes to the rewind
 * gate (or is left alone and named). Then the "before" checkpoint, journaled as
 * step.checkpoint; before[0] is NUL when there is none (checkpoints off or failing).
 * `series` gets the ids of the series restored (step.changes' and step.checkpoint's
 * `restored_series`: --resume rebuilds the series from it).
 */
/* A checkpoint that failed: an error each time, or — once the store is off for the run (a
 * full disk) — one warning that the run goes on without checkpoints. */
static void tell_take_failed(struct job *j, const char *err)
{
	struct pev *e = j->e;

	if (checkpoint_is_off(e->checkpoints)) {
		if (!atomic_exchange(&e->checkpoint_err_told, true))
			cp_notice(j, "warn", "checkpoint", err ? err : "checkpoints are off");
		return;
	}
	cp_notice(j, "error", "checkpoint", err ? err : "the checkpoint failed");
}

static void checkpoint_before(struct job *j, int attempt, char before[CP_ID_LEN + 1],
			      struct strvec *series, struct strvec *kept)
{
	struct pev *e = j->e;
	struct strvec warnings = STRVEC_INIT;
	struct cp_restored *all = NULL, own;
	size_t n;
	char *err = NULL;

	before[0] = '\0';
	if (!e->checkpoints) {
		if (e->checkpoint_err && !atomic_exchange(&e->checkpoint_err_told, true))
			cp_notice(j, "warn", "checkpoint", e->checkpoint_err);
		return;
	}
	n = checkpoint_series_restore_orphans(e->checkpoints, &all, &err);
	for (size_t i = 0; i < n; i++) {
		strvec_push(series, all[i].step_id);
		tell_restored(j, all[i].step_id, &all[i].restored, "left the plan");
	}
	if (checkpoint_series_restore_step(e->checkpoints, j->step.id, &own, &err)) {
		char *why = restored_why(j);
		strvec_push(series, j->step.id);
		tell_restored(j, j->step.id, &own.restored, why);
		free(why);
		all = xrealloc(all, (n + 1) * sizeof(*all));
		all[n++] = own;
	} else {
		cp_restored_release(&own);
	}
	/* What the restores left as it was (someone else's change, or a shared one): not
	 * back to before the step, so an artifact among them may be the step's earlier
	 * work (verify_deterministic does not ask this attempt to change it again). */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < all[i].conflicts.n; k++)
			strvec_push(kept, all[i].conflicts.v[k]);
		for (size_t k = 0; k < all[i].shared.n; k++)
			strvec_push(kept, all[i].shared.v[k]);
	}
	resolve_conflicts(j, all, n);
	cp_restored_free(all, n);
	if (err) {
		cp_notice(j, "error", "checkpoint", err);
		free(err);
		err = NULL;
	}
	if (!checkpoint_take_step(e->checkpoints, j->step.id, true, before, &warnings, &err)) {
		tell_take_failed(j, err);
		before[0] = '\0';
	} else {
		publish_before(j, attempt, before, series);
	}
	cp_tell_warnings(j, &warnings);
	free(err);
	strvec_clear(&warnings);
}

/* After an attempt (whatever its end): the "after" checkpoint, what changed, published as
 * step.changes and noted in the step's series. false when there is nothing to say. */
static bool checkpoint_after(struct job *j, int attempt, const char *before,
			     const struct strvec *series, struct cp_changes *ch)
{
	struct pev *e = j->e;
	struct strvec warnings = STRVEC_INIT;
	char after[CP_ID_LEN + 1];
	char *err = NULL;
	cJSON *f;

	if (!e->checkpoints || !before[0])
		return false;
	if (!checkpoint_take_step(e->checkpoints, j->step.id, false, after, &warnings, &err) ||
	    !checkpoint_diff_step(e->checkpoints, j->step.id, before, after, CHANGES_DIFF_MAX, ch,
				  &err)) {
		tell_take_failed(j, err);
		cp_tell_warnings(j, &warnings);
		strvec_clear(&warnings);
		free(err);
		return false;
	}
	cp_tell_warnings(j, &warnings);
	strvec_clear(&warnings);
	checkpoint_series_note(e->checkpoints, j->step.id, before, after, ch);
	f = worker_changes_fields(e, j->step.id, attempt, before, after, series, ch);
	bus_publish(e->bus, EV_STEP_CHANGES, f);
	return true;
}

cJSON *worker_changes_fields(struct pev *e, const char *step_id, int attempt, const char *before,
			     const char *after, const struct strvec *series,
			     const struct cp_changes *ch)
{
	cJSON *f = cJSON_CreateObject(), *files;
	int shared = 0;
	char *stat;

	cJSON_AddStringToObject(f, "step_id", step_id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	cJSON_AddStringToObject(f, "before", before);
	cJSON_AddStringToObject(f, "after", after);
	if (series && series->n) {
		cJSON *a = cJSON_AddArrayToObject(f, "restored_series");
		for (size_t i = 0; i < series->n; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(series->v[i]));
	}
	files = cJSON_AddArrayToObject(f, "files");
	for (size_t i = 0; i < ch->n && i < CHANGES_FILES_MAX; i++) {
		const struct cp_file *cf = &ch->v[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", cf->path);
		cJSON_AddStringToObject(o, "change", cp_change_name(cf->change));
		/* Under --parallel: changed while another step's attempt ran too. */
		if (checkpoint_path_shared(e->checkpoints, step_id, cf->path)) {
			cJSON_AddBoolToObject(o, "shared", true);
			shared++;
		}
		cJSON_AddNumberToObject(o, "plus", (double)cf->plus);
		cJSON_AddNumberToObject(o, "minus", (double)cf->minus);
		if (cf->binary) {
			cJSON_AddBoolToObject(o, "binary", true);
			cJSON_AddNumberToObject(o, "old_size", (double)cf->old_size);
			cJSON_AddNumberToObject(o, "new_size", (double)cf->new_size);
		}
		cJSON_AddItemToArray(files, o);
	}
	if (ch->n > CHANGES_FILES_MAX)
		cJSON_AddNumberToObject(f, "files_more", (double)(ch->n - CHANGES_FILES_MAX));
	if (shared)
		cJSON_AddNumberToObject(f, "shared", (double)shared);
	cJSON_AddNumberToObject(f, "plus", (double)ch->plus);
	cJSON_AddNumberToObject(f, "minus", (double)ch->minus);
	stat = cp_changes_stat(ch);
	cJSON_AddStringToObject(f, "stat", stat);
	free(stat);
	return f;
}

/* The diff as the verifier gets it: bounded, with a note when it was cut. */
static char *diff_for_verifier(const struct cp_changes *ch)
{
	if (!ch->diff_cut)
		return xstrdup(ch->diff ? ch->diff : "");
	return xasprintf("%s\n[the diff is cut here at %d KiB: %zu files changed in all, +%ld "
			 "-%ld]\n",
			 ch->diff, CHANGES_DIFF_MAX / 1024, ch->n, ch->plus, ch->minus);
}

/* One attempt of one step: execute, then verify (deterministic, then the model). The
 * engine published its step.start and routes what comes back (pass, retry, replan). */
void job_run_step(struct job *j)
{
	struct pev *e = j->e;
	const char *id = j->step.id;
	struct attempt_log log = {0};
	struct exec_result *r;
	struct verdict *v;
	char *text, *perr = NULL, *err = NULL;
	size_t not_judged = (size_t)-1;
	int attempt = j->attempt;
	bool cut_off = false, have_changes;
	char before[CP_ID_LEN + 1], *diff = NULL, *step_json, *step_text;
	struct cp_changes changes = {0};
	struct strvec series = STRVEC_INIT, kept = STRVEC_INIT;
	cJSON *f;

	if (atomic_load(&j->cancel)) {
		j->outcome = OUT_CANCELLED;
		return;
	}
	strbuf_init(&log.text);
	j->adir = attempts_dir_new(e->attempts, id, attempt);
	checkpoint_before(j, attempt, before, &series, &kept);
	log.kept = &kept;
	/* The step as the attempt's calls show it, made once for the executor and the
	 * verifier: compact for the request, pretty for the prompts. */
	step_json = plan_step_to_string(&j->step, false);
	step_text = plan_step_to_string(&j->step, true);
	text = execute_attempt(j, attempt, step_json, step_text, &log, &cut_off, &err);
	/* Cancelled or failed attempts changed files too: the next attempt restores them. */
	have_changes = checkpoint_after(j, attempt, before, &series, &changes);
	strvec_clear(&series);
	if (have_changes) {
		log.changes = &changes;
		diff = diff_for_verifier(&changes);
	}
	if (!text) {
		free(step_json);
		free(step_text);
		cp_changes_release(&changes);
		free(diff);
		attempt_log_release(&log);
		strvec_clear(&kept);
		j->outcome = err ? OUT_ERROR : OUT_CANCELLED;
		j->failure = err;
		return;
	}
	r = exec_result_parse(text, &perr);
	if (!r && cut_off) {
		/* The critique tells the next attempt why: it ran out of room, not of sense. */
		char *cut = xasprintf("the answer was cut off at the output token limit, so %s; "
				      "write a shorter final answer",
				      perr);
		free(perr);
		perr = cut;
	}
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "step_id", id);
	cJSON_AddNumberToObject(f, "attempt", attempt);
	if (r)
		cJSON_AddItemToObject(f, "result", parse_or_string(r->json));
	else
		cJSON_AddStringToObject(f, "result", text);
	/* Copies first: whoever reads step.output finds the attempt's artifacts kept. */
	if (r)
		attempts_keep_artifacts(j->adir, e->ws_fd, &r->artifacts);
	bus_publish(e->bus, EV_STEP_OUTPUT, f);
	if (r) {
		j->result_json = xstrdup(r->json);
		j->output_json = xstrdup(r->output_json);
	}
	free(text);

	publish_verifying(j, attempt);
	v = verify_deterministic(e, r, perr, &log);
	engine_publish_verdict(e, id, attempt, "deterministic", v, (size_t)-1);
	if (v->action == VERDICT_PASS) {
		verdict_free(v);
		v = verify_model(j, attempt, step_json, step_text, r->json, log.text.buf, diff,
				 &not_judged, &err);
		if (v)
			engine_publish_verdict(e, id, attempt, "model", v, not_judged);
	}
	exec_result_free(r);
	free(perr);
	free(step_json);
	free(step_text);
	attempt_log_release(&log);
	strvec_clear(&kept);
	cp_changes_release(&changes);
	free(diff);
	if (!v) {
		j->outcome = err ? OUT_ERROR : OUT_CANCELLED;
		j->failure = err;
		return;
	}
	if (atomic_load(&j->cancel))
		j->outcome = OUT_CANCELLED;
	else if (v->action == VERDICT_PASS)
		j->outcome = OUT_PASSED;
	else
		j->outcome = v->action == VERDICT_REPLAN ? OUT_REPLAN : OUT_RETRY;
	/* A pass keeps the step's series: what it changed stays, unless the step runs again
	 * (a re-run, an edit, a stale input, a replan), which starts where it first did. */
	if (j->outcome == OUT_RETRY || j->outcome == OUT_REPLAN)
		j->failure = xstrdup(v->feedback ? v->feedback : "verification failed");
	verdict_free(v);
}
