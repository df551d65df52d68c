/* Unit tests for the fold: hand-built events in, run state out (steps, gates, money, time). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "fold.h"
#include "jsonx.h"
#include "xalloc.h"

/* Applies one journal-style line; single quotes stand for double quotes (no apostrophes). */
static void apply(struct run_state *rs, const char *line)
{
	char *s = xstrdup(line), *err = NULL;
	struct event *ev;

	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	ev = event_from_line(s, &err);
	if (!ev)
		fail_msg("bad test event: %s: %s", err, s);
	fold_apply(rs, ev);
	event_free(ev);
	free(s);
}

static const struct fstep *step(const struct run_state *rs, const char *id)
{
	int i = fold_find_step(rs, id);

	if (i < 0)
		fail_msg("no step %s", id);
	return &rs->steps[i];
}

static bool near(double a, double b)
{
	return a > b - 1e-6 && a < b + 1e-6;
}

#define PLAN3                                                                              \
	"{'goal':'Review the contract','steps':["                                          \
	"{'step_id':'s1','name':'Read','description':'read it','acceptance_criteria':['c1'],"  \
	"'dependencies':[],'expected_outputs':['notes.md'],'estimated_complexity':'low'},"  \
	"{'step_id':'s2','name':'Find clauses','acceptance_criteria':['c2a','c2b'],"          \
	"'dependencies':['s1'],'estimated_complexity':'medium'},"                           \
	"{'step_id':'s3','name':'Summarize','acceptance_criteria':['c3'],"                    \
	"'dependencies':['s1','s2'],'estimated_complexity':'high'}]}"

#define TS(s) "'ts':'2026-01-01T10:00:" s ".000Z'"

static void start(struct run_state *rs)
{
	fold_init(rs);
	apply(rs, "{'seq':1," TS("00") ",'type':'run.start','run_id':'r1','task':'Review',"
		  "'provider':'sim','simulated':true,'workspace':'/tmp/ws',"
		  "'models':{'planner':'p-model','executor':'e-model','verifier':'v-model'},"
		  "'policy':{'budget_usd':0.5,'max_retries':2,'max_replans':1,'parallel':3}}");
	apply(rs, "{'seq':2," TS("01") ",'type':'plan.proposed','revision':0,"
		  "'estimate_usd':0.0123,'reason':'initial','plan':" PLAN3 "}");
}

static void adopt(struct run_state *rs)
{
	apply(rs, "{'seq':3," TS("02") ",'type':'plan.adopted','revision':0,'kept':[],"
		  "'plan':" PLAN3 "}");
}

static void test_parse_ts(void **state)
{
	double a = fold_parse_ts("2026-01-01T10:00:00.000Z");
	double b = fold_parse_ts("2026-01-01T10:00:01.250Z");

	(void)state;
	assert_true(near(a, 1767261600.0));
	assert_true(near(b - a, 1.25));
	assert_true(fold_parse_ts("yesterday") == 0);
	assert_true(fold_parse_ts("2026-13-01T10:00:00Z") == 0);
	assert_true(fold_parse_ts("2026-01-01T10:00") == 0);
	assert_true(fold_parse_ts(NULL) == 0);
	/* the last time read is kept: asked again, or after another, the same answers */
	assert_true(fold_parse_ts("2026-01-01T10:00:01.250Z") == b);
	assert_true(fold_parse_ts("2026-01-01T10:00:01.250Z") == b);
	assert_true(fold_parse_ts("2026-01-01T10:00:00.000Z") == a);
	assert_true(fold_parse_ts("2026-01-01T10:00:01.25") == b);
	assert_true(fold_parse_ts("2026-01-01T10:00:01.2500000000000000000000000000000Z") == b);
	assert_true(fold_parse_ts("2026-01-01T10:00:01.2500000000000000000000000000009Z") == b);
	assert_true(fold_parse_ts("") == 0);
	assert_true(fold_parse_ts("") == 0);
	assert_true(fold_parse_ts("2026-01-01T10:00:01.250Z") == b);
}

/* The journal's spelling is read without sscanf and timegm: the same value as they give,
 * day by day over leap years and centuries, a day past the month's end included. */
static void test_parse_ts_as_timegm(void **state)
{
	static const char *const secs[] = {"00.000", "59.999", "07.25", "60.5", "01"};

	(void)state;
	for (int y = 1970; y <= 2404; y += (y < 2030 ? 1 : 37)) {
		for (int mo = 1; mo <= 12; mo++) {
			for (int d = 1; d <= 31; d++) {
				struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
						.tm_hour = (d * 7) % 24, .tm_min = (d * 13) % 60};
				const char *sec = secs[d % 5];
				char ts[64];
				double want = (double)timegm(&tm) + strtod(sec, NULL);

				snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%sZ", y, mo, d,
					 tm.tm_hour, tm.tm_min, sec);
				assert_true(fold_parse_ts(ts) == want);
			}
		}
	}
	assert_true(fold_parse_ts("9999-12-31T23:59:59.999Z") > 0);
	assert_true(fold_parse_ts("1969-12-31T23:59:59.999Z") == 0);
	assert_true(fold_parse_ts("2026-01-01T24:00:00.000Z") == 0);
	assert_true(fold_parse_ts("2026-01-01T10:60:00.000Z") == 0);
	assert_true(fold_parse_ts("2026-01-32T10:00:00.000Z") == 0);
	assert_true(fold_parse_ts("2026-00-01T10:00:00.000Z") == 0);
	assert_true(fold_parse_ts("2026-01-01T10:00:61.000Z") == 0);
	/* other spellings still read the general way */
	assert_true(fold_parse_ts("2026-1-1T10:00:00Z") == fold_parse_ts("2026-01-01T10:00:00Z"));
	assert_true(fold_parse_ts("2026-01-01T10:00:5.5Z") ==
		    fold_parse_ts("2026-01-01T10:00:05.500Z"));
}

/* The seconds are read without strtod when they can be: bit for bit what strtod reads,
 * fractions of every length (past what a double holds exactly), exponents and stray
 * characters included. */
