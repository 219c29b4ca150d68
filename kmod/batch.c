// SPDX-License-Identifier: GPL-2.0
/*
 * The batch core: every caller (char device, acomp algorithms, block
 * device, other modules) builds requests, chains them into a batch and
 * goes through zbatch_submit() and zbatch_poll()/zbatch_wait().
 *
 * Each request becomes one IAA-format descriptor. Dispatch is per batch:
 * the descriptors form a job cut into slices, the submitter's own and one
 * per helper engine (as many as the measured costs say pay for their
 * hand-off: cost.c, plan.c), posted to the WQ the CPU mapping picks with
 * one wake-up each. The submitter runs its slice inline and then steals;
 * so do the engines. Outcomes are read from the completion records
 * (zbatch_cr_errno(): the one place IAA status codes become errnos); the
 * executor contract is <linux/zbatch_exec.h>.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/export.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/zbatch.h>
#include <linux/zbatch_exec.h>

#include "batch.h"
#include "clock.h"
#include "codec.h"
#include "config.h"
#include "cost.h"
#include "exec_sw.h"
#include "plan.h"
#include "stats.h"
#include "wq.h"

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
	req->status = -EINPROGRESS;	/* until it ran: never a success */
	req->produced = 0;
	req->wq = NULL;
	INIT_LIST_HEAD(&req->chain);
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
	INIT_LIST_HEAD(&batch->reqs);
	batch->nr = 0;
	batch->finished = false;
	init_waitqueue_head(&batch->job.waitq);
	batch->codec = codec;
	batch->flags = flags;
	batch->ctx = NULL;
	batch->level = 0;
}
EXPORT_SYMBOL_GPL(zbatch_batch_init);

/* The submitter's context: its own (batch->ctx) or one from the pool. */
static struct zbatch_ctx *submitter_ctx(struct zbatch_batch *batch)
{
	return batch->ctx ?: zbatch_ctx_get();
}

static void submitter_ctx_put(struct zbatch_batch *batch, struct zbatch_ctx *ctx)
{
	if (ctx && ctx != batch->ctx)
		zbatch_ctx_put(ctx);
}

/**
 * zbatch_batch_add() - chain a request to a batch
 * @batch: the batch, not submitted yet
 * @req: an initialised request
 */
void zbatch_batch_add(struct zbatch_batch *batch, struct zbatch_req *req)
{
	list_add_tail(&req->chain, &batch->reqs);
	batch->nr++;
}
EXPORT_SYMBOL_GPL(zbatch_batch_add);

/*
 * The device executor (exec_acomp.c), set at module init before any
 * frontend exists and cleared at exit after they are gone: read with
 * READ_ONCE, never changed under a submitter.
 */
static const struct zbatch_exec_device *device_exec;

void zbatch_exec_device_set(const struct zbatch_exec_device *d)
{
	WRITE_ONCE(device_exec, d);
}

bool zbatch_device_serves(unsigned int codec)
{
	const struct zbatch_exec_device *d = READ_ONCE(device_exec);

	return d && d->serves(codec);
}

/**
 * zbatch_codec_batch_size() - how many requests a batching caller should chain
 * @codec: enum zbatch_codec (ZBATCH_CODEC_DEFAULT: the sysfs choice)
 * @op: the operation
 *
 * From what dispatch can use: the smallest batch of 4 KiB pages that the
 * measured costs hand to every engine able to help this CPU (plan.h); 1
 * when no engine can help; the device's batch when a device executor
 * (IAA) runs @codec. Up to
 * ZBATCH_MAX_BATCH requests are accepted in any case.
 *
 * Return: 1..ZBATCH_MAX_BATCH.
 */
unsigned int zbatch_codec_batch_size(unsigned int codec, enum zbatch_op op)
{
	const struct zbatch_exec_device *dev = READ_ONCE(device_exec);
	struct zbatch_wq *wq = zbatch_wq_pick(op);
	unsigned int avail;

	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	if (dev && dev->serves(codec))
		return dev->batch;
	/* what the device can give, not what is idle this moment */
	avail = wq ? zbatch_wq_helpers(wq, raw_smp_processor_id(), false, NULL) : 0;
	return zbatch_plan_batch_size(zbatch_cost_work(codec, op, PAGE_SIZE),
				      zbatch_cost_handoff_ns(), avail,
				      ZBATCH_MAX_BATCH);
}
EXPORT_SYMBOL_GPL(zbatch_codec_batch_size);

/**
 * zbatch_batch_size() - zbatch_codec_batch_size() of the default codec's
 * compress, the size /dev/zbatch and sysfs report
 *
 * Return: 1..ZBATCH_MAX_BATCH.
 */
unsigned int zbatch_batch_size(void)
{
	return zbatch_codec_batch_size(ZBATCH_CODEC_DEFAULT, ZBATCH_OP_COMPRESS);
}
EXPORT_SYMBOL_GPL(zbatch_batch_size);

