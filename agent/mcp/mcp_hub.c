/* mcp_hub — a run's MCP servers: started in parallel (while the planner works), their
 * tools offered as SERVER__tool beside the built-in ones, each call routed to its server,
 * the allow list that lets a call skip the mcp gate, and the end of every server. */
#include "config.h"

#include "mcp_hub.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_config.h"
#include "textsan.h"
#include "tool.h"
#include "xalloc.h"

#define DESC_MAX 1024 /* of a tool's description, the model sees this much */

struct server {
	struct mcp_hub *hub;
	struct mcp_client *client;
	pthread_t thread;
	bool thread_live;
	bool done, up;
};

struct mcp_hub {
	struct server *v;
	size_t n;
	pthread_mutex_t mu;
	pthread_cond_t cond; /* a server finished starting (done) */
	mcp_hub_event_fn fn;
	void *ctx;
	bool started, stopped;
};

void mcp_hub_offer_elicitation(struct mcp_hub *h, bool yes)
{
	for (size_t i = 0; h && i < h->n; i++)
		mcp_client_offer_elicitation(h->v[i].client, yes);
}

struct mcp_hub *mcp_hub_new(const struct mcp_conf *conf, const char *log_dir, const char *workspace)
{
	struct mcp_hub *h;
	size_t n = 0;

	for (size_t i = 0; i < conf->n; i++)
		n += conf->v[i].enabled;
	if (!n)
		return NULL;
	h = xcalloc(1, sizeof(*h));
	h->v = xcalloc(n, sizeof(*h->v));
	for (size_t i = 0; i < conf->n; i++) {
		char *log;
		if (!conf->v[i].enabled)
			continue;
		log = log_dir ? xasprintf("%s/%s.log", log_dir, conf->v[i].name) : NULL;
		h->v[h->n].hub = h;
		h->v[h->n++].client = mcp_client_new(&conf->v[i], log, workspace);
		free(log);
	}
	if (pthread_mutex_init(&h->mu, NULL) || pthread_cond_init(&h->cond, NULL))
		fatal("cannot initialise the MCP hub's lock");
	return h;
}

static void *start_main(void *arg)
{
	struct server *s = arg;
	struct mcp_hub *h = s->hub;
	struct mcp_tools tools;
	char *err = NULL;
	bool ok = mcp_client_start(s->client, &err);

	mcp_client_tools(s->client, &tools);
	if (h->fn)
		h->fn(h->ctx, mcp_client_name(s->client), ok, false, tools.n,
		      mcp_client_protocol(s->client), err);
	mcp_tools_release(&tools);
	free(err);
	pthread_mutex_lock(&h->mu);
	s->done = true;
	s->up = ok;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

void mcp_hub_start(struct mcp_hub *h, mcp_hub_event_fn fn, void *ctx)
{
	if (!h || h->started)
		return;
	h->fn = fn;
	h->ctx = ctx;
	h->started = true;
	for (size_t i = 0; i < h->n; i++) {
		if (pthread_create(&h->v[i].thread, NULL, start_main, &h->v[i]))
			fatal("cannot start a thread for MCP server %s",
			      mcp_client_name(h->v[i].client));
		h->v[i].thread_live = true;
	}
}

/* Any thread, any number at once: waits on the done flags (a thread is joined by one
 * thread only: join_starters). */
void mcp_hub_wait(struct mcp_hub *h)
{
	bool all;

	if (!h || !h->started)
		return;
	pthread_mutex_lock(&h->mu);
	for (;;) {
		all = true;
		for (size_t i = 0; i < h->n; i++)
			all = all && h->v[i].done;
		if (all)
			break;
		pthread_cond_wait(&h->cond, &h->mu);
	}
	pthread_mutex_unlock(&h->mu);
}

/* The thread that stops or frees the hub reaps the starters (after they are done). */
static void join_starters(struct mcp_hub *h)
{
	mcp_hub_wait(h);
	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].thread_live) {
			pthread_join(h->v[i].thread, NULL);
			h->v[i].thread_live = false;
		}
	}
}