static void test_parse_ts_seconds_as_strtod(void **state)
{
	static const char *const fixed[] = {
	    "00",         "59",           "05.",         "05.5",         "05.50",
	    "05.05",      "09.999999999", "59.9999999999999", "59.99999999999999999",
	    "00.1",       "00.3",         "07.0000000000001", "07.00000000000001",
	    "07.1234567890123", "07.12345678901234", "07.123456789012345678",
	    "05.5e1",     "05.5E-1",      "05e1",        "05.e1",        "05.5e",
	    "05.5x",      "05,5",         "05.-1",       "0512",         "05.678+01:00",
	};
	unsigned long long seed = 88172645463325252ULL;
	struct tm tm = {.tm_year = 2026 - 1900, .tm_mon = 6, .tm_mday = 9, .tm_hour = 13,
			.tm_min = 7};
	double base = (double)timegm(&tm);
	char ts[80];

	(void)state;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		double s = strtod(fixed[i], NULL);
		double want = s >= 0 && s < 61 ? base + s : 0;

		snprintf(ts, sizeof(ts), "2026-07-09T13:07:%sZ", fixed[i]);
		assert_true(fold_parse_ts(ts) == want);
		snprintf(ts, sizeof(ts), "1970-01-01T00:00:%sZ", fixed[i]);
		assert_true(fold_parse_ts(ts) == (s >= 0 && s < 61 ? s : 0));
	}
	for (int i = 0; i < 20000; i++) {
		char sec[40];
		int n = 2, digits;

		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		digits = (int)(seed % 19);
		sec[0] = (char)('0' + seed / 19 % 6);
		sec[1] = (char)('0' + seed / 114 % 10);
		if (digits) {
			sec[n++] = '.';
			for (int k = 1; k < digits; k++)
				sec[n++] = (char)('0' + (seed >> (k * 3)) % 10);
		}
		sec[n] = '\0';
		snprintf(ts, sizeof(ts), "2026-07-09T13:07:%sZ", sec);
		assert_true(fold_parse_ts(ts) == base + strtod(sec, NULL));
		/* At the epoch the seconds are the whole value: every bit of them shows. */
		snprintf(ts, sizeof(ts), "1970-01-01T00:00:%sZ", sec);
		assert_true(fold_parse_ts(ts) == strtod(sec, NULL));
	}
}

/* The first step with the id, by scanning: what fold_find_step's index must answer. */
static int scan_step(const struct run_state *rs, const char *id)
{
	for (size_t i = 0; i < rs->n_steps; i++)
		if (!strcmp(rs->steps[i].id, id))
			return (int)i;
	return -1;
}

/* Steps are found by an index of their ids: the same answers as a scan, with ids that
 * repeat (primed), that look primed already, and after the plan is replaced; steps set
 * by hand, which the index never saw, are still found. */
static void test_find_step_index(void **state)
{
	struct strbuf plan = STRBUF_INIT;
	struct run_state rs;
	char *line;

	(void)state;
	fold_init(&rs);
	/* real quotes: apply() would turn the primes into quotes */
	strbuf_adds(&plan, "{\"goal\":\"g\",\"steps\":[");
	for (int i = 0; i < 300; i++)
		strbuf_addf(&plan, "%s{\"step_id\":\"%s%d\"}", i ? "," : "",
			    i % 7 == 3 ? "dup" : "s", i % 7 == 3 ? i % 3 : i);
	strbuf_adds(&plan, ",{\"step_id\":\"dup0'\"},{\"step_id\":\"s12\"}]}");
	line = xasprintf("{\"seq\":2,\"ts\":\"2026-01-01T10:00:01.000Z\","
			 "\"type\":\"plan.proposed\",\"revision\":0,"
			 "\"reason\":\"initial\",\"plan\":%s}", plan.buf);
	{
		cJSON *o = cJSON_Parse(line);

		assert_non_null(o);
		fold_apply_json(&rs, EV_PLAN_PROPOSED, o);
		cJSON_Delete(o);
	}
	assert_int_equal(rs.n_steps, 302);
	/* "dup0" came 15 times (dup0 … dup0 and 14 primes): the literal "dup0'" gets 15 */
	assert_int_equal(strspn(rs.steps[300].id + 4, "'"), 15);
	assert_int_equal(strlen(rs.steps[300].id), 4 + 15);
	assert_string_equal(rs.steps[301].id, "s12'");
	for (size_t i = 0; i < rs.n_steps; i++)
		assert_int_equal(fold_find_step(&rs, rs.steps[i].id), (int)i);
	for (int i = 0; i < 400; i++) {
		char id[32];

		snprintf(id, sizeof(id), "s%d", i);
		assert_int_equal(fold_find_step(&rs, id), scan_step(&rs, id));
		snprintf(id, sizeof(id), "dup%d'", i % 5);
		assert_int_equal(fold_find_step(&rs, id), scan_step(&rs, id));
	}
	assert_int_equal(fold_find_step(&rs, "nope"), -1);
	assert_int_equal(fold_find_step(&rs, NULL), -1);
	free(line);
	/* replaced by a smaller plan: the old ids are gone */
	apply(&rs, "{'seq':3," TS("02") ",'type':'plan.adopted','revision':0,'kept':[],"
		   "'plan':" PLAN3 "}");
	assert_int_equal(fold_find_step(&rs, "s2"), 1);
	assert_int_equal(fold_find_step(&rs, "s200"), -1);
	assert_int_equal(fold_find_step(&rs, "dup0"), -1);
	fold_release(&rs);

	/* steps set by hand */
	{
		struct fstep v[2] = {{.id = "x"}, {.id = "y"}};
		struct run_state hand;

		fold_init(&hand);
		hand.steps = v;
		hand.n_steps = 2;
		assert_int_equal(fold_find_step(&hand, "y"), 1);
		assert_int_equal(fold_find_step(&hand, "z"), -1);
	}
	strbuf_release(&plan);
}

/* jsonx's getters (the fold's and the report's readers) answer as cJSON's lookup does,
 * on every key of tricky trees:
 * repeated names, an empty name, names alike but for their first or last byte, arrays,
 * scalars, NULL, numbers that are not finite, and a member without a name midway. */
static void test_getters_as_cjson(void **state)
{
	static const char *const texts[] = {
	    "{\"a\":1,\"ab\":\"x\",\"a\":2,\"\":true,\"b\":false,\"ba\":null,\"bb\":[1],"
	    "\"n\":1e999,\"m\":-1e999,\"s\":\"\",\"sa\":{\"a\":1},\"t\":\"true\"}",
	    "[1,\"a\",{\"a\":1}]",
	    "\"a\"",
	    "12",
	    "{}",
	};
	static const char *const keys[] = {"a", "ab", "", "b", "ba", "bb", "n", "m", "s",
					   "sa", "t", "x", "A", "abc", "sb", "c"};
	cJSON *odd = cJSON_Parse("{\"a\":1,\"b\":\"x\",\"c\":true}");

	(void)state;
	/* a member without a name ends cJSON's search */
	free(odd->child->next->string);
	odd->child->next->string = NULL;
	for (size_t t = 0; t <= sizeof(texts) / sizeof(texts[0]); t++) {
		cJSON *o = t < sizeof(texts) / sizeof(texts[0]) ? cJSON_Parse(texts[t]) : odd;
		const cJSON *probe[] = {o, NULL};

		for (size_t p = 0; p < 2; p++) {
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				double d1 = -7, d2 = -7;
				bool b1 = false, b2 = true, r1, r2;
				const char *key = keys[k];

				const cJSON *want = cJSON_GetObjectItemCaseSensitive(probe[p], key);

				assert_ptr_equal(jsonx_get(probe[p], key), want);
				assert_ptr_equal(jsonx_str(probe[p], key),
						 cJSON_IsString(want) ? want->valuestring : NULL);
				r1 = jsonx_num(probe[p], key, &d1);
				r2 = cJSON_IsNumber(want) && isfinite(want->valuedouble);
				if (r2)
					d2 = want->valuedouble;
				assert_true(r1 == r2 && (d1 == d2 || (!r1 && d1 == -7 && d2 == -7)));
				b2 = b1;
				r1 = jsonx_bool(probe[p], key, &b1);
				r2 = cJSON_IsBool(want);
				if (r2)
					b2 = cJSON_IsTrue(want);
				assert_true(r1 == r2 && b1 == b2);
			}
		}
		if (o != odd)
			cJSON_Delete(o);
	}
	cJSON_Delete(odd);
}

