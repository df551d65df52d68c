/* pack — one pack file per checkpoint, with its index (see pack.h). */
#include "config.h"

#include "pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "fdio.h"
#include "xalloc.h"

/* zlib levels (make bench-checkpoint, README): a checkpoint's objects are stored, not
 * compressed (a first checkpoint of 100 MB: 0.6 s of CPU instead of 2.9 s at level 1);
 * --prune compacts a store into one pack at level 1 (half the disk, for text). */
#define PACK_LEVEL_FAST 0
#define PACK_LEVEL_COMPACT 1
#define WBUF_SIZE (1u << 20)   /* bytes gathered before a write */

/* An object of the pack being written. */
struct pending {
	uint64_t offset;
	uint32_t crc;
};

struct pack {
	int dfd;        /* objects/pack/ */
	unsigned char (*ids)[GIT_OID_RAWSZ]; /* known ids: those of packs, then pending ones */
	size_t n_ids, cap_ids, n_done;      /* n_done: the ids before the pending ones */
	uint32_t *slots; /* open addressing on ids: index + 1, 0 empty; at most half full */
	size_t n_slots;
	/* the pack being written */
	int fd;
	char tmp[64];
	struct pending *pend; /* for ids[n_done..n_ids) */
	size_t cap_pend;
	uint64_t offset;
	unsigned char *wbuf;
	size_t wlen;
	z_stream zs;
	bool zs_ready;
	unsigned char *zbuf;
	size_t zcap;
	unsigned long seq;
	int error; /* errno of the last failure since the last pack_finish */
	int level; /* zlib level */
};

/* ------------------------------------------------------------ SHA-1 */

static pthread_once_t sha1_once = PTHREAD_ONCE_INIT;
static EVP_MD *sha1_md;

static void sha1_setup(void)
{
	sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
	if (!sha1_md)
		fatal("checkpoints: libcrypto offers no SHA-1");
}

static EVP_MD_CTX *sha1_begin(void)
{
	EVP_MD_CTX *c;

	pthread_once(&sha1_once, sha1_setup);
	c = EVP_MD_CTX_new();
	if (!c || EVP_DigestInit_ex(c, sha1_md, NULL) != 1)
		fatal("checkpoints: cannot start a SHA-1");
	return c;
}

static void sha1_end(EVP_MD_CTX *c, unsigned char out[GIT_OID_RAWSZ])
{
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(c, out, &n) != 1 || n != GIT_OID_RAWSZ)
		fatal("checkpoints: SHA-1 failed");
	EVP_MD_CTX_free(c);
}

static void sha1_add(EVP_MD_CTX *c, const void *buf, size_t len)
{
	if (EVP_DigestUpdate(c, buf, len) != 1)
		fatal("checkpoints: SHA-1 failed");
}

void pack_hash(git_object_t type, const void *buf, size_t len, git_oid *oid)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %zu", git_object_type2string(type), len);
	EVP_MD_CTX *c = sha1_begin();

	sha1_add(c, head, (size_t)n + 1);
	sha1_add(c, buf, len);
	sha1_end(c, oid->id);
}

/* ------------------------------------------------------------ the known ids */

static size_t slot_of(const struct pack *p, const unsigned char *id)
{
	uint64_t h;

	memcpy(&h, id, sizeof(h)); /* an object id is uniform already */
	return (size_t)h & (p->n_slots - 1);
}

static void slot_put(struct pack *p, size_t idx)
{
	size_t s = slot_of(p, p->ids[idx]);

	while (p->slots[s])
		s = (s + 1) & (p->n_slots - 1);
	p->slots[s] = (uint32_t)(idx + 1);
}

static void rehash(struct pack *p, size_t want)
{
	size_t n = 1024;

	while (n < want * 2)
		n *= 2;
	free(p->slots);
	p->slots = xcalloc(n, sizeof(*p->slots));
	p->n_slots = n;
	for (size_t i = 0; i < p->n_ids; i++)
		slot_put(p, i);
}

bool pack_has(const struct pack *p, const git_oid *oid)
{
	size_t s = slot_of(p, oid->id);

	for (; p->slots[s]; s = (s + 1) & (p->n_slots - 1))
		if (!memcmp(p->ids[p->slots[s] - 1], oid->id, GIT_OID_RAWSZ))
			return true;
	return false;
}

static void remember(struct pack *p, const unsigned char *id)
{
	if ((p->n_ids + 1) * 2 > p->n_slots)
		rehash(p, p->n_ids + 1);
	p->ids = xgrow(p->ids, &p->cap_ids, p->n_ids + 1, sizeof(*p->ids));
	memcpy(p->ids[p->n_ids], id, GIT_OID_RAWSZ);
	slot_put(p, p->n_ids++);
}

