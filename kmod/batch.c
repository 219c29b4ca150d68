// SPDX-License-Identifier: GPL-2.0
/*
 * The batch core: every caller (char device, acomp algorithms, block
 * device, other modules) builds requests, chains them into a batch and
 * goes through zbatch_submit() and zbatch_poll()/zbatch_wait().
 *
 * Each request becomes one IAA-format descriptor on a WQ picked by the
 * CPU mapping. Completion is seen through the descriptor's completion
 * record. A waiting submitter runs its own still-queued descriptors, so a
 * batch uses the submitter's CPU as well as the engines.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/zbatch.h>

#include "internal.h"

/* Enqueue attempts on a full WQ before the submitter runs the job itself. */
#define ZBATCH_ENQ_RETRIES	8

/**
 * zbatch_req_init() - describe a request on kernel virtual buffers
 * @req: the request
 * @op: ZBATCH_OP_COMPRESS or ZBATCH_OP_DECOMPRESS
 * @src: input, @slen bytes (1..ZBATCH_MAX_LEN)
 * @slen: input length
 * @dst: output buffer of @dlen bytes; nothing is written past it
 * @dlen: output capacity (1..ZBATCH_MAX_LEN)
 *
 * Invalid values are not refused here: the request completes with
 * -EINVAL at submit time without touching its siblings.
 */
void zbatch_req_init(struct zbatch_req *req, enum zbatch_op op,
		     const void *src, unsigned int slen,
		     void *dst, unsigned int dlen)
{
	/* desc and cr are written at submit: no need to clear them here */
	req->op = op;
	req->src = src;
	req->slen = slen;
	req->dst = dst;
	req->dlen = dlen;
	req->done = NULL;
	req->done_data = NULL;
	req->status = 0;
	req->produced = 0;
	req->batch = NULL;
	req->wq = NULL;
	atomic_set(&req->state, ZBATCH_REQ_IDLE);
	INIT_LIST_HEAD(&req->chain);
	INIT_LIST_HEAD(&req->qnode);
}
EXPORT_SYMBOL_GPL(zbatch_req_init);

/**
 * zbatch_req_set_pages() - describe a request on pages
 * @req: the request
 * @op: the operation
 * @src: input page; @src_off + @slen must stay within the page
 * @src_off: offset in @src
 * @slen: input length
 * @dst: output page
 * @dst_off: offset in @dst
 * @dlen: output capacity, within the page
 *
 * Return: 0, or -EINVAL when a range leaves its page.
 */
int zbatch_req_set_pages(struct zbatch_req *req, enum zbatch_op op,
			 struct page *src, unsigned int src_off,
			 unsigned int slen, struct page *dst,
			 unsigned int dst_off, unsigned int dlen)
{
	if (!src || !dst || src_off + slen > PAGE_SIZE || src_off + slen < src_off ||
	    dst_off + dlen > PAGE_SIZE || dst_off + dlen < dst_off)
		return -EINVAL;
	/* no highmem on the 64-bit targets: pages have a kernel address */
	zbatch_req_init(req, op, page_address(src) + src_off, slen,
			page_address(dst) + dst_off, dlen);
	return 0;
}
EXPORT_SYMBOL_GPL(zbatch_req_set_pages);

/**
 * zbatch_req_set_sg() - describe a request on scatterlists
 * @req: the request
 * @op: the operation
 * @src: input scatterlist
 * @slen: input length
 * @dst: output scatterlist
 * @dlen: output capacity
 *
 * Each side must be one segment (as one page or folio of a swap entry is);
 * the IAA path needs physically contiguous buffers too.
 *
 * Return: 0, or -EINVAL when a side has more than one segment or is
 * shorter than its length.
 */
int zbatch_req_set_sg(struct zbatch_req *req, enum zbatch_op op,
		      struct scatterlist *src, unsigned int slen,
		      struct scatterlist *dst, unsigned int dlen)
{
	if (!src || !dst || !sg_is_last(src) || !sg_is_last(dst) ||
	    src->length < slen || dst->length < dlen)
		return -EINVAL;
	zbatch_req_init(req, op, sg_virt(src), slen, sg_virt(dst), dlen);
	return 0;
}
EXPORT_SYMBOL_GPL(zbatch_req_set_sg);

/**
 * zbatch_batch_init() - start an empty batch
 * @batch: the batch
 * @codec: enum zbatch_codec; ZBATCH_CODEC_DEFAULT for the sysfs choice
 * @flags: ZBATCH_F_* flags
 */
