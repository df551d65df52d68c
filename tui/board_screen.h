/* board_screen — `pevtui --board`: every run below the runs folder on one screen, live
 * ones first, with the gates they wait at; Enter attaches. */
#ifndef PEVTUI_BOARD_SCREEN_H
#define PEVTUI_BOARD_SCREEN_H

#include <stdbool.h>

struct notify;
struct settings;

/*
 * Shows the board until the operator quits (NULL) or picks a run with Enter: then the
 * screen is closed and the run's folder is returned (caller frees), for --attach (a live
 * run) or --replay (one that is not). The list is read again every second; a gate that
 * opens in any run is signalled through `notify` (the notification settings: bell,
 * desktop notification, notify_cmd; NULL: not at all). With `want_new` (may be NULL), n
 * offers a new run: NULL is returned and *want_new set.
 */
char *board_screen_run(const struct settings *s, struct notify *notify, bool *want_new);

#endif