static void test_state_names(void **state)
{
	(void)state;
	for (int s = 0; s < FS__COUNT; s++)
		assert_int_equal(fold_state_from_name(fold_state_name((enum fstep_state)s)), s);
	assert_string_equal(fold_state_name(FS_FAIL_ACCEPTED), "fail_accepted");
	assert_int_equal(fold_state_from_name("stale"), FS_STALE);
	assert_int_equal(fold_state_from_name("fail-accepted"), -1);
	assert_int_equal(fold_state_from_name(NULL), -1);
	assert_true(fold_state_settled(FS_SKIPPED));
	assert_false(fold_state_settled(FS_STALE));
	assert_false(fold_state_settled(FS_WAITING));
}

static void test_run_start_and_proposal(void **state)
{
	struct run_state rs;

	(void)state;
	start(&rs);
	assert_string_equal(rs.run_id, "r1");
	assert_string_equal(rs.task, "Review");
	assert_string_equal(rs.provider, "sim");
	assert_string_equal(rs.workspace, "/tmp/ws");
	assert_true(rs.simulated);
	assert_string_equal(rs.models[0], "p-model");
	assert_string_equal(rs.models[2], "v-model");
	assert_true(near(rs.budget_usd, 0.5));
	assert_int_equal(rs.max_retries, 2);
	assert_int_equal(rs.max_replans, 1);
	assert_int_equal(rs.parallel, 3);
	assert_int_equal(rs.segments, 1);
	assert_true(near(rs.started, fold_parse_ts("2026-01-01T10:00:00.000Z")));
	/* Before any adoption the proposal's steps are the ones shown. */
	assert_false(rs.plan_adopted);
	assert_int_equal(rs.n_steps, 3);
	assert_string_equal(rs.goal, "Review the contract");
	assert_string_equal(rs.steps[1].name, "Find clauses");
	assert_int_equal(rs.steps[1].criteria.n, 2);
	assert_string_equal(rs.steps[2].deps.v[1], "s2");
	assert_string_equal(rs.steps[0].outputs.v[0], "notes.md");
	assert_string_equal(rs.steps[2].complexity, "high");
	assert_int_equal(rs.steps[0].state, FS_PENDING);
	assert_non_null(strstr(rs.steps[0].json, "\"description\":\"read it\""));
	assert_non_null(rs.proposed_json);
	assert_int_equal(rs.proposed_revision, 0);
	assert_string_equal(rs.proposed_reason, "initial");
	assert_true(near(rs.estimate_usd, 0.0123));
	assert_int_equal(rs.last_seq, 2);
	assert_int_equal(rs.events, 2);

	adopt(&rs);
	assert_true(rs.plan_adopted);
	assert_null(rs.proposed_json);
	assert_null(rs.proposed_reason);
	assert_non_null(strstr(rs.plan_json, "Summarize"));
	assert_int_equal(rs.revision, 0);
	/* A later proposal waits at its gate: the adopted steps stay. */
	apply(&rs, "{'seq':4," TS("03") ",'type':'plan.proposed','revision':1,'reason':'replan',"
		   "'failed_step':'s2','failure':'clauses missing','estimate_usd':null,"
		   "'plan':{'goal':'other','steps':[{'step_id':'x','name':'X'}]}}");
	assert_int_equal(rs.n_steps, 3);
	assert_string_equal(rs.goal, "Review the contract");
	assert_string_equal(rs.proposed_failed, "s2");
	assert_string_equal(rs.proposed_failure, "clauses missing");
	assert_int_equal(rs.replans, 1);
	assert_true(rs.estimate_usd < 0);
	fold_release(&rs);
}

/* A journal written before step.state existed: states come from step.start / step.end. */
static void test_old_journal_without_step_state(void **state)
{
	struct run_state rs;
	const struct fstep *s1;
	bool unknown;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'step.start','step_id':'s1','attempt':1,"
		   "'name':'Read'}");
	s1 = step(&rs, "s1");
	assert_int_equal(s1->state, FS_RUNNING);
	assert_int_equal(s1->attempts, 1);
	assert_int_equal(s1->round_attempts, 1);
	assert_true(near(s1->run_since, fold_parse_ts("2026-01-01T10:00:10.000Z")));
	apply(&rs, "{'seq':5," TS("12") ",'type':'llm.call','role':'executor','model':'e',"
		   "'step_id':'s1','attempt':1,'input_tokens':100,'output_tokens':20,"
		   "'cached_tokens':5,'cost_usd':0.004,'status':'ok'}");
	apply(&rs, "{'seq':6," TS("13") ",'type':'step.output','step_id':'s1','attempt':1,"
		   "'result':{'confidence':0.4,'step_output':{'findings':'f1'}}}");
	/* step.output says nothing about the state. */
	assert_int_equal(s1->state, FS_RUNNING);
	assert_string_equal(s1->output_json, "{\"findings\":\"f1\"}");
	assert_string_equal(s1->result_json,
			    "{\"confidence\":0.4,\"step_output\":{\"findings\":\"f1\"}}");
	apply(&rs, "{'seq':7," TS("14") ",'type':'verify.verdict','step_id':'s1','attempt':1,"
		   "'stage':'model','action':'retry','severity':'major','overall_pass':false,"
		   "'criteria':[{'criterion':'c1','passed':false,'evidence':'missing',"
		   "'confidence':0.9,'feedback':'cite it'}],'feedback':'Cite the clause numbers'}");
	assert_int_equal(s1->critiques.n, 1);
	assert_string_equal(s1->critiques.v[0], "Cite the clause numbers");
	apply(&rs, "{'seq':8," TS("20") ",'type':'step.start','step_id':'s1','attempt':2,"
		   "'name':'Read'}");
	apply(&rs, "{'seq':9," TS("22") ",'type':'llm.call','role':'verifier','model':'v',"
		   "'step_id':'s1','attempt':2,'input_tokens':10,'output_tokens':5,"
		   "'cost_usd':0.001,'status':'ok'}");
	apply(&rs, "{'seq':10," TS("25") ",'type':'verify.verdict','step_id':'s1','attempt':2,"
		   "'stage':'model','action':'pass','overall_pass':true,'criteria':[]}");
	apply(&rs, "{'seq':11," TS("30") ",'type':'step.end','step_id':'s1','status':'passed',"
		   "'attempts':2,'reused':false}");
	assert_int_equal(s1->state, FS_PASSED);
	assert_int_equal(s1->attempts, 2);
	assert_int_equal(s1->round_attempts, 2);
	assert_int_equal(s1->critiques.n, 1); /* a pass adds nothing */
	/* One period, 10:00:10 to 10:00:30: a second step.start does not restart it. */
	assert_true(near(s1->run_seconds, 20));
	assert_true(s1->run_since == 0);
	assert_true(near(fold_step_seconds(s1, 1e12), 20));
	assert_true(near(s1->first_start, fold_parse_ts("2026-01-01T10:00:10.000Z")));
	assert_true(near(s1->ended, fold_parse_ts("2026-01-01T10:00:30.000Z")));
	assert_int_equal(s1->cost.calls, 2);
	assert_true(near(s1->cost.usd, 0.005));
	assert_int_equal(s1->n_attempt_usd, 2);
	assert_true(near(s1->attempt_usd[0], 0.004));
	assert_true(near(s1->attempt_usd[1], 0.001));
	assert_int_equal(rs.roles[1].calls, 1);
	assert_int_equal(rs.roles[1].tokens_in, 100);
	assert_int_equal(rs.roles[1].tokens_cached, 5);
	assert_int_equal(rs.roles[2].calls, 1);
	assert_true(near(fold_total_usd(&rs, &unknown), 0.005));
	assert_false(unknown);
	assert_int_equal(rs.n_verdicts, 2);
	assert_int_equal(rs.verdicts[0].seq, 7);
	assert_string_equal(rs.verdicts[0].criteria[0].evidence, "missing");
	assert_string_equal(rs.verdicts[0].criteria[0].feedback, "cite it");
	assert_true(near(rs.verdicts[0].criteria[0].confidence, 0.9));
	assert_false(rs.verdicts[0].criteria[0].not_judged);
	assert_true(rs.verdicts[1].overall_pass);
	assert_int_equal(step(&rs, "s2")->state, FS_PENDING);
	fold_release(&rs);
}

