// SPDX-License-Identifier: GPL-2.0
/*
 * In-module self-tests, reported as KTAP (Debian's 6.12 has no KUnit).
 * Run by writing 1 to debugfs 'selftest' or loading with selftest=1; the
 * report is read from debugfs 'selftest_results'.
 *
 * The tests change tunables and WQ states; they restore them when done
 * and run one at a time (selftest_lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <linux/zbatch.h>
#include <linux/zbatch_exec.h>

#include "batch.h"
#include "codec.h"
#include "config.h"
#include "cost.h"
#include "exec_sw.h"
#include "frontends.h"
#include "selftest_vectors.h"
#include "stats.h"
#include "wq.h"

#define ST_BUF		(64 * 1024)	/* KTAP report capacity */
#define ST_LEN		PAGE_SIZE	/* one test page */
#define ST_GUARD	64		/* poisoned bytes after each output */
#define ST_POISON	0xa5

static DEFINE_MUTEX(selftest_lock);	/* protects report and serialises runs */
static char *report;
static size_t report_len;
static unsigned int nr_tests;

static __printf(1, 2) void out(const char *fmt, ...)
{
	va_list ap;

	lockdep_assert_held(&selftest_lock);
	if (report_len >= ST_BUF - 1)
		return;
	va_start(ap, fmt);
	report_len += vscnprintf(report + report_len, ST_BUF - report_len, fmt, ap);
	va_end(ap);
}

static void result(bool ok, const char *name, const char *why)
{
	nr_tests++;
	if (ok)
		out("ok %u %s\n", nr_tests, name);
	else
		out("not ok %u %s # %s\n", nr_tests, name, why);
}

static void skip(const char *name, const char *why)
{
	nr_tests++;
	out("ok %u %s # SKIP %s\n", nr_tests, name, why);
}

/* ---- test data ---- */
enum pattern { PAT_TEXT, PAT_ZERO, PAT_RANDOM, PAT_MIXED, PAT_NR };

static void fill(u8 *p, unsigned int len, enum pattern pat, u32 seed)
{
	static const char *const words[] = {
		"swap ", "page ", "folio ", "zswap ", "batch ", "deflate ",
		"engine ", "queue ", "the ", "of ", "compress\n", "memory ",
	};
	struct rnd_state r;
	unsigned int i = 0;

	prandom_seed_state(&r, seed);
	switch (pat) {
	case PAT_ZERO:
		memset(p, 0, len);
		return;
	case PAT_RANDOM:
		prandom_bytes_state(&r, p, len);
		return;
	case PAT_MIXED:
		prandom_bytes_state(&r, p, len / 4);
		i = len / 4;
		fallthrough;
	case PAT_TEXT:
	default:
		while (i < len) {
			const char *w = words[prandom_u32_state(&r) % ARRAY_SIZE(words)];
			unsigned int n = min_t(unsigned int, strlen(w), len - i);

			memcpy(p + i, w, n);
			i += n;
		}
	}
}

struct st_bufs {
	unsigned int n;
	u8 *src[ZBATCH_MAX_BATCH];
	u8 *cmp[ZBATCH_MAX_BATCH];	/* ST_LEN + ST_GUARD */
	u8 *dec[ZBATCH_MAX_BATCH];	/* ST_LEN + ST_GUARD */
	struct zbatch_req req[ZBATCH_MAX_BATCH];
	struct zbatch_batch batch;
};

static void bufs_free(struct st_bufs *b)
{
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < ZBATCH_MAX_BATCH; i++) {
		kfree(b->src[i]);
		kfree(b->cmp[i]);
		kfree(b->dec[i]);
	}
	kfree(b);
}

static struct st_bufs *bufs_alloc(void)
{
	struct st_bufs *b = kzalloc(sizeof(*b), GFP_KERNEL);
	unsigned int i;

	if (!b)
		return NULL;
	for (i = 0; i < ZBATCH_MAX_BATCH; i++) {
		b->src[i] = kmalloc(ST_LEN, GFP_KERNEL);
		b->cmp[i] = kmalloc(ST_LEN + ST_GUARD, GFP_KERNEL);
		b->dec[i] = kmalloc(ST_LEN + ST_GUARD, GFP_KERNEL);
		if (!b->src[i] || !b->cmp[i] || !b->dec[i]) {
			bufs_free(b);
			return NULL;
		}
	}
	return b;
}

static bool guard_ok(const u8 *p, unsigned int cap)
{
	return !memchr_inv(p + cap, ST_POISON, ST_GUARD);
}

static int run_batch(struct st_bufs *b, unsigned int codec)
{
	int ret = zbatch_submit(&b->batch);

	if (ret == -EINPROGRESS)
		ret = zbatch_wait(&b->batch);
	return ret;
}

/* Compress b->src[0..n) into b->cmp, as one batch at @level. */
static void batch_compress_at(struct st_bufs *b, unsigned int n, unsigned int codec,
			      unsigned int flags, int level)
{
	unsigned int i;

	zbatch_batch_init(&b->batch, codec, flags);
	b->batch.level = level;
	for (i = 0; i < n; i++) {
		memset(b->cmp[i], ST_POISON, ST_LEN + ST_GUARD);
		zbatch_req_init(&b->req[i], ZBATCH_OP_COMPRESS, b->src[i], ST_LEN,
				b->cmp[i], ST_LEN);
		zbatch_batch_add(&b->batch, &b->req[i]);
	}
	run_batch(b, codec);
}

/* Compress b->src[0..n) into b->cmp, as one batch. */
static void batch_compress(struct st_bufs *b, unsigned int n, unsigned int codec,
			   unsigned int flags)
{
	batch_compress_at(b, n, codec, flags, 0);
}

/* Round trip of n pages of mixed patterns; NULL or what went wrong. */
static const char *roundtrip(struct st_bufs *b, unsigned int n, unsigned int codec,
			     u32 seed)
{
	unsigned int i, clen[ZBATCH_MAX_BATCH];

	for (i = 0; i < n; i++)
		fill(b->src[i], ST_LEN, (i + seed) % PAT_NR, seed * 131 + i);
	batch_compress(b, n, codec, 0);
	for (i = 0; i < n; i++) {
		int st = b->req[i].status;

		if (!guard_ok(b->cmp[i], ST_LEN))
			return "compress wrote past the destination";
		/* random pages may not shrink; everything else must */
		if (st == -ENOSPC && (i + seed) % PAT_NR == PAT_RANDOM) {
			clen[i] = 0;
			continue;
		}
		if (st || !b->req[i].produced || b->req[i].produced >= ST_LEN)
			return "compress failed";
		clen[i] = b->req[i].produced;
	}
	zbatch_batch_init(&b->batch, codec, 0);
	for (i = 0; i < n; i++) {
		memset(b->dec[i], ST_POISON, ST_LEN + ST_GUARD);
		/* a page stored raw decompresses by copy: skip it */
		zbatch_req_init(&b->req[i], ZBATCH_OP_DECOMPRESS, b->cmp[i],
				clen[i] ? clen[i] : 1, b->dec[i], ST_LEN);
		if (clen[i])
			zbatch_batch_add(&b->batch, &b->req[i]);
	}
	if (b->batch.nr)
		run_batch(b, codec);
	for (i = 0; i < n; i++) {
		if (!clen[i])
			continue;
		if (b->req[i].status || b->req[i].produced != ST_LEN)
			return "decompress failed";
		if (memcmp(b->dec[i], b->src[i], ST_LEN))
			return "round trip differs";
		if (!guard_ok(b->dec[i], ST_LEN))
			return "decompress wrote past the destination";
	}
	return NULL;
}

