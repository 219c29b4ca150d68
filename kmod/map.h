/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU -> device mapping: pure functions over a described topology, built
 * into the module and into the host unit tests (no kernel headers).
 */
#ifndef _ZBATCH_MAP_H
#define _ZBATCH_MAP_H

struct zbatch_topo {
	unsigned int nr_cpus;
	const int *cpu_node;	/* per CPU: NUMA node, < 0 if absent */
	const int *cpu_core;	/* per CPU: core id; SMT siblings share it */
	unsigned int nr_devs;
	const int *dev_node;	/* per device: NUMA node */
};

/*
 * Device serving @cpu's local WQs: the cores of a node are spread evenly
 * over that node's devices in core order, so SMT siblings share a device;
 * the cores of a node without devices are spread over every device.
 * Returns -1 when there is no device or @cpu is absent.
 */
int zbatch_map_local(const struct zbatch_topo *t, unsigned int cpu);

/*
 * Global policy for compress jobs: the @seq-th job from @cpu goes to the
 * (seq mod n)-th device of @cpu's node (all devices if the node has none).
 */
int zbatch_map_global(const struct zbatch_topo *t, unsigned int cpu,
		      unsigned int seq);

#endif /* _ZBATCH_MAP_H */
