// SPDX-License-Identifier: GPL-2.0
/*
 * Software codecs behind one ops table, and the function that executes one
 * IAA-format descriptor with them (the software executor's unit of work:
 * engines, a submitter running its share, the inline path).
 *
 * Every codec is bounded by the destination capacity: nothing is written
 * past desc.max_dst_size whatever the input.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32.h>
#include <linux/lz4.h>
#include <linux/lzo.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/zbatch_exec.h>
#include <linux/zlib.h>
#include <linux/zstd.h>
#include <linux/unaligned.h>

#include "batch.h"
#include "clock.h"
#include "codec.h"

/*
 * ---- deflate: raw stream, 4 KiB window, decompressible by IAA ----
 * Level and memLevel are the crypto API's deflate ones, so zswap with
 * deflate-zbatch compares with zswap's stock deflate on the same codec;
 * the window is 4 KiB (IAA's history limit) instead of its 2 KiB.
 */
#define ZB_DEFLATE_LEVEL	Z_DEFAULT_COMPRESSION
#define ZB_DEFLATE_WBITS	12
#define ZB_DEFLATE_MEMLEVEL	MAX_MEM_LEVEL

static size_t deflate_wrk_size(void)
{
	return max_t(size_t,
		     zlib_deflate_workspacesize(-ZB_DEFLATE_WBITS, ZB_DEFLATE_MEMLEVEL),
		     zlib_inflate_workspacesize());
}

static int deflate_wrk_init(void *wrk)
{
	return 0;
}

static size_t deflate_dwrk_size(void)
{
	return zlib_inflate_workspacesize();
}

static int deflate_compress(void *wrk, int level, const void *src,
			    unsigned int slen, void *dst, unsigned int *dlen)
{
	struct z_stream_s s = { .workspace = wrk };
	int ret;

	/* the workspace depends on window and memLevel, not on the level */
	ret = zlib_deflateInit2(&s, level ?: ZB_DEFLATE_LEVEL, Z_DEFLATED, -ZB_DEFLATE_WBITS,
				ZB_DEFLATE_MEMLEVEL, Z_DEFAULT_STRATEGY);
	if (ret != Z_OK)
		return -EINVAL;
	s.next_in = src;
	s.avail_in = slen;
	s.next_out = dst;
	s.avail_out = *dlen;
	ret = zlib_deflate(&s, Z_FINISH);
	zlib_deflateEnd(&s);
	if (ret != Z_STREAM_END)
		return -ENOSPC;
	*dlen = s.total_out;
	return 0;
}

static int deflate_decompress(void *wrk, const void *src, unsigned int slen,
			      void *dst, unsigned int *dlen)
{
	struct z_stream_s s = { .workspace = wrk };
	int ret;

	/* Any raw deflate stream decodes: accept windows up to 32 KiB. */
	ret = zlib_inflateInit2(&s, -MAX_WBITS);
	if (ret != Z_OK)
		return -EINVAL;
	s.next_in = src;
	s.avail_in = slen;
	s.next_out = dst;
	s.avail_out = *dlen;
	ret = zlib_inflate(&s, Z_FINISH);
	zlib_inflateEnd(&s);
	if (ret == Z_STREAM_END) {
		*dlen = s.total_out;
		return 0;
	}
	if (ret == Z_BUF_ERROR && s.avail_out == 0 && s.avail_in)
		return -ENOSPC;
	return -EBADMSG;
}

/* ---- lz4 block format ---- */
static size_t lz4_wrk_size(void)
{
	return LZ4_MEM_COMPRESS;
}

static int lz4_wrk_init(void *wrk)
{
	return 0;
}

/* @level is lz4's acceleration, as zram's: higher is faster, larger */
static int lz4_compress(void *wrk, int level, const void *src,
			unsigned int slen, void *dst, unsigned int *dlen)
{
	int n = LZ4_compress_fast(src, dst, slen, *dlen,
				  level ?: LZ4_ACCELERATION_DEFAULT, wrk);

	if (n <= 0)
		return -ENOSPC;
	*dlen = n;
	return 0;
}

static int lz4_decompress(void *wrk, const void *src, unsigned int slen,
			  void *dst, unsigned int *dlen)
{
	int n = LZ4_decompress_safe(src, dst, slen, *dlen);

	if (n < 0)
		return -EBADMSG;
	*dlen = n;
	return 0;
}