static void set_mode(unsigned int mode)
{
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(zbatch_cfg.sync_mode, mode);
	mutex_unlock(&zbatch_cfg_lock);
}

static void set_verify(bool on)
{
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(zbatch_cfg.verify, on);
	mutex_unlock(&zbatch_cfg_lock);
}

static const char *const mode_name[] = { "sync", "async", "async_irq" };

static void test_vectors(struct st_bufs *b)
{
	unsigned int i;
	char name[64];

	for (i = 0; i < ARRAY_SIZE(zbatch_vectors); i++) {
		const struct zbatch_vector *v = &zbatch_vectors[i];
		const char *why = NULL;

		zbatch_batch_init(&b->batch, v->codec, 0);
		memset(b->dec[0], ST_POISON, ST_LEN + ST_GUARD);
		zbatch_req_init(&b->req[0], ZBATCH_OP_DECOMPRESS, v->comp, v->comp_len,
				b->dec[0], ST_LEN);
		zbatch_batch_add(&b->batch, &b->req[0]);
		run_batch(b, v->codec);
		if (b->req[0].status)
			why = "known vector does not decompress";
		else if (b->req[0].produced != v->plain_len ||
			 memcmp(b->dec[0], v->plain, v->plain_len))
			why = "known vector decompresses to other bytes";
		snprintf(name, sizeof(name), "vector_%s_%u_bytes",
			 zbatch_codec_name(v->codec), v->plain_len);
		result(!why, name, why);
	}
}

static const char *const handoff_name[] = { "auto", "always", "never" };

static void set_handoff(unsigned int h)
{
	WRITE_ONCE(zbatch_handoff, h);
}

static unsigned int engines_total(void)
{
	unsigned int d, n = 0;

	for (d = 0; d < zbatch_nr_devs; d++)
		n += zbatch_devs[d]->nr_engines;
	return n;
}

/*
 * Every codec and sync mode, dispatched as measured (auto) and with every
 * descriptor handed to engines (always), so that both the inline and the
 * engine paths run whatever the costs say; at the batch sizes where
 * slices and chains change shape: 1 to 6, each side of the powers of two
 * up to ZBATCH_MAX_BATCH (16 is also the IAA executor's chain,
 * ZBATCH_ACOMP_BATCH), 30 and 48 between them (two and three chains
 * of 16, uneven and even); two sizes drawn at random join them (said on
 * a failure). Every size from 1 to 64 took 9 of a run's 10 s under TCG,
 * and make check runs the self-tests seven times.
 */
static const unsigned int rt_sizes[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 30, 31, 32,
					 33, 48, ZBATCH_MAX_BATCH - 1, ZBATCH_MAX_BATCH };
static_assert(ZBATCH_MAX_BATCH == 64);

static void test_roundtrips(struct st_bufs *b)
{
	unsigned int codec, mode, i, h, old_h = READ_ONCE(zbatch_handoff);
	static const unsigned int hs[] = { ZBATCH_HANDOFF_ALWAYS, ZBATCH_HANDOFF_AUTO };
	char name[80], why_n[80];

	for (h = 0; h < ARRAY_SIZE(hs); h++) {
		set_handoff(hs[h]);
		for (codec = 1; codec < ZBATCH_CODEC_NR; codec++) {
			for (mode = ZBATCH_SYNC; mode <= ZBATCH_ASYNC_IRQ; mode++) {
				const char *why = NULL;
				unsigned int n = 0;

				set_mode(mode);
				for (i = 0; i < ARRAY_SIZE(rt_sizes) + 2 && !why; i++) {
					n = i < ARRAY_SIZE(rt_sizes) ? rt_sizes[i] :
					    get_random_u32_inclusive(1, ZBATCH_MAX_BATCH);
					why = roundtrip(b, n, codec, n);
				}
				if (why) {
					snprintf(why_n, sizeof(why_n), "a batch of %u: %s", n, why);
					why = why_n;
				}
				snprintf(name, sizeof(name), "roundtrip_%s_%s_%s_batches",
					 handoff_name[hs[h]], zbatch_codec_name(codec),
					 mode_name[mode]);
				result(!why, name, why);
			}
		}
	}
	set_handoff(old_h);
	set_mode(ZBATCH_ASYNC);
}

/* Dispatch: 'always' reaches the engines, 'never' and batches of 1 do not. */
static void test_dispatch(struct st_bufs *b)
{
	unsigned int old_h = READ_ONCE(zbatch_handoff);
	u64 h0, e0, i0;
	const char *why = NULL;

	if (engines_total() < 2 || num_online_cpus() < 2) {
		skip("dispatch_handoff_and_inline",
		     "one CPU or one engine: nothing to hand off to");
		return;
	}
	set_mode(ZBATCH_ASYNC_IRQ);
	set_handoff(ZBATCH_HANDOFF_ALWAYS);
	h0 = zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS);
	e0 = zbatch_engines_descs();
	why = roundtrip(b, 16, ZBATCH_CODEC_LZ4, 31);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS) == h0)
		why = "always: no slice handed off";
	if (!why && zbatch_engines_descs() == e0)
		why = "always: no engine ran a descriptor";
	set_handoff(ZBATCH_HANDOFF_NEVER);
	h0 = zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS);
	i0 = zbatch_stat_read(&zbatch_gstats, ZST_INLINE_BATCHES);
	if (!why)
		why = roundtrip(b, 16, ZBATCH_CODEC_LZ4, 32);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS) != h0)
		why = "never: a slice was handed off";
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_INLINE_BATCHES) == i0)
		why = "never: no batch ran inline";
	set_handoff(ZBATCH_HANDOFF_AUTO);
	h0 = zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS);
	if (!why)
		why = roundtrip(b, 1, ZBATCH_CODEC_LZ4, 33);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_HANDOFFS) != h0)
		why = "auto: a batch of one was handed off";
	set_handoff(old_h);
	set_mode(ZBATCH_ASYNC);
	result(!why, "dispatch_handoff_and_inline", why);
}

/*
 * Auto dispatch: what the submitter pays only to hand a job over (a swap
 * read's copies out of zsmalloc) counts against the hand-off, so a job
 * whose copy costs as much as its work stays where its data lies.
 */
