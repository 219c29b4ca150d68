// SPDX-License-Identifier: GPL-2.0
/*
 * The device executor over an asynchronous acomp driver: descriptors of
 * the codec the driver compresses (its algorithm's cra_name: "deflate"
 * for iaa_crypto's "deflate-iaa") run on the hardware behind it through
 * the kernel's crypto API. Nothing here is one vendor's: a hardware
 * family describes itself in a struct zbatch_acomp_hw (the driver to
 * attach, its sysfs directory, what to tell an operator when the driver
 * is missing) from its own file; IAA's is iaa.c. The tests point it at
 * the hardware test double, deflate-iaa-double.
 *
 * A job goes to the device whole: every descriptor of the batch is
 * submitted before any is waited for, so they run in parallel on the
 * device's engines (iaa_crypto sync_mode=async_irq). Each completion
 * callback writes the descriptor's completion record, status last, and
 * releases it, as the device writes a record; the batch core polls or
 * waits as for any executor. Descriptors are not stealable once
 * submitted; the ones a full slot pool leaves unclaimed are, so the
 * submitter runs them in software.
 *
 * Anything the device does not do (a callback error: iaa_crypto says -EIO
 * for overflow, analytics errors, timeouts and verify failures alike; a
 * buffer outside the linear map; a timeout) is written as
 * ZBATCH_CR_OFFLOAD, and the core redoes that descriptor in software
 * (kmod/batch.c). That needs the two to read each other's output: the
 * attach probe proves it (the device's output read by the device and by
 * zbatch's software codec, and the software codec's read by the device)
 * before the driver takes traffic. IAA's deflate and zbatch's (raw
 * deflate, 4 KiB window) pass.
 *
 * Life cycle: the driver may appear (an IAA WQ binds), disappear
 * (iaa_crypto answers -ENODEV once its last WQ is unbound) or misbehave
 * (a timeout). The executor attaches when the algorithm is registered
 * (crypto notifier) and retries every retry_ms while it is offline;
 * -ENODEV or a timeout take it offline at once; what is in flight
 * finishes or times out, then the transform is freed.
 *
 * Locks: acx.lock (mutex) serialises attach/detach and the driver name;
 * acx_inst.free_lock (spinlock, irqsave) the free slot stack, taken
 * alone. Slot states move by cmpxchg between the callback and the timeout.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/acompress.h>
#include <crypto/algapi.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <linux/zbatch.h>
#include <linux/zbatch_exec.h>

#include "batch.h"
#include "codec.h"
#include "exec_acomp.h"
#include "stats.h"
#include "sysfs.h"
#include "wq.h"

/* slot state: low 2 bits, the rest a generation against reuse races */
#define SLOT_FREE	0
#define SLOT_BUSY	1
#define SLOT_ABANDONED	2
#define SLOT_STATE(v)	((v) & 3)

/*
 * The device reads and writes bounce buffers, never the caller's: a
 * request abandoned at its timeout may still be read or written by the
 * device later, and by then the caller has freed its buffers. A slot has
 * a page in and ACX_PDST out (room for a compress's output past its
 * input: ACX_SLACK()); a request over a page borrows one of the
 * instance's large pairs (ZBATCH_MAX_LEN each) until its completion, or
 * its late completion. All of them are allocated at attach: nothing is
 * allocated to submit or to complete, and the executor's memory is fixed.
 */
/*
 * Room a compress gets past its input: IAA's fixed Huffman codes a
 * literal in 8 or 9 bits, so data it cannot shrink comes out up to an
 * eighth larger, plus block headers. With no room for that, iaa_crypto
 * failed such a page with -EIO (its callback's word for an overflow and
 * a fault alike), and the core redid it in software, a second deflate
 * of every page that does not compress; with it, the device's output is
 * its own answer: no smaller than the input, an overflow.
 */
#define ACX_SLACK(n)	((n) / 8 + 64)
#define ACX_PDST	(2 * PAGE_SIZE)	/* a slot's own destination */
static_assert(PAGE_SIZE + ACX_SLACK(PAGE_SIZE) <= ACX_PDST);

struct acx_slot {
	struct acomp_req *areq;
	struct scatterlist src, dst;
	u8 *psrc, *pdst;		/* the slot's own: a page in, ACX_PDST out */
	u8 *bsrc, *bdst;		/* in use: its pages or a large pair */
	int big;			/* the large pair in use, or -1 */
	struct iax_hw_desc *desc;
	struct zbatch_job *job;
	struct acx_inst *inst;
	atomic_t state;
	unsigned int idx;
};

/* One attachment: a transform and its requests. */
struct acx_inst {
	struct crypto_acomp *tfm;
	char driver[CRYPTO_MAX_ALG_NAME];
	unsigned int nr;
	struct acx_slot *slots;
	unsigned int *free;		/* stack of free slot indexes */
	unsigned int nr_free;
	spinlock_t free_lock;		/* free, nr_free, big_free, nr_big_free */
	unsigned int nr_big;		/* large bounce pairs */
	u8 **big;			/* 2 * nr_big: source, destination */
	unsigned int *big_free;		/* stack of free pair indexes */
	unsigned int nr_big_free;
	atomic_t abandoned;		/* slots whose completion never came */
	struct list_head grave;		/* on acx.graveyard once detached */
	unsigned int codec;		/* the algorithm's cra_name, as a zbatch codec */
};

