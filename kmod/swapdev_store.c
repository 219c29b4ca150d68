// SPDX-License-Identifier: GPL-2.0
/*
 * The swap device's storage: one slot per 4 KiB page, each empty,
 * same-filled (the fill word, no memory), one zsmalloc object (compressed,
 * or raw when it did not compress), or a page of a multi-page unit. A unit
 * is one compressed stream of 4 or 16 pages kept in ceil(clen / PAGE_SIZE)
 * zsmalloc objects (zsmalloc takes at most a page per object); it is freed
 * as a whole when its last page is freed or overwritten, so a page freed
 * alone keeps the unit's memory until its siblings go (the cost of units).
 *
 * Locking: a bit spinlock per slot (ZB_SLOT_LOCK) protects the slot; a
 * unit's live count is atomic, dropped under the lock of each of its
 * slots, so a unit stays allocated while any of its slots is locked and
 * still holds it. Whoever locks several slots (a unit's writer, a reader
 * of a region) locks them in index order and holds at most a unit's
 * worth; single-slot lockers nest in nothing. Nothing here sleeps with a
 * slot locked: allocations happen before the lock is taken, and a
 * zsmalloc mapping is held only to copy, or to decompress one object in
 * place (zb_object_map(): swapdev.c's read_mapped()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/bit_spinlock.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include <linux/zsmalloc.h>

#include "codec.h"
#include "swapdev.h"

/*
 * One slot per 4 KiB page of the device. flags packs, from bit 0: the
 * object's stored size (16 bits), then the bits below; handle is the
 * zsmalloc handle, the fill word of a same-filled page, the unit, or the
 * block of the backing device a page was written back to.
 * The lock bit is a bit spinlock: it protects the slot's whole state.
 */
#define ZB_SLOT_SIZE_MASK	0xffffUL
#define ZB_SLOT_LOCK		16
#define ZB_SLOT_SAME		17	/* same-filled: handle is the word */
#define ZB_SLOT_HUGE		18	/* stored raw, PAGE_SIZE bytes */
#define ZB_SLOT_UNIT		19	/* part of a unit: handle is the unit */
#define ZB_SLOT_IDX_SHIFT	20	/* page index within its unit */
#define ZB_SLOT_IDX_MASK	(0xfUL << ZB_SLOT_IDX_SHIFT)
#define ZB_SLOT_IDLE		24	/* marked idle, not read or written since */
#define ZB_SLOT_UNDER_WB	25	/* chosen by writeback, unchanged since */
#define ZB_SLOT_WB		26	/* written back: handle is the block */
#define ZB_SLOT_RECOMP		27	/* compressed with the secondary codec */
#define ZB_SLOT_UNDER_RC	28	/* chosen by recompression, unchanged since */
#define ZB_SLOT_INCOMP		29	/* recompression could not shrink it */
/*
 * Bits 32-63: when the page was last written or read, in seconds of boot
 * time (coarse: no clock read beyond the tick's; 2^32 s is 136 years),
 * for "idle N" (zram's ac_time, CONFIG_ZRAM_TRACK_ENTRY_ACTIME, always
 * kept: the word has the room). Cleared with the slot; a recompressed
 * page keeps its time (the same data, not touched by anyone).
 */
#define ZB_SLOT_ATIME_SHIFT	32
static_assert(BITS_PER_LONG == 64, "a slot's time needs the upper half of its flags");

struct zb_slot {
	unsigned long flags;
	unsigned long handle;
};

/* A unit's pages fit the index field (swapdev.h: what the device is built for). */
static_assert(ZB_UNIT_MAX_PAGES - 1 <= ZB_SLOT_IDX_MASK >> ZB_SLOT_IDX_SHIFT);
/* every unit size can be kept as lz4 blocks (zbatch_lz4u_*) */
static_assert(ZB_UNIT_MAX_PAGES <= ZBATCH_LZ4U_MAX_BLOCKS);

/*
 * Allocations in the write path, which runs in reclaim (never recurse
 * into I/O), in two phases as zram's (6.12): under the writer's I/O
 * stream without direct reclaim (a stream held through direct reclaim
 * would stall every I/O of its CPU); when that fails, the writer lets the
 * stream go and reserves what the store needs with direct reclaim
 * (zb_reserve()), then compresses again and stores from the reserve.
 */
#define ZB_GFP_FAST	(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE)
#define ZB_GFP_SLOW	(GFP_NOIO | __GFP_NOWARN | __GFP_HIGHMEM | __GFP_MOVABLE)
#define ZB_UNIT_GFP_FAST	(GFP_NOWAIT | __GFP_NOWARN)
#define ZB_UNIT_GFP_SLOW	(GFP_NOIO | __GFP_NOWARN)

/* debugfs fault_swap_alloc: 1 fast allocation in N fails (0: none) */
unsigned int zb_fault_fast_alloc;
static atomic_t fast_alloc_seq;

