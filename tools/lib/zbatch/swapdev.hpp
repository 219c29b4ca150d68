// SPDX-License-Identifier: GPL-2.0
// The zbatch swap devices (/dev/zbatchswapN): create, list, destroy through
// sysfs (/sys/kernel/zbatch/swapdev, /sys/block/zbatchswapN/zbatch).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zbatch/error.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch {


struct SwapdevConfig {
	uint64_t size = 0;		// bytes
	std::string codec = "lz4";	// deflate, lz4, zstd, lzo
	std::string unit = "4k";	// 4k, 16k, 64k
	int level = 0;			// the codec's compression level; 0: its default
	std::string backing_dev;	// writeback's block device; "": none
	// recompression: the secondary codec ("": none) and its level; the
	// background thread's budget (percent of one CPU) and the seconds
	// between its passes, -1: not set (the module's defaults: 0, no
	// thread; 60)
	std::string recomp_codec{};
	int recomp_level = 0;
	int recomp_budget = -1;
	int recomp_interval = -1;
};

struct SwapdevInfo {
	int id = -1;
	std::string name;		// zbatchswapN
	uint64_t disksize = 0;
	std::string codec, unit;
	int level = 0;			// algorithm_params' level (0: the codec's default)
	uint64_t mem_limit = 0;
	// mm_stat, as zram's
	uint64_t orig_bytes = 0, compr_bytes = 0, used_bytes = 0, max_used_bytes = 0;
	uint64_t same_pages = 0, huge_pages = 0;
	// io_stat, as zram's
	uint64_t failed_reads = 0, failed_writes = 0, invalid_io = 0, notify_free = 0;
	// writeback: its backing device ("": none) and bd_stat, as zram's
	// (pages now there, read from it, written to it); the pages it may
	// still write, when writeback_limit_enable is on
	std::string backing_dev;
	uint64_t bd_count = 0, bd_reads = 0, bd_writes = 0;
	bool wb_limit_on = false;
	uint64_t wb_limit = 0;
	// recompression: the secondary codec ("": none, or a module without
	// it) and its level (algorithm_params' priority=1 line); the
	// background thread's budget (percent of one CPU, 0: none) and
	// interval (s); recomp_stat: pages stored with the secondary codec
	// now; pages tried, recompressed, found incompressible, bytes saved
	// and CPU ns taken, ever
	std::string recomp_codec;
	int recomp_level = 0;
	unsigned int recomp_budget = 0, recomp_interval = 0;
	uint64_t recomp_pages = 0, recomp_tried = 0, recomp_done = 0, recomp_incomp = 0;
	uint64_t recomp_saved = 0, recomp_cpu_ns = 0;
	std::map<std::string, int64_t> unit_stat;	// units, partial_reads, ...
	// requests per batch -> (write batches, read batches)
	std::map<unsigned int, std::pair<uint64_t, uint64_t>> batches;
	std::string swap_use;		// "" or the /proc/swaps line's priority
};

// "2G", "512M", "64k", "4096" -> bytes.
Result<uint64_t> parse_bytes(const std::string &s);
Result<SwapdevConfig> check_swapdev_config(const SwapdevConfig &c);
// Whether @codec has compression levels and @level is one of them for
// @unit (0, the default, always is): deflate 1-9, lz4 1-65537 (its
// acceleration: higher is faster and larger, as zram's), zstd -131072 to
// 22, above 3 not with 64k units (the module's workspace: it refuses the
// same, E2BIG; 64k is 16 pages of x86-64's 4 KiB); lzo none. The error
// message is the reason alone: each caller says where the level came from.
Result<void> check_codec_level(const std::string &codec, int level, const std::string &unit);
// Creates, configures and sizes a device; returns its number. A device
// that cannot be configured is removed again.
Result<int> swapdev_create(const SysfsTree &t, const SwapdevConfig &c);
Result<std::vector<SwapdevInfo>> swapdev_list(const SysfsTree &t);
// Refused, naming why, while the device is swapped on or open.
Result<void> swapdev_destroy(const SysfsTree &t, int id);
// Writeback (zram's): mark every page in memory idle (read or rewritten
// since: no longer), or with @age_s only those not written or read in the
// last @age_s seconds (the others lose their mark, as zram's "idle N");
// move pages to the backing device, @mode one of idle, huge, huge_idle,
// page_index=N. The errors name what to do.
// The largest age the module takes (its clock is 32-bit seconds).
inline constexpr std::uint64_t kIdleAgeMax = 4294967295ULL;
Result<void> swapdev_mark_idle(const SysfsTree &t, int id,
			       std::optional<std::uint64_t> age_s = std::nullopt);
Result<void> swapdev_writeback(const SysfsTree &t, int id, const std::string &mode);
// Recompression (zram's recompress) with the device's secondary codec:
// @type "" (every page in memory), idle, huge or huge_idle; at most
// @max_pages pages (0: no limit); only objects of at least @threshold
// bytes a page (0: any; below 4096). The errors name what to do.
struct RecompressArgs {
	std::string type;
	uint64_t max_pages = 0;
	unsigned int threshold = 0;
};
Result<void> swapdev_recompress(const SysfsTree &t, int id, const RecompressArgs &a);
// "zstd", or "zstd:9" at a level other than the default
std::string codec_label(const std::string &codec, int level);
// A device's recompression in words, for a line of zbatch dev list and
// stats ("zstd:9, background 10% of a CPU every 5 s: 1200 pages stored so
// now, ..."); "" without a secondary codec.
std::string swapdev_recomp_summary(const SwapdevInfo &d);
// One device as a JSON object (fields documented in Documentation/cli.md).
Json swapdev_to_json(const SwapdevInfo &d);

} // namespace zbatch
