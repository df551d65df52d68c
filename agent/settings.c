/* settings — the run's options: defaults < config file < environment < flags. */
#include "config.h"
#include "settings.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <ini.h>

#include "checkpoint.h"
#include "confine.h"
#include "gate.h"
#include "netguard.h"
#include "notify.h"
#include "strbuf.h"
#include "xalloc.h"

void settings_init(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->gates = GATES_DEFAULT;
	s->max_retries = 2;
	s->max_replans = 2;
	s->parallel = 3;
	s->confidence_threshold = 0.5;
	s->sim_delay_ms = 20;
	s->shell_timeout_s = 60;
	s->http_max_bytes = 1024 * 1024;
	s->mouse = true;
	s->notify = NOTIFY_DEFAULT;
	s->notify_bell = true;
	s->notify_osc = NOTIFY_OSC_AUTO;
	s->notify_timeout_s = NOTIFY_TIMEOUT_S;
	s->notify_debounce_s = NOTIFY_DEBOUNCE_S;
	s->keep_requests = true;
	s->checkpoints = true;
	s->checkpoint_max_file = (int)CP_MAX_FILE_DEFAULT;
	s->checkpoint_max_total = (int)CP_MAX_TOTAL_DEFAULT;
}

void settings_release(struct settings *s)
{
	char **strs[] = {&s->task,      &s->provider, &s->base_url, &s->api_key_cmd,
			 &s->workspace, &s->runs_dir, &s->theme,    &s->scenario,
			 &s->script,    &s->notify_cmd, &s->checkpoint_keep,
			 &s->sandbox_helper};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		free(*strs[i]);
		*strs[i] = NULL;
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		free(s->model[r]);
		s->model[r] = NULL;
	}
	strvec_clear(&s->shell_allow);
	strvec_clear(&s->checkpoint_exclude);
	strvec_clear(&s->http_allow_hosts);
	strvec_clear(&s->sandbox_writable);
	strvec_clear(&s->sandbox_deny_read);
	mcp_conf_release(&s->mcp);
}

/* ---- default paths (XDG base directories) ------------------------------------------- */

static char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && *h)
		return xstrdup(h);
	long sz = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t bufsz = sz > 0 ? (size_t)sz : 16384;
	char *buf = xmalloc(bufsz);
	struct passwd pw, *res = NULL;
	char *dir = NULL;
	if (getpwuid_r(getuid(), &pw, buf, bufsz, &res) == 0 && res && res->pw_dir &&
	    *res->pw_dir)
		dir = xstrdup(res->pw_dir);
	free(buf);
	return dir;
}

/* $VAR/tail when VAR is an absolute path (the XDG rule: relative values are ignored),
 * else ~/fallback/tail. */
static char *xdg_path(const char *var, const char *fallback, const char *tail)
{
	const char *v = getenv(var);
	if (v && v[0] == '/')
		return xasprintf("%s/%s", v, tail);
	char *home = home_dir();
	if (!home)
		return NULL;
	char *p = xasprintf("%s/%s/%s", home, fallback, tail);
	free(home);
	return p;
}

char *settings_default_config_path(void)
{
	return xdg_path("XDG_CONFIG_HOME", ".config", "pevtui/config");
}

char *settings_default_runs_dir(void)
{
	return settings_data_path("pevtui/runs");
}

char *settings_data_path(const char *tail)
{
	return xdg_path("XDG_DATA_HOME", ".local/share", tail);
}

/* ---- the config file ------------------------------------------------------------------ */

enum key_kind {
	K_STR, K_INT, K_NUM, K_PROVIDER, K_MODEL, K_GATES, K_LIST, K_HOSTS,
	K_BOOL, K_NOTIFY, K_OSC, K_SANDBOX,
};