/*
 * ---- lz4 units: chained 4 KiB blocks (zbatch_lz4u_*, codec.h) ----
 * An input of more than a page (a swap device's unit) is compressed a
 * page at a time, each block with the unit's earlier pages as its
 * dictionary (LZ4 streaming), behind a header of the blocks' lengths:
 *
 *	le16 len[pages] | block 0 | block 1 | ...
 *
 * About the ratio of one lz4 block of the whole unit (+0.7% for 16 KiB
 * units of the project's real-data corpus, +1.3% for 64 KiB), and each
 * block decodes on its own into the unit's contiguous output (the pages
 * before it are its dictionary, as a prefix): a unit kept in several
 * zsmalloc objects, cut between blocks, is decompressed object by object
 * where zsmalloc maps it, with no copy. An input of a page or less is
 * plain lz4, so one device keeps pages and units alike.
 *
 * A unit that does not fit its room (-ENOSPC) leaves its header saying
 * what its blocks found, for a caller that stores the pages one by one
 * (the swap device's unit fallback) and need not compress again what is
 * known: the length of each block compressed (block 0, compressed with
 * no dictionary, is plain lz4 of page 0, right after the header), ZBATCH_LZ4U_NOFIT
 * for the page whose block did not fit its page (block 0: a page less
 * the header; with the unit's earlier pages as dictionary: alone it would
 * most likely not shrink either), 0
 * for the blocks not tried or cut short by the caller's room.
 */
static int lz4u_compress(void *wrk, int level, const void *src,
			 unsigned int slen, void *dst, unsigned int *dlen)
{
	unsigned int k, n = slen / PAGE_SIZE, off = n * sizeof(__le16);
	__le16 *len = dst;

	if (slen <= PAGE_SIZE)
		return lz4_compress(wrk, level, src, slen, dst, dlen);
	if (slen % PAGE_SIZE || n > ZBATCH_LZ4U_MAX_BLOCKS)
		return -EINVAL;
	if (*dlen <= off)
		return -ENOSPC;
	memset(wrk, 0, LZ4_MEM_COMPRESS);	/* LZ4_resetStream(), not exported */
	for (k = 0; k < n; k++) {
		/* a block must fit a zsmalloc object, header included */
		unsigned int page_room = PAGE_SIZE - (k ? 0 : off);
		unsigned int room = min(*dlen - off, page_room);
		int b = LZ4_compress_fast_continue(wrk, src + k * PAGE_SIZE, dst + off,
						   PAGE_SIZE, room,
						   level ?: LZ4_ACCELERATION_DEFAULT);

		if (b <= 0) {
			/* what was learnt, for the caller's page-by-page store */
			len[k] = cpu_to_le16(room == page_room ? ZBATCH_LZ4U_NOFIT : 0);
			while (++k < n)
				len[k] = 0;
			return -ENOSPC;
		}
		len[k] = cpu_to_le16(b);
		off += b;
	}
	*dlen = off;
	return 0;
}

/*
 * The lengths of a unit's @n blocks from its header (@hdr, the first
 * bytes of its stream of @slen bytes), checked against the stream: 0 or
 * -EBADMSG.
 */
int zbatch_lz4u_lens(const void *hdr, unsigned int slen, unsigned int n, u16 *len)
{
	unsigned int k, sum = n * sizeof(__le16);

	if (n < 2 || n > ZBATCH_LZ4U_MAX_BLOCKS)
		return -EBADMSG;
	for (k = 0; k < n; k++) {
		len[k] = get_unaligned_le16(hdr + k * sizeof(__le16));
		/*
		 * Block 0 fits a page with the header (as the compressor
		 * makes it): the cut (zbatch_lz4u_pieces()) then gives at
		 * most @n pieces, whatever a header says.
		 */
		if (!len[k] || len[k] > PAGE_SIZE - (k ? 0 : n * sizeof(__le16)))
			return -EBADMSG;
		sum += len[k];
	}
	return sum == slen ? 0 : -EBADMSG;
}

