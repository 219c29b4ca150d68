/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The batched compressed swap device: shared by swapdev.c (the block
 * device, its bios and its control files) and swapdev_store.c (the slot
 * table, multi-page units and their zsmalloc storage). Its locks (a
 * device's init_lock, a stream's lock, the slots' bit locks): lock order
 * in locks.h.
 */
#ifndef _ZBATCH_SWAPDEV_H
#define _ZBATCH_SWAPDEV_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/freezer.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/zbatch.h>

#include "codec.h"

#define ZB_SWAPDEV_MAX		32
#define ZB_UNIT_MAX_PAGES	16	/* 64 KiB units */

/*
 * A unit of @codec is stored as a unit when its stream is at least this
 * much shorter than its pages; else page by page. An lz4 unit half a page,
 * not a whole one: pages that compress to 3-3.5 pages of 4 as a unit
 * store in less that way than alone (their blocks lean on the pages
 * before them; alone most would be huge, raw), storing them page by page
 * compressed most of them a second time, and the unit is read where
 * zsmalloc keeps it. Other codecs a page: their units are read by a copy
 * and a batch where such pages alone would be copied out raw (zstd's
 * swap-in was slower with half a page: design.md, "How an lz4 unit is
 * kept").
 */
#define ZB_UNIT_SAVES(codec)	((codec) == ZBATCH_CODEC_LZ4U ? PAGE_SIZE / 2 : PAGE_SIZE)

/*
 * What the device is built for, and refuses to build without rather than
 * store wrong data: 4 KiB pages (a raw page's size fits a slot's size
 * field, swapdev_store.c: with 64 KiB pages it would set the lock bit and
 * read back as 0 bytes; a unit's pages fit the index field), 64-bit (a
 * same-filled page's word is a u64, and bio pages are reached through
 * the direct map: no highmem), and a kernel where the slot lock, a bit
 * spinlock under which zsmalloc's locks are taken, may nest them (not
 * PREEMPT_RT, where those sleep). Supported and tested: x86-64.
 */
static_assert(PAGE_SIZE == 4096, "zbatch swapdev: units are 4/16/64 KiB of 4 KiB pages");
static_assert(IS_ENABLED(CONFIG_64BIT) && !IS_ENABLED(CONFIG_HIGHMEM),
	      "zbatch swapdev: 64-bit kernels without highmem only");
static_assert(!IS_ENABLED(CONFIG_PREEMPT_RT),
	      "zbatch swapdev: zsmalloc's locks sleep under PREEMPT_RT");

/* One per page of the device; its layout is the store's (swapdev_store.c). */
struct zb_slot;
struct zb_swapdev;

/*
 * A multi-page unit: compressed as one stream, stored as ceil(clen /
 * PAGE_SIZE) zsmalloc objects (zsmalloc takes at most a page per object),
 * at a unit-aligned index; its slots are all set at once. A page leaves
 * its unit when its slot is rewritten, same-filled, discarded or freed,
 * and never comes back: the unit is freed when its last page leaves it.
 */
struct zb_unit {
	atomic_t live;			/* pages of the unit still stored */
	unsigned int nr_pages;
	unsigned int clen;		/* compressed bytes */
	unsigned short nr_handles;
	/*
	 * Its objects are cut between the blocks of an lz4 unit
	 * (ZBATCH_CODEC_LZ4U): each decodes where zsmalloc maps it
	 * (zb_unit_decode()). Otherwise cut every PAGE_SIZE bytes: read
	 * by a copy (zb_unit_copy()).
	 */
	bool blocks;
	unsigned long handle[];
};

enum zb_dev_stat {
	ZBS_ORIG_PAGES,		/* pages stored (not empty) */
	ZBS_COMPR_BYTES,	/* compressed bytes stored (units once) */
	ZBS_SAME_PAGES,
	ZBS_HUGE_PAGES,		/* stored raw: did not compress */
	ZBS_HUGE_PAGES_SINCE,	/* stored raw, ever */
	ZBS_UNITS,		/* units stored now */
	ZBS_UNIT_FALLBACKS,	/* units that did not fit: stored page by page */
	ZBS_FAILED_READS,
	ZBS_FAILED_WRITES,
	ZBS_INVALID_IO,
	ZBS_NOTIFY_FREE,
	ZBS_MISS_FREE,
	ZBS_PARTIAL_READS,	/* reads of part of a unit */
	ZBS_PARTIAL_READ_BYTES,	/* bytes decompressed for them */
	ZBS_PARTIAL_WRITES,	/* writes into a stored unit */
	ZBS_LIMIT_REFUSED,	/* writes refused at mem_limit */
	ZBS_MAX_USED_PAGES,
	ZBS_COMP_ERRORS,	/* compress failed (not -ENOSPC): pages raw, recompressed kept */
	ZBS_DECOMP_REDONE,	/* failed decompress redone on the stream's context */
	ZBS_WRITE_STALLS,	/* stores that needed direct reclaim (zb_reserve()) */
	ZBS_STREAM_WAITS,	/* I/O that waited for its CPU's stream */
	ZBS_DIRECT_READS,	/* objects decompressed straight from zsmalloc */
	ZBS_DIRECT_BIOS,	/* reads of several pages whose batch stayed inline */
	ZBS_UNIT_READS_WHOLE,	/* reads of a stored unit that took it whole */
	ZBS_UNIT_READS_PART,	/* ... and in part */
	ZBS_UNITS_DECLINED,	/* whole units written as pages (units_pay()) */
	ZBS_BD_COUNT,		/* pages on the backing device now */
	ZBS_BD_READS,		/* pages read from it */
	ZBS_BD_WRITES,		/* pages written to it (written back) */
	ZBS_BD_WRITE_FAILED,	/* pages whose writeback failed: kept in memory */
	ZBS_BD_READ_FAILED,	/* reads of written-back pages that failed */
	ZBS_RECOMP_PAGES,	/* pages stored with the secondary codec now */
	ZBS_RECOMP_TRIED,	/* pages recompression compressed again, ever */
	ZBS_RECOMP_DONE,	/* ... and stored so, ever */
	ZBS_RECOMP_INCOMP,	/* ... found incompressible (INCOMP), ever */
	ZBS_RECOMP_SAVED,	/* bytes recompression saved, ever */
	ZBS_RECOMP_CPU_NS,	/* CPU time recompression took, ever */
	ZBS_SECONDARY_READS,	/* objects decompressed with the secondary codec */
	ZBS_FALLBACK_KEPT,	/* pages of unit_fallbacks stored as the unit's attempt said */
	ZBS_RESERVE_MISSES,	/* retried stores whose reserve did not fit them */
	ZBS_NR,
};

/*
 * Writeback's backing block device (swapdev_wb.c), set before disksize
 * and kept until the device is removed. A page written back is stored
 * uncompressed in one block of it (a block is a page), its slot naming
 * the block.
 *
 * Blocks: @map has a bit per block in use or not yet reusable; a slot
 * freed or rewritten gives its block back by setting its bit in @stale
 * (atomic bit ops, under the slot's lock), and stale blocks become free
 * only in writeback, after synchronize_srcu(@srcu): a read claims the
 * block (srcu_down_read()) under the lock of the slot it found written
 * back and gives the claim back once the block has been read, so a
 * block is never reused under a read still in flight.
 *
 * @lock (mutex): one writeback at a time (writeback_store(), which
 * allocates blocks: @map's writers, @next, @used). @limit_lock (spinlock):
 * @limit and @limit_on.
 */
struct zb_backing {
	struct file *file;		/* NULL: none */
	char *path;			/* as the operator named it */
	struct block_device *bdev;
	unsigned long nr_blocks;
	unsigned long *map;
	unsigned long *stale;
	unsigned long *gone;		/* blocks_recycle()'s, under @lock */
	atomic_long_t nr_stale;		/* bits set in @stale */
	unsigned long next;
	unsigned long used;		/* bits set in @map */
	struct srcu_struct srcu;
	struct mutex lock;		/* one writeback; @map, @next, @used */
	spinlock_t limit_lock;		/* @limit, @limit_on */
	bool limit_on;
	u64 limit;			/* pages writeback may still write */
};

/*
 * Recompression (swapdev_recomp.c). @lock (mutex): @thread, and @budget's
 * writers. @run (mutex): one recompression batch at a time (pages a batch
 * chose carry a mark only one batch may own). @budget, @interval, @kick,
 * @writers: read without a lock by the thread.
 */
#define ZB_RC_INTERVAL		60	/* s, the default */
#define ZB_RC_INTERVAL_MAX	86400
struct zb_rc;

struct zb_recomp {
	struct mutex lock;		/* @thread, @budget's writers */
	struct mutex run;		/* one recompression batch at a time */
	/*
	 * Under @run: the batches' buffers and I/O context, from the first
	 * batch (writer's or thread's) to the device's removal.
	 */
	struct zb_rc *buf;
	struct task_struct *thread;	/* the background thread, NULL: none */
	wait_queue_head_t wait;		/* its sleeps; kthread_stop() ends them */
	unsigned int budget;		/* percent of one CPU, 0: no thread */
	unsigned int interval;		/* s between its passes */
	int kick;			/* @interval or @budget changed: the thread looks again */
	atomic_t writers;		/* recompress runs: the thread gives way */
};

/*
 * The reads of written-back pages that a read gathered (read_region()),
 * done by zb_bd_reads_run(). A page read into the bio's own memory is
 * read by a bio chained to @parent, the bio being read (as zram's): it
 * is submitted after ours returns, and @parent completes when it has;
 * nothing waits. A page that needs a copy after (@bounce: a page at a
 * time; or a read with no @parent) is read in a worker, waited for: a
 * read arrives inside submit_bio(), where a bio it submitted itself
 * would wait for it to return. The worker reads with a bio on its own
 * stack: nothing is allocated on the way. @srcu_idx: each
 * read's claim on its block (srcu_down_read() on the backing's @srcu,
 * taken under the slot's lock), held until the block has been read: by
 * the chained bio until it completes, else until the worker is done.
 */
#define ZB_BD_READS	ZB_UNIT_MAX_PAGES
struct zb_bd_reads {
	struct work_struct work;
	struct zb_swapdev *z;
	struct bio *parent;		/* the bio read, NULL: none (writeback) */
	const u8 *bounce;		/* its bounce page, if any */
	unsigned int n;
	int err;
	unsigned long block[ZB_BD_READS];
	u8 *dst[ZB_BD_READS];
	int srcu_idx[ZB_BD_READS];
};

/*
 * A CPU's I/O stream for a device: what a bio's I/O needs (struct zb_io,
 * swapdev.c), NULL while the CPU is down. @lock (mutex) is held for a
 * bio's whole I/O: it protects @io's contents and its presence.
 */
struct zb_stream {
	struct mutex lock;	/* the stream: @io and what it points to */
	struct zb_io *io;
};

struct zb_swapdev {
	struct gendisk *disk;
	int id;
	/*
	 * init_lock (rw_semaphore): writers configure (codec, level, unit,
	 * disksize) and tear down; the configuration is fixed once disksize
	 * is set.
	 */
	struct rw_semaphore init_lock;
	u64 disksize;
	unsigned int codec;
	int level;			/* codec's compression level, 0: default */
	int codec2;			/* secondary codec (recompression), -1: none */
	int level2;			/* its level */
	unsigned int unit_pages;	/* 1, 4 or 16 */
	/*
	 * The codec its streams run: codec, but lz4 units are chained 4 KiB
	 * blocks (ZBATCH_CODEC_LZ4U, codec.c) cut between blocks into
	 * objects (zb_unit.blocks). Set with disksize.
	 */
	unsigned int io_codec;
	unsigned long mem_limit_pages;	/* 0: none */
	unsigned long nr_pages;
	struct zb_slot *slots;
	struct zs_pool *pool;
	/* one I/O stream per CPU up, from disksize on (swapdev.c) */
	struct zb_stream __percpu *streams;
	struct hlist_node cpuhp;
	bool claim;			/* being destroyed: refuse opens */
	/*
	 * Units only while they pay (units_pay()): the share of recent unit
	 * reads that took part of a unit (a moving average, updated without
	 * a lock: a lost update only delays it), how many reads were seen
	 * (up to the few it needs; both start afresh at swapon). unit_adapt:
	 * sysfs, any time.
	 */
	bool unit_adapt;
	int adapt_share;
	atomic_t adapt_seen;
	/*
	 * What a read's copies of objects out of zsmalloc cost, ns per KiB
	 * of the data they hold (zbatch_cost_sample(), sampled in
	 * read_region()): a bio pays them only to hand its batch to engines.
	 */
	unsigned long copy_ns_kib;
	/* writeback to a backing block device (swapdev_wb.c) */
	struct zb_backing bd;
	/* recompression with codec2 (swapdev_recomp.c) */
	struct zb_recomp rc;
	atomic64_t stats[ZBS_NR];
	/* requests per batch of device I/O, write and read */
	atomic64_t batch_hist[2][ZBATCH_MAX_BATCH + 1];
};

/*
 * Whether an operator's long run (writeback, recompress, idle) ends here,
 * between batches, and how: a fatal signal (-EINTR); a suspend's freezer
 * (-ERESTARTSYS: the write is made again after the thaw and takes what
 * is left). Other signals do not end it: a handler's restarts would
 * begin it anew each time, making no progress (zram's runs ignore them).
 */
static inline int zb_ended(void)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	if (signal_pending(current) && freezing(current))
		return -ERESTARTSYS;
	return 0;
}

