// SPDX-License-Identifier: GPL-2.0
/*
 * Writeback: the swap device's pages moved to a backing block device, as
 * zram's (CONFIG_ZRAM_WRITEBACK) and with its interface, under
 * /sys/block/zbatchswapN/zbatch/: backing_dev, idle, writeback,
 * writeback_limit, writeback_limit_enable, bd_stat
 * (Documentation/ABI/zbatch, Documentation/admin-guide.md: Writeback).
 *
 * A page written back is stored uncompressed in one block (a page) of the
 * backing device, and read from there (zb_bd_reads_run()), transparently.
 * Writeback works in batches: it chooses up to ZB_WB_BATCH pages
 * (zb_slot_wb_choose()), decompresses them as batches on the device's own
 * read path (so on the engines, where the batch is worth handing off),
 * writes them in runs of consecutive blocks, one bio a run, and only then
 * moves each slot to its block, if the slot still holds what was chosen
 * (zb_slot_wb_commit()). A page whose write failed stays in memory,
 * counted (bd_stat, unit_stat's writeback_failed): swap loses nothing.
 *
 * It runs where the operator writes "writeback", never in reclaim. Lock
 * order (locks.h): a device's init_lock (read), then bd.lock, then a
 * stream's lock (the reads), then slot locks; synchronize_srcu() under
 * init_lock (read) and bd.lock, holding no stream.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "swapdev.h"

/* Pages one writeback batch chooses, reads and writes (256 KiB). */
#define ZB_WB_BATCH	64
static_assert(ZB_WB_BATCH >= ZB_UNIT_MAX_PAGES);	/* a batch takes any unit */
/* The largest device's pages (disksize_store()): bitmap ops take an int. */
#define ZB_BD_MAX_BLOCKS	(1UL << (40 - PAGE_SHIFT))

/* debugfs fault_bd_read_delay_ms: a read's I/O starts N ms late (0: not) */
unsigned int zb_fault_bd_read_delay_ms;

/* Reads of written-back pages, in a worker that may run in reclaim. */
static struct workqueue_struct *zb_bd_wq;

/*
 * A read chained to the bio being read: its claim on the block
 * (@srcu_idx, taken under the slot's lock), what it completes. From
 * zb_bd_bioset, whose rescuer keeps allocations inside submit_bio() from
 * waiting on bios queued there.
 */
struct zb_bd_child {
	struct zb_swapdev *z;
	struct bio *parent;
	int srcu_idx;
	struct bio bio;			/* last: the bio_set's front pad is the rest */
};

static struct bio_set zb_bd_bioset;

int zb_bd_wq_create(void)
{
	int ret = bioset_init(&zb_bd_bioset, ZB_BD_READS,
			      offsetof(struct zb_bd_child, bio),
			      BIOSET_NEED_BVECS | BIOSET_NEED_RESCUER);

	if (ret)
		return ret;
	zb_bd_wq = alloc_workqueue("zbatch_bd", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!zb_bd_wq) {
		bioset_exit(&zb_bd_bioset);
		return -ENOMEM;
	}
	return 0;
}

void zb_bd_wq_destroy(void)
{
	destroy_workqueue(zb_bd_wq);
	bioset_exit(&zb_bd_bioset);
}

