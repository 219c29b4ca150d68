// SPDX-License-Identifier: GPL-2.0
// zbatch stats: debugfs counters, batch histogram, latency percentiles.
#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/stats.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch::cli {

namespace {

void print_table(const Stats &s)
{
	std::vector<std::string> cols{"global"};
	for (const auto &[k, v] : s.scopes)
		cols.push_back(k);
	fmt::print("{:<22}", "counter");
	for (const auto &c : cols)
		fmt::print(" {:>14}", c);
	fmt::print("\n");
	for (const auto &[name, v] : s.global) {
		fmt::print("{:<22} {:>14}", name, v);
		for (const auto &[k, c] : s.scopes)
			fmt::print(" {:>14}", c.count(name) ? c.at(name) : 0);
		fmt::print("\n");
	}
	if (!s.batch_hist.empty()) {
		fmt::print("\nbatch size histogram:\n");
		for (const auto &[n, c] : s.batch_hist)
			fmt::print("  {:>3} {:>12}\n", n, c);
	}
	if (!s.latency.empty()) {
		fmt::print("\nlatency (sampled requests, ns):\n  {:<11} {:>10} {:>12} {:>12} {:>12}\n",
			   "op", "samples", "p50", "p95", "p99");
		for (const auto &l : s.latency)
			fmt::print("  {:<11} {:>10} {:>12} {:>12} {:>12}\n", l.op, l.samples, l.p50,
				   l.p95, l.p99);
	}
}

// The swap devices' own statistics (zbatch dev list has every column).
void print_swapdevs(const SysfsTree &tree)
{
	auto devs = swapdev_list(tree);
	if (!devs || devs->empty())
		return;
	fmt::print("\nswap devices (zbatch dev list for more):\n  {:<12} {:>12} {:>12} {:>12} "
		   "{:>8} {:>8} {:>14}\n", "device", "stored", "compressed", "used", "failed",
		   "partial", "batches w/r");
	for (const auto &d : *devs) {
		uint64_t w = 0, r = 0;
		for (const auto &[n, wr] : d.batches) {
			w += wr.first;
			r += wr.second;
		}
		auto it = d.unit_stat.find("partial_reads");
		fmt::print("  {:<12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>14}\n", d.name, d.orig_bytes,
			   d.compr_bytes, d.used_bytes, d.failed_reads + d.failed_writes,
			   it == d.unit_stat.end() ? 0 : it->second, fmt::format("{}/{}", w, r));
	}
}

Result<int> run(const GlobalOptions &g, unsigned int watch, bool reset)
{
	SysfsTree tree(g.root);
	if (reset) {
		if (!tree.exists(std::string(kDebugDir) + "/reset"))
			return skip(ENOENT, "debugfs zbatch/reset missing: module not loaded or not root");
		if (auto r = tree.write(std::string(kDebugDir) + "/reset", "1"); !r)
			return std::unexpected(r.error());
		fmt::print("statistics reset\n");
		return kExitOk;
	}
	for (;;) {
		auto s = read_stats(tree);
		if (!s)
			return std::unexpected(s.error());
		if (g.json) {
			fmt::print("{}", stats_to_json(*s));
		} else {
			print_table(*s);
			print_swapdevs(tree);
		}
		if (!watch)
			return kExitOk;
		std::fflush(stdout);
		std::this_thread::sleep_for(std::chrono::seconds(watch));
		if (!g.json)
			fmt::print("\n");
	}
}

} // namespace

void add_stats(CLI::App &app, const GlobalOptions &g, Action &action)
{
	struct Opts {
		unsigned int watch = 0;
		bool reset = false;
	};
	auto o = std::make_shared<Opts>();
	auto *sub = app.add_subcommand("stats", "Counters, batch histogram, latency percentiles");
	sub->add_option("--watch", o->watch, "Repeat every SECS seconds until interrupted")
		->check(CLI::Range(1, 3600));
	sub->add_flag("--reset", o->reset, "Zero every counter and histogram");
	sub->footer("Reads /sys/kernel/debug/zbatch (root). Counters: Documentation/ABI/zbatch.\n"
		    "Examples:\n  zbatch stats\n  zbatch --json stats\n  zbatch stats --watch 2\n"
		    "  zbatch stats --reset");
	sub->callback([&action, &g, o] { action = [&g, o] { return run(g, o->watch, o->reset); }; });
}

} // namespace zbatch::cli
