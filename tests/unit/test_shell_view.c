/* test_shell_view — the shell gate in the cockpit's model: the dialog's where, limit and
 * allow-list lines, run_shell results as lines, the list of waiting gates, and the fold's
 * commands allowed for the rest of the run. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "fold.h"
#include "gate_list.h"
#include "linestore.h"
#include "shell_view.h"
#include "strbuf.h"
#include "view.h"
#include "xalloc.h"

/* Applies one journal-style line; single quotes stand for double quotes. */
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

#define PLAN2                                                                              \
	"{'goal':'g','steps':["                                                            \
	"{'step_id':'s1','name':'One','acceptance_criteria':['c'],'dependencies':[],"          \
	"'estimated_complexity':'low'},"                                                    \
	"{'step_id':'s2','name':'Two','acceptance_criteria':['c'],'dependencies':[],"          \
	"'estimated_complexity':'low'}]}"

static struct view *running_view(void)
{
	struct view *v = view_new();

	apply(v, "{'seq':1,'ts':'2026-01-01T10:00:00.000Z','type':'run.start','run_id':'r1',"
		 "'task':'t','provider':'sim','simulated':true,'policy':{}}");
	apply(v, "{'seq':2,'ts':'2026-01-01T10:00:01.000Z','type':'plan.adopted','revision':0,"
		 "'kept':[],'plan':" PLAN2 "}");
	return v;
}

/* Every line of a store, one per row, for matching. Caller frees. */
static char *lines(const struct linestore *ls)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	for (size_t i = 0; i < ls->n; i++)
		strbuf_addf(&sb, "%s\n", ls->v[i].text);
	return strbuf_detach(&sb);
}

static void assert_has(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("wanted \"%s\" in:\n%s", want, text);
}

static void test_gate_dialog_shows_where_limit_and_allow_list(void **state)
{
	struct view *v = running_view();
	char *body;

	(void)state;
	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'shell','step_id':'s1','command':'grep foo *.md','cwd':'/w/ws',"
		 "'timeout_s':45,'allow':{'matched':false,'prefix':'grep','why':'holds a glob (* "
		 "or ?)'}}");
	assert_int_equal(v->n_gates, 1);
	body = lines(&v->gates[0].body);
	assert_has(body, "grep foo *.md\n");
	assert_has(body, "Runs in: /w/ws\n");
	assert_has(body, "Time limit: 45 s");
	assert_has(body, "Allow list: no \xe2\x80\x94 starts with \"grep\" but holds a glob "
			 "(* or ?)\n");
	free(body);
	/* An older journal has none of these: no such lines. */
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.open','gate_id':2,"
		 "'gate':'shell','step_id':'s2','command':'ls'}");
	body = lines(&v->gates[1].body);
	assert_null(strstr(body, "Runs in"));
	assert_null(strstr(body, "Allow list"));
	free(body);
	view_free(v);
}

/* The sandbox's line on every shell gate; a command asking to leave it says so first,
 * with its reason, in the danger colour (VL_ERROR). */
static void test_gate_dialog_shows_the_sandbox(void **state)
{
	struct view *v = running_view();
	char *body;
	const struct linestore *ls;

	(void)state;
	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'shell','step_id':'s1','command':'make','cwd':'/w/ws',"
		 "'sandbox':'sandbox: workspace-write, network off \u2014 Landlock v7 + seccomp'}");
	body = lines(&v->gates[0].body);
	assert_has(body, "Sandbox: workspace-write, network off \xe2\x80\x94 Landlock v7 + "
			 "seccomp\n");
	assert_null(strstr(body, "OUTSIDE"));
	free(body);
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.open','gate_id':2,"
		 "'gate':'shell','step_id':'s2','command':'curl x','outside_sandbox':true,"
		 "'reason':'fetch the schema','sandbox':'sandbox: workspace-write'}");
	ls = &v->gates[1].body;
	body = lines(ls);
	assert_has(body, "OUTSIDE THE SANDBOX: this command would run unconfined, with "
			 "everything your user can reach. Reason given: fetch the schema\n");
	assert_null(strstr(body, "Sandbox: "));
	bool danger = false;
	for (size_t i = 0; i < ls->n; i++)
		danger = danger || (strstr(ls->v[i].text, "OUTSIDE") && ls->v[i].kind == VL_ERROR);
	assert_true(danger);
	free(body);
	view_free(v);
}

static void test_shell_result_as_lines(void **state)
{
	struct view *v = running_view();
	char *log;

	(void)state;
	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'step.start','step_id':'s1',"
		 "'attempt':1}");
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'call_id':'c1','tool':'run_shell','ok':true,'summary':'$ make',"
		 "'bytes':40,'command':'make test','approval':'allowed_for_run','ran':true,"
		 "'exit_status':2,'duration_ms':1500,"
		 "'output':'line one\\nline two\\n\\u001b[31mred\\n'}");
	log = lines(&v->steps[0].log);
	assert_has(log, "\xe2\x86\x90 run_shell $ make test \xe2\x80\x94 exit 2 after 1.5 s "
			"(allowed for this run)\n");
	assert_has(log, "\n    line one\n    line two\n    red\n");
	free(log);
	/* A killed command, no output; then one with more lines than the log shows. */
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'tool':'run_shell','ok':true,'summary':'x','bytes':1,"
		 "'command':'sleep 9','ran':true,'exit_status':null,'signal':9,'duration_ms':20,"
		 "'output':''}");
	{
		struct strbuf sb = STRBUF_INIT;
		strbuf_init(&sb);
		strbuf_adds(&sb, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'tool.result',"
				 "'step_id':'s1','attempt':1,'tool':'run_shell','ok':true,"
				 "'summary':'x','bytes':1,'command':'seq 30','ran':true,"
				 "'exit_status':0,'duration_ms':3,'output':'");
		for (int i = 1; i <= 30; i++)
			strbuf_addf(&sb, "%d\\n", i);
		strbuf_adds(&sb, "'}");
		apply(v, sb.buf);
		strbuf_release(&sb);
	}
	log = lines(&v->steps[0].log);
	assert_has(log, "$ sleep 9 \xe2\x80\x94 killed by signal 9 after 20 ms\n    (no output)\n");
	assert_has(log, "$ seq 30 \xe2\x80\x94 exit 0 after 3 ms\n");
	assert_has(log, "\n    20\n    \xe2\x80\xa6 10 more lines\n");
	assert_null(strstr(log, "    21\n"));
	free(log);
	/* A refused command (nothing ran) reads as any failed tool result. */
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:06.000Z','type':'tool.result','step_id':'s1',"
		 "'attempt':1,'tool':'run_shell','ok':false,'summary':'the operator refused to "
		 "run: rm x','bytes':30,'command':'rm x','approval':'refused','ran':false}");
	log = lines(&v->steps[0].log);
	assert_has(log, "\xe2\x86\x90 run_shell failed: the operator refused to run: rm x");
	free(log);
	view_free(v);
}

