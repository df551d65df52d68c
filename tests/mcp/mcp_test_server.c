/* mcp_test_server — a small MCP server over stdio for the tests, with scripted tools:
 * pages of tools, list_changed, a slow tool, one that errors, one that crashes the server,
 * non-text, structured, oversized and hostile results. Every method it receives is
 * written to stderr ("got METHOD"), so a test can read what the client sent.
 * Options: --version REV (answer initialize with REV), --page N (tools per page). */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static const char *version = NULL;
static int page = 3;
static int extra = 0; /* "change" adds a tool */

static const char *const tools[][2] = {
	{"echo", "Says back the text it is given."},
	{"slow", "Waits ms milliseconds, then answers."},
	{"fail", "Always fails (isError)."},
	{"crash", "Ends the server at once."},
	{"image", "Returns a small PNG image."},
	{"big", "Returns 200 KB of text."},
	{"hostile", "Returns text full of terminal escape sequences."},
	{"change", "Adds the tool extra and says the list changed."},
	{"structured", "Returns structuredContent only."},
	{"env", "Returns the value of the environment variable named."},
	{"read_note", "Reads a note (allowed without the gate in the tests)."},
	{"pid", "Returns the server's process id."},
};
#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

static void send(cJSON *m)
{
	char *t = cJSON_PrintUnformatted(m);
	printf("%s\n", t);
	fflush(stdout);
	free(t);
	cJSON_Delete(m);
}

static cJSON *reply(const cJSON *id)
{
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id", cJSON_Duplicate(id, 1));
	return r;
}

static cJSON *text_result(cJSON *r, const char *text, bool error)
{
	cJSON *res = cJSON_AddObjectToObject(r, "result");
	cJSON *c = cJSON_AddArrayToObject(res, "content");
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", text);
	cJSON_AddItemToArray(c, t);
	if (error)
		cJSON_AddBoolToObject(res, "isError", true);
	return res;
}

static void list(const cJSON *id, const cJSON *params)
{
	const cJSON *cur = cJSON_GetObjectItemCaseSensitive(params, "cursor");
	int from = cJSON_IsString(cur) ? atoi(cur->valuestring) : 0;
	int total = (int)N_TOOLS + extra;
	cJSON *r = reply(id), *res = cJSON_AddObjectToObject(r, "result");
	cJSON *arr = cJSON_AddArrayToObject(res, "tools");

	for (int i = from; i < total && i < from + page; i++) {
		cJSON *t = cJSON_CreateObject(), *s;
		cJSON_AddStringToObject(t, "name", i < (int)N_TOOLS ? tools[i][0] : "extra");
		cJSON_AddStringToObject(t, "description",
					i < (int)N_TOOLS ? tools[i][1] : "Appeared after change.");
		s = cJSON_AddObjectToObject(t, "inputSchema");
		cJSON_AddStringToObject(s, "type", "object");
		if (i < (int)N_TOOLS && !strcmp(tools[i][0], "read_note")) {
			cJSON *a = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(a, "readOnlyHint", true);
		}
		if (i < (int)N_TOOLS && !strcmp(tools[i][0], "crash")) {
			cJSON *a = cJSON_AddObjectToObject(t, "annotations");
			cJSON_AddBoolToObject(a, "readOnlyHint", true); /* a lie: never trusted */
			cJSON_AddBoolToObject(a, "destructiveHint", false);
		}
		cJSON_AddItemToArray(arr, t);
	}
	if (from + page < total) {
		char buf[16];
		snprintf(buf, sizeof(buf), "%d", from + page);
		cJSON_AddStringToObject(res, "nextCursor", buf);
	}
	send(r);
}

