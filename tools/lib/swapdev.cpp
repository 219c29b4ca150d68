// SPDX-License-Identifier: GPL-2.0
#include "zbatch/swapdev.hpp"
#include "zbatch/codec.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"
#include "zbatch/parse.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace zbatch {

namespace {

const char *const kZstd64kLevels =
	"zstd levels above 3 need larger tables than 64k units allow; they fit 4k and 16k units";

// A statistic: 0 when missing or not a number (listed, not fatal).
uint64_t to_u64(const std::string &s)
{
	return parse_number<uint64_t>(s, "").value_or(0);
}

// The /proc/swaps line of /dev/NAME, or "".
std::string swaps_line(const SysfsTree &t, const std::string &name)
{
	std::istringstream in(t.read(kProcSwaps).value_or(""));
	std::string line;
	while (std::getline(in, line))
		if (line.rfind("/dev/" + name + " ", 0) == 0 || line.rfind("/dev/" + name + "\t", 0) == 0)
			return line;
	return "";
}

// Device @id exists, or why not.
Result<void> have_device(const SysfsTree &t, int id)
{
	auto name = swapdev_name(id);
	if (!t.exists(kSysBlockDir + "/" + name))
		return fail(ENODEV, fmt::format("no device {} (see zbatch dev list)", name));
	return {};
}

// Why the module refused a backing device (backing_dev_store()).
std::string backing_dev_error(const SysfsTree &t, const std::string &dir, const Error &e)
{
	switch (e.code) {
	case ENOENT:
		return t.exists(dir + "/backing_dev") ? "no such device"
						      : "the loaded zbatch has no writeback "
							"(backing_dev): load this version's module";
	case ENOTBLK:
		return "not a block device";
	case EBUSY:
		return "in use (mounted, swapped on, or another device's backing device)";
	case EINVAL:
		return "a zbatch swap device, empty, or blocks larger than 4 KiB (the kernel log "
		       "says which)";
	default:
		return e.message;
	}
}

} // namespace

Result<uint64_t> parse_bytes(const std::string &s)
{
	size_t digits = 0;
	while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	auto num = parse_number<unsigned long long>(std::string_view(s).substr(0, digits), "size");
	if (!num)
		return fail(EINVAL, fmt::format("'{}': not a size (e.g. 64k, 512M, 2G)", s));
	unsigned long long v = *num;
	std::string u = s.substr(digits);
	unsigned int shift = 0;
	if (u == "k" || u == "K")
		shift = 10;
	else if (u == "m" || u == "M")
		shift = 20;
	else if (u == "g" || u == "G")
		shift = 30;
	else if (u == "t" || u == "T")
		shift = 40;
	else if (!u.empty())
		return fail(EINVAL, fmt::format("'{}': unknown unit '{}' (k, M, G, T)", s, u));
	if (shift && v > (~0ULL >> shift))
		return fail(EINVAL, fmt::format("'{}': too large", s));
	return v << shift;
}

Result<void> check_codec_level(const std::string &codec, int level, const std::string &unit)
{
	struct Range {
		const char *codec;
		int lo, hi;
		const char *what;
	};
	static const Range ranges[] = {
		{"deflate", 1, 9, "1 (fastest) to 9 (smallest), default 6"},
		{"lz4", 1, 65537, "1 to 65537, lz4's acceleration: higher is faster and "
				  "compresses less, default 1"},
		{"zstd", -131072, 22, "-131072 to 22 (negative: faster; 0: the default, 3)"},
	};
	if (!level)
		return {};
	for (const auto &r : ranges)
		if (codec == r.codec) {
			if (level < r.lo || level > r.hi)
				return fail(ERANGE, fmt::format("{} levels are {}", codec, r.what));
			if (codec == "zstd" && level > 3 && unit == "64k")
				return fail(E2BIG, kZstd64kLevels);
			return {};
		}
	return fail(EINVAL, fmt::format("{} has no compression levels", codec));
}

Result<SwapdevConfig> check_swapdev_config(const SwapdevConfig &c)
{
	if (c.size < 4096 || c.size > (1ULL << 40))
		return fail(EINVAL, fmt::format("--size {}: from 4k to 1T", c.size));
	if (std::ranges::find(codec_names(), c.codec) == codec_names().end())
		return fail(EINVAL, fmt::format("--codec {}: one of {}", c.codec, codec_list()));
	static const std::vector<std::string> units = {ZBATCH_SWAPDEV_UNIT_NAMES};
	if (std::ranges::find(units, c.unit) == units.end())
		return fail(EINVAL, fmt::format("--unit {}: one of {}", c.unit, fmt::join(units, ", ")));
	if (auto l = check_codec_level(c.codec, c.level, c.unit); !l)
		return fail(l.error().code, fmt::format("--level {}: {}", c.level, l.error().message));
	return c;
}

