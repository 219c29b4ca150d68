// SPDX-License-Identifier: GPL-2.0
/*
 * A hardware test double for iaa_crypto: an async acomp deflate algorithm,
 * "deflate-iaa-double", that behaves as iaa_crypto's deflate-iaa in
 * sync_mode=async_irq, so zbatch's IAA executor is tested without IAA.
 *
 * As iaa_crypto: a call validates its request (-EINVAL for no source or
 * destination or an empty source, -EIO for a buffer that is not one
 * segment), then returns -EINPROGRESS and completes later from another
 * context (a kernel worker, as iaa_crypto's threaded IRQ) with 0 or -EIO:
 * iaa_crypto reports output overflow, analytics errors, timeouts and
 * verify failures all as -EIO. With no WQ bound it returns -ENODEV.
 * Output is IAA's: one final fixed-Huffman block within a 4 KiB history
 * (iaa_deflate.c); input streams are decoded under IAA's rules (a distance
 * beyond 4 KiB fails).
 *
 * The device: @engines engines, each serving one request at a time for
 * @latency_us; a request starts on the engine that frees up first. The
 * software codec runs within that time on the worker's CPU (its CPU time
 * is the device's work, not the caller's).
 *
 * Faults (module parameters, writable at any time): @inject names an
 * error given to every @inject_every-th request: "overflow" and
 * "analytics" (completion with -EIO, as iaa_crypto reports both), "lost"
 * (a completion that never comes: the request is parked until
 * "echo 1 > release_lost" completes it, late, with -EIO), "nodev"
 * (-ENODEV at submit), "sync" (decompress completes synchronously with 0
 * and no callback, as iaa_crypto after its software fallback); @offline:
 * every call fails with -ENODEV, as iaa_crypto once its last WQ is
 * unbound.
 *
 * Counters (read-only parameters, since the double was loaded):
 * submitted, completed, errors, lost, sync_completions, inflight and
 * max_inflight (requests), busy_compress_ns and busy_decompress_ns (the
 * software codec's time), tfms (transforms allocated: zbatch's executor
 * probes each one it attaches with 3 requests at most, which
 * scripts/guest-load's iaa_reached() discounts).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/internal/acompress.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/zlib.h>

#include "iaa_deflate.h"

#define MAX_ENGINES	64

static unsigned int latency_us = 200;
module_param(latency_us, uint, 0644);
MODULE_PARM_DESC(latency_us, "Device time per request in microseconds (0..100000)");
static unsigned int engines = 8;
module_param(engines, uint, 0444);
MODULE_PARM_DESC(engines, "Engines working in parallel (1..64)");
static char inject[16] = "none";
module_param_string(inject, inject, sizeof(inject), 0644);
MODULE_PARM_DESC(inject, "Fault: none, overflow, analytics, lost, nodev, sync");
static unsigned int inject_every;
module_param(inject_every, uint, 0644);
MODULE_PARM_DESC(inject_every, "Give the fault to every N-th request (0: never)");
static bool offline;
module_param(offline, bool, 0644);
MODULE_PARM_DESC(offline, "Fail every call with -ENODEV (no WQ bound)");

static atomic64_t n_submitted, n_completed, n_errors, n_lost, n_sync, n_tfms;
static atomic64_t busy_comp_ns, busy_decomp_ns;	/* the software codec's time */
static atomic_t n_inflight, n_max_inflight;

static int counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", (long long)atomic64_read(kp->arg));
}

static int inflight_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops counter_ops = { .get = counter_get };
static const struct kernel_param_ops inflight_ops = { .get = inflight_get };
module_param_cb(submitted, &counter_ops, &n_submitted, 0444);
module_param_cb(completed, &counter_ops, &n_completed, 0444);
module_param_cb(errors, &counter_ops, &n_errors, 0444);
module_param_cb(lost, &counter_ops, &n_lost, 0444);
module_param_cb(sync_completions, &counter_ops, &n_sync, 0444);
/* transforms allocated: zbatch's executor probes each one it attaches */
module_param_cb(tfms, &counter_ops, &n_tfms, 0444);
module_param_cb(busy_compress_ns, &counter_ops, &busy_comp_ns, 0444);
module_param_cb(busy_decompress_ns, &counter_ops, &busy_decomp_ns, 0444);
module_param_cb(inflight, &inflight_ops, &n_inflight, 0444);
module_param_cb(max_inflight, &inflight_ops, &n_max_inflight, 0444);

enum fault { F_NONE, F_OVERFLOW, F_ANALYTICS, F_LOST, F_NODEV, F_SYNC };

struct engine {
	struct mutex lock;	/* one request at a time: its workspaces */
	void *hash;		/* iaa_fixed_compress() scratch */
	struct z_stream_s zs;	/* inflate */
	u64 free_at;		/* ns: when its last request is done */
};

