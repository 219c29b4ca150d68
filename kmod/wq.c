// SPDX-License-Identifier: GPL-2.0
/*
 * The IAA device model: devices and their work queues, their sysfs
 * directories and lifetime, and the CPU -> WQ choice. What runs a WQ's
 * descriptors is its executor (exec_sw.c for the modelled devices), behind
 * the contract of <linux/zbatch_exec.h>.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/topology.h>
#include <linux/zbatch_exec.h>

#include "clock.h"
#include "config.h"
#include "cost.h"
#include "exec_sw.h"
#include "map.h"
#include "stats.h"
#include "wq.h"

static unsigned int devices;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "Modelled IAA devices (0: one per NUMA node, max 64)");
static unsigned int engines;
module_param(engines, uint, 0444);
MODULE_PARM_DESC(engines, "Engines per device (0: CPUs of its node, at most 8)");
static unsigned int wqs = 1;
module_param(wqs, uint, 0444);
MODULE_PARM_DESC(wqs, "Work queues per device (1..8)");
static unsigned int wq_size = 128;
module_param(wq_size, uint, 0444);
MODULE_PARM_DESC(wq_size, "Descriptors per work queue (1..1024)");
static bool wq_shared;
module_param(wq_shared, bool, 0444);
MODULE_PARM_DESC(wq_shared, "Model shared WQs (ENQCMD) instead of dedicated ones");

struct zbatch_dev **zbatch_devs;
unsigned int zbatch_nr_devs;

/* CPU -> device tables (map.c), built once the devices exist. */
static struct zbatch_map cpu_map;
static DEFINE_PER_CPU(unsigned int, comp_seq);
static DEFINE_PER_CPU(unsigned int, decomp_seq);
static int *topo_pkg, *topo_core, *topo_dev_pkg;

/* ---- WQ choice ---- */
/*
 * The first WQ in service of @dev, in priority order, whose type takes
 * the job (the scan starts where that type's WQs begin: O(1)); failing
 * that, any in service (a typed WQ taken out of service must not strand
 * its jobs on a device that has others).
 */
static struct zbatch_wq *dev_wq(struct zbatch_dev *dev, bool comp)
{
	unsigned int k, g = READ_ONCE(zbatch_cfg.g_comp_wqs), n = dev->nr_wqs;
	unsigned int first = zbatch_wq_first(n, g, comp);
	struct zbatch_wq *any = NULL;

	for (k = 0; k < n; k++) {
		/* dev->wqs[] is in priority order, which is id order */
		struct zbatch_wq *wq = dev->wqs[(first + k) % n];

		if (!READ_ONCE(wq->enabled))
			continue;
		if (zbatch_wq_takes(zbatch_wq_type(dev->nr_wqs, g, wq->id), comp))
			return wq;
		if (!any)
			any = wq;
	}
	return any;
}

struct zbatch_wq *zbatch_wq_pick(enum zbatch_op op)
{
	bool comp = op == ZBATCH_OP_COMPRESS;
	struct zbatch_wq *wq = NULL;
	unsigned int cpu, d, seq;
	bool distribute;
	int dev;

	distribute = comp ? READ_ONCE(zbatch_cfg.distribute_comps) :
			    READ_ONCE(zbatch_cfg.distribute_decomps);
	cpu = get_cpu();
	seq = distribute ? (comp ? this_cpu_inc_return(comp_seq) :
			   this_cpu_inc_return(decomp_seq)) : 0;
	dev = zbatch_map_pick(&cpu_map, cpu, distribute, seq);
	put_cpu();
	if (dev >= 0)
		wq = dev_wq(zbatch_devs[dev], comp);
	/* the device has no WQ in service: any other device's */
	for (d = 0; !wq && d < zbatch_nr_devs; d++)
		wq = dev_wq(zbatch_devs[d], comp);
	return wq;
}

/*
 * Back-off after a slice no engine took in time: 100 us x 2^n after n
 * misses in a row (200 us after the first), at most 102 ms. A probe (one
 * slice posted, one wake-up, the slice stolen back) per back-off is what
 * a busy machine pays; a CPU that turns idle waits that long at most to
 * be asked (at once if its engine polls).
 */
#define HELPER_BACKOFF_NS	(100 * NSEC_PER_USEC)
#define HELPER_MISS_MAX		10

