/* secrets — one policy for credentials in the process: which environment variables hold
 * them, and keeping them out of reach of the commands the executor runs. */
#ifndef PEVTUI_SECRETS_H
#define PEVTUI_SECRETS_H

#include <stdbool.h>

/*
 * True when an environment variable looks like a credential: its name (the part of
 * "NAME=value" before '=') contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL,
 * in any case. Such variables are never passed to a child and never kept by pevtui.
 */
bool secret_env_name(const char *name);

/*
 * True when a command the executor runs must not get this variable: a credential (above),
 * or a way into the operator's own sessions and agents — SSH_AUTH_SOCK and
 * GPG_AGENT_INFO (sign and log in as the operator), DBUS_SESSION_BUS_ADDRESS (the
 * desktop's keyring), TMUX, TMUX_PANE and STY (type into the operator's terminals, the
 * cockpit's gates included), DISPLAY, WAYLAND_DISPLAY and XAUTHORITY (keystrokes into
 * other windows), KRB5CCNAME (Kerberos tickets). `var` is a name or "NAME=value".
 */
bool secret_env_withheld(const char *var);

/*
 * Closes the process to others of the same user; called first thing in main, before
 * anything forks, so that every process pevtui keeps (the waiter the shell waits for, the
 * engine, a detached daemon, a command's keeper) inherits it:
 * - the process is made non-dumpable (PR_SET_DUMPABLE 0): no core file, and
 *   /proc/PID/mem, /proc/PID/environ and ptrace are closed to other processes of the same
 *   user, the executor's commands among them (root keeps that reach);
 * - RLIMIT_CORE is set to 0, for the process and everything it starts.
 * A program a process execs is dumpable again (the kernel's rule): it gets an environment
 * without credentials instead. A step that fails is written to *warning (a sentence,
 * caller frees; NULL when all held).
 */
void secrets_harden(char **warning);

/*
 * Every credential-looking variable (secret_env_name) overwritten where it lies (the block
 * that /proc/PID/environ shows, so not even root reads it back there) and removed from the
 * environment. Call once what needs a key holds it (the provider), in every process that
 * lives on (the waiter right after its fork), and before any thread starts: it changes
 * the environment, which is not thread-safe. Returns the number of variables removed.
 */
int secrets_scrub_env(void);

#endif
