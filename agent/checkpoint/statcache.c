/* statcache — the store's stat cache kept between runs (STORE/pevtui-statcache): each
 * file's path, device, inode, size, mode, mtime and ctime to the nanosecond, and the id of
 * the blob it was stored as, with the time the walk that saw them began. The next run's
 * first checkpoint trusts a file whose stat is the same and whose ctime is older than that
 * time (as within a run, take.c), so an unchanged workspace costs a walk of stats, not a
 * copy. An entry whose blob the store no longer holds (pruned) is dropped when read.
 *
 * Format: "pevtui-statcache 1\n", then little-endian fields: u64 trust seconds, u64 trust
 * nanoseconds, u64 count, and per entry u32 path length, the path, u64 dev, ino, size,
 * mtime s, mtime ns, ctime s, ctime ns, u32 mode, 20 bytes of blob id. */
#include "config.h"
#include "checkpoint_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "pack.h"
#include "xalloc.h"

static const char magic[] = "pevtui-statcache 1\n";

static void put64(struct strbuf *sb, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	strbuf_add(sb, (const char *)b, 8);
}

static void put32(struct strbuf *sb, uint32_t v)
{
	unsigned char b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	strbuf_add(sb, (const char *)b, 4);
}

struct reader {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get(struct reader *r, int bytes)
{
	uint64_t v = 0;

	if (r->bad || r->end - r->p < bytes) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += bytes;
	return v;
}

static char *cache_path(const struct checkpoints *cp)
{
	return xasprintf("%s/pevtui-statcache", cp->store_dir);
}

bool cp_statcache_save(struct checkpoints *cp)
{
	char *path = cache_path(cp), *tmp = xasprintf("%s.%ld.tmp", path, (long)getpid());
	struct strbuf sb;
	int fd, e = 0;
	bool ok;

	strbuf_init(&sb);
	strbuf_adds(&sb, magic);
	put64(&sb, (uint64_t)cp->trust_before.tv_sec);
	put64(&sb, (uint64_t)cp->trust_before.tv_nsec);
	put64(&sb, cp->n_cache);
	for (size_t i = 0; i < cp->n_cache; i++) {
		const struct cache_ent *c = &cp->cache[i];
		size_t n = strlen(c->path);
		put32(&sb, (uint32_t)n);
		strbuf_add(&sb, c->path, n);
		put64(&sb, (uint64_t)c->dev);
		put64(&sb, (uint64_t)c->ino);
		put64(&sb, (uint64_t)c->size);
		put64(&sb, (uint64_t)c->mtime.tv_sec);
		put64(&sb, (uint64_t)c->mtime.tv_nsec);
		put64(&sb, (uint64_t)c->ctime.tv_sec);
		put64(&sb, (uint64_t)c->ctime.tv_nsec);
		put32(&sb, (uint32_t)c->mode);
		strbuf_add(&sb, (const char *)c->oid.id, GIT_OID_RAWSZ);
	}
	/* Not synced: a cache lost in a crash costs the next run a read of the workspace. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	ok = fd >= 0 && (e = fd_write_all(fd, sb.buf, sb.len)) == 0;
	if (fd >= 0 && close(fd) < 0)
		ok = false;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	strbuf_release(&sb);
	free(tmp);
	free(path);
	return ok;
}

/* The whole file, or NULL. */
static unsigned char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	unsigned char *buf;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)1 << 31) {
		close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cache_ent *)a)->path, ((const struct cache_ent *)b)->path);
}

void cp_statcache_load(struct checkpoints *cp)
{
	char *path = cache_path(cp);
	size_t len = 0, count, n = 0, cap = 0;
	unsigned char *buf = slurp(path, &len);
	struct reader r = {buf, buf + len, false};
	struct cache_ent *v = NULL;
	struct timespec trust;

	free(path);
	if (!buf || len < sizeof(magic) - 1 || memcmp(buf, magic, sizeof(magic) - 1)) {
		free(buf);
		return;
	}
	r.p += sizeof(magic) - 1;
	trust.tv_sec = (time_t)get(&r, 8);
	trust.tv_nsec = (long)get(&r, 8);
	count = (size_t)get(&r, 8);
	for (size_t i = 0; i < count && !r.bad; i++) {
		size_t plen = (size_t)get(&r, 4);
		struct cache_ent c;
		const unsigned char *name = r.p;
		if (r.bad || (size_t)(r.end - r.p) < plen) {
			r.bad = true;
			break;
		}
		r.p += plen;
		c.dev = (dev_t)get(&r, 8);
		c.ino = (ino_t)get(&r, 8);
		c.size = (off_t)get(&r, 8);
		c.mtime.tv_sec = (time_t)get(&r, 8);
		c.mtime.tv_nsec = (long)get(&r, 8);
		c.ctime.tv_sec = (time_t)get(&r, 8);
		c.ctime.tv_nsec = (long)get(&r, 8);
		c.mode = (mode_t)get(&r, 4);
		if (r.bad || r.end - r.p < GIT_OID_RAWSZ) {
			r.bad = true;
			break;
		}
		git_oid_fromraw(&c.oid, r.p);
		r.p += GIT_OID_RAWSZ;
		if (!pack_has(cp->pack, &c.oid))
			continue; /* pruned, or never finished */
		c.path = xstrndup((const char *)name, plen);
		c.moved = false;
		v = xgrow(v, &cap, n + 1, sizeof(*v));
		v[n++] = c;
	}
	free(buf);
	if (r.bad) {
		cp_cache_free(v, n);
		return;
	}
	qsort(v, n, sizeof(*v), ent_cmp);
	cp_cache_free(cp->cache, cp->n_cache);
	cp->cache = v;
	cp->n_cache = n;
	cp->trust_before = trust;
}
