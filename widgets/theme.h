/*
 * theme — colour roles and the text files that map them to colours (themes/NAME.theme).
 * Widgets ask for a role's attributes, never for raw colour pairs.
 */
#ifndef PEVTUI_THEME_H
#define PEVTUI_THEME_H

#include <stdbool.h>
#include <stddef.h>

struct strvec;

enum theme_role {
	THEME_NORMAL,
	THEME_DIM,
	THEME_BORDER,
	THEME_BORDER_FOCUS,
	THEME_TITLE,
	THEME_TITLE_FOCUS,
	THEME_SELECTED,
	THEME_STATUS,
	THEME_STATUS_KEY,
	THEME_TAB,
	THEME_TAB_ACTIVE,
	THEME_GOOD,    /* passed, ok */
	THEME_BAD,     /* failed, errors */
	THEME_WARN,    /* retries, fail-accepted, warnings */
	THEME_BUSY,    /* running, verifying */
	THEME_WAIT,    /* at a gate, needs the operator */
	THEME_STALE,   /* out of date: runs again once its inputs pass */
	THEME_ACCENT,  /* headers, names */
	THEME_TOOL,
	THEME_DIALOG,
	THEME_DIALOG_BORDER,
	THEME_DIFF_ADD,
	THEME_DIFF_DEL,
	THEME_DIFF_CHANGE,
	THEME_METER,
	THEME_METER_OVER,
	THEME_SEARCH,
	THEME_INPUT,
	THEME__COUNT
};

/* How a role looks: colours as 0..255, -1 = terminal default; attributes as flags. */
#define THEME_BOLD 1u
#define THEME_REVERSE 2u
#define THEME_UNDERLINE 4u
#define THEME_DIMATTR 8u

struct theme_style {
	int fg, bg;     /* for 256-colour terminals */
	int fg8, bg8;   /* for 8/16-colour terminals (0..7, -1) */
	unsigned attrs;
	unsigned mono;  /* attributes when there is no colour at all */
};

struct theme {
	char *name;
	struct theme_style style[THEME__COUNT];
};

const char *theme_role_name(enum theme_role r); /* "normal", "border-focus", … */

/* The built-in default (dark) theme. Caller frees with theme_free. */
struct theme *theme_builtin(void);
/*
 * Loads a theme: `name` is a path when it contains '/', else NAME.theme is looked up in
 * $PEVTUI_THEMES, then `dir` (may be NULL). Roles a file leaves out keep the built-in look.
 * NULL + *err (a sentence naming file and line) when missing or malformed.
 */
struct theme *theme_load(const char *name, const char *dir, char **err);
/*
 * Loads a theme: `name` is a path when it contains '/', else NAME.theme in the first of
 * the `n_dirs` folders `dirs` that has it. "default" falls back to the built-in theme. NULL
 * + *err: a file's problem (naming file and line), or "not found" naming every folder
 * looked in and the themes they hold.
 */
struct theme *theme_find(const char *name, const char *const *dirs, size_t n_dirs,
			  char **err);
/*
 * The folders themes are looked for in, in order, appended to *out: $PEVTUI_THEMES; the
 * source tree's themes (`srcdir`/themes) when the program `exe` (NULL: this process,
 * /proc/self/exe) is in its build tree `builddir`; then `installed`. Any of builddir,
 * srcdir, installed may be NULL. Folders that exist are given resolved, each once.
 */
void theme_dirs(const char *exe, const char *builddir, const char *srcdir,
		const char *installed, struct strvec *out);
/* Parses theme text (no file I/O); `origin` names it in errors. */
struct theme *theme_parse(const char *text, const char *origin, char **err);
void theme_free(struct theme *t); /* NULL ok */

/*
 * Makes `t` the active theme (copied): sets up colour pairs for the terminal's colours
 * (256, 8/16 or none; NO_COLOR set means none). Call after initscr.
 */
void theme_activate(const struct theme *t);
/* Curses attributes (attr_t, as an unsigned long) for a role in the active theme. */
unsigned long theme_attr(enum theme_role r);
/* True when the active theme draws with colour. */
bool theme_has_color(void);

#endif