/* The last of step.state, step.start and step.end naming a step wins, in either order. */
static void test_step_state_precedence_and_clock(void **state)
{
	struct run_state rs;
	const struct fstep *s2;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'step.state','step_id':'s2','state':'waiting',"
		   "'reason':'at the high gate'}");
	s2 = step(&rs, "s2");
	assert_int_equal(s2->state, FS_WAITING);
	assert_string_equal(s2->state_reason, "at the high gate");
	assert_true(s2->run_since == 0); /* waiting is not running */
	apply(&rs, "{'seq':5," TS("12") ",'type':'step.start','step_id':'s2','attempt':1}");
	assert_int_equal(s2->state, FS_RUNNING);
	assert_null(s2->state_reason);
	apply(&rs, "{'seq':6," TS("15") ",'type':'step.state','step_id':'s2','state':'waiting',"
		   "'reason':'shell gate'}");
	assert_int_equal(s2->state, FS_WAITING);
	assert_true(near(s2->run_seconds, 3)); /* the clock stops at its gate */
	apply(&rs, "{'seq':7," TS("20") ",'type':'step.state','step_id':'s2','state':'running'}");
	apply(&rs, "{'seq':8," TS("21") ",'type':'step.state','step_id':'s2','state':'verifying'}");
	assert_int_equal(s2->state, FS_VERIFYING);
	assert_true(near(fold_step_seconds(s2, fold_parse_ts("2026-01-01T10:00:24.000Z")), 7));
	apply(&rs, "{'seq':9," TS("25") ",'type':'step.end','step_id':'s2',"
		   "'status':'fail_accepted','attempts':1}");
	assert_int_equal(s2->state, FS_FAIL_ACCEPTED);
	assert_true(near(s2->run_seconds, 8));
	/* A later step.state still wins over the step.end before it. */
	apply(&rs, "{'seq':10," TS("30") ",'type':'step.state','step_id':'s2','state':'stale',"
		   "'reason':'s1 was edited','cause':'s1','by_seq':9}");
	assert_int_equal(s2->state, FS_STALE);
	assert_true(s2->ended == 0);
	assert_string_equal(s2->state_reason, "s1 was edited");
	/* An unknown state name changes nothing. */
	apply(&rs, "{'seq':11," TS("31") ",'type':'step.state','step_id':'s2','state':'dancing'}");
	assert_int_equal(s2->state, FS_STALE);
	/* Only settled statuses end a step. */
	apply(&rs, "{'seq':12," TS("32") ",'type':'step.end','step_id':'s2','status':'running'}");
	assert_int_equal(s2->state, FS_STALE);
	fold_release(&rs);
}

static void test_stale_resets_round(void **state)
{
	struct run_state rs;
	const struct fstep *s2;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'step.start','step_id':'s2','attempt':1}");
	apply(&rs, "{'seq':5," TS("11") ",'type':'verify.verdict','step_id':'s2','attempt':1,"
		   "'stage':'deterministic','action':'retry','criteria':[]}");
	apply(&rs, "{'seq':6," TS("12") ",'type':'step.start','step_id':'s2','attempt':2}");
	s2 = step(&rs, "s2");
	assert_int_equal(s2->round_attempts, 2);
	assert_int_equal(s2->critiques.n, 1);
	/* No feedback: the critique still says the attempt failed. */
	assert_string_equal(s2->critiques.v[0], "verification failed");
	apply(&rs, "{'seq':7," TS("15") ",'type':'step.state','step_id':'s2','state':'stale',"
		   "'reason':'s1 re-run'}");
	assert_int_equal(s2->round_attempts, 0);
	assert_int_equal(s2->critiques.n, 0);
	assert_int_equal(s2->attempts, 2); /* attempt numbers go on over the run */
	assert_true(near(s2->run_seconds, 5));
	apply(&rs, "{'seq':8," TS("20") ",'type':'step.start','step_id':'s2','attempt':3}");
	assert_int_equal(s2->round_attempts, 1);
	assert_int_equal(s2->attempts, 3);
	fold_release(&rs);
}