/**
 * zbatch_cr_errno() - the outcome of a descriptor from its completion record
 * @cr: the record
 * @compress: the descriptor was a compress
 *
 * The one place IAA completion codes become errnos, as iaa_crypto's
 * check_completion(): output overflow is -ENOSPC (the caller stores the
 * page raw), a stream the decompressor refuses -EBADMSG, a verify mismatch
 * -EIO, the watchdog -ETIMEDOUT, an address fault -EFAULT, a descriptor the
 * device refuses (opcode, flags, sizes) -EINVAL; one an executor gave back
 * undone (ZBATCH_CR_OFFLOAD) -EIO, or -ETIMEDOUT after a timeout, -ENODEV
 * when the driver had no device.
 *
 * Return: 0, a negative errno, or -EINPROGRESS while the status is 0.
 */
int zbatch_cr_errno(const struct iax_completion_record *cr, bool compress)
{
	/* pairs with the executor's release: the other fields are valid */
	u8 status = smp_load_acquire(&cr->status);

	return zbatch_status_errno(status, cr->error_code, compress);
}

/* zbatch_cr_errno() of a record with @status and @error_code. */
int zbatch_status_errno(u8 status, u8 error_code, bool compress)
{
	switch (status) {
	case IAX_COMP_NONE:
		return -EINPROGRESS;
	case IAX_COMP_SUCCESS:
		return 0;
	case IAX_COMP_OUTBUF_OVERFLOW:
		return -ENOSPC;
	case ZBATCH_CR_WATCHDOG:
		return -ETIMEDOUT;
	case ZBATCH_CR_OFFLOAD:
		if (error_code == ZBATCH_OFFLOAD_TIMEOUT)
			return -ETIMEDOUT;
		return error_code == ZBATCH_OFFLOAD_NODEV ? -ENODEV : -EIO;
	case IAX_COMP_ANALYTICS_ERROR:
		switch (error_code) {
		case ZBATCH_CR_ERR_COMP_OVERFLOW:
			return compress ? -ENOSPC : -EBADMSG;
		case ZBATCH_CR_ERR_VERIFY:
			return -EIO;
		case ZBATCH_CR_ERR_NOMEM:
			return -ENOMEM;
		default:
			return -EBADMSG;
		}
	case IAX_COMP_PAGE_FAULT_IR:
	case IAX_COMP_CRA_XLAT:
	case IAX_COMP_PFAULT_RDBA:
	case IAX_COMP_TRANSLATION_FAIL:
		return -EFAULT;
	case IAX_COMP_HW_ERR1:
	case IAX_COMP_HW_ERR_DRB:
		return -EIO;
	default:
		return -EINVAL;
	}
}

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

bool zbatch_would_offload(unsigned int codec, enum zbatch_op op,
			  unsigned int nr, u64 bytes, u64 serial_ns)
{
	unsigned int avail, polling;
	struct zbatch_wq *wq;

	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	if (!nr)
		return false;
	if (zbatch_device_serves(codec))
		return true;
	if (READ_ONCE(zbatch_handoff) == ZBATCH_HANDOFF_ALWAYS)
		return true;
	if (nr < 2)
		return false;
	wq = zbatch_wq_pick(op);
	if (!wq)
		return false;
	avail = zbatch_wq_helpers(wq, raw_smp_processor_id(), true, &polling);
	return zbatch_cost_helpers(zbatch_cost_work(codec, op, bytes), serial_ns, nr,
				   avail, polling, NULL);
}

/**
 * zbatch_run_inline() - run one request now, on this CPU
 * @ctx: execution context with @codec's workspace (zbatch_ctx_prepare())
 * @req: an initialised request, not chained to any batch
 * @codec: enum zbatch_codec, ZBATCH_CODEC_DEFAULT for the sysfs choice
 * @level: compression level for @codec, 0 for its default
 *
 * The degenerate batch of one whose caller waits anyway (zswap's
 * one-page acomp calls): the same codec run, outcomes, verify option and
 * statistics as a batch, without the batch bookkeeping and without a
 * descriptor or completion record (nothing else reads them).
 * Context: any, including atomic: never sleeps or allocates when @ctx
 * was prepared for @codec.
 *
 * Return: the request's status (also in @req->status).
 */
int zbatch_run_inline(struct zbatch_ctx *ctx, struct zbatch_req *req,
		      unsigned int codec, int level)
{
	bool sample = zbatch_stats_sample();
	u64 t0 = sample ? zbatch_clock() : 0;

	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	req->wq = NULL;
	if (!req_valid(req) || !zbatch_codec(codec)) {
		req->status = -EINVAL;
		req->produced = 0;
	} else {
		unsigned int n = req->dlen;

		req->status = zbatch_sw_exec(ctx, codec, level,
					     req->op == ZBATCH_OP_COMPRESS,
					     req->src, req->slen, req->dst, &n,
					     READ_ONCE(zbatch_cfg.verify));
		req->produced = req->status ? 0 : n;
	}
	zbatch_stat_add(&zbatch_gstats, ZST_INLINE, 1);
	account(&zbatch_gstats, req);
	if (sample) {
		u64 ns = zbatch_ns_since(t0);

		zbatch_stats_latency(req->op, ns);
		if (!req->status && zbatch_cost_counts(level, req->op))
			zbatch_cost_exec(codec, req->op,
					 req->op == ZBATCH_OP_COMPRESS ? req->slen :
					 req->produced, ns);
	}
	return req->status;
}

