/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zbatch module internals, shared by the files of kmod/.
 *
 * Lock order (outer first):
 *   zbatch_cfg_lock (mutex: tunables and the WQ layout's enabled flags)
 *     -> zbatch_wq.lock (spinlock: one WQ's queue)
 *       -> zbatch_batch.waitq.lock (completion of a batch)
 * No lock is held while a codec runs.
 */
#ifndef _ZBATCH_INTERNAL_H
#define _ZBATCH_INTERNAL_H

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/zbatch.h>

#include "pct.h"

/* ---- tunables (sysfs.c); read with READ_ONCE, written under cfg_lock ---- */
enum zbatch_sync_mode {
	ZBATCH_SYNC = 0,	/* submit, then spin (helping) until done */
	ZBATCH_ASYNC,		/* submit returns; the caller polls */
	ZBATCH_ASYNC_IRQ,	/* submit returns; engines wake the waiter */
};

enum zbatch_policy {
	ZBATCH_POLICY_LOCAL = 0,	/* every job on the CPU's local device */
	ZBATCH_POLICY_GLOBAL,		/* compress round-robins over the node */
};

struct zbatch_config {
	unsigned int codec;		/* enum zbatch_codec, never DEFAULT */
	unsigned int sync_mode;
	unsigned int policy;
	bool verify;
	unsigned int timeout_ms;
};

extern struct mutex zbatch_cfg_lock;
extern struct zbatch_config zbatch_cfg;

/* ---- statistics (stats.c) ---- */
enum zbatch_stat {
	ZST_COMP_CALLS,
	ZST_DECOMP_CALLS,
	ZST_COMP_BYTES_IN,
	ZST_COMP_BYTES_OUT,
	ZST_DECOMP_BYTES_IN,
	ZST_DECOMP_BYTES_OUT,
	ZST_COMPLETIONS,	/* requests completed with status 0 */
	ZST_RETRIES,		/* enqueue refused: WQ full */
	ZST_TIMEOUTS,
	ZST_SW_FALLBACKS,	/* ran in the submitter: WQ full/none/timed out */
	ZST_HELPED,		/* queued ones run by the waiting submitter */
	ZST_INLINE,		/* run on the calling CPU by request (acomp) */
	ZST_ATOMIC_INLINE,	/* acomp engine path asked, caller atomic */
	ZST_ERR_NOSPC,
	ZST_ERR_BADMSG,
	ZST_ERR_INVAL,
	ZST_ERR_VERIFY,
	ZST_ERR_TIMEDOUT,
	ZST_ERR_OTHER,
	ZST_NR,
};

/* Per-CPU counters: updates are one this_cpu_add(), reads sum the CPUs. */
struct zbatch_stats_cpu {
	u64 v[ZST_NR];
};

struct zbatch_stats {
	struct zbatch_stats_cpu __percpu *pcpu;
};

extern const char *const zbatch_stat_names[ZST_NR];
extern struct zbatch_stats zbatch_gstats;

static inline void zbatch_stat_add(struct zbatch_stats *s, enum zbatch_stat i,
				   u64 n)
{
	this_cpu_add(s->pcpu->v[i], n);
}

int zbatch_stats_init(struct zbatch_stats *s);
void zbatch_stats_free(struct zbatch_stats *s);
u64 zbatch_stat_read(const struct zbatch_stats *s, enum zbatch_stat i);
/* Global counters and histograms: created first, destroyed last. */
int zbatch_stats_create(void);
void zbatch_stats_destroy(void);
/*
 * Latency is recorded for one request in ZBATCH_LAT_SAMPLE per CPU: two
 * clock reads per request cost more than the rest of the inline path.
 */
#define ZBATCH_LAT_SAMPLE	16
bool zbatch_stats_sample(void);
void zbatch_stats_batch(unsigned int nr);
void zbatch_stats_latency(enum zbatch_op op, u64 ns);
void zbatch_stats_reset(void);
u64 zbatch_stats_batch_hist(unsigned int nr);
void zbatch_stats_latency_hist(enum zbatch_op op, unsigned long long *out);

/* ---- codecs (codec.c) ---- */
struct zbatch_codec_ops {
	const char *name;
	size_t (*wrk_size)(void);
	int (*wrk_init)(void *wrk);
	/* Return 0, -ENOSPC (does not fit), -EBADMSG/-EINVAL (bad stream). */
	int (*compress)(void *wrk, const void *src, unsigned int slen,
			void *dst, unsigned int *dlen);
	int (*decompress)(void *wrk, const void *src, unsigned int slen,
			  void *dst, unsigned int *dlen);
};

/* Per executing context scratch: codec workspaces, a verify buffer. */
struct zbatch_ctx {
	void *wrk[ZBATCH_CODEC_NR];
	void *verify_buf;	/* ZBATCH_MAX_LEN bytes, on first verify */
	struct list_head node;	/* in the submitter pool */
};

const struct zbatch_codec_ops *zbatch_codec(unsigned int id);
int zbatch_codec_by_name(const char *name);
void zbatch_ctx_free(struct zbatch_ctx *ctx);
/* Bytes of a context prepared for every codec (an engine's). */
size_t zbatch_ctx_bytes(void);
/* Allocate @codec's workspace and the verify buffer now (may sleep). */
int zbatch_ctx_prepare(struct zbatch_ctx *ctx, unsigned int codec);
/* Runs req->desc with codec @id; fills req->status and req->produced. */
void zbatch_execute(struct zbatch_ctx *ctx, struct zbatch_req *req,
		    unsigned int id);
int zbatch_run_inline(struct zbatch_ctx *ctx, struct zbatch_req *req,
		      unsigned int codec);
struct zbatch_ctx *zbatch_ctx_get(void);
void zbatch_ctx_put(struct zbatch_ctx *ctx);
void zbatch_ctx_pool_destroy(void);

/* ---- devices, engines, work queues (wq.c) ---- */
struct zbatch_dev;

/*
 * An executor drives one kind of WQ: software engines here, real IAA
 * portals later. The batch core only enqueues and polls completion records.
 */
struct zbatch_exec_ops {
	const char *name;
	/* Queue @req's descriptor; -EAGAIN when the WQ is full (retry). */
	int (*enqueue)(struct zbatch_wq *wq, struct zbatch_req *req);
	/* Take back a still-queued descriptor; false if an engine has it. */
	bool (*reclaim)(struct zbatch_wq *wq, struct zbatch_req *req);
};

struct zbatch_wq {
	struct kobject kobj;		/* /sys/kernel/zbatch/devN/wqM */
	struct zbatch_dev *dev;
	const struct zbatch_exec_ops *ops;
	unsigned int id;
	bool shared;
	unsigned int size;
	unsigned int priority;
	bool enabled;			/* in service; written under cfg_lock */
	bool stalled;			/* debugfs fault injection: engines skip */
	bool timeout_logged;

	spinlock_t lock;		/* protects queue and count */
	struct list_head queue;		/* zbatch_req.qnode, FIFO */
	unsigned int count;

	struct zbatch_stats stats;
};

struct zbatch_engine {
	struct task_struct *task;
	struct zbatch_dev *dev;
	struct zbatch_ctx ctx;		/* touched only by task */
	unsigned int id;
	int cpu;
};

struct zbatch_dev {
	struct kobject kobj;		/* /sys/kernel/zbatch/devN */
	unsigned int id;
	int node;
	unsigned int nr_wqs;
	struct zbatch_wq **wqs;		/* in descending priority order */
	unsigned int nr_engines;
	struct zbatch_engine *engines;
	wait_queue_head_t engine_wait;	/* idle engines sleep here */
	struct zbatch_stats stats;
};

extern struct zbatch_dev **zbatch_devs;
extern unsigned int zbatch_nr_devs;
extern const struct zbatch_exec_ops zbatch_exec_sw;

int zbatch_wq_create(struct kobject *parent);
void zbatch_wq_destroy(void);
/* WQ for a job of @op submitted from this CPU; NULL: run in software. */
struct zbatch_wq *zbatch_wq_pick(enum zbatch_op op);
void zbatch_wq_timed_out(struct zbatch_wq *wq);
void zbatch_map_rebuild(void);
/* Completes req (engine or submitter context). */
void zbatch_req_complete(struct zbatch_req *req);

/* ---- front ends and control ---- */
int zbatch_sysfs_create(struct kobject **kobj);
void zbatch_sysfs_destroy(struct kobject *kobj);
void zbatch_debugfs_create(void);
void zbatch_debugfs_destroy(void);
int zbatch_acomp_create(void);
void zbatch_acomp_destroy(void);
extern bool zbatch_acomp_inline;
int zbatch_chardev_create(void);
void zbatch_chardev_destroy(void);
int zbatch_selftest_run(void);
/* KTAP of the last self-test run, NUL-terminated; under selftest mutex. */
ssize_t zbatch_selftest_read(char __user *buf, size_t len, loff_t *pos);
void zbatch_selftest_destroy(void);

#endif /* _ZBATCH_INTERNAL_H */