static void test_remembered_decision_is_logged_and_folded(void **state)
{
	struct view *v = running_view();

	(void)state;
	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'shell','step_id':'s1','command':'make test'}");
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.decision','gate_id':1,"
		 "'gate':'shell','step_id':'s1','decision':'approve','by':'operator',"
		 "'remember':true,'command':'make test'}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'gate.open','gate_id':2,"
		 "'gate':'shell','step_id':'s2','command':'ls'}");
	apply(v, "{'seq':6,'ts':'2026-01-01T10:00:05.000Z','type':'gate.decision','gate_id':2,"
		 "'gate':'shell','step_id':'s2','decision':'approve','by':'operator'}");
	apply(v, "{'seq':7,'ts':'2026-01-01T10:00:06.000Z','type':'gate.decision','gate_id':3,"
		 "'gate':'shell','step_id':'s2','decision':'approve','by':'operator',"
		 "'remember':true,'command':'make test'}");
	assert_int_equal(v->rs.shell_allowed.n, 1);
	assert_string_equal(v->rs.shell_allowed.v[0], "make test");
	{
		char *log = lines(&v->steps[0].log);
		assert_has(log, "Gate shell: approve by operator \xe2\x80\x94 allowed for the rest "
				"of the run\n");
		free(log);
	}
	view_free(v);
}

static void test_gate_list(void **state)
{
	struct view *v = running_view();
	unsigned long answered[] = {2};
	struct gate_waiting w = {v, answered, 1};
	size_t sel = 0;
	char *line;

	(void)state;
	apply(v, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'gate.open','gate_id':1,"
		 "'gate':'shell','step_id':'s1','command':'make test'}");
	apply(v, "{'seq':4,'ts':'2026-01-01T10:00:03.000Z','type':'gate.open','gate_id':2,"
		 "'gate':'high','step_id':'s2','step':{'step_id':'s2','name':'Two'}}");
	apply(v, "{'seq':5,'ts':'2026-01-01T10:00:04.000Z','type':'gate.open','gate_id':3,"
		 "'gate':'shell','step_id':'s2','command':'ls\\n-l'}");
	assert_int_equal(gate_list_count(&w), 2); /* gate 2 was answered here */
	assert_int_equal(gate_list_nth(&w, 1)->id, 3);
	assert_null(gate_list_nth(&w, 2));
	assert_int_equal(gate_list_index(&w, 3), 1);
	assert_int_equal(gate_list_index(&w, 2), -1);
	line = gate_list_line(gate_list_nth(&w, 0));
	assert_string_equal(line, "shell   s1                $ make test");
	free(line);
	line = gate_list_line(gate_list_nth(&w, 1));
	assert_string_equal(line, "shell   s2                $ ls -l"); /* one line */
	free(line);
	line = gate_list_line(&v->gates[1]);
	assert_string_equal(line, "high    s2                High-complexity step: Two");
	free(line);

	assert_int_equal(gate_list_key(&sel, 2, false, 'k'), GATE_LIST_CONTINUE);
	assert_int_equal(sel, 0);
	assert_int_equal(gate_list_key(&sel, 2, false, 'j'), GATE_LIST_CONTINUE);
	assert_int_equal(gate_list_key(&sel, 2, true, KEY_DOWN), GATE_LIST_CONTINUE);
	assert_int_equal(sel, 1);
	assert_int_equal(gate_list_key(&sel, 2, true, KEY_UP), GATE_LIST_CONTINUE);
	assert_int_equal(sel, 0);
	assert_int_equal(gate_list_key(&sel, 2, false, '\r'), GATE_LIST_PICK);
	assert_int_equal(gate_list_key(&sel, 2, false, '3'), GATE_LIST_CONTINUE);
	assert_int_equal(gate_list_key(&sel, 2, false, '2'), GATE_LIST_PICK);
	assert_int_equal(sel, 1);
	assert_int_equal(gate_list_key(&sel, 2, false, 27), GATE_LIST_CLOSE);
	assert_int_equal(gate_list_key(&sel, 2, false, 'w'), GATE_LIST_CLOSE);
	view_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate_dialog_shows_where_limit_and_allow_list),
		cmocka_unit_test(test_gate_dialog_shows_the_sandbox),
		cmocka_unit_test(test_shell_result_as_lines),
		cmocka_unit_test(test_remembered_decision_is_logged_and_folded),
		cmocka_unit_test(test_gate_list),
	};

	setlocale(LC_ALL, "C.UTF-8");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
