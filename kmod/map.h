/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU -> device mapping, the IAA batching series' (v13/v14) WQ design:
 *
 *  - CPUs map to devices per package, not per NUMA node, so sub-NUMA
 *    clustering (SNC) does not strand a node's CPUs away from devices: the
 *    cores of a package are spread evenly over that package's devices in
 *    core order (SMT siblings share a device), the cores of a package
 *    without devices over every device;
 *  - with distribute (iaa_crypto's distribute_comps for compress,
 *    distribute_decomps for decompress) a CPU's jobs go round-robin over
 *    all devices of its package, each CPU starting at its own local device
 *    (the staggered start), else to the local device;
 *  - WQs are typed (g_comp_wqs_per_iaa): of a device's N >= 2 WQs the last
 *    G take compress jobs only, the others decompress jobs only; with one
 *    WQ, G = 0 or G >= N every WQ is generic.
 *
 * Pure C with no kernel dependency: the module and the host unit tests and
 * load generator run the same code. zbatch_map_build() precomputes per-CPU
 * tables so that a pick is O(1) whatever the size of the server.
 */
#ifndef _ZBATCH_MAP_H
#define _ZBATCH_MAP_H

struct zbatch_topo {
	unsigned int nr_cpus;
	const int *cpu_pkg;	/* per CPU: package, < 0 if absent */
	const int *cpu_core;	/* per CPU: core id, system-wide; SMT siblings share it */
	unsigned int nr_devs;
	const int *dev_pkg;	/* per device: package */
};

/* Tables the caller allocates: nr_cpus entries each, pkg_devs nr_devs. */
struct zbatch_map {
	int *local;		/* per CPU: its local device, -1 if none/absent */
	unsigned int *first;	/* per CPU: its package's run in pkg_devs */
	unsigned int *ndev;	/* per CPU: devices in that run */
	unsigned int *start;	/* per CPU: index of its local device in the run */
	int *pkg_devs;		/* device ids grouped by package */
	int *scratch;		/* nr_cpus ints, used while building */
};

/* Fill @m for @t. Returns 0, or -1 when @t has no device. */
int zbatch_map_build(const struct zbatch_topo *t, struct zbatch_map *m);

/*
 * Device for the @seq-th job of its kind from @cpu (< t->nr_cpus): its
 * local device, or with @distribute the next device of its package's
 * round-robin. -1 when the CPU has none.
 */
static inline int zbatch_map_pick(const struct zbatch_map *m, unsigned int cpu,
				  int distribute, unsigned int seq)
{
	unsigned int n = m->ndev[cpu];

	if (!distribute || n <= 1 || m->local[cpu] < 0)
		return m->local[cpu];
	return m->pkg_devs[m->first[cpu] + (m->start[cpu] + seq) % n];
}

enum zbatch_wq_type {
	ZBATCH_WQ_GENERIC = 0,
	ZBATCH_WQ_COMP,		/* compress jobs only */
	ZBATCH_WQ_DECOMP,	/* decompress jobs only */
};

/* Type of WQ @idx (0-based) of a device with @nr_wqs, @g_comp compress WQs. */
static inline enum zbatch_wq_type zbatch_wq_type(unsigned int nr_wqs,
						 unsigned int g_comp,
						 unsigned int idx)
{
	if (nr_wqs < 2 || g_comp == 0 || g_comp >= nr_wqs)
		return ZBATCH_WQ_GENERIC;
	return idx >= nr_wqs - g_comp ? ZBATCH_WQ_COMP : ZBATCH_WQ_DECOMP;
}

/*
 * Where a device's WQs of the type a job needs begin (they are
 * contiguous): scanning from there finds one at once, whatever the number
 * of WQs.
 */
static inline unsigned int zbatch_wq_first(unsigned int nr_wqs, unsigned int g_comp,
					   int comp)
{
	if (zbatch_wq_type(nr_wqs, g_comp, 0) == ZBATCH_WQ_GENERIC || !comp)
		return 0;
	return nr_wqs - g_comp;
}

/* Whether a WQ of @type takes a compress (@comp) or decompress job. */
static inline int zbatch_wq_takes(enum zbatch_wq_type type, int comp)
{
	return type == ZBATCH_WQ_GENERIC || (type == ZBATCH_WQ_COMP) == !!comp;
}

#endif /* _ZBATCH_MAP_H */
