/* SPDX-License-Identifier: GPL-2.0 */
/* Statistics: per-CPU counters, histograms, stage timers (stats.c). */
#ifndef _ZBATCH_STATS_H
#define _ZBATCH_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <uapi/linux/zbatch.h>

#include "pct.h"

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
	/* on the calling CPU by request: acomp, one-page swap I/O, direct reads, recompression */
	ZST_INLINE,
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

#endif /* _ZBATCH_STATS_H */
