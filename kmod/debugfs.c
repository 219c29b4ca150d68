// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs /sys/kernel/debug/zbatch/: statistics, the batch histogram,
 * latency percentiles, reset, fault injection and the self-tests
 * (Documentation/ABI/zbatch). A debugfs failure never fails module init.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/zbatch.h>

#include "clock.h"
#include "codec.h"
#include "config.h"
#include "cost.h"
#include "exec_acomp.h"
#include "exec_sw.h"
#include "frontends.h"
#include "pct.h"
#include "stats.h"
#include "swapdev.h"
#include "wq.h"

static struct dentry *root;

static int stats_show(struct seq_file *m, void *v)
{
	struct zbatch_stats *s = m->private;
	unsigned int i;

	for (i = 0; i < ZST_NR; i++)
		seq_printf(m, "%s %llu\n", zbatch_stat_names[i], zbatch_stat_read(s, i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static int batch_hist_show(struct seq_file *m, void *v)
{
	unsigned int n;

	seq_puts(m, "# batch_size count\n");
	for (n = 1; n <= ZBATCH_MAX_BATCH; n++)
		seq_printf(m, "%u %llu\n", n, zbatch_stats_batch_hist(n));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(batch_hist);

static int latency_show(struct seq_file *m, void *v)
{
	unsigned long long *h;
	unsigned int op, b;

	h = kcalloc(ZBATCH_LAT_BUCKETS, sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	seq_puts(m, "# op samples p50_ns p95_ns p99_ns (submit to completion, per request)\n");
	for (op = ZBATCH_OP_COMPRESS; op <= ZBATCH_OP_DECOMPRESS; op++) {
		unsigned long long total = 0;

		zbatch_stats_latency_hist(op, h);
		for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
			total += h[b];
		seq_printf(m, "%s %llu %llu %llu %llu\n",
			   op == ZBATCH_OP_COMPRESS ? "compress" : "decompress", total,
			   zbatch_lat_percentile(h, 500), zbatch_lat_percentile(h, 950),
			   zbatch_lat_percentile(h, 990));
	}
	kfree(h);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(latency);

static void pct_line(struct seq_file *m, const char *name,
		     const unsigned long long *h)
{
	unsigned long long total = 0;
	unsigned int b;

	for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
		total += h[b];
	seq_printf(m, "%s %llu %llu %llu %llu\n", name, total,
		   zbatch_lat_percentile(h, 500), zbatch_lat_percentile(h, 950),
		   zbatch_lat_percentile(h, 990));
}

static int stages_show(struct seq_file *m, void *v)
{
	unsigned long long *h;
	unsigned int i;

	h = kcalloc(ZBATCH_LAT_BUCKETS, sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	seq_puts(m, "# stage samples p50_ns p95_ns p99_ns (sampled jobs and descriptors)\n");
	for (i = 0; i < ZH_NR; i++) {
		zbatch_stats_hist_read(i, h);
		pct_line(m, zbatch_hist_names[i], h);
	}
	kfree(h);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stages);

static int engines_show(struct seq_file *m, void *v)
{
	unsigned int d, i;

	seq_puts(m, "# engine cpu slices descriptors stolen cpu_time_ns home\n");
	for (d = 0; d < zbatch_nr_devs; d++) {
		struct zbatch_dev *dev = zbatch_devs[d];

		for (i = 0; i < dev->nr_engines; i++) {
			struct zbatch_engine *e = &dev->engines[i];

			seq_printf(m, "%u.%u %d %llu %llu %llu %llu %d\n", d, i, READ_ONCE(e->cpu),
				   READ_ONCE(e->slices), READ_ONCE(e->descs),
				   READ_ONCE(e->stolen),
				   e->task ? READ_ONCE(e->task->se.sum_exec_runtime) : 0ULL,
				   e->home);
		}
	}
	seq_printf(m, "total - - - - %llu\n", zbatch_engines_runtime_ns());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(engines);

static int costs_show(struct seq_file *m, void *v)
{
	unsigned int c;

	seq_puts(m, "# codec compress_ns_per_4k decompress_ns_per_4k batch_size_compress batch_size_decompress\n");
	for (c = ZBATCH_CODEC_DEFAULT + 1; c < ZBATCH_CODEC_NR; c++)
		seq_printf(m, "%s %llu %llu %u %u\n", zbatch_codec_name(c),
			   zbatch_cost_work(c, ZBATCH_OP_COMPRESS, 4096),
			   zbatch_cost_work(c, ZBATCH_OP_DECOMPRESS, 4096),
			   zbatch_codec_batch_size(c, ZBATCH_OP_COMPRESS),
			   zbatch_codec_batch_size(c, ZBATCH_OP_DECOMPRESS));
	seq_printf(m, "handoff_ns %llu\n", zbatch_cost_handoff_ns());
	seq_printf(m, "handoff_warm_ns %llu\n", zbatch_cost_handoff_warm_ns());
	seq_printf(m, "pooled_contexts %u\n", zbatch_ctx_pooled());
	seq_printf(m, "pooled_context_bytes %lu\n", zbatch_ctx_pooled_bytes());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(costs);

static const char *const handoff_names[] = { "auto", "always", "never" };

static ssize_t handoff_read(struct file *f, char __user *buf, size_t len,
			    loff_t *pos)
{
	unsigned int i, cur = READ_ONCE(zbatch_handoff);
	char out[48];
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(handoff_names); i++)
		n += scnprintf(out + n, sizeof(out) - n, i == cur ? "%s[%s]" : "%s%s",
			       i ? " " : "", handoff_names[i]);
	n += scnprintf(out + n, sizeof(out) - n, "\n");
	return simple_read_from_buffer(buf, len, pos, out, n);
}

static ssize_t handoff_write(struct file *f, const char __user *buf, size_t len,
			     loff_t *pos)
{
	char in[16];
	int i;

	if (!len || len >= sizeof(in))
		return -EINVAL;
	if (copy_from_user(in, buf, len))
		return -EFAULT;
	in[len] = 0;
	i = sysfs_match_string(handoff_names, in);
	if (i < 0)
		return i;
	WRITE_ONCE(zbatch_handoff, i);
	return len;
}

static const struct file_operations handoff_fops = {
	.owner = THIS_MODULE,
	.read = handoff_read,
	.write = handoff_write,
};

/*
 * devN/wqM/fault: "none", "full", "corrupt [EVERY]" or
 * "status STATUS [ERROR_CODE [EVERY]]" (numbers in C notation).
 */
static ssize_t fault_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	struct zbatch_sw_wq *wq = file_inode(f)->i_private;
	char out[64];
	int n;

	switch (READ_ONCE(wq->fault.kind)) {
	case ZBATCH_FAULT_STATUS:
		n = scnprintf(out, sizeof(out), "status 0x%02x 0x%02x every %u\n",
			      READ_ONCE(wq->fault.status), READ_ONCE(wq->fault.error_code),
			      READ_ONCE(wq->fault.every));
		break;
	case ZBATCH_FAULT_CORRUPT:
		n = scnprintf(out, sizeof(out), "corrupt every %u\n", READ_ONCE(wq->fault.every));
		break;
	case ZBATCH_FAULT_FULL:
		n = scnprintf(out, sizeof(out), "full\n");
		break;
	default:
		n = scnprintf(out, sizeof(out), "none\n");
	}
	return simple_read_from_buffer(buf, len, pos, out, n);
}

static ssize_t fault_write(struct file *f, const char __user *buf, size_t len,
			   loff_t *pos)
{
	struct zbatch_sw_wq *wq = file_inode(f)->i_private;
	unsigned int a = 1, b = 0, c = 1, kind;
	char in[64], word[16];
	int n;

	if (!len || len >= sizeof(in))
		return -EINVAL;
	if (copy_from_user(in, buf, len))
		return -EFAULT;
	in[len] = 0;
	n = sscanf(in, "%15s %i %i %u", word, &a, &b, &c);
	if (n < 1)
		return -EINVAL;
	if (!strcmp(word, "none") && n == 1) {
		kind = ZBATCH_FAULT_NONE;
	} else if (!strcmp(word, "full") && n == 1) {
		kind = ZBATCH_FAULT_FULL;
	} else if (!strcmp(word, "corrupt") && n <= 2 && a <= 1000000) {
		kind = ZBATCH_FAULT_CORRUPT;
		c = a;
	} else if (!strcmp(word, "status") && n >= 2 && a > IAX_COMP_SUCCESS &&
		   a <= 0xff && b <= 0xff && c <= 1000000) {
		kind = ZBATCH_FAULT_STATUS;
	} else {
		return -EINVAL;
	}
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(wq->fault.kind, ZBATCH_FAULT_NONE);
	WRITE_ONCE(wq->fault.status, kind == ZBATCH_FAULT_STATUS ? a : 0);
	WRITE_ONCE(wq->fault.error_code, kind == ZBATCH_FAULT_STATUS ? b : 0);
	WRITE_ONCE(wq->fault.every, kind == ZBATCH_FAULT_NONE ? 0 : c);
	atomic_set(&wq->fault.seq, 0);
	/* the kind last: engines read it first */
	smp_store_release(&wq->fault.kind, kind);
	mutex_unlock(&zbatch_cfg_lock);
	return len;
}

static const struct file_operations fault_fops = {
	.owner = THIS_MODULE,
	.read = fault_read,
	.write = fault_write,
};

static ssize_t reset_write(struct file *f, const char __user *buf, size_t len,
			   loff_t *pos)
{
	zbatch_stats_reset();
	return len;
}

static const struct file_operations reset_fops = {
	.owner = THIS_MODULE,
	.write = reset_write,
};

static ssize_t selftest_write(struct file *f, const char __user *buf, size_t len,
			      loff_t *pos)
{
	bool run;
	int ret = kstrtobool_from_user(buf, len, &run);

	if (ret)
		return ret;
	if (!run)
		return len;
	ret = zbatch_selftest_run();
	return ret < 0 ? ret : len;
}

static const struct file_operations selftest_fops = {
	.owner = THIS_MODULE,
	.write = selftest_write,
};

static ssize_t results_read(struct file *f, char __user *buf, size_t len,
			    loff_t *pos)
{
	return zbatch_selftest_read(buf, len, pos);
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
	.llseek = default_llseek,
};

void zbatch_debugfs_create(void)
{
	unsigned int d, w;
	char name[16];

	root = debugfs_create_dir("zbatch", NULL);
	if (IS_ERR(root))
		return;
	debugfs_create_file("stats", 0400, root, &zbatch_gstats, &stats_fops);
	debugfs_create_file("batch_hist", 0400, root, NULL, &batch_hist_fops);
	debugfs_create_file("latency", 0400, root, NULL, &latency_fops);
	debugfs_create_file("stages", 0400, root, NULL, &stages_fops);
	debugfs_create_file("engines", 0400, root, NULL, &engines_fops);
	debugfs_create_file("costs", 0400, root, NULL, &costs_fops);
	debugfs_create_file("handoff", 0600, root, NULL, &handoff_fops);
	debugfs_create_file("reset", 0200, root, NULL, &reset_fops);
	debugfs_create_file("selftest", 0200, root, NULL, &selftest_fops);
	debugfs_create_file("selftest_results", 0400, root, NULL, &results_fops);
	/* fault injection: the submitter's context allocation fails 1 in N */
	debugfs_create_u32("fault_nomem", 0600, root, &zbatch_fault_nomem);
	debugfs_create_u64("clock_skew_ns", 0600, root, &zbatch_clock_skew_ns);
	/* fault injection: the swap device's allocations without reclaim fail 1 in N */
	debugfs_create_u32("fault_swap_alloc", 0600, root, &zb_fault_fast_alloc);
	/* fault injection: 1 in N decompressions with a secondary codec fail */
	debugfs_create_u32("fault_swap_secondary", 0600, root, &zb_fault_secondary);
	/* fault injection: 1 in N of the swap devices' compressions fails */
	debugfs_create_u32("fault_swap_comp", 0600, root, &zb_fault_comp);
	/* fault injection: reads of written-back pages wait N ms before their I/O */
	debugfs_create_u32("fault_bd_read_delay_ms", 0600, root, &zb_fault_bd_read_delay_ms);
	/* fault injection: the last late IAA completion lingers in zbatch */
	debugfs_create_u32("fault_late_completion_ms", 0600, root, &zbatch_fault_late_ms);
	for (d = 0; d < zbatch_nr_devs; d++) {
		struct zbatch_dev *dev = zbatch_devs[d];
		struct dentry *dd;

		snprintf(name, sizeof(name), "dev%u", dev->id);
		dd = debugfs_create_dir(name, root);
		debugfs_create_file("stats", 0400, dd, &dev->stats, &stats_fops);
		for (w = 0; w < dev->nr_wqs; w++) {
			struct zbatch_wq *wq = dev->wqs[w];
			struct dentry *wd;

			snprintf(name, sizeof(name), "wq%u", wq->id);
			wd = debugfs_create_dir(name, dd);
			debugfs_create_file("stats", 0400, wd, &wq->stats, &stats_fops);
			/* fault injection: engines ignore a stalled WQ */
			debugfs_create_bool("stall", 0600, wd, &to_sw_wq(wq)->stalled);
			debugfs_create_file("fault", 0600, wd, to_sw_wq(wq), &fault_fops);
		}
	}
}

void zbatch_debugfs_destroy(void)
{
	debugfs_remove_recursive(root);
	root = NULL;
}
