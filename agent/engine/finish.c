/* finish — the end of a run: the whole-plan check against success_criteria and the
 * synthesis of the answer from verified results only (a job on the pool), then run.final
 * with the metrics. A partial run's answer starts with "PARTIAL:".
 *
 * A final call that fails does not throw away what was verified: a failed check is a gap
 * (the synthesis still runs), and a failed synthesis gives a PARTIAL answer made of the
 * verified results as they are (exit 2). Only a run with nothing verified ends in an
 * error when its synthesis fails. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "result.h"
#include "strbuf.h"
#include "xalloc.h"

/* The lines are plain joins: built with adds, not a printf each. */
static void collect_results(struct pev *e, struct strvec *results, struct strvec *gaps)
{
	for (size_t i = 0; i < e->plan->n_steps; i++) {
		const struct plan_step *s = &e->plan->steps[i];
		const struct step_state *st = &e->st[i];
		struct strbuf sb;

		strbuf_init(&sb);
		if (st->status == FS_PASSED) {
			strbuf_addc(&sb, '[');
			strbuf_adds(&sb, s->id ? s->id : "");
			strbuf_adds(&sb, "] ");
			strbuf_adds(&sb, s->name ? s->name : "");
			strbuf_adds(&sb, ": ");
			strbuf_adds(&sb, st->output_json ? st->output_json : "");
			strvec_take(results, strbuf_detach(&sb));
			continue;
		}
		strbuf_adds(&sb, s->id ? s->id : "");
		strbuf_adds(&sb, " (");
		strbuf_adds(&sb, s->name ? s->name : "");
		strbuf_adds(&sb, st->status == FS_FAIL_ACCEPTED
					 ? "): fail-accepted after failing verification"
				 : st->status == FS_SKIPPED ? "): skipped"
							    : "): not run");
		strvec_take(gaps, strbuf_detach(&sb));
	}
}

void finish_start(struct pev *e)
{
	struct job *j = job_new(e, JOB_FINISH);

	collect_results(e, &j->results, &j->gaps);
	j->goal = xstrdup(e->task);
	j->plan = plan_clone(e->plan);
	e->finish_job = j;
	e->phase = PH_FINISHING;
	pool_submit(e, j);
}

/* Pool thread. On cancellation or a failed call, answer stays NULL (err may say why). */
void finish_job_run(struct job *j)
{
	struct pev *e = j->e;

	if (j->results.n) {
		struct llm_msg msg = {.kind = LLM_MSG_USER,
				      .text = prompt_final_check(j->plan, &j->results)};
		struct llm_request req = {.role = ROLE_VERIFIER,
					  .purpose = PURPOSE_FINAL_CHECK,
					  .system = prompt_system_verifier(),
					  .msgs = &msg,
					  .n_msgs = 1,
					  .want_json = true,
					  .max_tokens = MAX_TOKENS_STEP};
		struct llm_response res = {0};
		int rc = engine_call_model(e, &req, &res, &j->cancel, &j->err);

		if (rc == PROVIDER_OK) {
			char *why = NULL;
			struct verdict *check = verdict_parse(res.text, &why);
			if (check) {
				j->check_done = true;
				j->check_passed = check->overall_pass;
				j->check_feedback = xstrdup(check->feedback);
			} else {
				bus_notice(e->bus, "warn", NULL,
					   "the whole-plan check could not be read: %s", why);
			}
			verdict_free(check);
			free(why);
		}
		llm_response_release(&res);
		llm_msg_release(&msg);
		if (rc == PROVIDER_CANCELLED || atomic_load(&j->cancel))
			return;
		if (rc != PROVIDER_OK) {
			/* Not checked as a whole: the answer says so and the run is partial. */
			strvec_pushf(&j->gaps, "the whole-plan check failed: %s",
				     j->err ? j->err : "no reason given");
			free(j->err);
			j->err = NULL;
		}
	}
	{
		struct llm_msg msg = {.kind = LLM_MSG_USER,
				      .text = prompt_synthesize(j->goal, j->plan, &j->results,
								&j->gaps)};
		struct llm_request req = {.role = ROLE_PLANNER,
					  .purpose = PURPOSE_SYNTHESIZE,
					  .system = prompt_system_synthesizer(),
					  .msgs = &msg,
					  .n_msgs = 1,
					  .max_tokens = MAX_TOKENS_PLAN};
		struct llm_response res = {0};

		if (engine_call_model(e, &req, &res, &j->cancel, &j->err) == PROVIDER_OK &&
		    !atomic_load(&j->cancel)) {
			j->answer = res.text ? res.text : xstrdup("");
			res.text = NULL;
		}
		llm_response_release(&res);
		llm_msg_release(&msg);
	}
}

