// SPDX-License-Identifier: GPL-2.0
// zbatch bench: batches against one request at a time, side by side.
#include <algorithm>
#include <cstdio>
#include <map>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "zbatch/json.hpp"
#include "zbatch/bench.hpp"
#include "zbatch/config.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/scope.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch::cli {

namespace {

struct ModeRows {
	std::string mode;	// "" when not set by --mode
	std::vector<BenchRow> rows;
};

// A PNG chart of speedup against batch size, one line per codec, op and
// mode, through gnuplot (Debian's gnuplot-nox).
Result<void> plot(const std::vector<ModeRows> &all, const std::string &file)
{
	std::string data, cmds;
	std::vector<std::string> series;
	for (const auto &mr : all) {
		std::map<std::string, std::vector<const BenchRow *>> by;
		for (const auto &r : mr.rows)
			by[r.codec + " " + r.op + (mr.mode.empty() ? "" : " " + mr.mode)].push_back(&r);
		for (const auto &[name, rows] : by) {
			series.push_back(name);
			for (const auto *r : rows)
				data += fmt::format("{} {:.4f}\n", r->batch, r->speedup);
			data += "\n\n";
		}
	}
	if (series.empty())
		return fail(EINVAL, "--plot: nothing to plot");
	std::string script = fmt::format(
		"set terminal png size 1000,600\nset output '{}'\n"
		"set title 'zbatch: batched vs one request at a time (same codec)'\n"
		"set xlabel 'batch size'\nset ylabel 'speedup (median throughput ratio)'\n"
		"set logscale x 2\nset key outside right\nset grid\n$d << EOD\n{}EOD\nplot ",
		file, data);
	for (size_t i = 0; i < series.size(); i++)
		script += fmt::format("{}$d index {} with linespoints title '{}'", i ? ", " : "", i,
				      series[i]);
	script += "\n";
	FILE *p = popen("gnuplot", "w");
	if (!p)
		return fail(errno, "--plot: cannot run gnuplot (install gnuplot-nox)");
	fwrite(script.data(), 1, script.size(), p);
	int st = pclose(p);
	if (st != 0)
		return fail(EIO, fmt::format("--plot: gnuplot failed (status {}); is gnuplot-nox "
					     "installed?", st));
	return {};
}

void print_rows(Console &con, const std::vector<BenchRow> &rows, bool json, bool csv)
{
	if (json) {
		auto stat = [](const auto &m) {
			return Json{{"median", m.median}, {"min", m.min}, {"max", m.max}};
		};
		Json a = Json::array();
		for (const auto &r : rows)
			a.push_back({{"codec", r.codec}, {"batch", r.batch}, {"op", r.op},
				     {"batched_mbps", stat(r.batched_mbps)},
				     {"single_mbps", stat(r.single_mbps)}, {"speedup", r.speedup},
				     {"ratio", r.ratio}, {"incompressible", r.incompressible},
				     {"batched_wall_mbps", r.batched_wall_mbps.median}});
		con.print("{}", json_text(a));
		return;
	}
	if (csv) {
		con.print("codec,batch,op,batched_mbps_median,batched_mbps_min,batched_mbps_max,"
			   "single_mbps_median,single_mbps_min,single_mbps_max,speedup,ratio,"
			   "batched_wall_mbps_median\n");
		for (const auto &r : rows)
			con.print("{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.3f},{:.4f},{:.2f}\n",
				   r.codec, r.batch, r.op, r.batched_mbps.median, r.batched_mbps.min,
				   r.batched_mbps.max, r.single_mbps.median, r.single_mbps.min,
				   r.single_mbps.max, r.speedup, r.ratio, r.batched_wall_mbps.median);
		return;
	}
	con.print("{:<8} {:>5} {:<10} {:>24} {:>24} {:>8} {:>7}\n", "codec", "batch", "op",
		   "batched MB/s med [min-max]", "single MB/s med [min-max]", "speedup", "ratio");
	for (const auto &r : rows) {
		auto cell = [](const Spread &s) {
			return fmt::format("{:.1f} [{:.1f}-{:.1f}]", s.median, s.min, s.max);
		};
		con.print("{:<8} {:>5} {:<10} {:>24} {:>24} {:>7.2f}x {:>7}\n", r.codec, r.batch, r.op,
			   cell(r.batched_mbps), cell(r.single_mbps), r.speedup,
			   r.op == "compress" ? fmt::format("{:.3f}", r.ratio) : std::string("-"));
	}
}

} // namespace