void zbatch_wq_helper_missed(struct zbatch_wq *w)
{
	struct zbatch_sw_wq *wq = to_sw_wq(w);
	unsigned int miss = min(READ_ONCE(wq->helper_miss) + 1, HELPER_MISS_MAX);

	zbatch_stat_add(&zbatch_gstats, ZST_HELPER_MISSES, 1);
	WRITE_ONCE(wq->helper_miss, miss);
	WRITE_ONCE(wq->helper_retry_ns, zbatch_clock() + (HELPER_BACKOFF_NS << miss));
}

void zbatch_wq_helper_came(struct zbatch_wq *w)
{
	struct zbatch_sw_wq *wq = to_sw_wq(w);

	if (READ_ONCE(wq->helper_miss)) {
		WRITE_ONCE(wq->helper_miss, 0);
		WRITE_ONCE(wq->helper_retry_ns, 0);
	}
}

/* Whether @wq backs off (clocks differ across CPUs: never for longer). */
static bool helpers_backing_off(const struct zbatch_sw_wq *wq)
{
	u64 retry = READ_ONCE(wq->helper_retry_ns), now;

	if (!retry)
		return false;
	now = zbatch_clock();
	return now < retry && retry - now <= (HELPER_BACKOFF_NS << HELPER_MISS_MAX);
}

/*
 * Whether an engine of @dev before @i runs on @cpu: in auto, that CPU is
 * counted already (an engine is skipped only on the submitter's CPU, or
 * as such a duplicate).
 */
static bool cpu_counted(const struct zbatch_dev *dev, unsigned int i, int cpu)
{
	while (i--)
		if (READ_ONCE(dev->engines[i].cpu) == cpu)
			return true;
	return false;
}

unsigned int zbatch_wq_helpers(const struct zbatch_wq *wq, int cpu, bool now,
			       unsigned int *polling)
{
	const struct zbatch_dev *dev = wq->dev;
	bool automatic = READ_ONCE(zbatch_handoff) == ZBATCH_HANDOFF_AUTO;
	unsigned int i, n = 0, p = 0;

	for (i = 0; i < dev->nr_engines; i++) {
		int ecpu = READ_ONCE(dev->engines[i].cpu);
		bool polls = READ_ONCE(dev->engines[i].polling);

		if (ecpu == cpu)
			continue;
		p += polls;
		/* auto: engines sharing a CPU (hotplug, engines=) count once */
		if (automatic && cpu_counted(dev, i, ecpu))
			continue;
		n++;
	}
	if (polling)
		*polling = p;
	/*
	 * @now, backing off: only engines that poll now (their CPU is idle,
	 * and they run: an engine polls with preemption off)
	 */
	if (automatic && now && helpers_backing_off(to_sw_wq(wq)))
		n = min(n, p);
	return min_t(unsigned int, n, ZBATCH_MAX_SLICES - 1);
}

static void map_build(void)
{
	struct zbatch_topo t = {
		.nr_cpus = nr_cpu_ids,
		.cpu_pkg = topo_pkg,
		.cpu_core = topo_core,
		.nr_devs = zbatch_nr_devs,
		.dev_pkg = topo_dev_pkg,
	};

	zbatch_map_build(&t, &cpu_map);
}

/**
 * zbatch_wq_timed_out() - take a WQ out of service after a timeout
 * @wq: the WQ, or NULL
 *
 * Counted every time, logged once per WQ. sysfs 'enabled' puts it back.
 */
void zbatch_wq_timed_out(struct zbatch_wq *wq)
{
	zbatch_stat_add(&zbatch_gstats, ZST_TIMEOUTS, 1);
	if (!wq)
		return;
	zbatch_stat_add(&wq->stats, ZST_TIMEOUTS, 1);
	WRITE_ONCE(wq->enabled, false);
	if (!xchg(&wq->timeout_logged, true))
		pr_err("dev%u/wq%u: descriptor timed out; WQ taken out of service, jobs fall back to software\n",
		       wq->dev->id, wq->id);
}

/**
 * zbatch_wq_device_error() - count a device error of a software WQ
 * @wq: the WQ whose record said the device failed (the core redid it)
 *
 * ZBATCH_WQ_ERR_LIMIT in a row (no good record between them) take the WQ
 * out of service, logged once; sysfs 'enabled' puts it back.
 */
