/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device executor over an asynchronous acomp driver (exec_acomp.c),
 * and what a hardware family tells it of itself (IAA's: iaa.c). acx.lock
 * and the rest: lock order in locks.h.
 */
#ifndef _ZBATCH_EXEC_ACOMP_H
#define _ZBATCH_EXEC_ACOMP_H

#include <linux/types.h>

struct kobject;
struct zbatch_exec_ops;

/*
 * A hardware family behind an acomp driver. The executor attaches
 * @driver (writable later in sysfs @sysfs/driver), whatever codec its
 * algorithm compresses: the one its cra_name names (a codec zbatch also
 * runs in software), or @codec for an algorithm registered under the
 * driver's own name; the attach probe checks it both ways. zbatch's own
 * algorithms are refused (their requests would come back to it).
 */
struct zbatch_acomp_hw {
	const char *name;	/* in messages: "IAA" */
	/* the codec of a driver whose algorithm has its own name ("deflate") */
	const char *codec;
	const char *sysfs;	/* /sys/kernel/zbatch/<sysfs>/ */
	const char *driver;	/* attached at load; "": never */
	unsigned int slots;	/* requests in flight at most, 1..1024 */
	unsigned int retry_ms;	/* offline: attach again every, 100..600000 */
	/* said in iaa/reason: why the driver is not registered, or has no device */
	const char *missing;
	const char *nodev;
};

extern const struct zbatch_exec_ops zbatch_exec_acomp;
/* debugfs fault_late_completion_ms (exec_acomp.c, slot_done()) */
extern unsigned int zbatch_fault_late_ms;
/* What one submit hands a device (IAA: the seeds' 8 per device, x2). */
#define ZBATCH_ACOMP_BATCH	16
int zbatch_exec_acomp_create(struct kobject *parent, const struct zbatch_acomp_hw *hw);
void zbatch_exec_acomp_destroy(void);
/* IAA's (iaa.c): its module parameters, then zbatch_exec_acomp_create(). */
int zbatch_iaa_create(struct kobject *parent);
void zbatch_iaa_destroy(void);

#endif /* _ZBATCH_EXEC_ACOMP_H */
