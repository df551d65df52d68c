/* sim_embedded — the built-in scenario scripts, compiled in from agent/scenarios/. */
#ifndef PEVTUI_SIM_EMBEDDED_H
#define PEVTUI_SIM_EMBEDDED_H

struct sim_embedded {
	const char *name; /* file name without .json */
	const char *json; /* the script text */
};

/* Terminated by an entry whose name is NULL. */
extern const struct sim_embedded sim_embedded[];

#endif
