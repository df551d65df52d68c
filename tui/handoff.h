/* handoff — the terminal lent to another program ($EDITOR, $PAGER) and taken back. */
#ifndef PEVTUI_HANDOFF_H
#define PEVTUI_HANDOFF_H

/*
 * Runs `program` on `path` through the shell, as git does ("$PROGRAM" may carry arguments:
 * "less -S", "code -w"; the path is passed as "$1", never spliced into the command line),
 * with the terminal handed over: curses and mouse reports suspended, SIGWINCH unblocked
 * for the child, all restored afterwards. Returns the child's wait status, or -1 with errno
 * when it could not be started.
 */
int handoff_run(const char *program, const char *path);

#endif
