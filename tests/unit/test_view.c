/* Unit tests for the view model: events in, plan/log/verdict/cost/gate state out. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "view.h"
#include "xalloc.h"

/* Applies one journal-style line; single quotes stand for double quotes (no apostrophes). */
static void apply(struct view *v, const char *line)
{
	char *s = xstrdup(line), *err = NULL;
	struct event *ev;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	ev = event_from_line(s, &err);
	if (!ev)
		fail_msg("bad test event: %s: %s", err, s);
	view_apply(v, ev);
	event_free(ev);
	free(s);
}

#define S1                                                                                 \
	"{'step_id':'s1','name':'Read','description':'read it','acceptance_criteria':['c1'],"  \
	"'dependencies':[],'estimated_complexity':'low'}"
#define PLAN3                                                                              \
	"{'goal':'Review the contract','steps':[" S1 ","                                    \
	"{'step_id':'s2','name':'Find clauses','acceptance_criteria':['c2a','c2b'],"          \
	"'dependencies':['s1'],'estimated_complexity':'medium'},"                           \
	"{'step_id':'s3','name':'Summarize','acceptance_criteria':['c3'],"                    \
	"'dependencies':['s1','s2'],'estimated_complexity':'high'}]}"

static struct view *started_view(void)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'2026-01-01T10:00:00.000Z','type':'run.start','run_id':'r1',"
		 "'task':'Review','provider':'sim','simulated':true,"
		 "'policy':{'budget_usd':0.5}}");
	apply(v, "{'seq':2,'ts':'2026-01-01T10:00:01.000Z','type':'plan.proposed','revision':0,"
		 "'estimate_usd':0.0123,'reason':'initial','plan':" PLAN3 "}");
	return v;
}

static struct view *running_view(void)
{
	struct view *v = started_view();

	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'plan.adopted','revision':0,"
		 "'kept':[],'plan':" PLAN3 "}");
	return v;
}

static char *state_text(const struct view *v)
{
	return view_state_text(v);
}

static void assert_state(const struct view *v, const char *want)
{
	char *s = state_text(v);

	assert_string_equal(s, want);
	free(s);
}

/* The last line of a store that contains `needle`, or NULL. */
static const char *find_line(const struct linestore *ls, const char *needle)
{
	for (size_t i = ls->n; i-- > 0;)
		if (strstr(ls->v[i].text, needle))
			return ls->v[i].text;
	return NULL;
}

static void test_plan_proposed_then_adopted(void **state)
{
	struct view *v = started_view();

	assert_state(v, "planning");
	assert_true(v->rs.budget_usd > 0.49 && v->rs.budget_usd < 0.51);
	assert_int_equal(v->n_steps, 3);
	assert_false(v->rs.plan_adopted);
	assert_string_equal(v->goal, "Review the contract");
	assert_int_equal(v->steps[0].status, VS_READY);
	assert_int_equal(v->steps[1].status, VS_PENDING);
	assert_int_equal(v->steps[2].depth, 2);
	assert_int_equal(v->steps[1].criteria.n, 2);
	assert_string_equal(v->steps[2].complexity, "high");
	assert_true(v->rs.estimate_usd > 0.0122 && v->rs.estimate_usd < 0.0124);
	assert_non_null(v->rs.proposed_json);

	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'plan.adopted','revision':0,"
		 "'kept':[],'plan':" PLAN3 "}");
	assert_true(v->rs.plan_adopted);
	assert_state(v, "running");
	view_free(v);
}

static void test_plan_gate_queue(void **state)
{
	struct view *v = started_view();

	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':7,"
		 "'gate':'plan','step_id':null,'revision':0,'estimate_usd':0.0123}");
	assert_int_equal(v->n_gates, 1);
	assert_int_equal(v->gates[0].id, 7);
	assert_int_equal(v->gates[0].kind, GATE_PLAN);
	assert_non_null(v->gates[0].edit_json);
	assert_non_null(strstr(v->gates[0].edit_json, "Find clauses"));
	assert_non_null(find_line(&v->gates[0].body, "Summarize"));
	assert_non_null(find_line(&v->gates[0].body, "$0.0123"));
	assert_state(v, "waiting for you");
	assert_false(view_busy(v)); /* nothing moves while the operator decides */

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.decision','gate_id':7,"
		 "'gate':'plan','step_id':null,'decision':'approve','by':'operator'}");
	assert_int_equal(v->n_gates, 0);
	assert_non_null(find_line(&v->runlog, "approve by operator"));
	view_free(v);
}

static void test_unknown_estimate_is_not_zero(void **state)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'2026-01-01T10:00:01.000Z','type':'plan.proposed','revision':0,"
		 "'estimate_usd':null,'plan':" PLAN3 "}");
	apply(v, "{'seq':2,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'plan','step_id':null,'revision':0,'estimate_usd':null}");
	assert_true(v->rs.estimate_usd < 0);
	assert_non_null(find_line(&v->gates[0].body, "Estimated cost: ?"));
	assert_null(find_line(&v->gates[0].body, "$0.0000"));
	view_free(v);
}