static void test_dispatch_serial(void)
{
	unsigned int old_h = READ_ONCE(zbatch_handoff);
	u64 work = 1ULL << 40;		/* 18 minutes: past any hand-off */
	const char *why = NULL;

	if (!zbatch_cost_handoff_ns() || zbatch_device_serves(ZBATCH_CODEC_LZ4)) {
		skip("dispatch_weighs_what_a_hand_off_costs_first",
		     "no hand-off measured yet, or a device runs lz4");
		return;
	}
	set_handoff(ZBATCH_HANDOFF_AUTO);
	if (!zbatch_cost_helpers(work, 0, 8, 1, 0, NULL))
		why = "18 minutes of work were kept inline";
	else if (zbatch_cost_helpers(work, work, 8, 1, 0, NULL))
		why = "a job whose copy costs its work was handed off";
	else if (zbatch_would_offload(ZBATCH_CODEC_LZ4, ZBATCH_OP_DECOMPRESS, 16,
				      16 * PAGE_SIZE, work))
		why = "a read paying 18 minutes to copy would leave its CPU";
	set_handoff(old_h);
	result(!why, "dispatch_weighs_what_a_hand_off_costs_first", why);
}

/* The one mapping of completion records to errnos. */
static void test_cr_errno(void)
{
	static const struct {
		u8 status, code;
		bool compress;
		int err;
	} t[] = {
		{ IAX_COMP_SUCCESS, 0, true, 0 },
		{ IAX_COMP_NONE, 0, true, -EINPROGRESS },
		{ IAX_COMP_ANALYTICS_ERROR, ZBATCH_CR_ERR_COMP_OVERFLOW, true, -ENOSPC },
		{ IAX_COMP_OUTBUF_OVERFLOW, 0, false, -ENOSPC },
		{ IAX_COMP_ANALYTICS_ERROR, ZBATCH_CR_ERR_BADSTREAM, false, -EBADMSG },
		{ IAX_COMP_ANALYTICS_ERROR, 0x01, false, -EBADMSG },
		{ IAX_COMP_ANALYTICS_ERROR, ZBATCH_CR_ERR_VERIFY, true, -EIO },
		{ ZBATCH_CR_WATCHDOG, 0, true, -ETIMEDOUT },
		{ IAX_COMP_PAGE_FAULT_IR, 0, false, -EFAULT },
		{ IAX_COMP_HW_ERR1, 0, false, -EIO },
		{ IAX_COMP_BAD_OPCODE, 0, true, -EINVAL },
		{ IAX_COMP_INVALID_SIZE, 0, true, -EINVAL },
	};
	struct iax_completion_record cr;
	const char *why = NULL;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t) && !why; i++) {
		memset(&cr, 0, sizeof(cr));
		cr.status = t[i].status;
		cr.error_code = t[i].code;
		if (zbatch_cr_errno(&cr, t[i].compress) != t[i].err)
			why = "a completion code maps to the wrong errno";
	}
	result(!why, "completion_record_errnos", why);
}

/* The segmented shape: a 64 KiB buffer in 4 KiB units, and back. */
static void test_units(struct st_bufs *b)
{
	struct zbatch_units *u = kvzalloc(sizeof(*u), GFP_KERNEL);
	struct scatterlist *src = kcalloc(17, sizeof(*src), GFP_KERNEL);
	struct scatterlist *dst = kcalloc(17, sizeof(*dst), GFP_KERNEL);
	u8 *in = kvmalloc(16 * PAGE_SIZE, GFP_KERNEL);
	u8 *out = kvmalloc(16 * PAGE_SIZE, GFP_KERNEL);
	u8 *back = kvmalloc(16 * PAGE_SIZE, GFP_KERNEL);
	const char *why = NULL;
	unsigned int i;

	if (!u || !src || !dst || !in || !out || !back) {
		why = "no memory";
		goto out;
	}
	for (i = 0; i < 16; i++)
		fill(in + i * PAGE_SIZE, PAGE_SIZE, i % 3 ? PAT_TEXT : PAT_RANDOM, 40 + i);
	/* compress: one entry for the whole source, one per unit out */
	sg_init_one(src, in, 16 * PAGE_SIZE);
	sg_init_table(dst, 16);
	for (i = 0; i < 16; i++)
		sg_set_buf(&dst[i], out + i * PAGE_SIZE, PAGE_SIZE);
	zbatch_run_units(u, ZBATCH_CODEC_LZ4, ZBATCH_OP_COMPRESS, src,
			 16 * PAGE_SIZE, dst, 16, PAGE_SIZE);
	sg_init_table(src, 16);
	for (i = 0; i < 16 && !why; i++) {
		int r = zbatch_unit_result(&dst[i]);

		/* random units do not compress: -ENOSPC, stored raw */
		if (i % 3 == 0 && r != -ENOSPC)
			why = "incompressible unit not -ENOSPC";
		else if (i % 3 && (r <= 0 || r >= PAGE_SIZE))
			why = "text unit has no compressed length";
		if (r < 0)
			memcpy(out + i * PAGE_SIZE, in + i * PAGE_SIZE, PAGE_SIZE);
		sg_set_buf(&src[i], out + i * PAGE_SIZE, r < 0 ? PAGE_SIZE : r);
	}
	/* decompress the compressed units back (raw ones are copied) */
	sg_init_table(dst, 16);
	for (i = 0; i < 16; i++)
		sg_set_buf(&dst[i], back + i * PAGE_SIZE, PAGE_SIZE);
	for (i = 0; i < 16 && !why; i++)
		if (i % 3 == 0)
			memcpy(back + i * PAGE_SIZE, in + i * PAGE_SIZE, PAGE_SIZE);
	if (!why) {
		/* only the text units: units 1, 2, 4, 5, ... */
		struct scatterlist *s2 = kcalloc(16, sizeof(*s2), GFP_KERNEL);
		struct scatterlist *d2 = kcalloc(16, sizeof(*d2), GFP_KERNEL);
		unsigned int n = 0;

		if (!s2 || !d2) {
			why = "no memory";
		} else {
			sg_init_table(s2, 10);
			sg_init_table(d2, 10);
			for (i = 0; i < 16; i++) {
				if (i % 3 == 0)
					continue;
				sg_set_buf(&s2[n], sg_virt(&src[i]), src[i].length);
				sg_set_buf(&d2[n], back + i * PAGE_SIZE, PAGE_SIZE);
				n++;
			}
			if (zbatch_run_units(u, ZBATCH_CODEC_LZ4, ZBATCH_OP_DECOMPRESS,
					     s2, 0, d2, n, PAGE_SIZE))
				why = "unit decompress failed";
			for (i = 0; i < n && !why; i++)
				if (zbatch_unit_result(&d2[i]) != PAGE_SIZE)
					why = "a unit decompressed to another length";
			if (!why && memcmp(back, in, 16 * PAGE_SIZE))
				why = "units round trip differs";
		}
		kfree(s2);
		kfree(d2);
	}
	if (!why && zbatch_run_units(u, ZBATCH_CODEC_LZ4, ZBATCH_OP_COMPRESS, src,
				     16 * PAGE_SIZE + 1, dst, 16, PAGE_SIZE) != -EINVAL)
		why = "source longer than the units accepted";
out:
	kvfree(back);
	kvfree(out);
	kvfree(in);
	kfree(dst);
	kfree(src);
	kvfree(u);
	result(!why, "units_folio_in_4k_units_roundtrip", why);
}

