/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zbatch in-kernel API: batches of compress/decompress requests submitted
 * as IAA-format descriptors to work queues and polled for completion.
 *
 * A caller fills requests, chains them into a batch, submits the batch with
 * one call and polls or waits. Every request reports its own status; one bad
 * request never fails or corrupts its siblings.
 *
 *	struct zbatch_batch *b = kmalloc(sizeof(*b), GFP_KERNEL);  (~1.6 KiB)
 *
 *	zbatch_batch_init(b, ZBATCH_CODEC_DEFAULT, 0);
 *	for (i = 0; i < n; i++) {
 *		zbatch_req_init(&r[i], ZBATCH_OP_COMPRESS, src[i], PAGE_SIZE,
 *				dst[i], PAGE_SIZE);
 *		zbatch_batch_add(b, &r[i]);
 *	}
 *	zbatch_submit(b);
 *	err = zbatch_wait(b);		(or: while (zbatch_poll(b) == -EINPROGRESS))
 *	... r[i].status, r[i].produced ...
 *
 * Requests and the batch belong to the caller but must stay untouched from
 * zbatch_submit() until poll/wait reported completion. Dispatch is per
 * batch (Documentation/design.md): one request runs on the caller's CPU;
 * a larger batch is handed to as many engines as its measured work pays
 * for. zbatch_run_units() offers the segmented shape (a unit size, results
 * in the destination SG entries) over the same core.
 */
#ifndef _LINUX_ZBATCH_H
#define _LINUX_ZBATCH_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/zbatch_exec.h>
#include <uapi/linux/idxd.h>
#include <uapi/linux/zbatch.h>

struct zbatch_wq;

/*
 * In-kernel callers may pick a batch's sync mode in zbatch_batch_init()'s
 * flags (else the sysfs sync_mode applies); /dev/zbatch cannot.
 */
#define ZBATCH_KF_MODE_SHIFT	16
#define ZBATCH_KF_SYNC		0x10000U	/* mode + 1, in bits 16-17 */
#define ZBATCH_KF_ASYNC		0x20000U
#define ZBATCH_KF_ASYNC_IRQ	0x30000U
#define ZBATCH_KF_MODE_MASK	0x30000U
/*
 * In-kernel callers: no software helpers; the submitter runs the whole
 * batch on its context (a device executor, IAA, still takes it). For
 * background work that counts CPU, not latency: a hand-off to the
 * engines costs CPU (wake-ups, their spin) that a batch nobody waits for
 * does not need to pay.
 */
#define ZBATCH_KF_SUBMITTER	0x40000U

struct zbatch_req {
	/* set by the caller */
	enum zbatch_op op;
	const void *src;
	void *dst;
	unsigned int slen;
	unsigned int dlen;		/* destination capacity */

	/* results, valid once the batch completed */
	/* 0, -ENOSPC, -EBADMSG, -EINVAL, ...; -EINPROGRESS until it ran */
	int status;
	unsigned int produced;

	/* private to zbatch */
	struct iax_hw_desc desc;
	struct iax_completion_record cr __aligned(64);
	struct list_head chain;		/* in zbatch_batch.reqs */
	struct zbatch_wq *wq;		/* WQ its slice was posted to, or NULL */
};

struct zbatch_ctx;

struct zbatch_batch {
	struct list_head reqs;
	unsigned int nr;
	unsigned int codec;		/* enum zbatch_codec, resolved at submit */
	unsigned int flags;		/* ZBATCH_F_* */

	/*
	 * In-module callers only (the swap device): a context prepared for
	 * @codec that the submitter holds for the batch's life; what the
	 * submitter runs itself (its slice, stolen work, redos) runs on it,
	 * never on one from the shared pool. NULL after zbatch_batch_init().
	 */
	struct zbatch_ctx *ctx;
	/*
	 * In-module callers only: the compression level (0, the codec's
	 * default, after zbatch_batch_init()), checked by the caller with
	 * zbatch_codec_level_check(). A device executor (IAA) compresses at
	 * its own fixed settings whatever it says.
	 */
	int level;

	/* private to zbatch */
	int mode;			/* sync mode captured at submit */
	bool finished;			/* results gathered */
	u64 submit_ns;
	u64 desc_ns;			/* expected ns of one descriptor */
	struct zbatch_job job;		/* what executors see */
};

void zbatch_req_init(struct zbatch_req *req, enum zbatch_op op,
		     const void *src, unsigned int slen,
		     void *dst, unsigned int dlen);
int zbatch_req_set_pages(struct zbatch_req *req, enum zbatch_op op,
			 struct page *src, unsigned int src_off,
			 unsigned int slen, struct page *dst,
			 unsigned int dst_off, unsigned int dlen);
int zbatch_req_set_sg(struct zbatch_req *req, enum zbatch_op op,
		      struct scatterlist *src, unsigned int slen,
		      struct scatterlist *dst, unsigned int dlen);
void zbatch_batch_init(struct zbatch_batch *batch, unsigned int codec,
		       unsigned int flags);
void zbatch_batch_add(struct zbatch_batch *batch, struct zbatch_req *req);
int zbatch_submit(struct zbatch_batch *batch);
int zbatch_poll(struct zbatch_batch *batch);
int zbatch_wait(struct zbatch_batch *batch);
unsigned int zbatch_batch_size(void);
unsigned int zbatch_codec_batch_size(unsigned int codec, enum zbatch_op op);
u64 zbatch_engines_runtime_ns(void);

/*
 * The segmented shape the acomp API settled on after the seeds: one call
 * over a folio or SG source cut into units of @unit_size; each unit's
 * produced length, or its negative errno, comes back in the length of its
 * destination SG entry (read it with zbatch_unit_result()).
 */
#define ZBATCH_UNITS_MAX	ZBATCH_MAX_BATCH
struct zbatch_units {
	struct zbatch_batch batch;
	struct zbatch_req req[ZBATCH_UNITS_MAX];
};

int zbatch_run_units(struct zbatch_units *u, unsigned int codec,
		     enum zbatch_op op, struct scatterlist *src,
		     unsigned int slen, struct scatterlist *dst,
		     unsigned int nr_units, unsigned int unit_size);

static inline int zbatch_unit_result(const struct scatterlist *sg)
{
	return (int)sg->length;
}

#endif /* _LINUX_ZBATCH_H */
