// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/zbatchswapN: a compressed RAM block device for swap, as zram, whose
 * I/O goes through the batch core. Swap on a stock 6.12 kernel writes a
 * large folio to a synchronous, non-rotational device as one bio and
 * reads it back whole (mTHP swap-in), so a 64 KiB folio arrives here as
 * 16 pages at once: they are compressed as one batch (4 KiB units: 16
 * requests; 16 KiB units: 4; 64 KiB units: one), and read back as one.
 *
 * Control: reading /sys/kernel/zbatch/swapdev/hot_add creates a device
 * and returns its number; /sys/block/zbatchswapN/zbatch/{codec,unit} set
 * it up, disksize sizes it (and fixes all three); writing N to hot_remove
 * destroys it (EBUSY while open, e.g. swapped on). Each device holds a
 * reference on the module: zbatch cannot be unloaded while one exists.
 *
 * I/O runs in the submitter's context, like zram's (BLK_FEAT_SYNCHRONOUS),
 * on its CPU's stream of the device (struct zb_io: a batch, its requests,
 * a codec context, 128 KiB for compressed data and 64 KiB of scratch, all
 * allocated when the CPU came up for the device); pages are stored in
 * zsmalloc (swapdev_store.c) and the bio is ended once, last. The write
 * path runs in reclaim: under its stream it allocates only without
 * direct reclaim; what that cannot get is reserved after letting the
 * stream go (GFP_NOIO), and a failed reservation or a full pool
 * (mem_limit) fails the write with an I/O error, losing nothing already
 * stored.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/cpuhotplug.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/zbatch.h>
#include <linux/zsmalloc.h>

#include "batch.h"
#include "clock.h"
#include "codec.h"
#include "cost.h"
#include "frontends.h"
#include "stats.h"
#include "swapdev.h"
#include "sysfs.h"

static int zb_major;
/* zb_lock (mutex): the device table, creation and destruction. */
static DEFINE_MUTEX(zb_lock);
static DEFINE_IDR(zb_idr);
static struct kobject *zb_kobj;

/* ---- I/O streams: one per device and CPU, prepared with the device ---- */
#define ZB_WIN		(ZB_UNIT_MAX_PAGES * PAGE_SIZE)	/* data per write batch */
/*
 * Compressed bytes a read gathers for one unit-sized region at most: the
 * unit's stream (half a page less than the unit at least, or it is not
 * stored as one: ZB_UNIT_SAVES()) and each other page of the region
 * compressed alone (less than a page each): under 2 * ZB_WIN, so that an
 * empty context takes any region.
 */
#define ZB_OUT		(2 * ZB_WIN)
#define ZB_IO_REQS	16
/* What read_region()'s "an empty context takes any region" rests on. */
static_assert(ZB_IO_REQS >= ZB_UNIT_MAX_PAGES && ZB_IO_REQS <= ZBATCH_MAX_BATCH);
static_assert(ZB_IO_REQS <= U8_MAX);	/* io_puts() keeps request slots in u8 */
static_assert(ZB_OUT >= (2 * ZB_UNIT_MAX_PAGES - 1) * PAGE_SIZE);
static_assert(ZB_WIN <= ZBATCH_MAX_LEN && ZB_UNIT_MAX_PAGES <= BITS_PER_LONG);

/*
 * What one request's output is for. A write compresses @pages pages from
 * @src for slot @index on. A read decompresses @want bytes into where the
 * request says or, for a unit read in part, into @scratch, then copies
 * each unit page i whose bit is set in @copy to @to[i].
 */
struct zb_item {
	unsigned long index;
	unsigned int pages;
	const u8 *src;
	unsigned int want;
	bool secondary;		/* not in the batch: the secondary codec's, inline */
	u8 *scratch;
	unsigned long copy;
	u8 *to[ZB_UNIT_MAX_PAGES];
};

/*
 * What one bio's I/O needs, all of it allocated when its CPU came up for
 * the device: the batch and its requests, the codec context the
 * submitter runs its share of the batch on (and redoes failures on), and
 * the buffers for compressed data.
 */
struct zb_io {
	struct zbatch_batch batch;
	struct zbatch_req req[ZB_IO_REQS];
	struct zb_item item[ZB_IO_REQS];	/* item[i] says what req[i] is for */
	unsigned int n;		/* requests */
	unsigned int used;	/* bytes of out */
	unsigned int sused;	/* bytes of scratch */
	unsigned int codec;
	int level;		/* of codec, for compress (0: default) */
	int codec2;		/* the secondary codec (recompression), -1: none */
	unsigned int explore;	/* units this stream declined (units_pay()) */
	bool submitter;		/* batches run here, no engines (ZBATCH_KF_SUBMITTER) */
	struct zbatch_ctx ctx;	/* prepared for codec, and codec2 */
	u8 *out;		/* compressed data in or out, ZB_OUT */
	u8 *scratch;		/* units read in part, ZB_WIN */
	struct zb_bd_reads bd;	/* written-back pages to read */
};

static void io_free(struct zb_io *io)
{
	if (!io)
		return;
	zbatch_ctx_free(&io->ctx);
	kvfree(io->out);
	kvfree(io->scratch);
	kfree(io);
}

/*
 * A stream's context decompresses with the secondary codec only (reads
 * of recompressed objects): its workspace for decompression alone (zstd:
 * about 100 KiB instead of 1 MiB a CPU); recompression's own (@own)
 * compresses with it too.
 */
static struct zb_io *io_alloc(struct zb_swapdev *z, int node, bool own)
{
	struct zb_io *io = kzalloc_node(sizeof(*io), GFP_KERNEL, node);

	if (!io)
		return NULL;
	io->codec = z->io_codec;
	io->level = zbatch_codec_level_norm(z->codec, z->level);
	io->codec2 = z->codec2;
	io->out = kvmalloc_node(ZB_OUT, GFP_KERNEL, node);
	io->scratch = kvmalloc_node(ZB_WIN, GFP_KERNEL, node);
	if (!io->out || !io->scratch || zbatch_ctx_prepare(&io->ctx, io->codec) ||
	    (io->codec2 >= 0 && (own ? zbatch_ctx_prepare(&io->ctx, io->codec2) :
				  zbatch_ctx_prepare_decomp(&io->ctx, io->codec2)))) {
		io_free(io);
		return NULL;
	}
	return io;
}

/*
 * The device's streams, in the CPU hotplug state's "prepare" section (as
 * zram's): a CPU's stream is allocated before the CPU runs anything and
 * freed once it is dead, under the stream's lock, so that a task that
 * took it on that CPU and still holds it is waited for.
 */
static enum cpuhp_state zb_cpuhp;

static int zb_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	struct zb_swapdev *z = hlist_entry(node, struct zb_swapdev, cpuhp);
	struct zb_stream *stm = per_cpu_ptr(z->streams, cpu);
	struct zb_io *io = io_alloc(z, cpu_to_node(cpu), false);

	if (!io)
		return -ENOMEM;
	mutex_lock(&stm->lock);
	swap(stm->io, io);
	mutex_unlock(&stm->lock);
	io_free(io);	/* a stream left from a failed bring-up */
	return 0;
}

static int zb_cpu_dead(unsigned int cpu, struct hlist_node *node)
{
	struct zb_swapdev *z = hlist_entry(node, struct zb_swapdev, cpuhp);
	struct zb_stream *stm = per_cpu_ptr(z->streams, cpu);
	struct zb_io *io;

	mutex_lock(&stm->lock);
	io = stm->io;
	stm->io = NULL;
	mutex_unlock(&stm->lock);
	io_free(io);
	return 0;
}

/* Streams for every CPU up; with the store (disksize set). */
static int streams_create(struct zb_swapdev *z)
{
	int cpu, ret;

	lockdep_assert_held_write(&z->init_lock);
	z->streams = alloc_percpu(struct zb_stream);
	if (!z->streams)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		mutex_init(&per_cpu_ptr(z->streams, cpu)->lock);
	ret = cpuhp_state_add_instance(zb_cpuhp, &z->cpuhp);
	if (ret) {
		free_percpu(z->streams);
		z->streams = NULL;
	}
	return ret;
}

static void streams_destroy(struct zb_swapdev *z)
{
	lockdep_assert_held_write(&z->init_lock);
	if (!z->streams)
		return;
	/* calls zb_cpu_dead() for every CPU up */
	cpuhp_state_remove_instance(zb_cpuhp, &z->cpuhp);
	free_percpu(z->streams);
	z->streams = NULL;
}

/* A new batch on @io, its buffers kept (what was produced is still read). */
static void io_batch_init(struct zb_io *io)
{
	/* async_irq: the submitter sleeps rather than spins on the engines */
	zbatch_batch_init(&io->batch, io->codec,
			  ZBATCH_KF_ASYNC_IRQ | (io->submitter ? ZBATCH_KF_SUBMITTER : 0));
	io->batch.ctx = &io->ctx;
	io->batch.level = io->level;
	io->n = 0;
}

/*
 * An empty batch and empty buffers; the previous batch, if any, has
 * finished. Reads of written-back pages still gathered (a read that
 * failed before they were due) are dropped with their claims.
 */
static void io_reset(struct zb_io *io)
{
	zb_bd_reads_drop(&io->bd);
	io_batch_init(io);
	io->used = 0;
	io->sused = 0;
}

/* Other CPUs' streams a task tries before it waits for its own. */
#define ZB_STREAM_PROBES	4

/* A free stream: this CPU's, else one of the next CPUs'; NULL if none. */
static struct zb_stream *stream_trylock(struct zb_swapdev *z)
{
	int cpu = raw_smp_processor_id(), other = cpu, i;