void zbatch_wq_device_error(struct zbatch_wq *wq)
{
	if (atomic_inc_return(&wq->err_streak) < ZBATCH_WQ_ERR_LIMIT ||
	    !READ_ONCE(wq->enabled))
		return;
	WRITE_ONCE(wq->enabled, false);
	if (!xchg(&wq->errors_logged, true))
		pr_err("dev%u/wq%u: %d device errors in a row; WQ taken out of service, jobs fall back to software\n",
		       wq->dev->id, wq->id, ZBATCH_WQ_ERR_LIMIT);
}

/* ---- sysfs: /sys/kernel/zbatch/devN/{node,engines,cpus}, devN/wqM/... ---- */
#define to_dev(k) container_of(k, struct zbatch_dev, kobj)
#define to_wq(k) container_of(k, struct zbatch_wq, kobj)

static ssize_t node_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", to_dev(k)->node);
}

static ssize_t engines_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_dev(k)->nr_engines);
}

static ssize_t cpus_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct zbatch_dev *dev = to_dev(k);
	unsigned int cpu;
	int n = 0;

	/* the CPUs whose local WQs live on this device */
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (cpu_map.local[cpu] != (int)dev->id || !cpu_possible(cpu))
			continue;
		n += sysfs_emit_at(buf, n, "%s%u", n ? " " : "", cpu);
	}
	return n + sysfs_emit_at(buf, n, "\n");
}

static struct kobj_attribute dev_node_attr = __ATTR_RO(node);
static struct kobj_attribute dev_engines_attr = __ATTR_RO(engines);
static struct kobj_attribute dev_cpus_attr = __ATTR_RO(cpus);
static struct attribute *dev_attrs[] = {
	&dev_node_attr.attr, &dev_engines_attr.attr, &dev_cpus_attr.attr, NULL,
};
ATTRIBUTE_GROUPS(dev);

static ssize_t mode_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_wq(k)->shared ? "shared" : "dedicated");
}

static ssize_t size_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_wq(k)->size);
}

static ssize_t priority_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_wq(k)->priority);
}

static ssize_t queued_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_sw_wq(to_wq(k))->count));
}

static ssize_t executor_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_wq(k)->ops->name);
}

static ssize_t type_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	static const char *const names[] = {
		[ZBATCH_WQ_GENERIC] = "generic",
		[ZBATCH_WQ_COMP] = "compress",
		[ZBATCH_WQ_DECOMP] = "decompress",
	};
	struct zbatch_wq *wq = to_wq(k);

	return sysfs_emit(buf, "%s\n", names[zbatch_wq_type(wq->dev->nr_wqs,
					READ_ONCE(zbatch_cfg.g_comp_wqs), wq->id)]);
}

static ssize_t enabled_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_wq(k)->enabled));
}

static ssize_t enabled_store(struct kobject *k, struct kobj_attribute *a,
			     const char *buf, size_t len)
{
	struct zbatch_wq *wq = to_wq(k);
	bool on;
	int ret = kstrtobool(buf, &on);

	if (ret)
		return ret;
	mutex_lock(&zbatch_cfg_lock);
	WRITE_ONCE(wq->enabled, on);
	if (on) {
		WRITE_ONCE(wq->timeout_logged, false);
		WRITE_ONCE(wq->errors_logged, false);
		atomic_set(&wq->err_streak, 0);
	}
	mutex_unlock(&zbatch_cfg_lock);
	return len;
}

static struct kobj_attribute wq_mode_attr = __ATTR_RO(mode);
static struct kobj_attribute wq_size_attr = __ATTR_RO(size);
static struct kobj_attribute wq_priority_attr = __ATTR_RO(priority);
static struct kobj_attribute wq_queued_attr = __ATTR_RO(queued);
static struct kobj_attribute wq_executor_attr = __ATTR_RO(executor);
static struct kobj_attribute wq_type_attr = __ATTR_RO(type);
static struct kobj_attribute wq_enabled_attr = __ATTR_RW(enabled);
static struct attribute *wq_attrs[] = {
	&wq_mode_attr.attr, &wq_size_attr.attr, &wq_priority_attr.attr,
	&wq_queued_attr.attr, &wq_executor_attr.attr, &wq_enabled_attr.attr,
	&wq_type_attr.attr, NULL,
};
ATTRIBUTE_GROUPS(wq);

static void dev_release(struct kobject *k)
{
	struct zbatch_dev *dev = to_dev(k);

	zbatch_stats_free(&dev->stats);
	kfree(dev->wqs);
	kfree(dev->engines);
	kfree(dev);
}

