/* theme — parsing themes/NAME.theme files and turning roles into curses attributes. */
#include "config.h"

#include "theme.h"

#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strbuf.h"
#include "xalloc.h"

static const char *const role_names[THEME__COUNT] = {
	[THEME_NORMAL] = "normal",
	[THEME_DIM] = "dim",
	[THEME_BORDER] = "border",
	[THEME_BORDER_FOCUS] = "border-focus",
	[THEME_TITLE] = "title",
	[THEME_TITLE_FOCUS] = "title-focus",
	[THEME_SELECTED] = "selected",
	[THEME_STATUS] = "status",
	[THEME_STATUS_KEY] = "status-key",
	[THEME_TAB] = "tab",
	[THEME_TAB_ACTIVE] = "tab-active",
	[THEME_GOOD] = "good",
	[THEME_BAD] = "bad",
	[THEME_WARN] = "warn",
	[THEME_BUSY] = "busy",
	[THEME_WAIT] = "wait",
	[THEME_STALE] = "stale",
	[THEME_ACCENT] = "accent",
	[THEME_TOOL] = "tool",
	[THEME_DIALOG] = "dialog",
	[THEME_DIALOG_BORDER] = "dialog-border",
	[THEME_DIFF_ADD] = "diff-add",
	[THEME_DIFF_DEL] = "diff-del",
	[THEME_DIFF_CHANGE] = "diff-change",
	[THEME_METER] = "meter",
	[THEME_METER_OVER] = "meter-over",
	[THEME_SEARCH] = "search",
	[THEME_INPUT] = "input",
};

const char *theme_role_name(enum theme_role r)
{
	return (r >= 0 && r < THEME__COUNT) ? role_names[r] : "?";
}

#define S(fg, bg, fg8, bg8, attrs, mono) {fg, bg, fg8, bg8, attrs, mono}
#define B THEME_BOLD
#define R THEME_REVERSE
#define U THEME_UNDERLINE
#define D THEME_DIMATTR

/* The dark default; also what a theme file's missing roles fall back to. */
static const struct theme_style builtin[THEME__COUNT] = {
	[THEME_NORMAL] = S(-1, -1, -1, -1, 0, 0),
	[THEME_DIM] = S(245, -1, 7, -1, 0, D),
	[THEME_BORDER] = S(240, -1, 7, -1, 0, 0),
	[THEME_BORDER_FOCUS] = S(75, -1, 6, -1, B, B),
	[THEME_TITLE] = S(250, -1, 7, -1, 0, 0),
	[THEME_TITLE_FOCUS] = S(81, -1, 6, -1, B, B | R),
	[THEME_SELECTED] = S(-1, 237, 0, 6, B, R),
	[THEME_STATUS] = S(252, 236, 0, 7, 0, R),
	[THEME_STATUS_KEY] = S(221, 236, 4, 7, B, R | B),
	[THEME_TAB] = S(245, -1, 7, -1, 0, 0),
	[THEME_TAB_ACTIVE] = S(16, 81, 0, 6, B, R),
	[THEME_GOOD] = S(114, -1, 2, -1, 0, B),
	[THEME_BAD] = S(203, -1, 1, -1, B, B | U),
	[THEME_WARN] = S(215, -1, 3, -1, 0, U),
	[THEME_BUSY] = S(81, -1, 6, -1, 0, 0),
	[THEME_WAIT] = S(213, -1, 5, -1, B, B | R),
	[THEME_STALE] = S(180, -1, 3, -1, 0, U),
	[THEME_ACCENT] = S(223, -1, 3, -1, B, B),
	[THEME_TOOL] = S(146, -1, 4, -1, 0, 0),
	[THEME_DIALOG] = S(-1, 235, -1, -1, 0, 0),
	[THEME_DIALOG_BORDER] = S(213, 235, 5, -1, B, B),
	[THEME_DIFF_ADD] = S(114, 235, 2, -1, 0, B),
	[THEME_DIFF_DEL] = S(203, 235, 1, -1, 0, U),
	[THEME_DIFF_CHANGE] = S(215, 235, 3, -1, 0, 0),
	[THEME_METER] = S(114, -1, 2, -1, 0, 0),
	[THEME_METER_OVER] = S(203, -1, 1, -1, B, B),
	[THEME_SEARCH] = S(16, 221, 0, 3, 0, R),
	[THEME_INPUT] = S(-1, 238, -1, 4, 0, U),
};

struct theme *theme_builtin(void)
{
	struct theme *t = xcalloc(1, sizeof(*t));

	t->name = xstrdup("default");
	memcpy(t->style, builtin, sizeof(builtin));
	return t;
}

void theme_free(struct theme *t)
{
	if (!t)
		return;
	free(t->name);
	free(t);
}

