/* pev_resume — rebuilding a run's state from its journal for --resume: plan revision,
 * step states, passed outputs, critiques, spend, open gates. */
#include "config.h"

#include "pev_impl.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "events.h"
#include "gate.h"
#include "journal.h"
#include "jsonx.h"
#include "xalloc.h"

struct rebuild {
	struct pev *e;
	char *err;
	bool ended;
	char *end_status;
	int proposed_rev;
	char *proposed;
	char *proposed_failed, *proposed_failure; /* of a replan proposal */
	unsigned long max_gate_id;
	bool final_seen;  /* run.final written: only run.end is missing */
	bool final_partial;
};

static bool rebuild_visit(void *ctx, const struct event *ev)
{
	struct rebuild *rb = ctx;
	struct pev *e = rb->e;
	cJSON *o = cJSON_Parse(ev->json);
	const char *sid = ev->step_id;
	int i = (sid && e->plan) ? plan_find(e->plan, sid) : -1;
	double num;

	if (!o)
		return true;
	switch (ev->type) {
	case EV_RUN_START:
		if (jsonx_str(o, "task")) {
			free(e->task);
			e->task = xstrdup(jsonx_str(o, "task"));
		}
		break;
	case EV_PLAN_PROPOSED: {
		cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "plan");
		free(rb->proposed);
		free(rb->proposed_failed);
		free(rb->proposed_failure);
		rb->proposed = p ? jsonx_print(p) : NULL;
		rb->proposed_rev = jsonx_num(o, "revision", &num) ? (int)num : 0;
		rb->proposed_failed = xstrdup(jsonx_str(o, "failed_step"));
		rb->proposed_failure = xstrdup(jsonx_str(o, "failure"));
		if (!strcmp(jsonx_str(o, "reason") ? jsonx_str(o, "reason") : "", "replan"))
			e->replans++;
		break;
	}
	case EV_PLAN_ADOPTED: {
		cJSON *pj = cJSON_GetObjectItemCaseSensitive(o, "plan");
		struct strvec errors = STRVEC_INIT;
		struct plan *np = pj ? plan_from_json(pj, &errors) : NULL;
		strvec_clear(&errors);
		if (np) {
			/* Silence: the adoption is re-derived, not re-published. */
			struct step_state *nst = xcalloc(np->n_steps, sizeof(*nst));
			cJSON *kept = cJSON_GetObjectItemCaseSensitive(o, "kept"), *k;
			for (size_t s = 0; s < np->n_steps; s++) {
				int old = e->plan ? plan_find(e->plan, np->steps[s].id) : -1;
				if (old < 0)
					continue;
				nst[s].attempts = e->st[old].attempts;
				cJSON_ArrayForEach(k, kept)
				{
					if (cJSON_IsString(k) &&
					    !strcmp(k->valuestring, np->steps[s].id)) {
						nst[s].status = e->st[old].status;
						nst[s].result_json = xstrdup(e->st[old].result_json);
						nst[s].output_json = xstrdup(e->st[old].output_json);
					}
				}
			}
			if (e->plan)
				for (size_t s = 0; s < e->plan->n_steps; s++)
					pev_step_state_release(&e->st[s]);
			free(e->st);
			plan_free(e->plan);
			e->plan = np;
			e->st = nst;
			pev_index_plan(e);
			e->revision = jsonx_num(o, "revision", &num) ? (int)num : 0;
			free(rb->proposed);
			rb->proposed = NULL;
		}
		break;
	}
	case EV_STEP_START:
		if (i >= 0 && jsonx_num(o, "attempt", &num)) {
			e->st[i].attempts = (int)num;
			e->st[i].round_attempts++;
			e->st[i].status = SS_RUNNING;
		}
		break;
	case EV_STEP_OUTPUT:
		if (i >= 0) {
			cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "result");
			cJSON *so = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "step_output") : NULL;
			free(e->st[i].result_json);
			free(e->st[i].output_json);
			e->st[i].result_json = jsonx_print(r);
			e->st[i].output_json = so ? jsonx_print(so) : jsonx_print(r);
		}
		break;
	case EV_VERIFY_VERDICT: {
		const char *action = jsonx_str(o, "action");
		const char *fb = jsonx_str(o, "feedback");
		if (i >= 0 && action && strcmp(action, "pass") != 0)
			strvec_push(&e->st[i].critiques, fb ? fb : "verification failed");
		break;
	}
	case EV_STEP_END: {
		const char *st = jsonx_str(o, "status");
		if (i >= 0 && st) {
			e->st[i].status = !strcmp(st, "passed")    ? SS_PASSED
					  : !strcmp(st, "skipped") ? SS_SKIPPED
								   : SS_FAIL_ACCEPTED;
			if (e->st[i].status == SS_PASSED)
				pev_reuse_add(e, pev_reuse_key(e, e->plan, (size_t)i),
					  e->st[i].result_json, e->st[i].output_json);
		}
		break;
	}
	case EV_STEP_EDIT:
		if (i >= 0) {
			cJSON *after = cJSON_GetObjectItemCaseSensitive(o, "after");
			struct strvec errors = STRVEC_INIT;
			struct plan_step ns;
			if (after && plan_step_from_json(after, &ns, &errors)) {
				plan_step_free_fields(&e->plan->steps[i]);
				e->plan->steps[i] = ns;
				pev_index_plan(e);
				if (e->st[i].status != SS_PENDING)
					pev_reset_with_dependents(e, (size_t)i);
			}
			strvec_clear(&errors);
		}
		break;
	case EV_LLM_CALL: {
		const char *role = jsonx_str(o, "role");
		int r = llm_role_from_name(role);
		if (r >= 0) {
			struct role_usage *u = &e->usage[r];
			u->calls++;
			if (jsonx_num(o, "input_tokens", &num))
				u->input += (long)num;
			if (jsonx_num(o, "output_tokens", &num))
				u->output += (long)num;
			if (jsonx_num(o, "cached_tokens", &num))
				u->cached += (long)num;
			if (jsonx_num(o, "cost_usd", &num)) {
				u->cost += num;
				e->spent += num;
			} else if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "cost_usd"))) {
				u->cost_unknown = true;
			}
		}
		break;
	}
	case EV_GATE_OPEN: {
		const char *gate = jsonx_str(o, "gate");
		if (jsonx_num(o, "gate_id", &num) && num > rb->max_gate_id)
			rb->max_gate_id = (unsigned long)num;
		/* The budget gate is asked once per run, resumed or not. */
		if (gate && !strcmp(gate, "budget"))
			e->budget_asked = true;
		break;
	}
	case EV_RUN_FINAL: {
		bool partial = false;
		jsonx_bool(o, "partial", &partial);
		rb->final_seen = true;
		rb->final_partial = partial;
		break;
	}
	case EV_RUN_END:
		rb->ended = true;
		free(rb->end_status);
		rb->end_status = xstrdup(jsonx_str(o, "status"));
		break;
	default:
		break;
	}
	cJSON_Delete(o);
	return true;
}