Result<int> swapdev_create(const SysfsTree &t, const SwapdevConfig &c)
{
	if (auto ok = check_swapdev_config(c); !ok)
		return std::unexpected(ok.error());
	if (!t.exists(kSwapdevCtl))
		return skip(ENOENT, fmt::format("{} is missing: is zbatch loaded?", kSwapdevCtl));
	auto id = t.read(kSwapdevCtl + "/hot_add");
	if (!id)
		return fail(id.error().code, "cannot create a device: " + id.error().message);
	auto num = parse_number<int>(*id, kSwapdevCtl + "/hot_add");
	if (!num)
		return std::unexpected(num.error());
	int n = *num;
	auto dir = swapdev_dir(n);
	std::vector<std::pair<std::string, std::string>> writes = {{"codec", c.codec},
								      {"unit", c.unit}};
	// after codec (which resets it) and unit (which bounds a zstd level)
	if (c.level)
		writes.emplace_back("algorithm_params", fmt::format("level={}", c.level));
	if (!c.backing_dev.empty())
		writes.emplace_back("backing_dev", c.backing_dev);
	writes.emplace_back("disksize", std::to_string(c.size));
	for (const auto &[file, value] : writes) {
		if (auto w = t.write(dir + "/" + file, value); !w) {
			// why, before the device and what it says go
			const std::string why = file == "backing_dev" ?
						backing_dev_error(t, dir, w.error()) : "";
			(void)t.write(kSwapdevCtl + "/hot_remove", std::to_string(n));
			if (file == "algorithm_params" && w.error().code == E2BIG)
				return fail(E2BIG, fmt::format("{}: {} level {} with {} units: {}",
							       swapdev_name(n), c.codec, c.level,
							       c.unit, kZstd64kLevels));
			if (file == "backing_dev")
				return fail(w.error().code,
					    fmt::format("{}: writeback device {}: {}", swapdev_name(n),
							c.backing_dev, why));
			if (file == "algorithm_params" && w.error().code == ENOENT)
				return fail(ENOENT,
					    fmt::format("{}: the loaded zbatch has no compression "
							"levels (algorithm_params): load this "
							"version's module",
							swapdev_name(n)));
			return fail(w.error().code, fmt::format("{}: {} {}: {}", swapdev_name(n), file,
								value, w.error().message));
		}
	}
	return n;
}

Result<std::vector<SwapdevInfo>> swapdev_list(const SysfsTree &t)
{
	if (!t.exists(kSwapdevCtl))
		return skip(ENOENT, fmt::format("{} is missing: is zbatch loaded?", kSwapdevCtl));
	std::vector<SwapdevInfo> out;
	auto names = t.list(kSysBlockDir).value_or(std::vector<std::string>{});
	for (const auto &name : names) {
		if (name.rfind(kSwapdevPrefix, 0) != 0)
			continue;
		SwapdevInfo d;
		d.name = name;
		auto id = parse_number<int>(std::string_view(name).substr(kSwapdevPrefix.size()),
						  kSysBlockDir + "/" + name);
		if (!id)
			continue;	/* not one of ours: zbatchswapN only */
		d.id = *id;
		auto dir = swapdev_dir(d.id);
		auto rd = [&](const std::string &f) { return t.read(dir + "/" + f).value_or(""); };
		d.disksize = to_u64(rd("disksize"));
		d.codec = t.read_choice(dir + "/codec");
		d.unit = t.read_choice(dir + "/unit");
		// "algo=NAME level=N"; a module without it: the default
		std::istringstream ap(rd("algorithm_params"));
		std::string kv;
		while (ap >> kv)
			if (kv.rfind("level=", 0) == 0)
				d.level = parse_number<int>(kv.substr(6), "").value_or(0);
		d.mem_limit = to_u64(rd("mem_limit"));
		std::istringstream mm(rd("mm_stat"));
		uint64_t limit = 0, compacted = 0;
		mm >> d.orig_bytes >> d.compr_bytes >> d.used_bytes >> limit >> d.max_used_bytes >>
			d.same_pages >> compacted >> d.huge_pages;
		std::istringstream io(rd("io_stat"));
		io >> d.failed_reads >> d.failed_writes >> d.invalid_io >> d.notify_free;
		d.backing_dev = rd("backing_dev");
		while (!d.backing_dev.empty() && isspace(static_cast<unsigned char>(d.backing_dev.back())))
			d.backing_dev.pop_back();
		if (d.backing_dev == "none")
			d.backing_dev.clear();
		std::istringstream bd(rd("bd_stat"));
		bd >> d.bd_count >> d.bd_reads >> d.bd_writes;
		d.wb_limit_on = to_u64(rd("writeback_limit_enable")) != 0;
		d.wb_limit = to_u64(rd("writeback_limit"));
		std::istringstream us(rd("unit_stat"));
		std::string k;
		int64_t v;
		while (us >> k >> v)
			d.unit_stat[k] = v;
		std::istringstream bs(rd("batch_stat"));
		std::string line;
		while (std::getline(bs, line)) {
			if (line.empty() || line[0] == '#')
				continue;
			std::istringstream l(line);
			unsigned int n;
			uint64_t w, r;
			if (l >> n >> w >> r)
				d.batches[n] = {w, r};
		}
		d.swap_use = swaps_line(t, name);
		out.push_back(std::move(d));
	}
	return out;
}