static void test_step_edit(void **state)
{
	struct run_state rs;
	const struct fstep *s2;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'verify.verdict','step_id':'s2','attempt':1,"
		   "'action':'retry','feedback':'more'}");
	apply(&rs, "{'seq':5," TS("11") ",'type':'step.edit','step_id':'s2','by':'operator',"
		   "'before':{},'after':{'step_id':'s2','name':'Find all clauses',"
		   "'acceptance_criteria':['every clause listed'],'dependencies':['s1'],"
		   "'estimated_complexity':'low'}}");
	s2 = step(&rs, "s2");
	assert_string_equal(s2->name, "Find all clauses");
	assert_int_equal(s2->criteria.n, 1);
	assert_string_equal(s2->criteria.v[0], "every clause listed");
	assert_string_equal(s2->complexity, "low");
	assert_true(s2->edited);
	assert_int_equal(s2->critiques.n, 0);
	assert_non_null(strstr(s2->json, "every clause listed"));
	/* The plan as adopted now holds the edit; the other steps are untouched. */
	assert_non_null(strstr(rs.plan_json, "Find all clauses"));
	assert_null(strstr(rs.plan_json, "\"Find clauses\""));
	assert_non_null(strstr(rs.plan_json, "Summarize"));
	/* An edit of a step the plan does not have changes nothing. */
	apply(&rs, "{'seq':6," TS("12") ",'type':'step.edit','step_id':'zz',"
		   "'after':{'step_id':'zz','name':'Z'}}");
	assert_int_equal(fold_find_step(&rs, "zz"), -1);
	fold_release(&rs);
}

/* An edit of the proposal at its gate (plan.proposed, reason edit) marks the steps it
 * changed or added, not the others; the first adoption keeps the marks (it adopts that
 * proposal), a later revision starts without them. */
static void test_plan_gate_edit_marks_edited(void **state)
{
	struct run_state rs;

	(void)state;
	start(&rs);
	apply(&rs, "{'seq':3," TS("02") ",'type':'plan.proposed','revision':0,'reason':'edit',"
		   "'plan':{'goal':'Review the contract','steps':["
		   "{'step_id':'s1','name':'Read','description':'read it','acceptance_criteria':['c1'],"
		   "'dependencies':[],'expected_outputs':['notes.md'],'estimated_complexity':'low'},"
		   "{'step_id':'s2','name':'Find every clause','acceptance_criteria':['c2a','c2b'],"
		   "'dependencies':['s1'],'estimated_complexity':'medium'},"
		   "{'step_id':'s4','name':'New','acceptance_criteria':['c4'],"
		   "'dependencies':[],'estimated_complexity':'low'}]}}");
	assert_false(step(&rs, "s1")->edited);
	assert_true(step(&rs, "s2")->edited);
	assert_true(step(&rs, "s4")->edited);
	apply(&rs, "{'seq':4," TS("03") ",'type':'plan.adopted','revision':0,'kept':[],"
		   "'plan':" PLAN3 "}");
	assert_true(step(&rs, "s2")->edited);
	assert_false(step(&rs, "s1")->edited);
	apply(&rs, "{'seq':5," TS("04") ",'type':'plan.adopted','revision':1,'kept':[],"
		   "'plan':" PLAN3 "}");
	assert_false(step(&rs, "s2")->edited);
	fold_release(&rs);
}

/* A replan keeps the passed steps named in "kept"; the others start over, pending. */
static void test_replan_keeps_passed_steps(void **state)
{
	struct run_state rs;
	const struct fstep *s;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'step.start','step_id':'s1','attempt':1}");
	apply(&rs, "{'seq':5," TS("11") ",'type':'llm.call','role':'executor','step_id':'s1',"
		   "'attempt':1,'cost_usd':0.01,'status':'ok'}");
	apply(&rs, "{'seq':6," TS("12") ",'type':'step.output','step_id':'s1','attempt':1,"
		   "'result':{'step_output':{'findings':'parties A, B'}}}");
	apply(&rs, "{'seq':7," TS("13") ",'type':'step.end','step_id':'s1','status':'passed',"
		   "'attempts':1}");
	apply(&rs, "{'seq':8," TS("14") ",'type':'step.start','step_id':'s2','attempt':1}");
	apply(&rs, "{'seq':9," TS("15") ",'type':'step.output','step_id':'s2','attempt':1,"
		   "'result':'not json at all'}");
	apply(&rs, "{'seq':10," TS("16") ",'type':'verify.verdict','step_id':'s2','attempt':1,"
		   "'action':'replan','feedback':'no clause numbers'}");
	apply(&rs, "{'seq':11," TS("20") ",'type':'plan.proposed','revision':1,'reason':'replan',"
		   "'failed_step':'s2','plan':{'goal':'g2','steps':["
		   "{'step_id':'s1','name':'Read','dependencies':[]},"
		   "{'step_id':'s2','name':'Find clauses again','dependencies':['s1']},"
		   "{'step_id':'s4','name':'Ask counsel','dependencies':['s2']}]}}");
	assert_int_equal(rs.n_steps, 3);
	assert_string_equal(rs.steps[2].id, "s3");
	apply(&rs, "{'seq':12," TS("22") ",'type':'plan.adopted','revision':1,'kept':['s1'],"
		   "'plan':{'goal':'g2','steps':["
		   "{'step_id':'s1','name':'Read','dependencies':[]},"
		   "{'step_id':'s2','name':'Find clauses again','dependencies':['s1']},"
		   "{'step_id':'s4','name':'Ask counsel','dependencies':['s2']}]}}");
	assert_int_equal(rs.revision, 1);
	assert_int_equal(rs.n_steps, 3);
	assert_string_equal(rs.goal, "g2");
	assert_null(rs.proposed_json);
	assert_int_equal(fold_find_step(&rs, "s3"), -1);
	s = step(&rs, "s1");
	assert_int_equal(s->state, FS_PASSED);
	assert_string_equal(s->output_json, "{\"findings\":\"parties A, B\"}");
	assert_non_null(s->result_json);
	assert_true(near(s->cost.usd, 0.01));
	assert_int_equal(s->attempts, 1);
	s = step(&rs, "s2");
	assert_int_equal(s->state, FS_PENDING);
	assert_null(s->result_json);
	assert_null(s->output_json);
	assert_int_equal(s->attempts, 1);       /* attempt numbers carry over by id */
	assert_int_equal(s->round_attempts, 0); /* but the round starts again */
	assert_int_equal(s->critiques.n, 0);
	assert_string_equal(s->name, "Find clauses again");
	assert_true(s->run_since == 0);          /* it is not running any more */
	assert_true(near(s->run_seconds, 8));    /* 10:00:14 to the adoption at 10:00:22 */
	s = step(&rs, "s4");
	assert_int_equal(s->state, FS_PENDING);
	assert_int_equal(s->attempts, 0);
	fold_release(&rs);
}

static void test_result_without_step_output(void **state)
{
	struct run_state rs;
	const struct fstep *s;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("12") ",'type':'step.output','step_id':'s2','attempt':1,"
		   "'result':'not json at all'}");
	s = step(&rs, "s2");
	assert_string_equal(s->result_json, "\"not json at all\"");
	assert_string_equal(s->output_json, "\"not json at all\"");
	fold_release(&rs);
}

