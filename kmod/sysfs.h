/* SPDX-License-Identifier: GPL-2.0 */
/* The sysfs tree /sys/kernel/zbatch and its choice lists (sysfs.c). */
#ifndef _ZBATCH_SYSFS_H
#define _ZBATCH_SYSFS_H

#include <linux/types.h>

struct kobject;

int zbatch_sysfs_create(struct kobject **kobj);
int zbatch_sysfs_publish(struct kobject *kobj);
void zbatch_sysfs_unpublish(struct kobject *kobj);
/* sysfs "a [b] c" choice lists, shared by every attribute that has one */
ssize_t zbatch_sysfs_choice(char *buf, const char *const *names,
			    unsigned int nr, unsigned int cur, unsigned int first);
ssize_t zbatch_codec_choice(char *buf, unsigned int cur);
void zbatch_sysfs_destroy(struct kobject *kobj);

#endif /* _ZBATCH_SYSFS_H */