static void test_errors(struct st_bufs *b)
{
	unsigned int codec;
	char name[64];

	for (codec = 1; codec < ZBATCH_CODEC_NR; codec++) {
		const char *why = NULL;
		unsigned int clen;

		/* [0] incompressible, [1] invalid, [2] fine: siblings unharmed */
		fill(b->src[0], ST_LEN, PAT_RANDOM, 7);
		fill(b->src[2], ST_LEN, PAT_TEXT, 8);
		zbatch_batch_init(&b->batch, codec, 0);
		zbatch_req_init(&b->req[0], ZBATCH_OP_COMPRESS, b->src[0], ST_LEN,
				b->cmp[0], ST_LEN);
		zbatch_req_init(&b->req[1], ZBATCH_OP_COMPRESS, NULL, ST_LEN,
				b->cmp[1], ST_LEN);
		zbatch_req_init(&b->req[2], ZBATCH_OP_COMPRESS, b->src[2], ST_LEN,
				b->cmp[2], ST_LEN);
		memset(b->cmp[0], ST_POISON, ST_LEN + ST_GUARD);
		zbatch_batch_add(&b->batch, &b->req[0]);
		zbatch_batch_add(&b->batch, &b->req[1]);
		zbatch_batch_add(&b->batch, &b->req[2]);
		if (run_batch(b, codec) != -ENOSPC)
			why = "batch did not report the first error (-ENOSPC)";
		else if (b->req[0].status != -ENOSPC)
			why = "incompressible page not -ENOSPC";
		else if (!guard_ok(b->cmp[0], ST_LEN))
			why = "incompressible page overflowed";
		else if (b->req[1].status != -EINVAL)
			why = "NULL source not -EINVAL";
		else if (b->req[2].status)
			why = "a good sibling failed";
		snprintf(name, sizeof(name), "errors_isolated_%s", zbatch_codec_name(codec));
		result(!why, name, why);

		/* corrupt and truncated streams: an error, nothing past dst */
		why = NULL;
		clen = b->req[2].produced;
		memcpy(b->cmp[3], b->cmp[2], clen);
		b->cmp[3][clen / 2] ^= 0xff;
		b->cmp[3][clen / 3] ^= 0x5a;
		zbatch_batch_init(&b->batch, codec, 0);
		memset(b->dec[0], ST_POISON, ST_LEN + ST_GUARD);
		memset(b->dec[1], ST_POISON, ST_LEN + ST_GUARD);
		memset(b->dec[2], ST_POISON, ST_LEN + ST_GUARD);
		zbatch_req_init(&b->req[0], ZBATCH_OP_DECOMPRESS, b->cmp[2], clen / 2,
				b->dec[0], ST_LEN);
		zbatch_req_init(&b->req[1], ZBATCH_OP_DECOMPRESS, b->cmp[3], clen,
				b->dec[1], ST_LEN);
		/* a destination too small for the page */
		zbatch_req_init(&b->req[2], ZBATCH_OP_DECOMPRESS, b->cmp[2], clen,
				b->dec[2], ST_LEN / 2);
		zbatch_batch_add(&b->batch, &b->req[0]);
		zbatch_batch_add(&b->batch, &b->req[1]);
		zbatch_batch_add(&b->batch, &b->req[2]);
		run_batch(b, codec);
		if (!b->req[0].status)
			why = "truncated stream decompressed";
		else if (!guard_ok(b->dec[0], ST_LEN) || !guard_ok(b->dec[1], ST_LEN) ||
			 !guard_ok(b->dec[2], ST_LEN / 2) ||
			 !guard_ok(b->dec[2] + ST_LEN / 2, ST_LEN / 2 - ST_GUARD + ST_GUARD))
			why = "bad stream wrote past the destination";
		else if (!b->req[2].status)
			why = "page decompressed into half a page";
		/* a corrupt stream may still decode; it must not equal the page */
		else if (!b->req[1].status && b->req[1].produced == ST_LEN &&
			 !memcmp(b->dec[1], b->src[2], ST_LEN))
			why = "corruption went unnoticed";
		snprintf(name, sizeof(name), "bad_streams_bounded_%s", zbatch_codec_name(codec));
		result(!why, name, why);
	}
}

static void test_verify(struct st_bufs *b)
{
	u64 before = zbatch_stat_read(&zbatch_gstats, ZST_ERR_VERIFY);
	const char *why;

	set_verify(true);
	why = roundtrip(b, 16, ZBATCH_CODEC_DEFLATE, 99);
	set_verify(false);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_ERR_VERIFY) != before)
		why = "verify mismatch on good data";
	result(!why, "verify_compress_roundtrip", why);
}

/* Every WQ stalled: descriptors time out and run in software. */
static void test_timeout(struct st_bufs *b)
{
	u64 t0 = zbatch_stat_read(&zbatch_gstats, ZST_TIMEOUTS);
	unsigned int d, w, old_ms = READ_ONCE(zbatch_cfg.timeout_ms);
	const char *why = NULL;
	bool any_enabled = false;
	unsigned int old_h = READ_ONCE(zbatch_handoff);

	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(zbatch_cfg.timeout_ms, 20);
	mutex_unlock(&zbatch_cfg_lock);
	for (d = 0; d < zbatch_nr_devs; d++)
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++)
			WRITE_ONCE(to_sw_wq(zbatch_devs[d]->wqs[w])->stalled, true);
	/* a hung WQ is seen only by descriptors handed to it */
	set_handoff(ZBATCH_HANDOFF_ALWAYS);
	set_mode(ZBATCH_ASYNC_IRQ);
	why = roundtrip(b, 8, ZBATCH_CODEC_LZ4, 5);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_TIMEOUTS) == t0)
		why = "no timeout counted";
	for (d = 0; d < zbatch_nr_devs; d++)
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++)
			any_enabled |= READ_ONCE(zbatch_devs[d]->wqs[w]->enabled);
	if (!why && any_enabled)
		why = "a timed-out WQ stayed in service";
	result(!why, "timeout_falls_back_to_software", why);

	/* with every WQ out of service, jobs still complete (in software) */
	why = roundtrip(b, 4, ZBATCH_CODEC_ZSTD, 6);
	result(!why, "no_wq_in_service_runs_in_software", why);

	/* back in service for the next tests; zbatch_selftest_run() restores */
	mutex_lock(&zbatch_cfg_lock);
	for (d = 0; d < zbatch_nr_devs; d++) {
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++) {
			WRITE_ONCE(to_sw_wq(zbatch_devs[d]->wqs[w])->stalled, false);
			WRITE_ONCE(zbatch_devs[d]->wqs[w]->enabled, true);
		}
	}
	WRITE_ONCE(zbatch_cfg.timeout_ms, old_ms);
	mutex_unlock(&zbatch_cfg_lock);
	set_handoff(old_h);
	set_mode(ZBATCH_ASYNC);
}