	for (i = 0; i <= ZB_STREAM_PROBES; i++) {
		struct zb_stream *stm = per_cpu_ptr(z->streams, other);

		if (mutex_trylock(&stm->lock)) {
			if (likely(stm->io))
				return stm;
			mutex_unlock(&stm->lock);	/* its CPU went down */
		}
		other = cpumask_next(other, cpu_online_mask);
		if (other >= nr_cpu_ids)
			other = cpumask_first(cpu_online_mask);
		if (other == cpu)
			break;
	}
	return NULL;
}

/*
 * A stream of the device, locked: this CPU's when free. The lock is a
 * mutex, not preemption off: the holder sleeps while engines run its
 * batch, and may move to another CPU holding it. Another task of that
 * CPU then takes a free stream of one of the next CPUs (they are all
 * alike; the memory may be another node's) and waits for its own only
 * when those are busy too (counted: stream_waits). Between picking a
 * stream and locking it the task may have moved off a CPU that went down
 * since: then it tries again where it is now.
 */
static struct zb_stream *stream_get(struct zb_swapdev *z)
{
	for (;;) {
		struct zb_stream *stm = stream_trylock(z);

		if (!stm) {
			zb_stat_add(z, ZBS_STREAM_WAITS, 1);
			stm = raw_cpu_ptr(z->streams);
			mutex_lock(&stm->lock);
		}
		if (likely(stm->io))
			return stm;
		mutex_unlock(&stm->lock);
	}
}

/* stream_get()'s stream, its context emptied for a batch. */
static struct zb_io *io_get(struct zb_swapdev *z, struct zb_stream **stmp)
{
	*stmp = stream_get(z);
	io_reset((*stmp)->io);
	return (*stmp)->io;
}

static void io_put(struct zb_stream *stm)
{
	mutex_unlock(&stm->lock);
}

static struct zb_item *io_add(struct zb_io *io, enum zbatch_op op, const void *src,
			      unsigned int slen, void *dst, unsigned int dlen)
{
	struct zb_item *it = &io->item[io->n];

	zbatch_req_init(&io->req[io->n], op, src, slen, dst, dlen);
	zbatch_batch_add(&io->batch, &io->req[io->n]);
	io->n++;
	it->want = dlen;
	it->copy = 0;
	it->secondary = false;
	return it;
}

/*
 * A decompression with the secondary codec (a recompressed object): a
 * request of @io's, not in its batch (whose requests are one codec's),
 * run inline after the batch (io_decompress()). Recompressed objects
 * are cold: few reads meet one.
 */
static struct zb_item *io_add_secondary(struct zb_io *io, const void *src,
					unsigned int slen, void *dst, unsigned int dlen)
{
	struct zb_item *it = &io->item[io->n];

	zbatch_req_init(&io->req[io->n], ZBATCH_OP_DECOMPRESS, src, slen, dst, dlen);
	io->n++;
	it->want = dlen;
	it->copy = 0;
	it->secondary = true;
	return it;
}

/* Whether one request runs here, now: nothing to batch, nothing to offload. */
static bool io_alone(unsigned int codec, unsigned int n)
{
	return n == 1 && READ_ONCE(zbatch_handoff) != ZBATCH_HANDOFF_ALWAYS &&
	       !zbatch_device_serves(codec);
}

static void io_run(struct zb_swapdev *z, struct zb_io *io, int rw)
{
	/* a 4 KiB page alone runs inline in zbatch_submit(): zram's cost */
	if (!io->batch.nr)
		return;		/* secondary decompressions only */
	if (zbatch_submit(&io->batch) == -EINPROGRESS)
		zbatch_wait(&io->batch);
	atomic64_inc(&z->batch_hist[rw][io->batch.nr]);
}

/* ---- write ---- */
/* One store of a write: @pages pages at @index, @len bytes of @data. */
struct zb_put {
	unsigned long index;
	unsigned int pages;
	unsigned int len;
	const void *data;
	bool fallback;		/* page 0 of a unit stored page by page, as its block 0 */
};

/*
 * What to store for page @src, compressed (@err 0) to @len bytes at @dst:
 * the compressed bytes, or the page raw when they are no smaller than a
 * huge object (read free) or the compressor failed: a compressor's error
 * never fails a swap-out. The caller counts the error (zb_comp_error()).
 */
static struct zb_put page_put(struct zb_swapdev *z, unsigned long index, const u8 *src,
			      int err, unsigned int len, const void *dst)
{
	if (err || len >= zs_huge_class_size(z->pool))
		return (struct zb_put){ index, 1, PAGE_SIZE, src };
	return (struct zb_put){ index, 1, len, dst };
}

/*
 * debugfs fault_swap_comp: 1 compression in N by the swap devices fails
 * (0: none) with -EIO, as a compressor's error would: what page_put()
 * and io_puts() do with one is reached by no codec on valid pages.
 */
unsigned int zb_fault_comp;
static atomic_t comp_seq;

/*
 * Fail @req, a compression that succeeded, when fault_swap_comp says so:
 * -EIO, nothing produced, its output overwritten (what a failing
 * compressor may leave), so that storing it anyway would lose the page.
 */
void zb_comp_fault(struct zbatch_req *req)
{
	if (req->status || !zbatch_fault_one_in(&zb_fault_comp, &comp_seq))
		return;
	memset(req->dst, 0xa5, req->dlen);
	req->status = -EIO;
	req->produced = 0;
}

/* A compression's error other than not saving room (-ENOSPC), counted. */
void zb_comp_error(struct zb_swapdev *z, int err)
{
	if (err && err != -ENOSPC)
		zb_stat_add(z, ZBS_COMP_ERRORS, 1);
}

/*
 * Page @p of unit @it, whose lz4 unit compression @req did not fit
 * (-ENOSPC), when that attempt already says what to store for it
 * (lz4u_compress(): its header, zeroed by io_fill() before the batch ran,
 * so that an -ENOSPC the codec did not give reads as "nothing known"):
 * raw, when its block did not fit a page or took a huge object's size (a
 * heuristic: with the unit's earlier pages as dictionary lz4 may code a
 * page a little longer than alone, which then goes raw where alone it
 * would have been just under the huge size); page 0's block as it is,
 * being plain lz4 of that page, when it is smaller (unless the batch ran
 * with verify_compress: nothing verified it).
 * Return: false (compress the page alone) or true, *@pt what to store.
 */
static bool unit_page_known(struct zb_swapdev *z, const struct zb_io *io,
			    const struct zb_item *it, const struct zbatch_req *req,
			    unsigned int p, struct zb_put *pt)
{
	const __le16 *hdr = req->dst;
	unsigned int len;

	if (io->codec != ZBATCH_CODEC_LZ4U)
		return false;
	len = le16_to_cpu(hdr[p]);
	if (len == ZBATCH_LZ4U_NOFIT || (len && len >= zs_huge_class_size(z->pool))) {
		*pt = (struct zb_put){ it->index + p, 1, PAGE_SIZE, it->src + p * PAGE_SIZE };
		return true;
	}
	if (p || !len || io->batch.job.verify)
		return false;
	*pt = (struct zb_put){ it->index, 1, len, hdr + it->pages, true };
	return true;
}

/*
 * What @io's batch gives to store, in index order: a page compressed or
 * raw, a unit, or the pages of a unit that did not fit (-ENOSPC):
 * those are compressed alone in a second batch on the same stream (the
 * same executors, engines or IAA, as the first, so a retry of the write
 * gets the same lengths), each into its share of the unit's output, raw
 * where it does not compress, same-filled ones stored now, and those the
 * unit's attempt already decided stored as it did (unit_page_known();
 * fallback_pages_kept): a unit of one incompressible page and three of
 * text keeps what the text saves, and only the pages its attempt left
 * open are compressed a second time. A page 0 stored as its block 0 says
 * so (zb_put.fallback): a write retried from it after a stall tries the
 * unit again (units_pay()), which, the codec being lz4 in software and
 * the same pages, fails as before and gives that page the same length,
 * where lz4 of the page alone could give another and miss its reserve.
 * Return: how many, in @puts.
 */
static unsigned int io_puts(struct zb_swapdev *z, struct zb_io *io, struct zb_put *puts)
{
	u8 *dst[ZB_IO_REQS];
	u8 slot[ZB_IO_REQS];	/* page request k of the second batch fills puts[slot[k]] */
	unsigned int i, p, n = 0, k = 0;
	unsigned long word;

	for (i = 0; i < io->n; i++) {
		struct zb_item *it = &io->item[i];
		struct zbatch_req *req = &io->req[i];

		zb_comp_fault(req);
		if (it->pages == 1) {
			puts[n++] = page_put(z, it->index, it->src, req->status,
					     req->produced, req->dst);
			zb_comp_error(z, req->status);
			continue;
		}
		if (!req->status) {
			puts[n++] = (struct zb_put){ it->index, it->pages, req->produced,
						     req->dst };
			continue;
		}
		/* a compressor's error never fails a swap-out: the pages raw */
		zb_comp_error(z, req->status);
		if (req->status == -ENOSPC)
			zb_stat_add(z, ZBS_UNIT_FALLBACKS, 1);
		for (p = 0; p < it->pages; p++) {
			const u8 *src = it->src + p * PAGE_SIZE;

			if (req->status == -ENOSPC && it->pages > 1) {
				if (zb_page_same_filled(src, &word)) {
					zb_store_same(z, it->index + p, word);
					continue;
				}
				if (unit_page_known(z, io, it, req, p, &puts[n])) {
					zb_stat_add(z, ZBS_FALLBACK_KEPT, 1);
					n++;
					continue;
				}
				dst[k] = (u8 *)req->dst + p * PAGE_SIZE;
				slot[k++] = n;
			}
			puts[n++] = (struct zb_put){ it->index + p, 1, PAGE_SIZE, src };
		}
	}
	if (!k)
		return n;
	/*
	 * The first batch's results are all in @puts: its requests are free;
	 * io->out is kept, the outputs in it are still to be stored.
	 */
	io_batch_init(io);
	for (i = 0; i < k; i++) {
		struct zb_item *it = io_add(io, ZBATCH_OP_COMPRESS, puts[slot[i]].data,
					    PAGE_SIZE, dst[i], PAGE_SIZE);

		it->index = puts[slot[i]].index;
		it->pages = 1;
		it->src = puts[slot[i]].data;
	}
	io_run(z, io, WRITE);
	for (i = 0; i < k; i++) {
		struct zbatch_req *req = &io->req[i];
		struct zb_put *pt = &puts[slot[i]];

		zb_comp_fault(req);
		*pt = page_put(z, pt->index, pt->data, req->status, req->produced, dst[i]);
		zb_comp_error(z, req->status);
	}
	return n;
}

