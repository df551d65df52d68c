/* bench_parallel — makespan of parallel steps against the critical path: a plan of 8
 * independent chains of 4 steps, every model call taking 200 ms (a wrapper around the
 * scripted simulated model), run with --parallel 8 and --parallel 1. Run by hand:
 * make bench-parallel. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "gate.h"
#include "pev.h"
#include "provider.h"
#include "provider_sim.h"
#include "settings.h"
#include "xalloc.h"

#define CHAINS 8
#define DEPTH 4
#define CALL_MS 200

struct slow {
	struct provider base;
	struct provider *inner;
};

/* Every call takes CALL_MS, like a model with a fixed latency. */
static int slow_complete(struct provider *p, const struct llm_request *req,
			 const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	struct slow *s = p->impl;
	struct timespec ts = {0, CALL_MS * 1000000L};

	nanosleep(&ts, NULL);
	return provider_complete(s->inner, req, hooks, out, err);
}

static void slow_destroy(struct provider *p)
{
	struct slow *s = p->impl;

	provider_free(s->inner);
	free(s);
}

static const struct provider_ops slow_ops = {"sim", slow_complete, slow_destroy};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The executor's tool round is scripted away: one call per attempt, so every step is
 * exactly one executor and one verifier call. */
static char *write_script(const char *dir)
{
	cJSON *script = cJSON_CreateObject(), *planner = cJSON_AddArrayToObject(script, "planner");
	cJSON *executor = cJSON_AddObjectToObject(script, "executor");
	cJSON *plan = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(plan, "steps");
	char *path = xasprintf("%s/script.json", dir), *text;
	FILE *f;

	cJSON_AddStringToObject(script, "task", "parallel benchmark");
	cJSON_AddStringToObject(plan, "goal", "measure makespan");
	cJSON_AddStringToObject(plan, "context", "bench");
	for (int c = 0; c < CHAINS; c++) {
		for (int d = 0; d < DEPTH; d++) {
			cJSON *s = cJSON_CreateObject(), *att = cJSON_CreateArray();
			cJSON *a = cJSON_CreateObject(), *fin = cJSON_CreateObject();
			cJSON *out = cJSON_AddObjectToObject(fin, "step_output");
			char id[32], dep[32], name[64];

			snprintf(id, sizeof(id), "c%d-s%d", c, d);
			snprintf(name, sizeof(name), "chain %d step %d", c, d);
			cJSON_AddStringToObject(s, "step_id", id);
			cJSON_AddStringToObject(s, "name", name);
			cJSON_AddStringToObject(s, "description", "one unit of work");
			cJSON_AddItemToObject(s, "acceptance_criteria", cJSON_CreateArray());
			cJSON_AddItemToArray(cJSON_GetObjectItem(s, "acceptance_criteria"),
					     cJSON_CreateString("done"));
			cJSON_AddItemToObject(s, "dependencies", cJSON_CreateArray());
			if (d > 0) {
				snprintf(dep, sizeof(dep), "c%d-s%d", c, d - 1);
				cJSON_AddItemToArray(cJSON_GetObjectItem(s, "dependencies"),
						     cJSON_CreateString(dep));
			}
			cJSON_AddStringToObject(s, "estimated_complexity", "low");
			cJSON_AddItemToArray(steps, s);

			cJSON_AddStringToObject(fin, "reasoning", "done");
			cJSON_AddItemToObject(fin, "actions_taken", cJSON_CreateArray());
			cJSON_AddStringToObject(out, "findings", name);
			cJSON_AddItemToObject(out, "artifacts", cJSON_CreateArray());
			cJSON_AddBoolToObject(out, "meets_criteria", true);
			cJSON_AddNumberToObject(fin, "confidence", 0.9);
			cJSON_AddStringToObject(fin, "notes", "");
			cJSON_AddItemToObject(a, "rounds", cJSON_CreateArray());
			cJSON_AddItemToObject(a, "final", fin);
			cJSON_AddItemToArray(att, a);
			cJSON_AddItemToObject(executor, id, att);
		}
	}
	cJSON_AddItemToObject(plan, "success_criteria", cJSON_CreateArray());
	cJSON_AddStringToObject(plan, "rollback_strategy", "none");
	cJSON_AddItemToArray(planner, plan);
	text = cJSON_PrintUnformatted(script);
	f = fopen(path, "w");
	if (!f)
		fatal("cannot write %s", path);
	fputs(text, f);
	fclose(f);
	cJSON_free(text);
	cJSON_Delete(script);
	return path;
}

static double run_once(const char *dir, const char *script, int parallel)
{
	struct slow *slow = xcalloc(1, sizeof(*slow));
	struct provider *roles[ROLE__COUNT];
	struct settings s;
	struct bus *bus = bus_new();
	struct gatekeeper *g = gatekeeper_new(bus, 0, GATE_MODE_YES);
	char *run_dir = xasprintf("%s/run-p%d", dir, parallel), *err = NULL;
	struct pev *e;
	double t0, t;
	int code;

	slow->inner = provider_sim_new(NULL, script, 0, &err);
	if (!slow->inner)
		fatal("script: %s", err);
	slow->base = (struct provider){&slow_ops, true, slow};
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = &slow->base;
	settings_init(&s);
	s.task = xstrdup("parallel benchmark");
	s.gates = 0;
	s.parallel = parallel;
	t0 = now_s();
	e = pev_new(&s, roles, bus, g, run_dir, PEV_OPEN_NEW, &err);
	if (!e)
		fatal("%s", err);
	pev_start(e);
	code = pev_join(e);
	t = now_s() - t0;
	if (code != PEV_EXIT_OK)
		fatal("the run ended with %d", code);
	pev_free(e);
	gatekeeper_free(g);
	bus_free(bus);
	provider_free(&slow->base);
	settings_release(&s);
	free(run_dir);
	return t;
}

int main(void)
{
	char dir[] = "/tmp/pevtui-bench-par-XXXXXX";
	char *script, *cmd;
	/* plan + DEPTH × (execute + verify) + final check + synthesis, one after another */
	double critical = (1 + DEPTH * 2 + 2) * CALL_MS / 1000.0;
	double t8, t1;

	if (!mkdtemp(dir))
		fatal("mkdtemp failed");
	script = write_script(dir);
	t8 = run_once(dir, script, CHAINS);
	t1 = run_once(dir, script, 1);
	printf("bench_parallel: %d chains x %d steps, %d ms per model call\n", CHAINS, DEPTH,
	       CALL_MS);
	printf("  critical path:        %.2f s\n", critical);
	printf("  makespan --parallel %d: %.2f s (%+.1f%% over the critical path; aim < 5%%)\n",
	       CHAINS, t8, (t8 / critical - 1) * 100);
	printf("  makespan --parallel 1: %.2f s\n", t1);
	cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_parallel: could not remove %s\n", dir);
	free(cmd);
	free(script);
	return 0;
}