static void test_step_lifecycle_and_log(void **state)
{
	struct view *v = running_view();
	struct vstep *s1;

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1,'name':'Read'}");
	s1 = &v->steps[0];
	assert_int_equal(s1->status, VS_RUNNING);
	assert_true(view_busy(v));
	/* An escape sequence cut across two deltas must not leak its tail. */
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.000Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','attempt':1,'text':'Hello \\u001b[3'}");
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.000Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','attempt':1,'text':'1mworld\\u001b[0m\\nsecond '}");
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.000Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','attempt':1,'text':'line'}");
	assert_non_null(find_line(&s1->log, "Hello world"));
	assert_null(find_line(&s1->log, "1m"));
	assert_string_equal(s1->log.v[s1->log.n - 1].text, "second line");

	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:12.000Z','type':'tool.call','step_id':'s1',"
		 "'attempt':1,'call_id':'c1','tool':'read_file','params':{'path':'a.txt'}}");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:13.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'call_id':'c1','tool':'read_file','ok':false,"
		 "'summary':'no such file','bytes':0}");
	assert_non_null(find_line(&s1->log, "read_file {\"path\":\"a.txt\"}"));
	assert_non_null(find_line(&s1->log, "read_file failed: no such file"));
	assert_null(find_line(&s1->log, "no such file (0 bytes)"));
	/* A size only when the output is more than its summary shows. */
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:13.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'call_id':'c2','tool':'write_file','ok':true,"
		 "'summary':'created \\\"a.md\\\" (179 bytes)','bytes':23}");
	assert_non_null(find_line(&s1->log, "write_file ok: created \"a.md\" (179 bytes)"));
	assert_null(find_line(&s1->log, "(179 bytes) ("));
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:13.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'call_id':'c3','tool':'read_file','ok':true,"
		 "'summary':'# Title','bytes':4096}");
	assert_non_null(find_line(&s1->log, "read_file ok: # Title (4096 bytes)"));
	/* The streamed line was closed by the tool call, not glued to it. */
	assert_non_null(find_line(&s1->log, "second line"));
	assert_null(find_line(&s1->log, "second line\xe2\x86\x92"));

	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:14.000Z','type':'llm.retry','role':'executor',"
		 "'step_id':'s1','http_status':429,'wait_ms':4000,'attempt':1,'max':5,"
		 "'reason':'rate limited'}");
	assert_non_null(find_line(&s1->log, "429 \xe2\x80\x94 retrying in 4.0 s"));

	apply(v, "{'seq':8,'ts':'2026-01-01T10:00:15.000Z','type':'step.output','step_id':'s1',"
		 "'attempt':1,'result':{'confidence':0.4}}");
	assert_int_equal(s1->status, VS_VERIFYING);
	apply(v, "{'seq':9,'ts':'2026-01-01T10:00:16.000Z','type':'verify.verdict','step_id':'s1',"
		 "'attempt':1,'stage':'model','action':'retry','severity':'major',"
		 "'overall_pass':false,'criteria':[{'criterion':'c1','passed':false,"
		 "'evidence':'missing','confidence':0.9,'feedback':'cite it'}],"
		 "'feedback':'Cite the clause numbers'}");
	assert_int_equal(s1->status, VS_RETRYING);
	assert_int_equal(v->n_verdicts, 1);
	assert_string_equal(v->verdicts[0].action, "retry");
	assert_int_equal(v->verdicts[0].n_criteria, 1);
	assert_false(v->verdicts[0].criteria[0].passed);
	assert_string_equal(v->verdicts[0].criteria[0].evidence, "missing");
	assert_non_null(find_line(&s1->log, "Critique for the next attempt: Cite the clause"));

	apply(v, "{'seq':10,'ts':'2026-01-01T10:00:20.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':2,'name':'Read'}");
	assert_int_equal(s1->f->attempts, 2);
	assert_non_null(find_line(&s1->log, "attempt 2"));
	apply(v, "{'seq':11,'ts':'2026-01-01T10:00:25.000Z','type':'verify.verdict','step_id':'s1',"
		 "'attempt':2,'stage':'model','action':'pass','overall_pass':true,'criteria':[]}");
	apply(v, "{'seq':12,'ts':'2026-01-01T10:00:30.000Z','type':'step.end','step_id':'s1',"
		 "'status':'passed','attempts':2,'reused':false}");
	assert_int_equal(s1->status, VS_PASSED);
	assert_int_equal(v->n_verdicts, 2);
	/* Timing comes from the events' timestamps: 10:00:10 to 10:00:30. */
	assert_true(view_step_elapsed(s1, 1e12) > 19.9 && view_step_elapsed(s1, 1e12) < 20.1);
	assert_int_equal(v->steps[1].status, VS_READY); /* s2 depended on s1 only */
	assert_int_equal(v->steps[2].status, VS_PENDING);
	assert_false(view_busy(v));
	view_free(v);
}

