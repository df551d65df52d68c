/* test_tools — the registry and the file tools, driven as the executor drives them. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sandbox.h"
#include "strbuf.h"
#include "tool.h"
#include "testdir.h"
#include "xalloc.h"

struct fx {
	char top[64];
	char *ws;
	struct tool_env env;
};

static int setup(void **state)
{
	struct fx *fx = xcalloc(1, sizeof(*fx));
	strcpy(fx->top, "/tmp/pevtui-test-tools-XXXXXX");
	if (!mkdtemp(fx->top))
		return -1;
	fx->ws = xasprintf("%s/ws", fx->top);
	char *err = NULL;
	fx->env.ws_fd = sandbox_open_root(fx->ws, &err);
	fx->env.ws_path = fx->ws;
	if (fx->env.ws_fd < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	close(fx->env.ws_fd);
	assert_true(testdir_remove(fx->top));
	free(fx->ws);
	free(fx);
	return 0;
}

/* Runs tool `name` with `json` (NULL = no input at all). Returns the text; caller frees. */
static char *run(struct fx *fx, const char *name, const char *json, bool *ok)
{
	const struct tool_def *t = tool_find(name);
	assert_non_null(t);
	cJSON *in = NULL;
	if (json) {
		in = cJSON_Parse(json);
		assert_non_null(in);
	}
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	*ok = t->run(&fx->env, in, &out);
	cJSON_Delete(in);
	return strbuf_detach(&out);
}

static char *path_in(struct fx *fx, const char *rel)
{
	return xasprintf("%s/%s", fx->ws, rel);
}

static void put(struct fx *fx, const char *rel, const char *data, size_t n)
{
	char *p = path_in(fx, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
	free(p);
}

static void test_registry(void **state)
{
	(void)state;
	size_t n = 0;
	const struct tool_def *const *all = tool_registry(&n);
	assert_true(n >= 3);
	for (size_t i = 0; i < n; i++) {
		assert_non_null(all[i]->name);
		assert_non_null(all[i]->description);
		assert_non_null(all[i]->run);
		assert_ptr_equal(tool_find(all[i]->name), all[i]);
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(all[i]->name, all[j]->name);
		cJSON *schema = cJSON_Parse(all[i]->schema_json);
		assert_non_null(schema);
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(schema, "type");
		assert_true(cJSON_IsString(type));
		assert_string_equal(type->valuestring, "object");
		assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(schema, "properties")));
		cJSON_Delete(schema);
	}
	/* the file tools come first, in this order */
	assert_string_equal(all[0]->name, "read_file");
	assert_string_equal(all[1]->name, "write_file");
	assert_string_equal(all[2]->name, "list_files");
	assert_null(tool_find("rm_rf"));
	assert_null(tool_find(""));
	assert_null(tool_find(NULL));
}

