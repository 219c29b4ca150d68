// SPDX-License-Identifier: GPL-2.0
/*
 * CPU -> device mapping per package (see map.h). Pure C with no kernel
 * dependency: also compiled into the host unit tests and load generator.
 * Building is O(CPUs^2) once per layout change; picks are O(1).
 */
#include "map.h"

/* Distinct core ids of package @pkg (all packages: -1), sorted; count. */
static unsigned int pkg_cores(const struct zbatch_topo *t, int pkg, int *out)
{
	unsigned int c, n = 0, i;

	for (c = 0; c < t->nr_cpus; c++) {
		int core = t->cpu_core[c];

		if (t->cpu_pkg[c] < 0 || (pkg >= 0 && t->cpu_pkg[c] != pkg))
			continue;
		for (i = 0; i < n && out[i] < core; i++)
			;
		if (i < n && out[i] == core)
			continue;
		/* insert at i */
		for (unsigned int j = n; j > i; j--)
			out[j] = out[j - 1];
		out[i] = core;
		n++;
	}
	return n;
}

static unsigned int rank_of(const int *cores, unsigned int n, int core)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (cores[mid] < core)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int zbatch_map_build(const struct zbatch_topo *t, struct zbatch_map *m)
{
	unsigned int cpu, d, k = 0, cores = 0;
	int cached = -2;

	if (!t->nr_devs) {
		for (cpu = 0; cpu < t->nr_cpus; cpu++) {
			m->local[cpu] = -1;
			m->ndev[cpu] = 0;
			m->first[cpu] = 0;
			m->start[cpu] = 0;
		}
		return -1;
	}
	/* devices grouped by package, in package then id order */
	for (d = 0; d < t->nr_devs; d++) {
		int pkg = t->dev_pkg[d], seen = 0;
		unsigned int e;

		for (e = 0; e < d; e++)
			if (t->dev_pkg[e] == pkg)
				seen = 1;
		if (seen)
			continue;
		for (e = d; e < t->nr_devs; e++)
			if (t->dev_pkg[e] == pkg)
				m->pkg_devs[k++] = (int)e;
	}
	for (cpu = 0; cpu < t->nr_cpus; cpu++) {
		int pkg = t->cpu_pkg[cpu];
		unsigned int first = 0, n = 0, rank, idx;

		m->local[cpu] = -1;
		m->first[cpu] = 0;
		m->ndev[cpu] = 0;
		m->start[cpu] = 0;
		if (pkg < 0)
			continue;
		for (k = 0; k < t->nr_devs; k++) {
			if (t->dev_pkg[m->pkg_devs[k]] != pkg)
				continue;
			if (!n)
				first = k;
			n++;
		}
		if (!n) {
			/* a package without devices: spread over every device */
			first = 0;
			n = t->nr_devs;
		}
		/* the package's cores, kept while CPUs stay in it */
		if (pkg != cached) {
			cores = pkg_cores(t, pkg, m->scratch);
			cached = pkg;
		}
		rank = rank_of(m->scratch, cores, t->cpu_core[cpu]);
		idx = (unsigned int)((unsigned long long)rank * n / cores);
		m->local[cpu] = m->pkg_devs[first + idx];
		m->first[cpu] = first;
		m->ndev[cpu] = n;
		m->start[cpu] = idx;
	}
	return 0;
}
