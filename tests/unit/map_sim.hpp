// SPDX-License-Identifier: GPL-2.0
// Simulated servers for the CPU -> device mapping (kmod/map.c): the unit
// tests and the load generator (bench/map) build the same shapes.
#pragma once

#include <string>
#include <vector>

extern "C" {
#include "map.h"
}

namespace mapsim {

struct Server {
	std::string name;
	std::vector<int> pkg, core, dev_pkg;
	zbatch_topo topo() const
	{
		return {static_cast<unsigned int>(pkg.size()), pkg.data(), core.data(),
			static_cast<unsigned int>(dev_pkg.size()), dev_pkg.data()};
	}
};

// sockets x cores x threads; SMT sibling t of core c is CPU t*total + c
// (Linux x86 enumeration: all first threads, then all second threads).
// Sub-NUMA clustering changes nodes, not packages: it is invisible here,
// which is the point of mapping per package.
inline Server make(const std::string &name, int sockets, int cores_per_socket, int threads,
		   int devs_per_socket)
{
	Server s{name, {}, {}, {}};
	int total = sockets * cores_per_socket;
	for (int t = 0; t < threads; t++)
		for (int c = 0; c < total; c++) {
			s.pkg.push_back(c / cores_per_socket);
			s.core.push_back(c);
		}
	for (int p = 0; p < sockets; p++)
		for (int d = 0; d < devs_per_socket; d++)
			s.dev_pkg.push_back(p);
	return s;
}

// The servers the IAA series was measured on and sized for.
inline std::vector<Server> servers()
{
	// SNC-4 splits each socket into 4 NUMA nodes, one IAA each, and the
	// devices bind node by node across sockets: the package mapping
	// sees the same CPUs, with the devices in interleaved order.
	auto snc = make("2 sockets with SNC-4 (4 nodes each), 56 cores x 2, 4 IAA per socket "
			"bound node by node", 2, 56, 2, 0);
	snc.dev_pkg = {0, 1, 0, 1, 0, 1, 0, 1};
	return {
		make("2 sockets x 56 cores x 2 threads, 4 IAA per socket", 2, 56, 2, 4),
		snc,
		make("384 CPUs: 2 sockets x 96 cores x 2 threads, 8 IAA", 2, 96, 2, 4),
		make("384 CPUs: 1 socket x 192 cores x 2 threads, 8 IAA", 1, 192, 2, 8),
	};
}

struct Map {
	std::vector<int> local, pkg_devs, scratch;
	std::vector<unsigned int> first, ndev, start;
	zbatch_map m{};
	explicit Map(const Server &s)
	    : local(s.pkg.size()), pkg_devs(s.dev_pkg.size()), scratch(s.pkg.size()),
	      first(s.pkg.size()), ndev(s.pkg.size()), start(s.pkg.size())
	{
		m = {local.data(), first.data(), ndev.data(), start.data(), pkg_devs.data(),
		     scratch.data()};
		auto t = s.topo();
		zbatch_map_build(&t, &m);
	}
};

} // namespace mapsim
