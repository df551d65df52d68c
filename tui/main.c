/* main — command line → settings → providers → a run in the cockpit or headless. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "app.h"
#include "attach.h"
#include "board.h"
#include "board_screen.h"
#include "bus.h"
#include "confine.h"
#include "cost.h"
#include "diff_cmd.h"
#include "ctl_server.h"
#include "detach.h"
#include "fold.h"
#include "gate.h"
#include "headless.h"
#include "journal.h"
#include "mcp_config.h"
#include "mcp_trust.h"
#include "nearest.h"
#include "textsan.h"
#include "jsonx.h"
#include "notify.h"
#include "pev.h"
#include "plan.h"
#include "provider.h"
#include "provider_anthropic.h"
#include "provider_openai.h"
#include "provider_sim.h"
#include "restore.h"
#include "rewind_cli.h"
#include "checkpoint.h"
#include "runlock.h"
#include "run_list.h"
#include "sandbox.h"
#include "secrets.h"
#include "settings.h"
#include "strbuf.h"
#include "oauth_login.h"
#include "tool_list.h"
#include "xalloc.h"

#define DEFAULT_DEMO_SCENARIO "legal-review"

enum mode {
	MODE_RUN, MODE_RESUME, MODE_REPLAY, MODE_LIST, MODE_DIFF, MODE_REWIND, MODE_LIST_TOOLS,
	MODE_PRUNE,
	MODE_ATTACH, MODE_ATTACH_STDIO, MODE_BOARD, MODE_MCP_LOGIN, MODE_MCP_LOGOUT
};

/* Long options without a short form. */
enum {
	OPT_DEMO = 256, OPT_HEADLESS, OPT_RESUME, OPT_REPLAY, OPT_LIST_RUNS, OPT_PROVIDER,
	OPT_MODEL, OPT_PLANNER_MODEL, OPT_EXECUTOR_MODEL, OPT_VERIFIER_MODEL, OPT_BASE_URL,
	OPT_WORKSPACE, OPT_GATE, OPT_YES, OPT_MAX_RETRIES, OPT_MAX_REPLANS, OPT_PARALLEL,
	OPT_BUDGET, OPT_THEME, OPT_CONFIG, OPT_RUNS_DIR, OPT_JSON, OPT_CHAOS, OPT_CHAOS_SEED,
	OPT_SCENARIO, OPT_SCRIPT, OPT_SIM_DELAY, OPT_HELP, OPT_VERSION,
	OPT_NO_MOUSE,
	OPT_DIFF,
	OPT_REWIND,
	OPT_MCP, OPT_LIST_TOOLS, OPT_MCP_LOGIN, OPT_MCP_LOGOUT, OPT_SANDBOX,
	OPT_ATTACH, OPT_DETACH, OPT_ATTACH_STDIO, OPT_BOARD, OPT_KEYS,
	OPT_PRUNE, OPT_OLDER_THAN, OPT_DRY_RUN,
};

static const struct option long_options[] = {
	{"demo", no_argument, NULL, OPT_DEMO},
	{"headless", no_argument, NULL, OPT_HEADLESS},
	{"resume", required_argument, NULL, OPT_RESUME},
	{"rewind", required_argument, NULL, OPT_REWIND},
	{"replay", required_argument, NULL, OPT_REPLAY},
	{"list-runs", no_argument, NULL, OPT_LIST_RUNS},
	{"prune", no_argument, NULL, OPT_PRUNE},
	{"older-than", required_argument, NULL, OPT_OLDER_THAN},
	{"dry-run", no_argument, NULL, OPT_DRY_RUN},
	{"diff", required_argument, NULL, OPT_DIFF},
	{"provider", required_argument, NULL, OPT_PROVIDER},
	{"model", required_argument, NULL, OPT_MODEL},
	{"planner-model", required_argument, NULL, OPT_PLANNER_MODEL},
	{"executor-model", required_argument, NULL, OPT_EXECUTOR_MODEL},
	{"verifier-model", required_argument, NULL, OPT_VERIFIER_MODEL},
	{"base-url", required_argument, NULL, OPT_BASE_URL},
	{"workspace", required_argument, NULL, OPT_WORKSPACE},
	{"gate", required_argument, NULL, OPT_GATE},
	{"yes", no_argument, NULL, OPT_YES},
	{"max-retries", required_argument, NULL, OPT_MAX_RETRIES},
	{"max-replans", required_argument, NULL, OPT_MAX_REPLANS},
	{"parallel", required_argument, NULL, OPT_PARALLEL},
	{"budget", required_argument, NULL, OPT_BUDGET},
	{"theme", required_argument, NULL, OPT_THEME},
	{"no-mouse", no_argument, NULL, OPT_NO_MOUSE},
	{"config", required_argument, NULL, OPT_CONFIG},
	{"runs-dir", required_argument, NULL, OPT_RUNS_DIR},
	{"json", no_argument, NULL, OPT_JSON},
	{"chaos", required_argument, NULL, OPT_CHAOS},
	{"chaos-seed", required_argument, NULL, OPT_CHAOS_SEED},
	{"scenario", required_argument, NULL, OPT_SCENARIO},
	{"script", required_argument, NULL, OPT_SCRIPT},
	{"sim-delay", required_argument, NULL, OPT_SIM_DELAY},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, OPT_VERSION},
	{"mcp", required_argument, NULL, OPT_MCP},
	{"list-tools", no_argument, NULL, OPT_LIST_TOOLS},
	{"mcp-login", required_argument, NULL, OPT_MCP_LOGIN},
	{"mcp-logout", required_argument, NULL, OPT_MCP_LOGOUT},
	{"sandbox", required_argument, NULL, OPT_SANDBOX},
	{"attach", required_argument, NULL, OPT_ATTACH},
	{"detach", no_argument, NULL, OPT_DETACH},
	{"attach-stdio", required_argument, NULL, OPT_ATTACH_STDIO},
	{"board", no_argument, NULL, OPT_BOARD},
	{"keys", no_argument, NULL, OPT_KEYS},
	{NULL, 0, NULL, 0},
};