enum acx_state { ACX_DISABLED, ACX_OFFLINE, ACX_PROBING, ACX_ONLINE };

static const char *const state_names[] = {
	[ACX_DISABLED] = "disabled",
	[ACX_OFFLINE] = "offline",
	[ACX_PROBING] = "probing",
	[ACX_ONLINE] = "online",
};

static struct {
	const struct zbatch_acomp_hw *hw;
	struct mutex lock;		/* attach/detach, driver, reason */
	char driver[CRYPTO_MAX_ALG_NAME];
	unsigned int state;		/* enum acx_state, READ_ONCE */
	unsigned int codec;		/* the last attached instance's; READ_ONCE */
	bool attached;			/* driver attached since named (codec is its); under lock */
	char reason[160];		/* why offline; under lock */
	struct acx_inst *inst;		/* attached; under lock */
	atomic_t users;			/* posts running + slots busy */
	struct zbatch_dev dev;
	struct zbatch_wq wq;
	struct delayed_work retry;
	struct notifier_block nb;
	struct kobject *kobj;
	/*
	 * Detached instances with abandoned slots: their late completions
	 * still touch them. free_work frees those whose last one came.
	 */
	struct list_head graveyard;	/* under grave_lock */
	spinlock_t grave_lock;
	struct work_struct free_work;
	atomic64_t requests, device_errors, redone, timeouts, refused;
	bool ever_abandoned;		/* zbatch_exec_acomp_destroy() must wait */
	bool created;
} acx;

/*
 * debugfs fault_late_completion_ms: the late completion that drops an
 * instance's last abandoned slot busy-waits that long after its module
 * reference is gone (0: never), so that a test can unload zbatch while a
 * task is still in its code.
 */
unsigned int zbatch_fault_late_ms;

static void set_reason(const char *fmt, ...) __printf(1, 2);

static void set_reason(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(acx.reason, sizeof(acx.reason), fmt, ap);
	va_end(ap);
}

static void users_put(void)
{
	if (atomic_dec_and_test(&acx.users))
		wake_up_var(&acx.users);
}

/* Take the executor offline from any context; the retry work detaches. */
static void go_offline(const char *why, int err)
{
	if (cmpxchg(&acx.state, ACX_ONLINE, ACX_OFFLINE) != ACX_ONLINE)
		return;
	pr_warn("%s executor offline: %s (%d); %s runs in software\n", acx.hw->name,
		why, err, zbatch_codec_name(READ_ONCE(acx.codec)));
	mod_delayed_work(system_wq, &acx.retry, msecs_to_jiffies(10));
}

/* ---- slots ---- */
static struct acx_slot *slot_get(struct acx_inst *in)
{
	struct acx_slot *s = NULL;
	unsigned long flags;

	spin_lock_irqsave(&in->free_lock, flags);
	if (in->nr_free)
		s = &in->slots[in->free[--in->nr_free]];
	spin_unlock_irqrestore(&in->free_lock, flags);
	return s;
}

/*
 * Bounce buffers of @len bytes for @s: its own pages, or a large pair
 * (any context). -ENOMEM when every large pair is on the device.
 */
static int slot_room(struct acx_inst *in, struct acx_slot *s, unsigned int len)
{
	unsigned long flags;
	int big = -1;

	if (len > ZBATCH_MAX_LEN)
		return -ENOMEM;		/* never: the core's limit */
	if (len > PAGE_SIZE) {
		spin_lock_irqsave(&in->free_lock, flags);
		if (in->nr_big_free)
			big = in->big_free[--in->nr_big_free];
		spin_unlock_irqrestore(&in->free_lock, flags);
		if (big < 0)
			return -ENOMEM;
	}
	s->big = big;
	s->bsrc = big < 0 ? s->psrc : in->big[2 * big];
	s->bdst = big < 0 ? s->pdst : in->big[2 * big + 1];
	return 0;
}

/* The device is done with @s's buffers: a large pair goes back. */
static void slot_unroom(struct acx_inst *in, struct acx_slot *s)
{
	unsigned long flags;

	if (s->big < 0)
		return;
	spin_lock_irqsave(&in->free_lock, flags);
	in->big_free[in->nr_big_free++] = s->big;
	spin_unlock_irqrestore(&in->free_lock, flags);
	s->big = -1;
}

static void slot_put(struct acx_inst *in, struct acx_slot *s)
{
	unsigned long flags;

	spin_lock_irqsave(&in->free_lock, flags);
	in->free[in->nr_free++] = s->idx;
	spin_unlock_irqrestore(&in->free_lock, flags);
}