static struct zbatch_req *desc_req(struct iax_hw_desc *d)
{
	return container_of(d, struct zbatch_req, desc);
}

/*
 * Cut the job into the submitter's slice and @k helpers' slices; a device
 * (@device) takes everything in one slice.
 */
static void job_split(struct zbatch_job *job, unsigned int k, bool device)
{
	unsigned int sizes[ZBATCH_MAX_SLICES], i, first = 0;

	if (device) {
		k = 1;
		sizes[0] = 0;
		sizes[1] = job->nr;
	} else if (k && READ_ONCE(zbatch_handoff) == ZBATCH_HANDOFF_ALWAYS) {
		/* tests: every descriptor goes to an engine */
		sizes[0] = 0;
		for (i = 1; i <= k; i++)
			sizes[i] = job->nr / k + (i <= job->nr % k);
	} else {
		zbatch_plan_split(job->nr, k, sizes);
	}
	for (i = 0; i <= k; i++) {
		struct zbatch_slice *s = &job->slice[i];

		s->job = job;
		s->wq = NULL;
		s->first = first;
		s->nr = sizes[i];
		s->posted = false;
		s->given_back = false;
		atomic_set(&s->next, 0);
		INIT_LIST_HEAD(&s->node);
		first += sizes[i];
	}
	job->nr_slices = k + 1;
}

/*
 * Post the helpers' slices to @wq; a refused one stays with the submitter.
 * Every slice to post already counts in job->pending (an executor holds a
 * slice until it releases it), so the count cannot touch 0 while posting.
 */
static void job_post(struct zbatch_batch *batch, struct zbatch_wq *wq)
{
	struct zbatch_job *job = &batch->job;
	unsigned int i, j;

	for (i = 1; i < job->nr_slices; i++) {
		struct zbatch_slice *s = &job->slice[i];

		if (!s->nr)
			continue;
		for (j = 0; j < s->nr; j++)
			desc_req(job->desc[s->first + j])->wq = wq;
		WRITE_ONCE(s->wq, wq);
		if (!wq->ops->post(wq, s)) {
			zbatch_stat_add(&zbatch_gstats, ZST_HANDOFFS, 1);
			continue;
		}
		WRITE_ONCE(s->wq, NULL);
		zbatch_job_release(job, 1);
		for (j = 0; j < s->nr; j++)
			desc_req(job->desc[s->first + j])->wq = NULL;
		zbatch_stat_add(&zbatch_gstats, ZST_RETRIES, 1);
		zbatch_stat_add(&wq->stats, ZST_RETRIES, 1);
		zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS, s->nr);
	}
}

/* Slices job_post() will post: the helpers' non-empty ones. */
static unsigned int job_posts(struct zbatch_job *job)
{
	unsigned int i, n = 0;

	for (i = 1; i < job->nr_slices; i++)
		n += job->slice[i].nr > 0;
	return n;
}

static bool job_claimable(struct zbatch_job *job)
{
	unsigned int i;

	for (i = 0; i < job->nr_slices; i++) {
		struct zbatch_slice *s = &job->slice[i];

		if (zbatch_slice_empty(s))
			continue;
		if (!s->wq)
			return true;
		/* "always": helpers keep what they were given */
		if (s->wq->ops->stealable(s->wq) &&
		    (!s->wq->ops->helpers ||
		     READ_ONCE(zbatch_handoff) != ZBATCH_HANDOFF_ALWAYS))
			return true;
	}
	return false;
}

/* Run up to @max claimable descriptors here: own slice first, then steal. */
static void drain_here(struct zbatch_batch *batch, unsigned int max)
{
	struct zbatch_job *job = &batch->job;
	struct zbatch_ctx *ctx;
	unsigned int n, stolen;

	if (!job_claimable(job))
		return;
	/*
	 * No context: every descriptor only we would run (our slice, slices
	 * taken back or refused, a device's leftovers) fails now with
	 * ZBATCH_CR_ERR_NOMEM, so that the batch ends: waiting for memory
	 * here could wait forever. The engines' slices are left to the
	 * engines, which have contexts of their own. The failed ones report
	 * -ENOMEM (the swap device redoes a read on its own context and
	 * stores a page raw; zswap does the same); a device's leftovers are
	 * redone by batch_redo() if it gets a context, never held against
	 * the device.
	 */
	ctx = submitter_ctx(batch);
	/* handoff "always" (tests): the engines run everything they were given */
	n = zbatch_sw_drain(ctx, job, &job->slice[0], NULL,
			    ctx && READ_ONCE(zbatch_handoff) != ZBATCH_HANDOFF_ALWAYS ?
			    ZBATCH_DRAIN_STEAL : 0, max, &stolen);
	submitter_ctx_put(batch, ctx);
	if (stolen && ctx)
		zbatch_stat_add(&zbatch_gstats, ZST_HELPED, stolen);
	zbatch_job_release(job, n);
}

