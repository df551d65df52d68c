/* conformance_client — the headless MCP client the official conformance suite
 * (@modelcontextprotocol/conformance, client mode) runs: `conformance_client URL`, the
 * server URL last, MCP_CONFORMANCE_SCENARIO naming the scenario. It is pevtui's own MCP
 * client (mcp_client.c over mcp_http.c): connect and initialize, list the tools, call
 * each one with arguments made from its input schema, print what came back, and exit 0
 * when every step worked (1 otherwise, with the reason on stderr).
 * Sign-in is allowed, as with `pevtui --mcp-login`: MCP_CONFORMANCE_CONTEXT's client_id
 * and client_secret (auth/pre-registration) are the configured client, the suite's
 * Client ID Metadata Document URL is configured, and the "browser" is this program run as
 * `conformance_client --follow URL`: it GETs the authorization URL and follows the
 * suite's redirect to pevtui's listener on 127.0.0.1. */
#include "config.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "mcp_elicit.h"
#include "strbuf.h"
#include "xalloc.h"

/* A value for one property of an input schema: the schema's default when it has one,
 * else something of its type (the suite's tools add numbers or take nothing). */
static cJSON *sample_value(const cJSON *prop)
{
	const cJSON *def = cJSON_GetObjectItemCaseSensitive(prop, "default");
	if (def)
		return cJSON_Duplicate(def, 1);
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(prop, "enum");
	if (cJSON_IsArray(en) && cJSON_GetArraySize(en) > 0)
		return cJSON_Duplicate(cJSON_GetArrayItem(en, 0), 1);
	const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(prop, "type"));
	if (!type)
		return cJSON_CreateString("test");
	if (!strcmp(type, "number") || !strcmp(type, "integer"))
		return cJSON_CreateNumber(2);
	if (!strcmp(type, "boolean"))
		return cJSON_CreateTrue();
	if (!strcmp(type, "object"))
		return cJSON_CreateObject();
	if (!strcmp(type, "array"))
		return cJSON_CreateArray();
	return cJSON_CreateString("test");
}

/* Arguments for a tool: every required property of its schema (caller frees). */
static char *sample_args(const char *schema_json)
{
	cJSON *args = cJSON_CreateObject();
	cJSON *schema = schema_json ? cJSON_Parse(schema_json) : NULL;
	const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
	const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
	const cJSON *name;
	cJSON_ArrayForEach(name, req)
	{
		const char *key = cJSON_GetStringValue(name);
		if (key && !cJSON_GetObjectItemCaseSensitive(args, key))
			cJSON_AddItemToObject(args, key,
			                      sample_value(cJSON_GetObjectItemCaseSensitive(props, key)));
	}
	char *text = cJSON_PrintUnformatted(args);
	cJSON_Delete(args);
	cJSON_Delete(schema);
	return text;
}

/* The suite's client metadata document: what its auth/basic-cimd scenario expects. */
#define CONFORMANCE_CIMD_URL "https://conformance-test.local/client-metadata.json"

static size_t discard(char *buf, size_t size, size_t n, void *arg)
{
	(void)buf;
	(void)arg;
	return size * n;
}

/* The browser: GET url, following redirects (the suite approves at once). */
static int follow(const char *url)
{
	CURL *c = curl_easy_init();
	if (!c)
		return 1;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_cleanup(c);
	return rc == CURLE_OK ? 0 : 1;
}

/* The configured client of auth/pre-registration, from MCP_CONFORMANCE_CONTEXT. */
static bool set_context_client(struct mcp_conf *conf, char **err)
{
	cJSON *ctx = cJSON_Parse(getenv("MCP_CONFORMANCE_CONTEXT") ? getenv("MCP_CONFORMANCE_CONTEXT")
	                                                           : "");
	const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx, "client_id"));
	const char *secret =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx, "client_secret"));
	bool ok = (!id || mcp_conf_set_key(conf, "conformance", "client_id", id, err)) &&
	          (!secret || mcp_conf_set_key(conf, "conformance", "client_secret", secret, err));
	cJSON_Delete(ctx);
	return ok;
}

