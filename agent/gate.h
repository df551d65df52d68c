/* gate — approval gates: the engine asks and waits; the policy or the operator answers. */
#ifndef PEVTUI_GATE_H
#define PEVTUI_GATE_H

#include <stdbool.h>

struct bus;
struct cJSON;

enum gate_kind {
	GATE_PLAN, GATE_HIGH, GATE_REPLAN, GATE_SHELL, GATE_BUDGET, GATE_STEP,
	GATE_REWIND, /* a file to restore before an attempt was changed by someone else since */
	GATE_MCP,    /* before each call of an MCP server's tool not on its allow list */
	GATE_ELICIT, /* an MCP server's question during a call (elicitation/create, a form) */
	GATE__COUNT
};
/* At a replan gate, GATE_SKIP means "keep the old plan and fail-accept the step". */
/* GATE_EDIT answers only a shell gate (the edited command replaces the model's, and the
 * gate asks again showing it, marked edited; only an approval runs it): a step or a plan
 * is edited by a command of its own, and its gate stays open until approved. */
enum gate_decision { GATE_APPROVE, GATE_REJECT, GATE_SKIP, GATE_EDIT };

#define GATE_MASK(k) (1u << (k))
/* DESIGN's default list, and mcp (only runs with MCP servers meet it: an MCP call is a
 * command of the operator's tools, gated like a shell command) and elicit (a server's
 * question; without it in the list servers are not told pevtui answers questions). The rewind gate is asked
 * for with --gate …,rewind: without it a file someone else changed is kept as it is
 * (never overwritten) with a warning. */
#define GATES_DEFAULT                                                                  \
	(GATE_MASK(GATE_PLAN) | GATE_MASK(GATE_HIGH) | GATE_MASK(GATE_REPLAN) |          \
	 GATE_MASK(GATE_SHELL) | GATE_MASK(GATE_BUDGET) | GATE_MASK(GATE_MCP) |          \
	 GATE_MASK(GATE_ELICIT))

const char *gate_kind_name(enum gate_kind k);       /* "plan" … */
int gate_kind_from_name(const char *s);             /* -1 if unknown */
const char *gate_decision_name(enum gate_decision d);
int gate_decision_from_name(const char *s);
/* A decision as the screen, the headless lines and report.md say it: the keys' own word
 * where a kind names the answer otherwise (a skip is "refuse" at a shell or mcp gate,
 * "keep old plan" at a replan gate, "keep theirs" at a rewind gate, "decline" at an
 * elicit gate); any other name
 * (approve, reject, edit, withdrawn, unknown ones) as journaled. `kind` and `decision`
 * are journal names, either may be NULL. The journal keeps `skip` (DESIGN.md). */
const char *gate_decision_word(const char *kind, const char *decision);
/* Whether GATE_SKIP answers a gate of this kind: not the plan gate (nothing to skip) nor
 * the budget gate (raise the cap or stop). The engine takes a skip there as an approval;
 * the cockpit neither offers nor sends it. */
bool gate_kind_can_skip(enum gate_kind k);
/* How the shell gate let a command through (tool.result `approval`: allow_list,
 * allowed_for_run, edited, policy, gate_off) in a few words, or NULL when there is
 * nothing to add (operator: approved as shown; unknown names). Static. */
const char *gate_shell_approval_words(const char *approval);
/* Parses "plan,high" / "none" into a mask. false + *err naming the bad word. */
bool gate_parse_list(const char *list, unsigned *mask, char **err);

/* How gates with nobody to ask are answered. */
enum gate_mode {
	GATE_MODE_OPERATOR, /* an interactive front end answers with gatekeeper_answer */
	GATE_MODE_YES,      /* the policy approves every gate (--yes) */
	GATE_MODE_NONE,     /* no operator and no --yes: the first gate rejects (exit 3) */
};

struct gatekeeper;

/*
 * The gate policy a run starts with (which kinds are enabled, who answers) and the door
 * an operator answers through. Gates themselves are the engine's pending requests
 * (agent/engine/gates.c): an answer is a message to the engine, never a wait.
 */
struct gatekeeper *gatekeeper_new(struct bus *bus, unsigned mask, enum gate_mode mode);
void gatekeeper_free(struct gatekeeper *g);
bool gatekeeper_enabled(const struct gatekeeper *g, enum gate_kind k);
unsigned gatekeeper_mask(const struct gatekeeper *g);
enum gate_mode gatekeeper_mode(const struct gatekeeper *g);

/* The engine attaches how answers reach it (NULL detaches). */
typedef bool (*gate_answer_fn)(void *ctx, unsigned long gate_id, enum gate_decision d,
			       const char *json);
void gatekeeper_attach(struct gatekeeper *g, gate_answer_fn fn, void *ctx);

/* Operator side (any thread). Answers the gate with this id; false if no such gate is
 * open (answered elsewhere, withdrawn) or no engine is attached. `json` (copied) goes with
 * GATE_EDIT at a shell gate and with GATE_APPROVE at a shell or a budget gate (see
 * pev_answer). */
bool gatekeeper_answer(struct gatekeeper *g, unsigned long gate_id, enum gate_decision d,
		       const char *json);

#endif
