/* fuzz_requests — libFuzzer target: arbitrary bytes as a run's requests.jsonl (a file in
 * the run folder: torn by a crash, edited by hand, damaged on disk) must never crash the
 * readers the drill-down uses, and what they give back stays within its bounds; a
 * listing kept while the file grew (requests_index) lists what a fresh one does. */
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

/* The file as its first `k` bytes, listed through an index; then whole (the rest
 * appended), listed again through it: the same records as a listing of the whole file. */
static void grow(const char *path, const uint8_t *data, size_t size, size_t k)
{
	struct requests_index *ix = requests_index_new(run_dir);
	struct request_ref *a, *b;
	size_t n, m;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	if (k && write(fd, data, k) < 0)
		abort();
	n = requests_index_list(ix, NULL, 0, &a);
	requests_list_free(a, n);
	if (size > k && write(fd, data + k, size - k) < 0)
		abort();
	close(fd);
	n = requests_index_list(ix, NULL, 0, &a);
	m = requests_list(run_dir, NULL, 0, &b);
	if (n != m)
		abort();
	for (size_t i = 0; i < n; i++)
		if (a[i].seq != b[i].seq || a[i].body_off != b[i].body_off ||
		    a[i].body_len != b[i].body_len || a[i].as_text != b[i].as_text ||
		    strcmp(a[i].role, b[i].role) || strcmp(a[i].step, b[i].step))
			abort();
	requests_list_free(a, n);
	requests_list_free(b, m);
	requests_index_free(ix);
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
		grow(path, data, size, size ? data[0] * size / 256 : 0);
	}
	free(path);
	return 0;
}
