/* fuzz_requests — libFuzzer target: arbitrary bytes as a run's requests.jsonl (a file in
 * the run folder: torn by a crash, edited by hand, damaged on disk) must never crash the
 * readers the drill-down uses, and what they give back stays within its bounds. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "requests.h"
#include "xalloc.h"

#define MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *run_dir; /* made once, the file replaced for each input */

static void read_all(const char *step, int attempt)
{
	struct request_ref *v = NULL;
	size_t n = requests_list(run_dir, step, attempt, &v);

	for (size_t i = 0; i < n; i++) {
		struct request_ref again;
		size_t len = 0;
		bool cut = false;
		char *err = NULL, *body = requests_read(run_dir, &v[i], MAX, &len, &cut, &err);

		if (body && (len > MAX || strlen(body) > len))
			abort(); /* bounded, NUL-terminated at len (a body may hold a NUL) */
		if (!body && !err)
			abort(); /* a failure says why */
		free(body);
		free(err);
		if (requests_find(run_dir, v[i].name, &again))
			requests_ref_release(&again);
		free(requests_file_name(&v[i]));
	}
	requests_list_free(v, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path;
	int fd;

	if (!run_dir) {
		char tmpl[] = "/tmp/fuzz-requests-XXXXXX";
		run_dir = xstrdup(mkdtemp(tmpl) ? tmpl : "/tmp");
	}
	path = xasprintf("%s/%s", run_dir, REQUESTS_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (size && write(fd, data, size) < 0)
			abort();
		close(fd);
		read_all(NULL, 0);
		read_all("s1", 0);
		read_all("s1", 2);
	}
	free(path);
	return 0;
}
