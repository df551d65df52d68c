/* shell_view — shell commands in the step log and at the shell gate. */
#include "config.h"

#include "shell_view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gate.h"
#include "linestore.h"
#include "strbuf.h"
#include "textsan.h"
#include "view.h"
#include "jsonx.h"
#include "xalloc.h"

/* The command is shown up to this many columns on its line. */
#define COMMAND_COLS 200

static bool jbool(const cJSON *o, const char *k, bool def)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsBool(it) ? cJSON_IsTrue(it) : def;
}

/* One line of safe text, cut to cols columns. Caller frees. */
static char *one_line(const char *s, int cols)
{
	char *clean = textsan_clean(s, strlen(s), 0);
	char *cut = textsan_truncate(clean, cols);

	free(clean);
	return cut;
}

static void duration(struct strbuf *sb, double ms)
{
	if (ms < 1000)
		strbuf_addf(sb, "%.0f ms", ms);
	else if (ms < 60000)
		strbuf_addf(sb, "%.1f s", ms / 1000);
	else
		strbuf_addf(sb, "%.0fm%02.0fs", floor(ms / 60000), fmod(floor(ms / 1000), 60));
}

/* The output as lines under the command, indented; the first SHELL_VIEW_LINES. */
static void output_lines(struct linestore *log, const char *out)
{
	char *clean = textsan_clean(out, strlen(out), TEXTSAN_KEEP_NL);
	size_t n = strlen(clean), shown = 0, more = 0;
	const char *p = clean, *end = clean + n;

	/* A final newline ends the last line; it does not start another. */
	if (n > 0 && clean[n - 1] == '\n')
		end--;
	if (n == 0) {
		linestore_add(log, VL_NOTICE, "    (no output)");
		free(clean);
		return;
	}
	while (p <= end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (shown < SHELL_VIEW_LINES) {
			char *line = xasprintf("    %.*s", (int)len, p);
			linestore_add(log, VL_TEXT, line);
			free(line);
			shown++;
		} else {
			more++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (more) {
		char *line = xasprintf("    \xe2\x80\xa6 %zu more line%s", more,
				       more == 1 ? "" : "s");
		linestore_add(log, VL_NOTICE, line);
		free(line);
	}
	free(clean);
}

bool shell_view_result(struct linestore *log, const cJSON *o)
{
	const char *cmd = jsonx_str(o, "command"), *out = jsonx_str(o, "output");
	const char *how = gate_shell_approval_words(jsonx_str(o, "approval"));
	bool ok = jbool(o, "ok", false);
	double exit_status, sig, ms;
	struct strbuf sb = STRBUF_INIT;
	int kind = ok ? VL_TOOL_OK : VL_TOOL_FAIL;
	char *c;

	if (!cmd || !jbool(o, "ran", false))
		return false;
	strbuf_init(&sb);
	c = one_line(cmd, COMMAND_COLS);
	strbuf_addf(&sb, "\xe2\x86\x90 run_shell $ %s \xe2\x80\x94 ", c);
	free(c);
	if (jsonx_num(o, "exit_status", &exit_status)) {
		strbuf_addf(&sb, "exit %.0f", exit_status);
		if (exit_status != 0 && ok)
			kind = VL_WARN;
	} else if (jsonx_num(o, "signal", &sig)) {
		strbuf_addf(&sb, "killed by signal %.0f", sig);
	} else if (jbool(o, "timed_out", false)) {
		strbuf_adds(&sb, "stopped at its time limit");
	} else {
		strbuf_adds(&sb, "stopped");
	}
	if (jsonx_num(o, "duration_ms", &ms) && ms >= 0) {
		strbuf_adds(&sb, " after ");
		duration(&sb, ms);
	}
	if (how)
		strbuf_addf(&sb, " (%s)", how);
	if (jbool(o, "outside_sandbox", false)) {
		strbuf_adds(&sb, " \xe2\x80\x94 outside the sandbox");
		kind = VL_ERROR;
	} else if (jbool(o, "sandboxed", false)) {
		strbuf_adds(&sb, " \xe2\x80\x94 in the sandbox");
	}
	linestore_close(log);
	linestore_add(log, kind, sb.buf);
	strbuf_release(&sb);
	if (out)
		output_lines(log, out);
	return true;
}

void shell_view_gate(struct linestore *body, const cJSON *o)
{
	const char *cwd = jsonx_str(o, "cwd");
	const cJSON *allow = cJSON_GetObjectItemCaseSensitive(o, "allow");
	const char *sandbox = jsonx_str(o, "sandbox"), *reason = jsonx_str(o, "reason");
	double t;

	/* The model asks to leave the sandbox: said first, in the danger colour. */
	if (jbool(o, "outside_sandbox", false)) {
		char *r = one_line(reason ? reason : "", 200);
		char *line = xasprintf("OUTSIDE THE SANDBOX: this command would run unconfined, "
				       "with everything your user can reach. Reason given: %s",
				       r);
		linestore_add(body, VL_ERROR, line);
		free(line);
		free(r);
	}
	if (cwd) {
		char *c = textsan_clean(cwd, strlen(cwd), 0);
		char *line = xasprintf("Runs in: %s", c);
		linestore_add(body, VL_TEXT, line);
		free(line);
		free(c);
	}
	if (jsonx_num(o, "timeout_s", &t) && t > 0) {
		char *line = xasprintf("Time limit: %.0f s (then it is stopped, with everything it "
				       "started)",
				       t);
		linestore_add(body, VL_TEXT, line);
		free(line);
	}
	if (sandbox && !jbool(o, "outside_sandbox", false)) {
		char *c = one_line(sandbox, 120);
		char *line = xasprintf("Sandbox: %s", c + (strncmp(c, "sandbox: ", 9) ? 0 : 9));
		linestore_add(body, VL_TEXT, line);
		free(line);
		free(c);
	}
	if (cJSON_IsObject(allow)) {
		const char *why = jsonx_str(allow, "why"), *prefix = jsonx_str(allow, "prefix");
		struct strbuf sb = STRBUF_INIT;

		strbuf_init(&sb);
		if (jbool(allow, "matched", false)) {
			strbuf_adds(&sb, "Allow list: matched");
		} else {
			strbuf_adds(&sb, "Allow list: no");
			if (prefix) {
				char *p = one_line(prefix, 60);
				strbuf_addf(&sb, " \xe2\x80\x94 starts with \"%s\" but", p);
				free(p);
			} else if (why) {
				strbuf_adds(&sb, " \xe2\x80\x94");
			}
			if (why) {
				char *w = one_line(why, 80);
				strbuf_addf(&sb, " %s", w);
				free(w);
			}
		}
		linestore_add(body, VL_TEXT, sb.buf);
		strbuf_release(&sb);
	}
}