/*
 * Slices still queued on a WQ: take back the ones with nothing left to
 * claim (so nobody waits for an engine to wake just to let go), and the
 * ones a hung WQ has held past the timeout.
 */
static void job_tidy(struct zbatch_batch *batch)
{
	struct zbatch_job *job = &batch->job;
	u64 limit, now = 0;
	unsigned int i;

	for (i = 1; i < job->nr_slices; i++) {
		struct zbatch_slice *s = &job->slice[i];
		struct zbatch_wq *wq = s->wq;
		struct iax_hw_desc *d;
		unsigned int n = 0;

		if (!wq)
			continue;
		if (wq->ops->expire) {
			/* a device: its descriptors are in flight, not queued */
			limit = (u64)READ_ONCE(zbatch_cfg.timeout_ms) * NSEC_PER_MSEC;
			if (!now)
				now = zbatch_clock();
			if (zbatch_ns_between(batch->submit_ns, now) >= limit &&
			    wq->ops->expire(wq, job)) {
				zbatch_stat_add(&zbatch_gstats, ZST_TIMEOUTS, 1);
				zbatch_stat_add(&wq->stats, ZST_TIMEOUTS, 1);
			}
			continue;
		}
		if (!READ_ONCE(s->posted))
			continue;
		if (zbatch_slice_empty(s)) {
			if (wq->ops->unpost(wq, s)) {
				/*
				 * run by others before any engine took it (not
				 * one an engine gave back: it came, then lost
				 * its CPU, and counted that itself)
				 */
				if (wq->ops->helpers && !s->given_back)
					zbatch_wq_helper_missed(wq);
				zbatch_job_release(job, 1);
			}
			continue;
		}
		if (wq->ops->stealable(wq))
			continue;
		limit = (u64)READ_ONCE(zbatch_cfg.timeout_ms) * NSEC_PER_MSEC;
		if (!now)
			now = zbatch_clock();
		if (zbatch_ns_between(batch->submit_ns, now) < limit)
			continue;
		zbatch_wq_timed_out(wq);
		if (!wq->ops->unpost(wq, s))
			continue;	/* an executor holds it: it releases it */
		if (batch->flags & ZBATCH_F_NO_FALLBACK) {
			/* the watchdog's record, as the device writes it */
			while ((d = zbatch_slice_claim(s))) {
				zbatch_cr_finish(zbatch_desc_cr(d), ZBATCH_CR_WATCHDOG,
						 0, 0, 0);
				n++;
			}
			zbatch_job_release(job, n + 1);
			continue;
		}
		/* the slice is ours now: run what it holds in software */
		WRITE_ONCE(s->wq, NULL);
		for (n = 0; n < s->nr; n++)
			desc_req(job->desc[s->first + n])->wq = NULL;
		zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS,
				s->nr - min_t(unsigned int, atomic_read(&s->next), s->nr));
		zbatch_job_release(job, 1);
		drain_here(batch, UINT_MAX);
	}
}

static enum zbatch_hist mode_hist(int mode, bool batch)
{
	if (mode == ZBATCH_SYNC)
		return batch ? ZH_BATCH_SYNC : ZH_REQ_SYNC;
	if (mode == ZBATCH_ASYNC)
		return batch ? ZH_BATCH_ASYNC : ZH_REQ_ASYNC;
	return batch ? ZH_BATCH_IRQ : ZH_REQ_IRQ;
}

/*
 * Whether @req's record, written by an executor behind a WQ, says the
 * device failed rather than the data: given back undone
 * (ZBATCH_CR_OFFLOAD), a status only a device produces (faults, hardware
 * errors, codes IAA does not define), a record that cannot be true (more
 * output than room, an empty compress), a compress that failed its
 * verification, or any failed decompress (the software deflate decides
 * whether the stream is really bad). Output overflow on compress is the
 * data's answer: stored raw by the caller, not redone.
 */
static bool cr_device_failed(const struct zbatch_req *req)
{
	const struct iax_completion_record *cr = &req->cr;
	bool comp = req->op == ZBATCH_OP_COMPRESS;

	switch (READ_ONCE(cr->status)) {
	case IAX_COMP_SUCCESS:
		return cr->output_size > req->dlen || (comp && !cr->output_size);
	case IAX_COMP_OUTBUF_OVERFLOW:
		return !comp;
	case IAX_COMP_ANALYTICS_ERROR:
		return !comp || cr->error_code != ZBATCH_CR_ERR_COMP_OVERFLOW;
	default:
		return true;
	}
}

/*
 * Whether a record that says "failed" may be the device's fault: not the
 * submitter's own failure to get a context, nor a descriptor the executor
 * refused to take.
 */
static bool cr_blames_device(const struct iax_completion_record *cr)
{
	if (cr->status == IAX_COMP_ANALYTICS_ERROR && cr->error_code == ZBATCH_CR_ERR_NOMEM)
		return false;
	return cr->status != ZBATCH_CR_OFFLOAD || cr->error_code != ZBATCH_OFFLOAD_REFUSED;
}

