// SPDX-License-Identifier: GPL-2.0
/*
 * CPU -> device mapping, the seeds' even mapping and global WQ policy.
 * Pure C with no kernel dependency: also compiled into the host unit tests.
 */
#include "map.h"

static unsigned int node_devs(const struct zbatch_topo *t, int node)
{
	unsigned int d, n = 0;

	for (d = 0; d < t->nr_devs; d++)
		if (t->dev_node[d] == node)
			n++;
	return n;
}

/* The @k-th device of @node, or of all devices when @node is -1. */
static int nth_dev(const struct zbatch_topo *t, int node, unsigned int k)
{
	unsigned int d;

	for (d = 0; d < t->nr_devs; d++) {
		if (node >= 0 && t->dev_node[d] != node)
			continue;
		if (k-- == 0)
			return (int)d;
	}
	return -1;
}

/*
 * Rank of @cpu's core among the distinct cores of @node (all nodes when
 * @node is -1), in core id order, and the number of such cores.
 */
static void core_rank(const struct zbatch_topo *t, unsigned int cpu, int node,
		      unsigned int *rank, unsigned int *cores)
{
	int me = t->cpu_core[cpu];
	unsigned int c, p;

	*rank = 0;
	*cores = 0;
	for (c = 0; c < t->nr_cpus; c++) {
		int dup = 0;

		if (t->cpu_node[c] < 0 || (node >= 0 && t->cpu_node[c] != node))
			continue;
		/* count each core once: at its first CPU */
		for (p = 0; p < c; p++) {
			if (t->cpu_core[p] == t->cpu_core[c] &&
			    t->cpu_node[p] == t->cpu_node[c]) {
				dup = 1;
				break;
			}
		}
		if (dup)
			continue;
		(*cores)++;
		if (t->cpu_core[c] < me)
			(*rank)++;
	}
}

int zbatch_map_local(const struct zbatch_topo *t, unsigned int cpu)
{
	unsigned int ndev, rank, cores;
	int node;

	if (cpu >= t->nr_cpus || t->cpu_node[cpu] < 0 || t->nr_devs == 0)
		return -1;
	node = t->cpu_node[cpu];
	core_rank(t, cpu, node, &rank, &cores);
	if (cores == 0)
		return -1;
	ndev = node_devs(t, node);
	if (ndev == 0) {
		node = -1;	/* spread this node's cores over every device */
		ndev = t->nr_devs;
	}
	return nth_dev(t, node, (unsigned int)((unsigned long long)rank * ndev / cores));
}

int zbatch_map_global(const struct zbatch_topo *t, unsigned int cpu,
		      unsigned int seq)
{
	unsigned int ndev;
	int node;

	if (cpu >= t->nr_cpus || t->cpu_node[cpu] < 0 || t->nr_devs == 0)
		return -1;
	node = t->cpu_node[cpu];
	ndev = node_devs(t, node);
	if (ndev == 0) {
		node = -1;
		ndev = t->nr_devs;
	}
	return nth_dev(t, node, seq % ndev);
}
