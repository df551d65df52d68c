/* probe — which of the sandbox's layers hold on this machine, found once per run. */
#include "config.h"

#include "confine.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "landlock_abi.h"
#include "xalloc.h"

extern char **environ;

/* The first executable `name` on PATH (or the default path); NULL when none. */
static char *find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		if (n > 0) {
			char *c = xasprintf("%.*s/%s", (int)n, p, name);
			if (access(c, X_OK) == 0)
				return c;
			free(c);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

/* Runs argv with no input and no output; true when it exits 0. */
static bool runs_clean(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = 0;
	bool ok = false;

	if (posix_spawn_file_actions_init(&fa))
		return false;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0) {
		while (waitpid(pid, &st, 0) < 0)
			;
		ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	posix_spawn_file_actions_destroy(&fa);
	return ok;
}

/* bubblewrap with the namespaces commands get: it fails where user namespaces are
 * refused (many containers, distributions that restrict them). */
static char *probe_bwrap(void)
{
	char *bwrap = find_on_path("bwrap");
	if (!bwrap)
		return NULL;
	char *argv[] = {bwrap,	       "--ro-bind",	    "/",	   "/",
			"--dev",       "/dev",		    "--proc",	   "/proc",
			"--unshare-pid", "--unshare-net",   "--unshare-ipc", "--die-with-parent",
			"--new-session", "--",		    "/bin/true",   NULL};
	if (runs_clean(argv))
		return bwrap;
	free(bwrap);
	return NULL;
}

/* The test hook: is `layer` among those PEVTUI_SANDBOX_LAYERS keeps (all when unset)? */
static bool hook_keeps(const char *layer)
{
	const char *v = getenv("PEVTUI_SANDBOX_LAYERS");
	if (!v)
		return true;
	size_t n = strlen(layer);
	for (const char *p = v; *p;) {
		size_t k = strcspn(p, ", ");
		if (k == n && strncmp(p, layer, n) == 0)
			return true;
		p += k;
		p += strspn(p, ", ");
	}
	return false;
}

void confine_probe(const char *helper, struct confine_layers *out)
{
	memset(out, 0, sizeof(*out));
	bool have_helper = helper && access(helper, X_OK) == 0;
	if (have_helper)
		out->helper = xstrdup(helper);
	if (hook_keeps("bwrap"))
		out->bwrap_path = probe_bwrap();
	out->bwrap = out->bwrap_path != NULL;
	if (have_helper && hook_keeps("landlock"))
		out->landlock_abi = confine_ll_abi();
	/* PR_GET_SECCOMP fails with EINVAL on a kernel built without seccomp. */
	if (have_helper && hook_keeps("seccomp"))
		out->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
	if (!out->landlock_abi && !out->seccomp) {
		free(out->helper);
		out->helper = NULL;
	}
}

void confine_layers_release(struct confine_layers *l)
{
	if (!l)
		return;
	free(l->bwrap_path);
	free(l->helper);
	memset(l, 0, sizeof(*l));
}

bool confine_layers_any(const struct confine_layers *l)
{
	return l && (l->bwrap || l->landlock_abi > 0);
}

const char *confine_no_layer_why(const struct confine_layers *l)
{
	if (l && !l->helper && !l->bwrap)
		return "no sandbox layer holds here (no bubblewrap with user namespaces, no "
		       "Landlock): commands would run unconfined";
	return "no sandbox layer confines files here (no bubblewrap with user namespaces, no "
	       "Landlock): commands would run unconfined";
}
