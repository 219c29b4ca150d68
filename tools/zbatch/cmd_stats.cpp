// SPDX-License-Identifier: GPL-2.0
// zbatch stats: debugfs counters, batch histogram, latency percentiles.
#include <chrono>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/atomic_file.hpp"
#include "zbatch/metrics.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/stats.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch::cli {

namespace {

void print_table(Console &con, const Stats &s)
{
	std::vector<std::string> cols{"global"};
	for (const auto &[k, v] : s.scopes)
		cols.push_back(k);
	con.print("{:<22}", "counter");
	for (const auto &c : cols)
		con.print(" {:>14}", c);
	con.print("\n");
	for (const auto &[name, v] : s.global) {
		con.print("{:<22} {:>14}", name, v);
		for (const auto &[k, c] : s.scopes)
			con.print(" {:>14}", c.count(name) ? c.at(name) : 0);
		con.print("\n");
	}
	if (!s.batch_hist.empty()) {
		con.print("\nbatch size histogram:\n");
		for (const auto &[n, c] : s.batch_hist)
			con.print("  {:>3} {:>12}\n", n, c);
	}
	if (!s.latency.empty()) {
		con.print("\nlatency (sampled requests, ns):\n  {:<11} {:>10} {:>12} {:>12} {:>12}\n",
			   "op", "samples", "p50", "p95", "p99");
		for (const auto &l : s.latency)
			con.print("  {:<11} {:>10} {:>12} {:>12} {:>12}\n", l.op, l.samples, l.p50,
				   l.p95, l.p99);
	}
}

// The swap devices' own statistics (zbatch dev list has every column).
void print_swapdevs(Console &con, const SysfsTree &tree)
{
	auto devs = swapdev_list(tree);
	if (!devs || devs->empty())
		return;
	con.print("\nswap devices (zbatch dev list for more):\n  {:<12} {:>12} {:>12} {:>12} "
		   "{:>8} {:>8} {:>14}\n", "device", "stored", "compressed", "used", "failed",
		   "partial", "batches w/r");
	for (const auto &d : *devs) {
		uint64_t w = 0, r = 0;
		for (const auto &[n, wr] : d.batches) {
			w += wr.first;
			r += wr.second;
		}
		auto it = d.unit_stat.find("partial_reads");
		con.print("  {:<12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>14}\n", d.name, d.orig_bytes,
			   d.compr_bytes, d.used_bytes, d.failed_reads + d.failed_writes,
			   it == d.unit_stat.end() ? 0 : it->second, fmt::format("{}/{}", w, r));
	}
	for (const auto &d : *devs)
		if (!d.recomp_codec.empty())
			con.print("  {} recompression with {}\n", d.name, swapdev_recomp_summary(d));
}

// One exposition, or one each --watch seconds: to stdout, or replacing
// --output whole each time. Whatever cannot be read, the file is written
// (zbatch_module_loaded, zbatch_stats_readable say what), so that a
// collector's file never goes stale; a read error is still the command's.
Result<int> run_prometheus(Context &ctx, const StatsOptions &o)
{
	for (unsigned int n = 1;; n++) {
		const bool loaded = ctx.tree.exists("/sys/module/zbatch");
		auto s = read_stats(ctx.tree);
		if (!s)
			ctx.con.warning("{}: zbatch_stats_readable 0\n", s.error().message);
		auto devs = swapdev_list(ctx.tree);
		auto text = prometheus_text(loaded, s ? &*s : nullptr,
					    devs ? *devs : std::vector<SwapdevInfo>{});
		if (o.output.empty()) {
			ctx.con.print("{}", text);
		} else if (auto w = write_file_atomic(o.output, text); !w) {
			return std::unexpected(w.error());
		}
		if (!s && s.error().exit != kExitSkipped)
			return std::unexpected(s.error());
		if (!o.watch || (o.count && n >= o.count))
			return kExitOk;
		ctx.con.flush();
		ctx.sleep(std::chrono::seconds(o.watch));
	}
}

} // namespace

Result<int> run_stats(Context &ctx, const StatsOptions &o)
{
	auto &con = ctx.con;
	if (o.reset) {
		const std::string reset = kDebugDir + "/reset";
		if (!ctx.tree.exists(reset))
			return skip(ENOENT, fmt::format("{} is missing: module not loaded or not root",
							reset));
		if (auto r = ctx.tree.write(reset, "1"); !r)
			return std::unexpected(r.error());
		con.note("statistics reset\n");
		return kExitOk;
	}
	if (o.prometheus)
		return run_prometheus(ctx, o);
	for (unsigned int n = 1;; n++) {
		auto s = read_stats(ctx.tree);
		if (!s)
			return std::unexpected(s.error());
		if (ctx.json) {
			con.print("{}", stats_to_json(*s));
		} else {
			print_table(con, *s);
			print_swapdevs(con, ctx.tree);
		}
		if (!o.watch || (o.count && n >= o.count))
			return kExitOk;
		con.flush();
		ctx.sleep(std::chrono::seconds(o.watch));
		if (!ctx.json)
			con.print("\n");
	}
}

void add_stats(CLI::App &app, Action &action)
{
	auto o = std::make_shared<StatsOptions>();
	auto *sub = app.add_subcommand("stats", "Counters, batch histogram, latency percentiles");
	sub->add_option("--watch", o->watch, "Repeat every SECS seconds until interrupted")
		->check(CLI::Range(1, 3600));
	sub->add_option("--count", o->count, "With --watch: stop after N reports")
		->check(CLI::Range(1, 1000000));
	auto *reset = sub->add_flag("--reset", o->reset, "Zero every counter and histogram");
	auto *prom = sub->add_flag("--prometheus", o->prometheus,
				   "Prometheus text exposition format (node_exporter's textfile "
				   "collector)");
	sub->add_option("--output", o->output,
			"With --prometheus: replace FILE whole (written beside it, then renamed)")
		->needs(prom);
	prom->excludes(reset);
	sub->footer(fmt::format("Reads {} (root). Counters: Documentation/ABI/zbatch.\n", kDebugDir) +
		    "With --json and --watch: one JSON document per report (jq reads the stream).\n"
		    "Examples:\n  zbatch stats\n  zbatch --json stats\n  zbatch stats --watch 2\n"
		    "  zbatch stats --watch 1 --count 10\n  zbatch stats --reset\n"
		    "  zbatch stats --prometheus --output "
		    "/var/lib/prometheus/node-exporter/zbatch.prom\n"
		    "Metric names and help: Documentation/admin-guide.md (Fleet metrics).");
	sub->callback([&action, o] { action = [o](Context &ctx) { return run_stats(ctx, *o); }; });
}

} // namespace zbatch::cli
