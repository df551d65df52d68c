/* verify — stage 1, deterministic and free (artifacts, tool errors, confidence, a
 * well-formed result), and stage 2, the verifier model, which must judge every acceptance
 * criterion: an answer that leaves one out is asked again once, naming the missing ones,
 * and is then a failed verdict with those criteria marked "not judged". */
#include "config.h"

#include "engine.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bus.h"
#include "checkpoint.h"
#include "result.h"
#include "sandbox.h"
#include "xalloc.h"

void attempt_log_release(struct attempt_log *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].tool);
		free(l->v[i].summary);
		free(l->v[i].wrote);
	}
	free(l->v);
	strbuf_release(&l->text);
}

/* Whether the attempt wrote path with write_file (its bytes may be the same as before). */
static bool written_by_attempt(const struct attempt_log *log, const char *path)
{
	for (size_t i = 0; i < log->n; i++)
		if (log->v[i].wrote && !strcmp(log->v[i].wrote, path))
			return true;
	return false;
}

/* How the attempt's checkpoints saw path: NULL when it did not change it. */
static const struct cp_file *changed_by_attempt(const struct attempt_log *log, const char *path)
{
	for (size_t i = 0; log->changes && i < log->changes->n; i++)
		if (!strcmp(log->changes->v[i].path, path))
			return &log->changes->v[i];
	return NULL;
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

struct verdict *verify_deterministic(struct pev *e, const struct exec_result *r,
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
		struct strbuf miss = STRBUF_INIT, unchanged = STRBUF_INIT, read = STRBUF_INIT;
		bool tools_ok = true;

		add_check(v, "result JSON is well-formed", true, "parsed and complete");
		strbuf_init(&miss);
		strbuf_init(&unchanged);
		strbuf_init(&read);
		for (size_t a = 0; a < r->artifacts.n; a++) {
			const char *path = r->artifacts.v[a];
			const char *bad = sandbox_check_path(path);
			if (bad)
				strvec_pushf(&problems, "Artifact \"%s\" is not a workspace path (%s).",
					     path, bad);
			else if (!sandbox_file_nonempty(e->ws_fd, path)) {
				const struct cp_file *f = changed_by_attempt(log, path);
				/* The checkpoints say what happened, whatever the result claims. */
				const char *what =
					!log->changes ? ""
					: !f ? " (this attempt did not create or modify it)"
					: f->change == CP_DELETED ? " (this attempt deleted it)"
								  : " (this attempt left it empty)";
				strvec_pushf(&problems,
					     "Artifact \"%s\" is missing or empty in the workspace%s: "
					     "write it with write_file before claiming it.",
					     path, what);
			} else {
				/* A claim is checked against what happened: an artifact the
				 * attempt neither created nor changed is not its work, unless
				 * the result says the step only reads it. */
				bool reads = false;
				for (size_t k = 0; k < r->read_only.n && !reads; k++)
					reads = !strcmp(r->read_only.v[k], path);
				bool earlier = false;
				for (size_t k = 0; log->kept && k < log->kept->n && !earlier; k++)
					earlier = !strcmp(log->kept->v[k], path);
				if (log->changes && !earlier && !changed_by_attempt(log, path) &&
				    !written_by_attempt(log, path)) {
					strbuf_addf(reads ? &read : &unchanged, "%s%s",
						    (reads ? read.len : unchanged.len) ? ", " : "",
						    path);
					if (!reads)
						strvec_pushf(&problems,
							     "Artifact \"%s\" was not changed by this "
							     "attempt: it was already there as it is. "
							     "Make the change the step asks for, or, if "
							     "the step only reads it, list it in "
							     "step_output.read_only.",
							     path);
				}
				continue;
			}
			strbuf_addf(&miss, "%s%s", miss.len ? ", " : "", path);
		}
		if (miss.len) {
			char *ev = xasprintf("missing or empty: %s", miss.buf);
			add_check(v, "declared artifacts exist and are not empty", false, ev);
			free(ev);
		} else {
			char *ev = read.len ? xasprintf("all present; only read: %s", read.buf)
				   : xstrdup(r->artifacts.n ? "all present" : "none declared");
			add_check(v, "declared artifacts exist and are not empty", true, ev);
			free(ev);
		}
		if (unchanged.len) {
			char *ev = xasprintf("not changed by this attempt: %s", unchanged.buf);
			add_check(v, "declared artifacts were made or changed by this attempt", false,
				  ev);
			free(ev);
		}
		strbuf_release(&miss);
		strbuf_release(&unchanged);
		strbuf_release(&read);

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

/* ------------------------------------------------------------ coverage */

/* Lower case, single spaces, no trailing punctuation: models restate criteria loosely. */
static char *norm(const char *s)
{
	size_t n = strlen(s ? s : "");
	char *o = xcalloc(n + 1, 1);
	size_t k = 0;
	bool space = false;

	for (const char *p = s ? s : ""; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (isspace(c)) {
			space = k > 0;
			continue;
		}
		if (space)
			o[k++] = ' ';
		space = false;
		o[k++] = (char)tolower(c);
	}
	while (k > 0 && strchr(".;:!", o[k - 1]))
		k--;
	o[k] = '\0';
	return o;
}

/*
 * Which acceptance criteria the verdict judged. A result names a criterion when their
 * normalized texts are equal or one contains the other; results left over are then paired
 * in order with criteria left over (a paraphrase of each). judged[i] says which.
 */
static size_t coverage(const struct plan_step *step, const struct verdict *v, bool *judged)
{
	size_t nc = step->criteria.n, nr = v->n_criteria, covered = 0;
	bool *used = xcalloc(nr ? nr : 1, sizeof(*used));
	char **rn = xcalloc(nr ? nr : 1, sizeof(*rn));

	for (size_t r = 0; r < nr; r++)
		rn[r] = norm(v->criteria[r].criterion);
	for (size_t c = 0; c < nc; c++) {
		char *cn = norm(step->criteria.v[c]);
		judged[c] = false;
		for (size_t r = 0; r < nr && !judged[c]; r++) {
			if (used[r] || !*rn[r] || !*cn)
				continue;
			if (!strcmp(rn[r], cn) || strstr(rn[r], cn) || strstr(cn, rn[r]))
				judged[c] = used[r] = true;
		}
		free(cn);
	}
	for (size_t c = 0, r = 0; c < nc; c++) {
		if (judged[c])
			continue;
		while (r < nr && used[r])
			r++;
		if (r < nr)
			judged[c] = used[r++] = true;
	}
	for (size_t c = 0; c < nc; c++)
		covered += judged[c];
	for (size_t r = 0; r < nr; r++)
		free(rn[r]);
	free(rn);
	free(used);
	return covered;
}

struct read_ctx {
	const struct plan_step *step;
	size_t not_judged_from;
};

/* A verdict that judges every criterion; on the last answer, one with the missing ones
 * appended as failed and the verdict turned into a retry. */
static void *read_verdict(void *ctx, const char *text, bool last, char **why)
{
	struct read_ctx *rc = ctx;
	struct verdict *v = verdict_parse(text, why);
	size_t nc = rc->step->criteria.n;
	bool *judged;
	struct strbuf miss = STRBUF_INIT;

	if (!v || !nc)
		return v;
	judged = xcalloc(nc, sizeof(*judged));
	if (coverage(rc->step, v, judged) == nc) {
		free(judged);
		return v;
	}
	strbuf_init(&miss);
	for (size_t c = 0; c < nc; c++)
		if (!judged[c])
			strbuf_addf(&miss, "%s\"%s\"", miss.len ? "; " : "", rc->step->criteria.v[c]);
	if (!last) {
		*why = xasprintf("criteria_results leaves out %s: judge every acceptance "
				 "criterion, each in its own entry",
				 miss.buf);
		verdict_free(v);
		v = NULL;
	} else {
		rc->not_judged_from = v->n_criteria;
		for (size_t c = 0; c < nc; c++) {
			if (judged[c])
				continue;
			add_check(v, rc->step->criteria.v[c], false, "not judged");
			v->criteria[v->n_criteria - 1].confidence = -1;
		}
		v->overall_pass = false;
		if (v->action == VERDICT_PASS)
			v->action = VERDICT_RETRY;
		if (v->severity == SEV_MINOR)
			v->severity = SEV_MAJOR;
		free(v->feedback);
		v->feedback = xasprintf("The verifier did not judge %s, even when asked again: "
					"the attempt is repeated so that every criterion is "
					"verified. Make the result show plainly how each one is met.",
					miss.buf);
	}
	strbuf_release(&miss);
	free(judged);
	return v;
}

static char *fix_verdict(void *ctx, const char *why)
{
	(void)ctx;
	return prompt_verdict_fix(why);
}

struct verdict *verify_model(struct job *j, int attempt, const char *step_json,
			     const char *step_text, const char *result_json,
			     const char *tools_text, const char *diff, size_t *not_judged_from,
			     char **err)
{
	char *why = NULL;
	struct read_ctx rc = {&j->step, (size_t)-1};
	struct llm_request req = {.role = ROLE_VERIFIER,
				  .purpose = PURPOSE_VERIFY,
				  .step_id = j->step.id,
				  .attempt = attempt,
				  .step_json = step_json,
				  .system = prompt_system_verifier(),
				  .want_json = true,
				  .max_tokens = MAX_TOKENS_STEP};
	struct verdict *v = engine_ask_and_read(
		j->e, &req, prompt_verify(j->goal, step_text, result_json, tools_text, diff), &j->cancel,
		read_verdict, &rc, fix_verdict, &why, err);

	if (!v && why) {
		/* Not the executor's fault, but the step cannot pass unverified. */
		v = xcalloc(1, sizeof(*v));
		v->action = VERDICT_RETRY;
		v->severity = SEV_MAJOR;
		v->feedback = xasprintf("The verifier's answer could not be read (%s); the attempt "
					"is repeated.",
					why);
	}
	*not_judged_from = rc.not_judged_from;
	free(why);
	return v;
}
