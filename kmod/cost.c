// SPDX-License-Identifier: GPL-2.0
/*
 * Measured dispatch costs: what one KiB of uncompressed data costs each
 * codec and operation on a CPU, and what a hand-off to an engine costs in latency (post
 * to the engine's first claim). Both are moving averages of sampled
 * measurements (1 job or descriptor in ZBATCH_LAT_SAMPLE), so the dispatch
 * follows the machine it runs on: the same rules give different batch
 * splits on a 2-vCPU guest under emulation and on a Xeon.
 *
 * The estimates are single words read and written with READ_ONCE/
 * WRITE_ONCE by any CPU without a lock: a lost update only delays the
 * average by one sample.
 */
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>

#include "codec.h"
#include "cost.h"
#include "plan.h"

unsigned int zbatch_handoff = ZBATCH_HANDOFF_AUTO;

/* Average weight of a new sample: 1/8. */
#define EWMA_SHIFT	3
/*
 * A job kept inline only because the hand-off looked too expensive is
 * handed off anyway once in this many, and that hand-off is always
 * measured (not 1 in ZBATCH_LAT_SAMPLE), so that a stale estimate (a busy
 * moment) is measured again instead of holding dispatch off for good:
 * each probe an idle CPU answers halves the distance to its latency, so
 * an estimate 30 times too high is gone after about 5 probes (80 jobs).
 * One probe costs a wake-up; while engines miss, the WQ's back-off
 * (wq.c) leaves them out and nothing is probed.
 */
#define EXPLORE_EVERY	16

static unsigned long ns_per_kib[ZBATCH_CODEC_NR][2];
/* post to start for an engine that slept (a wake-up) and one that polled */
static unsigned long handoff_ns, handoff_warm_ns;
static atomic_t explore;

static void ewma(unsigned long *avg, unsigned long sample)
{
	unsigned long old = READ_ONCE(*avg);

	WRITE_ONCE(*avg, old ? old - (old >> EWMA_SHIFT) + (sample >> EWMA_SHIFT) :
			       sample);
}

static u64 ns_kib(u64 ns, u64 bytes)
{
	return max_t(u64, div64_u64(ns * 1024, bytes), 1);
}

void zbatch_cost_sample(unsigned long *ns_per_kib, u64 bytes, u64 ns)
{
	unsigned long old = READ_ONCE(*ns_per_kib);

	if (!bytes)
		return;
	/*
	 * A sample counts 4 times the average at most (an interrupt in a
	 * timed copy): what it prices may stop being sampled (a read kept
	 * where its data lies copies nothing).
	 */
	ewma(ns_per_kib, old ? min_t(u64, ns_kib(ns, bytes), 4ULL * old) : ns_kib(ns, bytes));
}

u64 zbatch_cost_of(const unsigned long *ns_per_kib, u64 bytes)
{
	return div_u64(READ_ONCE(*ns_per_kib) * bytes, 1024);
}

void zbatch_cost_exec(unsigned int codec, enum zbatch_op op,
		      unsigned int bytes, u64 ns)
{
	codec = zbatch_codec_family(codec);	/* lz4 units cost as lz4 */
	if (codec >= ZBATCH_CODEC_NR || !bytes)
		return;
	ewma(&ns_per_kib[codec][op == ZBATCH_OP_DECOMPRESS], ns_kib(ns, bytes));
}

/*
 * A hand-off's latency is a wake-up on an idle CPU; a sample above the
 * average may be a CPU that was busy at the time (engines run at
 * SCHED_IDLE), one below it is what an idle CPU gives. So the average
 * falls fast (halfway to a lower sample) and rises slowly (1/8 of the way,
 * a sample counting 4 times the average at most): a busy moment cannot
 * hold dispatch off for long, a slower machine still moves it up.
 */
void zbatch_cost_handoff(u64 ns, bool woken)
{
	unsigned long *avg = woken ? &handoff_ns : &handoff_warm_ns;
	unsigned long old = READ_ONCE(*avg);

	ns = max_t(u64, ns, 1);
	if (old && ns < old)
		WRITE_ONCE(*avg, old - (old - ns) / 2);
	else
		ewma(avg, old ? min_t(u64, ns, 4ULL * old) : ns);
}

u64 zbatch_cost_work(unsigned int codec, enum zbatch_op op, u64 bytes)
{
	codec = zbatch_codec_family(codec);
	if (codec >= ZBATCH_CODEC_NR)
		return 0;
	return zbatch_cost_of(&ns_per_kib[codec][op == ZBATCH_OP_DECOMPRESS], bytes);
}

u64 zbatch_cost_handoff_ns(void)
{
	return READ_ONCE(handoff_ns);
}

u64 zbatch_cost_handoff_warm_ns(void)
{
	return READ_ONCE(handoff_warm_ns);
}

/*
 * @polling of the @avail helpers are polling for work right now: a slice
 * reaches them without a wake-up, so the hand-off costs the warm latency.
 * @serial_ns is paid on the submitter before any helper can start, like
 * the hand-off's latency, and only if the job is handed off.
 */
unsigned int zbatch_cost_helpers(u64 work_ns, u64 serial_ns, unsigned int nr,
				 unsigned int avail, unsigned int polling,
				 bool *probe)
{
	u64 h = zbatch_cost_handoff_ns();
	unsigned int k;

	switch (READ_ONCE(zbatch_handoff)) {
	case ZBATCH_HANDOFF_NEVER:
		return 0;
	case ZBATCH_HANDOFF_ALWAYS:
		return min(avail, nr);
	}
	if (polling && READ_ONCE(handoff_warm_ns))
		h = min_t(u64, h, READ_ONCE(handoff_warm_ns));
	/* an unmeasured hand-off (0) stays unknown: one helper measures it */
	k = zbatch_plan_helpers(work_ns, h ? h + serial_ns : 0, nr, avail);
	if (!k && probe && nr > 1 && avail && work_ns &&
	    !(atomic_inc_return(&explore) % EXPLORE_EVERY)) {
		*probe = true;
		k = 1;
	}
	return k;
}