struct key_def {
	const char *section;
	const char *name;
	enum key_kind kind;
	size_t off;     /* K_STR K_INT K_NUM: the field */
	int role;       /* K_MODEL: the role, or -1 for all */
	double min, max;
	const char *what; /* K_INT K_NUM: completes "NAME must be …" */
};

#define F(field) offsetof(struct settings, field)

static const struct key_def keys[] = {
	{"provider", "name", K_PROVIDER, 0, 0, 0, 0, NULL},
	{"provider", "base_url", K_STR, F(base_url), 0, 0, 0, NULL},
	{"provider", "api_key_cmd", K_STR, F(api_key_cmd), 0, 0, 0, NULL},
	{"models", "planner", K_MODEL, 0, ROLE_PLANNER, 0, 0, NULL},
	{"models", "executor", K_MODEL, 0, ROLE_EXECUTOR, 0, 0, NULL},
	{"models", "verifier", K_MODEL, 0, ROLE_VERIFIER, 0, 0, NULL},
	{"models", "all", K_MODEL, 0, -1, 0, 0, NULL},
	{"policy", "max_retries", K_INT, F(max_retries), 0, 0, 10,
	 "a whole number from 0 to 10"},
	{"policy", "max_replans", K_INT, F(max_replans), 0, 0, 10,
	 "a whole number from 0 to 10"},
	{"policy", "parallel", K_INT, F(parallel), 0, 1, 32, "a whole number from 1 to 32"},
	{"policy", "budget", K_NUM, F(budget_usd), 0, 0, 1e6,
	 "a number of US dollars from 0 (no budget) to 1000000"},
	{"policy", "confidence_threshold", K_NUM, F(confidence_threshold), 0, 0, 1,
	 "a number from 0 to 1"},
	{"policy", "chaos", K_NUM, F(chaos), 0, 0, 1, "a probability from 0 to 1"},
	{"policy", "keep_requests", K_BOOL, F(keep_requests), 0, 0, 0, NULL},
	{"policy", "checkpoints", K_BOOL, F(checkpoints), 0, 0, 0, NULL},
	{"gates", "list", K_GATES, 0, 0, 0, 0, NULL},
	{"ui", "theme", K_STR, F(theme), 0, 0, 0, NULL},
	{"ui", "mouse", K_BOOL, F(mouse), 0, 0, 0, NULL},
	{"checkpoints", "exclude", K_LIST, F(checkpoint_exclude), 0, 0, 0, NULL},
	{"checkpoints", "keep", K_STR, F(checkpoint_keep), 0, 0, 0, NULL},
	{"checkpoints", "max_file", K_INT, F(checkpoint_max_file), 0, 1024, 2147483647.0,
	 "a whole number of bytes from 1024 to 2147483647"},
	{"checkpoints", "max_total", K_INT, F(checkpoint_max_total), 0, 1048576, 2147483647.0,
	 "a whole number of bytes from 1048576 to 2147483647"},
	{"tools", "shell_allow", K_LIST, F(shell_allow), 0, 0, 0, NULL},
	{"tools", "shell_timeout", K_INT, F(shell_timeout_s), 0, 1, 3600,
	 "a whole number of seconds from 1 to 3600"},
	{"tools", "http_max_bytes", K_INT, F(http_max_bytes), 0, 1024, 100 * 1024 * 1024,
	 "a whole number of bytes from 1024 to 104857600"},
	{"tools", "http_allow_hosts", K_HOSTS, F(http_allow_hosts), 0, 0, 0, NULL},
	{"sandbox", "mode", K_SANDBOX, F(sandbox_mode), 0, 0, 0, NULL},
	{"sandbox", "network", K_BOOL, F(sandbox_network), 0, 0, 0, NULL},
	{"sandbox", "writable", K_LIST, F(sandbox_writable), 0, 0, 0, NULL},
	{"sandbox", "deny_read", K_LIST, F(sandbox_deny_read), 0, 0, 0, NULL},
	{"ui", "notify", K_NOTIFY, F(notify), 0, 0, 0, NULL},
	{"ui", "notify_bell", K_BOOL, F(notify_bell), 0, 0, 0, NULL},
	{"ui", "notify_osc", K_OSC, F(notify_osc), 0, 0, 0, NULL},
	{"ui", "notify_cmd", K_STR, F(notify_cmd), 0, 0, 0, NULL},
	{"ui", "notify_timeout", K_INT, F(notify_timeout_s), 0, 1, 600,
	 "a whole number of seconds from 1 to 600"},
	{"ui", "notify_debounce", K_INT, F(notify_debounce_s), 0, 0, 3600,
	 "a whole number of seconds from 0 to 3600"},
};

