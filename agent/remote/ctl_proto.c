/* ctl_proto — parsing and writing the control protocol's lines (doc/protocol.md). */
#include "config.h"

#include "ctl_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "xalloc.h"

/* Commands a client may send, by protocol name; PEV_CMD_QUIT is not among them. */
static const struct {
	const char *name;
	enum pev_cmd cmd;
	bool step; /* takes a step_id */
} commands[] = {
    {"pause", PEV_CMD_PAUSE, false},
    {"resume", PEV_CMD_RESUME, false},
    {"abort", PEV_CMD_ABORT, false},
    {"rerun", PEV_CMD_RERUN, true},
    {"rerun_force", PEV_CMD_RERUN_FORCE, true},
    {"skip", PEV_CMD_SKIP, true},
    {"edit", PEV_CMD_EDIT, true},
    {"edit_plan", PEV_CMD_EDIT_PLAN, false},
    {"cancel_running", PEV_CMD_CANCEL_RUNNING, false},
    {"budget", PEV_CMD_BUDGET, false},
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *ctl_command_name(enum pev_cmd cmd)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (commands[i].cmd == cmd)
			return commands[i].name;
	return NULL;
}

void ctl_cmd_release(struct ctl_cmd *c)
{
	if (!c)
		return;
	free(c->id);
	free(c->step_id);
	free(c->json);
	memset(c, 0, sizeof(*c));
}

/* A whole number >= 0 that fits an unsigned long; false otherwise. */
static bool get_count(const cJSON *o, const char *key, unsigned long *out)
{
	double d;

	if (!jsonx_num(o, key, &d) || d < 0 || d > 9007199254740992.0 || d != floor(d))
		return false;
	*out = (unsigned long)d;
	return true;
}

/* "arg": JSON text as a string, or any other JSON value (printed compactly). */
static char *get_arg(const cJSON *o)
{
	const cJSON *a = jsonx_field(o, "arg");

	if (!a)
		return NULL;
	if (cJSON_IsString(a))
		return xstrdup(a->valuestring);
	return cJSON_PrintUnformatted(a);
}

static bool refuse(char **err, const char *sentence)
{
	*err = xstrdup(sentence);
	return false;
}

bool ctl_parse(const char *line, size_t len, struct ctl_cmd *out, char **err)
{
	cJSON *o;
	const char *verb;
	double v;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	if (len > CTL_MAX_LINE)
		return refuse(err, "the line is longer than 1048576 bytes: send less");
	if (memchr(line, '\0', len))
		return refuse(err, "the line holds a NUL byte: send one JSON object per line");
	o = cJSON_ParseWithLength(line, len);
	if (!o || !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		return refuse(err, "the line is not a JSON object: send one object per line, "
		                   "e.g. {\"v\":1,\"cmd\":\"ping\"}");
	}
	if (!jsonx_num(o, "v", &v) || v != CTL_PROTO_VERSION) {
		refuse(err, "the line has no \"v\":1 (this engine speaks protocol version 1)");
		goto out;
	}
	out->id = xstrdup(jsonx_str(o, "id"));
	verb = jsonx_str(o, "cmd");
	if (!verb) {
		refuse(err, "the line has no \"cmd\": see doc/protocol.md");
		goto out;
	}
	if (!strcmp(verb, "hello")) {
		out->verb = CTL_HELLO;
		if (jsonx_field(o, "since") && !get_count(o, "since", &out->since)) {
			refuse(err, "\"since\" must be a whole number >= 0 (a seq)");
			goto out;
		}
		ok = true;
	} else if (!strcmp(verb, "ping")) {
		out->verb = CTL_PING;
		ok = true;
	} else if (!strcmp(verb, "answer")) {
		int d = gate_decision_from_name(jsonx_str(o, "decision"));

		out->verb = CTL_ANSWER;
		if (!get_count(o, "gate_id", &out->gate_id) || out->gate_id == 0) {
			refuse(err, "an answer needs \"gate_id\", the id of an open gate");
			goto out;
		}
		if (d < 0) {
			refuse(err, "an answer needs \"decision\": approve, reject, skip or edit");
			goto out;
		}
		out->decision = (enum gate_decision)d;
		out->json = get_arg(o);
		ok = true;
	} else {
		size_t i;

		for (i = 0; i < N_COMMANDS && strcmp(commands[i].name, verb); i++)
			;
		if (i == N_COMMANDS) {
			*err =
			    xasprintf("unknown command \"%.40s\": hello, ping, answer, pause, "
			              "resume, abort, rerun, rerun_force, skip, edit, edit_plan, "
			              "cancel_running or budget",
			              verb);
			goto out;
		}
		out->verb = CTL_COMMAND;
		out->cmd = commands[i].cmd;
		out->step_id = xstrdup(jsonx_str(o, "step_id"));
		if (commands[i].step && (!out->step_id || !*out->step_id)) {
			*err = xasprintf("\"%s\" needs \"step_id\"", verb);
			goto out;
		}
		out->json = get_arg(o);
		if ((out->cmd == PEV_CMD_EDIT || out->cmd == PEV_CMD_EDIT_PLAN ||
		     out->cmd == PEV_CMD_BUDGET) &&
		    !out->json) {
			*err = xasprintf("\"%s\" needs \"arg\" (its JSON)", verb);
			goto out;
		}
		ok = true;
	}
out:
	cJSON_Delete(o);
	if (!ok)
		ctl_cmd_release(out);
	return ok;
}