static bool fast_alloc_fails(void)
{
	return zbatch_fault_one_in(&zb_fault_fast_alloc, &fast_alloc_seq);
}

void zb_slot_lock(struct zb_swapdev *z, unsigned long index)
{
	bit_spin_lock(ZB_SLOT_LOCK, &z->slots[index].flags);
}

bool zb_slot_trylock(struct zb_swapdev *z, unsigned long index)
{
	return bit_spin_trylock(ZB_SLOT_LOCK, &z->slots[index].flags);
}

void zb_slot_unlock(struct zb_swapdev *z, unsigned long index)
{
	bit_spin_unlock(ZB_SLOT_LOCK, &z->slots[index].flags);
}

/*
 * What "under the slot's lock" means, checked on debug kernels: a bit
 * lock is invisible to lockdep, so test the bit (someone holds it) and
 * that preemption is off (bit_spin_lock() disables it in the holder).
 */
static void slot_assert_locked(struct zb_swapdev *z, unsigned long index)
{
	VM_WARN_ON_ONCE(!bit_spin_is_locked(ZB_SLOT_LOCK, &z->slots[index].flags));
	lockdep_assert_preemption_disabled();
}

void zb_slots_lock(struct zb_swapdev *z, unsigned long index, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		zb_slot_lock(z, index + i);
}

void zb_slots_unlock(struct zb_swapdev *z, unsigned long index, unsigned int n)
{
	while (n--)
		zb_slot_unlock(z, index + n);
}

/* A handle (an object, a unit, a block, a fill word) or a unit's page. */
static bool slot_holds(unsigned long handle, unsigned long flags)
{
	/* slot_in_memory()'s first half: every scan's candidate has it */
	return handle || (flags & BIT(ZB_SLOT_UNIT));
}

/*
 * The first slot of [@index, @end) that may hold a page in memory; else
 * @end (@index when past it). Read without the slots' locks: the scans
 * over a whole device (recompression, writeback, idle marking) pass the
 * empty slots a device mostly has without taking each one's lock (in a
 * profile, 15 MiB stored on a 1 GiB device, locking and testing the 258k
 * empty slots cost recompression about 5% of its CPU, more than zram's
 * whole loop). A hint: a page stored after the peek is left to the next
 * pass, as one stored after the slot's lock was let go would be; a slot
 * that may hold one (slot_holds(): what slot_in_memory() asks first) or
 * is locked (being changed: a recompression's store frees a slot before
 * it sets the new handle) is decided under its lock. The flags are read
 * before the handle, so that a store between the reads is seen by one;
 * what is missed is a slot locked, emptied and refilled entirely between
 * them. Called with no slot locked: yields every 1024 slots, so that a
 * long empty stretch needs no resched of the caller's.
 */
unsigned long zb_slots_next_stored(struct zb_swapdev *z, unsigned long index,
				   unsigned long end)
{
	for (; index < end; index++) {
		const struct zb_slot *s = &z->slots[index];

		/* unlocked on purpose: a hint, decided again under the lock */
		unsigned long flags = data_race(READ_ONCE(s->flags));

		if (flags & BIT(ZB_SLOT_LOCK))
			break;		/* being changed: the lock decides */
		/* unlocked on purpose, after the flags (above) */
		if (slot_holds(data_race(READ_ONCE(s->handle)), flags))
			break;
		if (!(index % 1024))
			cond_resched();
	}
	return index;
}

/*
 * The first slot of [@index, @end) that may hold a page
 * (zb_slots_next_stored()), moved back to its unit's first page but not
 * before @index: a peek may land inside a unit (a recompression's store
 * empties a unit's slots before refilling them), and a region is locked
 * and judged from its unit's first page. @end when there is none
 * (@index when past it). The scans' one way to their next region.
 */
unsigned long zb_region_next(struct zb_swapdev *z, unsigned long index, unsigned long end)
{
	unsigned long next = zb_slots_next_stored(z, index, end);

	return next >= end ? next : max(index, round_down(next, z->unit_pages));
}

static bool slot_test(struct zb_slot *s, int bit)
{
	return test_bit(bit, &s->flags);
}

/* Keep the lock bit, clear the rest; under the slot lock. */
static void slot_clear(struct zb_slot *s)
{
	s->flags &= BIT(ZB_SLOT_LOCK);
	s->handle = 0;
}

/* The time a slot's stores and reads are stamped with, and ages count from. */
u32 zb_slot_now(void)
{
	return (u32)ktime_get_boottime_seconds();
}

static u32 slot_atime(struct zb_slot *s)
{
	return s->flags >> ZB_SLOT_ATIME_SHIFT;
}

/* Under the slot lock. */
static void slot_set_atime(struct zb_slot *s, u32 t)
{
	s->flags = (s->flags & GENMASK(ZB_SLOT_ATIME_SHIFT - 1, 0)) |
		   ((unsigned long)t << ZB_SLOT_ATIME_SHIFT);
}

