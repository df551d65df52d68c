/* landlock_abi — the kernel's Landlock interface as of ABI 6, written out here because
 * the system headers of older distributions (Debian 12: ABI 2) lack the later parts. The
 * values are the kernel's (include/uapi/linux/landlock.h); the struct may be passed whole
 * to any kernel: one that knows fewer fields accepts them when they are zero. */
#ifndef PEVTUI_LANDLOCK_ABI_H
#define PEVTUI_LANDLOCK_ABI_H

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

struct confine_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct confine_ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define CONFINE_LL_VERSION (1U << 0)
#define CONFINE_LL_RULE_PATH_BENEATH 1

#define CONFINE_LL_FS_EXECUTE (1ULL << 0)
#define CONFINE_LL_FS_WRITE_FILE (1ULL << 1)
#define CONFINE_LL_FS_READ_FILE (1ULL << 2)
#define CONFINE_LL_FS_READ_DIR (1ULL << 3)
#define CONFINE_LL_FS_REMOVE_DIR (1ULL << 4)
#define CONFINE_LL_FS_REMOVE_FILE (1ULL << 5)
#define CONFINE_LL_FS_MAKE_CHAR (1ULL << 6)
#define CONFINE_LL_FS_MAKE_DIR (1ULL << 7)
#define CONFINE_LL_FS_MAKE_REG (1ULL << 8)
#define CONFINE_LL_FS_MAKE_SOCK (1ULL << 9)
#define CONFINE_LL_FS_MAKE_FIFO (1ULL << 10)
#define CONFINE_LL_FS_MAKE_BLOCK (1ULL << 11)
#define CONFINE_LL_FS_MAKE_SYM (1ULL << 12)
#define CONFINE_LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define CONFINE_LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define CONFINE_LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define CONFINE_LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define CONFINE_LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#define CONFINE_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define CONFINE_LL_SCOPE_SIGNAL (1ULL << 1)        /* ABI 6 */

/* The ABI this kernel offers; 0 when Landlock is missing or turned off. */
static inline int confine_ll_abi(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0, CONFINE_LL_VERSION);
	return v > 0 ? (int)v : 0;
}

#endif