static void test_write_then_read(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run(fx, "write_file",
			"{\"path\":\"notes/a/b.md\",\"content\":\"# Title\\nline\\n\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "created \"notes/a/b.md\" (13 bytes)");
	free(out);
	char *p = path_in(fx, "notes/a/b.md");
	char *disk = testdir_slurp(p);
	assert_string_equal(disk, "# Title\nline\n");
	free(disk);

	out = run(fx, "read_file", "{\"path\":\"notes/a/b.md\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "# Title\nline\n");
	free(out);

	/* replacing keeps the file's mode and leaves no temporary file behind */
	chmod(p, 0600);
	out = run(fx, "write_file", "{\"path\":\"notes/a/b.md\",\"content\":\"\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "replaced \"notes/a/b.md\" (0 bytes)");
	free(out);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(p);
	out = run(fx, "list_files", "{\"path\":\"notes/a\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "notes/a/b.md\n");
	free(out);
}

/* A replaced file keeps its permissions, but not setuid, setgid, sticky or world-write:
 * a model's text must not become a setuid program or a file anyone may change. */
static void test_replace_drops_dangerous_mode_bits(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	bool ok;
	char *p = path_in(fx, "tool.sh");
	char *out = run(fx, "write_file", "{\"path\":\"tool.sh\",\"content\":\"old\"}", &ok);

	assert_true(ok);
	free(out);
	assert_int_equal(chmod(p, 07777), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 07777);
	out = run(fx, "write_file", "{\"path\":\"tool.sh\",\"content\":\"echo new\"}", &ok);
	assert_true(ok);
	free(out);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0775);
	free(p);
}

static void test_write_refusals(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run(fx, "write_file", "{\"path\":\"../escaped.txt\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "path \"../escaped.txt\" leaves the workspace (\"..\" is not "
				 "allowed)");
	free(out);
	char *esc = xasprintf("%s/escaped.txt", fx->top);
	assert_int_equal(access(esc, F_OK), -1);
	free(esc);

	out = run(fx, "write_file", "{\"path\":\"/tmp/abs.txt\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "is absolute"));
	free(out);

	/* a link is never written through, even to a file inside */
	put(fx, "real.txt", "keep", 4);
	char *l = path_in(fx, "alias.txt");
	assert_int_equal(symlink("real.txt", l), 0);
	out = run(fx, "write_file", "{\"path\":\"alias.txt\",\"content\":\"changed\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "is a symbolic link"));
	free(out);
	char *r = path_in(fx, "real.txt");
	char *disk = testdir_slurp(r);
	assert_string_equal(disk, "keep");
	free(disk);
	struct stat st;
	assert_int_equal(lstat(l, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	free(l);
	free(r);

	/* nor into a linked folder */
	char *ld = path_in(fx, "out");
	assert_int_equal(symlink(fx->top, ld), 0);
	free(ld);
	out = run(fx, "write_file", "{\"path\":\"out/x.txt\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "symbolic link"));
	free(out);

	out = run(fx, "write_file", "{\"path\":\"dir/\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "names a folder"));
	free(out);

	char *d = path_in(fx, "adir");
	mkdir(d, 0755);
	free(d);
	out = run(fx, "write_file", "{\"path\":\"adir\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "path \"adir\" is a folder, not a file");
	free(out);
}

/* A name at the top of the workspace: no folder is opened for it, and what is in its
 * place is still looked at first; a workspace that is gone says so. */
static void test_write_at_the_top(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *p = path_in(fx, "pipe"), *out, *disk;

	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	out = run(fx, "write_file", "{\"path\":\"pipe\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "path \"pipe\" is not a regular file");
	free(out);

	out = run(fx, "write_file", "{\"path\":\"a.txt\",\"content\":\"one\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "created \"a.txt\" (3 bytes)");
	free(out);
	out = run(fx, "write_file", "{\"path\":\"a.txt\",\"content\":\"two\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "replaced \"a.txt\" (3 bytes)");
	free(out);
	p = path_in(fx, "a.txt");
	disk = testdir_slurp(p);
	assert_string_equal(disk, "two");
	free(disk);
	free(p);

	/* the workspace removed under the run: the same sentence as before */
	assert_true(testdir_remove(fx->ws));
	out = run(fx, "write_file", "{\"path\":\"b.txt\",\"content\":\"x\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "cannot write path \"b.txt\": No such file or directory");
	free(out);
}

static void test_bad_inputs(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out;
	static const struct {
		const char *tool, *json, *want;
	} cases[] = {
		{"read_file", "{}", "the input has no \"path\""},
		{"read_file", "{\"path\":5}", "\"path\" must be a string"},
		{"read_file", "{\"path\":[\"a\"]}", "\"path\" must be a string"},
		{"read_file", "[\"a.txt\"]", "the input must be a JSON object"},
		{"read_file", "\"a.txt\"", "the input must be a JSON object"},
		{"read_file", "{\"path\":\"\"}", "is empty"},
		{"write_file", "{\"path\":\"a.txt\"}", "the input has no \"content\""},
		{"write_file", "{\"path\":\"a.txt\",\"content\":{\"x\":1}}",
		 "\"content\" must be a string"},
		{"write_file", "{\"content\":\"x\"}", "the input has no \"path\""},
		{"write_file", "{\"path\":true,\"content\":\"x\"}", "\"path\" must be a string"},
		{"list_files", "{\"path\":7}", "\"path\" must be a string"},
		{"list_files", "[]", "the input must be a JSON object"},
		{"list_files", "{\"path\":\"..\"}", "leaves the workspace"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = run(fx, cases[i].tool, cases[i].json, &ok);
		if (ok || !strstr(out, cases[i].want))
			fail_msg("%s %s gave \"%s\"", cases[i].tool, cases[i].json, out);
		free(out);
	}
	out = run(fx, "read_file", NULL, &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "JSON object"));
	free(out);
	out = run(fx, "write_file", NULL, &ok);
	assert_false(ok);
	free(out);
	/* nothing was written by any of them */
	out = run(fx, "list_files", NULL, &ok);
	assert_true(ok);
	assert_string_equal(out, "(folder \".\" is empty)");
	free(out);
}

static void test_read_errors(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *out = run(fx, "read_file", "{\"path\":\"missing.txt\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "path \"missing.txt\" does not exist");
	free(out);

	char *d = path_in(fx, "sub");
	mkdir(d, 0755);
	free(d);
	out = run(fx, "read_file", "{\"path\":\"sub\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "is a folder; use list_files"));
	free(out);

	put(fx, "bin.dat", "ab\0cd", 5);
	out = run(fx, "read_file", "{\"path\":\"bin.dat\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "binary file (5 bytes)"));
	free(out);

	char *l = path_in(fx, "passwd");
	assert_int_equal(symlink("/etc/passwd", l), 0);
	free(l);
	out = run(fx, "read_file", "{\"path\":\"passwd\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "symbolic link"));
	assert_null(strstr(out, "root:"));
	free(out);
}

static void test_read_cap(void **state)
{
	struct fx *fx = *state;
	bool ok;
	size_t n = TOOL_MAX_OUTPUT + 1000;
	char *big = xmalloc(n);
	memset(big, 'x', n);
	put(fx, "big.txt", big, n);
	char *out = run(fx, "read_file", "{\"path\":\"big.txt\"}", &ok);
	assert_true(ok);
	assert_int_equal(strspn(out, "x"), TOOL_MAX_OUTPUT);
	assert_string_equal(out + TOOL_MAX_OUTPUT, "\n[cut: 1000 more bytes]");
	free(out);

	/* a file of exactly the cap is whole, with no note */
	put(fx, "exact.txt", big, TOOL_MAX_OUTPUT);
	out = run(fx, "read_file", "{\"path\":\"exact.txt\"}", &ok);
	assert_true(ok);
	assert_int_equal(strlen(out), TOOL_MAX_OUTPUT);
	free(out);

	/* a two-byte character split by the cap is left out whole, and counted as cut */
	memcpy(big + TOOL_MAX_OUTPUT - 1, "\xc3\xa9", 2);
	put(fx, "utf8.txt", big, n);
	out = run(fx, "read_file", "{\"path\":\"utf8.txt\"}", &ok);
	assert_true(ok);
	assert_int_equal(strspn(out, "x"), TOOL_MAX_OUTPUT - 1);
	assert_string_equal(out + TOOL_MAX_OUTPUT - 1, "\n[cut: 1001 more bytes]");
	free(out);
	free(big);

	/* invalid UTF-8 becomes U+FFFD so the text stays valid in JSON */
	put(fx, "latin1.txt", "caf\xe9!", 5);
	out = run(fx, "read_file", "{\"path\":\"latin1.txt\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "caf\xef\xbf\xbd!");
	free(out);
}

static void test_list_order(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *p;
	put(fx, "b.txt", "b", 1);
	put(fx, "A.txt", "A", 1);
	p = path_in(fx, "a");
	mkdir(p, 0755);
	free(p);
	p = path_in(fx, "a/c");
	mkdir(p, 0755);
	free(p);
	put(fx, "a/z.txt", "z", 1);
	put(fx, "a/c/d.txt", "d", 1);
	/* a link to a folder full of files is shown, never entered */
	p = path_in(fx, "link");
	assert_int_equal(symlink("a", p), 0);
	free(p);
	p = path_in(fx, "etc");
	assert_int_equal(symlink("/etc", p), 0);
	free(p);

	char *out = run(fx, "list_files", "{}", &ok);
	assert_true(ok);
	assert_string_equal(out, "A.txt\n"
				 "a/\n"
				 "a/c/\n"
				 "a/c/d.txt\n"
				 "a/z.txt\n"
				 "b.txt\n"
				 "etc -> (link)\n"
				 "link -> (link)\n");
	free(out);

	char *again = run(fx, "list_files", "{\"path\":\".\"}", &ok);
	char *none = run(fx, "list_files", NULL, &ok);
	assert_string_equal(again, none);
	free(again);
	free(none);

	out = run(fx, "list_files", "{\"path\":\"./a//\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "a/c/\na/c/d.txt\na/z.txt\n");
	free(out);

	out = run(fx, "list_files", "{\"path\":\"link\"}", &ok);
	assert_false(ok);
	assert_non_null(strstr(out, "symbolic link"));
	free(out);

	out = run(fx, "list_files", "{\"path\":\"b.txt\"}", &ok);
	assert_false(ok);
	assert_string_equal(out, "path \"b.txt\" is not a folder");
	free(out);
}

static void test_list_cap(void **state)
{
	struct fx *fx = *state;
	bool ok;
	for (int i = 0; i < 600; i++) {
		char *name = xasprintf("f%03d.txt", i);
		put(fx, name, "", 0);
		free(name);
	}
	char *out = run(fx, "list_files", "{}", &ok);
	assert_true(ok);
	size_t lines = 0;
	for (char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 501); /* 500 entries and the note */
	assert_non_null(strstr(out, "f499.txt\n[cut: the list stops at 500 entries"));
	assert_null(strstr(out, "f500.txt"));
	assert_true(strncmp(out, "f000.txt\nf001.txt\n", 18) == 0);
	free(out);
}

static void test_list_depth_limit(void **state)
{
	struct fx *fx = *state;
	bool ok;
	struct strbuf rel = STRBUF_INIT;
	strbuf_init(&rel);
	for (int i = 0; i < 70; i++) {
		strbuf_adds(&rel, i ? "/d" : "d");
		char *p = path_in(fx, rel.buf);
		assert_int_equal(mkdir(p, 0755), 0);
		free(p);
	}
	strbuf_release(&rel);
	char *out = run(fx, "list_files", NULL, &ok);
	assert_true(ok);
	size_t lines = 0;
	for (char *c = out; *c; c++)
		lines += *c == '\n';
	assert_int_equal(lines, 64 + 1);
	assert_non_null(strstr(out, "[folders nested deeper than 64 levels are not listed]"));
	free(out);
}

/* The engine may hold the workspace as an O_PATH descriptor; every tool must still work. */
static void test_o_path_root(void **state)
{
	struct fx *fx = *state;
	bool ok;
	int saved = fx->env.ws_fd;
	fx->env.ws_fd = open(fx->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fx->env.ws_fd >= 0);
	char *out = run(fx, "write_file", "{\"path\":\"p/q.txt\",\"content\":\"hello\"}", &ok);
	assert_true(ok);
	free(out);
	out = run(fx, "read_file", "{\"path\":\"p/q.txt\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "hello");
	free(out);
	/* a name at the top is written straight beneath the descriptor, O_PATH or not */
	out = run(fx, "write_file", "{\"path\":\"top.txt\",\"content\":\"up\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "created \"top.txt\" (2 bytes)");
	free(out);
	out = run(fx, "list_files", "{}", &ok);
	assert_true(ok);
	assert_string_equal(out, "p/\np/q.txt\ntop.txt\n");
	free(out);
	out = run(fx, "search_files", "{\"pattern\":\"ell\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "p/q.txt:1: hello\n");
	free(out);
	close(fx->env.ws_fd);
	fx->env.ws_fd = saved;
}

/* ---- search_files ----------------------------------------------------------------------- */

static void search_fixture(struct fx *fx)
{
	bool ok;
	char *out = run(fx, "write_file", "{\"path\":\"sub/b.md\",\"content\":\"TODO: x\\n\"}",
			&ok);
	assert_true(ok);
	free(out);
	put(fx, "a.txt", "alpha\nBeta TODO\nno\n", 19);
	put(fx, "bin.dat", "TODO\0binary", 11);
	size_t big = TOOL_SEARCH_MAX_FILE + 10;
	char *data = xmalloc(big);
	memset(data, 'x', big);
	memcpy(data, "TODO\n", 5);
	put(fx, "big.log", data, big);
	free(data);
}

static void test_search_files(void **state)
{
	struct fx *fx = *state;
	bool ok;
	search_fixture(fx);
	char *out = run(fx, "search_files", "{\"pattern\":\"TODO\"}", &ok);
	assert_true(ok);
	char *want = xasprintf("a.txt:2: Beta TODO\nsub/b.md:1: TODO: x\n\n[skipped: 1 binary "
			       "files, 1 files over %d bytes]",
			       TOOL_SEARCH_MAX_FILE);
	assert_string_equal(out, want);
	free(want);
	free(out);

	/* the note on skipped files follows every answer over the whole workspace */
	out = run(fx, "search_files", "{\"pattern\":\"beta todo\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "no matches for \"beta todo\"\n[skipped: 1 binary files, 1 "
				 "files over 1048576 bytes]");
	free(out);
	out = run(fx, "search_files", "{\"pattern\":\"beta todo\",\"ignore_case\":true}", &ok);
	assert_true(ok);
	assert_true(strncmp(out, "a.txt:2: Beta TODO\n\n[skipped: ", 30) == 0);
	free(out);

	out = run(fx, "search_files", "{\"pattern\":\"TODO\",\"path\":\"sub\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "sub/b.md:1: TODO: x\n");
	free(out);
	out = run(fx, "search_files", "{\"pattern\":\"TODO\",\"path\":\"./a.txt\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "a.txt:2: Beta TODO\n");
	free(out);

	out = run(fx, "search_files", "{\"pattern\":\"TODO\",\"max_results\":1}", &ok);
	assert_true(ok);
	assert_true(strncmp(out, "a.txt:2: Beta TODO\n\n[cut: ", 26) == 0);
	assert_null(strstr(out, "sub/b.md"));
	free(out);

	const char *bad[] = {"{}", "{\"pattern\":\"\"}", "{\"pattern\":1}",
			     "{\"pattern\":\"a\",\"max_results\":0}",
			     "{\"pattern\":\"a\",\"ignore_case\":\"yes\"}",
			     "{\"pattern\":\"a\",\"path\":\"missing\"}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		out = run(fx, "search_files", bad[i], &ok);
		assert_false(ok);
		assert_true(strlen(out) > 10);
		free(out);
	}
}

/* Links out of the workspace, absolute paths and ".." never reach the outside file. */
static void test_search_escapes(void **state)
{
	struct fx *fx = *state;
	bool ok;
	char *outside = xasprintf("%s/outside", fx->top);
	assert_int_equal(mkdir(outside, 0755), 0);
	char *secret = xasprintf("%s/secret.txt", outside);
	FILE *f = fopen(secret, "w");
	assert_non_null(f);
	fputs("SECRET_MARK here\n", f);
	fclose(f);
	char *l1 = path_in(fx, "dirlink");
	char *l2 = path_in(fx, "filelink.txt");
	assert_int_equal(symlink(outside, l1), 0);
	assert_int_equal(symlink(secret, l2), 0);
	put(fx, "inside.txt", "nothing\n", 8);

	char *out = run(fx, "search_files", "{\"pattern\":\"SECRET_MARK\"}", &ok);
	assert_true(ok);
	assert_string_equal(out, "no matches for \"SECRET_MARK\"");
	free(out);
	char *abs = xasprintf("{\"pattern\":\"SECRET_MARK\",\"path\":\"%s\"}", outside);
	const char *paths[] = {abs,
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"..\"}",
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"../outside\"}",
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"sub/../../outside\"}",
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"dirlink\"}",
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"dirlink/secret.txt\"}",
			       "{\"pattern\":\"SECRET_MARK\",\"path\":\"filelink.txt\"}"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		out = run(fx, "search_files", paths[i], &ok);
		assert_false(ok);
		assert_null(strstr(out, "here"));
		free(out);
	}
	unlink(l1);
	unlink(l2);
	unlink(secret);
	rmdir(outside);
	free(abs);
	free(l1);
	free(l2);
	free(secret);
	free(outside);
}

/* ---- tool_invoke: retries with backoff, fallback ------------------------------------ */

static int fake_calls;
static int fake_fail_times; /* the first N calls fail */
static bool fake_transient;

static bool fake_run(const struct tool_env *env, const struct cJSON *input, struct strbuf *out)
{
	(void)input;
	fake_calls++;
	if (fake_calls <= fake_fail_times) {
		strbuf_addf(out, "failure number %d\nsecond line", fake_calls);
		if (fake_transient && env->transient)
			*env->transient = true;
		return false;
	}
	strbuf_adds(out, "fake worked");
	return true;
}

static const struct tool_def fake_tool = {
	.name = "fake",
	.description = "test only",
	.schema_json = "{\"type\":\"object\",\"properties\":{}}",
	.run = fake_run,
};

/* Fails like fake_tool, then read_file gets the same input. */
static const struct tool_def fake_with_fallback = {
	.name = "fake_reader",
	.description = "test only",
	.schema_json = "{\"type\":\"object\",\"properties\":{}}",
	.fallback = "read_file",
	.run = fake_run,
};

struct retry_log {
	int n;
	int attempt[8], max[8];
	long wait_ms[8];
	char *reason[8];
	atomic_bool *cancel_on_retry;
};

static void on_retry(void *ctx, const char *tool, int attempt, int max, long wait_ms,
		     const char *reason)
{
	struct retry_log *rl = ctx;
	assert_true(rl->n < 8);
	assert_non_null(tool);
	rl->attempt[rl->n] = attempt;
	rl->max[rl->n] = max;
	rl->wait_ms[rl->n] = wait_ms;
	rl->reason[rl->n] = xstrdup(reason);
	rl->n++;
	if (rl->cancel_on_retry)
		atomic_store(rl->cancel_on_retry, true);
}

static void retry_log_free(struct retry_log *rl)
{
	for (int i = 0; i < rl->n; i++)
		free(rl->reason[i]);
}

static long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000L;
}

static bool invoke(struct fx *fx, const struct tool_def *t, const char *json, char **text)
{
	cJSON *in = cJSON_Parse(json);
	assert_non_null(in);
	struct strbuf out = STRBUF_INIT;
	strbuf_init(&out);
	bool ok = tool_invoke(t, &fx->env, in, &out);
	cJSON_Delete(in);
	*text = strbuf_detach(&out);
	return ok;
}

static void test_invoke_transient_retried(void **state)
{
	struct fx *fx = *state;
	struct retry_log rl = {0};
	fx->env.hook_ctx = &rl;
	fx->env.on_tool_retry = on_retry;
	fake_calls = 0;
	fake_fail_times = 2;
	fake_transient = true;
	char *out;
	long t0 = mono_ms();
	assert_true(invoke(fx, &fake_tool, "{}", &out));
	long took = mono_ms() - t0;
	assert_string_equal(out, "fake worked");
	assert_int_equal(fake_calls, 3);
	assert_int_equal(rl.n, 2);
	for (int i = 0; i < 2; i++) {
		long d = (long)TOOL_RETRY_BASE_MS << i;
		assert_int_equal(rl.attempt[i], i + 2);
		assert_int_equal(rl.max[i], TOOL_RETRY_TRIES);
		assert_true(rl.wait_ms[i] >= d / 2 && rl.wait_ms[i] <= d);
	}
	assert_string_equal(rl.reason[0], "failure number 1");
	assert_string_equal(rl.reason[1], "failure number 2");
	assert_true(took >= rl.wait_ms[0] + rl.wait_ms[1]);
	free(out);
	retry_log_free(&rl);

	/* always failing: TOOL_RETRY_TRIES attempts, then the last failure with a note */
	rl = (struct retry_log){0};
	fake_calls = 0;
	fake_fail_times = 100;
	assert_false(invoke(fx, &fake_tool, "{}", &out));
	assert_int_equal(fake_calls, TOOL_RETRY_TRIES);
	assert_int_equal(rl.n, TOOL_RETRY_TRIES - 1);
	assert_non_null(strstr(out, "failure number 3"));
	assert_null(strstr(out, "failure number 2"));
	assert_non_null(strstr(out, "failed 3 times in a row"));
	free(out);
	retry_log_free(&rl);
}

static void test_invoke_permanent_not_retried(void **state)
{
	struct fx *fx = *state;
	struct retry_log rl = {0};
	fx->env.hook_ctx = &rl;
	fx->env.on_tool_retry = on_retry;
	fake_calls = 0;
	fake_fail_times = 1;
	fake_transient = false;
	char *out;
	assert_false(invoke(fx, &fake_tool, "{}", &out));
	assert_int_equal(fake_calls, 1);
	assert_int_equal(rl.n, 0);
	assert_string_equal(out, "failure number 1\nsecond line");
	free(out);
	/* the real tools go through tool_invoke unchanged */
	put(fx, "f.txt", "file text", 9);
	assert_true(invoke(fx, tool_find("read_file"), "{\"path\":\"f.txt\"}", &out));
	assert_string_equal(out, "file text");
	free(out);
	assert_false(invoke(fx, tool_find("read_file"), "{\"path\":\"nope.txt\"}", &out));
	assert_int_equal(rl.n, 0);
	free(out);
}

static void test_invoke_fallback(void **state)
{
	struct fx *fx = *state;
	struct retry_log rl = {0};
	fx->env.hook_ctx = &rl;
	fx->env.on_tool_retry = on_retry;
	put(fx, "f.txt", "from the fallback", 17);
	fake_calls = 0;
	fake_fail_times = 100;
	fake_transient = false;
	char *out;
	assert_true(invoke(fx, &fake_with_fallback, "{\"path\":\"f.txt\"}", &out));
	assert_int_equal(fake_calls, 1);
	assert_string_equal(out, "fake_reader failed: failure number 1\nsecond line\n"
				 "fell back to read_file, which succeeded:\nfrom the fallback");
	free(out);
	/* the fallback's failure is reported as such */
	fake_calls = 0;
	assert_false(invoke(fx, &fake_with_fallback, "{\"path\":\"missing.txt\"}", &out));
	assert_non_null(strstr(out, "fell back to read_file, which failed too"));
	free(out);
	/* transient failures are retried first, then the fallback runs */
	fake_calls = 0;
	fake_transient = true;
	assert_true(invoke(fx, &fake_with_fallback, "{\"path\":\"f.txt\"}", &out));
	assert_int_equal(fake_calls, TOOL_RETRY_TRIES);
	assert_int_equal(rl.n, TOOL_RETRY_TRIES - 1);
	assert_non_null(strstr(out, "from the fallback"));
	free(out);
	retry_log_free(&rl);
}

static void test_invoke_cancel_stops_retries(void **state)
{
	struct fx *fx = *state;
	atomic_bool cancel;
	atomic_init(&cancel, false);
	struct retry_log rl = {.cancel_on_retry = &cancel};
	fx->env.hook_ctx = &rl;
	fx->env.on_tool_retry = on_retry;
	fx->env.cancel = &cancel;
	put(fx, "f.txt", "from the fallback", 17);
	fake_calls = 0;
	fake_fail_times = 100;
	fake_transient = true;
	char *out;
	long t0 = mono_ms();
	assert_false(invoke(fx, &fake_with_fallback, "{\"path\":\"f.txt\"}", &out));
	assert_true(mono_ms() - t0 < TOOL_RETRY_BASE_MS / 2);
	assert_int_equal(fake_calls, 1);
	assert_int_equal(rl.n, 1);
	assert_null(strstr(out, "fallback")); /* no fallback after a cancel */
	free(out);
	retry_log_free(&rl);
	fx->env.cancel = NULL;
}

static int chaos_left;

static bool chaos(void *ctx, const char *tool)
{
	(void)ctx;
	assert_string_equal(tool, "fake");
	return chaos_left-- > 0;
}

/* --chaos: injected failures are transient, so they are retried and announced. */
static void test_invoke_chaos(void **state)
{
	struct fx *fx = *state;
	struct retry_log rl = {0};
	fx->env.hook_ctx = &rl;
	fx->env.on_tool_retry = on_retry;
	fx->env.inject_failure = chaos;
	fake_calls = 0;
	fake_fail_times = 0;
	chaos_left = 2;
	char *out;
	assert_true(invoke(fx, &fake_tool, "{}", &out));
	assert_string_equal(out, "fake worked");
	assert_int_equal(fake_calls, 1);
	assert_int_equal(rl.n, 2);
	assert_string_equal(rl.reason[0], "fake failed: injected failure (chaos rehearsal)");
	free(out);
	retry_log_free(&rl);
	fx->env.inject_failure = NULL;
}

static void test_new_tools_registered(void **state)
{
	(void)state;
	const char *names[] = {"search_files", "run_shell", "http_get"};
	for (size_t i = 0; i < 3; i++) {
		const struct tool_def *t = tool_find(names[i]);
		assert_non_null(t);
		assert_false(t->demo_only);
		assert_null(t->fallback);
	}
	/* every named fallback exists and is not the tool itself */
	size_t n;
	const struct tool_def *const *all = tool_registry(&n);
	for (size_t i = 0; i < n; i++)
		if (all[i]->fallback)
			assert_true(tool_find(all[i]->fallback) &&
				    tool_find(all[i]->fallback) != all[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test_setup_teardown(test_write_then_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_drops_dangerous_mode_bits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_at_the_top, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_depth_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_o_path_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invoke_transient_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invoke_permanent_not_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invoke_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invoke_cancel_stops_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invoke_chaos, setup, teardown),
		cmocka_unit_test(test_new_tools_registered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
