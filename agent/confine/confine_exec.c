/* pevtui-confine — confines itself (no_new_privs, Landlock, seccomp) and becomes the
 * command. pevtui runs it for every confined command, inside bubblewrap when that holds:
 *
 *   pevtui-confine [--landlock] [--write PATH]... [--hide PATH]... [--seccomp]
 *                  [--network] -- COMMAND [ARG]...
 *
 * It fails closed: a layer it was asked for and cannot apply ends it with status 126 and
 * one line on stderr, and the command does not run. */
#include "config.h"

#include "confine_exec.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void usage(void)
{
	fputs("usage: pevtui-confine [--landlock] [--write PATH]... [--hide PATH]... "
	      "[--seccomp] [--network] -- COMMAND [ARG]...\n",
	      stderr);
	exit(126);
}

/*
 * Run by root (a container, CI), the command would keep every capability: CAP_SYS_PTRACE
 * reads a non-dumpable process's memory and environment, CAP_DAC_OVERRIDE ignores file
 * modes. bubblewrap drops them all; so does this, for Landlock alone. A process that is
 * not root has none to drop.
 */
static bool drop_capabilities(void)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};

	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
			return false;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return syscall(SYS_capset, &h, d) == 0;
}

int main(int argc, char **argv)
{
	struct strvec writable = STRVEC_INIT, hidden = STRVEC_INIT;
	bool landlock = false, seccomp = false, network = false;
	int i;
	char *err = NULL;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--landlock"))
			landlock = true;
		else if (!strcmp(argv[i], "--seccomp"))
			seccomp = true;
		else if (!strcmp(argv[i], "--network"))
			network = true;
		else if (!strcmp(argv[i], "--write") && i + 1 < argc)
			strvec_push(&writable, argv[++i]);
		else if (!strcmp(argv[i], "--hide") && i + 1 < argc)
			strvec_push(&hidden, argv[++i]);
		else
			usage();
	}
	if (i + 1 >= argc)
		usage();
	/* No setuid program can give the command more than it has. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("pevtui-confine: cannot set no_new_privs");
		return 126;
	}
	if (!drop_capabilities()) {
		perror("pevtui-confine: cannot drop capabilities");
		return 126;
	}
	if ((landlock && !confine_landlock_apply(&writable, &hidden, network, &err)) ||
	    (seccomp && !confine_seccomp_apply(network, &err))) {
		fprintf(stderr, "pevtui-confine: %s; the command did not run\n", err);
		free(err);
		return 126;
	}
	strvec_clear(&writable);
	strvec_clear(&hidden);
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "pevtui-confine: cannot run %s: ", argv[i + 1]);
	perror(NULL);
	return 127;
}
