// SPDX-License-Identifier: GPL-2.0
/*
 * Recompression: the swap device's cold pages compressed again with a
 * secondary codec (a stronger one: lz4 on swap-out, zstd later), as
 * zram's (CONFIG_ZRAM_MULTI_COMP) and with its interface, under
 * /sys/block/zbatchswapN/zbatch/: recomp_algorithm, recompress; and, which
 * zram has not, in the background within a CPU budget: recomp_budget,
 * recomp_interval. What it saved and cost: recomp_stat
 * (Documentation/ABI/zbatch, Documentation/admin-guide.md: Recompression).
 *
 * Recompression works in batches, as writeback: it chooses up to
 * ZB_RC_BATCH pages (zb_slot_rc_choose(); a unit only whole, all of its
 * pages fitting), decompresses them on the device's read path
 * (zb_read_chosen()), compresses them with the secondary codec (one by
 * one on this CPU; a batch where IAA serves the codec: rc_compress()),
 * and only then replaces each object that came out smaller, if its slots
 * still hold what was chosen (zb_store_recompressed()). One that the
 * secondary codec does not shrink (in zsmalloc's size classes: what the
 * memory is) is marked incompressible: not tried again; "writeback
 * incompressible" takes it. Reads of a recompressed object run inline
 * with the secondary codec, on the reader's stream context (prepared for
 * both codecs at disksize).
 *
 * Its batches run on the CPU of whoever runs it, not on the engines
 * (object by object; as a batch with ZBATCH_KF_SUBMITTER where IAA
 * serves the codec, which IAA takes):
 * nobody waits for recompression, and a hand-off costs CPU (wake-ups,
 * the engines' spin) that it need not pay: on 2 vCPUs, handing its
 * batches to the engines took 1.5 times the CPU of the codec work alone
 * (Documentation/performance.md, Recompression).
 *
 * It never runs in reclaim: in the writer of "recompress", or in the
 * device's background thread (nice 19, freezable), which every
 * recomp_interval seconds recompresses the pages not written or read for
 * at least an interval (by the slots' times; it leaves the idle marks to
 * the operator); after every batch it sleeps so long that the CPU time
 * it took stays within recomp_budget percent of one CPU. It reads on an
 * I/O context of its own (zb_io_alloc_own()): a nice-19 thread never
 * holds a stream a swap-in waits for. Objects are allocated without
 * direct reclaim; when that fails the pass stops, the old objects stay.
 *
 * Locks (locks.h): rc.lock (the thread and its settings) before
 * init_lock (read), then rc.run (one recompression batch at a time: the
 * pages a batch chose carry a mark that only one batch may own, and
 * every batch lets its marks go before it ends: a writer waits for the
 * batch running; the thread ends its pass when it finds a batch
 * running; it also guards the batches' buffers, rc.buf, kept from the
 * first batch to the device's removal), then slot locks. Both take them
 * a batch at a time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/freezer.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>
#include <linux/zsmalloc.h>

#include "batch.h"
#include "codec.h"
#include "swapdev.h"

/* Pages one recompression batch chooses, reads and compresses (256 KiB). */
#define ZB_RC_BATCH	64
/* Pages one batch looks at (64 MiB of the device), to find them. */
#define ZB_RC_SCAN	16384
static_assert(ZB_RC_BATCH >= ZB_UNIT_MAX_PAGES && ZB_RC_BATCH <= ZBATCH_MAX_BATCH);

/* One object chosen: a page, or a unit's pages, and what it is stored in. */
struct zb_rc_obj {
	unsigned long index;
	unsigned int pages;
	unsigned int len;	/* bytes stored now */
	unsigned int first;	/* its first page in the batch's buffers */
};

/* A recompression batch: the pages chosen, their data, their new streams. */
struct zb_rc {
	unsigned int n;			/* objects */
	unsigned int pages;		/* pages chosen */
	struct zb_rc_obj obj[ZB_RC_BATCH];
	unsigned long index[ZB_RC_BATCH];
	u8 *buf[ZB_RC_BATCH];		/* page i of the batch: mem + i pages */
	u8 *mem;			/* decompressed */
	u8 *out;			/* compressed with the secondary codec */
	struct zb_io *io;		/* its own: the reads, and the ctx for both codecs */
	bool keep_idle;			/* the thread's: the idle marks stay as they are */
	struct zbatch_batch batch;
	struct zbatch_req req[ZB_RC_BATCH];
};

