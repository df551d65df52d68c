/* cost — price tables (file, user override, built-in fallback), the cost of one call, and
 * plan estimates. The active table is replaced whole under a mutex, so lookups from
 * worker threads never see a half-loaded file. */
#include "config.h"

#include "cost.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "provider.h"
#include "strbuf.h"
#include "xalloc.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/pevtui"
#endif

const char cost_prices_source[] =
	"Anthropic platform pricing page and secondary sources for OpenAI, read 2026 "
	"(see ../shared/WIRE.md); sim-* prices are simulated";

struct price_row {
	const char *prefix;
	struct price p;
};

/* Longest prefix wins, so "gpt-4o-mini" is matched before "gpt-4o". Keep in step with
 * data/prices.tsv: this is the fallback when the file is not installed. */
static const struct price_row builtin[] = {
	{"claude-opus-4", {5.00, 25.00, 0.50, 6.25}},
	/* Opus 4 and 4.1 (legacy) kept their higher prices. */
	{"claude-opus-4-0", {15.00, 75.00, 1.50, 18.75}},
	{"claude-opus-4-1", {15.00, 75.00, 1.50, 18.75}},
	{"claude-opus-4-2025", {15.00, 75.00, 1.50, 18.75}},
	{"claude-sonnet-4", {3.00, 15.00, 0.30, 3.75}},
	{"claude-haiku-4", {1.00, 5.00, 0.10, 1.25}},
	{"gpt-4.1", {2.00, 8.00, 0.50, 0.0}},
	{"gpt-4o-mini", {0.15, 0.60, 0.075, 0.0}},
	{"gpt-4o", {2.50, 10.00, 1.25, 0.0}},
	{"o4-mini", {1.10, 4.40, 0.275, 0.0}},
	{"gpt-5-nano", {0.05, 0.40, 0.005, 0.0}},
	{"gpt-5-mini", {0.25, 2.00, 0.025, 0.0}},
	{"gpt-5", {1.25, 10.00, 0.125, 0.0}},
	/* The simulated provider's models, priced like their real counterparts so the demo's
	 * cost meter moves plausibly. Always labelled simulated on screen. */
	{"sim-planner", {3.00, 15.00, 0.30, 3.75}},
	{"sim-executor", {3.00, 15.00, 0.30, 3.75}},
	{"sim-verifier", {1.00, 5.00, 0.10, 1.25}},
};

struct row {
	char *prefix;
	struct price p;
};

struct table {
	struct row *rows;
	size_t n, cap;
	char *read_date;
	char *source;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct table active;      /* rows NULL: the built-in table */
static bool initialised;
static char *load_error;

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].prefix);
	free(t->rows);
	free(t->read_date);
	free(t->source);
	memset(t, 0, sizeof(*t));
}

static void table_put(struct table *t, const char *prefix, const struct price *p)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].prefix, prefix)) {
			t->rows[i].p = *p;
			return;
		}
	t->rows = xgrow(t->rows, &t->cap, t->n + 1, sizeof(*t->rows));
	t->rows[t->n].prefix = xstrdup(prefix);
	t->rows[t->n].p = *p;
	t->n++;
}

/* A copy of the active table (the built-in one when no file was loaded); lock held. */
static void table_copy_active(struct table *dst)
{
	memset(dst, 0, sizeof(*dst));
	if (active.rows) {
		for (size_t i = 0; i < active.n; i++)
			table_put(dst, active.rows[i].prefix, &active.rows[i].p);
		dst->read_date = xstrdup(active.read_date);
		dst->source = xstrdup(active.source);
		return;
	}
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		table_put(dst, builtin[i].prefix, &builtin[i].p);
	dst->source = xstrdup(cost_prices_source);
}