const char *settings_policy_check(const char *key, double v)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const struct key_def *k = &keys[i];

		if (strcmp(k->section, "policy") || strcmp(k->name, key))
			continue;
		if (k->kind != K_INT && k->kind != K_NUM)
			break;
		if (!(v >= k->min && v <= k->max) || (k->kind == K_INT && v != (double)(int)v))
			return k->what;
		return NULL;
	}
	return "a known policy setting";
}

static const char *const sections[] = {"provider", "models",      "policy", "gates",
                                       "ui",       "tools",       "checkpoints",
                                       "sandbox"};
#define SECTIONS_AND                                                                       \
	"[provider], [models], [policy], [gates], [ui], [tools], [checkpoints] and [sandbox]"
#define SECTIONS_OR                                                                        \
	"[provider], [models], [policy], [gates], [ui], [tools], [checkpoints] or [sandbox]"

struct cfg {
	struct settings *s;
	FILE *f;
	char *line;
	size_t cap;
	int lineno;
	int section_line; /* where the current [section] was opened */
	char *err;        /* the first problem, without the "FILE:LINE: " */
	int err_line;
};

static void cfg_fail(struct cfg *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cfg_fail(struct cfg *c, int line, const char *fmt, ...)
{
	if (c->err)
		return;
	va_list ap;
	va_start(ap, fmt);
	c->err = xvasprintf(fmt, ap);
	va_end(ap);
	c->err_line = line;
}

/* Text from the file as it may appear in a message: short, printable. */
static char *echo(const char *v)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_init(&sb);
	size_t i;
	for (i = 0; v[i] && i < 40; i++) {
		unsigned char ch = (unsigned char)v[i];
		if (ch < 0x20 || ch == 0x7f)
			strbuf_addc(&sb, '?');
		else if (ch == '"' || ch == '\\')
			strbuf_addf(&sb, "\\%c", ch);
		else
			strbuf_addc(&sb, (char)ch);
	}
	if (v[i])
		strbuf_adds(&sb, "...");
	return strbuf_detach(&sb);
}

/* A key name is echoed only if it looks like one: a pasted secret is not repeated. */
static bool plain_name(const char *n)
{
	size_t len = strlen(n);
	return len > 0 && len <= 32 &&
	       strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
		       len;
}

/*
 * inih's reader hook: counting lines here gives every message its line number, and
 * dropping leading blanks keeps an indented key from being taken as a continuation line.
 */
static char *cfg_reader(char *str, int num, void *stream)
{
	struct cfg *c = stream;
	ssize_t n = getline(&c->line, &c->cap, c->f);
	if (n < 0)
		return NULL;
	c->lineno++;
	char *p = c->line;
	if (c->lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	p += strspn(p, " \t");
	size_t len = strlen(p);
	if (len + 1 > (size_t)num) {
		cfg_fail(c, c->lineno, "the line is longer than %d characters", num - 2);
		str[0] = '\0';
		return str;
	}
	if (*p == '[')
		c->section_line = c->lineno;
	memcpy(str, p, len + 1);
	return str;
}

static bool parse_int(const char *v, double min, double max, int *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (!*v || *end || errno || x < (long)min || x > (long)max)
		return false;
	*out = (int)x;
	return true;
}

static bool parse_num(const char *v, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(x) || x < min || x > max)
		return false;
	*out = x;
	return true;
}