static struct engine *engs;
static DEFINE_SPINLOCK(sched_lock);	/* engine free_at */
static atomic_t seq;
static struct workqueue_struct *dev_wq;

struct dreq {
	struct work_struct work;
	struct list_head lost;		/* on lost_list while parked */
	struct acomp_req *req;
	bool compress;
	enum fault fault;
	unsigned int engine;
	u64 start, due;		/* ns, local_clock() */
};

static LIST_HEAD(lost_list);
static DEFINE_SPINLOCK(lost_lock);

/* Complete every parked request, late, with -EIO. */
static int release_lost_set(const char *val, const struct kernel_param *kp)
{
	struct dreq *d, *tmp;
	LIST_HEAD(list);

	spin_lock(&lost_lock);
	list_splice_init(&lost_list, &list);
	spin_unlock(&lost_lock);
	list_for_each_entry_safe(d, tmp, &list, lost) {
		list_del(&d->lost);
		atomic64_inc(&n_errors);
		atomic64_inc(&n_completed);
		acomp_request_complete(d->req, -EIO);
	}
	return 0;
}

static const struct kernel_param_ops release_ops = { .set = release_lost_set };
module_param_cb(release_lost, &release_ops, NULL, 0200);
MODULE_PARM_DESC(release_lost, "Write 1: complete the lost requests now, with -EIO");

static enum fault pick_fault(void)
{
	unsigned int every = READ_ONCE(inject_every);

	if (!every || (unsigned int)atomic_inc_return(&seq) % every)
		return F_NONE;
	if (sysfs_streq(inject, "overflow"))
		return F_OVERFLOW;
	if (sysfs_streq(inject, "analytics"))
		return F_ANALYTICS;
	if (sysfs_streq(inject, "lost"))
		return F_LOST;
	if (sysfs_streq(inject, "nodev"))
		return F_NODEV;
	if (sysfs_streq(inject, "sync"))
		return F_SYNC;
	return F_NONE;
}

static void sleep_until(u64 t)
{
	u64 now = local_clock();

	if (t > now)
		fsleep(div_u64(t - now, NSEC_PER_USEC) + 1);
}

/* Decode under IAA's rules; a page-sized output cannot reach past 4 KiB. */
static int run_decompress(struct engine *e, const u8 *src, u32 slen, u8 *dst,
			  u32 *dlen)
{
	int ret;

	if (*dlen > IAA_HISTORY)
		return iaa_inflate(src, slen, dst, dlen, NULL, NULL) ? -EIO : 0;
	/* the fast path: kernel zlib, same answer when nothing can be far */
	if (zlib_inflateReset(&e->zs) != Z_OK)
		return -EIO;
	e->zs.next_in = src;
	e->zs.avail_in = slen;
	e->zs.next_out = dst;
	e->zs.avail_out = *dlen;
	ret = zlib_inflate(&e->zs, Z_FINISH);
	if (ret != Z_STREAM_END)
		return -EIO;
	*dlen = e->zs.total_out;
	return 0;
}

static int run(struct engine *e, struct acomp_req *req, bool compress)
{
	u8 *src = sg_virt(req->src), *dst = sg_virt(req->dst);
	u32 dlen = req->dlen;
	u64 t0 = local_clock();
	int ret;

	if (compress)
		ret = iaa_fixed_compress(src, req->slen, dst, &dlen, e->hash) ? -EIO : 0;
	else
		ret = run_decompress(e, src, req->slen, dst, &dlen);
	if (!ret)
		req->dlen = dlen;
	atomic64_add(local_clock() - t0, compress ? &busy_comp_ns : &busy_decomp_ns);
	return ret;
}

static void dreq_work(struct work_struct *w)
{
	struct dreq *d = container_of(w, struct dreq, work);
	struct acomp_req *req = d->req;
	struct engine *e = &engs[d->engine];
	int ret;

	sleep_until(d->start);
	mutex_lock(&e->lock);
	ret = run(e, req, d->compress);
	mutex_unlock(&e->lock);
	sleep_until(d->due);
	atomic_dec(&n_inflight);
	if (d->fault == F_LOST) {
		atomic64_inc(&n_lost);
		spin_lock(&lost_lock);
		list_add_tail(&d->lost, &lost_list);
		spin_unlock(&lost_lock);
		return;
	}
	if (d->fault == F_OVERFLOW || d->fault == F_ANALYTICS)
		ret = -EIO;
	if (ret)
		atomic64_inc(&n_errors);
	atomic64_inc(&n_completed);
	acomp_request_complete(req, ret);
}

static bool one_segment(struct scatterlist *sg, unsigned int len)
{
	return sg_nents(sg) == 1 && sg->length >= len && virt_addr_valid(sg_virt(sg));
}