/*
 * How a unit's stream is cut into zsmalloc objects: whole blocks, as many
 * as fit a page, the header in the first. Return: the number of pieces,
 * their lengths in @plen, and in @first the index of each one's first
 * block (@first[pieces] = @n).
 */
unsigned int zbatch_lz4u_pieces(const u16 *len, unsigned int n, u16 *plen, u8 *first)
{
	unsigned int k, p = 0, cur = n * sizeof(__le16);

	first[0] = 0;
	for (k = 0; k < n; k++) {
		if (cur + len[k] > PAGE_SIZE) {
			plen[p++] = cur;
			first[p] = k;
			cur = 0;
		}
		cur += len[k];
	}
	plen[p++] = cur;
	first[p] = n;
	return p;
}

/*
 * Decode block @k of a unit (@len bytes at @src) into page @k of @out,
 * whose pages before it are its dictionary: 0 or -EBADMSG.
 */
int zbatch_lz4u_block(const void *src, unsigned int len, u8 *out, unsigned int k)
{
	int r = LZ4_decompress_safe_usingDict(src, out + k * PAGE_SIZE, len, PAGE_SIZE,
					      out, k * PAGE_SIZE);

	return r == PAGE_SIZE ? 0 : -EBADMSG;
}

static int lz4u_decompress(void *wrk, const void *src, unsigned int slen,
			   void *dst, unsigned int *dlen)
{
	unsigned int k, n = *dlen / PAGE_SIZE, off;
	u16 len[ZBATCH_LZ4U_MAX_BLOCKS];

	if (*dlen <= PAGE_SIZE)
		return lz4_decompress(wrk, src, slen, dst, dlen);
	/* a unit decodes to whole pages: the caller's room says how many */
	if (*dlen % PAGE_SIZE || slen < n * sizeof(__le16) ||
	    zbatch_lz4u_lens(src, slen, n, len))
		return -EBADMSG;
	off = n * sizeof(__le16);
	for (k = 0; k < n; k++) {
		if (zbatch_lz4u_block(src + off, len[k], dst, k))
			return -EBADMSG;
		off += len[k];
	}
	*dlen = n * PAGE_SIZE;
	return 0;
}

/*
 * ---- zstd frame, by default at the crypto API's level (3) ----
 * Parameters are zstd's own for the input size, in steps of powers of two
 * from 4 KiB to ZBATCH_MAX_LEN (what ZSTD_compress() does when it knows
 * the size): level 3 tuned for a 64 KiB input clears 64 KiB-sized hash and
 * chain tables on every call, which costs more than compressing a 4 KiB
 * page. Same level, same frame format; the window never exceeds the input.
 * The crypto API's zstd uses level 3's parameters for unknown sizes.
 */
#define ZB_ZSTD_LEVEL	3
#define ZB_ZSTD_MIN_SHIFT	12
#define ZB_ZSTD_STEPS	5	/* 4, 8, 16, 32, 64 KiB */
struct zb_zstd {
	zstd_cctx *cctx;
	zstd_dctx *dctx;
	zstd_parameters params[ZB_ZSTD_STEPS];
	/*
	 * Another level's parameters for each step, computed when the step
	 * is first used at that level here (a context serves every device).
	 */
	int alt_level[ZB_ZSTD_STEPS];
	zstd_parameters alt[ZB_ZSTD_STEPS];
	size_t csize;
	u8 mem[];
};

static unsigned int zb_zstd_step(unsigned int slen)
{
	unsigned int s = 0;

	while (s < ZB_ZSTD_STEPS - 1 && slen > (1U << (ZB_ZSTD_MIN_SHIFT + s)))
		s++;
	return s;
}

static zstd_parameters zb_zstd_params(void)
{
	return zstd_get_params(ZB_ZSTD_LEVEL, ZBATCH_MAX_LEN);
}

static size_t zstd_wrk_size(void)
{
	zstd_parameters p = zb_zstd_params();

	return sizeof(struct zb_zstd) + zstd_cctx_workspace_bound(&p.cParams) +
	       zstd_dctx_workspace_bound();
}