/*
 * Redo in software what a device failed (cr_device_failed()): nothing is
 * lost to a device error, a corrupt record or a timeout. The device is to
 * blame only when software then succeeded where it did not: a stream that
 * fails again is bad input (a caller's corrupt data, `bad_input`), a
 * compress that overflows again is the data's answer, and neither must
 * take a WQ out of service for everyone. Device errors are counted per
 * WQ: a software WQ failing ZBATCH_WQ_ERR_LIMIT times in a row leaves
 * service.
 */
static void batch_redo(struct zbatch_batch *batch)
{
	struct zbatch_ctx *ctx = NULL;
	struct zbatch_req *req;
	unsigned int n = 0;

	if (batch->flags & ZBATCH_F_NO_FALLBACK)
		return;
	list_for_each_entry(req, &batch->reqs, chain) {
		bool blame;

		if (!req->wq || !cr_device_failed(req))
			continue;
		if (!ctx)
			ctx = submitter_ctx(batch);
		if (!ctx)
			return;	/* the records keep saying what failed */
		blame = cr_blames_device(&req->cr);
		memset(&req->cr, 0, sizeof(req->cr));
		zbatch_sw_run(ctx, &req->desc, batch->codec, batch->level,
			      batch->job.verify);
		n++;
		if (req->wq->ops->redone)
			req->wq->ops->redone(req->wq, 1);
		if (!blame)
			continue;
		if (READ_ONCE(req->cr.status) != IAX_COMP_SUCCESS) {
			/* software failed too: the data's doing, or no memory */
			if (cr_device_failed(req) && req->cr.error_code != ZBATCH_CR_ERR_NOMEM)
				zbatch_stat_add(&zbatch_gstats, ZST_BAD_INPUT, 1);
			continue;
		}
		zbatch_stat_add(&zbatch_gstats, ZST_DEVICE_ERRORS, 1);
		zbatch_stat_add(&req->wq->stats, ZST_DEVICE_ERRORS, 1);
		if (req->wq->ops->device_error)
			req->wq->ops->device_error(req->wq);
	}
	submitter_ctx_put(batch, ctx);
	if (n)
		zbatch_stat_add(&zbatch_gstats, ZST_SW_FALLBACKS, n);
}

/* Every record is written: gather the outcomes once. */
static int batch_finish(struct zbatch_batch *batch)
{
	struct zbatch_job *job = &batch->job;
	struct zbatch_req *req;
	int ret = 0;

	if (batch->finished)
		goto result;
	/* pairs with the last zbatch_job_release(): nobody touches the job */
	spin_lock_irq(&job->waitq.lock);
	spin_unlock_irq(&job->waitq.lock);
	batch_redo(batch);
	list_for_each_entry(req, &batch->reqs, chain) {
		req->status = zbatch_cr_errno(&req->cr, req->op == ZBATCH_OP_COMPRESS);
		req->produced = req->status ? 0 : req->cr.output_size;
		account(&zbatch_gstats, req);
		if (req->wq) {
			account(&req->wq->stats, req);
			account(&req->wq->dev->stats, req);
			/* a good record ends a WQ's run of device errors */
			if (!req->status && atomic_read(&req->wq->err_streak))
				atomic_set(&req->wq->err_streak, 0);
		}
	}
	if (job->sampled) {
		u64 now = zbatch_clock();

		zbatch_stats_hist(ZH_SUBMIT, zbatch_ns_between(batch->submit_ns, job->post_ns));
		zbatch_stats_hist(mode_hist(batch->mode, true),
				  zbatch_ns_between(batch->submit_ns, now));
		if (job->done_ns)
			zbatch_stats_hist(ZH_COMPLETE, zbatch_ns_between(job->done_ns, now));
		if (job->sample && job->sample_done_ns) {
			u64 ns = zbatch_ns_between(batch->submit_ns, job->sample_done_ns);

			zbatch_stats_hist(mode_hist(batch->mode, false), ns);
			zbatch_stats_latency(desc_req((struct iax_hw_desc *)job->sample)->op,
					     ns);
		}
	}
	batch->finished = true;
result:
	list_for_each_entry(req, &batch->reqs, chain)
		if (req->status) {
			ret = req->status;
			break;
		}
	return ret;
}

static bool batch_done(struct zbatch_batch *batch)
{
	return !atomic_read_acquire(&batch->job.pending);
}

/*
 * A batch of one request, which no helper could take faster than the
 * submitter runs it: run now on the submitter's context, as
 * zbatch_run_inline(), without the job's bookkeeping (no descriptor is
 * claimed, no record read). A 4 KiB page pays for no batching. The batch
 * is then finished: poll and wait return its outcome at once.
 */
