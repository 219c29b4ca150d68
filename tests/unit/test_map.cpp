// SPDX-License-Identifier: GPL-2.0
// CPU -> device mapping (kmod/map.c) over simulated topologies.
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "map.h"
}

namespace {

struct Topo {
	std::vector<int> node, core, dev_node;
	zbatch_topo t() const
	{
		return {static_cast<unsigned int>(node.size()), node.data(), core.data(),
			static_cast<unsigned int>(dev_node.size()), dev_node.data()};
	}
};

// sockets x cores x threads; SMT sibling t of core c is CPU t*total + c
// (Linux x86 enumeration: all first threads, then all second threads).
Topo make(int nodes, int cores_per_node, int threads, int devs_per_node)
{
	Topo tp;
	int total = nodes * cores_per_node;
	for (int t = 0; t < threads; t++)
		for (int c = 0; c < total; c++) {
			tp.node.push_back(c / cores_per_node);
			tp.core.push_back(c);
		}
	for (int n = 0; n < nodes; n++)
		for (int d = 0; d < devs_per_node; d++)
			tp.dev_node.push_back(n);
	return tp;
}

void expect_even_and_smt_shared(const Topo &tp)
{
	auto t = tp.t();
	std::map<int, std::set<int>> cores_of_dev;
	std::map<int, int> dev_of_core;
	for (unsigned int cpu = 0; cpu < t.nr_cpus; cpu++) {
		int d = zbatch_map_local(&t, cpu);
		ASSERT_GE(d, 0) << "cpu " << cpu;
		ASSERT_EQ(tp.dev_node[d], tp.node[cpu]) << "cpu " << cpu << " left its node";
		auto [it, fresh] = dev_of_core.emplace(tp.core[cpu], d);
		EXPECT_EQ(it->second, d) << "SMT siblings of core " << tp.core[cpu] << " split";
		cores_of_dev[d].insert(tp.core[cpu]);
	}
	ASSERT_EQ(cores_of_dev.size(), tp.dev_node.size()) << "a device serves no CPU";
	size_t lo = SIZE_MAX, hi = 0;
	for (auto &[d, cores] : cores_of_dev) {
		lo = std::min(lo, cores.size());
		hi = std::max(hi, cores.size());
	}
	EXPECT_LE(hi - lo, 1u) << "uneven: " << lo << " to " << hi << " cores per device";
}

} // namespace

TEST(Map, TwoSockets56CoresSmt2FourDevicesPerSocket)
{
	auto tp = make(2, 56, 2, 4);
	ASSERT_EQ(tp.node.size(), 224u);
	expect_even_and_smt_shared(tp);
	auto t = tp.t();
	// 56 cores / 4 devices = 14 cores each, in core order
	EXPECT_EQ(zbatch_map_local(&t, 0), 0);
	EXPECT_EQ(zbatch_map_local(&t, 13), 0);
	EXPECT_EQ(zbatch_map_local(&t, 14), 1);
	EXPECT_EQ(zbatch_map_local(&t, 55), 3);
	EXPECT_EQ(zbatch_map_local(&t, 56), 4);	// second socket
	EXPECT_EQ(zbatch_map_local(&t, 112), 0);	// SMT sibling of CPU 0
}

TEST(Map, Cpus384EightDevicesSixNodes)
{
	// 6 nodes x 32 cores x 2 threads = 384 CPUs; 8 devices spread round
	// robin over nodes: nodes 0 and 1 get two, the others one.
	Topo tp = make(6, 32, 2, 0);
	for (int d = 0; d < 8; d++)
		tp.dev_node.push_back(d % 6);
	ASSERT_EQ(tp.node.size(), 384u);
	auto t = tp.t();
	std::map<int, std::set<int>> cores_of_dev;
	std::map<int, int> dev_of_core;
	for (unsigned int cpu = 0; cpu < t.nr_cpus; cpu++) {
		int d = zbatch_map_local(&t, cpu);
		ASSERT_GE(d, 0);
		EXPECT_EQ(tp.dev_node[d], tp.node[cpu]);
		auto [it, fresh] = dev_of_core.emplace(tp.core[cpu], d);
		EXPECT_EQ(it->second, d);
		cores_of_dev[d].insert(tp.core[cpu]);
	}
	EXPECT_EQ(cores_of_dev.size(), 8u);
	for (auto &[d, cores] : cores_of_dev)
		EXPECT_EQ(cores.size(), tp.dev_node[d] < 2 ? 16u : 32u) << "device " << d;
}

TEST(Map, UnevenSplitDiffersByAtMostOneCore)
{
	expect_even_and_smt_shared(make(1, 10, 2, 3));
	expect_even_and_smt_shared(make(2, 7, 1, 2));
	expect_even_and_smt_shared(make(1, 2, 1, 1));
}

TEST(Map, NodeWithoutDevicesUsesAllDevices)
{
	Topo tp = make(2, 4, 1, 0);
	tp.dev_node = {0, 0};
	auto t = tp.t();
	std::set<int> used;
	for (unsigned int cpu = 4; cpu < 8; cpu++)
		used.insert(zbatch_map_local(&t, cpu));
	EXPECT_EQ(used, (std::set<int>{0, 1}));
}

TEST(Map, NoDeviceOrAbsentCpuIsMinusOne)
{
	Topo tp = make(1, 4, 1, 0);
	auto t = tp.t();
	EXPECT_EQ(zbatch_map_local(&t, 0), -1);
	tp = make(1, 4, 1, 1);
	tp.node[2] = -1;
	t = tp.t();
	EXPECT_EQ(zbatch_map_local(&t, 2), -1);
	EXPECT_EQ(zbatch_map_local(&t, 99), -1);
	EXPECT_EQ(zbatch_map_global(&t, 99, 0), -1);
}

TEST(Map, GlobalPolicyRoundRobinsOverTheNodesDevices)
{
	auto tp = make(2, 56, 2, 4);
	auto t = tp.t();
	std::map<int, int> hits;
	for (unsigned int seq = 0; seq < 400; seq++)
		hits[zbatch_map_global(&t, 60, seq)]++;	// CPU 60: node 1
	ASSERT_EQ(hits.size(), 4u);
	for (auto &[d, n] : hits) {
		EXPECT_EQ(tp.dev_node[d], 1);
		EXPECT_EQ(n, 100);
	}
}