/* ------------------------------------------------------------ reading indexes */

static uint32_t be32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void put_be32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24);
	b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8);
	b[3] = (unsigned char)v;
}

static unsigned char *idx_read_at(int dfd, const char *name, size_t *n)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	unsigned char head[8 + 256 * 4], *ids;
	struct stat st;
	size_t count, want;
	ssize_t r;

	if (fd < 0)
		return NULL;
	r = pread(fd, head, sizeof(head), 0);
	count = r == (ssize_t)sizeof(head) ? be32(head + 8 + 255 * 4) : 0;
	want = count * GIT_OID_RAWSZ;
	if (r != (ssize_t)sizeof(head) || be32(head) != 0xff744f63u || be32(head + 4) != 2 ||
	    fstat(fd, &st) < 0 || (uint64_t)st.st_size < sizeof(head) + want + 40) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	ids = xmalloc(want ? want : 1);
	r = want ? pread(fd, ids, want, sizeof(head)) : 0;
	close(fd);
	if (r != (ssize_t)want) {
		free(ids);
		errno = EIO;
		return NULL;
	}
	*n = count;
	return ids;
}

unsigned char *pack_idx_read(const char *idx_path, size_t *n)
{
	return idx_read_at(AT_FDCWD, idx_path, n);
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

static struct pack *open_dir(const char *objects_dir, bool read_known)
{
	char *dir = xasprintf("%s/pack", objects_dir);
	struct pack *p;
	struct dirent *de;
	DIR *d;
	int fd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		free(dir);
		return NULL;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->dfd = fd;
	p->fd = -1;
	p->level = read_known ? PACK_LEVEL_FAST : PACK_LEVEL_COMPACT;
	rehash(p, 0);
	d = read_known ? fdopendir(dup(fd)) : NULL;
	while (d && (de = readdir(d))) {
		size_t n = 0;
		unsigned char *ids;
		if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".idx"))
			continue;
		ids = idx_read_at(fd, de->d_name, &n);
		for (size_t i = 0; ids && i < n; i++)
			remember(p, ids + i * GIT_OID_RAWSZ);
		free(ids);
	}
	if (d)
		closedir(d);
	p->n_done = p->n_ids;
	return p;
}

struct pack *pack_open(const char *objects_dir)
{
	return open_dir(objects_dir, true);
}

struct pack *pack_open_fresh(const char *objects_dir)
{
	return open_dir(objects_dir, false);
}

void pack_close(struct pack *p)
{
	if (!p)
		return;
	pack_abort(p);
	close(p->dfd);
	if (p->zs_ready)
		deflateEnd(&p->zs);
	free(p->ids);
	free(p->slots);
	free(p->pend);
	free(p->wbuf);
	free(p->zbuf);
	free(p);
}

/* ------------------------------------------------------------ writing */

static void drop(struct pack *p);

int pack_error(const struct pack *p)
{
	return p->error;
}

/* Drops the pack being written after a failure `e` (kept in errno and p->error). */
static bool failed(struct pack *p, int e)
{
	drop(p);
	p->error = e ? e : EIO;
	errno = p->error;
	return false;
}

static bool flush_wbuf(struct pack *p)
{
	int e;

	if (!p->wlen)
		return true;
	e = fd_write_all(p->fd, p->wbuf, p->wlen);
	p->wlen = 0;
	if (e) {
		errno = e;
		return false;
	}
	return true;
}

static bool put_bytes(struct pack *p, const void *buf, size_t len)
{
	const unsigned char *b = buf;

	while (len) {
		size_t n = WBUF_SIZE - p->wlen < len ? WBUF_SIZE - p->wlen : len;
		memcpy(p->wbuf + p->wlen, b, n);
		p->wlen += n;
		b += n;
		len -= n;
		if (p->wlen == WBUF_SIZE && !flush_wbuf(p))
			return false;
	}
	return true;
}

