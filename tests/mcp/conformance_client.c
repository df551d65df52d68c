/* conformance_client — the headless MCP client the official conformance suite
 * (@modelcontextprotocol/conformance, client mode) runs: `conformance_client URL`, the
 * server URL last, MCP_CONFORMANCE_SCENARIO naming the scenario. It is pevtui's own MCP
 * client (mcp_client.c over mcp_http.c): connect and initialize, list the tools, call
 * each one with arguments made from its input schema, print what came back, and exit 0
 * when every step worked (1 otherwise, with the reason on stderr). */
#include "config.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_client.h"
#include "mcp_config.h"
#include "strbuf.h"

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

int main(int argc, char **argv)
{
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
	    !mcp_conf_check(&conf, &err)) {
		fprintf(stderr, "conformance_client: %s\n", err);
		goto out;
	}
	c = mcp_client_new(&conf.v[0], NULL, ws);
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
	for (size_t i = 0; i < tools.n; i++) {
		char *args = sample_args(tools.v[i].schema_json);
		struct strbuf out = STRBUF_INIT;
		strbuf_init(&out);
		enum mcp_status st =
		    mcp_client_call(c, tools.v[i].name, args, NULL, ws_fd, 64 * 1024, &out, NULL);
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