static const char *const colour_names[] = {
	"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

/* A colour word: default, a name, bright-NAME, or 0..255. false when unknown. */
static bool parse_colour(const char *w, int *out)
{
	char *end;
	long n;

	if (strcmp(w, "default") == 0 || strcmp(w, "-") == 0) {
		*out = -1;
		return true;
	}
	for (int i = 0; i < 8; i++) {
		if (strcmp(w, colour_names[i]) == 0) {
			*out = i;
			return true;
		}
		if (strncmp(w, "bright-", 7) == 0 && strcmp(w + 7, colour_names[i]) == 0) {
			*out = i + 8;
			return true;
		}
	}
	errno = 0;
	n = strtol(w, &end, 10);
	if (errno || end == w || *end || n < 0 || n > 255)
		return false;
	*out = (int)n;
	return true;
}

/* "N/NAME" gives the 256 and the 8-colour choice; a single word serves both. */
static bool parse_pair(const char *w, int *c256, int *c8)
{
	const char *slash = strchr(w, '/');

	if (slash) {
		char *a = xstrndup(w, (size_t)(slash - w));
		bool ok = parse_colour(a, c256) && parse_colour(slash + 1, c8);

		free(a);
		return ok && *c8 < 8;
	}
	if (!parse_colour(w, c256))
		return false;
	*c8 = *c256 < 8 ? *c256 : *c256 < 16 ? *c256 - 8 : -1;
	return true;
}

static bool parse_attrs(const char *w, unsigned *out)
{
	char *copy = xstrdup(w), *save = NULL, *tok;
	bool ok = true;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "bold") == 0)
			*out |= THEME_BOLD;
		else if (strcmp(tok, "reverse") == 0)
			*out |= THEME_REVERSE;
		else if (strcmp(tok, "underline") == 0)
			*out |= THEME_UNDERLINE;
		else if (strcmp(tok, "dim") == 0)
			*out |= THEME_DIMATTR;
		else if (strcmp(tok, "none") != 0)
			ok = false;
	}
	free(copy);
	return ok;
}

static int find_role(const char *w)
{
	for (int i = 0; i < THEME__COUNT; i++)
		if (strcmp(role_names[i], w) == 0)
			return i;
	return -1;
}

/* One line: "ROLE FG BG [ATTRS] [mono=ATTRS]" or "name NAME". */
static bool parse_line(struct theme *t, char *line, char **why)
{
	char *save = NULL, *w[8];
	int n = 0, role;
	struct theme_style st;

	for (char *tok = strtok_r(line, " \t", &save); tok && n < 8;
	     tok = strtok_r(NULL, " \t", &save))
		w[n++] = tok;
	if (n == 0)
		return true;
	if (strcmp(w[0], "name") == 0 && n == 2) {
		free(t->name);
		t->name = xstrdup(w[1]);
		return true;
	}
	role = find_role(w[0]);
	if (role < 0) {
		*why = xasprintf("unknown role \"%s\"", w[0]);
		return false;
	}
	if (n < 3) {
		*why = xasprintf("role \"%s\" needs a foreground and a background colour", w[0]);
		return false;
	}
	st = t->style[role];
	st.attrs = 0;
	if (!parse_pair(w[1], &st.fg, &st.fg8) || !parse_pair(w[2], &st.bg, &st.bg8)) {
		*why = xasprintf("bad colour for role \"%s\" (use default, a name, or 0-255)",
				 w[0]);
		return false;
	}
	for (int i = 3; i < n; i++) {
		bool ok;

		if (strncmp(w[i], "mono=", 5) == 0) {
			st.mono = 0;
			ok = parse_attrs(w[i] + 5, &st.mono);
		} else {
			ok = parse_attrs(w[i], &st.attrs);
		}
		if (!ok) {
			*why = xasprintf("bad attribute \"%s\" (bold, reverse, underline, dim)",
					 w[i]);
			return false;
		}
	}
	t->style[role] = st;
	return true;
}

struct theme *theme_parse(const char *text, const char *origin, char **err)
{
	struct theme *t = theme_builtin();
	const char *p = text;
	int lineno = 0;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len), *hash = strchr(line, '#'), *why = NULL;

		lineno++;
		if (hash)
			*hash = '\0';
		if (!parse_line(t, line, &why)) {
			*err = xasprintf("%s, line %d: %s", origin, lineno, why);
			free(why);
			free(line);
			theme_free(t);
			return NULL;
		}
		free(line);
		p += len;
		if (*p == '\n')
			p++;
	}
	return t;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && sb.len < (1u << 20))
		strbuf_add(&sb, buf, n);
	fclose(f);
	return strbuf_detach(&sb);
}

/* The names of the themes in `dir` (NAME.theme), added to *names once each. */
static void themes_in(const char *dir, struct strvec *names)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		bool seen = false;
		char *name;

		if (n <= 6 || de->d_name[0] == '.' || strcmp(de->d_name + n - 6, ".theme"))
			continue;
		name = xstrndup(de->d_name, n - 6);
		for (size_t i = 0; i < names->n && !seen; i++)
			seen = !strcmp(names->v[i], name);
		if (!seen)
			strvec_push(names, name);
		free(name);
	}
	closedir(d);
}

struct theme *theme_find(const char *name, const char *const *dirs, size_t n_dirs, char **err)
{
	char *text = NULL, *path = NULL;
	struct theme *t;

