/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Front ends and control: debugfs (debugfs.c), acomp (acomp.c), the swap
 * device (swapdev.c), /dev/zbatch (chardev.c), self-tests (selftest.c).
 */
#ifndef _ZBATCH_FRONTENDS_H
#define _ZBATCH_FRONTENDS_H

#include <linux/compiler.h>
#include <linux/types.h>

struct kobject;

void zbatch_debugfs_create(void);
void zbatch_debugfs_destroy(void);
int zbatch_acomp_create(void);
void zbatch_acomp_destroy(void);
/* the swap device (swapdev.c): /sys/kernel/zbatch/swapdev/ */
int zbatch_swapdev_create(struct kobject *parent);
void zbatch_swapdev_destroy(void);
int zbatch_chardev_create(void);
void zbatch_chardev_destroy(void);
int zbatch_selftest_run(void);
/* KTAP of the last self-test run, NUL-terminated; under selftest mutex. */
ssize_t zbatch_selftest_read(char __user *buf, size_t len, loff_t *pos);
void zbatch_selftest_destroy(void);

#endif /* _ZBATCH_FRONTENDS_H */
