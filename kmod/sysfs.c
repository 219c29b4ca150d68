// SPDX-License-Identifier: GPL-2.0
/*
 * Runtime tunables under /sys/kernel/zbatch/ (Documentation/ABI/zbatch).
 * Each write is parsed, then applied whole under zbatch_cfg_lock, or
 * refused with -EINVAL.
 */
#include <linux/kobject.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/zbatch.h>

#include "codec.h"
#include "config.h"
#include "sysfs.h"
#include "wq.h"

static const char *const mode_names[] = {
	[ZBATCH_SYNC] = "sync",
	[ZBATCH_ASYNC] = "async",
	[ZBATCH_ASYNC_IRQ] = "async_irq",
};

/* Show a choice list with the current one in brackets, as zram does. */
/* "a [b] c": the choices @first..@nr-1 of @names, @cur in brackets. */
ssize_t zbatch_sysfs_choice(char *buf, const char *const *names,
			    unsigned int nr, unsigned int cur, unsigned int first)
{
	unsigned int i;
	int n = 0;

	for (i = first; i < nr; i++)
		n += sysfs_emit_at(buf, n, i == cur ? "%s[%s]" : "%s%s",
				   i == first ? "" : " ", names[i]);
	return n + sysfs_emit_at(buf, n, "\n");
}

static int find_choice(const char *buf, const char *const *names,
		       unsigned int nr, unsigned int first)
{
	unsigned int i;

	for (i = first; i < nr; i++)
		if (sysfs_streq(buf, names[i]))
			return i;
	return -EINVAL;
}

/* Apply a parsed value (or pass a parse error on) under zbatch_cfg_lock. */
static ssize_t apply_uint(unsigned int *field, int v, size_t len)
{
	if (v < 0)
		return v;
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(*field, v);
	mutex_unlock(&zbatch_cfg_lock);
	return len;
}

static ssize_t apply_bool(bool *field, const char *buf, size_t len)
{
	bool v;
	int ret = kstrtobool(buf, &v);

	if (ret)
		return ret;
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(*field, v);
	mutex_unlock(&zbatch_cfg_lock);
	return len;
}

static ssize_t version_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", ZBATCH_VERSION);
}

static ssize_t abi_version_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", ZBATCH_ABI_VERSION);
}

/* The codecs, @cur in brackets. */
ssize_t zbatch_codec_choice(char *buf, unsigned int cur)
{
	static const char *const names[ZBATCH_CODEC_NR] = { ZBATCH_CODEC_NAMES };

	return zbatch_sysfs_choice(buf, names, ZBATCH_CODEC_NR, cur, 1);
}

static ssize_t codec_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zbatch_codec_choice(buf, READ_ONCE(zbatch_cfg.codec));
}

static ssize_t codec_store(struct kobject *k, struct kobj_attribute *a,
			   const char *buf, size_t len)
{
	return apply_uint(&zbatch_cfg.codec, zbatch_codec_by_name(buf), len);
}

static ssize_t sync_mode_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return zbatch_sysfs_choice(buf, mode_names, ARRAY_SIZE(mode_names),
			   READ_ONCE(zbatch_cfg.sync_mode), 0);
}

static ssize_t sync_mode_store(struct kobject *k, struct kobj_attribute *a,
			       const char *buf, size_t len)
{
	return apply_uint(&zbatch_cfg.sync_mode,
			  find_choice(buf, mode_names, ARRAY_SIZE(mode_names), 0), len);
}

static ssize_t distribute_comps_show(struct kobject *k, struct kobj_attribute *a,
				     char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(zbatch_cfg.distribute_comps));
}

static ssize_t distribute_comps_store(struct kobject *k, struct kobj_attribute *a,
				      const char *buf, size_t len)
{
	return apply_bool(&zbatch_cfg.distribute_comps, buf, len);
}

static ssize_t distribute_decomps_show(struct kobject *k, struct kobj_attribute *a,
				       char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(zbatch_cfg.distribute_decomps));
}

static ssize_t distribute_decomps_store(struct kobject *k, struct kobj_attribute *a,
					const char *buf, size_t len)
{
	return apply_bool(&zbatch_cfg.distribute_decomps, buf, len);
}

static ssize_t g_comp_wqs_per_iaa_show(struct kobject *k, struct kobj_attribute *a,
				       char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(zbatch_cfg.g_comp_wqs));
}

