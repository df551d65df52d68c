/* tool_lookup — a demo-only fact lookup over a small offline table, so the simulated
 * scenarios can show research, a failing source and recovery without any network. */
#include "config.h"

#include "tool.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strbuf.h"
#include "xalloc.h"

/* The one query the flaky-search scenario sends first: its upstream "times out", so the
 * demo can show a tool error, a critique and a retry with another query. */
static const char flaky_query[] = "eldham population history 1900-2023";

struct fact {
	const char *topic;          /* shown in the no-match hint */
	const char *const *keywords; /* all must occur in the query (lower case) */
	const char *text;
};

#define KW(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Eldham is a fictional city: every figure here is invented demo data. */
static const struct fact facts[] = {
	{"eldham census archive", KW("eldham", "census"),
	 "[offline demo data; Eldham is fictional] Eldham City Archive, census series "
	 "(enumerated residents within today's boundary): 1900: 48,200; 1925: 87,600; "
	 "1950: 131,900; 1975: 298,300; 2000: 402,700; 2020: 455,100. The 1950 figure "
	 "includes the villages merged in 1948."},
	{"eldham statistics office register",
	 KW("eldham", "statistics office"),
	 "[offline demo data; Eldham is fictional] Eldham Statistics Office, population "
	 "register: 461,350 residents on 1 January 2023 (registered address in the "
	 "municipality). Annual growth 2020-2023: about 0.45%."},
	{"eldham area", KW("eldham", "area"),
	 "[offline demo data; Eldham is fictional] Eldham Land Survey: municipal area "
	 "127.8 km2 in total, of which 118.6 km2 land and 9.2 km2 water (harbour basin "
	 "and the Eld estuary). Boundary unchanged since 1948."},
	{"eldham tram network", KW("eldham", "tram network"),
	 "[offline demo data; Eldham is fictional] Eldham Tramways: 5 lines, 38.4 km of "
	 "route, 61 stops, 74 trams; line 5 (Harbour - Northgate) opened in March 2021."},
	{"eldham transport authority annual statistics",
	 KW("eldham", "transport authority"),
	 "[offline demo data; Eldham is fictional] Eldham Transport Authority, annual "
	 "statistics 2023: tram boardings 41.2 million (2022: 37.9 million); bus boardings "
	 "58.7 million. Boardings count every ticket validation plus paper tickets sampled "
	 "by on-board surveys."},
	{"eldham northgate", KW("eldham", "northgate"),
	 "[offline demo data; Eldham is fictional] Northgate district: 52,400 residents, "
	 "31% under 18, nearest library 2.9 km away, tram line 5 stop at Northgate Square, "
	 "one vacant municipal building (former post office, 640 m2)."},
	{"eldham riverside", KW("eldham", "riverside"),
	 "[offline demo data; Eldham is fictional] Riverside district: 38,900 residents, "
	 "19% under 18, library branch 0.8 km away (Quay Library), no vacant municipal "
	 "building; commercial rents 24 EUR/m2/month."},
	{"eldham old town", KW("eldham", "old town"),
	 "[offline demo data; Eldham is fictional] Old Town district: 21,300 residents, "
	 "14% under 18, Central Library inside the district, heritage rules limit "
	 "conversions of listed buildings."},
};

static char *lower_trimmed(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	bool space = false;

	strbuf_init(&sb);
	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			space = sb.len > 0;
			continue;
		}
		if (space)
			strbuf_addc(&sb, ' ');
		space = false;
		strbuf_addc(&sb, (char)tolower((unsigned char)*s));
	}
	return strbuf_detach(&sb);
}

static bool matches(const struct fact *f, const char *q)
{
	for (size_t i = 0; f->keywords[i]; i++)
		if (!strstr(q, f->keywords[i]))
			return false;
	return true;
}

static bool lookup_run(const struct tool_env *env, const cJSON *input, struct strbuf *out)
{
	const cJSON *query = cJSON_GetObjectItemCaseSensitive(input, "query");
	char *q;
	bool ok = false;

	(void)env;
	if (!cJSON_IsObject(input) || !cJSON_IsString(query) || !*query->valuestring) {
		strbuf_adds(out, "lookup needs {\"query\": \"what to look up\"} with a non-empty "
				 "string");
		return false;
	}
	q = lower_trimmed(query->valuestring);
	if (!strcmp(q, flaky_query)) {
		strbuf_addf(out,
			    "lookup failed: upstream source timed out (HTTP 504) for query "
			    "\"%s\"",
			    query->valuestring);
		goto out;
	}
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		if (matches(&facts[i], q)) {
			strbuf_adds(out, facts[i].text);
			ok = true;
			goto out;
		}
	}
	strbuf_addf(out, "no offline entry for \"%s\"; try: ", query->valuestring);
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
		strbuf_addf(out, "%s%s", i ? ", " : "", facts[i].topic);
out:
	free(q);
	return ok;
}

const struct tool_def tool_lookup = {
	.name = "lookup",
	.writes = TOOL_WRITES_NOTHING,
	.description = "Look up a fact in the offline demo reference table (simulated runs "
		       "only; the data is invented). Input: a short query naming the topic.",
	.schema_json = "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\","
		       "\"description\":\"what to look up, e.g. eldham census archive\"}},"
		       "\"required\":[\"query\"]}",
	.demo_only = true,
	.run = lookup_run,
};