static void test_costs_unknown_never_zero(void **state)
{
	struct view *v = running_view();
	bool unknown;
	double total;

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'llm.call','role':'planner',"
		 "'model':'claude-x','step_id':null,'input_tokens':1000,'output_tokens':200,"
		 "'cached_tokens':50,'cost_usd':0.01,'status':'ok'}");
	total = view_total_usd(v, &unknown);
	assert_false(unknown);
	assert_true(total > 0.0099 && total < 0.0101);
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:11.000Z','type':'llm.call','role':'executor',"
		 "'model':'local-llama','step_id':'s1','attempt':1,'input_tokens':300,"
		 "'output_tokens':30,'cost_usd':null,'status':'ok'}");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:12.000Z','type':'llm.call','role':'verifier',"
		 "'model':'claude-x','step_id':'s1','attempt':1,'input_tokens':10,"
		 "'output_tokens':5,'cost_usd':0.002,'status':'error','error':'HTTP 500'}");
	total = view_total_usd(v, &unknown);
	assert_true(unknown);
	assert_int_equal(v->rs.roles[VC_PLANNER].calls, 1);
	assert_int_equal(v->rs.roles[VC_PLANNER].tokens_in, 1000);
	assert_int_equal(v->rs.roles[VC_PLANNER].tokens_cached, 50);
	assert_string_equal(v->model[VC_EXECUTOR], "local-llama");
	assert_true(v->rs.roles[VC_EXECUTOR].unknown);
	assert_false(v->rs.roles[VC_VERIFIER].unknown);
	assert_int_equal(v->steps[0].f->cost.calls, 2);
	assert_true(v->steps[0].f->cost.unknown);
	assert_int_equal(v->steps[0].f->n_attempt_usd, 1);
	assert_true(v->steps[0].f->attempt_usd[0] > 0.0019);
	assert_non_null(find_line(&v->steps[0].log, "verifier call error: HTTP 500"));
	view_free(v);
}

static void test_high_gate_skip(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'gate.open','gate_id':3,"
		 "'gate':'high','step_id':'s3','step':{'step_id':'s3','name':'Summarize',"
		 "'acceptance_criteria':['c3'],'dependencies':['s1','s2'],"
		 "'estimated_complexity':'high'}}");
	assert_int_equal(v->steps[2].status, VS_WAITING);
	assert_non_null(strstr(v->gates[0].title, "Summarize"));
	assert_non_null(v->gates[0].edit_json);
	assert_non_null(find_line(&v->gates[0].body, "Inputs from:"));
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:11.000Z','type':'gate.decision','gate_id':3,"
		 "'gate':'high','step_id':'s3','decision':'skip','by':'operator'}");
	assert_int_equal(v->n_gates, 0);
	/* The state is the engine's to say: step.end follows the decision. */
	assert_int_equal(v->steps[2].status, VS_PENDING);
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:11.000Z','type':'step.end','step_id':'s3',"
		 "'status':'skipped','attempts':0}");
	assert_int_equal(v->steps[2].status, VS_SKIPPED);
	view_free(v);
}

static void test_gates_answered_in_order(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'high','step_id':'s2'}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:10.000Z','type':'gate.open','gate_id':2,"
		 "'gate':'high','step_id':'s3'}");
	assert_int_equal(v->n_gates, 2);
	/* Without a step in the payload the dialog still shows the known step. */
	assert_non_null(find_line(&v->gates[0].body, "Find clauses"));
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:11.000Z','type':'gate.decision','gate_id':1,"
		 "'gate':'high','step_id':'s2','decision':'approve','by':'operator'}");
	assert_int_equal(v->n_gates, 1);
	assert_int_equal(v->gates[0].id, 2);
	assert_int_equal(v->steps[1].status, VS_PENDING);
	assert_int_equal(v->steps[2].status, VS_WAITING);
	/* A journal cut short at that gate, shown again for --resume: the engine asks anew. */
	view_forget_gates(v);
	assert_int_equal(v->n_gates, 0);
	assert_int_equal(v->steps[2].status, VS_PENDING);
	assert_state(v, "running");
	view_free(v);
}

static void test_replan_diff_and_kept(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'step.end','step_id':'s1',"
		 "'status':'passed','attempts':1}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:20.000Z','type':'plan.proposed','revision':1,"
		 "'reason':'replan','estimate_usd':0.01,'plan':{'goal':'Review the contract',"
		 "'steps':[" S1 ",{'step_id':'s4','name':'Ask counsel','dependencies':['s1']}]}}");
	/* A proposal does not replace the running plan. */
	assert_int_equal(v->n_steps, 3);
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:21.000Z','type':'gate.open','gate_id':4,"
		 "'gate':'replan','step_id':'s2','revision':1,'failed_step':'s2',"
		 "'reason':'clauses missing','diff':{'added':['s4'],'removed':['s2','s3'],"
		 "'changed':[],'kept':['s1']}}");
	assert_non_null(find_line(&v->gates[0].body, "+ s4  Ask counsel"));
	assert_non_null(find_line(&v->gates[0].body, "- s2  Find clauses"));
	assert_non_null(find_line(&v->gates[0].body, "= s1"));
	assert_non_null(find_line(&v->gates[0].body, "clauses missing"));
	assert_non_null(strstr(v->gates[0].edit_json, "Ask counsel"));
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:22.000Z','type':'gate.decision','gate_id':4,"
		 "'gate':'replan','step_id':'s2','decision':'approve','by':'operator'}");
	apply(v, "{'seq':8,'ts':'2026-01-01T10:00:23.000Z','type':'plan.adopted','revision':1,"
		 "'kept':['s1'],'plan':{'goal':'g','steps':["
		 "{'step_id':'s1','name':'Read','dependencies':[]},"
		 "{'step_id':'s4','name':'Ask counsel','dependencies':['s1']}]}}");
	assert_int_equal(v->rs.revision, 1);
	assert_int_equal(v->n_steps, 2);
	assert_int_equal(v->steps[0].status, VS_PASSED);
	/* s1 kept its log across the replan. */
	assert_non_null(find_line(&v->steps[0].log, "Step passed"));
	assert_int_equal(v->steps[1].status, VS_READY);
	view_free(v);
}

/* A replan gate shows the word diff of a changed step against the plan in force; the run
 * log tells the same; while the gate is open the proposal's steps are at hand, marked. An
 * edit at the gate is marked in the dialog and told in the log. */