void zbatch_batch_init(struct zbatch_batch *batch, unsigned int codec,
		       unsigned int flags)
{
	memset(batch, 0, sizeof(*batch));
	INIT_LIST_HEAD(&batch->reqs);
	init_waitqueue_head(&batch->waitq);
	batch->codec = codec;
	batch->flags = flags;
}
EXPORT_SYMBOL_GPL(zbatch_batch_init);

/**
 * zbatch_batch_add() - chain a request to a batch
 * @batch: the batch, not submitted yet
 * @req: an initialised request
 */
void zbatch_batch_add(struct zbatch_batch *batch, struct zbatch_req *req)
{
	req->batch = batch;
	list_add_tail(&req->chain, &batch->reqs);
	batch->nr++;
}
EXPORT_SYMBOL_GPL(zbatch_batch_add);

/**
 * zbatch_batch_size() - how many requests a batching caller should chain
 *
 * Return: 1 when nothing can run requests in parallel (one engine in
 * all), otherwise ZBATCH_MAX_BATCH / 2 (32), the seeds' batch size;
 * up to ZBATCH_MAX_BATCH requests are accepted in any case.
 */
unsigned int zbatch_batch_size(void)
{
	unsigned int d, engines = 0;

	for (d = 0; d < zbatch_nr_devs; d++)
		engines += zbatch_devs[d]->nr_engines;
	return engines > 1 ? ZBATCH_MAX_BATCH / 2 : 1;
}
EXPORT_SYMBOL_GPL(zbatch_batch_size);

static enum zbatch_stat err_stat(int status)
{
	switch (status) {
	case -ENOSPC:
		return ZST_ERR_NOSPC;
	case -EBADMSG:
		return ZST_ERR_BADMSG;
	case -EINVAL:
		return ZST_ERR_INVAL;
	case -EIO:
		return ZST_ERR_VERIFY;
	case -ETIMEDOUT:
		return ZST_ERR_TIMEDOUT;
	default:
		return ZST_ERR_OTHER;
	}
}

static void account(struct zbatch_stats *s, struct zbatch_req *req)
{
	bool comp = req->op == ZBATCH_OP_COMPRESS;

	zbatch_stat_add(s, comp ? ZST_COMP_CALLS : ZST_DECOMP_CALLS, 1);
	if (req->status) {
		zbatch_stat_add(s, err_stat(req->status), 1);
		return;
	}
	zbatch_stat_add(s, ZST_COMPLETIONS, 1);
	zbatch_stat_add(s, comp ? ZST_COMP_BYTES_IN : ZST_DECOMP_BYTES_IN,
			req->slen);
	zbatch_stat_add(s, comp ? ZST_COMP_BYTES_OUT : ZST_DECOMP_BYTES_OUT,
			req->produced);
}

/*
 * The last touch of a request by whoever ran it. After the pending count
 * drops under the waitq lock, the batch and its requests may be freed.
 */
void zbatch_req_complete(struct zbatch_req *req)
{
	struct zbatch_batch *b = req->batch;
	unsigned long flags;

	account(&zbatch_gstats, req);
	if (req->wq) {
		account(&req->wq->stats, req);
		account(&req->wq->dev->stats, req);
	}
	if (req->lat_sample)
		zbatch_stats_latency(req->op, local_clock() - req->submit_ns);
	atomic_set_release(&req->state, ZBATCH_REQ_DONE);
	if (req->done)
		req->done(req, req->done_data);

	spin_lock_irqsave(&b->waitq.lock, flags);
	if (atomic_dec_and_test(&b->pending))
		wake_up_locked(&b->waitq);
	spin_unlock_irqrestore(&b->waitq.lock, flags);
}

/* Run @req in the calling context (fallback, helping or inline). */
static void run_here(struct zbatch_req *req)
{
	struct zbatch_ctx *ctx = zbatch_ctx_get();

	if (!ctx) {
		req->status = -ENOMEM;
		zbatch_req_complete(req);
		return;
	}
	zbatch_execute(ctx, req, req->batch->codec);
	zbatch_ctx_put(ctx);
	zbatch_req_complete(req);
}

static bool req_valid(const struct zbatch_req *req)
{
	return req->src && req->dst && req->slen && req->dlen &&
	       req->slen <= ZBATCH_MAX_LEN && req->dlen <= ZBATCH_MAX_LEN &&
	       (req->op == ZBATCH_OP_COMPRESS || req->op == ZBATCH_OP_DECOMPRESS);
}

