// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/zbatch: batches of compress/decompress requests on userspace
 * buffers (include/uapi/linux/zbatch.h). Root only (mode 0600 and
 * CAP_SYS_ADMIN). Buffers are copied in and out through kernel bounce
 * buffers, so userspace never shares memory with an engine.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "abi.h"
#include "config.h"
#include "frontends.h"

struct ioc_job {
	struct zbatch_batch batch;
	struct zbatch_ioc_req ureq[ZBATCH_MAX_BATCH];
	struct zbatch_req req[ZBATCH_MAX_BATCH];
	void *in[ZBATCH_MAX_BATCH];
	void *out[ZBATCH_MAX_BATCH];
};

/* Pure checks (abi.c), then whether userspace may hand us the buffers. */
static int check_reqs(const struct zbatch_ioc_req *r, unsigned int n)
{
	unsigned int i;
	int ret = zbatch_abi_check_reqs(r, n);

	if (ret)
		return ret;
	for (i = 0; i < n; i++)
		if (!access_ok(u64_to_user_ptr(r[i].src), r[i].src_len) ||
		    !access_ok(u64_to_user_ptr(r[i].dst), r[i].dst_len))
			return -EFAULT;
	return 0;
}

static void free_job(struct ioc_job *job, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		kvfree(job->in[i]);
		kvfree(job->out[i]);
	}
	kvfree(job);
}

/*
 * Batch-level errors were refused before; what is left is per request, in
 * each request's status.
 */
static void run_job(struct ioc_job *job, const struct zbatch_ioc_batch *b)
{
	unsigned int i;

	if (!(b->flags & ZBATCH_F_ONE_BY_ONE)) {
		zbatch_batch_init(&job->batch, b->codec, b->flags);
		for (i = 0; i < b->nr_reqs; i++)
			zbatch_batch_add(&job->batch, &job->req[i]);
		if (zbatch_submit(&job->batch) == -EINPROGRESS)
			zbatch_wait(&job->batch);
		return;
	}
	/* the baseline: one request per batch, each waited for */
	for (i = 0; i < b->nr_reqs; i++) {
		struct zbatch_batch *one = &job->batch;

		zbatch_batch_init(one, b->codec, b->flags & ~ZBATCH_F_ONE_BY_ONE);
		zbatch_batch_add(one, &job->req[i]);
		if (zbatch_submit(one) == -EINPROGRESS)
			zbatch_wait(one);
	}
}

static long ioc_submit(void __user *arg)
{
	struct zbatch_ioc_batch b = {};
	struct zbatch_ioc_req __user *ureqs;
	struct ioc_job *job;
	unsigned int i, n = 0;
	u32 size;
	u64 t0;
	int ret;

	if (get_user(size, (u32 __user *)arg))
		return -EFAULT;
	if (size < ZBATCH_BATCH_V1_SIZE)
		return -EINVAL;
	/*
	 * A newer caller's struct may be bigger, its unknown tail zero; but
	 * not without bound: copy_struct_from_user() would scan all of it.
	 */
	if (size > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(&b, sizeof(b), arg, size);
	if (ret)
		return ret;	/* -E2BIG: unknown non-zero trailing fields */
	ret = zbatch_abi_check_batch(&b);
	if (ret)
		return ret;

	job = kvzalloc(sizeof(*job), GFP_KERNEL);	/* about 20 KiB */
	if (!job)
		return -ENOMEM;
	ureqs = u64_to_user_ptr(b.reqs);
	if (copy_from_user(job->ureq, ureqs, b.nr_reqs * sizeof(*ureqs))) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = check_reqs(job->ureq, b.nr_reqs);
	if (ret)
		goto out_free;
	for (n = 0; n < b.nr_reqs; n++) {
		struct zbatch_ioc_req *r = &job->ureq[n];

		job->in[n] = kvmalloc(r->src_len, GFP_KERNEL);
		job->out[n] = kvmalloc(r->dst_len, GFP_KERNEL);
		if (!job->in[n] || !job->out[n]) {
			n++;
			ret = -ENOMEM;
			goto out_free;
		}
		if (copy_from_user(job->in[n], u64_to_user_ptr(r->src), r->src_len)) {
			n++;
			ret = -EFAULT;
			goto out_free;
		}
		zbatch_req_init(&job->req[n], b.op, job->in[n], r->src_len,
				job->out[n], r->dst_len);
	}

	t0 = ktime_get_ns();
	run_job(job, &b);
	b.elapsed_ns = ktime_get_ns() - t0;

	b.nr_done = 0;
	for (i = 0; i < b.nr_reqs; i++) {
		struct zbatch_ioc_req *r = &job->ureq[i];

		r->status = job->req[i].status;
		r->dst_len = r->status ? 0 : job->req[i].produced;
		if (!r->status) {
			b.nr_done++;
			if (copy_to_user(u64_to_user_ptr(r->dst), job->out[i], r->dst_len)) {
				ret = -EFAULT;
				goto out_free;
			}
		}
	}
	if (copy_to_user(ureqs, job->ureq, b.nr_reqs * sizeof(*ureqs)) ||
	    copy_to_user(arg, &b, min_t(u32, size, sizeof(b))))
		ret = -EFAULT;
out_free:
	free_job(job, n);
	return ret;
}

static long ioc_info(void __user *arg)
{
	struct zbatch_ioc_info info = {};
	u32 size;

	if (get_user(size, (u32 __user *)arg))
		return -EFAULT;
	if (size < ZBATCH_INFO_V1_SIZE)
		return -EINVAL;
	info.size = sizeof(info);
	info.abi_version = ZBATCH_ABI_VERSION;
	info.max_batch = ZBATCH_MAX_BATCH;
	info.max_len = ZBATCH_MAX_LEN;
	info.batch_size = zbatch_batch_size();
	info.default_codec = READ_ONCE(zbatch_cfg.codec);
	if (copy_to_user(arg, &info, min_t(u32, size, sizeof(info))))
		return -EFAULT;
	return 0;
}

static long zbatch_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	/* the size bits of cmd are not checked: structs carry their size */
	if (_IOC_TYPE(cmd) != ZBATCH_IOC_MAGIC)
		return -ENOTTY;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ZBATCH_IOC_INFO):
		return ioc_info((void __user *)arg);
	case _IOC_NR(ZBATCH_IOC_SUBMIT):
		return ioc_submit((void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations zbatch_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = zbatch_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice zbatch_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "zbatch",
	.fops = &zbatch_fops,
	.mode = 0600,
};

int zbatch_chardev_create(void)
{
	return misc_register(&zbatch_misc);
}

void zbatch_chardev_destroy(void)
{
	misc_deregister(&zbatch_misc);
}
