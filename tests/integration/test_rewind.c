/* test_rewind — pevtui --rewind through the real binary: a whole run rewound leaves every
 * file, exec bit and link as before the run and the workspace's own .git byte-identical;
 * the rewind can be undone; a step, a bad run or step, and a live run. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "strbuf.h"
#include "testdir.h"
#include "xalloc.h"

/* Two steps: `mess` changes, adds, deletes, re-links and re-modes files; `more` (after it)
 * adds one file. The verifier passes both (the default). */
static const char SCRIPT[] =
    "{\"task\": \"Mess up the workspace\",\n"
    " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [\n"
    "   {\"step_id\": \"mess\", \"name\": \"Mess\", \"description\": \"Change files.\",\n"
    "    \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
    "    \"expected_outputs\": [\"new.txt\"], \"estimated_complexity\": \"low\"},\n"
    "   {\"step_id\": \"more\", \"name\": \"More\", \"description\": \"Add one.\",\n"
    "    \"acceptance_criteria\": [\"done\"], \"dependencies\": [\"mess\"],\n"
    "    \"expected_outputs\": [\"more.txt\"], \"estimated_complexity\": \"low\"}]}],\n"
    " \"executor\": {\n"
    "  \"mess\": [{\"rounds\": [{\"text\": \"Messing.\", \"tool_calls\": [{\"name\": "
    "\"run_shell\",\n"
    "    \"input\": {\"command\": \"echo more >> kept.txt; rm gone.txt; chmod +x script.sh; "
    "chmod -x tool.sh; rm link1; ln -s gone.txt link2; ln -sfn gone.txt link3; echo deep "
    ">> sub/deep/file.txt; echo new > new.txt; mkdir -p newdir/inner; echo x > "
    "newdir/inner/x.txt\"}}]}],\n"
    "    \"final\": {\"reasoning\": \"done\", \"actions_taken\": [\"run_shell\"],\n"
    "      \"step_output\": {\"findings\": \"done\", \"artifacts\": [\"new.txt\"],\n"
    "        \"meets_criteria\": true}, \"confidence\": 0.9}}],\n"
    "  \"more\": [{\"rounds\": [{\"text\": \"Adding.\", \"tool_calls\": [{\"name\": "
    "\"run_shell\",\n"
    "    \"input\": {\"command\": \"echo more > more.txt\"}}]}],\n"
    "    \"final\": {\"reasoning\": \"done\", \"actions_taken\": [\"run_shell\"],\n"
    "      \"step_output\": {\"findings\": \"done\", \"artifacts\": [\"more.txt\"],\n"
    "        \"meets_criteria\": true}, \"confidence\": 0.9}}]}}\n";

struct fx {
	char *dir, *runs, *ws, *script, *run;
};