/* The suite's questions (elicitation-sep1034-client-defaults): accepted as the form shows
 * them, every default of the schema filled in (SEP-1034), as an operator pressing accept
 * at pevtui's gate would send. */
static enum mcp_elicit_action accept_defaults(void *ctx, const char *server, const char *message,
                                              const char *schema_json, char **content_json)
{
	struct mcp_elicit_form f;
	char *err = NULL;

	(void)ctx;
	(void)server;
	printf("question: %s\n", message);
	if (!mcp_elicit_parse(schema_json, &f, &err)) {
		fprintf(stderr, "conformance_client: %s\n", err);
		free(err);
		return MCP_ELICIT_DECLINE;
	}
	*content_json = mcp_elicit_defaults(&f, &err);
	mcp_elicit_release(&f);
	if (!*content_json) {
		fprintf(stderr, "conformance_client: %s\n", err);
		free(err);
		return MCP_ELICIT_DECLINE;
	}
	printf("answer: %s\n", *content_json);
	return MCP_ELICIT_ACCEPT;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--follow"))
		return follow(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: conformance_client SERVER-URL\n");
		return 2;
	}
	const char *url = argv[argc - 1];
	const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
	char ws[] = "/tmp/pevtui-conformance.XXXXXX";
	if (!mkdtemp(ws)) {
		perror("conformance_client: mkdtemp");
		return 1;
	}
	int rc = 1;
	char *err = NULL;
	struct mcp_conf conf = {0};
	struct mcp_client *c = NULL;
	if (!mcp_conf_set_key(&conf, "conformance", "url", url, &err) ||
	    !mcp_conf_set_key(&conf, "conformance", "client_metadata_url", CONFORMANCE_CIMD_URL,
	                      &err) ||
	    !set_context_client(&conf, &err) || !mcp_conf_check(&conf, &err)) {
		fprintf(stderr, "conformance_client: %s\n", err);
		goto out;
	}
	conf.v[0].sign_in = true;
	/* The browser step: this program again, unless the caller chose one. */
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0 && !getenv("BROWSER")) {
		self[n] = '\0';
		char *browser = xasprintf("%s --follow", self);
		setenv("BROWSER", browser, 1);
		free(browser);
	}
	c = mcp_client_new(&conf.v[0], NULL, ws);
	mcp_client_offer_elicitation(c, true);
	if (!mcp_client_start(c, &err)) {
		fprintf(stderr, "conformance_client: %s\n", err);
		goto out;
	}
	printf("scenario %s: initialized (%s)\n", scenario ? scenario : "?",
	       mcp_client_protocol(c));
	struct mcp_tools tools = {0};
	mcp_client_tools(c, &tools);
	rc = 0;
	int ws_fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct mcp_asker asker = {.fn = accept_defaults};
	for (size_t i = 0; i < tools.n; i++) {
		char *args = sample_args(tools.v[i].schema_json);
		struct strbuf out = STRBUF_INIT;
		strbuf_init(&out);
		enum mcp_status st =
		    mcp_client_call(c, tools.v[i].name, args, NULL, ws_fd, 64 * 1024, &out, NULL, &asker);
		printf("tool %s %s: %s\n", tools.v[i].name, args, out.buf);
		if (st == MCP_FAILED || st == MCP_CANCELLED) {
			fprintf(stderr, "conformance_client: %s failed: %s\n", tools.v[i].name, out.buf);
			rc = 1;
		}
		strbuf_release(&out);
		free(args);
	}
	mcp_tools_release(&tools);
	if (ws_fd >= 0)
		close(ws_fd);
out:
	mcp_client_free(c);
	mcp_conf_release(&conf);
	free(err);
	rmdir(ws);
	return rc;
}