static ssize_t g_comp_wqs_per_iaa_store(struct kobject *k, struct kobj_attribute *a,
					const char *buf, size_t len)
{
	unsigned int v;
	int ret = kstrtouint(buf, 0, &v);

	if (ret)
		return ret;
	if (v > ZBATCH_MAX_WQS)
		return -EINVAL;
	return apply_uint(&zbatch_cfg.g_comp_wqs, v, len);
}

static ssize_t verify_compress_show(struct kobject *k, struct kobj_attribute *a,
				    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(zbatch_cfg.verify));
}

static ssize_t verify_compress_store(struct kobject *k, struct kobj_attribute *a,
				     const char *buf, size_t len)
{
	return apply_bool(&zbatch_cfg.verify, buf, len);
}

static ssize_t acomp_inline_show(struct kobject *k, struct kobj_attribute *a,
				 char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(zbatch_acomp_inline));
}

static ssize_t acomp_inline_store(struct kobject *k, struct kobj_attribute *a,
				  const char *buf, size_t len)
{
	return apply_bool(&zbatch_acomp_inline, buf, len);
}

static ssize_t timeout_ms_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(zbatch_cfg.timeout_ms));
}

static ssize_t timeout_ms_store(struct kobject *k, struct kobj_attribute *a,
				const char *buf, size_t len)
{
	unsigned int v;
	int ret = kstrtouint(buf, 0, &v);

	if (ret)
		return ret;
	if (v < ZBATCH_TIMEOUT_MS_MIN || v > ZBATCH_TIMEOUT_MS_MAX)
		return -EINVAL;
	return apply_uint(&zbatch_cfg.timeout_ms, v, len);
}

static ssize_t batch_size_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", zbatch_batch_size());
}

static ssize_t max_batch_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", ZBATCH_MAX_BATCH);
}

static ssize_t max_len_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", ZBATCH_MAX_LEN);
}

static ssize_t nr_devices_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", zbatch_nr_devs);
}

static struct kobj_attribute version_attr = __ATTR_RO(version);
static struct kobj_attribute abi_version_attr = __ATTR_RO(abi_version);
static struct kobj_attribute codec_attr = __ATTR_RW(codec);
static struct kobj_attribute sync_mode_attr = __ATTR_RW(sync_mode);
static struct kobj_attribute distribute_comps_attr = __ATTR_RW(distribute_comps);
static struct kobj_attribute distribute_decomps_attr = __ATTR_RW(distribute_decomps);
static struct kobj_attribute g_comp_wqs_per_iaa_attr = __ATTR_RW(g_comp_wqs_per_iaa);
static struct kobj_attribute verify_compress_attr = __ATTR_RW(verify_compress);
static struct kobj_attribute timeout_ms_attr = __ATTR_RW(timeout_ms);
static struct kobj_attribute acomp_inline_attr = __ATTR_RW(acomp_inline);
static struct kobj_attribute batch_size_attr = __ATTR_RO(batch_size);
static struct kobj_attribute max_batch_attr = __ATTR_RO(max_batch);
static struct kobj_attribute max_len_attr = __ATTR_RO(max_len);
static struct kobj_attribute nr_devices_attr = __ATTR_RO(nr_devices);

static struct attribute *zbatch_attrs[] = {
	&version_attr.attr,
	&abi_version_attr.attr,
	&codec_attr.attr,
	&sync_mode_attr.attr,
	&distribute_comps_attr.attr,
	&distribute_decomps_attr.attr,
	&g_comp_wqs_per_iaa_attr.attr,
	&verify_compress_attr.attr,
	&timeout_ms_attr.attr,
	&acomp_inline_attr.attr,
	&batch_size_attr.attr,
	&max_batch_attr.attr,
	&max_len_attr.attr,
	&nr_devices_attr.attr,
	NULL,
};

static const struct attribute_group zbatch_group = {
	.attrs = zbatch_attrs,
};

/* /sys/kernel/zbatch, empty: the devices and the IAA executor hang there. */
int zbatch_sysfs_create(struct kobject **kobj)
{
	*kobj = kobject_create_and_add("zbatch", kernel_kobj);
	return *kobj ? 0 : -ENOMEM;
}

/* The tunables, once everything they act on exists. */
int zbatch_sysfs_publish(struct kobject *kobj)
{
	return sysfs_create_group(kobj, &zbatch_group);
}

void zbatch_sysfs_unpublish(struct kobject *kobj)
{
	sysfs_remove_group(kobj, &zbatch_group);
}

void zbatch_sysfs_destroy(struct kobject *kobj)
{
	kobject_put(kobj);
}