static void unit_free(struct zb_swapdev *z, struct zb_unit *u)
{
	unsigned int i;

	for (i = 0; i < u->nr_handles; i++)
		zs_free(z->pool, u->handle[i]);
	zb_stat_add(z, ZBS_COMPR_BYTES, -(s64)u->clen);
	zb_stat_add(z, ZBS_UNITS, -1);
	kfree(u);
}

void zb_slot_free(struct zb_swapdev *z, unsigned long index)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (slot_test(s, ZB_SLOT_SAME)) {
		zb_stat_add(z, ZBS_SAME_PAGES, -1);
	} else if (slot_test(s, ZB_SLOT_WB)) {
		zb_bd_free(z, s->handle);
	} else if (slot_test(s, ZB_SLOT_UNIT)) {
		struct zb_unit *u = (struct zb_unit *)s->handle;

		if (atomic_dec_and_test(&u->live))
			unit_free(z, u);
	} else if (s->handle) {
		zs_free(z->pool, s->handle);
		zb_stat_add(z, ZBS_COMPR_BYTES, -(s64)(s->flags & ZB_SLOT_SIZE_MASK));
		if (slot_test(s, ZB_SLOT_HUGE))
			zb_stat_add(z, ZBS_HUGE_PAGES, -1);
	} else {
		slot_clear(s);	/* empty; an idle mark goes too */
		return;
	}
	if (slot_test(s, ZB_SLOT_RECOMP))
		zb_stat_add(z, ZBS_RECOMP_PAGES, -1);
	zb_stat_add(z, ZBS_ORIG_PAGES, -1);
	slot_clear(s);
}

/* Stored (not empty, not same-filled), in memory, not being written back. */
static bool slot_in_memory(struct zb_slot *s)
{
	return slot_holds(s->handle, s->flags) &&
	       !(s->flags & (BIT(ZB_SLOT_SAME) | BIT(ZB_SLOT_WB) | BIT(ZB_SLOT_UNDER_WB)));
}

/* Whether the slot's page fits a post-processing @mode (ZB_WB_*). */
static bool slot_fits(struct zb_slot *s, unsigned int mode)
{
	return slot_in_memory(s) &&
	       (!(mode & ZB_WB_IDLE) || slot_test(s, ZB_SLOT_IDLE)) &&
	       (!(mode & ZB_WB_HUGE) || slot_test(s, ZB_SLOT_HUGE)) &&
	       (!(mode & ZB_WB_INCOMP) || slot_test(s, ZB_SLOT_INCOMP));
}

/*
 * "idle": mark a page that is in memory idle if it was last written or
 * read at least @age seconds before @now (0: any page), else unmark it
 * (as zram's mark_idle(): "idle N" says which pages are idle now);
 * whether it is marked.
 */
bool zb_slot_mark_idle(struct zb_swapdev *z, unsigned long index, u32 age, u32 now)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (!slot_in_memory(s))
		return false;
	if (!zb_slot_older(z, index, age, now)) {
		__clear_bit(ZB_SLOT_IDLE, &s->flags);
		return false;
	}
	__set_bit(ZB_SLOT_IDLE, &s->flags);
	return true;
}

/*
 * Whether the page was last written or read at least @age seconds
 * before @now (0: any page). A page touched since @now was read (a walk
 * takes a while) is younger, never "older" by the time's wrap.
 */
bool zb_slot_older(struct zb_swapdev *z, unsigned long index, u32 age, u32 now)
{
	u32 t = slot_atime(&z->slots[index]);

	slot_assert_locked(z, index);
	return !age || (t <= now && now - t >= age);
}

/*
 * A read of the page: it is not idle, and a writeback or recompression
 * that chose it leaves it as it is (as zram: a page read since it was
 * chosen is not cold; zb_slot_wb_commit() then refuses and the block is
 * dropped, zb_store_recompressed() refuses and its objects are freed).
 */
void zb_slot_accessed(struct zb_swapdev *z, unsigned long index, u32 now)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	s->flags &= ~(BIT(ZB_SLOT_IDLE) | BIT(ZB_SLOT_UNDER_WB) | BIT(ZB_SLOT_UNDER_RC));
	slot_set_atime(s, now);
}

/*
 * Whether writeback may take the page: in memory and fitting @mode
 * (ZB_WB_IDLE, ZB_WB_HUGE, ZB_WB_INCOMP); *@unit says whether it is a
 * unit's page.
 */
bool zb_slot_wb_fits(struct zb_swapdev *z, unsigned long index, unsigned int mode,
		     bool *unit)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	*unit = slot_test(s, ZB_SLOT_UNIT);
	return slot_fits(s, mode);
}

