/* bench_engine — a 200-step plan against the scripted simulated model at zero latency:
 * CPU time per step and peak memory of the whole engine (plan, execute with a tool call,
 * deterministic + model verification, journal, report). Run by hand: make bench
 * (or bench/bench_engine [PARALLEL] [--no-checkpoints] [--keep], --keep leaving the run
 * folder for a look). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bus.h"
#include "gate.h"
#include "pev.h"
#include "provider.h"
#include "provider_sim.h"
#include "settings.h"
#include "xalloc.h"

#define STEPS 200

static double user_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

static double sys_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A chain s1 → s2 → … so every step has one dependency's output in its prompt. */
static char *write_script(const char *dir)
{
	cJSON *script = cJSON_CreateObject(), *planner = cJSON_AddArrayToObject(script, "planner");
	cJSON *plan = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(plan, "steps");
	char *path = xasprintf("%s/script.json", dir), *text;
	FILE *f;

	cJSON_AddStringToObject(script, "task", "benchmark");
	cJSON_AddStringToObject(plan, "goal", "benchmark the engine");
	cJSON_AddStringToObject(plan, "context", "bench");
	for (int i = 1; i <= STEPS; i++) {
		cJSON *s = cJSON_CreateObject(), *crit = cJSON_AddArrayToObject(s, "acceptance_criteria");
		cJSON *deps = cJSON_AddArrayToObject(s, "dependencies");
		char id[16], name[32];

		snprintf(id, sizeof(id), "s%d", i);
		snprintf(name, sizeof(name), "step number %d", i);
		cJSON_AddStringToObject(s, "step_id", id);
		cJSON_AddStringToObject(s, "name", name);
		cJSON_AddStringToObject(s, "description", "write a short note about this step");
		cJSON_AddItemToArray(crit, cJSON_CreateString("the note exists"));
		if (i > 1) {
			snprintf(id, sizeof(id), "s%d", i - 1);
			cJSON_AddItemToArray(deps, cJSON_CreateString(id));
		}
		cJSON_AddStringToObject(s, "estimated_complexity", "low");
		cJSON_AddItemToArray(steps, s);
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

int main(int argc, char **argv)
{
	char *dir = xasprintf("%s/pevtui-bench-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	bool checkpoints = true, keep = false;
	int parallel = 1;
	struct provider *prov, *roles[ROLE__COUNT];
	struct settings s;
	struct bus *bus;
	struct gatekeeper *g;
	struct pev *e;
	struct rusage ru;
	char *script, *run_dir, *err = NULL, *cmd;
	double u0, s0, w0, user, sys, wall;
	int code;

	if (!mkdtemp(dir))
		fatal("mkdtemp failed");
	script = write_script(dir);
	prov = provider_sim_new(NULL, script, 0, &err);
	if (!prov)
		fatal("script: %s", err);
	settings_init(&s);
	s.task = xstrdup("benchmark");
	s.gates = 0;
	s.sim_delay_ms = 0;
	/* The plan is one chain, so at most one step runs at a time whatever --parallel says;
	 * the argument shows what the worker machinery itself costs. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-checkpoints"))
			checkpoints = false;
		else if (!strcmp(argv[i], "--keep"))
			keep = true;
		else
			parallel = atoi(argv[i]);
	}
	s.parallel = parallel < 1 ? 1 : parallel;
	s.checkpoints = checkpoints;
	for (int r = 0; r < ROLE__COUNT; r++)
		roles[r] = prov;
	bus = bus_new();
	g = gatekeeper_new(bus, 0, GATE_MODE_YES);
	run_dir = xasprintf("%s/run", dir);

	u0 = user_seconds();
	s0 = sys_seconds();
	w0 = wall_seconds();
	e = pev_new(&s, roles, bus, g, run_dir, PEV_OPEN_NEW, &err);
	if (!e)
		fatal("%s", err);
	pev_start(e);
	code = pev_join(e);
	user = user_seconds() - u0;
	sys = sys_seconds() - s0;
	wall = wall_seconds() - w0;
	getrusage(RUSAGE_SELF, &ru);

	printf("bench_engine: %d steps, --parallel %d, checkpoints %s, in %s, exit %d\n", STEPS,
	       s.parallel, checkpoints ? "on" : "off", dir, code);
	printf("  cpu time per step: %.3f ms user + %.3f ms system (%.3f s wall in all)\n",
	       user * 1000.0 / STEPS, sys * 1000.0 / STEPS, wall);
	printf("  (system time is the journal's writes and the workspace files' fsync)\n");
	printf("  peak resident memory: %.1f MB\n", ru.ru_maxrss / 1024.0);
	printf("  aims: < 0.1 ms cpu per step, < 8 MB resident\n");

	pev_free(e);
	gatekeeper_free(g);
	bus_free(bus);
	provider_free(prov);
	settings_release(&s);
	cmd = xasprintf("rm -rf '%s'", dir);
	if (keep)
		printf("  kept: %s\n", dir);
	else if (system(cmd) != 0)
		fprintf(stderr, "bench_engine: could not remove %s\n", dir);
	free(cmd);
	free(script);
	free(run_dir);
	free(dir);
	return code == PEV_EXIT_OK ? 0 : 1;
}