static struct zb_swapdev *dev_z(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

/* With the device (zb_add()): no backing device yet. */
int zb_bd_init(struct zb_swapdev *z)
{
	mutex_init(&z->bd.lock);
	spin_lock_init(&z->bd.limit_lock);
	return init_srcu_struct(&z->bd.srcu);
}

static void backing_close(struct zb_backing *bd)
{
	if (!bd->file)
		return;
	bdev_fput(bd->file);
	kfree(bd->path);
	kvfree(bd->map);
	kvfree(bd->stale);
	kvfree(bd->gone);
	bd->file = NULL;
	bd->path = NULL;
	bd->bdev = NULL;
	bd->map = NULL;
	bd->stale = NULL;
	bd->gone = NULL;
	bd->nr_blocks = 0;
}

/* The device is going (zb_remove()), every slot freed: no I/O left. */
void zb_bd_destroy(struct zb_swapdev *z)
{
	backing_close(&z->bd);
	cleanup_srcu_struct(&z->bd.srcu);
}

/* Under the lock of the slot that held @block. */
void zb_bd_free(struct zb_swapdev *z, unsigned long block)
{
	if (WARN_ON_ONCE(block >= z->bd.nr_blocks))
		return;
	set_bit(block, z->bd.stale);
	atomic_long_inc(&z->bd.nr_stale);
	zb_stat_add(z, ZBS_BD_COUNT, -1);
}

/*
 * Stale blocks become free once no read that could have found one is in
 * flight. Under bd.lock, holding no stream.
 */
static void blocks_recycle(struct zb_backing *bd)
{
	unsigned long nr = bd->nr_blocks, i;

	lockdep_assert_held(&bd->lock);
	if (!atomic_long_read(&bd->nr_stale))
		return;		/* no scan of the bitmaps for nothing */
	bitmap_zero(bd->gone, nr);
	for_each_set_bit(i, bd->stale, nr)
		if (test_and_clear_bit(i, bd->stale)) {
			__set_bit(i, bd->gone);
			atomic_long_dec(&bd->nr_stale);
		}
	synchronize_srcu(&bd->srcu);
	bitmap_andnot(bd->map, bd->map, bd->gone, nr);
	bd->used -= bitmap_weight(bd->gone, nr);
}

/* A free block (the caller knows there is one), next fit after the last. */
static unsigned long block_alloc(struct zb_backing *bd)
{
	unsigned long b;

	lockdep_assert_held(&bd->lock);
	b = find_next_zero_bit(bd->map, bd->nr_blocks, bd->next);
	if (b >= bd->nr_blocks)
		b = find_first_zero_bit(bd->map, bd->nr_blocks);
	__set_bit(b, bd->map);
	bd->used++;
	bd->next = b + 1;
	return b;
}

/* A block that no slot ever named: free at once. */
static void block_unused(struct zb_backing *bd, unsigned long b)
{
	lockdep_assert_held(&bd->lock);
	__clear_bit(b, bd->map);
	bd->used--;
}

/* ---- reads of written-back pages ---- */

/*
 * Under the lock of the slot that names @block (read_region()): read it
 * into @dst with the read's other blocks (@rd has room: the caller
 * checked). The read's claim on the block is taken here, under the
 * slot's lock, so that any writeback that frees the block later waits
 * for it (a claim taken after the lock, even inside another section,
 * could land in a grace period that does not wait for it); it is given
 * back when the block has been read (or the read dropped).
 */
void zb_bd_read_add(struct zb_swapdev *z, struct zb_bd_reads *rd, unsigned long block,
		    u8 *dst)
{
	/* a bio's page or the bounce page: never writeback's vmalloc buffer */
	WARN_ON_ONCE(is_vmalloc_addr(dst));
	rd->z = z;
	rd->block[rd->n] = block;
	rd->dst[rd->n] = dst;
	rd->srcu_idx[rd->n] = srcu_down_read(&z->bd.srcu);
	rd->n++;
}

/* A test's window between a read's claim on a block and its I/O. */
static void fault_delay(void)
{
	unsigned int ms = READ_ONCE(zb_fault_bd_read_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * The reads that need a copy after (the bounce page: one at a time), one
 * after another on a bio of the worker's stack, as zram's sync read: no
 * allocation, and none on the way recurses into I/O (memalloc_noio):
 * the backing driver's may not swap out to the device whose read this is.
 */
static void bd_reads_work(struct work_struct *work)
{
	struct zb_bd_reads *rd = container_of(work, struct zb_bd_reads, work);
	unsigned int i, noio = memalloc_noio_save();

	fault_delay();
	rd->err = 0;
	for (i = 0; i < rd->n; i++) {
		struct bio_vec bv;
		struct bio bio;
		int err;

		bio_init(&bio, rd->z->bd.bdev, &bv, 1, REQ_OP_READ);
		bio.bi_iter.bi_sector = rd->block[i] << (PAGE_SHIFT - SECTOR_SHIFT);
		__bio_add_page(&bio, virt_to_page(rd->dst[i]), PAGE_SIZE,
			       offset_in_page(rd->dst[i]));
		err = submit_bio_wait(&bio);
		bio_uninit(&bio);
		zb_stat_add(rd->z, err ? ZBS_BD_READ_FAILED : ZBS_BD_READS, 1);
		rd->err = rd->err ?: err;
	}
	memalloc_noio_restore(noio);
}

/*
 * A chained read done: its claim given back, then the parent's share of
 * it completed; nothing of the module runs after that but the return
 * (the parent's waiter may then remove the device and unload zbatch;
 * zram's bio_chain() leaves the same instruction or two).
 */
static void bd_child_end(struct bio *bio)
{
	struct zb_bd_child *c = container_of(bio, struct zb_bd_child, bio);
	struct bio *parent = c->parent;
	struct zb_swapdev *z = c->z;

	if (bio->bi_status && !parent->bi_status)
		parent->bi_status = bio->bi_status;
	zb_stat_add(z, bio->bi_status ? ZBS_BD_READ_FAILED : ZBS_BD_READS, 1);
	srcu_up_read(&z->bd.srcu, c->srcu_idx);
	bio_put(bio);
	bio_endio(parent);
}

/*
 * Read entry @i of @rd (block, memory, claim) by a bio chained to
 * rd->parent, with the parent's flags and priority (as zram's).
 */
static void bd_read_chained(struct zb_bd_reads *rd, unsigned int i)
{
	struct bio *parent = rd->parent;
	struct zb_swapdev *z = rd->z;
	struct zb_bd_child *c;
	struct bio *bio;

	bio = bio_alloc_bioset(z->bd.bdev, 1, parent->bi_opf, GFP_NOIO, &zb_bd_bioset);
	c = container_of(bio, struct zb_bd_child, bio);
	c->z = z;
	c->parent = parent;
	c->srcu_idx = rd->srcu_idx[i];		/* the claim goes with the read */
	bio->bi_ioprio = parent->bi_ioprio;
	bio->bi_iter.bi_sector = rd->block[i] << (PAGE_SHIFT - SECTOR_SHIFT);
	__bio_add_page(bio, virt_to_page(rd->dst[i]), PAGE_SIZE, offset_in_page(rd->dst[i]));
	bio->bi_end_io = bd_child_end;
	bio_inc_remaining(parent);
	fault_delay();
	submit_bio(bio);
}

/*
 * Do the reads gathered: those into the bio's own memory chained to it
 * (done once it completes), the others now. Leaves @rd empty. Return: 0
 * or the error of a read done now.
 */
int zb_bd_reads_run(struct zb_bd_reads *rd)
{
	struct zb_swapdev *z = rd->z;
	unsigned int i, n = 0;
	int err = 0;

	if (!rd->n)
		return 0;
	for (i = 0; i < rd->n; i++) {
		if (rd->parent && rd->dst[i] != rd->bounce) {
			bd_read_chained(rd, i);
			continue;
		}
		rd->block[n] = rd->block[i];
		rd->dst[n] = rd->dst[i];
		rd->srcu_idx[n++] = rd->srcu_idx[i];
	}
	rd->n = n;
	if (n) {
		INIT_WORK(&rd->work, bd_reads_work);
		queue_work(zb_bd_wq, &rd->work);
		flush_work(&rd->work);
		err = rd->err;
		for (i = 0; i < n; i++)
			srcu_up_read(&z->bd.srcu, rd->srcu_idx[i]);
	}
	rd->n = 0;
	return err;
}

/* Forget the reads gathered (the bio failed before they were due). */
void zb_bd_reads_drop(struct zb_bd_reads *rd)
{
	unsigned int i;

	for (i = 0; i < rd->n; i++)
		srcu_up_read(&rd->z->bd.srcu, rd->srcu_idx[i]);
	rd->n = 0;
}

/* ---- writeback ---- */

/* What a writeback batch holds: the pages chosen and their copies. */
struct zb_wb {
	unsigned int n;
	unsigned long index[ZB_WB_BATCH];
	unsigned long block[ZB_WB_BATCH];
	int err[ZB_WB_BATCH];
	u8 *buf[ZB_WB_BATCH];		/* each a page, from one allocation */
	u8 *mem;
	/* wb_write()'s: each bio's pages; in flight, their end */
	struct zb_wb_io {
		struct zb_wb *wb;
		unsigned int first, end;
	} io[ZB_WB_BATCH];
	atomic_t pending;
	struct completion done;
};

/* Pages writeback may still write: the limit, or all when it is off. */
static u64 wb_allowed(struct zb_backing *bd)
{
	u64 n;

	spin_lock(&bd->limit_lock);
	n = bd->limit_on ? bd->limit : U64_MAX;
	spin_unlock(&bd->limit_lock);
	return n;
}

static void wb_charge(struct zb_backing *bd, u64 pages)
{
	spin_lock(&bd->limit_lock);
	if (bd->limit_on)
		bd->limit -= min(bd->limit, pages);
	spin_unlock(&bd->limit_lock);
}

/*
 * Under the slot locks of region [@first, @last): its pages writeback
 * takes by @mode, a bit each. A unit's pages go together or not at all:
 * a unit's memory is freed only when its last page leaves it, so pages
 * written back while another stays would free nothing (by "idle" or
 * "huge"; one page asked for by page_index goes alone).
 */
static unsigned long wb_region_fits(struct zb_swapdev *z, unsigned long first,
				    unsigned long last, unsigned int mode)
{
	unsigned long i, fits = 0, units = 0, unit_fits = 0;
	bool unit;

	for (i = first; i < last; i++) {
		bool f = zb_slot_wb_fits(z, i, mode, &unit);

		units |= (unsigned long)unit << (i - first);
		fits |= (unsigned long)f << (i - first);
		unit_fits |= (unsigned long)(f && unit) << (i - first);
	}
	if (mode && unit_fits != units)
		fits &= ~units;		/* some of the unit stays */
	return fits;
}

/*
 * Whether writeback would take a page of [@index, @end) by @mode: when
 * no block is left, that is what makes the run's end -ENOSPC, not 0.
 */
static bool wb_any_left(struct zb_swapdev *z, unsigned long index, unsigned long end,
			unsigned int mode)
{
	while (index < end) {
		unsigned long last, fits;

		index = zb_region_next(z, index, end);	/* past empty slots */
		if (index >= end)
			break;
		last = min(end, round_down(index, z->unit_pages) + z->unit_pages);
		zb_slots_lock(z, index, last - index);
		fits = wb_region_fits(z, index, last, mode);
		zb_slots_unlock(z, index, last - index);
		if (fits)
			return true;
		index = last;
		cond_resched();
	}
	return false;
}

/*
 * Choose up to @max pages from *@index on, a unit-sized region at a time
 * (its slots locked together, as a unit's writer locks them), so that a
 * unit is decompressed once. A unit's pages go together
 * (wb_region_fits()), but for the end of the allowance (@cut: @max is
 * what the limit still allows): a batch that cannot take a whole region
 * takes what it can of it. *@index moves past the regions looked at; a region that
 * does not fit the batch waits for the next (without @cut, when the
 * batch is empty, the blocks left cannot hold it: *@index moves only
 * past the empty slots before it).
 */
static void wb_choose(struct zb_swapdev *z, struct zb_wb *wb, unsigned long *index,
		      unsigned long end, unsigned int mode, unsigned int max, bool cut)
{
	while (*index < end && wb->n < max) {
		unsigned long i, first, last, fits;
		unsigned int k;

		*index = first = zb_region_next(z, *index, end);	/* past empty slots */
		if (first >= end)
			break;		/* nothing left */
		last = min(end, round_down(first, z->unit_pages) + z->unit_pages);
		zb_slots_lock(z, first, last - first);
		fits = wb_region_fits(z, first, last, mode);
		k = hweight_long(fits);
		if (k > max - wb->n && (wb->n || !cut)) {
			zb_slots_unlock(z, first, last - first);
			return;			/* the next batch takes it, or nothing can */
		}
		for_each_set_bit(i, &fits, last - first) {
			if (wb->n == max)
				break;
			zb_slot_wb_choose(z, first + i);
			wb->index[wb->n++] = first + i;
		}
		zb_slots_unlock(z, first, last - first);
		*index = last;
		cond_resched();
	}
}

/* A write of wb_write()'s: the last to end wakes the writer. */
/*
 * A bio's outcome for each of its pages, and the bio back to fs_bio_set
 * now: a writer that kept its ended bios until the batch's end could wait
 * in mempool_alloc() for its own (the pool's reserve is 2 bios).
 */
static void wb_end_io(struct bio *bio)
{
	struct zb_wb_io *r = bio->bi_private;
	struct zb_wb *wb = r->wb;
	int err = blk_status_to_errno(bio->bi_status);
	unsigned int k;

	for (k = r->first; k < r->end; k++)
		wb->err[k] = err;
	bio_put(bio);
	if (atomic_dec_and_test(&wb->pending))
		complete(&wb->done);
}

/*
 * Write the copies, one bio a run of consecutive blocks, all submitted
 * before any is waited for (a batch takes one I/O's time on a disk that
 * serves them together, not 64: a suspend's freezer waits for it);
 * wb->err[] each. The wait cannot be cut short: the bios write from
 * wb's pages.
 */
static void wb_write(struct zb_swapdev *z, struct zb_wb *wb)
{
	unsigned int i = 0, nr = 0, k, written = 0;
	struct blk_plug plug;

	/* one reference of its own until every bio is submitted */
	atomic_set(&wb->pending, 1);
	init_completion(&wb->done);
	blk_start_plug(&plug);
	while (i < wb->n) {
		unsigned int j = i + 1;
		struct bio *bio;

		while (j < wb->n && wb->block[j] == wb->block[j - 1] + 1)
			j++;
		/* fs_bio_set: each bio is submitted before the next is taken */
		bio = bio_alloc(z->bd.bdev, j - i, REQ_OP_WRITE | REQ_SYNC, GFP_NOIO);
		bio->bi_iter.bi_sector = wb->block[i] << (PAGE_SHIFT - SECTOR_SHIFT);
		bio->bi_end_io = wb_end_io;
		wb->io[nr] = (struct zb_wb_io){ wb, i, j };
		bio->bi_private = &wb->io[nr++];
		for (k = i; k < j; k++)
			__bio_add_page(bio, vmalloc_to_page(wb->buf[k]), PAGE_SIZE, 0);
		atomic_inc(&wb->pending);
		submit_bio(bio);
		i = j;
	}
	blk_finish_plug(&plug);
	if (!atomic_dec_and_test(&wb->pending))
		wait_for_completion_io(&wb->done);
	for (k = 0; k < wb->n; k++)
		written += !wb->err[k];
	/* written, as zram counts, kept or not */
	zb_stat_add(z, ZBS_BD_WRITES, written);
}

/*
 * Move what wb_write() wrote to its blocks; a page whose write failed, or
 * that changed since it was chosen, stays as it is. Return: pages moved.
 */
static unsigned int wb_commit(struct zb_swapdev *z, struct zb_wb *wb)
{
	unsigned int i, moved = 0;

	for (i = 0; i < wb->n; i++) {
		bool kept = false;

		zb_slot_lock(z, wb->index[i]);
		if (wb->err[i])
			zb_slot_wb_cancel(z, wb->index[i], true);
		else
			kept = zb_slot_wb_commit(z, wb->index[i], wb->block[i]);
		zb_slot_unlock(z, wb->index[i]);
		if (wb->err[i])
			zb_stat_add(z, ZBS_BD_WRITE_FAILED, 1);
		if (kept) {
			moved++;
			zb_stat_add(z, ZBS_BD_COUNT, 1);
		} else {
			block_unused(&z->bd, wb->block[i]);
		}
	}
	return moved;
}

/* Let go what is chosen, unwritten. */
static void wb_cancel(struct zb_swapdev *z, struct zb_wb *wb)
{
	unsigned int i;

	for (i = 0; i < wb->n; i++) {
		zb_slot_lock(z, wb->index[i]);
		zb_slot_wb_cancel(z, wb->index[i], false);
		zb_slot_unlock(z, wb->index[i]);
		block_unused(&z->bd, wb->block[i]);
	}
	wb->n = 0;
}

/*
 * Write back the pages of [@index, @end) that fit @mode, a batch at a
 * time. Under init_lock (read) and bd.lock. Return: 0; -EIO when the
 * limit is spent or a write failed (the rest is still tried, as zram);
 * -ENOSPC when the backing device is full; -ENOMEM.
 */
static int wb_run(struct zb_swapdev *z, unsigned long index, unsigned long end,
		  unsigned int mode)
{
	struct zb_wb *wb;
	unsigned int i;
	int ret = 0;

	wb = kzalloc(sizeof(*wb), GFP_KERNEL);
	if (!wb)
		return -ENOMEM;
	wb->mem = vmalloc(ZB_WB_BATCH * PAGE_SIZE);
	if (!wb->mem) {
		kfree(wb);
		return -ENOMEM;
	}
	for (i = 0; i < ZB_WB_BATCH; i++)
		wb->buf[i] = wb->mem + i * PAGE_SIZE;
	blocks_recycle(&z->bd);
	while (index < end) {
		u64 allowed = wb_allowed(&z->bd), max;
		unsigned long at = index;
		int err;

		if (!allowed) {
			ret = -EIO;	/* zram's answer at the limit */
			break;
		}
		/* what is written back stays so (zb_ended()) */
		err = zb_ended();
		if (err) {
			ret = ret ?: err;
			break;
		}
		if (READ_ONCE(z->claim)) {
			ret = -ENODEV;	/* the device is being removed */
			break;
		}
		/* short of blocks for a batch: take back what was freed since */
		if (z->bd.nr_blocks - z->bd.used < ZB_WB_BATCH)
			blocks_recycle(&z->bd);
		max = min3(allowed, (u64)ZB_WB_BATCH, (u64)(z->bd.nr_blocks - z->bd.used));
		wb->n = 0;
		if (max)	/* only the limit may cut a unit */
			wb_choose(z, wb, &index, end, mode, max, max == allowed);
		if (!wb->n && index == at) {
			/* the blocks left do not hold what is next, if anything is */
			if (max || wb_any_left(z, index, end, mode))
				ret = -ENOSPC;
			break;
		}
		for (i = 0; i < wb->n; i++) {
			wb->block[i] = block_alloc(&z->bd);
			wb->err[i] = 0;
		}
		if (!wb->n)
			continue;
		err = zb_read_chosen(z, NULL, wb->index, wb->buf, wb->n);
		if (err) {
			/* the page is in memory still, and reads will say so */
			wb_cancel(z, wb);
			ret = err;
			continue;
		}
		wb_write(z, wb);
		for (i = 0; i < wb->n; i++)
			if (wb->err[i])
				ret = -EIO;	/* whatever the disk said: the pages stayed */
		wb_charge(&z->bd, wb_commit(z, wb));
		cond_resched();
	}
	vfree(wb->mem);
	kfree(wb);
	return ret;
}

/* ---- sysfs ---- */
/* A bitmap of @nr blocks, zeroed (up to 32 MiB: kvcalloc()). */
static unsigned long *blocks_bitmap(unsigned long nr)
{
	return kvcalloc(BITS_TO_LONGS(nr), sizeof(long), GFP_KERNEL);
}

static ssize_t backing_dev_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	ssize_t ret;

	down_read(&z->init_lock);
	ret = sysfs_emit(buf, "%s\n", z->bd.file ? z->bd.path : "none");
	up_read(&z->init_lock);
	return ret;
}

/*
 * The backing device, by path, or "none"; before disksize. Opened
 * exclusively; not a zbatch swap device (its writeback would recurse),
 * not empty, blocks no larger than a page.
 */
static ssize_t backing_dev_store(struct device *d, struct device_attribute *a,
				 const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	struct zb_backing *bd = &z->bd;
	unsigned long nr, *map = NULL, *stale = NULL, *gone = NULL;
	struct block_device *bdev;
	struct file *file = NULL;
	char *path, *p;
	int ret;

	path = kstrndup(buf, len, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	p = strim(path);
	memmove(path, p, strlen(p) + 1);
	down_write(&z->init_lock);
	if (z->disksize) {
		ret = -EBUSY;	/* as zram: fixed once the device is set up */
		goto out;
	}
	if (!strcmp(path, "none")) {
		backing_close(bd);
		ret = 0;
		goto out;
	}
	if (!*path) {
		ret = -EINVAL;
		goto out;
	}
	file = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE | BLK_OPEN_EXCL,
				      z, NULL);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		file = NULL;
		goto out;
	}
	bdev = file_bdev(file);
	/* never more blocks than the largest device has pages (1 TiB) */
	nr = min_t(u64, bdev_nr_bytes(bdev) >> PAGE_SHIFT, ZB_BD_MAX_BLOCKS);
	if (zb_is_swapdev(bdev) || !nr || bdev_logical_block_size(bdev) > PAGE_SIZE) {
		pr_warn_ratelimited("zbatchswap%d: backing device %s: %s\n", z->id, path,
				    zb_is_swapdev(bdev) ? "a zbatch swap device" :
				    !nr ? "empty" : "blocks larger than a page");
		ret = -EINVAL;
		goto out;
	}
	map = blocks_bitmap(nr);
	stale = blocks_bitmap(nr);
	gone = blocks_bitmap(nr);
	if (!map || !stale || !gone) {
		ret = -ENOMEM;
		goto out;
	}
	backing_close(bd);
	bd->file = file;
	bd->path = path;
	bd->bdev = bdev;
	bd->nr_blocks = nr;
	bd->map = map;
	bd->stale = stale;
	bd->gone = gone;
	bd->next = 0;
	bd->used = 0;
	atomic_long_set(&bd->nr_stale, 0);
	file = NULL;
	path = NULL;
	map = NULL;
	stale = NULL;
	gone = NULL;
	ret = 0;
out:
	up_write(&z->init_lock);
	if (file)
		bdev_fput(file);
	kvfree(map);
	kvfree(stale);
	kvfree(gone);
	kfree(path);
	return ret ?: len;
}

/*
 * Mark idle every page in memory last written or read at least @age
 * seconds ago (0: every page), and unmark the rest (zb_slot_mark_idle());
 * a mark holds until the page is read or rewritten. Under init_lock
 * (read), disksize set. Return: 0, or -EINTR / -ERESTARTSYS (zb_ended())
 * with the marks partial.
 */
static int zb_mark_idle(struct zb_swapdev *z, u32 age)
{
	u32 now = zb_slot_now();
	unsigned long i, end;
	int ret = 0;

	/* 1024 slots at a time; an empty slot is neither marked nor unmarked */
	for (i = 0; i < z->nr_pages && !ret; i = end) {
		end = min(z->nr_pages, i + 1024);
		for (i = zb_slots_next_stored(z, i, end); i < end;
		     i = zb_slots_next_stored(z, i + 1, end)) {
			zb_slot_lock(z, i);
			zb_slot_mark_idle(z, i, age, now);
			zb_slot_unlock(z, i);
		}
		cond_resched();
		ret = zb_ended();
	}
	return ret;
}

/*
 * "all": every page in memory is idle until it is read or rewritten; a
 * number of seconds N: the pages not written or read in the last N
 * seconds are, the others are not (zram's with
 * CONFIG_ZRAM_TRACK_ENTRY_ACTIME; 0 is "all").
 */
static ssize_t idle_store(struct device *d, struct device_attribute *a,
			  const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	u64 age = 0;
	int ret = 0;

	if (!sysfs_streq(buf, "all")) {
		ret = kstrtou64(buf, 0, &age);	/* as zram's: 0x.. too */
		if (ret)
			return ret;
		/* older than boot time can hold: no page is */
		age = min_t(u64, age, U32_MAX);
	}
	/* another run may hold a configuration writer, and so this */
	if (down_read_interruptible(&z->init_lock))
		return -ERESTARTSYS;
	if (!z->disksize)
		ret = -EINVAL;
	else
		ret = zb_mark_idle(z, age);
	up_read(&z->init_lock);
	return ret ?: len;
}

#define ZB_PAGE_WB_SIG	"page_index="

/*
 * "idle", "huge", "huge_idle" or "page_index=N", as zram's; one at a
 * time per device (EAGAIN while another runs, as zram's).
 */
static ssize_t writeback_store(struct device *d, struct device_attribute *a,
			       const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned long index = 0, end;
	unsigned int mode;
	int ret;

	if (sysfs_streq(buf, "idle"))
		mode = ZB_WB_IDLE;
	else if (sysfs_streq(buf, "huge"))
		mode = ZB_WB_HUGE;
	else if (sysfs_streq(buf, "huge_idle"))
		mode = ZB_WB_IDLE | ZB_WB_HUGE;
	else if (sysfs_streq(buf, "incompressible"))
		mode = ZB_WB_INCOMP;	/* recompression could not shrink them */
	else if (!strncmp(buf, ZB_PAGE_WB_SIG, strlen(ZB_PAGE_WB_SIG)) &&
		 !kstrtoul(buf + strlen(ZB_PAGE_WB_SIG), 10, &index))
		mode = 0;
	else
		return -EINVAL;

	/* another run may hold a configuration writer, and so this */
	if (down_read_interruptible(&z->init_lock))
		return -ERESTARTSYS;
	if (!z->disksize || (!mode && index >= z->nr_pages)) {
		ret = -EINVAL;
		goto out;
	}
	if (!z->bd.file) {
		ret = -ENODEV;
		goto out;
	}
	if (!mutex_trylock(&z->bd.lock)) {
		ret = -EAGAIN;
		goto out;
	}
	end = mode ? z->nr_pages : index + 1;
	ret = wb_run(z, index, end, mode);
	mutex_unlock(&z->bd.lock);
out:
	up_read(&z->init_lock);
	return ret ?: len;
}

/* The limit's two settings, read and written under limit_lock. */
static u64 limit_get(struct zb_backing *bd, bool enable)
{
	u64 v;

	spin_lock(&bd->limit_lock);
	v = enable ? bd->limit_on : bd->limit;
	spin_unlock(&bd->limit_lock);
	return v;
}

static ssize_t limit_set(struct zb_backing *bd, bool enable, const char *buf, size_t len)
{
	bool on = false;
	u64 n = 0;
	int ret = enable ? kstrtobool(buf, &on) : kstrtou64(buf, 10, &n);

	if (ret)
		return ret;
	spin_lock(&bd->limit_lock);
	if (enable)
		bd->limit_on = on;
	else
		bd->limit = n;
	spin_unlock(&bd->limit_lock);
	return len;
}

static ssize_t writeback_limit_enable_show(struct device *d, struct device_attribute *a,
					   char *buf)
{
	return sysfs_emit(buf, "%llu\n", limit_get(&dev_z(d)->bd, true));
}

static ssize_t writeback_limit_enable_store(struct device *d, struct device_attribute *a,
					    const char *buf, size_t len)
{
	return limit_set(&dev_z(d)->bd, true, buf, len);
}

/* In 4 KiB pages, as zram's. */
static ssize_t writeback_limit_show(struct device *d, struct device_attribute *a,
				    char *buf)
{
	return sysfs_emit(buf, "%llu\n", limit_get(&dev_z(d)->bd, false));
}

static ssize_t writeback_limit_store(struct device *d, struct device_attribute *a,
				     const char *buf, size_t len)
{
	return limit_set(&dev_z(d)->bd, false, buf, len);
}

/* As zram's: bd_count bd_reads bd_writes, in 4 KiB pages. */
static ssize_t bd_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);

	return sysfs_emit(buf, "%8lld %8lld %8lld\n",
			  (s64)atomic64_read(&z->stats[ZBS_BD_COUNT]),
			  (s64)atomic64_read(&z->stats[ZBS_BD_READS]),
			  (s64)atomic64_read(&z->stats[ZBS_BD_WRITES]));
}

/* Listed in swapdev.c's attribute group, the device's "zbatch" directory. */
DEVICE_ATTR_RW(backing_dev);
DEVICE_ATTR_WO(idle);
DEVICE_ATTR_WO(writeback);
DEVICE_ATTR_RW(writeback_limit);
DEVICE_ATTR_RW(writeback_limit_enable);
DEVICE_ATTR_RO(bd_stat);
