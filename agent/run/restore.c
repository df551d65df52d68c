/* restore — a resumed run's settings from its run.start, validated and never widened. */
#include "config.h"

#include "restore.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "gate.h"
#include "jsonx.h"
#include "settings.h"
#include "strbuf.h"
#include "textsan.h"
#include "xalloc.h"

/* A value from the journal as it may appear in a message: clean and short. */
static char *shown(const char *v)
{
	char *clean = textsan_clean(v, strlen(v), 0);
	char *cut = textsan_truncate(clean, 60);

	free(clean);
	return cut;
}

static void set(char **dst, const char *v)
{
	free(*dst);
	*dst = xstrdup(v);
}

/* The same directory: by what it resolves to when both exist, else by name. */
static bool same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

static void gate_names(struct strbuf *sb, unsigned mask)
{
	bool first = true;

	for (int k = 0; k < GATE__COUNT; k++) {
		if (!(mask & GATE_MASK(k)))
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : ",", gate_kind_name(k));
		first = false;
	}
}

struct number {
	const char *json;  /* its name in run.start's policy */
	const char *key;   /* its name for settings_policy_check */
	const char *flag;  /* the flag that chooses it, or NULL */
	int field;         /* enum restore_field, or -1 */
	size_t off;        /* into struct settings */
	bool whole;        /* an int field */
};

#define OFF(f) offsetof(struct settings, f)

static const struct number numbers[] = {
	{"max_retries", "max_retries", "--max-retries", RESTORE_MAX_RETRIES, OFF(max_retries),
	 true},
	{"max_replans", "max_replans", "--max-replans", RESTORE_MAX_REPLANS, OFF(max_replans),
	 true},
	{"parallel", "parallel", "--parallel", RESTORE_PARALLEL, OFF(parallel), true},
	{"budget_usd", "budget", "--budget", RESTORE_BUDGET, OFF(budget_usd), false},
	{"confidence_threshold", "confidence_threshold", NULL, -1, OFF(confidence_threshold),
	 false},
	{"chaos", "chaos", "--chaos", RESTORE_CHAOS, OFF(chaos), false},
};

static bool restore_numbers(struct settings *s, const cJSON *pol, unsigned given,
			    struct strbuf *took, char **err)
{
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		const struct number *n = &numbers[i];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(pol, n->json);
		const char *must;
		double d;

		if ((n->field >= 0 && (given & RESTORE_GIVEN(n->field))) || !v)
			continue;
		if (cJSON_IsNull(v) && !strcmp(n->key, "budget"))
			d = 0; /* no budget */
		else if (!cJSON_IsNumber(v)) {
			*err = xasprintf("cannot resume: the journal's policy has a %s that is not a "
					 "number (a run folder from elsewhere?)%s%s%s",
					 n->json, n->flag ? "; choose it with " : "",
					 n->flag ? n->flag : "", n->flag ? " N" : "");
			return false;
		} else
			d = v->valuedouble;
		must = settings_policy_check(n->key, d);
		if (must) {
			*err = xasprintf("cannot resume: the journal's policy sets %s to %g, but it "
					 "must be %s (a run folder from elsewhere?)%s%s%s",
					 n->json, d, must, n->flag ? "; choose it with " : "",
					 n->flag ? n->flag : "", n->flag ? " N" : "");
			return false;
		}
		if (n->whole)
			*(int *)((char *)s + n->off) = (int)d;
		else
			*(double *)((char *)s + n->off) = d;
		if (!strcmp(n->key, "budget"))
			strbuf_addf(took, d > 0 ? ", budget $%.2f" : ", no budget", d);
		else
			strbuf_addf(took, ", %s %g", n->json, d);
	}
	return true;
}