static void test_replan_word_diff(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'plan.proposed','revision':1,"
		 "'reason':'replan','failed_step':'s2','plan':{'goal':'Review the contract',"
		 "'steps':[" S1 ",{'step_id':'s2','name':'Find every clause',"
		 "'acceptance_criteria':['c2a','c2b\\u001b]0;PWNED\\u0007 too'],"
		 "'dependencies':['s1'],'estimated_complexity':'high'},"
		 "{'step_id':'s5','name':'Ask counsel','description':'one question',"
		 "'dependencies':['s2']}]}}");
	assert_non_null(find_line(&v->runlog, "Changes against revision 0, the plan in force:"));
	assert_non_null(find_line(&v->runlog, "    name: Find [-clauses-]{+every clause+}"));
	assert_null(v->proposal); /* no gate yet */
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:11.000Z','type':'gate.open','gate_id':4,"
		 "'gate':'replan','step_id':'s2','revision':1,'failed_step':'s2',"
		 "'reason':'clauses missing','diff':{'added':['s5'],'removed':['s3'],"
		 "'changed':['s2'],'kept':['s1']}}");
	{
		const struct linestore *b = &v->gates[0].body;
		const char *l;

		assert_non_null(find_line(b, "= s1  Read"));
		l = find_line(b, "~ s2  Find every clause");
		assert_non_null(l);
		for (size_t i = 0; i < b->n; i++) {
			if (b->v[i].text == l)
				assert_int_equal(b->v[i].kind, VL_DIFF_CHANGE);
			if (strstr(b->v[i].text, "complexity: [-medium-]{+high+}"))
				assert_int_equal(b->v[i].kind, VL_DIFF_CHANGE);
			if (strstr(b->v[i].text, "+ s5  Ask counsel"))
				assert_int_equal(b->v[i].kind, VL_DIFF_ADD);
			if (strstr(b->v[i].text, "- s3  Summarize"))
				assert_int_equal(b->v[i].kind, VL_DIFF_DEL);
			assert_null(strstr(b->v[i].text, "PWNED"));
			assert_null(strchr(b->v[i].text, '\x1b'));
		}
		assert_non_null(find_line(b, "    complexity: [-medium-]{+high+}"));
		assert_non_null(find_line(b, "c2b {+too+}"));
		assert_non_null(find_line(b, "+ s5  Ask counsel"));
		assert_non_null(find_line(b, "    description: one question"));
		assert_non_null(find_line(b, "- s3  Summarize"));
	}
	/* The proposal's rows: s1 the same, s2 changed, s5 new and under s2. */
	assert_int_equal(v->n_proposal, 3);
	assert_int_equal(v->proposal[0].change, PDC_SAME);
	assert_int_equal(v->proposal[1].change, PDC_CHANGED);
	assert_string_equal(v->proposal[1].name, "Find every clause");
	assert_int_equal(v->proposal[2].change, PDC_ADDED);
	assert_int_equal(v->proposal[2].depth, 2);
	/* The plan in force is still what the Plan pane shows. */
	assert_int_equal(v->n_steps, 3);
	assert_string_equal(v->steps[1].name, "Find clauses");

	/* An edit at the gate: the dialog marks it, the log tells it, the rows follow. */
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:12.000Z','type':'plan.proposed','revision':1,"
		 "'reason':'edit','failed_step':'s2','plan':{'goal':'Review the contract',"
		 "'steps':[" S1 ",{'step_id':'s2','name':'Find every clause',"
		 "'acceptance_criteria':['c2a','c2b'],"
		 "'dependencies':['s1'],'estimated_complexity':'high'}]}}");
	assert_non_null(find_line(&v->gates[0].body, "Edited at this gate (a approves it):"));
	assert_non_null(find_line(&v->gates[0].body, "- s5  Ask counsel"));
	assert_non_null(find_line(&v->runlog, "Changes made by the edit:"));
	assert_non_null(find_line(&v->runlog, "- s5  Ask counsel"));
	assert_int_equal(v->n_proposal, 2);
	/* Answered: the rows go with the gate. */
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:13.000Z','type':'gate.decision','gate_id':4,"
		 "'gate':'replan','step_id':'s2','decision':'skip','by':'operator'}");
	assert_int_equal(v->n_proposal, 0);
	assert_null(v->proposal);
	view_free(v);
}

/* At the plan gate an edit shows as a diff against the plan as it was proposed. */
static void test_plan_gate_edit_diff(void **state)
{
	struct view *v = started_view();

	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':7,"
		 "'gate':'plan','step_id':null,'revision':0,'estimate_usd':0.0123}");
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'plan.proposed','revision':0,"
		 "'reason':'edit','plan':{'goal':'Review the contract','steps':[" S1 "]}}");
	assert_non_null(find_line(&v->gates[0].body, "Edited at this gate (a approves it):"));
	assert_non_null(find_line(&v->gates[0].body, "- s2  Find clauses"));
	assert_non_null(find_line(&v->runlog, "Changes made by the edit:"));
	/* No plan is in force yet: nothing to switch to. */
	assert_int_equal(v->n_proposal, 0);
	view_free(v);
}

