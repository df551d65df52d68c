/* oauth_login — the commands, and the browser. */
#include "config.h"

#include "oauth_login.h"

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "oauth_flow.h"
#include "oauth_tokens.h"
#include "xalloc.h"

extern char **environ;

#define LOGIN_TIMEOUT_MS (5L * 60 * 1000)

const struct oauth_prompt *oauth_login_prompt(const struct mcp_server_conf *s)
{
	static const struct oauth_prompt prompt = {
	    .open_url = oauth_login_open_url,
	    .paste_fd = STDIN_FILENO,
	    .timeout_ms = LOGIN_TIMEOUT_MS,
	};
	static struct oauth_prompt with_tell;
	if (!s || !s->sign_in)
		return NULL;
	with_tell = prompt;
	with_tell.tell = stderr;
	return &with_tell;
}

/* Runs `sh -c 'CMD "$1" >/dev/null 2>&1 &' sh URL`: the browser outlives nothing here
 * and its chatter stays off the terminal. */
static bool launch(const char *cmd, const char *url)
{
	char *script = xasprintf("%s \"$1\" </dev/null >/dev/null 2>&1 &", cmd);
	char *argv[] = {"sh", "-c", script, "sh", (char *)url, NULL};
	pid_t pid;
	int st = 0;
	bool ok = posix_spawnp(&pid, "sh", NULL, NULL, argv, environ) == 0;
	if (ok)
		ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	free(script);
	return ok;
}

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return false;
	char *copy = xstrdup(path), *save = NULL;
	bool found = false;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", d, prog);
		found = access(f, X_OK) == 0;
		free(f);
	}
	free(copy);
	return found;
}

bool oauth_login_open_url(const char *url, FILE *tell)
{
	const char *b = getenv("BROWSER");
	if (b && *b) {
		char *first = xstrndup(b, strcspn(b, ":"));
		bool ok = launch(first, url);
		if (tell)
			fprintf(tell, ok ? "Opened it with $BROWSER (%s).\n"
			                 : "$BROWSER (%s) could not be started; open the address "
			                   "yourself.\n",
			        first);
		free(first);
		return ok;
	}
	const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
	if (((d && *d) || (w && *w)) && on_path("xdg-open")) {
		bool ok = launch("xdg-open", url);
		if (ok && tell)
			fprintf(tell, "Opened it with xdg-open.\n");
		return ok;
	}
	return false;
}

int oauth_login_main(const struct mcp_conf *conf, const char *name, bool logout,
                     const char *workspace, FILE *out, FILE *err)
{
	const struct mcp_server_conf *s = mcp_conf_find(conf, name);
	if (!s) {
		fprintf(err, "pevtui: no MCP server named %s (define it as [mcp.%s] in the config)\n",
		        name, name);
		return 2;
	}
	if (!s->url || s->command) {
		fprintf(err, "pevtui: MCP server %s runs as a command; only remote (url) servers "
		             "sign in\n",
		        name);
		return 2;
	}
	char *why = NULL;
	if (logout) {
		int removed = 0, fd = oauth_tokens_lock(&why);
		bool ok = fd >= 0 && oauth_tokens_remove(s->url, &removed, &why);
		oauth_tokens_unlock(fd);
		if (!ok) {
			fprintf(err, "pevtui: %s\n", why);
			free(why);
			return 1;
		}
		fprintf(out, removed ? "Signed out of %s: its tokens are forgotten.\n"
		                     : "%s: no sign-in was stored.\n",
		        name);
		return 0;
	}
	struct mcp_conf one = {0};
	struct mcp_conf src = {.v = (struct mcp_server_conf *)s, .n = 1, .cap = 1};
	mcp_conf_copy(&one, &src);
	one.v[0].sign_in = true;
	struct mcp_client *c = mcp_client_new(&one.v[0], NULL, workspace);
	int code = 0;
	if (mcp_client_start(c, &why)) {
		char *path = oauth_tokens_path();
		fprintf(out, "%s: connected; a sign-in it asked for is kept in %s for the next "
		             "runs.\n",
		        name, path ? path : "the token store");
		free(path);
	} else {
		fprintf(err, "pevtui: %s\n", why);
		code = 1;
	}
	free(why);
	mcp_client_free(c);
	mcp_conf_release(&one);
	return code;
}