static inline void zb_stat_add(struct zb_swapdev *z, enum zb_dev_stat s, s64 n)
{
	atomic64_add(n, &z->stats[s]);
}

/* What a slot holds, as a read sees it under the slot's lock. */
enum zb_view_kind {
	ZB_VIEW_EMPTY,		/* never written, discarded or freed: zeros */
	ZB_VIEW_SAME,		/* @word repeated */
	ZB_VIEW_RAW,		/* a page stored as it is */
	ZB_VIEW_PAGE,		/* a page compressed alone, @len bytes */
	ZB_VIEW_UNIT,		/* page @idx of @unit */
	ZB_VIEW_WB,		/* written back: block @word of the backing device */
};

struct zb_view {
	enum zb_view_kind kind;
	bool secondary;		/* PAGE, UNIT: compressed with the secondary codec */
	unsigned int len;
	unsigned int idx;
	unsigned long word;
	const struct zb_unit *unit;
};

/*
 * What one store takes, reserved with direct reclaim after its fast
 * allocation failed (zb_reserve()): the objects for @clen bytes of
 * @pages pages at @index, and a unit's record.
 */
struct zb_reserve {
	unsigned long index;
	unsigned int pages;
	unsigned int clen;		/* 0: nothing reserved */
	bool fallback;			/* zb_put.fallback's: try the unit again */
	unsigned long handle[ZB_UNIT_MAX_PAGES];
	struct zb_unit *unit;
};