static void set_str(char **field, const char *v)
{
	free(*field);
	*field = *v ? xstrdup(v) : NULL; /* an empty value means "the default" */
}

/* "a, b c ,d" → {"a", "b c", "d"}: items trimmed, empty ones dropped; replaces the list. */
static void set_list(struct strvec *list, const char *v)
{
	strvec_clear(list);
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");
		const char *a = p, *b = p + n;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			char *item = xstrndup(a, (size_t)(b - a));
			strvec_push(list, item);
			free(item);
		}
		p += n;
		if (*p == ',')
			p++;
	}
}

/* A list of host names or addresses (netguard.h): a URL or host:port would never match,
 * so it is refused here rather than ignored later. */
static void set_hosts(struct cfg *c, int line, const char *name, struct strvec *list,
		      const char *v)
{
	struct strvec items = STRVEC_INIT;

	set_list(&items, v);
	for (size_t i = 0; i < items.n; i++) {
		if (netguard_valid_entry(items.v[i]))
			continue;
		char *e = echo(items.v[i]);
		cfg_fail(c, line,
			 "%s: \"%s\" is not a host name or address; write names such as "
			 "localhost, 192.168.1.10 or ::1, without scheme, port or path",
			 name, e);
		free(e);
		strvec_clear(&items);
		return;
	}
	strvec_clear(list);
	*list = items;
}