/* Waits up to ms for every server to be up or failed; true when all are. */
static bool wait_ms(struct mcp_hub *h, int ms)
{
	struct timespec end;
	bool all = false;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->mu);
	for (;;) {
		all = true;
		for (size_t i = 0; i < h->n; i++)
			all = all && h->v[i].done;
		if (all || pthread_cond_timedwait(&h->cond, &h->mu, &end))
			break;
	}
	pthread_mutex_unlock(&h->mu);
	return all;
}

static void *stopper(void *client)
{
	mcp_client_stop(client);
	return NULL;
}

void mcp_hub_stop(struct mcp_hub *h)
{
	pthread_t *t;
	bool *live;

	if (!h || h->stopped)
		return;
	join_starters(h);
	h->stopped = true;
	/* All at once: a server slow to end (up to its grace and SIGKILL, about 3 s) does not
	 * hold the others' — nor the run's end — for its time again each. */
	t = xcalloc(h->n ? h->n : 1, sizeof(*t));
	live = xcalloc(h->n ? h->n : 1, sizeof(*live));
	for (size_t i = 0; i < h->n; i++) {
		live[i] = h->n > 1 && pthread_create(&t[i], NULL, stopper, h->v[i].client) == 0;
		if (!live[i])
			mcp_client_stop(h->v[i].client);
	}
	for (size_t i = 0; i < h->n; i++)
		if (live[i])
			pthread_join(t[i], NULL);
	free(t);
	free(live);
	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].up && h->fn)
			h->fn(h->ctx, mcp_client_name(h->v[i].client), true, true, 0, NULL, NULL);
	}
}

void mcp_hub_set_sandbox(struct mcp_hub *h, const struct confine_session *sb)
{
	for (size_t i = 0; h && i < h->n; i++)
		mcp_client_set_sandbox(h->v[i].client, sb);
}

void mcp_hub_free(struct mcp_hub *h)
{
	if (!h)
		return;
	join_starters(h);
	for (size_t i = 0; i < h->n; i++)
		mcp_client_free(h->v[i].client);
	free(h->v);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static struct mcp_client *client_named(struct mcp_hub *h, const char *name)
{
	for (size_t i = 0; h && name && i < h->n; i++)
		if (!strcmp(mcp_client_name(h->v[i].client), name))
			return h->v[i].client;
	return NULL;
}

/* Model APIs take tool names of [A-Za-z0-9_-]{1,64}; a tool named otherwise is not
 * offered (--list-tools says so). */
static bool offerable(const char *full)
{
	size_t n = strlen(full);
	return n >= 1 && n <= 64 &&
	       strspn(full, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
	           n;
}

static char *short_desc(const char *server, const char *d, size_t max, bool one_line)
{
	char *clean = textsan_clean(d ? d : "", d ? strlen(d) : 0, one_line ? 0 : TEXTSAN_KEEP_NL);
	size_t n = strlen(clean);
	char *out;

	if (one_line) {
		char *nl = strstr(clean, ". ");
		if (nl)
			n = (size_t)(nl - clean) + 1;
	}
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)clean[n] & 0xC0) == 0x80)
			n--;
	}
	out = xasprintf("[MCP server %s] %.*s", server, (int)n, clean);
	free(clean);
	return out;
}

/* The tools of the servers that are done starting (the others' locks are busy). */
static void offer_done(struct mcp_hub *h, struct mcp_offer *out)
{
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < h->n; i++) {
		struct mcp_tools tools;
		const char *srv = mcp_client_name(h->v[i].client);
		bool done;

		pthread_mutex_lock(&h->mu);
		done = h->v[i].done;
		pthread_mutex_unlock(&h->mu);
		if (!done)
			continue;
		mcp_client_tools(h->v[i].client, &tools);
		for (size_t k = 0; k < tools.n; k++) {
			char *full = xasprintf("%s" MCP_SEP "%s", srv, tools.v[k].name);
			struct tool_def *d;
			if (!offerable(full)) {
				free(full);
				continue;
			}
			out->v = xgrow(out->v, &cap, out->n + 1, sizeof(*out->v));
			d = &out->v[out->n++];
			memset(d, 0, sizeof(*d));
			d->name = full;
			d->description = short_desc(srv, tools.v[k].description, DESC_MAX, false);
			d->schema_json = xstrdup(tools.v[k].schema_json ? tools.v[k].schema_json
			                                                : "{\"type\":\"object\"}");
		}
		mcp_tools_release(&tools);
	}
}