/* "  name   text…" with the text wrapped under itself to stay within 80 columns. */
static void print_wrapped(FILE *out, const char *name, const char *text)
{
	const int indent = 24, width = 79 - indent;
	const char *p = text ? text : "";

	fprintf(out, "        %-15s ", name);
	while (*p) {
		int n = (int)strlen(p);
		if (n > width) {
			n = width;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = width;
		}
		fprintf(out, "%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(out, "%*s", indent, "");
	}
	if (!text || !*text)
		fputc('\n', out);
}

static void usage(FILE *out)
{
	fputs("Usage: pevtui [OPTIONS] [TASK]\n"
	      "       pevtui --demo [OPTIONS] [TASK]\n"
	      "       pevtui --headless [OPTIONS] TASK\n"
	      "       pevtui --resume RUN | --replay RUN | --list-runs\n"
	      "       pevtui --diff RUN[:STEP]\n"
	      "       pevtui --rewind RUN[:STEP] [--yes]\n"
	      "       pevtui --prune [--older-than AGE] [--dry-run]\n"
	      "A terminal cockpit for supervised Plan-Execute-Verify agent runs.\n"
	      "\n"
	      "Modes:\n"
	      "      --demo              offline simulated models and a built-in task (no key)\n"
	      "      --headless          no screen: progress lines on stdout (--json: events)\n"
	      "      --resume RUN        continue an unfinished run (id, start of one, last,\n"
	      "                          or directory)\n"
	      "      --replay RUN        browse a finished run (with --headless: print it)\n"
	      "      --list-runs         list runs with state, age, cost, provider and task\n"
	      "      --keys              print the cockpit's keys (what ? shows) as a table\n"
	      "      --diff RUN[:STEP]   print what the run (or every attempt of STEP) changed\n"
	      "                          in the workspace, as a unified diff\n"
	      "      --rewind RUN[:STEP] put the run's workspace back as it was before the run\n"
	      "                          (or STEP, or a checkpoint id); asks first (--yes: not)\n"
	      "      --prune             drop the checkpoints of runs older than 30 days (or\n"
	      "                          --older-than AGE: 30d, 12h, 90m) from the workspaces'\n"
	      "                          stores, and what nothing else needs (--dry-run: say)\n"
	      "      --list-tools        list the tools the executor would be offered, built-in\n"
	      "                          and MCP, with their server and gate policy\n"
	      "      --mcp-login NAME    sign in to remote MCP server NAME (OAuth, in a browser;\n"
	      "                          over SSH paste the address it ends on); runs reuse it\n"
	      "      --mcp-logout NAME   forget the sign-in of MCP server NAME\n"
	      "  -d, --detach            start the run in the background (no terminal); gates\n"
	      "                          wait for an operator who attaches\n"
	      "      --attach RUN        the cockpit on a live run (id, start of one, last);\n"
	      "                          q or Q leaves it going; Q in a cockpit detaches\n"
	      "      --attach HOST:RUN   the same over ssh (ssh HOST pevtui --attach-stdio RUN)\n"
	      "      --attach-stdio RUN  relay a live run's control socket on stdin/stdout\n"
	      "      --board             every run, live ones and their gates first; Enter\n"
	      "                          attaches (or replays a run that is not live)\n"
	      "\n"
	      "Models:\n"
	      "      --provider NAME     anthropic, openai or sim (default: from the keys set)\n"
	      "      --model M           model for every role\n"
	      "      --planner-model M, --executor-model M, --verifier-model M\n"
	      "      --base-url URL      API base URL (Ollama, vLLM, llama.cpp, OpenRouter…)\n"
	      "\n"
	      "Policy:\n"
	      "      --gate LIST         gates: plan,high,replan,shell,budget,step,rewind,mcp,\n"
	      "                          elicit or none (default plan,high,replan,shell,\n"
	      "                          budget,mcp,elicit)\n"
	      "      --yes               approve every gate (for --headless), except a\n"
	      "                          command asking to run outside the sandbox\n"
	      "      --sandbox MODE      commands run confined: workspace-write (default),\n"
	      "                          read-only, or off\n"
	      "      --max-retries N     retries per step before a replan (default 2)\n"
	      "      --max-replans N     replans before a step is fail-accepted (default 2)\n"
	      "      --parallel N        steps run at once, each in its own worker (default 3)\n"
	      "      --budget USD        ask (budget gate) when spending crosses USD\n"
	      "      --chaos P           tools fail with probability P (--chaos-seed N)\n"
	      "      --mcp NAME=COMMAND  an MCP server for this run (also [mcp.NAME] in the\n"
	      "                          config and .mcp.json); repeat for more\n"
	      "\n"
	      "Files:\n"
	      "      --workspace DIR     the executor's folder (default: RUNDIR/workspace)\n"
	      "      --runs-dir DIR      where runs live (default $XDG_DATA_HOME/pevtui/runs)\n"
	      "      --config FILE       config file (default $XDG_CONFIG_HOME/pevtui/config)\n"
	      "      --theme NAME        colour theme (default, light, high-contrast, mono)\n"
	      "      --no-mouse          leave the mouse to the terminal (select, copy)\n"
	      "\n"
	      "Simulated provider:\n"
	      "      --scenario NAME     a built-in story (below; default legal-review, or\n"
	      "                          generic when a task is given)\n"
	      "      --script FILE       scripted responses per role and step (JSON)\n"
	      "      --sim-delay MS      pause per streamed chunk (default 20; 0 for tests)\n",
	      out);
	for (const char *const *n = sim_scenario_names(); *n; n++)
		print_wrapped(out, *n, sim_scenario_about(*n));
	fputs("\n"
	      "      --help              show this help and exit\n"
	      "      --version           show the version and exit\n"
	      "\n"
	      "Environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY,\n"
	      "OPENAI_BASE_URL, VISUAL/EDITOR, NO_COLOR, XDG_CONFIG_HOME, XDG_DATA_HOME.\n"
	      "Exit status: 0 all steps passed, 2 partial, 3 aborted, 1 error.\n"
	      "See pevtui(1).\n",
	      out);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* One line naming what was wrong, then exit 1 (bad flags, config). */
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("pevtui: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(PEV_EXIT_ERROR);
}

static int parse_int(const char *flag, const char *v, int lo, int hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		die("%s takes a whole number from %d to %d, not \"%s\"", flag, lo, hi, v);
	return (int)n;
}

/* A [policy] number given as a flag: the same check as the config file and a resumed
 * run's journal (settings_policy_check). */
static double parse_policy(const char *flag, const char *key, const char *v)
{
	char *end;
	double d;
	const char *must;

	errno = 0;
	d = strtod(v, &end);
	must = errno || end == v || *end ? "a number" : settings_policy_check(key, d);
	if (must)
		die("%s takes %s, not \"%s\"", flag, must, v);
	return d;
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* Flags are parsed twice: first to find --config and the mode, then applied over the
 * config file and environment so that flags win. */
struct cli {
	enum mode mode;
	char *run_ref; /* --resume / --replay RUN */
	const char *config;
	bool help, version, keys;
	unsigned given; /* RESTORE_GIVEN bits of the flags on this command line */
	bool detach;    /* -d, --detach */
	char *older_than; /* --prune --older-than AGE */
	bool dry_run;     /* --prune --dry-run */
};

/* After getopt's "unrecognized option '--demmo'": the flag it most likely meant. */
static void flag_hint(const char *arg)
{
	size_t n = sizeof(long_options) / sizeof(long_options[0]) - 1;
	const char **names = xcalloc(n, sizeof(*names));
	char *typed;
	const char *near;

	if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2]) {
		free(names);
		return;
	}
	typed = xstrdup(arg + 2);
	typed[strcspn(typed, "=")] = '\0';
	for (size_t i = 0; i < n; i++)
		names[i] = long_options[i].name;
	near = nearest_word(typed, names, n);
	/* A known flag that lacks its argument needs no suggestion. */
	if (near && strcmp(near, typed) != 0)
		fprintf(stderr, "pevtui: did you mean --%s?\n", near);
	free(typed);
	free(names);
}

static void apply_flags(int argc, char **argv, struct settings *s, struct cli *cli)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hVd", long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP: cli->help = true; break;
		case OPT_KEYS: cli->keys = true; break;
		case 'V':
		case OPT_VERSION: cli->version = true; break;
		case OPT_DEMO: s->demo = true; break;
		case OPT_HEADLESS: s->headless = true; break;
		case OPT_RESUME:
			cli->mode = MODE_RESUME;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_REPLAY:
			cli->mode = MODE_REPLAY;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_LIST_RUNS: cli->mode = MODE_LIST; break;
		case OPT_PRUNE: cli->mode = MODE_PRUNE; break;
		case OPT_OLDER_THAN: set_str(&cli->older_than, optarg); break;
		case OPT_DRY_RUN: cli->dry_run = true; break;
		case OPT_DIFF:
			cli->mode = MODE_DIFF;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_REWIND:
			cli->mode = MODE_REWIND;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_LIST_TOOLS: cli->mode = MODE_LIST_TOOLS; break;
		case OPT_MCP_LOGIN:
		case OPT_MCP_LOGOUT:
			cli->mode = c == OPT_MCP_LOGIN ? MODE_MCP_LOGIN : MODE_MCP_LOGOUT;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_MCP: {
			char *merr = NULL;
			if (!mcp_conf_add_flag(&s->mcp, optarg, &merr))
				die("%s", merr);
			break;
		}
		case OPT_ATTACH:
			cli->mode = MODE_ATTACH;
			set_str(&cli->run_ref, optarg);
			break;
		case 'd':
		case OPT_DETACH: cli->detach = true; break;
		case OPT_BOARD: cli->mode = MODE_BOARD; break;
		case OPT_ATTACH_STDIO:
			cli->mode = MODE_ATTACH_STDIO;
			set_str(&cli->run_ref, optarg);
			break;
		case OPT_PROVIDER:
			cli->given |= RESTORE_GIVEN(RESTORE_PROVIDER);
			if (strcmp(optarg, "anthropic") && strcmp(optarg, "openai") &&
			    strcmp(optarg, "sim"))
				die("--provider takes anthropic, openai or sim, not \"%s\"", optarg);
			set_str(&s->provider, optarg);
			break;
		case OPT_MODEL:
			cli->given |= RESTORE_GIVEN(RESTORE_MODEL_PLANNER) |
				      RESTORE_GIVEN(RESTORE_MODEL_EXECUTOR) |
				      RESTORE_GIVEN(RESTORE_MODEL_VERIFIER);
			for (int r = 0; r < ROLE__COUNT; r++)
				set_str(&s->model[r], optarg);
			break;
		case OPT_PLANNER_MODEL:
			cli->given |= RESTORE_GIVEN(RESTORE_MODEL_PLANNER);
			set_str(&s->model[ROLE_PLANNER], optarg);
			break;
		case OPT_EXECUTOR_MODEL:
			cli->given |= RESTORE_GIVEN(RESTORE_MODEL_EXECUTOR);
			set_str(&s->model[ROLE_EXECUTOR], optarg);
			break;
		case OPT_VERIFIER_MODEL:
			cli->given |= RESTORE_GIVEN(RESTORE_MODEL_VERIFIER);
			set_str(&s->model[ROLE_VERIFIER], optarg);
			break;
		case OPT_BASE_URL: set_str(&s->base_url, optarg); break;
		case OPT_WORKSPACE:
			cli->given |= RESTORE_GIVEN(RESTORE_WORKSPACE);
			set_str(&s->workspace, optarg);
			break;
		case OPT_SANDBOX: {
			int m = confine_mode_parse(optarg);
			if (m < 0)
				die("--sandbox must be workspace-write, read-only or off, not \"%s\"",
				    optarg);
			s->sandbox_mode = m;
			break;
		}
		case OPT_GATE: {
			char *err = NULL;
			cli->given |= RESTORE_GIVEN(RESTORE_GATES);
			if (!gate_parse_list(optarg, &s->gates, &err))
				die("--gate: %s", err);
			break;
		}
		case OPT_YES:
			cli->given |= RESTORE_GIVEN(RESTORE_YES);
			s->yes = true;
			break;
		case OPT_MAX_RETRIES:
			cli->given |= RESTORE_GIVEN(RESTORE_MAX_RETRIES);
			s->max_retries = (int)parse_policy("--max-retries", "max_retries", optarg);
			break;
		case OPT_MAX_REPLANS:
			cli->given |= RESTORE_GIVEN(RESTORE_MAX_REPLANS);
			s->max_replans = (int)parse_policy("--max-replans", "max_replans", optarg);
			break;
		case OPT_PARALLEL:
			cli->given |= RESTORE_GIVEN(RESTORE_PARALLEL);
			s->parallel = (int)parse_policy("--parallel", "parallel", optarg);
			break;
		case OPT_BUDGET:
			cli->given |= RESTORE_GIVEN(RESTORE_BUDGET);
			s->budget_usd = parse_policy("--budget", "budget", optarg);
			break;
		case OPT_THEME: set_str(&s->theme, optarg); break;
		case OPT_NO_MOUSE: s->mouse = false; break;
		case OPT_CONFIG: cli->config = optarg; break;
		case OPT_RUNS_DIR: set_str(&s->runs_dir, optarg); break;
		case OPT_JSON: s->json = true; break;
		case OPT_CHAOS:
			cli->given |= RESTORE_GIVEN(RESTORE_CHAOS);
			s->chaos = parse_policy("--chaos", "chaos", optarg);
			break;
		case OPT_CHAOS_SEED:
			s->chaos_seed = (unsigned long)parse_int("--chaos-seed", optarg, 0, 1 << 30);
			break;
		case OPT_SCENARIO:
			cli->given |= RESTORE_GIVEN(RESTORE_SCENARIO);
			set_str(&s->scenario, optarg);
			break;
		case OPT_SCRIPT: set_str(&s->script, optarg); break;
		case OPT_SIM_DELAY: s->sim_delay_ms = parse_int("--sim-delay", optarg, 0, 10000); break;
		default:
			flag_hint(argv[optind - 1]);
			fputs("Try 'pevtui --help' for more information.\n", stderr);
			exit(PEV_EXIT_ERROR);
		}
	}
}