static void test_step_edit_updates_definition(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'step.edit','step_id':'s2',"
		 "'by':'operator','before':{},'after':{'step_id':'s2','name':'Find all clauses',"
		 "'acceptance_criteria':['every clause listed'],'dependencies':['s1'],"
		 "'estimated_complexity':'low'}}");
	assert_string_equal(v->steps[1].name, "Find all clauses");
	assert_int_equal(v->steps[1].criteria.n, 1);
	assert_string_equal(v->steps[1].criteria.v[0], "every clause listed");
	assert_true(v->steps[1].f->edited);
	assert_non_null(strstr(v->steps[1].f->json, "every clause listed"));
	view_free(v);
}

static void test_pause_and_finish(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'notice','level':'info',"
		 "'message':'Paused by the operator','kind':'pause'}");
	assert_state(v, "paused");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:11.000Z','type':'notice','level':'info',"
		 "'message':'Resumed','kind':'resume_run'}");
	assert_state(v, "running");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:12.000Z','type':'gate.open','gate_id':9,"
		 "'gate':'high','step_id':'s3'}");
	apply(v, "{'seq':7,'ts':'2026-01-01T10:01:40.000Z','type':'run.final',"
		 "'answer':'PARTIAL: two of three\\nsecond line','partial':true}");
	apply(v, "{'seq':8,'ts':'2026-01-01T10:01:40.000Z','type':'run.end','status':'partial',"
		 "'exit_code':2,'reason':'one step skipped'}");
	assert_state(v, "finished \xe2\x80\x94 partial");
	assert_int_equal(v->rs.exit_code, 2);
	assert_int_equal(v->n_gates, 0);
	assert_int_equal(v->steps[2].status, VS_PENDING);
	assert_non_null(find_line(&v->runlog, "PARTIAL: two of three"));
	assert_non_null(find_line(&v->runlog, "second line"));
	/* 10:00:00 to 10:01:40, whatever the clock says now. */
	assert_true(view_elapsed(v, 1e12) > 99.9 && view_elapsed(v, 1e12) < 100.1);
	assert_false(view_busy(v));
	view_free(v);
}

static void test_hostile_text_sanitized(void **state)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'2026-01-01T10:00:01.000Z','type':'plan.adopted','revision':0,"
		 "'plan':{'goal':'\\u001b]0;pwned\\u0007G','steps':[{'step_id':'s1',"
		 "'name':'A\\u001b[2J\\u001b[31mBC\\u009b1mD\\r\\nE',"
		 "'acceptance_criteria':['\\u001bPq#evil\\u001b\\\\ok']}]}}");
	assert_string_equal(v->goal, "G");
	assert_string_equal(v->steps[0].name, "ABCD E");
	assert_string_equal(v->steps[0].criteria.v[0], "ok");
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.000Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','text':'\\u4e2d\\u6587\\u001b[1m\\u65e5\\u672c\\n'}");
	assert_string_equal(v->steps[0].log.v[0].text, "\xe4\xb8\xad\xe6\x96\x87\xe6\x97\xa5\xe6\x9c\xac");
	view_free(v);
}

static void test_malformed_fields_ignored(void **state)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'bad','type':'plan.adopted','plan':{'steps':'nope'}}");
	apply(v, "{'seq':2,'ts':'bad','type':'plan.adopted','plan':{'steps':[1,{'name':'x'},"
		 "{'step_id':'a','dependencies':'a'},{'step_id':'a','name':'dup'}]}}");
	apply(v, "{'seq':3,'ts':'bad','type':'step.start','step_id':'nope','attempt':'x'}");
	apply(v, "{'seq':4,'ts':'bad','type':'verify.verdict','criteria':[3,{'criterion':5}]}");
	apply(v, "{'seq':5,'ts':'bad','type':'gate.decision','gate_id':99}");
	apply(v, "{'seq':6,'ts':'bad','type':'llm.call','role':'executor','cost_usd':'free'}");
	apply(v, "{'seq':7,'ts':'bad','type':'run.end'}");
	apply(v, "{'seq':8,'ts':'bad','type':'gate.open'}");
	assert_int_equal(v->n_steps, 2); /* duplicate id kept apart, not merged */
	assert_string_not_equal(v->steps[0].id, v->steps[1].id);
	assert_true(v->rs.roles[VC_EXECUTOR].unknown);
	assert_int_equal(v->n_verdicts, 1);
	assert_int_equal(v->rs.events, 8);
	view_free(v);
}

static void test_dependency_cycle_bounded(void **state)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'2026-01-01T10:00:01.000Z','type':'plan.adopted','plan':{'steps':["
		 "{'step_id':'a','dependencies':['b']},{'step_id':'b','dependencies':['a']}]}}");
	assert_int_equal(v->n_steps, 2);
	assert_true(v->steps[0].depth <= 2 && v->steps[1].depth <= 2);
	assert_int_equal(v->steps[0].status, VS_PENDING);
	view_free(v);
}

/* p pauses, p again while steps are in flight cancels them, p with nothing running resumes:
 * the view decides which from the engine's notices and the steps' states. */