Result<int> run_bench(Context &ctx, BenchOptions o)
{
	auto &con = ctx.con;
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
	if (o.codecs.empty())
		o.codecs = codec_names();
	for (const auto &c : o.codecs) {
		auto id = codec_from_name(c);
		if (!id || *id == ZBATCH_CODEC_DEFAULT)
			return fail(EINVAL, fmt::format("--codec: unknown codec '{}' ({})", c,
							codec_list()));
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
		if (*p == Pattern::Real)
			if (auto c = real_corpus(); !c)
				return std::unexpected(c.error());
		cfg.data = generate(*p, cfg.pages * cfg.page_size, 42);
	}
	const SysfsTree &tree = ctx.tree;
	auto dev = ctx.open_device();
	if (!dev)
		return std::unexpected(dev.error());
	if (con.shows_progress() && !ctx.json)
		cfg.progress = [&con, &o](unsigned int done, unsigned int total) {
			con.progress(fmt::format("bench{}: round {}/{}", o.modes.size() > 1 ? " (per mode)" : "",
						 done, total));
		};
	std::string old_mode;
	const std::string mode_path = tunable_path("sync_mode");
	if (!o.modes.empty()) {
		old_mode = tree.read_choice(mode_path);
		if (old_mode.empty())
			return fail(ENOENT, fmt::format("--mode: cannot read {}", mode_path));
		// every mode checked against the module's own list before any run
		auto choices = config_choices(tree, "sync_mode");
		if (!choices)
			return std::unexpected(choices.error());
		for (const auto &m : o.modes)
			if (std::ranges::find(*choices, m) == choices->end())
				return fail(EINVAL, fmt::format("--mode {}: not one of: {}", m,
								fmt::join(*choices, ", ")));
	}
	// sync_mode as it was, on every return (old_mode is "" without --mode)
	ScopeExit mode_back([&] {
		if (!old_mode.empty())
			(void)tree.write(mode_path, old_mode);
	});
	std::vector<ModeRows> all;
	for (const auto &m : o.modes.empty() ? std::vector<std::string>{""} : o.modes) {
		if (!m.empty())
			if (auto w = tree.write(mode_path, m); !w)
				return fail(EINVAL, fmt::format("--mode {}: {}", m, w.error().message));
		con.detail("sync_mode {}: {} codec(s) x {} batch size(s) x {} rounds\n",
			   m.empty() ? "unchanged" : m, cfg.codecs.size(), cfg.batch_sizes.size(),
			   cfg.rounds);
		auto rows = zbatch::run_bench(**dev, cfg);
		con.end_progress();
		if (!rows)
			return std::unexpected(rows.error());
		all.push_back({m, std::move(*rows)});
	}
	for (const auto &mr : all) {
		if (!ctx.json && !o.csv)
			con.print("# {} pages of {} bytes ({}), {} rounds{}; MB/s of input over kernel "
				   "time\n", cfg.pages, cfg.page_size, o.file.empty() ? o.pattern : o.file,
				   cfg.rounds, mr.mode.empty() ? "" : ", sync_mode " + mr.mode);
		print_rows(con, mr.rows, ctx.json, o.csv);
	}
	if (!o.plot.empty()) {
		if (auto p = plot(all, o.plot); !p)
			return std::unexpected(p.error());
		if (!ctx.json && !o.csv)
			con.print("# chart written to {}\n", o.plot);
	}
	return kExitOk;
}

void add_bench(CLI::App &app, Action &action)
{
	auto o = std::make_shared<BenchOptions>();
	auto *sub = app.add_subcommand("bench", "Batched vs one-at-a-time throughput through /dev/zbatch");
	sub->add_option("--codec", o->codecs, "Codecs to run (default: all)")->delimiter(',');
	sub->add_option("--batch", o->batches, "Batch sizes, 1..64 (default 16)")->delimiter(',');
	sub->add_flag("--sweep", o->sweep, "Batch sizes 1,2,4,8,16,32");
	sub->add_option("--pattern", o->pattern, "text, zeros, random, mixed, real (pages of this system's binaries, libraries, text, a heap, compressed files) or same (each page one nonzero word repeated); default mixed");
	sub->add_option("--file", o->file, "Corpus file instead of a pattern (repeated to fill)");
	sub->add_option("--pages", o->pages, "4 KiB pages per pass (default 512)")
		->check(CLI::Range(1, 65536));
	sub->add_option("--rounds", o->rounds, "Rounds; medians and spread over them (default 5)")
		->check(CLI::Range(1, 1000));
	sub->add_flag("--quick", o->quick, "At most 128 pages and 3 rounds");
	sub->add_option("--mode", o->modes,
			"sync_mode(s) to run, comma-separated (sync, async, async_irq); restored after")
		->delimiter(',');
	sub->add_flag("--csv", o->csv, "CSV output");
	sub->add_option("--plot", o->plot, "Write a PNG chart of speedup vs batch size (gnuplot)");
	sub->footer("Each row runs the same pages in batches and one request per submit\n"
		    "(the baseline), alternating order per round. Speedup = median batched /\n"
		    "median single. Absolute MB/s under emulation mean little; ratios do.\n"
		    "Examples:\n  zbatch bench --codec lz4,zstd --batch 16\n"
		    "  zbatch bench --sweep --file /usr/lib/x86_64-linux-gnu/libc.so.6 --csv\n"
		    "  zbatch bench --sweep --mode sync,async_irq --plot speedup.png\n"
		    "The WQ layout is a load parameter: compare layouts by reloading\n"
		    "(zbatch unload; zbatch load -p engines=4) between runs.");
	sub->callback([&action, o] { action = [o](Context &ctx) { return run_bench(ctx, *o); }; });
}

} // namespace zbatch::cli