/*
 * Run @io's batch and store what it gives, in index order, from the
 * reserves @rvs (@nr_rv) where one was made for a store. Return: 0;
 * -EAGAIN when a store found no memory without direct reclaim (@puts
 * from *@first on are not stored; there are *@nr in all); or the store's
 * error.
 */
static int io_store(struct zb_swapdev *z, struct zb_io *io, struct zb_put *puts,
		    unsigned int *nr, unsigned int *first, struct zb_reserve *rvs,
		    unsigned int nr_rv)
{
	unsigned int i;
	int ret = 0;

	io_run(z, io, WRITE);
	*nr = io_puts(z, io, puts);
	for (i = 0; i < *nr && !ret; i++) {
		struct zb_put *pt = &puts[i];
		int at = zb_reserve_at(rvs, nr_rv, pt->index);
		struct zb_reserve *rv = at < 0 ? NULL : &rvs[at];

		if (rv && !zb_reserve_fits(rv, pt->pages, pt->len)) {
			zb_stat_add(z, ZBS_RESERVE_MISSES, 1);
			rv = NULL;
		}

		ret = pt->pages == 1 ? zb_store_page(z, pt->index, pt->data, pt->len, rv) :
		      zb_store_unit(z, pt->index, pt->pages, pt->data, pt->len, rv);
		*first = i;
	}
	return ret;
}

/*
 * units_pay()'s estimate: the share of recent unit reads that took part
 * of a unit, in 1/65536, a moving average giving each read a weight of
 * 1/2^ZB_ADAPT_SHIFT: from all whole to over 1 in 8 takes about 9 partial
 * reads in a row, back under 1 in 8 from all partial about 130 whole ones.
 */
#define ZB_ADAPT_ONE	65536
#define ZB_ADAPT_SHIFT	6
/* ... fewer reads than this say nothing yet */
#define ZB_ADAPT_MIN	32
/* While units do not pay, 1 in this many is written as a unit anyway. */
#define ZB_ADAPT_EXPLORE	16

/*
 * Whether a whole unit written now is stored as a unit. Reading part of
 * a unit (a 4 KiB swap-in, a split folio) decompresses all its pages for
 * the few it wants; swap slots carry nothing from one swap-out to the
 * next, so the device judges from how its recent units were read, not
 * unit by unit: with unit_adapt on, units are written while reads that
 * took part of a unit are under 1 in 2 * unit_pages of its recent unit
 * reads (the decompression they waste then stays under half a page per
 * read on average), or while it has seen fewer than ZB_ADAPT_MIN;
 * otherwise the pages are stored one by one (units_declined), but for 1
 * unit in ZB_ADAPT_EXPLORE, whose reads tell when whole reads are back.
 */
static bool units_pay_now(const struct zb_swapdev *z)
{
	return !READ_ONCE(z->unit_adapt) || atomic_read(&z->adapt_seen) < ZB_ADAPT_MIN ||
	       READ_ONCE(z->adapt_share) * 2 * z->unit_pages <= ZB_ADAPT_ONE;
}

/*
 * units_pay_now(), or the unit @io explores (1 in ZB_ADAPT_EXPLORE of the
 * units a stream declines: its own counter, under its lock). A write that
 * stalled and is retried keeps what it chose the first time: the
 * reserves (@rvs) of a unit-sized region say a unit or a page at @index,
 * a unit too where that page starts a unit that fell back to pages.
 */
static bool units_pay(struct zb_swapdev *z, struct zb_io *io, unsigned long index,
		      const struct zb_reserve *rvs, unsigned int nr_rv)
{
	int at = zb_reserve_at(rvs, nr_rv, index);

	if (at >= 0)
		return rvs[at].pages > 1 || rvs[at].fallback;
	if (units_pay_now(z) || !(++io->explore % ZB_ADAPT_EXPLORE))
		return true;
	zb_stat_add(z, ZBS_UNITS_DECLINED, 1);
	return false;
}

/*
 * A read of a stored unit that took it @whole or in part, for units_pay().
 * Unlocked: a racing update is lost, which only delays the average.
 */
static void adapt_count(struct zb_swapdev *z, bool whole)
{
	int old = READ_ONCE(z->adapt_share);
	int new = whole ? old - (old >> ZB_ADAPT_SHIFT) :
			  old + ((ZB_ADAPT_ONE - old) >> ZB_ADAPT_SHIFT);

	zb_stat_add(z, whole ? ZBS_UNIT_READS_WHOLE : ZBS_UNIT_READS_PART, 1);
	if (new != old)
		WRITE_ONCE(z->adapt_share, new);
	if (atomic_read(&z->adapt_seen) < ZB_ADAPT_MIN)
		atomic_inc(&z->adapt_seen);
}

/*
 * Put up to a window of @pages pages from @src (for slot @index on) in
 * @io's batch: units where a whole unit is written (and units pay),
 * same-filled pages stored now. Return: the pages taken.
 */
static unsigned int io_fill(struct zb_swapdev *z, struct zb_io *io, unsigned long index,
			    const u8 *src, unsigned int pages, const struct zb_reserve *rvs,
			    unsigned int nr_rv)
{
	unsigned int taken = 0;

	while (taken < pages && io->n < ZB_IO_REQS) {
		unsigned int np = 1, cap;
		struct zb_item *it;
		unsigned long word;

		if (z->unit_pages > 1 && !(index % z->unit_pages) &&
		    pages - taken >= z->unit_pages) {
			/* the next window decides for a unit this one has no room for */
			if (io->used + z->unit_pages * PAGE_SIZE > ZB_WIN)
				break;
			if (units_pay(z, io, index, rvs, nr_rv))
				np = z->unit_pages;
		}
		if (io->used + np * PAGE_SIZE > ZB_WIN)
			break;
		if (np == 1 && zb_page_same_filled(src, &word)) {
			zb_store_same(z, index, word);
		} else {
			/* a unit must save enough, or it is not worth it */
			cap = np == 1 ? PAGE_SIZE : np * PAGE_SIZE - ZB_UNIT_SAVES(io->codec);
			/* nothing known until the codec says (unit_page_known()) */
			if (np > 1 && io->codec == ZBATCH_CODEC_LZ4U)
				memset(io->out + io->used, 0, np * sizeof(__le16));
			it = io_add(io, ZBATCH_OP_COMPRESS, src, np * PAGE_SIZE,
				    io->out + io->used, cap);
			it->index = index;
			it->pages = np;
			it->src = src;
			io->used += np * PAGE_SIZE;
		}
		src += np * PAGE_SIZE;
		index += np;
		taken += np;
	}
	return taken;
}

/* Stalls at one store after which the write fails (the 4th). */
#define ZB_STALL_TRIES	3

static void reserves_drop(struct zb_swapdev *z, struct zb_reserve *rvs, unsigned int *nr)
{
	while (*nr)
		zb_reserve_drop(z, &rvs[--*nr]);
}

/*
 * Reserve, holding no stream (direct reclaim), what every store of @puts
 * still needs; the first must get its reserve, the others may go without
 * (their fast allocation may then succeed). Return: 0, or the first's
 * error (-ENOMEM, -ENOSPC at mem_limit).
 */
static int write_reserve(struct zb_swapdev *z, struct zb_reserve **rvs,
			 unsigned int *nr_rv, const struct zb_put *puts, unsigned int n)
{
	unsigned int i;
	int ret;

	reserves_drop(z, *rvs, nr_rv);
	if (!*rvs) {
		*rvs = kmalloc_array(ZB_IO_REQS, sizeof(**rvs), GFP_NOIO | __GFP_NOWARN);
		if (!*rvs)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		ret = zb_reserve(z, &(*rvs)[i], puts[i].index, puts[i].pages, puts[i].len);
		if (ret)
			return i ? 0 : ret;
		(*rvs)[i].fallback = puts[i].fallback;
		(*nr_rv)++;
	}
	return 0;
}

/*
 * A write of one page (a 4 KiB swap-out), made as zram makes it: a
 * same-filled page stored as its word, any other compressed inline on a
 * stream's context (what zbatch_submit() would do with a batch of one,
 * without building the batch) and stored. A page the general path must
 * take (IAA runs the codec, or handoff is "always": io_alone()) is left
 * as it is: -EAGAIN, @stalled->len 0. A store that found no memory
 * without direct reclaim: -EAGAIN, *@stalled what it needs, for
 * zb_write() to reserve (then it compresses again, as after any stall).
 * Either way the slot is as it was.
 *
 * Return: 0, -EAGAIN, or zb_store_page()'s error (-ENOSPC at mem_limit).
 */
static int write_page(struct zb_swapdev *z, unsigned long index, const u8 *src,
		      struct zb_put *stalled)
{
	struct zb_stream *stm;
	struct zbatch_req *req;
	unsigned long word;
	struct zb_put pt;
	struct zb_io *io;
	int ret, err;