static int batch_alone(struct zbatch_batch *batch, struct zbatch_req *req)
{
	struct zbatch_ctx *ctx = submitter_ctx(batch);
	unsigned int n = req->dlen;

	batch->job.nr_slices = 0;	/* nothing for wait/poll to walk */
	zbatch_stat_add(&zbatch_gstats, ZST_INLINE_BATCHES, 1);
	/* no context: the slice path's -ENOMEM (ZBATCH_CR_ERR_NOMEM) */
	req->status = ctx ? zbatch_sw_exec(ctx, batch->codec, batch->level,
					   req->op == ZBATCH_OP_COMPRESS,
					   req->src, req->slen, req->dst, &n,
					   batch->job.verify) : -ENOMEM;
	submitter_ctx_put(batch, ctx);
	req->produced = req->status ? 0 : n;
	account(&zbatch_gstats, req);
	if (batch->submit_ns) {
		u64 ns = zbatch_ns_since(batch->submit_ns);

		zbatch_stats_hist(mode_hist(batch->mode, true), ns);
		zbatch_stats_hist(mode_hist(batch->mode, false), ns);
		zbatch_stats_latency(req->op, ns);
		if (!req->status && zbatch_cost_counts(batch->level, req->op))
			zbatch_cost_exec(batch->codec, req->op,
					 req->op == ZBATCH_OP_COMPRESS ? req->slen : n, ns);
	}
	atomic_set(&batch->job.pending, 0);
	batch->finished = true;
	return batch->mode == ZBATCH_SYNC ? req->status : -EINPROGRESS;
}

/* zbatch_submit(), on @on (a device executor's WQ) when not NULL. */
static int submit(struct zbatch_batch *batch, struct zbatch_wq *on)
{
	const struct zbatch_exec_device *dev = on ? NULL : READ_ONCE(device_exec);
	struct zbatch_job *job = &batch->job;
	unsigned int codec = batch->codec, k = 0, nr = 0;
	struct zbatch_wq *wq = NULL;
	struct zbatch_req *req;
	bool sampled, device = false, probe = false;
	u64 work = 0;

	might_sleep();
	if (!batch->nr || batch->nr > ZBATCH_MAX_BATCH ||
	    (batch->flags & ~(ZBATCH_F_ALL | ZBATCH_KF_MODE_MASK | ZBATCH_KF_SUBMITTER)))
		return -EINVAL;
	if (codec == ZBATCH_CODEC_DEFAULT)
		codec = READ_ONCE(zbatch_cfg.codec);
	if (!zbatch_codec(codec))
		return -EINVAL;
	sampled = zbatch_stats_sample();
	batch->codec = codec;
	if (batch->flags & ZBATCH_KF_MODE_MASK)
		batch->mode = ((batch->flags & ZBATCH_KF_MODE_MASK) >>
			       ZBATCH_KF_MODE_SHIFT) - 1;
	else
		batch->mode = READ_ONCE(zbatch_cfg.sync_mode);
	batch->finished = false;
	batch->submit_ns = sampled ? zbatch_clock() : 0;
	job->codec = codec;
	job->level = batch->level;
	job->verify = READ_ONCE(zbatch_cfg.verify);
	job->post_ns = 0;
	job->sampled = sampled;
	job->done_ns = 0;
	job->kicked = false;
	job->sample = NULL;
	job->sample_done_ns = 0;

	list_for_each_entry(req, &batch->reqs, chain) {
		req->status = -EINPROGRESS;
		req->produced = 0;
		req->wq = NULL;
		if (!req_valid(req)) {
			/* refused as the device refuses a bad descriptor */
			memset(&req->cr, 0, sizeof(req->cr));
			zbatch_cr_finish(&req->cr, IAX_COMP_INVALID_SIZE, 0, 0, 0);
			continue;
		}
		build_desc(req);
		job->desc[nr++] = &req->desc;
		/* costs are per uncompressed byte: a decompress by capacity */
		work += zbatch_cost_work(codec, req->op,
					 req->op == ZBATCH_OP_COMPRESS ? req->slen : req->dlen);
	}
	job->nr = nr;
	job->cpu = raw_smp_processor_id();
	batch->desc_ns = nr ? div_u64(work, nr) : 0;
	zbatch_stats_batch(batch->nr);
	/* a device executor's WQ if one runs the codec now (or @on) */
	if (nr)
		wq = on ?: dev ? dev->get(codec) : NULL;
	if (!wq && nr == 1 && batch->nr == 1 &&
	    READ_ONCE(zbatch_handoff) != ZBATCH_HANDOFF_ALWAYS)
		return batch_alone(batch, desc_req(job->desc[0]));
	if (wq) {
		/* a device runs it: every descriptor goes to it at once */
		device = true;
		k = 1;
	} else if (!(batch->flags & ZBATCH_KF_SUBMITTER) &&
		   (nr > 1 || (nr && READ_ONCE(zbatch_handoff) == ZBATCH_HANDOFF_ALWAYS))) {
		unsigned int avail, polling;

		wq = zbatch_wq_pick(desc_req(job->desc[0])->op);
		if (wq) {
			avail = zbatch_wq_helpers(wq, job->cpu, true, &polling);
			k = zbatch_cost_helpers(work, 0, nr, avail, polling, &probe);
		}
	}
	job_split(job, k, device);
	atomic_set(&job->pending, nr + job_posts(job));
	if (sampled && nr)
		job->sample = job->desc[(unsigned int)batch->submit_ns % nr];
	/* a probe's hand-off is measured whether sampled or not (cost.c) */
	if (sampled || probe)
		job->post_ns = zbatch_clock();
	if (k) {
		if (!batch->submit_ns)
			batch->submit_ns = zbatch_clock();	/* for the timeout */
		job_post(batch, wq);
		if (device && dev)
			dev->put(wq);
	} else {
		zbatch_stat_add(&zbatch_gstats, ZST_INLINE_BATCHES, 1);
		drain_here(batch, UINT_MAX);
	}
	if (batch->mode == ZBATCH_SYNC)
		return zbatch_wait(batch);
	return -EINPROGRESS;
}

