/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Codecs, running one descriptor in software, submitter contexts and
 * their pool (codec.c; the pool's ctx_pool_lock: lock order in locks.h).
 */
#ifndef _ZBATCH_CODEC_H
#define _ZBATCH_CODEC_H

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <uapi/linux/idxd.h>
#include <uapi/linux/zbatch.h>
#include <asm/page.h>

/*
 * Codecs inside the module only, past the uapi's (never a batch of
 * /dev/zbatch's, never listed): lz4 with inputs over a page kept as
 * chained 4 KiB blocks (codec.c), the swap device's units.
 */
#define ZBATCH_CODEC_LZ4U	ZBATCH_CODEC_NR
#define ZBATCH_CODECS_ALL	(ZBATCH_CODEC_NR + 1)
#define ZBATCH_LZ4U_MAX_BLOCKS	16
/*
 * A header entry of an LZ4U unit that did not fit (lz4u_compress()): this
 * page's block did not fit a page. Never a block's length.
 */
#define ZBATCH_LZ4U_NOFIT	0xffff
static_assert(PAGE_SIZE < ZBATCH_LZ4U_NOFIT);

struct zbatch_codec_ops {
	size_t (*wrk_size)(void);
	int (*wrk_init)(void *wrk);
	/* a workspace that only decompresses (zstd: no cctx); NULL: none */
	size_t (*dwrk_size)(void);
	int (*dwrk_init)(void *wrk);	/* NULL: nothing to set up */
	/*
	 * Return 0, -ENOSPC (does not fit), -EBADMSG/-EINVAL (bad stream).
	 * On an error @dst holds nothing a caller may use, but for LZ4U's
	 * -ENOSPC: its header says what the unit's blocks found, for the
	 * swap device's page-by-page store of that unit (lz4u_compress(),
	 * unit_page_known()), whose io_fill() zeroes the header first, since
	 * an -ENOSPC may also come from an executor that never ran the codec.
	 */
	/* @level: 0 for the codec's default, else zbatch_codec_level_check()'s */
	int (*compress)(void *wrk, int level, const void *src,
			unsigned int slen, void *dst, unsigned int *dlen);
	int (*decompress)(void *wrk, const void *src, unsigned int slen,
			  void *dst, unsigned int *dlen);
};

/* Per executing context scratch: codec workspaces, a verify buffer. */
struct zbatch_ctx {
	void *wrk[ZBATCH_CODEC_NR];
	unsigned long dec_only;	/* codecs whose wrk only decompresses */
	void *verify_buf;	/* ZBATCH_MAX_LEN bytes, on first verify */
	struct list_head node;	/* in the submitter pool */
	bool pooled;		/* a pool's: its memory counts in the pool's */
};

const struct zbatch_codec_ops *zbatch_codec(unsigned int id);
const char *zbatch_codec_name(unsigned int id);	/* uapi ZBATCH_CODEC_NAMES */
/* The uapi codec @id is a form of (LZ4U: LZ4): names, levels, costs, workspaces. */
unsigned int zbatch_codec_family(unsigned int id);
/* An LZ4U unit's header, cut and blocks (codec.c). */
int zbatch_lz4u_lens(const void *hdr, unsigned int slen, unsigned int n, u16 *len);
unsigned int zbatch_lz4u_pieces(const u16 *len, unsigned int n, u16 *plen, u8 *first);
int zbatch_lz4u_block(const void *src, unsigned int len, u8 *out, unsigned int k);
int zbatch_codec_by_name(const char *name);
int zbatch_codec_level_check(unsigned int id, int level, unsigned int max_len);
int zbatch_codec_level_norm(unsigned int id, int level);
void zbatch_ctx_free(struct zbatch_ctx *ctx);
/* Bytes of a context prepared for every codec (an engine's). */
size_t zbatch_ctx_bytes(void);
/* Allocate @codec's workspace and the verify buffer now (may sleep). */
int zbatch_ctx_prepare(struct zbatch_ctx *ctx, unsigned int codec);
/*
 * Allocate a workspace for decompressing with @codec only, unless there
 * is one (may sleep); a compression with @codec on @ctx later replaces
 * it with a whole one (allocated then, GFP_NOIO).
 */
int zbatch_ctx_prepare_decomp(struct zbatch_ctx *ctx, unsigned int codec);
/*
 * Run one descriptor with codec @id in software and write its completion
 * record (the software executor's unit of work; exec_sw.c).
 */
void zbatch_sw_run(struct zbatch_ctx *ctx, const struct iax_hw_desc *d,
		   unsigned int id, int level, bool verify);
/* The same without descriptor or record: an errno, *@n the output size. */
int zbatch_sw_exec(struct zbatch_ctx *ctx, unsigned int id, int level,
		   bool compress, const void *src, unsigned int slen,
		   void *dst, unsigned int *n, bool verify);
struct zbatch_ctx *zbatch_ctx_get(void);
/* debugfs fault_nomem: zbatch_ctx_get() fails 1 call in N (0: never) */
extern unsigned int zbatch_fault_nomem;

/*
 * A debugfs "1 in N" fault (fault_nomem, fault_swap_*): true for every
 * *@every-th call counted in @seq, never while *@every is 0. Callers that
 * race may share a count: which call fails is not exact, how many is;
 * @seq is not reset when N changes, so the first failure comes within N
 * calls, not at the N-th. (A WQ's injected descriptor faults,
 * zbatch_fault_hit(), are switched by their kind: there N of 0 or 1
 * means every descriptor.)
 */
static inline bool zbatch_fault_one_in(const unsigned int *every, atomic_t *seq)
{
	unsigned int n = READ_ONCE(*every);

	return n && !((unsigned int)atomic_inc_return(seq) % n);
}

void zbatch_ctx_put(struct zbatch_ctx *ctx);
void zbatch_ctx_pool_destroy(void);
/*
 * The pool's contexts and the memory they hold (allocation sizes as
 * allocated), for debugfs: the pool grows to the most submitters ever
 * running descriptors at once, and keeps that.
 */
unsigned int zbatch_ctx_pooled(void);
unsigned long zbatch_ctx_pooled_bytes(void);

#endif /* _ZBATCH_CODEC_H */
