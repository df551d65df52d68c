/* events — event types, building events as JSON lines, parsing them back. */
#include "config.h"

#include "events.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "strbuf.h"
#include "xalloc.h"

static const char *const type_names[EV__COUNT] = {
	[EV_RUN_START] = "run.start",
	[EV_PLAN_PROPOSED] = "plan.proposed",
	[EV_PLAN_ADOPTED] = "plan.adopted",
	[EV_GATE_OPEN] = "gate.open",
	[EV_GATE_DECISION] = "gate.decision",
	[EV_STEP_START] = "step.start",
	[EV_LLM_CALL] = "llm.call",
	[EV_LLM_DELTA] = "llm.delta",
	[EV_LLM_RETRY] = "llm.retry",
	[EV_TOOL_CALL] = "tool.call",
	[EV_TOOL_RESULT] = "tool.result",
	[EV_STEP_OUTPUT] = "step.output",
	[EV_VERIFY_VERDICT] = "verify.verdict",
	[EV_STEP_END] = "step.end",
	[EV_STEP_EDIT] = "step.edit",
	[EV_NOTICE] = "notice",
	[EV_RUN_FINAL] = "run.final",
	[EV_RUN_END] = "run.end",
	[EV_STEP_STATE] = "step.state",
	[EV_OPERATOR_COMMAND] = "operator.command",
	[EV_RUN_REOPEN] = "run.reopen",
	[EV_RUN_RESUME] = "run.resume",
	[EV_STEP_CHANGES] = "step.changes",
	[EV_STEP_CHECKPOINT] = "step.checkpoint",
};

const char *event_type_name(enum event_type t)
{
	return (t >= 0 && t < EV__COUNT) ? type_names[t] : "unknown";
}

int event_type_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < EV__COUNT; i++)
		if (strcmp(type_names[i], name) == 0)
			return i;
	return -1;
}

bool event_type_is_ephemeral(enum event_type t)
{
	return t == EV_LLM_DELTA;
}

void event_timestamp(char *buf, unsigned long bufsize)
{
	/* The date and time to the second, formatted once per second per thread. */
	static _Thread_local time_t last_sec = (time_t)-1;
	static _Thread_local char base[24];
	struct timespec ts;
	long ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (ts.tv_sec != last_sec) {
		struct tm tm;

		gmtime_r(&ts.tv_sec, &tm);
		strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
		last_sec = ts.tv_sec;
	}
	ms = ts.tv_nsec / 1000000L;
	if (bufsize >= 24 + 5 && strlen(base) == 19) {
		memcpy(buf, base, 19);
		buf[19] = '.';
		buf[20] = (char)('0' + ms / 100);
		buf[21] = (char)('0' + ms / 10 % 10);
		buf[22] = (char)('0' + ms % 10);
		buf[23] = 'Z';
		buf[24] = '\0';
	} else {
		snprintf(buf, bufsize, "%s.%03ldZ", base, ms);
	}
}

/*
 * Printing an event: the bytes cJSON_PrintUnformatted gives, without its costs where
 * they add up over a run's hundreds of events: every number went through sprintf and
 * sscanf (whole numbers, most of them, are written directly here) and the fields were
 * moved into a second object only to be printed once.
 *
 * One difference: strings escape more (STRBUF_JSON_TERMINAL). Model text lands in
 * journals that people `cat`, `tail -f` and `grep`, so besides C0 controls the characters
 * a terminal or an editor acts on are written as \uXXXX escapes too: DEL, the C1 controls
 * U+0080–U+009F (one of them, U+009B, is a CSI on some terminals), the bidirectional
 * overrides and isolates U+202A–U+202E and U+2066–U+2069 (text that reads differently
 * than it is), and the line separators U+2028/U+2029. The JSON means the same.
 */

static void put_string(struct strbuf *sb, const char *s)
{
	s = s ? s : "";
	strbuf_add_json(sb, s, strlen(s), STRBUF_JSON_TERMINAL);
}