/* swapdev_store.c */
int zb_store_init(struct zb_swapdev *z, u64 disksize);
void zb_store_destroy(struct zb_swapdev *z);
void zb_slot_lock(struct zb_swapdev *z, unsigned long index);
bool zb_slot_trylock(struct zb_swapdev *z, unsigned long index);
void zb_slot_unlock(struct zb_swapdev *z, unsigned long index);
/* @n slots from @index, in index order: every multi-slot locker's order. */
void zb_slots_lock(struct zb_swapdev *z, unsigned long index, unsigned int n);
void zb_slots_unlock(struct zb_swapdev *z, unsigned long index, unsigned int n);
/* The first slot from @index on that may hold a page, read unlocked (may sleep). */
unsigned long zb_slots_next_stored(struct zb_swapdev *z, unsigned long index,
				   unsigned long end);
/* Where the next unit-sized region worth locking starts, from @index on. */
unsigned long zb_region_next(struct zb_swapdev *z, unsigned long index, unsigned long end);
/* Under the slot's lock: what it holds; a RAW or PAGE slot's bytes. */
void zb_slot_view(struct zb_swapdev *z, unsigned long index, struct zb_view *v);
void zb_slot_copy(struct zb_swapdev *z, unsigned long index, void *dst);
const void *zb_object_map(struct zb_swapdev *z, unsigned long index,
			  const struct zb_unit *u, unsigned long *h);