static int zstd_wrk_init(void *wrk)
{
	struct zb_zstd *z = wrk;
	unsigned int s;

	BUILD_BUG_ON(1U << (ZB_ZSTD_MIN_SHIFT + ZB_ZSTD_STEPS - 1) != ZBATCH_MAX_LEN);
	for (s = 0; s < ZB_ZSTD_STEPS; s++)
		z->params[s] = zstd_get_params(ZB_ZSTD_LEVEL, 1U << (ZB_ZSTD_MIN_SHIFT + s));
	/* the largest step bounds the workspace of every smaller one */
	z->csize = zstd_cctx_workspace_bound(&z->params[ZB_ZSTD_STEPS - 1].cParams);
	z->cctx = zstd_init_cctx(z->mem, z->csize);
	z->dctx = zstd_init_dctx(z->mem + z->csize, zstd_dctx_workspace_bound());
	return z->cctx && z->dctx ? 0 : -EINVAL;
}

/* The decompression context alone: no cctx (zstd_compress() never sees it). */
static size_t zstd_dwrk_size(void)
{
	return sizeof(struct zb_zstd) + zstd_dctx_workspace_bound();
}

static int zstd_dwrk_init(void *wrk)
{
	struct zb_zstd *z = wrk;

	z->dctx = zstd_init_dctx(z->mem, zstd_dctx_workspace_bound());
	return z->dctx ? 0 : -EINVAL;
}

/*
 * A level whose parameters need more workspace than level 3's at 64 KiB
 * fails here (zstd's static context refuses to grow), never overruns:
 * zbatch_codec_level_check() keeps such a level off a device whose unit
 * would need it.
 */
static int zstd_compress(void *wrk, int level, const void *src,
			 unsigned int slen, void *dst, unsigned int *dlen)
{
	struct zb_zstd *z = wrk;
	unsigned int step = zb_zstd_step(slen);
	const zstd_parameters *p = &z->params[step];
	size_t n;

	if (level && level != ZB_ZSTD_LEVEL) {
		if (z->alt_level[step] != level) {
			z->alt[step] = zstd_get_params(level,
						       1U << (ZB_ZSTD_MIN_SHIFT + step));
			z->alt_level[step] = level;
		}
		p = &z->alt[step];
	}
	n = zstd_compress_cctx(z->cctx, dst, *dlen, src, slen, p);

	if (zstd_is_error(n))
		return zstd_get_error_code(n) == ZSTD_error_dstSize_tooSmall ?
		       -ENOSPC : -EINVAL;
	*dlen = n;
	return 0;
}

static int zstd_decompress(void *wrk, const void *src, unsigned int slen,
			   void *dst, unsigned int *dlen)
{
	struct zb_zstd *z = wrk;
	size_t n = zstd_decompress_dctx(z->dctx, dst, *dlen, src, slen);

	if (zstd_is_error(n))
		return zstd_get_error_code(n) == ZSTD_error_dstSize_tooSmall ?
		       -ENOSPC : -EBADMSG;
	*dlen = n;
	return 0;
}

/* ---- lzo1x-1, the bounds-checked compressor (crypto/lzo.c's) ---- */
static size_t lzo_wrk_size(void)
{
	return LZO1X_1_MEM_COMPRESS;
}

static int lzo_wrk_init(void *wrk)
{
	return 0;
}

static int lzo_compress(void *wrk, int level, const void *src,
			unsigned int slen, void *dst, unsigned int *dlen)
{
	size_t n = *dlen;
	int ret = lzo1x_1_compress_safe(src, slen, dst, &n, wrk);

	if (ret == LZO_E_OUTPUT_OVERRUN)
		return -ENOSPC;
	if (ret != LZO_E_OK)
		return -EINVAL;
	*dlen = n;
	return 0;
}

static int lzo_decompress(void *wrk, const void *src, unsigned int slen,
			  void *dst, unsigned int *dlen)
{
	size_t n = *dlen;
	int ret = lzo1x_decompress_safe(src, slen, dst, &n);

	if (ret == LZO_E_OUTPUT_OVERRUN)
		return -ENOSPC;
	if (ret != LZO_E_OK)
		return -EBADMSG;
	*dlen = n;
	return 0;
}