/*
 * Writeback takes the page (it fits): the mark it leaves is cleared by
 * anything that frees or rewrites the slot (slot_clear()), so that
 * zb_slot_wb_commit() knows whether the copy it wrote is still the page.
 */
void zb_slot_wb_choose(struct zb_swapdev *z, unsigned long index)
{
	slot_assert_locked(z, index);
	__set_bit(ZB_SLOT_UNDER_WB, &z->slots[index].flags);
}

/*
 * The page chosen is now in @block: if the slot still holds what was
 * chosen, free its memory and keep the block (true); else the block is
 * not the page's (false: the caller frees it, no reader can have seen it).
 */
bool zb_slot_wb_commit(struct zb_swapdev *z, unsigned long index, unsigned long block)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (!slot_test(s, ZB_SLOT_UNDER_WB))
		return false;
	zb_slot_free(z, index);
	s->handle = block;
	__set_bit(ZB_SLOT_WB, &s->flags);
	zb_stat_add(z, ZBS_ORIG_PAGES, 1);
	return true;
}

/*
 * The page chosen stays in memory: its write was not made, or @failed;
 * then it is no longer idle, so that "writeback idle" does not try it
 * again and again on a failing device (as zram).
 */
void zb_slot_wb_cancel(struct zb_swapdev *z, unsigned long index, bool failed)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (!slot_test(s, ZB_SLOT_UNDER_WB))
		return;		/* freed or rewritten since */
	__clear_bit(ZB_SLOT_UNDER_WB, &s->flags);
	if (failed)
		__clear_bit(ZB_SLOT_IDLE, &s->flags);
}

/*
 * Whether recompression may take the page: in memory, fitting @mode
 * (ZB_WB_IDLE, ZB_WB_HUGE), stored with the primary codec and not
 * found incompressible by the secondary before. *@u: its unit, if any
 * (the caller takes a unit only when all of its pages fit); *@len: the
 * bytes it is stored in (a unit's, once per unit).
 */
bool zb_slot_rc_fits(struct zb_swapdev *z, unsigned long index, unsigned int mode,
		     const struct zb_unit **u, unsigned int *len)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	*u = slot_test(s, ZB_SLOT_UNIT) ? (const struct zb_unit *)s->handle : NULL;
	*len = *u ? (*u)->clen : s->flags & ZB_SLOT_SIZE_MASK;
	return slot_fits(s, mode) &&
	       !(s->flags & (BIT(ZB_SLOT_RECOMP) | BIT(ZB_SLOT_INCOMP) | BIT(ZB_SLOT_UNDER_RC)));
}

/* Recompression takes the page: any free, rewrite or read clears the mark. */
void zb_slot_rc_choose(struct zb_swapdev *z, unsigned long index)
{
	slot_assert_locked(z, index);
	__set_bit(ZB_SLOT_UNDER_RC, &z->slots[index].flags);
}

/*
 * Recompression is done with the page chosen: it stays as it is; an
 * operator's run leaves it no longer idle (as zram's: recompression
 * touched it, writeback of idle pages waits for the next idle mark), the
 * background thread's (@keep_idle) leaves its mark as it was (the marks
 * are the operator's); and when the secondary codec could not shrink
 * it, @incomp marks it so (tried no more; "writeback incompressible"
 * takes it).
 */
void zb_slot_rc_done(struct zb_swapdev *z, unsigned long index, bool incomp, bool keep_idle)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (!slot_test(s, ZB_SLOT_UNDER_RC))
		return;		/* read, freed or rewritten since */
	__clear_bit(ZB_SLOT_UNDER_RC, &s->flags);
	if (!keep_idle)
		__clear_bit(ZB_SLOT_IDLE, &s->flags);
	if (incomp)
		__set_bit(ZB_SLOT_INCOMP, &s->flags);
}

bool zb_page_same_filled(const void *p, unsigned long *word)
{
	const unsigned long *w = p;
	unsigned long v = w[0];
	unsigned int i;

	/* the last word first: most pages that are not fail at once */
	if (w[PAGE_SIZE / sizeof(*w) - 1] != v)
		return false;
	for (i = 1; i < PAGE_SIZE / sizeof(*w) - 1; i++)
		if (w[i] != v)
			return false;
	*word = v;
	return true;
}

bool zb_over_limit(struct zb_swapdev *z)
{
	unsigned long limit = READ_ONCE(z->mem_limit_pages);

	return limit && zs_get_total_pages(z->pool) >= limit;
}

static void used_max(struct zb_swapdev *z)
{
	s64 used = zs_get_total_pages(z->pool);

	if (used > atomic64_read(&z->stats[ZBS_MAX_USED_PAGES]))
		atomic64_set(&z->stats[ZBS_MAX_USED_PAGES], used);
}

