/* sse — an incremental text/event-stream parser (WHATWG framing, lenient about spaces). */
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
};

struct sse_parser *sse_new(sse_event_fn fn, void *ctx)
{
	struct sse_parser *p = xcalloc(1, sizeof(*p));

	p->fn = fn;
	p->ctx = ctx;
	strbuf_init(&p->line);
	strbuf_init(&p->event);
	strbuf_init(&p->data);
	return p;
}

void sse_free(struct sse_parser *p)
{
	if (!p)
		return;
	strbuf_release(&p->line);
	strbuf_release(&p->event);
	strbuf_release(&p->data);
	free(p);
}

void sse_reset(struct sse_parser *p)
{
	strbuf_reset(&p->line);
	strbuf_reset(&p->event);
	strbuf_reset(&p->data);
	p->have_data = false;
	p->after_cr = false;
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
	if (flen == 4 && !memcmp(s, "data", 4)) {
		if (p->have_data)
			strbuf_addc(&p->data, '\n');
		if (p->data.len + vlen > SSE_MAX_EVENT)
			return SSE_TOO_LARGE;
		strbuf_add(&p->data, val, vlen);
		p->have_data = true;
	} else if (flen == 5 && !memcmp(s, "event", 5)) {
		strbuf_reset(&p->event);
		strbuf_add(&p->event, val, vlen < 256 ? vlen : 256);
	}
	/* id:, retry: and unknown fields do not matter to us. */
	return 0;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t n)
{
	size_t i = 0;
	int rc;

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

	if (p->line.len) {
		rc = take_line(p, p->line.buf, p->line.len);
		strbuf_reset(&p->line);
		if (rc)
			return rc;
	}
	p->after_cr = false;
	return dispatch(p);
}
