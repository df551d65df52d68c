/* test_store — the real binary and the workspace's one checkpoint store (issue 25): two
 * runs share it and the second writes none of the unchanged workspace again; --prune drops
 * only what no kept run needs; two runs at once on one workspace; a store deleted under a
 * run; a full disk. A scripted model (--script) plays every role. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>

#include "cli.h"
#include "pack.h"
#include "strbuf.h"
#include "strset.h"
#include "testdir.h"
#include "xalloc.h"

#define N_FILES 60

#define ACCEPT                                                                                     \
	"{\"overall_pass\": true, \"criteria_results\": [{\"criterion\": \"done\", \"passed\": "   \
	"true, \"evidence\": \"the diff shows it\", \"confidence\": 0.9, \"feedback\": \"\"}], "   \
	"\"action\": \"pass\", \"feedback_for_executor\": \"\", \"severity\": \"minor\"}"

struct fx {
	char *tmp, *ws, *runs;
};

static void fx_init(struct fx *fx)
{
	fx->tmp = cli_tmpdir();
	fx->ws = xasprintf("%s/ws", fx->tmp);
	fx->runs = xasprintf("%s/runs", fx->tmp);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	for (int i = 0; i < N_FILES; i++) {
		char *rel = xasprintf("f%03d.txt", i), *text = xasprintf("file %d of the workspace\n", i);
		free(cli_put(fx->ws, rel, text));
		free(text);
		free(rel);
	}
}

static void fx_free(struct fx *fx)
{
	cli_rm_rf(fx->tmp);
	free(fx->tmp);
	free(fx->ws);
	free(fx->runs);
}

/* A one-step script whose step runs `command` with run_shell; `name` names the file. */
static char *script(const struct fx *fx, const char *name, const char *command)
{
	char *text = xasprintf(
	    "{\"task\": \"Shell\",\n"
	    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [{\"step_id\": \"sh\",\n"
	    "   \"name\": \"Shell\", \"description\": \"Run a command.\",\n"
	    "   \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
	    "   \"expected_outputs\": [], \"estimated_complexity\": \"low\"}]}],\n"
	    " \"executor\": {\"sh\": [{\"rounds\": [{\"text\": \"Running.\", \"tool_calls\":\n"
	    "   [{\"name\": \"run_shell\", \"input\": {\"command\": \"%s\"}}]}],\n"
	    "   \"final\": {\"reasoning\": \"ran\", \"actions_taken\": [\"run_shell\"],\n"
	    "     \"step_output\": {\"findings\": \"done\", \"artifacts\": [],\n"
	    "       \"meets_criteria\": true}, \"confidence\": 0.9}}]},\n"
	    " \"verifier\": {\"sh\": [%s]}\n"
	    "}\n",
	    command, ACCEPT);
	char *path = cli_put(fx->tmp, name, text);

	free(text);
	return path;
}

#define RUN_ARGS(fx, scr)                                                                          \
	"--headless", "--json", "--yes", "--provider", "sim", "--script", scr, "--sim-delay", "0", \
	    "--workspace", (fx)->ws, "--runs-dir", (fx)->runs, "Shell"

/* The run folders below fx->runs, sorted. */
static void runs_now(const struct fx *fx, struct strvec *out)
{
	DIR *d = opendir(fx->runs);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			strvec_take(out, xasprintf("%s/%s", fx->runs, de->d_name));
	if (d)
		closedir(d);
	strvec_sort(out);
}

/* The run folder that `before` lacks. */
static char *new_run(const struct fx *fx, const struct strvec *before)
{
	struct strvec now = STRVEC_INIT;
	char *found = NULL;

	runs_now(fx, &now);
	for (size_t i = 0; i < now.n && !found; i++) {
		bool old = false;
		for (size_t j = 0; j < before->n && !old; j++)
			old = !strcmp(before->v[j], now.v[i]);
		if (!old)
			found = xstrdup(now.v[i]);
	}
	strvec_clear(&now);
	assert_non_null(found);
	return found;
}

/* Runs `scr` to its end (exit 0); its run folder. */
static char *run_script(const struct fx *fx, const char *scr)
{
	struct strvec before = STRVEC_INIT;
	struct cli_proc p;
	char *run;

	runs_now(fx, &before);
	p = cli_run(NULL, RUN_ARGS(fx, scr), NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	run = new_run(fx, &before);
	strvec_clear(&before);
	return run;
}

/* Every object id the store's packs hold, as hex; the pack files in `packs` (may be NULL). */
static void store_ids(const char *store, struct strset *ids, struct strvec *packs)
{
	char *dir = xasprintf("%s/objects/pack", store);
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), n = 0;
		unsigned char *raw;
		char *idx;
		if (len < 5 || strcmp(de->d_name + len - 4, ".idx") || strncmp(de->d_name, "pack-", 5))
			continue;
		idx = xasprintf("%s/%s", dir, de->d_name);
		raw = pack_idx_read(idx, &n);
		assert_non_null(raw);
		for (size_t i = 0; i < n; i++) {
			git_oid id;
			char hex[GIT_OID_HEXSZ + 1];
			git_oid_fromraw(&id, raw + i * GIT_OID_RAWSZ);
			strset_add(ids, git_oid_tostr(hex, sizeof(hex), &id));
		}
		if (packs)
			strvec_push(packs, de->d_name);
		free(raw);
		free(idx);
	}
	closedir(d);
	if (packs)
		strvec_sort(packs);
	free(dir);
}

static char *blob_hex(const char *text)
{
	git_oid id;
	char hex[GIT_OID_HEXSZ + 1];

	pack_hash(GIT_OBJECT_BLOB, text, strlen(text), &id);
	return xstrdup(git_oid_tostr(hex, sizeof(hex), &id));
}

static char *base(const char *path)
{
	return xstrdup(strrchr(path, '/') + 1);
}

/* Two runs on one workspace: one store, named by both run folders; the second run's
 * checkpoints add no object of the files it did not change (not one blob of them), and
 * --list-runs shows the store once, with its size. */
static void test_two_runs_share_one_store(void **state)
{
	struct fx fx;
	struct strset first = STRSET_INIT, second = STRSET_INIT;
	char *scr, *a, *b, *sa, *sb;
	size_t added = 0;
	struct cli_proc p;

	(void)state;
	fx_init(&fx);
	scr = script(&fx, "s.json", "echo line >> notes.txt");
	a = run_script(&fx, scr);
	sa = cli_run_store(a);
	assert_non_null(sa);
	assert_int_equal(strncmp(sa, cli_data_home(), strlen(cli_data_home())), 0);
	store_ids(sa, &first, NULL);
	for (int i = 0; i < N_FILES; i++) {
		char *text = xasprintf("file %d of the workspace\n", i), *hex = blob_hex(text);
		assert_true(strset_has(&first, hex));
		free(hex);
		free(text);
	}
	b = run_script(&fx, scr);
	sb = cli_run_store(b);
	assert_non_null(sb);
	assert_string_equal(sa, sb);
	store_ids(sb, &second, NULL);
	for (size_t i = 0; i < second.cap; i++)
		if (second.slot[i] && !strset_has(&first, second.slot[i]))
			added++;
	/* notes.txt's new blob, the root trees and the commits of its checkpoints */
	assert_true(added > 0 && added <= 8);
	/* The first run's checkpoints are not the second's parents: pruning one frees it. */
	p = cli_run(NULL, "--list-runs", "--runs-dir", fx.runs, NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "checkpoint store "));
	assert_non_null(strstr(p.out, "(2 runs listed)"));
	assert_null(strstr(p.out, "checkpoints gone"));
	cli_proc_free(&p);
	strset_clear(&first);
	strset_clear(&second);
	free(sa);
	free(sb);
	free(a);
	free(b);
	free(scr);
	fx_free(&fx);
}

