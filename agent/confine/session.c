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

struct confine_session *confine_session_new(const struct confine_setup *setup)
{
	struct confine_session *s = xcalloc(1, sizeof(*s));
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