/* Codes under ZBATCH_CR_OFFLOAD (error_code): why the device did not. */
static void finish_record(struct acx_slot *s, int err)
{
	struct iax_completion_record *cr = zbatch_desc_cr(s->desc);

	/*
	 * no smaller than the input, larger than the caller's room, or no
	 * room for it (-E2BIG: iaa_crypto at submit in its synchronous
	 * modes; -ENOSPC: scomp): an overflow, as the software says, not a
	 * device error (the device's output is never used for such a record)
	 */
	if (s->desc->opcode == IAX_OPCODE_COMPRESS &&
	    ((!err && (s->areq->dlen >= s->desc->src1_size ||
		       s->areq->dlen > s->desc->max_dst_size)) ||
	     err == -E2BIG || err == -ENOSPC)) {
		zbatch_cr_finish(cr, IAX_COMP_ANALYTICS_ERROR,
				 ZBATCH_CR_ERR_COMP_OVERFLOW, 0, 0);
		return;
	}
	/* a decompress (a compress's was an overflow above) */
	if (!err && s->areq->dlen > s->desc->max_dst_size)
		err = -EIO;	/* more than the room it was given: not believed */
	if (!err) {
		memcpy((void *)(uintptr_t)s->desc->dst_addr, s->bdst, s->areq->dlen);
		zbatch_cr_finish(cr, IAX_COMP_SUCCESS, 0, s->areq->dlen,
				 s->desc->src1_size);
		return;
	}
	/* -ENOMEM: refused at submit (no bounce room), never the device's */
	if (err != -ETIMEDOUT && err != -ENOMEM)
		atomic64_inc(&acx.device_errors);
	zbatch_cr_finish(cr, ZBATCH_CR_OFFLOAD,
			 err == -ETIMEDOUT ? ZBATCH_OFFLOAD_TIMEOUT :
			 err == -ENODEV ? ZBATCH_OFFLOAD_NODEV :
			 err == -ENOMEM ? ZBATCH_OFFLOAD_REFUSED : ZBATCH_OFFLOAD_ERROR,
			 0, 0);
}

/*
 * fault_late_completion_ms: stay in zbatch's code as a preempted task
 * would: giving the CPU to whoever wants it (cond_resched() preempts, it
 * is no voluntary context switch), never sleeping, never with preemption
 * off (RCU would wait for that anyway).
 */
static noinline void late_spin(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (time_before(jiffies, end))
		cond_resched();
}

/* The device's answer for a busy slot: from the callback or at submit. */
static void slot_done(struct acx_slot *s, int err)
{
	struct acx_inst *in = s->inst;
	struct zbatch_job *job = s->job;
	int v = atomic_read_acquire(&s->state);

	if (SLOT_STATE(v) != SLOT_BUSY || atomic_cmpxchg(&s->state, v, v - SLOT_BUSY) != v) {
		/*
		 * Abandoned at its timeout: its record is written, its job
		 * gone. Recycle the slot; a detached instance may go now.
		 * Nothing of @in is touched after the count drops.
		 */
		unsigned int late_ms = READ_ONCE(zbatch_fault_late_ms);
		bool last;

		atomic_set(&s->state, (v & ~3) | SLOT_FREE);
		slot_unroom(in, s);
		slot_put(in, s);
		last = atomic_dec_and_test(&in->abandoned);
		/* unbound: not behind a completion thread that keeps its CPU */
		if (last)
			queue_work(system_unbound_wq, &acx.free_work);
		/*
		 * zbatch may be unloaded from here on: this task is still in
		 * its code until it returns, which zbatch_exec_acomp_destroy() waits
		 * for (synchronize_rcu_tasks()).
		 */
		module_put(THIS_MODULE);
		if (unlikely(late_ms) && last)
			late_spin(late_ms);
		return;
	}
	finish_record(s, err);
	slot_unroom(in, s);
	slot_put(in, s);
	zbatch_job_release(job, 1);
	users_put();
}

static void slot_complete(void *data, int err)
{
	if (err == -EINPROGRESS)	/* left the backlog: not done yet */
		return;
	slot_done(data, err);
}

/*
 * Submit one claimed descriptor on @s. The slot holds a users reference
 * until slot_done() or its abandonment.
 */
static void slot_submit(struct acx_inst *in, struct acx_slot *s,
			struct iax_hw_desc *d, struct zbatch_job *job)
{
	bool comp = d->opcode == IAX_OPCODE_COMPRESS;
	/*
	 * A compress gets room for its input and ACX_SLACK() past it,
	 * whatever room its caller has, within its bounce buffer (a 64 KiB
	 * input gets its own size: one IAA cannot shrink is still -EIO,
	 * redone). iaa_crypto's callback says -EIO for
	 * an overflow and for a fault alike; with the caller's room, a
	 * device that compresses worse than software (6.12's iaa_crypto:
	 * fixed Huffman) overflowed where software then fitted, counted as
	 * the device's error and redone (recompression, whose room is the
	 * object's size now: 117 of 448 objects of real data on the test
	 * double). Output past the caller's room, or no smaller than the
	 * input, is the device's answer: finish_record().
	 */
	unsigned int dcap = d->max_dst_size;
	int ret, v;

	s->desc = d;
	s->job = job;
	atomic_inc(&acx.users);
	v = atomic_read(&s->state);
	atomic_set_release(&s->state, ((v & ~3) + 4) | SLOT_BUSY);
	atomic64_inc(&acx.requests);
	s->big = -1;
	if (slot_room(in, s, comp ? d->src1_size : max(d->src1_size, dcap))) {
		/* every large bounce pair on the device: software does it */
		atomic64_inc(&acx.refused);
		slot_done(s, -ENOMEM);
		return;
	}
	if (comp)
		dcap = min(d->src1_size + ACX_SLACK(d->src1_size),
			   s->big < 0 ? ACX_PDST : ZBATCH_MAX_LEN);
	memcpy(s->bsrc, (void *)(uintptr_t)d->src1_addr, d->src1_size);
	sg_init_one(&s->src, s->bsrc, d->src1_size);
	sg_init_one(&s->dst, s->bdst, dcap);
	acomp_request_set_params(s->areq, &s->src, &s->dst, d->src1_size, dcap);
	acomp_request_set_callback(s->areq, 0, slot_complete, s);
	ret = comp ? crypto_acomp_compress(s->areq) : crypto_acomp_decompress(s->areq);
	if (ret == -EINPROGRESS)
		return;
	/* done at submit: iaa_crypto's decompress after its own fallback */
	if (ret == -ENODEV)
		go_offline(acx.hw->nodev, ret);
	slot_done(s, ret == -EBUSY ? -EIO : ret);
}