	stalled->len = 0;
	if (zb_page_same_filled(src, &word)) {
		zb_store_same(z, index, word);
		return 0;
	}
	if (!io_alone(z->io_codec, 1))
		return -EAGAIN;
	stm = stream_get(z);
	io = stm->io;
	/*
	 * req[0] alone, never chained: a batch on this context starts with
	 * io_reset() or io_batch_init(), which forget what was chained before.
	 */
	req = &io->req[0];
	zbatch_req_init(req, ZBATCH_OP_COMPRESS, src, PAGE_SIZE, io->out, PAGE_SIZE);
	zbatch_run_inline(&io->ctx, req, io->codec, io->level);
	zb_comp_fault(req);
	err = req->status;
	pt = page_put(z, index, src, err, req->produced, io->out);
	ret = zb_store_page(z, index, pt.data, pt.len, NULL);
	io_put(stm);
	if (ret == -EAGAIN) {
		/* what to reserve: pt.data is the stream's, gone with it */
		*stalled = pt;
		return ret;
	}
	zb_comp_error(z, err);
	atomic64_inc(&z->batch_hist[WRITE][1]);
	return ret;
}

/*
 * Write @pages pages from @src at slot @index on, a window at a time on
 * a stream. A store that cannot get memory without direct reclaim lets
 * the stream go; what that store and the rest of its window need is
 * reserved (write_reserve(), which may reclaim), and the write goes on
 * from that store: compressed again on whatever stream the task gets,
 * stored from the reserves (a codec may give another length the second
 * time, e.g. when another executor runs it: that store then allocates
 * anew, and may stall again).
 */
static int zb_write(struct zb_swapdev *z, unsigned long index, const u8 *src,
		    unsigned int pages)
{
	unsigned long stalled_at = ULONG_MAX;
	struct zb_put puts[ZB_IO_REQS];
	struct zb_reserve *rvs = NULL;
	unsigned int tries = 0, nr_rv = 0;
	int ret = 0;

	static_assert(ZB_WIN / PAGE_SIZE <= ZB_IO_REQS);	/* a put per page at most */
	if (pages == 1) {
		struct zb_put pt;

		ret = write_page(z, index, src, &pt);
		if (ret != -EAGAIN)
			return ret;
		ret = 0;
		if (pt.len) {	/* a stall: the loop below starts from the reserve */
			zb_stat_add(z, ZBS_WRITE_STALLS, 1);
			stalled_at = index;
			tries = 1;
			ret = write_reserve(z, &rvs, &nr_rv, &pt, 1);
		}
	}
	while (pages && !ret) {
		unsigned int done, nr = 0, first = 0;
		struct zb_stream *stm;
		struct zb_io *io = io_get(z, &stm);

		done = io_fill(z, io, index, src, pages, rvs, nr_rv);
		ret = io->n ? io_store(z, io, puts, &nr, &first, rvs, nr_rv) : 0;
		io_put(stm);
		if (ret == -EAGAIN) {
			zb_stat_add(z, ZBS_WRITE_STALLS, 1);
			tries = puts[first].index == stalled_at ? tries + 1 : 1;
			stalled_at = puts[first].index;
			ret = tries > ZB_STALL_TRIES ? -ENOMEM :
			      write_reserve(z, &rvs, &nr_rv, puts + first, nr - first);
			done = stalled_at - index;
		}
		src += done * PAGE_SIZE;
		index += done;
		pages -= done;
	}
	reserves_drop(z, rvs, &nr_rv);
	kfree(rvs);
	return ret;
}

/* ---- read ---- */

/*
 * debugfs fault_swap_secondary: 1 decompression with the secondary codec
 * in N fails as a corrupt object would (0: none), the read with it.
 */
unsigned int zb_fault_secondary;
static atomic_t secondary_seq;

static bool secondary_fails(void)
{
	return zbatch_fault_one_in(&zb_fault_secondary, &secondary_seq);
}

static int io_decompress(struct zb_swapdev *z, struct zb_io *io)
{
	unsigned int i, p;

	if (!io->n)
		return 0;
	io_run(z, io, READ);
	for (i = 0; i < io->n; i++) {
		struct zb_item *it = &io->item[i];
		struct zbatch_req *req = &io->req[i];

		if (it->secondary) {
			if (secondary_fails())
				req->status = -EBADMSG;
			else
				zbatch_run_inline(&io->ctx, req, io->codec2, 0);
			zb_stat_add(z, ZBS_SECONDARY_READS, 1);
			if (req->status || req->produced != it->want)
				return req->status ?: -EIO;
		} else if (req->status || req->produced != it->want) {
			/* redone on the device's own context, once */
			zbatch_req_init(req, ZBATCH_OP_DECOMPRESS, req->src, req->slen,
					req->dst, req->dlen);
			zbatch_run_inline(&io->ctx, req, io->codec, 0);
			zb_stat_add(z, ZBS_DECOMP_REDONE, 1);
			if (req->status || req->produced != it->want)
				return req->status ?: -EIO;
		}
		for_each_set_bit(p, &it->copy, ZB_UNIT_MAX_PAGES)
			memcpy(it->to[p], it->scratch + p * PAGE_SIZE, PAGE_SIZE);
	}
	return 0;
}

/*
 * What @io gathered, decompressed and read from the backing device (on
 * an error, what is left is dropped by the io_reset() that follows).
 */
static int io_load(struct zb_swapdev *z, struct zb_io *io)
{
	return io_decompress(z, io) ?: zb_bd_reads_run(&io->bd);
}

/* A unit of at most this many pages may be decompressed in place. */
#define ZB_DIRECT_PAGES	4

/*
 * Decompress one object where zsmalloc keeps it, as zram does, when a
 * bio reads nothing else (io_alone()): no copy, no batch. Under the
 * lock of its slot (slot @index, or a slot of unit @u).
 */
static int read_mapped(struct zb_swapdev *z, struct zb_io *io, unsigned long index,
		       const struct zb_unit *u, unsigned int slen, u8 *dst,
		       unsigned int dlen)
{
	struct zbatch_req *req = &io->req[0];
	unsigned long h;
	const void *src = zb_object_map(z, index, u, &h);
	int ret;

	if (WARN_ON_ONCE(!src))	/* read_region() asks for one object only */
		return -EIO;
	zbatch_req_init(req, ZBATCH_OP_DECOMPRESS, src, slen, dst, dlen);
	ret = zbatch_run_inline(&io->ctx, req, io->codec, 0);
	zb_object_unmap(z, h);
	return !ret && req->produced != dlen ? -EIO : ret;
}

/*
 * read_mapped() for a page (@u NULL) or all of unit @u, into @out: kept
 * in one object, or a unit cut between lz4 blocks (decoded object by
 * object, where each is mapped: zb_unit_decode()). A read of one request,
 * counted as a batch of one.
 */
static int read_direct(struct zb_swapdev *z, struct zb_io *io, unsigned long index,
		       const struct zb_unit *u, unsigned int slen, u8 *out)
{
	atomic64_inc(&z->batch_hist[READ][1]);
	zb_stat_add(z, ZBS_DIRECT_READS, 1);
	if (u && u->nr_handles > 1)
		return zb_unit_decode(z, u, out);
	return read_mapped(z, io, index, u, slen, out, u ? u->nr_pages * PAGE_SIZE : PAGE_SIZE);
}

/*
 * A page its slot keeps whole, into @dst: zeros (never written), its
 * fill word, or its raw copy. Return: false, nothing done, when the slot
 * holds something to decompress or read back. Under the slot's lock,
 * @v its view.
 */
static bool read_kept(struct zb_swapdev *z, unsigned long index, const struct zb_view *v,
		      u8 *dst)
{
	switch (v->kind) {
	case ZB_VIEW_EMPTY:
		memset(dst, 0, PAGE_SIZE);
		return true;
	case ZB_VIEW_SAME:
		memset64((u64 *)dst, v->word, PAGE_SIZE / sizeof(u64));
		return true;
	case ZB_VIEW_RAW:
		zb_slot_copy(z, index, dst);
		return true;
	default:
		return false;
	}
}

/*
 * A read of one page (a 4 KiB page's swap-in), made as zram makes it:
 * the page's slot locked, a compressed page decompressed straight from
 * zsmalloc on a stream's context, and nothing else: no batch to set up
 * or finish, no region to gather. The checks read_region() makes for
 * read_direct() hold for a page alone; the stream is taken first (a
 * mutex: never under a slot's bit lock). A page that needs more, a
 * unit's, written back or recompressed, or one a device executor (IAA)
 * would decompress, is left as it is for the general path: -EAGAIN.
 *
 * Return: 0, -EAGAIN, or -EIO when the object does not decompress.
 */
static int read_page(struct zb_swapdev *z, unsigned long index, u8 *dst)
{
	struct zb_stream *stm;
	struct zb_view v;
	int ret = 0;

	if (!io_alone(z->io_codec, 1))
		return -EAGAIN;
	stm = stream_get(z);
	zb_slot_lock(z, index);
	zb_slot_view(z, index, &v);
	if (!read_kept(z, index, &v, dst))
		ret = v.kind == ZB_VIEW_PAGE && !v.secondary ?
		      read_direct(z, stm->io, index, NULL, v.len, dst) : -EAGAIN;
	if (ret != -EAGAIN)
		zb_slot_accessed(z, index, zb_slot_now());
	zb_slot_unlock(z, index);
	io_put(stm);
	return ret;
}

/*
 * Read @n pages from @index, all in one unit-sized region, to @dst[0..n).
 * The region's slots are locked together (in index order, as a unit's
 * writer locks them), so each page read is what its slot holds at one
 * instant, decided under its lock: same-filled, empty and raw pages are
 * copied now; a compressed page, and the stream of the unit that pages
 * still belong to, are copied into @io->out for the batch (io_load()).
 * A region meets one unit at most: a unit's slots are set together
 * (zb_store_unit()) and a unit fills its region.
 *
 * A unit whose pages are all still its own, all read, into contiguous
 * memory, is decompressed straight there. Otherwise (read in part; a page
 * of it rewritten, same-filled, discarded or freed; pages scattered) it is
 * decompressed once into scratch and only the pages that still belong to
 * it are copied out.
 *
 * When the region is all the bio reads (@alone) and holds one object to
 * decompress, or the bio's batch would run here anyway (@here: each of
 * its objects), with nothing queued before it, its objects are
 * decompressed straight from zsmalloc (read_direct(): read_mapped(), a unit in several
 * objects cut between lz4 blocks by zb_unit_decode()), now.
 *
 * Return: 0; -EAGAIN when @io has no room left for the region (run it,
 * then retry on the empty context, which takes any region); -EIO when a
 * slot breaks the store's invariants or the object does not decompress.
 */