void zb_store_same(struct zb_swapdev *z, unsigned long index, unsigned long word)
{
	struct zb_slot *s = &z->slots[index];
	u32 now = zb_slot_now();

	zb_slot_lock(z, index);
	if (slot_test(s, ZB_SLOT_UNIT))
		zb_stat_add(z, ZBS_PARTIAL_WRITES, 1);
	zb_slot_free(z, index);
	s->handle = word;
	__set_bit(ZB_SLOT_SAME, &s->flags);
	slot_set_atime(s, now);
	zb_stat_add(z, ZBS_SAME_PAGES, 1);
	zb_stat_add(z, ZBS_ORIG_PAGES, 1);
	zb_slot_unlock(z, index);
}

static void object_write(struct zb_swapdev *z, unsigned long h, const void *data,
			 unsigned int len)
{
	void *dst = zs_map_object(z->pool, h, ZS_MM_WO);

	memcpy(dst, data, len);
	zs_unmap_object(z->pool, h);
}

/*
 * A zsmalloc object holding @len bytes of @data: the @i-th object @rv
 * reserved, or a new one allocated without direct reclaim; 0 on failure.
 */
static unsigned long object_new(struct zb_swapdev *z, struct zb_reserve *rv,
				unsigned int i, const void *data, unsigned int len)
{
	unsigned long h;

	if (rv && rv->handle[i]) {
		h = rv->handle[i];
		rv->handle[i] = 0;
	} else {
		h = fast_alloc_fails() ? 0 : zs_malloc(z->pool, len, ZB_GFP_FAST);
		if (IS_ERR_VALUE(h) || !h)
			return 0;
	}
	object_write(z, h, data, len);
	return h;
}

/* The bytes of a store's @i-th object when it holds @clen bytes in all. */
static unsigned int piece_len(unsigned int clen, unsigned int i)
{
	return min_t(unsigned int, PAGE_SIZE, clen - i * PAGE_SIZE);
}

/*
 * Reserve, with direct reclaim, what storing @pages pages at @index as
 * @clen bytes takes (one object for a page; a unit's objects and record),
 * for the store that failed its fast allocation: the writer calls this
 * holding no stream. Return: 0 or -ENOMEM (nothing reserved).
 */
int zb_reserve(struct zb_swapdev *z, struct zb_reserve *rv, unsigned long index,
	       unsigned int pages, unsigned int clen)
{
	unsigned int i, k = DIV_ROUND_UP(clen, PAGE_SIZE);

	memset(rv, 0, sizeof(*rv));
	if (WARN_ON_ONCE(!clen || k > ARRAY_SIZE(rv->handle)))
		return -EINVAL;
	if (zb_over_limit(z)) {
		zb_stat_add(z, ZBS_LIMIT_REFUSED, 1);
		return -ENOSPC;
	}
	rv->index = index;
	rv->pages = pages;
	rv->clen = clen;
	if (pages > 1) {
		rv->unit = kmalloc(struct_size(rv->unit, handle, k), ZB_UNIT_GFP_SLOW);
		if (!rv->unit)
			goto err;
	}
	for (i = 0; i < k; i++) {
		unsigned long h = zs_malloc(z->pool, piece_len(clen, i), ZB_GFP_SLOW);

		if (IS_ERR_VALUE(h))
			goto err;
		rv->handle[i] = h;
	}
	return 0;

err:
	zb_reserve_drop(z, rv);
	return -ENOMEM;
}

/* Free what @rv still holds. */
void zb_reserve_drop(struct zb_swapdev *z, struct zb_reserve *rv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rv->handle); i++)
		if (rv->handle[i])
			zs_free(z->pool, rv->handle[i]);
	kfree(rv->unit);
	memset(rv, 0, sizeof(*rv));
}

int zb_reserve_at(const struct zb_reserve *rvs, unsigned int nr, unsigned long index)
{
	unsigned int i;

	/* one at most: write_reserve() makes one per store, each at its slot */
	for (i = 0; i < nr; i++)
		if (rvs[i].clen && rvs[i].index == index)
			return i;
	return -1;
}

bool zb_reserve_fits(const struct zb_reserve *rv, unsigned int pages, unsigned int clen)
{
	return rv->pages == pages && clen <= rv->clen &&
	       DIV_ROUND_UP(clen, PAGE_SIZE) == DIV_ROUND_UP(rv->clen, PAGE_SIZE);
}

