/* sse — an incremental parser for text/event-stream bodies, fed in chunks split anywhere. */
#ifndef PEVTUI_SSE_H
#define PEVTUI_SSE_H

#include <stddef.h>

/*
 * Called once per complete event. `event` is the value of the last `event:` line ("" when
 * the event had none); `data` joins the `data:` lines with "\n" and is NUL-terminated.
 * Both are borrowed for the duration of the call. Return 0 to go on, anything else to stop
 * the parse (sse_feed then returns that value).
 */
/*
 * Two departures from the specification, both for servers that break SSE when they fail:
 * an `error:` field (older llama.cpp) is taken as data of an event named SSE_EVENT_ERROR,
 * and a line starting with '{' (Ollama's raw JSON error) is handed over at once, alone, as
 * an event named SSE_EVENT_RAW. A leading UTF-8 byte-order mark is dropped.
 */
#define SSE_EVENT_ERROR "error"
#define SSE_EVENT_RAW "raw"

typedef int (*sse_event_fn)(void *ctx, const char *event, const char *data, size_t len);

struct sse_parser;

/* An event larger than this is refused (sse_feed returns SSE_TOO_LARGE). */
#define SSE_MAX_EVENT (16u * 1024 * 1024)
enum { SSE_TOO_LARGE = -1000 };

/* Caller owns the parser; free it with sse_free. */
struct sse_parser *sse_new(sse_event_fn fn, void *ctx);
void sse_free(struct sse_parser *p); /* NULL ok */
/* Forgets any partial line or event (a retried transfer starts clean). */
void sse_reset(struct sse_parser *p);
/* The value of the last `id:` field seen (NULL before one, or after an empty `id:`): where
 * a resumed stream starts (Last-Event-ID). Ids longer than SSE_MAX_ID are ignored. */
#define SSE_MAX_ID 1024
const char *sse_last_id(const struct sse_parser *p);
/* The last `retry:` field, in milliseconds; -1 before one. */
long sse_retry_ms(const struct sse_parser *p);
/* Feeds bytes; lines may end in LF, CRLF or CR, split anywhere between calls. */
int sse_feed(struct sse_parser *p, const char *buf, size_t n);
/*
 * End of the body: a last line without its newline is taken, and an event whose blank
 * line never came is delivered, so callers judge completeness by content (message_stop,
 * [DONE]) rather than by framing.
 */
int sse_finish(struct sse_parser *p);

#endif