static void put_number(struct strbuf *sb, double d)
{
	char buf[32];
	int n;

	if (isnan(d) || isinf(d)) {
		strbuf_add(sb, "null", 4);
		return;
	}
	if (d > -1e15 && d < 1e15 && d == (double)(long long)d && !(d == 0 && signbit(d))) {
		/* What %1.15g prints for a whole number of up to 15 digits. */
		unsigned long long v = d < 0 ? (unsigned long long)-(long long)d : (unsigned long long)d;
		char *e = buf + sizeof(buf), *q = e;

		do
			*--q = (char)('0' + v % 10);
		while (v /= 10);
		if (d < 0)
			*--q = '-';
		strbuf_add(sb, q, (size_t)(e - q));
		return;
	}
	/* cJSON's rule: 15 significant digits unless they do not read back as the same
	 * double, then 17; the locale's decimal point written as '.'. */
	n = snprintf(buf, sizeof(buf), "%1.15g", d);
	{
		double back = strtod(buf, NULL);
		double big = fabs(back) > fabs(d) ? fabs(back) : fabs(d);

		if (!(fabs(back - d) <= big * DBL_EPSILON))
			n = snprintf(buf, sizeof(buf), "%1.17g", d);
	}
	{
		char point = localeconv()->decimal_point[0];

		for (int i = 0; point != '.' && i < n; i++)
			if (buf[i] == point)
				buf[i] = '.';
	}
	strbuf_add(sb, buf, (size_t)n);
}

static void put_value(struct strbuf *sb, const cJSON *item);

static void put_members(struct strbuf *sb, const cJSON *child, bool object, bool comma)
{
	for (; child; child = child->next) {
		if (comma)
			strbuf_addc(sb, ',');
		comma = true;
		if (object) {
			put_string(sb, child->string);
			strbuf_addc(sb, ':');
		}
		put_value(sb, child);
	}
}

static void put_value(struct strbuf *sb, const cJSON *item)
{
	switch (item->type & 0xFF) {
	case cJSON_NULL: strbuf_add(sb, "null", 4); break;
	case cJSON_False: strbuf_add(sb, "false", 5); break;
	case cJSON_True: strbuf_add(sb, "true", 4); break;
	case cJSON_Number: put_number(sb, item->valuedouble); break;
	case cJSON_String: put_string(sb, item->valuestring); break;
	case cJSON_Raw:
		if (!item->valuestring)
			fatal("event_build: a raw JSON value without text");
		strbuf_adds(sb, item->valuestring);
		break;
	case cJSON_Array:
		strbuf_addc(sb, '[');
		put_members(sb, item->child, false, false);
		strbuf_addc(sb, ']');
		break;
	case cJSON_Object:
		strbuf_addc(sb, '{');
		put_members(sb, item->child, true, false);
		strbuf_addc(sb, '}');
		break;
	default:
		fatal("event_build: a JSON value of unknown type %d", item->type);
	}
}

struct event *event_build(enum event_type t, unsigned long seq, cJSON *fields)
{
	struct event *ev = event_print(t, seq, fields);

	cJSON_Delete(fields);
	return ev;
}

char *event_number_text(double d)
{
	struct strbuf sb = STRBUF_INIT;

	put_number(&sb, d);
	return strbuf_detach(&sb);
}

/* Room before an unstamped event's text for its header, {"seq":N,"ts":"…" (at most 7 +
 * 20 + 7 + 40 + 1 bytes). */
#define HEAD_ROOM 80

/* The event with its text after the header (",\"type\":…}") at ev->json + HEAD_ROOM. */
static struct event *print_body(enum event_type t, const cJSON *fields)
{
	struct event *ev = xcalloc(1, sizeof(*ev));
	struct strbuf sb;

	if (fields && !cJSON_IsObject(fields))
		fatal("event_build: fields of %s are not an object", event_type_name(t));
	/* Most lines are a few hundred bytes: room for them at once, not by doublings. */
	sb.cap = 640;
	sb.buf = xmalloc(sb.cap);
	sb.len = HEAD_ROOM;
	strbuf_add(&sb, ",\"type\":", 8);
	put_string(&sb, event_type_name(t));
	if (fields) {
		/* Fields that would shadow the header are left out (the first byte tells most
		 * names from all three). */
		for (const cJSON *f = fields->child; f; f = f->next) {
			const char *k = f->string;

			if ((*k == 's' || *k == 't') &&
			    (!strcmp(k, "seq") || !strcmp(k, "ts") || !strcmp(k, "type")))
				continue;
			strbuf_addc(&sb, ',');
			put_string(&sb, f->string);
			strbuf_addc(&sb, ':');
			put_value(&sb, f);
		}
		ev->step_id = xstrdup(jsonx_str(fields, "step_id"));
	}
	strbuf_addc(&sb, '}');
	ev->type = t;
	ev->json = strbuf_detach(&sb);
	return ev;
}

