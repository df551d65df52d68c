/* rewind_key — the rewind key's preview: rewind_prepare on the cockpit's own run, turned
 * into one question and one command. */
#include "config.h"

#include "rewind_key.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rewind.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

#define NAMES_MAX 6 /* files named in the question */

bool rewind_key_preview(const char *run_dir, const char *workspace, const char *step_id,
                        const struct strvec *exclude, char **question, char **command_json,
                        char **err)
{
	struct rewind rw;
	struct strbuf q = STRBUF_INIT;
	cJSON *o;
	char *c;

	*question = *command_json = NULL;
	if (!run_dir) {
		*err = xstrdup("this run has no folder to rewind");
		return false;
	}
	if (!rewind_prepare(run_dir, step_id, workspace, true, exclude, &rw, err)) {
		rewind_release(&rw);
		return false;
	}
	size_t acts = cp_plan_acts(&rw.plan), named = 0, kept = rw.plan.n - acts;

	if (!acts) {
		*err = xasprintf("nothing to rewind: the workspace is as it was %s", rw.what);
		rewind_release(&rw);
		return false;
	}
	strbuf_init(&q);
	strbuf_addf(&q, "Rewind the workspace %s? %zu file%s change%s back: ", rw.what, acts,
	            acts == 1 ? "" : "s", acts == 1 ? "s" : "");
	for (size_t i = 0; i < rw.plan.n && named < NAMES_MAX; i++) {
		const struct cp_plan_ent *e = &rw.plan.v[i];
		if (e->act == CP_ACT_KEEP)
			continue;
		c = textsan_clean(e->path, strlen(e->path), 0);
		strbuf_addf(&q, "%s%s %s", named ? ", " : "", cp_act_verb(e->act), c);
		free(c);
		named++;
	}
	if (acts > NAMES_MAX)
		strbuf_addf(&q, " and %zu more", acts - NAMES_MAX);
	if (kept)
		strbuf_addf(&q, " (%zu kept as %s: left out of the checkpoints, or there before)",
		            kept, kept == 1 ? "it is" : "they are");
	strbuf_adds(&q, ". A checkpoint of the workspace is taken first: the Step log says how "
	                "to undo.");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "checkpoint", rw.target);
	cJSON_AddStringToObject(o, "what", rw.what);
	c = cJSON_PrintUnformatted(o);
	*command_json = xstrdup(c);
	cJSON_free(c);
	cJSON_Delete(o);
	*question = strbuf_detach(&q);
	rewind_release(&rw);
	return true;
}
