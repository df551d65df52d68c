/* tool_search — search_files: finds a fixed string in the workspace's text files. */
#include "config.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sandbox.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/*
 * The walk starts from sandbox_open and goes down with openat(O_NOFOLLOW) only; links are
 * never followed (a link is skipped, not read), so no result comes from outside the
 * workspace. Files with a NUL byte (binaries) and files over TOOL_SEARCH_MAX_FILE are
 * skipped and counted; a matched line is shown up to LINE_SHOWN bytes.
 */
#define DEFAULT_RESULTS 100
#define MAX_RESULTS 1000
#define MAX_DEPTH 64
#define LINE_SHOWN 300
#define MAX_PATTERN 1000

struct search {
	const char *pat; /* lowered when icase */
	size_t plen;
	bool icase;
	size_t max;
	size_t found;
	bool cut;
	size_t skipped_big, skipped_binary;
	struct strbuf *out;
	const struct tool_env *env;
};

/* ASCII only, on purpose: the same answer in every locale. */
static void lower_ascii(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			p[i] = (char)(p[i] - 'A' + 'a');
}

static void add_clean(struct strbuf *out, const char *s, size_t n)
{
	char *c = textsan_clean(s, n, TEXTSAN_KEEP_TAB);
	strbuf_adds(out, c);
	free(c);
}

/* Searches the open file `fd` (closed here), shown as `rel`. */
static void search_fd(struct search *s, int fd, const char *rel)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (st.st_size > TOOL_SEARCH_MAX_FILE) {
		s->skipped_big++;
		close(fd);
		return;
	}
	/* One byte more than the limit tells a file that grew since fstat. */
	size_t cap = (size_t)TOOL_SEARCH_MAX_FILE + 1, got = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		ssize_t r = read(fd, buf + got, cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == cap)
			break;
	}
	close(fd);
	if (got == cap) {
		s->skipped_big++;
	} else if (memchr(buf, '\0', got)) {
		s->skipped_binary++;
	} else {
		/* With ignore_case the search runs over a lowered copy; lines are shown from
		 * the original. */
		char *hay = buf;
		if (s->icase) {
			hay = xmalloc(got + 1);
			memcpy(hay, buf, got);
			lower_ascii(hay, got);
		}
		size_t lineno = 0;
		for (size_t pos = 0; pos < got && !s->cut;) {
			const char *nl = memchr(buf + pos, '\n', got - pos);
			size_t end = nl ? (size_t)(nl - buf) : got;
			lineno++;
			if (memmem(hay + pos, end - pos, s->pat, s->plen)) {
				if (s->found == s->max) {
					s->cut = true;
					break;
				}
				s->found++;
				size_t len = end - pos;
				add_clean(s->out, rel, strlen(rel));
				strbuf_addf(s->out, ":%zu: ", lineno);
				if (len > LINE_SHOWN) {
					while (len > 0 && len > LINE_SHOWN - 4)
						len--;
					while (len > 0 &&
					       ((unsigned char)buf[pos + len] & 0xc0) == 0x80)
						len--;
					add_clean(s->out, buf + pos, len);
					strbuf_adds(s->out, "...");
				} else {
					add_clean(s->out, buf + pos, len);
				}
				strbuf_addc(s->out, '\n');
			}
			pos = end + 1;
		}
		if (hay != buf)
			free(hay);
	}
	free(buf);
}