/* The header for seq and the time ts (as JSON needs no escape): {"seq":N,"ts":"TS" —
 * what put_number and put_string write. Returns its length (< HEAD_ROOM). */
static size_t print_head(char *out, unsigned long seq, const char *ts)
{
	char digits[24], *e = digits + sizeof(digits), *q = e;
	size_t n = 0, nd, nt = strnlen(ts, 40);

	do
		*--q = (char)('0' + seq % 10);
	while (seq /= 10);
	nd = (size_t)(e - q);
	memcpy(out, "{\"seq\":", 7);
	n = 7;
	memcpy(out + n, q, nd);
	n += nd;
	memcpy(out + n, ",\"ts\":\"", 7);
	n += 7;
	memcpy(out + n, ts, nt);
	n += nt;
	out[n++] = '"';
	return n;
}

/* Puts the header in front of the body print_body made, moving the body once. ts is
 * event_timestamp's (no byte to escape). The seq is written as put_number writes it, or
 * with `all_digits` in digits whatever its size (as the bus always stamped it). */
static void place_head(struct event *ev, unsigned long seq, const char *ts, bool all_digits)
{
	char head[HEAD_ROOM];
	size_t n, len;

	if (all_digits || seq < 1000000000000000UL) {
		n = print_head(head, seq, ts);
	} else {
		struct strbuf sb = STRBUF_INIT;

		strbuf_add(&sb, "{\"seq\":", 7);
		put_number(&sb, (double)seq);
		strbuf_add(&sb, ",\"ts\":", 6);
		put_string(&sb, ts);
		n = sb.len < HEAD_ROOM ? sb.len : 0;
		memcpy(head, sb.buf, n);
		strbuf_release(&sb);
		if (!n)
			fatal("event: a timestamp too long: %.40s", ts);
	}
	len = strlen(ev->json + HEAD_ROOM);
	memmove(ev->json + n, ev->json + HEAD_ROOM, len + 1);
	memcpy(ev->json, head, n);
	ev->seq = seq;
}

struct event *event_print(enum event_type t, unsigned long seq, const cJSON *fields)
{
	struct event *ev = print_body(t, fields);
	char ts[40];

	event_timestamp(ts, sizeof(ts));
	place_head(ev, seq, ts, false);
	return ev;
}

struct event *event_print_unstamped(enum event_type t, const cJSON *fields)
{
	return print_body(t, fields);
}

void event_stamp(struct event *ev, unsigned long seq, char *ts)
{
	event_timestamp(ts, 40);
	place_head(ev, seq, ts, true);
}

/*
 * Reading a journal line: the line must be one whole JSON object and nothing else, but only
 * three of its fields matter here (type, seq, step_id), and readers parse ev->json
 * themselves. So the line is checked by a scanner that builds no tree (loading a journal
 * was dominated by cJSON building and freeing one per line). It accepts what cJSON's
 * parser accepts for what journals hold: whitespace is any byte up to 32, string bytes
 * are taken as they are, escapes must be JSON's; it is stricter only on number syntax
 * (JSON's grammar, where cJSON takes whatever strtod makes of [0-9+-.eE]).
 */
struct span {
	const char *p, *end; /* the value's text; p == NULL when the key was not seen */
	char kind;           /* '"', 'n' (number), or another first byte */
	bool escaped;        /* a string holding backslash escapes */
	double number;       /* kind 'n' */
};

#define SCAN_NESTING_LIMIT 1000 /* cJSON's CJSON_NESTING_LIMIT */

static const char *skip_ws(const char *p)
{
	while (*p && (unsigned char)*p <= 32)
		p++;
	return p;
}