static void put(const char *ws, const char *rel, const char *text, mode_t mode)
{
	char *p = xasprintf("%s/%s", ws, rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
	free(p);
}

static void sub(const char *ws, const char *rel)
{
	char *p = xasprintf("%s/%s", ws, rel);

	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
}

static void link_to(const char *ws, const char *rel, const char *target)
{
	char *p = xasprintf("%s/%s", ws, rel);

	assert_int_equal(symlink(target, p), 0);
	free(p);
}

/* The workspace as a git repository of the operator's, with files of every kind. */
static void seed(const char *ws)
{
	put(ws, "kept.txt", "keep\n", 0644);
	put(ws, "gone.txt", "bye\n", 0644);
	put(ws, "script.sh", "#!/bin/sh\necho hi\n", 0644);
	put(ws, "tool.sh", "#!/bin/sh\necho tool\n", 0755);
	link_to(ws, "link1", "kept.txt");
	link_to(ws, "link3", "kept.txt");
	sub(ws, "sub");
	sub(ws, "sub/deep");
	put(ws, "sub/deep/file.txt", "deep\n", 0644);
	sub(ws, ".git");
	sub(ws, ".git/objects");
	sub(ws, ".git/objects/ab");
	sub(ws, ".git/hooks");
	put(ws, ".git/HEAD", "ref: refs/heads/main\n", 0644);
	put(ws, ".git/config", "[core]\n\tbare = false\n", 0644);
	put(ws, ".git/objects/ab/cdef0123", "\x78\x01\x2b\x49\x4d\x2e\x01\x00", 0444);
	put(ws, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
	put(ws, ".git/index", "DIRC\x00\x00\x00\x02", 0644);
}

/* Every entry below dir, sorted: path, type, (for files) exec bit — or all permission bits
 * below .git, which nothing may touch — and content, (for links) target. */
static void walk(const char *root, const char *rel, struct strvec *out)
{
	char *dir = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		char *r, *p, *line = NULL;
		struct stat st;
		bool in_git;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		p = xasprintf("%s/%s", root, r);
		in_git = !strncmp(r, ".git", 4);
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			line = in_git ? xasprintf("%s/ dir %o", r, st.st_mode & 07777)
			              : xasprintf("%s/ dir", r);
			walk(root, r, out);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(p, target, sizeof(target) - 1);
			assert_true(n >= 0);
			target[n] = '\0';
			line = xasprintf("%s -> %s", r, target);
		} else {
			char *s = testdir_slurp(p);
			assert_non_null(s);
			line = in_git ? xasprintf("%s file %o %s", r, st.st_mode & 07777, s)
			              : xasprintf("%s file %s %s", r,
			                          st.st_mode & S_IXUSR ? "exec" : "plain", s);
			free(s);
		}
		strvec_push(out, line);
		free(line);
		free(p);
		free(r);
	}
	closedir(d);
	free(dir);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *listing(const char *ws)
{
	struct strvec v = STRVEC_INIT;
	char *s;

	walk(ws, "", &v);
	qsort(v.v, v.n, sizeof(*v.v), cmp_str);
	s = strvec_join(&v, "\n");
	strvec_clear(&v);
	return s;
}

/* .git alone, with its modification times: byte-identical means untouched. */
static char *git_stamp(const char *ws)
{
	const char *files[] = {".git/HEAD", ".git/config", ".git/objects/ab/cdef0123",
	                       ".git/hooks/pre-commit", ".git/index"};
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char *p = xasprintf("%s/%s", ws, files[i]);
		struct stat st;
		assert_int_equal(stat(p, &st), 0);
		strbuf_addf(&sb, "%s %ld.%09ld %ld\n", files[i], (long)st.st_mtim.tv_sec,
		            st.st_mtim.tv_nsec, (long)st.st_ino);
		free(p);
	}
	return strbuf_detach(&sb);
}

static void fx_run(struct fx *fx)
{
	FILE *f;
	struct cli_proc p;

	fx->dir = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->dir);
	fx->ws = xasprintf("%s/ws", fx->dir);
	fx->script = xasprintf("%s/script.json", fx->dir);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
	seed(fx->ws);
	f = fopen(fx->script, "w");
	assert_non_null(f);
	fputs(SCRIPT, f);
	fclose(f);
	p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", fx->script,
	            "--sim-delay", "0", "--runs-dir", fx->runs, "--workspace", fx->ws,
	            "Mess up the workspace", NULL);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	cli_proc_free(&p);
	fx->run = cli_only_run(fx->runs);
}

static void fx_free(struct fx *fx)
{
	cli_rm_rf(fx->dir);
	free(fx->dir);
	free(fx->runs);
	free(fx->ws);
	free(fx->script);
	free(fx->run);
}

static struct cli_proc rewind_cmd(const struct fx *fx, const char *what, bool yes)
{
	if (yes)
		return cli_run(NULL, "--runs-dir", fx->runs, "--workspace", fx->ws, "--rewind",
		               what, "--yes", NULL);
	return cli_run(NULL, "--runs-dir", fx->runs, "--workspace", fx->ws, "--rewind", what, NULL);
}

