/* pager — $PAGER on a sanitized temporary copy, the terminal handed over and back. */
#include "config.h"

#include "pager.h"

#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdio.h"
#include "handoff.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* "-NAME" of the file's last component, in safe characters, for mkstemps. */
static char *suffix(const char *name)
{
	const char *base = name ? strrchr(name, '/') : NULL;
	struct strbuf sb;

	base = base ? base + 1 : (name ? name : "");
	strbuf_init(&sb);
	strbuf_addc(&sb, '-');
	for (const char *p = base; *p && sb.len < 48; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-';

		strbuf_addc(&sb, ok ? c : '_');
	}
	return strbuf_detach(&sb);
}

bool pager_show(const char *name, const char *text, size_t len, char **err)
{
	const char *tmp = getenv("TMPDIR"), *pager = getenv("PAGER");
	char *sfx = suffix(name), *path, *clean;
	int fd, status = 0;
	bool wrote;

	*err = NULL;
	if (!pager || !*pager)
		pager = "less";
	path = xasprintf("%s/pevtui-view-XXXXXX%s", tmp && *tmp ? tmp : "/tmp", sfx);
	fd = mkstemps(path, (int)strlen(sfx));
	free(sfx);
	if (fd < 0) {
		*err = xasprintf("cannot create a temporary file: %s", strerror(errno));
		free(path);
		return false;
	}
	/* Model text: no escape sequence reaches the terminal, whatever the pager passes. */
	clean = textsan_clean(text ? text : "", text ? len : 0, TEXTSAN_KEEP_NL | TEXTSAN_KEEP_TAB);
	wrote = fd_write_all(fd, clean, strlen(clean)) == 0;
	free(clean);
	if (close(fd) != 0 || !wrote) {
		*err = xasprintf("cannot write %s", path);
		unlink(path);
		free(path);
		return false;
	}
	status = handoff_run(pager, path);
	unlink(path);
	free(path);
	if (status < 0) {
		*err = xasprintf("cannot start the pager: %s", strerror(errno));
		return false;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 127) {
		*err = xasprintf("the pager \"%s\" did not run (status %d)", pager,
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return false;
	}
	return true;
}
