/* tool — the registry of workspace tools the executor may call. One file per tool. */
#include "config.h"
#include "tool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "strbuf.h"
#include "xalloc.h"

/* Each tool lives in its own file; adding one is a new file plus one line below. */
extern const struct tool_def tool_read_file;
extern const struct tool_def tool_write_file;
extern const struct tool_def tool_list_files;
extern const struct tool_def tool_search_files;
extern const struct tool_def tool_run_shell;
extern const struct tool_def tool_http_get;
extern const struct tool_def tool_lookup;

/* The order is the order the model sees them in. */
static const struct tool_def *const registry[] = {
	&tool_read_file,
	&tool_write_file,
	&tool_list_files,
	&tool_search_files,
	&tool_run_shell,
	&tool_http_get,
	&tool_lookup,
};

const struct tool_def *const *tool_registry(size_t *n)
{
	if (n)
		*n = sizeof(registry) / sizeof(registry[0]);
	return registry;
}

const struct tool_def *tool_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

/* ---- retry and fallback --------------------------------------------------------------- */

static bool cancelled(const struct tool_env *env)
{
	return env->cancel && atomic_load(env->cancel);
}

/*
 * Jitter only has to spread retries of parallel steps apart, not be unpredictable; a
 * shared splitmix64 counter is thread-safe and needs no seeding ceremony.
 */
static uint64_t jitter_next(void)
{
	static _Atomic uint64_t state;
	uint64_t z = atomic_fetch_add(&state, 0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
	z ^= (uint64_t)time(NULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The wait before attempt `attempt + 1`, after `attempt` failures (attempt >= 1). */
static long backoff_ms(int attempt)
{
	long d = TOOL_RETRY_BASE_MS;
	for (int i = 1; i < attempt && d < TOOL_RETRY_CAP_MS; i++)
		d *= 2;
	if (d > TOOL_RETRY_CAP_MS)
		d = TOOL_RETRY_CAP_MS;
	long lo = d / 2;
	return lo + (long)(jitter_next() % (uint64_t)(d - lo + 1));
}

/* Sleeps ms in short slices so an abort is noticed quickly. False if cancelled. */
static bool wait_cancellable(const struct tool_env *env, long ms)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long end = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + ms * 1000000LL;
	for (;;) {
		if (cancelled(env))
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long long left = end - ((long long)now.tv_sec * 1000000000LL + now.tv_nsec);
		if (left <= 0)
			return true;
		struct timespec slice = {0, (long)(left < 20000000LL ? left : 20000000LL)};
		nanosleep(&slice, NULL);
	}
}

/* The first line of a failure, short, for the retry notice. Caller frees. */
static char *reason_of(const char *text)
{
	size_t n = strcspn(text, "\n");
	if (n > 200)
		n = 200;
	return xstrndup(text, n);
}

/* One tool with its retries; *transient tells whether the final failure was transient. */
static bool run_with_retries(const struct tool_def *t, const struct tool_env *env,
			     const struct cJSON *input, struct strbuf *out, bool *was_cancelled)
{
	struct tool_env local = *env;
	bool transient = false;
	local.transient = &transient;
	*was_cancelled = false;
	for (int attempt = 1;; attempt++) {
		transient = false;
		strbuf_reset(out);
		if (env->inject_failure && env->inject_failure(env->hook_ctx, t->name)) {
			strbuf_addf(out, "%s failed: injected failure (chaos rehearsal)", t->name);
			transient = true;
		} else if (t->run(&local, input, out)) {
			return true;
		}
		if (cancelled(env)) {
			*was_cancelled = true;
			return false;
		}
		if (!transient || attempt >= TOOL_RETRY_TRIES) {
			if (transient)
				strbuf_addf(out, "\n(%s failed %d times in a row)", t->name,
					    attempt);
			return false;
		}
		long wait = backoff_ms(attempt);
		if (env->on_tool_retry) {
			char *why = reason_of(out->buf);
			env->on_tool_retry(env->hook_ctx, t->name, attempt + 1, TOOL_RETRY_TRIES,
					   wait, why);
			free(why);
		}
		if (!wait_cancellable(env, wait)) {
			*was_cancelled = true;
			return false;
		}
	}
}

bool tool_invoke(const struct tool_def *t, const struct tool_env *env,
		 const struct cJSON *input, struct strbuf *out)
{
	bool was_cancelled;
	if (!t) {
		strbuf_adds(out, "no such tool");
		return false;
	}
	if (run_with_retries(t, env, input, out, &was_cancelled))
		return true;
	const struct tool_def *fb = t->fallback ? tool_find(t->fallback) : NULL;
	if (was_cancelled || !fb || fb == t)
		return false;
	/* The model sees both: why the first tool failed and what the fallback found. */
	char *first = strbuf_detach(out);
	struct strbuf second = STRBUF_INIT;
	strbuf_init(&second);
	bool ok = run_with_retries(fb, env, input, &second, &was_cancelled);
	strbuf_addf(out, "%s failed: %s\nfell back to %s, which %s:\n%s", t->name, first,
		    fb->name, ok ? "succeeded" : "failed too", second.buf);
	free(first);
	strbuf_release(&second);
	return ok;
}