static void make_old(const char *store, const char *run)
{
	char *name = base(run), *ref = xasprintf("%s/refs/pevtui/runs/%s", store, name);
	struct timespec t[2] = {{time(NULL) - 40 * 86400, 0}, {time(NULL) - 40 * 86400, 0}};

	assert_int_equal(utimensat(AT_FDCWD, ref, t, 0), 0);
	free(ref);
	free(name);
}

/* --prune: --dry-run changes nothing; then the old run's checkpoints go (it lists as
 * "checkpoints gone"), what the other run needs stays (its diff still reads), fewer
 * objects remain; with nothing kept the store goes. */
static void test_prune_drops_only_what_nothing_needs(void **state)
{
	struct fx fx;
	struct strset before = STRSET_INIT, after = STRSET_INIT;
	struct strvec packs = STRVEC_INIT, packs2 = STRVEC_INIT;
	char *scr, *scr2, *a, *b, *store, *na, *nb;
	struct cli_proc p;
	struct stat st;

	(void)state;
	fx_init(&fx);
	scr = script(&fx, "s.json", "echo one > one.txt; rm f001.txt");
	scr2 = script(&fx, "s2.json", "echo two > two.txt");
	a = run_script(&fx, scr);
	b = run_script(&fx, scr2);
	na = base(a);
	nb = base(b);
	store = cli_run_store(a);
	make_old(store, a);
	store_ids(store, &before, &packs);

	p = cli_run(NULL, "--prune", "--dry-run", NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "would drop"));
	assert_non_null(strstr(p.out, na));
	assert_null(strstr(p.out, nb));
	cli_proc_free(&p);
	store_ids(store, &after, &packs2);
	assert_int_equal(after.n, before.n);
	assert_int_equal(packs2.n, packs.n);
	strset_clear(&after);
	strvec_clear(&packs2);

	p = cli_run(NULL, "--prune", NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "dropped"));
	assert_non_null(strstr(p.out, na));
	cli_proc_free(&p);
	store_ids(store, &after, &packs2);
	assert_true(after.n < before.n);
	assert_int_equal(packs2.n, 1);
	{
		/* f001.txt: only the old run's first checkpoint had it... and the second run's,
		 * taken before it ran (the file was gone by then): so gone from the store. */
		char *hex = blob_hex("file 1 of the workspace\n");
		assert_true(strset_has(&before, hex));
		assert_false(strset_has(&after, hex));
		free(hex);
		/* two.txt's blob is the kept run's */
		hex = blob_hex("two\n");
		assert_true(strset_has(&after, hex));
		free(hex);
	}
	p = cli_run(NULL, "--list-runs", "--runs-dir", fx.runs, NULL);
	cli_expect_status(&p, 0);
	{
		char *line_a = strstr(p.out, na), *line_b = strstr(p.out, nb);
		assert_non_null(line_a);
		assert_non_null(line_b);
		assert_true(strstr(line_a, "(checkpoints gone)") &&
		            strstr(line_a, "(checkpoints gone)") < strchr(line_a, '\n'));
		assert_true(!strstr(line_b, "(checkpoints gone)") ||
		            strstr(line_b, "(checkpoints gone)") > strchr(line_b, '\n'));
	}
	cli_proc_free(&p);
	p = cli_run(NULL, "--diff", b, NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "two.txt"));
	cli_proc_free(&p);
	p = cli_run(NULL, "--diff", a, NULL);
	cli_expect_status(&p, 1);
	assert_non_null(strstr(p.err, "checkpoints are gone"));
	cli_proc_free(&p);

	/* Nothing kept: the store goes whole. */
	p = cli_run(NULL, "--prune", "--older-than", "0s", NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "removed"));
	cli_proc_free(&p);
	assert_int_not_equal(stat(store, &st), 0);
	p = cli_run(NULL, "--replay", b, "--headless", NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);

	strset_clear(&before);
	strset_clear(&after);
	strvec_clear(&packs);
	strvec_clear(&packs2);
	free(na);
	free(nb);
	free(store);
	free(a);
	free(b);
	free(scr);
	free(scr2);
	fx_free(&fx);
}

