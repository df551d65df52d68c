/* sse — an incremental text/event-stream parser (WHATWG framing, lenient about spaces, and
 * two deliberate departures for servers that do not speak SSE when they fail). */
#include "config.h"

#include "sse.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "xalloc.h"

struct sse_parser {
	sse_event_fn fn;
	void *ctx;
	struct strbuf line;  /* the current, unfinished line */
	struct strbuf event; /* value of the last event: field */
	struct strbuf data;  /* data: lines joined by \n */
	bool have_data;      /* a data: field was seen (it may be empty) */
	bool after_cr;       /* the last byte was CR: a following LF belongs to it */
	unsigned bom;        /* bytes of a leading UTF-8 BOM matched so far; 3: past it */
	struct strbuf last_id; /* the last id: field (the stream's position, for resuming) */
	long retry_ms;         /* the last retry: field, -1 before one */
};

struct sse_parser *sse_new(sse_event_fn fn, void *ctx)
{
	struct sse_parser *p = xcalloc(1, sizeof(*p));

	p->fn = fn;
	p->ctx = ctx;
	strbuf_init(&p->line);
	strbuf_init(&p->event);
	strbuf_init(&p->data);
	strbuf_init(&p->last_id);
	p->retry_ms = -1;
	return p;
}

void sse_free(struct sse_parser *p)
{
	if (!p)
		return;
	strbuf_release(&p->line);
	strbuf_release(&p->event);
	strbuf_release(&p->data);
	strbuf_release(&p->last_id);
	free(p);
}

void sse_reset(struct sse_parser *p)
{
	strbuf_reset(&p->line);
	strbuf_reset(&p->event);
	strbuf_reset(&p->data);
	p->have_data = false;
	p->after_cr = false;
	p->bom = 0;
	strbuf_reset(&p->last_id);
	p->retry_ms = -1;
}

const char *sse_last_id(const struct sse_parser *p)
{
	return p->last_id.len ? p->last_id.buf : NULL;
}

long sse_retry_ms(const struct sse_parser *p)
{
	return p->retry_ms;
}

/* retry: only ASCII digits count (the specification ignores anything else). */
static void take_retry(struct sse_parser *p, const char *val, size_t n)
{
	long ms = 0;

	if (!n || n > 9)
		return;
	for (size_t i = 0; i < n; i++) {
		if (val[i] < '0' || val[i] > '9')
			return;
		ms = ms * 10 + (val[i] - '0');
	}
	p->retry_ms = ms;
}

static int dispatch(struct sse_parser *p)
{
	int rc = 0;

	if (p->have_data)
		rc = p->fn(p->ctx, p->event.buf, p->data.buf, p->data.len);
	strbuf_reset(&p->event);
	strbuf_reset(&p->data);
	p->have_data = false;
	return rc;
}