	if (strchr(name, '/')) {
		path = xstrdup(name);
		text = read_file(path);
		if (!text) {
			*err = xasprintf("cannot read the theme file %s: %s", name, strerror(errno));
			free(path);
			return NULL;
		}
	} else {
		for (size_t i = 0; i < n_dirs && !text; i++) {
			free(path);
			path = xasprintf("%s/%s.theme", dirs[i], name);
			text = read_file(path);
		}
	}
	if (!text) {
		struct strbuf sb = STRBUF_INIT;
		struct strvec names = STRVEC_INIT;
		char *list;

		free(path);
		if (strcmp(name, "default") == 0)
			return theme_builtin();
		/* Say where it looked and what is there: a build tree, an install or
		 * PEVTUI_THEMES that does not hold what was asked is then plain to see. */
		strbuf_init(&sb);
		strbuf_addf(&sb, "theme \"%s\" not found: looked for %s.theme in ", name, name);
		for (size_t i = 0; i < n_dirs; i++) {
			strbuf_addf(&sb, "%s%s", i ? ", " : "", dirs[i]);
			themes_in(dirs[i], &names);
		}
		if (!n_dirs)
			strbuf_adds(&sb, "no folder");
		strvec_sort(&names);
		list = strvec_join(&names, ", ");
		if (names.n)
			strbuf_addf(&sb, "; themes there: %s", list);
		else
			strbuf_adds(&sb, "; no themes there (set PEVTUI_THEMES to a folder of "
					 "NAME.theme files)");
		free(list);
		strvec_clear(&names);
		*err = strbuf_detach(&sb);
		return NULL;
	}
	t = theme_parse(text, path, err);
	free(text);
	free(path);
	return t;
}

struct theme *theme_load(const char *name, const char *dir, char **err)
{
	const char *env = getenv("PEVTUI_THEMES");
	const char *dirs[3] = {NULL, NULL, NULL};
	size_t n = 0;

	if (env && *env)
		dirs[n++] = env;
	if (dir)
		dirs[n++] = dir;
	return theme_find(name, dirs, n, err);
}

/* The folder a path is in, resolved (links, "..") when it exists; caller frees. */
static char *real_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = !slash	   ? xstrdup(".")
		    : slash == path ? xstrdup("/")
				    : xstrndup(path, (size_t)(slash - path));
	char *real = realpath(dir, NULL);

	if (!real)
		return dir;
	free(dir);
	return real;
}

/* Adds `dir` to *out, resolved, unless it is there already. */
static void add_dir(struct strvec *out, const char *dir)
{
	char *real = realpath(dir, NULL);
	const char *d = real ? real : dir;
	bool seen = false;

	for (size_t i = 0; i < out->n && !seen; i++)
		seen = !strcmp(out->v[i], d);
	if (!seen)
		strvec_push(out, d);
	free(real);
}

void theme_dirs(const char *exe, const char *builddir, const char *srcdir,
		const char *installed, struct strvec *out)
{
	const char *env = getenv("PEVTUI_THEMES");
	char self[4096];

	if (env && *env)
		add_dir(out, env);
	if (!exe) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[n > 0 ? n : 0] = '\0';
		exe = n > 0 ? self : NULL;
	}
	if (exe && builddir && srcdir) {
		char *here = real_dir_of(exe), *build = realpath(builddir, NULL);

		/* The program runs from the tree it was built in: its themes are the source
		 * tree's, whatever is installed. */
		if (!strcmp(here, build ? build : builddir)) {
			char *themes = xasprintf("%s/themes", srcdir);

			add_dir(out, themes);
			free(themes);
		}
		free(build);
		free(here);
	}
	if (installed)
		add_dir(out, installed);
}

/* ---- the active theme (curses side) ---- */

static attr_t active[THEME__COUNT];
static bool colour;

static attr_t to_curses(unsigned a)
{
	attr_t r = A_NORMAL;

	if (a & THEME_BOLD)
		r |= A_BOLD;
	if (a & THEME_REVERSE)
		r |= A_REVERSE;
	if (a & THEME_UNDERLINE)
		r |= A_UNDERLINE;
	if (a & THEME_DIMATTR)
		r |= A_DIM;
	return r;
}

void theme_activate(const struct theme *t)
{
	const char *nc = getenv("NO_COLOR");
	bool mono = (nc && *nc) || !has_colors() || (t->name && strcmp(t->name, "mono") == 0);

	colour = false;
	if (!mono && start_color() == OK) {
		use_default_colors();
		colour = COLORS >= 8 && COLOR_PAIRS > THEME__COUNT;
	}
	for (int i = 0; i < THEME__COUNT; i++) {
		const struct theme_style *s = &t->style[i];

		if (!colour) {
			active[i] = to_curses(s->mono);
			continue;
		}
		if (COLORS >= 256)
			init_pair((short)(i + 1), (short)s->fg, (short)s->bg);
		else
			init_pair((short)(i + 1), (short)s->fg8, (short)s->bg8);
		active[i] = COLOR_PAIR(i + 1) | to_curses(s->attrs);
	}
}

unsigned long theme_attr(enum theme_role r)
{
	return (r >= 0 && r < THEME__COUNT) ? (unsigned long)active[r] : 0;
}

bool theme_has_color(void)
{
	return colour;
}