/* cJSON's parse_hex4: 0 for anything but four hex digits. */
static unsigned hex4(const char *p)
{
	unsigned h = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		h <<= 4;
		if (c >= '0' && c <= '9')
			h += (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			h += (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			h += (unsigned)(c - 'A' + 10);
		else
			return 0;
	}
	return h;
}

/* p at the opening quote; returns the byte after the closing one, or NULL. As cJSON: the
 * end is the first quote not after a backslash, then each escape must be one of JSON's
 * (\u with a valid surrogate pair when it starts one). */
static const char *scan_string(const char *p, bool *escaped)
{
	const char *end = p + 1, *first_esc = NULL;

	for (;;) {
		end += strcspn(end, "\"\\");
		if (*end == '"')
			break;
		if (!*end || !end[1])
			return NULL;
		if (!first_esc)
			first_esc = end;
		end += 2;
	}
	if (!first_esc)
		return end + 1;
	*escaped = true;
	for (p = first_esc; p < end; p++) {
		if (*p != '\\')
			continue;
		if (p[1] == 'u') {
			unsigned c;

			if (end - p < 6)
				return NULL;
			c = hex4(p + 2);
			if (c >= 0xDC00 && c <= 0xDFFF)
				return NULL;
			if (c >= 0xD800 && c <= 0xDBFF) {
				if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
					return NULL;
				c = hex4(p + 8);
				if (c < 0xDC00 || c > 0xDFFF)
					return NULL;
				p += 6;
			}
			p += 5;
		} else if (strchr("\"\\/bfnrt", p[1])) {
			p++;
		} else {
			return NULL;
		}
	}
	return end + 1;
}

/* As cJSON: the longest prefix strtod takes of up to 63 bytes of [0-9+-.eE]. */
static const char *scan_number(const char *p, double *value)
{
	char buf[64], *after;
	size_t n = 0;

	while (n < sizeof(buf) - 1 && p[n] && strchr("0123456789+-.eE", p[n])) {
		buf[n] = p[n];
		n++;
	}
	buf[n] = '\0';
	*value = strtod(buf, &after);
	return after == buf ? NULL : p + (after - buf);
}

static const char *scan_value(const char *p, int depth, struct span *sp);

/* p at '{' or '['. At depth 0 (the line's object), fills the three spans. */
static const char *scan_container(const char *p, int depth, struct span *want)
{
	const char close = *p == '{' ? '}' : ']';
	const bool object = *p == '{';

	if (depth >= SCAN_NESTING_LIMIT)
		return NULL;
	p = skip_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		struct span v = {NULL, NULL, 0, false, 0};
		struct span *slot = NULL;

		if (object) {
			const char *key = p;
			bool esc = false;

			if (*p != '"' || !(p = scan_string(p, &esc)))
				return NULL;
			if (want && !esc) {
				size_t n = (size_t)(p - key) - 2;
				static const char *const names[3] = {"type", "seq", "step_id"};

				for (int i = 0; i < 3; i++)
					if (strlen(names[i]) == n && !memcmp(key + 1, names[i], n))
						slot = want[i].p ? NULL : &want[i];
			}
			p = skip_ws(p);
			if (*p != ':')
				return NULL;
			p = skip_ws(p + 1);
		}
		if (!(p = scan_value(p, depth + 1, &v)))
			return NULL;
		if (slot)
			*slot = v;
		p = skip_ws(p);
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = skip_ws(p + 1);
	}
}

static const char *scan_value(const char *p, int depth, struct span *sp)
{
	const char *start = p;

	sp->kind = *p;
	switch (*p) {
	case '"':
		p = scan_string(p, &sp->escaped);
		break;
	case '{':
	case '[':
		p = scan_container(p, depth, NULL);
		break;
	case 't':
		p = strncmp(p, "true", 4) ? NULL : p + 4;
		break;
	case 'f':
		p = strncmp(p, "false", 5) ? NULL : p + 5;
		break;
	case 'n':
		p = strncmp(p, "null", 4) ? NULL : p + 4;
		sp->kind = 'z';
		break;
	default:
		if (*p != '-' && (*p < '0' || *p > '9'))
			return NULL;
		p = scan_number(p, &sp->number);
		sp->kind = 'n';
		break;
	}
	if (p) {
		sp->p = start;
		sp->end = p;
	}
	return p;
}

/* A string span's value, unescaped (a copy). */
static char *span_string(const struct span *sp)
{
	char *s;
	cJSON *str;

	if (!sp->escaped)
		return xstrndup(sp->p + 1, (size_t)(sp->end - sp->p) - 2);
	str = cJSON_ParseWithLength(sp->p, (size_t)(sp->end - sp->p));
	s = xstrdup(cJSON_IsString(str) ? str->valuestring : "");
	cJSON_Delete(str);
	return s;
}