/*
 * Whether codec @id can compress at @level (0: its default) inputs of up
 * to @max_len bytes: deflate 1-9; lz4's acceleration 1-65537 (zram's
 * meaning of an lz4 level); zstd's levels but 0, within the workspace
 * every context has (level 3's at ZBATCH_MAX_LEN): zstd sizes its tables
 * for the input, so a high level fits 4 KiB and 16 KiB inputs but not
 * 64 KiB ones; lzo has none.
 *
 * Return: 0, -EINVAL for an unknown codec, -EOPNOTSUPP for a level of a
 * codec without levels, -ERANGE outside the codec's range, -E2BIG for a
 * zstd level that needs more workspace at @max_len.
 */
int zbatch_codec_level_check(unsigned int id, int level, unsigned int max_len)
{
	zstd_parameters p, ref = zb_zstd_params();
	size_t room = zstd_cctx_workspace_bound(&ref.cParams);
	unsigned int len;

	if (!zbatch_codec(id))
		return -EINVAL;
	if (!level)
		return 0;
	switch (zbatch_codec_family(id)) {
	case ZBATCH_CODEC_DEFLATE:
		return level >= 1 && level <= 9 ? 0 : -ERANGE;
	case ZBATCH_CODEC_LZ4:
		return level >= 1 && level <= 65537 ? 0 : -ERANGE;
	case ZBATCH_CODEC_ZSTD:
		if (level < zstd_min_clevel() || level > zstd_max_clevel())
			return -ERANGE;
		max_len = clamp_t(unsigned int, max_len, 1U << ZB_ZSTD_MIN_SHIFT,
				  ZBATCH_MAX_LEN);
		for (len = 1U << ZB_ZSTD_MIN_SHIFT; len <= max_len; len <<= 1) {
			p = zstd_get_params(level, len);
			if (zstd_cctx_workspace_bound(&p.cParams) > room)
				return -E2BIG;
		}
		return 0;
	}
	return -EOPNOTSUPP;
}

/* @level as compress ops take it: the codec's own default level is 0. */
int zbatch_codec_level_norm(unsigned int id, int level)
{
	static const int dflt[ZBATCH_CODEC_NR] = {
		[ZBATCH_CODEC_DEFLATE] = 6,
		[ZBATCH_CODEC_LZ4] = LZ4_ACCELERATION_DEFAULT,
		[ZBATCH_CODEC_ZSTD] = ZB_ZSTD_LEVEL,
	};

	id = zbatch_codec_family(id);
	return id < ZBATCH_CODEC_NR && dflt[id] == level ? 0 : level;
}

#define ZB_CODEC(id, pfx, ...) \
	[id] = { \
		.wrk_size = pfx##_wrk_size, \
		.wrk_init = pfx##_wrk_init, \
		.compress = pfx##_compress, \
		.decompress = pfx##_decompress, \
		__VA_ARGS__ \
	}

static const struct zbatch_codec_ops zbatch_codecs[ZBATCH_CODECS_ALL] = {
	ZB_CODEC(ZBATCH_CODEC_DEFLATE, deflate, .dwrk_size = deflate_dwrk_size),
	ZB_CODEC(ZBATCH_CODEC_LZ4, lz4),
	/* lz4's workspace (ctx_wrk() shares it: zbatch_codec_family()) */
	[ZBATCH_CODEC_LZ4U] = {
		.wrk_size = lz4_wrk_size,
		.wrk_init = lz4_wrk_init,
		.compress = lz4u_compress,
		.decompress = lz4u_decompress,
	},
	ZB_CODEC(ZBATCH_CODEC_ZSTD, zstd, .dwrk_size = zstd_dwrk_size,
		 .dwrk_init = zstd_dwrk_init),
	ZB_CODEC(ZBATCH_CODEC_LZO, lzo),
};

/* One spelling for the module and the tools: the uapi header's. */
static const char *const zbatch_codec_names[ZBATCH_CODEC_NR] = { ZBATCH_CODEC_NAMES };

const char *zbatch_codec_name(unsigned int id)
{
	id = zbatch_codec_family(id);
	return id < ZBATCH_CODEC_NR ? zbatch_codec_names[id] : "?";
}

const struct zbatch_codec_ops *zbatch_codec(unsigned int id)
{
	if (id == ZBATCH_CODEC_DEFAULT || id >= ZBATCH_CODECS_ALL)
		return NULL;
	return &zbatch_codecs[id];
}