static void test_pause_cancel_resume(void **state)
{
	struct view *v = running_view();

	assert_int_equal(view_pause_action(v), VP_PAUSE);
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1,'name':'Read'}");
	assert_int_equal(view_running(v), 1);
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'notice','level':'info',"
		 "'kind':'pause','message':'paused: no new step starts; running steps finish'}");
	assert_true(v->rs.paused);
	assert_int_equal(view_pause_action(v), VP_CANCEL);
	assert_state(v, "paused, 1 step finishing");
	/* The cancelled call ends the attempt: the step waits to start over. */
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'notice','level':'info',"
		 "'kind':'pause','message':'paused: calls in flight cancelled'}");
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:05.000Z','type':'llm.call','role':'executor',"
		 "'step_id':'s1','attempt':1,'status':'cancelled','cost_usd':0}");
	assert_int_equal(view_running(v), 0);
	assert_int_equal(v->steps[0].status, VS_READY);
	assert_non_null(find_line(&v->steps[0].log, "starts over"));
	assert_int_equal(view_pause_action(v), VP_RESUME);
	assert_state(v, "paused");
	assert_false(view_busy(v));
	apply(v, "{'seq':8,'ts':'2026-01-01T10:00:06.000Z','type':'notice','level':'info',"
		 "'kind':'resume_run','message':'resumed'}");
	assert_int_equal(view_pause_action(v), VP_PAUSE);
	assert_state(v, "running");
	/* An error (not a cancel) leaves the step running: the engine decides what follows. */
	apply(v, "{'seq':9,'ts':'2026-01-01T10:00:07.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':2,'name':'Read'}");
	apply(v, "{'seq':10,'ts':'2026-01-01T10:00:08.000Z','type':'llm.call','role':'executor',"
		 "'step_id':'s1','attempt':2,'status':'error','error':'HTTP 500'}");
	assert_int_equal(v->steps[0].status, VS_RUNNING);
	apply(v, "{'seq':11,'ts':'2026-01-01T10:00:09.000Z','type':'notice','level':'info',"
		 "'kind':'abort','message':'run aborted by the operator'}");
	assert_state(v, "aborting");
	apply(v, "{'seq':12,'ts':'2026-01-01T10:00:09.000Z','type':'notice','level':'warn',"
		 "'kind':'step_cancelled','step_id':'s1','message':'attempt cancelled'}");
	assert_int_equal(v->steps[0].status, VS_READY);
	assert_int_equal(view_pause_action(v), VP_NONE);
	view_free(v);
}

static void test_tool_retry_notice_in_step_log(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'notice','level':'warn',"
		 "'kind':'tool_retry','step_id':'s2','tool':'lookup','wait_ms':500,"
		 "'message':'lookup failed (timeout) \u2014 retrying in 0.5 s (1/3)'}");
	assert_non_null(find_line(&v->steps[1].log, "retrying in 0.5 s"));
	assert_int_equal(v->steps[1].log.v[v->steps[1].log.n - 1].kind, VL_RETRY);
	assert_null(find_line(&v->runlog, "retrying in 0.5 s"));
	view_free(v);
}

/* A call that ended normally says nothing; one cut at the token limit or stopped by the
 * server's filter says so in its step's log, with the reason as the server gave it. */
static void test_notable_stop_reason_in_step_log(void **state)
{
	struct view *v = running_view();
	size_t before = v->steps[1].log.n;

	(void)state;
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'llm.call','role':'executor',"
		 "'step_id':'s2','attempt':1,'status':'ok','stop_reason':'end_turn'}");
	assert_int_equal(v->steps[1].log.n, before);
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'llm.call','role':'executor',"
		 "'step_id':'s2','attempt':1,'status':'ok','stop_reason':'length'}");
	assert_non_null(find_line(&v->steps[1].log,
				  "executor answer cut off at the token limit (stop reason \"length\")"));
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'llm.call','role':'executor',"
		 "'step_id':'s2','attempt':1,'status':'ok','stop_reason':'content_filter'}");
	assert_non_null(find_line(&v->steps[1].log, "stopped by the server"));
	view_free(v);
}

/* What an attempt changed in the workspace is one line of its step's log, made safe. */
static void test_step_changes_in_step_log(void **state)
{
	struct view *v = running_view();

	(void)state;
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'step.changes','step_id':'s2',"
		 "'attempt':1,'files':[{'path':'notes.txt','change':'modified','plus':1,'minus':0},"
		 "{'path':'x\\u001b[31m.md','change':'added','plus':2,'minus':0}],"
		 "'stat':'2 files changed, +3 -0'}");
	assert_non_null(find_line(&v->steps[1].log,
				  "workspace: 2 files changed, +3 -0 (notes.txt, +x.md)"));
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'step.changes','step_id':'s2',"
		 "'attempt':2,'files':[],'stat':''}");
	assert_non_null(find_line(&v->steps[1].log, "workspace: unchanged"));
	view_free(v);
}

/* The shell gate shows the exact command (made safe) and the step; the command is kept
 * for the one-line edit form. A step at a shell gate is still in flight. */
static void test_shell_gate(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1,'name':'Read'}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'gate.open','gate_id':7,"
		 "'gate':'shell','step_id':'s1','command':'echo hello\\u001b[2J > out.txt',"
		 "'step':{'step_id':'s1','name':'Read','acceptance_criteria':['c1'],"
		 "'dependencies':[],'estimated_complexity':'low'}}");
	assert_int_equal(v->n_gates, 1);
	assert_int_equal(v->gates[0].kind, GATE_SHELL);
	assert_string_equal(v->gates[0].command, "echo hello > out.txt");
	assert_non_null(find_line(&v->gates[0].body, "echo hello > out.txt"));
	assert_non_null(find_line(&v->gates[0].body, "Read"));
	assert_non_null(find_line(&v->gates[0].body, "c1"));
	assert_non_null(find_line(&v->gates[0].body, "Asked by step s1"));
	assert_int_equal(v->steps[0].status, VS_WAITING);
	/* Waiting for the operator is not running: paused, p resumes rather than cancels. */
	assert_int_equal(view_running(v), 0);
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'gate.decision','gate_id':7,"
		 "'gate':'shell','step_id':'s1','decision':'skip','by':'operator'}");
	assert_int_equal(v->n_gates, 0);
	assert_int_equal(v->steps[0].status, VS_RUNNING); /* refused: the step goes on */
	view_free(v);
}

