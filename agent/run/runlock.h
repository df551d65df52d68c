/* runlock — one process per run folder: an advisory lock held for the life of the engine. */
#ifndef PEVTUI_RUNLOCK_H
#define PEVTUI_RUNLOCK_H

#include <sys/types.h>

/*
 * Takes RUNDIR/lock (created 0600) with flock(LOCK_EX | LOCK_NB) and writes this
 * process's pid into it. Returns the descriptor (keep it open: closing it, or the
 * process ending for any reason, kill -9 included, releases the lock), or -1 + *err:
 * "the run ID is in use by pid N (another pevtui): …" when another process holds it.
 * Nothing in the folder changes when the lock is not taken.
 */
int runlock_take(const char *run_dir, char **err);
void runlock_release(int fd); /* -1 ok */

/* The pid holding RUNDIR's lock, 0 when nobody does (or there is no lock file). */
pid_t runlock_holder(const char *run_dir);

#endif
