/* tool_fs — the workspace file tools: read_file, write_file, list_files. */
#include "config.h"
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fdio.h"
#include "sandbox.h"
#include "strbuf.h"
#include "xalloc.h"

#define LIST_MAX_ENTRIES 500
#define LIST_MAX_DEPTH 64

/* ---- shared helpers ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s: 0 if invalid, -1 if a valid start is cut by n. */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	int len;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return len;
}

/*
 * Appends text that will travel in JSON to a model: invalid UTF-8 becomes U+FFFD so the
 * request stays valid. With `cut`, a character split by the cut is left out. Returns the
 * number of input bytes used.
 */
static size_t add_text(struct strbuf *sb, const char *data, size_t n, bool cut, bool ctrl)
{
	const unsigned char *s = (const unsigned char *)data;
	size_t i = 0;
	while (i < n) {
		int l = utf8_len(s + i, n - i);
		if (l < 0 && cut)
			break;
		if (l <= 0) {
			strbuf_adds(sb, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (ctrl && l == 1 && (s[i] < 0x20 || s[i] == 0x7f))
			strbuf_addc(sb, '?');
		else
			strbuf_add(sb, s + i, (size_t)l);
		i += (size_t)l;
	}
	return i;
}

/* The path as it may appear in a message: bounded, one line, quotes escaped. */
static char *show(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(s);
	strbuf_init(&sb);
	if (n > 200)
		n = 200;
	struct strbuf raw = STRBUF_INIT;
	strbuf_init(&raw);
	add_text(&raw, s, n, true, true);
	for (size_t i = 0; i < raw.len; i++) {
		if (raw.buf[i] == '"' || raw.buf[i] == '\\')
			strbuf_addc(&sb, '\\');
		strbuf_addc(&sb, raw.buf[i]);
	}
	if (strlen(s) > 200)
		strbuf_adds(&sb, "...");
	strbuf_release(&raw);
	return strbuf_detach(&sb);
}

/* The string field `key`; false with a sentence in *out when it is absent or not text. */
static bool get_path(const cJSON *input, const char *key, const char *dflt, const char **val,
		     struct strbuf *out)
{
	if (!input || !cJSON_IsObject(input)) {
		strbuf_adds(out,
			    "the input must be a JSON object, such as {\"path\": \"notes.txt\"}");
		return false;
	}
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(input, key);
	if (!it || cJSON_IsNull(it)) {
		if (dflt) {
			*val = dflt;
			return true;
		}
		strbuf_addf(out, "the input has no \"%s\"; give it as a string, such as "
				 "{\"%s\": \"notes.txt\"}",
			    key, key);
		return false;
	}
	if (!cJSON_IsString(it) || !it->valuestring) {
		strbuf_addf(out, "\"%s\" must be a string, such as \"notes.txt\"", key);
		return false;
	}
	*val = it->valuestring;
	return true;
}

static void fail_errno(struct strbuf *out, const char *what, const char *path, int e)
{
	char *s = show(path);
	strbuf_addf(out, "cannot %s path \"%s\": %s", what, s, strerror(e));
	free(s);
}

/* ---- read_file ----------------------------------------------------------------------- */

static bool read_file_run(const struct tool_env *env, const struct cJSON *input,
			  struct strbuf *out)
{
	const char *path;
	char *err = NULL;
	if (!get_path(input, "path", NULL, &path, out))
		return false;
	struct stat st;
	int fd = sandbox_open_stat(env->ws_fd, path, O_RDONLY, 0, false, &st, &err);
	if (fd < 0) {
		strbuf_adds(out, err);
		free(err);
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		char *s = show(path);
		strbuf_addf(out, "path \"%s\" is a folder; use list_files to see what it holds", s);
		free(s);
		close(fd);
		return false;
	}
	char *buf = xmalloc(TOOL_MAX_OUTPUT);
	size_t got = 0;
	while (got < TOOL_MAX_OUTPUT) {
		ssize_t r = read(fd, buf + got, TOOL_MAX_OUTPUT - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail_errno(out, "read", path, errno);
			free(buf);
			close(fd);
			return false;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	/* The size may have changed since fstat; whatever is left now is what was cut. */
	off_t end = lseek(fd, 0, SEEK_END);
	close(fd);
	if (memchr(buf, '\0', got)) {
		char *s = show(path);
		strbuf_addf(out,
			    "path \"%s\" is a binary file (%lld bytes); read_file shows text only",
			    s, (long long)st.st_size);
		free(s);
		free(buf);
		return false;
	}
	bool cut = got == TOOL_MAX_OUTPUT && end > (off_t)got;
	size_t used = add_text(out, buf, got, cut, false);
	if (cut)
		strbuf_addf(out, "\n[cut: %lld more bytes]", (long long)(end - (off_t)used));
	free(buf);
	return true;
}

/* ---- write_file ---------------------------------------------------------------------- */

static atomic_uint tmp_counter;

/* The folder write_file opened for the file, unless it is the workspace's own. */
static void close_dir(const struct tool_env *env, int dfd)
{
	if (dfd != env->ws_fd)
		close(dfd);
}

static bool write_file_run(const struct tool_env *env, const struct cJSON *input,
			   struct strbuf *out)
{
	const char *path;
	char *err = NULL;
	if (!get_path(input, "path", NULL, &path, out))
		return false;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(input, "content");
	if (!c || !cJSON_IsString(c) || !c->valuestring) {
		strbuf_adds(out, c ? "\"content\" must be a string (the whole text of the file)"
				   : "the input has no \"content\"; give the whole text of the "
				     "file as a string");
		return false;
	}
	const char *content = c->valuestring;

	if (sandbox_check_path(path)) {
		/* Fails the same check without touching the disk, and names the path. */
		int fd = sandbox_open(env->ws_fd, path, O_RDONLY, 0, false, &err);
		if (fd >= 0)
			close(fd);
		strbuf_adds(out, err ? err : "the path is not allowed");
		free(err);
		return false;
	}
	size_t len = strlen(path);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (path[len - 1] == '/' || strcmp(base, ".") == 0) {
		char *s = show(path);
		strbuf_addf(out, "path \"%s\" names a folder; give a file name, such as \"%s%s"
				 "notes.txt\"",
			    s, s, path[len - 1] == '/' ? "" : "/");
		free(s);
		return false;
	}
	/* A name at the top writes straight into the workspace descriptor: base is one
	 * component, neither "." nor "..", and every call below refuses a link there. */
	int dfd = env->ws_fd;
	if (slash) {
		char *dir = xstrndup(path, (size_t)(slash - path) + 1);
		dfd = sandbox_open(env->ws_fd, dir, O_RDONLY | O_DIRECTORY, 0, true, &err);
		free(dir);
		if (dfd < 0) {
			strbuf_adds(out, err);
			free(err);
			return false;
		}
	}

	struct stat st;
	bool exists = false;
	mode_t fmode = 0644;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		char *s = show(path);
		if (S_ISLNK(st.st_mode))
			strbuf_addf(out, "path \"%s\" is a symbolic link; links are not followed "
					 "in the workspace, so it is not overwritten",
				    s);
		else if (S_ISDIR(st.st_mode))
			strbuf_addf(out, "path \"%s\" is a folder, not a file", s);
		else if (!S_ISREG(st.st_mode))
			strbuf_addf(out, "path \"%s\" is not a regular file", s);
		free(s);
		if (!S_ISREG(st.st_mode)) {
			close_dir(env, dfd);
			return false;
		}
		exists = true;
		/* The replaced file's permissions, less what a model's text must not inherit:
		 * setuid, setgid, sticky, and writable by anyone. */
		fmode = st.st_mode & 0777 & ~(mode_t)S_IWOTH;
	}

	char *tmp = NULL;
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		free(tmp);
		tmp = xasprintf(".pevtui-tmp-%ld-%u", (long)getpid(),
				atomic_fetch_add(&tmp_counter, 1u));
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		fail_errno(out, "write", path, errno);
		free(tmp);
		close_dir(env, dfd);
		return false;
	}
	size_t n = strlen(content);
	bool ok = fd_write_all(fd, content, n) == 0 && (!exists || fchmod(fd, fmode) == 0) &&
		  fsync(fd) == 0;
	int e = errno;
	if (close(fd) < 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && renameat(dfd, tmp, dfd, base) < 0) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlinkat(dfd, tmp, 0);
		fail_errno(out, "write", path, e);
	} else {
		char *s = show(path);
		strbuf_addf(out, "%s \"%s\" (%zu bytes)", exists ? "replaced" : "created", s, n);
		free(s);
	}
	free(tmp);
	close_dir(env, dfd);
	return ok;
}

/* ---- list_files ---------------------------------------------------------------------- */

struct lister {
	struct strbuf *out;
	size_t count;
	bool cut;
	bool too_deep;
};

static void list_dir(struct lister *ls, int dfd, const char *prefix, int depth)
{
	struct strvec names = STRVEC_INIT;

	if (!sandbox_read_dir(dfd, &names))
		return;

	for (size_t i = 0; i < names.n && !ls->cut; i++) {
		const char *name = names.v[i];
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* vanished while we looked */
		if (ls->count == LIST_MAX_ENTRIES) {
			ls->cut = true;
			break;
		}
		ls->count++;
		add_text(ls->out, prefix, strlen(prefix), false, true);
		add_text(ls->out, name, strlen(name), false, true);
		if (S_ISLNK(st.st_mode)) {
			strbuf_adds(ls->out, " -> (link)\n");
		} else if (S_ISDIR(st.st_mode)) {
			strbuf_adds(ls->out, "/\n");
			if (depth + 1 >= LIST_MAX_DEPTH) {
				ls->too_deep = true;
				continue;
			}
			int sub = openat(dfd, name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				continue;
			char *p = xasprintf("%s%s/", prefix, name);
			list_dir(ls, sub, p, depth + 1);
			free(p);
			close(sub);
		} else {
			strbuf_addc(ls->out, '\n');
		}
	}
	strvec_clear(&names);
}

static bool list_files_run(const struct tool_env *env, const struct cJSON *input,
			   struct strbuf *out)
{
	const char *path;
	char *err = NULL;
	if (!input)
		path = "."; /* no arguments at all: the whole workspace */
	else if (!get_path(input, "path", ".", &path, out))
		return false;
	if (!*path)
		path = ".";

	int dfd = sandbox_open(env->ws_fd, path, O_RDONLY | O_DIRECTORY, 0, false, &err);
	if (dfd < 0) {
		strbuf_adds(out, err);
		free(err);
		return false;
	}
	/* Entries are shown relative to the workspace, ready for read_file. */
	struct strbuf prefix = STRBUF_INIT;
	strbuf_init(&prefix);
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, "/");
		if (n > 0 && !(n == 1 && p[0] == '.')) {
			strbuf_add(&prefix, p, n);
			strbuf_addc(&prefix, '/');
		}
		p += n;
		p += strspn(p, "/");
	}
	struct strbuf list = STRBUF_INIT;
	strbuf_init(&list);
	struct lister ls = {.out = &list};
	list_dir(&ls, dfd, prefix.buf, 0);
	close(dfd);

	if (list.len > TOOL_MAX_OUTPUT) {
		size_t keep = TOOL_MAX_OUTPUT;
		while (keep > 0 && list.buf[keep - 1] != '\n')
			keep--;
		list.len = keep;
		list.buf[keep] = '\0';
		ls.cut = true;
	}
	if (ls.count == 0) {
		char *s = show(path);
		strbuf_addf(out, "(folder \"%s\" is empty)", s);
		free(s);
	} else {
		strbuf_add(out, list.buf, list.len);
	}
	if (ls.cut)
		strbuf_addf(out, "[cut: the list stops at %d entries; list a subfolder to see "
				 "the rest]\n",
			    LIST_MAX_ENTRIES);
	if (ls.too_deep)
		strbuf_addf(out, "[folders nested deeper than %d levels are not listed]\n",
			    LIST_MAX_DEPTH);
	strbuf_release(&list);
	strbuf_release(&prefix);
	return true;
}