static int cfg_handler(void *user, const char *section, const char *name, const char *raw)
{
	struct cfg *c = user;
	struct settings *s = c->s;
	int line = c->lineno;

	if (strcasecmp(name, "api_key") == 0 || strcasecmp(name, "apikey") == 0) {
		cfg_fail(c, line,
			 "an API key is never read from a file; set api_key_cmd to a command "
			 "that prints it, or use ANTHROPIC_API_KEY / OPENAI_API_KEY");
		return 0;
	}
	if (!*section) {
		if (plain_name(name))
			cfg_fail(c, line,
				 "key \"%s\" is outside any section; put it under " SECTIONS_OR,
				 name);
		else
			cfg_fail(c, line, "a key is outside any section");
		return 0;
	}
	if (strncmp(section, "mcp.", 4) == 0) {
		char *merr = NULL;
		size_t vl = strlen(raw);
		char *mv = (vl >= 2 && raw[0] == '"' && raw[vl - 1] == '"') ? xstrndup(raw + 1, vl - 2)
									  : xstrdup(raw);
		if (!mcp_conf_set_key(&s->mcp, section + 4, name, mv, &merr)) {
			cfg_fail(c, line, "[%.40s] %s: %s", section, plain_name(name) ? name : "key",
				 merr);
			free(merr);
		}
		free(mv);
		return c->err && c->err_line == line ? 0 : 1;
	}
	bool known = false;
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		known = known || strcmp(section, sections[i]) == 0;
	if (!known) {
		char *e = echo(section);
		cfg_fail(c, c->section_line, "unknown section [%s]; the sections are " SECTIONS_AND,
			 e);
		free(e);
		return 0;
	}
	const struct key_def *k = NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && !k; i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			k = &keys[i];
	if (!k) {
		if (plain_name(name))
			cfg_fail(c, line, "unknown key \"%s\" in [%s]", name, section);
		else
			cfg_fail(c, line, "unknown key in [%s]", section);
		return 0;
	}

	/* "value" and value mean the same; quotes are a common habit from other formats. */
	size_t vlen = strlen(raw);
	char *v = (vlen >= 2 && raw[0] == '"' && raw[vlen - 1] == '"') ? xstrndup(raw + 1, vlen - 2)
								       : xstrdup(raw);
	char *bad = NULL;
	char *gerr = NULL;
	unsigned mask;
	switch (k->kind) {
	case K_STR:
		set_str((char **)((char *)s + k->off), v);
		break;
	case K_INT:
		if (!parse_int(v, k->min, k->max, (int *)((char *)s + k->off)))
			bad = echo(v);
		break;
	case K_NUM:
		if (!parse_num(v, k->min, k->max, (double *)((char *)s + k->off)))
			bad = echo(v);
		break;
	case K_PROVIDER:
		if (strcmp(v, "anthropic") && strcmp(v, "openai") && strcmp(v, "sim")) {
			char *e = echo(v);
			cfg_fail(c, line, "name must be anthropic, openai or sim, not \"%s\"", e);
			free(e);
		} else {
			set_str(&s->provider, v);
		}
		break;
	case K_MODEL:
		for (int r = 0; r < ROLE__COUNT; r++)
			if (k->role < 0 || k->role == r)
				set_str(&s->model[r], v);
		break;
	case K_LIST:
		set_list((struct strvec *)(void *)((char *)s + k->off), v);
		break;
	case K_HOSTS:
		set_hosts(c, line, name, (struct strvec *)(void *)((char *)s + k->off), v);
		break;
	case K_GATES:
		if (gate_parse_list(v, &mask, &gerr)) {
			s->gates = mask;
		} else {
			cfg_fail(c, line, "%s", gerr ? gerr : "bad gate list");
			free(gerr);
		}
		break;
	case K_NOTIFY:
		if (notify_parse_events(v, &mask, &gerr)) {
			*(unsigned *)(void *)((char *)s + k->off) = mask;
		} else {
			cfg_fail(c, line, "%s", gerr);
			free(gerr);
		}
		break;
	case K_OSC: {
		int m = notify_osc_from_name(v);
		if (m < 0) {
			char *e = echo(v);
			cfg_fail(c, line, "%s must be auto, osc9, osc777 or off, not \"%s\"", name, e);
			free(e);
		} else {
			*(int *)(void *)((char *)s + k->off) = m;
		}
		break;
	}
	case K_SANDBOX: {
		int m = confine_mode_parse(v);
		if (m < 0) {
			char *e = echo(v);
			cfg_fail(c, line, "mode must be workspace-write, read-only or off, not \"%s\"",
				 e);
			free(e);
		} else {
			*(int *)(void *)((char *)s + k->off) = m;
		}
		break;
	}
	case K_BOOL:
		if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
		    !strcmp(v, "1")) {
			*(bool *)(void *)((char *)s + k->off) = true;
		} else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") ||
			   !strcasecmp(v, "off") || !strcmp(v, "0")) {
			*(bool *)(void *)((char *)s + k->off) = false;
		} else {
			char *e = echo(v);
			cfg_fail(c, line, "%s must be yes or no, not \"%s\"", name, e);
			free(e);
		}
		break;
	}
	if (bad) {
		cfg_fail(c, line, "%s must be %s, not \"%s\"", name, k->what, bad);
		free(bad);
	}
	free(v);
	return c->err && c->err_line == line ? 0 : 1;
}

bool settings_load_file(struct settings *s, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return true;
		*err = xasprintf("%s: cannot read the config file: %s", path, strerror(errno));
		return false;
	}
	struct cfg c = {.s = s, .f = f};
	int ret = ini_parse_stream(cfg_reader, &c, cfg_handler, &c);
	fclose(f);
	free(c.line);
	bool ok = true;
	if (c.err && (ret <= 0 || c.err_line <= ret)) {
		*err = xasprintf("%s:%d: %s", path, c.err_line, c.err);
		ok = false;
	} else if (ret > 0) {
		*err = xasprintf("%s:%d: cannot read this line; expected \"[section]\" or "
				 "\"key = value\"",
				 path, ret);
		ok = false;
	} else if (ret < 0) {
		*err = xasprintf("%s: cannot read the config file (out of memory)", path);
		ok = false;
	}
	free(c.err);
	return ok;
}