/* The id in "To undo: pevtui --rewind RUN:ID" (caller frees). */
static char *undo_ref(const char *out)
{
	const char *u = strstr(out, "To undo: pevtui --rewind ");
	size_t n;

	assert_non_null(u);
	u += strlen("To undo: pevtui --rewind ");
	n = strcspn(u, "\n");
	return xstrndup(u, n);
}

static void test_whole_run(void **state)
{
	struct fx fx = {0};
	char *before, *before_git, *after, *messed, *undo;
	struct cli_proc p;
	cJSON *j, *ev;
	bool journaled = false;

	(void)state;
	{
		/* The listing before the run, taken on the seeded folder. */
		char *tmp = cli_tmpdir(), *ws = xasprintf("%s/ws", tmp);
		assert_int_equal(mkdir(ws, 0755), 0);
		seed(ws);
		before = listing(ws);
		cli_rm_rf(tmp);
		free(ws);
		free(tmp);
	}
	fx_run(&fx);
	before_git = git_stamp(fx.ws);
	messed = listing(fx.ws);
	assert_string_not_equal(before, messed);
	assert_non_null(strstr(messed, "link2 -> gone.txt"));

	/* Without --yes and without a terminal: it says what it would do and does nothing. */
	p = rewind_cmd(&fx, "last", false);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.out, "to before the run"));
	assert_non_null(strstr(p.out, "remove      new.txt"));
	assert_non_null(strstr(p.out, "bring back  gone.txt"));
	assert_non_null(strstr(p.out, "put back    kept.txt"));
	assert_non_null(strstr(p.err, "nothing was changed: pass --yes"));
	cli_proc_free(&p);
	after = listing(fx.ws);
	assert_string_equal(after, messed);
	free(after);

	p = rewind_cmd(&fx, "last", true);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	after = listing(fx.ws);
	assert_string_equal(after, before); /* every file, exec bit and link */
	free(after);
	after = git_stamp(fx.ws);
	assert_string_equal(after, before_git); /* .git: not even a touch */
	free(after);
	undo = undo_ref(p.out);
	cli_proc_free(&p);

	j = cli_load_journal(fx.run);
	cJSON_ArrayForEach(ev, j)
	{
		const cJSON *kind = cJSON_GetObjectItem(ev, "kind");
		if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "rewind"))
			journaled = true;
	}
	assert_true(journaled);
	cJSON_Delete(j);

	/* The undo puts the run's work back. */
	p = rewind_cmd(&fx, undo, true);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	cli_proc_free(&p);
	after = listing(fx.ws);
	assert_string_equal(after, messed);
	free(after);
	after = git_stamp(fx.ws);
	assert_string_equal(after, before_git);
	free(after);

	free(undo);
	free(messed);
	free(before_git);
	free(before);
	fx_free(&fx);
}

/* RUN:STEP goes back to before that step: the earlier step's work stays. */
static void test_one_step(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *path, *s;

	(void)state;
	fx_run(&fx);
	p = rewind_cmd(&fx, "last:more", true);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "to before step more"));
	cli_proc_free(&p);
	path = xasprintf("%s/more.txt", fx.ws);
	assert_int_equal(access(path, F_OK), -1);
	free(path);
	path = xasprintf("%s/new.txt", fx.ws);
	s = testdir_slurp(path);
	assert_string_equal(s, "new\n");
	free(s);
	free(path);
	fx_free(&fx);
}

/* A run or step that does not exist: one line on stderr, a non-zero exit, no change. */
static void test_unknown(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *before, *after;

	(void)state;
	fx_run(&fx);
	before = listing(fx.ws);
	p = rewind_cmd(&fx, "no-such-run", true);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "no run \"no-such-run\""));
	assert_null(strchr(strchr(p.err, '\n') + 1, '\n')); /* one line */
	cli_proc_free(&p);
	p = rewind_cmd(&fx, "last:no-such-step", true);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "has no step \"no-such-step\" that ran (its steps: mess, "
	                              "more)"));
	assert_null(strchr(strchr(p.err, '\n') + 1, '\n'));
	cli_proc_free(&p);
	p = rewind_cmd(&fx, "last:0123456789abcdef", true);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "no checkpoint 0123456789abcdef"));
	cli_proc_free(&p);
	after = listing(fx.ws);
	assert_string_equal(before, after);
	free(before);
	free(after);
	fx_free(&fx);
}