struct event *event_from_line(const char *line, char **err)
{
	struct span f[3] = {{NULL, NULL, 0, false, 0}, {NULL, NULL, 0, false, 0},
			    {NULL, NULL, 0, false, 0}}; /* type, seq, step_id */
	const char *p;
	struct event *ev;
	char *type;
	double seq;
	int t;

	/* A UTF-8 byte-order mark is skipped, as cJSON does. Nothing may follow the object:
	 * two events glued together are not one event. */
	p = skip_ws(strncmp(line, "\xEF\xBB\xBF", 3) ? line : line + 3);
	if (*p != '{' || !(p = scan_container(p, 0, f)) || *skip_ws(p)) {
		*err = xstrdup("not a JSON object");
		return NULL;
	}
	type = f[0].p && f[0].kind == '"' ? span_string(&f[0]) : NULL;
	t = event_type_from_name(type);
	if (t < 0) {
		*err = xasprintf("unknown event type \"%s\"", type ? type : "(missing)");
		free(type);
		return NULL;
	}
	free(type);
	/* A whole number that fits: the bound is checked before the cast. */
	seq = f[1].p && f[1].kind == 'n' ? f[1].number : -1;
	if (!(seq >= 0 && seq <= 9007199254740992.0) || seq != (double)(unsigned long)seq) {
		*err = xstrdup("event without a valid \"seq\"");
		return NULL;
	}
	ev = xcalloc(1, sizeof(*ev));
	ev->type = (enum event_type)t;
	ev->seq = (unsigned long)seq;
	ev->step_id = f[2].p && f[2].kind == '"' ? span_string(&f[2]) : NULL;
	{
		/* The line is already one compact object: keep it rather than print it again. */
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
			n--;
		ev->json = xstrndup(line, n);
	}
	return ev;
}

struct event *event_dup(const struct event *ev)
{
	struct event *d = xcalloc(1, sizeof(*d));

	d->type = ev->type;
	d->seq = ev->seq;
	d->step_id = xstrdup(ev->step_id);
	d->json = xstrdup(ev->json);
	return d;
}

void event_free(struct event *ev)
{
	if (!ev)
		return;
	free(ev->step_id);
	free(ev->json);
	free(ev);
}

char *event_changes_summary(const cJSON *o, int max_names)
{
	const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files"), *f;
	const cJSON *stat = cJSON_GetObjectItemCaseSensitive(o, "stat");
	const cJSON *more = cJSON_GetObjectItemCaseSensitive(o, "files_more");
	const cJSON *shared = cJSON_GetObjectItemCaseSensitive(o, "shared");
	const cJSON *cut = cJSON_GetObjectItemCaseSensitive(o, "cut");
	struct strbuf sb;
	int n = 0, total = cJSON_GetArraySize(files);

	if (total == 0)
		return xstrdup(cJSON_IsTrue(cut) ? "workspace: unchanged by the attempt a stop cut off"
						 : "workspace: unchanged");
	strbuf_init(&sb);
	strbuf_addf(&sb, "workspace: %s (",
		    cJSON_IsString(stat) ? stat->valuestring : "changed");
	cJSON_ArrayForEach(f, files)
	{
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
		const cJSON *ch = cJSON_GetObjectItemCaseSensitive(f, "change");

		if (n == max_names)
			break;
		strbuf_addf(&sb, "%s%s%s", n ? ", " : "",
			    cJSON_IsString(ch) && !strcmp(ch->valuestring, "added")     ? "+"
			    : cJSON_IsString(ch) && !strcmp(ch->valuestring, "deleted") ? "-"
											 : "",
			    cJSON_IsString(path) ? path->valuestring : "?");
		n++;
	}
	if (total > n || cJSON_IsNumber(more))
		strbuf_addf(&sb, ", and %d more",
			    total - n + (cJSON_IsNumber(more) ? more->valueint : 0));
	strbuf_addc(&sb, ')');
	if (cJSON_IsNumber(shared) && shared->valueint > 0)
		strbuf_addf(&sb,
			    "; %d changed while another step ran too (which one changed %s is "
			    "not known)",
			    shared->valueint, shared->valueint == 1 ? "it" : "them");
	if (cJSON_IsTrue(cut))
		strbuf_adds(&sb, " — by an attempt a stop cut off, found on --resume");
	return strbuf_detach(&sb);
}