static int read_region(struct zb_swapdev *z, struct zb_io *io, unsigned long index,
		       u8 *const *dst, unsigned int n, bool alone, bool here, bool bg)
{
	unsigned int i, off = index % z->unit_pages, bytes = 0, reqs = 0, wbs = 0;
	const struct zb_unit *u = NULL;
	unsigned long mine = 0;		/* region pages still in unit u */
	bool whole = true, direct, secondary = false, usec = false;
	u32 now = bg ? 0 : zb_slot_now();
	u64 t, copy_ns = 0, copied = 0;	/* a sample of the copies' cost */
	bool sample = false;
	struct zb_view v;
	int ret = 0;

	zb_slots_lock(z, index, n);
	for (i = 0; i < n; i++) {
		if (!dst[i]) {		/* not wanted (writeback's gaps) */
			whole = false;
			continue;
		}
		zb_slot_view(z, index + i, &v);
		if (v.secondary && WARN_ON_ONCE(io->codec2 < 0)) {
			ret = -EIO;
			goto out;
		}
		secondary |= v.secondary;
		if (v.kind == ZB_VIEW_WB) {
			wbs += !bg;
		} else if (v.kind == ZB_VIEW_PAGE) {
			reqs++;
			bytes += v.len;
		} else if (v.kind == ZB_VIEW_UNIT) {
			if (WARN_ON_ONCE((u && v.unit != u) || v.idx != off + i ||
					 v.unit->nr_pages != z->unit_pages)) {
				ret = -EIO;
				goto out;
			}
			if (!u) {
				reqs++;
				bytes += v.unit->clen;
			}
			u = v.unit;
			usec = v.secondary;
			mine |= BIT(i);
		}
		if (whole && i && dst[i] != dst[0] + i * PAGE_SIZE)
			whole = false;
	}
	whole = whole && u && n == u->nr_pages && mine == GENMASK(n - 1, 0);
	/*
	 * Straight from zsmalloc: the codec runs with the region's slot
	 * locks and zsmalloc's mapping held (preemption off), as zram's for
	 * a page; for a 64 KiB unit that is too long, it takes the batch.
	 */
	direct = (here || alone) && !io->n && io_alone(io->codec, here ? 1 : reqs) && !secondary &&
		 (!u || ((u->nr_handles == 1 || u->blocks) && u->nr_pages <= ZB_DIRECT_PAGES));
	if (io->n + reqs > ZB_IO_REQS || io->used + bytes > ZB_OUT ||
	    io->bd.n + wbs > ZB_BD_READS ||
	    (u && !whole && io->sused + u->nr_pages * PAGE_SIZE > ZB_WIN)) {
		ret = -EAGAIN;
		goto out;
	}
	if (u && !bg)	/* once per region: past the -EAGAIN above */
		adapt_count(z, !off && n == u->nr_pages);
	if (!direct && (reqs || u))
		sample = zbatch_stats_sample();
	for (i = 0; i < n; i++) {
		u8 *cbuf = io->out + io->used;

		if (!dst[i])
			continue;
		if (!bg)
			zb_slot_accessed(z, index + i, now);
		zb_slot_view(z, index + i, &v);
		if (read_kept(z, index + i, &v, dst[i]))
			continue;
		switch (v.kind) {
		case ZB_VIEW_WB:
			/*
			 * A background read meets a written-back page only if
			 * it changed since it was chosen (recompression's page,
			 * written back since: its mark went with it, so its
			 * commit refuses the copy): not read, zeros.
			 */
			if (bg) {
				memset(dst[i], 0, PAGE_SIZE);
				break;
			}
			zb_bd_read_add(z, &io->bd, v.word, dst[i]);
			break;
		case ZB_VIEW_PAGE:
			if (direct) {
				ret = read_direct(z, io, index + i, NULL, v.len, dst[i]);
				if (ret)
					goto out;
				break;
			}
			t = sample ? zbatch_clock() : 0;
			zb_slot_copy(z, index + i, cbuf);
			if (sample) {
				copy_ns += zbatch_ns_since(t);
				copied += PAGE_SIZE;
			}
			if (v.secondary)
				io_add_secondary(io, cbuf, v.len, dst[i], PAGE_SIZE);
			else
				io_add(io, ZBATCH_OP_DECOMPRESS, cbuf, v.len, dst[i], PAGE_SIZE);
			io->used += v.len;
			break;
		case ZB_VIEW_UNIT:
			break;		/* below, once */
		case ZB_VIEW_EMPTY:
		case ZB_VIEW_SAME:
		case ZB_VIEW_RAW:
			break;		/* read_kept()'s */
		}
	}
	if (u && direct) {
		unsigned int p;

		if (whole) {
			ret = read_direct(z, io, index, u, u->clen, dst[0]);
			goto out;
		}
		ret = read_direct(z, io, index, u, u->clen, io->scratch);
		if (ret)
			goto out;
		for_each_set_bit(p, &mine, n)
			memcpy(dst[p], io->scratch + (off + p) * PAGE_SIZE, PAGE_SIZE);
		zb_stat_add(z, ZBS_PARTIAL_READS, 1);
		zb_stat_add(z, ZBS_PARTIAL_READ_BYTES, u->nr_pages * PAGE_SIZE);
	} else if (u) {
		u8 *cbuf = io->out + io->used, *scratch = io->scratch + io->sused;
		struct zb_item *it;

		t = sample ? zbatch_clock() : 0;
		/* a header not as stored: -EIO, as on the direct path (no WARN) */
		ret = zb_unit_copy(z, u, cbuf);
		if (ret)
			goto out;
		if (sample) {
			copy_ns += zbatch_ns_since(t);
			copied += u->nr_pages * PAGE_SIZE;
		}
		io->used += u->clen;
		if (whole) {
			if (usec)
				io_add_secondary(io, cbuf, u->clen, dst[0], n * PAGE_SIZE);
			else
				io_add(io, ZBATCH_OP_DECOMPRESS, cbuf, u->clen, dst[0],
				       n * PAGE_SIZE);
			goto out;
		}
		it = usec ? io_add_secondary(io, cbuf, u->clen, scratch, u->nr_pages * PAGE_SIZE) :
		     io_add(io, ZBATCH_OP_DECOMPRESS, cbuf, u->clen, scratch,
			    u->nr_pages * PAGE_SIZE);
		it->scratch = scratch;
		it->copy = mine << off;
		for (i = 0; i < n; i++)
			it->to[off + i] = dst[i];
		io->sused += u->nr_pages * PAGE_SIZE;
		zb_stat_add(z, ZBS_PARTIAL_READS, 1);
		zb_stat_add(z, ZBS_PARTIAL_READ_BYTES, u->nr_pages * PAGE_SIZE);
	}
out:
	if (copied && !ret)
		zbatch_cost_sample(&z->copy_ns_kib, copied, copy_ns);
	zb_slots_unlock(z, index, n);
	return ret;
}

/*
 * A read of a bio: its pages are gathered a unit-sized region at a time,
 * across bvecs (a bio from scattered pages reads each unit once), and the
 * regions are batched on the reader's stream.
 */
struct zb_reader {
	struct zb_swapdev *z;
	struct zb_io *io;
	unsigned long start, end;	/* the bio's pages */
	unsigned long index;		/* the region's first page */
	unsigned int n;			/* pages gathered */
	/*
	 * The bio's batch would run inline anyway (zbatch_would_offload()):
	 * each region is decompressed straight from zsmalloc as it comes.
	 */
	bool direct;
	bool bg;			/* writeback's: not the user's access */
	u8 *dst[ZB_UNIT_MAX_PAGES];
};

static int reader_region(struct zb_reader *r)
{
	bool alone;
	int ret;

	if (!r->n)
		return 0;
	alone = r->index == r->start && r->index + r->n == r->end;
	ret = read_region(r->z, r->io, r->index, r->dst, r->n, alone, r->direct, r->bg);
	if (ret == -EAGAIN && !WARN_ON_ONCE(!r->io->n && !r->io->bd.n)) {
		ret = io_load(r->z, r->io);
		io_reset(r->io);
		if (!ret)
			ret = read_region(r->z, r->io, r->index, r->dst, r->n, alone, r->direct,
					  r->bg);
	}
	r->index += r->n;
	r->n = 0;
	return ret;
}

/* The next page of the bio goes to @dst. */
static int reader_add(struct zb_reader *r, u8 *dst)
{
	r->dst[r->n++] = dst;
	if ((r->index + r->n) % r->z->unit_pages)
		return 0;
	return reader_region(r);
}

/* Every page gathered is in @r's pages once this returns 0. */
static int reader_finish(struct zb_reader *r)
{
	int ret = reader_region(r);

	if (!ret)
		ret = io_load(r->z, r->io);
	io_reset(r->io);
	return ret;
}

/*
 * An I/O context of recompression's own (zb_read_chosen(), and its
 * compression with the secondary codec: prepared for both codecs), so
 * that the nice-19 thread never holds a stream a swap-in waits for; its
 * batches run on the CPU that runs it, not on the engines. Under
 * init_lock (read), disksize set. NULL when short of memory.
 */
struct zb_io *zb_io_alloc_own(struct zb_swapdev *z)
{
	struct zb_io *io = io_alloc(z, NUMA_NO_NODE, true);

