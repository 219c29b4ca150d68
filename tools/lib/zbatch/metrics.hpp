// SPDX-License-Identifier: GPL-2.0
// What zbatch stats knows, in the Prometheus text exposition format
// (version 0.0.4), for node_exporter's textfile collector: metric names,
// types and help text follow Prometheus's conventions (base units,
// counters ending in _total); Documentation/admin-guide.md lists them.
#pragma once

#include <string>
#include <vector>

#include "zbatch/error.hpp"
#include "zbatch/stats.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch {

// Whether the module is @loaded, its statistics (nullptr: unreadable,
// zbatch_stats_readable 0) and its swap devices.
std::string prometheus_text(bool loaded, const Stats *stats,
			    const std::vector<SwapdevInfo> &devs);

} // namespace zbatch