/* ---- descriptors --------------------------------------------------------------------- */

const struct tool_def tool_read_file = {
	.name = "read_file",
	.writes = TOOL_WRITES_NOTHING,
	.description = "Read a text file from the workspace. Paths are relative to the "
		       "workspace; long files are cut at 64 KiB with a note.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
		       "\"description\":\"File path relative to the workspace, e.g. "
		       "notes/summary.md\"}},\"required\":[\"path\"],"
		       "\"additionalProperties\":false}",
	.run = read_file_run,
};

const struct tool_def tool_write_file = {
	.name = "write_file",
	.writes = TOOL_WRITES_PATH,
	.description = "Create or replace a text file in the workspace with the given "
		       "content. Missing folders are created.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
		       "\"description\":\"File path relative to the workspace\"},"
		       "\"content\":{\"type\":\"string\",\"description\":\"The whole new "
		       "text of the file\"}},\"required\":[\"path\",\"content\"],"
		       "\"additionalProperties\":false}",
	.run = write_file_run,
};

const struct tool_def tool_list_files = {
	.name = "list_files",
	.writes = TOOL_WRITES_NOTHING,
	.description = "List the files under a workspace folder, recursively and sorted; "
		       "folders end with \"/\".",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
		       "\"description\":\"Folder relative to the workspace; default \\\".\\\" "
		       "(the whole workspace)\"}},\"additionalProperties\":false}",
	.run = list_files_run,
};