static void build_desc(struct zbatch_req *req)
{
	struct iax_hw_desc *d = &req->desc;

	memset(d, 0, sizeof(*d));
	memset(&req->cr, 0, sizeof(req->cr));
	d->opcode = req->op == ZBATCH_OP_COMPRESS ? IAX_OPCODE_COMPRESS :
						     IAX_OPCODE_DECOMPRESS;
	d->flags = IDXD_OP_FLAG_CRAV | IDXD_OP_FLAG_RCR | IDXD_OP_FLAG_CC;
	d->priv = 1;
	d->completion_addr = (uintptr_t)&req->cr;
	d->src1_addr = (uintptr_t)req->src;
	d->src1_size = req->slen;
	d->dst_addr = (uintptr_t)req->dst;
	d->max_dst_size = req->dlen;
}

/**
 * zbatch_run_inline() - run one request now, on this CPU
 * @ctx: execution context with @codec's workspace (zbatch_ctx_prepare())
 * @req: an initialised request, not chained to any batch
 * @codec: enum zbatch_codec, ZBATCH_CODEC_DEFAULT for the sysfs choice
 *
 * The degenerate batch of one whose caller waits anyway (zswap's
 * one-page acomp calls): the same descriptor, codec, verify option and
 * statistics as a batch, without the WQ hop and the batch bookkeeping.
 * Context: any, including atomic: never sleeps or allocates when @ctx
 * was prepared for @codec.
 *
 * Return: the request's status (also in @req->status).
 */
int zbatch_run_inline(struct zbatch_ctx *ctx, struct zbatch_req *req,
		      unsigned int codec)
{
	u64 t0 = 0;

	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	req->wq = NULL;
	req->lat_sample = zbatch_stats_sample();
	if (req->lat_sample)
		t0 = local_clock();
	if (!req_valid(req) || !zbatch_codec(codec)) {
		req->status = -EINVAL;
		req->produced = 0;
	} else {
		build_desc(req);
		zbatch_execute(ctx, req, codec);
	}
	zbatch_stat_add(&zbatch_gstats, ZST_INLINE, 1);
	account(&zbatch_gstats, req);
	if (req->lat_sample)
		zbatch_stats_latency(req->op, local_clock() - t0);
	return req->status;
}

static void submit_one(struct zbatch_req *req)
{
	struct zbatch_wq *wq;
	int tries;

	req->submit_ns = req->batch->submit_ns;
	req->lat_sample = zbatch_stats_sample();
	req->status = -EINPROGRESS;
	req->produced = 0;
	req->wq = NULL;
	req->timed_out = false;
	atomic_set(&req->state, ZBATCH_REQ_IDLE);
	if (!req_valid(req)) {
		req->status = -EINVAL;
		atomic_set(&req->state, ZBATCH_REQ_RUNNING);
		zbatch_req_complete(req);
		return;
	}
	build_desc(req);
	wq = zbatch_wq_pick(req->op);
	for (tries = 0; wq && tries < ZBATCH_ENQ_RETRIES; tries++) {
		req->wq = wq;
		if (!wq->ops->enqueue(wq, req))
			return;
		zbatch_stat_add(&zbatch_gstats, ZST_RETRIES, 1);
		zbatch_stat_add(&wq->stats, ZST_RETRIES, 1);
		cpu_relax();
	}
	/* no WQ in service, or it stayed full: run it here */
	zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS, 1);
	req->wq = NULL;
	atomic_set(&req->state, ZBATCH_REQ_RUNNING);
	run_here(req);
}

/**
 * zbatch_submit() - submit every request of a batch
 * @batch: a batch of 1..ZBATCH_MAX_BATCH requests
 *
 * Returns without waiting in the async modes. In sync mode it waits, as
 * iaa_crypto's sync mode does.
 *
 * Context: process context; may sleep (sync mode waits).
 *
 * Return: -EINPROGRESS when submitted (poll or wait for the outcome);
 * in sync mode the outcome, as zbatch_wait(); -EINVAL for an empty or
 * oversized batch or an unknown codec (no request is then touched).
 */
