/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Devices and work queues: lifetime, sysfs, WQ choice, helpers, fault
 * injection (wq.c). zbatch_sw_wq.lock: lock order in locks.h.
 */
#ifndef _ZBATCH_WQ_H
#define _ZBATCH_WQ_H

#include <linux/atomic.h>
#include <linux/container_of.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <uapi/linux/zbatch.h>

#include "stats.h"

struct zbatch_dev;
struct zbatch_engine;		/* exec_sw.h */
struct zbatch_exec_ops;

/*
 * Fault injection on a WQ (debugfs devN/wqM/fault; off by default). Its
 * engines answer 1 descriptor in @every (0 or 1: each) with the fault:
 * STATUS writes the record @status/@error_code instead of running it,
 * CORRUPT runs it and writes a record that cannot be true; FULL makes
 * the WQ refuse every slice (post() says -EAGAIN). Fields written under
 * zbatch_cfg_lock, read with READ_ONCE.
 */
enum zbatch_fault_kind {
	ZBATCH_FAULT_NONE = 0,
	ZBATCH_FAULT_STATUS,
	ZBATCH_FAULT_CORRUPT,
	ZBATCH_FAULT_FULL,
};

struct zbatch_fault {
	unsigned int kind;
	u8 status;
	u8 error_code;
	unsigned int every;
	atomic_t seq;
};

/* Whether the next descriptor gets @f's fault (counts descriptors). */
bool zbatch_fault_hit(struct zbatch_fault *f);
/* Consecutive device errors after which a WQ leaves service. */
#define ZBATCH_WQ_ERR_LIMIT	16

/*
 * What the batch core knows of a WQ, whatever executor runs it: where it
 * routes a slice (ops), whether it is in service, what it counts.
 */
struct zbatch_wq {
	struct kobject kobj;		/* /sys/kernel/zbatch/devN/wqM */
	struct zbatch_dev *dev;
	const struct zbatch_exec_ops *ops;
	unsigned int id;
	bool shared;
	unsigned int size;		/* descriptors it may hold queued */
	unsigned int priority;
	/*
	 * In service: set back under zbatch_cfg_lock; the batch core takes
	 * a WQ out of service without it (timeout, device error: WRITE_ONCE)
	 */
	bool enabled;
	bool timeout_logged;
	bool errors_logged;
	/* device errors in a row (ops->device_error); a good record ends it */
	atomic_t err_streak;
	struct zbatch_stats stats;
};

/*
 * A software WQ, the modelled queue the engines of exec_sw.c run: every
 * WQ of a modelled device (zbatch_devs) is one. A device executor (IAA)
 * has a struct zbatch_wq alone: nothing here is in the type they share.
 */
struct zbatch_sw_wq {
	struct zbatch_wq wq;
	spinlock_t lock;		/* protects slices and count */
	struct list_head slices;	/* zbatch_slice.node, FIFO */
	unsigned int count;		/* descriptors of the posted slices */
	bool stalled;			/* debugfs fault injection: a hung WQ */
	struct zbatch_fault fault;	/* debugfs fault injection */
	/*
	 * Helpers that did not come: slices in a row that others ran
	 * before any engine took one, or of which the engine that took it
	 * ran less than half (engines run at SCHED_IDLE: their CPUs were
	 * busy). Until helper_retry_ns only engines polling right now (on
	 * an idle CPU) are offered slices. Words read and written without
	 * a lock: a lost update changes one back-off.
	 */
	unsigned int helper_miss;
	u64 helper_retry_ns;
};

/* The software WQ of @w (a WQ of a modelled device: ops->helpers). */
#define to_sw_wq(w)	container_of_const(w, struct zbatch_sw_wq, wq)

struct zbatch_dev {
	struct kobject kobj;		/* /sys/kernel/zbatch/devN */
	unsigned int id;
	int node;
	unsigned int nr_wqs;
	struct zbatch_wq **wqs;		/* in descending priority order */
	unsigned int nr_engines;
	struct zbatch_engine *engines;
	struct zbatch_stats stats;
};

extern struct zbatch_dev **zbatch_devs;
extern unsigned int zbatch_nr_devs;

int zbatch_wq_create(struct kobject *parent);
void zbatch_wq_destroy(void);
/* WQ for a job of @op submitted from this CPU; NULL: run in software. */
struct zbatch_wq *zbatch_wq_pick(enum zbatch_op op);
/*
 * Engines of @wq's device that may help a submitter on @cpu (handoff
 * auto: one per CPU; with @now, for a batch to post now, fewer while the
 * WQ backs off: those that poll); *@polling (may be NULL) gets how many
 * of them poll for work right now.
 */
unsigned int zbatch_wq_helpers(const struct zbatch_wq *wq, int cpu, bool now,
			       unsigned int *polling);
void zbatch_wq_timed_out(struct zbatch_wq *wq);
/*
 * A slice of software WQ @wq no engine took (back off) / an engine ran
 * one (stop).
 */
void zbatch_wq_helper_missed(struct zbatch_wq *wq);
void zbatch_wq_helper_came(struct zbatch_wq *wq);
/* A record of @wq said the device failed; too many in a row: out of service. */
void zbatch_wq_device_error(struct zbatch_wq *wq);

#endif /* _ZBATCH_WQ_H */
