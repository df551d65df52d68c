/* seccomp — pevtui-confine's system-call filter (libseccomp): what a confined command
 * never needs and an escape would (another process's memory, kernel keys, io_uring, which
 * Landlock does not see, new namespaces) and, with the network off, every socket but
 * AF_UNIX and every connect. */
#include "config.h"

#include "confine_exec.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/socket.h>

#include "xalloc.h"

/* Refused with EPERM. Names libseccomp does not know on this architecture are skipped. */
static const char *const denied[] = {
	"ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
	"io_uring_register", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
	"userfaultfd", "unshare", "setns", "mount", "umount2", "pivot_root", "kexec_load",
	"kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
	"fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree", "mount_setattr",
	"acct", "swapon", "swapoff", "reboot",
};

static bool rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
		 const struct scmp_arg_cmp *cmp, char **err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return true;
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0) {
		*err = xasprintf("cannot add the seccomp rule for %s: %s", name, strerror(-rc));
		return false;
	}
	return true;
}

bool confine_seccomp_apply(bool network, char **err)
{
	static const unsigned long ns_flags[] = {CLONE_NEWNS,  CLONE_NEWUSER, CLONE_NEWNET,
						 CLONE_NEWPID, CLONE_NEWIPC,  CLONE_NEWUTS,
						 CLONE_NEWCGROUP};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	bool ok = ctx != NULL;
	*err = NULL;
	if (!ctx) {
		*err = xstrdup("cannot start a seccomp filter");
		return false;
	}
	for (size_t i = 0; ok && i < sizeof(denied) / sizeof(denied[0]); i++)
		ok = rule(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0, NULL, err);
	/* clone3's flags sit in memory a filter cannot read: ENOSYS makes the C library
	 * fall back to clone, whose flags it can. */
	if (ok)
		ok = rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err);
	for (size_t i = 0; ok && i < sizeof(ns_flags) / sizeof(ns_flags[0]); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		ok = rule(ctx, SCMP_ACT_ERRNO(EPERM), "clone", 1, &c, err);
	}
	if (ok && !network) {
		struct scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
		struct scmp_arg_cmp to_addr = SCMP_A4(SCMP_CMP_NE, 0);
		ok = rule(ctx, SCMP_ACT_ERRNO(EPERM), "socket", 1, &not_unix, err) &&
		     rule(ctx, SCMP_ACT_ERRNO(EPERM), "connect", 0, NULL, err) &&
		     rule(ctx, SCMP_ACT_ERRNO(EPERM), "sendto", 1, &to_addr, err);
	}
	if (ok) {
		int rc = seccomp_load(ctx);
		if (rc < 0) {
			*err = xasprintf("cannot load the seccomp filter: %s", strerror(-rc));
			ok = false;
		}
	}
	seccomp_release(ctx);
	return ok;
}
