/* netguard — which network destinations a tool may reach: the address classes that lie
 * inside the operator's machine or network, and the operator's list of allowed hosts. */
#include "config.h"
#include "netguard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "strbuf.h"
#include "xalloc.h"

/* `a` in host byte order. */
static enum netguard_kind classify_v4(uint32_t a)
{
	if ((a >> 24) == 0)
		return NETGUARD_UNSPECIFIED; /* 0/8: "this network"; 0.0.0.0 reaches the host */
	if ((a >> 24) == 10)
		return NETGUARD_PRIVATE;
	if ((a & 0xffc00000u) == 0x64400000u)
		return NETGUARD_SHARED;
	if ((a >> 24) == 127)
		return NETGUARD_LOOPBACK;
	if ((a & 0xffff0000u) == 0xa9fe0000u)
		return NETGUARD_LINK_LOCAL;
	if ((a & 0xfff00000u) == 0xac100000u)
		return NETGUARD_PRIVATE;
	if ((a & 0xffff0000u) == 0xc0a80000u)
		return NETGUARD_PRIVATE;
	if ((a & 0xf0000000u) == 0xe0000000u)
		return NETGUARD_MULTICAST;
	if (a == 0xffffffffu)
		return NETGUARD_BROADCAST;
	return NETGUARD_PUBLIC;
}

static uint32_t v4_at(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static enum netguard_kind classify_v6(const unsigned char b[16])
{
	static const unsigned char nat64[4] = {0x00, 0x64, 0xff, 0x9b};

	if (zero(b, 16))
		return NETGUARD_UNSPECIFIED;
	if (zero(b, 15) && b[15] == 1)
		return NETGUARD_LOOPBACK;
	/* The forms that carry an IPv4 address: the kernel, a translator or a relay may
	 * deliver them to that IPv4 address, so they are judged by it. */
	if (zero(b, 10) && b[10] == 0xff && b[11] == 0xff) /* ::ffff:a.b.c.d, mapped */
		return classify_v4(v4_at(b + 12));
	if (zero(b, 12)) /* ::a.b.c.d, compatible (deprecated) */
		return classify_v4(v4_at(b + 12));
	if (zero(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
		return classify_v4(v4_at(b + 12));  /* ::ffff:0:a.b.c.d, SIIT */
	if (!memcmp(b, nat64, 4) && zero(b + 4, 8)) /* 64:ff9b::/96, NAT64 */
		return classify_v4(v4_at(b + 12));
	if (b[0] == 0x20 && b[1] == 0x02) /* 2002:AABB:CCDD::/48, 6to4 */
		return classify_v4(v4_at(b + 2));
	if (b[0] == 0xff)
		return NETGUARD_MULTICAST;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		return NETGUARD_LINK_LOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		return NETGUARD_SITE_LOCAL;
	if ((b[0] & 0xfe) == 0xfc)
		return NETGUARD_UNIQUE_LOCAL;
	return NETGUARD_PUBLIC;
}

enum netguard_kind netguard_classify(const struct sockaddr *sa, size_t len)
{
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;

	if (!sa || len < sizeof(sa->sa_family))
		return NETGUARD_UNKNOWN;
	/* Copied out: the caller's bytes need not be aligned for the wider structs. */
	if (sa->sa_family == AF_INET && len >= sizeof(in4)) {
		memcpy(&in4, sa, sizeof(in4));
		return classify_v4(ntohl(in4.sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(in6)) {
		memcpy(&in6, sa, sizeof(in6));
		return classify_v6(in6.sin6_addr.s6_addr);
	}
	return NETGUARD_UNKNOWN;
}

const char *netguard_kind_name(enum netguard_kind k)
{
	switch (k) {
	case NETGUARD_PUBLIC: return "public";
	case NETGUARD_LOOPBACK: return "loopback";
	case NETGUARD_PRIVATE: return "private";
	case NETGUARD_SHARED: return "shared (carrier-grade NAT)";
	case NETGUARD_LINK_LOCAL: return "link-local";
	case NETGUARD_MULTICAST: return "multicast";
	case NETGUARD_UNSPECIFIED: return "unspecified";
	case NETGUARD_BROADCAST: return "broadcast";
	case NETGUARD_UNIQUE_LOCAL: return "unique-local";
	case NETGUARD_SITE_LOCAL: return "site-local";
	case NETGUARD_UNKNOWN: break;
	}
	return "non-IP";
}

/* The host without IPv6 brackets and without one trailing dot; caller frees. */
static char *bare(const char *host)
{
	size_t n = strlen(host);

	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	if (n > 1 && host[n - 1] == '.')
		n--;
	return xstrndup(host, n);
}

static bool same_host(const char *a, const char *b)
{
	struct in6_addr x, y;

	if (inet_pton(AF_INET6, a, &x) == 1 && inet_pton(AF_INET6, b, &y) == 1)
		return memcmp(&x, &y, sizeof(x)) == 0;
	return strcasecmp(a, b) == 0;
}

bool netguard_host_allowed(const struct strvec *allow, const char *host)
{
	bool found = false;
	char *h;

	if (!allow || !host || !*host)
		return false;
	h = bare(host);
	for (size_t i = 0; i < allow->n && !found; i++) {
		char *e = bare(allow->v[i]);

		found = *e && same_host(e, h);
		free(e);
	}
	free(h);
	return found;
}

bool netguard_valid_entry(const char *entry)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					 "0123456789.-_";
	struct in6_addr a;
	char *e;
	bool ok;

	if (!entry || !*entry)
		return false;
	e = bare(entry);
	ok = inet_pton(AF_INET6, e, &a) == 1 ||
	     (*e && *e != '.' && strlen(e) <= 253 && strspn(e, name_chars) == strlen(e));
	free(e);
	return ok;
}
