// SPDX-License-Identifier: GPL-2.0
// zbatch bench: batches against one request at a time, side by side.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/bench.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch::cli {

namespace {

struct BenchOptions {
	std::vector<std::string> codecs{"deflate", "lz4", "zstd", "lzo"};
	std::vector<unsigned int> batches{16};
	bool sweep = false;
	std::string pattern = "mixed";
	std::string file;
	size_t pages = 512;
	unsigned int rounds = 5;
	bool quick = false;
	std::string mode;
	bool csv = false;
};

void print_rows(const std::vector<BenchRow> &rows, const GlobalOptions &g, bool csv)
{
	if (g.json) {
		fmt::print("[");
		for (size_t i = 0; i < rows.size(); i++) {
			const auto &r = rows[i];
			fmt::print("{}{{\"codec\": \"{}\", \"batch\": {}, \"op\": \"{}\", "
				   "\"batched_mbps\": {{\"median\": {:.2f}, \"min\": {:.2f}, \"max\": {:.2f}}}, "
				   "\"single_mbps\": {{\"median\": {:.2f}, \"min\": {:.2f}, \"max\": {:.2f}}}, "
				   "\"speedup\": {:.3f}, \"ratio\": {:.4f}, \"incompressible\": {}}}",
				   i ? ", " : "", r.codec, r.batch, r.op, r.batched_mbps.median,
				   r.batched_mbps.min, r.batched_mbps.max, r.single_mbps.median,
				   r.single_mbps.min, r.single_mbps.max, r.speedup, r.ratio,
				   r.incompressible);
		}
		fmt::print("]\n");
		return;
	}
	if (csv) {
		fmt::print("codec,batch,op,batched_mbps_median,batched_mbps_min,batched_mbps_max,"
			   "single_mbps_median,single_mbps_min,single_mbps_max,speedup,ratio\n");
		for (const auto &r : rows)
			fmt::print("{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:.4f}\n",
				   r.codec, r.batch, r.op, r.batched_mbps.median, r.batched_mbps.min,
				   r.batched_mbps.max, r.single_mbps.median, r.single_mbps.min,
				   r.single_mbps.max, r.speedup, r.ratio);
		return;
	}
	fmt::print("{:<8} {:>5} {:<10} {:>24} {:>24} {:>8} {:>7}\n", "codec", "batch", "op",
		   "batched MB/s med [min-max]", "single MB/s med [min-max]", "speedup", "ratio");
	for (const auto &r : rows) {
		auto cell = [](const Spread &s) {
			return fmt::format("{:.1f} [{:.1f}-{:.1f}]", s.median, s.min, s.max);
		};
		fmt::print("{:<8} {:>5} {:<10} {:>24} {:>24} {:>7.2f}x {:>7}\n", r.codec, r.batch, r.op,
			   cell(r.batched_mbps), cell(r.single_mbps), r.speedup,
			   r.op == "compress" ? fmt::format("{:.3f}", r.ratio) : std::string("-"));
	}
}

Result<int> run(const GlobalOptions &g, BenchOptions o)
{
	if (o.quick) {
		o.pages = std::min<size_t>(o.pages, 128);
		o.rounds = std::min(o.rounds, 3u);
	}
	if (o.sweep)
		o.batches = {1, 2, 4, 8, 16, 32};
	BenchConfig cfg;
	cfg.pages = o.pages;
	cfg.rounds = o.rounds;
	cfg.batch_sizes = o.batches;
	for (const auto &c : o.codecs) {
		auto id = codec_from_name(c);
		if (!id || *id == ZBATCH_CODEC_DEFAULT)
			return fail(EINVAL, fmt::format("--codec: unknown codec '{}' "
							"(deflate, lz4, zstd, lzo)", c));
		cfg.codecs.push_back(*id);
	}
	for (auto b : o.batches)
		if (b < 1 || b > ZBATCH_MAX_BATCH)
			return fail(EINVAL, fmt::format("--batch {}: must be 1..{}", b, ZBATCH_MAX_BATCH));
	if (!o.file.empty()) {
		auto d = load_corpus(o.file, cfg.pages * cfg.page_size);
		if (!d)
			return std::unexpected(d.error());
		cfg.data = std::move(*d);
	} else {
		auto p = pattern_from_name(o.pattern);
		if (!p)
			return std::unexpected(p.error());
		cfg.data = generate(*p, cfg.pages * cfg.page_size, 42);
	}
	SysfsTree tree(g.root);
	std::string old_mode;
	if (!o.mode.empty()) {
		auto cur = tree.read("/sys/kernel/zbatch/sync_mode");
		if (!cur)
			return std::unexpected(cur.error());
		auto l = cur->find('['), r = cur->find(']');
		old_mode = l != std::string::npos && r != std::string::npos ?
			cur->substr(l + 1, r - l - 1) : std::string();
		if (auto w = tree.write("/sys/kernel/zbatch/sync_mode", o.mode); !w)
			return fail(EINVAL, fmt::format("--mode {}: {}", o.mode, w.error().message));
	}
	auto dev = Device::open();
	if (!dev)
		return std::unexpected(dev.error());
	auto rows = run_bench(*dev, cfg);
	if (!old_mode.empty())
		(void)tree.write("/sys/kernel/zbatch/sync_mode", old_mode);
	if (!rows)
		return std::unexpected(rows.error());
	if (!g.json && !o.csv)
		fmt::print("# {} pages of {} bytes ({}), {} rounds; MB/s of input over kernel time\n",
			   cfg.pages, cfg.page_size, o.file.empty() ? o.pattern : o.file, cfg.rounds);
	print_rows(*rows, g, o.csv);
	return kExitOk;
}

} // namespace

void add_bench(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto o = std::make_shared<BenchOptions>();
	auto *sub = app.add_subcommand("bench", "Batched vs one-at-a-time throughput through /dev/zbatch");
	sub->add_option("--codec", o->codecs, "Codecs to run (default: all)")->delimiter(',');
	sub->add_option("--batch", o->batches, "Batch sizes, 1..64 (default 16)")->delimiter(',');
	sub->add_flag("--sweep", o->sweep, "Batch sizes 1,2,4,8,16,32");
	sub->add_option("--pattern", o->pattern, "text, zeros, random or mixed (default mixed)");
	sub->add_option("--file", o->file, "Corpus file instead of a pattern (repeated to fill)");
	sub->add_option("--pages", o->pages, "4 KiB pages per pass (default 512)")
		->check(CLI::Range(1, 65536));
	sub->add_option("--rounds", o->rounds, "Rounds; medians and spread over them (default 5)")
		->check(CLI::Range(1, 1000));
	sub->add_flag("--quick", o->quick, "At most 128 pages and 3 rounds");
	sub->add_option("--mode", o->mode, "Set sync_mode (sync, async, async_irq) for the run");
	sub->add_flag("--csv", o->csv, "CSV output");
	sub->footer("Each row runs the same pages in batches and one request per submit\n"
		    "(the baseline), alternating order per round. Speedup = median batched /\n"
		    "median single. Absolute MB/s under emulation mean little; ratios do.\n"
		    "Examples:\n  zbatch bench --codec lz4,zstd --batch 16\n"
		    "  zbatch bench --sweep --file /usr/lib/x86_64-linux-gnu/libc.so.6 --csv");
	sub->callback([&action, &g, o] { action = [&g, o] { return run(g, *o); }; });
}

} // namespace zbatch::cli
