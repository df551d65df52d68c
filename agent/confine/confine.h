/* confine — the kernel sandbox around commands: what a run's commands may touch (the
 * policy), which of the kernel's layers hold on this machine (the probe), and the argv
 * that runs a command under them (bubblewrap outside, pevtui-confine inside). */
#ifndef PEVTUI_CONFINE_H
#define PEVTUI_CONFINE_H

#include <stdbool.h>

#include "strbuf.h"

enum confine_mode {
	CONFINE_WORKSPACE_WRITE = 0, /* the default: writes beneath the workspace and TMPDIR */
	CONFINE_READ_ONLY,           /* writes only beneath the private TMPDIR */
	CONFINE_OFF,                 /* unconfined, as before the sandbox (said everywhere) */
};

/* "workspace-write" → CONFINE_WORKSPACE_WRITE …; -1 when the name is none of the three. */
int confine_mode_parse(const char *name);
const char *confine_mode_name(enum confine_mode m);

/* Which layers hold here (confine_probe). The zero value: none. */
struct confine_layers {
	bool bwrap;       /* bubblewrap starts with namespaces (user namespaces allowed) */
	int landlock_abi; /* 0: no Landlock; else the ABI the kernel offers */
	bool seccomp;     /* seccomp filters can be installed */
	char *bwrap_path; /* owned; the bwrap that worked */
	char *helper;     /* owned; pevtui-confine, which applies Landlock and seccomp */
};

/*
 * Finds what holds on this machine: bubblewrap (tried once with the flags commands get),
 * Landlock (its ABI), seccomp, and the helper program at `helper` (NULL or missing: no
 * Landlock and no seccomp, since only the helper applies them). The test hook
 * PEVTUI_SANDBOX_LAYERS (a comma list of bwrap, landlock, seccomp, or "none") keeps only
 * the named layers of those found, so the tests can play a machine without them.
 */
void confine_probe(const char *helper, struct confine_layers *out);
void confine_layers_release(struct confine_layers *l);
/* True when at least one layer confines the filesystem (bubblewrap or Landlock). */
bool confine_layers_any(const struct confine_layers *l);

/* What a run's commands may touch. Paths are absolute; lists owned. */
struct confine_policy {
	enum confine_mode mode;
	bool network;            /* network = on: sockets of every family, no new netns */
	struct strvec writable;  /* writable roots: workspace (workspace-write), TMPDIR, extras */
	struct strvec hidden;    /* secrets: tmpfs / empty file over them; unreadable */
	struct strvec protected; /* read-only inside a writable root (.git/hooks, …) */
	char *workspace;         /* the command's directory */
	char *tmpdir;            /* the run's private temp folder (TMPDIR), or NULL */
};

/*
 * Fills p for a run: the mode and network; the workspace (writable in workspace-write),
 * the private temp folder `tmpdir`, `extra_writable`; the operator's secrets below
 * `home` (~/.ssh, ~/.gnupg, ~/.aws, ~/.config/gcloud, ~/.netrc, ~/.docker/config.json),
 * `pevtui_dirs` (config, data, runs: hidden, except the workspace beneath them) and
 * `deny_read`; and what stays read-only in the workspace (.git/hooks, .git/config,
 * .mcp.json, and `run_dir` when it lies inside). Relative extras are taken from the
 * workspace. Release with confine_policy_release.
 */
void confine_policy_init(struct confine_policy *p, enum confine_mode mode, bool network,
			 const char *workspace, const char *tmpdir, const char *run_dir,
			 const char *home, const struct strvec *pevtui_dirs,
			 const struct strvec *extra_writable, const struct strvec *deny_read);
void confine_policy_release(struct confine_policy *p);

/*
 * The one line every surface shows, e.g. "sandbox: workspace-write, network off —
 * bubblewrap + Landlock v7 + seccomp", "sandbox: off (commands run unconfined)" or
 * "sandbox: workspace-write, but no layer holds here (…): every command asks". Caller
 * frees.
 */
char *confine_layers_line(enum confine_mode mode, bool network, const struct confine_layers *l);

/* Why, in a few words, no layer holds (for the gate): never NULL. */
const char *confine_no_layer_why(const struct confine_layers *l);

/*
 * The argv that runs `argv` (NULL-terminated) confined by p under layers l: bwrap's
 * arguments when it holds, then the helper's when Landlock or seccomp do, then argv.
 * The result holds copies; appended to out (cleared first).
 */
void confine_argv(const struct confine_policy *p, const struct confine_layers *l,
		  char *const argv[], struct strvec *out);

/*
 * Reads a confined command's output for the kernel's refusals: lines saying "Permission
 * denied", "Operation not permitted" or "Read-only file system", with the path or address
 * they name when they name one. Appends a note to `note` ("sandbox denied: PATH (…)") and
 * returns true when it found one; false otherwise (nothing appended).
 */
bool confine_denial(const char *output, struct strbuf *note);

/* ---- a run's sandbox: probed once, its private TMPDIR, its policy (session.c) ------ */

/* What a run asks for. Strings are borrowed for the call. */
struct confine_setup {
	enum confine_mode mode;
	bool network;
	const char *workspace;
	const char *run_dir;
	const char *run_id;
	const char *helper;                /* pevtui-confine's path, or NULL */
	const char *home;                  /* $HOME, or NULL */
	const struct strvec *pevtui_dirs;  /* pevtui's config, data and runs folders */
	const struct strvec *writable;     /* [sandbox] writable */
	const struct strvec *deny_read;    /* [sandbox] deny_read */
};

struct confine_session;

/*
 * Probes the layers, makes the private temp folder (beneath $TMPDIR or /tmp, removed by
 * confine_session_free) unless the mode is off, and builds the policy. Never NULL: a
 * temp folder that cannot be made is said by confine_session_problem.
 */
struct confine_session *confine_session_new(const struct confine_setup *setup);
/* Removes the private temp folder with all in it; NULL is fine. */
void confine_session_free(struct confine_session *s);

enum confine_mode confine_session_mode(const struct confine_session *s);
bool confine_session_network(const struct confine_session *s);
const struct confine_layers *confine_session_layers(const struct confine_session *s);
/* The layers line (confine_layers_line); valid while s lives. */
const char *confine_session_line(const struct confine_session *s);
/* The private temp folder (TMPDIR for commands), or NULL (mode off, or not made). */
const char *confine_session_tmpdir(const struct confine_session *s);
/* A problem found while setting up (e.g. the temp folder), or NULL. */
const char *confine_session_problem(const struct confine_session *s);
/*
 * NULL when commands are confined or the operator turned the sandbox off; otherwise why
 * every command must ask at the shell gate (no layer confines files here).
 */
const char *confine_session_gate_why(const struct confine_session *s);
/* The argv running `argv` confined (confine_argv), or a copy of it when the mode is off
 * or nothing holds. */
void confine_session_argv(const struct confine_session *s, char *const argv[],
			  struct strvec *out);
/*
 * The argv running `argv` under the run's layers with another mode and network (an MCP
 * server's own `sandbox`), started in `cwd` (NULL: the workspace). With mode off, a copy.
 * false with *err (caller frees) when it asks for a mode no layer here can enforce.
 */
bool confine_session_argv_as(const struct confine_session *s, enum confine_mode mode,
			     bool network, const char *cwd, char *const argv[],
			     struct strvec *out, char **err);

#endif