static cJSON *metrics_json(struct pev *e)
{
	cJSON *m = cJSON_CreateObject(), *tok, *cost;
	int passed = 0, fa = 0, skipped = 0, attempts = 0;
	double total = 0;
	bool known = true;

	for (size_t i = 0; i < e->plan->n_steps; i++) {
		attempts += e->st[i].attempts;
		passed += e->st[i].status == FS_PASSED;
		fa += e->st[i].status == FS_FAIL_ACCEPTED;
		skipped += e->st[i].status == FS_SKIPPED;
	}
	cJSON_AddNumberToObject(m, "steps_total", (double)e->plan->n_steps);
	cJSON_AddNumberToObject(m, "steps_passed", passed);
	cJSON_AddNumberToObject(m, "steps_fail_accepted", fa);
	cJSON_AddNumberToObject(m, "steps_skipped", skipped);
	cJSON_AddNumberToObject(m, "total_attempts", attempts);
	cJSON_AddNumberToObject(m, "replans", e->replans);
	tok = cJSON_AddObjectToObject(m, "tokens");
	cost = cJSON_AddObjectToObject(m, "cost_usd");
	pthread_mutex_lock(&e->acct);
	for (int r = 0; r < ROLE__COUNT; r++) {
		cJSON *t = cJSON_AddObjectToObject(tok, llm_role_name(r));
		cJSON_AddNumberToObject(t, "input", (double)e->usage[r].input);
		cJSON_AddNumberToObject(t, "output", (double)e->usage[r].output);
		cJSON_AddNumberToObject(t, "cached", (double)e->usage[r].cached);
		if (e->usage[r].cost_unknown) {
			cJSON_AddNullToObject(cost, llm_role_name(r));
			known = false;
		} else {
			cJSON_AddNumberToObject(cost, llm_role_name(r), e->usage[r].cost);
		}
		total += e->usage[r].cost;
	}
	pthread_mutex_unlock(&e->acct);
	cJSON_AddNumberToObject(cost, "total", total);
	cJSON_AddBoolToObject(m, "cost_known", known);
	return m;
}

void finish_job_done(struct pev *e, struct job *j)
{
	bool partial;
	char *answer;
	cJSON *f, *fc;

	if (j != e->finish_job)
		return; /* cancelled by an edit or a re-run: the run went back to work */
	e->finish_job = NULL;
	if (e->phase != PH_FINISHING)
		return;
	partial = j->gaps.n > 0;
	if (!j->answer && j->err && !atomic_load(&e->aborting) && j->results.n > 0) {
		/* The synthesis failed: the verified results are the answer, as they are. */
		char *r = strvec_join(&j->results, "\n\n");

		strvec_pushf(&j->gaps, "the synthesis call failed: %s", j->err);
		j->answer = xasprintf("The verified results of the steps, as the executor gave "
				      "them (no summary could be written):\n\n%s",
				      r);
		free(r);
		partial = true;
	}
	if (!j->answer) {
		/* Cancelled (quit, abort), or failed with nothing verified: no final answer
		 * is made up. */
		if (j->err && !atomic_load(&e->aborting))
			engine_end(e, PEV_EXIT_ERROR, "the final synthesis call failed: %s", j->err);
		else if (!atomic_load(&e->aborting) && !e->paused)
			finish_start(e);
		return;
	}
	if (partial && strncmp(j->answer, "PARTIAL:", 8) != 0) {
		/* The contract holds even if the model forgot: gaps are named up front. */
		char *g = strvec_join(&j->gaps, "; ");
		answer = xasprintf("PARTIAL: not verified: %s\n\n%s", g, j->answer);
		free(g);
	} else {
		answer = xstrdup(j->answer);
	}
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "answer", answer);
	cJSON_AddBoolToObject(f, "partial", partial);
	fc = cJSON_AddObjectToObject(f, "final_check");
	if (j->check_done) {
		cJSON_AddBoolToObject(fc, "passed", j->check_passed);
		if (j->check_feedback)
			cJSON_AddStringToObject(fc, "feedback", j->check_feedback);
		else
			cJSON_AddNullToObject(fc, "feedback");
	} else {
		cJSON_AddNullToObject(fc, "passed");
		cJSON_AddNullToObject(fc, "feedback");
	}
	cJSON_AddItemToObject(f, "metrics", metrics_json(e));
	bus_publish(e->bus, EV_RUN_FINAL, f);
	free(answer);
	if (partial) {
		char *g = strvec_join(&j->gaps, "; ");
		engine_end(e, PEV_EXIT_PARTIAL, "finished with gaps: %s", g);
		free(g);
	} else {
		engine_end(e, PEV_EXIT_OK, NULL);
	}
}
