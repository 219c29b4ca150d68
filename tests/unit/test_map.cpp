// SPDX-License-Identifier: GPL-2.0
// CPU -> device mapping and WQ types (kmod/map.c) on simulated servers.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "map_sim.hpp"

using mapsim::Map;
using mapsim::Server;

namespace {

void expect_even_per_package(const Server &s, const Map &mp)
{
	std::map<int, std::set<int>> cores_of_dev;
	std::map<int, int> dev_of_core;
	for (size_t cpu = 0; cpu < s.pkg.size(); cpu++) {
		int d = mp.local[cpu];
		ASSERT_GE(d, 0) << s.name << " cpu " << cpu;
		ASSERT_EQ(s.dev_pkg[d], s.pkg[cpu]) << s.name << " cpu " << cpu << " left its package";
		auto [it, fresh] = dev_of_core.emplace(s.core[cpu], d);
		EXPECT_EQ(it->second, d) << "SMT siblings of core " << s.core[cpu] << " split";
		cores_of_dev[d].insert(s.core[cpu]);
	}
	ASSERT_EQ(cores_of_dev.size(), s.dev_pkg.size()) << s.name << ": a device serves no CPU";
	size_t lo = SIZE_MAX, hi = 0;
	for (auto &[d, cores] : cores_of_dev) {
		lo = std::min(lo, cores.size());
		hi = std::max(hi, cores.size());
	}
	EXPECT_LE(hi - lo, 1u) << s.name << ": " << lo << " to " << hi << " cores per device";
}

// Jobs per device when every CPU submits @jobs[cpu] jobs of one kind.
std::vector<long> load(const Server &s, const Map &mp, bool distribute,
		       const std::vector<int> &jobs)
{
	std::vector<long> per(s.dev_pkg.size());
	for (size_t cpu = 0; cpu < s.pkg.size(); cpu++)
		for (int j = 1; j <= jobs[cpu]; j++)
			per[zbatch_map_pick(&mp.m, static_cast<unsigned>(cpu), distribute,
					    static_cast<unsigned>(j))]++;
	return per;
}

double spread(const std::vector<long> &per)
{
	auto [lo, hi] = std::minmax_element(per.begin(), per.end());
	return *lo ? static_cast<double>(*hi) / static_cast<double>(*lo) - 1.0 : 1e9;
}

} // namespace

TEST(Map, EveryServerMapsEvenlyWithinItsPackage)
{
	for (const auto &s : mapsim::servers()) {
		Map mp(s);
		expect_even_per_package(s, mp);
	}
}

TEST(Map, TwoSockets56CoresSmt2FourDevicesPerSocket)
{
	auto s = mapsim::servers()[0];
	Map mp(s);
	ASSERT_EQ(s.pkg.size(), 224u);
	// 56 cores / 4 devices = 14 cores each, in core order
	EXPECT_EQ(mp.local[0], 0);
	EXPECT_EQ(mp.local[13], 0);
	EXPECT_EQ(mp.local[14], 1);
	EXPECT_EQ(mp.local[55], 3);
	EXPECT_EQ(mp.local[56], 4);	// second socket
	EXPECT_EQ(mp.local[112], 0);	// SMT sibling of CPU 0
}

// Compress jobs round-robin over the package's devices from each CPU's own
// local device (staggered start): devices stay within 5% of each other
// even when CPUs submit very different amounts.
TEST(Map, DistributedCompressKeepsDevicesWithin5PercentUnderSkewedLoad)
{
	std::mt19937 rng(42);
	for (const auto &s : mapsim::servers()) {
		Map mp(s);
		std::vector<int> jobs(s.pkg.size());
		for (auto &j : jobs)
			j = static_cast<int>(rng() % 400);	// 0..399 jobs per CPU
		auto per = load(s, mp, true, jobs);
		// per package: compare the devices of each package
		std::map<int, std::vector<long>> by_pkg;
		for (size_t d = 0; d < per.size(); d++)
			by_pkg[s.dev_pkg[d]].push_back(per[d]);
		for (auto &[p, v] : by_pkg)
			EXPECT_LE(spread(v), 0.05) << s.name << " package " << p;
	}
}

// Decompress stays local (distribute_decomps=0): even when every CPU is
// equally busy, as the mapping gives each device the same number of cores.
TEST(Map, LocalDecompressIsEvenForUniformLoad)
{
	for (const auto &s : mapsim::servers()) {
		Map mp(s);
		std::vector<int> jobs(s.pkg.size(), 100);
		EXPECT_LE(spread(load(s, mp, false, jobs)), 0.05) << s.name;
	}
}