static void wq_release(struct kobject *k)
{
	struct zbatch_wq *wq = to_wq(k);

	zbatch_stats_free(&wq->stats);
	kfree(to_sw_wq(wq));	/* every WQ in sysfs is a software WQ */
}

static const struct kobj_type dev_ktype = {
	.release = dev_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = dev_groups,
};

static const struct kobj_type wq_ktype = {
	.release = wq_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = wq_groups,
};

/* ---- create / destroy ---- */
static int wq_cmp(const void *a, const void *b)
{
	const struct zbatch_wq *x = *(const struct zbatch_wq **)a;
	const struct zbatch_wq *y = *(const struct zbatch_wq **)b;

	return (int)y->priority - (int)x->priority;
}

static struct zbatch_dev *dev_create(unsigned int id, int node,
				     struct kobject *parent,
				     unsigned int *next_cpu)
{
	struct zbatch_dev *dev;
	unsigned int i, ne = engines;
	int ret;

	if (!ne)
		ne = clamp_t(unsigned int, cpumask_weight(cpumask_of_node(node)), 1, 8);
	dev = kzalloc_node(sizeof(*dev), GFP_KERNEL, node);
	if (!dev)
		return ERR_PTR(-ENOMEM);
	dev->id = id;
	dev->node = node;
	kobject_init(&dev->kobj, &dev_ktype);
	dev->wqs = kcalloc(wqs, sizeof(*dev->wqs), GFP_KERNEL);
	dev->engines = kcalloc(ne, sizeof(*dev->engines), GFP_KERNEL);
	if (!dev->wqs || !dev->engines || zbatch_stats_init(&dev->stats)) {
		ret = -ENOMEM;
		goto err_put_dev;
	}
	dev->nr_engines = ne;
	ret = kobject_add(&dev->kobj, parent, "dev%u", id);
	if (ret)
		goto err_put_dev;
	for (i = 0; i < wqs; i++) {
		struct zbatch_sw_wq *swq = kzalloc_node(sizeof(*swq), GFP_KERNEL, node);
		struct zbatch_wq *wq = swq ? &swq->wq : NULL;

		if (!wq) {
			ret = -ENOMEM;
			goto err_put_wqs;
		}
		kobject_init(&wq->kobj, &wq_ktype);
		dev->wqs[i] = wq;
		dev->nr_wqs = i + 1;
		if (zbatch_stats_init(&wq->stats)) {
			ret = -ENOMEM;
			goto err_put_wqs;
		}
		wq->dev = dev;
		wq->ops = &zbatch_exec_sw;
		wq->id = i;
		wq->shared = wq_shared;
		wq->size = wq_size;
		/* the first WQ gets the highest priority, as iaa-crypto's 10 */
		wq->priority = 10 - min(i, 9u);
		wq->enabled = true;
		spin_lock_init(&swq->lock);
		INIT_LIST_HEAD(&swq->slices);
		ret = kobject_add(&wq->kobj, &dev->kobj, "wq%u", i);
		if (ret)
			goto err_put_wqs;
	}
	sort(dev->wqs, dev->nr_wqs, sizeof(*dev->wqs), wq_cmp, NULL);
	ret = zbatch_sw_start(dev, next_cpu);
	if (ret)
		goto err_stop_engines;
	return dev;

err_stop_engines:
	zbatch_sw_stop(dev);
err_put_wqs:
	for (i = 0; i < dev->nr_wqs; i++)
		kobject_put(&dev->wqs[i]->kobj);
err_put_dev:
	kobject_put(&dev->kobj);
	return ERR_PTR(ret);
}

static void dev_destroy(struct zbatch_dev *dev)
{
	unsigned int i;

	zbatch_sw_stop(dev);
	for (i = 0; i < dev->nr_wqs; i++)
		kobject_put(&dev->wqs[i]->kobj);
	kobject_put(&dev->kobj);
}

