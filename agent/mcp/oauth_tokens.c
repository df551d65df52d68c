/* oauth_tokens — a JSON file {"grants": [{…}, …]} written to a temporary file (0600,
 * O_EXCL) and renamed over the old one. */
#include "config.h"

#include "oauth_tokens.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "strbuf.h"
#include "xalloc.h"

void oauth_grant_release(struct oauth_grant *g)
{
	free(g->server_url);
	free(g->issuer);
	free(g->resource);
	free(g->token_endpoint);
	free(g->client_id);
	free(g->client_secret);
	free(g->auth_method);
	free(g->access_token);
	free(g->refresh_token);
	free(g->scope);
	memset(g, 0, sizeof(*g));
}

void oauth_grant_copy(struct oauth_grant *to, const struct oauth_grant *from)
{
	oauth_grant_release(to);
	to->server_url = xstrdup(from->server_url);
	to->issuer = xstrdup(from->issuer);
	to->resource = xstrdup(from->resource);
	to->token_endpoint = xstrdup(from->token_endpoint);
	to->client_id = xstrdup(from->client_id);
	to->client_secret = xstrdup(from->client_secret);
	to->auth_method = xstrdup(from->auth_method);
	to->access_token = xstrdup(from->access_token);
	to->refresh_token = xstrdup(from->refresh_token);
	to->scope = xstrdup(from->scope);
	to->expires_at = from->expires_at;
	to->issued_at = from->issued_at;
}

static char *data_dir(void)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	if (x && *x == '/')
		return xasprintf("%s/pevtui", x);
	if (home && *home)
		return xasprintf("%s/.local/share/pevtui", home);
	return NULL;
}

char *oauth_tokens_path(void)
{
	char *d = data_dir();
	char *p = d ? xasprintf("%s/mcp-auth.json", d) : NULL;
	free(d);
	return p;
}

/* mkdir -p with 0700 for the folders it makes. */
static bool make_dirs(const char *dir)
{
	char *p = xstrdup(dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST) {
			free(p);
			return false;
		}
		*s = '/';
	}
	bool ok = !mkdir(p, 0700) || errno == EEXIST;
	free(p);
	return ok;
}

int oauth_tokens_lock(char **err)
{
	char *d = data_dir();
	if (!d) {
		*err = xstrdup("no place for sign-in tokens: set HOME or XDG_DATA_HOME");
		return -1;
	}
	if (!make_dirs(d)) {
		*err = xasprintf("cannot create %s: %s", d, strerror(errno));
		free(d);
		return -1;
	}
	char *p = xasprintf("%s/mcp-auth.json.lock", d);
	free(d);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		*err = xasprintf("cannot open %s: %s", p, strerror(errno));
		free(p);
		return -1;
	}
	free(p);
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

void oauth_tokens_unlock(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

static cJSON *read_store(void)
{
	char *p = oauth_tokens_path();
	cJSON *j = NULL;
	FILE *f = p ? fopen(p, "re") : NULL;
	if (f) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_init(&sb);
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			strbuf_add(&sb, buf, n);
		fclose(f);
		j = cJSON_Parse(sb.buf);
		strbuf_release(&sb);
	}
	free(p);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = cJSON_CreateObject();
	}
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "grants"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(j, "grants");
		cJSON_AddItemToObject(j, "grants", cJSON_CreateArray());
	}
	return j;
}

static bool write_store(const cJSON *j, char **err)
{
	char *p = oauth_tokens_path();
	char *tmp = xasprintf("%s.%ld.tmp", p, (long)getpid());
	char *text = cJSON_Print(j);
	bool ok = false;
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 && fd_write_all(fd, text, strlen(text)) == 0 && !fsync(fd)) {
		ok = !close(fd) && !rename(tmp, p);
		fd = -1;
	}
	if (!ok) {
		*err = xasprintf("cannot write %s: %s", p, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	free(text);
	free(tmp);
	free(p);
	return ok;
}

static const char *field(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

static void from_json(const cJSON *o, struct oauth_grant *g)
{
	oauth_grant_release(g);
	g->server_url = xstrdup(field(o, "server_url"));
	g->issuer = xstrdup(field(o, "issuer"));
	g->resource = xstrdup(field(o, "resource"));
	g->token_endpoint = xstrdup(field(o, "token_endpoint"));
	g->client_id = xstrdup(field(o, "client_id"));
	g->client_secret = xstrdup(field(o, "client_secret"));
	g->auth_method = xstrdup(field(o, "auth_method"));
	g->access_token = xstrdup(field(o, "access_token"));
	g->refresh_token = xstrdup(field(o, "refresh_token"));
	g->scope = xstrdup(field(o, "scope"));
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "expires_at");
	g->expires_at = cJSON_IsNumber(e) ? (long long)e->valuedouble : 0;
	e = cJSON_GetObjectItemCaseSensitive(o, "issued_at");
	g->issued_at = cJSON_IsNumber(e) ? (long long)e->valuedouble : 0;
}

static void put(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
}

static cJSON *to_json(const struct oauth_grant *g)
{
	cJSON *o = cJSON_CreateObject();
	put(o, "server_url", g->server_url);
	put(o, "issuer", g->issuer);
	put(o, "resource", g->resource);
	put(o, "token_endpoint", g->token_endpoint);
	put(o, "client_id", g->client_id);
	put(o, "client_secret", g->client_secret);
	put(o, "auth_method", g->auth_method);
	put(o, "access_token", g->access_token);
	put(o, "refresh_token", g->refresh_token);
	put(o, "scope", g->scope);
	cJSON_AddNumberToObject(o, "expires_at", (double)g->expires_at);
	cJSON_AddNumberToObject(o, "issued_at", (double)g->issued_at);
	return o;
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

bool oauth_tokens_load(const char *server_url, struct oauth_grant *g)
{
	cJSON *j = read_store();
	const cJSON *it, *found = NULL;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(j, "grants"))
	{
		if (same(field(it, "server_url"), server_url))
			found = it; /* the last saved wins */
	}
	if (found)
		from_json(found, g);
	cJSON_Delete(j);
	return found != NULL;
}

bool oauth_tokens_save(const struct oauth_grant *g, char **err)
{
	cJSON *j = read_store();
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "grants");
	for (int i = cJSON_GetArraySize(arr) - 1; i >= 0; i--) {
		const cJSON *it = cJSON_GetArrayItem(arr, i);
		if (same(field(it, "server_url"), g->server_url) && same(field(it, "issuer"), g->issuer))
			cJSON_DeleteItemFromArray(arr, i);
	}
	cJSON_AddItemToArray(arr, to_json(g));
	bool ok = write_store(j, err);
	cJSON_Delete(j);
	return ok;
}

bool oauth_tokens_remove(const char *server_url, int *removed, char **err)
{
	cJSON *j = read_store();
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "grants");
	*removed = 0;
	for (int i = cJSON_GetArraySize(arr) - 1; i >= 0; i--) {
		if (same(field(cJSON_GetArrayItem(arr, i), "server_url"), server_url)) {
			cJSON_DeleteItemFromArray(arr, i);
			(*removed)++;
		}
	}
	bool ok = !*removed || write_store(j, err);
	cJSON_Delete(j);
	return ok;
}
