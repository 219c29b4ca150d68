// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberately broken module. The harness test loads it in the guest to
 * prove that each checker the guest kernel has fires and that
 * scripts/vm-run fails the run and shows the offending log line:
 *
 *   bug=warn     (default) a WARNING, seen by every kernel
 *   bug=uaf      a read after kfree(): KASAN (make check-debug)
 *   bug=sleep    might_sleep() under a spinlock: DEBUG_ATOMIC_SLEEP
 *   bug=race     two threads incrementing a plain int: KCSAN
 *   bug=lockdep  two mutexes taken in both orders: lockdep (it switches
 *                itself off after its first report, and a KASAN report
 *                switches it off too: load it after the others but uaf)
 *
 * Never load it anywhere else.
 */
#include <linux/completion.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

static char *bug = "warn";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "which bug to commit: warn, uaf, sleep, race, lockdep");

static noinline void canary_uaf(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	pr_info("zbatch_canary: read after free: %d\n", READ_ONCE(p[8]));
}

static noinline void canary_sleep(void)
{
	static DEFINE_SPINLOCK(lock);

	spin_lock(&lock);
	might_sleep();
	spin_unlock(&lock);
}

/* the racy counter: plain reads and writes from two threads on purpose */
static int canary_counter;

static noinline int canary_race_fn(void *arg)
{
	struct completion *done = arg;
	unsigned long end = jiffies + 3 * HZ;

	while (time_before(jiffies, end)) {
		canary_counter++;
		cond_resched();
	}
	complete(done);
	return 0;
}

static noinline void canary_race(void)
{
	struct completion done[2];
	struct task_struct *t;
	int i, started = 0;

	for (i = 0; i < ARRAY_SIZE(done); i++) {
		init_completion(&done[i]);
		t = kthread_run(canary_race_fn, &done[i], "zbatch_canary/%d", i);
		if (IS_ERR(t))
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		wait_for_completion(&done[i]);
	pr_info("zbatch_canary: counter %d\n", canary_counter);
}

static noinline void canary_lockdep(void)
{
	static DEFINE_MUTEX(a);
	static DEFINE_MUTEX(b);

	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
}

static int __init zbatch_canary_init(void)
{
	if (!strcmp(bug, "warn"))
		WARN(1, "zbatch_canary: deliberate warning for the harness test\n");
	else if (!strcmp(bug, "uaf"))
		canary_uaf();
	else if (!strcmp(bug, "sleep"))
		canary_sleep();
	else if (!strcmp(bug, "race"))
		canary_race();
	else if (!strcmp(bug, "lockdep"))
		canary_lockdep();
	else
		return -EINVAL;
	return 0;
}

static void __exit zbatch_canary_exit(void)
{
}

module_init(zbatch_canary_init);
module_exit(zbatch_canary_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zbatch test harness canary: commits the bug it is told at load");