bool restore_settings(struct settings *s, const char *run_start_json, const char *run_dir,
		      unsigned given, char **said, char **err)
{
	cJSON *o = cJSON_Parse(run_start_json);
	const cJSON *pol, *models, *g;
	struct strbuf took = STRBUF_INIT, left = STRBUF_INIT;
	const char *v;
	bool ok = false, yes = false;

	strbuf_init(&took);
	strbuf_init(&left);
	if (!cJSON_IsObject(o)) {
		*err = xstrdup("cannot resume: the journal's run.start is not a JSON object");
		goto out;
	}
	v = jsonx_str(o, "task");
	if (!v || !*v) {
		*err = xstrdup("cannot resume: the journal's run.start has no task");
		goto out;
	}
	set(&s->task, v);
	strbuf_adds(&took, "task");

	v = jsonx_str(o, "provider");
	if (v && !(given & RESTORE_GIVEN(RESTORE_PROVIDER))) {
		if (strcmp(v, "anthropic") && strcmp(v, "openai") && strcmp(v, "sim")) {
			char *sv = shown(v);
			*err = xasprintf("cannot resume: the journal names the provider \"%s\"; "
					 "choose one with --provider anthropic, openai or sim",
					 sv);
			free(sv);
			goto out;
		}
		set(&s->provider, v);
		strbuf_addf(&took, ", provider %s", v);
	}
	v = jsonx_str(o, "scenario");
	if (v && !(given & RESTORE_GIVEN(RESTORE_SCENARIO)))
		set(&s->scenario, v);
	models = cJSON_GetObjectItemCaseSensitive(o, "models");
	for (int r = 0; r < ROLE__COUNT; r++) {
		v = jsonx_str(models, llm_role_name(r));
		if (v && *v && !(given & RESTORE_GIVEN(RESTORE_MODEL_PLANNER + r)))
			set(&s->model[r], v);
	}
	strbuf_adds(&took, ", models");

	pol = cJSON_GetObjectItemCaseSensitive(o, "policy");
	if (!restore_numbers(s, pol, given, &took, err))
		goto out;

	/* The rules the run checkpointed by are the run's: today's config does not change
	 * what its checkpoints leave out. */
	g = cJSON_GetObjectItemCaseSensitive(pol, "checkpoints");
	if (cJSON_IsObject(g)) {
		const cJSON *k;
		double d;
		strvec_clear(&s->checkpoint_exclude);
		cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(g, "exclude"))
			if (cJSON_IsString(k))
				strvec_push(&s->checkpoint_exclude, k->valuestring);
		if (jsonx_num(g, "max_file", &d) && d >= 1 && d <= 2147483647.0)
			s->checkpoint_max_file = (int)d;
		if (jsonx_num(g, "max_total", &d) && d >= 1 && d <= 2147483647.0)
			s->checkpoint_max_total = (int)d;
		strbuf_adds(&took, ", checkpoint rules");
	}

	/* --yes approves gates unasked: only the operator, now, can say that. */
	if (jsonx_bool(pol, "yes", &yes) && yes && !(given & RESTORE_GIVEN(RESTORE_YES)))
		strbuf_adds(&left, "; not carried over: --yes (give it again to approve gates "
				   "unasked)");

	/* Gates: the journal may add to this machine's, never take one away. */
	g = cJSON_GetObjectItemCaseSensitive(pol, "gates");
	if (cJSON_IsArray(g) && !(given & RESTORE_GIVEN(RESTORE_GATES))) {
		unsigned journal = 0, before = s->gates;
		const cJSON *k;

		cJSON_ArrayForEach(k, g)
		{
			int kind = cJSON_IsString(k) ? gate_kind_from_name(k->valuestring) : -1;
			if (kind >= 0)
				journal |= GATE_MASK(kind);
		}
		s->gates = before | journal;
		strbuf_adds(&took, "; gates ");
		gate_names(&took, s->gates);
		if (before & ~journal) {
			strbuf_adds(&took, " (");
			gate_names(&took, before & ~journal);
			strbuf_adds(&took, " from this machine's settings: a journal cannot turn "
					   "a gate off, --gate can)");
		}
	}

	/* The workspace: the run's own folder, or the operator names it again. */
	v = jsonx_str(o, "workspace");
	if (!(given & RESTORE_GIVEN(RESTORE_WORKSPACE))) {
		/* The run's own folder is trusted only as a folder: a link there (a run folder
		 * from elsewhere) could aim the tools and the restores anywhere. */
		char *own = xasprintf("%s/workspace", run_dir);
		struct stat st;

		if (lstat(own, &st) == 0 && S_ISLNK(st.st_mode)) {
			char *so = shown(own);
			*err = xasprintf("cannot resume: %s is a symbolic link, not the run's own "
					 "folder; to resume in the folder it points to, say so: "
					 "--workspace DIR",
					 so);
			free(so);
			free(own);
			goto out;
		}
		free(own);
	}
	if (v && !(given & RESTORE_GIVEN(RESTORE_WORKSPACE))) {
		char *own = xasprintf("%s/workspace", run_dir);
		bool same = same_dir(v, own);

		free(own);
		/* The folder the operator stands in is the run's workspace: that names it. */
		if (!same && same_dir(v, ".")) {
			set(&s->workspace, v);
			strbuf_adds(&took, ", workspace (the current folder)");
		} else if (!same) {
			char *sv = shown(v);
			*err = xasprintf("cannot resume: the journal puts the workspace at %s, "
					 "outside the run's folder; to resume it there, run this in "
					 "that folder or say so: --workspace %s",
					 sv, sv);
			free(sv);
			goto out;
		} else {
			free(s->workspace);
			s->workspace = NULL; /* RUNDIR/workspace */
		}
	}
	*said = xasprintf("from the journal: %s%s", took.buf, left.buf);
	ok = true;
out:
	strbuf_release(&took);
	strbuf_release(&left);
	cJSON_Delete(o);
	return ok;
}
