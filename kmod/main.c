// SPDX-License-Identifier: GPL-2.0
/*
 * zbatch: compression batching for stock kernels.
 *
 * main.c holds module init/exit and the load-time parameters; every
 * subsystem has its own file and a _create()/_destroy() pair called from
 * here in order, undone in reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/sysfs.h>
#include <uapi/linux/zbatch.h>

static struct kobject *zbatch_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s\n", ZBATCH_VERSION);
}
static struct kobj_attribute version_attr = __ATTR_RO(version);

static struct attribute *zbatch_attrs[] = {
	&version_attr.attr,
	NULL,
};

static const struct attribute_group zbatch_group = {
	.attrs = zbatch_attrs,
};

static int __init zbatch_init(void)
{
	int ret;

	zbatch_kobj = kobject_create_and_add("zbatch", kernel_kobj);
	if (!zbatch_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(zbatch_kobj, &zbatch_group);
	if (ret)
		goto err_put_kobj;
	pr_info("version %s loaded\n", ZBATCH_VERSION);
	return 0;

err_put_kobj:
	kobject_put(zbatch_kobj);
	return ret;
}

static void __exit zbatch_exit(void)
{
	sysfs_remove_group(zbatch_kobj, &zbatch_group);
	kobject_put(zbatch_kobj);
	pr_info("unloaded\n");
}

module_init(zbatch_init);
module_exit(zbatch_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Compression batching with an IAA work-queue engine model");
MODULE_VERSION(ZBATCH_VERSION);