static void test_budget_gate(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.open','gate_id':8,"
		 "'gate':'budget','step_id':null,'spent_usd':0.75,'budget_usd':0.5}");
	assert_string_equal(v->gates[0].title, "Budget reached");
	assert_true(v->gates[0].spent_usd > 0.749 && v->gates[0].spent_usd < 0.751);
	assert_true(v->gates[0].budget_usd > 0.499 && v->gates[0].budget_usd < 0.501);
	assert_non_null(find_line(&v->gates[0].body, "Spent $0.7500 of the $0.5000 budget"));
	assert_non_null(find_line(&v->gates[0].body, "150%"));
	assert_null(v->gates[0].command);
	assert_int_equal(v->gates[0].kind, GATE_BUDGET);
	/* Asked before the call that would cross the cap: what it and those in flight hold. */
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'gate.open','gate_id':9,"
		 "'gate':'budget','step_id':null,'spent_usd':0.25,'reserved_usd':0.05,"
		 "'needed_usd':0.3,'budget_usd':0.5}");
	assert_int_equal(v->n_gates, 2);
	assert_non_null(find_line(&v->gates[1].body, "Calls in flight hold $0.0500 more."));
	assert_non_null(find_line(&v->gates[1].body, "needs about $0.3000"));
	assert_non_null(find_line(&v->gates[1].body, "120% of the budget with those calls"));
	assert_true(view_gate_committed(&v->gates[1]) > 0.599 &&
		    view_gate_committed(&v->gates[1]) < 0.601);
	view_free(v);
}

/* step.state (engines that publish it): waiting, stale and back, each shown as such. */
static void test_step_state_events_shown(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1,'name':'Read'}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'step.state','step_id':'s1',"
		 "'state':'verifying'}");
	assert_int_equal(v->steps[0].status, VS_VERIFYING);
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'step.end','step_id':'s1',"
		 "'status':'passed','attempts':1}");
	assert_int_equal(v->steps[1].status, VS_READY);
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:06.000Z','type':'step.state','step_id':'s2',"
		 "'state':'waiting','reason':'at the step gate'}");
	assert_int_equal(v->steps[1].status, VS_WAITING);
	assert_int_equal(view_running(v), 0);
	apply(v, "{'seq':8,'ts':'2026-01-01T10:00:07.000Z','type':'operator.command',"
		 "'command':'rerun','step_id':'s1'}");
	apply(v, "{'seq':9,'ts':'2026-01-01T10:00:07.000Z','type':'step.state','step_id':'s3',"
		 "'state':'stale','reason':'s1 runs again','cause':'s1','by_seq':8}");
	assert_int_equal(v->steps[2].status, VS_STALE);
	assert_string_equal(view_status_name(v->steps[2].status), "stale");
	assert_non_null(find_line(&v->steps[2].log, "Now stale \xe2\x80\x94 s1 runs again"));
	assert_non_null(find_line(&v->steps[0].log, "Operator: rerun s1"));
	apply(v, "{'seq':10,'ts':'2026-01-01T10:00:08.000Z','type':'step.state','step_id':'s3',"
		 "'state':'pending'}");
	assert_int_equal(v->steps[2].status, VS_PENDING);
	view_free(v);
}

/* A criterion the verifier left out is a row of its own, neither passed nor failed. */
static void test_not_judged_criterion(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'verify.verdict',"
		 "'step_id':'s2','attempt':1,'stage':'model','action':'retry','overall_pass':false,"
		 "'criteria':[{'criterion':'c2a','passed':true},"
		 "{'criterion':'c2b','passed':false,'not_judged':true}],'feedback':'judge c2b'}");
	assert_int_equal(v->n_verdicts, 1);
	assert_int_equal(v->verdicts[0].n_criteria, 2);
	assert_false(v->verdicts[0].criteria[0].not_judged);
	assert_true(v->verdicts[0].criteria[1].not_judged);
	assert_non_null(find_line(&v->steps[1].log, "c2b (not judged)"));
	assert_null(find_line(&v->steps[1].log, "\xe2\x9c\x97 c2b"));
	view_free(v);
}

/* A finished run reopened by a re-run is live again; the run log says why. */
static void test_reopen_after_end(void **state)
{
	struct view *v = running_view();

	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'run.end','status':'aborted',"
		 "'exit_code':3,'reason':'budget'}");
	assert_state(v, "finished \xe2\x80\x94 aborted");
	assert_int_equal(view_pause_action(v), VP_NONE);
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:20.000Z','type':'run.reopen','by_seq':null,"
		 "'reason':'resume'}");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:20.000Z','type':'run.resume',"
		 "'policy':{'budget_usd':2}}");
	assert_state(v, "running");
	assert_true(v->rs.budget_usd > 1.99 && v->rs.budget_usd < 2.01);
	assert_int_equal(view_pause_action(v), VP_PAUSE);
	assert_non_null(find_line(&v->runlog, "Run reopened (resume)"));
	/* The clock runs again from the first start of the run. */
	assert_true(view_elapsed(v, v->rs.started + 30) > 29.9);
	view_free(v);
}

