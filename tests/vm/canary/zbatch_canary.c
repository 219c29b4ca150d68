// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberately broken module: it WARNs when loaded. The harness test
 * loads it in the guest to prove that scripts/vm-run fails the run and
 * shows the offending log line. Never load it anywhere else.
 */
#include <linux/module.h>

static int __init zbatch_canary_init(void)
{
	WARN(1, "zbatch_canary: deliberate warning for the harness test\n");
	return 0;
}

static void __exit zbatch_canary_exit(void)
{
}

module_init(zbatch_canary_init);
module_exit(zbatch_canary_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zbatch test harness canary: WARNs at load");