/* The journal of the run below runs has `needle` (cli_wait_until). */
struct live_ctx {
	const char *runs;
	char *run;
};

static bool run_started(void *ctx)
{
	struct live_ctx *lc = ctx;
	DIR *d = opendir(lc->runs);
	struct dirent *de;
	bool ok = false;

	while (d && !lc->run && (de = readdir(d)))
		if (de->d_name[0] != '.')
			lc->run = xasprintf("%s/%s", lc->runs, de->d_name);
	if (d)
		closedir(d);
	if (lc->run) {
		char *p = xasprintf("%s/journal.jsonl", lc->run), *s = testdir_slurp(p);
		ok = s && strstr(s, "\"type\":\"step.changes\"");
		free(s);
		free(p);
	}
	return ok;
}

/* A run its pevtui still runs (not paused): refused, nothing changed. */
static void test_live_run_refused(void **state)
{
	struct fx fx = {0};
	struct cli_bg bg;
	struct cli_proc p;
	struct live_ctx lc = {0};
	FILE *f;

	(void)state;
	fx.dir = cli_tmpdir();
	fx.runs = xasprintf("%s/runs", fx.dir);
	fx.ws = xasprintf("%s/ws", fx.dir);
	fx.script = xasprintf("%s/script.json", fx.dir);
	assert_int_equal(mkdir(fx.ws, 0755), 0);
	seed(fx.ws);
	f = fopen(fx.script, "w");
	assert_non_null(f);
	fputs(SCRIPT, f);
	fclose(f);
	bg = cli_spawn(NULL, "--headless", "--yes", "--provider", "sim", "--script", fx.script,
	               "--sim-delay", "200", "--runs-dir", fx.runs, "--workspace", fx.ws,
	               "Mess up the workspace", NULL);
	lc.runs = fx.runs;
	assert_true(cli_wait_until(run_started, &lc, 60));
	p = rewind_cmd(&fx, "last", true);
	assert_int_equal(p.status, 1);
	assert_non_null(strstr(p.err, "is live (pid"));
	assert_non_null(strstr(p.err, "nothing was changed"));
	cli_proc_free(&p);
	assert_int_equal(kill(bg.pid, SIGKILL), 0);
	p = cli_wait(&bg);
	cli_proc_free(&p);
	free(lc.run);
	fx_free(&fx);
}

/* What [checkpoints] exclude leaves out is not the rewind's either: a folder the config
 * excludes, written after the run, is still there after a rewind of the whole run, while
 * everything else goes back. */
