/* oauth_redirect — a one-request HTTP listener (poll, accept, read the request line,
 * answer) beside a pasted line; whichever comes first. */
#include "config.h"

#include "oauth_redirect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "strbuf.h"
#include "xalloc.h"

#define REQUEST_MAX 16384

struct oauth_redirect {
	int fd;
	char *uri;
	struct strbuf paste; /* a pasted line so far */
};

struct oauth_redirect *oauth_redirect_new(char **err)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		*err = xasprintf("cannot listen on 127.0.0.1 for the sign-in redirect: %s",
		                 strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct oauth_redirect *r = xcalloc(1, sizeof(*r));
	r->fd = fd;
	r->uri = xasprintf("http://127.0.0.1:%u/callback", (unsigned)ntohs(a.sin_port));
	strbuf_init(&r->paste);
	return r;
}

void oauth_redirect_free(struct oauth_redirect *r)
{
	if (!r)
		return;
	close(r->fd);
	free(r->uri);
	strbuf_release(&r->paste);
	free(r);
}

const char *oauth_redirect_uri(const struct oauth_redirect *r)
{
	return r->uri;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void answer(int c, int code, const char *text)
{
	char *resp = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
	                       "Cache-Control: no-store\r\nConnection: close\r\n"
	                       "Content-Length: %zu\r\n\r\n%s",
	                       code, code == 200 ? "OK" : "Not Found", strlen(text), text);
	(void)fd_write_all(c, resp, strlen(resp));
	free(resp);
}

/* One connection: its request target when it is GET /callback…, else NULL (answered). */
static char *serve_one(struct oauth_redirect *r, long deadline)
{
	int c = accept4(r->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return NULL;
	struct strbuf req = STRBUF_INIT;
	strbuf_init(&req);
	char buf[2048];
	while (!strstr(req.buf, "\r\n\r\n") && req.len < REQUEST_MAX) {
		struct pollfd p = {c, POLLIN, 0};
		long left = deadline - now_ms();
		if (left <= 0 || poll(&p, 1, (int)(left > 5000 ? 5000 : left)) <= 0)
			break;
		ssize_t n = read(c, buf, sizeof(buf));
		if (n <= 0)
			break;
		strbuf_add(&req, buf, (size_t)n);
	}
	char *target = NULL;
	if (!strncmp(req.buf, "GET /callback", 13)) {
		const char *s = req.buf + 4;
		target = xstrndup(s, strcspn(s, " \r\n"));
		answer(c, 200, "<!doctype html><title>pevtui</title><p>Sign-in finished. You may "
		               "close this tab and go back to the terminal.</p>\n");
	} else {
		answer(c, 404, "<!doctype html><title>pevtui</title><p>Not here.</p>\n");
	}
	strbuf_release(&req);
	close(c);
	return target;
}

/* Reads what is there on paste_fd; a whole line gives its text. *eof at end of input. */
static char *read_paste(struct oauth_redirect *r, int fd, bool *eof)
{
	char buf[1024];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n <= 0) {
		*eof = n == 0 || (errno != EINTR && errno != EAGAIN);
		if (*eof && r->paste.len)
			return strbuf_detach(&r->paste);
		return NULL;
	}
	strbuf_add(&r->paste, buf, (size_t)n);
	char *nl = memchr(r->paste.buf, '\n', r->paste.len);
	if (!nl)
		return r->paste.len > REQUEST_MAX ? strbuf_detach(&r->paste) : NULL;
	char *line = xstrndup(r->paste.buf, (size_t)(nl - r->paste.buf));
	strbuf_reset(&r->paste);
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		line[--len] = '\0';
	if (!len) {
		free(line);
		return NULL;
	}
	return line;
}

bool oauth_redirect_wait(struct oauth_redirect *r, int paste_fd, long timeout_ms, char **url,
                        char **err)
{
	long deadline = now_ms() + timeout_ms;
	*url = NULL;
	while (!*url) {
		long left = deadline - now_ms();
		if (left <= 0) {
			*err = xasprintf("no sign-in came back within %ld s", timeout_ms / 1000);
			return false;
		}
		struct pollfd p[2] = {{r->fd, POLLIN, 0}, {paste_fd, POLLIN, 0}};
		int n = poll(p, paste_fd >= 0 ? 2 : 1, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR) {
			*err = xasprintf("waiting for the sign-in redirect: %s", strerror(errno));
			return false;
		}
		if (n > 0 && (p[0].revents & POLLIN)) {
			char *target = serve_one(r, deadline);
			if (target) {
				*url = xasprintf("http://127.0.0.1%s", target);
				free(target);
			}
		}
		if (!*url && paste_fd >= 0 && n > 0 && (p[1].revents & (POLLIN | POLLHUP))) {
			bool eof = false;
			char *line = read_paste(r, paste_fd, &eof);
			if (line && !strchr(line, '?')) { /* only the query was pasted */
				char *q = xasprintf("?%s", line);
				free(line);
				line = q;
			}
			*url = line;
			if (!*url && eof)
				paste_fd = -1; /* nothing more will come: wait for the browser alone */
		}
	}
	return true;
}
