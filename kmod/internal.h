/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zbatch module internals, shared by the files of kmod/.
 *
 * Locks, outermost first. A lock nests only inside the ones named as its
 * outer locks here; lockdep in the debug kernel (make check-debug) checks
 * this. No spinlock is held while a codec runs, but a swap device's slot
 * locks when a read decompresses one object straight from zsmalloc
 * (swapdev.c, read_mapped(): at most a 16 KiB unit, as zram does a page).
 * Functions documented as running under a lock assert it
 * (lockdep_assert_held(); slot bit locks: slot_assert_locked()).
 *   selftest_lock (mutex, selftest.c): one self-test run. Inside: the whole
 *     batch path, zbatch_cfg_lock (settings), iaa.lock is never taken.
 *   iaa.lock (mutex, exec_iaa.c): IAA attach/detach and the driver name.
 *     Inside: its probe runs batches (ctx_pool_lock, a job's waitq.lock,
 *     an instance's free_lock), detach takes iaa.grave_lock.
 *   zb_lock (mutex, swapdev.c): the swap device table; then a device's
 *     init_lock (rw_semaphore): configuration and teardown, inside which
 *     the CPU hotplug lock (the device's streams come and go with CPUs).
 *     Inside them: allocations, zbatch_ctx_prepare() and a stream's lock.
 *   zb_stream.lock (mutex, swapdev.c): one CPU's I/O stream of a swap
 *     device, held for a bio's I/O (the whole batch path runs inside) or
 *     by the hotplug callbacks that fill and empty it.
 *   zbatch_cfg_lock (mutex): writers of the tunables, of the WQ fault
 *     settings (zbatch_fault) and of WQ 'enabled' put back in service
 *     (the core takes a WQ out of service without it, WRITE_ONCE(); the
 *     single-word debugfs faults, fault_nomem and the like, are written
 *     with WRITE_ONCE() alone). Innermost of the mutexes: nothing nests
 *     inside it.
 *   engines_lock (mutex, exec_sw.c): engine placement; taken inside the
 *     CPU hotplug lock (the hotplug callbacks) and alone (module init).
 *     Inside: the scheduler's own locks (set_cpus_allowed_ptr()), engine
 *     creation and zbatch_ctx_prepare().
 *   ctx_pool_lock (mutex, codec.c): innermost; nothing nests inside it.
 *   zbatch_wq.lock (spinlock, irqsave): one WQ's queue of posted slices
 *     and its descriptor count; one round trip per slice. Inside: only
 *     a job's waitq.lock, when an engine gives a slice back
 *     (sw_repost(): the wake-up must come while the slice holds the job).
 *   zbatch_job.waitq.lock: the release of a job's pending count
 *     (zbatch_job_release()); innermost (wake_up_locked() takes only the
 *     scheduler's own locks).
 *   iaa_inst.free_lock, iaa.grave_lock (spinlocks): innermost.
 *   An engine's slice (exec_sw.c, run_slice()): preemption off from
 *     taking the slice to letting it go; inside: codecs on the engine's
 *     prepared context (no allocation), zbatch_wq.lock, the job's waitq.
 *   swap slots' bit locks: several at once only in index order (a unit's
 *     writer, a region's reader: swapdev_store.c); inside: zsmalloc's
 *     own locks (zs_map_object(), zs_free()) and, for a read straight
 *     from zsmalloc, the codec and the statistics' per-CPU counters.
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
	ZBATCH_SYNC = 0,	/* submit, then help, spin 1 ms, sleep until done */
	ZBATCH_ASYNC,		/* submit returns; the caller polls */
	ZBATCH_ASYNC_IRQ,	/* submit returns; engines wake the waiter */
};

struct zbatch_config {
	unsigned int codec;		/* enum zbatch_codec, never DEFAULT */
	unsigned int sync_mode;
	/* the series' WQ design (map.h): iaa_crypto's names and meanings */
	bool distribute_comps;		/* compress round-robins over the package */
	bool distribute_decomps;	/* decompress too (default: local) */
	unsigned int g_comp_wqs;	/* g_comp_wqs_per_iaa: compress-only WQs */
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
	ZST_HELPED,		/* run by the submitter from an engine's slice */
	ZST_STOLEN,		/* run by an engine from another slice */
	ZST_HANDOFFS,		/* slices posted to engines (one wake-up each) */
	ZST_HELPER_MISSES,	/* ... run by others: no engine in time */
	ZST_YIELDS,		/* ... given back by an engine whose CPU got busy */
	ZST_INLINE_BATCHES,	/* batches run on the submitter only */
	ZST_INLINE,		/* run on the calling CPU by request (acomp) */
	ZST_INLINE_ATOMIC,	/* ... from a caller that cannot sleep */
	ZST_DEVICE_ERRORS,	/* a WQ's record said the device failed: redone */
	ZST_BAD_INPUT,		/* ... and software failed the same: the data */
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

/* Stage timers and per-mode latencies (sampled jobs), debugfs 'stages'. */
enum zbatch_hist {
	ZH_SUBMIT,		/* zbatch_submit() entry to slices posted */
	ZH_QUEUE,		/* slice posted to an engine starting it */
	ZH_EXEC_COMP,		/* one compress descriptor run */
	ZH_EXEC_DECOMP,		/* one decompress descriptor run */
	ZH_COMPLETE,		/* last record written to the waiter seeing it */
	ZH_REQ_SYNC,		/* submit to one request's record, per mode */
	ZH_REQ_ASYNC,
	ZH_REQ_IRQ,
	ZH_BATCH_SYNC,		/* submit to the batch seen complete, per mode */
	ZH_BATCH_ASYNC,
	ZH_BATCH_IRQ,
	ZH_NR,
};

extern const char *const zbatch_hist_names[ZH_NR];
void zbatch_stats_hist(enum zbatch_hist h, u64 ns);
void zbatch_stats_hist_read(enum zbatch_hist h, unsigned long long *out);

/* ---- codecs (codec.c) ---- */
struct zbatch_codec_ops {
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
	bool pooled;		/* a pool's: its memory counts in the pool's */
};

const struct zbatch_codec_ops *zbatch_codec(unsigned int id);
const char *zbatch_codec_name(unsigned int id);	/* uapi ZBATCH_CODEC_NAMES */
int zbatch_codec_by_name(const char *name);
void zbatch_ctx_free(struct zbatch_ctx *ctx);
/* Bytes of a context prepared for every codec (an engine's). */
size_t zbatch_ctx_bytes(void);
/* Allocate @codec's workspace and the verify buffer now (may sleep). */
int zbatch_ctx_prepare(struct zbatch_ctx *ctx, unsigned int codec);
/*
 * Run one descriptor with codec @id in software and write its completion
 * record (the software executor's unit of work; exec_sw.c).
 */
void zbatch_sw_run(struct zbatch_ctx *ctx, const struct iax_hw_desc *d,
		   unsigned int id, bool verify);
/* zbatch_cr_errno() of a record with @status and @error_code */
int zbatch_status_errno(u8 status, u8 error_code, bool compress);
/* The same without descriptor or record: an errno, *@n the output size. */
int zbatch_sw_exec(struct zbatch_ctx *ctx, unsigned int id, bool compress,
		   const void *src, unsigned int slen, void *dst,
		   unsigned int *n, bool verify);
int zbatch_run_inline(struct zbatch_ctx *ctx, struct zbatch_req *req,
		      unsigned int codec);
/*
 * Whether a batch of @nr requests of @op on @bytes of uncompressed data,
 * submitted from this CPU now, would run anywhere but here (IAA, or
 * engines worth their hand-off): false means zbatch_submit() would run it
 * inline, so a caller may as well run each request itself, where its
 * data lies (the swap device decompressing straight from zsmalloc).
 */
bool zbatch_would_offload(unsigned int codec, enum zbatch_op op,
			  unsigned int nr, u64 bytes);
struct zbatch_ctx *zbatch_ctx_get(void);
/* debugfs fault_nomem: zbatch_ctx_get() fails 1 call in N (0: never) */
extern unsigned int zbatch_fault_nomem;

void zbatch_ctx_put(struct zbatch_ctx *ctx);
void zbatch_ctx_pool_destroy(void);
/*
 * The pool's contexts and the memory they hold (allocation sizes as
 * allocated), for debugfs: the pool grows to the most submitters ever
 * running descriptors at once, and keeps that.
 */
unsigned int zbatch_ctx_pooled(void);
unsigned long zbatch_ctx_pooled_bytes(void);

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

/* ---- devices and work queues (wq.c) ---- */
struct zbatch_dev;

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
	bool stalled;			/* debugfs fault injection: a hung WQ */
	bool timeout_logged;
	bool errors_logged;
	struct zbatch_fault fault;	/* debugfs fault injection */
	atomic_t err_streak;		/* device errors in a row (software WQs) */

	spinlock_t lock;		/* protects slices and count */
	struct list_head slices;	/* zbatch_slice.node, FIFO */
	unsigned int count;		/* descriptors of the posted slices */

	/*
	 * Helpers that did not come (software WQs): slices in a row that
	 * others ran before any engine took one, or of which the engine
	 * that took it ran less than half (engines run at SCHED_IDLE:
	 * their CPUs were busy). Until helper_retry_ns only engines polling
	 * right now (on an idle CPU) are offered slices. Words read and
	 * written without a lock: a lost update changes one back-off.
	 */
	unsigned int helper_miss;
	u64 helper_retry_ns;

	struct zbatch_stats stats;
};

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
 * Engines of @wq's device that may help a submitter on @cpu; *@polling
 * (may be NULL) gets how many of them poll for work right now.
 */
unsigned int zbatch_wq_helpers(const struct zbatch_wq *wq, int cpu,
			       unsigned int *polling);
void zbatch_wq_timed_out(struct zbatch_wq *wq);
/* A slice of @wq no engine took (back off) / an engine ran one (stop). */
void zbatch_wq_helper_missed(struct zbatch_wq *wq);
void zbatch_wq_helper_came(struct zbatch_wq *wq);
/* A record of @wq said the device failed; too many in a row: out of service. */
void zbatch_wq_device_error(struct zbatch_wq *wq);

/* ---- the software executor (exec_sw.c) ---- */
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

/* ---- the IAA executor (exec_iaa.c) ---- */
extern const struct zbatch_exec_ops zbatch_exec_iaa;
/* debugfs fault_late_completion_ms (exec_iaa.c, slot_done()) */
extern unsigned int zbatch_fault_late_ms;
/* IAA batches: what one submit hands the device (the seeds' 8 per IAA, x2) */
#define ZBATCH_IAA_BATCH	16
int zbatch_iaa_create(struct kobject *parent);
void zbatch_iaa_destroy(void);
struct zbatch_wq *zbatch_iaa_get(unsigned int codec);
void zbatch_iaa_put(void);
bool zbatch_iaa_serves(unsigned int codec);
void zbatch_iaa_redone(unsigned int n);

/* ---- dispatch costs (cost.c), decisions (plan.c, pure) ---- */
#include "plan.h"
enum zbatch_handoff {
	ZBATCH_HANDOFF_AUTO = 0,	/* from measured costs */
	ZBATCH_HANDOFF_ALWAYS,		/* every engine, even for one request */
	ZBATCH_HANDOFF_NEVER,		/* everything on the submitter */
};

extern unsigned int zbatch_handoff;	/* debugfs 'handoff' */
void zbatch_cost_exec(unsigned int codec, enum zbatch_op op,
		      unsigned int bytes, u64 ns);
void zbatch_cost_handoff(u64 ns, bool woken);
/* Expected ns to run @bytes of @op with @codec on one CPU; 0: unknown. */
u64 zbatch_cost_work(unsigned int codec, enum zbatch_op op, u64 bytes);
/* Hand-off latency to a sleeping engine (a wake-up), to a polling one. */
u64 zbatch_cost_handoff_ns(void);
u64 zbatch_cost_handoff_warm_ns(void);
/*
 * Helpers to hand a job of @nr descriptors and @work_ns to, of @avail
 * engines able to help, @polling of which poll for work right now;
 * @do_explore: a real job, which may be handed off anyway now and then to
 * measure the hand-off again (not a question asked ahead).
 */
unsigned int zbatch_cost_helpers(u64 work_ns, unsigned int nr,
				 unsigned int avail, unsigned int polling,
				 bool do_explore);
void zbatch_cost_reset(void);

/* ---- front ends and control ---- */
int zbatch_sysfs_create(struct kobject **kobj);
int zbatch_sysfs_publish(struct kobject *kobj);
void zbatch_sysfs_unpublish(struct kobject *kobj);
/* sysfs "a [b] c" choice lists, shared by every attribute that has one */
ssize_t zbatch_sysfs_choice(char *buf, const char *const *names,
			    unsigned int nr, unsigned int cur, unsigned int first);
ssize_t zbatch_codec_choice(char *buf, unsigned int cur);
void zbatch_sysfs_destroy(struct kobject *kobj);
void zbatch_debugfs_create(void);
void zbatch_debugfs_destroy(void);
int zbatch_acomp_create(void);
void zbatch_acomp_destroy(void);
extern bool zbatch_acomp_inline;
/* the swap device (swapdev.c): /sys/kernel/zbatch/swapdev/ */
int zbatch_swapdev_create(struct kobject *parent);
void zbatch_swapdev_destroy(void);
int zbatch_chardev_create(void);
void zbatch_chardev_destroy(void);
int zbatch_selftest_run(void);
/* KTAP of the last self-test run, NUL-terminated; under selftest mutex. */
ssize_t zbatch_selftest_read(char __user *buf, size_t len, loff_t *pos);
void zbatch_selftest_destroy(void);

#endif /* _ZBATCH_INTERNAL_H */