/* What a run is asked: recompress's arguments, or the thread's. */
struct zb_rc_args {
	unsigned int mode;		/* ZB_WB_IDLE, ZB_WB_HUGE */
	unsigned int threshold;		/* bytes a page, 0: any (else only as large) */
	u64 max_pages;			/* pages still to try */
	u32 age, now;			/* only pages untouched for @age s at @now (0: any) */
};

static struct zb_swapdev *dev_z(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

static void rc_free(struct zb_rc *rc)
{
	if (!rc)
		return;
	if (rc->io)
		zb_io_free_own(rc->io);
	vfree(rc->mem);
	vfree(rc->out);
	kvfree(rc);
}

/* Under init_lock (read), disksize set, a secondary codec. */
static struct zb_rc *rc_alloc(struct zb_swapdev *z)
{
	struct zb_rc *rc = kvzalloc(sizeof(*rc), GFP_KERNEL);
	unsigned int i;

	if (!rc)
		return NULL;
	rc->mem = vmalloc(ZB_RC_BATCH * PAGE_SIZE);
	rc->out = vmalloc(ZB_RC_BATCH * PAGE_SIZE);
	rc->io = zb_io_alloc_own(z);
	if (!rc->mem || !rc->out || !rc->io) {
		rc_free(rc);
		return NULL;
	}
	for (i = 0; i < ZB_RC_BATCH; i++)
		rc->buf[i] = rc->mem + i * PAGE_SIZE;
	return rc;
}

/*
 * The device's batch buffers (rc.buf), allocated by its first batch and
 * kept: a run, or the thread's pass, allocating and zeroing its own
 * (about 1.7 MiB with zstd's workspace) cost as much CPU as a few dozen
 * pages' recompression. Under init_lock (read) and rc.run, disksize
 * set, a secondary codec (neither changes once disksize is set). NULL
 * when short of memory. @keep_idle: the thread's batch, which leaves the
 * operator's idle marks as they are.
 */
static struct zb_rc *rc_get(struct zb_swapdev *z, bool keep_idle)
{
	lockdep_assert_held(&z->init_lock);
	lockdep_assert_held(&z->rc.run);
	if (!z->rc.buf)
		z->rc.buf = rc_alloc(z);
	if (z->rc.buf)
		z->rc.buf->keep_idle = keep_idle;
	return z->rc.buf;
}

/* The device is going (zb_remove(), under init_lock (write)). */
void zb_rc_destroy(struct zb_swapdev *z)
{
	lockdep_assert_held_write(&z->init_lock);
	rc_free(z->rc.buf);
	z->rc.buf = NULL;
}

/*
 * What @len bytes take in zsmalloc, comparable: whole pages (objects of
 * a page, or of the huge class, which take one), then the size class of
 * the rest. A smaller object in the same class saves nothing (as zram's).
 */
static u64 rc_cost(struct zs_pool *pool, unsigned int len)
{
	unsigned int full = len / PAGE_SIZE, tail = len % PAGE_SIZE;

	if (tail >= zs_huge_class_size(pool)) {
		full++;
		tail = 0;
	}
	return ((u64)full << 32) | (tail ? zs_lookup_class_index(pool, tail) + 1 : 0);
}

/*
 * Choose objects from *@index on, a unit-sized region at a time (its
 * slots locked together), while the batch has room and @a->max_pages
 * lasts: a unit only when every page of it fits (and so is its own), a
 * page alone when it fits; with a threshold, only objects of at least
 * that many bytes a page. *@index moves past the regions looked at.
 */
static void rc_choose(struct zb_swapdev *z, struct zb_rc *rc, unsigned long *index,
		      struct zb_rc_args *a)
{
	unsigned long start = *index, scan_end = min(z->nr_pages, start + ZB_RC_SCAN);

	/* a batch looks at ZB_RC_SCAN pages at most, chosen or not */
	while (a->max_pages) {
		unsigned long i, first, last;
		const struct zb_unit *u, *ru = NULL;
		unsigned int len, units = 0, fits = 0;

		/* past the empty slots, unlocked (a device is mostly empty) */
		*index = first = zb_region_next(z, *index, scan_end);
		if (first >= scan_end)
			break;		/* nothing left in this scan */
		last = min(z->nr_pages, round_down(first, z->unit_pages) + z->unit_pages);
		if (rc->pages + (last - first) > ZB_RC_BATCH)
			return;		/* the next batch takes it */
		zb_slots_lock(z, first, last - first);
		for (i = first; i < last; i++) {
			bool f = zb_slot_rc_fits(z, i, a->mode, &u, &len) &&
				 zb_slot_older(z, i, a->age, a->now);

			if (u) {
				units++;
				fits += f;
				ru = u;
			} else if (f && len >= a->threshold) {
				zb_slot_rc_choose(z, i);
				rc->obj[rc->n++] = (struct zb_rc_obj){ i, 1, len, rc->pages };
				rc->index[rc->pages++] = i;
				a->max_pages--;
			}
			if (!a->max_pages)
				break;
		}
		/* a unit: every page of the region its own, all fitting */
		if (ru && units == ru->nr_pages && fits == units && first == last - units &&
		    ru->clen / units >= a->threshold && a->max_pages >= units) {
			rc->obj[rc->n++] = (struct zb_rc_obj){ first, units, ru->clen, rc->pages };
			for (i = first; i < last; i++) {
				zb_slot_rc_choose(z, i);
				rc->index[rc->pages++] = i;
			}
			a->max_pages -= units;
		}
		zb_slots_unlock(z, first, last - first);
		*index = i < last ? i + 1 : last;
		cond_resched();
	}
}

/* Let every page chosen go; @incomp[] (per object, or NULL) marks them. */
static void rc_release(struct zb_swapdev *z, struct zb_rc *rc, const bool *incomp)
{
	unsigned int o, p;

	for (o = 0; o < rc->n; o++) {
		for (p = 0; p < rc->obj[o].pages; p++) {
			zb_slot_lock(z, rc->obj[o].index + p);
			zb_slot_rc_done(z, rc->obj[o].index + p, incomp && incomp[o],
					rc->keep_idle);
			zb_slot_unlock(z, rc->obj[o].index + p);
		}
	}
	rc->n = 0;
	rc->pages = 0;
}

/*
 * Compress every object chosen with the secondary codec: one by one on
 * this CPU where the software codec runs it (what a batch of the batch
 * core would do with ZBATCH_KF_SUBMITTER, without building it: nobody
 * waits for recompression, and a hand-off costs CPU), as one batch where
 * a device executor (IAA) serves the codec.
 */
static void rc_compress(struct zb_swapdev *z, struct zb_rc *rc)
{
	int level = zbatch_codec_level_norm(z->codec2, z->level2);
	bool here = !zbatch_device_serves(z->codec2);
	unsigned int o;

	if (!here) {
		zbatch_batch_init(&rc->batch, z->codec2,
				  ZBATCH_KF_ASYNC_IRQ | ZBATCH_KF_SUBMITTER);
		rc->batch.ctx = zb_io_ctx(rc->io);
		rc->batch.level = level;
	}
	for (o = 0; o < rc->n; o++) {
		struct zb_rc_obj *ob = &rc->obj[o];
		struct zbatch_req *req = &rc->req[o];

		/* no more room than it has now: what does not fit saves nothing */
		zbatch_req_init(req, ZBATCH_OP_COMPRESS, rc->buf[ob->first],
				ob->pages * PAGE_SIZE, rc->out + ob->first * PAGE_SIZE,
				min_t(unsigned int, ob->len, ob->pages * PAGE_SIZE));
		if (here)
			zbatch_run_inline(zb_io_ctx(rc->io), req, z->codec2, level);
		else
			zbatch_batch_add(&rc->batch, req);
	}
	if (!here && zbatch_submit(&rc->batch) == -EINPROGRESS)
		zbatch_wait(&rc->batch);
}

/*
 * Store what came out smaller; mark what did not shrink. Return: 0, or
 * -ENOMEM when an object could not be allocated (the rest are let go).
 */
static int rc_commit(struct zb_swapdev *z, struct zb_rc *rc, const struct zb_rc_args *a)
{
	bool incomp[ZB_RC_BATCH] = {};
	unsigned int o;
	int ret = 0;

	for (o = 0; o < rc->n && !ret; o++) {
		struct zb_rc_obj *ob = &rc->obj[o];
		struct zbatch_req *req = &rc->req[o];
		unsigned int len;
		int err;

		zb_comp_fault(req);
		len = req->produced;
		zb_stat_add(z, ZBS_RECOMP_TRIED, ob->pages);
		if (req->status == -ENOSPC ||
		    (!req->status && rc_cost(z->pool, len) >= rc_cost(z->pool, ob->len))) {
			incomp[o] = true;
			zb_stat_add(z, ZBS_RECOMP_INCOMP, ob->pages);
			continue;
		}
		if (req->status) {
			/* failed: the object stays as it is */
			zb_comp_error(z, req->status);
			continue;
		}
		if (a->threshold && len / ob->pages >= a->threshold)
			continue;	/* not small enough */
		err = zb_store_recompressed(z, ob->index, ob->pages,
					    rc->out + ob->first * PAGE_SIZE, len, rc->keep_idle);
		if (err == -ENOMEM)
			ret = err;
		if (err)
			continue;	/* -ESTALE: changed since; nothing stored */
		zb_stat_add(z, ZBS_RECOMP_DONE, ob->pages);
		zb_stat_add(z, ZBS_RECOMP_SAVED, ob->len - len);
	}
	rc_release(z, rc, incomp);
	return ret;
}

/*
 * This task's CPU time, ns. Its batches run on it (ZBATCH_KF_SUBMITTER:
 * no engine time is theirs). The count is only as fresh as the
 * scheduler's last update, so it is read as a chain (rc_charge()): a
 * stale reading moves time to the next charge, never loses it.
 */
static u64 rc_cpu_now(void)
{
	return READ_ONCE(current->se.sum_exec_runtime);
}

/* Charge the CPU time since *@last to recomp_stat; the ns charged. */
static u64 rc_charge(struct zb_swapdev *z, u64 *last)
{
	u64 now = rc_cpu_now(), ns = now - *last;

	*last = now;
	zb_stat_add(z, ZBS_RECOMP_CPU_NS, ns);
	return ns;
}

/*
 * One batch from *@index on. Under init_lock (read) and rc.run, disksize
 * set, a secondary codec. Return: 0; -ENOMEM; -EIO when a chosen page
 * could not be read (the batch's pages stay as they were, *@index is
 * past them: the caller may go on).
 */
static int rc_batch(struct zb_swapdev *z, struct zb_rc *rc, unsigned long *index,
		    struct zb_rc_args *a)
{
	int ret;

	rc_choose(z, rc, index, a);
	if (!rc->n)
		return 0;
	ret = zb_read_chosen(z, rc->io, rc->index, rc->buf, rc->pages);
	if (ret) {
		rc_release(z, rc, NULL);	/* the pages are as they were */
		return -EIO;
	}
	rc_compress(z, rc);
	return rc_commit(z, rc, a);
}

/* ---- the background thread ---- */

/* The thread's CPU account: idle time still owed, the last CPU reading. */
struct zb_rc_pace {
	u64 owed;
	u64 last;
};

/*
 * Charge what the thread ran since the last charge, owe the idle time
 * that keeps it within @budget percent of a CPU, and sleep it off in
 * whole jiffies (what is left is owed after the next batch). A new
 * budget or interval (rc.kick) ends the debt: it applies from now.
 */
static void rc_pace(struct zb_swapdev *z, struct zb_rc_pace *p, unsigned int budget)
{
	u64 ns = rc_charge(z, &p->last);
	unsigned long j;

	p->owed += div_u64(ns * (100 - budget), budget);
	if (xchg(&z->rc.kick, 0))
		p->owed = 0;
	j = nsecs_to_jiffies(p->owed);
	if (!j)
		return;
	p->owed -= min_t(u64, p->owed, jiffies_to_nsecs(j));
	wait_event_freezable_timeout(z->rc.wait, kthread_should_stop() ||
				     READ_ONCE(z->rc.kick), j);
	if (xchg(&z->rc.kick, 0))
		p->owed = 0;
}

/*
 * One pass: recompress the pages not written or read for an interval
 * (by their times: the idle marks are the operator's), a batch at a time
 * within the budget (the locks let go between batches, so that the
 * operator's "recompress" and the device's configuration wait a batch at
 * most; the freezer may take the thread there).
 */
static void rc_pass(struct zb_swapdev *z, struct zb_rc_pace *p)
{
	struct zb_rc_args a = {
		.max_pages = U64_MAX,
		.age = READ_ONCE(z->rc.interval),
		.now = zb_slot_now(),
	};
	unsigned long index = 0;

	while (!kthread_should_stop()) {
		struct zb_rc *rc;
		unsigned int budget = READ_ONCE(z->rc.budget);
		int ret;

		/*
		 * An operator's recompress runs: the pass waits for it where
		 * it is (freezable; the run does the work, and the pass goes
		 * on past it after). A configuration writer waits for a
		 * writeback's run: the thread does not queue behind it
		 * (unfreezable, unstoppable for the run's length): the pass
		 * ends.
		 */
		if (atomic_read(&z->rc.writers)) {
			wait_event_freezable(z->rc.wait, kthread_should_stop() ||
					     !atomic_read(&z->rc.writers));
			continue;
		}
		if (!down_read_trylock(&z->init_lock))
			break;
		if (!z->disksize || z->codec2 < 0 || !budget || index >= z->nr_pages) {
			up_read(&z->init_lock);
			break;
		}
		/* a writer's batch running (its run was not yet counted): ends */
		if (!mutex_trylock(&z->rc.run)) {
			up_read(&z->init_lock);
			break;
		}
		/* short of memory: ends below (the next pass tries again) */
		rc = rc_get(z, true);
		ret = rc ? rc_batch(z, rc, &index, &a) : -ENOMEM;
		mutex_unlock(&z->rc.run);
		up_read(&z->init_lock);
		rc_pace(z, p, budget);
		if (ret == -ENOMEM)
			break;		/* the next pass; a read error skips its batch */
		try_to_freeze();
	}
}

/*
 * A pass every recomp_interval seconds after the end of the previous
 * (the first an interval after the start); a new interval counts from
 * there at once (recomp_interval_store() wakes the thread).
 */
static int rc_thread(void *data)
{
	struct zb_swapdev *z = data;
	struct zb_rc_pace p = { .last = rc_cpu_now() };
	unsigned long last = jiffies;

	set_freezable();
	set_user_nice(current, MAX_NICE);
	while (!kthread_should_stop()) {
		long left = (long)(last + READ_ONCE(z->rc.interval) * HZ - jiffies);

		if (left > 0) {
			wait_event_freezable_timeout(z->rc.wait, kthread_should_stop() ||
						     READ_ONCE(z->rc.kick), left);
			WRITE_ONCE(z->rc.kick, 0);
			continue;
		}
		rc_pass(z, &p);
		last = jiffies;
	}
	return 0;
}

/* Under rc.lock: a thread while the budget is set, none while it is 0. */
static int rc_thread_update(struct zb_swapdev *z)
{
	struct task_struct *t;

	lockdep_assert_held(&z->rc.lock);
	if (!z->rc.budget && z->rc.thread) {
		kthread_stop(z->rc.thread);
		z->rc.thread = NULL;
	} else if (z->rc.budget && !z->rc.thread) {
		t = kthread_run(rc_thread, z, "zbatchswap%d-rc", z->id);
		if (IS_ERR(t))
			return PTR_ERR(t);
		z->rc.thread = t;
	}
	return 0;
}

/* With the device (zb_add()): no secondary codec, no background. */
void zb_rc_init(struct zb_swapdev *z)
{
	z->codec2 = -1;
	mutex_init(&z->rc.lock);
	mutex_init(&z->rc.run);
	atomic_set(&z->rc.writers, 0);
	init_waitqueue_head(&z->rc.wait);
	z->rc.interval = ZB_RC_INTERVAL;
}

/* The device is going (zb_remove(), its attributes gone): stop the thread. */
void zb_rc_stop(struct zb_swapdev *z)
{
	mutex_lock(&z->rc.lock);
	z->rc.budget = 0;
	rc_thread_update(z);
	mutex_unlock(&z->rc.lock);
}

/* ---- sysfs ---- */

/* zram's: "#1: deflate lz4 [zstd] lzo", the secondary codec chosen; "" if none. */
static ssize_t recomp_algorithm_show(struct device *d, struct device_attribute *a,
				     char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned int c;
	ssize_t n = 0;

	down_read(&z->init_lock);
	if (z->codec2 >= 0) {
		n = sysfs_emit(buf, "#1:");
		for (c = ZBATCH_CODEC_DEFAULT + 1; c < ZBATCH_CODEC_NR; c++)
			n += sysfs_emit_at(buf, n, c == z->codec2 ? " [%s]" : " %s",
					   zbatch_codec_name(c));
		n += sysfs_emit_at(buf, n, "\n");
	}
	up_read(&z->init_lock);
	return n;
}

/*
 * "algo=NAME [priority=1] [level=N]", before disksize (as zram's): the
 * secondary codec (one: priority 1; zram's 2 and 3 are refused) and its
 * level (also settable by algorithm_params with priority=1).
 */
static ssize_t recomp_algorithm_store(struct device *d, struct device_attribute *a,
				      const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	char *args, *param, *val, *copy;
	int codec = -1, prio = 1, level = 0, ret = 0;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(strim(copy));
	while (*args && !ret) {
		args = next_arg(args, &param, &val);
		if (!val || !*val)
			ret = -EINVAL;
		else if (!strcmp(param, "algo"))
			ret = min(codec = zbatch_codec_by_name(val), 0);
		else if (!strcmp(param, "priority"))
			ret = kstrtoint(val, 10, &prio) ?: (prio == 1 ? 0 : -EINVAL);
		else if (!strcmp(param, "level"))
			ret = kstrtoint(val, 10, &level);
		else
			ret = -EINVAL;
	}
	kfree(copy);
	if (ret)
		return ret;
	if (codec <= 0)
		return -EINVAL;	/* no codec named, or "default" */
	down_write(&z->init_lock);
	if (z->disksize) {
		ret = -EBUSY;
		goto out;
	}
	ret = zbatch_codec_level_check(codec, level, z->unit_pages * PAGE_SIZE);
	if (ret)
		goto out;
	z->codec2 = codec;
	z->level2 = level;
out:
	up_write(&z->init_lock);
	return ret ?: len;
}

/*
 * zram's: "type=idle|huge|huge_idle [max_pages=N] [threshold=N]
 * [algo=NAME] [priority=1]"; without type, every page in memory.
 * Runs in the writer, unbudgeted; waits for a background batch.
 */
static ssize_t recompress_store(struct device *d, struct device_attribute *attr,
				const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	struct zb_rc_args a = { .max_pages = U64_MAX };
	char *args, *param, *val, *copy;
	int codec = -1, prio = 1, ret = 0;
	unsigned long index = 0;
	struct zb_rc *rc;
	bool eio = false;
	u64 last;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(strim(copy));
	while (*args && !ret) {
		args = next_arg(args, &param, &val);
		if (!val || !*val) {
			ret = -EINVAL;
		} else if (!strcmp(param, "type")) {
			if (!strcmp(val, "idle"))
				a.mode = ZB_WB_IDLE;
			else if (!strcmp(val, "huge"))
				a.mode = ZB_WB_HUGE;
			else if (!strcmp(val, "huge_idle"))
				a.mode = ZB_WB_IDLE | ZB_WB_HUGE;
			else
				ret = -EINVAL;
		} else if (!strcmp(param, "max_pages")) {
			ret = kstrtou64(val, 10, &a.max_pages);
		} else if (!strcmp(param, "threshold")) {
			ret = kstrtouint(val, 10, &a.threshold);
		} else if (!strcmp(param, "algo")) {
			ret = min(codec = zbatch_codec_by_name(val), 0);
		} else if (!strcmp(param, "priority")) {
			ret = kstrtoint(val, 10, &prio) ?: (prio == 1 ? 0 : -EINVAL);
		} else {
			ret = -EINVAL;
		}
	}
	kfree(copy);
	if (ret)
		return ret;
	if (a.threshold >= PAGE_SIZE)
		return -EINVAL;
	/* a writeback's run may hold a configuration writer, and so this */
	if (down_read_interruptible(&z->init_lock))
		return -ERESTARTSYS;
	if (!z->disksize) {
		ret = -EINVAL;
		goto out;
	}
	if (z->codec2 < 0) {
		ret = -ENODEV;	/* no secondary codec: recomp_algorithm */
		goto out;
	}
	if (codec >= 0 && codec != z->codec2) {
		ret = -EINVAL;	/* not the secondary codec */
		goto out;
	}
	up_read(&z->init_lock);
	/*
	 * A batch at a time under init_lock (read; disksize, once set, stays)
	 * and rc.run, so that configuration writers and the thread wait a
	 * batch at most; the thread gives way while a writer runs (writers).
	 * Its waits are interruptible (a signal restarts the write); the run
	 * ends between batches as zb_ended() says (what is recompressed stays
	 * so), or when the device is being removed (claim).
	 */
	atomic_inc(&z->rc.writers);
	last = rc_cpu_now();
	while (!ret && index < z->nr_pages && a.max_pages) {
		if (READ_ONCE(z->claim)) {
			ret = -ENODEV;
			break;
		}
		if (down_read_interruptible(&z->init_lock)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (mutex_lock_interruptible(&z->rc.run)) {
			up_read(&z->init_lock);
			ret = -ERESTARTSYS;
			break;
		}
		rc = rc_get(z, false);
		ret = rc ? rc_batch(z, rc, &index, &a) : -ENOMEM;
		mutex_unlock(&z->rc.run);
		up_read(&z->init_lock);
		if (ret == -EIO) {
			eio = true;	/* those pages stay as they were: on */
			ret = 0;
		}
		if (!ret)
			ret = zb_ended();
		cond_resched();
	}
	rc_charge(z, &last);
	if (atomic_dec_and_test(&z->rc.writers))
		wake_up(&z->rc.wait);	/* the thread's pass goes on */
	if (!ret && eio)
		ret = -EIO;
	return ret ?: len;
out:
	up_read(&z->init_lock);
	return ret;
}

/* Percent of one CPU the background thread may take; 0: no thread. */
static ssize_t recomp_budget_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_z(d)->rc.budget));
}

