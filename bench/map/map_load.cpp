// SPDX-License-Identifier: GPL-2.0
// Load generator for the WQ design (kmod/map.c), on the host: servers as
// the IAA series sized them, 1..64 WQs, every CPU submitting compress and
// decompress jobs through the module's own pick code. Prints, per layout,
// the pick cost per request (ns, host CPU: the part of submission that
// depends on devices and WQs) and the device load spread (max/min - 1).
// Run by 'make bench' (scripts/bench); output: one 'mapload' line each.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "map_sim.hpp"

namespace {

struct Layout {
	int sockets, cores, threads, devs_per_socket, wqs_per_dev;
};

// The WQ a job takes on device @d: the first of its type in priority
// order, scanned from where its type begins (as kmod/wq.c dev_wq(); every
// WQ in service here).
int pick_wq(unsigned nr_wqs, unsigned g_comp, bool comp)
{
	unsigned first = zbatch_wq_first(nr_wqs, g_comp, comp);
	for (unsigned k = 0; k < nr_wqs; k++) {
		unsigned i = (first + k) % nr_wqs;
		if (zbatch_wq_takes(zbatch_wq_type(nr_wqs, g_comp, i), comp))
			return static_cast<int>(i);
	}
	return 0;
}

double spread(const std::vector<long> &v)
{
	auto [lo, hi] = std::minmax_element(v.begin(), v.end());
	return *lo ? static_cast<double>(*hi) / static_cast<double>(*lo) - 1.0 : -1.0;
}

} // namespace

int main()
{
	const Layout layouts[] = {
		{1, 56, 2, 1, 1}, {2, 56, 2, 1, 1}, {2, 56, 2, 1, 2}, {2, 56, 2, 2, 1}, {2, 56, 2, 2, 2},
		{2, 56, 2, 4, 2}, {2, 56, 2, 4, 4}, {2, 56, 2, 4, 8}, {2, 96, 2, 4, 8},
	};
	std::printf("# mapload CPUS DEVICES WQS_PER_DEV TOTAL_WQS NS_PER_PICK COMP_SPREAD DECOMP_SPREAD\n");
	for (const auto &l : layouts) {
		auto s = mapsim::make("", l.sockets, l.cores, l.threads, l.devs_per_socket);
		mapsim::Map mp(s);
		const unsigned ncpu = static_cast<unsigned>(s.pkg.size());
		const unsigned ndev = static_cast<unsigned>(s.dev_pkg.size());
		const unsigned g = 1;	// g_comp_wqs_per_iaa default
		std::vector<long> comp(ndev), decomp(ndev), wq_hits(ndev * l.wqs_per_dev);
		std::vector<unsigned> seq(ncpu);
		std::mt19937 rng(1);
		std::vector<unsigned> order(4096);
		for (auto &c : order)
			c = rng() % ncpu;
		const long n = 20'000'000;
		long sink = 0;
		auto t0 = std::chrono::steady_clock::now();
		for (long i = 0; i < n; i++) {
			unsigned cpu = order[i & 4095];
			bool c = i & 1;
			int d = zbatch_map_pick(&mp.m, cpu, c, c ? seq[cpu]++ : 0);
			int w = pick_wq(l.wqs_per_dev, g, c);
			sink += d * 8 + w;
		}
		auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
				  .count() / static_cast<double>(n);
		// loads: every CPU the same number of jobs of each kind
		for (unsigned cpu = 0; cpu < ncpu; cpu++)
			for (unsigned j = 0; j < 200; j++) {
				comp[zbatch_map_pick(&mp.m, cpu, 1, j)]++;
				decomp[zbatch_map_pick(&mp.m, cpu, 0, j)]++;
			}
		std::printf("mapload %u %u %d %u %.1f %.4f %.4f\n", ncpu, ndev, l.wqs_per_dev,
			    ndev * l.wqs_per_dev, ns, spread(comp), spread(decomp));
		if (sink == 42)
			std::printf("#\n");
	}
	return 0;
}