/**
 * zbatch_submit() - submit every request of a batch
 * @batch: a batch of 1..ZBATCH_MAX_BATCH requests
 *
 * Builds a descriptor per request. When a device executor runs the codec
 * (exec_acomp.c) every descriptor is submitted to it at once.
 * Otherwise it decides from measured costs how many engines the batch is
 * worth handing to (none for one request, or when the work would not pay
 * for a wake-up), posts one slice per helper and returns. A batch nobody
 * helps runs here, now. In sync mode the
 * submitter then runs its own slice and waits, as zbatch_wait(); in the
 * async modes its slice waits for zbatch_poll()/zbatch_wait() (or for an
 * engine that finished its own and steals it).
 *
 * Context: process context; may sleep.
 *
 * Return: -EINPROGRESS when submitted (poll or wait for the outcome);
 * in sync mode the outcome, as zbatch_wait(); -EINVAL for an empty or
 * oversized batch or an unknown codec (no request is then touched).
 */
int zbatch_submit(struct zbatch_batch *batch)
{
	return submit(batch, NULL);
}
EXPORT_SYMBOL_GPL(zbatch_submit);

int zbatch_submit_on(struct zbatch_batch *batch, struct zbatch_wq *wq)
{
	return submit(batch, wq);
}

/**
 * zbatch_poll() - check a submitted batch, helping it along
 * @batch: a submitted batch
 *
 * Runs at most one claimable descriptor of this batch in the caller's
 * context, takes back slices nobody needs any more and applies the
 * descriptor timeout.
 *
 * Context: process context.
 *
 * Return: -EINPROGRESS while requests are outstanding; then 0 if every
 * request succeeded, or the first request's error in chain order.
 */
int zbatch_poll(struct zbatch_batch *batch)
{
	if (batch->finished || batch_done(batch))
		return batch_finish(batch);
	drain_here(batch, 1);
	job_tidy(batch);
	if (batch_done(batch))
		return batch_finish(batch);
	return -EINPROGRESS;
}
EXPORT_SYMBOL_GPL(zbatch_poll);

/* how long sync and async waiters spin before they sleep */
#define WAIT_SPIN_NS	NSEC_PER_MSEC
/* async_irq waiters spin for engines' descriptors due within this many wake-ups */
#define WAIT_SPIN_HANDOFFS	8

/**
 * zbatch_wait() - wait until every request of a batch completed
 * @batch: a submitted batch
 *
 * Runs what is claimable of the batch here (its own slice, then what the
 * engines have not started), then spins (sync, async: for 1 ms at most,
 * then it sleeps too) or sleeps until the last executor releases the
 * batch (async_irq; it spins instead, once, when the descriptors left
 * are due within WAIT_SPIN_HANDOFFS wake-ups). Bounded: slices a hung WQ
 * holds past the timeout are taken back and run in software.
 *
 * Context: process context; sleeps.
 *
 * Return: as zbatch_poll() once complete.
 */
