/* provider — names and memory helpers shared by every provider. */
#include "config.h"

#include "provider.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static const char *const role_names[ROLE__COUNT] = {"planner", "executor", "verifier"};

const char *llm_role_name(enum llm_role r)
{
	return (r >= 0 && r < ROLE__COUNT) ? role_names[r] : "unknown";
}

bool llm_stop_is_cutoff(const char *stop_reason)
{
	/* Anthropic: max_tokens; OpenAI and the compatible servers: length; the Responses
	 * API and some proxies: max_output_tokens. */
	static const char *const cut[] = {"max_tokens", "length", "max_output_tokens"};

	for (size_t i = 0; stop_reason && i < sizeof(cut) / sizeof(cut[0]); i++)
		if (!strcmp(stop_reason, cut[i]))
			return true;
	return false;
}

bool llm_stop_notable(const char *stop_reason)
{
	return llm_stop_is_cutoff(stop_reason) ||
	       (stop_reason && (!strcmp(stop_reason, "content_filter") ||
				!strcmp(stop_reason, "refusal")));
}

int llm_role_from_name(const char *s)
{
	for (int i = 0; s && i < ROLE__COUNT; i++)
		if (!strcmp(s, role_names[i]))
			return i;
	return -1;
}

const char *llm_purpose_name(enum llm_purpose p)
{
	switch (p) {
	case PURPOSE_PLAN: return "plan";
	case PURPOSE_REPLAN: return "replan";
	case PURPOSE_EXECUTE: return "execute";
	case PURPOSE_VERIFY: return "verify";
	case PURPOSE_FINAL_CHECK: return "final_check";
	case PURPOSE_SYNTHESIZE: return "synthesize";
	}
	return "unknown";
}

int provider_complete(struct provider *p, const struct llm_request *req,
		      const struct llm_hooks *hooks, struct llm_response *out, char **err)
{
	memset(out, 0, sizeof(*out));
	return p->ops->complete(p, req, hooks, out, err);
}

void provider_free(struct provider *p)
{
	if (p)
		p->ops->destroy(p);
}

void llm_tool_call_release(struct llm_tool_call *c)
{
	free(c->id);
	free(c->name);
	free(c->input_json);
	memset(c, 0, sizeof(*c));
}

void llm_response_release(struct llm_response *r)
{
	free(r->text);
	for (size_t i = 0; i < r->n_calls; i++)
		llm_tool_call_release(&r->calls[i]);
	free(r->calls);
	free(r->stop_reason);
	free(r->model);
	memset(r, 0, sizeof(*r));
}

void llm_msg_release(struct llm_msg *m)
{
	free(m->text);
	for (size_t i = 0; i < m->n_calls; i++)
		llm_tool_call_release(&m->calls[i]);
	free(m->calls);
	for (size_t i = 0; i < m->n_results; i++) {
		free(m->results[i].call_id);
		free(m->results[i].content);
	}
	free(m->results);
	memset(m, 0, sizeof(*m));
}
