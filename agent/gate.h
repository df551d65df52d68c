/* gate — approval gates: the engine asks and waits; the policy or the operator answers. */
#ifndef PEVTUI_GATE_H
#define PEVTUI_GATE_H

#include <stdbool.h>

struct bus;
struct cJSON;

enum gate_kind { GATE_PLAN, GATE_HIGH, GATE_REPLAN, GATE_SHELL, GATE_BUDGET, GATE_STEP, GATE__COUNT };
/* At a replan gate, GATE_SKIP means "keep the old plan and fail-accept the step". */
enum gate_decision { GATE_APPROVE, GATE_REJECT, GATE_SKIP, GATE_EDIT };

#define GATE_MASK(k) (1u << (k))
#define GATES_DEFAULT                                                                  \
	(GATE_MASK(GATE_PLAN) | GATE_MASK(GATE_HIGH) | GATE_MASK(GATE_REPLAN) |          \
	 GATE_MASK(GATE_SHELL) | GATE_MASK(GATE_BUDGET))

const char *gate_kind_name(enum gate_kind k);       /* "plan" … */
int gate_kind_from_name(const char *s);             /* -1 if unknown */
const char *gate_decision_name(enum gate_decision d);
int gate_decision_from_name(const char *s);
/* Parses "plan,high" / "none" into a mask. false + *err naming the bad word. */
bool gate_parse_list(const char *list, unsigned *mask, char **err);

/* How gates with nobody to ask are answered. */
enum gate_mode {
	GATE_MODE_OPERATOR, /* an interactive front end answers with gatekeeper_answer */
	GATE_MODE_YES,      /* the policy approves every gate (--yes) */
	GATE_MODE_NONE,     /* no operator and no --yes: the first gate rejects (exit 3) */
};

struct gatekeeper;

struct gatekeeper *gatekeeper_new(struct bus *bus, unsigned mask, enum gate_mode mode);
void gatekeeper_free(struct gatekeeper *g);
bool gatekeeper_enabled(const struct gatekeeper *g, enum gate_kind k);

/*
 * Engine side. Publishes gate.open (with "gate_id", "gate", "step_id", and `payload`'s
 * members merged in; payload taken, may be NULL) then waits for the answer and publishes
 * gate.decision. With GATE_EDIT, *edited receives the edited JSON text (caller frees).
 * Returns GATE_APPROVE without any event when the gate kind is not enabled.
 * After gatekeeper_cancel_all (abort) a waiting or later ask returns GATE_REJECT.
 */
enum gate_decision gatekeeper_ask(struct gatekeeper *g, enum gate_kind k, const char *step_id,
				  struct cJSON *payload, char **edited);

/* Operator side (any thread). Answers the gate with this id; false if no such gate is
 * open. `edited_json` (copied) goes with GATE_EDIT. */
bool gatekeeper_answer(struct gatekeeper *g, unsigned long gate_id, enum gate_decision d,
		       const char *edited_json);
/* The run is being aborted: wakes every waiting ask; all asks now return GATE_REJECT. */
void gatekeeper_cancel_all(struct gatekeeper *g);
/* Resume: gate ids continue after the highest one the journal holds. */
void gatekeeper_set_next_id(struct gatekeeper *g, unsigned long next_id);
/* Number of gates open now. */
int gatekeeper_pending(struct gatekeeper *g);

#endif
