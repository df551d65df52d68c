/* mcp_config — the operator's MCP servers: [mcp.NAME] sections of the config file, a
 * project's .mcp.json (the mcpServers object other agent tools write) and --mcp flags. */
#include "config.h"

#include "mcp_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "confine.h"
#include "xalloc.h"

static void server_release(struct mcp_server_conf *s)
{
	free(s->name);
	free(s->command);
	strvec_clear(&s->args);
	strvec_clear(&s->env);
	free(s->cwd);
	free(s->url);
	strvec_clear(&s->headers);
	free(s->client_id);
	free(s->client_secret);
	free(s->client_metadata_url);
	strvec_clear(&s->allow);
	memset(s, 0, sizeof(*s));
}

static void vec_copy(struct strvec *to, const struct strvec *from)
{
	for (size_t i = 0; i < from->n; i++)
		strvec_push(to, from->v[i]);
}

void mcp_conf_release(struct mcp_conf *c)
{
	for (size_t i = 0; i < c->n; i++)
		server_release(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void mcp_conf_copy(struct mcp_conf *to, const struct mcp_conf *from)
{
	mcp_conf_release(to);
	for (size_t i = 0; i < from->n; i++) {
		const struct mcp_server_conf *f = &from->v[i];
		struct mcp_server_conf *t;

		to->v = xgrow(to->v, &to->cap, to->n + 1, sizeof(*to->v));
		t = &to->v[to->n++];
		memset(t, 0, sizeof(*t));
		t->name = xstrdup(f->name);
		t->command = xstrdup(f->command);
		vec_copy(&t->args, &f->args);
		vec_copy(&t->env, &f->env);
		t->cwd = xstrdup(f->cwd);
		t->url = xstrdup(f->url);
		vec_copy(&t->headers, &f->headers);
		t->client_id = xstrdup(f->client_id);
		t->client_secret = xstrdup(f->client_secret);
		t->client_metadata_url = xstrdup(f->client_metadata_url);
		t->sign_in = f->sign_in;
		t->enabled = f->enabled;
		t->timeout_s = f->timeout_s;
		t->sandbox = f->sandbox;
		t->sandbox_network = f->sandbox_network;
		vec_copy(&t->allow, &f->allow);
		t->origin = f->origin;
	}
}

const struct mcp_server_conf *mcp_conf_find(const struct mcp_conf *c, const char *name)
{
	for (size_t i = 0; name && i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

const char *mcp_conf_name_problem(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 32)
		return "a server name is 1 to 32 characters";
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != n)
		return "a server name holds only letters, digits, - and _";
	if (strstr(name, "__"))
		return "a server name may not hold \"__\" (tools are offered as NAME__tool)";
	return NULL;
}

/* The server `name` (created empty when new). A definition of a stronger origin is not
 * changed by a weaker one: *keep tells the caller to leave it alone. */
static struct mcp_server_conf *server_get(struct mcp_conf *c, const char *name,
                                          enum mcp_origin origin, bool *keep)
{
	struct mcp_server_conf *s;

	*keep = false;
	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->v[i].name, name))
			continue;
		if (c->v[i].origin > origin) {
			*keep = true;
		} else if (c->v[i].origin < origin) {
			server_release(&c->v[i]); /* replaced whole, not merged */
			c->v[i].name = xstrdup(name);
			c->v[i].enabled = true;
			c->v[i].origin = origin;
		}
		return &c->v[i];
	}
	c->v = xgrow(c->v, &c->cap, c->n + 1, sizeof(*c->v));
	s = &c->v[c->n++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->enabled = true;
	s->sandbox = CONFINE_OFF;
	s->origin = origin;
	return s;
}

static char *trimmed(const char *a, const char *b)
{
	while (a < b && (*a == ' ' || *a == '\t'))
		a++;
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	return xstrndup(a, (size_t)(b - a));
}