	if (io)
		io->submitter = true;
	return io;
}

void zb_io_free_own(struct zb_io *io)
{
	io_free(io);
}

struct zbatch_ctx *zb_io_ctx(struct zb_io *io)
{
	return &io->ctx;
}

/*
 * Writeback's or recompression's read of the pages it chose,
 * @index[0..n) ascending, into @dst[]: on @own (zb_io_alloc_own()) or,
 * if NULL, on a stream, a unit-sized region at a time (the pages it did
 * not choose left out), batched as a bio's read is; not counted as the
 * user's reads (units_pay(), idle marks).
 */
int zb_read_chosen(struct zb_swapdev *z, struct zb_io *own, const unsigned long *index,
		   u8 *const *dst, unsigned int n)
{
	struct zb_reader r = { .z = z, .start = ULONG_MAX, .bg = true };
	struct zb_stream *stm = NULL;
	unsigned int i = 0;
	int ret = 0;

	r.io = own ?: io_get(z, &stm);
	/*
	 * Its own context's batches run here, on this CPU (io->submitter):
	 * nothing is gained by batching, so each object is decompressed
	 * straight from zsmalloc as zram does, with no copy.
	 */
	r.direct = own && own->submitter;
	if (own)
		io_reset(own);
	r.io->bd.parent = NULL;		/* never meets a written-back page: none */
	io_batch_init(r.io);
	while (i < n && !ret) {
		unsigned long region = round_down(index[i], z->unit_pages);

		memset(r.dst, 0, sizeof(r.dst));
		r.index = region;
		for (; i < n && index[i] < region + z->unit_pages; i++)
			r.dst[index[i] - region] = dst[i];
		r.n = index[i - 1] - region + 1;
		ret = reader_region(&r);
	}
	if (!ret)
		ret = reader_finish(&r);
	else
		io_reset(r.io);
	if (stm)
		io_put(stm);
	return ret;
}

/* ---- bios ---- */
static void zb_discard(struct zb_swapdev *z, struct bio *bio)
{
	sector_t first = bio->bi_iter.bi_sector;
	unsigned long i, start, end;

	/* whole pages only; a partial head or tail is left as it is */
	start = DIV_ROUND_UP(first, PAGE_SECTORS);
	end = (first + bio_sectors(bio)) / PAGE_SECTORS;
	for (i = start; i < end && i < z->nr_pages; i++) {
		zb_slot_lock(z, i);
		zb_slot_free(z, i);
		zb_slot_unlock(z, i);
	}
}

/*
 * One page of the device through @bounce, for memory that the bio does
 * not give in whole pages (O_DIRECT from a buffer aligned to 512 bytes,
 * not to a page: the page's bytes are spread over two or three bvecs).
 * A read finishes what @r gathered, the bounce page last, then copies.
 */
static int rw_bounce(struct zb_reader *r, struct bio *bio, struct bvec_iter *iter,
		     bool write, u8 *bounce)
{
	unsigned int done = 0;
	int ret;

	if (!write) {
		ret = reader_add(r, bounce) ?: reader_finish(r);
		if (ret)
			return ret;
	}
	while (done < PAGE_SIZE) {
		struct bio_vec bv = bio_iter_iovec(bio, *iter);

		bv.bv_len = min_t(unsigned int, bv.bv_len, PAGE_SIZE - done);
		if (write)
			memcpy_from_bvec(bounce + done, &bv);
		else
			memcpy_to_bvec(&bv, bounce + done);
		bio_advance_iter_single(bio, iter, bv.bv_len);
		done += bv.bv_len;
	}
	return write ? zb_write(r->z, r->index++, bounce, 1) : 0;
}

static int rw_pages(struct zb_reader *r, u8 *p, unsigned int pages, bool write)
{
	int ret = 0;

	if (write) {
		ret = zb_write(r->z, r->index, p, pages);
		r->index += pages;
		return ret;
	}
	while (pages-- && !ret) {
		ret = reader_add(r, p);
		p += PAGE_SIZE;
	}
	return ret;
}

/* Whether some of @bio's memory is not in whole pages (rw_bounce()). */
static bool bio_needs_bounce(struct bio *bio)
{
	struct bvec_iter iter;
	struct bio_vec bv;

	bio_for_each_bvec(bv, bio, iter)
		if ((bv.bv_offset | bv.bv_len) & ~PAGE_MASK)
			return true;
	return false;
}

static void zb_rw(struct zb_swapdev *z, struct bio *bio)
{
	bool write = op_is_write(bio_op(bio));
	struct bvec_iter iter = bio->bi_iter;
	struct zb_reader r = {
		.z = z, .index = iter.bi_sector >> (PAGE_SHIFT - SECTOR_SHIFT),
		.start = iter.bi_sector >> (PAGE_SHIFT - SECTOR_SHIFT),
		.end = (iter.bi_sector >> (PAGE_SHIFT - SECTOR_SHIFT)) +
		       (iter.bi_size >> PAGE_SHIFT),
	};
	struct page *bounce = NULL;
	struct zb_stream *stm;
	unsigned long start;
	int ret = 0;

	if ((iter.bi_sector & (PAGE_SECTORS - 1)) || (iter.bi_size & ~PAGE_MASK) ||
	    r.index + (iter.bi_size >> PAGE_SHIFT) > z->nr_pages) {
		zb_stat_add(z, ZBS_INVALID_IO, 1);
		ret = -EINVAL;
		goto out;
	}
	/* never for swap, whose pages are whole; before holding a stream */
	if (bio_needs_bounce(bio)) {
		bounce = alloc_page(GFP_NOIO | __GFP_NOWARN);
		if (!bounce) {
			ret = -ENOMEM;
			goto out;
		}
	}
	start = bio_start_io_acct(bio);	/* /sys/block/zbatchswapN/stat, iostat */
	if (!write && r.end - r.start == 1 && !bounce) {
		/* a whole page in one bvec (no bounce): read_page(), else below */
		struct bio_vec bv = mp_bvec_iter_bvec(bio->bi_io_vec, iter);

		ret = read_page(z, r.start, bvec_virt(&bv));
		if (ret != -EAGAIN)
			goto done;
		ret = 0;
	}
	if (!write) {
		unsigned long pages = r.end - r.start;

		r.io = io_get(z, &stm);
		/* written-back pages read into the bio's own pages: chained to it */
		r.io->bd.parent = bio;
		r.io->bd.bounce = bounce ? page_address(bounce) : NULL;
		/*
		 * One request per unit (or page): would its batch leave here,
		 * if handing it over costs copying its objects out first?
		 */
		r.direct = pages > 1 &&
			   !zbatch_would_offload(r.io->codec, ZBATCH_OP_DECOMPRESS,
						 units_pay_now(z) ?
						 DIV_ROUND_UP(pages, z->unit_pages) : pages,
						 (u64)pages * PAGE_SIZE,
						 zbatch_cost_of(&z->copy_ns_kib,
								(u64)pages * PAGE_SIZE));
		if (r.direct)
			zb_stat_add(z, ZBS_DIRECT_BIOS, 1);
	}
	while (iter.bi_size && !ret) {
		/* a multi-page bvec is contiguous memory: a folio arrives whole */
		struct bio_vec bv = mp_bvec_iter_bvec(bio->bi_io_vec, iter);
		unsigned int pages = bv.bv_len >> PAGE_SHIFT;

		if (pages && !(bv.bv_offset & ~PAGE_MASK)) {
			ret = rw_pages(&r, bvec_virt(&bv), pages, write);
			bio_advance_iter_single(bio, &iter, pages << PAGE_SHIFT);
			continue;
		}
		ret = WARN_ON_ONCE(!bounce) ? -EIO :
		      rw_bounce(&r, bio, &iter, write, page_address(bounce));
	}
	if (!write) {
		if (!ret)
			ret = reader_finish(&r);
		else
			io_reset(r.io);	/* drops the reads gathered */
		io_put(stm);
	}
done:
	bio_end_io_acct(bio, start);
out:
	if (bounce)
		__free_page(bounce);
	if (ret) {
		zb_stat_add(z, write ? ZBS_FAILED_WRITES : ZBS_FAILED_READS, 1);
		bio->bi_status = BLK_STS_IOERR;
	}
	bio_endio(bio);
}

static void zb_submit_bio(struct bio *bio)
{
	struct zb_swapdev *z = bio->bi_bdev->bd_disk->private_data;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		zb_rw(z, bio);
		return;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		zb_discard(z, bio);
		break;
	default:
		bio->bi_status = BLK_STS_NOTSUPP;
		break;
	}
	bio_endio(bio);
}

/* Swap freed slot @index; atomic context: never wait for the slot. */
static void zb_slot_free_notify(struct block_device *bdev, unsigned long index)
{
	struct zb_swapdev *z = bdev->bd_disk->private_data;

	zb_stat_add(z, ZBS_NOTIFY_FREE, 1);
	if (index >= z->nr_pages)
		return;
	if (!zb_slot_trylock(z, index)) {
		zb_stat_add(z, ZBS_MISS_FREE, 1);	/* freed at the next write */
		return;
	}
	zb_slot_free(z, index);
	zb_slot_unlock(z, index);
}

static int zb_open(struct gendisk *disk, blk_mode_t mode)
{
	struct zb_swapdev *z = disk->private_data;

	if (z->claim)
		return -EBUSY;
	/*
	 * A new exclusive writer (swapon, mkfs) starts units_pay() afresh:
	 * swapoff reads every page back a page at a time, which says
	 * nothing about how the next user reads.
	 */
	if ((mode & BLK_OPEN_EXCL) && (mode & BLK_OPEN_WRITE) && !disk_openers(disk)) {
		WRITE_ONCE(z->adapt_share, 0);
		atomic_set(&z->adapt_seen, 0);
	}
	return 0;
}