int zb_store_page(struct zb_swapdev *z, unsigned long index, const void *data,
		  unsigned int len, struct zb_reserve *rv)
{
	struct zb_slot *s = &z->slots[index];
	u32 now = zb_slot_now();
	unsigned long h;

	/* a reserve was made under the limit: its store goes through */
	if (!rv && zb_over_limit(z)) {
		zb_stat_add(z, ZBS_LIMIT_REFUSED, 1);
		return -ENOSPC;
	}
	h = object_new(z, rv, 0, data, len);
	if (rv)
		rv->clen = 0;	/* used */
	if (!h)
		return -EAGAIN;
	zb_slot_lock(z, index);
	if (slot_test(s, ZB_SLOT_UNIT))
		zb_stat_add(z, ZBS_PARTIAL_WRITES, 1);
	zb_slot_free(z, index);
	s->handle = h;
	s->flags |= len;
	slot_set_atime(s, now);
	if (len == PAGE_SIZE) {
		__set_bit(ZB_SLOT_HUGE, &s->flags);
		zb_stat_add(z, ZBS_HUGE_PAGES, 1);
		zb_stat_add(z, ZBS_HUGE_PAGES_SINCE, 1);
	}
	zb_stat_add(z, ZBS_COMPR_BYTES, len);
	zb_stat_add(z, ZBS_ORIG_PAGES, 1);
	zb_slot_unlock(z, index);
	used_max(z);
	return 0;
}

int zb_store_unit(struct zb_swapdev *z, unsigned long index, unsigned int nr_pages,
		  const void *data, unsigned int clen, struct zb_reserve *rv)
{
	u16 len[ZB_UNIT_MAX_PAGES], plen[ZB_UNIT_MAX_PAGES];
	unsigned int i, off, k = DIV_ROUND_UP(clen, PAGE_SIZE);
	u8 first[ZB_UNIT_MAX_PAGES + 1];
	u32 now = zb_slot_now();
	struct zb_unit *u;
	bool blocks = false;

	/* a reserve was made under the limit: its store goes through */
	if (!rv && zb_over_limit(z)) {
		zb_stat_add(z, ZBS_LIMIT_REFUSED, 1);
		return -ENOSPC;
	}
	/*
	 * An lz4 unit is cut between its blocks, unless its objects were
	 * reserved (as pages: the reserve cannot see the data); either
	 * way the stream is the same.
	 */
	if (!rv && z->io_codec == ZBATCH_CODEC_LZ4U &&
	    !WARN_ON_ONCE(zbatch_lz4u_lens(data, clen, nr_pages, len))) {
		k = zbatch_lz4u_pieces(len, nr_pages, plen, first);
		blocks = true;
	}
	if (rv) {
		u = rv->unit;
		rv->unit = NULL;
		rv->clen = 0;	/* used: its handles go below */
	} else {
		u = fast_alloc_fails() ? NULL :
		    kmalloc(struct_size(u, handle, k), ZB_UNIT_GFP_FAST);
		if (!u)
			return -EAGAIN;
	}
	u->nr_pages = nr_pages;
	u->clen = clen;
	u->nr_handles = 0;
	u->blocks = blocks;
	for (i = 0, off = 0; i < k; i++) {
		unsigned int n = blocks ? plen[i] : piece_len(clen, i);

		u->handle[i] = object_new(z, rv, i, data + off, n);
		if (!u->handle[i])
			goto err_free;
		u->nr_handles++;
		off += n;
	}
	atomic_set(&u->live, nr_pages);
	zb_stat_add(z, ZBS_UNITS, 1);
	zb_stat_add(z, ZBS_COMPR_BYTES, clen);
	/* all at once: a reader of the region sees the old pages or the unit */
	zb_slots_lock(z, index, nr_pages);
	for (i = 0; i < nr_pages; i++) {
		struct zb_slot *s = &z->slots[index + i];

		zb_slot_free(z, index + i);
		s->handle = (unsigned long)u;
		s->flags |= BIT(ZB_SLOT_UNIT) | ((unsigned long)i << ZB_SLOT_IDX_SHIFT);
		slot_set_atime(s, now);
	}
	zb_stat_add(z, ZBS_ORIG_PAGES, nr_pages);
	zb_slots_unlock(z, index, nr_pages);
	used_max(z);
	return 0;

err_free:
	for (i = 0; i < u->nr_handles; i++)
		zs_free(z->pool, u->handle[i]);
	kfree(u);
	return -EAGAIN;
}

/*
 * Replace what recompression chose at @index (@nr_pages pages: a page,
 * or all of a unit's) by @clen bytes of @data, compressed with the
 * secondary codec, if every slot still holds what was chosen (its
 * zb_slot_rc_choose() mark is still there: nothing read, freed or
 * rewritten it since); the page's time stays, and with @keep_idle (the
 * background thread's) its idle mark. The objects are allocated without direct reclaim
 * (recompression can wait; as zram's) and past mem_limit (they replace
 * larger ones). Return: 0; -ESTALE (changed since: nothing stored, the
 * caller lets the slots go); -ENOMEM.
 */
