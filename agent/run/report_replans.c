/* report_replans — each replan of a run told in report.md, with its word diff. */
#include "config.h"

#include "report_replans.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fold.h"
#include "jsonx.h"
#include "plandiff.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

struct report_replans {
	struct strbuf done; /* the replans answered, rendered */
	/* The replan proposed and not answered yet (open), as it stands. */
	bool open;
	bool edited;   /* the proposal was edited at its gate */
	char *head;    /* its heading and why, rendered */
	char *base;    /* the plan in force when it was proposed (JSON) */
	char *latest;  /* the proposal as it stands (JSON) */
	char *approve; /* "approved by operator at its gate", once approved */
};

struct report_replans *report_replans_new(void)
{
	struct report_replans *rp = xcalloc(1, sizeof(*rp));

	strbuf_init(&rp->done);
	return rp;
}

static void clear_open(struct report_replans *rp)
{
	free(rp->head);
	free(rp->base);
	free(rp->latest);
	free(rp->approve);
	rp->head = rp->base = rp->latest = rp->approve = NULL;
	rp->open = rp->edited = false;
}

void report_replans_free(struct report_replans *rp)
{
	if (!rp)
		return;
	clear_open(rp);
	strbuf_release(&rp->done);
	free(rp);
}

static void add_clean(struct strbuf *sb, const char *s)
{
	char *c = textsan_clean(s ? s : "", s ? strlen(s) : 0, 0);

	strbuf_adds(sb, c);
	free(c);
}

/* A code block for any text: a fence longer than any run of backticks in it. */
static void add_fenced(struct strbuf *sb, const char *text)
{
	size_t run = 0, longest = 2;

	for (const char *p = text; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	strbuf_addc(sb, '\n');
	strbuf_adds(sb, text);
	for (size_t i = 0; i <= longest; i++)
		strbuf_addc(sb, '`');
	strbuf_addc(sb, '\n');
}

/* One replan: heading and why, how it was answered, then what the plan it names (`plan`,
 * the one adopted or the last proposed) changes in the plan it revised. */
static void render_one(struct strbuf *sb, const struct report_replans *rp, const char *outcome,
		       const char *plan)
{
	struct plandiff *d = plandiff_from_json(rp->base, plan);

	strbuf_adds(sb, rp->head);
	strbuf_adds(sb, outcome);
	if (rp->edited)
		strbuf_adds(sb, " The operator edited the proposal at its gate; the diff shows it "
				"as edited.");
	strbuf_adds(sb, "\n\n");
	if (!d) {
		strbuf_adds(sb, "The plans could not be compared.\n\n");
	} else if (plandiff_empty(d)) {
		strbuf_adds(sb, "The new plan is the same as the plan it revises.\n\n");
	} else {
		char *t = plandiff_text(d);

		strbuf_adds(sb, "Changes (`[-removed-]{+added+}` within a field; `+` step added, "
				"`-` removed, `~` changed, `=` the same):\n\n");
		add_fenced(sb, t);
		strbuf_adds(sb, "\n");
		free(t);
	}
	plandiff_free(d);
}

static void close_open(struct report_replans *rp, const char *outcome, const char *plan)
{
	if (!rp->open)
		return;
	render_one(&rp->done, rp, outcome, plan);
	clear_open(rp);
}

static void on_proposed(struct report_replans *rp, const struct run_state *rs, const cJSON *o)
{
	const char *reason = jsonx_str(o, "reason");
	struct strbuf h = STRBUF_INIT;

	if (reason && strcmp(reason, "edit") == 0 && rp->open) {
		free(rp->latest);
		rp->latest = xstrdup(rs->proposed_json);
		rp->edited = true;
		return;
	}
	if (!reason || strcmp(reason, "replan") != 0)
		return;
	close_open(rp, "Not answered: another replan replaced it.", rp->latest);
	strbuf_init(&h);
	strbuf_addf(&h, "### Revision %d", rs->proposed_revision);
	if (jsonx_str(o, "failed_step")) {
		strbuf_adds(&h, ", after step ");
		add_clean(&h, jsonx_str(o, "failed_step"));
		strbuf_adds(&h, " failed");
	}
	strbuf_adds(&h, "\n\n");
	if (jsonx_str(o, "failure") && *jsonx_str(o, "failure")) {
		strbuf_adds(&h, "Why: ");
		add_clean(&h, jsonx_str(o, "failure"));
		strbuf_adds(&h, "\n\n");
	}
	rp->head = strbuf_detach(&h);
	rp->base = xstrdup(rs->plan_json);
	rp->latest = xstrdup(rs->proposed_json);
	rp->open = true;
}

static void on_decision(struct report_replans *rp, const cJSON *o)
{
	const char *gate = jsonx_str(o, "gate"), *d = jsonx_str(o, "decision");
	struct strbuf s = STRBUF_INIT;

	if (!rp->open || !gate || strcmp(gate, "replan") != 0 || !d)
		return;
	strbuf_init(&s);
	if (strcmp(d, "approve") == 0) {
		strbuf_adds(&s, "approved by ");
		add_clean(&s, jsonx_str(o, "by") ? jsonx_str(o, "by") : "operator");
		strbuf_adds(&s, " at its gate");
		free(rp->approve);
		rp->approve = strbuf_detach(&s);
		return;
	}
	if (strcmp(d, "skip") == 0)
		strbuf_adds(&s, "Not adopted: the old plan was kept (skip by ");
	else if (strcmp(d, "reject") == 0)
		strbuf_adds(&s, "Rejected at its gate: the run was aborted (reject by ");
	else if (strcmp(d, "withdrawn") == 0)
		strbuf_adds(&s, "Withdrawn before an answer (by ");
	else {
		strbuf_release(&s);
		return; /* not an answer */
	}
	add_clean(&s, jsonx_str(o, "by") ? jsonx_str(o, "by") : "operator");
	if (jsonx_str(o, "reason") && *jsonx_str(o, "reason")) {
		strbuf_adds(&s, ": ");
		add_clean(&s, jsonx_str(o, "reason"));
	}
	strbuf_adds(&s, "). The diff is of the plan proposed.");
	close_open(rp, s.buf, rp->latest);
	strbuf_release(&s);
}

static void on_adopted(struct report_replans *rp, const struct run_state *rs)
{
	char *outcome;

	if (!rp->open)
		return;
	outcome = xasprintf("Adopted as revision %d, %s.", rs->revision,
			    rp->approve ? rp->approve : "without a gate");
	close_open(rp, outcome, rs->plan_json);
	free(outcome);
}

void report_replans_apply(struct report_replans *rp, const struct run_state *rs, int type,
			  const cJSON *o)
{
	switch (type) {
	case EV_PLAN_PROPOSED: on_proposed(rp, rs, o); break;
	case EV_GATE_DECISION: on_decision(rp, o); break;
	case EV_PLAN_ADOPTED: on_adopted(rp, rs); break;
	default: break;
	}
}

void report_replans_render(const struct report_replans *rp, struct strbuf *sb)
{
	if (!rp->done.len && !rp->open)
		return;
	strbuf_adds(sb, "## Replans\n\n");
	strbuf_adds(sb, rp->done.buf);
	if (rp->open)
		render_one(sb, rp, "Not answered: the journal ends with it waiting at its gate.",
			   rp->latest);
}