void mcp_hub_offer(struct mcp_hub *h, struct mcp_offer *out)
{
	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	mcp_hub_wait(h);
	offer_done(h, out);
}

void mcp_offer_release(struct mcp_offer *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free((char *)o->v[i].name);
		free((char *)o->v[i].description);
		free((char *)o->v[i].schema_json);
	}
	free(o->v);
	memset(o, 0, sizeof(*o));
}

bool mcp_hub_lookup(struct mcp_hub *h, const char *full, char **server, char **tool,
                    char **annotations_json, char **description)
{
	const char *sep = full ? strstr(full, MCP_SEP) : NULL;
	struct mcp_client *c;
	struct mcp_tools tools;
	char *srv;
	bool found = false;

	if (!h || !sep)
		return false;
	srv = xstrndup(full, (size_t)(sep - full));
	c = client_named(h, srv);
	if (!c) {
		free(srv);
		return false;
	}
	mcp_client_tools(c, &tools);
	for (size_t k = 0; k < tools.n && !found; k++) {
		if (strcmp(tools.v[k].name, sep + strlen(MCP_SEP)))
			continue;
		found = true;
		if (annotations_json)
			*annotations_json = xstrdup(tools.v[k].annotations_json);
		if (description)
			*description = xstrdup(tools.v[k].description);
	}
	mcp_tools_release(&tools);
	if (!found) {
		free(srv);
		return false;
	}
	*server = srv;
	*tool = xstrdup(sep + strlen(MCP_SEP));
	return true;
}

bool mcp_hub_allowed(struct mcp_hub *h, const char *server, const char *tool, const char **pattern)
{
	struct mcp_client *c = client_named(h, server);
	const struct mcp_server_conf *s = c ? mcp_client_conf(c) : NULL;

	if (pattern)
		*pattern = NULL;
	for (size_t i = 0; s && i < s->allow.n; i++) {
		if (fnmatch(s->allow.v[i], tool, 0) == 0) {
			if (pattern)
				*pattern = s->allow.v[i];
			return true;
		}
	}
	return false;
}

enum mcp_status mcp_hub_call(struct mcp_hub *h, const char *server, const char *tool,
                             const char *args_json, const atomic_bool *cancel, int ws_fd,
                             size_t max_bytes, struct strbuf *out, char **structured,
                             const struct mcp_asker *asker)
{
	struct mcp_client *c = client_named(h, server);

	if (!c) {
		strbuf_reset(out);
		strbuf_addf(out, "no MCP server named %s", server ? server : "?");
		if (structured)
			*structured = NULL;
		return MCP_FAILED;
	}
	return mcp_client_call(c, tool, args_json, cancel, ws_fd, max_bytes, out, structured,
	                       asker);
}

char *mcp_hub_describe(struct mcp_hub *h, int wait)
{
	struct strbuf sb = STRBUF_INIT;
	struct mcp_offer o;

	strbuf_init(&sb);
	if (!h)
		return strbuf_detach(&sb);
	if (!h->started || !wait_ms(h, wait)) {
		/* Still starting: the tools of those that are up, the names of the others. */
		memset(&o, 0, sizeof(o));
		for (size_t i = 0; i < h->n; i++) {
			bool done;
			pthread_mutex_lock(&h->mu);
			done = h->v[i].done;
			pthread_mutex_unlock(&h->mu);
			if (!done)
				strbuf_addf(&sb,
				            "- %s" MCP_SEP "*: the tools of MCP server %s (still "
				            "starting; the executor gets their names)\n",
				            mcp_client_name(h->v[i].client),
				            mcp_client_name(h->v[i].client));
		}
		offer_done(h, &o);
	} else {
		mcp_hub_offer(h, &o);
	}
	for (size_t i = 0; i < o.n; i++) {
		const char *d = o.v[i].description;
		const char *end = strchr(d, '\n');
		size_t n = end ? (size_t)(end - d) : strlen(d);
		strbuf_addf(&sb, "- %s: %.*s\n", o.v[i].name, (int)(n > 200 ? 200 : n), d);
	}
	mcp_offer_release(&o);
	return strbuf_detach(&sb);
}
