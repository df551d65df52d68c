/* policy — what a run's commands may touch: writable roots, hidden secrets, read-only
 * paths inside the workspace, and the one line that says which layers enforce it. */
#include "config.h"

#include "confine.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xalloc.h"

static const char *const mode_names[] = {
	[CONFINE_WORKSPACE_WRITE] = "workspace-write",
	[CONFINE_READ_ONLY] = "read-only",
	[CONFINE_OFF] = "off",
};

int confine_mode_parse(const char *name)
{
	for (int m = 0; m < (int)(sizeof(mode_names) / sizeof(mode_names[0])); m++)
		if (name && strcmp(name, mode_names[m]) == 0)
			return m;
	return -1;
}

const char *confine_mode_name(enum confine_mode m)
{
	return (unsigned)m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m] : "?";
}

/* dir/rel, or rel itself when it is absolute, as the kernel resolves it (links followed);
 * NULL when it does not exist. Caller frees. */
static char *resolve(const char *dir, const char *rel)
{
	char *joined = rel[0] == '/' || !dir ? xstrdup(rel) : xasprintf("%s/%s", dir, rel);
	char *real = realpath(joined, NULL);
	free(joined);
	return real;
}

/* Is `path` `root` or beneath it? */
static bool beneath(const char *path, const char *root)
{
	size_t n = strlen(root);
	if (n == 1 && root[0] == '/')
		return true;
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool listed_beneath(const struct strvec *v, const char *path)
{
	for (size_t i = 0; i < v->n; i++)
		if (beneath(path, v->v[i]))
			return true;
	return false;
}

static void add_writable(struct confine_policy *p, const char *dir, const char *rel)
{
	char *real = rel ? resolve(dir, rel) : NULL;
	if (real && !listed_beneath(&p->writable, real))
		strvec_take(&p->writable, real);
	else
		free(real);
}

/* A hidden path that exists and is not already beneath another; a hidden folder that
 * holds a writable root (the default workspace lies in the runs folder) stays hidden
 * around it: the mounts are made parents first. */
static void add_hidden(struct confine_policy *p, const char *dir, const char *rel)
{
	char *real = rel ? resolve(dir, rel) : NULL;
	if (!real || listed_beneath(&p->hidden, real) || strcmp(real, "/") == 0) {
		free(real);
		return;
	}
	/* A folder hidden now may hold one hidden before: that one is dropped. */
	for (size_t i = 0; i < p->hidden.n;) {
		if (beneath(p->hidden.v[i], real)) {
			free(p->hidden.v[i]);
			p->hidden.v[i] = p->hidden.v[--p->hidden.n];
		} else {
			i++;
		}
	}
	strvec_take(&p->hidden, real);
}

static void add_protected(struct confine_policy *p, const char *rel)
{
	char *real = resolve(p->workspace, rel);
	if (real && listed_beneath(&p->writable, real))
		strvec_take(&p->protected, real);
	else
		free(real);
}

void confine_policy_init(struct confine_policy *p, enum confine_mode mode, bool network,
			 const char *workspace, const char *tmpdir, const char *run_dir,
			 const char *home, const struct strvec *pevtui_dirs,
			 const struct strvec *extra_writable, const struct strvec *deny_read)
{
	static const char *const secrets[] = {".ssh", ".gnupg", ".aws", ".config/gcloud",
					      ".netrc", ".docker/config.json"};
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->network = network;
	p->workspace = resolve(NULL, workspace);
	if (!p->workspace)
		p->workspace = xstrdup(workspace);
	p->tmpdir = tmpdir ? xstrdup(tmpdir) : NULL;
	if (mode == CONFINE_WORKSPACE_WRITE)
		add_writable(p, NULL, p->workspace);
	add_writable(p, NULL, tmpdir);
	for (size_t i = 0; extra_writable && i < extra_writable->n; i++)
		add_writable(p, p->workspace, extra_writable->v[i]);
	for (size_t i = 0; home && *home && i < sizeof(secrets) / sizeof(secrets[0]); i++)
		add_hidden(p, home, secrets[i]);
	for (size_t i = 0; pevtui_dirs && i < pevtui_dirs->n; i++)
		add_hidden(p, NULL, pevtui_dirs->v[i]);
	for (size_t i = 0; deny_read && i < deny_read->n; i++)
		add_hidden(p, p->workspace, deny_read->v[i]);
	/* A model must not plant a hook that runs at the operator's next commit, nor name a
	 * server the operator's next run starts. (Only what exists: a mount point would
	 * create what does not.) */
	add_protected(p, ".git/hooks");
	add_protected(p, ".git/config");
	add_protected(p, ".mcp.json");
	if (run_dir) {
		char *real = resolve(NULL, run_dir);
		/* (in a hidden folder it stays hidden) */
		if (real && listed_beneath(&p->writable, real) && !listed_beneath(&p->hidden, real))
			strvec_take(&p->protected, real);
		else
			free(real);
	}
}

void confine_policy_release(struct confine_policy *p)
{
	if (!p)
		return;
	strvec_clear(&p->writable);
	strvec_clear(&p->hidden);
	strvec_clear(&p->protected);
	free(p->workspace);
	free(p->tmpdir);
	memset(p, 0, sizeof(*p));
}

char *confine_layers_line(enum confine_mode mode, bool network, const struct confine_layers *l)
{
	if (mode == CONFINE_OFF)
		return xstrdup("sandbox: off — commands run unconfined, with everything your user "
			       "can reach");
	struct strvec names = STRVEC_INIT;
	if (l && l->bwrap)
		strvec_push(&names, "bubblewrap");
	if (l && l->landlock_abi > 0)
		strvec_pushf(&names, "Landlock v%d", l->landlock_abi);
	if (l && l->seccomp)
		strvec_push(&names, "seccomp");
	char *layers = strvec_join(&names, " + ");
	char *line;
	if (!confine_layers_any(l))
		line = xasprintf("sandbox: %s, network %s — no layer confines files here%s%s: "
				 "every command asks at the shell gate",
				 confine_mode_name(mode), network ? "on" : "off",
				 names.n ? ", only " : "", layers);
	else
		line = xasprintf("sandbox: %s, network %s — %s", confine_mode_name(mode),
				 network ? "on" : "off", layers);
	free(layers);
	strvec_clear(&names);
	return line;
}