static bool gone_in_list(const struct fx *fx, const char *run)
{
	struct cli_proc p = cli_run(NULL, "--list-runs", "--runs-dir", fx->runs, NULL);
	char *name = base(run), *line;
	bool gone;

	cli_expect_status(&p, 0);
	line = strstr(p.out, name);
	assert_non_null(line);
	gone = strstr(line, "(checkpoints gone)") &&
	       strstr(line, "(checkpoints gone)") < strchr(line, '\n');
	cli_proc_free(&p);
	free(name);
	return gone;
}

/* [checkpoints] keep = 30d: a run prunes the old runs' checkpoints before it starts, and
 * not again within a day. */
static void test_keep_prunes_once_a_day(void **state)
{
	struct fx fx;
	char *scr, *cfg, *a, *b, *c, *store, *stamp;
	struct strvec before = STRVEC_INIT;
	struct cli_proc p;

	(void)state;
	fx_init(&fx);
	scr = script(&fx, "s.json", "echo a >> a.txt");
	cfg = cli_put(fx.tmp, "config", "[checkpoints]\nkeep = 30d\n");
	a = run_script(&fx, scr);
	store = cli_run_store(a);
	stamp = xasprintf("%s/pevtui/stores/.pruned", cli_data_home());
	unlink(stamp); /* another test's prune does not count */
	make_old(store, a);
	runs_now(&fx, &before);
	p = cli_run(NULL, RUN_ARGS(&fx, scr), "--config", cfg, NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	b = new_run(&fx, &before);
	assert_true(gone_in_list(&fx, a));
	assert_false(gone_in_list(&fx, b));
	assert_int_equal(access(stamp, F_OK), 0);
	/* within the day: b grows old, and the next run leaves it */
	make_old(store, b);
	strvec_clear(&before);
	runs_now(&fx, &before);
	p = cli_run(NULL, RUN_ARGS(&fx, scr), "--config", cfg, NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	c = new_run(&fx, &before);
	assert_false(gone_in_list(&fx, b));
	strvec_clear(&before);
	free(stamp);
	free(store);
	free(a);
	free(b);
	free(c);
	free(cfg);
	free(scr);
	fx_free(&fx);
}

/* A run from before shared stores (its own RUNDIR/checkpoints.git, no `store` file) is
 * still read where it is: --diff shows its changes, --list-runs does not call them gone. */
static void test_older_runs_own_store_still_read(void **state)
{
	struct fx fx;
	char *scr, *run, *store, *own, *named;
	struct cli_proc p;

	(void)state;
	fx_init(&fx);
	scr = script(&fx, "s.json", "echo old > old.txt");
	run = run_script(&fx, scr);
	store = cli_run_store(run);
	own = xasprintf("%s/checkpoints.git", run);
	named = xasprintf("%s/store", run);
	assert_int_equal(rename(store, own), 0);
	assert_int_equal(unlink(named), 0);
	p = cli_run(NULL, "--diff", run, NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "old.txt"));
	cli_proc_free(&p);
	assert_false(gone_in_list(&fx, run));
	free(named);
	free(own);
	free(store);
	free(run);
	free(scr);
	fx_free(&fx);
}

/* Two runs at once on one workspace: both end well, share the store, and each one's
 * diff reads its own checkpoints. */
static void test_concurrent_runs(void **state)
{
	struct fx fx;
	struct strvec before = STRVEC_INIT, now = STRVEC_INIT;
	char *s1, *s2, *st1, *st2;
	struct cli_bg b1, b2;
	struct cli_proc p;

	(void)state;
	fx_init(&fx);
	s1 = script(&fx, "s1.json", "echo a > a.txt");
	s2 = script(&fx, "s2.json", "echo b > b.txt");
	b1 = cli_spawn(NULL, RUN_ARGS(&fx, s1), NULL);
	b2 = cli_spawn(NULL, RUN_ARGS(&fx, s2), NULL);
	p = cli_wait(&b1);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	p = cli_wait(&b2);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	runs_now(&fx, &now);
	assert_int_equal(now.n, 2);
	st1 = cli_run_store(now.v[0]);
	st2 = cli_run_store(now.v[1]);
	assert_non_null(st1);
	assert_non_null(st2);
	assert_string_equal(st1, st2);
	for (size_t i = 0; i < now.n; i++) {
		p = cli_run(NULL, "--diff", now.v[i], NULL);
		cli_expect_status(&p, 0);
		assert_true(strstr(p.out, "a.txt") || strstr(p.out, "b.txt"));
		cli_proc_free(&p);
	}
	strvec_clear(&before);
	strvec_clear(&now);
	free(st1);
	free(st2);
	free(s1);
	free(s2);
	fx_free(&fx);
}

struct journal_wait {
	const struct fx *fx;
	const struct strvec *before; /* the run folders from before the run waited for */
	char *run;
};

static bool run_shell_started(void *ctx)
{
	struct journal_wait *w = ctx;
	struct strvec now = STRVEC_INIT;

	runs_now(w->fx, &now);
	if (!w->run && now.n > w->before->n)
		w->run = new_run(w->fx, w->before);
	strvec_clear(&now);
	return w->run && cli_journal_has(w->run, "\"tool\":\"run_shell\"");
}

/* The store deleted while a run's step runs: the next checkpoint makes it again and says
 * so; the run goes on and ends well. */
static void test_store_deleted_under_a_run(void **state)
{
	struct fx fx;
	char *s1, *s2, *first, *store, *head;
	struct strvec before = STRVEC_INIT;
	struct journal_wait w = {&fx, &before, NULL};
	struct cli_bg bg;
	struct cli_proc p;

	(void)state;
	fx_init(&fx);
	s1 = script(&fx, "s1.json", "echo a > a.txt");
	first = run_script(&fx, s1);
	store = cli_run_store(first);
	assert_non_null(store);
	runs_now(&fx, &before);
	/* the step waits for the test to say the store is gone (a file `go` in the
	 * workspace), at most 20 s */
	s2 = script(&fx, "s2.json",
	            "i=0; while [ ! -e go ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done; "
	            "echo b > b.txt");
	bg = cli_spawn(NULL, RUN_ARGS(&fx, s2), NULL);
	assert_true(cli_wait_until(run_shell_started, &w, 30));
	/* The run may still be writing into the store (its stat cache, the lock) while it
	 * is removed: a removal that meets a new file is tried again, as an operator would. */
	bool gone = false;
	for (int tries = 0; tries < 100 && !gone; tries++)
		gone = testdir_remove(store);
	assert_true(gone);
	free(cli_put(fx.ws, "go", "now\n"));
	p = cli_wait(&bg);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	assert_true(cli_journal_has(w.run, "was deleted while the run used it"));
	head = cli_slurp_in(store, "HEAD");
	assert_non_null(head); /* made again */
	free(head);
	strvec_clear(&before);
	free(w.run);
	free(store);
	free(first);
	free(s1);
	free(s2);
	fx_free(&fx);
}

/* A full disk (a file size limit) while checkpointing: a warning that the run goes on
 * without checkpoints, in the journal and report.md; the run ends well. */
static void test_full_disk(void **state)
{
	struct fx fx;
	char *scr, *run, *report, *big;
	unsigned char buf[4096];
	uint32_t x = 12345;
	int fd;

	(void)state;
	fx_init(&fx);
	/* 256 KB nothing compresses */
	big = xasprintf("%s/big.bin", fx.ws);
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	for (int k = 0; k < 64; k++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (unsigned char)x;
		}
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	}
	close(fd);
	scr = script(&fx, "s.json", "echo a > a.txt");
	cli_set_file_limit(150000);
	run = run_script(&fx, scr);
	cli_set_file_limit(0);
	assert_true(cli_journal_has(run, "goes on without checkpoints"));
	report = cli_slurp_in(run, "report.md");
	assert_non_null(report);
	assert_non_null(strstr(report, "goes on without checkpoints"));
	free(report);
	free(run);
	free(big);
	free(scr);
	fx_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_two_runs_share_one_store),
	    cmocka_unit_test(test_prune_drops_only_what_nothing_needs),
	    cmocka_unit_test(test_keep_prunes_once_a_day),
	    cmocka_unit_test(test_older_runs_own_store_still_read),
	    cmocka_unit_test(test_concurrent_runs),
	    cmocka_unit_test(test_store_deleted_under_a_run),
	    cmocka_unit_test(test_full_disk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
