// SPDX-License-Identifier: GPL-2.0
#include "zbatch/stats.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"
#include "zbatch/parse.hpp"

#include <cerrno>
#include <sstream>

#include <fmt/core.h>

namespace zbatch {

static Counters parse_counters(const std::string &text)
{
	Counters c;
	std::istringstream in(text);
	std::string k;
	uint64_t v;
	while (in >> k >> v)
		c[k] = v;
	return c;
}

Result<Stats> read_stats(const SysfsTree &tree)
{
	const std::string dir = kDebugDir;
	if (!tree.exists(dir))
		return skip(ENOENT, fmt::format("{} is missing: module not loaded, debugfs not "
						"mounted, or not root", tree.resolve(dir).string()));
	Stats s;
	auto g = tree.read(dir + "/stats");
	if (!g)
		return std::unexpected(g.error());
	s.global = parse_counters(*g);
	auto devs = tree.list(dir);
	if (!devs)
		return std::unexpected(devs.error());
	for (const auto &d : *devs) {
		if (d.rfind("dev", 0) != 0)
			continue;
		if (auto ds = tree.read(dir + "/" + d + "/stats"))
			s.scopes[d] = parse_counters(*ds);
		auto wqs = tree.list(dir + "/" + d);
		for (const auto &w : wqs.value_or(std::vector<std::string>{})) {
			if (w.rfind("wq", 0) != 0)
				continue;
			if (auto ws = tree.read(dir + "/" + d + "/" + w + "/stats"))
				s.scopes[d + "/" + w] = parse_counters(*ws);
		}
	}
	if (auto h = tree.read(dir + "/batch_hist")) {
		std::istringstream in(*h);
		std::string line;
		while (std::getline(in, line)) {
			unsigned int n;
			unsigned long long c;
			if (line.empty() || line[0] == '#' || sscanf(line.c_str(), "%u %llu", &n, &c) != 2)
				continue;
			if (c)
				s.batch_hist.emplace_back(n, c);
		}
	}
	if (auto l = tree.read(dir + "/latency")) {
		std::istringstream in(*l);
		std::string line;
		while (std::getline(in, line)) {
			if (line.empty() || line[0] == '#')
				continue;
			std::istringstream ls(line);
			Latency lat;
			if (ls >> lat.op >> lat.samples >> lat.p50 >> lat.p95 >> lat.p99)
				s.latency.push_back(lat);
		}
	}
	if (auto e = tree.read(dir + "/engines")) {
		std::istringstream in(*e);
		std::string line;
		while (std::getline(in, line)) {
			unsigned long long ns;
			if (sscanf(line.c_str(), "total - - - - %llu", &ns) == 1) {
				s.engine_cpu_known = true;
				s.engine_cpu_ns = ns;
			}
		}
	}
	return s;
}

static uint64_t errors(const Counters &c)
{
	uint64_t n = 0;
	for (const auto &[k, v] : c)
		if (k.rfind("err_", 0) == 0)
			n += v;
	return n;
}

std::vector<Check> validate(const Stats &s, const SysfsTree &tree)
{
	std::vector<Check> out;
	auto balance = [&](const std::string &scope, const Counters &c) {
		uint64_t calls = c.count("compress_calls") ? c.at("compress_calls") : 0;
		calls += c.count("decompress_calls") ? c.at("decompress_calls") : 0;
		uint64_t done = c.count("completions") ? c.at("completions") : 0;
		uint64_t err = errors(c);
		out.push_back({fmt::format("{}: calls = completions + errors", scope),
			       calls == done + err,
			       fmt::format("{} = {} + {}", calls, done, err)});
	};
	balance("global", s.global);
	for (const auto &[scope, c] : s.scopes)
		balance(scope, c);
	auto get = [&](const char *k) { return s.global.count(k) ? s.global.at(k) : 0; };
	out.push_back({"no descriptor timeouts", get("timeouts") == 0,
		       fmt::format("timeouts {}", get("timeouts"))});
	out.push_back({"no verify mismatches", get("err_verify") == 0,
		       fmt::format("err_verify {}", get("err_verify"))});
	auto comp = tree.read(kZswapParamsDir + "/compressor");
	auto enabled = tree.read(kZswapParamsDir + "/enabled");
	auto stored = tree.read(kZswapDebugDir + "/stored_pages");
	auto sp_num = stored ? parse_number<uint64_t>(*stored, kZswapDebugDir + "/stored_pages")
			     : Result<uint64_t>(0);
	if (stored && !sp_num)
		out.push_back({"zswap's stored_pages is readable", false, sp_num.error().message});
	if (comp && comp->ends_with("-zbatch") && enabled && *enabled == "Y" && stored && sp_num) {
		uint64_t sp = *sp_num;
		// every stored page was compressed once; a bound, not equality:
		// pages may predate the compressor, counters may have been reset
		out.push_back({fmt::format("zswap ({}) holds no more pages than zbatch compressed", *comp),
			       sp <= get("compress_calls"),
			       fmt::format("stored_pages {}, compress_calls {} (after a stats reset "
					   "this may fail: rerun after a workload)", sp,
					   get("compress_calls"))});
	}
	return out;
}

std::string stats_to_json(const Stats &s)
{
	Json j;
	j["global"] = Json::object();
	for (const auto &[k, v] : s.global)
		j["global"][k] = v;
	j["scopes"] = Json::object();
	for (const auto &[scope, c] : s.scopes) {
		j["scopes"][scope] = Json::object();
		for (const auto &[k, v] : c)
			j["scopes"][scope][k] = v;
	}
	j["batch_hist"] = Json::object();
	for (const auto &[n, c] : s.batch_hist)
		j["batch_hist"][std::to_string(n)] = c;
	j["latency"] = Json::object();
	for (const auto &l : s.latency)
		j["latency"][l.op] = {{"samples", l.samples}, {"p50_ns", l.p50}, {"p95_ns", l.p95},
				      {"p99_ns", l.p99}};
	return json_text(j);
}

} // namespace zbatch