int zbatch_wait(struct zbatch_batch *batch)
{
	struct zbatch_job *job = &batch->job;
	bool spun = false;
	u64 spin0 = 0;

	might_sleep();
	if (batch->finished)	/* ran alone at submit */
		return batch_finish(batch);
	for (;;) {
		WRITE_ONCE(job->kicked, false);
		drain_here(batch, UINT_MAX);
		job_tidy(batch);
		if (batch_done(batch))
			return batch_finish(batch);
		/*
		 * sync, async: spin, but not for longer than WAIT_SPIN_NS.
		 * What is left then is held by executors without a CPU (an
		 * engine at SCHED_IDLE on a busy CPU, in handoff "always"
		 * or for a submitter without a context): sleeping until the
		 * last release gives them ours.
		 */
		if (batch->mode != ZBATCH_ASYNC_IRQ) {
			if (!spin0)
				spin0 = zbatch_clock();
			if (zbatch_ns_since(spin0) < WAIT_SPIN_NS) {
				cond_resched();
				continue;
			}
			wait_event_timeout(job->waitq,
					   batch_done(batch) || READ_ONCE(job->kicked),
					   msecs_to_jiffies(10));
			continue;
		}
		/*
		 * What is left runs on engines, at most a descriptor each,
		 * due within a descriptor's time. If that is within a few
		 * wake-ups (the hand-off latency measures one), spin for it
		 * once: a sleeping waiter adds a wake-up of its own to the
		 * batch's time, and the wake-up's CPU; a spin costs at most
		 * a descriptor's time and a wake-up, never more than
		 * WAIT_SPIN_NS (a wake-up's measure has no ceiling where a
		 * host takes CPUs away). desc_ns is the batch's mean: a
		 * longer descriptor outlasts the spin, and is slept for as
		 * before. (lz4 16 KiB
		 * units in 64K folios under TCG: a descriptor is about 4
		 * wake-ups; spinning for it, not sleeping, made swap-out
		 * 11% faster at no more CPU.)
		 */
		if (!spun && batch->desc_ns && batch->desc_ns < WAIT_SPIN_NS &&
		    batch->desc_ns < WAIT_SPIN_HANDOFFS * zbatch_cost_handoff_ns()) {
			u64 t0 = zbatch_clock();
			u64 limit = min_t(u64, batch->desc_ns + zbatch_cost_handoff_ns(),
					  WAIT_SPIN_NS);

			/*
			 * single_task_running(): an engine woken on this
			 * CPU (SCHED_IDLE, it does not preempt us) may hold
			 * what we wait for; sleeping gives it the CPU.
			 */
			spun = true;
			while (!batch_done(batch) && !need_resched() &&
			       single_task_running() && zbatch_ns_since(t0) < limit)
				cpu_relax();
			continue;
		}
		wait_event_timeout(job->waitq,
				   batch_done(batch) || READ_ONCE(job->kicked),
				   msecs_to_jiffies(10));
	}
}
EXPORT_SYMBOL_GPL(zbatch_wait);

/**
 * zbatch_run_units() - compress or decompress a folio or SG list in units
 * @u: caller-owned storage for the batch (not on the stack: ~20 KiB)
 * @codec: enum zbatch_codec, ZBATCH_CODEC_DEFAULT for the sysfs choice
 * @op: the operation
 * @src: compress: @slen bytes cut into @unit_size units, each within one
 *       SG entry (a folio is one entry); decompress: one entry per unit,
 *       its length the unit's compressed size
 * @slen: compress: bytes of @src; decompress: ignored
 * @dst: one entry per unit, its length the unit's capacity; on return
 *       the produced length, or the unit's negative errno
 *       (zbatch_unit_result())
 * @nr_units: 1..ZBATCH_UNITS_MAX
 * @unit_size: 1..ZBATCH_MAX_LEN
 *
 * The shape the acomp API settled on (a unit size, per-unit results in
 * the destination SG) over the same batch core: one batch, dispatched as
 * any other.
 *
 * Context: process context; sleeps.
 *
 * Return: 0 if every unit succeeded, else the first unit's error;
 * -EINVAL (nothing run) when the lists do not match the unit layout.
 */
int zbatch_run_units(struct zbatch_units *u, unsigned int codec,
		     enum zbatch_op op, struct scatterlist *src,
		     unsigned int slen, struct scatterlist *dst,
		     unsigned int nr_units, unsigned int unit_size)
{
	struct scatterlist *s = src, *d = dst;
	unsigned int i, off = 0, done = 0;
	int ret;

	if (!u || !src || !dst || !nr_units || nr_units > ZBATCH_UNITS_MAX ||
	    !unit_size || unit_size > ZBATCH_MAX_LEN ||
	    (op != ZBATCH_OP_COMPRESS && op != ZBATCH_OP_DECOMPRESS) ||
	    (op == ZBATCH_OP_COMPRESS &&
	     (slen > nr_units * unit_size || slen <= (nr_units - 1) * unit_size)))
		return -EINVAL;
	zbatch_batch_init(&u->batch, codec, 0);
	for (i = 0; i < nr_units; i++) {
		unsigned int len;
		void *in;

		if (!s || !d || !d->length)
			return -EINVAL;
		if (op == ZBATCH_OP_COMPRESS) {
			len = min(unit_size, slen - done);
			if (s->length < off + len)
				return -EINVAL;
			in = sg_virt(s) + off;
			off += len;
			done += len;
			if (off == s->length) {
				s = sg_next(s);
				off = 0;
			}
		} else {
			len = s->length;
			in = sg_virt(s);
			s = sg_next(s);
		}
		zbatch_req_init(&u->req[i], op, in, len, sg_virt(d),
				min(d->length, (unsigned int)ZBATCH_MAX_LEN));
		zbatch_batch_add(&u->batch, &u->req[i]);
		d = sg_next(d);
	}
	ret = zbatch_submit(&u->batch);
	if (ret == -EINPROGRESS)
		ret = zbatch_wait(&u->batch);
	else if (ret == -EINVAL && u->req[0].status == -EINPROGRESS)
		return ret;	/* refused whole: nothing ran, @dst as it was */
	for (i = 0, d = dst; i < nr_units; i++, d = sg_next(d))
		d->length = u->req[i].status ? (unsigned int)u->req[i].status :
					       u->req[i].produced;
	return ret;
}
EXPORT_SYMBOL_GPL(zbatch_run_units);
