/* detach — how a run outlives its terminal (README: "Detach and attach"). The process the
 * shell waits for is a thin waiter forked before any thread exists; the cockpit and the
 * engine run in its child, one process as always. Detaching ends the screen, moves the
 * child to a session of its own (no controlling terminal), and lets the waiter exit: the
 * shell comes back and the run goes on, nothing in flight lost. */
#ifndef PEVTUI_DETACH_H
#define PEVTUI_DETACH_H

struct ctl_server;
struct pev;

/*
 * Cockpit runs: call before any thread starts. Forks; returns in the child only. The
 * parent waits: it exits with the child's status when the child ends, or with 0 after
 * printing the child's message when the child detaches; SIGINT, SIGTERM and SIGHUP it
 * receives are passed on to the child. If fork fails, returns without a waiter (D then
 * keeps the process in the shell's foreground: said when it happens).
 */
void detach_launch(void);

/*
 * `pevtui --detach`: call before any thread starts, once RUNDIR exists. Forks; returns in
 * the child only, which is a daemon: a new session with no controlling terminal, stdin and
 * stdout on /dev/null, stderr appended to RUNDIR/engine.log. The parent waits until the
 * child calls detach_release (then prints its message and exits 0) or dies (then prints
 * the log and exits with its status).
 */
void detach_daemon_start(const char *run_dir);
/* The child tells the waiting parent that the run goes on; `message` is printed there. */
void detach_release(const char *message);

/*
 * The cockpit has ended its screen (D, or the terminal went away): the rest of the run
 * happens without one. Redirects as detach_daemon_start does, leaves the terminal's
 * session, releases the waiter with a message naming `pevtui --attach`, and has the
 * engine stay at run.end only while a cockpit is attached over `ctl` (NULL: none can
 * be; pev_linger_while), so that an attached cockpit can reopen the finished run. `e` and
 * `ctl` are borrowed and outlive the run.
 */
void detach_cockpit(struct pev *e, struct ctl_server *ctl, const char *run_dir);

#endif