void zb_object_unmap(struct zb_swapdev *z, unsigned long h);
/*
 * Under the lock of a slot of @u: its compressed stream, @u->clen bytes
 * (0, or -EIO when a block-cut unit's header does not match its objects).
 */
int zb_unit_copy(struct zb_swapdev *z, const struct zb_unit *u, void *dst);
/*
 * Under the lock of a slot of @u, a block-cut unit (@u->blocks): its
 * pages decompressed into @out (@u->nr_pages pages) object by object,
 * each where zsmalloc maps it. Return: 0, -EIO (a bad header, a block
 * that does not decode).
 */
int zb_unit_decode(struct zb_swapdev *z, const struct zb_unit *u, u8 *out);
/* Free what slot @index holds; under its lock. */
void zb_slot_free(struct zb_swapdev *z, unsigned long index);
void zb_store_same(struct zb_swapdev *z, unsigned long index, unsigned long word);
/*
 * Store one page: @len compressed bytes, or raw when @len == PAGE_SIZE;
 * from @rv, the reserve made for it (zb_reserve_at(), zb_reserve_fits()),
 * if any. Return: 0; -ENOSPC at mem_limit; -EAGAIN when memory is short
 * (reserve it, then store again).
 */
int zb_store_page(struct zb_swapdev *z, unsigned long index, const void *data,
		  unsigned int len, struct zb_reserve *rv);