static void call(const cJSON *id, const cJSON *params)
{
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(params, "name"));
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
	cJSON *r = reply(id);

	if (!name) {
		name = "";
	}
	if (!strcmp(name, "echo") || !strcmp(name, "read_note")) {
		const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "text"));
		text_result(r, t ? t : "(nothing)", false);
	} else if (!strcmp(name, "slow")) {
		const cJSON *ms = cJSON_GetObjectItemCaseSensitive(args, "ms");
		long w = cJSON_IsNumber(ms) ? (long)ms->valuedouble : 2000;
		struct timespec ts = {w / 1000, (w % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		text_result(r, "slept", false);
	} else if (!strcmp(name, "fail")) {
		text_result(r, "the fail tool failed, as it always does", true);
	} else if (!strcmp(name, "crash")) {
		fprintf(stderr, "crashing on purpose\n");
		exit(3);
	} else if (!strcmp(name, "image")) {
		cJSON *res = cJSON_AddObjectToObject(r, "result");
		cJSON *c = cJSON_AddArrayToObject(res, "content");
		cJSON *i = cJSON_CreateObject();
		cJSON_AddStringToObject(i, "type", "image");
		cJSON_AddStringToObject(i, "mimeType", "image/png");
		/* "\x89PNG\r\n\x1a\n" and four bytes */
		cJSON_AddStringToObject(i, "data", "iVBORw0KGgoAAQID");
		cJSON_AddItemToArray(c, i);
	} else if (!strcmp(name, "big")) {
		size_t n = 200 * 1024;
		char *t = malloc(n + 1);
		for (size_t k = 0; k < n; k++)
			t[k] = k % 64 == 63 ? '\n' : 'x';
		t[n] = '\0';
		text_result(r, t, false);
		free(t);
	} else if (!strcmp(name, "hostile")) {
		text_result(r, "before\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m\xe2\x80\xae" "evil after",
			    false);
	} else if (!strcmp(name, "change")) {
		cJSON *n = cJSON_CreateObject();
		extra = 1;
		cJSON_AddStringToObject(n, "jsonrpc", "2.0");
		cJSON_AddStringToObject(n, "method", "notifications/tools/list_changed");
		send(n);
		text_result(r, "changed", false);
	} else if (!strcmp(name, "structured")) {
		cJSON *res = cJSON_AddObjectToObject(r, "result");
		cJSON *s = cJSON_AddObjectToObject(res, "structuredContent");
		cJSON_AddArrayToObject(res, "content");
		cJSON_AddNumberToObject(s, "total", 42);
	} else if (!strcmp(name, "env")) {
		const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name"));
		const char *val = v ? getenv(v) : NULL;
		text_result(r, val ? val : "(unset)", false);
	} else if (!strcmp(name, "pid")) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		text_result(r, buf, false);
	} else if (!strcmp(name, "extra") && extra) {
		text_result(r, "extra here", false);
	} else {
		cJSON *e = cJSON_AddObjectToObject(r, "error");
		cJSON_AddNumberToObject(e, "code", -32602);
		cJSON_AddStringToObject(e, "message", "Unknown tool");
	}
	send(r);
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--version"))
			version = argv[i + 1];
		else if (!strcmp(argv[i], "--page"))
			page = atoi(argv[i + 1]);
	}
	while (getline(&line, &cap, stdin) > 0) {
		cJSON *m = cJSON_Parse(line);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		const char *method = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "method"));
		const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");

		fprintf(stderr, "got %s\n", method ? method : "(response)");
		if (method && !strcmp(method, "initialize")) {
			const char *want = cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(params, "protocolVersion"));
			cJSON *r = reply(id), *res = cJSON_AddObjectToObject(r, "result"), *info;
			cJSON_AddStringToObject(res, "protocolVersion", version ? version : want);
			cJSON_AddObjectToObject(cJSON_AddObjectToObject(res, "capabilities"), "tools");
			info = cJSON_AddObjectToObject(res, "serverInfo");
			cJSON_AddStringToObject(info, "name", "pevtui-test-server");
			cJSON_AddStringToObject(info, "version", "1");
			send(r);
		} else if (method && !strcmp(method, "tools/list")) {
			list(id, params);
		} else if (method && !strcmp(method, "tools/call")) {
			call(id, params);
		} else if (method && !strcmp(method, "ping")) {
			cJSON *r = reply(id);
			cJSON_AddObjectToObject(r, "result");
			send(r);
		} else if (method && id) {
			cJSON *r = reply(id), *e = cJSON_AddObjectToObject(r, "error");
			cJSON_AddNumberToObject(e, "code", -32601);
			cJSON_AddStringToObject(e, "message", "Method not found");
			send(r);
		}
		cJSON_Delete(m);
	}
	free(line);
	return 0;
}