struct st_thread {
	struct completion done;
	const char *why;
	unsigned int id;
};

static int submitter_fn(void *data)
{
	struct st_thread *t = data;
	struct st_bufs *b = bufs_alloc();
	unsigned int i;

	if (!b) {
		t->why = "no memory";
	} else {
		for (i = 0; i < 20 && !t->why; i++)
			t->why = roundtrip(b, 8, 1 + (t->id + i) % (ZBATCH_CODEC_NR - 1),
					   t->id * 1000 + i);
		bufs_free(b);
	}
	complete(&t->done);
	return 0;
}

static void test_concurrent(void)
{
	struct st_thread t[4];
	const char *why = NULL;
	unsigned int i, started = 0;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		struct task_struct *task;

		init_completion(&t[i].done);
		t[i].why = NULL;
		t[i].id = i;
		task = kthread_run(submitter_fn, &t[i], "zbatch-st/%u", i);
		if (IS_ERR(task)) {
			why = "cannot start a submitter";
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		wait_for_completion(&t[i].done);
		if (t[i].why && !why)
			why = t[i].why;
	}
	result(!why, "concurrent_submitters", why);
}

/* The single-request inline path (the acomp algorithms' path). */
static void test_inline(struct st_bufs *b)
{
	struct zbatch_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	const char *why = NULL;
	unsigned int codec;

	if (!ctx) {
		result(false, "inline_roundtrip_every_codec", "no memory");
		return;
	}
	for (codec = 1; codec < ZBATCH_CODEC_NR && !why; codec++) {
		unsigned int clen;

		if (zbatch_ctx_prepare(ctx, codec)) {
			why = "cannot prepare a context";
			break;
		}
		fill(b->src[0], ST_LEN, PAT_TEXT, codec);
		zbatch_req_init(&b->req[0], ZBATCH_OP_COMPRESS, b->src[0], ST_LEN,
				b->cmp[0], ST_LEN);
		if (zbatch_run_inline(ctx, &b->req[0], codec, 0)) {
			why = "inline compress failed";
			break;
		}
		clen = b->req[0].produced;
		memset(b->dec[0], ST_POISON, ST_LEN + ST_GUARD);
		zbatch_req_init(&b->req[0], ZBATCH_OP_DECOMPRESS, b->cmp[0], clen,
				b->dec[0], ST_LEN);
		if (zbatch_run_inline(ctx, &b->req[0], codec, 0) ||
		    b->req[0].produced != ST_LEN || memcmp(b->dec[0], b->src[0], ST_LEN) ||
		    !guard_ok(b->dec[0], ST_LEN))
			why = "inline round trip differs";
		zbatch_req_init(&b->req[0], ZBATCH_OP_DECOMPRESS, b->cmp[0], 0,
				b->dec[0], ST_LEN);
		if (!why && zbatch_run_inline(ctx, &b->req[0], codec, 0) != -EINVAL)
			why = "inline zero-length request not -EINVAL";
	}
	zbatch_ctx_free(ctx);
	kfree(ctx);
	result(!why, "inline_roundtrip_every_codec", why);
}

/*
 * Compression levels (a swap device's algorithm_params): the ranges and
 * the workspace bound zbatch_codec_level_check() gives, and that a level
 * reaches the codec on every path: a batch whose descriptors engines run
 * (handoff "always") must produce, byte for byte, what the inline path
 * produces at that level, and two levels of a codec must differ.
 */
static const struct {
	unsigned int codec;
	int level[3];
} st_levels[] = {
	{ ZBATCH_CODEC_ZSTD, { -5, 1, 19 } },
	{ ZBATCH_CODEC_DEFLATE, { 1, 6, 9 } },
	{ ZBATCH_CODEC_LZ4, { 1, 8, 64 } },
};

static const char *level_paths(struct st_bufs *b, struct zbatch_ctx *ctx,
			       unsigned int codec, int level, unsigned int *len)
{
	unsigned int i, n = 8;

	fill(b->src[0], ST_LEN, PAT_TEXT, 7);
	if (zbatch_ctx_prepare(ctx, codec))
		return "cannot prepare a context";
	zbatch_req_init(&b->req[0], ZBATCH_OP_COMPRESS, b->src[0], ST_LEN,
			b->dec[0], ST_LEN);
	if (zbatch_run_inline(ctx, &b->req[0], codec, level))
		return "inline compress at the level failed";
	*len = b->req[0].produced;
	for (i = 1; i < n; i++)
		memcpy(b->src[i], b->src[0], ST_LEN);
	set_handoff(ZBATCH_HANDOFF_ALWAYS);
	batch_compress_at(b, n, codec, 0, level);
	for (i = 0; i < n; i++)
		if (b->req[i].status || b->req[i].produced != *len ||
		    memcmp(b->cmp[i], b->dec[0], *len) || !guard_ok(b->cmp[i], ST_LEN))
			return "a batch compressed otherwise than inline at its level";
	zbatch_req_init(&b->req[0], ZBATCH_OP_DECOMPRESS, b->cmp[0], *len,
			b->dec[1], ST_LEN);
	if (zbatch_run_inline(ctx, &b->req[0], codec, 0) ||
	    b->req[0].produced != ST_LEN || memcmp(b->dec[1], b->src[0], ST_LEN))
		return "round trip at the level differs";
	return NULL;
}

/*
 * A zstd level whose tables do not fit the workspace (19 on 64 KiB): the
 * static context refuses it; nothing is written past the destination.
 * zbatch_codec_level_check() keeps it off every device; this is the net.
 */
static void test_level_too_big(struct zbatch_ctx *ctx)
{
	const char *name = "level_beyond_the_workspace_fails_without_overrun";
	u8 *src = kvmalloc(ZBATCH_MAX_LEN, GFP_KERNEL);
	u8 *dst = kvmalloc(ZBATCH_MAX_LEN + ST_GUARD, GFP_KERNEL);
	struct zbatch_req req;
	unsigned int i;

	if (!src || !dst || zbatch_ctx_prepare(ctx, ZBATCH_CODEC_ZSTD)) {
		result(false, name, "no memory");
		goto out;
	}
	for (i = 0; i < ZBATCH_MAX_LEN; i += ST_LEN)
		fill(src + i, ST_LEN, PAT_TEXT, i);
	memset(dst, ST_POISON, ZBATCH_MAX_LEN + ST_GUARD);
	zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, ZBATCH_MAX_LEN, dst, ZBATCH_MAX_LEN);
	if (!zbatch_run_inline(ctx, &req, ZBATCH_CODEC_ZSTD, 19))
		result(false, name, "compressed although its tables do not fit");
	else
		result(guard_ok(dst, ZBATCH_MAX_LEN), name, "wrote past the destination");