static int acx_post(struct zbatch_wq *wq, struct zbatch_slice *sl)
{
	struct acx_inst *in = READ_ONCE(acx.inst);
	struct iax_hw_desc *d;
	struct acx_slot *s;

	if (!in)
		return -EAGAIN;
	while (!zbatch_slice_empty(sl)) {
		s = slot_get(in);
		if (!s) {
			/* all slots in flight: the rest stays claimable */
			zbatch_stat_add(&wq->stats, ZST_RETRIES, 1);
			break;
		}
		d = zbatch_slice_claim(sl);
		if (!d) {
			slot_put(in, s);
			break;
		}
		slot_submit(in, s, d, sl->job);
	}
	/* the slice itself: nothing is queued, descriptors are released one by one */
	zbatch_job_release(sl->job, 1);
	return 0;
}

static bool acx_unpost(struct zbatch_wq *wq, struct zbatch_slice *sl)
{
	return false;	/* never queued: post() released the slice */
}

static bool acx_stealable(struct zbatch_wq *wq)
{
	return true;	/* only unclaimed descriptors, i.e. never submitted */
}

/*
 * @job waited past the timeout: abandon its descriptors still on the
 * device (their records say ZBATCH_CR_OFFLOAD, timeout; the core redoes
 * them in software) and take the executor offline. A late completion
 * finds its slot abandoned and only recycles it; until it comes, the slot
 * holds a module reference, so zbatch cannot be unloaded under it.
 */
static unsigned int acx_expire(struct zbatch_wq *wq, struct zbatch_job *job)
{
	struct acx_inst *in = READ_ONCE(acx.inst);
	unsigned int i, n = 0;

	if (!in)
		return 0;
	for (i = 0; i < in->nr; i++) {
		struct acx_slot *s = &in->slots[i];
		int v = atomic_read_acquire(&s->state);

		if (SLOT_STATE(v) != SLOT_BUSY || READ_ONCE(s->job) != job)
			continue;
		if (atomic_cmpxchg(&s->state, v, (v & ~3) | SLOT_ABANDONED) != v)
			continue;
		__module_get(THIS_MODULE);
		WRITE_ONCE(acx.ever_abandoned, true);
		atomic_inc(&in->abandoned);
		atomic64_inc(&acx.timeouts);
		finish_record(s, -ETIMEDOUT);
		zbatch_job_release(job, 1);
		n++;
	}
	if (!n)
		return 0;
	go_offline("a descriptor timed out", -ETIMEDOUT);
	/* last: once the users drop, detach() may free @in */
	if (atomic_sub_and_test(n, &acx.users))
		wake_up_var(&acx.users);
	return n;
}

/* The core redid @n descriptors the device gave back or failed. */
static void acx_redone(struct zbatch_wq *wq, unsigned int n)
{
	atomic64_add(n, &acx.redone);
}

const struct zbatch_exec_ops zbatch_exec_acomp = {
	.name = "acomp",
	.post = acx_post,
	.unpost = acx_unpost,
	.stealable = acx_stealable,
	.expire = acx_expire,
	.redone = acx_redone,
};

/*
 * The device executor the core routes deflate to while online: get()
 * returns the WQ with a users reference that put() drops once the job is
 * posted (detach() clears the state, then waits for users).
 */
static struct zbatch_wq *acx_get(unsigned int codec)
{
	if (READ_ONCE(acx.state) != ACX_ONLINE)
		return NULL;
	atomic_inc(&acx.users);
	/* pairs with detach: it clears the state, then waits for users */
	smp_mb__after_atomic();
	/* the codec was written before the state left offline (attach()) */
	if (smp_load_acquire(&acx.state) != ACX_ONLINE || READ_ONCE(acx.codec) != codec) {
		users_put();
		return NULL;
	}
	return &acx.wq;
}

static void acx_put(struct zbatch_wq *wq)
{
	users_put();
}

static bool acx_serves(unsigned int codec)
{
	/* the codec was written before the state left offline (attach()) */
	return smp_load_acquire(&acx.state) == ACX_ONLINE && READ_ONCE(acx.codec) == codec;
}

static const struct zbatch_exec_device acx_device = {
	.serves = acx_serves,
	.get = acx_get,
	.put = acx_put,
	.batch = ZBATCH_ACOMP_BATCH,
};

/*
 * ---- attach / detach ----
 * inst_create(), detach(), probe() and attach() run under acx.lock (and
 * assert it); an instance is freed, and the graveyard of detached ones
 * walked, under grave_lock alone (free_work() runs from a workqueue).
 */