static void test_gates(void **state)
{
	struct run_state rs;
	const struct fgate *g;

	(void)state;
	start(&rs);
	apply(&rs, "{'seq':3," TS("02") ",'type':'gate.open','gate_id':1,'gate':'plan',"
		   "'step_id':null,'revision':0,'estimate_usd':0.0123}");
	adopt(&rs);
	apply(&rs, "{'seq':5," TS("03") ",'type':'gate.open','gate_id':2,'gate':'high',"
		   "'step_id':'s3','step':{'step_id':'s3'}}");
	apply(&rs, "{'seq':6," TS("04") ",'type':'gate.open','gate_id':3,'gate':'shell',"
		   "'step_id':'s2','command':'ls'}");
	apply(&rs, "{'seq':7," TS("05") ",'type':'gate.open','gate_id':4,'gate':'weird'}");
	assert_int_equal(rs.n_gates, 3);
	assert_int_equal(rs.gates[0].kind, GATE_PLAN);
	assert_null(rs.gates[0].step_id);
	assert_int_equal(rs.gates[1].kind, GATE_HIGH);
	assert_string_equal(rs.gates[1].step_id, "s3");
	assert_int_equal(rs.gates[1].seq, 5);
	g = fold_find_gate(&rs, 3);
	assert_non_null(g);
	assert_int_equal(g->kind, GATE_SHELL);
	assert_non_null(strstr(g->json, "\"command\":\"ls\""));
	assert_null(fold_find_gate(&rs, 4));
	assert_int_equal(rs.max_gate_id, 3);
	assert_int_equal(rs.gates_opened[GATE_HIGH], 1);
	apply(&rs, "{'seq':8," TS("06") ",'type':'gate.decision','gate_id':1,'gate':'plan',"
		   "'decision':'approve','by':'operator'}");
	apply(&rs, "{'seq':9," TS("07") ",'type':'gate.decision','gate_id':2,'gate':'high',"
		   "'step_id':'s3','decision':'withdrawn','by':'engine','reason':'s3 went stale'}");
	assert_int_equal(rs.n_gates, 1);
	assert_int_equal(rs.gates[0].id, 3);
	/* A decision for a gate that is not open changes nothing. */
	apply(&rs, "{'seq':10," TS("08") ",'type':'gate.decision','gate_id':99,'gate':'high',"
		   "'decision':'approve'}");
	assert_int_equal(rs.n_gates, 1);
	/* --resume: the gates a crash left open are gone with the process that asked. */
	fold_forget_gates(&rs);
	assert_int_equal(rs.n_gates, 0);
	assert_int_equal(rs.max_gate_id, 3);
	fold_release(&rs);
}

/* The policy's gates and --yes, from run.start and then run.resume (the plan gate says
 * from them who will ask); a policy without a gates list leaves them as they were. And
 * a decision as the screen says it: the journal's skip is the keys' word. */
static void test_policy_gates_and_words(void **state)
{
	struct run_state rs;

	(void)state;
	fold_init(&rs);
	assert_false(rs.gates_known);
	apply(&rs, "{'seq':1,'ts':'2026-01-01T10:00:00.000Z','type':'run.start','run_id':'r',"
		   "'policy':{'gates':['plan','shell','nonsense'],'yes':false}}");
	assert_true(rs.gates_known);
	assert_int_equal(rs.gates_on, GATE_MASK(GATE_PLAN) | GATE_MASK(GATE_SHELL));
	assert_false(rs.yes);
	apply(&rs, "{'seq':2,'ts':'2026-01-01T10:00:01.000Z','type':'run.resume',"
		   "'policy':{'gates':['high'],'yes':true}}");
	assert_int_equal(rs.gates_on, GATE_MASK(GATE_HIGH));
	assert_true(rs.yes);
	apply(&rs, "{'seq':3,'ts':'2026-01-01T10:00:02.000Z','type':'run.resume',"
		   "'policy':{'max_retries':1}}");
	assert_int_equal(rs.gates_on, GATE_MASK(GATE_HIGH));
	fold_release(&rs);

	assert_string_equal(gate_decision_word("shell", "skip"), "refuse");
	assert_string_equal(gate_decision_word("mcp", "skip"), "refuse");
	assert_string_equal(gate_decision_word("replan", "skip"), "keep old plan");
	assert_string_equal(gate_decision_word("rewind", "skip"), "keep theirs");
	assert_string_equal(gate_decision_word("elicit", "skip"), "decline");
	assert_string_equal(gate_decision_word("step", "skip"), "skip");
	assert_string_equal(gate_decision_word("shell", "approve"), "approve");
	assert_string_equal(gate_decision_word(NULL, "skip"), "skip");
	assert_null(gate_decision_word("shell", NULL));
}

static void test_budget_changes(void **state)
{
	struct run_state rs;

	(void)state;
	start(&rs);
	assert_true(near(rs.budget_usd, 0.5));
	apply(&rs, "{'seq':3," TS("05") ",'type':'gate.open','gate_id':5,'gate':'budget',"
		   "'step_id':null,'spent_usd':0.51,'budget_usd':0.5,'needed_usd':0.01}");
	apply(&rs, "{'seq':4," TS("06") ",'type':'gate.decision','gate_id':5,'gate':'budget',"
		   "'decision':'approve','by':'operator','budget_usd':0.75}");
	assert_true(near(rs.budget_usd, 0.75));
	assert_int_equal(rs.n_gates, 0);
	/* A rejected budget gate names no cap. */
	apply(&rs, "{'seq':5," TS("07") ",'type':'gate.open','gate_id':6,'gate':'budget'}");
	apply(&rs, "{'seq':6," TS("08") ",'type':'gate.decision','gate_id':6,'gate':'budget',"
		   "'decision':'reject','budget_usd':9}");
	assert_true(near(rs.budget_usd, 0.75));
	apply(&rs, "{'seq':7," TS("09") ",'type':'operator.command','command':'budget',"
		   "'step_id':null,'budget_usd':2}");
	assert_true(near(rs.budget_usd, 2));
	apply(&rs, "{'seq':8," TS("10") ",'type':'operator.command','command':'pause'}");
	assert_true(near(rs.budget_usd, 2));
	/* --resume: the policy in force from here, flags given again included. */
	apply(&rs, "{'seq':9," TS("11") ",'type':'run.resume','policy':{'budget_usd':3,"
		   "'max_retries':4,'parallel':2}}");
	assert_true(near(rs.budget_usd, 3));
	assert_int_equal(rs.max_retries, 4);
	assert_int_equal(rs.max_replans, 1);
	assert_int_equal(rs.parallel, 2);
	apply(&rs, "{'seq':10," TS("12") ",'type':'run.resume','policy':{'budget_usd':null}}");
	assert_true(rs.budget_usd == 0);
	fold_release(&rs);
}

