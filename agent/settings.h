/* settings — the run's options: defaults < config file < environment < flags. */
#ifndef PEVTUI_SETTINGS_H
#define PEVTUI_SETTINGS_H

#include <stdbool.h>

#include "mcp_config.h"
#include "provider.h"
#include "strbuf.h"

struct settings {
	char *task;
	char *provider;              /* "anthropic" "openai" "sim"; NULL = pick from keys */
	char *model[ROLE__COUNT];    /* per role; NULL = the provider's default */
	char *base_url;
	char *api_key_cmd;           /* a command that prints the API key (config [provider]) */
	char *workspace;             /* NULL = RUNDIR/workspace */
	char *runs_dir;              /* NULL = $XDG_DATA_HOME/pevtui/runs */
	char *theme;
	bool mouse;                  /* [ui] mouse = on|off, --no-mouse: the cockpit takes
				      * clicks and the wheel; default on */
	char *scenario;              /* sim provider: built-in scenario or script path */
	char *script;                /* sim provider: scripted responses (JSON file) */
	unsigned gates;              /* GATE_MASK bits */
	bool yes;
	bool demo;
	bool headless;
	bool json;
	int max_retries;             /* default 2 (3 attempts) */
	int max_replans;             /* default 2 */
	int parallel;                /* default 3 */
	double budget_usd;           /* 0 = none */
	double confidence_threshold; /* deterministic stage; default 0.5 */
	double chaos;                /* tools fail with this probability */
	unsigned long chaos_seed;
	int sim_delay_ms;            /* default 20 */
	bool keep_requests;          /* [policy] keep_requests = yes|no (on|off): keep the
				      * bodies sent to the models in RUNDIR/requests
				      * (agent/run/requests.h); default yes */
	bool checkpoints;            /* [policy] checkpoints = on|off: snapshot the workspace
				      * around every attempt, restore it before a retry
				      * (agent/run/checkpoint.h); default on */
	/* [checkpoints] in the config file (agent/run/checkpoint.h): */
	struct strvec checkpoint_exclude; /* exclude = node_modules/, *.log: comma-separated
					   * patterns of paths left out of every checkpoint
					   * (checkpoint_set_exclude) */
	int checkpoint_max_file;     /* max_file = bytes, 1024..2147483647; default 50 MiB */
	char *checkpoint_keep;       /* keep = 30d: prune older runs' checkpoints by itself, at
				      * most once a day (checkpoint_auto_prune); NULL/off: never */
	int checkpoint_max_total;    /* max_total = bytes per checkpoint, 1048576..2147483647;
				      * default 1 GiB */
	/* [tools] in the config file: */
	struct strvec shell_allow;   /* shell_allow = git status, make test: comma-separated
				      * command prefixes (whole words) that run without the
				      * shell gate — only simple commands, no ; & | ` $ ( ) < > */
	int shell_timeout_s;         /* shell_timeout = seconds, 1..3600; default 60 */
	int http_max_bytes;          /* http_max_bytes = 1024..104857600; default 1 MiB */
	struct strvec http_allow_hosts; /* http_allow_hosts = localhost, 192.168.1.10: hosts
					 * http_get may reach on a local or private address
					 * (names or addresses as URLs write them; netguard.h) */
	/* [sandbox] (agent/confine/confine.h), --sandbox: */
	int sandbox_mode;            /* mode = workspace-write|read-only|off (enum
				      * confine_mode); default workspace-write */
	bool sandbox_network;        /* network = on|off; default off */
	struct strvec sandbox_writable;  /* writable = PATH, …: more writable roots (relative
					  * to the workspace, or absolute) */
	struct strvec sandbox_deny_read; /* deny_read = PATH, …: more hidden paths */
	char *sandbox_helper;        /* pevtui-confine's path (set by the program, not read
				      * from a file); NULL = none */
	/* [ui]: a signal when the operator is needed (agent/run/notify.h): */
	unsigned notify;             /* notify = gates,end | gates | end | none (NOTIFY_*) */
	bool notify_bell;            /* notify_bell = yes|no; default yes */
	int notify_osc;              /* notify_osc = auto|osc9|osc777|off (enum notify_osc) */
	char *notify_cmd;            /* notify_cmd = a command for /bin/sh -c; NULL = none */
	int notify_timeout_s;        /* notify_timeout = 1..600 seconds; default 30 */
	int notify_debounce_s;       /* notify_debounce = 0..3600 seconds; default 10 */
	/* [mcp.NAME] sections, then a project's .mcp.json and --mcp (agent/mcp/): */
	struct mcp_conf mcp;
};

void settings_init(struct settings *s);     /* the defaults */
void settings_release(struct settings *s);  /* frees owned strings and lists */

/*
 * Reads an INI config file into s (only keys present change). A missing file is fine
 * (returns true). A bad line → false + *err naming file, line and key, e.g.
 * "FILE:3: unknown key \"foo\" in [policy]" (caller frees). An API key itself is never
 * read from a file (api_key is refused; use api_key_cmd or the environment).
 */
bool settings_load_file(struct settings *s, const char *path, char **err);
/*
 * One check of a [policy] number wherever it comes from: the config file, the command
 * line, a resumed run's journal. `key` is its config name (max_retries, max_replans,
 * parallel, budget, confidence_threshold, chaos). NULL when `v` is acceptable, else what
 * it must be, e.g. "a whole number from 1 to 32" (static).
 */
const char *settings_policy_check(const char *key, double v);

/* The default config path ($XDG_CONFIG_HOME/pevtui/config or ~/.config/…). Caller frees;
 * NULL only when neither XDG_CONFIG_HOME nor a home directory is known. */
char *settings_default_config_path(void);
/* The default runs dir ($XDG_DATA_HOME/pevtui/runs or ~/.local/share/…). Caller frees;
 * NULL only when neither XDG_DATA_HOME nor a home directory is known. */
char *settings_default_runs_dir(void);
/* $XDG_DATA_HOME/TAIL, or ~/.local/share/TAIL (caller frees); NULL without either. */
char *settings_data_path(const char *tail);

#endif
