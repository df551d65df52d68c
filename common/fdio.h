/* fdio — writing all of a buffer to a descriptor. */
#ifndef PEVTUI_FDIO_H
#define PEVTUI_FDIO_H

#include <stddef.h>

/* Writes all `len` bytes, going on after short writes and EINTR. 0, or the errno value of
 * the failure (EIO when the kernel wrote nothing and said nothing). */
int fd_write_all(int fd, const void *buf, size_t len);

#endif