out:
	kvfree(src);
	kvfree(dst);
}

static void test_levels(struct st_bufs *b)
{
	static const struct {
		unsigned int codec;
		int level;
		unsigned int len;
		int want;
	} checks[] = {
		{ ZBATCH_CODEC_ZSTD, 0, ZBATCH_MAX_LEN, 0 },
		{ ZBATCH_CODEC_ZSTD, 3, ZBATCH_MAX_LEN, 0 },
		{ ZBATCH_CODEC_ZSTD, 19, 4 * PAGE_SIZE, 0 },
		{ ZBATCH_CODEC_ZSTD, 19, ZBATCH_MAX_LEN, -E2BIG },
		{ ZBATCH_CODEC_ZSTD, 23, PAGE_SIZE, -ERANGE },
		{ ZBATCH_CODEC_DEFLATE, 10, PAGE_SIZE, -ERANGE },
		{ ZBATCH_CODEC_LZ4, -1, PAGE_SIZE, -ERANGE },
		{ ZBATCH_CODEC_LZO, 1, PAGE_SIZE, -EOPNOTSUPP },
		{ ZBATCH_CODEC_LZO, 0, PAGE_SIZE, 0 },
	};
	unsigned int i, j, old_h = READ_ONCE(zbatch_handoff);
	struct zbatch_ctx *ctx;
	const char *why = NULL;
	char name[80];

	for (i = 0; i < ARRAY_SIZE(checks) && !why; i++)
		if (zbatch_codec_level_check(checks[i].codec, checks[i].level,
					     checks[i].len) != checks[i].want)
			why = "a level accepted or refused wrongly";
	result(!why, "level_ranges_and_workspace_bound", why);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx) {
		result(false, "level_beyond_the_workspace_fails_without_overrun", "no memory");
		return;
	}
	test_level_too_big(ctx);
	for (i = 0; i < ARRAY_SIZE(st_levels); i++) {
		unsigned int len[3];

		snprintf(name, sizeof(name), "level_reaches_engines_and_inline_path_%s",
			 zbatch_codec_name(st_levels[i].codec));
		/* a device executor (IAA) compresses at its own settings */
		if (zbatch_device_serves(st_levels[i].codec)) {
			skip(name, "a device executor serves the codec");
			continue;
		}
		if (!engines_total()) {
			skip(name, "no engines");
			continue;
		}
		why = NULL;
		for (j = 0; j < 3 && !why; j++)
			why = level_paths(b, ctx, st_levels[i].codec,
					  st_levels[i].level[j], &len[j]);
		if (!why && len[0] == len[2])
			why = "the lowest and highest level compressed to the same size";
		result(!why, name, why);
	}
	set_handoff(old_h);
	zbatch_ctx_free(ctx);
	kfree(ctx);
}

/*
 * lz4 units (ZBATCH_CODEC_LZ4U, the swap device's): 4 and 16 pages of
 * text and mixed data round-trip whole and block by block as the store
 * cuts them; a header that does not add up is refused; a unit with an
 * incompressible page does not fit (-ENOSPC: the device stores its pages
 * one by one) and its header then says what its blocks found (block 0's
 * length, plain lz4 of page 0; "did not fit"; nothing), one cut short by
 * its room says nothing; a page alone is plain lz4.
 */
static const char *lz4u_check(struct zbatch_ctx *ctx, u8 *src, u8 *cmp, u8 *dec)
{
	u16 len[ZBATCH_LZ4U_MAX_BLOCKS], plen[ZBATCH_LZ4U_MAX_BLOCKS];
	u8 first[ZBATCH_LZ4U_MAX_BLOCKS + 1];
	unsigned int n, k, p, size, clen, off, np;
	struct zbatch_req req;

	for (n = 4; n <= ZBATCH_LZ4U_MAX_BLOCKS; n *= 4) {
		size = n * PAGE_SIZE;
		for (k = 0; k < n; k++)
			fill(src + k * PAGE_SIZE, PAGE_SIZE, k % 3 ? PAT_TEXT : PAT_MIXED, n + k);
		zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, size, cmp, size - PAGE_SIZE);
		if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0))
			return "a unit of text did not compress";
		clen = req.produced;
		memset(dec, ST_POISON, size + ST_GUARD);
		zbatch_req_init(&req, ZBATCH_OP_DECOMPRESS, cmp, clen, dec, size);
		if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0) ||
		    req.produced != size || memcmp(dec, src, size) || !guard_ok(dec, size))
			return "a unit's round trip differs";
		if (zbatch_lz4u_lens(cmp, clen, n, len))
			return "a unit's header does not add up";
		np = zbatch_lz4u_pieces(len, n, plen, first);
		for (p = 0, off = 0; p < np; off += plen[p++])
			if (!plen[p] || plen[p] > PAGE_SIZE || first[p] >= first[p + 1])
				return "a unit's cut makes an empty or oversized object";
		if (off != clen || first[np] != n || np > n)
			return "a unit's cut does not cover its stream";
		memset(dec, 0, size);
		for (k = 0, off = n * sizeof(__le16); k < n; off += len[k++])
			if (zbatch_lz4u_block(cmp + off, len[k], dec, k))
				return "a block does not decode on its own";
		if (memcmp(dec, src, size))
			return "blocks decoded one by one differ";
		put_unaligned_le16(len[0] + 1, cmp);
		zbatch_req_init(&req, ZBATCH_OP_DECOMPRESS, cmp, clen, dec, size);
		if (!zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0))
			return "a header that does not add up decoded";
		/* block 0 too long to share a page with the header: n + 1 pieces */
		clen = PAGE_SIZE + n;	/* header + block 0 + (n - 1) blocks of 1 */
		put_unaligned_le16(PAGE_SIZE - n * sizeof(__le16) + 1, cmp);
		for (k = 1; k < n; k++)
			put_unaligned_le16(1, cmp + k * sizeof(__le16));
		if (!zbatch_lz4u_lens(cmp, clen, n, len))
			return "a header whose cut takes more objects than pages passed";
	}
	fill(src, 4 * PAGE_SIZE, PAT_TEXT, 3);
	fill(src + PAGE_SIZE, PAGE_SIZE, PAT_RANDOM, 4);
	memset(cmp, ST_POISON, 3 * PAGE_SIZE);
	zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, 4 * PAGE_SIZE, cmp, 3 * PAGE_SIZE);
	if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0) != -ENOSPC)
		return "a unit with an incompressible page did not say -ENOSPC";
	/* what the header says then: block 0's length, "did not fit", nothing */
	clen = get_unaligned_le16(cmp);
	if (!clen || clen > PAGE_SIZE - 4 * sizeof(__le16) ||
	    get_unaligned_le16(cmp + 2) != ZBATCH_LZ4U_NOFIT ||
	    get_unaligned_le16(cmp + 4) || get_unaligned_le16(cmp + 6))
		return "a unit that did not fit left a wrong header";
	zbatch_req_init(&req, ZBATCH_OP_DECOMPRESS, cmp + 4 * sizeof(__le16), clen, dec,
			PAGE_SIZE);
	if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4, 0) || req.produced != PAGE_SIZE ||
	    memcmp(dec, src, PAGE_SIZE))
		return "a unit's block 0 is not plain lz4 of its first page";
	/* a block cut short by the caller's room is not "did not fit a page" */
	memset(cmp, ST_POISON, 3 * PAGE_SIZE);
	zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, 4 * PAGE_SIZE, cmp, 64);
	if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0) != -ENOSPC)
		return "a unit in 64 bytes did not say -ENOSPC";
	for (k = 0; k < 4; k++)
		if (get_unaligned_le16(cmp + k * sizeof(__le16)))
			return "a unit cut short by its room left a length in its header";
	zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, PAGE_SIZE, cmp, PAGE_SIZE);
	if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0))
		return "a page of text did not compress";
	zbatch_req_init(&req, ZBATCH_OP_DECOMPRESS, cmp, req.produced, dec, PAGE_SIZE);
	if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4, 0) || req.produced != PAGE_SIZE ||
	    memcmp(dec, src, PAGE_SIZE))
		return "a page alone is not plain lz4";
	return NULL;
}