unsigned int zbatch_codec_family(unsigned int id)
{
	return id == ZBATCH_CODEC_LZ4U ? ZBATCH_CODEC_LZ4 : id;
}

int zbatch_codec_by_name(const char *name)
{
	unsigned int i;

	for (i = 1; i < ZBATCH_CODEC_NR; i++)
		if (sysfs_streq(name, zbatch_codec_names[i]))
			return i;
	return -EINVAL;
}

/* ---- execution contexts ---- */
static atomic_t pooled_nr;
static atomic_long_t pooled_bytes;

/* What an allocation of @size at @p takes: kmalloc's rounding, or pages. */
static void pooled_add(struct zbatch_ctx *ctx, const void *p, size_t size)
{
	if (ctx->pooled)
		atomic_long_add(is_vmalloc_addr(p) ? PAGE_ALIGN(size) :
				kmalloc_size_roundup(size), &pooled_bytes);
}

unsigned int zbatch_ctx_pooled(void)
{
	return atomic_read(&pooled_nr);
}

unsigned long zbatch_ctx_pooled_bytes(void)
{
	return atomic_long_read(&pooled_bytes);
}

/*
 * @ctx's workspace for codec @id, allocated now if it has none; for a
 * compression (@comp), a whole one: a decompression-only workspace is
 * replaced (zbatch_ctx_prepare_decomp()).
 */
static void *ctx_wrk(struct zbatch_ctx *ctx, unsigned int id, bool comp, gfp_t gfp)
{
	const struct zbatch_codec_ops *c;
	void *wrk;

	id = zbatch_codec_family(id);	/* one workspace for a family */
	c = &zbatch_codecs[id];

	if (ctx->wrk[id] && (!comp || !test_bit(id, &ctx->dec_only)))
		return ctx->wrk[id];
	wrk = kvzalloc(c->wrk_size(), gfp);
	if (!wrk)
		return NULL;
	if (c->wrk_init(wrk)) {
		kvfree(wrk);
		return NULL;
	}
	if (ctx->wrk[id]) {	/* decompression only until now (never pooled) */
		kvfree(ctx->wrk[id]);
		__clear_bit(id, &ctx->dec_only);
	}
	pooled_add(ctx, wrk, c->wrk_size());
	ctx->wrk[id] = wrk;
	return wrk;
}

/*
 * A codec without a decompression workspace (lz4, lzo) gets a word: a
 * workspace there says the codec is prepared (ctx_wrk() allocates none).
 * The submitters' pool never takes one: its contexts compress too.
 */
int zbatch_ctx_prepare_decomp(struct zbatch_ctx *ctx, unsigned int id)
{
	const struct zbatch_codec_ops *c = zbatch_codec(id);
	void *wrk;

	if (!c || WARN_ON_ONCE(ctx->pooled))
		return -EINVAL;
	id = zbatch_codec_family(id);
	c = zbatch_codec(id);
	if (ctx->wrk[id])
		return 0;	/* prepared: for both, or for this */
	wrk = kvzalloc(c->dwrk_size ? c->dwrk_size() : sizeof(long), GFP_KERNEL);
	if (!wrk)
		return -ENOMEM;
	if (c->dwrk_init && c->dwrk_init(wrk)) {
		kvfree(wrk);
		return -ENOMEM;
	}
	ctx->wrk[id] = wrk;
	__set_bit(id, &ctx->dec_only);
	return 0;
}

void zbatch_ctx_free(struct zbatch_ctx *ctx)
{
	unsigned int i;

	for (i = 0; i < ZBATCH_CODEC_NR; i++) {
		kvfree(ctx->wrk[i]);
		ctx->wrk[i] = NULL;
	}
	ctx->dec_only = 0;
	kvfree(ctx->verify_buf);
	ctx->verify_buf = NULL;
}

size_t zbatch_ctx_bytes(void)
{
	size_t n = ZBATCH_MAX_LEN;	/* the verify buffer */
	unsigned int i;

	for (i = ZBATCH_CODEC_DEFAULT + 1; i < ZBATCH_CODEC_NR; i++)
		n += zbatch_codecs[i].wrk_size();
	return n;
}