/* A JSON array of strings, or a comma-separated list. */
static bool parse_list(const char *v, struct strvec *out, const char *key, char **err)
{
	strvec_clear(out);
	if (*v == '[') {
		cJSON *a = cJSON_Parse(v), *it;
		bool ok = cJSON_IsArray(a);
		cJSON_ArrayForEach(it, (ok ? a : NULL))
		{
			if (!cJSON_IsString(it)) {
				ok = false;
				break;
			}
			strvec_push(out, it->valuestring);
		}
		cJSON_Delete(a);
		if (!ok)
			*err =
			    xasprintf("%s must be a JSON array of strings such as [\"a\", \"b\"], "
			              "or a comma-separated list",
			              key);
		return ok;
	}
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");
		char *item = trimmed(p, p + n);
		if (*item)
			strvec_push(out, item);
		free(item);
		p += n;
		if (*p)
			p++;
	}
	return true;
}

/* A JSON object of strings, or "K=V, K2=V2" (sep '=' for env, ':' for headers), into
 * "K=V" / "K: V" entries. */
static bool parse_map(const char *v, struct strvec *out, const char *key, char sep, char **err)
{
	strvec_clear(out);
	if (*v == '{') {
		cJSON *o = cJSON_Parse(v), *it;
		bool ok = cJSON_IsObject(o);
		cJSON_ArrayForEach(it, (ok ? o : NULL))
		{
			if (!cJSON_IsString(it) || !*it->string) {
				ok = false;
				break;
			}
			if (sep == '=')
				strvec_pushf(out, "%s=%s", it->string, it->valuestring);
			else
				strvec_pushf(out, "%s: %s", it->string, it->valuestring);
		}
		cJSON_Delete(o);
		if (!ok)
			*err = xasprintf("%s must be a JSON object of strings such as {\"KEY\": "
			                 "\"value\"}, or KEY%cvalue pairs separated by commas",
			                 key, sep);
		return ok;
	}
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, ",");
		char *item = trimmed(p, p + n);
		char *eq = strchr(item, sep);
		if (*item && (!eq || eq == item)) {
			*err = xasprintf("%s: each entry is KEY%cvalue", key, sep);
			free(item);
			return false;
		}
		if (*item) {
			*eq = '\0';
			if (sep == '=')
				strvec_pushf(out, "%s=%s", item, eq + 1);
			else
				strvec_pushf(out, "%s: %s", item, eq + 1 + strspn(eq + 1, " "));
		}
		free(item);
		p += n;
		if (*p)
			p++;
	}
	return true;
}

static bool parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on") ||
	    !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") ||
	         !strcmp(v, "0"))
		*out = false;
	else
		return false;
	return true;
}

bool mcp_conf_set_key(struct mcp_conf *c, const char *server, const char *key, const char *value,
                      char **err)
{
	const char *why = mcp_conf_name_problem(server);
	struct mcp_server_conf *s;
	bool keep;

	if (why) {
		*err = xasprintf("[mcp.%.40s]: %s", server ? server : "", why);
		return false;
	}
	s = server_get(c, server, MCP_FROM_CONFIG, &keep);
	if (keep)
		return true;
	if (!strcmp(key, "command")) {
		free(s->command);
		s->command = *value ? xstrdup(value) : NULL;
	} else if (!strcmp(key, "args")) {
		return parse_list(value, &s->args, key, err);
	} else if (!strcmp(key, "allow")) {
		return parse_list(value, &s->allow, key, err);
	} else if (!strcmp(key, "env")) {
		return parse_map(value, &s->env, key, '=', err);
	} else if (!strcmp(key, "headers")) {
		return parse_map(value, &s->headers, key, ':', err);
	} else if (!strcmp(key, "cwd")) {
		free(s->cwd);
		s->cwd = *value ? xstrdup(value) : NULL;
	} else if (!strcmp(key, "url")) {
		free(s->url);
		s->url = *value ? xstrdup(value) : NULL;
	} else if (!strcmp(key, "client_id") || !strcmp(key, "client_secret")) {
		char **slot = key[7] == 'i' ? &s->client_id : &s->client_secret;
		free(*slot);
		*slot = *value ? xstrdup(value) : NULL;
	} else if (!strcmp(key, "client_metadata_url")) {
		if (*value && strncmp(value, "https://", 8)) {
			*err = xstrdup("client_metadata_url must be an https:// URL");
			return false;
		}
		free(s->client_metadata_url);
		s->client_metadata_url = *value ? xstrdup(value) : NULL;
	} else if (!strcmp(key, "enabled")) {
		if (!parse_bool(value, &s->enabled)) {
			*err = xstrdup("enabled must be yes or no");
			return false;
		}
	} else if (!strcmp(key, "sandbox")) {
		int m = confine_mode_parse(value);
		if (m < 0) {
			*err = xstrdup("sandbox must be workspace-write, read-only or off");
			return false;
		}
		s->sandbox = m;
	} else if (!strcmp(key, "sandbox_network")) {
		if (!parse_bool(value, &s->sandbox_network)) {
			*err = xstrdup("sandbox_network must be yes or no");
			return false;
		}
	} else if (!strcmp(key, "timeout")) {
		char *end;
		long t;
		errno = 0;
		t = strtol(value, &end, 10);
		if (!*value || *end || errno || t < 1 || t > MCP_TIMEOUT_MAX_S) {
			*err = xasprintf("timeout must be a whole number of seconds from 1 to %d",
			                 MCP_TIMEOUT_MAX_S);
			return false;
		}
		s->timeout_s = (int)t;
	} else {
		*err = xstrdup("unknown key; [mcp.NAME] takes command, args, env, cwd, url, "
		               "headers, enabled, timeout, allow, sandbox, sandbox_network, "
		               "client_id, client_secret and "
		               "client_metadata_url");
		return false;
	}
	return true;
}

