/* netguard — which network destinations a tool may reach: the address classes that lie
 * inside the operator's machine or network, and the operator's list of allowed hosts. */
#ifndef PEVTUI_NETGUARD_H
#define PEVTUI_NETGUARD_H

#include <stdbool.h>
#include <stddef.h>

struct sockaddr;
struct strvec;

/* The class of an address; everything but NETGUARD_PUBLIC is refused unless allowed. */
enum netguard_kind {
	NETGUARD_PUBLIC,
	NETGUARD_LOOPBACK,     /* 127/8, ::1 */
	NETGUARD_PRIVATE,      /* 10/8, 172.16/12, 192.168/16 */
	NETGUARD_SHARED,       /* 100.64/10, carrier-grade NAT */
	NETGUARD_LINK_LOCAL,   /* 169.254/16 (cloud metadata), fe80::/10 */
	NETGUARD_MULTICAST,    /* 224/4, ff00::/8 */
	NETGUARD_UNSPECIFIED,  /* 0/8, :: */
	NETGUARD_BROADCAST,    /* 255.255.255.255 */
	NETGUARD_UNIQUE_LOCAL, /* fc00::/7 */
	NETGUARD_SITE_LOCAL,   /* fec0::/10 (deprecated, still routed by some networks) */
	NETGUARD_UNKNOWN,      /* not IPv4 or IPv6, or a short address */
};

/*
 * Classifies an IPv4 or IPv6 socket address (`len` bytes at `sa`). An IPv6 address that
 * carries an IPv4 one — mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, SIIT
 * ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:AABB:CCDD:: — gets the class of the
 * IPv4 address inside it, so no spelling of a local address passes as public.
 */
enum netguard_kind netguard_classify(const struct sockaddr *sa, size_t len);

/* "loopback", "private", "link-local", …: completes "a … address". Static storage. */
const char *netguard_kind_name(enum netguard_kind k);

/*
 * Whether `host` (as a URL names it: a name, an IPv4 address, or an IPv6 address with or
 * without brackets) is on the list. Names match case-insensitively and a trailing dot is
 * ignored; IPv6 addresses match by value (::1 is 0:0::1). No wildcards, no resolution.
 * `allow` may be NULL (an empty list).
 */
bool netguard_host_allowed(const struct strvec *allow, const char *host);

/*
 * Whether `entry` can be an item of an allow list: a host name or an IPv4 address
 * (letters, digits, '.', '-', '_'), or an IPv6 address with or without brackets — not a
 * URL, not host:port, no wildcards.
 */
bool netguard_valid_entry(const char *entry);

#endif