/* Store @nr_pages pages from @index as one unit of @clen compressed bytes. */
int zb_store_unit(struct zb_swapdev *z, unsigned long index, unsigned int nr_pages,
		  const void *data, unsigned int clen, struct zb_reserve *rv);
int zb_reserve(struct zb_swapdev *z, struct zb_reserve *rv, unsigned long index,
	       unsigned int pages, unsigned int clen);
/* Which of @rvs[0..@nr) was made for a store at slot @index; -1: none. */
int zb_reserve_at(const struct zb_reserve *rvs, unsigned int nr, unsigned long index);
/*
 * Whether the store of @pages pages in @clen bytes may take reserve @rv:
 * the same pages, and room for @clen bytes in as many objects (the same
 * pages compress to the same length with the same codec and executor;
 * another length allocates anew).
 */
bool zb_reserve_fits(const struct zb_reserve *rv, unsigned int pages, unsigned int clen);
void zb_reserve_drop(struct zb_swapdev *z, struct zb_reserve *rv);
/*
 * Writeback's slot states (swapdev_store.c), under the slot's lock:
 * idle (marked by "idle", cleared when the page is read or rewritten);
 * under writeback (chosen, being written; cleared when the slot is freed
 * or rewritten, which is how writeback tells that its copy is stale);
 * written back.
 */