static void test_excluded_untouched(void **state)
{
	struct fx fx = {0};
	char *cfg, *dir, *file, *s;
	struct cli_proc p;
	FILE *f;

	(void)state;
	fx_run(&fx);
	cfg = xasprintf("%s/config", fx.dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fputs("[checkpoints]\nexclude = cache/\n", f);
	fclose(f);
	dir = xasprintf("%s/cache", fx.ws);
	file = xasprintf("%s/cache/blob", fx.ws);
	assert_int_equal(mkdir(dir, 0755), 0);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("built after the run\n", f);
	fclose(f);
	p = cli_run(NULL, "--config", cfg, "--runs-dir", fx.runs, "--workspace", fx.ws,
	            "--rewind", "last", "--yes", NULL);
	if (p.status != 0)
		fprintf(stderr, "%s\n%s\n", p.out, p.err);
	assert_int_equal(p.status, 0);
	assert_non_null(strstr(p.out, "kept: cache/, left out of the checkpoint by exclude = cache/"));
	assert_null(strstr(p.out, "remove      cache"));
	assert_non_null(strstr(p.out, "remove      new.txt"));
	cli_proc_free(&p);
	s = testdir_slurp(file);
	assert_non_null(s);
	assert_string_equal(s, "built after the run\n");
	free(s);
	s = xasprintf("%s/new.txt", fx.ws);
	assert_int_equal(access(s, F_OK), -1);
	free(s);
	free(file);
	free(dir);
	free(cfg);
	fx_free(&fx);
}

/* A one-step run whose step runs `command` in the workspace (config: --config's text,
 * or NULL). */
static void run_one(struct fx *fx, const char *command, const char *config)
{
	struct strbuf sc = STRBUF_INIT;
	struct cli_proc p;
	char *cfg = NULL, *cmd_json;
	cJSON *js = cJSON_CreateString(command);

	cmd_json = cJSON_PrintUnformatted(js);
	cJSON_Delete(js);
	strbuf_init(&sc);
	strbuf_addf(&sc,
	            "{\"task\": \"One step\",\n"
	            " \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [\n"
	            "   {\"step_id\": \"work\", \"name\": \"Work\", \"description\": \"Work.\",\n"
	            "    \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
	            "    \"expected_outputs\": [], \"estimated_complexity\": \"low\"}]}],\n"
	            " \"executor\": {\"work\": [{\"rounds\": [{\"text\": \"Working.\", "
	            "\"tool_calls\": [{\"name\": \"run_shell\", \"input\": {\"command\": %s}}]}],\n"
	            "    \"final\": {\"reasoning\": \"done\", \"actions_taken\": [\"run_shell\"],\n"
	            "      \"step_output\": {\"findings\": \"done\", \"artifacts\": [],\n"
	            "        \"meets_criteria\": true}, \"confidence\": 0.9}}]}}\n",
	            cmd_json);
	free(cmd_json);
	free(cli_put(fx->dir, "script.json", sc.buf));
	strbuf_release(&sc);
	if (config)
		cfg = cli_put(fx->dir, "config", config);
	if (cfg)
		p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", fx->script,
		            "--sim-delay", "0", "--runs-dir", fx->runs, "--workspace", fx->ws,
		            "--config", cfg, "One step", NULL);
	else
		p = cli_run(NULL, "--headless", "--yes", "--provider", "sim", "--script", fx->script,
		            "--sim-delay", "0", "--runs-dir", fx->runs, "--workspace", fx->ws,
		            "One step", NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	free(cfg);
	fx->run = cli_only_run(fx->runs);
}

static void fx_dirs(struct fx *fx)
{
	fx->dir = cli_tmpdir();
	fx->runs = xasprintf("%s/runs", fx->dir);
	fx->ws = xasprintf("%s/ws", fx->dir);
	fx->script = xasprintf("%s/script.json", fx->dir);
	assert_int_equal(mkdir(fx->ws, 0755), 0);
}

static unsigned perm_of(const char *ws, const char *rel)
{
	char *p = xasprintf("%s/%s", ws, rel);
	struct stat st;

	assert_int_equal(lstat(p, &st), 0);
	free(p);
	return st.st_mode & 07777;
}

/* Issue 25: the run's rules travel with it. A run given `exclude = *.tmp` appends to an
 * untracked cache.tmp that was there before; `--rewind last` typed without the config
 * keeps it (and says so) while it removes what the run created. */
static void test_run_rules_travel(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *s;

	(void)state;
	fx_dirs(&fx);
	seed(fx.ws);
	put(fx.ws, "cache.tmp", "old cache\n", 0644);
	run_one(&fx, "echo more >> cache.tmp; echo new > new.txt",
	        "[checkpoints]\nexclude = *.tmp\n");
	/* run.start records them too: --resume takes them back (test_restore). */
	assert_true(cli_journal_has(fx.run, "\"checkpoints\":{\"exclude\":[\"*.tmp\"]"));
	p = rewind_cmd(&fx, "last", true);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "remove      new.txt"));
	assert_null(strstr(p.out, "remove      cache.tmp"));
	assert_non_null(
	    strstr(p.out, "kept: cache.tmp, left out of the checkpoint by exclude = *.tmp"));
	assert_non_null(strstr(p.out, "1 removed, 1 kept"));
	cli_proc_free(&p);
	s = cli_slurp_in(fx.ws, "cache.tmp");
	assert_non_null(s);
	assert_string_equal(s, "old cache\nmore\n");
	free(s);
	s = xasprintf("%s/new.txt", fx.ws);
	assert_int_equal(access(s, F_OK), -1);
	free(s);
	fx_free(&fx);
}

