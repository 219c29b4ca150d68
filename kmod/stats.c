// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: counters (global, per device, per WQ, all atomic64), the
 * batch-size histogram and per-operation latency histograms. Read by
 * debugfs.c; reset through debugfs 'reset'.
 */
#include <linux/atomic.h>

#include "internal.h"

const char *const zbatch_stat_names[ZST_NR] = {
	[ZST_COMP_CALLS] = "compress_calls",
	[ZST_DECOMP_CALLS] = "decompress_calls",
	[ZST_COMP_BYTES_IN] = "compress_bytes_in",
	[ZST_COMP_BYTES_OUT] = "compress_bytes_out",
	[ZST_DECOMP_BYTES_IN] = "decompress_bytes_in",
	[ZST_DECOMP_BYTES_OUT] = "decompress_bytes_out",
	[ZST_COMPLETIONS] = "completions",
	[ZST_RETRIES] = "enqueue_retries",
	[ZST_TIMEOUTS] = "timeouts",
	[ZST_SW_FALLBACKS] = "sw_fallbacks",
	[ZST_HELPED] = "submitter_helped",
	[ZST_INLINE] = "inline_runs",
	[ZST_ERR_NOSPC] = "err_nospc",
	[ZST_ERR_BADMSG] = "err_badmsg",
	[ZST_ERR_INVAL] = "err_inval",
	[ZST_ERR_VERIFY] = "err_verify",
	[ZST_ERR_TIMEDOUT] = "err_timedout",
	[ZST_ERR_OTHER] = "err_other",
};

struct zbatch_stats zbatch_gstats;
static atomic64_t batch_hist[ZBATCH_MAX_BATCH + 1];
static atomic64_t lat_hist[2][ZBATCH_LAT_BUCKETS];

void zbatch_stats_batch(unsigned int nr)
{
	atomic64_inc(&batch_hist[min_t(unsigned int, nr, ZBATCH_MAX_BATCH)]);
}

u64 zbatch_stats_batch_hist(unsigned int nr)
{
	return nr <= ZBATCH_MAX_BATCH ? atomic64_read(&batch_hist[nr]) : 0;
}

void zbatch_stats_latency(enum zbatch_op op, u64 ns)
{
	atomic64_inc(&lat_hist[op == ZBATCH_OP_DECOMPRESS][zbatch_lat_bucket(ns)]);
}

void zbatch_stats_latency_hist(enum zbatch_op op, unsigned long long *out)
{
	unsigned int b;

	for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
		out[b] = atomic64_read(&lat_hist[op == ZBATCH_OP_DECOMPRESS][b]);
}

static void reset(struct zbatch_stats *s)
{
	unsigned int i;

	for (i = 0; i < ZST_NR; i++)
		atomic64_set(&s->v[i], 0);
}

void zbatch_stats_reset(void)
{
	unsigned int d, w, b;

	reset(&zbatch_gstats);
	for (d = 0; d < zbatch_nr_devs; d++) {
		reset(&zbatch_devs[d]->stats);
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++)
			reset(&zbatch_devs[d]->wqs[w]->stats);
	}
	for (b = 0; b <= ZBATCH_MAX_BATCH; b++)
		atomic64_set(&batch_hist[b], 0);
	for (b = 0; b < ZBATCH_LAT_BUCKETS; b++) {
		atomic64_set(&lat_hist[0][b], 0);
		atomic64_set(&lat_hist[1][b], 0);
	}
}