/*
 * With verify_compress on, a page, a unit of 4 pages and one of 16
 * compressed as the swap device does verify (each is decompressed into
 * exactly its size: the unit's decoder counts its blocks by that room).
 */
static const char *lz4u_verify(struct zbatch_ctx *ctx, u8 *src, u8 *cmp)
{
	static const unsigned int pages[] = { 1, 4, ZBATCH_LZ4U_MAX_BLOCKS };
	u64 before = zbatch_stat_read(&zbatch_gstats, ZST_ERR_VERIFY);
	const char *why = NULL;
	struct zbatch_req req;
	unsigned int i, size;

	set_verify(true);
	for (i = 0; i < ARRAY_SIZE(pages) && !why; i++) {
		size = pages[i] * PAGE_SIZE;
		fill(src, size, PAT_TEXT, 7 + i);
		zbatch_req_init(&req, ZBATCH_OP_COMPRESS, src, size, cmp, size);
		if (zbatch_run_inline(ctx, &req, ZBATCH_CODEC_LZ4U, 0))
			why = zbatch_stat_read(&zbatch_gstats, ZST_ERR_VERIFY) != before ?
			      "text did not verify with verify_compress on" :
			      "text did not compress with verify_compress on";
	}
	set_verify(false);
	if (!why && zbatch_stat_read(&zbatch_gstats, ZST_ERR_VERIFY) != before)
		why = "verify mismatch counted on good data";
	return why;
}

static void test_lz4_units(void)
{
	struct zbatch_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	u8 *src = kvmalloc(ZBATCH_MAX_LEN, GFP_KERNEL);
	u8 *cmp = kvmalloc(ZBATCH_MAX_LEN, GFP_KERNEL);
	u8 *dec = kvmalloc(ZBATCH_MAX_LEN + ST_GUARD, GFP_KERNEL);
	const char *why = "no memory";

	if (ctx && src && cmp && dec && !zbatch_ctx_prepare(ctx, ZBATCH_CODEC_LZ4U))
		why = lz4u_check(ctx, src, cmp, dec);
	result(!why, "lz4_units_round_trip_cut_and_refusals", why);
	if (why) {	/* one failure, reported once */
		skip("lz4_units_verify_with_verify_compress",
		     "lz4_units_round_trip_cut_and_refusals did not pass");
	} else {
		why = lz4u_verify(ctx, src, cmp);
		result(!why, "lz4_units_verify_with_verify_compress", why);
	}
	if (ctx)
		zbatch_ctx_free(ctx);
	kfree(ctx);
	kvfree(src);
	kvfree(cmp);
	kvfree(dec);
}

/*
 * A batch of one request runs at submit, without a job: poll and wait
 * must then not walk the job's slices, which a caller's batch from
 * kmalloc() (the API's own example) leaves as garbage. Poisoned here.
 */
static void test_one_request(struct st_bufs *b)
{
	static const unsigned int modes[] = { ZBATCH_KF_SYNC, ZBATCH_KF_ASYNC,
					      ZBATCH_KF_ASYNC_IRQ };
	struct zbatch_batch *batch = kmalloc(sizeof(*batch), GFP_KERNEL);
	unsigned int m, old_h = READ_ONCE(zbatch_handoff);
	const char *why = NULL;
	int ret;

	if (!batch) {
		result(false, "one_request_batch_in_dirty_memory", "no memory");
		return;
	}
	fill(b->src[0], ST_LEN, PAT_TEXT, 3);
	set_handoff(ZBATCH_HANDOFF_AUTO);
	for (m = 0; m < ARRAY_SIZE(modes) && !why; m++) {
		memset(batch, 0x6b, sizeof(*batch));
		zbatch_batch_init(batch, ZBATCH_CODEC_LZ4, modes[m]);
		zbatch_req_init(&b->req[0], ZBATCH_OP_COMPRESS, b->src[0], ST_LEN,
				b->cmp[0], ST_LEN);
		zbatch_batch_add(batch, &b->req[0]);
		ret = zbatch_submit(batch);
		/*
		 * poll first (the batch ran at submit, unless handoff was
		 * set to "always" meanwhile), then wait: never freed while
		 * a slice of it may be queued
		 */
		if (ret == -EINPROGRESS)
			ret = zbatch_poll(batch);
		if (ret == -EINPROGRESS)
			ret = zbatch_wait(batch);
		if (ret || !b->req[0].produced)
			why = "one request failed";
	}
	set_handoff(old_h);
	kfree(batch);
	result(!why, "one_request_batch_in_dirty_memory", why);
}

static void test_api_limits(struct st_bufs *b)
{
	const char *why = NULL;
	unsigned int i;

	zbatch_batch_init(&b->batch, 0, 0);
	if (zbatch_submit(&b->batch) != -EINVAL)
		why = "empty batch accepted";
	zbatch_batch_init(&b->batch, ZBATCH_CODECS_ALL, 0);	/* past the internal ones */
	zbatch_req_init(&b->req[0], ZBATCH_OP_COMPRESS, b->src[0], ST_LEN, b->cmp[0], ST_LEN);
	zbatch_batch_add(&b->batch, &b->req[0]);
	if (!why && zbatch_submit(&b->batch) != -EINVAL)
		why = "unknown codec accepted";
	/* a request never run must not read as a success of 0 bytes */
	if (!why && b->req[0].status != -EINPROGRESS)
		why = "a refused batch's request reads as done";
	zbatch_batch_init(&b->batch, 0, 0);
	for (i = 0; i <= ZBATCH_MAX_BATCH && !why; i++)
		zbatch_batch_add(&b->batch, &b->req[i % ZBATCH_MAX_BATCH]);
	if (!why && zbatch_submit(&b->batch) != -EINVAL)
		why = "oversized batch accepted";
	if (!why && zbatch_batch_size() < 1)
		why = "batch size below 1";
	result(!why, "api_refuses_bad_batches", why);
}

