/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The software executor: engine threads, their placement and hotplug,
 * draining slices (exec_sw.c). engines_lock: lock order in locks.h.
 */
#ifndef _ZBATCH_EXEC_SW_H
#define _ZBATCH_EXEC_SW_H

#include <linux/types.h>

#include "codec.h"

struct zbatch_dev;
struct zbatch_exec_ops;
struct zbatch_job;
struct zbatch_slice;
struct zbatch_wq;

/* A software engine: a kernel thread bound to one CPU (exec_sw.c). */
struct zbatch_engine {
	struct task_struct *task;
	struct zbatch_dev *dev;
	struct zbatch_ctx ctx;		/* touched only by task */
	unsigned int id;
	int cpu;			/* where it runs now: READ_ONCE */
	int home;			/* where it was placed; back there when online */
	bool idle;			/* asleep, or about to: a post wakes it */
	bool polling;			/* polling for work, awake (engine_spin()) */
	unsigned int spin_miss;		/* polls in a row that found nothing */
	unsigned int spin_skip;		/* idle periods left to sleep at once */
	u64 slices;			/* counters written by task only */
	u64 descs;
	u64 stolen;
};

extern const struct zbatch_exec_ops zbatch_exec_sw;
int zbatch_sw_start(struct zbatch_dev *dev, unsigned int *next_cpu);
int zbatch_sw_hotplug_start(void);
void zbatch_sw_hotplug_stop(void);
u64 zbatch_engines_descs(void);
void zbatch_sw_stop(struct zbatch_dev *dev);
/*
 * Run what is claimable of @own, then steal from the job's other stealable
 * slices. Returns the descriptors run; *stolen counts those not of @own.
 * At most @max descriptors. The caller releases them. @wq: the WQ whose
 * engine runs them (its faults apply), NULL for the submitter. @flags:
 * ZBATCH_DRAIN_STEAL to take from other slices at all, ZBATCH_DRAIN_YIELD
 * to stop claiming once another task wants the CPU (an engine). @ctx NULL
 * (the submitter got none): each descriptor claimed is failed with
 * ZBATCH_CR_ERR_NOMEM.
 */
#define ZBATCH_DRAIN_STEAL	0x1
#define ZBATCH_DRAIN_YIELD	0x2
unsigned int zbatch_sw_drain(struct zbatch_ctx *ctx, struct zbatch_job *job,
			     struct zbatch_slice *own, struct zbatch_wq *wq,
			     unsigned int flags, unsigned int max,
			     unsigned int *stolen);

#endif /* _ZBATCH_EXEC_SW_H */