static void inst_free(struct acx_inst *in)
{
	unsigned int i;

	for (i = 0; i < in->nr; i++) {
		if (in->slots[i].areq)
			acomp_request_free(in->slots[i].areq);
		kfree(in->slots[i].psrc);
		kfree(in->slots[i].pdst);
	}
	for (i = 0; in->big && i < 2 * in->nr_big; i++)
		kfree(in->big[i]);
	kfree(in->big);
	kfree(in->big_free);
	crypto_free_acomp(in->tfm);
	kfree(in->free);
	kfree(in->slots);
	kfree(in);
}

static struct acx_inst *inst_create(const char *driver, int *err, bool *final)
{
	unsigned int i, nr = acx.hw->slots;
	struct acx_inst *in = kzalloc(sizeof(*in), GFP_KERNEL);
	struct crypto_alg *alg;
	const char *name;
	int ret;

	lockdep_assert_held(&acx.lock);

	*err = -ENOMEM;
	*final = false;
	if (!in)
		return NULL;
	strscpy(in->driver, driver, sizeof(in->driver));
	/* NOLOAD: never modprobe from here (iaa_crypto is loaded by idxd) */
	in->tfm = crypto_alloc_acomp(driver, 0, CRYPTO_NOLOAD);
	if (IS_ERR(in->tfm)) {
		*err = PTR_ERR(in->tfm);
		kfree(in);
		return NULL;
	}
	alg = crypto_acomp_tfm(in->tfm)->__crt_alg;
	/*
	 * Refused for what it is: for good when @driver named it; when a
	 * generic name ("deflate") resolved to it, another driver may win
	 * the name later, so the retry goes on (*@final false).
	 */
	*final = !strcmp(alg->cra_driver_name, driver);
	if (alg->cra_module == THIS_MODULE) {
		/* its requests would come back here: recursion, not a device */
		set_reason("%s is zbatch's own algorithm (%s), not a device's", driver,
			   alg->cra_driver_name);
		*err = -ELOOP;
		goto err;
	}
	/*
	 * What it compresses: the codec its algorithm names, one zbatch
	 * runs in software too. An algorithm registered under its driver's
	 * own name (the test double's deflate-iaa-double) names no format:
	 * it is taken to run the family's codec. The probe proves either.
	 */
	name = alg->cra_name;
	ret = zbatch_codec_by_name(name);
	if (ret < 0 && !strcmp(name, alg->cra_driver_name) && acx.hw->codec)
		ret = zbatch_codec_by_name(acx.hw->codec);
	if (ret < 0) {
		set_reason("%s compresses %s, which zbatch has no codec for", driver, name);
		*err = -EPROTONOSUPPORT;
		goto err;
	}
	in->codec = ret;
	spin_lock_init(&in->free_lock);
	in->slots = kcalloc(nr, sizeof(*in->slots), GFP_KERNEL);
	in->free = kcalloc(nr, sizeof(*in->free), GFP_KERNEL);
	if (!in->slots || !in->free)
		goto err;
	in->nr = nr;
	for (i = 0; i < nr; i++) {
		struct acx_slot *s = &in->slots[i];

		s->areq = acomp_request_alloc(in->tfm);
		s->psrc = kmalloc(PAGE_SIZE, GFP_KERNEL);
		s->pdst = kmalloc(ACX_PDST, GFP_KERNEL);
		if (!s->areq || !s->psrc || !s->pdst)
			goto err;
		s->idx = i;
		s->inst = in;
		s->big = -1;
		in->free[in->nr_free++] = i;
	}
	/* requests over a page (16 and 64 KiB units): one in eight slots */
	in->nr_big = clamp(nr / 8, 1u, 32u);
	in->big = kcalloc(2 * in->nr_big, sizeof(*in->big), GFP_KERNEL);
	in->big_free = kcalloc(in->nr_big, sizeof(*in->big_free), GFP_KERNEL);
	if (!in->big || !in->big_free)
		goto err;
	for (i = 0; i < 2 * in->nr_big; i++) {
		in->big[i] = kmalloc(ZBATCH_MAX_LEN, GFP_KERNEL);
		if (!in->big[i])
			goto err;
	}
	for (i = 0; i < in->nr_big; i++)
		in->big_free[in->nr_big_free++] = i;
	*err = 0;
	return in;
err:
	inst_free(in);
	return NULL;
}

static void free_work(struct work_struct *w)
{
	struct acx_inst *in, *tmp;
	LIST_HEAD(done);

	spin_lock(&acx.grave_lock);
	list_for_each_entry_safe(in, tmp, &acx.graveyard, grave)
		if (!atomic_read(&in->abandoned))
			list_move(&in->grave, &done);
	spin_unlock(&acx.grave_lock);
	list_for_each_entry_safe(in, tmp, &done, grave)
		inst_free(in);
}

/*
 * Requests of detached instances of @driver (NULL: any) still waiting for
 * their completion, and the instances kept for them in @parked.
 */
static int graveyard_count(const char *driver, unsigned int *parked)
{
	struct acx_inst *in;
	int n = 0;

	*parked = 0;
	spin_lock(&acx.grave_lock);
	list_for_each_entry(in, &acx.graveyard, grave) {
		if (driver && strcmp(driver, in->driver))
			continue;
		n += atomic_read(&in->abandoned);
		(*parked)++;
	}
	spin_unlock(&acx.grave_lock);
	return n;
}