/*
 * What the self-tests change, as the administrator left it: tunables, the
 * dispatch policy, every WQ's service flag, stall, fault and logging.
 * Restored exactly at the end (meanwhile other callers may see them).
 */
struct st_saved {
	struct zbatch_config cfg;
	unsigned int handoff;
	unsigned int nomem;
	struct {
		bool enabled, stalled, timeout_logged, errors_logged;
		struct zbatch_fault fault;
	} wq[64 * ZBATCH_MAX_WQS];
};

static void state_save(struct st_saved *sv)
{
	unsigned int d, w;

	mutex_lock(&zbatch_cfg_lock);
	sv->cfg = zbatch_cfg;
	sv->handoff = READ_ONCE(zbatch_handoff);
	sv->nomem = READ_ONCE(zbatch_fault_nomem);
	for (d = 0; d < zbatch_nr_devs; d++)
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++) {
			struct zbatch_sw_wq *swq = to_sw_wq(zbatch_devs[d]->wqs[w]);
			struct zbatch_wq *wq = &swq->wq;
			unsigned int i = d * ZBATCH_MAX_WQS + w;

			sv->wq[i].enabled = READ_ONCE(wq->enabled);
			sv->wq[i].stalled = READ_ONCE(swq->stalled);
			sv->wq[i].timeout_logged = READ_ONCE(wq->timeout_logged);
			sv->wq[i].errors_logged = READ_ONCE(wq->errors_logged);
			sv->wq[i].fault = swq->fault;
		}
	/* the tests run on every WQ, in service, without injected faults */
	WRITE_ONCE(zbatch_fault_nomem, 0);
	WRITE_ONCE(zbatch_handoff, ZBATCH_HANDOFF_AUTO);
	for (d = 0; d < zbatch_nr_devs; d++)
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++) {
			struct zbatch_sw_wq *swq = to_sw_wq(zbatch_devs[d]->wqs[w]);

			WRITE_ONCE(swq->fault.kind, ZBATCH_FAULT_NONE);
			WRITE_ONCE(swq->stalled, false);
			WRITE_ONCE(swq->wq.enabled, true);
		}
	mutex_unlock(&zbatch_cfg_lock);
}

static void state_restore(const struct st_saved *sv)
{
	unsigned int d, w;

	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(zbatch_cfg.codec, sv->cfg.codec);
	WRITE_ONCE(zbatch_cfg.sync_mode, sv->cfg.sync_mode);
	WRITE_ONCE(zbatch_cfg.distribute_comps, sv->cfg.distribute_comps);
	WRITE_ONCE(zbatch_cfg.distribute_decomps, sv->cfg.distribute_decomps);
	WRITE_ONCE(zbatch_cfg.g_comp_wqs, sv->cfg.g_comp_wqs);
	WRITE_ONCE(zbatch_cfg.verify, sv->cfg.verify);
	WRITE_ONCE(zbatch_cfg.timeout_ms, sv->cfg.timeout_ms);
	WRITE_ONCE(zbatch_handoff, sv->handoff);
	WRITE_ONCE(zbatch_fault_nomem, sv->nomem);
	for (d = 0; d < zbatch_nr_devs; d++)
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++) {
			struct zbatch_sw_wq *swq = to_sw_wq(zbatch_devs[d]->wqs[w]);
			struct zbatch_wq *wq = &swq->wq;
			unsigned int i = d * ZBATCH_MAX_WQS + w;

			WRITE_ONCE(swq->stalled, sv->wq[i].stalled);
			WRITE_ONCE(wq->timeout_logged, sv->wq[i].timeout_logged);
			WRITE_ONCE(wq->errors_logged, sv->wq[i].errors_logged);
			WRITE_ONCE(swq->fault.status, sv->wq[i].fault.status);
			WRITE_ONCE(swq->fault.error_code, sv->wq[i].fault.error_code);
			WRITE_ONCE(swq->fault.every, sv->wq[i].fault.every);
			/* the kind last, after its parameters (fault_write()) */
			smp_store_release(&swq->fault.kind, sv->wq[i].fault.kind);
			atomic_set(&wq->err_streak, 0);
			WRITE_ONCE(wq->enabled, sv->wq[i].enabled);
		}
	mutex_unlock(&zbatch_cfg_lock);
}

/* Runs @call, a group of tests, then says how long it took (a KTAP diagnostic). */
#define ST_TIMED(call) do {						\
	u64 t0 = ktime_get_ns();					\
									\
	call;								\
	out("# %s: %llu ms\n", #call,					\
	    div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC));		\
} while (0)

int zbatch_selftest_run(void)
{
	struct st_saved *saved;
	struct st_bufs *b;
	int failed;

	mutex_lock(&selftest_lock);
	if (!report)
		report = kvzalloc(ST_BUF, GFP_KERNEL);
	b = bufs_alloc();
	saved = kvzalloc(sizeof(*saved), GFP_KERNEL);
	if (!report || !b || !saved) {
		kvfree(saved);
		bufs_free(b);
		mutex_unlock(&selftest_lock);
		return -ENOMEM;
	}
	state_save(saved);
	report_len = 0;
	nr_tests = 0;
	out("KTAP version 1\n");
	out("# zbatch %s self-tests\n", ZBATCH_VERSION);

	ST_TIMED(test_vectors(b));
	ST_TIMED(test_roundtrips(b));
	ST_TIMED(test_errors(b));
	ST_TIMED(test_verify(b));
	ST_TIMED(test_api_limits(b));
	ST_TIMED(test_one_request(b));
	ST_TIMED(test_cr_errno());
	ST_TIMED(test_dispatch(b));
	ST_TIMED(test_dispatch_serial());
	ST_TIMED(test_units(b));
	ST_TIMED(test_inline(b));
	ST_TIMED(test_levels(b));
	ST_TIMED(test_lz4_units());
	ST_TIMED(test_timeout(b));
	ST_TIMED(test_concurrent());

	state_restore(saved);
	kvfree(saved);
	bufs_free(b);
	out("1..%u\n", nr_tests);
	failed = 0;
	{
		const char *p = report;

		while ((p = strstr(p, "\nnot ok ")))
			failed++, p++;
	}
	out("# totals: pass:%u fail:%d\n", nr_tests - failed, failed);
	pr_info("self-tests: %u run, %d failed\n", nr_tests, failed);
	mutex_unlock(&selftest_lock);
	return failed;
}

ssize_t zbatch_selftest_read(char __user *buf, size_t len, loff_t *pos)
{
	ssize_t ret;

	mutex_lock(&selftest_lock);
	if (!report)
		ret = simple_read_from_buffer(buf, len, pos, "# no self-test run yet\n", 23);
	else
		ret = simple_read_from_buffer(buf, len, pos, report, report_len);
	mutex_unlock(&selftest_lock);
	return ret;
}

void zbatch_selftest_destroy(void)
{
	kvfree(report);
	report = NULL;
}