int zb_store_recompressed(struct zb_swapdev *z, unsigned long index, unsigned int nr_pages,
			  const void *data, unsigned int clen, bool keep_idle)
{
	unsigned int i, k = DIV_ROUND_UP(clen, PAGE_SIZE);
	unsigned long h[ZB_UNIT_MAX_PAGES] = {};
	u32 atime[ZB_UNIT_MAX_PAGES];
	bool idle[ZB_UNIT_MAX_PAGES];
	struct zb_unit *u = NULL;
	int ret = 0;

	if (WARN_ON_ONCE(!clen || k > nr_pages || (nr_pages == 1 && clen >= PAGE_SIZE)))
		return -EINVAL;
	if (nr_pages > 1) {
		u = fast_alloc_fails() ? NULL :
		    kmalloc(struct_size(u, handle, k), ZB_UNIT_GFP_FAST);
		if (!u)
			return -ENOMEM;
	}
	for (i = 0; i < k; i++) {
		h[i] = object_new(z, NULL, i, data + i * PAGE_SIZE, piece_len(clen, i));
		if (!h[i]) {
			ret = -ENOMEM;
			goto err;
		}
	}
	used_max(z);	/* the peak: old and new objects both held */
	zb_slots_lock(z, index, nr_pages);
	for (i = 0; i < nr_pages; i++)
		if (!slot_test(&z->slots[index + i], ZB_SLOT_UNDER_RC))
			ret = -ESTALE;
	if (ret) {
		zb_slots_unlock(z, index, nr_pages);
		goto err;
	}
	for (i = 0; i < nr_pages; i++) {
		atime[i] = slot_atime(&z->slots[index + i]);
		idle[i] = keep_idle && slot_test(&z->slots[index + i], ZB_SLOT_IDLE);
		zb_slot_free(z, index + i);
	}
	if (u) {
		u->nr_pages = nr_pages;
		u->clen = clen;
		u->nr_handles = k;
		u->blocks = false;	/* the secondary codec's: cut as pages */
		memcpy(u->handle, h, k * sizeof(h[0]));
		atomic_set(&u->live, nr_pages);
		zb_stat_add(z, ZBS_UNITS, 1);
		for (i = 0; i < nr_pages; i++)
			z->slots[index + i].handle = (unsigned long)u;
	} else {
		z->slots[index].handle = h[0];
		z->slots[index].flags |= clen;
	}
	for (i = 0; i < nr_pages; i++) {
		z->slots[index + i].flags |= BIT(ZB_SLOT_RECOMP);
		if (idle[i])
			__set_bit(ZB_SLOT_IDLE, &z->slots[index + i].flags);
		slot_set_atime(&z->slots[index + i], atime[i]);
		if (u)
			z->slots[index + i].flags |= BIT(ZB_SLOT_UNIT) |
				((unsigned long)i << ZB_SLOT_IDX_SHIFT);
	}
	zb_stat_add(z, ZBS_COMPR_BYTES, clen);
	zb_stat_add(z, ZBS_ORIG_PAGES, nr_pages);
	zb_stat_add(z, ZBS_RECOMP_PAGES, nr_pages);
	zb_slots_unlock(z, index, nr_pages);
	return 0;

err:
	for (i = 0; i < k; i++)
		if (h[i])
			zs_free(z->pool, h[i]);
	kfree(u);
	return ret;
}

void zb_slot_view(struct zb_swapdev *z, unsigned long index, struct zb_view *v)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	if (slot_test(s, ZB_SLOT_SAME)) {
		*v = (struct zb_view){ .kind = ZB_VIEW_SAME, .word = s->handle };
	} else if (slot_test(s, ZB_SLOT_WB)) {
		*v = (struct zb_view){ .kind = ZB_VIEW_WB, .word = s->handle };
	} else if (slot_test(s, ZB_SLOT_UNIT)) {
		*v = (struct zb_view){
			.kind = ZB_VIEW_UNIT,
			.unit = (const struct zb_unit *)s->handle,
			.idx = (s->flags & ZB_SLOT_IDX_MASK) >> ZB_SLOT_IDX_SHIFT,
		};
	} else if (!s->handle) {
		*v = (struct zb_view){ .kind = ZB_VIEW_EMPTY };
	} else {
		*v = (struct zb_view){
			.kind = slot_test(s, ZB_SLOT_HUGE) ? ZB_VIEW_RAW : ZB_VIEW_PAGE,
			.len = s->flags & ZB_SLOT_SIZE_MASK,
		};
	}
	v->secondary = slot_test(s, ZB_SLOT_RECOMP);
}

static void object_copy(struct zb_swapdev *z, unsigned long h, void *dst,
			unsigned int len)
{
	const void *src = zs_map_object(z->pool, h, ZS_MM_RO);

	memcpy(dst, src, len);
	zs_unmap_object(z->pool, h);
}

void zb_slot_copy(struct zb_swapdev *z, unsigned long index, void *dst)
{
	struct zb_slot *s = &z->slots[index];

	slot_assert_locked(z, index);
	object_copy(z, s->handle, dst, s->flags & ZB_SLOT_SIZE_MASK);
}