static bool parse_price(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end != s && *end == '\0' && errno == 0 && *out >= 0.0 && *out < 1e6;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Parses a whole file into t (which starts empty). */
static bool parse_file(FILE *f, const char *path, struct table *t, char **err)
{
	char *line = NULL;
	size_t cap = 0;
	long lineno = 0;
	bool ok = true;

	while (ok && getline(&line, &cap, f) >= 0) {
		char *s = trim(line), *field[6], *save = NULL;
		int nf = 0;
		struct price p;

		lineno++;
		if (!*s)
			continue;
		if (*s == '#') {
			s = trim(s + 1);
			if (!strncmp(s, "read:", 5)) {
				free(t->read_date);
				t->read_date = xstrdup(trim(s + 5));
			} else if (!strncmp(s, "source:", 7)) {
				free(t->source);
				t->source = xstrdup(trim(s + 7));
			}
			continue;
		}
		for (char *tok = strtok_r(s, " \t", &save); tok && nf < 6;
		     tok = strtok_r(NULL, " \t", &save))
			field[nf++] = tok;
		if (nf != 5) {
			*err = xasprintf("%s:%ld: expected 5 fields (model prefix, input, output, "
					 "cache read, cache write), found %d",
					 path, lineno, nf);
			ok = false;
		} else if (!parse_price(field[1], &p.input) ||
			   !parse_price(field[2], &p.output) ||
			   !parse_price(field[3], &p.cache_read) ||
			   !parse_price(field[4], &p.cache_write)) {
			*err = xasprintf("%s:%ld: prices for \"%s\" must be non-negative numbers "
					 "(USD per million tokens)",
					 path, lineno, field[0]);
			ok = false;
		} else {
			table_put(t, field[0], &p);
		}
	}
	if (ok && ferror(f)) {
		*err = xasprintf("%s: read error", path);
		ok = false;
	}
	free(line);
	return ok;
}

bool cost_load_file(const char *path, bool merge, char **err)
{
	FILE *f = fopen(path, "r");
	struct table t = {0}, next;

	*err = NULL;
	if (!f) {
		*err = xasprintf("%s: %s", path, strerror(errno));
		return false;
	}
	if (!parse_file(f, path, &t, err)) {
		fclose(f);
		table_free(&t);
		return false;
	}
	fclose(f);
	pthread_mutex_lock(&lock);
	if (merge) {
		table_copy_active(&next);
		for (size_t i = 0; i < t.n; i++)
			table_put(&next, t.rows[i].prefix, &t.rows[i].p);
		if (t.read_date || t.source) {
			/* The override's provenance is named alongside the base table's. */
			char *src =
			    xasprintf("%s; overrides from %s%s%s", next.source ? next.source : "",
				      t.source ? t.source : path, t.read_date ? " read " : "",
				      t.read_date ? t.read_date : "");
			free(next.source);
			next.source = src;
		}
		table_free(&t);
	} else {
		next = t;
		if (!next.source)
			next.source = xstrdup(path);
	}
	if (!next.rows) /* an empty replacement table: keep a valid non-NULL marker */
		next.rows = xcalloc(1, sizeof(*next.rows));
	table_free(&active);
	active = next;
	initialised = true;
	pthread_mutex_unlock(&lock);
	return true;
}

static void note_error(char *e)
{
	pthread_mutex_lock(&lock);
	if (!load_error)
		load_error = e;
	else
		free(e);
	pthread_mutex_unlock(&lock);
}

static bool readable(const char *path)
{
	FILE *f = fopen(path, "r");

	if (f)
		fclose(f);
	return f != NULL;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok = true;

static void do_init(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char *shipped = xasprintf("%s/%s", PKGDATADIR, COST_PRICES_FILE), *user = NULL, *e;

	pthread_mutex_lock(&lock);
	bool skip = initialised; /* cost_reset or an explicit load came first */
	pthread_mutex_unlock(&lock);
	if (skip) {
		free(shipped);
		return;
	}
	if (readable(shipped) && !cost_load_file(shipped, false, &e)) {
		note_error(e);
		init_ok = false;
	}
	if (xdg && *xdg)
		user = xasprintf("%s/pevtui/%s", xdg, COST_PRICES_FILE);
	else if (home && *home)
		user = xasprintf("%s/.config/pevtui/%s", home, COST_PRICES_FILE);
	if (user && readable(user) && !cost_load_file(user, true, &e)) {
		note_error(e);
		init_ok = false;
	}
	free(shipped);
	free(user);
	pthread_mutex_lock(&lock);
	initialised = true;
	pthread_mutex_unlock(&lock);
}

bool cost_init(void)
{
	pthread_once(&init_once, do_init);
	return init_ok;
}

const char *cost_load_error(void)
{
	const char *e;

	pthread_mutex_lock(&lock);
	e = load_error;
	pthread_mutex_unlock(&lock);
	return e;
}

void cost_reset(void)
{
	pthread_mutex_lock(&lock);
	table_free(&active);
	free(load_error);
	load_error = NULL;
	initialised = true;
	pthread_mutex_unlock(&lock);
}

char *cost_describe_source(void)
{
	char *s;

	cost_init();
	pthread_mutex_lock(&lock);
	if (!active.rows)
		s = xasprintf("built-in prices: %s", cost_prices_source);
	else
		s = xasprintf("prices read %s from %s",
			      active.read_date ? active.read_date : "(date not given)",
			      active.source ? active.source : "(source not given)");
	pthread_mutex_unlock(&lock);
	return s;
}

bool cost_lookup(const char *model, struct price *out)
{
	size_t best_len = 0;
	bool found = false;

	if (!model)
		return false;
	cost_init();
	pthread_mutex_lock(&lock);
	if (active.rows) {
		for (size_t i = 0; i < active.n; i++) {
			size_t n = strlen(active.rows[i].prefix);

			if (n > best_len && !strncmp(model, active.rows[i].prefix, n)) {
				*out = active.rows[i].p;
				best_len = n;
				found = true;
			}
		}
	} else {
		for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
			size_t n = strlen(builtin[i].prefix);

			if (n > best_len && !strncmp(model, builtin[i].prefix, n)) {
				*out = builtin[i].p;
				best_len = n;
				found = true;
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

double cost_of_call(const char *model, const struct llm_usage *u, bool *known)
{
	struct price p;

	if (!cost_lookup(model, &p)) {
		*known = false;
		return 0.0;
	}
	*known = true;
	return ((double)u->input_tokens * p.input + (double)u->output_tokens * p.output +
		(double)u->cache_read_tokens * p.cache_read +
		(double)u->cache_write_tokens * p.cache_write) /
	       1e6;
}

/* ---- estimates ------------------------------------------------------------------------ */

/* Tokens assumed per step, indexed by complexity; see cost.h. */
static const long exec_in[3] = {8000, 20000, 50000};
static const long exec_out[3] = {1000, 2500, 6000};
static const long verify_in_extra[3] = {0, 2000, 4000};
#define VERIFY_IN_BASE 4000
#define VERIFY_OUT 600
#define FINAL_IN_BASE 2000
#define FINAL_IN_PER_STEP 500
#define FINAL_OUT 800

static double priced(const char *model, long in, long out, bool *known)
{
	struct llm_usage u = {.input_tokens = in, .output_tokens = out, .reported = true};
	bool k;
	double c = cost_of_call(model, &u, &k);

	if (!k)
		*known = false;
	return c;
}

static int cx_index(enum complexity c)
{
	return (c >= CX_LOW && c <= CX_HIGH) ? (int)c : CX_MEDIUM;
}

double cost_estimate_step(const struct plan_step *s, const char *const models[3], bool *known)
{
	int cx = cx_index(s->complexity);
	double c;

	*known = true;
	c = priced(models[ROLE_EXECUTOR], exec_in[cx], exec_out[cx], known);
	c += priced(models[ROLE_VERIFIER], VERIFY_IN_BASE + verify_in_extra[cx], VERIFY_OUT, known);
	return c;
}

double cost_estimate_plan(const struct plan *p, const char *const models[3], bool *known)
{
	double total = 0.0;
	bool k;

	*known = true;
	for (size_t i = 0; i < p->n_steps; i++) {
		total += cost_estimate_step(&p->steps[i], models, &k);
		if (!k)
			*known = false;
	}
	total += priced(models[ROLE_VERIFIER],
			FINAL_IN_BASE + FINAL_IN_PER_STEP * (long)p->n_steps, FINAL_OUT, known);
	return total;
}

double cost_estimate_call(const char *model, size_t input_chars, int max_tokens, bool *known)
{
	/* About four characters a token; the answer is assumed to be a typical one, 500
	 * tokens (or half the limit when that is less): a reservation, not a bound. The real
	 * cost settles it, so the cap holds to within the calls in flight. */
	long in = (long)(input_chars / 4) + 1;
	long out = max_tokens > 0 && max_tokens / 2 < 500 ? max_tokens / 2 : 500;

	*known = true;
	return priced(model, in, out, known);
}
