// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs /sys/kernel/debug/zbatch/: statistics, the batch histogram,
 * latency percentiles, reset, fault injection and the self-tests
 * (Documentation/ABI/zbatch). A debugfs failure never fails module init.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "internal.h"

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
	debugfs_create_file("reset", 0200, root, NULL, &reset_fops);
	debugfs_create_file("selftest", 0200, root, NULL, &selftest_fops);
	debugfs_create_file("selftest_results", 0400, root, NULL, &results_fops);
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
			debugfs_create_bool("stall", 0600, wd, &wq->stalled);
		}
	}
}

void zbatch_debugfs_destroy(void)
{
	debugfs_remove_recursive(root);
	root = NULL;
}
