/* confine_exec — the parts of pevtui-confine, the small program that confines itself and
 * then becomes the command (it runs alone, single-threaded, before the exec). */
#ifndef PEVTUI_CONFINE_EXEC_H
#define PEVTUI_CONFINE_EXEC_H

#include <stdbool.h>

#include "strbuf.h"

/*
 * Restricts this process and all it starts with Landlock at the kernel's ABI: the whole
 * tree readable except `hidden` (folders and files: neither read nor run; their names
 * may still be listed), writes only beneath `writable`, the usual character devices
 * (/dev/null, /dev/zero, …) usable; TCP bind and connect refused unless `network` (ABI
 * 4); abstract unix sockets and signals of processes outside the sandbox refused (ABI 6).
 * false with *err (caller frees) when it could not.
 */
bool confine_landlock_apply(const struct strvec *writable, const struct strvec *hidden,
			    bool network, char **err);

/*
 * Installs the seccomp filter (libseccomp): ptrace, process_vm_*, io_uring, keyctl and
 * the key syscalls, bpf, perf_event_open, userfaultfd, mounting and new namespaces are
 * refused; unless `network`, socket() only makes AF_UNIX sockets and connect() and
 * sendto() to an address are refused. false with *err (caller frees) when it could not.
 */
bool confine_seccomp_apply(bool network, char **err);

#endif
