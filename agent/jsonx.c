/* jsonx — finding and parsing the one JSON object in untrusted model text, and reading its
 * values as tolerantly as their meaning allows. */
#include "config.h"

#include "jsonx.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

/*
 * Which object wins when the text holds several:
 *  1. Fenced blocks (a line starting with ```, up to the next line starting with ```; an
 *     unclosed fence runs to the end) tagged ```json are tried in order; the first that
 *     holds a JSON-looking object wins.
 *  2. Then every fenced block (bare ``` or another tag), in order, the same way.
 *  3. Otherwise the first JSON-looking object of the whole text wins.
 * "JSON-looking" means a '{' whose next non-blank character is '"' or '}', so prose such as
 * "use {braces}" before the answer is skipped. The winner is authoritative: if it is
 * malformed, that error is reported even when a later object would parse, because quietly
 * taking a second, perhaps illustrative, object is worse than asking again.
 * Everything here is a single forward pass over the text: no quadratic rescans.
 */

struct span {
	const char *start; /* the '{' */
	const char *end;   /* one past the matching '}' */
};

/* Line and column (1-based; the column counts UTF-8 characters) of `pos` in `text`. */
static void line_col(const char *text, const char *pos, size_t *line, size_t *col)
{
	size_t l = 1, c = 1;

	for (const char *p = text; p < pos && *p; p++) {
		if (*p == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)*p & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int looks_like_json(const char *brace, const char *limit)
{
	const char *p = brace + 1;

	while (p < limit && is_blank(*p))
		p++;
	return p < limit && (*p == '"' || *p == '}');
}

/*
 * Scans the object starting at `s` (a '{') up to `limit`, outside strings, tracking depth
 * and trailing commas. Returns 0 and sets span on success; otherwise sets *err (positions
 * relative to `text`).
 */
static int scan_object(const char *text, const char *s, const char *limit, int max_depth,
                       struct span *out, char **err)
{
	int depth = 0;
	int in_str = 0;
	const char *last_comma = NULL; /* the last ',' seen with only blanks after it */
	size_t line, col;

	for (const char *p = s; p < limit; p++) {
		char c = *p;

		if (in_str) {
			if (c == '\\') {
				if (p + 1 < limit)
					p++;
			} else if (c == '"') {
				in_str = 0;
			}
			continue;
		}
		if (is_blank(c))
			continue;
		if ((c == '}' || c == ']') && last_comma) {
			line_col(text, last_comma, &line, &col);
			*err = xasprintf("trailing comma before '%c' at line %zu, column %zu", c,
			                 line, col);
			return -1;
		}
		last_comma = NULL;
		switch (c) {
		case '"': in_str = 1; break;
		case ',': last_comma = p; break;
		case '{':
		case '[':
			if (++depth > max_depth) {
				line_col(text, p, &line, &col);
				*err = xasprintf("the JSON is nested deeper than %d levels "
				                 "(at line %zu, column %zu)",
				                 max_depth, line, col);
				return -1;
			}
			break;
		case '}':
		case ']':
			if (--depth == 0) {
				out->start = s;
				out->end = p + 1;
				return 0;
			}
			break;
		default: break;
		}
	}
	line_col(text, s, &line, &col);
	*err = xasprintf("the JSON object starting at line %zu, column %zu is never closed "
	                 "(the answer may have been cut off)",
	                 line, col);
	return -1;
}

/* First JSON-looking object in [from, limit). 1 found, 0 none, -1 error in *err. */
static int find_object(const char *text, const char *from, const char *limit, int max_depth,
                       struct span *out, char **err)
{
	for (const char *p = from; p < limit; p++) {
		p = memchr(p, '{', (size_t)(limit - p));
		if (!p)
			return 0;
		if (looks_like_json(p, limit))
			return scan_object(text, p, limit, max_depth, out, err) == 0 ? 1 : -1;
	}
	return 0;
}

/*
 * A fence is ``` at the start of a line (blanks allowed before it). Searching with memchr
 * over an explicit end, never strstr/strchr on the rest of the text: string functions that
 * measure the whole remainder on each call (as sanitizer interceptors do) would make a text
 * full of backticks quadratic.
 */
static const char *find_fence(const char *text, const char *from, const char *end)
{
	for (const char *p = from; p + 3 <= end; p++) {
		const char *q;

		p = memchr(p, '`', (size_t)(end - p));
		if (!p || p + 3 > end)
			return NULL;
		if (p[1] != '`' || p[2] != '`')
			continue;
		q = p;
		while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (q == text || q[-1] == '\n')
			return p;
		p += 2;
	}
	return NULL;
}

/* True when the fence's info string (the rest of its line) is "json", in any case. */
static bool fence_is_json(const char *open, const char *eol)
{
	const char *p = open + 3;
	size_t n;

	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	n = (size_t)(eol - p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	return n == 4 && (p[0] | 0x20) == 'j' && (p[1] | 0x20) == 's' && (p[2] | 0x20) == 'o' &&
	       (p[3] | 0x20) == 'n';
}

static int find_in_fences(const char *text, const char *end, bool json_only, int max_depth,
                          struct span *out, char **err)
{
	const char *open = find_fence(text, text, end);

	while (open) {
		const char *body = memchr(open + 3, '\n', (size_t)(end - (open + 3)));
		const char *close;
		int r = 0;

		if (!body)
			return 0;
		close = find_fence(text, body + 1, end);
		if (!json_only || fence_is_json(open, body))
			r = find_object(text, body + 1, close ? close : end, max_depth, out, err);
		if (r != 0 || !close)
			return r;
		open = find_fence(text, close + 3, end);
	}
	return 0;
}

/* A short printable excerpt at `p` for error messages (model text is untrusted). */
static char *near_text(const char *p, const char *limit)
{
	struct strbuf sb;
	size_t n = 0;

	strbuf_init(&sb);
	for (; p < limit && *p && n < 20; p++, n++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\n' || c == '\r')
			break;
		strbuf_addc(&sb, c < 0x20 || c == 0x7f ? '?' : (char)c);
	}
	/* Never end in the middle of a UTF-8 character. */
	while (sb.len && ((unsigned char)sb.buf[sb.len - 1] & 0xC0) == 0x80)
		sb.len--;
	if (sb.len && ((unsigned char)sb.buf[sb.len - 1] & 0xC0) == 0xC0)
		sb.len--;
	sb.buf[sb.len] = '\0';
	return strbuf_detach(&sb);
}

cJSON *jsonx_extract(const char *text, int max_depth, char **err)
{
	struct span sp;
	const char *end;
	cJSON *obj;
	int r;

	*err = NULL;
	if (!text) {
		*err = xstrdup("no JSON object found in the answer (it is empty)");
		return NULL;
	}
	if (max_depth < 1)
		max_depth = 1;
	end = text + strlen(text);
	r = find_in_fences(text, end, true, max_depth, &sp, err);
	if (r == 0)
		r = find_in_fences(text, end, false, max_depth, &sp, err);
	if (r == 0)
		r = find_object(text, text, end, max_depth, &sp, err);
	if (r < 0)
		return NULL;
	if (r == 0) {
		*err = xstrdup("no JSON object found in the answer");
		return NULL;
	}
	end = NULL;
	obj = cJSON_ParseWithLengthOpts(sp.start, (size_t)(sp.end - sp.start), &end, 0);
	if (!obj) {
		size_t line, col;
		char *near;

		if (!end || end < sp.start || end > sp.end)
			end = sp.start;
		line_col(text, end, &line, &col);
		near = near_text(end, sp.end);
		if (*near)
			*err = xasprintf("malformed JSON at line %zu, column %zu, near \"%s\"",
			                 line, col, near);
		else
			*err = xasprintf("malformed JSON at line %zu, column %zu", line, col);
		free(near);
		return NULL;
	}
	if (!cJSON_IsObject(obj)) {
		cJSON_Delete(obj);
		*err = xstrdup("the answer's JSON is not an object");
		return NULL;
	}
	return obj;
}

char *jsonx_snippet(const char *s, size_t max)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	if (!s)
		return strbuf_detach(&sb);
	for (i = 0; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		strbuf_addc(&sb, c < 0x20 || c == 0x7f ? '?' : (char)c);
	}
	if (s[i]) {
		/* Cut back to a character boundary before the ellipsis. */
		while (sb.len && ((unsigned char)sb.buf[sb.len - 1] & 0xC0) == 0x80)
			sb.len--;
		if (sb.len && ((unsigned char)sb.buf[sb.len - 1] & 0xC0) == 0xC0)
			sb.len--;
		sb.buf[sb.len] = '\0';
		strbuf_adds(&sb, "...");
	}
	return strbuf_detach(&sb);
}

const cJSON *jsonx_get(const cJSON *obj, const char *key)
{
	/* As cJSON's lookup: the first member of that name; a member without a name (an
	 * array's items) ends the search. The first bytes are compared before strcmp: an
	 * event is read by a dozen lookups over a dozen keys each. */
	if (!obj || !key)
		return NULL;
	for (const cJSON *c = obj->child; c && c->string; c = c->next)
		if (c->string[0] == key[0] && strcmp(c->string, key) == 0)
			return c;
	return NULL;
}

const char *jsonx_str(const cJSON *obj, const char *key)
{
	const cJSON *it = jsonx_get(obj, key);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

bool jsonx_num(const cJSON *obj, const char *key, double *out)
{
	const cJSON *it = jsonx_get(obj, key);

	if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
		return false; /* cJSON reads 1e999 as infinity */
	*out = it->valuedouble;
	return true;
}

bool jsonx_bool(const cJSON *obj, const char *key, bool *out)
{
	const cJSON *it = jsonx_get(obj, key);

	if (!cJSON_IsBool(it))
		return false;
	*out = cJSON_IsTrue(it);
	return true;
}

/* ---- tolerant readers ---------------------------------------------------------------- */

const cJSON *jsonx_field(const cJSON *obj, const char *key)
{
	const cJSON *it = jsonx_get(obj, key);

	return cJSON_IsNull(it) ? NULL : it;
}

char *jsonx_as_text(const cJSON *it)
{
	if (!it || cJSON_IsNull(it))
		return NULL;
	if (cJSON_IsString(it))
		return xstrdup(it->valuestring);
	return jsonx_print(it);
}

char *jsonx_as_id(const cJSON *it)
{
	if (cJSON_IsString(it))
		return xstrdup(it->valuestring);
	/* cJSON spells integral numbers without a fraction, so 1 and 1.0 are both "1"; an
	 * overflowing 1e999 would print as "null", which names nothing. */
	if (cJSON_IsNumber(it) && isfinite(it->valuedouble))
		return jsonx_print(it);
	return NULL;
}

int jsonx_word(const char *s, const char *const *names, int n)
{
	size_t len;

	if (!s)
		return -1;
	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	for (int i = 0; i < n; i++) {
		size_t j = 0;

		if (strlen(names[i]) != len)
			continue;
		while (j < len && tolower((unsigned char)s[j]) == names[i][j])
			j++;
		if (j == len)
			return i;
	}
	return -1;
}

bool jsonx_as_bool(const cJSON *it, bool *out)
{
	/* Even indexes say no, odd ones yes. */
	static const char *const words[] = {"false", "true", "no", "yes"};
	int w;

	if (cJSON_IsBool(it)) {
		*out = cJSON_IsTrue(it);
		return true;
	}
	if (!cJSON_IsString(it))
		return false;
	w = jsonx_word(it->valuestring, words, 4);
	if (w < 0)
		return false;
	*out = w % 2 == 1;
	return true;
}

bool jsonx_as_num(const cJSON *it, bool percent, double *out)
{
	const char *s;
	char *end;
	double v;

	if (cJSON_IsNumber(it)) {
		if (!isfinite(it->valuedouble))
			return false;
		*out = it->valuedouble;
		return true;
	}
	if (!cJSON_IsString(it))
		return false;
	s = it->valuestring;
	while (isspace((unsigned char)*s))
		s++;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (percent && *end == '%') {
		v /= 100.0;
		end++;
		while (isspace((unsigned char)*end))
			end++;
	}
	if (*end)
		return false;
	*out = v;
	return true;
}

const char *jsonx_kind(const cJSON *it)
{
	if (cJSON_IsObject(it))
		return "an object";
	if (cJSON_IsArray(it))
		return "an array";
	if (cJSON_IsString(it))
		return "a string";
	if (cJSON_IsNumber(it))
		return "a number";
	if (cJSON_IsBool(it))
		return "a boolean";
	return "null";
}

char *jsonx_describe(const cJSON *it, size_t max)
{
	char *sn, *d;

	if (!cJSON_IsString(it))
		return xstrdup(jsonx_kind(it));
	sn = jsonx_snippet(it->valuestring, max);
	d = xasprintf("\"%s\"", sn);
	free(sn);
	return d;
}

char *jsonx_print(const cJSON *item)
{
	char *s, *d;

	if (!item)
		return xstrdup("null");
	s = cJSON_PrintUnformatted(item);
	if (!s)
		fatal("out of memory printing JSON");
	/* cJSON allocates with malloc by default; copy so callers can use free(). */
	d = xstrdup(s);
	cJSON_free(s);
	return d;
}

/* ---- one JSON value on one line ---- */

struct vcur {
	const unsigned char *p, *end;
};

static void v_blank(struct vcur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static bool v_lit(struct vcur *c, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n))
		return false;
	c->p += n;
	return true;
}

long jsonx_hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int d = p[i];

		d = d >= '0' && d <= '9'   ? d - '0'
		    : d >= 'a' && d <= 'f' ? d - 'a' + 10
		    : d >= 'A' && d <= 'F' ? d - 'A' + 10
					   : -1;
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Four hex digits after "\u"; -1 when not. */
static long v_hex4(struct vcur *c)
{
	long v = c->end - c->p < 4 ? -1 : jsonx_hex4((const char *)c->p);

	if (v >= 0)
		c->p += 4;
	return v;
}

static bool v_string(struct vcur *c)
{
	c->p++; /* the opening quote */
	while (c->p < c->end) {
		unsigned char ch = *c->p++;
		long u;

		if (ch == '"')
			return true;
		if (ch < 0x20)
			return false;
		if (ch != '\\')
			continue;
		if (c->p == c->end)
			return false;
		ch = *c->p++;
		if (strchr("\"\\/bfnrt", ch) && ch)
			continue;
		if (ch != 'u' || (u = v_hex4(c)) < 0 || (u >= 0xDC00 && u <= 0xDFFF))
			return false;
		/* a high surrogate needs its low one, as cJSON (and most readers) insist */
		if (u >= 0xD800 && u <= 0xDBFF &&
		    (!v_lit(c, "\\u") || (u = v_hex4(c)) < 0xDC00 || u > 0xDFFF))
			return false;
	}
	return false;
}

static bool v_digits(struct vcur *c)
{
	const unsigned char *start = c->p;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	return c->p > start;
}

static bool v_number(struct vcur *c)
{
	if (*c->p == '-')
		c->p++;
	if (c->p < c->end && *c->p == '0')
		c->p++;
	else if (!v_digits(c))
		return false;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!v_digits(c))
			return false;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!v_digits(c))
			return false;
	}
	return true;
}