/* @ctx's buffer for verify_compress, allocated (and accounted) once. */
static void *ctx_verify_buf(struct zbatch_ctx *ctx, gfp_t gfp)
{
	if (!ctx->verify_buf) {
		ctx->verify_buf = kvmalloc(ZBATCH_MAX_LEN, gfp);
		if (ctx->verify_buf)
			pooled_add(ctx, ctx->verify_buf, ZBATCH_MAX_LEN);
	}
	return ctx->verify_buf;
}

int zbatch_ctx_prepare(struct zbatch_ctx *ctx, unsigned int id)
{
	if (!zbatch_codec(id))
		return -EINVAL;
	if (!ctx_wrk(ctx, id, true, GFP_KERNEL))
		return -ENOMEM;
	if (!ctx_verify_buf(ctx, GFP_KERNEL)) {
		zbatch_ctx_free(ctx);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Submitter contexts: a pool that grows to the number of concurrent
 * submitters running descriptors themselves. Each CPU keeps the last
 * context put back on it (ctx_cache, taken and left with one atomic
 * exchange: a submitter that finds it never takes the mutex); the others
 * wait in ctx_pool. So the pool holds at most the peak of concurrent
 * submitters plus one context per CPU that ever submitted.
 */
static DEFINE_MUTEX(ctx_pool_lock);	/* protects ctx_pool */
static LIST_HEAD(ctx_pool);
static DEFINE_PER_CPU(struct zbatch_ctx *, ctx_cache);

unsigned int zbatch_fault_nomem;
u64 zbatch_clock_skew_ns;
static atomic_t nomem_seq;

struct zbatch_ctx *zbatch_ctx_get(void)
{
	struct zbatch_ctx *ctx;

	/* fault injection: an allocation failure in the submit path */
	if (zbatch_fault_one_in(&zbatch_fault_nomem, &nomem_seq))
		return NULL;

	might_sleep();
	ctx = this_cpu_xchg(ctx_cache, NULL);
	if (ctx)
		return ctx;
	mutex_lock(&ctx_pool_lock);
	ctx = list_first_entry_or_null(&ctx_pool, struct zbatch_ctx, node);
	if (ctx)
		list_del(&ctx->node);
	mutex_unlock(&ctx_pool_lock);
	if (!ctx) {
		ctx = kzalloc(sizeof(*ctx), GFP_NOIO);
		if (ctx) {
			ctx->pooled = true;
			atomic_inc(&pooled_nr);
			pooled_add(ctx, ctx, sizeof(*ctx));
		}
	}
	return ctx;
}

void zbatch_ctx_put(struct zbatch_ctx *ctx)
{
	might_sleep();
	if (!this_cpu_cmpxchg(ctx_cache, NULL, ctx))
		return;		/* this CPU's slot was free: it keeps @ctx */
	mutex_lock(&ctx_pool_lock);
	list_add(&ctx->node, &ctx_pool);
	mutex_unlock(&ctx_pool_lock);
}

/*
 * Once nothing submits (module load failed, or unload): nothing then
 * touches a CPU's slot, so the plain xchg() of another CPU's is safe.
 */
void zbatch_ctx_pool_destroy(void)
{
	struct zbatch_ctx *ctx, *tmp;
	int cpu;

	mutex_lock(&ctx_pool_lock);
	for_each_possible_cpu(cpu) {
		ctx = xchg(per_cpu_ptr(&ctx_cache, cpu), NULL);
		if (ctx)
			list_add(&ctx->node, &ctx_pool);
	}
	list_for_each_entry_safe(ctx, tmp, &ctx_pool, node) {
		list_del(&ctx->node);
		zbatch_ctx_free(ctx);
		kfree(ctx);
	}
	atomic_set(&pooled_nr, 0);
	atomic_long_set(&pooled_bytes, 0);
	mutex_unlock(&ctx_pool_lock);
}

/* Decompress @dst back and compare with @src: the verify_compress option. */
static int verify_one(struct zbatch_ctx *ctx, const struct zbatch_codec_ops *c,
		      void *wrk, const void *src, unsigned int slen,
		      const void *dst, unsigned int dlen)
{
	/*
	 * Room for exactly what went in: an lz4 unit's decompressor takes
	 * its page count from the room it is given (lz4u_decompress()).
	 */
	unsigned int n = slen;

	if (!ctx_verify_buf(ctx, GFP_NOIO))
		return -ENOMEM;
	if (c->decompress(wrk, dst, dlen, ctx->verify_buf, &n) || n != slen ||
	    memcmp(ctx->verify_buf, src, slen))
		return -EIO;
	return 0;
}

/*
 * One compress or decompress of @slen bytes at @src into @dst (room for
 * *@n bytes; the output size on success) with codec @id: the IAA status
 * it ends with, *@err the analytics error code, *@crc the input's CRC
 * when verified. Engines and acomp transforms come prepared; a pooled
 * submitter context allocates on first use, NOIO as a swap path may call.
 */
static u8 sw_exec(struct zbatch_ctx *ctx, unsigned int id, int level,
		  bool compress, const void *src, unsigned int slen, void *dst,
		  unsigned int *n, bool verify, u8 *err, u32 *crc)
{
	const struct zbatch_codec_ops *c = zbatch_codec(id);
	void *wrk = c ? ctx_wrk(ctx, id, compress, GFP_NOIO) : NULL;
	int ret;

	*err = 0;
	if (!c)
		return IAX_COMP_BAD_OPCODE;
	if (!wrk) {
		*err = ZBATCH_CR_ERR_NOMEM;
		return IAX_COMP_ANALYTICS_ERROR;
	}
	if (!compress) {
		ret = c->decompress(wrk, src, slen, dst, n);
		if (ret == -ENOSPC)
			return IAX_COMP_OUTBUF_OVERFLOW;
		if (ret) {
			*err = ZBATCH_CR_ERR_BADSTREAM;
			return IAX_COMP_ANALYTICS_ERROR;
		}
		return IAX_COMP_SUCCESS;
	}
	ret = c->compress(wrk, level, src, slen, dst, n);
	/* not smaller than the input: the caller stores it raw */
	if (ret == -ENOSPC || (!ret && *n >= slen)) {
		*err = ZBATCH_CR_ERR_COMP_OVERFLOW;
		return IAX_COMP_ANALYTICS_ERROR;
	}
	if (ret)
		return IAX_COMP_INVALID_SIZE;
	if (verify) {
		if (verify_one(ctx, c, wrk, src, slen, dst, *n)) {
			*err = ZBATCH_CR_ERR_VERIFY;
			return IAX_COMP_ANALYTICS_ERROR;
		}
		*crc = crc32_le(~0, src, slen);
	}
	return IAX_COMP_SUCCESS;
}

/*
 * The software executor's unit of work: run descriptor @d with codec @id
 * and write its completion record as an IAA engine would (status last).
 */
void zbatch_sw_run(struct zbatch_ctx *ctx, const struct iax_hw_desc *d,
		   unsigned int id, int level, bool verify)
{
	struct iax_completion_record *cr = zbatch_desc_cr(d);
	unsigned int n = d->max_dst_size;
	u8 status, err;
	u32 crc = 0;

	switch (d->opcode) {
	case IAX_OPCODE_COMPRESS:
	case IAX_OPCODE_DECOMPRESS:
		status = sw_exec(ctx, id, level, d->opcode == IAX_OPCODE_COMPRESS,
				 (const void *)(uintptr_t)d->src1_addr,
				 d->src1_size, (void *)(uintptr_t)d->dst_addr,
				 &n, verify, &err, &crc);
		break;
	default:
		status = IAX_COMP_BAD_OPCODE;
		err = 0;
	}
	cr->crc = crc;		/* 0 unless verified */
	if (status != IAX_COMP_SUCCESS)
		zbatch_cr_finish(cr, status, err, 0, 0);
	else
		zbatch_cr_finish(cr, status, 0, n, d->src1_size);
}

/*
 * The same run without a descriptor or record, for a caller that waits
 * on this CPU anyway (zbatch_run_inline()): the errno the record would
 * have given (zbatch_status_errno()); on success *@n is the output size.
 */
int zbatch_sw_exec(struct zbatch_ctx *ctx, unsigned int id, int level,
		   bool compress, const void *src, unsigned int slen,
		   void *dst, unsigned int *n, bool verify)
{
	u8 status, err;
	u32 crc;

	status = sw_exec(ctx, id, level, compress, src, slen, dst, n, verify,
			 &err, &crc);
	return zbatch_status_errno(status, err, compress);
}
