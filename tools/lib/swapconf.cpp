// SPDX-License-Identifier: GPL-2.0
#include "zbatch/swapconf.hpp"
#include "zbatch/codec.hpp"
#include "zbatch/parse.hpp"
#include "zbatch/swapdev.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace zbatch {

namespace {

std::string trim(const std::string &s)
{
	auto b = s.find_first_not_of(" \t\r");
	if (b == std::string::npos)
		return "";
	return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// "25%" or a size in bytes ("4G"); a share must be 1..100.
Result<ConfSize> parse_size(const std::string &v, bool zero_ok)
{
	ConfSize s;
	if (!v.empty() && v.back() == '%') {
		auto p = parse_number<unsigned int>(std::string_view(v).substr(0, v.size() - 1), "");
		if (!p || *p < 1 || *p > 100)
			return fail(EINVAL, fmt::format("'{}': a share of the RAM is 1% to 100%", v));
		s.percent = *p;
		return s;
	}
	auto b = parse_bytes(v);
	if (!b)
		return fail(EINVAL, fmt::format("'{}': a size (4G, 512M) or a share of the RAM "
						"(25%)", v));
	if (!*b && !zero_ok)
		return fail(EINVAL, fmt::format("'{}': must not be 0", v));
	s.bytes = *b;
	return s;
}

const std::vector<std::string> keys = {"size",	     "codec",		"level",
				       "unit",	     "priority",	"mem-limit",
				       "discard",    "unit-adapt",	"writeback-device",
				       "recomp-algorithm", "recomp-level", "recomp-budget",
				       "recomp-interval"};

// Keys zram users set that zbatch does not offer yet: named, not ignored.
const std::map<std::string, std::string> not_yet = {
	{"backing-dev", "this key (writeback is set with writeback-device = PATH, as "
			"zram-generator's)"},
	{"recompress", "this key (recompression is set with recomp-algorithm = CODEC)"},
	{"recompression-algorithm", "this key (recompression is set with recomp-algorithm = "
				    "CODEC)"},
	{"algorithm-params", "codec parameters but the level (level = N)"},
	{"dict", "a zstd dictionary"},
	{"fs-type", "a file system on the device (mkfs it by hand)"},
	{"mount-point", "a file system on the device (mkfs it by hand)"},
};

} // namespace

Result<std::vector<SwapConfDevice>> parse_swap_conf(const std::string &file,
						     const std::string &text)
{
	std::vector<SwapConfDevice> devs;
	std::set<std::string> seen;	// keys of the current section
	// where each device's recompression keys are: checked once the
	// section's codec, unit and secondary codec are known
	std::vector<std::map<std::string, unsigned int>> recomp_lines;
	std::istringstream in(text);
	std::string raw;
	unsigned int n = 0;
	auto err = [&](const std::string &what) {
		return fail(EINVAL, fmt::format("{}:{}: {}", file, n, what));
	};
	while (std::getline(in, raw)) {
		n++;
		auto hash = raw.find('#');
		std::string line = trim(hash == std::string::npos ? raw : raw.substr(0, hash));
		if (line.empty())
			continue;
		if (line.front() == '[') {
			if (line.back() != ']')
				return err(fmt::format("'{}': a section is [NAME]", line));
			std::string name = trim(line.substr(1, line.size() - 2));
			if (name.empty() || name.size() > 32 ||
			    !std::ranges::all_of(name, [](char c) {
				    return isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
			    }))
				return err(fmt::format("[{}]: a device's name is 1 to 32 letters, digits, "
						       "'-' or '_'", name));
			for (const auto &d : devs)
				if (d.name == name)
					return err(fmt::format("[{}]: named twice (also line {})", name,
							       d.line));
			devs.push_back({});
			devs.back().name = name;
			devs.back().line = n;
			recomp_lines.emplace_back();
			seen.clear();
			continue;
		}
		auto eq = line.find('=');
		if (eq == std::string::npos)
			return err(fmt::format("'{}': expected KEY = VALUE", line));
		std::string key = trim(line.substr(0, eq)), v = trim(line.substr(eq + 1));
		if (devs.empty())
			return err(fmt::format("key '{}' before any [device] section", key));
		if (auto ny = not_yet.find(key); ny != not_yet.end())
			return err(fmt::format("key '{}': {} is not in this zbatch yet "
					       "(Documentation/admin-guide.md, replacing zram)",
					       key, ny->second));
		if (std::ranges::find(keys, key) == keys.end())
			return err(fmt::format("key '{}': unknown (one of {})", key,
					       fmt::join(keys, ", ")));
		if (!seen.insert(key).second)
			return err(fmt::format("key '{}': set twice in [{}]", key, devs.back().name));
		if (v.empty())
			return err(fmt::format("key '{}': no value", key));
		auto &d = devs.back();
		if (key == "size" || key == "mem-limit") {
			auto s = parse_size(v, key == "mem-limit");
			if (!s)
				return err(fmt::format("key '{}': {}", key, s.error().message));
			(key == "size" ? d.size : d.mem_limit) = *s;
			if (key == "size")
				d.size_line = n;
		} else if (key == "codec") {
			if (std::ranges::find(codec_names(), v) == codec_names().end())
				return err(fmt::format("key 'codec': '{}' is not one of {}", v,
						       codec_list()));
			d.codec = v;
		} else if (key == "unit") {
			static const std::vector<std::string> units = {ZBATCH_SWAPDEV_UNIT_NAMES};
			if (std::ranges::find(units, v) == units.end())
				return err(fmt::format("key 'unit': '{}' is not one of {}", v,
						       fmt::join(units, ", ")));
			d.unit = v;
		} else if (key == "level") {
			auto l = parse_number<int>(v, "");
			if (!l)
				return err(fmt::format("key 'level': '{}' is not a number", v));
			d.level = *l;
			d.level_line = n;
		} else if (key == "priority") {
			auto p = parse_number<int>(v, "");
			if (!p || *p < -1 || *p > 32767)
				return err(fmt::format("key 'priority': '{}' is not -1 (the kernel's "
						       "default) or 0 to 32767", v));
			d.priority = *p;
		} else if (key == "writeback-device") {
			if (v.front() != '/')
				return err(fmt::format("key 'writeback-device': '{}' is not a path "
						       "(/dev/...)", v));
			d.writeback_device = v;
		} else if (key == "recomp-algorithm") {
			if (std::ranges::find(codec_names(), v) == codec_names().end())
				return err(fmt::format("key 'recomp-algorithm': '{}' is not one of {}",
						       v, codec_list()));
			d.recomp_codec = v;
		} else if (key == "recomp-level" || key == "recomp-budget" ||
			   key == "recomp-interval") {
			auto x = parse_number<int>(v, "");
			if (!x)
				return err(fmt::format("key '{}': '{}' is not a number", key, v));
			if (key == "recomp-budget" && (*x < 0 || *x > 100))
				return err(fmt::format("key 'recomp-budget': '{}' is not 0 to 100 "
						       "(percent of one CPU; 0: no background "
						       "recompression)", v));
			if (key == "recomp-interval" && (*x < 1 || *x > 86400))
				return err(fmt::format("key 'recomp-interval': '{}' is not 1 to 86400 "
						       "(seconds)", v));
			(key == "recomp-level" ? d.recomp_level : key == "recomp-budget" ?
			 d.recomp_budget : d.recomp_interval) = *x;
			recomp_lines.back()[key] = n;
		} else if (key == "discard" || key == "unit-adapt") {
			if (v != "yes" && v != "no")
				return err(fmt::format("key '{}': '{}' is not yes or no", key, v));
			(key == "discard" ? d.discard : d.unit_adapt) = v == "yes";
		}
	}
	for (size_t i = 0; i < devs.size(); i++) {
		const auto &d = devs[i];
		if (!d.size.bytes && !d.size.percent)
			return fail(EINVAL, fmt::format("{}:{}: [{}] has no size (size = 25% or "
							"size = 4G)", file, d.line, d.name));
		// once the section's codec is known, wherever it was set
		if (auto l = check_codec_level(d.codec, d.level, d.unit); !l)
			return fail(EINVAL, fmt::format("{}:{}: key 'level': {}", file, d.level_line,
							l.error().message));
		for (const auto &[key, line] : recomp_lines[i])
			if (d.recomp_codec.empty())
				return fail(EINVAL, fmt::format("{}:{}: key '{}': needs "
								"recomp-algorithm (the secondary "
								"codec recompression uses)", file,
								line, key));
		if (auto l = check_codec_level(d.recomp_codec, d.recomp_level, d.unit); !l)
			return fail(EINVAL, fmt::format("{}:{}: key 'recomp-level': {}", file,
							recomp_lines[i]["recomp-level"],
							l.error().message));
	}
	return devs;
}

uint64_t conf_bytes(const ConfSize &s, uint64_t ram)
{
	uint64_t b = s.bytes;

	if (s.percent)
		b = static_cast<uint64_t>(static_cast<unsigned __int128>(ram) * s.percent / 100);
	return b & ~uint64_t{4095};
}

Result<uint64_t> ram_bytes(const SysfsTree &t)
{
	auto m = t.read(kProcMeminfo);
	if (!m)
		return std::unexpected(m.error());
	std::istringstream in(*m);
	std::string k, unit;
	uint64_t v;
	while (in >> k >> v) {
		std::getline(in, unit);
		if (k == "MemTotal:")
			return v * 1024;
	}
	return fail(EINVAL, fmt::format("{}: no MemTotal line", kProcMeminfo));
}

} // namespace zbatch