static void search_dir(struct search *s, int dfd, const char *prefix, int depth)
{
	struct strvec names = STRVEC_INIT;

	if (!sandbox_read_dir(dfd, &names))
		return;
	for (size_t i = 0; i < names.n && !s->cut; i++) {
		if (s->env->cancel && atomic_load(s->env->cancel))
			break;
		struct stat st;
		if (fstatat(dfd, names.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		char *rel = xasprintf("%s%s", prefix, names.v[i]);
		if (S_ISDIR(st.st_mode) && depth + 1 < MAX_DEPTH) {
			int sub = openat(dfd, names.v[i],
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0) {
				char *p = xasprintf("%s/", rel);
				search_dir(s, sub, p, depth + 1);
				free(p);
				close(sub);
			}
		} else if (S_ISREG(st.st_mode) && st.st_size > TOOL_SEARCH_MAX_FILE) {
			s->skipped_big++;
		} else if (S_ISREG(st.st_mode)) {
			/* O_NONBLOCK: a FIFO swapped in after fstatat must not hang the walk. */
			int fd = openat(dfd, names.v[i],
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0)
				search_fd(s, fd, rel);
		}
		free(rel);
	}
	strvec_clear(&names);
}

static bool search_files_run(const struct tool_env *env, const struct cJSON *input,
			     struct strbuf *out)
{
	if (!input || !cJSON_IsObject(input)) {
		strbuf_adds(out,
			    "the input must be a JSON object, such as {\"pattern\": \"TODO\"}");
		return false;
	}
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(input, "pattern");
	if (!p || !cJSON_IsString(p) || !p->valuestring || !*p->valuestring) {
		strbuf_adds(out, "the input needs \"pattern\": the text to find, as a non-empty "
				 "string");
		return false;
	}
	if (strlen(p->valuestring) > MAX_PATTERN || strchr(p->valuestring, '\n')) {
		strbuf_addf(out, "\"pattern\" must be one line of at most %d bytes", MAX_PATTERN);
		return false;
	}
	const char *path = ".";
	const cJSON *pa = cJSON_GetObjectItemCaseSensitive(input, "path");
	if (pa && !cJSON_IsNull(pa)) {
		if (!cJSON_IsString(pa) || !pa->valuestring) {
			strbuf_adds(out, "\"path\" must be a string: a folder or file relative to "
					 "the workspace");
			return false;
		}
		if (*pa->valuestring)
			path = pa->valuestring;
	}
	size_t max = DEFAULT_RESULTS;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(input, "max_results");
	if (m && !cJSON_IsNull(m)) {
		if (!cJSON_IsNumber(m) || !(m->valuedouble >= 1 && m->valuedouble <= MAX_RESULTS)) {
			strbuf_addf(out, "\"max_results\" must be a number from 1 to %d",
				    MAX_RESULTS);
			return false;
		}
		max = (size_t)m->valuedouble;
	}
	const cJSON *ic = cJSON_GetObjectItemCaseSensitive(input, "ignore_case");
	if (ic && !cJSON_IsNull(ic) && !cJSON_IsBool(ic)) {
		strbuf_adds(out, "\"ignore_case\" must be true or false");
		return false;
	}

	char *err = NULL;
	struct stat st;
	int fd = sandbox_open_stat(env->ws_fd, path, O_RDONLY | O_NONBLOCK, 0, false, &st, &err);
	if (fd < 0) {
		strbuf_adds(out, err);
		free(err);
		return false;
	}
	struct strbuf list = STRBUF_INIT;
	strbuf_init(&list);
	char *pat = xstrdup(p->valuestring);
	if (cJSON_IsTrue(ic))
		lower_ascii(pat, strlen(pat));
	struct search s = {.pat = pat,
			   .plen = strlen(p->valuestring),
			   .icase = cJSON_IsTrue(ic),
			   .max = max,
			   .out = &list,
			   .env = env};
	/* Results name paths relative to the workspace, ready for read_file. */
	struct strbuf prefix = STRBUF_INIT;
	strbuf_init(&prefix);
	for (const char *q = path; *q;) {
		size_t n = strcspn(q, "/");
		if (n > 0 && !(n == 1 && q[0] == '.')) {
			if (prefix.len)
				strbuf_addc(&prefix, '/');
			strbuf_add(&prefix, q, n);
		}
		q += n;
		q += strspn(q, "/");
	}
	if (S_ISDIR(st.st_mode)) {
		if (prefix.len)
			strbuf_addc(&prefix, '/');
		search_dir(&s, fd, prefix.buf, 0);
		close(fd);
	} else {
		search_fd(&s, fd, prefix.buf);
	}

	if (s.found == 0) {
		char *shown = textsan_clean(p->valuestring, strlen(p->valuestring), 0);
		strbuf_addf(out, "no matches for \"%s\"", shown);
		free(shown);
	}
	else
		strbuf_add(out, list.buf, list.len);
	if (out->len > TOOL_MAX_OUTPUT) {
		size_t keep = TOOL_MAX_OUTPUT;
		while (keep > 0 && out->buf[keep - 1] != '\n')
			keep--;
		out->len = keep;
		out->buf[keep] = '\0';
		s.cut = true;
	}
	if (s.cut)
		strbuf_addf(out, "\n[cut: more matches than shown (limit %zu); narrow the path or "
				 "the pattern]",
			    s.max);
	if (s.skipped_big || s.skipped_binary)
		strbuf_addf(out, "\n[skipped: %zu binary files, %zu files over %d bytes]",
			    s.skipped_binary, s.skipped_big, TOOL_SEARCH_MAX_FILE);
	strbuf_release(&list);
	strbuf_release(&prefix);
	free(pat);
	return true;
}

const struct tool_def tool_search_files = {
	.name = "search_files",
	.writes = TOOL_WRITES_NOTHING,
	.description = "Find lines containing a fixed text in the workspace's text files "
		       "(not a regular expression). Results are \"path:line: text\", sorted by "
		       "path; links, binary files and files over 1 MB are skipped.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":\"string\","
		       "\"description\":\"The text to find\"},\"path\":{\"type\":\"string\","
		       "\"description\":\"Folder or file relative to the workspace; default "
		       "the whole workspace\"},\"max_results\":{\"type\":\"number\","
		       "\"description\":\"At most this many matching lines (default 100)\"},"
		       "\"ignore_case\":{\"type\":\"boolean\",\"description\":\"Match ASCII "
		       "letters in either case\"}},\"required\":[\"pattern\"],"
		       "\"additionalProperties\":false}",
	.run = search_files_run,
};
