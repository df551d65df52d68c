/* cpfix — the checkpoint store fixture of the checkpoint unit tests. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cpfix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "events.h"
#include "series_rebuild.h"
#include "testdir.h"
#include "xalloc.h"

int cpfix_setup(void **state)
{
	struct cpfix *fx = xcalloc(1, sizeof(*fx));
	char *err = NULL;

	fx->top = testdir_new("checkpoint");
	assert_non_null(fx->top);
	fx->run = xasprintf("%s/run", fx->top);
	fx->ws = xasprintf("%s/ws", fx->top);
	fx->outside = xasprintf("%s/outside", fx->top);
	assert_int_equal(mkdir(fx->run, 0700), 0);
	assert_int_equal(mkdir(fx->ws, 0700), 0);
	assert_int_equal(mkdir(fx->outside, 0700), 0);
	/* The workspace's store goes below the test's folder, not the tester's home. */
	fx->data = xasprintf("%s/data", fx->top);
	setenv("XDG_DATA_HOME", fx->data, 1);
	fx->cp = checkpoint_open(fx->run, fx->ws, &err);
	assert_null(err);
	assert_non_null(fx->cp);
	*state = fx;
	return 0;
}

int cpfix_teardown(void **state)
{
	struct cpfix *fx = *state;

	checkpoint_close(fx->cp);
	testdir_remove(fx->top);
	free(fx->top);
	free(fx->run);
	free(fx->ws);
	free(fx->outside);
	free(fx->data);
	free(fx);
	return 0;
}

char *cpfix_at(const struct cpfix *fx, const char *rel)
{
	return xasprintf("%s/%s", fx->ws, rel);
}

void cpfix_put(const struct cpfix *fx, const char *rel, const char *text)
{
	char *p = cpfix_at(fx, rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

char *cpfix_get(const struct cpfix *fx, const char *rel)
{
	char *p = cpfix_at(fx, rel), *s = testdir_slurp(p);

	free(p);
	return s;
}

bool cpfix_exists(const struct cpfix *fx, const char *rel)
{
	char *p = cpfix_at(fx, rel);
	struct stat st;
	bool ok = lstat(p, &st) == 0;

	free(p);
	return ok;
}

void cpfix_take(struct cpfix *fx, char id[CP_ID_LEN + 1], struct strvec *warnings)
{
	char *err = NULL;

	assert_true(checkpoint_take(fx->cp, id, warnings, &err));
	assert_null(err);
	assert_int_equal(strlen(id), CP_ID_LEN);
}

void cpfix_attempt(struct cpfix *fx, const char *step, const char *rel, const char *text,
                   char before[CP_ID_LEN + 1], char after[CP_ID_LEN + 1])
{
	struct cp_changes c;
	char *err = NULL;

	assert_true(checkpoint_take_step(fx->cp, step, true, before, NULL, &err));
	cpfix_put(fx, rel, text);
	assert_true(checkpoint_take_step(fx->cp, step, false, after, NULL, &err));
	assert_true(checkpoint_diff(fx->cp, before, after, 1 << 16, &c, &err));
	checkpoint_series_note(fx->cp, step, before, after, &c);
	cp_changes_release(&c);
	assert_null(err);
}

char *cpfix_store(const struct cpfix *fx)
{
	bool legacy = false;
	char *dir = checkpoint_run_store(fx->run, &legacy);

	assert_non_null(dir);
	assert_false(legacy);
	assert_int_equal(strncmp(dir, fx->data, strlen(fx->data)), 0);
	return dir;
}

void cpfix_reopen(struct cpfix *fx)
{
	char *err = NULL;

	checkpoint_close(fx->cp);
	fx->cp = checkpoint_open(fx->run, fx->ws, &err);
	assert_null(err);
	assert_non_null(fx->cp);
}

void cpfix_feed(struct series_rebuild *sr, const char *fmt, ...)
{
	va_list ap;
	char *line, *err = NULL;
	struct event *ev;

	va_start(ap, fmt);
	line = xvasprintf(fmt, ap);
	va_end(ap);
	ev = event_from_line(line, &err);
	assert_non_null(ev);
	series_rebuild_event(sr, ev);
	event_free(ev);
	free(line);
}