/* Prints o compactly with a newline and frees it. */
static char *line_of(cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);
	char *line;

	cJSON_Delete(o);
	if (!s)
		fatal("ctl: cannot print a line");
	line = xasprintf("%s\n", s);
	cJSON_free(s);
	return line;
}

static cJSON *command(const char *verb)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "v", CTL_PROTO_VERSION);
	cJSON_AddStringToObject(o, "cmd", verb);
	return o;
}

char *ctl_line_hello(unsigned long since)
{
	cJSON *o = command("hello");

	cJSON_AddNumberToObject(o, "since", (double)since);
	return line_of(o);
}

char *ctl_line_answer(unsigned long gate_id, enum gate_decision d, const char *json)
{
	cJSON *o = command("answer");

	cJSON_AddNumberToObject(o, "gate_id", (double)gate_id);
	cJSON_AddStringToObject(o, "decision", gate_decision_name(d));
	if (json)
		cJSON_AddStringToObject(o, "arg", json);
	return line_of(o);
}

char *ctl_line_command(enum pev_cmd cmd, const char *step_id, const char *json)
{
	const char *name = ctl_command_name(cmd);
	cJSON *o;

	if (!name)
		return NULL;
	o = command(name);
	if (step_id)
		cJSON_AddStringToObject(o, "step_id", step_id);
	if (json)
		cJSON_AddStringToObject(o, "arg", json);
	return line_of(o);
}

char *ctl_line_ping(const char *id)
{
	cJSON *o = command("ping");

	if (id)
		cJSON_AddStringToObject(o, "id", id);
	return line_of(o);
}

static cJSON *reply(const char *type, const char *id)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "type", type);
	if (id)
		cJSON_AddStringToObject(o, "id", id);
	return o;
}

char *ctl_reply_hello(const char *run_id, long pid, unsigned long last_seq)
{
	cJSON *o = reply("ctl.hello", NULL);

	cJSON_AddNumberToObject(o, "v", CTL_PROTO_VERSION);
	cJSON_AddStringToObject(o, "run_id", run_id ? run_id : "");
	cJSON_AddNumberToObject(o, "pid", (double)pid);
	cJSON_AddNumberToObject(o, "seq", (double)last_seq);
	return line_of(o);
}

char *ctl_reply_ok(const char *id)
{
	return line_of(reply("ctl.ok", id));
}

char *ctl_reply_pong(const char *id)
{
	return line_of(reply("ctl.pong", id));
}

char *ctl_reply_error(const char *id, const char *message)
{
	cJSON *o = reply("ctl.error", id);

	cJSON_AddStringToObject(o, "error", message);
	return line_of(o);
}

bool ctl_socket_addr(const char *run_dir, struct sockaddr_un *sa, int *dirfd, char **err)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", run_dir, CTL_SOCKET_NAME);
	if (n > 0 && (size_t)n < sizeof(sa->sun_path))
		return true;
	/* Too long for sun_path (108 bytes): the same file through the folder's descriptor. */
	*dirfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		*err = xasprintf("cannot open the run folder %s: %s", run_dir, strerror(errno));
		return false;
	}
	snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", *dirfd,
	         CTL_SOCKET_NAME);
	return true;
}

int ctl_connect(const char *run_dir)
{
	struct sockaddr_un sa;
	int dirfd, fd, e;
	char *err = NULL;

	if (!ctl_socket_addr(run_dir, &sa, &dirfd, &err)) {
		free(err);
		errno = ENOENT;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fatal("ctl: cannot create a socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (dirfd >= 0) {
		e = errno;
		close(dirfd);
		errno = e;
	}
	return fd;
}
