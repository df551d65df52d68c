/* remote_port — a stand-in struct pev for an engine in another process: the cockpit
 * posts its commands to it as to a local engine, and they go over the control socket. */
#include "config.h"

#include "engine.h"

#include "xalloc.h"

struct pev *pev_new_remote(const char *run_id,
                           bool (*post)(void *ctx, enum pev_cmd cmd, const char *step_id,
                                        const char *json),
                           void *ctx)
{
	struct pev *e = xcalloc(1, sizeof(*e));

	e->run_id = xstrdup(run_id);
	e->remote_post = post;
	e->remote_ctx = ctx;
	return e;
}
