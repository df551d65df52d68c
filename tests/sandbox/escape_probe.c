/* escape_probe — the attempts of the sandbox's escape suite that a shell cannot make by
 * itself (sockets, ptrace, io_uring, keys), and the host's side of them: servers that
 * count who reached them. Run inside a confined command it prints "denied: WHAT (why)"
 * and exits 0 when the kernel refused, "ALLOWED: WHAT" and exits 1 when it did not.
 *
 *   escape_probe tcp PORT | tcp6 PORT | udp PORT | raw | abstract NAME
 *   escape_probe ptrace PID | vmread PID | kill PID | io_uring | keyctl | nnp
 *   escape_probe serve tcp|udp|abstract PORT|NAME COUNTFILE   (the host's side; PORT 0:
 *                                    the kernel picks one, written to COUNTFILE.port)
 *   escape_probe findings JOURNAL   (the first step's findings: what the scripted model
 *                                    was told by the tool, as the tests' sim writes it) */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

static int verdict(const char *what, long rc)
{
	if (rc < 0) {
		printf("denied: %s (%s)\n", what, strerror(errno));
		return 0;
	}
	printf("ALLOWED: %s\n", what);
	return 1;
}

static socklen_t abstract_addr(const char *name, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	size_t n = strlen(name);
	if (n > sizeof(a->sun_path) - 2)
		n = sizeof(a->sun_path) - 2;
	memcpy(a->sun_path + 1, name, n); /* sun_path[0] == 0: abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void bump(const char *countfile, int *count)
{
	(*count)++;
	FILE *f = fopen(countfile, "w");
	if (f) {
		fprintf(f, "%d\n", *count);
		fclose(f);
	}
}

/* Serves until killed; COUNTFILE holds the number of connections (datagrams for udp),
 * written as 0 once listening. */
static int serve(const char *kind, const char *where, const char *countfile)
{
	int count = -1, fd;
	if (!strcmp(kind, "abstract")) {
		struct sockaddr_un a;
		socklen_t len = abstract_addr(where, &a);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 8) < 0)
			return perror("serve"), 2;
	} else {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(where))};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		bool udp = !strcmp(kind, "udp");
		fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (!udp && listen(fd, 8) < 0))
			return perror("serve"), 2;
		/* port 0: the kernel's choice, written to COUNTFILE.port before COUNTFILE */
		socklen_t len = sizeof(a);
		char *portfile = malloc(strlen(countfile) + 6);
		if (portfile && getsockname(fd, (struct sockaddr *)&a, &len) == 0) {
			sprintf(portfile, "%s.port", countfile);
			FILE *pf = fopen(portfile, "w");
			if (pf) {
				fprintf(pf, "%d\n", ntohs(a.sin_port));
				fclose(pf);
			}
		}
		free(portfile);
		if (udp) {
			bump(countfile, &count);
			for (char b[64];;)
				if (recv(fd, b, sizeof(b), 0) >= 0)
					bump(countfile, &count);
		}
	}
	bump(countfile, &count);
	for (;;) {
		int c = accept(fd, NULL, NULL);
		if (c >= 0) {
			bump(countfile, &count);
			close(c);
		}
	}
}

/* The first "findings" string anywhere in o. */
static const char *find_findings(const cJSON *o)
{
	const cJSON *c;
	cJSON_ArrayForEach(c, o)
	{
		if (c->string && !strcmp(c->string, "findings") && cJSON_IsString(c))
			return c->valuestring;
		const char *f = cJSON_IsObject(c) || cJSON_IsArray(c) ? find_findings(c) : NULL;
		if (f)
			return f;
	}
	return NULL;
}

static int findings(const char *journal)
{
	FILE *f = fopen(journal, "r");
	char *line = NULL;
	size_t cap = 0;
	int rc = 1;
	while (f && rc && getline(&line, &cap, f) > 0) {
		cJSON *o = cJSON_Parse(line);
		const char *text = o ? find_findings(o) : NULL;
		if (text) {
			fputs(text, stdout);
			rc = 0;
		}
		cJSON_Delete(o);
	}
	free(line);
	if (f)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "0";
	if (!strcmp(what, "findings") && argc == 3)
		return findings(argv[2]);
	if (!strcmp(what, "serve") && argc == 5)
		return serve(argv[2], argv[3], argv[4]);
	if (!strcmp(what, "tcp") || !strcmp(what, "udp")) {
		bool udp = !strcmp(what, "udp");
		int fd = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
		if (fd < 0)
			return verdict("an IPv4 socket", -1);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(arg))};
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (udp)
			return verdict("a UDP datagram to 127.0.0.1",
				       sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)));
		return verdict("a TCP connection to 127.0.0.1",
			       connect(fd, (struct sockaddr *)&a, sizeof(a)));
	}
	if (!strcmp(what, "tcp6")) {
		int fd = socket(AF_INET6, SOCK_STREAM, 0);
		if (fd < 0)
			return verdict("an IPv6 socket", -1);
		struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(arg))};
		a.sin6_addr = in6addr_loopback;
		return verdict("a TCP connection to ::1", connect(fd, (struct sockaddr *)&a, sizeof(a)));
	}
	if (!strcmp(what, "raw"))
		return verdict("a raw socket", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
	if (!strcmp(what, "abstract")) {
		struct sockaddr_un a;
		socklen_t len = abstract_addr(arg, &a);
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		if (fd < 0)
			return verdict("a unix socket", -1);
		return verdict("a connection to a host abstract socket",
			       connect(fd, (struct sockaddr *)&a, len));
	}
	if (!strcmp(what, "ptrace")) {
		long rc = ptrace(PTRACE_ATTACH, (pid_t)atoi(arg), NULL, NULL);
		if (rc == 0)
			ptrace(PTRACE_DETACH, (pid_t)atoi(arg), NULL, NULL);
		return verdict("ptrace of a process outside", rc);
	}
	if (!strcmp(what, "vmread")) {
		char buf[16];
		struct iovec local = {buf, sizeof(buf)}, remote = {(void *)0x400000, sizeof(buf)};
		long rc = syscall(SYS_process_vm_readv, (pid_t)atoi(arg), &local, 1, &remote, 1, 0);
		/* EFAULT means the kernel let us in and only the address was wrong */
		if (rc < 0 && errno == EFAULT)
			rc = 0;
		return verdict("process_vm_readv of a process outside", rc);
	}
	if (!strcmp(what, "kill"))
		return verdict("a signal to a process outside", kill((pid_t)atoi(arg), SIGTERM));
	if (!strcmp(what, "io_uring")) {
		char params[120] = {0};
#ifdef SYS_io_uring_setup
		long rc = syscall(SYS_io_uring_setup, 4, params);
#else
		long rc = syscall(425, 4, params);
#endif
		return verdict("io_uring_setup", rc);
	}
	if (!strcmp(what, "keyctl")) {
		/* KEYCTL_GET_KEYRING_ID of the session keyring */
		long rc = syscall(SYS_keyctl, 0, -3, 0);
		return verdict("keyctl", rc);
	}
	if (!strcmp(what, "nnp")) {
		int v = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
		printf("no_new_privs=%d\n", v);
		return v == 1 ? 0 : 1;
	}
	fprintf(stderr, "escape_probe: unknown attempt \"%s\"\n", what);
	return 2;
}
