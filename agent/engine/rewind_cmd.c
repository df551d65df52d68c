/* rewind_cmd — the cockpit's rewind (PEV_CMD_REWIND): the workspace back to a checkpoint
 * while nothing runs, a checkpoint of it taken first so the rewind can be undone, and a
 * `rewind` notice in the journal saying what changed back and how to undo it. */
#include "config.h"

#include "engine.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "checkpoint.h"
#include "jsonx.h"
#include "rewind.h"
#include "xalloc.h"

#define REWIND_TELL_MAX 20 /* paths named in the notice's sentence */

static void publish(struct pev *e, const char *what, const char *target, const char *undo,
                    const struct cp_plan *plan)
{
	cJSON *f;
	char *msg, *sum = rewind_summary(plan, REWIND_TELL_MAX);

	msg = xasprintf("the workspace was rewound %s: %s; undo with pevtui --rewind %s:%s", what,
	                sum, e->run_id, undo);
	f = rewind_notice(msg, target, undo, plan);
	bus_publish(e->bus, EV_NOTICE, f);
	free(msg);
	free(sum);
}

void rewindcmd_apply(struct pev *e, const char *json)
{
	cJSON *o = json ? cJSON_Parse(json) : NULL;
	const char *target = jsonx_str(o, "checkpoint"), *what = jsonx_str(o, "what");
	char undo[CP_ID_LEN + 1];
	struct strvec warnings = STRVEC_INIT;
	struct cp_plan plan = {0};
	char *err = NULL;

	if (!e->checkpoints) {
		bus_notice(e->bus, "error", NULL,
		           "cannot rewind: this run keeps no checkpoints (%s)",
		           e->checkpoint_err ? e->checkpoint_err : "checkpoints = off");
	} else if (e->n_step_jobs > 0 || (e->phase != PH_ENDED && !e->paused)) {
		bus_notice(e->bus, "error", NULL,
		           "cannot rewind while steps run: pause the run (p) and wait until its "
		           "running steps stop; nothing was changed");
	} else if (!target || strlen(target) != CP_ID_LEN) {
		bus_notice(e->bus, "error", NULL, "cannot rewind: no checkpoint was named");
	} else if (!checkpoint_take(e->checkpoints, undo, &warnings, &err) ||
	           !checkpoint_plan(e->checkpoints, target, undo, &plan, &err)) {
		bus_notice(e->bus, "error", NULL, "cannot rewind: %s; nothing was changed",
		           err ? err : "the checkpoint failed");
	} else {
		if (!checkpoint_plan_apply(e->checkpoints, target, &plan, &err))
			bus_notice(e->bus, "error", NULL, "the rewind is incomplete: %s", err);
		publish(e, what ? what : "to the checkpoint given", target, undo, &plan);
	}
	cp_plan_release(&plan);
	strvec_clear(&warnings);
	free(err);
	cJSON_Delete(o);
}
