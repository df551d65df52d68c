/* report_check — the engine's report.md against an offline render of its journal. */
#include "config.h"

#include "report_check.h"

#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "testdir.h"
#include "xalloc.h"

/* "line N: live «…» / journal «…»" for the first line where a and b part. */
static char *first_difference(const char *a, const char *b)
{
	size_t line = 1, start = 0, i = 0, ea, eb;

	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n') {
			line++;
			start = i + 1;
		}
		i++;
	}
	ea = start + strcspn(a + start, "\n");
	eb = start + strcspn(b + start, "\n");
	return xasprintf("report.md differs from the journal's render at line %zu:\n"
	                 "  live:    %.*s\n  journal: %.*s",
	                 line, (int)(ea - start), a + start, (int)(eb - start), b + start);
}

char *report_check_live(const char *run_dir)
{
	char *path = xasprintf("%s/report.md", run_dir), *live = testdir_slurp(path);
	char *offline = NULL, *err = NULL, *why = NULL;

	if (!live)
		why = xasprintf("%s was not written", path);
	else if (!report_write(run_dir, &err))
		why = xasprintf("report_write: %s", err);
	else if (!(offline = testdir_slurp(path)))
		why = xasprintf("%s cannot be read back", path);
	else if (strcmp(live, offline) != 0)
		why = first_difference(live, offline);
	free(err);
	free(live);
	free(offline);
	free(path);
	return why;
}
