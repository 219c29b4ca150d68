/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The executor contract: the one seam between the batch core and whatever
 * runs descriptors (the software engines of exec_sw.c; any async acomp
 * driver, IAA's iaa_crypto among them, in exec_acomp.c).
 *
 * The core turns each request of a batch into an IAA descriptor
 * (struct iax_hw_desc, <uapi/linux/idxd.h>) whose completion_addr points at
 * the request's completion record, collects the descriptors of a batch in
 * a job and cuts the job into slices. An executor receives a slice:
 *
 *   - it claims descriptors one at a time with zbatch_slice_claim() (one
 *     atomic increment, no lock: the owner and any thief share the cursor),
 *   - runs each and writes its struct iax_completion_record: output_size,
 *     bytes_completed, error_code, crc when asked, and the status byte LAST
 *     with release semantics, as the device does,
 *   - may steal unclaimed descriptors from the job's other stealable
 *     slices once its own is empty (a slow engine holds a batch by the
 *     one descriptor it claimed, which it runs to the end into the
 *     caller's buffer so that nobody may redo it meanwhile, and by its
 *     slice reference until it releases it; never by what it has not
 *     claimed),
 *   - then calls zbatch_job_release() once for every descriptor it ran and
 *     once for the slice it held; after that it never touches the job.
 *     Or, holding a stealable slice it cannot finish (a software engine
 *     whose CPU a task wants), it may give the slice back instead of
 *     releasing it: queued again, given_back set, job->kicked set and the
 *     waiter woken, all under its WQ lock (exec_sw.c, sw_repost()).
 *
 * An executor never sees struct zbatch_req or struct zbatch_batch. The core
 * reads cr->status with acquire and maps it to an errno in one place,
 * zbatch_cr_errno() (kmod/batch.c), as iaa_crypto's check_completion().
 *
 * Status and error codes are IAA's: IAX_COMP_* from the uapi header and the
 * analytics error codes iaa_crypto names. The ZBATCH_CR_ERR_* codes at 0xf0
 * and above are the software model's own (no IAA hardware reports them).
 */
#ifndef _LINUX_ZBATCH_EXEC_H
#define _LINUX_ZBATCH_EXEC_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/sched.h>		/* TASK_NORMAL, zbatch_job_release() */
#include <linux/sched/clock.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <uapi/linux/idxd.h>
#include <uapi/linux/zbatch.h>

/* Analytics error codes under IAX_COMP_ANALYTICS_ERROR (iaa_crypto.h). */
#define ZBATCH_CR_ERR_COMP_OVERFLOW	0x19	/* compress output overflow */
#define ZBATCH_CR_WATCHDOG		0x24	/* status: descriptor timed out */
/* Software model only. */
#define ZBATCH_CR_ERR_BADSTREAM		0xf0	/* corrupt or truncated input */
#define ZBATCH_CR_ERR_VERIFY		0xf1	/* verify_compress mismatch */
#define ZBATCH_CR_ERR_NOMEM		0xf2	/* no workspace for the codec */
/*
 * Status: the executor gave the descriptor back undone (a device error,
 * a buffer the device cannot reach, a timeout); the core redoes it in
 * software unless the batch says ZBATCH_F_NO_FALLBACK. error_code says why.
 */
#define ZBATCH_CR_OFFLOAD		0xf3
#define ZBATCH_OFFLOAD_ERROR		1	/* the driver reported an error */
#define ZBATCH_OFFLOAD_TIMEOUT		2	/* abandoned at the timeout */
#define ZBATCH_OFFLOAD_NODEV		3	/* the driver has no device */
#define ZBATCH_OFFLOAD_REFUSED		4	/* the executor could not take it */

/* Most slices a job is cut into: the submitter's and 15 executors'. */
#define ZBATCH_MAX_SLICES	16

struct zbatch_job;
struct zbatch_wq;

/*
 * A contiguous run of a job's descriptors handed to one executor with one
 * wake-up. desc[first .. first + nr) belong to it until claimed.
 */
struct zbatch_slice {
	struct list_head node;		/* on its WQ's queue while posted */
	struct zbatch_job *job;
	struct zbatch_wq *wq;		/* NULL: kept by the submitter */
	unsigned int first;
	unsigned int nr;
	atomic_t next;			/* claim cursor, may run past nr */
	bool posted;			/* on wq's queue; under its lock */
	/*
	 * Given back half done by an executor that lost its CPU: whoever
	 * finishes it is no measure of a hand-off (not a helper's miss,
	 * not its latency). Set under the WQ's lock before it is queued again.
	 */
	bool given_back;
};

/*
 * One submitted batch as executors see it. Written by the submitter before
 * any slice is posted (publication: the WQ lock), read-only afterwards
 * except for the cursors, @pending and the sampled times.
 */
struct zbatch_job {
	struct iax_hw_desc *desc[ZBATCH_MAX_BATCH];
	struct zbatch_slice slice[ZBATCH_MAX_SLICES];
	unsigned int nr;		/* descriptors */
	unsigned int nr_slices;
	unsigned int codec;		/* software executors: which codec */
	int level;			/* and its level (0: default) */
	bool verify;			/* verify_compress captured at submit */
	int cpu;			/* submitter's CPU: no engine there helps */
	/*
	 * Descriptors not run yet plus slices held by executors. Dropped
	 * only by zbatch_job_release(), under waitq.lock, so the submitter
	 * seeing 0 and taking the lock once knows nobody touches the job
	 * (a batch of one request the core ran alone, with no executor,
	 * sets it to 0 itself).
	 */
	atomic_t pending;
	wait_queue_head_t waitq;	/* a sleeping waiter sleeps here */
	/*
	 * An executor gave back a slice half done (it lost its CPU): the
	 * waiter wakes to steal the rest. Set and woken under the WQ's
	 * lock, while the slice holds the job; cleared by the waiter.
	 * Executors that never give slices back leave it alone.
	 */
	bool kicked;
	/* timings of a sampled job (1 in ZBATCH_LAT_SAMPLE), else 0 */
	bool sampled;
	u64 post_ns;			/* slices posted (a probe's too: cost.c) */
	u64 done_ns;			/* pending reached 0 */
	const struct iax_hw_desc *sample;	/* its completion time: */
	u64 sample_done_ns;
};

/*
 * Executor operations behind a WQ. post() queues a slice (and wakes what
 * runs it) or refuses with -EAGAIN when the WQ cannot take its
 * descriptors, as ENQCMD says "retry"; unpost() takes a slice back if no
 * executor picked it up yet (false: an executor holds it and will release
 * it). A slice is stealable when the core or other executors may claim
 * its unclaimed descriptors: a software WQ's unless it is stalled (fault
 * injection), and a device's too, for the descriptors it has not
 * submitted (those it submitted are the device's until they complete or
 * expire()).
 *
 * A device executor (IAA) submits every descriptor it can claim in post()
 * and releases the slice there; the ones left unclaimed (the device is
 * full) stay stealable. Its expire() gives back, as ZBATCH_CR_OFFLOAD
 * records (timeout), what @job still has on the device once the batch
 * waited past the timeout, and returns how many; NULL for executors whose
 * slices unpost() takes back instead.
 */
struct zbatch_exec_ops {
	const char *name;
	int (*post)(struct zbatch_wq *wq, struct zbatch_slice *s);
	bool (*unpost)(struct zbatch_wq *wq, struct zbatch_slice *s);
	bool (*stealable)(struct zbatch_wq *wq);
	unsigned int (*expire)(struct zbatch_wq *wq, struct zbatch_job *job);
	/*
	 * Optional: @n of @wq's records were redone in software (the core's
	 * batch_redo(); the executor counts what it gave back).
	 */
	void (*redone)(struct zbatch_wq *wq, unsigned int n);
	/*
	 * Optional: software got right what @wq failed, so @wq is to blame
	 * (the software WQs leave service after a run of them).
	 */
	void (*device_error)(struct zbatch_wq *wq);
	/*
	 * Helpers (the software engines): a posted slice waits for a helper
	 * to come and claim it, so dispatch's hand-off rules apply: a slice
	 * taken back unrun is a helper miss (back-off), with handoff
	 * "always" helpers keep what they were given, and a drain without
	 * ZBATCH_DRAIN_STEAL leaves their slices alone.
	 */
	bool helpers;
};

/*
 * A device executor (IAA) runs whole jobs of the codecs it serves. It
 * registers with the core (zbatch_exec_device_set(), batch.c) when it is
 * created and unregisters before it is destroyed, with no submitter
 * about (module init and exit, main.c); the core asks it for a WQ per
 * job and names no executor.
 */
struct zbatch_exec_device {
	/* whether it runs @codec now (batch size, inline choices, status) */
	bool (*serves)(unsigned int codec);
	/* a WQ to run a job of @codec, held until put(); NULL: not now */
	struct zbatch_wq *(*get)(unsigned int codec);
	void (*put)(struct zbatch_wq *wq);
	unsigned int batch;	/* the requests one submit should hand it */
};

/* Claim the next unclaimed descriptor of @s, or NULL when none is left. */
static inline struct iax_hw_desc *zbatch_slice_claim(struct zbatch_slice *s)
{
	unsigned int i;

	if ((unsigned int)atomic_read(&s->next) >= s->nr)
		return NULL;
	i = atomic_fetch_inc(&s->next);
	return i < s->nr ? s->job->desc[s->first + i] : NULL;
}

static inline bool zbatch_slice_empty(struct zbatch_slice *s)
{
	return (unsigned int)atomic_read(&s->next) >= s->nr;
}

/*
 * Give back @n units of @job->pending (descriptors run, slices held).
 * The last one wakes the waiter. Nothing of @job may be touched after.
 */
static inline void zbatch_job_release(struct zbatch_job *job, unsigned int n)
{
	unsigned long flags;

	if (!n)
		return;
	spin_lock_irqsave(&job->waitq.lock, flags);
	if (atomic_sub_return(n, &job->pending) == 0) {
		if (job->post_ns)
			job->done_ns = local_clock();
		wake_up_locked(&job->waitq);
	}
	spin_unlock_irqrestore(&job->waitq.lock, flags);
}

/*
 * Write the end of a completion record: the fields, then the status byte
 * with release, so a reader that sees the status with acquire sees them.
 */
static inline void zbatch_cr_finish(struct iax_completion_record *cr, u8 status,
				    u8 error_code, u32 output_size,
				    u32 bytes_completed)
{
	cr->error_code = error_code;
	cr->output_size = output_size;
	cr->bytes_completed = bytes_completed;
	/* pairs with the acquire in zbatch_cr_errno() (kmod/batch.c) */
	smp_store_release(&cr->status, status);
}

/* The core's side: the outcome of a record as an errno (kmod/batch.c). */
int zbatch_cr_errno(const struct iax_completion_record *cr, bool compress);

static inline struct iax_completion_record *zbatch_desc_cr(const struct iax_hw_desc *d)
{
	return (struct iax_completion_record *)(uintptr_t)d->completion_addr;
}

#endif /* _LINUX_ZBATCH_EXEC_H */
