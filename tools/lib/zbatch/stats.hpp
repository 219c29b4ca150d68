// SPDX-License-Identifier: GPL-2.0
// The module's debugfs statistics, and the invariants they must satisfy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zbatch/sysfs.hpp"
#include "zbatch/paths.hpp"

namespace zbatch {

using Counters = std::map<std::string, uint64_t>;

struct Latency {
	std::string op;
	uint64_t samples = 0, p50 = 0, p95 = 0, p99 = 0;
};

struct Stats {
	Counters global;
	std::map<std::string, Counters> scopes;		// "dev0", "dev0/wq0", ...
	std::vector<std::pair<unsigned int, uint64_t>> batch_hist;	// non-zero
	std::vector<Latency> latency;
	// the engines' CPU time since load (debugfs engines' total line)
	bool engine_cpu_known = false;
	uint64_t engine_cpu_ns = 0;
};


// Skipped (77) when debugfs or the module is not there.
Result<Stats> read_stats(const SysfsTree &tree);

struct Check {
	std::string what;
	bool ok;
	std::string detail;
};

// Invariants: for every scope calls = completions + errors; no timeout;
// no verify mismatch; when zswap uses a zbatch algorithm, the pages it
// holds are no more than zbatch's successful compressions.
std::vector<Check> validate(const Stats &s, const SysfsTree &tree);

std::string stats_to_json(const Stats &s);

} // namespace zbatch
