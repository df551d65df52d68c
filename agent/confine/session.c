/* session — a run's sandbox: the layers probed once, the private temp folder commands get
 * as TMPDIR (removed with the run), the policy and its one line. */
#include "config.h"

#include "confine.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xalloc.h"

struct confine_session {
	/* the setup, kept to make other policies from (an MCP server's own mode) */
	char *workspace, *run_dir, *home;
	struct strvec pevtui_dirs, writable, deny_read;
	struct confine_policy policy;
	struct confine_layers layers;
	char *line;
	char *tmpdir;
	char *problem;
};

static char *make_tmpdir(const char *run_id, char **problem)
{
	const char *base = getenv("TMPDIR");
	if (!base || base[0] != '/' || access(base, W_OK) != 0)
		base = "/tmp";
	char *dir = xasprintf("%s/pevtui-%s-XXXXXX", base, run_id ? run_id : "run");
	/* a run id holds no '/', but the template must stay one name */
	for (char *p = dir + strlen(base) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	if (!mkdtemp(dir)) {
		*problem = xasprintf("cannot make a private temp folder in %s: %s", base,
				     strerror(errno));
		free(dir);
		return NULL;
	}
	return dir;
}

static void copy_vec(struct strvec *to, const struct strvec *from)
{
	for (size_t i = 0; from && i < from->n; i++)
		strvec_push(to, from->v[i]);
}

struct confine_session *confine_session_new(const struct confine_setup *setup)
{
	struct confine_session *s = xcalloc(1, sizeof(*s));
	s->workspace = xstrdup(setup->workspace);
	s->run_dir = setup->run_dir ? xstrdup(setup->run_dir) : NULL;
	s->home = setup->home ? xstrdup(setup->home) : NULL;
	copy_vec(&s->pevtui_dirs, setup->pevtui_dirs);
	copy_vec(&s->writable, setup->writable);
	copy_vec(&s->deny_read, setup->deny_read);
	if (setup->mode != CONFINE_OFF) {
		confine_probe(setup->helper, &s->layers);
		s->tmpdir = make_tmpdir(setup->run_id, &s->problem);
	}
	confine_policy_init(&s->policy, setup->mode, setup->network, setup->workspace,
			    s->tmpdir, setup->run_dir, setup->home, setup->pevtui_dirs,
			    setup->writable, setup->deny_read);
	s->line = confine_layers_line(setup->mode, setup->network, &s->layers);
	return s;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void confine_session_free(struct confine_session *s)
{
	if (!s)
		return;
	if (s->tmpdir)
		nftw(s->tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	confine_policy_release(&s->policy);
	confine_layers_release(&s->layers);
	free(s->workspace);
	free(s->run_dir);
	free(s->home);
	strvec_clear(&s->pevtui_dirs);
	strvec_clear(&s->writable);
	strvec_clear(&s->deny_read);
	free(s->line);
	free(s->tmpdir);
	free(s->problem);
	free(s);
}

enum confine_mode confine_session_mode(const struct confine_session *s)
{
	return s->policy.mode;
}

bool confine_session_network(const struct confine_session *s)
{
	return s->policy.network;
}

const struct confine_layers *confine_session_layers(const struct confine_session *s)
{
	return &s->layers;
}

const char *confine_session_line(const struct confine_session *s)
{
	return s->line;
}

const char *confine_session_tmpdir(const struct confine_session *s)
{
	return s->tmpdir;
}

const char *confine_session_problem(const struct confine_session *s)
{
	return s->problem;
}

const char *confine_session_gate_why(const struct confine_session *s)
{
	if (!s || s->policy.mode == CONFINE_OFF || confine_layers_any(&s->layers))
		return NULL;
	return confine_no_layer_why(&s->layers);
}

void confine_session_argv(const struct confine_session *s, char *const argv[],
			  struct strvec *out)
{
	if (s && s->policy.mode != CONFINE_OFF && confine_layers_any(&s->layers)) {
		confine_argv(&s->policy, &s->layers, argv, out);
		return;
	}
	strvec_clear(out);
	for (size_t i = 0; argv[i]; i++)
		strvec_push(out, argv[i]);
}

bool confine_session_argv_as(const struct confine_session *s, enum confine_mode mode,
			     bool network, const char *cwd, char *const argv[],
			     struct strvec *out, char **err)
{
	struct confine_policy p;

	strvec_clear(out);
	if (mode == CONFINE_OFF) {
		for (size_t i = 0; argv[i]; i++)
			strvec_push(out, argv[i]);
		return true;
	}
	if (!s || s->policy.mode == CONFINE_OFF || !confine_layers_any(&s->layers)) {
		*err = xstrdup(!s || s->policy.mode != CONFINE_OFF
				       ? confine_no_layer_why(s ? &s->layers : NULL)
				       : "the run's sandbox is off (--sandbox off), so nothing was "
					 "probed to confine it with");
		return false;
	}
	confine_policy_init(&p, mode, network, cwd ? cwd : s->workspace, s->tmpdir, s->run_dir,
			    s->home, &s->pevtui_dirs, &s->writable, &s->deny_read);
	/* the workspace stays the writable root even when the program starts elsewhere */
	if (cwd && mode == CONFINE_WORKSPACE_WRITE) {
		char *ws = realpath(s->workspace, NULL);
		if (ws)
			strvec_take(&p.writable, ws);
	}
	confine_argv(&p, &s->layers, argv, out);
	confine_policy_release(&p);
	return true;
}