static void detach(void)
{
	struct acx_inst *in = acx.inst;
	bool keep = false;

	lockdep_assert_held(&acx.lock);

	if (!in)
		return;
	/*
	 * The caller wrote a state other than online or probing. Pairs with
	 * acx_get()'s increment, smp_mb__after_atomic(), state read
	 * (store buffering: without a full barrier on both sides each may
	 * read the other's old value, and a submitter would use an instance
	 * freed here): either it sees the new state and backs out, or this
	 * sees its reference and waits for it.
	 */
	smp_mb();
	/* new posts see the state; in-flight ones finish or time out */
	wait_var_event(&acx.users, !atomic_read(&acx.users));
	WRITE_ONCE(acx.inst, NULL);
	spin_lock(&acx.grave_lock);
	if (atomic_read(&in->abandoned)) {
		/* late completions may still come: free_work frees it after */
		list_add(&in->grave, &acx.graveyard);
		keep = true;
	}
	spin_unlock(&acx.grave_lock);
	if (keep)
		pr_warn("%s: %d request(s) never completed; their slots are kept until they do\n",
			acx.hw->name, atomic_read(&in->abandoned));
	else
		inst_free(in);
}

/* @r alone on the device's WQ, waited for. */
static int probe_one(struct zbatch_batch *b, struct zbatch_req *r, unsigned int codec)
{
	zbatch_batch_init(b, codec, ZBATCH_F_NO_FALLBACK | ZBATCH_KF_SYNC);
	zbatch_batch_add(b, r);
	return zbatch_submit_on(b, &acx.wq);
}

/* @r (a decompress into @back) gave @page back, or -EILSEQ. */
static int probe_check(int ret, const struct zbatch_req *r, const u8 *page,
		       const u8 *back)
{
	if (!ret && (r->produced != PAGE_SIZE || memcmp(page, back, PAGE_SIZE)))
		return -EILSEQ;
	return ret;
}

/*
 * A test page through the device and zbatch's software @codec both ways:
 * compressed on the device, read back by the device and by software;
 * compressed by software, read back by the device. What the device
 * fails is redone in software and read later by either, so each must
 * read the other's output. On the WQ itself: routing sends nothing to a
 * device still probing (acx.lock keeps detach() away meanwhile).
 */
static int probe(unsigned int codec)
{
	static const char pat[] = "zbatch probes a device ";
	struct zbatch_ctx *ctx = NULL;
	struct zbatch_batch *b;
	u8 *page, *cmp, *back;
	struct zbatch_req *r;
	unsigned int i, clen;
	int ret = -ENOMEM;

	lockdep_assert_held(&acx.lock);

	b = kzalloc(sizeof(*b) + sizeof(*r), GFP_KERNEL);
	page = kmalloc(3 * PAGE_SIZE, GFP_KERNEL);
	if (!b || !page)
		goto out;
	ctx = zbatch_ctx_get();
	if (!ctx)
		goto out;
	r = (struct zbatch_req *)(b + 1);
	cmp = page + PAGE_SIZE;
	back = page + 2 * PAGE_SIZE;
	for (i = 0; i < PAGE_SIZE; i++)
		page[i] = pat[i % (sizeof(pat) - 1)] ^ (i >> 9);

	zbatch_req_init(r, ZBATCH_OP_COMPRESS, page, PAGE_SIZE, cmp, PAGE_SIZE);
	ret = probe_one(b, r, codec);
	if (ret)
		goto out;
	clen = r->produced;
	/* the device's output, read by the device */
	zbatch_req_init(r, ZBATCH_OP_DECOMPRESS, cmp, clen, back, PAGE_SIZE);
	ret = probe_check(probe_one(b, r, codec), r, page, back);
	if (ret)
		goto out;
	/* ... and by software */
	memset(back, 0, PAGE_SIZE);
	zbatch_req_init(r, ZBATCH_OP_DECOMPRESS, cmp, clen, back, PAGE_SIZE);
	ret = probe_check(zbatch_run_inline(ctx, r, codec, 0), r, page, back);
	if (ret)
		goto out;
	/* software's output, read by the device */
	zbatch_req_init(r, ZBATCH_OP_COMPRESS, page, PAGE_SIZE, cmp, PAGE_SIZE);
	ret = zbatch_run_inline(ctx, r, codec, 0);
	if (ret)
		goto out;
	clen = r->produced;
	memset(back, 0, PAGE_SIZE);
	zbatch_req_init(r, ZBATCH_OP_DECOMPRESS, cmp, clen, back, PAGE_SIZE);
	ret = probe_check(probe_one(b, r, codec), r, page, back);
out:
	if (ctx)
		zbatch_ctx_put(ctx);
	kfree(page);
	kfree(b);
	return ret;
}