static bool begin(struct pack *p)
{
	static const unsigned char head[12] = {'P', 'A', 'C', 'K', 0, 0, 0, 2, 0, 0, 0, 0};

	snprintf(p->tmp, sizeof(p->tmp), "tmp_pevtui_%ld_%lu.pack", (long)getpid(), ++p->seq);
	p->fd = openat(p->dfd, p->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (p->fd < 0)
		return false;
	if (!p->wbuf)
		p->wbuf = xmalloc(WBUF_SIZE);
	p->wlen = 0;
	p->offset = sizeof(head);
	return put_bytes(p, head, sizeof(head));
}

/* The object's bytes deflated into p->zbuf; their length. 0 on failure. */
static size_t deflate_into(struct pack *p, const void *buf, size_t len)
{
	z_stream *zs = &p->zs;
	size_t bound;
	int rc;

	if (!p->zs_ready) {
		memset(zs, 0, sizeof(*zs));
		if (deflateInit(zs, p->level) != Z_OK)
			return 0;
		p->zs_ready = true;
	} else if (deflateReset(zs) != Z_OK) {
		return 0;
	}
	bound = deflateBound(zs, (uLong)len) + 64;
	if (bound > p->zcap) {
		free(p->zbuf);
		p->zbuf = xmalloc(bound);
		p->zcap = bound;
	}
	/* Whole objects are below a checkpoint's per-file limit (2 GiB at most). */
	if (len > UINT_MAX || bound > UINT_MAX)
		return 0;
	zs->next_in = (Bytef *)buf;
	zs->avail_in = (uInt)len;
	zs->next_out = p->zbuf;
	zs->avail_out = (uInt)bound;
	rc = deflate(zs, Z_FINISH);
	return rc == Z_STREAM_END ? (size_t)(zs->next_out - p->zbuf) : 0;
}

bool pack_add_hashed(struct pack *p, git_object_t type, const void *buf, size_t len,
                     const git_oid *oid)
{
	unsigned char head[16];
	size_t hn = 0, zn, left = len;
	uint32_t crc;
	struct pending *pe;

	if (p->error) { /* the objects added before are gone: nothing may name them */
		errno = p->error;
		return false;
	}
	if (pack_has(p, oid))
		return true;
	if (p->fd < 0 && !begin(p))
		return failed(p, errno);
	/* type and size: 4 bits of size in the first byte, 7 in each next one */
	head[hn] = (unsigned char)(((unsigned)type & 7u) << 4 | (left & 15u));
	left >>= 4;
	while (left) {
		head[hn++] |= 0x80;
		head[hn] = (unsigned char)(left & 0x7f);
		left >>= 7;
	}
	hn++;
	zn = deflate_into(p, buf, len);
	if (!zn)
		return failed(p, EIO);
	crc = (uint32_t)crc32(0, head, (uInt)hn);
	crc = (uint32_t)crc32(crc, p->zbuf, (uInt)zn);
	if (!put_bytes(p, head, hn) || !put_bytes(p, p->zbuf, zn))
		return failed(p, errno);
	remember(p, oid->id);
	p->pend = xgrow(p->pend, &p->cap_pend, p->n_ids - p->n_done, sizeof(*p->pend));
	pe = &p->pend[p->n_ids - p->n_done - 1];
	pe->offset = p->offset;
	pe->crc = crc;
	p->offset += hn + zn;
	return true;
}

bool pack_add(struct pack *p, git_object_t type, const void *buf, size_t len, git_oid *oid)
{
	pack_hash(type, buf, len, oid);
	return pack_add_hashed(p, type, buf, len, oid);
}

void pack_abort(struct pack *p)
{
	drop(p);
	p->error = 0;
}

static void drop(struct pack *p)
{
	if (p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
		unlinkat(p->dfd, p->tmp, 0);
	}
	if (p->n_ids > p->n_done) {
		p->n_ids = p->n_done;
		rehash(p, p->n_ids);
	}
	p->wlen = 0;
}

/* The SHA-1 of the file's bytes from its start (read back: the count in its header is
 * known only at the end). */
static bool file_sha1(int fd, uint64_t len, unsigned char out[GIT_OID_RAWSZ], unsigned char *buf)
{
	EVP_MD_CTX *c = sha1_begin();
	uint64_t at = 0;

	while (at < len) {
		size_t want = len - at < WBUF_SIZE ? (size_t)(len - at) : WBUF_SIZE;
		ssize_t r = pread(fd, buf, want, (off_t)at);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			unsigned char junk[GIT_OID_RAWSZ];
			sha1_end(c, junk);
			if (r == 0)
				errno = EIO;
			return false;
		}
		sha1_add(c, buf, (size_t)r);
		at += (uint64_t)r;
	}
	sha1_end(c, out);
	return true;
}

struct order {
	const unsigned char *id;
	const struct pending *pe;
};

static int order_cmp(const void *a, const void *b)
{
	return memcmp(((const struct order *)a)->id, ((const struct order *)b)->id, GIT_OID_RAWSZ);
}

