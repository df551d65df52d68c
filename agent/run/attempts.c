/* attempts — copies of each attempt's artifacts and tool outputs in the run folder. */
#include "config.h"

#include "attempts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "sandbox.h"
#include "xalloc.h"

char *attempts_id_component(const char *id)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (const unsigned char *p = (const unsigned char *)(id ? id : ""); *p; p++) {
		bool keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
			    (*p == '.' && sb.len > 0);

		if (keep)
			strbuf_addc(&sb, (char)*p);
		else
			strbuf_addf(&sb, "%%%02X", *p);
	}
	if (!sb.len)
		strbuf_adds(&sb, "%00");
	return strbuf_detach(&sb);
}

static char *attempt_dir(const char *step_id, int attempt)
{
	char *c = attempts_id_component(step_id), *d = xasprintf("attempts/%s/%d", c, attempt);

	free(c);
	return d;
}

char *attempts_artifact_path(const char *step_id, int attempt, const char *path)
{
	char *d = attempt_dir(step_id, attempt), *p = xasprintf("%s/files/%s", d, path);

	free(d);
	return p;
}

/* Writes rel beneath the run folder (parents created), replacing it. */
static bool put(const char *run_dir, const char *rel, const char *buf, size_t n)
{
	int root = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	char *err = NULL;
	bool ok;

	if (root < 0)
		return false;
	fd = sandbox_open(root, rel, O_WRONLY | O_CREAT | O_TRUNC, 0600, true, &err);
	close(root);
	free(err);
	if (fd < 0)
		return false;
	ok = fd_write_all(fd, buf, n) == 0;
	return close(fd) == 0 && ok;
}

/* Reads up to max bytes of an open regular file. */
static char *slurp(int fd, size_t max, size_t *len, bool *cut, char **err)
{
	struct stat st;
	struct strbuf sb;
	char buf[8192];
	ssize_t r;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*err = xstrdup("not a regular file");
		return NULL;
	}
	strbuf_init(&sb);
	while (sb.len < max) {
		size_t want = max - sb.len < sizeof(buf) ? max - sb.len : sizeof(buf);

		r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*err = xasprintf("cannot read it: %s", strerror(errno));
			strbuf_release(&sb);
			return NULL;
		}
		if (r == 0)
			break;
		strbuf_add(&sb, buf, (size_t)r);
	}
	if (cut) {
		char one;

		*cut = sb.len >= max && read(fd, &one, 1) == 1;
	}
	*len = sb.len;
	return strbuf_detach(&sb);
}

int attempts_keep_artifacts(const char *run_dir, int ws_fd, const char *step_id, int attempt,
			    const struct strvec *paths)
{
	int kept = 0;

	if (!run_dir || ws_fd < 0 || !paths)
		return 0;
	for (size_t i = 0; i < paths->n; i++) {
		char *err = NULL, *data, *rel;
		size_t len = 0;
		bool cut = false;
		int fd;

		if (sandbox_check_path(paths->v[i]))
			continue;
		fd = sandbox_open(ws_fd, paths->v[i], O_RDONLY, 0, false, &err);
		free(err);
		err = NULL;
		if (fd < 0)
			continue;
		data = slurp(fd, ATTEMPTS_MAX_FILE, &len, &cut, &err);
		close(fd);
		free(err);
		if (!data || cut) {
			free(data);
			continue;
		}
		rel = attempts_artifact_path(step_id, attempt, paths->v[i]);
		kept += put(run_dir, rel, data, len);
		free(rel);
		free(data);
	}
	return kept;
}

char *attempts_keep_output(const char *run_dir, const char *step_id, int attempt, int k,
			   const char *text, size_t len)
{
	char *d, *rel;

	if (!run_dir || !text)
		return NULL;
	if (len > ATTEMPTS_MAX_FILE) {
		len = ATTEMPTS_MAX_FILE; /* on a UTF-8 boundary */
		while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
			len--;
	}
	/* Beside files/, not in a folder of their own: one inode fewer per attempt. Older
	 * runs' tools/K.txt stay readable: tool.result's output_file names the path. */
	d = attempt_dir(step_id, attempt);
	rel = xasprintf("%s/tool-%d.txt", d, k + 1);
	free(d);
	if (!put(run_dir, rel, text, len)) {
		free(rel);
		return NULL;
	}
	return rel;
}

char *attempts_read_beneath(const char *root_dir, const char *rel, size_t max, size_t *len,
			    bool *cut, char **err)
{
	int root, fd;
	char *data, *e = NULL;

	*err = NULL;
	if (!root_dir || !rel) {
		*err = xstrdup("no such file");
		return NULL;
	}
	root = open(root_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		*err = xasprintf("cannot open the folder: %s", strerror(errno));
		return NULL;
	}
	fd = sandbox_open(root, rel, O_RDONLY, 0, false, &e);
	close(root);
	if (fd < 0) {
		*err = e ? e : xstrdup("cannot open it");
		return NULL;
	}
	data = slurp(fd, max, len, cut, err);
	close(fd);
	return data;
}
