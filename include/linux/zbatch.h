/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zbatch in-kernel API: batches of compress/decompress requests submitted
 * as IAA-format descriptors to work queues and polled for completion.
 *
 * A caller fills requests, chains them into a batch, submits the batch with
 * one call and polls or waits. Every request reports its own status; one bad
 * request never fails or corrupts its siblings.
 *
 *	struct zbatch_batch b;
 *
 *	zbatch_batch_init(&b, ZBATCH_CODEC_DEFAULT, 0);
 *	for (i = 0; i < n; i++) {
 *		zbatch_req_init(&r[i], ZBATCH_OP_COMPRESS, src[i], PAGE_SIZE,
 *				dst[i], PAGE_SIZE);
 *		zbatch_batch_add(&b, &r[i]);
 *	}
 *	zbatch_submit(&b);
 *	err = zbatch_wait(&b);		(or: while (zbatch_poll(&b) == -EINPROGRESS))
 *	... r[i].status, r[i].produced ...
 *
 * Requests and the batch belong to the caller but must stay untouched from
 * zbatch_submit() until poll/wait reported completion.
 */
#ifndef _LINUX_ZBATCH_H
#define _LINUX_ZBATCH_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <uapi/linux/idxd.h>
#include <uapi/linux/zbatch.h>

struct zbatch_req;
struct zbatch_wq;

/* Called from engine or caller context once the request is done. */
typedef void (*zbatch_done_t)(struct zbatch_req *req, void *data);

/* Descriptor life cycle (zbatch_req.state). */
enum zbatch_req_state {
	ZBATCH_REQ_IDLE = 0,
	ZBATCH_REQ_QUEUED,	/* on a WQ's queue, owned by the WQ lock */
	ZBATCH_REQ_RUNNING,	/* claimed by an engine or by the submitter */
	ZBATCH_REQ_DONE,
};

struct zbatch_req {
	/* set by the caller */
	enum zbatch_op op;
	const void *src;
	void *dst;
	unsigned int slen;
	unsigned int dlen;		/* destination capacity */
	zbatch_done_t done;		/* optional */
	void *done_data;

	/* results, valid once the batch completed */
	int status;			/* 0, -ENOSPC, -EBADMSG, -EINVAL, ... */
	unsigned int produced;

	/* private to zbatch */
	struct iax_hw_desc desc;
	struct iax_completion_record cr __aligned(64);
	struct list_head chain;		/* in zbatch_batch.reqs */
	struct list_head qnode;		/* in zbatch_wq.queue while QUEUED */
	struct zbatch_batch *batch;
	struct zbatch_wq *wq;
	atomic_t state;			/* enum zbatch_req_state */
	u64 submit_ns;
	bool timed_out;
	bool lat_sample;		/* this one's latency is recorded */
};

struct zbatch_batch {
	struct list_head reqs;
	unsigned int nr;
	unsigned int codec;		/* enum zbatch_codec, resolved at submit */
	unsigned int flags;		/* ZBATCH_F_* */
	atomic_t pending;		/* requests not DONE yet */
	wait_queue_head_t waitq;	/* async_irq: engines wake the waiter */
	int mode;			/* sync mode captured at submit */
	u64 submit_ns;
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

#endif /* _LINUX_ZBATCH_H */