static int topo_create(void)
{
	unsigned int cpu, n = nr_cpu_ids;

	topo_pkg = kcalloc(n, sizeof(int), GFP_KERNEL);
	topo_core = kcalloc(n, sizeof(int), GFP_KERNEL);
	topo_dev_pkg = kcalloc(zbatch_nr_devs, sizeof(int), GFP_KERNEL);
	cpu_map.local = kcalloc(n, sizeof(int), GFP_KERNEL);
	cpu_map.first = kcalloc(n, sizeof(unsigned int), GFP_KERNEL);
	cpu_map.ndev = kcalloc(n, sizeof(unsigned int), GFP_KERNEL);
	cpu_map.start = kcalloc(n, sizeof(unsigned int), GFP_KERNEL);
	cpu_map.scratch = kcalloc(n, sizeof(int), GFP_KERNEL);
	cpu_map.pkg_devs = kcalloc(zbatch_nr_devs, sizeof(int), GFP_KERNEL);
	if (!topo_pkg || !topo_core || !topo_dev_pkg || !cpu_map.local ||
	    !cpu_map.first || !cpu_map.ndev || !cpu_map.start || !cpu_map.scratch ||
	    !cpu_map.pkg_devs)
		return -ENOMEM;
	for (cpu = 0; cpu < n; cpu++) {
		bool here = cpu_possible(cpu);

		topo_pkg[cpu] = here ? topology_physical_package_id(cpu) : -1;
		/* core ids repeat across packages: make them system-wide */
		topo_core[cpu] = here ? topology_physical_package_id(cpu) * 65536 +
					topology_core_id(cpu) : 0;
	}
	return 0;
}

static void topo_destroy(void)
{
	kfree(cpu_map.pkg_devs);
	kfree(cpu_map.scratch);
	kfree(cpu_map.start);
	kfree(cpu_map.ndev);
	kfree(cpu_map.first);
	kfree(cpu_map.local);
	memset(&cpu_map, 0, sizeof(cpu_map));
	kfree(topo_dev_pkg);
	kfree(topo_core);
	kfree(topo_pkg);
}

/* The package of @node's first CPU (0 for a node without CPUs). */
static int node_pkg(int node)
{
	unsigned int cpu = cpumask_first(cpumask_of_node(node));

	return cpu < nr_cpu_ids ? topology_physical_package_id(cpu) : 0;
}

/**
 * zbatch_wq_create() - build the modelled devices, their WQs and engines
 * @parent: the sysfs directory to hang devN/ under
 *
 * Return: 0 or a negative errno; nothing is left behind on failure.
 */
int zbatch_wq_create(struct kobject *parent)
{
	unsigned int i, nodes = num_online_nodes(), next_cpu = -1;
	int ret, node;

	if (devices > 64 || wqs < 1 || wqs > ZBATCH_MAX_WQS || wq_size < 1 || wq_size > 1024 ||
	    engines > 64) {
		pr_err("invalid layout: devices=%u (0..64) engines=%u (0..64) wqs=%u (1..8) wq_size=%u (1..1024)\n",
		       devices, engines, wqs, wq_size);
		return -EINVAL;
	}
	zbatch_nr_devs = devices ? devices : max(nodes, 1u);
	zbatch_devs = kcalloc(zbatch_nr_devs, sizeof(*zbatch_devs), GFP_KERNEL);
	if (!zbatch_devs)
		return -ENOMEM;
	ret = topo_create();
	if (ret)
		goto err_free;
	node = first_online_node;
	for (i = 0; i < zbatch_nr_devs; i++) {
		/* devices spread evenly over the online nodes */
		struct zbatch_dev *dev = dev_create(i, node, parent, &next_cpu);

		if (IS_ERR(dev)) {
			ret = PTR_ERR(dev);
			goto err_destroy;
		}
		zbatch_devs[i] = dev;
		topo_dev_pkg[i] = node_pkg(node);
		node = next_online_node(node);
		if (node >= MAX_NUMNODES)
			node = first_online_node;
	}
	map_build();
	/* engines follow their CPUs going down and coming back */
	ret = zbatch_sw_hotplug_start();
	if (ret)
		goto err_destroy;
	return 0;

err_destroy:
	while (i--)
		dev_destroy(zbatch_devs[i]);
err_free:
	topo_destroy();
	kfree(zbatch_devs);
	zbatch_devs = NULL;
	zbatch_nr_devs = 0;
	return ret;
}

/* Callers are gone (module exit): queues are empty, engines idle. */
void zbatch_wq_destroy(void)
{
	unsigned int i;

	zbatch_sw_hotplug_stop();
	for (i = 0; i < zbatch_nr_devs; i++)
		dev_destroy(zbatch_devs[i]);
	topo_destroy();
	kfree(zbatch_devs);
	zbatch_devs = NULL;
	zbatch_nr_devs = 0;
}
