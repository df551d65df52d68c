/* bench_script — the 50-step run the whole-process benches script into the mock LLM server
 * (tests/mock/mock_llm.h): a plan of STEPS steps, each a write_file tool call, the
 * executor's result and the verifier's verdict, then the closing calls. The same replies
 * serve pevtui's prompts and the peer's plain ones (../shared/bench/peer-langgraph), each
 * found by the needles its prompts carry: the step's tag [tNNN] (in its description, which
 * both clients send to the executor and the verifier) and the role's own words. Replies are
 * OpenAI-compatible, streamed (SSE, one chunk per event) or plain JSON for a client that
 * does not ask to stream. */
#ifndef PEVTUI_BENCH_SCRIPT_H
#define PEVTUI_BENCH_SCRIPT_H

#include <stdbool.h>

#include "mock_llm.h"

#define BENCH_STEPS 50
#define BENCH_MODEL "bench-model"
#define BENCH_TASK "write one note per step"

enum bench_client {
	BENCH_PEVTUI, /* its planner, executor, verifier, whole-plan check and synthesis */
	BENCH_PEER,   /* the seeds' graph: planner, executor, verifier, finalize */
};

/* Pushes the whole run's replies: chain makes each step depend on the one before; stream
 * sends SSE (else one chat.completion JSON body). */
void bench_script(struct mock *m, enum bench_client who, bool chain, bool stream);

#endif
