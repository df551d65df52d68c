/* secrets — credential variables out of the environment, the process closed to its children
 * and to every other process of the same user. */
#include "config.h"

#include "secrets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "strbuf.h"
#include "xalloc.h"

extern char **environ;

bool secret_env_name(const char *name)
{
	static const char *const marks[] = {"KEY",    "TOKEN",  "SECRET",
					    "PASSWORD", "PASSWD", "CREDENTIAL"};
	size_t n = strcspn(name, "=");

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		size_t m = strlen(marks[i]);
		for (size_t j = 0; j + m <= n; j++)
			if (strncasecmp(name + j, marks[i], m) == 0)
				return true;
	}
	return false;
}

bool secret_env_withheld(const char *var)
{
	static const char *const sessions[] = {
		"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE",
		"STY", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "KRB5CCNAME"};
	size_t n = strcspn(var, "=");

	for (size_t i = 0; i < sizeof(sessions) / sizeof(sessions[0]); i++)
		if (strlen(sessions[i]) == n && !strncmp(var, sessions[i], n))
			return true;
	return secret_env_name(var);
}

void secrets_harden(char **warning)
{
	struct strbuf why = STRBUF_INIT;
	struct rlimit none = {0, 0};

	strbuf_init(&why);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		strbuf_addf(&why, "cannot make the process non-dumpable: %s", strerror(errno));
	if (setrlimit(RLIMIT_CORE, &none) != 0)
		strbuf_addf(&why, "%scannot turn off core files: %s", why.len ? "; " : "",
			    strerror(errno));
	if (why.len) {
		*warning = strbuf_detach(&why);
	} else {
		strbuf_release(&why);
		*warning = NULL;
	}
}

int secrets_scrub_env(void)
{
	struct strvec names = STRVEC_INIT;
	int removed = 0;

	/* Names first: unsetenv moves the entries of environ. */
	for (char **e = environ; e && *e; e++) {
		if (!secret_env_name(*e))
			continue;
		char *name = xstrdup(*e);
		name[strcspn(name, "=")] = '\0';
		strvec_push(&names, name);
		free(name);
	}
	for (size_t i = 0; i < names.n; i++) {
		/* unsetenv only drops the pointer; the text stays where the kernel put it at
		 * exec, and /proc/PID/environ reads it from there. Blank it first. */
		char *v = getenv(names.v[i]);
		if (v)
			memset(v, 0, strlen(v));
		if (unsetenv(names.v[i]) == 0)
			removed++;
	}
	strvec_clear(&names);
	return removed;
}