static const struct block_device_operations zb_fops = {
	.owner = THIS_MODULE,
	.open = zb_open,
	.submit_bio = zb_submit_bio,
	.swap_slot_free_notify = zb_slot_free_notify,
};

/* Whether @bdev is one of ours (it cannot back a swap device). */
bool zb_is_swapdev(struct block_device *bdev)
{
	return bdev->bd_disk->fops == &zb_fops;
}

/* ---- per-device sysfs: /sys/block/zbatchswapN/zbatch/ ---- */
static struct zb_swapdev *dev_z(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

static ssize_t disksize_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_z(d)->disksize);
}

static ssize_t disksize_store(struct device *d, struct device_attribute *a,
			      const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	u64 size;
	int ret;

	size = memparse(buf, NULL);
	size = round_down(size, PAGE_SIZE);
	if (!size || size > (1ULL << 40))
		return -EINVAL;	/* 4 KiB .. 1 TiB */
	down_write(&z->init_lock);
	if (z->disksize) {
		ret = -EBUSY;	/* fixed once set */
		goto out;
	}
	/* the unit may have changed since the level was set */
	ret = zbatch_codec_level_check(z->codec, z->level,
				       z->unit_pages * PAGE_SIZE);
	if (!ret && z->codec2 >= 0)
		ret = zbatch_codec_level_check(z->codec2, z->level2,
					       z->unit_pages * PAGE_SIZE);
	if (ret) {
		pr_warn_ratelimited("zbatchswap%d: a codec's level does not fit %lu KiB units (%d)\n",
				    z->id, z->unit_pages * PAGE_SIZE / SZ_1K, ret);
		goto out;
	}
	if (z->codec2 == z->codec && zbatch_codec_level_norm(z->codec, z->level) ==
				     zbatch_codec_level_norm(z->codec2, z->level2)) {
		pr_warn_ratelimited("zbatchswap%d: the secondary codec is the primary at the same level: recompression would shrink nothing\n",
				    z->id);
		ret = -EINVAL;
		goto out;
	}
	z->io_codec = z->codec == ZBATCH_CODEC_LZ4 && z->unit_pages > 1 ?
		      ZBATCH_CODEC_LZ4U : z->codec;
	ret = zb_store_init(z, size);
	if (ret)
		goto out;
	ret = streams_create(z);
	if (ret) {
		zb_store_destroy(z);
		goto out;
	}
	z->disksize = size;
	set_capacity_and_notify(z->disk, size >> SECTOR_SHIFT);
out:
	up_write(&z->init_lock);
	return ret ?: len;
}

static const char *const unit_names[] = { ZBATCH_SWAPDEV_UNIT_NAMES };
static const unsigned int unit_pages[] = { 1, 4, 16 };
static_assert(ARRAY_SIZE(unit_names) == ARRAY_SIZE(unit_pages));

static ssize_t unit_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned int i = 0;

	while (i < ARRAY_SIZE(unit_pages) - 1 && unit_pages[i] != z->unit_pages)
		i++;
	return zbatch_sysfs_choice(buf, unit_names, ARRAY_SIZE(unit_names), i, 0);
}

static ssize_t unit_store(struct device *d, struct device_attribute *a,
			  const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	int i = sysfs_match_string(unit_names, buf);

	if (i < 0)
		return i;
	down_write(&z->init_lock);
	if (z->disksize)
		i = -EBUSY;
	else
		z->unit_pages = unit_pages[i];
	up_write(&z->init_lock);
	return i < 0 ? i : len;
}

static ssize_t codec_show(struct device *d, struct device_attribute *a, char *buf)
{
	return zbatch_codec_choice(buf, dev_z(d)->codec);
}

static ssize_t codec_store(struct device *d, struct device_attribute *a,
			   const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	int c = zbatch_codec_by_name(buf);

	if (c < 0)
		return c;
	down_write(&z->init_lock);
	if (z->disksize) {
		c = -EBUSY;
	} else {
		/* writing the codec resets its level (zram's keeps its params) */
		z->level = 0;
		z->codec = c;
	}
	up_write(&z->init_lock);
	return c < 0 ? c : len;
}

/*
 * zram's algorithm_params: "level=N" (0: the codec's default) for the
 * device's codec, or with "priority=1" for its secondary codec
 * (recomp_algorithm, set first); "algo=NAME" names that codec (as zram's
 * names the algorithm whose parameters these are); "dict=" is refused (a
 * trained zstd dictionary did not pay on the benchmark's real data:
 * Documentation/admin-guide.md). Shown as "algo=NAME level=N", and a
 * second line "algo=NAME level=N priority=1" when there is a secondary.
 */
static ssize_t algorithm_params_show(struct device *d, struct device_attribute *a,
				     char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	ssize_t n;

	down_read(&z->init_lock);
	n = sysfs_emit(buf, "algo=%s level=%d\n", zbatch_codec_name(z->codec),
		       z->level);
	if (z->codec2 >= 0)
		n += sysfs_emit_at(buf, n, "algo=%s level=%d priority=1\n",
				   zbatch_codec_name(z->codec2), z->level2);
	up_read(&z->init_lock);
	return n;
}

static ssize_t algorithm_params_store(struct device *d, struct device_attribute *a,
				      const char *buf, size_t len)
{
	struct zb_swapdev *z = dev_z(d);
	char *args, *param, *val, *copy;
	int level = 0, codec = -1, prio = 0, target, ret = 0;
	bool have_level = false;

	copy = kstrndup(buf, len, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	args = skip_spaces(strim(copy));
	while (*args && !ret) {
		args = next_arg(args, &param, &val);
		if (!val || !*val) {
			ret = -EINVAL;
		} else if (!strcmp(param, "level")) {
			ret = kstrtoint(val, 10, &level);
			have_level = true;
		} else if (!strcmp(param, "algo")) {
			codec = zbatch_codec_by_name(val);
			ret = min(codec, 0);
		} else if (!strcmp(param, "priority")) {
			ret = kstrtoint(val, 10, &prio);
			if (!ret && prio != 0 && prio != 1)
				ret = -EINVAL;	/* one secondary codec */
		} else if (!strcmp(param, "dict")) {
			ret = -EOPNOTSUPP;
		} else {
			ret = -EINVAL;
		}
	}
	kfree(copy);
	if (ret)
		return ret;
	if (!have_level)
		return -EINVAL;	/* nothing to set */
	down_write(&z->init_lock);
	if (z->disksize) {
		ret = -EBUSY;
		goto out;
	}
	target = prio ? z->codec2 : z->codec;
	if (target < 0 || (codec >= 0 && codec != target)) {
		ret = -EINVAL;	/* no secondary codec, or another named */
		goto out;
	}
	ret = zbatch_codec_level_check(target, level, z->unit_pages * PAGE_SIZE);
	if (ret)
		goto out;
	if (prio)
		z->level2 = level;
	else
		z->level = level;
out:
	up_write(&z->init_lock);
	return ret ?: len;
}

static ssize_t unit_adapt_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(dev_z(d)->unit_adapt));
}

static ssize_t unit_adapt_store(struct device *d, struct device_attribute *a,
				const char *buf, size_t len)
{
	bool on;
	int ret = kstrtobool(buf, &on);

	if (ret)
		return ret;
	WRITE_ONCE(dev_z(d)->unit_adapt, on);
	return len;
}

static ssize_t mem_limit_show(struct device *d, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  (u64)READ_ONCE(dev_z(d)->mem_limit_pages) << PAGE_SHIFT);
}

static ssize_t mem_limit_store(struct device *d, struct device_attribute *a,
			       const char *buf, size_t len)
{
	u64 limit = memparse(buf, NULL);

	WRITE_ONCE(dev_z(d)->mem_limit_pages, PAGE_ALIGN(limit) >> PAGE_SHIFT);
	return len;
}

static u64 st(struct zb_swapdev *z, enum zb_dev_stat s)
{
	return atomic64_read(&z->stats[s]);
}

/*
 * As zram's mm_stat, field for field: orig_data_size compr_data_size
 * mem_used_total mem_limit mem_used_max same_pages pages_compacted
 * huge_pages huge_pages_since (Documentation/ABI/zbatch).
 */
static ssize_t mm_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	struct zs_pool_stats ps = {};
	u64 used = 0;

	down_read(&z->init_lock);
	if (z->pool) {
		used = zs_get_total_pages(z->pool);
		zs_pool_stats(z->pool, &ps);
	}
	up_read(&z->init_lock);
	return sysfs_emit(buf, "%8llu %8llu %8llu %8llu %8llu %8llu %8lu %8llu %8llu\n",
			  st(z, ZBS_ORIG_PAGES) << PAGE_SHIFT, st(z, ZBS_COMPR_BYTES),
			  used << PAGE_SHIFT,
			  (u64)READ_ONCE(z->mem_limit_pages) << PAGE_SHIFT,
			  st(z, ZBS_MAX_USED_PAGES) << PAGE_SHIFT,
			  st(z, ZBS_SAME_PAGES), atomic_long_read(&ps.pages_compacted),
			  st(z, ZBS_HUGE_PAGES), st(z, ZBS_HUGE_PAGES_SINCE));
}

/* As zram's io_stat: failed_reads failed_writes invalid_io notify_free. */
static ssize_t io_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);

	return sysfs_emit(buf, "%8llu %8llu %8llu %8llu\n", st(z, ZBS_FAILED_READS),
			  st(z, ZBS_FAILED_WRITES), st(z, ZBS_INVALID_IO),
			  st(z, ZBS_NOTIFY_FREE));
}