Result<void> swapdev_destroy(const SysfsTree &t, int id)
{
	if (!t.exists(kSwapdevCtl))
		return skip(ENOENT, fmt::format("{} is missing: is zbatch loaded?", kSwapdevCtl));
	auto name = swapdev_name(id);
	if (auto h = have_device(t, id); !h)
		return std::unexpected(h.error());
	if (!swaps_line(t, name).empty())
		return fail(EBUSY, fmt::format("/dev/{} is in use as swap: run 'swapoff /dev/{}' "
					       "first (it brings the pages back into memory)",
					       name, name));
	if (auto w = t.write(kSwapdevCtl + "/hot_remove", std::to_string(id)); !w)
		return fail(w.error().code,
			    w.error().code == EBUSY ?
			    fmt::format("/dev/{} is open (mounted or in use): close it first", name) :
			    fmt::format("cannot destroy {}: {}", name, w.error().message));
	return {};
}

namespace {

// The device's writeback file @file, or why it cannot be written to.
Result<std::string> wb_file(const SysfsTree &t, int id, const std::string &file)
{
	if (auto h = have_device(t, id); !h)
		return std::unexpected(h.error());
	auto name = swapdev_name(id);
	auto path = swapdev_dir(id) + "/" + file;
	if (!t.exists(path))
		return fail(ENOENT, fmt::format("{}: the loaded zbatch has no writeback ({}): load "
						"this version's module", name, file));
	return path;
}

} // namespace

Result<void> swapdev_mark_idle(const SysfsTree &t, int id)
{
	auto path = wb_file(t, id, "idle");
	if (!path)
		return std::unexpected(path.error());
	if (auto w = t.write(*path, "all"); !w)
		return fail(w.error().code,
			    w.error().code == EINVAL ?
			    fmt::format("{} has no size yet (nothing stored)", swapdev_name(id)) :
			    fmt::format("{}: idle: {}", swapdev_name(id), w.error().message));
	return {};
}

Result<void> swapdev_writeback(const SysfsTree &t, int id, const std::string &mode)
{
	static const std::vector<std::string> modes = {"idle", "huge", "huge_idle"};
	const bool page = mode.rfind("page_index=", 0) == 0;
	if (!page && std::ranges::find(modes, mode) == modes.end())
		return fail(EINVAL, fmt::format("'{}': writeback idle, huge, huge_idle or "
						"page_index=N", mode));
	auto path = wb_file(t, id, "writeback");
	if (!path)
		return std::unexpected(path.error());
	auto name = swapdev_name(id);
	auto w = t.write(*path, mode);
	if (w)
		return {};
	switch (w.error().code) {
	case ENODEV:
		return fail(ENODEV, fmt::format("{} has no writeback device (zbatch dev create "
						"--writeback-device PATH)", name));
	case EAGAIN:
		return fail(EAGAIN, fmt::format("{}: another writeback is running; try again when "
						"it is done", name));
	case ENOSPC:
		return fail(ENOSPC, fmt::format("{}: the writeback device is full", name));
	case EIO:
		return fail(EIO, fmt::format("{}: writeback_limit reached, or the writeback device "
					     "failed writes or reads (the pages stay in memory; "
					     "bd_stat and unit_stat's writeback_failed say which)",
					     name));
	case EINTR:
		return fail(EINTR, fmt::format("{}: writeback interrupted (what was written back "
					       "stays there)", name));
	case EINVAL:
		return fail(EINVAL, page ? fmt::format("{}: '{}': no such page, or no size yet",
						       name, mode)
					 : fmt::format("{} has no size yet", name));
	default:
		return fail(w.error().code, fmt::format("{}: writeback {}: {}", name, mode,
							 w.error().message));
	}
}

Json swapdev_to_json(const SwapdevInfo &d)
{
	Json j = {{"id", d.id}, {"name", d.name}, {"disksize", d.disksize}, {"codec", d.codec},
		  {"level", d.level}, {"unit", d.unit}, {"mem_limit", d.mem_limit}, {"orig_data_size", d.orig_bytes},
		  {"compr_data_size", d.compr_bytes}, {"mem_used_total", d.used_bytes},
		  {"mem_used_max", d.max_used_bytes}, {"same_pages", d.same_pages},
		  {"huge_pages", d.huge_pages}, {"failed_reads", d.failed_reads},
		  {"failed_writes", d.failed_writes}, {"invalid_io", d.invalid_io},
		  {"notify_free", d.notify_free}, {"swap", !d.swap_use.empty()}};
	j["backing_dev"] = d.backing_dev.empty() ? Json(nullptr) : Json(d.backing_dev);
	j["bd_count"] = d.bd_count;
	j["bd_reads"] = d.bd_reads;
	j["bd_writes"] = d.bd_writes;
	j["writeback_limit"] = d.wb_limit_on ? Json(d.wb_limit) : Json(nullptr);
	for (const auto &[k, v] : d.unit_stat)
		j[k] = v;
	j["batches"] = Json::array();
	for (const auto &[n, wr] : d.batches)
		j["batches"].push_back({{"requests", n}, {"writes", wr.first}, {"reads", wr.second}});
	return j;
}

} // namespace zbatch
