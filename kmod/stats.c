// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics: counters (global, per device, per WQ, all per-CPU), the
 * batch-size histogram and per-operation latency histograms. Read by
 * debugfs.c; reset through debugfs 'reset'.
 */
#include <linux/percpu.h>
#include <linux/string.h>

#include "pct.h"
#include "stats.h"
#include "wq.h"

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
	[ZST_STOLEN] = "engine_stolen",
	[ZST_HANDOFFS] = "handoffs",
	[ZST_HELPER_MISSES] = "helper_misses",
	[ZST_YIELDS] = "engine_yields",
	[ZST_INLINE_BATCHES] = "inline_batches",
	[ZST_INLINE] = "inline_runs",
	[ZST_INLINE_ATOMIC] = "inline_atomic",
	[ZST_DEVICE_ERRORS] = "device_errors",
	[ZST_BAD_INPUT] = "bad_input",
	[ZST_ERR_NOSPC] = "err_nospc",
	[ZST_ERR_BADMSG] = "err_badmsg",
	[ZST_ERR_INVAL] = "err_inval",
	[ZST_ERR_VERIFY] = "err_verify",
	[ZST_ERR_TIMEDOUT] = "err_timedout",
	[ZST_ERR_OTHER] = "err_other",
};

struct zbatch_stats zbatch_gstats;

const char *const zbatch_hist_names[ZH_NR] = {
	[ZH_SUBMIT] = "submit",
	[ZH_QUEUE] = "queue_wait",
	[ZH_EXEC_COMP] = "execute_compress",
	[ZH_EXEC_DECOMP] = "execute_decompress",
	[ZH_COMPLETE] = "completion_to_waiter",
	[ZH_REQ_SYNC] = "request_sync",
	[ZH_REQ_ASYNC] = "request_async",
	[ZH_REQ_IRQ] = "request_async_irq",
	[ZH_BATCH_SYNC] = "batch_sync",
	[ZH_BATCH_ASYNC] = "batch_async",
	[ZH_BATCH_IRQ] = "batch_async_irq",
};

/*
 * Stage and per-mode histograms are sampled (1 in ZBATCH_LAT_SAMPLE), so
 * 32-bit buckets last: ZH_NR x 1 KiB, 11 KiB per CPU.
 */
struct zbatch_hist_cpu {
	unsigned int lat_seq;
	u64 batch[ZBATCH_MAX_BATCH + 1];
	u64 lat[2][ZBATCH_LAT_BUCKETS];
	u32 stage[ZH_NR][ZBATCH_LAT_BUCKETS];
};

static struct zbatch_hist_cpu __percpu *hist;

int zbatch_stats_init(struct zbatch_stats *s)
{
	s->pcpu = alloc_percpu(struct zbatch_stats_cpu);
	return s->pcpu ? 0 : -ENOMEM;
}

void zbatch_stats_free(struct zbatch_stats *s)
{
	free_percpu(s->pcpu);
	s->pcpu = NULL;
}

u64 zbatch_stat_read(const struct zbatch_stats *s, enum zbatch_stat i)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(s->pcpu, cpu)->v[i]);
	return sum;
}

int zbatch_stats_create(void)
{
	int ret = zbatch_stats_init(&zbatch_gstats);

	if (ret)
		return ret;
	hist = alloc_percpu(struct zbatch_hist_cpu);
	if (!hist) {
		zbatch_stats_free(&zbatch_gstats);
		return -ENOMEM;
	}
	return 0;
}

void zbatch_stats_destroy(void)
{
	free_percpu(hist);
	hist = NULL;
	zbatch_stats_free(&zbatch_gstats);
}

bool zbatch_stats_sample(void)
{
	return !(this_cpu_inc_return(hist->lat_seq) % ZBATCH_LAT_SAMPLE);
}

void zbatch_stats_batch(unsigned int nr)
{
	this_cpu_inc(hist->batch[min_t(unsigned int, nr, ZBATCH_MAX_BATCH)]);
}

u64 zbatch_stats_batch_hist(unsigned int nr)
{
	unsigned int cpu;
	u64 sum = 0;

	if (nr > ZBATCH_MAX_BATCH)
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(hist, cpu)->batch[nr]);
	return sum;
}

void zbatch_stats_latency(enum zbatch_op op, u64 ns)
{
	this_cpu_inc(hist->lat[op == ZBATCH_OP_DECOMPRESS][zbatch_lat_bucket(ns)]);
}

void zbatch_stats_hist(enum zbatch_hist h, u64 ns)
{
	this_cpu_inc(hist->stage[h][zbatch_lat_bucket(ns)]);
}

void zbatch_stats_hist_read(enum zbatch_hist h, unsigned long long *out)
{
	unsigned int cpu, b;

	memset(out, 0, ZBATCH_LAT_BUCKETS * sizeof(*out));
	for_each_possible_cpu(cpu)
		for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
			out[b] += READ_ONCE(per_cpu_ptr(hist, cpu)->stage[h][b]);
}

void zbatch_stats_latency_hist(enum zbatch_op op, unsigned long long *out)
{
	unsigned int cpu, b, o = op == ZBATCH_OP_DECOMPRESS;

	memset(out, 0, ZBATCH_LAT_BUCKETS * sizeof(*out));
	for_each_possible_cpu(cpu)
		for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
			out[b] += READ_ONCE(per_cpu_ptr(hist, cpu)->lat[o][b]);
}

/* Not atomic against updaters: a racing increment may survive a reset. */
static void reset(struct zbatch_stats *s)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(s->pcpu, cpu), 0, sizeof(struct zbatch_stats_cpu));
}

void zbatch_stats_reset(void)
{
	unsigned int d, w, cpu;

	reset(&zbatch_gstats);
	for (d = 0; d < zbatch_nr_devs; d++) {
		reset(&zbatch_devs[d]->stats);
		for (w = 0; w < zbatch_devs[d]->nr_wqs; w++)
			reset(&zbatch_devs[d]->wqs[w]->stats);
	}
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(hist, cpu), 0, sizeof(struct zbatch_hist_cpu));
}
