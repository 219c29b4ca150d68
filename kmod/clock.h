/* SPDX-License-Identifier: GPL-2.0 */
/* The batch core's clock (inline); debugfs clock_skew_ns is codec.c's. */
#ifndef _ZBATCH_CLOCK_H
#define _ZBATCH_CLOCK_H

#include <linux/compiler.h>
#include <linux/sched/clock.h>
#include <linux/smp.h>
#include <linux/types.h>

/*
 * The batch core's clock: local_clock(), monotonic per CPU only. On a
 * machine whose sched_clock is unstable across CPUs (some VMs), a reading
 * on one CPU can be behind one taken earlier on another: every difference
 * of two readings goes through zbatch_ns_between(), which clamps it at 0
 * rather than wrap to about 2^64 (a hand-off average gone, a timeout
 * firing at once). debugfs clock_skew_ns puts odd CPUs' readings ahead by
 * that much, to test exactly this.
 */
extern u64 zbatch_clock_skew_ns;

static inline u64 zbatch_clock(void)
{
	u64 skew = READ_ONCE(zbatch_clock_skew_ns), t = local_clock();

	if (unlikely(skew) && (raw_smp_processor_id() & 1))
		t += skew;
	return t;
}

static inline u64 zbatch_ns_between(u64 t0, u64 t1)
{
	s64 d = (s64)(t1 - t0);

	return d > 0 ? d : 0;
}

static inline u64 zbatch_ns_since(u64 t0)
{
	return zbatch_ns_between(t0, zbatch_clock());
}

#endif /* _ZBATCH_CLOCK_H */
