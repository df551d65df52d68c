/* loose — uncompressed loose objects for the checkpoint store (see loose.h). */
#include "config.h"

#include "loose.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "fdio.h"
#include "xalloc.h"

struct loose {
	int dfd;
	z_stream zs; /* kept between objects: deflateInit's tables cost more than the
		      * small objects themselves */
	bool zs_ready;
	unsigned char have_dir[256 / 8]; /* fan-out folders known to exist */
	unsigned long seq;               /* for temporary names */
};

struct loose *loose_open(const char *objects_dir)
{
	int fd = open(objects_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct loose *l;

	if (fd < 0)
		return NULL;
	l = xcalloc(1, sizeof(*l));
	l->dfd = fd;
	return l;
}

void loose_close(struct loose *l)
{
	if (!l)
		return;
	close(l->dfd);
	if (l->zs_ready)
		deflateEnd(&l->zs);
	free(l);
}

/* The object's file in git's format: zlib of "TYPE SIZE\0" and the bytes, at level 0. */
static unsigned char *deflate_object(struct loose *l, git_object_t type, const void *buf,
                                     size_t len, size_t *out_len)
{
	char head[64];
	int hlen = snprintf(head, sizeof(head), "%s %zu", git_object_type2string(type), len);
	const unsigned char *p = buf;
	size_t left = len, cap;
	unsigned char *out;
	z_stream *zs = &l->zs;
	int rc;

	if (hlen < 0)
		return NULL;
	if (!l->zs_ready) {
		memset(zs, 0, sizeof(*zs));
		if (deflateInit(zs, Z_NO_COMPRESSION) != Z_OK)
			return NULL;
		l->zs_ready = true;
	} else if (deflateReset(zs) != Z_OK) {
		return NULL;
	}
	cap = deflateBound(zs, (uLong)hlen + 1 + len) + 64;
	out = xmalloc(cap);
	zs->next_out = out;
	zs->avail_out = (uInt)(cap > UINT_MAX ? UINT_MAX : cap);
	zs->next_in = (Bytef *)head;
	zs->avail_in = (uInt)hlen + 1; /* with its NUL */
	rc = deflate(zs, Z_NO_FLUSH);
	while (rc == Z_OK || rc == Z_BUF_ERROR) {
		size_t done = (size_t)(zs->next_out - out);
		if (zs->avail_in == 0 && left > 0) {
			size_t n = left > (1u << 30) ? (1u << 30) : left;
			zs->next_in = (Bytef *)p;
			zs->avail_in = (uInt)n;
			p += n;
			left -= n;
		}
		if (zs->avail_out == 0) {
			out = xgrow(out, &cap, cap + (1u << 16), 1);
			zs->next_out = out + done;
		}
		zs->avail_out = (uInt)(cap - (size_t)(zs->next_out - out) > UINT_MAX
		                          ? UINT_MAX
		                          : cap - (size_t)(zs->next_out - out));
		rc = deflate(zs, left || zs->avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (rc == Z_STREAM_END)
			break;
	}
	*out_len = (size_t)(zs->next_out - out);
	if (rc != Z_STREAM_END) {
		free(out);
		errno = EIO;
		return NULL;
	}
	return out;
}

bool loose_write(struct loose *l, git_object_t type, const void *buf, size_t len, git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1], dir[3], path[GIT_OID_HEXSZ + 2], tmp[64];
	unsigned char *z;
	size_t zlen;
	struct stat st;
	unsigned slot;
	bool ok;
	int fd, e;

	if (git_odb_hash(oid, buf, len, type) < 0) {
		errno = EINVAL;
		return false;
	}
	git_oid_tostr(hex, sizeof(hex), oid);
	memcpy(dir, hex, 2);
	dir[2] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, hex + 2);
	slot = (unsigned)strtoul(dir, NULL, 16);
	if (l->have_dir[slot / 8] & (1u << (slot % 8))) {
		if (fstatat(l->dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true; /* stored already: the same bytes under the same name */
	} else if (mkdirat(l->dfd, dir, 0755) < 0) {
		if (errno != EEXIST)
			return false;
		if (fstatat(l->dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			l->have_dir[slot / 8] |= (unsigned char)(1u << (slot % 8));
			return true;
		}
	}
	l->have_dir[slot / 8] |= (unsigned char)(1u << (slot % 8));
	z = deflate_object(l, type, buf, len, &zlen);
	if (!z)
		return false;
	snprintf(tmp, sizeof(tmp), "%s/.tmp-%ld-%lu", dir, (long)getpid(), ++l->seq);
	fd = openat(l->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0) {
		free(z);
		return false;
	}
	ok = fd_write_all(fd, z, zlen) == 0;
	e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (ok && renameat(l->dfd, tmp, l->dfd, path) != 0) {
		ok = false;
		e = errno;
	}
	if (!ok)
		unlinkat(l->dfd, tmp, 0);
	free(z);
	errno = e;
	return ok;
}