int zbatch_submit(struct zbatch_batch *batch)
{
	struct zbatch_req *req, *tmp;
	unsigned int codec = batch->codec;

	might_sleep();
	if (!batch->nr || batch->nr > ZBATCH_MAX_BATCH ||
	    (batch->flags & ~ZBATCH_F_ALL))
		return -EINVAL;
	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	if (!zbatch_codec(codec))
		return -EINVAL;
	batch->codec = codec;
	batch->mode = READ_ONCE(zbatch_cfg.sync_mode);
	batch->submit_ns = local_clock();
	atomic_set(&batch->pending, batch->nr);
	zbatch_stats_batch(batch->nr);

	/* _safe: a request completed inline may be reused by its callback */
	list_for_each_entry_safe(req, tmp, &batch->reqs, chain)
		submit_one(req);
	if (batch->mode == ZBATCH_SYNC)
		return zbatch_wait(batch);
	return -EINPROGRESS;
}
EXPORT_SYMBOL_GPL(zbatch_submit);

/* A still-queued request of ours whose WQ gave up on it, or that we may run. */
static bool take_back(struct zbatch_req *req)
{
	struct zbatch_wq *wq = req->wq;

	if (atomic_read(&req->state) != ZBATCH_REQ_QUEUED || !wq)
		return false;
	return wq->ops->reclaim(wq, req);
}

static void check_timeout(struct zbatch_batch *batch, struct zbatch_req *req,
			  u64 now, u64 limit)
{
	if (req->timed_out || now - req->submit_ns < limit)
		return;
	req->timed_out = true;
	zbatch_wq_timed_out(req->wq);
	if (!take_back(req))
		return;	/* an engine runs it: its memory stays until done */
	if (batch->flags & ZBATCH_F_NO_FALLBACK) {
		req->status = -ETIMEDOUT;
		zbatch_req_complete(req);
		return;
	}
	zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS, 1);
	req->wq = NULL;
	run_here(req);
}

static int batch_result(struct zbatch_batch *batch)
{
	struct zbatch_req *req;

	/* pairs with the completer's unlock: it no longer touches the batch */
	spin_lock_irq(&batch->waitq.lock);
	spin_unlock_irq(&batch->waitq.lock);
	list_for_each_entry(req, &batch->reqs, chain)
		if (req->status)
			return req->status;
	return 0;
}

/**
 * zbatch_poll() - check a submitted batch, helping it along
 * @batch: a submitted batch
 *
 * Runs at most one still-queued request of this batch in the caller's
 * context and applies the descriptor timeout.
 *
 * Return: -EINPROGRESS while requests are outstanding; then 0 if every
 * request succeeded, or the first request's error in chain order.
 */
int zbatch_poll(struct zbatch_batch *batch)
{
	u64 now, limit = (u64)READ_ONCE(zbatch_cfg.timeout_ms) * NSEC_PER_MSEC;
	struct zbatch_req *req;

	if (!atomic_read(&batch->pending))
		return batch_result(batch);
	now = local_clock();
	list_for_each_entry(req, &batch->reqs, chain) {
		if (atomic_read_acquire(&req->state) == ZBATCH_REQ_DONE)
			continue;
		check_timeout(batch, req, now, limit);
		/* a stalled WQ models a hung device: nothing comes back early */
		if (req->wq && READ_ONCE(req->wq->stalled))
			continue;
		if (take_back(req)) {
			zbatch_stat_add(&zbatch_gstats, ZST_HELPED, 1);
			run_here(req);
			break;
		}
	}
	if (!atomic_read(&batch->pending))
		return batch_result(batch);
	return -EINPROGRESS;
}
EXPORT_SYMBOL_GPL(zbatch_poll);

/**
 * zbatch_wait() - wait until every request of a batch completed
 * @batch: a submitted batch
 *
 * Helps run the batch's queued requests, then spins (sync, async) or
 * sleeps until an engine wakes it (async_irq). Bounded: descriptors that
 * exceed the timeout are taken back and run in software.
 *
 * Context: process context; sleeps.
 *
 * Return: as zbatch_poll() once complete.
 */
int zbatch_wait(struct zbatch_batch *batch)
{
	int ret;

	might_sleep();
	for (;;) {
		ret = zbatch_poll(batch);
		if (ret != -EINPROGRESS)
			return ret;
		if (batch->mode == ZBATCH_ASYNC_IRQ)
			wait_event_timeout(batch->waitq,
					   !atomic_read(&batch->pending),
					   msecs_to_jiffies(10));
		else
			cond_resched();
	}
}
EXPORT_SYMBOL_GPL(zbatch_wait);