// The first job of every CPU lands on its local device, the next ones walk
// the package in order.
TEST(Map, StaggeredStartIsTheLocalDevice)
{
	auto s = mapsim::servers()[0];
	Map mp(s);
	for (unsigned cpu : {0u, 20u, 60u, 200u}) {
		int local = mp.local[cpu];
		EXPECT_EQ(zbatch_map_pick(&mp.m, cpu, 1, 0), local);
		std::set<int> seen;
		for (unsigned seq = 0; seq < 4; seq++)
			seen.insert(zbatch_map_pick(&mp.m, cpu, 1, seq));
		EXPECT_EQ(seen.size(), 4u);
		for (int d : seen)
			EXPECT_EQ(s.dev_pkg[d], s.pkg[cpu]);
		EXPECT_EQ(zbatch_map_pick(&mp.m, cpu, 0, 3), local);
	}
}

TEST(Map, UnevenSplitDiffersByAtMostOneCore)
{
	for (auto s : {mapsim::make("1x10x2, 3 dev", 1, 10, 2, 3),
		       mapsim::make("2x7x1, 2 dev", 2, 7, 1, 2),
		       mapsim::make("1x2x1, 1 dev", 1, 2, 1, 1)}) {
		Map mp(s);
		expect_even_per_package(s, mp);
	}
}

TEST(Map, PackageWithoutDevicesUsesAllDevices)
{
	auto s = mapsim::make("2x4x1", 2, 4, 1, 0);
	s.dev_pkg = {0, 0};
	Map mp(s);
	std::set<int> used;
	for (unsigned int cpu = 4; cpu < 8; cpu++)
		used.insert(mp.local[cpu]);
	EXPECT_EQ(used, (std::set<int>{0, 1}));
}

TEST(Map, NoDeviceOrAbsentCpuIsMinusOne)
{
	auto s = mapsim::make("no dev", 1, 4, 1, 0);
	Map none(s);
	EXPECT_EQ(none.local[0], -1);
	EXPECT_EQ(zbatch_map_pick(&none.m, 0, 1, 5), -1);
	s = mapsim::make("absent", 1, 4, 1, 1);
	s.pkg[2] = -1;
	Map mp(s);
	EXPECT_EQ(mp.local[2], -1);
	EXPECT_EQ(zbatch_map_pick(&mp.m, 2, 1, 5), -1);
}

TEST(Map, WqTypesFollowGCompWqsPerIaa)
{
	// one WQ: always generic
	EXPECT_EQ(zbatch_wq_type(1, 1, 0), ZBATCH_WQ_GENERIC);
	// two WQs, one compress WQ (the series' recommended layout): wq0
	// local decompress, wq1 compress
	EXPECT_EQ(zbatch_wq_type(2, 1, 0), ZBATCH_WQ_DECOMP);
	EXPECT_EQ(zbatch_wq_type(2, 1, 1), ZBATCH_WQ_COMP);
	// 0 or all: generic
	EXPECT_EQ(zbatch_wq_type(4, 0, 3), ZBATCH_WQ_GENERIC);
	EXPECT_EQ(zbatch_wq_type(4, 4, 0), ZBATCH_WQ_GENERIC);
	EXPECT_EQ(zbatch_wq_type(4, 3, 0), ZBATCH_WQ_DECOMP);
	EXPECT_EQ(zbatch_wq_type(4, 3, 1), ZBATCH_WQ_COMP);
	// the scan for a job starts where its type begins
	EXPECT_EQ(zbatch_wq_first(8, 2, 1), 6u);
	EXPECT_EQ(zbatch_wq_first(8, 2, 0), 0u);
	EXPECT_EQ(zbatch_wq_first(8, 0, 1), 0u);
	EXPECT_EQ(zbatch_wq_first(1, 1, 1), 0u);
	EXPECT_TRUE(zbatch_wq_takes(ZBATCH_WQ_GENERIC, 1));
	EXPECT_TRUE(zbatch_wq_takes(ZBATCH_WQ_GENERIC, 0));
	EXPECT_TRUE(zbatch_wq_takes(ZBATCH_WQ_COMP, 1));
	EXPECT_FALSE(zbatch_wq_takes(ZBATCH_WQ_COMP, 0));
	EXPECT_TRUE(zbatch_wq_takes(ZBATCH_WQ_DECOMP, 0));
	EXPECT_FALSE(zbatch_wq_takes(ZBATCH_WQ_DECOMP, 1));
}
