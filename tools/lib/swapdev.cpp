// SPDX-License-Identifier: GPL-2.0
#include "zbatch/swapdev.hpp"
#include "zbatch/codec.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"
#include "zbatch/parse.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
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

// A module older than recompression has none of its files.
std::string no_recomp(int id, const std::string &file)
{
	return fmt::format("{}: the loaded zbatch has no recompression ({}): load this version's "
			   "module", swapdev_name(id), file);
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
	if (!c.recomp_codec.empty() &&
	    std::ranges::find(codec_names(), c.recomp_codec) == codec_names().end())
		return fail(EINVAL, fmt::format("--recomp-algorithm {}: one of {}", c.recomp_codec,
						codec_list()));
	// settings of a secondary codec there is not: a mistake, not a no-op
	const std::pair<const char *, bool> given[] = {
		{"--recomp-level", c.recomp_level != 0}, {"--recomp-budget", c.recomp_budget != -1},
		{"--recomp-interval", c.recomp_interval != -1}};
	for (const auto &[opt, set] : given)
		if (set && c.recomp_codec.empty())
			return fail(EINVAL, fmt::format("{} needs --recomp-algorithm (the secondary "
							"codec recompression uses)", opt));
	if (auto l = check_codec_level(c.recomp_codec, c.recomp_level, c.unit); !l)
		return fail(l.error().code, fmt::format("--recomp-level {}: {}", c.recomp_level,
							l.error().message));
	// the defaults the kernel writes as 0 (zbatch_codec_level_norm())
	auto norm = [](const std::string &codec, int l) {
		static const std::pair<const char *, int> dflt[] = {
			{"deflate", 6}, {"lz4", 1}, {"zstd", 3}};
		for (const auto &[name, d] : dflt)
			if (codec == name && l == d)
				return 0;
		return l;
	};
	if (c.recomp_codec == c.codec && norm(c.codec, c.level) == norm(c.codec, c.recomp_level))
		return fail(EINVAL, fmt::format("--recomp-algorithm {}: the device's own codec at the "
						"same level would shrink nothing (give --recomp-level "
						"another level, or another codec)", c.recomp_codec));
	if (c.recomp_budget != -1 && (c.recomp_budget < 0 || c.recomp_budget > 100))
		return fail(ERANGE, fmt::format("--recomp-budget {}: 0 to 100 (percent of one CPU; "
						"0: no background recompression)", c.recomp_budget));
	if (c.recomp_interval != -1 && (c.recomp_interval < 1 || c.recomp_interval > 86400))
		return fail(ERANGE, fmt::format("--recomp-interval {}: 1 to 86400 (seconds)",
						c.recomp_interval));
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
	// after unit too (which bounds its level), before disksize (which fixes it)
	if (!c.recomp_codec.empty())
		writes.emplace_back("recomp_algorithm",
				    fmt::format("algo={}{}", c.recomp_codec,
						c.recomp_level ? fmt::format(" level={}",
									     c.recomp_level) : ""));
	if (!c.backing_dev.empty())
		writes.emplace_back("backing_dev", c.backing_dev);
	writes.emplace_back("disksize", std::to_string(c.size));
	// the interval first: the thread the budget starts sleeps that long first
	if (c.recomp_interval != -1)
		writes.emplace_back("recomp_interval", std::to_string(c.recomp_interval));
	if (c.recomp_budget != -1)
		writes.emplace_back("recomp_budget", std::to_string(c.recomp_budget));
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
			if (file == "recomp_algorithm" && w.error().code == E2BIG)
				return fail(E2BIG, fmt::format("{}: recompression {} level {} with {} "
							       "units: {}", swapdev_name(n),
							       c.recomp_codec, c.recomp_level, c.unit,
							       kZstd64kLevels));
			if (file.starts_with("recomp_") && w.error().code == ENOENT)
				return fail(ENOENT, no_recomp(n, file));
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
		// "algo=NAME level=N", then "algo=NAME level=N priority=1" for the
		// secondary codec; a module without it: the default
		std::istringstream ap(rd("algorithm_params"));
		std::string apl;
		for (bool first = true; std::getline(ap, apl); first = false) {
			std::istringstream l(apl);
			std::string kv;
			std::optional<int> level;
			bool secondary = false;
			while (l >> kv) {
				if (kv.rfind("level=", 0) == 0)
					level = parse_number<int>(kv.substr(6), "").value_or(0);
				else if (kv == "priority=1")
					secondary = true;
			}
			if (level && secondary)
				d.recomp_level = *level;
			else if (level && first)
				d.level = *level;
		}
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
		// "#1: deflate lz4 [zstd] lzo"; "" when none is set
		d.recomp_codec = t.read_choice(dir + "/recomp_algorithm");
		d.recomp_budget = static_cast<unsigned int>(to_u64(rd("recomp_budget")));
		d.recomp_interval = static_cast<unsigned int>(to_u64(rd("recomp_interval")));
		std::istringstream rs(rd("recomp_stat"));
		rs >> d.recomp_pages >> d.recomp_tried >> d.recomp_done >> d.recomp_incomp >>
			d.recomp_saved >> d.recomp_cpu_ns;
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

Result<void> swapdev_mark_idle(const SysfsTree &t, int id, std::optional<std::uint64_t> age_s)
{
	if (age_s && *age_s > kIdleAgeMax)
		return fail(EINVAL, fmt::format("idle age {} s: at most {} s", *age_s, kIdleAgeMax));
	auto path = wb_file(t, id, "idle");
	if (!path)
		return std::unexpected(path.error());
	if (auto w = t.write(*path, age_s ? std::to_string(*age_s) : "all"); !w)
		return fail(w.error().code,
			    w.error().code != EINVAL ?
			    fmt::format("{}: idle: {}", swapdev_name(id), w.error().message) :
			    age_s ?
			    fmt::format("{}: idle {}: refused (no size yet, or a module without "
					"idle ages)", swapdev_name(id), *age_s) :
			    fmt::format("{} has no size yet (nothing stored)", swapdev_name(id)));
	return {};
}

Result<void> swapdev_writeback(const SysfsTree &t, int id, const std::string &mode)
{
	static const std::vector<std::string> modes = {"idle", "huge", "huge_idle",
						       "incompressible"};
	const bool page = mode.rfind("page_index=", 0) == 0;
	if (!page && std::ranges::find(modes, mode) == modes.end())
		return fail(EINVAL, fmt::format("'{}': writeback idle, huge, huge_idle, "
						"incompressible or page_index=N", mode));
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
	case EOPNOTSUPP:
		// a module older than recompression: no page is ever incompressible
		if (mode == "incompressible")
			return fail(EOPNOTSUPP, no_recomp(id, "writeback incompressible"));
		[[fallthrough]];
	default:
		return fail(w.error().code, fmt::format("{}: writeback {}: {}", name, mode,
							 w.error().message));
	}
}