/*
 * Under the slot's lock: a PAGE slot's bytes, or those of a unit kept in
 * one object, mapped where they lie (NULL for a unit in several
 * objects). Until zb_object_unmap(@h) nothing may sleep (zsmalloc's
 * per-CPU mapping).
 */
const void *zb_object_map(struct zb_swapdev *z, unsigned long index,
			  const struct zb_unit *u, unsigned long *h)
{
	if (u && u->nr_handles != 1)
		return NULL;
	*h = u ? u->handle[0] : z->slots[index].handle;
	return zs_map_object(z->pool, *h, ZS_MM_RO);
}

void zb_object_unmap(struct zb_swapdev *z, unsigned long h)
{
	zs_unmap_object(z->pool, h);
}

/*
 * The cut of block-cut unit @u from its header, in its first object
 * (@obj0, mapped): each block's length (@len), each object's (@plen) and
 * first block (@first). 0 or -EIO (not what the store made).
 */
static int unit_cut(struct zb_swapdev *z, const struct zb_unit *u, const void *obj0,
		    u16 *len, u16 *plen, u8 *first)
{
	if (zbatch_lz4u_lens(obj0, u->clen, u->nr_pages, len) ||
	    zbatch_lz4u_pieces(len, u->nr_pages, plen, first) != u->nr_handles) {
		/* data-dependent: logged, never a WARN (panic_on_warn) */
		pr_err_ratelimited("zbatchswap%d: a %u-page unit's header is not as stored (%u bytes in %u objects): read failed\n",
				   z->id, u->nr_pages, u->clen, u->nr_handles);
		return -EIO;
	}
	return 0;
}

int zb_unit_copy(struct zb_swapdev *z, const struct zb_unit *u, void *dst)
{
	u16 len[ZB_UNIT_MAX_PAGES], plen[ZB_UNIT_MAX_PAGES];
	u8 first[ZB_UNIT_MAX_PAGES + 1];
	unsigned int i, off;
	const void *src;
	int ret;

	if (!u->blocks) {
		for (i = 0; i < u->nr_handles; i++)
			object_copy(z, u->handle[i], dst + i * PAGE_SIZE,
				    piece_len(u->clen, i));
		return 0;
	}
	src = zs_map_object(z->pool, u->handle[0], ZS_MM_RO);
	ret = unit_cut(z, u, src, len, plen, first);
	if (!ret)
		memcpy(dst, src, plen[0]);
	zs_unmap_object(z->pool, u->handle[0]);
	if (ret)
		return ret;
	for (i = 1, off = plen[0]; i < u->nr_handles; off += plen[i++])
		object_copy(z, u->handle[i], dst + off, plen[i]);
	return 0;
}

int zb_unit_decode(struct zb_swapdev *z, const struct zb_unit *u, u8 *out)
{
	u16 len[ZB_UNIT_MAX_PAGES], plen[ZB_UNIT_MAX_PAGES];
	u8 first[ZB_UNIT_MAX_PAGES + 1];
	unsigned int i, k, off;
	int ret = 0;

	if (WARN_ON_ONCE(!u->blocks))
		return -EIO;
	for (i = 0; i < u->nr_handles && !ret; i++) {
		const void *src = zs_map_object(z->pool, u->handle[i], ZS_MM_RO);

		off = 0;
		if (!i) {
			ret = unit_cut(z, u, src, len, plen, first);
			off = u->nr_pages * sizeof(__le16);
		}
		/* each block's dictionary: the pages before it, in @out */
		for (k = ret ? 0 : first[i]; !ret && k < first[i + 1]; off += len[k++])
			ret = zbatch_lz4u_block(src + off, len[k], out, k) ? -EIO : 0;
		zs_unmap_object(z->pool, u->handle[i]);
	}
	return ret;
}

int zb_store_init(struct zb_swapdev *z, u64 disksize)
{
	char name[24];

	lockdep_assert_held_write(&z->init_lock);
	z->nr_pages = disksize >> PAGE_SHIFT;
	z->slots = vzalloc(array_size(z->nr_pages, sizeof(*z->slots)));
	if (!z->slots)
		return -ENOMEM;
	snprintf(name, sizeof(name), "zbatchswap%d", z->id);
	z->pool = zs_create_pool(name);
	if (!z->pool)
		goto err_slots;
	return 0;

err_slots:
	vfree(z->slots);
	z->slots = NULL;
	return -ENOMEM;
}

/* No I/O in flight (no openers): free everything stored. */
void zb_store_destroy(struct zb_swapdev *z)
{
	unsigned long i;

	lockdep_assert_held_write(&z->init_lock);
	if (!z->slots)
		return;
	for (i = 0; i < z->nr_pages; i++) {
		zb_slot_lock(z, i);
		zb_slot_free(z, i);
		zb_slot_unlock(z, i);
	}
	zs_destroy_pool(z->pool);
	vfree(z->slots);
	z->slots = NULL;
	z->pool = NULL;
	z->nr_pages = 0;
}