/* Rebuilds the engine state from the journal. false + *err when it cannot resume. */
bool pev_rebuild(struct pev *e, char **err)
{
	char *path = xasprintf("%s/journal.jsonl", e->run_dir);
	struct journal_load_info info = {0};
	struct rebuild rb = {.e = e};
	bool ok = journal_load(path, rebuild_visit, &rb, &info, err);

	if (ok && rb.ended && rb.end_status &&
	    (!strcmp(rb.end_status, "passed") || !strcmp(rb.end_status, "partial"))) {
		*err = xasprintf("run %s already finished (%s); use --replay to browse it",
				 e->run_id, rb.end_status);
		ok = false;
	}
	if (ok && info.torn_tail && !journal_repair(path, &info, err))
		ok = false;
	if (ok) {
		bus_set_next_seq(e->bus, info.last_seq + 1);
		gatekeeper_set_next_id(e->gates, rb.max_gate_id + 1);
		for (size_t i = 0; e->plan && i < e->plan->n_steps; i++) {
			/* An attempt that was in flight starts over, and does not use up one of
			 * the step's retries: it never got a verdict. */
			if (e->st[i].status == SS_RUNNING) {
				e->st[i].status = SS_PENDING;
				if (e->st[i].round_attempts > 0)
					e->st[i].round_attempts--;
			}
		}
		if (rb.final_seen) {
			/* Only run.end was missing: nothing is asked or paid again. */
			e->final_done = true;
			e->exit_code = rb.final_partial ? PEV_EXIT_PARTIAL : PEV_EXIT_OK;
		}
		if (rb.proposed && !e->plan) {
			/* The first plan was waiting at its gate. */
			e->pending_plan = rb.proposed;
			e->revision = rb.proposed_rev;
			rb.proposed = NULL;
		} else if (rb.proposed && rb.proposed_failed) {
			/* A replan was waiting at its gate: it opens again. */
			e->pending_plan = rb.proposed;
			e->pending_failed = rb.proposed_failed;
			e->pending_failure = rb.proposed_failure;
			rb.proposed = rb.proposed_failed = rb.proposed_failure = NULL;
		}
	}
	free(rb.proposed);
	free(rb.proposed_failed);
	free(rb.proposed_failure);
	free(rb.end_status);
	free(path);
	return ok;
}