/* Issue 25: modes come back exactly. A 0644 file the step deletes, a 0644 file it chmods
 * to 600, a 0640 one it rewrites, a 0750 script it makes 0700: every one as before. */
static void test_modes_exact(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;

	(void)state;
	fx_dirs(&fx);
	put(fx.ws, "deleted.txt", "bye\n", 0644);
	put(fx.ws, "chmodded.txt", "same\n", 0644);
	put(fx.ws, "private.txt", "secret\n", 0640);
	put(fx.ws, "run.sh", "#!/bin/sh\n", 0750);
	run_one(&fx, "rm deleted.txt; chmod 600 chmodded.txt; echo more >> private.txt; "
	             "chmod 700 run.sh", NULL);
	assert_int_equal(perm_of(fx.ws, "chmodded.txt"), 0600);
	p = rewind_cmd(&fx, "last", true);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "put back    chmodded.txt"));
	assert_non_null(strstr(p.out, "3 put back, 1 brought back"));
	cli_proc_free(&p);
	assert_int_equal(perm_of(fx.ws, "deleted.txt"), 0644);
	assert_int_equal(perm_of(fx.ws, "chmodded.txt"), 0644);
	assert_int_equal(perm_of(fx.ws, "private.txt"), 0640);
	assert_int_equal(perm_of(fx.ws, "run.sh"), 0750);
	fx_free(&fx);
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *p;
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (lstat(p, &st) == 0)
			n += S_ISDIR(st.st_mode) ? count_files(p) : 1;
		free(p);
	}
	closedir(d);
	return n;
}

/* Issue 29, item 7: without a terminal and without --yes, the rewind says what it would
 * do and writes nothing at all — not even the undo checkpoint — and one line says to pass
 * --yes; with --yes it counts what it did by kind. */
static void test_preview_writes_nothing(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *objects;
	size_t before;

	(void)state;
	fx_dirs(&fx);
	put(fx.ws, "kept.txt", "keep\n", 0644);
	put(fx.ws, "gone.txt", "bye\n", 0644);
	run_one(&fx, "echo more >> kept.txt; rm gone.txt; echo new > new.txt", NULL);
	objects = xasprintf("%s/pevtui/stores", cli_data_home()); /* every store */
	before = count_files(objects);
	assert_true(before > 0);
	for (int i = 0; i < 2; i++) {
		p = rewind_cmd(&fx, "last", false);
		assert_int_equal(p.status, 1);
		assert_non_null(strstr(p.out, "remove      new.txt"));
		assert_null(strstr(p.out, "kept as checkpoint"));
		assert_string_equal(p.err, "pevtui: nothing was changed: pass --yes to rewind "
		                           "without being asked\n");
		cli_proc_free(&p);
		assert_int_equal(count_files(objects), before);
	}
	p = rewind_cmd(&fx, "last", true);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "1 removed, 1 put back, 1 brought back. To undo"));
	cli_proc_free(&p);
	free(objects);
	fx_free(&fx);
}

/* Issue 25: the README's example, as written — standing in the workspace, runs in the
 * default folder, `pevtui --rewind last --yes` (no --workspace), then the undo command it
 * prints, typed as printed. */