/* Runs `cmd` and returns its first line of output (the key), or NULL + *err. */
static char *key_from_command(const char *cmd, char **err)
{
	FILE *p = popen(cmd, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[256];
	size_t n;
	int rc;

	if (!p) {
		*err = xasprintf("cannot run api_key_cmd: %s", strerror(errno));
		return NULL;
	}
	strbuf_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0 && sb.len < 16384)
		strbuf_add(&sb, buf, n);
	rc = pclose(p);
	if (rc != 0) {
		/* Never echo the output: it may be a key. */
		*err = xasprintf("api_key_cmd failed (status %d); check the command in the config "
				 "file",
				 rc);
		strbuf_release(&sb);
		return NULL;
	}
	sb.buf[strcspn(sb.buf, "\r\n")] = '\0';
	if (!*sb.buf) {
		*err = xstrdup("api_key_cmd printed nothing");
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}

static const char *env_nonempty(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* Picks the provider: --provider, else --demo, else whichever key is set. */
static const char *pick_provider(const struct settings *s)
{
	if (s->provider)
		return s->provider;
	if (s->demo)
		return "sim";
	if (env_nonempty("ANTHROPIC_API_KEY"))
		return "anthropic";
	if (env_nonempty("OPENAI_API_KEY") || env_nonempty("OPENAI_BASE_URL"))
		return "openai";
	if (s->api_key_cmd)
		return "anthropic";
	return NULL;
}

static struct provider *make_provider(struct settings *s, const char *name)
{
	struct provider *p = NULL;
	char *err = NULL, *key = NULL;
	const char *default_model[ROLE__COUNT] = {0};

	if (!strcmp(name, "sim")) {
		p = provider_sim_new(s->script ? NULL : s->scenario, s->script, s->sim_delay_ms,
				     &err);
		default_model[ROLE_PLANNER] = "sim-planner";
		default_model[ROLE_EXECUTOR] = "sim-executor";
		default_model[ROLE_VERIFIER] = "sim-verifier";
	} else {
		bool anthropic = !strcmp(name, "anthropic");
		const char *env_key = anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
		const char *url = s->base_url ? s->base_url
					      : env_nonempty(anthropic ? "ANTHROPIC_BASE_URL"
								       : "OPENAI_BASE_URL");

		if (env_nonempty(env_key)) {
			key = xstrdup(getenv(env_key));
		} else if (s->api_key_cmd) {
			key = key_from_command(s->api_key_cmd, &err);
			if (!key)
				die("%s", err);
		} else if (anthropic || !url) {
			die("no API key for %s: set %s (or api_key_cmd in the config file), or try "
			    "the offline demo with --demo",
			    name, env_key);
		}
		p = anthropic ? provider_anthropic_new(url, key, &err)
			      : provider_openai_new(url, key, &err);
		for (int r = 0; r < ROLE__COUNT; r++)
			default_model[r] = anthropic ? provider_anthropic_default_model(r)
						     : provider_openai_default_model(r);
		if (key) {
			memset(key, 0, strlen(key));
			free(key);
		}
	}
	if (!p)
		die("%s", err ? err : "cannot set up the provider");
	for (int r = 0; r < ROLE__COUNT; r++)
		if (!s->model[r])
			s->model[r] = xstrdup(default_model[r]);
	return p;
}

static void mkdir_p(const char *path)
{
	char *p = xstrdup(path);

	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		mkdir(p, 0700);
		*q = '/';
	}
	if (mkdir(p, 0700) && errno != EEXIST)
		die("cannot create %s: %s", p, strerror(errno));
	free(p);
}

/* RUN is a directory path, or below the runs dir an id, "last" or the start of one id
 * (run_list_resolve). */
static char *resolve_run(const struct settings *s, const char *ref)
{
	struct stat st;
	char *dir, *id, *err = NULL;

	if (strchr(ref, '/') || (stat(ref, &st) == 0 && S_ISDIR(st.st_mode))) {
		dir = xstrdup(ref);
	} else {
		id = run_list_resolve(s->runs_dir, ref, &err);
		if (!id)
			die("%s", err);
		dir = xasprintf("%s/%s", s->runs_dir, id);
		free(id);
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		die("no run \"%s\" (looked in %s): see pevtui --list-runs", ref, dir);
	return dir;
}

/* ------------------------------------------------------------ replay */

static bool replay_visit(void *ctx, const struct event *ev)
{
	headless_print(ctx, ev);
	return true;
}

static int replay_headless(const struct settings *s, const char *dir)
{
	char *path = xasprintf("%s/journal.jsonl", dir);
	struct headless *h = headless_new(stdout, s->json);
	struct journal_load_info info = {0};
	char *err = NULL;
	bool ok = journal_load(path, replay_visit, h, &info, &err);

	headless_free(h);
	free(path);
	if (!ok)
		die("%s", err);
	if (info.torn_tail)
		fprintf(stderr, "pevtui: the journal's last line was cut off (a crash?) and was "
				"skipped\n");
	return 0;
}

/* ------------------------------------------------------------ resume */

static bool take_run_start(void *ctx, const struct event *ev)
{
	if (ev->type != EV_RUN_START)
		return true;
	*(char **)ctx = xstrdup(ev->json);
	return false; /* run.start is all we need */
}

/* A resumed run takes back its own task, provider, models, workspace and policy from its
 * journal (restore.h says how they are checked); flags given now win. */
static void settings_from_journal(struct settings *s, const char *dir, unsigned given)
{
	char *path = xasprintf("%s/journal.jsonl", dir);
	struct journal_load_info info = {0};
	char *err = NULL, *start = NULL, *said = NULL;

	if (!journal_load(path, take_run_start, &start, &info, &err))
		die("cannot resume: %s", err);
	if (!start)
		die("cannot resume: %s has no run.start event", path);
	if (!restore_settings(s, start, dir, given, &said, &err))
		die("%s", err);
	fprintf(stderr, "pevtui: resuming %s %s\n", dir, said);
	free(said);
	free(start);
	free(path);
}

/* ------------------------------------------------------------ the run */

struct seed_ctx {
	int root;
	const char *ws;
};

static void seed_file(void *ctx, const char *rel, const char *content)
{
	struct seed_ctx *sc = ctx;
	char *err = NULL;
	int fd = sandbox_open(sc->root, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644, true,
			      &err);
	size_t n = strlen(content);

	if (fd < 0) {
		fprintf(stderr, "pevtui: cannot seed %s in %s: %s\n", rel, sc->ws, err);
		free(err);
		return;
	}
	if (write(fd, content, n) != (ssize_t)n)
		fprintf(stderr, "pevtui: cannot seed %s in %s: %s\n", rel, sc->ws, strerror(errno));
	close(fd);
}

static void seed_workspace(struct provider *p, const char *ws)
{
	char *err = NULL;
	struct seed_ctx sc = {sandbox_open_root(ws, &err), ws};

	if (sc.root < 0)
		die("%s", err);
	provider_sim_seed(p, seed_file, &sc);
	close(sc.root);
}

/* SIGINT, SIGTERM and SIGHUP in headless mode: stop, leaving the run resumable. */
static sigset_t stop_signals;
static struct pev *signal_engine;

static void *signal_thread(void *arg)
{
	int sig;

	(void)arg;
	while (sigwait(&stop_signals, &sig) == 0) {
		if (sig == SIGUSR1)
			break; /* the run ended: nothing to stop */
		fprintf(stderr, "\npevtui: interrupted — stopping; resume with pevtui --resume %s\n",
			pev_run_id(signal_engine));
		pev_post(signal_engine, PEV_CMD_QUIT, NULL, NULL);
	}
	return NULL;
}

/* The signal for an operator who looked away ([ui] notify…, agent/run/notify.h). In the
 * cockpit the operator answers every gate the policy does not (--yes answers all but the
 * budget gate); --headless has no operator at a gate: its run ends there, and the end
 * says so. */
static struct notify *make_notify(const struct settings *s, bool cockpit, const char *run_dir,
				  const char *run_id)
{
	struct notify_config c = {
		.events = s->notify,
		.operator_gates = !cockpit ? 0
				  : s->yes ? GATE_MASK(GATE_BUDGET)
					   : (1u << GATE__COUNT) - 1,
		.debounce_s = s->notify_debounce_s,
		.bell = s->notify_bell,
		.term_fd = -1,
		.cmd = s->notify_cmd,
		.timeout_s = s->notify_timeout_s,
		.run_id = run_id,
		.run_dir = run_dir,
	};

	/* The cockpit writes to its own terminal; headless rings on stderr if it is one. */
	if (!cockpit && isatty(STDERR_FILENO))
		c.term_fd = STDERR_FILENO;
	if (cockpit || c.term_fd >= 0)
		c.osc = notify_osc_resolve((enum notify_osc)s->notify_osc, getenv,
					   &c.osc_tmux_wrap);
	else
		c.osc = NOTIFY_OSC_OFF;
	return notify_new(&c);
}

/* The run's control socket (doc/protocol.md): started just before the engine, after the
 * signal mask is set, so its thread inherits it. A run without one still runs, said once. */
static struct ctl_server *serve_run(const char *run_dir, struct pev *e, struct bus *bus,
				    struct gatekeeper *gates)
{
	char *err = NULL;
	struct ctl_server *ctl = ctl_server_start(run_dir, pev_run_id(e), bus, e, gates, &err);

	if (!ctl) {
		fprintf(stderr, "pevtui: warning: %s; the run cannot be attached to\n", err);
		free(err);
	}
	return ctl;
}

/* --attach RUN on this machine, with the gate signals of a cockpit. */
static int attach_here(const struct settings *s, const char *dir)
{
	const char *slash = strrchr(dir, '/');
	struct notify *nt = make_notify(s, true, dir, slash && slash[1] ? slash + 1 : dir);
	int code = attach_run(s, dir, nt);

	notify_free(nt);
	return code;
}

/* --prune [--older-than AGE] [--dry-run]: the age from the flag, else [checkpoints] keep,
 * else 30 days. */
static int prune_main(const struct settings *s, const struct cli *cli)
{
	struct cp_prune_opts o = {.dry_run = cli->dry_run};
	const char *age = cli->older_than                                    ? cli->older_than
	                  : s->checkpoint_keep && strcmp(s->checkpoint_keep, "off") ? s->checkpoint_keep
	                                                                     : "30d";
	char *err = NULL;

	if (!checkpoint_parse_age(age, &o.older_than_s))
		die("--older-than %s is not an age: give 30d, 12h, 90m, 2w or seconds", age);
	if (!checkpoint_prune(&o, stdout, &err)) {
		fprintf(stderr, "pevtui: %s\n", err);
		free(err);
		return 1;
	}
	return 0;
}

static int run(struct settings *s, enum mode mode, const char *run_ref, bool detach)
{
	struct ctl_server *ctl;
	struct provider *prov;
	struct provider *roles[ROLE__COUNT];
	struct bus *bus;
	struct gatekeeper *gates;
	struct headless *hl = NULL;
	struct app *app = NULL;
	struct notify *nt;
	struct pev *e;
	char *run_dir, *err = NULL;
	const char *name;
	bool interactive = !s->headless;
	int code;

	/* [checkpoints] keep: old runs' checkpoints dropped, at most once a day, before this
	 * run holds its store (a store another run holds is left). */
	if (s->checkpoints && s->checkpoint_keep && strcmp(s->checkpoint_keep, "off")) {
		double keep = 0;
		if (checkpoint_parse_age(s->checkpoint_keep, &keep))
			checkpoint_auto_prune(keep);
	}
	if (mode == MODE_RESUME) {
		run_dir = xstrdup(run_ref); /* resolved, and settings read, by main */
	} else {
		mkdir_p(s->runs_dir);
		run_dir = pev_new_run_dir(s->runs_dir);
	}
	if (detach) {
		/* A daemon from here on: before any thread (detach.h). */
		mkdir_p(run_dir);
		detach_daemon_start(run_dir);
		interactive = false;
	}
	if (interactive && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		fprintf(stderr, "pevtui: no terminal: running headless (use --headless to say so)\n");
		interactive = false;
	}
	if (s->demo && s->provider && strcmp(s->provider, "sim"))
		die("--demo runs the simulated provider; leave out --provider %s", s->provider);
	name = pick_provider(s);
	if (!name && s->scenario)
		die("--scenario %s is a story of the simulated models: run it with --demo (or "
		    "--provider sim)",
		    s->scenario);
	if (!name)
		die("no provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a "
		    "local server), or try the offline demo with --demo");
	if (!strcmp(name, "sim") && !s->scenario && !s->script)
		set_str(&s->scenario, s->task ? "generic" : DEFAULT_DEMO_SCENARIO);
	prov = make_provider(s, name);
	/* The provider holds its key: from here on no credential stays in the environment
	 * (agent/secrets.h; main made the process non-dumpable). Before any thread. */
	secrets_scrub_env();
	if (!s->task && prov->simulated)
		set_str(&s->task, provider_sim_task(prov));

	bus = bus_new();
	gates = gatekeeper_new(bus, s->gates,
			       s->yes ? GATE_MODE_YES
				      : interactive || detach ? GATE_MODE_OPERATOR : GATE_MODE_NONE);
	if (interactive) {
		app = app_new(s, bus, gates, &err);
		if (!app)
			die("%s", err);
		if (!s->task) {
			s->task = app_prompt_task(app);
			if (!s->task || !*s->task) {
				app_free(app);
				fprintf(stderr, "pevtui: no task given; nothing was run\n");
				gatekeeper_free(gates);
				bus_free(bus);
				provider_free(prov);
				free(run_dir);
				return PEV_EXIT_ABORTED;
			}
		}
	}
	if (!s->task || !*s->task)
		die("no task: give one as an argument, e.g. pevtui --headless \"summarise "
		    "notes.md\" (or try --demo)");
	if (mode != MODE_RESUME && (err = plan_task_error(s->task)) != NULL) {
		app_free(app);
		die("%s", err);
	}

	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = prov;
	if (prov->simulated && mode != MODE_RESUME) {
		char *ws = s->workspace ? xstrdup(s->workspace) : xasprintf("%s/workspace", run_dir);
		mkdir_p(run_dir);
		seed_workspace(prov, ws);
		free(ws);
	}
	/* A cockpit's --resume opens a finished run too, at its end: an edit or a re-run
	 * reopens it. Without a screen there is nobody to ask for one. */
	e = pev_new(s, roles, bus, gates, run_dir,
		    mode != MODE_RESUME ? PEV_OPEN_NEW : app ? PEV_OPEN_FINISHED : PEV_OPEN_RESUME,
		    &err);
	if (!e) {
		app_free(app);
		die("%s", err);
	}
	nt = make_notify(s, app != NULL, run_dir, pev_run_id(e));

	if (!app) {
		pthread_t sig_thread;

		hl = headless_new(stdout, s->json);
		if (mode == MODE_RESUME && !headless_fold_journal(hl, run_dir, &err)) {
			fprintf(stderr, "pevtui: %s\n", err);
			free(err);
			err = NULL;
		}
		bus_subscribe_tree(bus, headless_on_tree, hl);
		bus_subscribe(bus, notify_on_event, nt);
		/* Block the stop signals in every thread; one thread takes them with sigwait. */
		pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
		signal_engine = e;
		ctl = serve_run(run_dir, e, bus, gates);
		/* A daemon's run stays at its end while a cockpit is attached to reopen it. */
		if (detach)
			pev_linger_while(e, ctl_server_watched, ctl);
		pev_start(e);
		if (pthread_create(&sig_thread, NULL, signal_thread, NULL))
			fatal("cannot start the signal thread");
		if (detach) {
			char *m = xasprintf("pevtui: run %s started detached (pid %ld, log "
					    "%s/engine.log)\npevtui: attach with: pevtui --attach %s",
					    pev_run_id(e), (long)getpid(), run_dir, pev_run_id(e));
			detach_release(m);
			free(m);
		}
		code = pev_join(e);
		pthread_kill(sig_thread, SIGUSR1);
		pthread_join(sig_thread, NULL);
	} else {
		if (mode == MODE_RESUME)
			app_preload(app, run_dir);
		app_set_notify(app, nt);
		/* The cockpit's run stays open after run.end: an edit or a re-run reopens it.
		 * Leaving the cockpit ends the engine (a live run stays resumable). */
		pev_set_linger(e, true);
		app_set_run_dir(app, run_dir);
		ctl = serve_run(run_dir, e, bus, gates);
		pev_start(e);
		app_run(app, e);
		if (app_detached(app)) {
			/* The screen goes, the run goes on (detach.h). */
			app_free(app);
			app = NULL;
			detach_cockpit(e, ctl, run_dir);
		} else {
			pev_post(e, PEV_CMD_QUIT, NULL, NULL);
		}
		code = pev_join(e);
		app_free(app);
	}
	if (pev_end_reason(e) && code != PEV_EXIT_OK)
		fprintf(stderr, "pevtui: %s\n", pev_end_reason(e));
	if (code == PEV_EXIT_ABORTED)
		fprintf(stderr, "pevtui: resume the run with pevtui --resume %s\n", pev_run_id(e));
	if (pev_report_path(e))
		fprintf(stderr, "pevtui: report: %s\n", pev_report_path(e));
	else if (pev_report_error(e))
		fprintf(stderr, "pevtui: no report: %s (the journal has the whole run)\n",
			pev_report_error(e));

	ctl_server_free(ctl);
	/* A signal still on its way (the end of the run) gets its notify_cmd first. */
	notify_free(nt);
	pev_free(e);
	headless_free(hl);
	gatekeeper_free(gates);
	bus_free(bus);
	provider_free(prov);
	free(run_dir);
	return code;
}

#ifndef PKGLIBEXECDIR
#define PKGLIBEXECDIR "/usr/local/libexec/pevtui"
#endif

/* A helper program installed in pkglibexecdir, or found beside the program when it runs
 * from its build tree. Caller frees. */
static char *libexec_path(const char *name)
{
	char self[4096], *path = NULL, *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	slash = strrchr(self, '/');
	if (slash) {
		*slash = '\0';
		path = xasprintf("%s/%s", self, name);
		if (access(path, X_OK)) {
			free(path);
			path = NULL;
		}
	}
	return path ? path : xasprintf("%s/%s", PKGLIBEXECDIR, name);
}

/* --scenario mcp: the tests' MCP server, installed as pevtui-mcp-demo (beside the program
 * when it runs from its build tree), as server "demo" unless one is configured. */
static void mcp_demo_server(struct settings *s)
{
	char *path, *err = NULL;

	if (!s->scenario || strcmp(s->scenario, "mcp") || mcp_conf_find(&s->mcp, "demo"))
		return;
	path = libexec_path("pevtui-mcp-demo");
	if (!mcp_conf_set_key(&s->mcp, "demo", "command", path, &err) ||
	    !mcp_conf_set_key(&s->mcp, "demo", "allow", "read_*", &err))
		die("%s", err);
	free(path);
}

/* Asks on the controlling terminal (whatever stdin and stderr are) whether to start a
 * project's server and remember it: 1 yes, 0 no, -1 no terminal to ask on. */
static int mcp_ask(const char *name, const char *file, const char *what)
{
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	char c = 0, first = 0;
	ssize_t n;

	if (tty < 0)
		return -1;
	dprintf(tty,
	        "pevtui: %s names an MCP server not approved before:\n  %s: %s\n"
	        "Start it, now and in later runs while it stays as it is? [y/N] ",
	        file, name, what);
	while ((n = read(tty, &c, 1)) == 1 && c != '\n')
		if (!first)
			first = c;
	close(tty);
	return first == 'y' || first == 'Y';
}

/*
 * The servers a .mcp.json added (from index `from` on) start only when approved: a model
 * may have written the file (mcp_trust.h). Approved before as they are now, or by the
 * operator at the terminal (remembered), or for this run by --yes; otherwise the server
 * is left out with a line saying how to approve it.
 */
static void mcp_approve(struct settings *s, size_t from, const char *file)
{
	char *abs = realpath(file, NULL), *store = mcp_trust_store_path(), *shown;

	if (!abs) {
		free(store);
		return;
	}
	shown = textsan_clean(abs, strlen(abs), 0);
	for (size_t i = from; i < s->mcp.n; i++) {
		struct mcp_server_conf *sv = &s->mcp.v[i];
		char *what, *err = NULL;
		int asked;

		if (sv->origin != MCP_FROM_PROJECT || !sv->enabled ||
		    mcp_trust_known(store, abs, sv))
			continue;
		what = mcp_trust_describe(sv);
		if (s->yes) {
			fprintf(stderr, "pevtui: starting MCP server %s from %s for this run (--yes): %s\n",
			        sv->name, shown, what);
		} else if ((asked = mcp_ask(sv->name, shown, what)) == 1) {
			if (!mcp_trust_add(store, abs, sv, &err)) {
				fprintf(stderr, "pevtui: warning: %s (it starts for this run only)\n",
				        err);
				free(err);
			}
		} else {
			sv->enabled = false;
			fprintf(stderr,
			        "pevtui: MCP server %s from %s was not started: %s; approve it at a "
			        "terminal (pevtui --list-tools asks), run with --yes, or define it in "
			        "the config file\n",
			        sv->name, shown,
			        asked ? "it has not been approved, and no terminal could ask"
			              : "you said no");
		}
		free(what);
	}
	free(shown);
	free(store);
	free(abs);
}

/* A project's .mcp.json, in the workspace and in the current folder: weaker than the
 * config and --mcp (which keep their servers), and started only once approved. */
static void mcp_project_files(struct settings *s)
{
	char *err = NULL, *path;
	size_t from;

	mcp_demo_server(s);
	if (s->workspace) {
		path = xasprintf("%s/.mcp.json", s->workspace);
		from = s->mcp.n;
		if (!mcp_conf_load_json(&s->mcp, path, &err))
			die("%s", err);
		mcp_approve(s, from, path);
		free(path);
	}
	from = s->mcp.n;
	if (!mcp_conf_load_json(&s->mcp, ".mcp.json", &err))
		die("%s", err);
	mcp_approve(s, from, ".mcp.json");
	if (!mcp_conf_check(&s->mcp, &err))
		die("%s", err);
}

int main(int argc, char **argv)
{
	struct settings s;
	struct cli cli = {0};
	char *config_path, *err = NULL;
	int code;

	/* Before anything forks: every process pevtui keeps inherits it (agent/secrets.h). */
	secrets_harden(&err);
	if (err) {
		fprintf(stderr, "pevtui: warning: %s\n", err);
		free(err);
		err = NULL;
	}
	setlocale(LC_ALL, "");
	/* Characters as the operator's locale has them (curses draws UTF-8 so), numbers as
	 * JSON, configs and command lines write them: under a decimal-comma locale strtod
	 * stopped at the point of "--budget 0.05" and printf wrote "$0,1033". */
	setlocale(LC_NUMERIC, "C");
	/* Signals for the headless stop are taken by a thread; block them everywhere. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGHUP);
	sigaddset(&stop_signals, SIGUSR1);
	signal(SIGPIPE, SIG_IGN);
	/* A file over the size limit (ulimit -f) is a write error to report, not a kill. */
	signal(SIGXFSZ, SIG_IGN);

	settings_init(&s);
	{
		/* First pass: only --config, --help, --version and the mode matter. */
		struct settings scratch;
		settings_init(&scratch);
		opterr = 1;
		apply_flags(argc, argv, &scratch, &cli);
		settings_release(&scratch);
	}
	if (cli.help) {
		usage(stdout);
		return 0;
	}
	if (cli.keys) {
		app_print_keys(stdout);
		return 0;
	}
	if (cli.version) {
		printf("pevtui %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (cli.config && access(cli.config, R_OK) != 0)
		die("cannot read config file %s: %s", cli.config, strerror(errno));
	/* Environment variables (keys, base URLs) are read where they are used, between
	 * the config file and the flags in precedence. */
	config_path = cli.config ? xstrdup(cli.config) : settings_default_config_path();
	if (config_path && !settings_load_file(&s, config_path, &err))
		die("%s", err);
	if (s.checkpoint_keep && strcmp(s.checkpoint_keep, "off")) {
		double keep;
		if (!checkpoint_parse_age(s.checkpoint_keep, &keep))
			die("%s: [checkpoints] keep = %s is not an age: give 30d, 12h, 2w, or off",
			    config_path, s.checkpoint_keep);
	}
	free(config_path);
	free(cli.run_ref);
	cli.run_ref = NULL;
	free(cli.older_than);
	cli.older_than = NULL;
	opterr = 0;
	apply_flags(argc, argv, &s, &cli);
	if (optind < argc) {
		struct strvec words = STRVEC_INIT;
		for (int i = optind; i < argc; i++)
			strvec_push(&words, argv[i]);
		free(s.task);
		s.task = strvec_join(&words, " ");
		strvec_clear(&words);
	}
	/* Before any provider, run folder or model call (issue 29: a 100 KB task was planned
	 * for 90 s and then blamed on the planner). */
	{
		char *too_long = plan_task_error(s.task);

		if (too_long)
			die("%s", too_long);
	}
	if (!s.runs_dir) {
		s.runs_dir = settings_default_runs_dir();
		if (!s.runs_dir)
			die("no runs directory: set XDG_DATA_HOME or HOME, or pass --runs-dir");
	}
	/* A cockpit run: the shell waits for a thin waiter, so that D and a hangup can give
	 * the shell back while the run goes on (detach.h). Before any thread. */
	if ((cli.mode == MODE_RUN || cli.mode == MODE_RESUME) && !cli.detach && !s.headless &&
	    isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
		detach_launch();
	/* Only a run reads a key (the provider's, in run) or starts servers that may need
	 * one (MCP, for --list-tools too); every other mode lets go of them now. */
	if (cli.mode != MODE_RUN && cli.mode != MODE_RESUME && cli.mode != MODE_LIST_TOOLS)
		secrets_scrub_env();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	/* A broken price file leaves the built-in table in place: a warning, not an error. */
	if (!cost_init())
		fprintf(stderr, "pevtui: warning: %s\n", cost_load_error());

	/* Only what starts servers reads a project's .mcp.json (and may ask about it). */
	if (cli.mode == MODE_RUN || cli.mode == MODE_RESUME || cli.mode == MODE_LIST_TOOLS ||
	    cli.mode == MODE_MCP_LOGIN || cli.mode == MODE_MCP_LOGOUT)
		mcp_project_files(&s);
	free(s.sandbox_helper);
	s.sandbox_helper = libexec_path("pevtui-confine");
	switch (cli.mode) {
	case MODE_LIST_TOOLS:
		code = tool_list_print(stdout, &s);
		break;
	case MODE_MCP_LOGIN:
	case MODE_MCP_LOGOUT: {
		char cwd[4096];
		code = oauth_login_main(&s.mcp, cli.run_ref, cli.mode == MODE_MCP_LOGOUT,
		                        s.workspace ? s.workspace : getcwd(cwd, sizeof(cwd)) ? cwd : ".",
		                        stdout, stderr);
		break;
	}
	case MODE_LIST:
		if (!run_list_print(stdout, s.runs_dir, &err))
			die("%s", err);
		code = 0;
		break;
	case MODE_PRUNE:
		code = prune_main(&s, &cli);
		break;
	case MODE_REPLAY: {
		char *dir = resolve_run(&s, cli.run_ref);
		if (s.headless || !isatty(STDOUT_FILENO))
			code = replay_headless(&s, dir);
		else
			code = app_replay(&s, dir);
		free(dir);
		break;
	}
	case MODE_DIFF: {
		char *run_ref, *step, *dir;
		diff_cmd_split(cli.run_ref, &run_ref, &step);
		dir = resolve_run(&s, run_ref);
		code = diff_cmd_print(dir, step, stdout);
		free(dir);
		free(step);
		free(run_ref);
		break;
	}
	case MODE_REWIND: {
		/* RUN[:STEP]: the colon after the last slash (a folder path may hold one). */
		char *ref = xstrdup(cli.run_ref), *slash = strrchr(ref, '/');
		char *colon = strchr(slash ? slash : ref, ':'), *dir;
		if (colon)
			*colon = '\0';
		dir = resolve_run(&s, ref);
		code = rewind_cli_main(dir, ref, colon && colon[1] ? colon + 1 : NULL, s.workspace,
				       &s.checkpoint_exclude, s.yes);
		free(dir);
		free(ref);
		break;
	}
	case MODE_RESUME: {
		char *dir = resolve_run(&s, cli.run_ref), *finished;
		/* Only a cockpit can reopen a finished run (with r or e): without one it is
		 * refused before anything else is said (pev_new would refuse it later). */
		if (s.headless || cli.detach || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
			finished = pev_finished_refusal(dir);
			if (finished)
				die("%s", finished);
		}
		settings_from_journal(&s, dir, cli.given);
		code = run(&s, cli.mode, dir, cli.detach);
		free(dir);
		break;
	}
	case MODE_ATTACH: {
		char *host, *ref, *dir;
		struct stat st;
		if (stat(cli.run_ref, &st) != 0 && attach_is_remote(cli.run_ref, &host, &ref)) {
			struct notify *nt = make_notify(&s, true, NULL, ref);
			code = attach_remote(&s, host, ref, nt);
			notify_free(nt);
			free(host);
			free(ref);
			break;
		}
		dir = resolve_run(&s, cli.run_ref);
		code = attach_here(&s, dir);
		free(dir);
		break;
	}
	case MODE_BOARD: {
		char *dir;
		code = 0;
		/* The board, a run from it, and back to the board when that run is left. */
		struct notify *nt = make_notify(&s, true, NULL, NULL);
		while ((dir = board_screen_run(&s, nt, NULL))) {
			if (runlock_holder(dir) > 0)
				code = attach_here(&s, dir);
			else
				code = app_replay(&s, dir);
			free(dir);
		}
		notify_free(nt);
		break;
	}
	case MODE_ATTACH_STDIO: {
		char *dir = resolve_run(&s, cli.run_ref);
		code = attach_stdio(dir);
		free(dir);
		break;
	}
	default:
		/* pevtui with no task while runs are live: the board first; n starts a run. */
		if (cli.mode == MODE_RUN && !s.task && !s.demo && !s.script && !s.headless &&
		    !cli.detach && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
		    board_any_live(s.runs_dir)) {
			bool want_new = false;
			struct notify *nt = make_notify(&s, true, NULL, NULL);
			char *dir;

			code = 0;
			while ((dir = board_screen_run(&s, nt, &want_new))) {
				code = runlock_holder(dir) > 0 ? attach_here(&s, dir)
							       : app_replay(&s, dir);
				free(dir);
			}
			notify_free(nt);
			if (!want_new)
				break;
		}
		code = run(&s, cli.mode, cli.run_ref, cli.detach);
		break;
	}
	free(cli.run_ref);
	free(cli.older_than);
	settings_release(&s);
	curl_global_cleanup();
	return code;
}