/* Splits a command line into words: blanks separate, '…' and "…" quote, \ escapes in
 * double quotes and outside. false when a quote is left open. */
static bool split_words(const char *s, struct strvec *out)
{
	struct strbuf w = STRBUF_INIT;
	bool in_word = false;
	char q = 0;

	strbuf_init(&w);
	for (const char *p = s;; p++) {
		char ch = *p;
		if (!ch) {
			if (q) {
				strbuf_release(&w);
				return false;
			}
			if (in_word)
				strvec_push(out, w.buf);
			break;
		}
		if (q == '\'') {
			if (ch == '\'')
				q = 0;
			else
				strbuf_addc(&w, ch);
		} else if (ch == '\\' && p[1] &&
		           (q == '"' ? (p[1] == '"' || p[1] == '\\') : true)) {
			strbuf_addc(&w, *++p);
			in_word = true;
		} else if (q == '"') {
			if (ch == '"')
				q = 0;
			else
				strbuf_addc(&w, ch);
		} else if (ch == '\'' || ch == '"') {
			q = ch;
			in_word = true;
		} else if (ch == ' ' || ch == '\t') {
			if (in_word)
				strvec_push(out, w.buf);
			strbuf_reset(&w);
			in_word = false;
		} else {
			strbuf_addc(&w, ch);
			in_word = true;
		}
	}
	strbuf_release(&w);
	return true;
}

bool mcp_conf_add_flag(struct mcp_conf *c, const char *spec, char **err)
{
	const char *eq = strchr(spec, '=');
	struct strvec words = STRVEC_INIT;
	struct mcp_server_conf *s;
	char *name;
	const char *why;
	bool keep;

	if (!eq) {
		*err = xstrdup("--mcp takes NAME=COMMAND [ARG…], e.g. --mcp "
		               "files=\"npx -y @modelcontextprotocol/server-filesystem .\"");
		return false;
	}
	name = xstrndup(spec, (size_t)(eq - spec));
	why = mcp_conf_name_problem(name);
	if (why) {
		*err = xasprintf("--mcp %.40s: %s", name, why);
		free(name);
		return false;
	}
	if (!split_words(eq + 1, &words) || !words.n) {
		*err = xasprintf("--mcp %s: the command is empty or a quote is left open", name);
		strvec_clear(&words);
		free(name);
		return false;
	}
	s = server_get(c, name, MCP_FROM_FLAG, &keep);
	/* A second --mcp of the same name replaces the first. */
	free(s->command);
	strvec_clear(&s->args);
	s->command = xstrdup(words.v[0]);
	for (size_t i = 1; i < words.n; i++)
		strvec_push(&s->args, words.v[i]);
	strvec_clear(&words);
	free(name);
	return true;
}

/* A JSON array of strings into v; false if it is something else. */
static bool json_strings(const cJSON *a, struct strvec *v)
{
	const cJSON *it;

	if (!a)
		return true;
	if (!cJSON_IsArray(a))
		return false;
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsString(it))
			return false;
		strvec_push(v, it->valuestring);
	}
	return true;
}