static ssize_t recomp_budget_store(struct device *d, struct device_attribute *a,
				   const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned int pct;
	int ret = kstrtouint(buf, 10, &pct);

	if (ret)
		return ret;
	if (pct > 100)
		return -ERANGE;
	down_read(&z->init_lock);
	ret = pct && z->codec2 < 0 ? -ENODEV : 0;	/* recomp_algorithm first */
	up_read(&z->init_lock);
	if (ret)
		return ret;
	mutex_lock(&z->rc.lock);
	WRITE_ONCE(z->rc.budget, pct);
	ret = rc_thread_update(z);
	if (ret)
		WRITE_ONCE(z->rc.budget, 0);
	mutex_unlock(&z->rc.lock);
	/* a thread sleeping off the old budget's debt: the new one from now */
	WRITE_ONCE(z->rc.kick, 1);
	wake_up(&z->rc.wait);
	return ret ?: len;
}

/* Seconds between the thread's passes: the least age of what it recompresses. */
static ssize_t recomp_interval_show(struct device *d, struct device_attribute *a,
				    char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_z(d)->rc.interval));
}

static ssize_t recomp_interval_store(struct device *d, struct device_attribute *a,
				     const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned int s;
	int ret = kstrtouint(buf, 10, &s);

	if (ret)
		return ret;
	if (!s || s > ZB_RC_INTERVAL_MAX)
		return -ERANGE;
	WRITE_ONCE(z->rc.interval, s);
	WRITE_ONCE(z->rc.kick, 1);
	wake_up(&z->rc.wait);
	return len;
}

/*
 * mm_stat-style: pages stored with the secondary codec now; pages
 * recompression tried, stored recompressed, found incompressible (ever);
 * bytes it saved (ever); CPU it took, ns (the thread's and the writers'
 * of recompress: its batches run on them, not on the engines).
 */
static ssize_t recomp_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);

	return sysfs_emit(buf, "%8lld %8lld %8lld %8lld %8lld %8lld\n",
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_PAGES]),
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_TRIED]),
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_DONE]),
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_INCOMP]),
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_SAVED]),
			  (s64)atomic64_read(&z->stats[ZBS_RECOMP_CPU_NS]));
}

/* Listed in swapdev.c's attribute group, the device's "zbatch" directory. */
DEVICE_ATTR_RW(recomp_algorithm);
DEVICE_ATTR_WO(recompress);
DEVICE_ATTR_RW(recomp_budget);
DEVICE_ATTR_RW(recomp_interval);
DEVICE_ATTR_RO(recomp_stat);