/* Try to (re)attach acx.driver; under acx.lock. */
static void attach(void)
{
	bool final = false, refused;
	unsigned int parked;
	struct acx_inst *in;
	int ret;

	lockdep_assert_held(&acx.lock);

	detach();
	if (!acx.driver[0]) {
		WRITE_ONCE(acx.state, ACX_DISABLED);
		set_reason("no driver configured (%s/driver is empty)", acx.hw->sysfs);
		return;
	}
	WRITE_ONCE(acx.state, ACX_OFFLINE);
	/*
	 * A driver that never completed what an earlier attachment gave it
	 * (a hung device: its probe or traffic timed out) gets no new
	 * instance until it does: each would be parked in turn, about 3 MiB
	 * a retry, without bound. At most one instance per driver waits in
	 * the graveyard; the retry attaches once its last completion came
	 * (pointing iaa/driver at another driver attaches that one).
	 */
	free_work(&acx.free_work);	/* those whose last one came */
	ret = graveyard_count(acx.driver, &parked);
	if (ret) {
		set_reason("%s holds %d request(s) never completed (hung?): waiting for them",
			   acx.driver, ret);
		goto retry;
	}
	in = inst_create(acx.driver, &ret, &final);
	if (!in) {
		refused = ret == -EPROTONOSUPPORT || ret == -ELOOP;	/* said why */
		if (ret == -ENOENT)
			set_reason("%s is not registered (%s)", acx.driver, acx.hw->missing);
		else if (!refused)
			set_reason("cannot allocate %s: %pe", acx.driver, ERR_PTR(ret));
		if (refused)
			acx.attached = false;
		/* refused for what @driver names: trying again changes nothing */
		if (refused && final)
			return;
		goto retry;
	}
	WRITE_ONCE(acx.inst, in);
	/* before the state leaves offline: acx_get() reads it after */
	WRITE_ONCE(acx.codec, in->codec);
	acx.attached = true;
	WRITE_ONCE(acx.state, ACX_PROBING);
	ret = probe(in->codec);
	if (ret) {
		WRITE_ONCE(acx.state, ACX_OFFLINE);
		set_reason("%s failed its round-trip probe: %pe%s%s%s", acx.driver,
			   ERR_PTR(ret), ret == -ENODEV ? " (" : "",
			   ret == -ENODEV ? acx.hw->nodev : "", ret == -ENODEV ? ")" : "");
		detach();
		goto retry;
	}
	/* a timeout or -ENODEV during the probe already said offline */
	if (cmpxchg(&acx.state, ACX_PROBING, ACX_ONLINE) != ACX_PROBING) {
		detach();
		goto retry;
	}
	set_reason("%s passed its probe: %s runs on it", acx.driver,
		   zbatch_codec_name(in->codec));
	pr_info("%s executor online: %s (%s), %u requests in flight at most\n",
		acx.hw->name, acx.driver, zbatch_codec_name(in->codec), in->nr);
	return;
retry:
	mod_delayed_work(system_wq, &acx.retry,
			 msecs_to_jiffies(acx.hw->retry_ms));
}

static void retry_work(struct work_struct *w)
{
	mutex_lock(&acx.lock);
	if (READ_ONCE(acx.state) != ACX_ONLINE) {
		if (READ_ONCE(acx.state) == ACX_OFFLINE && acx.inst)
			set_reason("%s went offline; retrying", acx.driver);
		attach();
	}
	mutex_unlock(&acx.lock);
}

/* A new algorithm finished its self-test: ours, perhaps. */
static int alg_notify(struct notifier_block *nb, unsigned long msg, void *data)
{
	struct crypto_alg *alg = data;

	if (msg == CRYPTO_MSG_ALG_LOADED && READ_ONCE(acx.state) == ACX_OFFLINE &&
	    !strcmp(alg->cra_driver_name, acx.driver))
		mod_delayed_work(system_wq, &acx.retry, 0);
	/* not NOTIFY_DONE: when all say DONE, the crypto API modprobes cryptomgr */
	return NOTIFY_OK;
}

/* ---- sysfs: /sys/kernel/zbatch/<hw->sysfs>/ (iaa/) ---- */
static ssize_t driver_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&acx.lock);
	n = sysfs_emit(buf, "%s\n", acx.driver);
	mutex_unlock(&acx.lock);
	return n;
}

static ssize_t driver_store(struct kobject *k, struct kobj_attribute *a,
			    const char *buf, size_t len)
{
	char name[CRYPTO_MAX_ALG_NAME];
	size_t n = len;

	if (n && buf[n - 1] == '\n')
		n--;
	if (n >= sizeof(name))
		return -EINVAL;
	memcpy(name, buf, n);
	name[n] = 0;
	if (strcspn(name, " \t") != n)
		return -EINVAL;
	mutex_lock(&acx.lock);
	strscpy(acx.driver, name, sizeof(acx.driver));
	WRITE_ONCE(acx.state, ACX_OFFLINE);
	acx.attached = false;
	attach();
	mutex_unlock(&acx.lock);
	return len;
}

static ssize_t state_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zbatch_sysfs_choice(buf, state_names, ARRAY_SIZE(state_names),
				   READ_ONCE(acx.state), 0);
}

/* what iaa/driver's driver compresses once it attached; else empty */
static ssize_t codec_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&acx.lock);
	n = sysfs_emit(buf, "%s\n", acx.attached ? zbatch_codec_name(acx.codec) : "");
	mutex_unlock(&acx.lock);
	return n;
}

static ssize_t reason_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	ssize_t n;

	mutex_lock(&acx.lock);
	n = sysfs_emit(buf, "%s\n", acx.reason);
	mutex_unlock(&acx.lock);
	return n;
}

