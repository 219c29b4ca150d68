/* SPDX-License-Identifier: GPL-2.0 */
/* Measured dispatch costs (cost.c); the decisions from them are plan.h's. */
#ifndef _ZBATCH_COST_H
#define _ZBATCH_COST_H

#include <linux/types.h>
#include <uapi/linux/zbatch.h>

enum zbatch_handoff {
	ZBATCH_HANDOFF_AUTO = 0,	/* from measured costs */
	ZBATCH_HANDOFF_ALWAYS,		/* every engine, even for one request */
	ZBATCH_HANDOFF_NEVER,		/* everything on the submitter */
};

extern unsigned int zbatch_handoff;	/* debugfs 'handoff' */
void zbatch_cost_exec(unsigned int codec, enum zbatch_op op,
		      unsigned int bytes, u64 ns);
/*
 * A moving average of ns per KiB kept by a caller (a swap device's read
 * copies): @ns spent on @bytes is one sample; zbatch_cost_of() prices
 * @bytes at the average (0: none measured yet).
 */
void zbatch_cost_sample(unsigned long *ns_per_kib, u64 bytes, u64 ns);
u64 zbatch_cost_of(const unsigned long *ns_per_kib, u64 bytes);
void zbatch_cost_handoff(u64 ns, bool woken);
/* Expected ns to run @bytes of @op with @codec on one CPU; 0: unknown. */
u64 zbatch_cost_work(unsigned int codec, enum zbatch_op op, u64 bytes);
/* Hand-off latency to a sleeping engine (a wake-up), to a polling one. */
u64 zbatch_cost_handoff_ns(void);
u64 zbatch_cost_handoff_warm_ns(void);
/*
 * Helpers to hand a job of @nr descriptors and @work_ns to, of @avail
 * engines able to help, @polling of which poll for work right now;
 * @serial_ns: what the submitter pays first only when it hands off;
 * @probe: NULL for a question asked ahead; for a real job, set true when
 * the job is handed off anyway (1 helper) to measure the hand-off again,
 * left alone otherwise.
 */
unsigned int zbatch_cost_helpers(u64 work_ns, u64 serial_ns, unsigned int nr,
				 unsigned int avail, unsigned int polling,
				 bool *probe);

/*
 * Whether a run's time is a sample of @op's cost: the cost per KiB is the
 * codec's at its default level (@level 0: callers pass the default as 0,
 * zbatch_codec_level_norm()); a compress at another level (a swap
 * device's, up to 100 times dearer for zstd) is left out, so that one
 * device's level does not move every other user's dispatch. Its own
 * batches are then priced at the default level's cost: a dearer level is
 * handed to engines less than it would pay, a cheaper one more.
 */
static inline bool zbatch_cost_counts(int level, enum zbatch_op op)
{
	return !level || op != ZBATCH_OP_COMPRESS;
}

#endif /* _ZBATCH_COST_H */