#define ZB_WB_IDLE	BIT(0)	/* only idle pages */
#define ZB_WB_HUGE	BIT(1)	/* only pages stored raw */
#define ZB_WB_INCOMP	BIT(2)	/* only pages recompression could not shrink */
u32 zb_slot_now(void);
bool zb_slot_mark_idle(struct zb_swapdev *z, unsigned long index, u32 age, u32 now);
bool zb_slot_older(struct zb_swapdev *z, unsigned long index, u32 age, u32 now);
void zb_slot_accessed(struct zb_swapdev *z, unsigned long index, u32 now);
bool zb_slot_wb_fits(struct zb_swapdev *z, unsigned long index, unsigned int mode,
		     bool *unit);
void zb_slot_wb_choose(struct zb_swapdev *z, unsigned long index);
bool zb_slot_wb_commit(struct zb_swapdev *z, unsigned long index, unsigned long block);
void zb_slot_wb_cancel(struct zb_swapdev *z, unsigned long index, bool failed);
/* Recompression's (swapdev_recomp.c), likewise; the modes are ZB_WB_*'s. */
bool zb_slot_rc_fits(struct zb_swapdev *z, unsigned long index, unsigned int mode,
		     const struct zb_unit **u, unsigned int *len);
void zb_slot_rc_choose(struct zb_swapdev *z, unsigned long index);
void zb_slot_rc_done(struct zb_swapdev *z, unsigned long index, bool incomp, bool keep_idle);
int zb_store_recompressed(struct zb_swapdev *z, unsigned long index, unsigned int nr_pages,
			  const void *data, unsigned int clen, bool keep_idle);

/* swapdev_wb.c; its attributes sit in the device's "zbatch" directory */
extern struct device_attribute dev_attr_backing_dev, dev_attr_idle, dev_attr_writeback,
	dev_attr_writeback_limit, dev_attr_writeback_limit_enable, dev_attr_bd_stat;
int zb_bd_init(struct zb_swapdev *z);
void zb_bd_destroy(struct zb_swapdev *z);
void zb_bd_free(struct zb_swapdev *z, unsigned long block);
void zb_bd_read_add(struct zb_swapdev *z, struct zb_bd_reads *rd, unsigned long block,
		    u8 *dst);
int zb_bd_reads_run(struct zb_bd_reads *rd);
void zb_bd_reads_drop(struct zb_bd_reads *rd);
int zb_bd_wq_create(void);
void zb_bd_wq_destroy(void);

/* swapdev_recomp.c; its attributes also sit in the "zbatch" directory */
extern struct device_attribute dev_attr_recomp_algorithm, dev_attr_recompress,
	dev_attr_recomp_budget, dev_attr_recomp_interval, dev_attr_recomp_stat;
void zb_rc_init(struct zb_swapdev *z);
void zb_rc_stop(struct zb_swapdev *z);
void zb_rc_destroy(struct zb_swapdev *z);

/* swapdev.c */
bool zb_is_swapdev(struct block_device *bdev);
int zb_read_chosen(struct zb_swapdev *z, struct zb_io *own, const unsigned long *index,
		   u8 *const *dst, unsigned int n);
struct zb_io *zb_io_alloc_own(struct zb_swapdev *z);
void zb_io_free_own(struct zb_io *io);
struct zbatch_ctx *zb_io_ctx(struct zb_io *io);

/* debugfs fault_swap_alloc, fault_bd_read_delay_ms, fault_swap_secondary, fault_swap_comp */
extern unsigned int zb_fault_fast_alloc;
extern unsigned int zb_fault_bd_read_delay_ms;
extern unsigned int zb_fault_secondary;
extern unsigned int zb_fault_comp;
void zb_comp_fault(struct zbatch_req *req);
/* A compression's error (not -ENOSPC, which is data) counted: comp_errors */
void zb_comp_error(struct zb_swapdev *z, int err);
bool zb_page_same_filled(const void *p, unsigned long *word);
bool zb_over_limit(struct zb_swapdev *z);

#endif /* _ZBATCH_SWAPDEV_H */
