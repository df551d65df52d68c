/* gate — gate kinds and decisions by name, the --gate list, and the policy a run
 * starts with; answers are forwarded to the engine attached. */
#include "config.h"

#include "gate.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

static const char *const kind_names[GATE__COUNT] = {
	[GATE_PLAN] = "plan",     [GATE_HIGH] = "high",     [GATE_REPLAN] = "replan",
	[GATE_SHELL] = "shell",   [GATE_BUDGET] = "budget", [GATE_STEP] = "step",
	[GATE_REWIND] = "rewind",
	[GATE_MCP] = "mcp",
	[GATE_ELICIT] = "elicit",
};

static const char *const decision_names[] = {
	[GATE_APPROVE] = "approve", [GATE_REJECT] = "reject",
	[GATE_SKIP] = "skip",       [GATE_EDIT] = "edit",
};

struct gatekeeper {
	unsigned mask;
	enum gate_mode mode;
	pthread_mutex_t lock;
	gate_answer_fn answer;
	void *ctx;
};

const char *gate_kind_name(enum gate_kind k)
{
	return (k >= 0 && k < GATE__COUNT) ? kind_names[k] : "unknown";
}

int gate_kind_from_name(const char *s)
{
	for (int i = 0; s && i < GATE__COUNT; i++)
		if (!strcmp(s, kind_names[i]))
			return i;
	return -1;
}

const char *gate_decision_name(enum gate_decision d)
{
	return (d >= GATE_APPROVE && d <= GATE_EDIT) ? decision_names[d] : "unknown";
}

int gate_decision_from_name(const char *s)
{
	for (int i = GATE_APPROVE; s && i <= GATE_EDIT; i++)
		if (!strcmp(s, decision_names[i]))
			return i;
	return -1;
}

const char *gate_decision_word(const char *kind, const char *decision)
{
	int k = kind ? gate_kind_from_name(kind) : -1;

	if (!decision || strcmp(decision, "skip") != 0)
		return decision;
	switch (k) {
	case GATE_SHELL:
	case GATE_MCP: return "refuse";
	case GATE_REPLAN: return "keep old plan";
	case GATE_REWIND: return "keep theirs";
	case GATE_ELICIT: return "decline";
	default: return decision;
	}
}

bool gate_kind_can_skip(enum gate_kind k)
{
	return k != GATE_PLAN && k != GATE_BUDGET;
}

const char *gate_shell_approval_words(const char *approval)
{
	static const struct {
		const char *name, *words;
	} words[] = {
		{"allow_list", "on the allow list"},
		{"allowed_for_run", "allowed for this run"},
		{"edited", "as edited by the operator"},
		{"policy", "approved by --yes"},
		{"gate_off", "no shell gate"},
	};

	for (size_t i = 0; approval && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(approval, words[i].name))
			return words[i].words;
	return NULL;
}

bool gate_parse_list(const char *list, unsigned *mask, char **err)
{
	char *copy = xstrdup(list ? list : ""), *save = NULL, *tok;
	unsigned m = 0;
	bool none = false, ok = true;

	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		int k;

		if (!strcmp(tok, "none")) {
			none = true;
			continue;
		}
		k = gate_kind_from_name(tok);
		if (k < 0) {
			/* Every kind, from the names table: the list cannot leave one out. */
			struct strbuf kinds = STRBUF_INIT;

			strbuf_init(&kinds);
			for (int i = 0; i < GATE__COUNT; i++)
				strbuf_addf(&kinds, "%s, ", kind_names[i]);
			*err = xasprintf("unknown gate \"%s\": use a comma list of %sor none", tok,
					 kinds.buf);
			strbuf_release(&kinds);
			ok = false;
			break;
		}
		m |= GATE_MASK(k);
	}
	if (ok && none && m) {
		*err = xstrdup("gate list mixes \"none\" with other gates");
		ok = false;
	}
	free(copy);
	if (ok)
		*mask = m;
	return ok;
}

struct gatekeeper *gatekeeper_new(struct bus *bus, unsigned mask, enum gate_mode mode)
{
	struct gatekeeper *g = xcalloc(1, sizeof(*g));

	(void)bus;
	g->mask = mask;
	g->mode = mode;
	if (pthread_mutex_init(&g->lock, NULL))
		fatal("cannot initialise gate lock");
	return g;
}

void gatekeeper_free(struct gatekeeper *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->lock);
	free(g);
}

bool gatekeeper_enabled(const struct gatekeeper *g, enum gate_kind k)
{
	return (g->mask & GATE_MASK(k)) != 0;
}

unsigned gatekeeper_mask(const struct gatekeeper *g)
{
	return g->mask;
}

enum gate_mode gatekeeper_mode(const struct gatekeeper *g)
{
	return g->mode;
}

void gatekeeper_attach(struct gatekeeper *g, gate_answer_fn fn, void *ctx)
{
	pthread_mutex_lock(&g->lock);
	g->answer = fn;
	g->ctx = ctx;
	pthread_mutex_unlock(&g->lock);
}

bool gatekeeper_answer(struct gatekeeper *g, unsigned long gate_id, enum gate_decision d,
		       const char *json)
{
	gate_answer_fn fn;
	void *ctx;

	pthread_mutex_lock(&g->lock);
	fn = g->answer;
	ctx = g->ctx;
	pthread_mutex_unlock(&g->lock);
	return fn ? fn(ctx, gate_id, d, json) : false;
}