static struct event *ev(const char *line)
{
	char *s = xstrdup(line), *err = NULL;
	struct event *e;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	e = event_from_line(s, &err);
	if (!e)
		fail_msg("bad test event: %s: %s", err, s);
	free(s);
	return e;
}

static void test_replay_predicates(void **state)
{
	static const struct {
		const char *line;
		bool replan, failure;
	} cases[] = {
		{"{'seq':1,'ts':'x','type':'plan.proposed','revision':1,'reason':'replan'}", true,
		 false},
		{"{'seq':1,'ts':'x','type':'plan.proposed','revision':0,'reason':'initial'}", false,
		 false},
		{"{'seq':1,'ts':'x','type':'plan.adopted','revision':1,'reason':'replan'}", false,
		 false},
		{"{'seq':1,'ts':'x','type':'verify.verdict','action':'retry'}", false, true},
		{"{'seq':1,'ts':'x','type':'verify.verdict','action':'replan'}", false, true},
		{"{'seq':1,'ts':'x','type':'verify.verdict','action':'pass'}", false, false},
		{"{'seq':1,'ts':'x','type':'tool.result','ok':false,'tool':'lookup'}", false, true},
		{"{'seq':1,'ts':'x','type':'tool.result','ok':true,'tool':'lookup'}", false, false},
		{"{'seq':1,'ts':'x','type':'llm.call','status':'error'}", false, true},
		{"{'seq':1,'ts':'x','type':'llm.call','status':'ok'}", false, false},
		{"{'seq':1,'ts':'x','type':'llm.call','status':'cancelled'}", false, false},
		{"{'seq':1,'ts':'x','type':'notice','level':'error','message':'x'}", false, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct event *e = ev(cases[i].line);

		if (view_event_is_replan(e) != cases[i].replan ||
		    view_event_is_failure(e) != cases[i].failure)
			fail_msg("wrong class for %s", cases[i].line);
		event_free(e);
	}
	assert_false(view_event_is_replan(NULL));
	assert_false(view_event_is_failure(NULL));
}

/* The drill-down: every stretch of a log knows the event it came from (logref.h). */
static void test_log_lines_know_their_event(void **state)
{
	struct view *v = running_view();
	const struct vstep *s;
	long i;

	(void)state;
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:10.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1}");
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.000Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','attempt':1,'text':'thinking\\nmore '}");
	apply(v, "{'seq':0,'ts':'2026-01-01T10:00:11.100Z','type':'llm.delta','role':'executor',"
		 "'step_id':'s1','attempt':1,'text':'still'}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:12.000Z','type':'tool.call','step_id':'s1',"
		 "'attempt':1,'call_id':'c1','tool':'read_file','params':{'path':'a.txt'}}");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:13.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'call_id':'c1','tool':'read_file','ok':true,'summary':'x','bytes':1}");
	s = &v->steps[view_find_step(v, "s1")];
	assert_int_equal(s->refs.n, 4);
	assert_int_equal(s->refs.v[0].type, EV_STEP_START);
	/* the streamed text is one entry, whatever the chunks, with no JSON kept */
	assert_int_equal(s->refs.v[1].type, EV_LLM_DELTA);
	assert_null(s->refs.v[1].json);
	assert_int_equal(s->refs.v[2].type, EV_TOOL_CALL);
	assert_int_equal(s->refs.v[2].seq, 5);
	assert_non_null(strstr(s->refs.v[2].json, "a.txt"));
	i = logref_find(&s->refs, s->log.n - 1);
	assert_int_equal(s->refs.v[i].type, EV_TOOL_RESULT);
	assert_true(strstr(s->log.v[s->refs.v[2].line].text, "read_file") != NULL);
	/* run-level events are remembered in the run log's refs */
	assert_true(v->runlog_refs.n >= 2);
	assert_int_equal(v->runlog_refs.v[0].type, EV_RUN_START);
	view_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_proposed_then_adopted),
		cmocka_unit_test(test_plan_gate_queue),
		cmocka_unit_test(test_unknown_estimate_is_not_zero),
		cmocka_unit_test(test_step_lifecycle_and_log),
		cmocka_unit_test(test_costs_unknown_never_zero),
		cmocka_unit_test(test_high_gate_skip),
		cmocka_unit_test(test_gates_answered_in_order),
		cmocka_unit_test(test_replan_diff_and_kept),
		cmocka_unit_test(test_replan_word_diff),
		cmocka_unit_test(test_plan_gate_edit_diff),
		cmocka_unit_test(test_step_edit_updates_definition),
		cmocka_unit_test(test_pause_and_finish),
		cmocka_unit_test(test_hostile_text_sanitized),
		cmocka_unit_test(test_malformed_fields_ignored),
		cmocka_unit_test(test_dependency_cycle_bounded),
		cmocka_unit_test(test_pause_cancel_resume),
		cmocka_unit_test(test_tool_retry_notice_in_step_log),
		cmocka_unit_test(test_notable_stop_reason_in_step_log),
		cmocka_unit_test(test_step_changes_in_step_log),
		cmocka_unit_test(test_shell_gate),
		cmocka_unit_test(test_budget_gate),
		cmocka_unit_test(test_replay_predicates),
		cmocka_unit_test(test_step_state_events_shown),
		cmocka_unit_test(test_not_judged_criterion),
		cmocka_unit_test(test_reopen_after_end),
		cmocka_unit_test(test_log_lines_know_their_event),
	};

	if (!setlocale(LC_ALL, "C.UTF-8"))
		setlocale(LC_ALL, "");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
