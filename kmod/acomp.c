// SPDX-License-Identifier: GPL-2.0
/*
 * acomp algorithms over the batch core, for zswap and any crypto API user:
 * deflate-zbatch, lz4-zbatch, zstd-zbatch and lzo-zbatch.
 *
 * Names and priority: the generic algorithms have priority 0 and the
 * crypto API breaks ties in favour of the newest registration, so a
 * zbatch algorithm named after its base algorithm would take over
 * "deflate" (or the built-in "lzo", zswap's default) at any priority.
 * By default (acomp_priority=0) each algorithm is therefore registered
 * under its driver name only ("lz4-zbatch" as both cra_name and
 * cra_driver_name): it is used only when asked for by that name, e.g.
 * echo lz4-zbatch > /sys/module/zswap/parameters/compressor. With
 * acomp_priority=N (N >= 1) the base name is the cra_name at priority N:
 * a deliberate takeover, and the crypto manager then runs the base
 * algorithm's test vectors on it at registration.
 *
 * Every call is one request through the batch core: on IAA when the IAA
 * executor runs the codec (exec_acomp.c), else inline on the calling CPU
 * with the transform's own preallocated workspace (acomp_inline=1, the
 * default), or through the engines. Decompression never fails on data
 * zbatch produced for want of memory, an engine or a device: workspaces
 * exist before the first call, and a failed run is redone inline.
 *
 * Calling context. lz4-zbatch, zstd-zbatch and lzo-zbatch are
 * synchronous, as the stock lz4, zstd and lzo: a call without
 * CRYPTO_TFM_REQ_MAY_SLEEP runs inline and never sleeps or allocates, so
 * it may come from atomic context. zswap in 6.12 sets no MAY_SLEEP and
 * decompresses a synchronous algorithm's object straight from inside
 * zsmalloc's mapping (preemption off), without the copy it makes for an
 * asynchronous one (mm/zswap.c, acomp_ctx->is_sleepable): zswap's pages
 * therefore always run inline, at the stock call's cost (the inline_atomic
 * counter shows those calls). A caller that sets MAY_SLEEP may reach the
 * engines (acomp_inline=0). deflate-zbatch is asynchronous, as
 * iaa_crypto's deflate-iaa, because IAA may run it and a device call
 * sleeps: it may sleep in every call, and zswap calls it where that is
 * allowed (compress under its per-CPU mutex, decompress after copying the
 * object out of zsmalloc). Calls complete before they return (never
 * -EINPROGRESS), which crypto_wait_req() accepts. The registration flag
 * cannot change at run time, so the codec IAA serves stays asynchronous
 * even on a machine without IAA. The device executor may be pointed at
 * another codec's driver (iaa/driver): that codec's -zbatch algorithm
 * stays synchronous, and its calls without MAY_SLEEP run inline.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/internal/acompress.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/zbatch.h>

#include "batch.h"
#include "codec.h"
#include "config.h"
#include "frontends.h"
#include "stats.h"

static unsigned int acomp_priority;
module_param(acomp_priority, uint, 0444);
MODULE_PARM_DESC(acomp_priority,
		 "0: acomp algorithms only by driver name (default); N>0: base name at priority N (takes over e.g. \"deflate\")");

bool zbatch_acomp_inline = true;

/* Per transform: zswap uses one per CPU, serialised by its own mutex. */
struct zb_tfm {
	unsigned int codec;
	struct zbatch_ctx ctx;
};

struct zb_req {
	struct zbatch_batch batch;
	struct zbatch_req req;
};

static void *sg_linear(struct scatterlist *sg, unsigned int len)
{
	/* one segment with a kernel address: zswap's and testmgr's case */
	if (!sg || !sg_is_last(sg) || sg->length < len || PageHighMem(sg_page(sg)))
		return NULL;
	return sg_virt(sg);
}