/* The .idx of the pending objects (version 2) in a buffer; its length in *len. */
static unsigned char *build_idx(const struct pack *p, const unsigned char sum[GIT_OID_RAWSZ],
                                size_t *len)
{
	size_t n = p->n_ids - p->n_done, n_large = 0, at = 0;
	struct order *o = xcalloc(n ? n : 1, sizeof(*o));
	uint32_t fan[256] = {0};
	unsigned char *b;
	EVP_MD_CTX *c;

	for (size_t i = 0; i < n; i++) {
		o[i].id = p->ids[p->n_done + i];
		o[i].pe = &p->pend[i];
		fan[o[i].id[0]]++;
		if (o[i].pe->offset >= 0x80000000u)
			n_large++;
	}
	qsort(o, n, sizeof(*o), order_cmp);
	*len = 8 + 256 * 4 + n * (GIT_OID_RAWSZ + 4 + 4) + n_large * 8 + 2 * GIT_OID_RAWSZ;
	b = xmalloc(*len);
	put_be32(b, 0xff744f63u);
	put_be32(b + 4, 2);
	at = 8;
	for (uint32_t i = 0, sum_n = 0; i < 256; i++) {
		sum_n += fan[i];
		put_be32(b + at, sum_n);
		at += 4;
	}
	for (size_t i = 0; i < n; i++, at += GIT_OID_RAWSZ)
		memcpy(b + at, o[i].id, GIT_OID_RAWSZ);
	for (size_t i = 0; i < n; i++, at += 4)
		put_be32(b + at, o[i].pe->crc);
	n_large = 0;
	for (size_t i = 0; i < n; i++, at += 4) {
		uint64_t off = o[i].pe->offset;
		put_be32(b + at, off < 0x80000000u ? (uint32_t)off
		                                   : 0x80000000u | (uint32_t)n_large++);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t off = o[i].pe->offset;
		if (off < 0x80000000u)
			continue;
		put_be32(b + at, (uint32_t)(off >> 32));
		put_be32(b + at + 4, (uint32_t)off);
		at += 8;
	}
	memcpy(b + at, sum, GIT_OID_RAWSZ);
	at += GIT_OID_RAWSZ;
	c = sha1_begin();
	sha1_add(c, b, at);
	sha1_end(c, b + at);
	free(o);
	return b;
}

bool pack_finish(struct pack *p)
{
	unsigned char count[4], sum[GIT_OID_RAWSZ], *idx = NULL;
	char hex[2 * GIT_OID_RAWSZ + 1], name[96], tmp_idx[80];
	size_t n = p->n_ids - p->n_done, idx_len = 0;
	int ifd = -1, e = 0;

	if (p->error) {
		errno = p->error;
		return false;
	}
	if (p->fd < 0)
		return true;
	put_be32(count, (uint32_t)n);
	if (!flush_wbuf(p) || pwrite(p->fd, count, 4, 8) != 4 ||
	    !file_sha1(p->fd, p->offset, sum, p->wbuf) ||
	    fd_write_all(p->fd, sum, sizeof(sum)) != 0 || fsync(p->fd) < 0)
		goto fail;
	for (size_t i = 0; i < GIT_OID_RAWSZ; i++)
		snprintf(hex + 2 * i, 3, "%02x", sum[i]);
	idx = build_idx(p, sum, &idx_len);
	snprintf(tmp_idx, sizeof(tmp_idx), "tmp_pevtui_%ld_%lu.idx", (long)getpid(), p->seq);
	ifd = openat(p->dfd, tmp_idx, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (ifd < 0)
		goto fail;
	if ((e = fd_write_all(ifd, idx, idx_len)) != 0) {
		errno = e;
		goto fail;
	}
	if (fsync(ifd) < 0 || close(ifd) < 0) {
		ifd = -1;
		goto fail;
	}
	ifd = -1;
	/* The pack first: a reader finds a pack by its index. */
	snprintf(name, sizeof(name), "pack-%s.pack", hex);
	if (renameat(p->dfd, p->tmp, p->dfd, name) < 0)
		goto fail;
	close(p->fd);
	p->fd = -1;
	snprintf(name, sizeof(name), "pack-%s.idx", hex);
	if (renameat(p->dfd, tmp_idx, p->dfd, name) < 0 || fsync(p->dfd) < 0) {
		e = errno;
		unlinkat(p->dfd, tmp_idx, 0);
		snprintf(name, sizeof(name), "pack-%s.pack", hex);
		unlinkat(p->dfd, name, 0);
		errno = e;
		goto fail;
	}
	free(idx);
	p->n_done = p->n_ids;
	return true;
fail:
	e = errno ? errno : EIO;
	if (ifd >= 0) {
		close(ifd);
		unlinkat(p->dfd, tmp_idx, 0);
	} else if (idx) {
		unlinkat(p->dfd, tmp_idx, 0);
	}
	free(idx);
	return failed(p, e);
}
