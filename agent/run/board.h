/* board — the runs below a runs folder as `pevtui --board` shows them: live or not, the
 * gates they wait at, spend against budget, age, task. Plain data from one fold of each
 * journal; the screen is tui/board_screen.c. */
#ifndef PEVTUI_BOARD_H
#define PEVTUI_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One run. Strings are owned, cleaned of terminal controls (they come from a folder). */
struct board_row {
	char *id;
	char *state; /* waiting (a live run at a gate), paused, running, or how it ended:
	              * passed, partial, aborted, error; unfinished; unreadable */
	char *gates; /* the gates it waits at ("plan", "high memo, shell s2"), or "" */
	int n_gates; /* 0 unless live */
	char *gate_json; /* the newest open gate's gate.open event (compact JSON), or NULL */
	double spent_usd, budget_usd; /* budget 0: none */
	bool spent_unknown;
	double started; /* epoch seconds, 0 unknown */
	char *task;
	pid_t pid; /* the engine holding it, 0 when none */
};

struct board {
	struct board_row *rows;
	size_t n, cap;
};

enum board_sort {
	BOARD_SORT_STATE,
	BOARD_SORT_AGE,
	BOARD_SORT_SPEND,
	BOARD_SORT_ID,
	BOARD_SORT__COUNT
};

/* Reads every run folder below runs_dir into *b (emptied first). false + *err when the
 * folder cannot be read ("no runs yet in …" when it does not exist). */
bool board_scan(const char *runs_dir, struct board *b, char **err);
void board_release(struct board *b);
/* Sorts the rows: STATE puts runs waiting for a decision first, then live ones, then the
 * rest; each key then goes newest first. */
void board_sort(struct board *b, enum board_sort key);
const char *board_sort_name(enum board_sort key); /* "state" … */
/* The row holds `filter` in its id, state, gates or task (case-insensitive); "" all. */
bool board_row_matches(const struct board_row *r, const char *filter);
/* Some run below runs_dir has a live engine (false when the folder cannot be read). */
bool board_any_live(const char *runs_dir);
/* Gates waiting across every live run. */
int board_gates_waiting(const struct board *b);

#endif
