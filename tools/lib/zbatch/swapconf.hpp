// SPDX-License-Identifier: GPL-2.0
// The swap devices' configuration file (/etc/zbatch/swap.conf), read by
// zbatch dev setup at boot (zbatch-swap.service). Its format, one section
// per device (Documentation/admin-guide.md, "Swap at boot"):
//
//   # comment
//   [swap0]
//   size = 25%          # of the RAM (MemTotal), or bytes: 4G, 512M
//   codec = lz4
//   unit = 4k
//   priority = 100
//   mem-limit = 10%     # of the RAM, or bytes; 0: none
//   discard = no
//   unit-adapt = yes    # units only while reads take them whole
//   recomp-algorithm = zstd   # a secondary codec (recompression)
//   recomp-level = 9
//   recomp-budget = 5   # percent of one CPU for the background thread
//   recomp-interval = 60        # seconds between its passes
//
// Every error names the file, the line and the key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zbatch/error.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch {

inline const std::string kSwapConf = "/etc/zbatch/swap.conf";
// What zbatch dev setup created: "SECTION ID" lines, for teardown.
inline const std::string kSwapState = "/run/zbatch/swap.state";

// A size: bytes, or a share of the RAM (percent > 0).
struct ConfSize {
	uint64_t bytes = 0;
	unsigned int percent = 0;
};

struct SwapConfDevice {
	std::string name;	// the section: [swap0]
	unsigned int line = 0;	// where the section starts
	ConfSize size;
	unsigned int size_line = 0;
	std::string codec = "lz4";
	std::string unit = "4k";
	int priority = 100;	// -1: the kernel's default (below every other)
	ConfSize mem_limit;	// 0: no limit
	bool discard = false;
	bool unit_adapt = true;	// unit-adapt: units only while they pay
	int level = 0;		// the codec's level; 0: its default
	unsigned int level_line = 0;
	std::string writeback_device;	// zram-generator's key: a block device path
	// recompression (each of its keys needs recomp-algorithm): the
	// secondary codec ("": none) and its level; the background thread's
	// budget (percent of one CPU) and interval (s), -1: not set (the
	// module's defaults: 0, no thread; 60)
	std::string recomp_codec{};
	int recomp_level = 0;
	int recomp_budget = -1;
	int recomp_interval = -1;
};

// @text, the contents of @file (named in the errors).
Result<std::vector<SwapConfDevice>> parse_swap_conf(const std::string &file,
						     const std::string &text);

// A size in bytes: a share of @ram_bytes, rounded down to whole pages.
uint64_t conf_bytes(const ConfSize &s, uint64_t ram_bytes);

// The RAM, MemTotal of /proc/meminfo.
Result<uint64_t> ram_bytes(const SysfsTree &t);

} // namespace zbatch
