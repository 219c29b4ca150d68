// SPDX-License-Identifier: GPL-2.0
/*
 * zbatch: compression batching for stock kernels.
 *
 * main.c holds module init/exit and the 'selftest' parameter; every
 * subsystem has its own file, its own load-time parameters (wq.c: the
 * layout; iaa.c: iaa_*; acomp.c: acomp_priority) and a
 * _create()/_destroy() pair called from here in order, undone in reverse
 * order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/zbatch.h>

#include "codec.h"
#include "config.h"
#include "exec_acomp.h"
#include "frontends.h"
#include "stats.h"
#include "sysfs.h"
#include "wq.h"

static bool selftest;
module_param(selftest, bool, 0444);
MODULE_PARM_DESC(selftest, "Run the self-tests at load (KTAP in debugfs selftest_results)");

/* Serialises writers of zbatch_cfg and WQs put back in service. */
DEFINE_MUTEX(zbatch_cfg_lock);
struct zbatch_config zbatch_cfg = {
	.codec = ZBATCH_CODEC_LZ4,
	.sync_mode = ZBATCH_ASYNC,
	.distribute_comps = true,
	.distribute_decomps = false,
	.g_comp_wqs = 1,
	.verify = false,
	.timeout_ms = 1000,
};

static struct kobject *zbatch_kobj;

/*
 * Internals first, then what users and other kernel code can reach
 * (crypto algorithms, the swap device control files, /dev/zbatch,
 * debugfs), the tunables last; exit removes in the reverse order. Every
 * error path undoes exactly what was done before it.
 */
static int __init zbatch_init(void)
{
	int ret;

	ret = zbatch_stats_create();
	if (ret)
		return ret;
	ret = zbatch_sysfs_create(&zbatch_kobj);
	if (ret)
		goto err_stats;
	ret = zbatch_wq_create(zbatch_kobj);
	if (ret)
		goto err_sysfs;
	ret = zbatch_iaa_create(zbatch_kobj);
	if (ret)
		goto err_wq;
	ret = zbatch_acomp_create();
	if (ret)
		goto err_iaa;
	ret = zbatch_swapdev_create(zbatch_kobj);
	if (ret)
		goto err_acomp;
	ret = zbatch_chardev_create();
	if (ret)
		goto err_swapdev;
	zbatch_debugfs_create();
	ret = zbatch_sysfs_publish(zbatch_kobj);
	if (ret)
		goto err_debugfs;
	pr_info("version %s: %u device(s), batch size %u, %zu KiB of workspaces per engine\n",
		ZBATCH_VERSION, zbatch_nr_devs, zbatch_batch_size(),
		zbatch_ctx_bytes() / 1024);
	if (selftest)
		zbatch_selftest_run();
	return 0;

err_debugfs:
	zbatch_debugfs_destroy();
	zbatch_chardev_destroy();
err_swapdev:
	zbatch_swapdev_destroy();
err_acomp:
	zbatch_acomp_destroy();
err_iaa:
	zbatch_iaa_destroy();
err_wq:
	zbatch_wq_destroy();
	/* the IAA probe and the algorithms' first calls may have filled it */
	zbatch_ctx_pool_destroy();
err_sysfs:
	zbatch_sysfs_destroy(zbatch_kobj);
err_stats:
	zbatch_stats_destroy();
	return ret;
}

static void __exit zbatch_exit(void)
{
	zbatch_sysfs_unpublish(zbatch_kobj);
	zbatch_debugfs_destroy();
	zbatch_chardev_destroy();
	zbatch_swapdev_destroy();
	zbatch_acomp_destroy();
	zbatch_iaa_destroy();
	zbatch_wq_destroy();
	zbatch_ctx_pool_destroy();
	zbatch_selftest_destroy();
	zbatch_sysfs_destroy(zbatch_kobj);
	zbatch_stats_destroy();
}

module_init(zbatch_init);
module_exit(zbatch_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Compression batching with an IAA work-queue engine model");
MODULE_VERSION(ZBATCH_VERSION);