static int take_line(struct sse_parser *p, const char *s, size_t n)
{
	const char *colon, *val;
	size_t flen, vlen;

	if (n == 0)
		return dispatch(p);
	if (s[0] == ':')
		return 0; /* comment, e.g. OpenRouter's ": OPENROUTER PROCESSING" */
	/* Not SSE: Ollama reports a failure after streaming began as a bare JSON line. A spec
	 * parser would drop it as an unknown field; hand it over whole, as event "raw". */
	if (s[0] == '{') {
		struct strbuf raw = STRBUF_INIT;
		int rc;

		strbuf_init(&raw);
		strbuf_add(&raw, s, n);
		rc = p->fn(p->ctx, SSE_EVENT_RAW, raw.buf, raw.len);
		strbuf_release(&raw);
		return rc;
	}
	colon = memchr(s, ':', n);
	if (colon) {
		flen = (size_t)(colon - s);
		val = colon + 1;
		vlen = n - flen - 1;
		if (vlen && *val == ' ') {
			val++;
			vlen--;
		}
	} else {
		flen = n;
		val = s + n;
		vlen = 0;
	}
	/* llama.cpp before PR #16109 sent `error: {json}`: a field the specification
	 * ignores, which hid the failure. Taken as the data of an "error" event. */
	bool is_error = flen == 5 && !memcmp(s, "error", 5);

	if ((flen == 4 && !memcmp(s, "data", 4)) || is_error) {
		if (p->have_data)
			strbuf_addc(&p->data, '\n');
		if (p->data.len + vlen > SSE_MAX_EVENT)
			return SSE_TOO_LARGE;
		strbuf_add(&p->data, val, vlen);
		p->have_data = true;
		if (is_error) {
			strbuf_reset(&p->event);
			strbuf_adds(&p->event, SSE_EVENT_ERROR);
		}
	} else if (flen == 5 && !memcmp(s, "event", 5)) {
		strbuf_reset(&p->event);
		strbuf_add(&p->event, val, vlen < 256 ? vlen : 256);
	} else if (flen == 2 && !memcmp(s, "id", 2)) {
		/* An id holding NUL is ignored (the specification's rule); a long one too. */
		if (!memchr(val, '\0', vlen) && vlen <= SSE_MAX_ID) {
			strbuf_reset(&p->last_id);
			strbuf_add(&p->last_id, val, vlen);
		}
	} else if (flen == 5 && !memcmp(s, "retry", 5)) {
		take_retry(p, val, vlen);
	}
	/* Unknown fields do not matter to us. */
	return 0;
}

/* Skips a UTF-8 byte-order mark at the very start of the stream (split anywhere); returns
 * how many bytes of buf it took. A partial match that fails is given back as line text. */
static size_t skip_bom(struct sse_parser *p, const char *buf, size_t n)
{
	static const char bom[3] = {'\xEF', '\xBB', '\xBF'};
	size_t i = 0;

	while (p->bom < 3 && i < n && buf[i] == bom[p->bom]) {
		p->bom++;
		i++;
	}
	if (p->bom < 3 && i < n) {
		/* Not a BOM after all: the bytes matched belong to the first line. */
		strbuf_add(&p->line, bom, p->bom);
		p->bom = 3;
	}
	return i;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t n)
{
	size_t i = 0;
	int rc;

	if (p->bom < 3) {
		size_t k = skip_bom(p, buf, n);

		buf += k;
		n -= k;
		if (p->bom < 3)
			return 0; /* all of it a BOM prefix so far */
	}

	if (p->after_cr && n && buf[0] == '\n')
		i = 1;
	p->after_cr = false;
	while (i < n) {
		/* memchr twice beats a byte loop: lone CRs are rare, LFs are everywhere. */
		const char *lf = memchr(buf + i, '\n', n - i);
		const char *cr = memchr(buf + i, '\r', (lf ? (size_t)(lf - buf) : n) - i);
		size_t j = cr ? (size_t)(cr - buf) : lf ? (size_t)(lf - buf) : n;

		if (j == n) {
			if (p->line.len + (n - i) > SSE_MAX_EVENT)
				return SSE_TOO_LARGE;
			strbuf_add(&p->line, buf + i, n - i);
			return 0;
		}
		/* A whole line without copying when nothing is pending. */
		if (p->line.len) {
			strbuf_add(&p->line, buf + i, j - i);
			rc = take_line(p, p->line.buf, p->line.len);
			strbuf_reset(&p->line);
		} else {
			rc = take_line(p, buf + i, j - i);
		}
		if (rc)
			return rc;
		if (buf[j] == '\r') {
			if (j + 1 < n && buf[j + 1] == '\n')
				j++;
			else if (j + 1 == n)
				p->after_cr = true;
		}
		i = j + 1;
	}
	return 0;
}

int sse_finish(struct sse_parser *p)
{
	int rc = 0;

	if (p->bom > 0 && p->bom < 3) {
		strbuf_add(&p->line, "\xEF\xBB\xBF", p->bom);
		p->bom = 3;
	}
	if (p->line.len) {
		rc = take_line(p, p->line.buf, p->line.len);
		strbuf_reset(&p->line);
		if (rc)
			return rc;
	}
	p->after_cr = false;
	return dispatch(p);
}
