/*
 * bench_render — time to redraw the full cockpit at 200x60 with 1,000,000 lines in the
 * selected step's log (curses writes to /dev/null): composing alone, and with refresh().
 */
#include "config.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "events.h"
#include "layout.h"
#include "panes.h"
#include "view.h"
#include "xalloc.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	const char *plan = "{\"seq\":1,\"ts\":\"2026-01-01T10:00:00.000Z\","
			   "\"type\":\"plan.adopted\","
			   "\"revision\":0,\"kept\":[],\"plan\":{\"goal\":\"bench\",\"steps\":["
			   "{\"step_id\":\"s1\",\"name\":\"Big log\"},{\"step_id\":\"s2\","
			   "\"name\":\"Other\",\"dependencies\":[\"s1\"]}]}}";
	char *err = NULL;
	struct event *ev = event_from_line(plan, &err);
	const char *term = getenv("TERM");
	struct view *v = view_new();
	struct panes_state ps;
	struct layout l;
	FILE *out = fopen("/dev/null", "w");
	SCREEN *scr;
	enum { N = 2000 };
	static double t[N], d[N];
	double t0, build;

	setlocale(LC_ALL, "C.UTF-8");
	if (!ev || !out) {
		fprintf(stderr, "bench_render: setup failed: %s\n", err ? err : "/dev/null");
		return 1;
	}
	view_apply(v, ev);
	event_free(ev);
	t0 = now();
	for (long i = 0; i < 1000000; i++) {
		char *s = xasprintf("line %ld: the executor reports progress on the task, with "
				    "some wide text \xe4\xb8\xad\xe6\x96\x87 and a long tail that "
				    "wraps at narrow widths %ld",
				    i, i * 7);

		linestore_add(&v->steps[0].log, VL_TEXT, s);
		free(s);
	}
	build = now() - t0;
	scr = newterm("xterm-256color", out, stdin);
	if (!scr && term)
		scr = newterm(term, out, stdin);
	if (!scr) {
		fprintf(stderr, "bench_render: no terminfo entry for xterm-256color\n");
		return 1;
	}
	set_term(scr);
	if (v->n_steps < 1 || v->steps[0].log.n != 1000000) {
		fprintf(stderr, "bench_render: the step log was not built\n");
		return 1;
	}
	resizeterm(60, 200);
	panes_init(&ps);
	ps.plan.sel = 1;
	for (int i = 0; i < N; i++) {
		t0 = now();
		erase();
		layout_compute(&l, LINES, COLS, ps.focus, false);
		panes_draw(v, &ps, &l);
		d[i] = now() - t0;
		refresh();
		t[i] = now() - t0;
		/* Force a real redraw each time, as a changing log would. */
		clearok(stdscr, TRUE);
		ps.spin++;
	}
	endwin();
	delscreen(scr);
	fclose(out);
	qsort(t, N, sizeof(t[0]), cmp);
	qsort(d, N, sizeof(d[0]), cmp);
	printf("compose only (no terminal output): p50 %.3f ms, p99 %.3f ms\n", d[N / 2] * 1e3,
	       d[N * 99 / 100] * 1e3);
	printf("store of 1e6 lines built in %.2f s\n", build);
	printf("full redraw 200x60, 1e6 log lines: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
	       t[N / 2] * 1e3, t[N * 99 / 100] * 1e3, t[N - 1] * 1e3);
	view_free(v);
	return 0;
}