Result<void> swapdev_recompress(const SysfsTree &t, int id, const RecompressArgs &a)
{
	static const std::vector<std::string> types = {"idle", "huge", "huge_idle"};
	if (!a.type.empty() && std::ranges::find(types, a.type) == types.end())
		return fail(EINVAL, fmt::format("--type {}: one of {} (or none: every page in "
						"memory)", a.type, fmt::join(types, ", ")));
	if (a.threshold >= 4096)
		return fail(EINVAL, fmt::format("--threshold {}: below 4096 (bytes a page)",
						a.threshold));
	if (auto h = have_device(t, id); !h)
		return std::unexpected(h.error());
	auto name = swapdev_name(id);
	auto path = swapdev_dir(id) + "/recompress";
	if (!t.exists(path))
		return fail(ENOENT, no_recomp(id, "recompress"));
	std::string args;
	if (!a.type.empty())
		args += " type=" + a.type;
	if (a.max_pages)
		args += fmt::format(" max_pages={}", a.max_pages);
	if (a.threshold)
		args += fmt::format(" threshold={}", a.threshold);
	// nothing: a line of its own (every page in memory)
	auto w = t.write(path, args.empty() ? "\n" : args.substr(1));
	if (w)
		return {};
	switch (w.error().code) {
	case ENODEV:
		return fail(ENODEV, fmt::format("{} has no secondary codec (zbatch dev create "
						"--recomp-algorithm CODEC)", name));
	case EAGAIN:
		return fail(EAGAIN, fmt::format("{}: another recompression is running; try again "
						"when it is done", name));
	case ENOMEM:
		return fail(ENOMEM, fmt::format("{}: recompression stopped, short of memory for "
						"the new objects (what was recompressed stays so)",
						name));
	case EINTR:
		return fail(EINTR, fmt::format("{}: recompression interrupted (what was "
					       "recompressed stays so)", name));
	case EINVAL:
		return fail(EINVAL, fmt::format("{} has no size yet", name));
	default:
		return fail(w.error().code,
			    fmt::format("{}: recompress{}: {}", name,
					args.empty() ? "" : " '" + args.substr(1) + "'",
					w.error().message));
	}
}

std::string codec_label(const std::string &codec, int level)
{
	return level ? fmt::format("{}:{}", codec, level) : codec;
}

std::string swapdev_recomp_summary(const SwapdevInfo &d)
{
	if (d.recomp_codec.empty())
		return "";
	auto reads = d.unit_stat.find("secondary_reads");
	return fmt::format("{}, {}: {} pages stored so now, {} reads decompressed with it; ever: "
			   "{} tried, {} recompressed, {} incompressible, {:.1f}M saved, {:.3f} s "
			   "of CPU",
			   codec_label(d.recomp_codec, d.recomp_level),
			   d.recomp_budget ? fmt::format("background {}% of a CPU every {} s",
							 d.recomp_budget, d.recomp_interval)
					   : std::string("no background"),
			   d.recomp_pages, reads == d.unit_stat.end() ? 0 : reads->second,
			   d.recomp_tried, d.recomp_done, d.recomp_incomp,
			   d.recomp_saved / 1048576.0, d.recomp_cpu_ns / 1e9);
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
	j["recomp_algorithm"] = d.recomp_codec.empty() ? Json(nullptr) : Json(d.recomp_codec);
	j["recomp_level"] = d.recomp_level;
	j["recomp_budget"] = d.recomp_budget;
	j["recomp_interval"] = d.recomp_interval;
	j["recomp_pages"] = d.recomp_pages;
	j["recomp_tried"] = d.recomp_tried;
	j["recomp_recompressed"] = d.recomp_done;
	j["recomp_incompressible"] = d.recomp_incomp;
	j["recomp_saved_bytes"] = d.recomp_saved;
	j["recomp_cpu_ns"] = d.recomp_cpu_ns;
	return j;
}

} // namespace zbatch
