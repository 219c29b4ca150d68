/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The IAA executor: iaa_crypto's async acomp behind the executor contract
 * (exec_iaa.c). iaa.lock and the rest: lock order in locks.h.
 */
#ifndef _ZBATCH_EXEC_IAA_H
#define _ZBATCH_EXEC_IAA_H

#include <linux/types.h>

struct kobject;
struct zbatch_exec_ops;
struct zbatch_wq;

extern const struct zbatch_exec_ops zbatch_exec_iaa;
/* debugfs fault_late_completion_ms (exec_iaa.c, slot_done()) */
extern unsigned int zbatch_fault_late_ms;
/* IAA batches: what one submit hands the device (the seeds' 8 per IAA, x2) */
#define ZBATCH_IAA_BATCH	16
int zbatch_iaa_create(struct kobject *parent);
void zbatch_iaa_destroy(void);

#endif /* _ZBATCH_EXEC_IAA_H */
