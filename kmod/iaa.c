// SPDX-License-Identifier: GPL-2.0
/*
 * IAA's own: which driver the acomp executor (exec_acomp.c) attaches,
 * its limits, and what to tell an operator when it is missing. iaa_crypto
 * registers its async acomp algorithm "deflate-iaa" (cra_name "deflate")
 * once an IAA WQ is bound to its "crypto" driver and answers -ENODEV
 * once the last one is unbound. Which WQs exist and are bound (IAA's WQ
 * topology) is userspace's: accel-config, or `zbatch wq setup-iaa`.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/algapi.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/string.h>

#include "exec_acomp.h"

static char iaa_driver[CRYPTO_MAX_ALG_NAME] = "deflate-iaa";
module_param_string(iaa_driver, iaa_driver, sizeof(iaa_driver), 0444);
MODULE_PARM_DESC(iaa_driver,
		 "async acomp driver run on IAA (default deflate-iaa; empty: never)");
static unsigned int iaa_slots = 128;
module_param(iaa_slots, uint, 0444);
MODULE_PARM_DESC(iaa_slots, "Requests in flight on IAA at most (1..1024)");
static unsigned int iaa_retry_ms = 2000;
module_param(iaa_retry_ms, uint, 0444);
MODULE_PARM_DESC(iaa_retry_ms, "While offline, try to attach every N ms (100..600000)");

static struct zbatch_acomp_hw iaa_hw = {
	.name = "IAA",
	.codec = "deflate",
	.sysfs = "iaa",
	.missing = "no IAA WQ bound to the crypto driver?",
	.nodev = "no IAA WQ is bound to the crypto driver",
};

/**
 * zbatch_iaa_create() - the acomp executor on IAA, /sys/kernel/zbatch/iaa/
 * @parent: /sys/kernel/zbatch
 *
 * Return: 0 or a negative errno (-EINVAL: a parameter out of range).
 */
int zbatch_iaa_create(struct kobject *parent)
{
	if (iaa_slots < 1 || iaa_slots > 1024 || iaa_retry_ms < 100 ||
	    iaa_retry_ms > 600000) {
		pr_err("invalid iaa_slots=%u (1..1024) or iaa_retry_ms=%u (100..600000)\n",
		       iaa_slots, iaa_retry_ms);
		return -EINVAL;
	}
	iaa_hw.driver = strim(iaa_driver);
	iaa_hw.slots = iaa_slots;
	iaa_hw.retry_ms = iaa_retry_ms;
	return zbatch_exec_acomp_create(parent, &iaa_hw);
}

void zbatch_iaa_destroy(void)
{
	zbatch_exec_acomp_destroy();
}
