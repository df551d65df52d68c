/* bwrap — the argv that runs a command confined: bubblewrap's mounts and namespaces
 * outside, the helper (Landlock, seccomp, no_new_privs) inside, then the command. */
#include "config.h"

#include "confine.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xalloc.h"

enum mount_kind { M_HIDE, M_WRITE, M_RO };

struct mount {
	const char *path;
	enum mount_kind kind;
};

/* Parents before children: a path sorts after every path it lies beneath. */
static int by_length(const void *a, const void *b)
{
	const struct mount *x = a, *y = b;
	size_t lx = strlen(x->path), ly = strlen(y->path);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static void push3(struct strvec *v, const char *a, const char *b, const char *c)
{
	strvec_push(v, a);
	strvec_push(v, b);
	if (c)
		strvec_push(v, c);
}

static void bwrap_args(const struct confine_policy *p, const struct confine_layers *l,
		       struct strvec *out)
{
	size_t n = p->writable.n + p->hidden.n + p->protected.n, k = 0;
	struct mount *m = xcalloc(n ? n : 1, sizeof(*m));
	struct strvec ro = STRVEC_INIT;

	for (size_t i = 0; i < p->hidden.n; i++)
		m[k++] = (struct mount){p->hidden.v[i], M_HIDE};
	for (size_t i = 0; i < p->writable.n; i++)
		m[k++] = (struct mount){p->writable.v[i], M_WRITE};
	for (size_t i = 0; i < p->protected.n; i++)
		m[k++] = (struct mount){p->protected.v[i], M_RO};
	qsort(m, n, sizeof(*m), by_length);

	strvec_push(out, l->bwrap_path);
	push3(out, "--ro-bind", "/", "/");
	/* A fresh /dev (null, zero, random, tty…), read-only so /dev/shm takes nothing; a
	 * /proc of the new PID namespace. /tmp stays as the read-only root shows it (the
	 * private TMPDIR is bound writable below): a tmpfs over it hid a workspace or a
	 * pevtui installed beneath /tmp, pevtui-confine itself included. */
	push3(out, "--dev", "/dev", NULL);
	push3(out, "--proc", "/proc", NULL);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		const char *path = m[i].path;
		if (m[i].kind == M_HIDE) {
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
				push3(out, "--tmpfs", path, NULL);
				strvec_push(&ro, path);
			} else {
				push3(out, "--ro-bind", "/dev/null", path);
			}
		} else {
			push3(out, m[i].kind == M_WRITE ? "--bind" : "--ro-bind", path, path);
		}
	}
	/* Hidden folders are empty and read-only, not a place to write: remounted once the
	 * writable roots beneath them have their mount points. */
	for (size_t i = 0; i < ro.n; i++)
		push3(out, "--remount-ro", ro.v[i], NULL);
	strvec_clear(&ro);
	push3(out, "--remount-ro", "/dev", NULL);
	push3(out, "--chdir", p->workspace, NULL);
	strvec_push(out, "--unshare-pid");
	strvec_push(out, "--unshare-ipc");
	if (!p->network)
		strvec_push(out, "--unshare-net");
	strvec_push(out, "--die-with-parent");
	strvec_push(out, "--new-session");
	strvec_push(out, "--");
	free(m);
}

static void helper_args(const struct confine_policy *p, const struct confine_layers *l,
			struct strvec *out)
{
	strvec_push(out, l->helper);
	if (l->landlock_abi > 0) {
		strvec_push(out, "--landlock");
		for (size_t i = 0; i < p->writable.n; i++)
			push3(out, "--write", p->writable.v[i], NULL);
		for (size_t i = 0; i < p->hidden.n; i++)
			push3(out, "--hide", p->hidden.v[i], NULL);
	}
	if (l->seccomp)
		strvec_push(out, "--seccomp");
	if (p->network)
		strvec_push(out, "--network");
	strvec_push(out, "--");
}

void confine_argv(const struct confine_policy *p, const struct confine_layers *l,
		  char *const argv[], struct strvec *out)
{
	strvec_clear(out);
	if (p->mode != CONFINE_OFF && l) {
		if (l->bwrap)
			bwrap_args(p, l, out);
		if (l->helper)
			helper_args(p, l, out);
	}
	for (size_t i = 0; argv[i]; i++)
		strvec_push(out, argv[i]);
}