static int zb_run(struct acomp_req *areq, enum zbatch_op op)
{
	struct crypto_acomp *tfm = crypto_acomp_reqtfm(areq);
	struct zb_tfm *t = acomp_tfm_ctx(tfm);
	struct zb_req *r = acomp_request_ctx(areq);
	void *src = sg_linear(areq->src, areq->slen);
	void *dst = sg_linear(areq->dst, areq->dlen);
	unsigned int dlen = min_t(unsigned int, areq->dlen, ZBATCH_MAX_LEN);
	bool may_sleep = acomp_is_async(tfm) ||
			 (areq->base.flags & CRYPTO_TFM_REQ_MAY_SLEEP);
	int ret;

	if (!src || !dst || !areq->slen || areq->slen > ZBATCH_MAX_LEN || !dlen)
		return -EINVAL;
	zbatch_req_init(&r->req, op, src, areq->slen, dst, dlen);
	if (!may_sleep || (READ_ONCE(zbatch_acomp_inline) &&
			   !zbatch_device_serves(t->codec))) {
		if (!may_sleep && (preempt_count() || irqs_disabled()))
			zbatch_stat_add(&zbatch_gstats, ZST_INLINE_ATOMIC, 1);
		ret = zbatch_run_inline(&t->ctx, &r->req, t->codec, 0);
	} else {
		might_sleep();
		zbatch_batch_init(&r->batch, t->codec, 0);
		zbatch_batch_add(&r->batch, &r->req);
		ret = zbatch_submit(&r->batch);
		if (ret == -EINPROGRESS)
			ret = zbatch_wait(&r->batch);
		/*
		 * zswap BUG()s on a failed decompress: a failure on the
		 * engine or device path is redone inline before anything is
		 * reported.
		 */
		if (ret && op == ZBATCH_OP_DECOMPRESS) {
			zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS, 1);
			zbatch_req_init(&r->req, op, src, areq->slen, dst, dlen);
			ret = zbatch_run_inline(&t->ctx, &r->req, t->codec, 0);
		}
	}
	if (ret)
		return ret;
	areq->dlen = r->req.produced;
	return 0;
}

static int zb_compress(struct acomp_req *areq)
{
	return zb_run(areq, ZBATCH_OP_COMPRESS);
}

static int zb_decompress(struct acomp_req *areq)
{
	return zb_run(areq, ZBATCH_OP_DECOMPRESS);
}

static int zb_init(struct crypto_acomp *tfm, unsigned int codec)
{
	struct zb_tfm *t = acomp_tfm_ctx(tfm);

	t->codec = codec;
	/* everything a call may need, now, where sleeping is allowed */
	return zbatch_ctx_prepare(&t->ctx, codec);
}

static void zb_exit(struct crypto_acomp *tfm)
{
	zbatch_ctx_free(&((struct zb_tfm *)acomp_tfm_ctx(tfm))->ctx);
}

#define ZB_ALG_INIT(pfx, id) \
	static int zb_init_##pfx(struct crypto_acomp *tfm) \
	{ \
		return zb_init(tfm, id); \
	}
ZB_ALG_INIT(deflate, ZBATCH_CODEC_DEFLATE)
ZB_ALG_INIT(lz4, ZBATCH_CODEC_LZ4)
ZB_ALG_INIT(zstd, ZBATCH_CODEC_ZSTD)
ZB_ALG_INIT(lzo, ZBATCH_CODEC_LZO)

#define ZB_ALG(pfx, flags) { \
	.compress = zb_compress, \
	.decompress = zb_decompress, \
	.init = zb_init_##pfx, \
	.exit = zb_exit, \
	.reqsize = sizeof(struct zb_req), \
	.base = { \
		.cra_driver_name = #pfx "-zbatch", \
		.cra_flags = (flags), \
		.cra_ctxsize = sizeof(struct zb_tfm), \
		.cra_module = THIS_MODULE, \
	}, \
}

static struct acomp_alg zb_algs[] = {
	/* IAA may run deflate: a device call sleeps */
	ZB_ALG(deflate, CRYPTO_ALG_ASYNC),
	ZB_ALG(lz4, 0), ZB_ALG(zstd, 0), ZB_ALG(lzo, 0),
};

/* zb_algs[i] serves this codec; its name is the algorithm's cra_name */
static const unsigned int zb_codec[] = {
	ZBATCH_CODEC_DEFLATE, ZBATCH_CODEC_LZ4, ZBATCH_CODEC_ZSTD, ZBATCH_CODEC_LZO,
};

int zbatch_acomp_create(void)
{
	unsigned int i;
	int ret;

	if (acomp_priority > 1000) {
		pr_err("invalid acomp_priority=%u (0..1000)\n", acomp_priority);
		return -EINVAL;
	}
	BUILD_BUG_ON(ARRAY_SIZE(zb_codec) != ARRAY_SIZE(zb_algs));
	for (i = 0; i < ARRAY_SIZE(zb_algs); i++) {
		struct crypto_alg *a = &zb_algs[i].base;

		if (acomp_priority)
			strscpy(a->cra_name, zbatch_codec_name(zb_codec[i]),
				sizeof(a->cra_name));
		else
			strscpy(a->cra_name, a->cra_driver_name, sizeof(a->cra_name));
		a->cra_priority = acomp_priority;
	}
	ret = crypto_register_acomps(zb_algs, ARRAY_SIZE(zb_algs));
	if (ret)
		pr_err("cannot register the acomp algorithms: %d\n", ret);
	return ret;
}

void zbatch_acomp_destroy(void)
{
	crypto_unregister_acomps(zb_algs, ARRAY_SIZE(zb_algs));
}