static int submit(struct acomp_req *req, bool compress)
{
	struct dreq *d = acomp_request_ctx(req);
	unsigned int i, best = 0, n = clamp(engines, 1u, (unsigned int)MAX_ENGINES);
	u64 now, lat = (u64)min(READ_ONCE(latency_us), 100000u) * NSEC_PER_USEC;
	int inflight;

	if (!req->src || !req->dst || !req->slen || !req->dlen)
		return -EINVAL;
	if (READ_ONCE(offline))
		return -ENODEV;
	if (!one_segment(req->src, req->slen) || !one_segment(req->dst, req->dlen))
		return -EIO;
	d->req = req;
	d->compress = compress;
	d->fault = pick_fault();
	if (d->fault == F_NODEV)
		return -ENODEV;
	atomic64_inc(&n_submitted);
	if (d->fault == F_SYNC && !compress) {
		struct engine *e = &engs[0];
		int ret;

		mutex_lock(&e->lock);
		ret = run(e, req, false);
		mutex_unlock(&e->lock);
		atomic64_inc(&n_sync);
		atomic64_inc(&n_completed);
		return ret;
	}
	now = local_clock();
	spin_lock(&sched_lock);
	for (i = 1; i < n; i++)
		if (engs[i].free_at < engs[best].free_at)
			best = i;
	d->engine = best;
	d->start = max(now, engs[best].free_at);
	d->due = d->start + lat;
	engs[best].free_at = d->due;
	spin_unlock(&sched_lock);
	inflight = atomic_inc_return(&n_inflight);
	if (inflight > atomic_read(&n_max_inflight))
		atomic_set(&n_max_inflight, inflight);
	INIT_WORK(&d->work, dreq_work);
	queue_work(dev_wq, &d->work);
	return -EINPROGRESS;
}

static int double_compress(struct acomp_req *req)
{
	return submit(req, true);
}

static int double_decompress(struct acomp_req *req)
{
	return submit(req, false);
}

static int double_init_tfm(struct crypto_acomp *tfm)
{
	atomic64_inc(&n_tfms);
	return 0;
}

static struct acomp_alg double_alg = {
	.init = double_init_tfm,
	.compress = double_compress,
	.decompress = double_decompress,
	.reqsize = sizeof(struct dreq),
	.base = {
		/*
		 * its own name, not "deflate": the crypto API would hand it
		 * to anyone asking for deflate (zswap too), the software
		 * deflate being at priority 0; zbatch's executor takes an
		 * algorithm of its own name to run IAA's codec
		 */
		.cra_name = "deflate-iaa-double",
		.cra_driver_name = "deflate-iaa-double",
		.cra_flags = CRYPTO_ALG_ASYNC,
		.cra_priority = 300,
		.cra_module = THIS_MODULE,
	},
};

static void engines_free(unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		kfree(engs[i].hash);
		vfree(engs[i].zs.workspace);
	}
	kfree(engs);
}

static int __init double_init(void)
{
	unsigned int i;
	int ret = -ENOMEM;

	if (engines < 1 || engines > MAX_ENGINES) {
		pr_err("invalid engines=%u (1..%u)\n", engines, MAX_ENGINES);
		return -EINVAL;
	}
	iaa_deflate_init();	/* before any request: no first use races another */
	engs = kcalloc(engines, sizeof(*engs), GFP_KERNEL);
	if (!engs)
		return -ENOMEM;
	for (i = 0; i < engines; i++) {
		mutex_init(&engs[i].lock);
		engs[i].hash = kzalloc(IAA_FIXED_WRK_SIZE, GFP_KERNEL);
		engs[i].zs.workspace = vzalloc(zlib_inflate_workspacesize());
		if (!engs[i].hash || !engs[i].zs.workspace)
			goto err_engines;
		if (zlib_inflateInit2(&engs[i].zs, -15) != Z_OK) {
			ret = -EINVAL;
			goto err_engines;
		}
	}
	/* the device's engines run in parallel: one worker per request */
	dev_wq = alloc_workqueue("iaa_double", WQ_UNBOUND, 0);
	if (!dev_wq)
		goto err_engines;
	ret = crypto_register_acomp(&double_alg);
	if (ret)
		goto err_wq;
	pr_info("deflate-iaa-double: %u engines, %u us per request\n", engines, latency_us);
	return 0;

err_wq:
	destroy_workqueue(dev_wq);
err_engines:
	engines_free(engines);
	return ret;
}

static void __exit double_exit(void)
{
	/* no transform is left (each holds this module): nothing new comes */
	crypto_unregister_acomp(&double_alg);
	destroy_workqueue(dev_wq);
	engines_free(engines);
}

module_init(double_init);
module_exit(double_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zbatch test double of iaa_crypto's deflate-iaa (async_irq)");