/* zbatch's own: units, partial I/O, refusals. */
static ssize_t unit_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);

	return sysfs_emit(buf, "units %llu\nunit_fallbacks %llu\npartial_reads %llu\n"
			  "partial_read_bytes %llu\npartial_writes %llu\nlimit_refused %llu\n"
			  "miss_free %llu\ncomp_errors %llu\ndecomp_redone %llu\n"
			  "write_stalls %llu\nstream_waits %llu\ndirect_reads %llu\n"
			  "direct_bios %llu\nunit_reads_whole %llu\nunit_reads_part %llu\n"
			  "units_declined %llu\nwriteback_failed %llu\nbd_read_failed %llu\n"
			  "secondary_reads %llu\ncopy_ns_per_4k %llu\nfallback_pages_kept %llu\n"
			  "reserve_misses %llu\n",
			  st(z, ZBS_UNITS), st(z, ZBS_UNIT_FALLBACKS), st(z, ZBS_PARTIAL_READS),
			  st(z, ZBS_PARTIAL_READ_BYTES), st(z, ZBS_PARTIAL_WRITES),
			  st(z, ZBS_LIMIT_REFUSED), st(z, ZBS_MISS_FREE),
			  st(z, ZBS_COMP_ERRORS), st(z, ZBS_DECOMP_REDONE),
			  st(z, ZBS_WRITE_STALLS), st(z, ZBS_STREAM_WAITS),
			  st(z, ZBS_DIRECT_READS), st(z, ZBS_DIRECT_BIOS),
			  st(z, ZBS_UNIT_READS_WHOLE), st(z, ZBS_UNIT_READS_PART),
			  st(z, ZBS_UNITS_DECLINED), st(z, ZBS_BD_WRITE_FAILED),
			  st(z, ZBS_BD_READ_FAILED), st(z, ZBS_SECONDARY_READS),
			  zbatch_cost_of(&z->copy_ns_kib, PAGE_SIZE), st(z, ZBS_FALLBACK_KEPT),
			  st(z, ZBS_RESERVE_MISSES));
}

/* Requests per batch of device I/O: "size writes reads", sizes with any. */
static ssize_t batch_stat_show(struct device *d, struct device_attribute *a, char *buf)
{
	struct zb_swapdev *z = dev_z(d);
	unsigned int i;
	int n = 0;

	n += sysfs_emit_at(buf, n, "# requests_per_batch write_batches read_batches\n");
	for (i = 1; i <= ZBATCH_MAX_BATCH; i++) {
		u64 w = atomic64_read(&z->batch_hist[WRITE][i]);
		u64 r = atomic64_read(&z->batch_hist[READ][i]);

		if (w || r)
			n += sysfs_emit_at(buf, n, "%u %llu %llu\n", i, w, r);
	}
	return n;
}

static DEVICE_ATTR_RW(disksize);
static DEVICE_ATTR_RW(unit);
static DEVICE_ATTR_RW(codec);
static DEVICE_ATTR_RW(algorithm_params);
static DEVICE_ATTR_RW(mem_limit);
static DEVICE_ATTR_RW(unit_adapt);
static DEVICE_ATTR_RO(mm_stat);
static DEVICE_ATTR_RO(io_stat);
static DEVICE_ATTR_RO(unit_stat);
static DEVICE_ATTR_RO(batch_stat);

static struct attribute *zb_attrs[] = {
	&dev_attr_disksize.attr, &dev_attr_unit.attr, &dev_attr_codec.attr,
	&dev_attr_algorithm_params.attr,
	&dev_attr_mem_limit.attr, &dev_attr_unit_adapt.attr, &dev_attr_mm_stat.attr,
	&dev_attr_io_stat.attr, &dev_attr_unit_stat.attr, &dev_attr_batch_stat.attr,
	/* writeback: swapdev_wb.c */
	&dev_attr_backing_dev.attr, &dev_attr_idle.attr, &dev_attr_writeback.attr,
	&dev_attr_writeback_limit.attr, &dev_attr_writeback_limit_enable.attr,
	&dev_attr_bd_stat.attr, &dev_attr_recomp_algorithm.attr, &dev_attr_recompress.attr,
	&dev_attr_recomp_budget.attr, &dev_attr_recomp_interval.attr,
	&dev_attr_recomp_stat.attr, NULL,
};

static const struct attribute_group zb_group = {
	.name = "zbatch",
	.attrs = zb_attrs,
};

static const struct attribute_group *zb_groups[] = { &zb_group, NULL };

/* ---- create / destroy ---- */
static int zb_add(void)
{
	struct queue_limits lim = {
		.logical_block_size = PAGE_SIZE,
		.physical_block_size = PAGE_SIZE,
		.io_min = PAGE_SIZE,
		.io_opt = PAGE_SIZE,
		.max_hw_discard_sectors = UINT_MAX,
		.max_write_zeroes_sectors = UINT_MAX,
		/* swap: synchronous, non-rotational, pages stable while stored */
		.features = BLK_FEAT_STABLE_WRITES | BLK_FEAT_SYNCHRONOUS,
	};
	struct zb_swapdev *z;
	int ret, id;

	lockdep_assert_held(&zb_lock);
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	z = kzalloc(sizeof(*z), GFP_KERNEL);
	if (!z) {
		ret = -ENOMEM;
		goto err_put;
	}
	id = idr_alloc(&zb_idr, z, 0, ZB_SWAPDEV_MAX, GFP_KERNEL);
	if (id < 0) {
		ret = id == -ENOSPC ? -ENOSPC : id;
		goto err_free;
	}
	z->id = id;
	z->codec = ZBATCH_CODEC_LZ4;
	z->unit_pages = 1;
	z->unit_adapt = true;
	init_rwsem(&z->init_lock);
	zb_rc_init(z);
	ret = zb_bd_init(z);
	if (ret)
		goto err_idr;
	z->disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	if (IS_ERR(z->disk)) {
		ret = PTR_ERR(z->disk);
		goto err_bd;
	}
	z->disk->major = zb_major;
	z->disk->first_minor = id;
	z->disk->minors = 1;
	z->disk->flags |= GENHD_FL_NO_PART;
	z->disk->fops = &zb_fops;
	z->disk->private_data = z;
	snprintf(z->disk->disk_name, DISK_NAME_LEN, "zbatchswap%d", id);
	set_capacity(z->disk, 0);
	ret = device_add_disk(NULL, z->disk, zb_groups);
	if (ret)
		goto err_disk;
	return id;

err_disk:
	put_disk(z->disk);
err_bd:
	zb_bd_destroy(z);
err_idr:
	idr_remove(&zb_idr, id);
err_free:
	kfree(z);
err_put:
	module_put(THIS_MODULE);
	return ret;
}

static int zb_remove(struct zb_swapdev *z)
{
	lockdep_assert_held(&zb_lock);
	mutex_lock(&z->disk->open_mutex);
	if (disk_openers(z->disk)) {
		mutex_unlock(&z->disk->open_mutex);
		return -EBUSY;
	}
	WRITE_ONCE(z->claim, true);
	mutex_unlock(&z->disk->open_mutex);
	sync_blockdev(z->disk->part0);
	del_gendisk(z->disk);
	zb_rc_stop(z);		/* its attributes are gone: it stays stopped */
	down_write(&z->init_lock);
	zb_rc_destroy(z);
	streams_destroy(z);
	zb_store_destroy(z);
	zb_bd_destroy(z);
	up_write(&z->init_lock);
	put_disk(z->disk);
	idr_remove(&zb_idr, z->id);
	kfree(z);
	module_put(THIS_MODULE);
	return 0;
}

/* ---- /sys/kernel/zbatch/swapdev/{hot_add,hot_remove} ---- */
static ssize_t hot_add_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	int id;

	mutex_lock(&zb_lock);
	id = zb_add();
	mutex_unlock(&zb_lock);
	if (id < 0)
		return id;
	return sysfs_emit(buf, "%d\n", id);
}

static ssize_t hot_remove_store(struct kobject *k, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	struct zb_swapdev *z;
	int id, ret;

	ret = kstrtoint(buf, 10, &id);
	if (ret)
		return ret;
	mutex_lock(&zb_lock);
	z = id >= 0 ? idr_find(&zb_idr, id) : NULL;
	ret = z ? zb_remove(z) : -ENODEV;
	mutex_unlock(&zb_lock);
	return ret ?: len;
}

static struct kobj_attribute hot_add_attr = __ATTR(hot_add, 0400, hot_add_show, NULL);
static struct kobj_attribute hot_remove_attr = __ATTR_WO(hot_remove);
static struct attribute *ctl_attrs[] = {
	&hot_add_attr.attr, &hot_remove_attr.attr, NULL,
};

static const struct attribute_group ctl_group = {
	.attrs = ctl_attrs,
};

int zbatch_swapdev_create(struct kobject *parent)
{
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "zbatch/swapdev:prepare",
				      zb_cpu_prepare, zb_cpu_dead);
	if (ret < 0)
		return ret;
	zb_cpuhp = ret;
	ret = zb_bd_wq_create();
	if (ret)
		goto err_cpuhp;
	zb_major = register_blkdev(0, "zbatchswap");
	if (zb_major < 0) {
		ret = zb_major;
		goto err_wq;
	}
	zb_kobj = kobject_create_and_add("swapdev", parent);
	if (!zb_kobj) {
		ret = -ENOMEM;
		goto err_blkdev;
	}
	ret = sysfs_create_group(zb_kobj, &ctl_group);
	if (ret)
		goto err_kobj;
	return 0;

err_kobj:
	kobject_put(zb_kobj);
err_blkdev:
	unregister_blkdev(zb_major, "zbatchswap");
err_wq:
	zb_bd_wq_destroy();
err_cpuhp:
	cpuhp_remove_multi_state(zb_cpuhp);
	return ret;
}

/* Every device holds a module reference: none is left at module exit. */
void zbatch_swapdev_destroy(void)
{
	sysfs_remove_group(zb_kobj, &ctl_group);
	kobject_put(zb_kobj);
	unregister_blkdev(zb_major, "zbatchswap");
	zb_bd_wq_destroy();
	idr_destroy(&zb_idr);
	cpuhp_remove_multi_state(zb_cpuhp);
}