static void test_readme_example(void **state)
{
	struct fx fx = {0};
	struct cli_proc p;
	char *data, *env_data, *bin, *cwd, *undo, *s;
	const char *env[2];
	char *id, *line;

	(void)state;
	fx_dirs(&fx);
	data = xasprintf("%s/data", fx.dir);
	env_data = xasprintf("XDG_DATA_HOME=%s", data);
	env[0] = env_data;
	env[1] = NULL;
	bin = realpath(getenv("PEVTUI") ? getenv("PEVTUI") : "./pevtui", NULL);
	assert_non_null(bin);
	assert_int_equal(setenv("PEVTUI", bin, 1), 0);
	put(fx.ws, "notes.txt", "notes\n", 0644);
	free(cli_put(fx.dir, "script.json",
	             "{\"task\": \"t\", \"planner\": [{\"goal\": \"{{task}}\", \"steps\": [\n"
	             " {\"step_id\": \"w\", \"name\": \"W\", \"description\": \"W.\",\n"
	             "  \"acceptance_criteria\": [\"done\"], \"dependencies\": [],\n"
	             "  \"expected_outputs\": [], \"estimated_complexity\": \"low\"}]}],\n"
	             " \"executor\": {\"w\": [{\"rounds\": [{\"text\": \"W.\", \"tool_calls\": "
	             "[{\"name\": \"run_shell\", \"input\": {\"command\": \"echo more >> "
	             "notes.txt; echo log > log.txt\"}}]}],\n"
	             "  \"final\": {\"reasoning\": \"done\", \"actions_taken\": [\"run_shell\"],\n"
	             "   \"step_output\": {\"findings\": \"done\", \"artifacts\": [],\n"
	             "   \"meets_criteria\": true}, \"confidence\": 0.9}}]}}\n"));
	p = cli_run(env, "--headless", "--yes", "--provider", "sim", "--script", fx.script,
	            "--sim-delay", "0", "--workspace", fx.ws, "t", NULL);
	cli_expect_status(&p, 0);
	cli_proc_free(&p);
	s = xasprintf("%s/pevtui/runs", data);
	fx.run = cli_only_run(s);
	free(s);
	id = strrchr(fx.run, '/') + 1;

	cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(fx.ws), 0);
	p = cli_run(env, "--rewind", "last", "--yes", NULL);
	cli_expect_status(&p, 0);
	line = xasprintf("pevtui: rewinding the workspace %s of run %s to before the run "
	                 "(checkpoint ",
	                 fx.ws, id);
	assert_non_null(strstr(p.out, line));
	free(line);
	assert_non_null(strstr(p.out, "): 2 files change back\n  remove      log.txt\n"
	                              "  put back    notes.txt\n"));
	line = xasprintf("pevtui: rewound to before the run: 1 removed, 1 put back. To undo: "
	                 "pevtui --rewind %s:",
	                 id);
	assert_non_null(strstr(p.out, line));
	free(line);
	undo = undo_ref(p.out);
	cli_proc_free(&p);
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_string_equal(s, "notes\n");
	free(s);
	p = cli_run(env, "--rewind", undo, "--yes", NULL);
	cli_expect_status(&p, 0);
	assert_non_null(strstr(p.out, "1 brought back, 1 put back") ||
	                        strstr(p.out, "1 put back, 1 brought back")
	                    ? "ok"
	                    : NULL);
	cli_proc_free(&p);
	assert_int_equal(chdir(cwd), 0);
	s = cli_slurp_in(fx.ws, "notes.txt");
	assert_string_equal(s, "notes\nmore\n");
	free(s);
	s = cli_slurp_in(fx.ws, "log.txt");
	assert_string_equal(s, "log\n");
	free(s);
	free(undo);
	free(cwd);
	free(bin);
	free(env_data);
	free(data);
	fx_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_whole_run),
	    cmocka_unit_test(test_one_step),
	    cmocka_unit_test(test_excluded_untouched),
	    cmocka_unit_test(test_run_rules_travel),
	    cmocka_unit_test(test_modes_exact),
	    cmocka_unit_test(test_preview_writes_nothing),
	    cmocka_unit_test(test_readme_example),
	    cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_live_run_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