static bool json_map(const cJSON *o, struct strvec *v, char sep)
{
	const cJSON *it;

	if (!o)
		return true;
	if (!cJSON_IsObject(o))
		return false;
	cJSON_ArrayForEach(it, o)
	{
		if (!cJSON_IsString(it))
			return false;
		if (sep == '=')
			strvec_pushf(v, "%s=%s", it->string, it->valuestring);
		else
			strvec_pushf(v, "%s: %s", it->string, it->valuestring);
	}
	return true;
}

static bool load_one(struct mcp_conf *c, const char *path, const cJSON *def, char **err)
{
	const char *name = def->string, *why = mcp_conf_name_problem(name);
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(def, "type");
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(def, "command");
	const cJSON *url = cJSON_GetObjectItemCaseSensitive(def, "url");
	const cJSON *cwd = cJSON_GetObjectItemCaseSensitive(def, "cwd");
	struct mcp_server_conf *s;
	bool keep;

	if (why) {
		*err = xasprintf("%s: server \"%.40s\": %s", path, name, why);
		return false;
	}
	if (!cJSON_IsObject(def)) {
		*err = xasprintf("%s: server \"%s\" must be an object", path, name);
		return false;
	}
	if (mcp_conf_find(c, name))
		return true; /* the config, a flag or an earlier .mcp.json named it first */
	s = server_get(c, name, MCP_FROM_PROJECT, &keep);
	if (cJSON_IsString(cmd))
		s->command = xstrdup(cmd->valuestring);
	if (cJSON_IsString(url))
		s->url = xstrdup(url->valuestring);
	if (cJSON_IsString(cwd))
		s->cwd = xstrdup(cwd->valuestring);
	if (!json_strings(cJSON_GetObjectItemCaseSensitive(def, "args"), &s->args) ||
	    !json_map(cJSON_GetObjectItemCaseSensitive(def, "env"), &s->env, '=') ||
	    !json_map(cJSON_GetObjectItemCaseSensitive(def, "headers"), &s->headers, ':')) {
		*err = xasprintf("%s: server \"%s\": args must be an array of strings, env and "
		                 "headers objects of strings",
		                 path, name);
		return false;
	}
	if (cJSON_IsString(type) && strcmp(type->valuestring, "stdio") &&
	    strcmp(type->valuestring, "http") && strcmp(type->valuestring, "sse")) {
		*err = xasprintf("%s: server \"%s\": type must be stdio or http", path, name);
		return false;
	}
	return true;
}

bool mcp_conf_load_json(struct mcp_conf *c, const char *path, char **err)
{
	FILE *f = fopen(path, "r");
	struct strbuf text = STRBUF_INIT;
	char buf[4096];
	size_t n;
	cJSON *root, *servers, *def;
	bool ok = true;

	if (!f) {
		if (errno == ENOENT)
			return true;
		*err = xasprintf("%s: cannot read it: %s", path, strerror(errno));
		return false;
	}
	strbuf_init(&text);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && text.len < 1024 * 1024)
		strbuf_add(&text, buf, n);
	fclose(f);
	root = cJSON_Parse(text.buf);
	strbuf_release(&text);
	servers = cJSON_GetObjectItemCaseSensitive(root, "mcpServers");
	if (!cJSON_IsObject(root) || (servers && !cJSON_IsObject(servers))) {
		*err = xasprintf("%s: not a JSON object with an \"mcpServers\" object; fix or "
		                 "remove the file",
		                 path);
		cJSON_Delete(root);
		return false;
	}
	cJSON_ArrayForEach(def, servers)
	{
		if (!load_one(c, path, def, err)) {
			ok = false;
			break;
		}
	}
	cJSON_Delete(root);
	return ok;
}

bool mcp_conf_check(const struct mcp_conf *c, char **err)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct mcp_server_conf *s = &c->v[i];
		if (!s->enabled)
			continue;
		if (!s->command && !s->url) {
			*err = xasprintf("MCP server \"%s\" has neither a command nor a url; give "
			                 "[mcp.%s] a command (or set enabled = no)",
			                 s->name, s->name);
			return false;
		}
	}
	return true;
}
