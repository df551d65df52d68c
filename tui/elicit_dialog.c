/* elicit_dialog — the elicit gate's form (elicit_view reads the schema). */
#include "config.h"

#include "elicit_dialog.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "elicit_view.h"
#include "form.h"
#include "mcp_elicit.h"
#include "textsan.h"
#include "xalloc.h"

struct form *elicit_dialog_form(const char *gate_json, char **err)
{
	cJSON *o = gate_json ? cJSON_Parse(gate_json) : NULL;
	struct mcp_elicit_form f;
	struct form *fm;

	if (!elicit_view_parse(o, &f, err)) {
		cJSON_Delete(o);
		return NULL;
	}
	cJSON_Delete(o);
	fm = form_new("Answer the MCP server",
	              "F2 or Enter on the last field sends  Esc back to the gate");
	for (size_t i = 0; i < f.n; i++) {
		char *label = textsan_clean(f.v[i].label, strlen(f.v[i].label), 0);
		form_add(fm, label, f.v[i].value);
		free(label);
	}
	mcp_elicit_release(&f);
	return fm;
}

bool elicit_dialog_content(const char *gate_json, const struct form *fm, char **json, char **err)
{
	cJSON *o = gate_json ? cJSON_Parse(gate_json) : NULL;
	struct mcp_elicit_form f;
	const char **vals;
	bool ok;

	if (!elicit_view_parse(o, &f, err)) {
		cJSON_Delete(o);
		return false;
	}
	cJSON_Delete(o);
	vals = xcalloc(f.n ? f.n : 1, sizeof(*vals));
	for (size_t i = 0; i < f.n && i < form_count(fm); i++)
		vals[i] = form_value(fm, i);
	ok = mcp_elicit_content(&f, vals, json, err);
	free(vals);
	mcp_elicit_release(&f);
	return ok;
}