static void test_not_judged_and_costs(void **state)
{
	struct run_state rs;
	bool unknown;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'verify.verdict','step_id':'s2','attempt':1,"
		   "'stage':'model','action':'pass','overall_pass':true,'criteria':["
		   "{'criterion':'c2a','passed':true},"
		   "{'criterion':'c2b','passed':false,'not_judged':true},7]}");
	assert_int_equal(rs.n_verdicts, 1);
	assert_int_equal(rs.verdicts[0].n_criteria, 2);
	assert_false(rs.verdicts[0].criteria[0].not_judged);
	assert_true(rs.verdicts[0].criteria[1].not_judged);
	assert_true(rs.verdicts[0].criteria[1].confidence < 0);
	assert_int_equal(step(&rs, "s2")->critiques.n, 0);

	apply(&rs, "{'seq':5," TS("11") ",'type':'llm.call','role':'planner','model':'p',"
		   "'step_id':null,'input_tokens':1000,'output_tokens':200,'cost_usd':0.01,"
		   "'status':'ok'}");
	apply(&rs, "{'seq':6," TS("12") ",'type':'llm.call','role':'executor','model':'local',"
		   "'step_id':'s3','input_tokens':300,'output_tokens':30,'cost_usd':null,"
		   "'status':'ok'}");
	assert_true(near(fold_total_usd(&rs, &unknown), 0.01));
	assert_true(unknown);
	assert_true(rs.roles[1].unknown);
	assert_false(rs.roles[0].unknown);
	assert_int_equal(rs.roles[0].tokens_out, 200);
	assert_true(step(&rs, "s3")->cost.unknown);
	assert_int_equal(step(&rs, "s3")->n_attempt_usd, 0);
	fold_release(&rs);
}

static void test_pause_final_end_reopen(void **state)
{
	struct run_state rs;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("10") ",'type':'notice','level':'info','kind':'pause',"
		   "'message':'paused'}");
	assert_true(rs.paused);
	apply(&rs, "{'seq':5," TS("11") ",'type':'notice','level':'info','kind':'resume_run',"
		   "'message':'resumed'}");
	assert_false(rs.paused);
	apply(&rs, "{'seq':6," TS("12") ",'type':'step.start','step_id':'s1','attempt':1}");
	apply(&rs, "{'seq':7," TS("13") ",'type':'gate.open','gate_id':9,'gate':'high',"
		   "'step_id':'s3'}");
	apply(&rs, "{'seq':8," TS("40") ",'type':'run.final','answer':'PARTIAL: two of three',"
		   "'partial':true}");
	apply(&rs, "{'seq':9," TS("41") ",'type':'run.end','status':'partial','exit_code':2,"
		   "'reason':'one step skipped'}");
	assert_true(rs.final_seen);
	assert_true(rs.partial);
	assert_string_equal(rs.answer, "PARTIAL: two of three");
	assert_true(rs.ended);
	assert_string_equal(rs.end_status, "partial");
	assert_string_equal(rs.end_reason, "one step skipped");
	assert_int_equal(rs.exit_code, 2);
	assert_true(near(rs.ended_at - rs.started, 41));
	assert_int_equal(rs.n_gates, 0);
	/* run.end stops every clock: s1 ran from 10:00:12 to 10:00:41. */
	assert_true(step(&rs, "s1")->run_since == 0);
	assert_true(near(step(&rs, "s1")->run_seconds, 29));
	apply(&rs, "{'seq':10," TS("50") ",'type':'operator.command','command':'rerun',"
		   "'step_id':'s1'}");
	apply(&rs, "{'seq':11," TS("50") ",'type':'run.reopen','by_seq':10,'reason':'rerun'}");
	assert_false(rs.ended);
	assert_false(rs.final_seen);
	assert_null(rs.answer);
	assert_null(rs.end_status);
	assert_null(rs.end_reason);
	assert_int_equal(rs.exit_code, -1);
	assert_true(rs.ended_at == 0);
	assert_int_equal(rs.segments, 2);
	fold_release(&rs);
}

/* Outside input: wrong types, torn JSON and unknown names are ignored, never fatal. */
static void test_malformed_and_torn(void **state)
{
	struct run_state rs;
	struct event torn = {EV_STEP_START, 12, (char *)"s1",
			     (char *)"{\"seq\":12,\"ts\":\"2026-01-01T10:00:12.000Z\","
				     "\"type\":\"step.st"};
	struct event nojson = {EV_RUN_END, 13, NULL, NULL};

	(void)state;
	fold_init(&rs);
	apply(&rs, "{'seq':1,'ts':'bad','type':'plan.adopted','plan':{'steps':'nope'}}");
	assert_int_equal(rs.n_steps, 0);
	apply(&rs, "{'seq':2,'ts':'bad','type':'plan.adopted','plan':{'steps':[1,{'name':'x'},"
		   "{'step_id':'a','dependencies':'a','name':7},{'step_id':'a','name':'dup'}]}}");
	assert_int_equal(rs.n_steps, 2); /* the duplicate is kept apart, not merged */
	assert_string_equal(rs.steps[0].id, "a");
	assert_string_equal(rs.steps[1].id, "a'");
	assert_null(rs.steps[0].name);
	assert_int_equal(rs.steps[0].deps.n, 0);
	apply(&rs, "{'seq':3,'ts':'bad','type':'step.start','step_id':'a','attempt':'x'}");
	assert_int_equal(rs.steps[0].state, FS_RUNNING);
	assert_int_equal(rs.steps[0].attempts, 1);
	assert_true(rs.steps[0].run_since == 0); /* no time, no clock */
	apply(&rs, "{'seq':4,'ts':'bad','type':'step.start','step_id':'a','attempt':1e300}");
	assert_int_equal(rs.steps[0].attempts, 2);
	apply(&rs, "{'seq':5,'ts':'bad','type':'verify.verdict','criteria':[3,{'criterion':5}]}");
	assert_int_equal(rs.n_verdicts, 1);
	assert_null(rs.verdicts[0].action);
	assert_int_equal(rs.verdicts[0].n_criteria, 1);
	assert_null(rs.verdicts[0].criteria[0].text);
	apply(&rs, "{'seq':6,'ts':'bad','type':'gate.decision','gate_id':99}");
	apply(&rs, "{'seq':7,'ts':'bad','type':'llm.call','role':'executor','cost_usd':'free',"
		   "'input_tokens':-5,'step_id':'a','attempt':5000}");
	assert_true(rs.roles[1].unknown);
	assert_int_equal(rs.roles[1].tokens_in, 0);
	assert_int_equal(rs.steps[0].n_attempt_usd, 0);
	apply(&rs, "{'seq':8,'ts':'bad','type':'gate.open'}");
	assert_int_equal(rs.n_gates, 0);
	apply(&rs, "{'seq':9,'ts':'bad','type':'run.end','exit_code':'x'}");
	assert_true(rs.ended);
	assert_int_equal(rs.exit_code, -1);
	apply(&rs, "{'seq':10,'ts':'bad','type':'step.edit','step_id':'a','after':'text'}");
	assert_false(rs.steps[0].edited);
	apply(&rs, "{'seq':11,'ts':'bad','type':'run.start','policy':[1,2],'models':'x'}");
	assert_null(rs.run_id);
	assert_true(rs.started == 0);
	/* A torn line (a crash mid-write) and an event without text are ignored. */
	fold_apply(&rs, &torn);
	fold_apply(&rs, &nojson);
	fold_apply(&rs, NULL);
	fold_apply_json(&rs, EV_STEP_END, NULL);
	fold_apply_json(&rs, 4242, NULL);
	assert_int_equal(rs.steps[0].state, FS_RUNNING);
	assert_int_equal(rs.events, 11);
	assert_int_equal(rs.last_seq, 11);
	fold_release(&rs);
	/* Released state is empty and can be used again. */
	assert_int_equal(rs.n_steps, 0);
	assert_null(rs.steps);
	fold_release(&rs);
}

