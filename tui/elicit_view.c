/* elicit_view — the elicit gate's lines: the server, its message, the form's fields with
 * the server's defaults (mcp_elicit reads the schema). No curses here. */
#include "config.h"

#include "elicit_view.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "jsonx.h"
#include "linestore.h"
#include "strbuf.h"
#include "textsan.h"
#include "view.h"
#include "xalloc.h"

static const char *const type_words[] = {
    [MCP_ELICIT_STRING] = "text", [MCP_ELICIT_NUMBER] = "a number",
    [MCP_ELICIT_INTEGER] = "a whole number", [MCP_ELICIT_BOOLEAN] = "true or false"};

/* Server text on the screen: terminal controls out, lines kept. */
static void add_clean(struct linestore *body, int kind, const char *text)
{
	char *c = textsan_clean(text, strlen(text), TEXTSAN_KEEP_NL);

	linestore_add(body, kind, c);
	free(c);
}

bool elicit_view_parse(const cJSON *o, struct mcp_elicit_form *f, char **err)
{
	char *schema = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(o, "schema"));
	bool ok = mcp_elicit_parse(schema ? schema : "{}", f, err);

	free(schema);
	return ok;
}

/* "Label (a number, required) [a|b]: default" for a field. */
static char *field_line(const struct mcp_elicit_field *fl)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb);
	strbuf_addf(&sb, "%s (%s%s)", fl->label, type_words[fl->type],
	            fl->required ? ", required" : "");
	for (size_t i = 0; i < fl->options.n; i++)
		strbuf_addf(&sb, "%s%s", i ? "|" : " [", fl->options.v[i]);
	if (fl->options.n)
		strbuf_addc(&sb, ']');
	strbuf_addf(&sb, ": %s", *fl->value ? fl->value : "(empty)");
	return strbuf_detach(&sb);
}

void elicit_view_body(struct linestore *body, const cJSON *o)
{
	struct mcp_elicit_form f;
	const char *server = jsonx_str(o, "server"), *msg = jsonx_str(o, "message");
	char *err = NULL, *line;

	line = xasprintf("MCP server %s asks:", server ? server : "?");
	add_clean(body, VL_HEADER, line);
	free(line);
	add_clean(body, VL_WARN, msg && *msg ? msg : "(no message)");
	if (!elicit_view_parse(o, &f, &err)) {
		line = xasprintf("Its form cannot be shown (%s): s declines.", err);
		add_clean(body, VL_ERROR, line);
		free(line);
		free(err);
		return;
	}
	linestore_add(body, VL_HEADER, "The form, with the server's defaults:");
	for (size_t i = 0; i < f.n; i++) {
		line = field_line(&f.v[i]);
		add_clean(body, VL_TEXT, line);
		free(line);
		if (f.v[i].description)
			add_clean(body, VL_NOTICE, f.v[i].description);
	}
	if (!f.n)
		linestore_add(body, VL_NOTICE, "(no fields: accepting says yes)");
	linestore_add(body, VL_NOTICE,
	              "a fills in the form and accepts, s declines, x cancels the question "
	              "(the run goes on); only this step waits.");
	mcp_elicit_release(&f);
}