static ssize_t stats_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	unsigned int parked, kib = 0;
	int abandoned = graveyard_count(NULL, &parked);
	struct acx_inst *in;

	mutex_lock(&acx.lock);
	in = acx.inst;
	if (in)
		kib = (in->nr * (PAGE_SIZE + ACX_PDST) + in->nr_big * 2 * ZBATCH_MAX_LEN) / 1024;
	mutex_unlock(&acx.lock);
	return sysfs_emit(buf, "requests %lld\ndevice_errors %lld\ntimeouts %lld\n"
			  "refused %lld\nredone %lld\ninflight %d\nslots %u\n"
			  "parked %u\nabandoned %d\nbounce_kib %u\n",
			  (long long)atomic64_read(&acx.requests),
			  (long long)atomic64_read(&acx.device_errors),
			  (long long)atomic64_read(&acx.timeouts),
			  (long long)atomic64_read(&acx.refused),
			  (long long)atomic64_read(&acx.redone),
			  atomic_read(&acx.users), acx.hw->slots,
			  parked, abandoned, kib);
}

static struct kobj_attribute driver_attr = __ATTR_RW(driver);
static struct kobj_attribute state_attr = __ATTR_RO(state);
static struct kobj_attribute codec_attr = __ATTR_RO(codec);
static struct kobj_attribute reason_attr = __ATTR_RO(reason);
static struct kobj_attribute stats_attr = __ATTR_RO(stats);
static struct attribute *acx_attrs[] = {
	&driver_attr.attr, &state_attr.attr, &codec_attr.attr, &reason_attr.attr,
	&stats_attr.attr,
	NULL,
};

static const struct attribute_group acx_group = {
	.attrs = acx_attrs,
};

/**
 * zbatch_exec_acomp_create() - the executor and its sysfs directory
 * @parent: /sys/kernel/zbatch
 * @hw: the hardware family: its driver, sysfs directory name, limits
 *
 * Attaching is left to a work item: loading zbatch never waits for a
 * device.
 *
 * Return: 0 or a negative errno; nothing is left behind on failure.
 */
int zbatch_exec_acomp_create(struct kobject *parent, const struct zbatch_acomp_hw *hw)
{
	int ret;

	if (hw->slots < 1 || hw->slots > 1024 || hw->retry_ms < 100 ||
	    hw->retry_ms > 600000)
		return -EINVAL;
	acx.hw = hw;
	mutex_init(&acx.lock);
	strscpy(acx.driver, hw->driver, sizeof(acx.driver));
	acx.state = ACX_OFFLINE;
	set_reason("not tried yet");
	INIT_DELAYED_WORK(&acx.retry, retry_work);
	INIT_LIST_HEAD(&acx.graveyard);
	spin_lock_init(&acx.grave_lock);
	INIT_WORK(&acx.free_work, free_work);
	acx.dev.id = 0;
	acx.dev.node = NUMA_NO_NODE;
	acx.wq.dev = &acx.dev;
	acx.wq.ops = &zbatch_exec_acomp;
	acx.wq.size = hw->slots;
	acx.wq.enabled = true;
	ret = zbatch_stats_init(&acx.wq.stats);
	if (ret)
		return ret;
	ret = zbatch_stats_init(&acx.dev.stats);
	if (ret)
		goto err_wq_stats;
	acx.kobj = kobject_create_and_add(hw->sysfs, parent);
	if (!acx.kobj) {
		ret = -ENOMEM;
		goto err_dev_stats;
	}
	ret = sysfs_create_group(acx.kobj, &acx_group);
	if (ret)
		goto err_kobj;
	acx.nb.notifier_call = alg_notify;
	ret = crypto_register_notifier(&acx.nb);
	if (ret)
		goto err_group;
	acx.created = true;
	zbatch_exec_device_set(&acx_device);
	mod_delayed_work(system_wq, &acx.retry, 0);
	return 0;

err_group:
	sysfs_remove_group(acx.kobj, &acx_group);
err_kobj:
	kobject_put(acx.kobj);
err_dev_stats:
	zbatch_stats_free(&acx.dev.stats);
err_wq_stats:
	zbatch_stats_free(&acx.wq.stats);
	return ret;
}

/* Callers are gone (module exit): nothing is submitted any more. */
void zbatch_exec_acomp_destroy(void)
{
	if (!acx.created)
		return;
	zbatch_exec_device_set(NULL);
	crypto_unregister_notifier(&acx.nb);
	sysfs_remove_group(acx.kobj, &acx_group);
	kobject_put(acx.kobj);
	cancel_delayed_work_sync(&acx.retry);
	mutex_lock(&acx.lock);
	WRITE_ONCE(acx.state, ACX_DISABLED);
	detach();
	mutex_unlock(&acx.lock);
	/* abandoned slots hold module references: none is left by now */
	flush_work(&acx.free_work);
	free_work(&acx.free_work);
	/*
	 * The task that ran the last late completion dropped its module
	 * reference in zbatch's code (slot_done()) and may still be there,
	 * preempted: module unload waits for RCU (irq and preempt-disabled
	 * callers) but not for a preemptible task, such as the threaded irq
	 * handler iaa_crypto completes from. A tasks-RCU grace period ends
	 * only once every task went through a voluntary context switch,
	 * i.e. left that code. Only after a slot was ever abandoned.
	 */
	if (READ_ONCE(acx.ever_abandoned))
		synchronize_rcu_tasks();
	acx.created = false;
	zbatch_stats_free(&acx.dev.stats);
	zbatch_stats_free(&acx.wq.stats);
}
