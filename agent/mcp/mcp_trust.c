/* mcp_trust — approvals of a project's MCP servers (see mcp_trust.h). */
#include "config.h"

#include "mcp_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fdio.h"
#include "mcp_config.h"
#include "settings.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

char *mcp_trust_store_path(void)
{
	return settings_data_path("pevtui/trusted-mcp.jsonl");
}

static cJSON *strings(const struct strvec *v)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; v && i < v->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v->v[i]));
	return a;
}

/* Everything that decides what starting the server does, as one JSON text. */
static char *definition(const struct mcp_server_conf *sv)
{
	cJSON *o = cJSON_CreateObject();
	char *s, *t;

	cJSON_AddStringToObject(o, "command", sv->command ? sv->command : "");
	cJSON_AddItemToObject(o, "args", strings(&sv->args));
	cJSON_AddItemToObject(o, "env", strings(&sv->env));
	cJSON_AddStringToObject(o, "cwd", sv->cwd ? sv->cwd : "");
	cJSON_AddStringToObject(o, "url", sv->url ? sv->url : "");
	cJSON_AddItemToObject(o, "headers", strings(&sv->headers));
	s = cJSON_PrintUnformatted(o);
	t = xstrdup(s ? s : "{}");
	cJSON_free(s);
	cJSON_Delete(o);
	return t;
}

bool mcp_trust_known(const char *store, const char *file, const struct mcp_server_conf *sv)
{
	FILE *f = store ? fopen(store, "re") : NULL;
	char *line = NULL, *def;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	def = definition(sv);
	while (!found && getline(&line, &cap, f) > 0) {
		cJSON *o = cJSON_Parse(line);
		const cJSON *jf = cJSON_GetObjectItemCaseSensitive(o, "file");
		const cJSON *jn = cJSON_GetObjectItemCaseSensitive(o, "name");
		const cJSON *jd = cJSON_GetObjectItemCaseSensitive(o, "definition");
		if (cJSON_IsString(jf) && cJSON_IsString(jn) && cJSON_IsString(jd))
			found = !strcmp(jf->valuestring, file) && !strcmp(jn->valuestring, sv->name) &&
			        !strcmp(jd->valuestring, def);
		cJSON_Delete(o);
	}
	free(line);
	free(def);
	fclose(f);
	return found;
}

/* The folders on the way to `path`'s own (0700 when made). */
static bool make_parents(const char *path)
{
	char *p = xstrdup(path);

	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST) {
			free(p);
			return false;
		}
		*s = '/';
	}
	free(p);
	return true;
}

bool mcp_trust_add(const char *store, const char *file, const struct mcp_server_conf *sv,
                   char **err)
{
	cJSON *o;
	char *def, *text, *line;
	int fd;
	bool ok;

	if (!store) {
		*err = xstrdup("no place to remember the approval: set XDG_DATA_HOME or HOME");
		return false;
	}
	if (!make_parents(store) ||
	    (fd = open(store, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		*err = xasprintf("cannot remember the approval in %s: %s", store, strerror(errno));
		return false;
	}
	def = definition(sv);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "file", file);
	cJSON_AddStringToObject(o, "name", sv->name);
	cJSON_AddStringToObject(o, "definition", def);
	text = cJSON_PrintUnformatted(o);
	line = xasprintf("%s\n", text ? text : "{}");
	ok = fd_write_all(fd, line, strlen(line)) == 0;
	if (!ok)
		*err = xasprintf("cannot remember the approval in %s: %s", store, strerror(errno));
	close(fd);
	free(line);
	cJSON_free(text);
	cJSON_Delete(o);
	free(def);
	return ok;
}

/* A word as a shell would need it written to mean itself. */
static void add_word(struct strbuf *sb, const char *w)
{
	bool plain = *w != '\0';

	for (const char *p = w; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		               "@%+=:,./_-",
		               *p) != NULL;
	if (plain) {
		strbuf_adds(sb, w);
		return;
	}
	strbuf_addc(sb, '\'');
	for (const char *p = w; *p; p++) {
		if (*p == '\'')
			strbuf_adds(sb, "'\\''");
		else
			strbuf_addc(sb, *p);
	}
	strbuf_addc(sb, '\'');
}

/* The names of KEY=VALUE (or Name: value) entries, comma-separated. */
static void add_names(struct strbuf *sb, const struct strvec *v, const char *sep)
{
	for (size_t i = 0; i < v->n; i++) {
		size_t n = strcspn(v->v[i], sep);
		if (i)
			strbuf_adds(sb, ", ");
		strbuf_add(sb, v->v[i], n);
	}
}

char *mcp_trust_describe(const struct mcp_server_conf *sv)
{
	struct strbuf sb;
	char *clean;

	strbuf_init(&sb);
	if (sv->command) {
		add_word(&sb, sv->command);
		for (size_t i = 0; i < sv->args.n; i++) {
			strbuf_addc(&sb, ' ');
			add_word(&sb, sv->args.v[i]);
		}
		if (sv->cwd) {
			strbuf_adds(&sb, " (in ");
			strbuf_adds(&sb, sv->cwd);
			strbuf_addc(&sb, ')');
		}
		if (sv->env.n) {
			strbuf_adds(&sb, " (environment: ");
			add_names(&sb, &sv->env, "=");
			strbuf_addc(&sb, ')');
		}
	} else {
		strbuf_adds(&sb, sv->url ? sv->url : "(no command, no url)");
		if (sv->headers.n) {
			strbuf_adds(&sb, " (headers: ");
			add_names(&sb, &sv->headers, ":");
			strbuf_addc(&sb, ')');
		}
	}
	clean = textsan_clean(sb.buf, sb.len, 0);
	strbuf_release(&sb);
	return clean;
}