#define CK_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define CK_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* step.changes: one record per attempt, checkpoint ids checked, paths with their kind. */
static void test_step_changes(void **state)
{
	struct run_state rs;
	const struct fchange *c;

	(void)state;
	start(&rs);
	adopt(&rs);
	apply(&rs, "{'seq':4," TS("03") ",'type':'step.changes','step_id':'s1','attempt':1,"
		   "'before':'" CK_A "','after':'" CK_B "','files':[{'path':'a.txt','change':'added',"
		   "'plus':2,'minus':0},{'path':'b.bin','change':'deleted','binary':true}],"
		   "'files_more':3,'plus':2,'minus':0,'stat':'5 files changed, +2 -0'}");
	/* A bad id (not 40 hex digits) is kept out; the record stays. */
	apply(&rs, "{'seq':5," TS("04") ",'type':'step.changes','step_id':'s1','attempt':2,"
		   "'before':'../../etc','after':'" CK_A "','files':[],'stat':'no files changed'}");
	apply(&rs, "{'seq':6," TS("05") ",'type':'step.changes','attempt':1}"); /* no step */
	assert_int_equal(rs.n_changes, 2);
	c = fold_find_change(&rs, "s1", 1);
	assert_non_null(c);
	assert_int_equal(c->seq, 4);
	assert_string_equal(c->before, CK_A);
	assert_string_equal(c->after, CK_B);
	assert_int_equal(c->plus, 2);
	assert_int_equal(c->n_files, 5);
	assert_int_equal(c->paths.n, 2);
	assert_string_equal(c->paths.v[1], "b.bin");
	assert_string_equal(c->kinds, "AD");
	assert_string_equal(c->stat, "5 files changed, +2 -0");
	c = fold_find_change(&rs, "s1", 0);
	assert_int_equal(c->attempt, 2);
	assert_string_equal(c->before, "");
	assert_string_equal(c->after, CK_A);
	assert_null(fold_find_change(&rs, "s2", 0));
	assert_null(fold_find_change(&rs, "s1", 3));
	fold_release(&rs);
}

/* The fold cuts each step's text out of the plan's print: the same bytes as printing the
 * step alone, for awkward steps (escapes, raw values that look like structure, numbers,
 * nested arrays), with members that are not steps around them, in a plan whose "steps"
 * is not its first member and repeats. */
static void test_step_text_as_printed(void **state)
{
	static const char *const plans[] = {
		"{\"goal\":\"a \\\"steps\\\":[{\\\\\",\"x\":[1,{\"steps\":[]}],\"steps\":["
		"{\"step_id\":\"s1\",\"name\":\"q\\\"uote \\\\\\\\\\\" back\\\\\",\"n\":-0.0,"
		"\"big\":1e300,\"small\":1.5e-300,\"t\":true,\"f\":false,\"z\":null,"
		"\"deep\":[[[],{}],[{\"a\":[\"]\",\"}\",\",\"]}]],\"u\":\"\\u00e9\\u0001\\t\\n\"},"
		"7,\"str\",[{\"step_id\":\"inner\"}],{\"name\":\"no id\"},"
		"{\"step_id\":\"s2\",\"dependencies\":[\"s1\"],\"e\":{}},"
		"{\"step_id\":\"s3\",\"\":\"empty key\",\"k\\\"\":\"\\\\\"}],"
		"\"steps\":[{\"step_id\":\"shadowed\"}]}",
		"{\"steps\":[]}",
		"{\"steps\":[{\"step_id\":\"only\"}]}",
	};

	(void)state;
	for (size_t k = 0; k < sizeof(plans) / sizeof(plans[0]); k++) {
		for (int adopt = 0; adopt < 2; adopt++) {
			struct run_state rs;
			cJSON *o = cJSON_CreateObject(), *plan = cJSON_Parse(plans[k]), *arr, *it;
			size_t n = 0;

			assert_non_null(plan);
			arr = cJSON_GetObjectItemCaseSensitive(plan, "steps");
			/* Raw values are printed as they are: ones that look like the end of
			 * a step and the start of another. */
			it = cJSON_GetArrayItem(arr, 0);
			if (it) {
				cJSON_AddRawToObject(it, "raw", "1},{\"step_id\":\"fake\"");
				cJSON_AddRawToObject(it, "raw2", "\"]\"");
			}
			cJSON_AddNumberToObject(o, "revision", 0);
			cJSON_AddItemToObject(o, "plan", plan);
			fold_init(&rs);
			fold_apply_json(&rs, adopt ? EV_PLAN_ADOPTED : EV_PLAN_PROPOSED, o);
			cJSON_ArrayForEach(it, arr)
			{
				const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "step_id");
				char *want;

				if (!cJSON_IsObject(it) || !cJSON_IsString(id))
					continue;
				want = cJSON_PrintUnformatted(it);
				assert_true(n < rs.n_steps);
				assert_string_equal(rs.steps[n].id, id->valuestring);
				assert_string_equal(rs.steps[n].json, want);
				cJSON_free(want);
				n++;
			}
			assert_int_equal(rs.n_steps, n);
			fold_release(&rs);
			cJSON_Delete(o);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ts),
		cmocka_unit_test(test_parse_ts_as_timegm),
		cmocka_unit_test(test_parse_ts_seconds_as_strtod),
		cmocka_unit_test(test_find_step_index),
		cmocka_unit_test(test_step_text_as_printed),
		cmocka_unit_test(test_getters_as_cjson),
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_run_start_and_proposal),
		cmocka_unit_test(test_old_journal_without_step_state),
		cmocka_unit_test(test_step_state_precedence_and_clock),
		cmocka_unit_test(test_stale_resets_round),
		cmocka_unit_test(test_step_edit),
		cmocka_unit_test(test_plan_gate_edit_marks_edited),
		cmocka_unit_test(test_replan_keeps_passed_steps),
		cmocka_unit_test(test_result_without_step_output),
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_policy_gates_and_words),
		cmocka_unit_test(test_budget_changes),
		cmocka_unit_test(test_not_judged_and_costs),
		cmocka_unit_test(test_pause_final_end_reopen),
		cmocka_unit_test(test_malformed_and_torn),
		cmocka_unit_test(test_step_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