static bool v_value(struct vcur *c, int depth)
{
	bool object;

	v_blank(c);
	if (c->p == c->end)
		return false;
	switch (*c->p) {
	case '"': return v_string(c);
	case 't': return v_lit(c, "true");
	case 'f': return v_lit(c, "false");
	case 'n': return v_lit(c, "null");
	case '{':
	case '[': break;
	default: return v_number(c);
	}
	if (depth >= JSONX_LINE_DEPTH)
		return false;
	object = *c->p++ == '{';
	v_blank(c);
	if (c->p < c->end && *c->p == (object ? '}' : ']')) {
		c->p++;
		return true;
	}
	for (;;) {
		if (object) {
			v_blank(c);
			if (c->p == c->end || *c->p != '"' || !v_string(c))
				return false;
			v_blank(c);
			if (c->p == c->end || *c->p++ != ':')
				return false;
		}
		if (!v_value(c, depth + 1))
			return false;
		v_blank(c);
		if (c->p == c->end)
			return false;
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		return *c->p++ == (object ? '}' : ']');
	}
}

bool jsonx_deeper_than(const cJSON *it, int depth)
{
	if (!it || !(cJSON_IsObject(it) || cJSON_IsArray(it)))
		return false;
	if (depth < 1)
		return true;
	for (const cJSON *c = it->child; c; c = c->next)
		if (jsonx_deeper_than(c, depth - 1))
			return true;
	return false;
}

cJSON *jsonx_parse_for_event(const char *text)
{
	cJSON *j = text ? cJSON_Parse(text) : NULL;

	if (jsonx_deeper_than(j, JSONX_LINE_DEPTH - 1)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

bool jsonx_valid_line(const char *s, size_t n)
{
	struct vcur c = {(const unsigned char *)s, (const unsigned char *)s + n};

	if (!s || !v_value(&c, 0))
		return false;
	v_blank(&c);
	return c.p == c.end;
}
